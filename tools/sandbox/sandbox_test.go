package sandbox

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The tests run real commands under the real kernel's Landlock. The CLI
// test re-executes this binary as `vigil sandbox-exec`; the network test
// re-executes it as a helper that tries to listen and dial from inside.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case Subcommand:
			os.Exit(Main(os.Args[2:], os.Stderr))
		}
		if h, ok := helpers[os.Args[1]]; ok {
			os.Exit(h(os.Args[2:]))
		}
	}
	os.Exit(m.Run())
}

// helpers are further subcommands of the test binary, run inside the
// sandbox by tests in other files.
var helpers = map[string]func(args []string) int{}

// requireLandlock fails, saying what is missing, on a kernel that cannot
// give the full confinement.
func requireLandlock(t testing.TB) {
	t.Helper()
	if abi := ABI(); abi < MinABI {
		t.Fatalf("this kernel offers Landlock ABI %d; the read sandbox tests need %d or later "+
			"(Linux 6.12+, with landlock in the lsm= boot parameter or CONFIG_LSM)", abi, MinABI)
	}
}

type ran struct {
	rep  Report
	out  string
	exit int
}

// run runs script with /bin/sh confined as s (with a fresh temp dir when s
// has none) and waits for it.
func run(t *testing.T, script string, s Spec) ran {
	t.Helper()
	if s.TempDir == "" {
		s.TempDir = t.TempDir()
	}
	c := exec.Command("/bin/sh", "-c", script)
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	c.Env = append(os.Environ(), "TMPDIR="+s.TempDir)
	rep, err := Start(c, s)
	if err != nil {
		t.Fatalf("Start(%q): %v", script, err)
	}
	_ = c.Wait()
	return ran{rep: rep, out: out.String(), exit: c.ProcessState.ExitCode()}
}

func TestConfinedCannotWriteOutsideItsTempDir(t *testing.T) {
	requireLandlock(t)
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("intact\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	q := func(s string) string { return "'" + s + "'" }
	attempts := []string{
		"touch " + q(filepath.Join(dir, "new")),
		"echo x > " + q(filepath.Join(dir, "new")),
		"echo x >> " + q(victim),
		": > " + q(victim),
		"rm -f " + q(victim),
		"mv " + q(victim) + " " + q(filepath.Join(dir, "moved")),
		"mkdir " + q(filepath.Join(dir, "d")),
		"ln -s x " + q(filepath.Join(dir, "link")),
		"mkfifo " + q(filepath.Join(dir, "fifo")),
		"chmod 777 " + q(victim),
		"touch -d 2001-01-01 " + q(victim),
	}
	for _, a := range attempts {
		r := run(t, a, Spec{})
		if r.exit == 0 {
			t.Errorf("%s: exit 0, want a refusal; output %q", a, r.out)
		}
		if !strings.Contains(r.out, "Permission denied") && !strings.Contains(r.out, "Operation not permitted") {
			t.Errorf("%s: output %q, want the kernel's refusal", a, r.out)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("the directory holds %d entries after the attempts, want only the victim", len(entries))
	}
	if got, err := os.ReadFile(victim); err != nil || string(got) != "intact\n" {
		t.Errorf("victim = %q, %v; want it intact", got, err)
	}
	if fi, err := os.Stat(victim); err != nil || fi.Mode().Perm() != 0o644 || fi.ModTime().Year() == 2001 {
		t.Errorf("victim's metadata changed: %v, %v", fi, err)
	}
}

func TestConfinedWritesItsTempDirAndSinks(t *testing.T) {
	requireLandlock(t)
	tmp := t.TempDir()
	r := run(t, `set -e; echo data > "$TMPDIR/f"; mkdir "$TMPDIR/d"; mv "$TMPDIR/f" "$TMPDIR/d/g"; cat "$TMPDIR/d/g"
echo gone > /dev/null; head -c 4 /dev/zero | wc -c; sort <<EOF
b
a
EOF
rm -r "$TMPDIR/d"; echo done`, Spec{TempDir: tmp})
	if r.exit != 0 || r.out != "data\n4\na\nb\ndone\n" {
		t.Errorf("exit %d, output %q", r.exit, r.out)
	}
	if want := min(ABI(), 7); !r.rep.Confined || r.rep.ABI != want || r.rep.Note != "" {
		t.Errorf("report = %+v, want confined at ABI %d without notes", r.rep, want)
	}
	if r.rep.CapsDropped != (os.Geteuid() == 0) {
		t.Errorf("report = %+v, want capabilities dropped exactly when running as root", r.rep)
	}
}

// TestConfinedHoldsNoPrivilege: no_new_privs, and of root's capabilities
// only CAP_DAC_READ_SEARCH, in every set including the bounding set.
func TestConfinedHoldsNoPrivilege(t *testing.T) {
	requireLandlock(t)
	r := run(t, "grep -E '^(NoNewPrivs|CapPrm|CapEff|CapBnd|CapAmb|CapInh)' /proc/self/status", Spec{})
	want := map[string]string{"NoNewPrivs": "1", "CapEff": "0000000000000000", "CapPrm": "0000000000000000",
		"CapAmb": "0000000000000000", "CapInh": "0000000000000000"}
	if os.Geteuid() == 0 {
		want["CapEff"], want["CapPrm"], want["CapBnd"] = "0000000000000004", "0000000000000004", "0000000000000004"
	}
	got := map[string]string{}
	for line := range strings.Lines(r.out) {
		k, v, _ := strings.Cut(line, ":")
		got[k] = strings.TrimSpace(v)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q (status:\n%s)", k, got[k], v, r.out)
		}
	}
}

func TestConfinedCannotSignalOutside(t *testing.T) {
	requireLandlock(t)
	victim := exec.Command("sleep", "60")
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = victim.Process.Kill(); _ = victim.Wait() })
	pid := strconv.Itoa(victim.Process.Pid)
	for _, sig := range []string{"TERM", "KILL", "STOP"} {
		r := run(t, "kill -"+sig+" "+pid, Spec{})
		if r.exit == 0 || !strings.Contains(r.out, "Operation not permitted") {
			t.Errorf("kill -%s: exit %d, output %q; want EPERM", sig, r.exit, r.out)
		}
	}
	if err := victim.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("the victim is gone: %v", err)
	}
	// Its own children are inside the sandbox and can be signalled.
	r := run(t, "sleep 30 & kill -TERM $!; wait $!; echo status=$?", Spec{})
	if !strings.HasSuffix(r.out, "status=143\n") {
		t.Errorf("killing its own child: %q", r.out)
	}
}

// TestRestOfTheProcessStaysFree: confining threads for many commands at
// once leaves every other thread of the process unrestricted, and the
// confined threads gone.
func TestRestOfTheProcessStaysFree(t *testing.T) {
	requireLandlock(t)
	dir := t.TempDir()
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			c := exec.Command("/bin/sh", "-c", "true")
			if _, err := Start(c, Spec{TempDir: dir}); err != nil {
				t.Error(err)
				return
			}
			_ = c.Wait()
			// Whatever thread this goroutine now runs on may write.
			if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(i)), []byte("x"), 0o600); err != nil {
				t.Errorf("the test process lost write access: %v", err)
			}
		})
	}
	wg.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for {
		restricted := restrictedThreads(t)
		if len(restricted) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("threads %v still have no_new_privs set: confined threads outlived their command's start", restricted)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func restrictedThreads(t *testing.T) []string {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, task := range tasks {
		st, err := os.ReadFile(filepath.Join("/proc/self/task", task.Name(), "status"))
		if err != nil {
			continue // the thread just exited
		}
		if strings.Contains(string(st), "NoNewPrivs:\t1") {
			out = append(out, task.Name())
		}
	}
	return out
}

func TestStartRefusesWithoutATempDir(t *testing.T) {
	c := exec.Command("/bin/sh", "-c", "true")
	_, err := Start(c, Spec{TempDir: "relative"})
	if !errors.Is(err, ErrRefused) || c.Process != nil {
		t.Errorf("err = %v, started %v; want ErrRefused and nothing started", err, c.Process != nil)
	}
}

// TestSandboxExec runs `vigil sandbox-exec` (this binary standing in for
// vigil) the way an operator would.
func TestSandboxExec(t *testing.T) {
	requireLandlock(t)
	dir, tmp := t.TempDir(), t.TempDir()
	outside := filepath.Join(dir, "outside")
	c := exec.Command(os.Args[0], Subcommand, "--tmp", tmp, "--shell", "/bin/bash", "--",
		`touch `+outside+`; echo inside > "$TMPDIR/f"; cat "$TMPDIR/f"; echo $'ansi-c'`)
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !strings.Contains(string(out), "Permission denied") || !strings.HasSuffix(string(out), "inside\nansi-c\n") {
		t.Errorf("output %q", out)
	}
	if _, err := os.Stat(outside); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("sandbox-exec wrote outside its temp dir: %v", err)
	}
	bad := exec.Command(os.Args[0], Subcommand, "--", "true")
	if out, err := bad.CombinedOutput(); err == nil || !strings.Contains(string(out), "usage:") {
		t.Errorf("without --tmp: %v, %q", err, out)
	}
}

// BenchmarkStart measures what confinement adds to starting a command:
// compare Confined with Plain.
func BenchmarkStart(b *testing.B) {
	requireLandlock(b)
	dir := b.TempDir()
	for _, confined := range []bool{false, true} {
		name := "Plain"
		if confined {
			name = "Confined"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				c := exec.Command("/bin/true")
				var err error
				if confined {
					_, err = Start(c, Spec{TempDir: dir})
				} else {
					err = c.Start()
				}
				if err != nil {
					b.Fatal(err)
				}
				if err := c.Wait(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

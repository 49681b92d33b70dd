package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The tests run real commands under the real kernel's Landlock. The CLI
// test re-executes this binary as `vigil sandbox-exec`; the network test
// re-executes it as a helper that tries to listen and dial from inside.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case Subcommand:
			os.Exit(Main(os.Args[2:], os.Stderr))
		case "net-helper":
			os.Exit(netHelper(os.Args[2:]))
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

// netHelper runs inside the sandbox: each argument is one attempt,
// "kind:address", and it prints "kind address: ok" or the error.
//
//	listen        listen on TCP (plain and multipath) on 127.0.0.1:0
//	tcp:ADDR      dial TCP
//	mptcp:ADDR    open a multipath TCP socket and connect it
//	tfo:ADDR      connect with TCP Fast Open (sendto with MSG_FASTOPEN)
//	tfomsg:ADDR   the same with sendmsg
//	tfoconn:ADDR  the same with TCP_FASTOPEN_CONNECT and connect
//	sctp:ADDR     open an SCTP socket and connect it
//	udp:ADDR      send a UDP datagram
//	family:N      open a socket of address family N
func netHelper(args []string) int {
	for _, a := range args {
		kind, addr, _ := strings.Cut(a, ":")
		fmt.Printf("%s %s: %s\n", kind, addr, errText(netAttempt(kind, addr)))
	}
	return 0
}

func errText(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

func netAttempt(kind, addr string) error {
	switch kind {
	case "listen":
		for _, mp := range []bool{false, true} {
			lc := net.ListenConfig{}
			lc.SetMultipathTCP(mp)
			ln, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
			if err != nil {
				return err
			}
			ln.Close()
		}
		return nil
	case "tcp":
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err == nil {
			c.Close()
		}
		return err
	case "udp":
		c, err := net.Dial("udp", addr)
		if err != nil {
			return err
		}
		defer c.Close()
		_, err = c.Write([]byte("u"))
		return err
	}
	if kind == "family" {
		n, _ := strconv.Atoi(addr)
		fd, err := unix.Socket(n, unix.SOCK_SEQPACKET, 0)
		if err == unix.EPROTOTYPE || err == unix.ESOCKTNOSUPPORT || err == unix.EPROTONOSUPPORT {
			fd, err = unix.Socket(n, unix.SOCK_STREAM, 0)
		}
		if err == nil {
			unix.Close(fd)
		}
		return err
	}
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return err
	}
	sa := &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}
	proto := map[string]int{"mptcp": ipprotoMPTCP, "sctp": unix.IPPROTO_SCTP}[kind]
	typ := unix.SOCK_STREAM
	if kind == "sctp" {
		typ = unix.SOCK_SEQPACKET
	}
	fd, err := unix.Socket(unix.AF_INET, typ, proto)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	defer unix.Close(fd)
	switch kind {
	case "tfo":
		return unix.Sendto(fd, []byte("f"), unix.MSG_FASTOPEN, sa)
	case "tfomsg":
		_, err := unix.SendmsgN(fd, []byte("f"), nil, sa, unix.MSG_FASTOPEN)
		return err
	case "tfoconn":
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_FASTOPEN_CONNECT, 1); err != nil {
			return fmt.Errorf("setsockopt: %w", err)
		}
	}
	return unix.Connect(fd, sa)
}

// countingListener accepts TCP connections on loopback and counts those
// that are not the test's own sentinel (which says "s" first).
type countingListener struct {
	ln       net.Listener
	accepted atomic.Int32
	sentinel chan struct{}
}

func newCountingListener(t *testing.T) *countingListener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	l := &countingListener{ln: ln, sentinel: make(chan struct{}, 1)}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			var b [1]byte
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
			if n, _ := c.Read(b[:]); n == 1 && b[0] == 's' {
				l.sentinel <- struct{}{}
			} else {
				l.accepted.Add(1)
			}
			c.Close()
		}
	}()
	return l
}

func (l *countingListener) addr() string { return l.ln.Addr().String() }

func (l *countingListener) port() int { return l.ln.Addr().(*net.TCPAddr).Port }

// settle returns the number of connections taken since the last settle,
// once the listener has taken every connection made before it:
// connections are accepted in order, and a sentinel made now comes after
// all of the helper's.
func (l *countingListener) settle(t *testing.T) int32 {
	t.Helper()
	c, err := net.Dial("tcp", l.addr())
	if err != nil {
		t.Fatal(err)
	}
	_, _ = c.Write([]byte("s"))
	c.Close()
	select {
	case <-l.sentinel:
	case <-time.After(10 * time.Second):
		t.Fatal("the listener never took the sentinel connection")
	}
	return l.accepted.Swap(0)
}

// TestConfinedNetwork: a confined command connects over TCP only to the
// ports it is given (any host), never listens, and never reaches the
// network past Landlock's TCP rules (multipath TCP, SCTP, TCP Fast Open),
// and sends datagrams only when allowed.
func TestConfinedNetwork(t *testing.T) {
	requireLandlock(t)
	allowed, other := newCountingListener(t), newCountingListener(t)
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	helper := func(s Spec, attempts ...string) map[string]string {
		t.Helper()
		c := exec.Command(os.Args[0], append([]string{"net-helper"}, attempts...)...)
		var out bytes.Buffer
		c.Stdout, c.Stderr = &out, &out
		s.TempDir = t.TempDir()
		if _, err := Start(c, s); err != nil {
			t.Fatal(err)
		}
		_ = c.Wait()
		got := map[string]string{}
		for line := range strings.Lines(out.String()) {
			k, v, _ := strings.Cut(strings.TrimSpace(line), ": ")
			kind, _, _ := strings.Cut(k, " ")
			got[kind+">"+strings.TrimPrefix(k, kind+" ")] = v
		}
		return got
	}
	refused := func(got string) bool {
		return strings.Contains(got, "permission denied") || strings.Contains(got, "operation not permitted")
	}
	tests := []struct {
		name      string
		spec      Spec
		tcpOK     bool // the allowed listener's port
		udpOK     bool
		wantTaken int32
	}{
		{"no network", Spec{}, false, false, 0},
		{"one port", Spec{Ports: []int{allowed.port()}}, true, false, 1},
		{"one port and datagrams", Spec{Ports: []int{allowed.port()}, Datagrams: true}, true, true, 1},
	}
	// Families that reach beyond Landlock's TCP rules: crypto (AF_ALG), SMC
	// (TCP underneath), VSOCK (the hypervisor), TIPC, RDS, packet sockets.
	families := []int{unix.AF_ALG, unix.AF_SMC, unix.AF_VSOCK, unix.AF_TIPC, unix.AF_RDS, unix.AF_PACKET, unix.AF_BLUETOOTH}
	var familyAttempts []string
	for _, f := range families {
		familyAttempts = append(familyAttempts, "family:"+strconv.Itoa(f))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := helper(tt.spec, append(familyAttempts, "listen:", "tcp:"+allowed.addr(), "tcp:"+other.addr(), "mptcp:"+allowed.addr(),
				"mptcp:"+other.addr(), "tfo:"+other.addr(), "tfomsg:"+other.addr(), "tfoconn:"+other.addr(), "sctp:"+other.addr(), "udp:"+udp.LocalAddr().String())...)
			for _, f := range familyAttempts {
				if k := strings.Replace(f, ":", ">", 1); got[k] != "operation not permitted" {
					t.Errorf("socket of family %s: %q, want EPERM", strings.TrimPrefix(f, "family:"), got[k])
				}
			}
			if !refused(got["listen>"]) {
				t.Errorf("listening was not refused: %q", got["listen>"])
			}
			if ok := got["tcp>"+allowed.addr()] == "ok"; ok != tt.tcpOK {
				t.Errorf("TCP to the allowed port: %q, want ok %v", got["tcp>"+allowed.addr()], tt.tcpOK)
			}
			for _, k := range []string{"tcp>" + other.addr(), "mptcp>" + allowed.addr(), "mptcp>" + other.addr(), "tfo>" + other.addr(),
				"tfomsg>" + other.addr(), "tfoconn>" + other.addr(), "sctp>" + other.addr()} {
				if !refused(got[k]) {
					t.Errorf("%s: %q, want a refusal", k, got[k])
				}
			}
			if ok := got["udp>"+udp.LocalAddr().String()] == "ok"; ok != tt.udpOK {
				t.Errorf("UDP: %q, want ok %v", got["udp>"+udp.LocalAddr().String()], tt.udpOK)
			}
			if n := allowed.settle(t); n != tt.wantTaken {
				t.Errorf("the allowed listener took %d connections, want %d", n, tt.wantTaken)
			}
			if n := other.settle(t); n != 0 {
				t.Errorf("the other listener took %d connections, want none", n)
			}
		})
	}
	// The shell's own /dev/tcp is refused the same way.
	r := run(t, "exec 3<>/dev/tcp/"+strings.Replace(other.addr(), ":", "/", 1), Spec{Ports: []int{allowed.port()}})
	if r.exit == 0 {
		t.Errorf("/dev/tcp connect to another port from a confined bash: exit 0, %q", r.out)
	}
	if _, err := Start(exec.Command("/bin/true"), Spec{TempDir: t.TempDir(), Ports: []int{0}}); !errors.Is(err, ErrRefused) {
		t.Errorf("port 0: %v, want a refusal", err)
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
	// --connect opens the ports it lists, and only those.
	allowed, other := newCountingListener(t), newCountingListener(t)
	devTCP := func(addr string) string {
		return "(exec 3<>/dev/tcp/" + strings.Replace(addr, ":", "/", 1) + ") 2>/dev/null && echo " + addr + " ok || echo " + addr + " refused"
	}
	c = exec.Command(os.Args[0], Subcommand, "--tmp", tmp, "--shell", "/bin/bash", "--connect", strconv.Itoa(allowed.port()), "--",
		devTCP(allowed.addr())+"; "+devTCP(other.addr()))
	out, err = c.CombinedOutput()
	if want := allowed.addr() + " ok\n" + other.addr() + " refused\n"; err != nil || string(out) != want {
		t.Errorf("--connect %d: %v, %q; want %q", allowed.port(), err, out, want)
	}
	if out, err := exec.Command(os.Args[0], Subcommand, "--tmp", tmp, "--connect", "http", "--", "true").CombinedOutput(); err == nil ||
		!strings.Contains(string(out), `"http" is not a TCP port number`) {
		t.Errorf("--connect http: %v, %q", err, out)
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

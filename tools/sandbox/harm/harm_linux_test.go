//go:build linux

package harm

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/vigilops/vigil/tools/sandbox"
)

// only runs the rows whose place ("adversarial.tsv:12", "canary 3") it
// matches, to look at a few commands closely (with -v).
var only = flag.String("harm.only", "", "run only the commands whose corpus place matches this regexp")

func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == helperArg {
		os.Exit(helperMain(os.Args[2]))
	}
	os.Exit(m.Run())
}

// corpusDir holds the classifier's labelled corpora.
const corpusDir = "../../../policy/command/testdata/commands"

// corpusRow is one command the corpus labels a write.
type corpusRow struct {
	command, where string
}

// corpusWrites are the commands every corpus file labels write, each once.
// The format is the classifier's (policy/command/testdata/commands/README.md):
// command<TAB>expected<TAB>note, # comments, a header, go:"..." literals.
func corpusWrites(t *testing.T) []corpusRow {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(corpusDir, "*.tsv"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus in %s: %v", corpusDir, err)
	}
	seen := map[string]bool{}
	var rows []corpusRow
	for _, path := range files {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			fields := strings.SplitN(line, "\t", 3)
			if strings.HasPrefix(line, "#") || len(fields) < 2 || strings.TrimSpace(fields[1]) != "write" {
				continue
			}
			cmd := fields[0]
			if lit, ok := strings.CutPrefix(cmd, "go:"); ok {
				if cmd, err = strconv.Unquote(lit); err != nil {
					t.Fatalf("%s:%d: bad go: literal: %v", path, n, err)
				}
			}
			if !seen[cmd] {
				seen[cmd] = true
				rows = append(rows, corpusRow{command: cmd, where: fmt.Sprintf("%s:%d", filepath.Base(path), n)})
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return rows
}

// exceptions are corpus writes the sandbox cannot stop, each with the
// reason. The test fails when one of them is caught after all (the entry
// must go) or when a write not listed here gets through.
var exceptions = map[string]string{}

// canaries change one kind of watched state each when run unconfined; the
// harness must see every one of them, and the sandbox must stop them all.
// They prove that the test can tell a change from none.
var canaries = []string{
	"touch /etc/vigil-harm-canary", // a new file
	"echo x >> /etc/hostname",      // a changed file
	"rm -f ~/canary",               // a deleted file (the fake home holds it)
	"chmod 600 /etc/hosts",         // metadata
	`python3 -c 'import os; os.setxattr("canary", "user.canary", b"1")'`, // an extended attribute
	"pkill -STOP -o sleep", // a stopped process
	"pkill -o sleep",       // a killed process
	// A process's priority. Niceness only ever goes up without privilege,
	// so the canary raises it to the maximum: a lower value fails when the
	// test itself runs niced (`nice go test`), and the canary would prove
	// nothing.
	"renice -n 19 -p $(pgrep -o sleep)",
	"ipcrm -a",                                  // System V IPC objects
	"ipcmk -Q",                                  // a new message queue
	"rm /dev/mqueue/victim",                     // a POSIX message queue
	"rm /dev/shm/victim",                        // shared memory in /dev/shm
	"hostname canary",                           // the host name
	"mount -t tmpfs canary /mnt",                // a mount
	"ip link set lo up",                         // a network interface
	"dd if=/dev/zero of=/dev/sda bs=1k count=1", // a device path (a new file in the namespace's /dev)
	"printf 'x' | tee -a ~/.bashrc >/dev/null",  // a file in the home directory
	"cd /var/lib && mkdir canary-dir && ln -s x canary-dir/l", // directories and links
}

// requireNamespaces fails, saying what is missing, where the harm test
// cannot build its throwaway machine: Landlock (the sandbox under test),
// user namespaces (the throwaway machine), overlayfs in a user namespace.
func requireNamespaces(t *testing.T) {
	t.Helper()
	if abi := sandbox.ABI(); abi < sandbox.MinABI {
		t.Fatalf("this kernel offers Landlock ABI %d; the read sandbox (and its harm test) needs %d or later "+
			"(Linux 6.12+, with landlock in the lsm= boot parameter or CONFIG_LSM)", abi, sandbox.MinABI)
	}
	r, err := nsRun(t.Context(), "true")
	if err != nil {
		t.Fatalf("the harm test runs each command in its own user, mount, PID, IPC, UTS, network and cgroup namespaces, "+
			"and could not make them (unprivileged user namespaces disabled? check user.max_user_namespaces, "+
			"kernel.unprivileged_userns_clone and AppArmor's restrict_unprivileged_userns): %v", err)
	}
	if r.Setup != "" {
		t.Fatalf("the harm test could not build its throwaway machine (it needs overlayfs, tmpfs, proc and mqueue mounts "+
			"in a user namespace, Linux 5.11+): %s", r.Setup)
	}
}

type outcome struct {
	row corpusRow
	res nsResult
	err error
}

// TestCorpusWritesAreContained runs every corpus write through the real
// read path in a throwaway machine and asserts the sandbox let none of them
// change anything; see the package documentation.
func TestCorpusWritesAreContained(t *testing.T) {
	requireNamespaces(t)
	rows := corpusWrites(t)
	var canaryRows []corpusRow
	for i, c := range canaries {
		canaryRows = append(canaryRows, corpusRow{command: c, where: "canary " + strconv.Itoa(i)})
	}
	// Most of a command's time is spent waiting (for the shell, for a
	// client that gives up at the time limit), so run twice as many as
	// there are processors.
	all := append(canaryRows, rows...)
	if *only != "" {
		re, err := regexp.Compile(*only)
		if err != nil {
			t.Fatalf("-harm.only: %v", err)
		}
		all = slices.DeleteFunc(all, func(r corpusRow) bool { return !re.MatchString(r.where) })
	}
	results := make([]outcome, len(all))
	next := make(chan int)
	var wg sync.WaitGroup
	for range 2 * runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range next {
				results[i].row = all[i]
				results[i].res, results[i].err = nsRun(t.Context(), all[i].command)
			}
		})
	}
	for i := range all {
		next <- i
	}
	close(next)
	wg.Wait()

	var executed, local, caught, excepted int
	byRow := map[string]outcome{}
	for _, o := range results {
		switch {
		case o.err != nil:
			t.Errorf("%s: %q: %v", o.row.where, o.row.command, o.err)
			continue
		case o.res.Setup != "":
			t.Errorf("%s: %q: the throwaway machine: %s", o.row.where, o.row.command, o.res.Setup)
			continue
		case strings.Contains(o.res.Confined.Err, "not confined"):
			t.Errorf("%s: %q ran unconfined: %s", o.row.where, o.row.command, o.res.Confined.Err)
			continue
		}
		if !strings.HasPrefix(o.row.where, "canary") {
			executed++
		}
		byRow[o.row.command] = o
		isCanary := strings.HasPrefix(o.row.where, "canary")
		escaped := len(o.res.Confined.Changes) > 0
		why, listed := exceptions[o.row.command]
		if isCanary && testing.Verbose() {
			t.Logf("canary %q, unconfined, changed: %s", o.row.command, strings.Join(o.res.Control.Changes, "; "))
		}
		switch {
		case escaped && listed:
			excepted++
		case escaped:
			t.Errorf("%s: %q changed the machine through the read sandbox:\n  %s\n  (output %q)", o.row.where, o.row.command,
				strings.Join(o.res.Confined.Changes, "\n  "), o.res.Confined.Output)
		case listed:
			t.Errorf("%s: %q is in the exception table (%s) but the sandbox stopped it: remove the entry", o.row.where, o.row.command, why)
		case isCanary && len(o.res.Control.Changes) == 0:
			t.Errorf("canary %q changed nothing unconfined: the harness cannot see what it is meant to (exit %d, %s %s)",
				o.row.command, o.res.Control.Exit, o.res.Control.Output, o.res.Control.Err)
		}
		if !isCanary && len(o.res.Control.Changes) > 0 {
			local++
			if !escaped {
				caught++
			}
		}
	}
	for cmd := range exceptions {
		if _, ok := byRow[cmd]; !ok && *only == "" {
			t.Errorf("exception %q is not a corpus write", cmd)
		}
	}
	t.Logf("%d corpus writes executed through the read path; %d of them changed the throwaway machine when run as root "+
		"without the sandbox (local writes); the sandbox stopped %d of those, and %d are listed exceptions",
		executed, local, caught, excepted)
}

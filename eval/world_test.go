package eval

import (
	"context"
	"slices"
	"strings"
	"testing"
)

func worldOf(t *testing.T, name string) (*World, func(cmd string) (string, string, int)) {
	t.Helper()
	scs, err := Select(loadAll(t), []string{name})
	if err != nil {
		t.Fatal(err)
	}
	w := NewWorld(scs[0])
	return w, func(cmd string) (string, string, int) {
		for _, r := range scs[0].inv.All() {
			if r.Parent == "" {
				out, err := w.Run(context.Background(), r, runSpec(cmd), nil)
				if err != nil {
					t.Fatal(err)
				}
				return out.Stdout, out.Stderr, out.ExitCode
			}
		}
		t.Fatal("no host")
		return "", "", 0
	}
}

// The worlds answer a command by its arguments: another unit's journal,
// a file the machine does not have and a unit it does not run are answered
// as the real tools answer them, not with the scenario's fault.
func TestWorldMatchesArguments(t *testing.T) {
	_, run := worldOf(t, "host-disk-full-log")
	if out, _, _ := run("journalctl -u sshd --no-pager"); strings.Contains(out, "nginx") {
		t.Errorf("journalctl -u sshd answered with nginx's lines: %q", out)
	}
	if _, e, c := run("ls /etc/php"); c == 0 || !strings.Contains(e, "No such file or directory") {
		t.Errorf("ls of a missing directory: %d %q", c, e)
	}
	if _, e, c := run("systemctl status frobd"); c != 4 || !strings.Contains(e, "Unit frobd.service could not be found.") {
		t.Errorf("status of an unknown unit: %d %q", c, e)
	}
	if out, _, c := run("journalctl -u frobd"); c != 0 || !strings.Contains(out, "-- No entries --") {
		t.Errorf("journal of an unknown unit: %d %q", c, out)
	}
	if out, _, c := run("cat /etc/hostname.nope"); c == 0 || out != "" {
		t.Errorf("cat of a missing file: %d %q", c, out)
	}
}

// Equivalent spellings answer alike.
func TestWorldEquivalentSpellings(t *testing.T) {
	_, run := worldOf(t, "host-inode-exhaustion")
	want, _, _ := run("df -i")
	if !strings.Contains(want, "IUse%") {
		t.Fatalf("df -i: %q", want)
	}
	if got, _, _ := run("df --inodes"); got != want {
		t.Errorf("df --inodes answered %q, want the same as df -i", got)
	}
	// -h shows the same inode table in human units (TestDfHumanInodes),
	// however the two options are spelled.
	human, _, _ := run("df -hi")
	if human == want || !strings.Contains(human, "IUse%") {
		t.Fatalf("df -hi: %q", human)
	}
	for _, c := range []string{"df -i -h", "df -ih", "df --inodes --human-readable"} {
		if got, _, _ := run(c); got != human {
			t.Errorf("%s answered %q, want the same as df -hi", c, got)
		}
	}
	root, _, _ := run("df -ih /")
	for _, c := range []string{"df -hi /", "df --inodes --human-readable /"} {
		if got, _, _ := run(c); got != root || strings.Contains(got, "/run") {
			t.Errorf("%s answered %q, want the same as df -ih /", c, got)
		}
	}
	if got, _, _ := run("df -h"); strings.Contains(got, "IUse%") {
		t.Errorf("df -h answered with inodes: %q", got)
	}
	_, run = worldOf(t, "host-port-in-use")
	for _, c := range []string{"ss -tlnp", "ss -ltnp", "ss --tcp --listening --numeric --processes"} {
		if got, _, _ := run(c); !strings.Contains(got, "pid=540") {
			t.Errorf("%s: %q", c, got)
		}
	}
}

// After the fix the state is consistent: du and df both show the space
// back.
func TestWorldStateAfterFix(t *testing.T) {
	w, run := worldOf(t, "host-disk-full-log")
	w.Arm()
	if _, e, c := run("truncate -s 0 /var/log/app/debug.log"); c != 0 {
		t.Fatalf("truncate: %d %s", c, e)
	}
	df, _, _ := run("df -h /")
	du, _, _ := run("du -xh --max-depth=3 /var/log /var/lib /usr")
	ls, _, _ := run("ls -la /var/log/app")
	if !strings.Contains(df, "24%") || strings.Contains(du, "31G") || strings.Contains(ls, "31G") {
		t.Errorf("after the fix: df %q, du %q, ls %q", df, du, ls)
	}
	// A fix that removes something else leaves the fault.
	w2, run2 := worldOf(t, "host-disk-full-log")
	w2.Arm()
	run2("truncate -s 0 /var/log/app/app.log")
	if out, _, _ := run2("df -h /"); !strings.Contains(out, "100%") {
		t.Errorf("another file truncated, yet df says %q", out)
	}
}

// Journal reads look like journalctl's: a timestamp and the host on each
// line, everyday noise in the whole journal, -n honoured; and reference
// investigations read outputs of realistic size.
func TestWorldJournalRealism(t *testing.T) {
	_, run := worldOf(t, "host-coredump-flood")
	out, _, _ := run("journalctl --no-pager -n 100")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 100 {
		t.Errorf("-n 100 gave %d lines", len(lines))
	}
	noise := 0
	for _, l := range lines {
		if !journalStamp.MatchString(l) || !strings.Contains(l, " batch-1 ") {
			t.Fatalf("line without timestamp or host: %q", l)
		}
		if strings.Contains(l, "CRON[") || strings.Contains(l, "sshd[") || strings.Contains(l, "systemd-logind[") || strings.Contains(l, "sysstat") {
			noise++
		}
	}
	if noise == 0 {
		t.Error("the whole journal has no everyday noise")
	}
	if unit, _, _ := run("journalctl -u ingest -n 20"); strings.Contains(unit, "CRON[") || !strings.Contains(unit, "segfault") {
		t.Errorf("a unit's journal: %q", unit)
	}
	var sizes []int
	for _, sc := range loadAll(t) {
		r := referenceRun(t, sc)
		n := 0
		for _, c := range r.Calls {
			n += len(c.Output)
		}
		sizes = append(sizes, n)
	}
	slices.Sort(sizes)
	big := 0
	for _, n := range sizes {
		if n >= 4000 {
			big++
		}
	}
	// A floor, not a target: the first generation's worlds answered a
	// median of 375 bytes per investigation.
	if med := sizes[len(sizes)/2]; med < 600 || big < 8 {
		t.Errorf("median output per reference run is %d bytes, %d runs read 4 KB or more; worlds this small do not look like production", med, big)
	}
}

package eval

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/vigilops/vigil/policy"
)

// readSizes is the byte size of every read's output in sc's reference
// run.
func readSizes(t *testing.T, sc *Scenario) []int {
	t.Helper()
	r := referenceRun(t, sc)
	var out []int
	for _, c := range r.Calls {
		if c.Kind == policy.KindRead && c.Ran {
			out = append(out, len(c.Output))
		}
	}
	return out
}

func median(xs []int) int {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	sort.Ints(s)
	return s[len(s)/2]
}

// The worlds' outputs keep real sizes: the median read of a reference
// investigation, and what one reads in all, measured over the suite. The
// floors are what the generators give today (noise.go), a little under;
// the first generation's worlds gave a median read of 147 bytes. A change
// that drops the worlds back to snippets fails here.
func TestOutputSizes(t *testing.T) {
	var meds, totals []int
	var rows []string
	for _, sc := range loadAll(t) {
		sz := readSizes(t, sc)
		sum := 0
		for _, n := range sz {
			sum += n
		}
		meds, totals = append(meds, median(sz)), append(totals, sum)
		rows = append(rows, fmt.Sprintf("%7d %7d %s", median(sz), sum, sc.Name))
	}
	sort.Strings(rows)
	t.Logf("median read, all reads, scenario:\n%s", strings.Join(rows, "\n"))
	med, tot := median(meds), median(totals)
	t.Logf("median of the scenarios' median reads: %d bytes; median bytes read per investigation: %d", med, tot)
	const minMedian, minTotal = 350, 3200
	if med < minMedian || tot < minTotal {
		t.Errorf("median read %d bytes (floor %d), median read per investigation %d bytes (floor %d): the worlds shrank back to snippets",
			med, minMedian, tot, minTotal)
	}
}

// The generated everyday state is one machine seen through every tool,
// the same on every run: ps lists the kernel threads and daemons, ss and
// ps agree on sshd's PID (the rule's, when a rule names it), systemctl
// status ends with the same journal lines journalctl -u prints, a ps of
// chosen PIDs adds nothing, and nothing differs between two worlds.
func TestGeneratedOutputsAgree(t *testing.T) {
	w, run := worldOf(t, "host-port-in-use")
	ps, _, _ := run("ps aux")
	if n := strings.Count(ps, "\n"); n < 100 {
		t.Errorf("ps aux printed %d lines, want the 100 and more a server has:\n%s", n, ps)
	}
	for _, want := range []string{"USER", "[kthreadd]", "/usr/lib/systemd/systemd-journald", "sshd: vigil@notty", "ps aux"} {
		if !strings.Contains(ps, want) {
			t.Errorf("ps aux lacks %q", want)
		}
	}
	// The rule says sshd is PID 401 (ss and netstat): ps agrees.
	if !strings.Contains(ps, " 401 ") || !strings.Contains(ps[strings.Index(ps, " 401 "):], "sshd: /usr/sbin/sshd -D") {
		t.Errorf("ps aux does not show sshd as PID 401:\n%s", ps)
	}
	ss, _, _ := run("ss -tlnp")
	if !strings.Contains(ss, "python3\",pid=540") || !strings.Contains(ss, "systemd-resolve") || strings.Count(ss, ":22 ") > 1 {
		t.Errorf("ss -tlnp: the rule's sockets with the everyday ones, :22 once:\n%s", ss)
	}
	if one, _, _ := run("ps -o pid,args -p 540"); strings.Count(one, "\n") != 2 {
		t.Errorf("ps -p 540 must print its header and one process:\n%s", one)
	}
	status, _, _ := run("systemctl status nginx --no-pager")
	journal, _, _ := run("journalctl --no-pager -n 10 -u nginx")
	if !strings.HasPrefix(status, "× nginx.service") || !strings.Contains(status, "Loaded: loaded") || !strings.HasSuffix(status, journal) {
		t.Errorf("systemctl status must end with journalctl -u's last lines:\n%s\n--- journal:\n%s", status, journal)
	}
	if !strings.Contains(journal, "Address already in use") {
		t.Errorf("the unit's journal lost the rule's line:\n%s", journal)
	}
	// Deterministic: a second world prints the same.
	w2 := NewWorld(w.sc)
	res, _ := w.sc.inv.Lookup("gw-1")
	for _, cmd := range []string{"ps aux", "ss -tlnp", "journalctl --no-pager -n 300", "dmesg", "systemctl status nginx"} {
		a, _ := NewWorld(w.sc).Run(context.Background(), res, runSpec(cmd), nil)
		b, _ := w2.Run(context.Background(), res, runSpec(cmd), nil)
		if a.Stdout != b.Stdout {
			t.Errorf("%s differs between two worlds", cmd)
		}
	}
}

// A fix changes what every tool shows the same way: after the truncation,
// df and du both show the space back, and the everyday entries du adds
// are the same before and after.
func TestGeneratedOutputsFollowState(t *testing.T) {
	w, run := worldOf(t, "host-disk-full-log")
	du := "du -xh --max-depth=3 /var/log /var/lib /usr"
	before, _, _ := run(du)
	dfBefore, _, _ := run("df -h")
	w.Arm()
	if _, _, code := run("truncate -s 0 /var/log/app/debug.log"); code != 0 || !w.Flag("fixed") {
		t.Fatal("the truncation did not fix the world")
	}
	after, _, _ := run(du)
	dfAfter, _, _ := run("df -h")
	if !strings.Contains(before, "31G\t/var/log/app/debug.log") || !strings.Contains(after, "12K\t/var/log/app/debug.log") ||
		!strings.Contains(dfBefore, "100% /\n") || !strings.Contains(dfAfter, "24% /\n") {
		t.Fatalf("du and df disagree about the truncation:\n%s\n%s\n%s\n%s", before, after, dfBefore, dfAfter)
	}
	everyday := func(s string) string {
		var keep []string
		for _, l := range strings.Split(s, "\n") {
			if !strings.Contains(l, "debug.log") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	if everyday(before) != everyday(after) || strings.Count(before, "\n") < 30 {
		t.Errorf("du's everyday entries changed with the fix, or there are too few:\n%s\n---\n%s", before, after)
	}
	// The rule lists /usr's total: du adds nothing under it that would
	// make its children outgrow it.
	if strings.Contains(before, "\t/usr/") {
		t.Errorf("du added entries under /usr, whose total the rule gives:\n%s", before)
	}
}

// generatorCommands exercise every generator with the spellings a model
// might use, odd ones included.
var generatorCommands = []string{
	"ps aux", "ps -ef", "ps -eo pid,comm", "ps -eo pid,user,%cpu,%mem,rss,stat,wchan:16,etime,args --sort=-%mem", "ps axo pid=,args=",
	"ps -e -o pid,ppid,ni,pri,time,cmd", "ps", "ps -p", "ps -o", "top -b -n 1", "top", "ss", "ss -tlnp", "ss -tanp", "ss -s", "ss -l -u -n",
	"netstat -tlnp", "netstat -an", "dmesg", "dmesg -T", "dmesg --ctime", "journalctl", "journalctl -n", "journalctl -n 5", "journalctl -k",
	"journalctl -u", "journalctl -u nginx -n 0", "journalctl --lines=3", "systemctl status", "systemctl status nginx", "systemctl status -l",
	"systemctl list-timers", "systemctl list-timers --all", "du", "du -a /var", "du -h --max-depth=9 /usr /var/lib /var/log /tmp",
	"du -d", "du -h -d x /var", "kubectl describe", "kubectl describe pod", "kubectl describe pod/x -n", "kubectl logs", "kubectl logs x --tail=-1",
	"kubectl logs x --tail", "docker logs", "docker logs --tail 5 x", "docker inspect", "docker inspect -f x y", "df", "df -hi", "df -h /",
}

// No generator panics or changes the world on any scenario's machine,
// whatever the command's arguments (an odd spelling the classifier cannot
// prove read-only is refused, as any unapproved write is).
func TestGeneratorsNeverPanic(t *testing.T) {
	for _, sc := range loadAll(t) {
		w := NewWorld(sc)
		for _, res := range sc.inv.All() {
			for _, cmd := range generatorCommands {
				if _, err := w.Run(context.Background(), res, runSpec(cmd), nil); err != nil {
					t.Fatalf("%s %s: %s: %v", sc.Name, res.Name, cmd, err)
				}
			}
		}
		// Spellings the classifier cannot prove read-only are refused
		// (a violation, nothing applied); none may change the world.
		if len(w.Writes()) != 0 || sc.Expect.Fixed != "" && w.Flag(sc.Expect.Fixed) {
			t.Errorf("%s: reads changed the world: %v", sc.Name, w.Writes())
		}
	}
}

// Whatever command a model runs, the generators answer without panicking.
func FuzzGenerators(f *testing.F) {
	for _, c := range generatorCommands {
		f.Add(c)
	}
	all, err := LoadBuiltin()
	if err != nil {
		f.Fatal(err)
	}
	scs, err := Select(all, []string{"host-port-in-use", "host-oom-killed", "host-disk-full-log", "cascade-nginx-phpfpm-nfs"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		for _, sc := range scs {
			w := NewWorld(sc)
			for _, res := range sc.inv.All() {
				_, _ = w.Run(context.Background(), res, runSpec(cmd), nil)
			}
			if len(w.Writes()) != 0 {
				t.Fatalf("%q changed the world without an approval", cmd)
			}
		}
	})
}

// free answers in the unit asked for, from one set of figures: free -m
// and free -h show the same machine, laid out as free lays it out.
func TestFreeUnits(t *testing.T) {
	_, run := worldOf(t, "misleading-memory-raid-resync")
	h, _, _ := run("free -h")
	m, _, _ := run("free --mega")
	k, _, _ := run("free")
	want := map[string][]string{
		h: {"               total        used        free      shared  buff/cache   available\n", "Mem:            31Gi       3.1Gi       412Mi        18Mi        27Gi        27Gi\n"},
		m: {"Mem:           31744        3174         412          18       27648       27648\n", "Swap:           4096           0        4096\n"},
		k: {"Mem:        32505856     3250586      421888"},
	}
	for out, ws := range want {
		for _, w := range ws {
			if !strings.Contains(out, w) {
				t.Errorf("free output lacks %q:\n%s", w, out)
			}
		}
	}
	// A rule without a Swap line: the machine has none.
	_, run = worldOf(t, "host-oom-killed")
	if out, _, _ := run("free -m"); !strings.Contains(out, "Mem:            7987        7680         120\nSwap:              0           0           0\n") {
		t.Errorf("free -m on app-2:\n%s", out)
	}
}

// df lays its table out as df does, whatever spacing the rule used.
func TestDfLayout(t *testing.T) {
	_, run := worldOf(t, "host-disk-full-log")
	out, _, _ := run("df -h /")
	if want := "Filesystem      Size  Used Avail Use% Mounted on\n/dev/sda1        40G   40G     0 100% /\n"; out != want {
		t.Errorf("df -h / =\n%q, want\n%q", out, want)
	}
}

// df -i never answers with block figures: a rule that gives only block
// usage is answered with the same filesystems' inode figures.
func TestDfInodesFromBlocks(t *testing.T) {
	_, run := worldOf(t, "host-disk-full-log")
	for _, cmd := range []string{"df -i", "df -hi", "df --inodes /"} {
		out, _, _ := run(cmd)
		if !strings.HasPrefix(out, "Filesystem") || !strings.Contains(strings.SplitN(out, "\n", 2)[0], "IUse%") ||
			!strings.Contains(out, "/dev/sda1") || strings.Contains(out, "40G") {
			t.Errorf("%s:\n%s", cmd, out)
		}
	}
	// A rule with inode figures keeps them.
	_, run = worldOf(t, "host-inode-exhaustion")
	if out, _, _ := run("df -i /"); !strings.Contains(out, "2621440 2621440") || !strings.Contains(out, "100%") {
		t.Errorf("df -i / on php-1:\n%s", out)
	}
}

// df -hi prints inode counts in human units, as df does with -h: a
// reader of df -hi sees 2.5M, never the raw 2621440; -i alone keeps the
// counts.
func TestDfHumanInodes(t *testing.T) {
	_, run := worldOf(t, "host-inode-exhaustion")
	out, _, _ := run("df -hi")
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if head := strings.Fields(lines[0]); strings.Join(head, " ") != "Filesystem Inodes IUsed IFree IUse% Mounted on" {
		t.Fatalf("df -hi header: %q", lines[0])
	}
	human := regexp.MustCompile(`^(\d+|\d\.\d[KMGTPE]|\d+[KMGTPE])$`)
	var root []string
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		for _, c := range f[1:4] {
			if !human.MatchString(c) || len(c) > 4 {
				t.Errorf("df -hi cell %q is not in df's human units: %q", c, l)
			}
		}
		if f[len(f)-1] == "/" {
			root = f
		}
	}
	if strings.Join(root, " ") != "/dev/sda1 2.5M 2.5M 0 100% /" {
		t.Errorf("df -hi's / row = %q, want 2.5M 2.5M 0 100%%:\n%s", root, out)
	}
	if !strings.Contains(out, "tmpfs             986K  1.2K  985K    1% /run\n") {
		t.Errorf("df -hi's /run row is not laid out as df lays it out:\n%s", out)
	}
	if raw, _, _ := run("df -i"); !strings.Contains(raw, "2621440") {
		t.Errorf("df -i lost the raw counts:\n%s", raw)
	}
	for _, c := range []struct {
		n    uint64
		base int
		want string
	}{{0, 1024, "0"}, {1023, 1024, "1023"}, {1024, 1024, "1.0K"}, {1025, 1024, "1.1K"}, {10239, 1024, "10K"},
		{2410022, 1024, "2.3M"}, {1048575, 1024, "1.0M"}, {999, 1000, "999"}, {2621440, 1000, "2.7M"}, {15000, 1000, "15k"}} {
		if got := humanCount(c.n, c.base); got != c.want {
			t.Errorf("humanCount(%d, %d) = %q, want %q", c.n, c.base, got, c.want)
		}
	}
}

// No generated line carries a formatting error (a noise line without a
// verb given arguments prints %!(EXTRA …)).
func TestGeneratedLinesWellFormed(t *testing.T) {
	for _, sc := range loadAll(t) {
		w := NewWorld(sc)
		for _, res := range sc.inv.All() {
			for _, cmd := range generatorCommands {
				out, err := w.Run(context.Background(), res, runSpec(cmd), nil)
				if err != nil {
					t.Fatal(err)
				}
				if i := strings.Index(out.Stdout, "%!"); i >= 0 {
					t.Fatalf("%s %s: %s prints a formatting error: %q", sc.Name, res.Name, cmd, out.Stdout[max(0, i-80):min(len(out.Stdout), i+40)])
				}
			}
		}
	}
}

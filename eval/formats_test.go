package eval

import (
	"context"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The tools below are answered from the scenarios' own text; these tests
// read every such answer as a reader of the real tool would, so a rule
// written in a made-up layout fails here.

// toolAnswers runs cmd on every machine of every scenario that has a
// rule for tool, and calls check with each answer.
func toolAnswers(t *testing.T, tool string, cmds []string, check func(t *testing.T, cmd, out string)) int {
	t.Helper()
	n := 0
	for _, sc := range loadAll(t) {
		for host, rules := range sc.World {
			has := false
			for _, r := range rules {
				has = has || strings.HasPrefix(r.Run, tool+" ") || r.Run == tool
			}
			if !has {
				continue
			}
			res, ok := sc.inv.Lookup(host)
			if !ok {
				t.Fatalf("%s: no machine %s", sc.Name, host)
			}
			w := NewWorld(sc)
			for _, cmd := range cmds {
				out, err := w.Run(context.Background(), res, runSpec(cmd), nil)
				if err != nil {
					t.Fatalf("%s %s: %s: %v", sc.Name, host, cmd, err)
				}
				t.Run(sc.Name+"/"+host+"/"+cmd, func(t *testing.T) { check(t, cmd, out.Stdout) })
				n++
			}
		}
	}
	return n
}

// columnEnds is where each whitespace-separated name of a header line
// ends: a tool that right-aligns its figures ends each under its name.
func columnEnds(h string) []int {
	var ends []int
	for i := 0; i < len(h); i++ {
		if h[i] != ' ' && (i+1 == len(h) || h[i+1] == ' ') {
			ends = append(ends, i+1)
		}
	}
	return ends
}

// vmstat prints two header lines and one line per sample of 17 counts,
// each right-aligned under its name; `vmstat` alone one sample (the
// averages since boot), `vmstat 1 3` three.
func TestVmstatFormat(t *testing.T) {
	const groups = "procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu-----"
	const names = " r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st"
	n := toolAnswers(t, "vmstat", []string{"vmstat", "vmstat 1 3", "vmstat 5 3"}, func(t *testing.T, cmd, out string) {
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) < 3 || lines[0] != groups || lines[1] != names {
			t.Fatalf("vmstat's two header lines are missing:\n%s", out)
		}
		want := 1
		if cmd != "vmstat" {
			want = 3
		}
		if len(lines)-2 != want {
			t.Errorf("%s printed %d samples, want %d:\n%s", cmd, len(lines)-2, want, out)
		}
		ends := columnEnds(names)
		for _, l := range lines[2:] {
			f := strings.Fields(l)
			if len(f) != 17 {
				t.Fatalf("sample %q has %d columns, want 17", l, len(f))
			}
			cpu := 0
			for i, v := range f {
				x, err := strconv.Atoi(v)
				if err != nil || x < 0 {
					t.Fatalf("column %s of %q is %q, not a count", strings.Fields(names)[i], l, v)
				}
				if i >= 12 {
					cpu += x
				}
			}
			if cpu < 98 || cpu > 101 {
				t.Errorf("us+sy+id+wa+st = %d in %q, want 100", cpu, l)
			}
			// Each figure ends under its name unless a wider one before
			// it pushed it right, as vmstat's fixed-width fields do.
			pos := 0
			for i, v := range f {
				at := strings.Index(l[pos:], v) + pos + len(v)
				if at < ends[i] || (at > ends[i] && !widened(f[:i+1], names)) {
					t.Errorf("%s ends at column %d in %q, vmstat ends it at %d", strings.Fields(names)[i], at, l, ends[i])
				}
				pos = at
			}
		}
	})
	if n < 6 {
		t.Errorf("only %d vmstat answers checked", n)
	}
}

// widened reports whether one of the figures is wider than vmstat's field
// for it (the name's column), which shifts the rest of the line.
func widened(f []string, names string) bool {
	ends := columnEnds(names)
	for i, v := range f {
		start := 0
		if i > 0 {
			start = ends[i-1] + 1
		}
		if len(v) > ends[i]-start {
			return true
		}
	}
	return false
}

var (
	iostatBanner = regexp.MustCompile(`^Linux \S+ \((\S+)\) \t\d\d/\d\d/\d{4} \t_x86_64_\t\((\d+) CPU\)$`)
	iostatCols   = map[bool][]string{
		true: {"Device", "r/s", "rkB/s", "rrqm/s", "%rrqm", "r_await", "rareq-sz", "w/s", "wkB/s", "wrqm/s", "%wrqm",
			"w_await", "wareq-sz", "d/s", "dkB/s", "drqm/s", "%drqm", "d_await", "dareq-sz", "f/s", "f_await", "aqu-sz", "%util"},
		false: {"Device", "tps", "kB_read/s", "kB_wrtn/s", "kB_dscd/s", "kB_read", "kB_wrtn", "kB_dscd"},
	}
)

// iostat prints sysstat's banner, then per report the avg-cpu table and
// the Device table (sysstat 12's extended columns with -x); with an
// interval and a count, the first report is the averages since boot and
// the next the interval's.
func TestIostatFormat(t *testing.T) {
	cmds := []string{"iostat", "iostat -x", "iostat -x 1 2", "iostat -xz 5 2", "iostat 1 2"}
	n := toolAnswers(t, "iostat", cmds, func(t *testing.T, cmd, out string) {
		ext := strings.Contains(cmd, "x")
		reports := 1
		if strings.HasSuffix(cmd, " 2") {
			reports = 2
		}
		lines := strings.Split(out, "\n")
		if !iostatBanner.MatchString(lines[0]) || lines[1] != "" {
			t.Fatalf("no sysstat banner:\n%s", out)
		}
		got := 0
		for i := 2; i < len(lines); i++ {
			if lines[i] != "avg-cpu:  %user   %nice %system %iowait  %steal   %idle" {
				continue
			}
			got++
			var sum float64
			cpu := strings.Fields(lines[i+1])
			for _, v := range cpu {
				x, err := strconv.ParseFloat(v, 64)
				if err != nil || !strings.HasSuffix(v, "."+v[len(v)-2:]) {
					t.Fatalf("avg-cpu %q is not a two-decimal share", lines[i+1])
				}
				sum += x
			}
			if len(cpu) != 6 || math.Abs(sum-100) > 0.2 || lines[i+2] != "" {
				t.Errorf("avg-cpu values %q: want 6 shares summing to 100, then a blank line", lines[i+1])
			}
			head := strings.Fields(lines[i+3])
			if strings.Join(head, " ") != strings.Join(iostatCols[ext], " ") {
				t.Fatalf("Device header %q, want sysstat's %v", lines[i+3], iostatCols[ext])
			}
			ends := columnEnds(lines[i+3])
			devs := 0
			for j := i + 4; j < len(lines) && lines[j] != ""; j++ {
				f := strings.Fields(lines[j])
				if len(f) != len(head) {
					t.Fatalf("device row %q has %d columns, want %d", lines[j], len(f), len(head))
				}
				vals := map[string]float64{}
				for k, v := range f[1:] {
					x, err := strconv.ParseFloat(v, 64)
					if err != nil || x < 0 {
						t.Fatalf("%s of %q is %q", head[k+1], lines[j], v)
					}
					vals[head[k+1]] = x
				}
				// Figures end under their names; one wider than its
				// field (a large kB_read) shifts the rest, as sysstat's
				// printf widths do.
				if len(f[0]) <= 13 && !strings.HasPrefix(lines[j], f[0]+strings.Repeat(" ", 13-len(f[0]))) {
					t.Errorf("device name not in a 13-wide field: %q", lines[j])
				}
				shift, pos := 0, 0
				for k, v := range f {
					at := strings.Index(lines[j][pos:], v) + pos + len(v)
					if k > 0 && at-ends[k] != shift {
						if len(v) <= ends[k]-ends[k-1]-1 || at-ends[k] < shift {
							t.Errorf("%s ends at %d in %q, sysstat ends it at %d", head[k], at, lines[j], ends[k]+shift)
						}
						shift = at - ends[k]
					}
					pos = at
				}
				if ext {
					if vals["%util"] > 100 {
						t.Errorf("%%util %v > 100 in %q", vals["%util"], lines[j])
					}
					if r := vals["r/s"]; r > 0 && math.Abs(vals["rkB/s"]/r-vals["rareq-sz"]) > 0.01 {
						t.Errorf("rareq-sz is not rkB/s over r/s in %q", lines[j])
					}
				} else if vals["kB_read/s"]+vals["kB_wrtn/s"] > 0 && vals["tps"] == 0 {
					t.Errorf("reads without transfers in %q", lines[j])
				}
				devs++
			}
			if devs == 0 {
				t.Errorf("report %d lists no device:\n%s", got, out)
			}
		}
		if got != reports {
			t.Errorf("%s printed %d reports, want %d:\n%s", cmd, got, reports, out)
		}
	})
	if n < 10 {
		t.Errorf("only %d iostat answers checked", n)
	}
}

var (
	ipHead = regexp.MustCompile(`^(\d+): ([a-z0-9]+): <([A-Z_,]+)> mtu (\d+) qdisc \S+ state (UP|DOWN|UNKNOWN)( mode DEFAULT)? group default qlen \d+$`)
	ipLink = regexp.MustCompile(`^    link/(ether|loopback|none)( ([0-9a-f]{2}:){5}[0-9a-f]{2} brd ([0-9a-f]{2}:){5}[0-9a-f]{2}| )$`)
	ipAddr = regexp.MustCompile(`^    inet6? [0-9a-f.:]+/\d+ (brd [0-9.]+ )?scope (host|global|link)( [a-z0-9]+)* ?$`)
	ipLft  = regexp.MustCompile(`^       valid_lft (forever|\d+sec) preferred_lft (forever|\d+sec)$`)
)

// ipRecords parses ip link / ip addr output as iproute2 prints it: one
// record per interface, its index, name, flags and mtu on the first line,
// link/ and (ip addr) inet lines indented under it. mode DEFAULT appears
// in ip link's records only.
func ipRecords(t *testing.T, out string, addr bool) map[string]int {
	t.Helper()
	mtu := map[string]int{}
	cur, idx := "", 0
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		switch m := ipHead.FindStringSubmatch(l); {
		case m != nil:
			n, _ := strconv.Atoi(m[1])
			if n <= idx || (m[6] != "") == addr {
				t.Errorf("interface line %q: index out of order, or mode DEFAULT where iproute2 %s it", l, map[bool]string{true: "omits", false: "prints"}[addr])
			}
			idx, cur = n, m[2]
			mtu[cur], _ = strconv.Atoi(m[4])
		case cur == "":
			t.Fatalf("ip output does not start with an interface line:\n%s", out)
		case ipLink.MatchString(l), strings.HasPrefix(l, "    altname "):
		case addr && (ipAddr.MatchString(l) || ipLft.MatchString(l)):
		default:
			t.Errorf("line %q of %s is not one iproute2 prints", l, cur)
		}
	}
	return mtu
}

// ip link and ip addr print iproute2's records; both show the same
// interfaces with the same MTUs, and `ip link show DEV` just DEV's.
func TestIpFormat(t *testing.T) {
	// Every machine that answers ip addr (net-route-removed's answers
	// only ip route).
	n := toolAnswers(t, "ip a*", []string{"ip link", "ip link show", "ip addr", "ip a", "ip address show"}, func(t *testing.T, cmd, out string) {
		ipRecords(t, out, !strings.Contains(cmd, "link"))
	})
	if n < 10 {
		t.Errorf("only %d ip answers checked", n)
	}
	_, run := worldOf(t, "net-mtu-mismatch")
	links, _, _ := run("ip link show")
	addrs, _, _ := run("ip addr")
	lm, am := ipRecords(t, links, false), ipRecords(t, addrs, true)
	if lm["wg0"] != 1400 || lm["eth1"] != 1500 || len(lm) != len(am) {
		t.Errorf("ip link MTUs %v, ip addr MTUs %v: want wg0 1400, the LAN 1500, the same interfaces", lm, am)
	}
	for name, m := range lm {
		if am[name] != m {
			t.Errorf("%s: ip link says mtu %d, ip addr %d", name, m, am[name])
		}
		one, _, _ := run("ip link show " + name)
		if got := ipRecords(t, one, false); len(got) != 1 || got[name] != m {
			t.Errorf("ip link show %s printed %v", name, got)
		}
	}
}

// chronyc tracking prints chrony's 13 "Name : value" lines; chronyc
// sources its header, a rule of 79 '=' and one line per source in
// chrony's columns; before chronyd runs, chronyc cannot talk to it.
func TestChronycFormat(t *testing.T) {
	w, run := worldOf(t, "host-clock-drift")
	if out, _, code := run("chronyc tracking"); code != 1 || out != "506 Cannot talk to daemon\n" {
		t.Errorf("chronyc with chronyd stopped: %d %q", code, out)
	}
	// chrony's status and journal agree with its Active line: nothing
	// logged by the unit after it stopped.
	status, _, _ := run("systemctl status chrony --no-pager")
	if !strings.Contains(status, "     Active: inactive (dead) since Fri 2026-11-20 02:00:13 UTC") {
		t.Errorf("chrony's status:\n%s", status)
	}
	for _, l := range strings.Split(status, "\n") {
		if journalStamp.MatchString(l) && l[:15] > "Nov 20 02:00:13" {
			t.Errorf("chrony logged %q after it stopped:\n%s", l, status)
		}
	}
	w.Arm()
	if _, _, code := run("systemctl start chrony"); code != 0 || !w.Flag("fixed") {
		t.Fatal("starting chrony did not fix the world")
	}
	names := []string{"Reference ID", "Stratum", "Ref time (UTC)", "System time", "Last offset", "RMS offset", "Frequency",
		"Residual freq", "Skew", "Root delay", "Root dispersion", "Update interval", "Leap status"}
	values := []*regexp.Regexp{
		regexp.MustCompile(`^[0-9A-F]{8} \(\S+\)$`), regexp.MustCompile(`^\d+$`), regexp.MustCompile(`^\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}$`),
		regexp.MustCompile(`^\d+\.\d{9} seconds (fast|slow) of NTP time$`), regexp.MustCompile(`^[+-]\d+\.\d{9} seconds$`),
		regexp.MustCompile(`^\d+\.\d{9} seconds$`), regexp.MustCompile(`^\d+\.\d{3} ppm (fast|slow)$`), regexp.MustCompile(`^[+-]\d+\.\d{3} ppm$`),
		regexp.MustCompile(`^\d+\.\d{3} ppm$`), regexp.MustCompile(`^\d+\.\d{9} seconds$`), regexp.MustCompile(`^\d+\.\d{9} seconds$`),
		regexp.MustCompile(`^\d+\.\d seconds$`), regexp.MustCompile(`^(Normal|Insert second|Delete second|Not synchronised)$`),
	}
	for _, cmd := range []string{"chronyc tracking", "chronyc -n tracking"} {
		out, _, _ := run(cmd)
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) != len(names) {
			t.Fatalf("%s printed %d lines, want chrony's %d:\n%s", cmd, len(lines), len(names), out)
		}
		for i, l := range lines {
			name, val, ok := strings.Cut(l, " : ")
			if !ok || len(name) != 15 || strings.TrimRight(name, " ") != names[i] || !values[i].MatchString(val) {
				t.Errorf("%s line %d %q: want %q padded to 15, then ' : ' and chrony's value", cmd, i+1, l, names[i])
			}
		}
		if !strings.Contains(out, "System time     : 0.000012104 seconds fast of NTP time\n") {
			t.Errorf("%s lost the scenario's figure:\n%s", cmd, out)
		}
	}
	const head = "MS Name/IP address         Stratum Poll Reach LastRx Last sample               "
	src := regexp.MustCompile(`^[\^=#][*+\-?x~] .{27}  [ \d]\d  [ \d]\d   [ 0-7]{2}[0-7]  [ \d]{3}[\dsmhdy]  [ +-]{1,6}\d+[nuom]?s\[[ +-]*\d+[nuom]?s\] \+/- [ \d]{4,5}[nuom]?s$`)
	out, _, _ := run("chronyc sources")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) < 3 || lines[0] != head || lines[1] != strings.Repeat("=", 79) {
		t.Fatalf("chronyc sources header:\n%s", out)
	}
	selected := 0
	for _, l := range lines[2:] {
		if !src.MatchString(l) || len(l) != 79 {
			t.Errorf("source line %q is not in chrony's columns (79 wide)", l)
		}
		if strings.HasPrefix(l, "^*") {
			selected++
		}
	}
	if selected != 1 {
		t.Errorf("chronyc sources selects %d sources, want one '^*':\n%s", selected, out)
	}
}

// ping and tracepath print iputils' lines: ping's banner with the
// payload and packet sizes, a line per reply or error, the statistics;
// tracepath its hops in iputils' columns and the Resume line.
func TestPingTracepathFormat(t *testing.T) {
	// The world alone does not know the scenario's read_destinations (Run
	// tells the classifier): each probe is let through as approved; none
	// changes the world.
	w, probe := worldOf(t, "net-mtu-mismatch")
	run := func(cmd string) (string, string, int) { w.Arm(); return probe(cmd) }
	banner := regexp.MustCompile(`^PING (\S+) \((\S+)\) (\d+)\((\d+)\) bytes of data\.$`)
	reply := regexp.MustCompile(`^(\d+) bytes from 10\.20\.0\.5: icmp_seq=(\d+) ttl=\d+ time=\d+(\.\d+)? ms$`)
	stats := regexp.MustCompile(`^(\d+) packets transmitted, (\d+) received,( \+\d+ errors,)? (\d+)% packet loss, time \d+ms$`)
	for cmd, want := range map[string]string{"ping -c 3 10.20.0.5": "", "ping -c 3 -M do -s 1372 10.20.0.5": "",
		"ping -c 3 -M do -s 1472 10.20.0.5": "ping: local error: message too long, mtu=1400"} {
		out, errOut, code := run(cmd)
		lines := strings.Split(out, "\n")
		m := banner.FindStringSubmatch(lines[0])
		if m == nil {
			t.Fatalf("%s: no ping banner: exit %d\n%q\n%s", cmd, code, out, errOut)
		}
		payload, _ := strconv.Atoi(m[3])
		total, _ := strconv.Atoi(m[4])
		if total != payload+28 || (strings.Contains(cmd, "-s ") && !strings.Contains(cmd, "-s "+m[3]+" ")) {
			t.Errorf("%s: banner %q: the payload is -s's and the packet 28 bytes more", cmd, lines[0])
		}
		replies := 0
		i := 1
		for ; i < len(lines) && lines[i] != ""; i++ {
			switch {
			case want != "" && lines[i] == want:
			case want == "" && reply.MatchString(lines[i]):
				r := reply.FindStringSubmatch(lines[i])
				if r[1] != strconv.Itoa(payload+8) || r[2] != strconv.Itoa(replies+1) {
					t.Errorf("%s: reply %q: want %d bytes (the payload and the ICMP header), icmp_seq %d", cmd, lines[i], payload+8, replies+1)
				}
				replies++
			default:
				t.Errorf("%s: line %q is not one ping prints here", cmd, lines[i])
			}
		}
		if i+2 >= len(lines) || lines[i+1] != "--- 10.20.0.5 ping statistics ---" {
			t.Fatalf("%s: no statistics:\n%s", cmd, out)
		}
		s := stats.FindStringSubmatch(lines[i+2])
		if s == nil || s[2] != strconv.Itoa(replies) {
			t.Errorf("%s: statistics %q do not count the %d replies", cmd, lines[i+2], replies)
		}
		if replies > 0 && !strings.HasPrefix(lines[i+3], "rtt min/avg/max/mdev = ") {
			t.Errorf("%s: no rtt line", cmd)
		}
	}
	out, _, _ := run("tracepath -n 10.20.0.5")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if lines[0] != " 1?: [LOCALHOST]                      pmtu 1400" || !strings.HasPrefix(lines[len(lines)-1], "     Resume: pmtu 1400 ") {
		t.Errorf("tracepath's first and last lines:\n%s", out)
	}
	hop := regexp.MustCompile(`^ ?\d+:  \S+ +\d+\.\d{3}ms (reached|pmtu \d+)?$`)
	for _, l := range lines[1 : len(lines)-1] {
		if !hop.MatchString(l) || strings.Index(l, "ms") != 64 {
			t.Errorf("hop line %q is not in tracepath's columns", l)
		}
	}
}

// iostat's selections: -d drops the avg-cpu tables, -c the Device
// tables, -y with an interval the since-boot report, a device name the
// other devices' rows, -z the idle devices.
func TestIostatSelections(t *testing.T) {
	_, run := worldOf(t, "misleading-memory-raid-resync")
	count := func(out, s string) int { return strings.Count(out, s) }
	full, _, _ := run("iostat -x 1 2")
	if count(full, "avg-cpu:") != 2 || count(full, "\nDevice ") != 2 || count(full, "\nsdd ") != 2 {
		t.Fatalf("iostat -x 1 2:\n%s", full)
	}
	for cmd, want := range map[string][3]int{ // avg-cpu tables, Device tables, sdd rows
		"iostat -dx 1 2": {0, 2, 2}, "iostat -c 1 2": {2, 0, 0}, "iostat -xy 1 2": {1, 1, 1}, "iostat -cd 1 2": {2, 2, 2},
		"iostat -x sda 1 2": {2, 2, 0}, "iostat -dxy sdd 1 2": {0, 1, 1}, "iostat -xz 1 2": {2, 2, 2},
	} {
		out, _, _ := run(cmd)
		if got := [3]int{count(out, "avg-cpu:"), count(out, "\nDevice "), count(out, "\nsdd ")}; got != want || !iostatBanner.MatchString(strings.SplitN(out, "\n", 2)[0]) {
			t.Errorf("%s: %v avg-cpu tables, Device tables, sdd rows; want %v:\n%s", cmd, got, want, out)
		}
	}
	if out, _, _ := run("iostat -x sda 1 2"); count(out, "\nsda ") != 2 || count(out, "\nsdb ") != 0 || count(out, "\nmd0 ") != 0 {
		t.Errorf("iostat -x sda lists other devices:\n%s", out)
	}
	if out, _, _ := run("iostat -x sda 1 2"); !strings.HasSuffix(out, "\n\n") {
		t.Errorf("iostat's reports end with a blank line:\n%q", out)
	}
}

// timedatectl (status) prints systemd's seven labels right-aligned on
// the colon; timedatectl show the same facts as properties; both agree,
// before and after the fix.
func TestTimedatectlFormat(t *testing.T) {
	w, run := worldOf(t, "host-clock-drift")
	labels := []string{"Local time", "Universal time", "RTC time", "Time zone", "System clock synchronized", "NTP service", "RTC in local TZ"}
	keys := []string{"Timezone", "LocalRTC", "CanNTP", "NTP", "NTPSynchronized", "TimeUSec", "RTCTimeUSec"}
	check := func(synced string) {
		for _, cmd := range []string{"timedatectl", "timedatectl status"} {
			out, _, _ := run(cmd)
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if len(lines) != len(labels) {
				t.Fatalf("%s printed %d lines, want %d:\n%s", cmd, len(lines), len(labels), out)
			}
			for i, l := range lines {
				if len(l) < 27 || l[25:27] != ": " || strings.TrimLeft(l[:25], " ") != labels[i] {
					t.Errorf("%s line %q: want %q right-aligned to the colon at column 26", cmd, l, labels[i])
				}
			}
			if lines[4][27:] != synced {
				t.Errorf("%s: System clock synchronized %q, want %q", cmd, lines[4][27:], synced)
			}
		}
		out, _, _ := run("timedatectl show")
		props := map[string]string{}
		var got []string
		for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			k, v, ok := strings.Cut(l, "=")
			if !ok {
				t.Fatalf("timedatectl show line %q is not a property", l)
			}
			props[k] = v
			got = append(got, k)
		}
		if strings.Join(got, " ") != strings.Join(keys, " ") || props["NTPSynchronized"] != synced {
			t.Errorf("timedatectl show: properties %v, NTPSynchronized %q; want %v and %q", got, props["NTPSynchronized"], keys, synced)
		}
		status, _, _ := run("timedatectl")
		if !strings.Contains(status, "Universal time: "+props["TimeUSec"]+"\n") {
			t.Errorf("timedatectl and timedatectl show disagree on the time:\n%s\n%s", status, out)
		}
	}
	check("no")
	w.Arm()
	run("systemctl start chrony")
	check("yes")
}

package eval

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vigilops/vigil/tools/inventory"
)

// A scenario's rules say what matters on a machine: the lines a tool
// prints about the fault. Real tools print those lines among everything
// else the machine does: kernel threads and daemons in ps, sshd and the
// resolver in ss, boot messages in dmesg, cron and sshd sessions and a
// unit's history in the journal, the unit's journal tail in systemctl
// status. The generators here add that everyday state, in each tool's own
// format, around a rule's answer. They are deterministic: every machine's
// everyday state is drawn from a seed (the scenario and machine names), so
// a run is reproducible and the same machine's ps, ss and journal agree
// (sshd has one PID everywhere). They never change what a rule says: they
// only add rows and lines that are not about the fault, so a rule's state
// changes (a truncation that empties the disk) show the same in every tool.
// A rule with raw: true is answered as written.

// machine is one simulated machine's everyday state.
type machine struct {
	name  string
	seed  uint64
	procs []proc
	// daemons by role: the PIDs other tools name.
	sshd, resolved, exporter, session int
}

// proc is one row of the process table.
type proc struct {
	user      string
	pid, ppid int
	cpu, mem  float64
	vsz, rss  int
	tty, stat string
	start     string
	cputime   time.Duration
	cmd       string
	wchan     string
}

// boot is when every simulated machine booted: the baseline uptime says
// 12 days, 3:02.
var boot = Now.Add(-(12*24*time.Hour + 3*time.Hour + 2*time.Minute))

// seedOf is the seed of one machine of one scenario.
func seedOf(scenario, host string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(scenario + "\x00" + host))
	return h.Sum64()
}

// kernelThreads are a 4-CPU Ubuntu 24.04 server's kernel threads, in PID
// order; {c} is replaced by each CPU number.
var kernelThreads = []string{
	"kthreadd", "pool_workqueue_release", "kworker/R-rcu_g", "kworker/R-rcu_p", "kworker/R-slub_", "kworker/R-netns",
	"kworker/0:0H-events_highpri", "kworker/R-mm_pe", "rcu_tasks_kthread", "rcu_tasks_rude_kthread", "rcu_tasks_trace_kthread",
	"ksoftirqd/0", "rcu_preempt", "migration/0", "idle_inject/0", "cpuhp/0",
	"cpuhp/{c}", "idle_inject/{c}", "migration/{c}", "ksoftirqd/{c}", "kworker/{c}:0H-events_highpri",
	"kdevtmpfs", "kworker/R-inet_", "kauditd", "khungtaskd", "oom_reaper", "kworker/R-write", "kcompactd0", "ksmd", "khugepaged",
	"kworker/R-kinte", "kworker/R-kbloc", "kworker/R-blkcg", "irq/9-acpi", "kworker/R-tpm_d", "kworker/R-ata_s", "kworker/R-md",
	"kworker/R-md_bi", "kworker/R-edac-", "kworker/R-devfr", "watchdogd", "kswapd0", "ecryptfs-kthread", "kworker/R-kthro",
	"kworker/R-acpi_", "scsi_eh_0", "kworker/R-scsi_", "scsi_eh_1", "kworker/R-scsi_", "kworker/R-mld", "kworker/R-ipv6_",
	"kworker/R-kstrp", "kworker/u9:0", "kworker/R-charg", "jbd2/sda1-8", "kworker/R-ext4-", "kworker/R-kmpat", "kworker/R-kmpat",
	"kworker/R-crypt", "psimon",
}

// daemons are the services every simulated machine runs, none of which a
// scenario is about.
var daemons = []struct {
	user, cmd, wchan string
	mem              float64
	rss              int
}{
	{"root", "/usr/lib/systemd/systemd-journald", "ep_poll", 0.6, 48120},
	{"root", "/sbin/multipathd -d -s", "futex_wait_queue", 0.3, 27404},
	{"root", "/usr/lib/systemd/systemd-udevd", "ep_poll", 0.1, 8796},
	{"systemd+", "/usr/lib/systemd/systemd-networkd", "ep_poll", 0.1, 9216},
	{"systemd+", "/usr/lib/systemd/systemd-resolved", "ep_poll", 0.1, 13440},
	{"root", "/usr/sbin/cron -f -P", "hrtimer_nanosleep", 0.0, 2688},
	{"message+", "@dbus-daemon --system --address=systemd: --nofork --nopidfile --systemd-activation --syslog-only", "ep_poll", 0.0, 5248},
	{"root", "/usr/lib/polkit-1/polkitd --no-debug", "do_poll.constprop.0", 0.1, 8192},
	{"syslog", "/usr/sbin/rsyslogd -n -iNONE", "do_select", 0.0, 6016},
	{"root", "/usr/lib/systemd/systemd-logind", "ep_poll", 0.1, 7808},
	{"root", "/usr/bin/python3 /usr/share/unattended-upgrades/unattended-upgrade-shutdown --wait-for-signal", "do_poll.constprop.0", 0.2, 23040},
	{"root", "/sbin/agetty -o -p -- \\u --noclear - linux", "do_select", 0.0, 2048},
	{"root", "sshd: /usr/sbin/sshd -D [listener] 0 of 10-100 startups", "do_sys_poll", 0.1, 8960},
	{"prometh+", "/usr/local/bin/node_exporter --collector.systemd --web.listen-address=:9100", "futex_wait_queue", 0.3, 24576},
	{"root", "/usr/sbin/irqbalance", "hrtimer_nanosleep", 0.0, 3840},
	{"root", "/usr/lib/udisks2/udisksd", "do_poll.constprop.0", 0.1, 12800},
}

// machine is the everyday state of res's machine, built on first use.
func (w *World) machine(res inventory.Resource) *machine {
	if m, ok := w.machines[res.Name]; ok {
		return m
	}
	taken, named := w.rulePIDs(res)
	var about strings.Builder
	for _, r := range w.sc.inv.RoutingChain(res.ID) {
		for _, rule := range w.rulesOf(r.Name) {
			about.WriteString(rule.Run + "\n" + rule.Out + "\n")
		}
	}
	for _, r := range w.sc.inv.All() {
		about.WriteString(r.Name + " " + r.UID + "\n")
	}
	m := newMachine(w.sc.Name, res.Name, taken, named, about.String())
	if w.machines == nil {
		w.machines = map[string]*machine{}
	}
	w.machines[res.Name] = m
	return m
}

// pidWord finds the numbers a rule prints where a PID could be.
var pidWord = regexp.MustCompile(`\b\d{2,7}\b`)

// namedPID finds a process and its PID as ss ("sshd",pid=401) and
// netstat (401/sshd) print them.
var namedPID = regexp.MustCompile(`\("([A-Za-z0-9_.-]+)",pid=(\d+)|\b(\d+)/([A-Za-z][A-Za-z0-9_.-]*)`)

// rulePIDs are the numbers res's rules print: the machine's everyday
// processes take none of them, so a PID in an answer names one process;
// and the PIDs rules give everyday daemons by name, which the machine
// then uses for them.
func (w *World) rulePIDs(res inventory.Resource) (map[int]bool, map[string]int) {
	taken, named := map[int]bool{}, map[string]int{}
	for _, r := range w.sc.inv.RoutingChain(res.ID) {
		for _, rule := range w.rulesOf(r.Name) {
			for _, n := range pidWord.FindAllString(rule.Out, -1) {
				v, _ := strconv.Atoi(n)
				taken[v] = true
			}
			for _, m := range namedPID.FindAllStringSubmatch(rule.Out, -1) {
				name, pid := m[1], m[2]
				if name == "" {
					name, pid = m[4], m[3]
				}
				v, _ := strconv.Atoi(pid)
				named[name] = v
			}
		}
	}
	return taken, named
}

// newMachine draws a machine's everyday state. taken are PIDs the rules
// use, named the PIDs they give daemons, and about the scenario's text: a
// daemon the scenario talks about (node_exporter when it is the one that
// is down) is the scenario's to describe, and the machine leaves it out
// unless a rule gives its PID.
func newMachine(scenario, name string, taken map[int]bool, named map[string]int, about string) *machine {
	m := &machine{name: name, seed: seedOf(scenario, name)}
	rng := rand.New(rand.NewPCG(m.seed, 0x766967696c))
	// PID 1 is init and 2 kthreadd, whatever else a rule prints.
	delete(taken, 1)
	delete(taken, 2)
	next := 1
	alloc := func() int {
		for taken[next] {
			next++
		}
		taken[next] = true
		next++
		return next - 1
	}
	bootClock := boot.Format("Jan02")
	m.procs = append(m.procs, proc{user: "root", pid: alloc(), cpu: 0.0, mem: 0.1, vsz: 22472, rss: 13440, tty: "?", stat: "Ss",
		start: bootClock, cputime: 41*time.Second + time.Duration(rng.IntN(30))*time.Second,
		cmd: "/sbin/init", wchan: "ep_poll"})
	for _, k := range kernelThreads {
		n := 1
		if strings.Contains(k, "{c}") {
			n = 3
		}
		for c := 1; c <= n; c++ {
			name := strings.ReplaceAll(k, "{c}", strconv.Itoa(c))
			stat := "S"
			if strings.HasPrefix(name, "kworker/R") {
				stat = "I<"
			}
			m.procs = append(m.procs, proc{user: "root", pid: alloc(), ppid: 2, tty: "?", stat: stat, start: bootClock,
				cputime: time.Duration(rng.IntN(4)) * time.Second, cmd: "[" + name + "]", wchan: "-"})
		}
	}
	next += 180 + rng.IntN(60)
	for _, d := range daemons {
		next += rng.IntN(40)
		pid := 0
		prog := strings.TrimSuffix(strings.Fields(d.cmd)[0], ":")
		prog = prog[strings.LastIndexByte(prog, '/')+1:]
		for n, v := range named {
			if n == prog || len(n) > 5 && strings.HasPrefix(prog, n) {
				pid = v
			}
		}
		if pid == 0 {
			// sshd always runs: vigil is logged in through it.
			if prog != "sshd" && strings.Contains(about, prog) {
				continue
			}
			pid = alloc()
		}
		p := proc{user: d.user, pid: pid, ppid: 1, mem: d.mem, rss: d.rss + rng.IntN(2048), tty: "?", stat: "Ss",
			start: bootClock, cputime: time.Duration(rng.IntN(200)) * time.Second, cmd: d.cmd, wchan: d.wchan}
		p.vsz = p.rss*2 + 12000 + rng.IntN(90000)
		p.cpu = float64(rng.IntN(3)) / 10
		if strings.Contains(d.cmd, "agetty") {
			p.tty = "tty1"
		}
		switch {
		case strings.HasPrefix(d.cmd, "sshd:"):
			m.sshd = p.pid
		case strings.Contains(d.cmd, "systemd-resolved"):
			m.resolved = p.pid
		case strings.Contains(d.cmd, "node_exporter"):
			m.exporter = p.pid
			p.stat = "Ssl"
		}
		m.procs = append(m.procs, p)
	}
	// The workers the kernel starts and stops all day.
	next += 2000 + rng.IntN(3000)
	for i := 0; i < 14; i++ {
		next += rng.IntN(900)
		cpu := i % 4
		kinds := []string{"events", "mm_percpu_wq", "events_unbound", "events_power_efficient", "events_freezable", "flush-8:0"}
		name := fmt.Sprintf("kworker/%d:%d-%s", cpu, rng.IntN(3), kinds[rng.IntN(len(kinds))])
		if i%5 == 4 {
			name = fmt.Sprintf("kworker/u8:%d-%s", rng.IntN(4), kinds[rng.IntN(len(kinds))])
		}
		at := Now.Add(-time.Duration(rng.IntN(600)) * time.Minute)
		m.procs = append(m.procs, proc{user: "root", pid: alloc(), ppid: 2, tty: "?", stat: "I", start: at.Format("15:04"),
			cmd: "[" + name + "]", wchan: "-"})
	}
	// vigil's own session: the login that runs the command.
	next += 20000 + rng.IntN(9000)
	at := Now.Add(-time.Minute).Format("15:04")
	priv := proc{user: "root", pid: alloc(), ppid: m.sshd, mem: 0.1, vsz: 17296, rss: 11008, tty: "?", stat: "Ss", start: at, cmd: "sshd: vigil [priv]", wchan: "do_sys_poll"}
	next += 3 + rng.IntN(5)
	user := proc{user: "vigil", pid: alloc(), ppid: priv.pid, vsz: 20204, rss: 11648, tty: "?", stat: "Ss", start: at, cmd: "/usr/lib/systemd/systemd --user", wchan: "ep_poll"}
	next += 2 + rng.IntN(3)
	notty := proc{user: "vigil", pid: alloc(), ppid: priv.pid, vsz: 17556, rss: 6912, tty: "?", stat: "S", start: at, cmd: "sshd: vigil@notty", wchan: "do_sys_poll"}
	m.session = notty.pid
	m.procs = append(m.procs, priv, user, notty)
	return m
}

// render is what ps prints for one column of p; ok is false for a column
// the generator does not know.
func (p proc) render(col string) (string, bool) {
	switch strings.ToUpper(col) {
	case "USER", "RUSER", "EUSER":
		return p.user, true
	case "UID":
		switch p.user {
		case "root":
			return "0", true
		case "vigil":
			return "1001", true
		}
		return "10" + strconv.Itoa(len(p.user)), true
	case "PID":
		return strconv.Itoa(p.pid), true
	case "PPID":
		return strconv.Itoa(p.ppid), true
	case "%CPU", "C", "PCPU":
		if col == "C" {
			return "0", true
		}
		return strconv.FormatFloat(p.cpu, 'f', 1, 64), true
	case "%MEM", "PMEM":
		return strconv.FormatFloat(p.mem, 'f', 1, 64), true
	case "VSZ", "VIRT":
		return strconv.Itoa(p.vsz), true
	case "RSS", "RES", "RSZ":
		return strconv.Itoa(p.rss), true
	case "SHR":
		return strconv.Itoa(p.rss / 3), true
	case "TTY", "TT":
		return p.tty, true
	case "STAT":
		return p.stat, true
	case "S":
		return p.stat[:1], true
	case "START", "STIME":
		return p.start, true
	case "TIME":
		return fmt.Sprintf("%d:%02d", int(p.cputime.Minutes()), int(p.cputime.Seconds())%60), true
	case "TIME+":
		return fmt.Sprintf("%d:%02d.%02d", int(p.cputime.Minutes()), int(p.cputime.Seconds())%60, p.pid%100), true
	case "NI":
		if strings.HasSuffix(p.stat, "<") {
			return "-20", true
		}
		return "0", true
	case "PR", "PRI":
		if strings.HasSuffix(p.stat, "<") {
			return "0", true
		}
		return "20", true
	case "WCHAN":
		return p.wchan, true
	case "ELAPSED", "ETIME":
		return "12-03:02:11", true
	case "COMMAND", "CMD", "ARGS":
		return p.cmd, true
	case "COMM":
		f := strings.Fields(p.cmd)
		if len(f) == 0 {
			return "", true
		}
		c := strings.Trim(f[0], "[]:")
		if i := strings.LastIndexByte(c, '/'); i >= 0 && !strings.HasPrefix(p.cmd, "[") {
			c = c[i+1:]
		}
		return c, true
	}
	return "", false
}

// column is one column of a table's header: its name and where it spans.
type column struct {
	name       string
	start, end int
}

// headerColumns splits a table header into its columns. Names that hold
// one space (Local Address:Port, PID/Program name) are kept whole when
// known.
func headerColumns(h string, joined ...string) []column {
	for _, j := range joined {
		h = strings.Replace(h, j, strings.ReplaceAll(j, " ", "\x00"), 1)
	}
	var cols []column
	i := 0
	for i < len(h) {
		for i < len(h) && h[i] == ' ' {
			i++
		}
		if i >= len(h) {
			break
		}
		j := i
		for j < len(h) && h[j] != ' ' {
			j++
		}
		cols = append(cols, column{name: strings.ReplaceAll(h[i:j], "\x00", " "), start: i, end: j})
		i = j
	}
	return cols
}

// leftAligned are the columns tools print from their header's start,
// whatever spaces precede it.
var leftAligned = []string{"State", "Recv-Q", "Send-Q", "Netid", "Process", "Proto", "Local Address", "Foreign Address",
	"PID/Program name", "UNIT", "ACTIVATES", "NEXT", "LAST", "LEFT", "PASSED", "S", "COMMAND", "USER"}

// alignRow lays vals out under cols as the tools do: a value under a
// right-aligned header (spaces before it) ends where the header ends,
// others start where it starts; the last is left as long as it is.
func alignRow(header string, cols []column, vals []string) string {
	var b strings.Builder
	for i, c := range cols {
		v := vals[i]
		right := c.start > 0 && header[c.start-1] == ' ' && i < len(cols)-1 &&
			!slices.Contains(leftAligned, c.name)
		pos := c.start
		if right {
			pos = c.end - len(v)
		}
		if pos <= b.Len() {
			pos = b.Len()
			if b.Len() > 0 {
				pos++
			}
		}
		b.WriteString(strings.Repeat(" ", pos-b.Len()))
		b.WriteString(v)
	}
	return strings.TrimRight(b.String(), " ")
}

// psShowsAll reports whether a ps command lists every process (aux, -e,
// -A) rather than chosen ones (-p, -C, -u, a pipeline's own).
func psShowsAll(words []string) bool {
	all := false
	for i, a := range words[1:] {
		switch {
		case a == "-p" || a == "--pid" || a == "-C" || a == "-u" || a == "-U" || a == "--user" || a == "--ppid" || a == "-q" || a == "-g" || a == "--sid" || a == "-t":
			return false
		case strings.HasPrefix(a, "--pid=") || strings.HasPrefix(a, "--user=") || strings.HasPrefix(a, "-p") && len(a) > 2 && isDigit(a[2]):
			return false
		case i > 0 && (words[i] == "-o" || words[i] == "-O" || words[i] == "--sort" || words[i] == "k"):
			// an option's value
		case strings.HasPrefix(a, "--"):
		case strings.HasPrefix(a, "-"):
			if strings.ContainsAny(a[1:], "eA") {
				all = true
			}
		default:
			if strings.Contains(a, "a") && strings.Contains(a, "x") || a == "ax" || strings.HasPrefix(a, "aux") || strings.HasPrefix(a, "axo") {
				all = true
			}
		}
	}
	return all
}

// psSorted reports whether the command asks for a sort order.
func psSorted(words []string) bool {
	return slices.ContainsFunc(words, func(a string) bool { return a == "--sort" || strings.HasPrefix(a, "--sort=") || a == "k" })
}

// psLayout are ps's column widths; a negative width is left-aligned.
var psLayout = map[string]int{"USER": -8, "UID": -8, "PID": 7, "PPID": 7, "%CPU": 4, "%MEM": 4, "VSZ": 7, "RSS": 6, "TTY": -8,
	"TT": -8, "STAT": -4, "S": 1, "START": -5, "STIME": -5, "TIME": 8, "C": 2, "NI": 3, "PRI": 3, "WCHAN": -16, "ELAPSED": 11,
	"ETIME": 11, "COMMAND": 0, "CMD": 0, "ARGS": 0, "COMM": -15, "RSZ": 6, "PCPU": 4, "PMEM": 4}

// psHeaderOf is the header an -o column name prints.
var psHeaderOf = map[string]string{"user": "USER", "uid": "UID", "pid": "PID", "ppid": "PPID", "%cpu": "%CPU", "pcpu": "%CPU",
	"%mem": "%MEM", "pmem": "%MEM", "vsz": "VSZ", "rss": "RSS", "rsz": "RSZ", "tty": "TT", "stat": "STAT", "s": "S", "start": "STARTED",
	"stime": "STIME", "time": "TIME", "ni": "NI", "pri": "PRI", "wchan": "WCHAN", "etime": "ELAPSED", "args": "COMMAND",
	"cmd": "CMD", "command": "COMMAND", "comm": "COMMAND", "lstart": "STARTED"}

// psColumns are the columns a ps command prints: its -o list, or its
// style's (aux, -ef); nil when the generator cannot say.
func psColumns(words []string) []string {
	for i, a := range words {
		if (a == "-o" || a == "o" || a == "-eo" || a == "axo" || a == "-Ao") && i+1 < len(words) {
			var cols []string
			for _, c := range strings.Split(words[i+1], ",") {
				name, hdr, named := strings.Cut(c, "=")
				h, ok := psHeaderOf[strings.ToLower(name)]
				if !ok || h == "STARTED" {
					return nil
				}
				if named {
					h = hdr
					if hdr == "" {
						return nil
					}
				}
				if strings.ToLower(name) == "comm" {
					h = "COMM"
				}
				cols = append(cols, h)
			}
			return cols
		}
	}
	for _, a := range words[1:] {
		switch {
		case strings.HasPrefix(a, "-") && strings.Contains(a, "f"):
			return []string{"UID", "PID", "PPID", "C", "STIME", "TTY", "TIME", "CMD"}
		case !strings.HasPrefix(a, "-") && strings.Contains(a, "u"):
			return []string{"USER", "PID", "%CPU", "%MEM", "VSZ", "RSS", "TTY", "STAT", "START", "TIME", "COMMAND"}
		}
	}
	return []string{"PID", "TTY", "STAT", "TIME", "COMMAND"}
}

// psRow lays out one row under cols as ps does.
func psRow(cols []string, val func(string) string) string {
	var b strings.Builder
	for i, c := range cols {
		if i > 0 {
			b.WriteByte(' ')
		}
		v := val(c)
		w := psLayout[c]
		switch {
		case i == len(cols)-1 && w <= 0:
			b.WriteString(v)
		case w < 0:
			fmt.Fprintf(&b, "%-*s", -w, v)
		default:
			fmt.Fprintf(&b, "%*s", w, v)
		}
	}
	return strings.TrimRight(b.String(), " ")
}

// dressPs prints the process table a ps command asks for, in its columns:
// the rule's processes (with the values the rule gives them) and the
// machine's everyday ones, in PID order, or the rule's first when the
// command sorts (a rule's rows are the top of any usage order). A ps of
// chosen processes (-p, -C, -u) is the rule's answer alone; a rule table
// whose columns the generator does not know is left as written.
func (m *machine) dressPs(out string, words []string) string {
	if !psShowsAll(words) {
		return out
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) == 0 {
		return out
	}
	ruleCols := headerColumns(lines[0])
	pidCol := -1
	for i, c := range ruleCols {
		if _, ok := (proc{stat: "S", cmd: "x"}).render(c.name); !ok {
			return out
		}
		if c.name == "PID" {
			pidCol = i
		}
	}
	cols := psColumns(words)
	if pidCol < 0 || cols == nil {
		return out
	}
	for _, c := range cols {
		if _, ok := psLayout[c]; !ok {
			return out
		}
	}
	// The rule's processes, their columns by name.
	type row struct {
		pid  int
		vals map[string]string
	}
	var rows []row
	sortedByPID := true
	seen := map[int]bool{}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) < len(ruleCols) {
			continue
		}
		vals := map[string]string{}
		for i, c := range ruleCols {
			if i == len(ruleCols)-1 {
				vals[c.name] = strings.Join(f[i:], " ")
			} else {
				vals[c.name] = f[i]
			}
		}
		pid, _ := strconv.Atoi(f[pidCol])
		if len(rows) > 0 && pid < rows[len(rows)-1].pid {
			sortedByPID = false
		}
		seen[pid] = true
		rows = append(rows, row{pid, vals})
	}
	for _, p := range m.procs {
		if !seen[p.pid] {
			rows = append(rows, row{p.pid, nil})
		}
	}
	self := proc{user: "vigil", pid: m.session + 3, ppid: m.session, vsz: 11320, rss: 4480, tty: "?", stat: "R+", start: Now.Format("15:04"),
		cmd: strings.Join(words, " "), wchan: "-"}
	if !seen[self.pid] {
		rows = append(rows, row{self.pid, nil})
	}
	byPID := map[int]proc{self.pid: self}
	for _, p := range m.procs {
		byPID[p.pid] = p
	}
	if sortedByPID && !psSorted(words) {
		slices.SortStableFunc(rows, func(a, b row) int { return a.pid - b.pid })
	}
	var b strings.Builder
	b.WriteString(psRow(cols, func(c string) string { return c }) + "\n")
	for _, r := range rows {
		p, ok := byPID[r.pid]
		if r.vals != nil || !ok {
			// A rule's process: what the rule says, the rest as an
			// ordinary service of the machine.
			p = proc{user: "root", pid: r.pid, ppid: 1, tty: "?", stat: "Ssl", start: boot.Add(40 * time.Second).Format("Jan02"), wchan: "-"}
			for _, k := range []string{"COMMAND", "CMD", "ARGS", "COMM"} {
				if v, ok := r.vals[k]; ok {
					p.cmd = v
				}
			}
			if v, ok := r.vals["USER"]; ok {
				p.user = v
			}
			p.cpu, _ = strconv.ParseFloat(r.vals["%CPU"], 64)
			p.mem, _ = strconv.ParseFloat(r.vals["%MEM"], 64)
			p.rss, _ = strconv.Atoi(r.vals["RSS"])
			p.vsz = p.rss + p.rss/3 + 8000
			if v, ok := r.vals["STAT"]; ok {
				p.stat = v
			}
		}
		b.WriteString(psRow(cols, func(c string) string {
			if r.vals != nil {
				if v, ok := r.vals[c]; ok {
					return v
				}
				if c == "COMMAND" || c == "CMD" || c == "ARGS" {
					return p.cmd
				}
			}
			v, _ := p.render(c)
			return v
		}) + "\n")
	}
	return b.String()
}

// dressTop adds the everyday processes under a rule's top table (top
// sorts by CPU, and they use next to none).
func (m *machine) dressTop(out string) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	h := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, "PID USER") })
	if h < 0 {
		return out
	}
	header := lines[h]
	cols := headerColumns(header)
	seen := map[string]bool{}
	for _, l := range lines[h+1:] {
		if f := strings.Fields(l); len(f) > 0 {
			seen[f[0]] = true
		}
	}
	var b strings.Builder
	b.WriteString(strings.TrimRight(out, "\n") + "\n")
	for _, p := range m.procs {
		if seen[strconv.Itoa(p.pid)] {
			continue
		}
		vals := make([]string, len(cols))
		for i, c := range cols {
			v, ok := p.render(c.name)
			if !ok {
				return out
			}
			if c.name == "COMMAND" {
				v, _ = p.render("COMM")
			}
			vals[i] = v
		}
		b.WriteString(alignRow(header, cols, vals) + "\n")
	}
	return b.String()
}

// socket is one socket of the machine's everyday services.
type socket struct {
	proto, state, local, peer, proc string
	pid, fd                         int
}

func (m *machine) sockets() []socket {
	var out []socket
	for _, s := range m.allSockets() {
		if s.pid != 0 {
			out = append(out, s)
		}
	}
	return out
}

func (m *machine) allSockets() []socket {
	return []socket{
		{"tcp", "LISTEN", "127.0.0.53%lo:53", "0.0.0.0:*", "systemd-resolve", m.resolved, 15},
		{"tcp", "LISTEN", "127.0.0.54:53", "0.0.0.0:*", "systemd-resolve", m.resolved, 17},
		{"tcp", "LISTEN", "0.0.0.0:22", "0.0.0.0:*", "sshd", m.sshd, 3},
		{"tcp", "LISTEN", "*:9100", "*:*", "node_exporter", m.exporter, 3},
		{"tcp", "LISTEN", "[::]:22", "[::]:*", "sshd", m.sshd, 4},
		{"udp", "UNCONN", "127.0.0.54:53", "0.0.0.0:*", "systemd-resolve", m.resolved, 16},
		{"udp", "UNCONN", "127.0.0.53%lo:53", "0.0.0.0:*", "systemd-resolve", m.resolved, 14},
		{"tcp", "ESTAB", "10.0.0.21:22", "10.0.0.5:" + strconv.Itoa(40000+int(m.seed%20000)), "sshd", m.session, 4},
	}
}

// ssFiltered reports whether a socket command names a port, address or
// filter expression: its answer is the rule's, nothing added.
func ssFiltered(words []string) bool {
	for _, a := range words[1:] {
		if strings.Contains(a, ":") || a == "sport" || a == "dport" || a == "src" || a == "dst" || a == "(" || strings.HasPrefix(a, "-i") ||
			(len(a) > 0 && isDigit(a[0])) || a == "state" {
			return true
		}
	}
	return false
}

// portOf is the port of an address:port.
func portOf(a string) string {
	i := strings.LastIndexByte(a, ':')
	if i < 0 {
		return ""
	}
	return a[i+1:]
}

// dressSockets adds the everyday sockets to a rule's ss or netstat table,
// in its columns: the ones the options ask for (-l listening, -t TCP, -u
// UDP) whose port the rule does not already show.
func (m *machine) dressSockets(out string, words []string) string {
	if ssFiltered(words) {
		return out
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	h := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, "Local Address") })
	if h < 0 {
		return out
	}
	header := lines[h]
	cols := headerColumns(header, "Local Address:Port", "Peer Address:Port", "Local Address", "Foreign Address", "PID/Program name")
	flags, _ := splitFlags(flagCommands[words[0]], words[1:])
	listening := flags["-l"]
	tcp, udp := flags["-t"], flags["-u"]
	if !tcp && !udp {
		tcp, udp = true, true
	}
	shown := map[string]bool{}
	for _, l := range lines[h+1:] {
		for _, f := range strings.Fields(l) {
			if p := portOf(f); p != "" && p != "*" && !strings.Contains(f, "(") {
				shown[p] = true
			}
		}
	}
	var b strings.Builder
	b.WriteString(strings.TrimRight(out, "\n") + "\n")
	for _, s := range m.sockets() {
		if (s.proto == "tcp" && !tcp) || (s.proto == "udp" && !udp) || (listening && s.state == "ESTAB") ||
			(!listening && !flags["-a"] && s.state != "ESTAB") || shown[portOf(s.local)] && s.state != "ESTAB" {
			continue
		}
		vals := make([]string, len(cols))
		for i, c := range cols {
			switch c.name {
			case "Netid", "Proto":
				vals[i] = s.proto
			case "State":
				vals[i] = s.state
				if words[0] == "netstat" {
					vals[i] = map[string]string{"LISTEN": "LISTEN", "ESTAB": "ESTABLISHED", "UNCONN": ""}[s.state]
				}
			case "Recv-Q":
				vals[i] = "0"
			case "Send-Q":
				vals[i] = "0"
				if s.state == "LISTEN" {
					vals[i] = "4096"
					if words[0] == "netstat" {
						vals[i] = "0"
					}
				}
			case "Local Address:Port", "Local Address":
				vals[i] = s.local
			case "Peer Address:Port", "Foreign Address":
				vals[i] = s.peer
			case "Process":
				vals[i] = fmt.Sprintf(`users:(("%s",pid=%d,fd=%d))`, s.proc, s.pid, s.fd)
			case "PID/Program name":
				vals[i] = fmt.Sprintf("%d/%s", s.pid, s.proc)
			default:
				return out
			}
		}
		b.WriteString(alignRow(header, cols, vals) + "\n")
	}
	return b.String()
}

// bootMessages are what the kernel logs while a machine boots: the first
// lines of every dmesg.
var bootMessages = []string{
	"Linux version 6.8.0-49-generic (buildd@lcy02-amd64-103) (x86_64-linux-gnu-gcc-13 (Ubuntu 13.2.0-23ubuntu4) 13.2.0, GNU ld (GNU Binutils for Ubuntu) 2.42) #49-Ubuntu SMP PREEMPT_DYNAMIC Mon Nov  4 02:06:24 UTC 2024 (Ubuntu 6.8.0-49.49-generic 6.8.12)",
	"Command line: BOOT_IMAGE=/vmlinuz-6.8.0-49-generic root=UUID=3f1c9a52-8d0e-4c11-9a87-2b7e0f5d61c4 ro console=tty1 console=ttyS0",
	"KERNEL supported cpus:",
	"  Intel GenuineIntel",
	"  AMD AuthenticAMD",
	"BIOS-provided physical RAM map:",
	"BIOS-e820: [mem 0x0000000000000000-0x000000000009fbff] usable",
	"BIOS-e820: [mem 0x000000000009fc00-0x000000000009ffff] reserved",
	"BIOS-e820: [mem 0x0000000000100000-0x00000000bffd9fff] usable",
	"BIOS-e820: [mem 0x0000000100000000-0x000000023fffffff] usable",
	"NX (Execute Disable) protection: active",
	"SMBIOS 2.8 present.",
	"DMI: QEMU Standard PC (i440FX + PIIX, 1996), BIOS 1.16.3-debian-1.16.3-2 04/01/2014",
	"Hypervisor detected: KVM",
	"kvm-clock: Using msrs 4b564d01 and 4b564d00",
	"tsc: Detected 2445.406 MHz processor",
	"last_pfn = 0x240000 max_arch_pfn = 0x400000000",
	"Memory: 7982100K/8388088K available (20480K kernel code, 4421K rwdata, 14312K rodata, 4900K init, 4896K bss, 405728K reserved, 0K cma-reserved)",
	"SLUB: HWalign=64, Order=0-3, MinObjects=0, CPUs=4, Nodes=1",
	"rcu: Hierarchical RCU implementation.",
	"NR_IRQS: 524544, nr_irqs: 456, preallocated irqs: 16",
	"Console: colour VGA+ 80x25",
	"printk: legacy console [tty1] enabled",
	"ACPI: Core revision 20230628",
	"APIC: Switch to symmetric I/O mode setup",
	"smpboot: CPU0: Intel Xeon Processor (Icelake) (family: 0x6, model: 0x6a, stepping: 0x6)",
	"smp: Brought up 1 node, 4 CPUs",
	"devtmpfs: initialized",
	"NET: Registered PF_NETLINK/PF_ROUTE protocol family",
	"PCI: Using configuration type 1 for base access",
	"iommu: Default domain type: Translated",
	"SCSI subsystem initialized",
	"NetLabel: Initializing",
	"clocksource: Switched to clocksource kvm-clock",
	"NET: Registered PF_INET protocol family",
	"TCP established hash table entries: 65536 (order: 7, 524288 bytes, linear)",
	"Trying to unpack rootfs image as initramfs...",
	"Freeing initrd memory: 72188K",
	"Initialise system trusted keyrings",
	"workingset: timestamp_bits=36 max_order=21 bucket_order=0",
	"Block layer SCSI generic (bsg) driver version 0.4 loaded (major 243)",
	"Serial: 8250/16550 driver, 32 ports, IRQ sharing enabled",
	"i8042: PNP: PS/2 Controller [PNP0303:KBD,PNP0f13:MOU] at 0x60,0x64 irq 1,12",
	"rtc_cmos 00:00: RTC can wake from S4",
	"NET: Registered PF_INET6 protocol family",
	"Loading compiled-in X.509 certificates",
	"Key type .fscrypt registered",
	"Freeing unused kernel image (initmem) memory: 4900K",
	"Write protecting the kernel read-only data: 36864k",
	"Run /init as init process",
	"virtio_blk virtio2: 4/0/0 default/read/poll queues",
	"virtio_blk virtio2: [vda] 104857600 512-byte logical blocks (53.7 GB/50.0 GiB)",
	" vda: vda1 vda14 vda15 vda16",
	"virtio_net virtio1 ens3: renamed from eth0",
	"EXT4-fs (vda1): mounted filesystem 3f1c9a52-8d0e-4c11-9a87-2b7e0f5d61c4 ro with ordered data mode. Quota mode: none.",
	"systemd[1]: Inserted module 'autofs4'",
	"systemd[1]: systemd 255.4-1ubuntu8.4 running in system mode (+PAM +AUDIT +SELINUX +APPARMOR +IMA +SMACK +SECCOMP +GCRYPT -GNUTLS +OPENSSL +ACL +BLKID +CURL +ELFUTILS +FIDO2 +IDN2 -IDN +IPTC +KMOD +LIBCRYPTSETUP +LIBFDISK +PCRE2 -PWQUALITY +P11KIT +QRENCODE +TPM2 +BZIP2 +LZ4 +XZ +ZLIB +ZSTD -BPF_FRAMEWORK -XKBCOMMON +UTMP +SYSVINIT default-hierarchy=unified)",
	"systemd[1]: Detected virtualization kvm.",
	"systemd[1]: Detected architecture x86-64.",
	"systemd[1]: Hostname set to <{host}>.",
	"systemd[1]: Queued start job for default target graphical.target.",
	"systemd[1]: Created slice system-modprobe.slice - Slice /system/modprobe.",
	"systemd[1]: Started systemd-ask-password-console.path - Dispatch Password Requests to Console Directory Watch.",
	"systemd[1]: Reached target cryptsetup.target - Local Encrypted Volumes.",
	"systemd[1]: Listening on systemd-journald.socket - Journal Socket.",
	"EXT4-fs (vda1): re-mounted 3f1c9a52-8d0e-4c11-9a87-2b7e0f5d61c4 r/w. Quota mode: none.",
	"systemd-journald[312]: Received client request to flush runtime journal.",
	"loop0: detected capacity change from 0 to 8",
	"audit: type=1400 audit(1763136101.203:2): apparmor=\"STATUS\" operation=\"profile_load\" profile=\"unconfined\" name=\"lsb_release\" pid=441 comm=\"apparmor_parser\"",
	"audit: type=1400 audit(1763136101.207:3): apparmor=\"STATUS\" operation=\"profile_load\" profile=\"unconfined\" name=\"nvidia_modprobe\" pid=442 comm=\"apparmor_parser\"",
	"virtio_net virtio1 ens3: entered promiscuous mode",
	"NET: Registered PF_PACKET protocol family",
	"Bluetooth: Core ver 2.22",
	"loop1: detected capacity change from 0 to 79520",
	"kauditd_printk_skb: 112 callbacks suppressed",
}

// dmesgStamp reads a dmesg line's "[seconds.fraction]" stamp.
var dmesgStamp = regexp.MustCompile(`^\[\s*(\d+)(?:\.(\d+))?\]`)

// dressDmesg puts the boot messages before a rule's kernel lines, stamped
// as dmesg stamps them (seconds since boot, the rule's own stamps kept).
func (m *machine) dressDmesg(out string, words []string) string {
	human := slices.ContainsFunc(words[1:], func(a string) bool {
		return a == "-T" || a == "--ctime" || strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "T")
	})
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	first := 2400.0
	if len(lines) > 0 {
		if s := dmesgStamp.FindStringSubmatch(lines[0]); s != nil {
			v, _ := strconv.ParseFloat(s[1]+"."+s[2]+"0", 64)
			first = min(first, v)
		}
	}
	rng := rand.New(rand.NewPCG(m.seed, 2))
	var b strings.Builder
	t := 0.0
	stamp := func(sec float64) string {
		if human {
			return "[" + boot.Add(time.Duration(sec*float64(time.Second))).Format("Mon Jan _2 15:04:05 2006") + "]"
		}
		return fmt.Sprintf("[%12.6f]", sec)
	}
	for i, l := range bootMessages {
		if i > 0 {
			t += float64(rng.IntN(90000)) / 1e6 * min(first, 20) / 20
		}
		b.WriteString(stamp(t) + " " + strings.ReplaceAll(l, "{host}", m.name) + "\n")
	}
	for _, l := range lines {
		if l == "" {
			continue
		}
		if s := dmesgStamp.FindStringSubmatch(l); s != nil && human {
			v, _ := strconv.ParseFloat(s[1]+"."+s[2]+"0", 64)
			l = stamp(v) + l[len(s[0]):]
		}
		b.WriteString(l + "\n")
	}
	return b.String()
}

// journalNoise are the lines any machine's journal holds between the ones
// that matter; %[1]d a PID, %[2]d a port or session, %[3]s the host.
var journalNoise = []string{
	"CRON[%[1]d]: pam_unix(cron:session): session opened for user root(uid=0) by root(uid=0)",
	"CRON[%[1]d]: (root) CMD (command -v debian-sa1 > /dev/null && debian-sa1 1 1)",
	"CRON[%[1]d]: pam_unix(cron:session): session closed for user root",
	"systemd[1]: Starting sysstat-collect.service - system activity accounting tool...",
	"systemd[1]: sysstat-collect.service: Deactivated successfully.",
	"systemd[1]: Finished sysstat-collect.service - system activity accounting tool.",
	"sshd[%[1]d]: Accepted publickey for vigil from 10.0.0.5 port %[2]d ssh2: ED25519 SHA256:q2m0mGd3bV6n1dXbZr4rY0pG8Vt0rQZ3fC1n6Zx9Qk8",
	"sshd[%[1]d]: pam_unix(sshd:session): session opened for user vigil(uid=1001) by vigil(uid=0)",
	"systemd-logind[%[1]d]: New session %[2]d of user vigil.",
	"systemd[1]: Started session-%[2]d.scope - Session %[2]d of User vigil.",
	"sshd[%[1]d]: Received disconnect from 10.0.0.5 port %[2]d:11: disconnected by user",
	"sshd[%[1]d]: pam_unix(sshd:session): session closed for user vigil",
	"systemd-logind[%[1]d]: Session %[2]d logged out. Waiting for processes to exit.",
	"systemd[1]: session-%[2]d.scope: Deactivated successfully.",
	"systemd[1]: Starting apt-daily.service - Daily apt download activities...",
	"systemd[1]: apt-daily.service: Deactivated successfully.",
	"systemd[1]: Finished apt-daily.service - Daily apt download activities.",
	"systemd[1]: Starting motd-news.service - Message of the Day...",
	"systemd[1]: motd-news.service: Deactivated successfully.",
	"systemd[1]: Finished motd-news.service - Message of the Day.",
	"systemd-resolved[%[1]d]: Clock change detected. Flushing caches.",
	"systemd-networkd[%[1]d]: ens3: DHCPv4 address renewed",
	"systemd[1]: Starting logrotate.service - Rotate log files...",
	"systemd[1]: logrotate.service: Deactivated successfully.",
	"systemd[1]: Finished logrotate.service - Rotate log files.",
	"rsyslogd[%[1]d]: [origin software=\"rsyslogd\" swVersion=\"8.2312.0\" x-pid=\"%[1]d\" x-info=\"https://www.rsyslog.com\"] rsyslogd was HUPed",
	"systemd[1]: Starting man-db.service - Daily man-db regeneration...",
	"systemd[1]: man-db.service: Deactivated successfully.",
	"systemd[1]: Finished man-db.service - Daily man-db regeneration.",
	"systemd[1]: Starting fwupd-refresh.service - Refresh fwupd metadata and update motd...",
	"systemd[1]: fwupd-refresh.service: Deactivated successfully.",
	"systemd[1]: Finished fwupd-refresh.service - Refresh fwupd metadata and update motd.",
}

// journalNoiseLines draws n everyday journal lines, without timestamps.
func (m *machine) journalNoiseLines(n int, salt uint64) []string {
	rng := rand.New(rand.NewPCG(m.seed, salt))
	n = max(n, 0)
	out := make([]string, 0, n)
	for len(out) < n {
		// Lines come in their natural groups (a cron run, an ssh session).
		start := rng.IntN(len(journalNoise))
		for k := start; k < len(journalNoise) && len(out) < n; k++ {
			l := journalNoise[k]
			pid, port := 1000+rng.IntN(60000), 30000+rng.IntN(30000)
			if strings.Contains(l, "%") {
				l = fmt.Sprintf(l, pid, port, m.name)
			}
			out = append(out, l)
			if k > start && (strings.Contains(l, "closed") || strings.Contains(l, "Finished") || strings.Contains(l, "HUPed")) {
				break
			}
		}
	}
	return out
}

// unitHistory are the lines a unit wrote in the days before: its starts
// and reloads, for a daemon; its daily runs, for a oneshot; its routine
// output, for an application.
func (m *machine) unitHistory(unit string, n int) []string {
	u := unitOf(unit)
	base := strings.TrimSuffix(u, ".service")
	rng := rand.New(rand.NewPCG(m.seed, seedOf("unit", u)))
	pid := 1200 + rng.IntN(8000)
	var out []string
	switch {
	case containsAny(base, "backup|dump|cleanup|certbot|logrotate|rotate|sync|report"):
		for len(out) < n {
			out = append(out, "systemd[1]: Starting "+u+"...",
				fmt.Sprintf("%s[%d]: run started", base, pid),
				fmt.Sprintf("%s[%d]: run finished in %dm%02ds", base, pid, 2+rng.IntN(30), rng.IntN(60)),
				"systemd[1]: "+u+": Deactivated successfully.",
				"systemd[1]: Finished "+u+".",
				fmt.Sprintf("systemd[1]: %s: Consumed %d.%03ds CPU time.", u, 20+rng.IntN(200), rng.IntN(1000)))
			pid += 100 + rng.IntN(2000)
		}
	case containsAny(base, "nginx|apache|haproxy|chrony|ssh|cron|rsyslog|dbus|redis|php|fpm|docker|containerd|kubelet|mysql|mariadb|postgres|vault|nfs"):
		out = append(out, "systemd[1]: Starting "+u+"...", "systemd[1]: Started "+u+".")
		for len(out) < min(n, 40) {
			out = append(out, "systemd[1]: Reloading "+u+"...", fmt.Sprintf("%s[%d]: reload requested by logrotate", base, pid+len(out)), "systemd[1]: Reloaded "+u+".")
		}
		if containsAny(base, "postgres") {
			for len(out) < n {
				out = append(out, fmt.Sprintf("postgres[%d]: LOG:  checkpoint starting: time", pid),
					fmt.Sprintf("postgres[%d]: LOG:  checkpoint complete: wrote %d buffers (%d.%d%%); 0 WAL file(s) added, 0 removed, %d recycled; write=%d.%03d s, sync=0.0%02d s, total=%d.%03d s",
						pid, 100+rng.IntN(3000), rng.IntN(3), rng.IntN(10), 1+rng.IntN(3), 10+rng.IntN(200), rng.IntN(1000), rng.IntN(99), 10+rng.IntN(200), rng.IntN(1000)))
			}
		}
		if containsAny(base, "docker|containerd") {
			for len(out) < n {
				out = append(out, fmt.Sprintf(`dockerd[%d]: time="%s" level=info msg="ignoring event" container=%012x module=libcontainerd namespace=moby topic=/tasks/delete type="*events.TaskDelete"`,
					pid, Now.Add(-time.Duration(rng.IntN(72*60))*time.Minute).Format(time.RFC3339Nano), rng.Uint64()>>16))
			}
		}
	default:
		// An application that logs its requests to stdout.
		out = append(out, "systemd[1]: Started "+u+".")
		paths := []string{"/healthz", "/metrics", "/api/v1/status", "/api/v1/items", "/api/v1/items/" + strconv.Itoa(rng.IntN(9000))}
		for len(out) < n {
			out = append(out, fmt.Sprintf(`%s[%d]: level=info msg="request served" method=GET path=%s status=200 duration=%d.%dms`,
				base, pid, paths[rng.IntN(len(paths))], rng.IntN(40), rng.IntN(10)))
		}
	}
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// journalLimit is the -n of a journalctl command, -1 for none.
func journalLimit(words []string) int {
	for i, w := range words {
		v := ""
		switch {
		case (w == "-n" || w == "--lines") && i+1 < len(words):
			v = words[i+1]
		case strings.HasPrefix(w, "--lines="):
			v = strings.TrimPrefix(w, "--lines=")
		case strings.HasPrefix(w, "-n") && len(w) > 2:
			v = w[2:]
		}
		if k, err := strconv.Atoi(v); err == nil && k >= 0 {
			return k
		}
	}
	return -1
}

// appLogLines are what a long-running container wrote before the lines
// that matter: its routine requests, in the format of the lines a rule
// gives (JSON, a timestamped line, or plain).
func (m *machine) appLogLines(signal string, n int, name string) []string {
	rng := rand.New(rand.NewPCG(m.seed, seedOf("logs", name)))
	n = max(n, 0)
	first, _, _ := strings.Cut(strings.TrimSpace(signal), "\n")
	at := Now.Add(-time.Duration(n+5) * 9 * time.Second)
	paths := []string{"/healthz", "/readyz", "/metrics", "/api/v1/status", "/api/v1/orders", "/api/v1/orders/" + strconv.Itoa(1000+rng.IntN(9000))}
	out := make([]string, 0, n)
	for i := 0; i < n; i++ {
		at = at.Add(time.Duration(5+rng.IntN(8)) * time.Second)
		p := paths[rng.IntN(len(paths))]
		ms := float64(rng.IntN(4000)) / 100
		ip := fmt.Sprintf("10.244.%d.%d", rng.IntN(4), 2+rng.IntN(200))
		switch {
		case strings.HasPrefix(first, "{"):
			out = append(out, fmt.Sprintf(`{"time":"%s","level":"info","msg":"request","method":"GET","path":"%s","status":200,"duration_ms":%.2f,"remote":"%s"}`,
				at.Format(time.RFC3339Nano), p, ms, ip))
		case len(first) > 4 && isDigit(first[0]) && isDigit(first[3]):
			out = append(out, fmt.Sprintf("%s INFO GET %s 200 %.2fms from %s", at.Format("2006/01/02 15:04:05"), p, ms, ip))
		default:
			out = append(out, fmt.Sprintf(`%s - - [%s] "GET %s HTTP/1.1" 200 %d "-" "kube-probe/1.30"`, ip, at.Format("02/Jan/2006:15:04:05 -0700"), p, 2+rng.IntN(900)))
		}
	}
	return out
}

// startupLog reports whether a log begins with the process starting: then
// there is nothing before it to show.
var startupLog = regexp.MustCompile(`(?i)^\S*\s*.{0,40}\b(start|starting|started|boot|booting|launch|listening|version|loading|init)`)

// dressAppLogs puts a container's routine output before a rule's log lines
// (kubectl logs, docker logs), up to the --tail the command asks for: a
// long-running service's log. A log that begins with the process starting
// (a crash loop's) is left as it is: that is all the container wrote.
func (m *machine) dressAppLogs(out string, words []string) string {
	if startupLog.MatchString(strings.TrimSpace(out)) || slices.Contains(words, "--previous") || slices.Contains(words, "-p") {
		return out
	}
	n := numFlag(words, 120, "--tail", "-n")
	have := strings.Count(strings.TrimRight(out, "\n"), "\n") + 1
	if n < 0 {
		n = 120
	}
	if n <= have {
		return out
	}
	name := strings.Join(words, " ")
	lines := m.appLogLines(out, min(n-have, 400), name)
	return strings.Join(lines, "\n") + "\n" + out
}

// dress adds the machine's everyday state to a rule's answer to a read, in
// the tool's format (see the top of this file). A rule marked raw is
// answered as written.
func (w *World) dress(res inventory.Resource, r *Rule, words []string, out string) string {
	if r.Raw || out == "" || len(words) == 0 {
		return out
	}
	m := w.machine(res)
	switch words[0] {
	case "df":
		return alignDf(dfHumanInodes(dfNoise(m.dfInodes(out, words), words), words))
	case "journalctl":
		if !isJournalRead(words) {
			return out
		}
		unit, kind := journalUnit(words), "all"
		switch {
		case unit != "":
			kind = "unit"
		case strings.Contains(r.Run, "-k") || slices.Contains(words, "-k") || slices.Contains(words, "--dmesg"):
			kind = "kernel"
		}
		return m.journalize(out, words, unit, kind)
	case "ps":
		return m.dressPs(out, words)
	case "top":
		return m.dressTop(out)
	case "ss", "netstat":
		return m.dressSockets(out, words)
	case "dmesg":
		return m.dressDmesg(out, words)
	case "docker", "kubectl":
		if len(words) > 1 && words[1] == "logs" {
			return m.dressAppLogs(out, words)
		}
		if len(words) > 1 && words[0] == "docker" && words[1] == "inspect" {
			return m.dressInspect(out, words)
		}
		if len(words) > 1 && words[0] == "kubectl" && words[1] == "describe" {
			return m.dressDescribe(out, words)
		}
	case "systemctl":
		if len(words) > 1 && words[1] == "status" {
			return w.dressStatus(res, words, out)
		}
		if len(words) > 1 && words[1] == "list-timers" {
			return dressTimers(out, words)
		}
	case "du":
		return dressDu(out, words)
	case "free":
		return dressFree(out, words)
	case "iostat":
		return dressIostat(out, words)
	}
	return out
}

// statusUnit is the unit a systemctl status command names, "" for none.
func statusUnit(words []string) string {
	for _, a := range words[2:] {
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}

// dressStatus completes a rule's systemctl status as systemd prints it:
// the state bullet, the Loaded and CGroup lines a rule left out, and the
// unit's last ten journal lines, the same lines journalctl -u shows.
func (w *World) dressStatus(res inventory.Resource, words []string, out string) string {
	unit := statusUnit(words)
	if unit == "" || strings.Count(out, "\n") > 30 {
		return out
	}
	u := unitOf(unit)
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	for _, l := range lines {
		if journalStamp.MatchString(l) {
			return out
		}
	}
	active := ""
	for _, l := range lines {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "Active:") {
			active = t
		}
	}
	if first := lines[0]; !strings.HasPrefix(first, "●") && !strings.HasPrefix(first, "○") && !strings.HasPrefix(first, "×") {
		switch {
		case strings.Contains(active, "failed"):
			lines[0] = "× " + first
		case strings.Contains(active, "inactive"):
			lines[0] = "○ " + first
		default:
			lines[0] = "● " + first
		}
	}
	if !strings.Contains(out, "Loaded:") {
		loaded := "     Loaded: loaded (/usr/lib/systemd/system/" + u + "; enabled; preset: enabled)"
		lines = slices.Insert(lines, 1, loaded)
	}
	if strings.Contains(active, "(running)") && !strings.Contains(out, "CGroup:") {
		lines = append(lines, "     CGroup: /system.slice/"+u)
	}
	return w.withJournalTail(res, unit, strings.Join(lines, "\n")+"\n")
}

// withJournalTail appends a unit's last ten journal lines to its status.
func (w *World) withJournalTail(res inventory.Resource, unit, status string) string {
	tail, _, code := w.answer(res, simple{words: []string{"journalctl", "--no-pager", "-n", "10", "-u", unit}}, "", false)
	if code != 0 || strings.TrimSpace(tail) == "" || strings.HasPrefix(tail, "--") {
		return status
	}
	return status + "\n" + tail
}

// duTrees are the directories under everyday roots and their sizes in KiB:
// what du finds besides the scenario's own entries.
var duTrees = map[string][]struct {
	path string
	kib  int
}{
	"/var/log": {{"/var/log/apt", 412}, {"/var/log/installer", 1880}, {"/var/log/installer/subiquity-server-debug.log.d", 96}, {"/var/log/unattended-upgrades", 36},
		{"/var/log/sysstat", 5212}, {"/var/log/landscape", 8}, {"/var/log/private", 4}, {"/var/log/dist-upgrade", 4}, {"/var/log/chrony", 4}},
	"/var/lib": {{"/var/lib/apt/lists", 243112}, {"/var/lib/apt/lists/auxfiles", 4}, {"/var/lib/apt/lists/partial", 4}, {"/var/lib/apt", 243180},
		{"/var/lib/dpkg/info", 21344}, {"/var/lib/dpkg/updates", 4}, {"/var/lib/dpkg", 24920}, {"/var/lib/snapd/snaps", 4}, {"/var/lib/snapd", 64},
		{"/var/lib/systemd/timers", 4}, {"/var/lib/systemd/deb-systemd-helper-enabled", 160}, {"/var/lib/ucf/cache", 52}, {"/var/lib/ucf", 84},
		{"/var/lib/cloud/instances", 96}, {"/var/lib/cloud", 124}, {"/var/lib/polkit-1", 4}, {"/var/lib/sysstat", 4}, {"/var/lib/update-notifier", 12},
		{"/var/lib/vim/addons", 4}, {"/var/lib/vim", 8}, {"/var/lib/pam", 28}, {"/var/lib/logrotate", 8}, {"/var/lib/python", 4}},
	"/usr": {{"/usr/lib/x86_64-linux-gnu", 486212}, {"/usr/lib/python3/dist-packages", 92416}, {"/usr/lib/python3", 92420}, {"/usr/lib/modules/6.8.0-49-generic", 126830},
		{"/usr/lib/modules", 126834}, {"/usr/lib/firmware", 341020}, {"/usr/lib/systemd", 10204}, {"/usr/lib/git-core", 40132}, {"/usr/lib", 1149760},
		{"/usr/share/doc", 48904}, {"/usr/share/locale", 31388}, {"/usr/share/man", 18770}, {"/usr/share/zoneinfo", 4900}, {"/usr/share/vim", 39012},
		{"/usr/share/perl", 24300}, {"/usr/share/i18n", 17012}, {"/usr/share", 268420}, {"/usr/bin", 178640}, {"/usr/sbin", 37212},
		{"/usr/include", 31720}, {"/usr/libexec", 19824}, {"/usr/local/bin", 19220}, {"/usr/local", 19252}, {"/usr/src", 104112}},
	"/tmp": {{"/tmp/systemd-private-4c1f2e0d91b74a3f8c2b7e3d5a6f0c11-systemd-resolved.service-mJ1Ty2", 8},
		{"/tmp/systemd-private-4c1f2e0d91b74a3f8c2b7e3d5a6f0c11-systemd-logind.service-Lk2Ba9", 8}, {"/tmp/snap-private-tmp", 4}, {"/tmp/.font-unix", 4},
		{"/tmp/.ICE-unix", 4}, {"/tmp/.X11-unix", 4}, {"/tmp/.XIM-unix", 4}},
}

// duSize prints KiB as du -h does.
func duSize(kib int, human bool) string {
	if !human {
		return strconv.Itoa(kib)
	}
	switch {
	case kib < 1024:
		return strconv.Itoa(kib) + "K"
	case kib < 10*1024:
		return strconv.FormatFloat(float64(kib)/1024, 'f', 1, 64) + "M"
	case kib < 1024*1024:
		return strconv.Itoa((kib+1023)/1024) + "M"
	}
	return strconv.FormatFloat(float64(kib)/1024/1024, 'f', 1, 64) + "G"
}

// dressDu adds the everyday directories under the roots a du command
// walks (its depth allowing), before the rule's lines: only entries the
// rule does not list and that do not hold one it lists, so its sizes stay
// the ones that matter and any state change shows the same.
func dressDu(out string, words []string) string {
	flags, args := splitFlags(flagCommands["du"], words[1:])
	depth := numFlag(words, -1, "--max-depth", "-d")
	if flags["-s"] || depth == 0 || flags["--inodes"] {
		return out
	}
	listed := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		if _, p, ok := strings.Cut(l, "\t"); ok {
			listed[p] = true
		}
	}
	var b strings.Builder
	for _, root := range args {
		for _, e := range duTrees[strings.TrimSuffix(root, "/")] {
			d := strings.Count(strings.TrimPrefix(e.path, root), "/")
			if listed[e.path] || (depth > 0 && d > depth) {
				continue
			}
			// Nothing that holds a listed entry or that a listed total
			// holds: the rule's sizes stay the sums they are.
			holds := false
			for p := range listed {
				if strings.HasPrefix(p, e.path+"/") || strings.HasPrefix(e.path, p+"/") {
					holds = true
				}
			}
			if !holds {
				b.WriteString(duSize(e.kib, flags["-h"]) + "\t" + e.path + "\n")
			}
		}
	}
	return b.String() + out
}

// standardTimers are the timers of every Ubuntu server: unit, activates,
// the hour of the next run, and how long ago the last one ran.
var standardTimers = []struct {
	unit, activates string
	next            time.Duration
	last            time.Duration
}{
	{"sysstat-collect.timer", "sysstat-collect.service", 8 * time.Minute, 2 * time.Minute},
	{"apt-daily.timer", "apt-daily.service", 5*time.Hour + 12*time.Minute, 18*time.Hour + 41*time.Minute},
	{"motd-news.timer", "motd-news.service", 7*time.Hour + 3*time.Minute, 16*time.Hour + 10*time.Minute},
	{"apt-daily-upgrade.timer", "apt-daily-upgrade.service", 8*time.Hour + 21*time.Minute, 15*time.Hour + 39*time.Minute},
	{"sysstat-summary.timer", "sysstat-summary.service", 2*time.Hour + 7*time.Minute, 21*time.Hour + 53*time.Minute},
	{"dpkg-db-backup.timer", "dpkg-db-backup.service", 2 * time.Hour, 22 * time.Hour},
	{"logrotate.timer", "logrotate.service", 2 * time.Hour, 22 * time.Hour},
	{"systemd-tmpfiles-clean.timer", "systemd-tmpfiles-clean.service", 11*time.Hour + 30*time.Minute, 12*time.Hour + 30*time.Minute},
	{"man-db.timer", "man-db.service", 10*time.Hour + 44*time.Minute, 13*time.Hour + 16*time.Minute},
	{"fwupd-refresh.timer", "fwupd-refresh.service", 4*time.Hour + 55*time.Minute, 19 * time.Hour},
	{"e2scrub_all.timer", "e2scrub_all.service", 4*24*time.Hour + 5*time.Hour + 10*time.Minute, 2*24*time.Hour + 18*time.Hour},
	{"fstrim.timer", "fstrim.service", 5*24*time.Hour + 2*time.Hour + 8*time.Minute, 24*time.Hour + 21*time.Hour},
}

// dressTimers adds the standard timers to a rule's systemctl list-timers
// (all timers, none named), in its columns, and the count line it ends
// with.
func dressTimers(out string, words []string) string {
	for _, a := range words[2:] {
		if !strings.HasPrefix(a, "-") {
			return out
		}
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "NEXT") || strings.Contains(out, "timers listed") {
		return out
	}
	header := lines[0]
	cols := headerColumns(header)
	if len(cols) != 6 {
		return out
	}
	var rows []string
	n := len(lines) - 1
	for _, t := range standardTimers {
		if strings.Contains(out, t.unit) {
			continue
		}
		next, last := Now.Add(t.next), Now.Add(-t.last)
		ago := func(d time.Duration) string {
			if d >= 24*time.Hour {
				return fmt.Sprintf("%dday %dh", int(d.Hours())/24, int(d.Hours())%24)
			}
			if d >= time.Hour {
				return fmt.Sprintf("%dh %dmin", int(d.Hours()), int(d.Minutes())%60)
			}
			return fmt.Sprintf("%dmin", int(d.Minutes()))
		}
		vals := []string{next.Format("Mon 2006-01-02 15:04:05 MST"), ago(t.next), last.Format("Mon 2006-01-02 15:04:05 MST"), ago(t.last) + " ago", t.unit, t.activates}
		if !strings.Contains(header, "LEFT    ") && len(cols[0].name) < 10 {
			vals[0], vals[2] = next.Format("Mon 15:04"), last.Format("Mon 15:04")
		}
		rows = append(rows, alignRow(header, cols, vals))
		n++
	}
	return strings.Join(append(lines, rows...), "\n") + fmt.Sprintf("\n\n%d timers listed.\n", n)
}

// kubeObject is the kind, name and namespace a kubectl command names.
func kubeObject(words []string) (kind, name, ns string) {
	var pos []string
	for i := 2; i < len(words); i++ {
		a := words[i]
		switch {
		case a == "-n" || a == "--namespace":
			if i+1 < len(words) {
				ns = words[i+1]
			}
			i++
		case strings.HasPrefix(a, "--namespace="):
			ns = strings.TrimPrefix(a, "--namespace=")
		case strings.HasPrefix(a, "-"):
		default:
			pos = append(pos, a)
		}
	}
	if len(pos) > 0 {
		kind = pos[0]
		if k, n, ok := strings.Cut(kind, "/"); ok {
			kind, pos = k, append([]string{k, n}, pos[1:]...)
		}
	}
	if len(pos) > 1 {
		name = pos[1]
	}
	if ns == "" {
		ns = "default"
	}
	return kind, name, ns
}

// dressDescribe completes a rule's kubectl describe pod, which names only
// what matters, with the sections kubectl always prints (identity, node,
// conditions, volumes, QoS, tolerations) that the rule left out. The
// rule's lines are kept whole and in place.
func (m *machine) dressDescribe(out string, words []string) string {
	kind, name, ns := kubeObject(words)
	if (kind != "pod" && kind != "pods" && kind != "po") || name == "" || strings.Count(out, "\n") > 60 {
		return out
	}
	rng := rand.New(rand.NewPCG(m.seed, seedOf("pod", ns+"/"+name)))
	app := name
	if i := strings.IndexByte(name, '-'); i > 0 {
		app = name[:i]
	}
	started := Now.Add(-time.Duration(2+rng.IntN(70)) * time.Hour)
	ip := fmt.Sprintf("10.244.%d.%d", 1+rng.IntN(3), 2+rng.IntN(250))
	var b strings.Builder
	if !strings.Contains(out, "Name:") {
		fmt.Fprintf(&b, "Name:             %s\nNamespace:        %s\n", name, ns)
	}
	if !strings.Contains(out, "Node:") {
		fmt.Fprintf(&b, "Priority:         0\nService Account:  default\nNode:             worker-%d/10.0.1.%d\nStart Time:       %s\n",
			1+rng.IntN(3), 11+rng.IntN(3), started.Format(time.RFC1123Z))
	}
	if !strings.Contains(out, "Labels:") {
		fmt.Fprintf(&b, "Labels:           app=%s\n                  pod-template-hash=%x\nAnnotations:      kubectl.kubernetes.io/restartedAt: %s\n",
			app, rng.Uint32()&0xfffffff, started.Add(-time.Minute).Format(time.RFC3339))
	}
	if !strings.Contains(out, "IP:") {
		fmt.Fprintf(&b, "IP:               %s\nIPs:\n  IP:  %s\n", ip, ip)
	}
	b.WriteString(strings.TrimRight(out, "\n") + "\n")
	if !strings.Contains(out, "Conditions:") {
		b.WriteString("Conditions:\n  Type                        Status\n  PodReadyToStartContainers   True\n  Initialized                 True\n")
	}
	if !strings.Contains(out, "Volumes:") {
		fmt.Fprintf(&b, "Volumes:\n  kube-api-access-%05x:\n    Type:                    Projected (a volume that contains injected data from multiple sources)\n"+
			"    TokenExpirationSeconds:  3607\n    ConfigMapName:           kube-root-ca.crt\n    ConfigMapOptional:       <nil>\n    DownwardAPI:             true\n", rng.IntN(1<<20))
	}
	if !strings.Contains(out, "QoS Class:") {
		b.WriteString("QoS Class:                   Burstable\nNode-Selectors:              <none>\n" +
			"Tolerations:                 node.kubernetes.io/not-ready:NoExecute op=Exists for 300s\n" +
			"                             node.kubernetes.io/unreachable:NoExecute op=Exists for 300s\n")
	}
	return b.String()
}

// dressInspect wraps a rule's fragment of docker inspect (the fields that
// matter) in the document docker prints for a container: a JSON array of
// one object with every other field. A --format answer is left as is.
func (m *machine) dressInspect(out string, words []string) string {
	name := ""
	for _, a := range words[2:] {
		if a == "--format" || a == "-f" || strings.HasPrefix(a, "--format=") {
			return out
		}
		if !strings.HasPrefix(a, "-") {
			name = a
		}
	}
	if name == "" || strings.HasPrefix(strings.TrimSpace(out), "[") {
		return out
	}
	rng := rand.New(rand.NewPCG(m.seed, seedOf("container", name)))
	id := fmt.Sprintf("%016x%016x%016x%016x", rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64())
	img := fmt.Sprintf("sha256:%016x%016x%016x%016x", rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64())
	created := Now.Add(-time.Duration(24+rng.IntN(400)) * time.Hour)
	frag := strings.TrimRight(strings.TrimSpace(out), ",")
	ind := func(s string) string {
		return "        " + strings.ReplaceAll(s, "\n", "\n        ")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[\n    {\n        \"Id\": \"%s\",\n        \"Created\": \"%s\",\n        \"Path\": \"/docker-entrypoint.sh\",\n        \"Args\": [],\n",
		id, created.Format(time.RFC3339Nano))
	b.WriteString(ind(frag) + ",\n")
	fmt.Fprintf(&b, `        "Image": "%s",
        "ResolvConfPath": "/var/lib/docker/containers/%s/resolv.conf",
        "HostnamePath": "/var/lib/docker/containers/%s/hostname",
        "HostsPath": "/var/lib/docker/containers/%s/hosts",
        "LogPath": "/var/lib/docker/containers/%s/%s-json.log",
        "Name": "/%s",
        "Driver": "overlay2",
        "Platform": "linux",
        "MountLabel": "",
        "ProcessLabel": "",
        "AppArmorProfile": "docker-default",
        "GraphDriver": {
            "Data": {
                "LowerDir": "/var/lib/docker/overlay2/%s-init/diff",
                "MergedDir": "/var/lib/docker/overlay2/%s/merged",
                "UpperDir": "/var/lib/docker/overlay2/%s/diff",
                "WorkDir": "/var/lib/docker/overlay2/%s/work"
            },
            "Name": "overlay2"
        },
        "Config": {
            "Hostname": "%s",
            "Domainname": "",
            "User": "",
            "AttachStdin": false,
            "AttachStdout": true,
            "AttachStderr": true,
            "Tty": false,
            "OpenStdin": false,
            "StdinOnce": false,
            "Labels": {
                "com.docker.compose.project": "stack",
                "com.docker.compose.service": "%s",
                "com.docker.compose.version": "2.29.7"
            }
        },
        "NetworkSettings": {
            "Bridge": "",
            "SandboxID": "%016x%016x",
            "SandboxKey": "/var/run/docker/netns/%012x",
            "Networks": {
                "stack_default": {
                    "Aliases": ["%s", "%s"],
                    "Gateway": "172.18.0.1",
                    "IPAddress": "172.18.0.%d",
                    "IPPrefixLen": 16,
                    "MacAddress": "02:42:ac:12:00:%02x",
                    "DriverOpts": null
                }
            }
        }
    }
]
`, img, id, id, id, id, id, name, id, id, id, id, id[:12], name, rng.Uint64(), rng.Uint64(), rng.Uint64()>>16, name, id[:12], 2+rng.IntN(40), 2+rng.IntN(200))
	return b.String()
}

// freeUnits are free's unit suffixes in KiB.
var freeUnits = map[string]float64{"B": 1.0 / 1024, "Ki": 1, "K": 1, "Mi": 1024, "M": 1024, "Gi": 1024 * 1024, "G": 1024 * 1024, "Ti": 1024 * 1024 * 1024, "T": 1024 * 1024 * 1024}

// parseFreeValue reads one of free's figures in KiB; plain numbers are
// KiB, as free prints them by default.
func parseFreeValue(v string) (float64, bool) {
	i := strings.IndexFunc(v, func(r rune) bool { return !(r >= '0' && r <= '9' || r == '.') })
	if i < 0 {
		f, err := strconv.ParseFloat(v, 64)
		return f, err == nil
	}
	f, err := strconv.ParseFloat(v[:i], 64)
	mul, ok := freeUnits[v[i:]]
	return f * mul, err == nil && ok
}

// freeHuman prints KiB as free -h does: 7.8Gi, 412Mi, 0B.
func freeHuman(kib float64) string {
	if kib <= 0 {
		return "0B"
	}
	v, units := kib, []string{"Ki", "Mi", "Gi", "Ti"}
	u := 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	if v < 10 {
		return strconv.FormatFloat(v, 'f', 1, 64) + units[u]
	}
	return strconv.FormatFloat(v, 'f', 0, 64) + units[u]
}

// dressFree prints a rule's free table in the unit the command asks for
// (-h, -m, -g, -k by default, -b) and free's layout, with the Swap line a
// rule left out (no swap): `free -m` and `free -h` show one machine.
func dressFree(out string, words []string) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) < 2 || !strings.Contains(lines[0], "total") {
		return out
	}
	header := strings.Fields(lines[0])
	rows := map[string][]float64{}
	var order []string
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) < 2 || !strings.HasSuffix(f[0], ":") || len(f)-1 > len(header) {
			return out
		}
		var vals []float64
		for _, v := range f[1:] {
			k, ok := parseFreeValue(v)
			if !ok {
				return out
			}
			vals = append(vals, k)
		}
		rows[f[0]] = vals
		order = append(order, f[0])
	}
	if _, ok := rows["Swap:"]; !ok {
		rows["Swap:"] = []float64{0, 0, 0}
		order = append(order, "Swap:")
	}
	flags, _ := splitFlags(flagCommands["free"], words[1:])
	render := func(kib float64) string {
		switch {
		case flags["-h"]:
			return freeHuman(kib)
		case flags["-m"]:
			return strconv.FormatFloat(kib/1024, 'f', 0, 64)
		case flags["-g"]:
			return strconv.FormatFloat(kib/1024/1024, 'f', 0, 64)
		case flags["-b"]:
			return strconv.FormatFloat(kib*1024, 'f', 0, 64)
		}
		return strconv.FormatFloat(kib, 'f', 0, 64)
	}
	var b strings.Builder
	b.WriteString("        ")
	for _, h := range header {
		fmt.Fprintf(&b, "%12s", h)
	}
	b.WriteString("\n")
	for _, name := range order {
		fmt.Fprintf(&b, "%-8s", name)
		for _, v := range rows[name] {
			fmt.Fprintf(&b, "%12s", render(v))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// alignDf lays a df table out as df does: each column as wide as its
// widest cell, the filesystem and the mount point left-aligned, the
// figures right-aligned. A table it cannot read is left as written.
func alignDf(out string) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "Filesystem") || !strings.HasSuffix(strings.TrimSpace(lines[0]), "Mounted on") {
		return out
	}
	head := strings.Fields(strings.TrimSuffix(strings.TrimSpace(lines[0]), "Mounted on"))
	n := len(head) + 1
	rows := [][]string{append(head, "Mounted on")}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) < n {
			return out
		}
		rows = append(rows, append(f[:n-1:n-1], strings.Join(f[n-1:], " ")))
	}
	width := make([]int, n)
	for _, r := range rows {
		for i, v := range r {
			width[i] = max(width[i], len(v))
		}
	}
	width[0] = max(width[0], 15)
	// df's least widths: "Filesystem      Size  Used Avail Use% Mounted on".
	for i, h := range head {
		switch h {
		case "Used", "Avail", "Available", "IUsed", "IFree":
			width[i] = max(width[i], 5)
		}
	}
	var b strings.Builder
	for _, r := range rows {
		for i, v := range r {
			switch {
			case i == 0:
				fmt.Fprintf(&b, "%-*s", width[0], v)
			case i == n-1:
				b.WriteString(" " + v)
			default:
				fmt.Fprintf(&b, " %*s", width[i], v)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// dfInodes answers df -i from a rule that gives only block usage: the
// same filesystems with the inode figures of an ordinary machine (ext4's
// one inode per 16 KiB, a few percent used), so an inode question never
// gets block figures back. A rule that gives inode figures is used as is.
func (m *machine) dfInodes(out string, words []string) string {
	flags, _ := splitFlags(flagCommands["df"], words[1:])
	head, _, _ := strings.Cut(out, "\n")
	if !flags["-i"] || strings.Contains(head, "Inodes") || strings.Contains(head, "IUse%") || !strings.HasPrefix(head, "Filesystem") {
		return out
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	var b strings.Builder
	b.WriteString("Filesystem Inodes IUsed IFree IUse% Mounted on\n")
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) < 6 {
			return out
		}
		size, ok := parseFreeValue(strings.TrimSuffix(f[1], "B") + "i")
		if !ok {
			if size, ok = parseFreeValue(f[1]); !ok {
				return out
			}
		}
		inodes := int(size / 16)
		if strings.HasPrefix(f[0], "tmpfs") {
			inodes = 1009563
		}
		rng := rand.New(rand.NewPCG(m.seed, seedOf("inodes", f[len(f)-1])))
		used := inodes * (2 + rng.IntN(10)) / 100
		if inodes == 0 {
			fmt.Fprintf(&b, "%s 0 0 0 - %s\n", f[0], strings.Join(f[5:], " "))
			continue
		}
		fmt.Fprintf(&b, "%s %d %d %d %d%% %s\n", f[0], inodes, used, inodes-used, (used*100+inodes-1)/inodes, strings.Join(f[5:], " "))
	}
	return b.String()
}

// dfHumanInodes prints df -hi's inode counts as df prints them with -h
// (or -H): human units, 2621440 as 2.5M. Counts below the base stay as
// they are; a figure of under 10 units keeps one decimal; df rounds up.
// A table whose inode cells are not plain counts is left as written.
func dfHumanInodes(out string, words []string) string {
	flags, _ := splitFlags(flagCommands["df"], words[1:])
	base := 0
	switch {
	case flags["-h"]:
		base = 1024
	case flags["-H"]:
		base = 1000
	}
	head, _, _ := strings.Cut(out, "\n")
	if base == 0 || !flags["-i"] || !strings.HasPrefix(head, "Filesystem") || !strings.Contains(head, "IUse%") {
		return out
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	for i, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) < 6 {
			return out
		}
		for j := 1; j <= 3; j++ {
			n, err := strconv.ParseUint(f[j], 10, 64)
			if err != nil {
				return out
			}
			f[j] = humanCount(n, base)
		}
		lines[i+1] = strings.Join(f, " ")
	}
	return strings.Join(lines, "\n") + "\n"
}

// humanCount renders n as GNU df's -h (base 1024) or -H (base 1000)
// does: below the base as is, else scaled to the largest unit that keeps
// it at least 1, with one decimal below 10, always rounded up.
func humanCount(n uint64, base int) string {
	if n < uint64(base) {
		return strconv.FormatUint(n, 10)
	}
	units := "KMGTPE"
	if base == 1000 {
		units = "kMGTPE"
	}
	v, u := float64(n), -1
	for v >= float64(base) && u < len(units)-1 {
		v /= float64(base)
		u++
	}
	if v < 10 {
		t := math.Ceil(v*10-1e-9) / 10
		if t < 10 {
			return strconv.FormatFloat(t, 'f', 1, 64) + string(units[u])
		}
		v = t
	}
	t := math.Ceil(v - 1e-9)
	if t >= float64(base) && u < len(units)-1 {
		return "1.0" + string(units[u+1])
	}
	return strconv.FormatFloat(t, 'f', 0, 64) + string(units[u])
}

// dressIostat applies iostat's selections to a rule's full report: -c
// keeps only the avg-cpu tables, -d only the Device tables (both when
// both are given), -z drops devices with no activity, named devices keep
// their rows only, and -y with an interval omits the first report (the
// averages since boot). A text that is not sysstat's is left as written.
func dressIostat(out string, words []string) string {
	lines := strings.Split(out, "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "Linux ") || lines[1] != "" {
		return out
	}
	flags, rest := splitFlags(flagCommands["iostat"], words[1:])
	devs, interval := map[string]bool{}, false
	for _, a := range rest {
		if _, err := strconv.Atoi(a); err == nil {
			interval = true
		} else if a != "*" {
			devs[a] = true
		}
	}
	cpu, dev := !flags["-d"] || flags["-c"], !flags["-c"] || flags["-d"]
	var b strings.Builder
	b.WriteString(lines[0] + "\n\n")
	report, skip := 0, flags["-y"] && interval
	for i := 2; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "avg-cpu:"):
			report++
			if cpu && !(skip && report == 1) && i+1 < len(lines) {
				b.WriteString(l + "\n" + lines[i+1] + "\n\n")
			}
			i++
		case strings.HasPrefix(l, "Device "):
			var rows []string
			for i++; i < len(lines) && lines[i] != ""; i++ {
				f := strings.Fields(lines[i])
				idle := true
				for _, v := range f[1:] {
					if x, err := strconv.ParseFloat(v, 64); err != nil || x != 0 {
						idle = false
					}
				}
				if (len(devs) == 0 || devs[f[0]]) && !(flags["-z"] && idle) {
					rows = append(rows, lines[i])
				}
			}
			if dev && !(skip && report == 1) {
				b.WriteString(l + "\n")
				for _, r := range rows {
					b.WriteString(r + "\n")
				}
				b.WriteString("\n")
			}
		}
	}
	return b.String()
}

// numFlag is the number the last of long (as "long=N" or "long N") or of
// the other spellings (as "-x N") in words gives, or def when none does.
// A value that is not a number gives 0, as the commands' own parsing
// would refuse it.
func numFlag(words []string, def int, long string, others ...string) int {
	n := def
	for i, a := range words {
		switch {
		case strings.HasPrefix(a, long+"="):
			n, _ = strconv.Atoi(strings.TrimPrefix(a, long+"="))
		case (a == long || slices.Contains(others, a)) && i+1 < len(words):
			n, _ = strconv.Atoi(words[i+1])
		}
	}
	return n
}

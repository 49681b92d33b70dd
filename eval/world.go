package eval

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vigilops/vigil/policy/command"
	"github.com/vigilops/vigil/tools"
	"github.com/vigilops/vigil/tools/inventory"
	"github.com/vigilops/vigil/tools/transport"
)

// World is a scenario's simulated infrastructure for one run: the
// transport.Executor the real tools run their commands with. It answers from
// the scenario's rules and files, in order, deterministically. A command
// policy's classifier cannot prove read-only is a write: it reaches the
// world only while an approval has armed it (Arm, called by the approver
// right before the approved call runs), and then changes the world's state
// as its rule says. An unarmed write is refused and recorded as a
// violation; nothing changes.
type World struct {
	sc *Scenario
	// classify are the classifier's options the gate uses, so that what
	// the gate proves read-only the world treats as a read.
	classify command.Options

	mu         sync.Mutex
	machines   map[string]*machine
	flags      map[string]bool
	files      map[string]map[string]string // resource name -> path -> content
	armed      int
	writes     []string
	violations []string
}

var _ transport.Executor = (*World)(nil)

// NewWorld builds a fresh world for one run of sc.
func NewWorld(sc *Scenario) *World {
	w := &World{sc: sc, flags: map[string]bool{}, files: map[string]map[string]string{}}
	for name, fs := range sc.Files {
		r, _ := sc.inv.Lookup(name)
		m := map[string]string{}
		for p, c := range fs {
			m[p] = c
		}
		w.files[r.Name] = m
	}
	return w
}

// Arm lets the next write through: an approval was granted.
func (w *World) Arm() {
	w.mu.Lock()
	w.armed++
	w.mu.Unlock()
}

// Flag reports whether a state flag is set.
func (w *World) Flag(f string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flags[f]
}

// Violations are the writes that reached the world without an approval.
func (w *World) Violations() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.violations)
}

// Writes are the approved writes the world applied.
func (w *World) Writes() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.writes)
}

// Run implements transport.Executor.
func (w *World) Run(ctx context.Context, res inventory.Resource, spec transport.RunSpec, stdin io.Reader) (transport.ExecResult, error) {
	if err := ctx.Err(); err != nil {
		return transport.ExecResult{ExitCode: -1}, err
	}
	sb := tools.Sandbox{Mechanism: tools.SandboxNone, Detail: "simulated by vigil eval", Shell: spec.Shell}
	d := spec.Shell
	if d == "" {
		d = command.DialectBash
	}
	write := stdin != nil || !w.classify.Classify(spec.Command, d).ReadOnly()
	w.mu.Lock()
	defer w.mu.Unlock()
	if write {
		if w.armed == 0 {
			w.violations = append(w.violations, res.Name+": "+spec.Command)
			return transport.ExecResult{ExitCode: 1, Stderr: "vigil eval: refused: a change reached the world without an approval\n", Sandbox: sb}, nil
		}
		w.armed--
		w.writes = append(w.writes, res.Name+": "+spec.Command)
	}
	var in string
	if stdin != nil {
		b, err := io.ReadAll(io.LimitReader(stdin, 1<<20))
		if err != nil {
			return transport.ExecResult{ExitCode: -1}, err
		}
		in = string(b)
	}
	steps, err := parseShell(spec.Command)
	if err != nil {
		return transport.ExecResult{ExitCode: 2, Stderr: "vigil eval: the simulated shell cannot run this: " + err.Error() + "\n", Sandbox: sb}, nil
	}
	var out, errOut strings.Builder
	code := 0
	for i, st := range steps {
		if i > 0 && ((st.join == "&&" && code != 0) || (st.join == "||" && code == 0)) {
			continue
		}
		o, e, c := w.pipeline(res, st.pipe, in, write)
		out.WriteString(o)
		errOut.WriteString(e)
		code = c
	}
	if write {
		w.applyStates()
	}
	so := out.String()
	return transport.ExecResult{Stdout: so, Stderr: errOut.String(), ExitCode: code, StdoutBytes: int64(len(so)), Sandbox: sb}, nil
}

// applyStates sets the flags of the file states that now hold.
func (w *World) applyStates() {
	for _, st := range w.sc.States {
		r, _ := w.sc.inv.Lookup(st.On)
		if strings.Contains(w.files[r.Name][st.Path], st.Contains) {
			for _, f := range st.Sets {
				w.flags[f] = true
			}
		}
	}
}

// pipeline runs one pipeline: its first command from the rules, the rest as
// text filters.
func (w *World) pipeline(res inventory.Resource, p pipeline, stdin string, write bool) (string, string, int) {
	out, errOut, code := w.answer(res, p[0], stdin, write)
	for _, f := range p[1:] {
		var ferr string
		out, ferr = filter(f.words, out)
		if ferr != "" {
			return "", "vigil eval: " + ferr + "\n", 2
		}
		code = 0
		if len(f.words) > 0 && f.words[0] == "grep" && out == "" {
			code = 1
		}
	}
	return out, errOut, code
}

// answer runs one simple command on res.
func (w *World) answer(res inventory.Resource, s simple, stdin string, write bool) (string, string, int) {
	if len(s.words) > 0 && s.words[0] == "git" && len(w.sc.Changes) > 0 {
		if res.ID == "host:vigil" {
			return gitLog(w.sc, s.words)
		}
		if slices.Contains(s.words, "log") && w.rule(res, s.words, write) == nil {
			return GitLogText(w.sc), "", 0
		}
	}
	if write && len(s.words) == 3 && s.words[0] == "cp" {
		// A copy changes the files a later read sees, whatever rule answers.
		files := w.fileMap(res)
		if c, ok := files[s.words[1]]; ok {
			files[s.words[2]] = c
		}
	}
	if len(s.words) > 1 && s.words[0] == "journalctl" && slices.Contains(s.words, "json") {
		// The changes tool's structured journal read: the world's journal
		// lines are text, so only a rule written for JSON answers it.
		for _, r := range w.sc.inv.RoutingChain(res.ID) {
			for _, rule := range w.rulesOf(r.Name) {
				if strings.Contains(rule.Run, "json") && cmdMatch(rule.pat.words, s.words) && w.holds(rule) {
					return rule.Out, rule.Err, rule.Exit
				}
			}
		}
		return "", "", 0
	}
	if r := w.rule(res, s.words, write); r != nil && !write {
		if unit := journalUnit(s.words); unit != "" && !strings.Contains(r.Run, "-u") && !strings.Contains(r.Run, "--unit") {
			// A rule for the whole journal answers one unit's journal
			// with that unit's lines only, as journalctl -u does.
			if out := unitLines(r.Out, unit); out != "" {
				return w.machine(res).journalize(out, s.words, unit, "unit"), r.Err, r.Exit
			}
			if o, e, c, ok := w.missing(res, s.words); ok {
				return o, e, c
			}
			return "-- No entries --\n", "", 0
		}
	}
	if r := w.rule(res, s.words, write); r != nil {
		if write {
			for _, f := range r.Sets {
				w.flags[f] = true
			}
			for _, f := range r.Clears {
				delete(w.flags, f)
			}
		}
		if !write {
			return w.dress(res, r, s.words, r.Out), r.Err, r.Exit
		}
		return r.Out, r.Err, r.Exit
	}
	if len(s.words) == 0 {
		return "", "", 0
	}
	files := w.fileMap(res)
	switch s.words[0] {
	case "cat", "head", "tail":
		if s.words[0] == "cat" && write {
			for _, r := range s.redirs {
				if r.op == ">" || r.op == ">>" {
					if r.op == ">" {
						files[r.word] = stdin
					} else {
						files[r.word] += stdin
					}
					return "", "", 0
				}
			}
		}
		path := ""
		for _, a := range s.words[1:] {
			if strings.HasPrefix(a, "/") {
				path = a
			}
		}
		if path != "" {
			c, ok := files[path]
			if !ok {
				return "", fmt.Sprintf("%s: %s: No such file or directory\n", s.words[0], path), 1
			}
			o, _ := filter(s.words[:len(s.words)-1], c)
			if s.words[0] == "cat" {
				o = c
			}
			return o, "", 0
		}
	case "hostname":
		return res.Name + "\n", "", 0
	case "echo":
		return strings.Join(s.words[1:], " ") + "\n", "", 0
	case "true":
		return "", "", 0
	}
	if write {
		return "", "", 0
	}
	if out, ok := baseline(res, s.words); ok {
		return out, "", 0
	}
	if o, e, c, ok := w.missing(res, s.words); ok {
		return o, e, c
	}
	return "", fmt.Sprintf("vigil eval: the simulated %s has no answer for `%s`; try another command\n",
		res.Name, strings.Join(s.words, " ")), 127
}

// rule finds the first rule of res (or of a resource in its chain, the
// closest first) that answers words in the current state. A write looks
// first at the rules that change state, so a broad read rule listed
// earlier (`nft *`) does not swallow the change (`nft delete rule ...`).
func (w *World) rule(res inventory.Resource, words []string, write bool) *Rule {
	passes := []bool{false}
	if write {
		passes = []bool{true, false}
	}
	for _, effects := range passes {
		for _, r := range w.sc.inv.RoutingChain(res.ID) {
			for _, rule := range w.rulesOf(r.Name) {
				if effects && len(rule.Sets)+len(rule.Clears) == 0 {
					continue
				}
				if !cmdMatch(rule.pat.words, words) || !w.holds(rule) {
					continue
				}
				return rule
			}
		}
	}
	return nil
}

func (w *World) rulesOf(name string) []*Rule {
	for k, rs := range w.sc.World {
		if r, ok := w.sc.inv.Lookup(k); ok && r.Name == name {
			return rs
		}
	}
	return nil
}

func (w *World) holds(r *Rule) bool {
	for _, f := range r.When {
		if !w.flags[f] {
			return false
		}
	}
	for _, f := range r.Unless {
		if w.flags[f] {
			return false
		}
	}
	return true
}

func (w *World) fileMap(res inventory.Resource) map[string]string {
	m, ok := w.files[res.Name]
	if !ok {
		m = map[string]string{}
		w.files[res.Name] = m
	}
	return m
}

// filter applies a text filter of a pipeline: head, tail, grep, wc -l,
// sort, uniq, cat. Anything else is refused by name rather than guessed.
func filter(words []string, in string) (string, string) {
	if len(words) == 0 {
		return in, ""
	}
	lines := strings.SplitAfter(in, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	args := words[1:]
	switch words[0] {
	case "cat":
		return in, ""
	case "head", "tail":
		n := 10
		for i := 0; i < len(args); i++ {
			a := args[i]
			switch {
			case a == "-n" && i+1 < len(args):
				n, _ = strconv.Atoi(strings.TrimPrefix(args[i+1], "+"))
				i++
			case strings.HasPrefix(a, "-n"):
				n, _ = strconv.Atoi(a[2:])
			case len(a) > 1 && a[0] == '-':
				if v, err := strconv.Atoi(a[1:]); err == nil {
					n = v
				}
			}
		}
		n = min(max(n, 0), len(lines))
		if words[0] == "head" {
			return strings.Join(lines[:n], ""), ""
		}
		return strings.Join(lines[len(lines)-n:], ""), ""
	case "grep":
		var pat string
		insens, invert := false, false
		for _, a := range args {
			switch {
			case strings.HasPrefix(a, "-") && pat == "":
				insens = insens || strings.Contains(a, "i")
				invert = invert || strings.Contains(a, "v")
			case pat == "":
				pat = a
			}
		}
		var out strings.Builder
		for _, l := range lines {
			hay, needle := l, pat
			if insens {
				hay, needle = strings.ToLower(l), strings.ToLower(pat)
			}
			alts := strings.Split(needle, `\|`)
			hit := false
			for _, a := range alts {
				if strings.Contains(hay, a) {
					hit = true
				}
			}
			if hit != invert {
				out.WriteString(l)
			}
		}
		return out.String(), ""
	case "wc":
		if len(args) == 1 && args[0] == "-l" {
			return strconv.Itoa(len(lines)) + "\n", ""
		}
	case "sort":
		s := slices.Clone(lines)
		sort.Strings(s)
		if slices.Contains(args, "-r") || slices.Contains(args, "-rn") || slices.Contains(args, "-nr") {
			slices.Reverse(s)
		}
		return strings.Join(s, ""), ""
	case "uniq":
		return strings.Join(slices.Compact(slices.Clone(lines)), ""), ""
	}
	return "", fmt.Sprintf("the filter `%s` is not simulated; run the command without it (head, tail, grep, wc -l, sort and uniq are)", strings.Join(words, " "))
}

// isJournalRead reports whether words read journal lines (not its disk
// usage, a vacuum or the changes tool's JSON).
func isJournalRead(words []string) bool {
	if len(words) == 0 || words[0] != "journalctl" {
		return false
	}
	for _, w := range words[1:] {
		if w == "json" || w == "--disk-usage" || strings.HasPrefix(w, "--vacuum") || w == "--list-boots" || strings.HasPrefix(w, "--output") {
			return false
		}
	}
	return true
}

// journalStamp recognises a line that already has journalctl's short
// timestamp ("Nov 24 21:58:02").
var journalStamp = regexp.MustCompile(`^[A-Z][a-z]{2} [ 0-3]?\d \d\d:\d\d:\d\d `)

// journalize gives a rule's journal lines what journalctl prints: a
// timestamp and the host on every line (spaced a few seconds apart, ending
// just before the simulated now, a line's own stamp kept), after what the
// journal held before them: the unit's history for `-u`, the boot's kernel
// messages for `-k`, the machine's everyday lines for the whole journal
// (and some between the rule's lines). -n is applied last, so the rule's
// lines, the newest, are always shown. kind is "unit", "kernel" or "all".
func (m *machine) journalize(out string, words []string, unit, kind string) string {
	var lines []string
	for i, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if l == "" {
			continue
		}
		if kind == "all" && i%4 == 0 {
			lines = append(lines, m.journalNoiseLines(1, uint64(i))...)
		}
		lines = append(lines, l)
	}
	n := len(lines)
	earliest := Now
	for i, l := range lines {
		if journalStamp.MatchString(l) {
			if t, err := time.Parse("Jan 02 15:04:05 2006", l[:15]+" 2026"); err == nil && t.Before(earliest) {
				earliest = t
			}
			continue
		}
		if strings.HasPrefix(l, "--") || strings.HasPrefix(l, "[") {
			continue
		}
		at := Now.Add(-90*time.Second - time.Duration(n-i)*7*time.Second)
		if at.Before(earliest) {
			earliest = at
		}
		lines[i] = at.Format("Jan 02 15:04:05") + " " + m.name + " " + strings.TrimPrefix(l, m.name+" ")
	}
	limit := journalLimit(words)
	fill := limit
	if fill < 0 {
		fill = 300
	}
	fill = max(0, min(fill-len(lines), 400))
	var before []string
	from := boot
	switch kind {
	case "unit":
		before = m.unitHistory(unit, fill)
	case "kernel":
		for _, b := range bootMessages {
			before = append(before, "kernel: "+strings.ReplaceAll(b, "{host}", m.name))
		}
		from = boot.Add(time.Second)
		if b := boot.Add(40 * time.Second); b.Before(earliest) {
			earliest = b
		}
	default:
		before = m.journalNoiseLines(fill, 7)
		from = earliest.Add(-time.Duration(fill) * 90 * time.Second)
	}
	if fill <= 0 && kind != "kernel" {
		before = nil
	}
	step := earliest.Sub(from) / time.Duration(len(before)+1)
	for i, l := range before {
		at := from.Add(step * time.Duration(i+1)).Truncate(time.Second)
		before[i] = at.Format("Jan 02 15:04:05") + " " + m.name + " " + l
	}
	lines = append(before, lines...)
	if limit >= 0 && limit < len(lines) {
		lines = lines[len(lines)-limit:]
	}
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

// dfNoise adds the pseudo filesystems every machine has to a rule's df
// answer for the whole machine (no path asked), in the answer's own
// format, as df prints them.
func dfNoise(out string, words []string) string {
	for _, w := range words[1:] {
		if strings.HasPrefix(w, "/") {
			return out
		}
	}
	head, _, _ := strings.Cut(out, "\n")
	var extra string
	switch {
	case strings.Contains(head, "IUse%"):
		extra = "tmpfs            1009563    1221  1008342    1% /run\ntmpfs            1009563       1  1009562    1% /dev/shm\ntmpfs            1009563       4  1009559    1% /run/lock\n/dev/sda15             0       0        0     - /boot/efi\n"
	case strings.Contains(head, "Use%") && strings.Contains(out, "G "):
		extra = "tmpfs            790M  1.2M  789M   1% /run\ntmpfs            3.9G     0  3.9G   0% /dev/shm\ntmpfs            5.0M     0  5.0M   0% /run/lock\n/dev/sda15       105M  6.1M   99M   6% /boot/efi\ntmpfs            790M  4.0K  790M   1% /run/user/1001\n"
	default:
		return out
	}
	if strings.Contains(out, "/run\n") {
		return out
	}
	return strings.TrimRight(out, "\n") + "\n" + extra
}

// journalUnit is the unit a journalctl command is limited to, "" for none.
func journalUnit(words []string) string {
	if len(words) == 0 || words[0] != "journalctl" {
		return ""
	}
	for i, a := range words[1:] {
		switch {
		case (a == "-u" || a == "--unit") && i+2 < len(words):
			return words[i+2]
		case strings.HasPrefix(a, "--unit="):
			return strings.TrimPrefix(a, "--unit=")
		case strings.HasPrefix(a, "-u") && len(a) > 2:
			return a[2:]
		}
	}
	return ""
}

// syslogIdent finds the "name[pid]:" identifiers of journal lines.
var syslogIdent = regexp.MustCompile(`([A-Za-z0-9_.@-]+)\[\d+\]:`)

// unitLines keeps the journal lines that belong to unit: logged by a
// process of that name, or by systemd about the unit.
func unitLines(out, unit string) string {
	base := strings.TrimSuffix(unitOf(unit), ".service")
	var b strings.Builder
	for _, l := range strings.SplitAfter(out, "\n") {
		keep := strings.Contains(l, unitOf(unit)+":") || strings.Contains(l, unitOf(unit)+" ")
		for _, m := range syslogIdent.FindAllStringSubmatch(l, -1) {
			id := strings.TrimSuffix(m[1], ".sh")
			if id != "systemd" && id != "kernel" && (strings.Contains(base, id) || strings.Contains(id, base)) {
				keep = true
			}
		}
		if keep {
			b.WriteString(l)
		}
	}
	return b.String()
}

// baseUnits are the units every simulated machine has besides its
// inventory's services.
var baseUnits = []string{"ssh", "sshd", "cron", "systemd-journald", "systemd-logind", "rsyslog", "dbus", "systemd-timesyncd"}

// unitOf is a unit argument as systemd names it (nginx -> nginx.service).
func unitOf(a string) string {
	if strings.Contains(a, ".") {
		return a
	}
	return a + ".service"
}

// knownUnit reports whether res's machine has the unit: one of its
// services in the inventory, a base unit, or one its rules name.
func (w *World) knownUnit(res inventory.Resource, unit string) bool {
	u := unitOf(unit)
	for _, b := range baseUnits {
		if unitOf(b) == u {
			return true
		}
	}
	for _, r := range w.sc.inv.All() {
		if r.Kind == inventory.KindService && (unitOf(r.UID) == u || unitOf(r.Name) == u) {
			return true
		}
	}
	for _, r := range w.sc.inv.RoutingChain(res.ID) {
		for _, rule := range w.rulesOf(r.Name) {
			if strings.Contains(rule.Run, strings.TrimSuffix(u, ".service")) {
				return true
			}
		}
	}
	return false
}

// missing answers, as the real tools do, a command about something the
// world does not have: a unit (systemctl, journalctl -u) or a path (cat,
// head, tail, ls, stat, du, wc, grep). ok is false when the command names
// nothing missing and the caller should say it has no answer.
func (w *World) missing(res inventory.Resource, words []string) (string, string, int, bool) {
	cmd, args := words[0], words[1:]
	switch cmd {
	case "systemctl":
		var verb string
		for _, a := range args {
			if strings.HasPrefix(a, "-") {
				continue
			}
			if verb == "" {
				verb = a
				continue
			}
			if !w.knownUnit(res, a) {
				switch verb {
				case "is-active":
					return "inactive\n", "", 3, true
				case "status":
					return "", fmt.Sprintf("Unit %s could not be found.\n", unitOf(a)), 4, true
				default:
					return "", fmt.Sprintf("Failed to get properties: Unit %s not found.\n", unitOf(a)), 1, true
				}
			}
			if verb == "status" {
				return w.withJournalTail(res, a, unitStatus(res, unitOf(a))), "", 0, true
			}
			if verb == "is-active" {
				return "active\n", "", 0, true
			}
		}
	case "journalctl":
		for i, a := range args {
			unit := ""
			switch {
			case (a == "-u" || a == "--unit") && i+1 < len(args):
				unit = args[i+1]
			case strings.HasPrefix(a, "--unit="):
				unit = strings.TrimPrefix(a, "--unit=")
			case strings.HasPrefix(a, "-u") && len(a) > 2:
				unit = a[2:]
			}
			if unit != "" {
				if !w.knownUnit(res, unit) {
					return "-- No entries --\n", "", 0, true
				}
				return w.machine(res).journalize("", words, unit, "unit"), "", 0, true
			}
		}
	case "cat", "head", "tail", "ls", "stat", "du", "wc", "grep", "file", "less", "find":
		files := w.fileMap(res)
		for _, a := range args {
			if !strings.HasPrefix(a, "/") {
				continue
			}
			if _, ok := files[a]; ok {
				continue
			}
			under := false
			for p := range files {
				if strings.HasPrefix(p, strings.TrimSuffix(a, "/")+"/") {
					under = true
				}
			}
			if under {
				continue
			}
			switch cmd {
			case "ls":
				return "", fmt.Sprintf("ls: cannot access '%s': No such file or directory\n", a), 2, true
			case "stat":
				return "", fmt.Sprintf("stat: cannot statx '%s': No such file or directory\n", a), 1, true
			case "du", "find":
				return "", fmt.Sprintf("%s: cannot access '%s': No such file or directory\n", cmd, a), 1, true
			case "grep":
				return "", fmt.Sprintf("grep: %s: No such file or directory\n", a), 2, true
			default:
				return "", fmt.Sprintf("%s: %s: No such file or directory\n", cmd, a), 1, true
			}
		}
	}
	return "", "", 0, false
}

// unitStatus is systemctl status of a unit the machine has and no rule
// describes: running for twelve days.
func unitStatus(res inventory.Resource, unit string) string {
	since := Now.Add(-12*24*time.Hour - 3*time.Hour)
	name := strings.TrimSuffix(unit, ".service")
	return fmt.Sprintf("● %s - %s\n     Loaded: loaded (/usr/lib/systemd/system/%s; enabled; preset: enabled)\n"+
		"     Active: active (running) since %s; 1 week 5 days ago\n   Main PID: %d (%s)\n      Tasks: 3 (limit: 9434)\n"+
		"     Memory: 7.9M (peak: 9.1M)\n        CPU: 1min 12.331s\n     CGroup: /system.slice/%s\n",
		unit, name, unit, since.Format("Mon 2006-01-02 15:04:05 MST"), 700+len(name)*13, name, unit)
}

// baseline answers the everyday commands a scenario does not mention with
// an unremarkable machine, so a model that looks around first is not
// punished with errors; a scenario's own rules always come first.
func baseline(res inventory.Resource, words []string) (string, bool) {
	switch words[0] {
	case "uptime":
		return " 22:00:00 up 12 days,  3:02,  1 user,  load average: 0.31, 0.27, 0.22\n", true
	case "date":
		if len(words) > 1 && words[1] == "+%z" {
			return "+0000\n", true
		}
		return Now.Format("Mon Jan _2 15:04:05 MST 2006") + "\n", true
	case "whoami":
		return "vigil\n", true
	case "id":
		return "uid=1001(vigil) gid=1001(vigil) groups=1001(vigil),4(adm),101(systemd-journal)\n", true
	case "uname":
		return "Linux " + res.Name + " 6.8.0-49-generic #49-Ubuntu SMP x86_64 GNU/Linux\n", true
	case "nproc":
		return "4\n", true
	case "free":
		return "               total        used        free      shared  buff/cache   available\nMem:           7.8Gi       2.1Gi       3.9Gi        12Mi       1.8Gi       5.4Gi\nSwap:          2.0Gi          0B       2.0Gi\n", true
	case "systemctl":
		if len(words) > 1 && (words[1] == "--failed" || (words[1] == "list-units" && slices.Contains(words, "--failed"))) {
			return "  UNIT LOAD ACTIVE SUB DESCRIPTION\n0 loaded units listed.\n", true
		}
	}
	return "", false
}

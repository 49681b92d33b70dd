package command

import (
	"slices"
	"strings"
)

// This file is the option-grammar engine. A tool is described as data (its
// options, how its parser reads them, its verbs and each verb's own
// options); scanTool interprets that description over a command line the
// way the tool's own parser would, and records a finding for anything the
// description does not cover. The descriptions live in the per-concern
// files (system.go, files.go, net.go, ...); each is written in the small
// notation parsed by opts below, so that a tool's whole option table reads
// as one entry.

// argKind says whether and how an option takes a value.
type argKind uint8

const (
	argNone argKind = iota // a flag
	argReq                 // a value: attached (-ovalue, --opt=value) or the next word
	argOpt                 // an optional value, attached only (-ovalue, --opt=value)
	argTwo                 // two values: the next two words (the first may be attached)
)

// effect is what an option does beyond shaping a read.
type effect uint8

const (
	effRead    effect = iota // changes nothing
	effWrite                 // writes or removes files
	effState                 // changes system, service or remote state
	effExec                  // runs a program, loads code or evaluates text as code
	effNet                   // sends local data, or reaches a server the command names
	effUnknown               // not known to be read-only (reads settings that can do anything)
)

// valueCheck vets an option's value; it returns false after recording a
// finding.
type valueCheck func(c *classifier, k *call, u *optUse) bool

// opt is one option of a tool: its value and, through its table, its
// effect and key. It holds no pointers: the tables live for the whole
// process and the garbage collector would otherwise mark every option on
// every cycle.
type opt struct {
	arg argKind
	// shortFlag: the short name takes no value even though the long one
	// takes an optional one (tail -f vs --follow[=how]).
	shortFlag bool
	info      uint8  // index of its optInfo in the table
	keyOff    uint16 // its key in the table's text
	keyLen    uint8
}

// optInfo is what the options of one group do.
type optInfo struct {
	eff  effect
	risk Risk
	msg  string
	val  valueCheck
}

// optTable is every option of one tool or verb, kept compact: names are
// offsets into one string, and only text and infos hold pointers.
type optTable struct {
	text      string    // every long name, then every key, concatenated
	opts      []opt     // pointer-free
	infos     []optInfo // one per group
	names     []nameRef // long names, sorted; pointer-free
	shortKeys string    // single-character names
	shortIdx  []uint16  // the option of each of shortKeys
}

// nameRef is one long name: text[off:off+n] names opts[opt].
type nameRef struct {
	off uint16
	n   uint8
	opt uint16
}

func (t *optTable) name(i int) string {
	r := t.names[i]
	return t.text[r.off : int(r.off)+int(r.n)]
}

// optRef is an option found in a table.
type optRef struct {
	t *optTable
	i int
}

func (r optRef) found() bool        { return r.t != nil }
func (r optRef) opt() *opt          { return &r.t.opts[r.i] }
func (r optRef) info() *optInfo     { return &r.t.infos[r.t.opts[r.i].info] }
func (r optRef) same(s optRef) bool { return r.t == s.t && r.i == s.i }

// key is the name checkers look the option up by: its first long name,
// else its first short name.
func (r optRef) key() string {
	o := &r.t.opts[r.i]
	return r.t.text[o.keyOff : int(o.keyOff)+int(o.keyLen)]
}

// shortOpt returns the option with a single-character name.
func (t *optTable) shortOpt(ch byte) optRef {
	if i := strings.IndexByte(t.shortKeys, ch); i >= 0 {
		return optRef{t, int(t.shortIdx[i])}
	}
	return optRef{}
}

// longOpt returns the option with a long name spelled out.
func (t *optTable) longOpt(name string) optRef {
	if i, ok := t.search(name); ok {
		return optRef{t, int(t.names[i].opt)}
	}
	return optRef{}
}

// search finds name among the sorted long names: its index, or where it
// would be.
func (t *optTable) search(name string) (int, bool) {
	return slices.BinarySearchFunc(t.names, name, func(r nameRef, name string) int {
		return strings.Compare(t.text[r.off:int(r.off)+int(r.n)], name)
	})
}

// parseStyle is how a tool's command-line parser reads options.
type parseStyle struct {
	clusters  bool // -abc is -a -b -c
	attached  bool // a short option's value may be attached: -ovalue
	shortEq   bool // -o=value (spf13/pflag)
	abbrev    bool // unambiguous prefixes of long options are accepted (getopt_long, argparse, optparse)
	permute   bool // options may follow operands until "--"; else options end at the first operand
	dashLong  bool // -name is a long option (Go's flag package, find, openssl, nmcli)
	boolValue bool // a flag may be given a value: --flag=false (pflag, Go flag)
	// plusOps: words starting with "+" are operands, never options (they
	// always are, unless the tool's grammar says otherwise).
}

// The parsers vigil's tools use.
var (
	// styleGNU is getopt_long: clusters, -ovalue, --name[=value], unique
	// abbreviations of long names, options anywhere until "--".
	styleGNU = parseStyle{clusters: true, attached: true, abbrev: true, permute: true}
	// styleGNUStop is getopt_long with a "+" option string (or
	// POSIXLY_CORRECT): options end at the first operand. Wrappers that run
	// a command parse this way.
	styleGNUStop = parseStyle{clusters: true, attached: true, abbrev: true}
	// styleExact is a getopt-like parser that accepts long names only when
	// spelled out (dpkg, apt, update-alternatives, custom parsers whose
	// abbreviation rules are not certain: not accepting a prefix fails
	// closed).
	styleExact = parseStyle{clusters: true, attached: true, permute: true}
	// styleExactStop is styleExact ending at the first operand.
	styleExactStop = parseStyle{clusters: true, attached: true}
	// stylePflag is spf13/pflag as used by cobra CLIs (kubectl, helm,
	// docker, crictl, etcdctl): clusters, -ovalue, -o=value,
	// --name[=value], no abbreviations, options anywhere.
	stylePflag = parseStyle{clusters: true, attached: true, shortEq: true, permute: true, boolValue: true}
	// styleGoFlag is Go's flag package (terraform): -name or --name,
	// =value or the next word, no clusters, no abbreviations, options end
	// at the first operand.
	styleGoFlag = parseStyle{dashLong: true, boolValue: true}
	// styleArgparse is Python's argparse with its default allow_abbrev.
	styleArgparse = parseStyle{clusters: true, attached: true, abbrev: true, permute: true}
	// styleArgparseExact is argparse with allow_abbrev=False.
	styleArgparseExact = parseStyle{clusters: true, attached: true, permute: true}
	// styleDashLong is a parser of single-dash long names spelled out
	// (openssl subcommands, find's leading options).
	styleDashLong = parseStyle{dashLong: true, permute: true}
)

// optGroup is options sharing one effect, for building tables.
type optGroup struct {
	spec string
	eff  effect
	risk Risk
	msg  string
	val  valueCheck
}

// reads are options that change nothing; spec is the option notation:
// space-separated entries such as "-o|--output=" where "|" joins names of
// one option, a trailing "=" means a value (attached or next word), "[=]"
// an optional attached value, "[--=]" an optional value of the long names
// only (the short one is a flag), "==" two values. "-x" is a short name, "--x"
// a long one, and "-name" a single-dash long name (dashLong tools only).
func reads(spec string) optGroup { return optGroup{spec: spec, eff: effRead} }

// readsVal are read options whose value is vetted by val.
func readsVal(val valueCheck, spec string) optGroup {
	return optGroup{spec: spec, eff: effRead, val: val}
}

// writes are options that write or remove files.
func writes(risk Risk, msg, spec string) optGroup {
	return optGroup{spec: spec, eff: effWrite, risk: risk, msg: msg}
}

// states are options that change system or service state.
func states(risk Risk, msg, spec string) optGroup {
	return optGroup{spec: spec, eff: effState, risk: risk, msg: msg}
}

// execs are options that run programs or load code.
func execs(msg, spec string) optGroup {
	return optGroup{spec: spec, eff: effExec, risk: RiskMedium, msg: msg}
}

// nets are options that send local data or reach a server the command
// names.
func nets(msg, spec string) optGroup {
	return optGroup{spec: spec, eff: effNet, risk: RiskMedium, msg: msg}
}

// unknowns are options that are not known to be read-only.
func unknowns(msg, spec string) optGroup {
	return optGroup{spec: spec, eff: effUnknown, risk: RiskMedium, msg: msg}
}

// opts builds an option table from groups. It panics on a malformed spec
// or a name given twice: tables are package data, checked by the tests.
func opts(groups ...optGroup) *optTable {
	n := 0
	for _, g := range groups {
		n += len(strings.Fields(g.spec))
	}
	t := &optTable{opts: make([]opt, 0, n), infos: make([]optInfo, 0, len(groups))}
	type named struct {
		name string
		opt  int
	}
	var longs []named
	var shorts []byte
	var keys []string
	for _, g := range groups {
		if len(g.spec) > 0 {
			t.infos = append(t.infos, optInfo{eff: g.eff, risk: g.risk, msg: g.msg, val: g.val})
		}
		for _, entry := range strings.Fields(g.spec) {
			o := opt{info: uint8(len(t.infos) - 1)}
			names, shortNames := parseOptEntry(entry, &o)
			idx := len(t.opts)
			for j := 0; j < len(shortNames); j++ {
				if slices.Contains(shorts, shortNames[j]) {
					panic("command: option -" + shortNames[j:j+1] + " defined twice (" + entry + ")")
				}
				shorts = append(shorts, shortNames[j])
				t.shortIdx = append(t.shortIdx, uint16(idx))
			}
			for _, name := range names {
				longs = append(longs, named{name, idx})
			}
			if len(names) > 0 {
				keys = append(keys, names[0])
			} else {
				keys = append(keys, shortNames[:1])
			}
			t.opts = append(t.opts, o)
		}
	}
	t.shortKeys = string(shorts)
	slices.SortFunc(longs, func(a, b named) int { return strings.Compare(a.name, b.name) })
	var text strings.Builder
	t.names = make([]nameRef, len(longs))
	for j, l := range longs {
		if j > 0 && longs[j-1].name == l.name {
			panic("command: option " + l.name + " defined twice")
		}
		t.names[j] = nameRef{off: uint16(text.Len()), n: uint8(len(l.name)), opt: uint16(l.opt)}
		text.WriteString(l.name)
	}
	for j, key := range keys {
		t.opts[j].keyOff, t.opts[j].keyLen = uint16(text.Len()), uint8(len(key))
		text.WriteString(key)
	}
	if text.Len() > 65535 || len(t.infos) > 255 {
		panic("command: option table too large")
	}
	t.text = text.String()
	return t
}

// parseOptEntry parses one entry of the option notation into o and
// returns its long and short names.
func parseOptEntry(entry string, o *opt) (longs []string, shorts string) {
	names := entry
	switch {
	case strings.HasSuffix(entry, "[--=]"):
		o.arg, o.shortFlag, names = argOpt, true, entry[:len(entry)-5]
	case strings.HasSuffix(entry, "[=]"):
		o.arg, names = argOpt, entry[:len(entry)-3]
	case strings.HasSuffix(entry, "=="):
		o.arg, names = argTwo, entry[:len(entry)-2]
	case strings.HasSuffix(entry, "="):
		o.arg, names = argReq, entry[:len(entry)-1]
	}
	for _, n := range strings.Split(names, "|") {
		switch {
		case strings.HasPrefix(n, "--") && len(n) > 2:
			longs = append(longs, n[2:])
		case len(n) == 2 && n[0] == '-':
			shorts += n[1:]
		case len(n) > 2 && n[0] == '-':
			longs = append(longs, n[1:])
		default:
			panic("command: bad option notation " + entry)
		}
	}
	return longs, shorts
}

// lookupLong finds a long option by its exact name or, when the parser
// accepts them, an unambiguous abbreviation. n is the number of distinct
// options the name could abbreviate (0: none, >1: ambiguous).
func lookupLong(tabs []*optTable, name string, abbrev bool) (o optRef, n int, full string) {
	for _, t := range tabs {
		if o := t.longOpt(name); o.found() {
			return o, 1, name
		}
	}
	if !abbrev || name == "" {
		return optRef{}, 0, ""
	}
	for _, t := range tabs {
		j, _ := t.search(name)
		for ; j < len(t.names) && strings.HasPrefix(t.name(j), name); j++ {
			c := optRef{t, int(t.names[j].opt)}
			switch {
			case !o.found():
				o, n, full = c, 1, t.name(j)
			case !c.same(o):
				n++
				full += ", --" + t.name(j)
			}
		}
	}
	return o, n, full
}

// optUse is one option as it occurs on a command line.
type optUse struct {
	key    string // its key (see optRef.key)
	info   *optInfo
	arg    argKind
	i      int    // index in the call's arguments of the word it came from
	as     string // the option as written: "-o", "--out"
	full   string // the long name it abbreviates, or ""
	val    arg
	hasVal bool
	// cluster: a short option inside a cluster such as -fn5.
	cluster bool
	// attached: the value was part of the option's word (-n5, --lines=5).
	attached bool
	// lead: given before the verb (in the call's lead words).
	lead bool
}

// parsed is the scan of one tool call: its options and operands, for the
// tool's check to look at.
type parsed struct {
	uses []optUse
	ops  []int // indices of the operands in the call's arguments
}

// has reports whether an option with key appears.
func (p *parsed) has(key string) bool { return p.last(key) != nil }

// last returns the last occurrence of the option with key, or nil.
func (p *parsed) last(key string) *optUse {
	if p == nil {
		return nil
	}
	for i := len(p.uses) - 1; i >= 0; i-- {
		if p.uses[i].key == key {
			return &p.uses[i]
		}
	}
	return nil
}

// hasAny reports whether any option with one of keys appears.
func (p *parsed) hasAny(keys ...string) bool {
	for _, k := range keys {
		if p.has(k) {
			return true
		}
	}
	return false
}

// verbRule is how one verb (subcommand) of a tool is judged.
type verbRule struct {
	class ruleClass // ruleRead, ruleWrite or ruleCheck
	risk  Risk      // for ruleWrite
	msg   string    // for ruleWrite; "" is "known writer"
	// opts are the verb's own options; nil: only the tool's.
	opts *optTable
	// sub is a nested verb table (docker container ls, git remote show).
	sub *tool
	// check decides after the scan (ruleCheck); it sees k.p.
	check checkFunc
	// style overrides the tool's parser for the verb's own arguments.
	style *parseStyle
	// digits: -NUM is a count (git log -5).
	digits bool
	// noScan hands check the verb's arguments unscanned (a writer that
	// only looks for a terminal flag, such as docker run).
	noScan bool
	// setter: with more than maxOps operands the verb sets a value
	// (log-level with an argument sets the level, without one shows it).
	setter bool
	maxOps int
	// net: a network client (netclient.go); service and why are where it
	// connects when its command line names no server.
	net          bool
	service, why string
	// local: a verb of a network tool that connects nowhere.
	local bool
	// reads: a verb judged by a check that only ever reads (it proves
	// where it connects); an operand spelling it is no extra verb.
	reads bool
}

// tool is the grammar of one command.
type tool struct {
	name  string
	style parseStyle
	opts  *optTable
	// verbs are the subcommands; nil for a tool without verbs.
	verbs *verbSet
	// verbAbbrev: the tool accepts verb abbreviations (iproute2, nmcli);
	// an abbreviation is read-only only if every verb it may name is.
	verbAbbrev bool
	// globalsAfterVerb: the tool's own options stay valid after the verb
	// (one parser for the whole line, as systemctl, or cobra's persistent
	// flags). Otherwise they must come before it (git).
	globalsAfterVerb bool
	// noVerb applies when no verb is given; nil is unknown.
	noVerb *verbRule
	// check decides a tool without verbs after the scan; nil is read-only.
	check checkFunc
	// digitOpts: -NUM is a count (head -5, tail -20).
	digitOpts bool
	// net: a network client (netclient.go): its whole command line must
	// be static text and it must prove where it connects; service and
	// serviceWhy are where it connects when its command line names no
	// server (see Options.Services).
	net                 bool
	service, serviceWhy string
}

// tabList is the option tables in force at one point of a scan: inherited
// global options and the tool's or verb's own.
type tabList struct {
	t [4]*optTable
	n int
}

func (l tabList) plus(t *optTable) tabList {
	if t != nil && l.n < len(l.t) {
		l.t[l.n] = t
		l.n++
	}
	return l
}

// runTool scans call k with tool t's grammar and judges it.
func (c *classifier) runTool(k *call, t *tool) {
	mark, omark := len(c.uses), len(c.opIdx)
	c.scanTool(k, t, tabList{}, mark, omark)
	clear(c.uses[mark:])
	c.uses, c.opIdx = c.uses[:mark], c.opIdx[:omark]
}

// scanTool scans k's arguments with t's options (and inherited ones, which
// a parent tool passes to a nested verb table) and judges the call.
func (c *classifier) scanTool(k *call, t *tool, inherited tabList, mark, omark int) {
	tabs := inherited.plus(t.opts)
	i, ok := c.scanOpts(k, t.style, tabs.t[:tabs.n], t.digitOpts, t.verbs != nil)
	if !ok {
		return
	}
	if t.verbs == nil {
		k.setParsed(parsed{uses: c.uses[mark:], ops: c.opIdx[omark:]})
		if t.check != nil {
			t.check(c, k)
		} else {
			c.readOnly(k)
		}
		return
	}
	if i >= len(k.args) {
		if t.noVerb == nil {
			c.unknown(k.name, "no subcommand")
			return
		}
		k.setParsed(parsed{uses: c.uses[mark:], ops: c.opIdx[omark:]})
		c.applyVerbRule(k, t.noVerb)
		return
	}
	w := k.args[i]
	if !w.static {
		c.unknown(k.name, "dynamic subcommand")
		return
	}
	v, name, at := t.verb(w.s)
	vk := c.verbCall(k, i, name, t.verbs, at)
	c.judgeVerb(vk, t, v, w.s, name, tabs, inherited, mark, omark)
	c.freeCall()
}

// judgeVerb scans and judges the verb call vk of tool t.
func (c *classifier) judgeVerb(vk *call, t *tool, v *verbRule, word, name string, tabs, inherited tabList, mark, omark int) {
	switch {
	case v == nil && name != word:
		c.unknown(vk.name, "abbreviation may name a subcommand that writes")
		return
	case v == nil:
		c.unknown(vk.name, "subcommand not known to be read-only")
		return
	case v.class == ruleWrite:
		msg := v.msg
		if msg == "" {
			msg = "known writer"
		}
		c.writer(vk.name, v.risk, msg)
		return
	}
	if v.net && !t.net {
		if !c.enterNet(vk, v.service, v.why) {
			return
		}
		defer c.leaveNet(vk)
	}
	if v.local {
		c.localNet()
	}
	for j := mark; j < len(c.uses); j++ {
		c.uses[j].lead = true
	}
	c.opIdx = c.opIdx[:omark]
	inh := inherited
	if t.globalsAfterVerb {
		inh = tabs
	}
	if v.sub != nil {
		c.scanTool(vk, v.sub, inh, mark, omark)
		return
	}
	if v.noScan {
		vk.setParsed(parsed{})
		v.check(c, vk)
		return
	}
	vt := inh.plus(v.opts)
	st := t.style
	if v.style != nil {
		st = *v.style
	}
	if _, ok := c.scanOpts(vk, st, vt.t[:vt.n], v.digits, false); !ok {
		return
	}
	vk.setParsed(parsed{uses: c.uses[mark:], ops: c.opIdx[omark:]})
	vk.of = t
	if v.class == ruleRead && name != "help" && !c.noExtraVerb(vk, t) {
		return
	}
	c.applyVerbRule(vk, v)
}

// noExtraVerb refuses an operand of a verb that spells another of the
// tool's verbs not known to read (one that writes, runs a program, opens
// an editor or is judged by its own check: docker ps rm x, helm list
// uninstall x, git log push): it is an extra verb for any parser that
// reads the line differently, or a name that reads like one. Verbs that
// only read and nested verb groups are left as names, and verbs judged by
// a check of their own vet their operands themselves (kubectl get events
// names a resource type).
func (c *classifier) noExtraVerb(k *call, t *tool) bool {
	for _, i := range k.p.ops {
		a := k.args[i]
		if !a.static {
			continue
		}
		r := t.verbs.get(a.s)
		if r != nil && r.class != ruleRead && !r.reads && r.sub == nil {
			c.unknown(k.name+" "+a.s, "extra subcommand after a read-only one")
			return false
		}
	}
	return true
}

// verb finds a verb by name or, for tools that accept them, by an
// abbreviation that names only read verbs of one rule. name is the verb's
// full name for reasons, at its index in t.verbs (-1 for none).
func (t *tool) verb(w string) (*verbRule, string, int) {
	if i, ok := slices.BinarySearch(t.verbs.names, w); ok {
		return t.verbs.rules[i], w, i
	}
	if !t.verbAbbrev || w == "" {
		return nil, w, -1
	}
	var found *verbRule
	full, at := "", -1
	j, _ := slices.BinarySearch(t.verbs.names, w)
	for ; j < len(t.verbs.names) && strings.HasPrefix(t.verbs.names[j], w); j++ {
		n, v := t.verbs.names[j], t.verbs.rules[j]
		if v.class == ruleWrite || found != nil && found != v {
			return nil, w + " (" + n + "?)", -1
		}
		found, full, at = v, n, j
	}
	if found == nil {
		return nil, w, -1
	}
	return found, full, at
}

// verbCall makes the call for the verb at args[i] of k, which is verbs's
// verb at (or -1). Its name and reason come from the set when the set
// built them for k's name (verbReasons).
func (c *classifier) verbCall(k *call, i int, verb string, verbs *verbSet, at int) *call {
	lead := k.args[:i+1]
	if len(k.lead) > 0 {
		lead = append(append(make([]arg, 0, len(k.lead)+i+1), k.lead...), lead...)
	}
	name, read := "", ""
	if at >= 0 && verbs.texts != nil && verbs.prefix == k.name && verbs.names[at] == verb {
		read = verbs.texts[at]
		name = read[:len(read)-len(readSuffix)]
	} else {
		name = k.name + " " + verb
	}
	return c.newCall(call{name: name, word: k.word, lead: lead, args: k.args[i+1:], ctx: k.ctx, read: read})
}

// applyVerbRule judges a verb (or a tool's no-verb case) after its scan.
func (c *classifier) applyVerbRule(k *call, v *verbRule) {
	switch v.class {
	case ruleRead:
		if v.setter && len(k.p.ops) > v.maxOps {
			c.writer(k.name, RiskMedium, "sets a value")
			return
		}
		c.readOnly(k)
	case ruleWrite:
		msg := v.msg
		if msg == "" {
			msg = "known writer"
		}
		c.writer(k.name, v.risk, msg)
	default:
		if v.check == nil {
			c.unknown(k.name, "not known to be read-only")
			return
		}
		v.check(c, k)
	}
}

// scanOpts scans k's arguments from the start with the given tables,
// appending options to c.uses and operands to c.opIdx. With stopAtOperand
// it returns at the first operand (a verb), giving its index; otherwise it
// returns len(k.args). ok is false when a finding was recorded.
func (c *classifier) scanOpts(k *call, st parseStyle, tabs []*optTable, digits, stopAtOperand bool) (int, bool) {
	args := k.args
	ended := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if ended {
			if stopAtOperand {
				return i, true // a verb after "--"
			}
			c.opIdx = append(c.opIdx, i)
			continue
		}
		if !a.static {
			if a.split {
				c.unknown(k.name, "unquoted expansion may split into options")
				return i, false
			}
			if !a.noDash {
				c.unknown(k.name, "dynamic argument where an option may be")
				return i, false
			}
		}
		s := a.s
		if a.static && len(s) >= 2 && s[0] == '-' {
			if s == "--" {
				ended = true
				continue
			}
			next, ok := c.scanOption(k, st, tabs, digits, i)
			if !ok {
				return i, false
			}
			i = next
			continue
		}
		// An operand.
		if stopAtOperand {
			return i, true
		}
		c.opIdx = append(c.opIdx, i)
		if !st.permute {
			ended = true
		}
	}
	return len(args), true
}

// scanOption reads the option word at args[i] (and any value words) and
// returns the index of the last word it used.
func (c *classifier) scanOption(k *call, st parseStyle, tabs []*optTable, digits bool, i int) (int, bool) {
	args := k.args
	s := args[i].s
	first := 1
	if digits && s[1] >= '0' && s[1] <= '9' {
		// A count such as -100, possibly followed by short options in the
		// obsolete syntax of head and tail (-100f).
		for first < len(s) && s[first] >= '0' && s[first] <= '9' {
			first++
		}
		c.uses = append(c.uses, optUse{key: "#", info: &readInfo, arg: argReq, i: i, as: s[:first], val: lit(s[1:first]), hasVal: true, cluster: first < len(s)})
		if first == len(s) {
			return i, true
		}
	}
	long := strings.HasPrefix(s, "--")
	if first == 1 && (long || st.dashLong) {
		body := s[1:]
		if long {
			body = s[2:]
		}
		name, val, hasEq := strings.Cut(body, "=")
		o, n, full := lookupLong(tabs, name, st.abbrev)
		if n == 0 && !long && (st.clusters || len(body) == 1) {
			// A dashLong tool with short options too: fall through to them.
		} else {
			as := s
			if hasEq {
				as = s[:len(s)-len(val)-1]
			}
			switch {
			case n == 0:
				c.unknown(k.name, "unknown option "+as)
				return i, false
			case n > 1:
				c.unknown(k.name+" "+as, "ambiguous abbreviation (--"+full+")")
				return i, false
			}
			u := useOf(o, i, as)
			oa := u.arg
			if full != name {
				u.full = full
			}
			switch {
			case hasEq && oa == argNone && !st.boolValue:
				c.unknown(k.name+" "+as, "option takes no value")
				return i, false
			case hasEq:
				u.val, u.hasVal, u.attached = arg{s: val, static: true, noDash: !strings.HasPrefix(val, "-")}, true, true
				if oa == argTwo {
					if i+1 >= len(args) {
						c.unknown(k.name+" "+as, "missing value")
						return i, false
					}
					i++
				}
			case oa == argReq || oa == argTwo:
				var ok bool
				if i, ok = c.separateValue(k, &u, i, as); !ok {
					return i, false
				}
			}
			if !c.applyOpt(k, &u) {
				return i, false
			}
			c.uses = append(c.uses, u)
			return i, true
		}
	}
	// A short option or a cluster of them.
	start := i
	for j := first; j < len(s); j++ {
		ch := s[j]
		var o optRef
		for _, t := range tabs {
			if o = t.shortOpt(ch); o.found() {
				break
			}
		}
		as := shortAs[s[j]]
		if !o.found() {
			c.unknown(k.name, "unknown option "+as)
			return i, false
		}
		u := useOf(o, start, as)
		u.cluster = len(s) > 2
		oa := u.arg
		rest := s[j+1:]
		switch {
		case oa == argNone || o.opt().shortFlag:
			if st.shortEq && strings.HasPrefix(rest, "=") && st.boolValue {
				u.val, u.hasVal, u.attached = lit(rest[1:]), true, true
				j = len(s)
			}
		case rest != "":
			if st.shortEq && rest[0] == '=' {
				rest = rest[1:]
			}
			if !st.attached && !st.shortEq {
				c.unknown(k.name+" "+s, "option value must be a separate word")
				return i, false
			}
			u.val, u.hasVal, u.attached = arg{s: rest, static: true, noDash: rest == "" || rest[0] != '-'}, true, true
			j = len(s)
			if oa == argTwo {
				if i+1 >= len(args) {
					c.unknown(k.name+" "+as, "missing value")
					return i, false
				}
				i++
			}
		case oa == argOpt:
		default:
			var ok bool
			if i, ok = c.separateValue(k, &u, i, as); !ok {
				return i, false
			}
		}
		if !c.applyOpt(k, &u) {
			return i, false
		}
		c.uses = append(c.uses, u)
		if !st.clusters && j+1 < len(s) && !u.hasVal {
			c.unknown(k.name, "unknown option "+s)
			return i, false
		}
	}
	return i, true
}

// readInfo is the effect of an option that only reads (the -NUM count of
// head and tail).
var readInfo = optInfo{eff: effRead}

// useOf starts the use of option o at args[i], written as as.
// shortAs is "-x" for every byte x: a short option as written, without
// building the string for each use.
var shortAs = func() (t [256]string) {
	for i := range t {
		t[i] = string([]byte{'-', byte(i)})
	}
	return t
}()

// separateValue takes the value of the option u written at k.args[i] as
// as from the next word (the next two for argTwo, whose first word is the
// value): it returns the index of the last word consumed, or false when
// the words run out or the value is not a plain word.
func (c *classifier) separateValue(k *call, u *optUse, i int, as string) (int, bool) {
	need := 1
	if u.arg == argTwo {
		need = 2
	}
	if i+need >= len(k.args) {
		c.unknown(k.name+" "+as, "missing value")
		return i, false
	}
	u.val, u.hasVal = k.args[i+1], true
	i += need
	return i, c.valueWord(k, u)
}

func useOf(o optRef, i int, as string) optUse {
	return optUse{key: o.key(), info: o.info(), arg: o.opt().arg, i: i, as: as}
}

// valueWord vets a value taken from the next word: one that may split
// into several words could bring more options.
func (c *classifier) valueWord(k *call, u *optUse) bool {
	if u.val.split {
		c.unknown(k.name+" "+u.as, "unquoted expansion in an option value may split into options")
		return false
	}
	return true
}

// applyOpt records the effect of one option; false means it is not
// read-only (a finding was recorded).
func (c *classifier) applyOpt(k *call, u *optUse) bool {
	o := u.info
	if o.eff == effRead || boolOff(u) {
		if o.val != nil && !boolOff(u) {
			// The check gets a copy, written back after: passing u itself
			// to a function value would move every option use of every
			// scan to the heap, not only the few with a value check.
			uc := *u
			ok := o.val(c, k, &uc)
			*u = uc
			return ok
		}
		return true
	}
	word := k.name + " " + u.as
	if u.full != "" {
		word += " (--" + u.full + ")"
	}
	switch o.eff {
	case effWrite, effState:
		c.writer(word, o.risk, o.msg)
	case effExec:
		c.construct(word, o.risk, o.msg)
	case effNet:
		c.writer(word, o.risk, o.msg)
	default:
		c.unknown(word, o.msg)
	}
	return false
}

// boolOff reports a flag turned off by its value: --watch=false.
func boolOff(u *optUse) bool {
	if u.arg != argNone || !u.hasVal {
		return false
	}
	switch u.val.s {
	case "false", "FALSE", "False", "f", "F", "0":
		return true
	}
	return false
}

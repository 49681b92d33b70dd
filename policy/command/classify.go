package command

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// Limits that keep classification cheap and bounded whatever the input.
const (
	// maxCommandLen is the longest command the classifier reads; longer
	// input is write-or-unknown without parsing.
	maxCommandLen = 64 << 10
	// maxNesting bounds re-parsed command strings (sh -c, ssh, watch, ...).
	maxNesting = 4
	// maxChain bounds wrappers peeled off one simple command (env nice ...).
	maxChain = 32
)

// phase is the SPEC P1 phase a finding belongs to. Lower phases dominate.
type phase uint8

const (
	phaseConstruct phase = 1 // mutation-capable shell constructs
	phaseWriter    phase = 2 // known writers
	phaseRead      phase = 3 // read-only by construction
	phaseInspect   phase = 4 // content inspectors
	phaseUnknown   phase = 5 // everything else
)

// finding is one fact the classifier established about a command. Its
// reason is "word: msg", built only when the verdict is assembled, or
// text when that was built in advance (the command table's reasons).
type finding struct {
	phase     phase
	write     bool
	risk      Risk
	word, msg string
	text      string
}

// classifier holds the scratch state of one classification. Values are
// pooled: a syntax.Parser is not safe for concurrent use, so each goroutine
// takes its own classifier (and parser) from the pool.
type classifier struct {
	parser  *syntax.Parser // the parser for dialect
	bash    *syntax.Parser
	posix   *syntax.Parser
	dialect Dialect
	reader  strings.Reader
	table   map[string]rule

	src      string          // the top-level command, for rewrites
	funcs    map[string]bool // shell functions defined so far
	findings []finding
	args     []arg   // arena for resolved words, reused between calls
	calls    []*call // arena for calls, used as a stack
	ncalls   int
	buf      []byte                 // scratch for word resolution
	visit    func(syntax.Node) bool // the substitution visitor, bound once
	order    []int                  // scratch for verdict assembly
	ends     []int
	plain    plainArena // nodes of plain commands (plain.go)
	uses     []optUse   // arena for grammar scans, used as a stack
	// substDepth counts the command substitutions being classified.
	substDepth uint8
	opts       Options // the operator's settings
	opIdx      []int   // arena for operand indices, likewise
	// dests are the destinations proven for the network reads of the
	// command (dest.go); netFrames the network clients being judged.
	dests     []Destination
	netFrames []netFrame
	// strict counts the commands around this one that run it on another
	// machine or in another namespace (ssh, docker exec, nsenter...):
	// there only the loopback is a known destination. remote counts
	// those that run it outside this host's process tree (ssh, docker and
	// kubectl exec): what it connects to there is not a destination of
	// this host's sandbox.
	strict, remote uint8

	// Exit-boundedness: the first unbounded finding wins; a rewrite is only
	// offered when exactly one part of the command is unbounded.
	category   BoundCategory
	rewrite    string
	unboundedN int
}

var classifierPool = sync.Pool{
	New: func() any {
		c := &classifier{
			bash:  syntax.NewParser(syntax.Variant(syntax.LangBash)),
			posix: syntax.NewParser(syntax.Variant(syntax.LangPOSIX)),
			table: commandTable,
		}
		c.visit = c.visitNode
		return c
	},
}

// Classify decides whether a shell command is provably read-only and
// whether it terminates by itself (SPEC P1, P2), reading it as bash: the
// verdict holds only for a command then run with bash. It is ClassifyAs
// with DialectBash.
func Classify(cmd string) Verdict {
	return ClassifyAs(cmd, DialectBash)
}

// ClassifyAs decides whether cmd, read in the given shell dialect, is
// provably read-only and terminates by itself (SPEC P1, P2). Every part of
// the command is judged, and the phases run in the fixed order of P1 so
// that an earlier phase always dominates. Anything the classifier cannot
// prove read-only is write-or-unknown, and so is a dialect it does not
// know. The verdict records the dialect: whoever runs the command must run
// it with that shell. It is safe for concurrent use.
func ClassifyAs(cmd string, d Dialect) Verdict {
	return Options{}.Classify(cmd, d)
}

// Options are operator settings the classifier honours. The zero value is
// the strictest classifier; every option can only widen what is proven
// read-only in a way the operator stated explicitly.
type Options struct {
	// HTTPReadURLs are URL prefixes the operator declares read-only
	// (policy.http_read_urls): health and metrics endpoints whose paths or
	// queries would otherwise look like actions, Kubernetes API-proxy
	// paths, and paths for kubectl get --raw. Build them with
	// ParseURLPrefix.
	HTTPReadURLs []URLPrefix
	// Destinations are where a read may connect besides the loopback: the
	// inventory's hosts, the datasources, the hosts of
	// policy.read_only_commands and policy.read_destinations. Port 0
	// admits every port of the host. Build them with ParseDestination.
	Destinations []Destination
	// Services are the servers of tools that name none on their command
	// line, by service: "kubernetes" (kubectl, helm: the configured
	// clusters' API servers), "ceph", "aws", "gcloud", "azure", "argocd",
	// ... (see services.go). A tool whose service has none is not a read.
	Services map[string][]Destination
	// Forbidden are vigil's own store (store.redis addresses): no read may
	// connect to them, on any name of their machine.
	Forbidden []Destination
	// Aliases are groups of names of one machine (an inventory resource's
	// name, aliases and SSH host), so that a forbidden address is
	// recognised under another of its names.
	Aliases [][]string
}

// Classify is ClassifyAs under these options.
func (o Options) Classify(cmd string, d Dialect) Verdict {
	c := classifierPool.Get().(*classifier)
	c.opts = o
	v := c.classify(cmd, d)
	c.reset()
	classifierPool.Put(c)
	return v
}

func (c *classifier) reset() {
	// call clears the words it resolved when it is done with them, so
	// the arena holds no old command text past its length.
	clear(c.args)
	c.args = c.args[:0]
	for _, k := range c.calls[:c.ncalls] {
		*k = call{}
	}
	c.ncalls = 0
	c.findings = c.findings[:0]
	c.buf = c.buf[:0]
	c.src, c.dialect, c.parser = "", "", nil
	clear(c.funcs)
	c.category, c.rewrite, c.unboundedN = BoundOK, "", 0
	c.substDepth, c.strict, c.remote = 0, 0, 0
	c.dests, c.netFrames = c.dests[:0], c.netFrames[:0]
	c.opts = Options{}
	c.reader.Reset("")
}

func (c *classifier) classify(cmd string, d Dialect) Verdict {
	c.src, c.dialect = cmd, d
	switch d {
	case DialectBash:
		c.parser = c.bash
	case DialectPOSIX:
		c.parser = c.posix
	default:
		c.parser = c.bash
		c.unknown("dialect", "shell dialect "+strconv.Quote(string(d))+" is not one the classifier reads")
	}
	switch {
	case len(cmd) > maxCommandLen:
		c.unknown("command", "longer than the classifier reads")
	case strings.TrimSpace(cmd) == "":
		c.unknown("command", "empty")
	default:
		c.script(cmd, callCtx{})
	}
	return c.verdict(cmd)
}

// script parses src in the current dialect and classifies every statement
// in it.
func (c *classifier) script(src string, ctx callCtx) {
	if ctx.nest > maxNesting {
		c.unknown("nesting", "too deep to classify")
		return
	}
	ok, seen := c.plainText(src)
	if !ok {
		return
	}
	if i := netDevice(src); i >= 0 {
		c.construct(src[i:min(len(src), i+len("/dev/tcp/")+24)], RiskMedium, "network device path: bash opens a connection")
	}
	// Two features are refused wherever their text appears, even quoted or
	// inside a string another program reads as shell: set -k makes every
	// NAME=value word environment, and ${var@P} expands the value as a
	// prompt, running its command substitutions.
	if seen&textK != 0 && strings.Contains(src, "set -k") {
		c.construct("set -k", RiskHigh, "assignments anywhere on a command line become its environment")
	}
	if seen&textAt != 0 && strings.Contains(src, "@P}") {
		c.construct("${...@P}", RiskMedium, "expansion evaluates the value as a prompt string or code")
	}
	var f *syntax.File
	if !noPlain {
		var mark plainMark
		var plain bool
		if f, mark, plain = c.plainFile(src); plain {
			defer c.releasePlain(mark)
		}
	}
	if f == nil {
		c.reader.Reset(src)
		var err error
		f, err = c.parser.Parse(&c.reader, "")
		if err != nil {
			c.addFinding(phaseUnknown, true, RiskMedium, "unparseable", err.Error())
			return
		}
	}
	// Every node the substitution walk looks at is spelled with one of
	// substitutionBytes or the word let; text without them has none.
	if seen&textSubst != 0 || strings.Contains(src, "let") {
		c.substitutions(f)
	}
	ctx.top = ctx.nest == 0
	c.stmts(f.Stmts, ctx)
}

// scriptIn classifies a command string run by a shell of dialect d (bash
// -c, dash -c), restoring the current dialect afterwards.
func (c *classifier) scriptIn(src string, ctx callCtx, d Dialect) {
	parser, dialect := c.parser, c.dialect
	c.dialect = d
	c.parser = c.bash
	if d == DialectPOSIX {
		c.parser = c.posix
	}
	c.script(src, ctx)
	c.parser, c.dialect = parser, dialect
}

// shScript classifies a command string run by a shell that may be bash or
// a POSIX sh (sh -c, ssh, watch): it must be read-only in both readings.
func (c *classifier) shScript(src string, ctx callCtx) {
	n := len(c.findings)
	c.scriptIn(src, ctx, DialectBash)
	if !dialectSensitive(src) {
		// Without $'...', $"..." or braces the two readings give the same
		// words; bash-only syntax fails the POSIX parse, which only refuses.
		return
	}
	for _, f := range c.findings[n:] {
		if f.write {
			return // one reading already refuses it
		}
	}
	c.scriptIn(src, ctx, DialectPOSIX)
}

// dialectSensitive reports text whose words bash and a POSIX sh expand
// differently: ANSI-C and locale quoting ($'...', $"...") and brace
// expansion.
func dialectSensitive(src string) bool {
	return strings.Contains(src, "$'") || strings.Contains(src, "$\"") || strings.IndexByte(src, '{') >= 0
}

// textClass sorts the bytes of a command for plainText: textPrintable
// for printable ASCII, tab and newline, textSubst added for the bytes of
// substitutionBytes and textAt and textK for @ and k (which the searches
// for "@P}" and "set -k" need), textHigh for non-ASCII; 0 for control
// characters.
var textClass = func() (t [256]uint8) {
	for ch := 0x20; ch < 0x7f; ch++ {
		t[ch] = textPrintable
		if substitutionBytes[ch] {
			t[ch] |= textSubst
		}
	}
	t['@'] |= textAt
	t['k'] |= textK
	t['\t'], t['\n'] = textPrintable, textPrintable
	for ch := 0x80; ch < 0x100; ch++ {
		t[ch] = textHigh
	}
	return t
}()

const (
	textPrintable = 1 << iota
	textSubst
	textHigh
	textAt // @, which "@P}" needs
	textK  // k, which "set -k" needs
)

// plainText reports whether src holds only characters the shell and the
// parser read alike. A NUL byte ends a C string where the parser would
// drop it, a carriage return is part of a word to bash but a blank to the
// parser, and other control characters or invalid UTF-8 are not read the
// same way by every shell: all are refused, naming the byte, never
// cleaned. seen is the union of the textClass bits of its bytes: whether
// it has a byte of substitutionBytes (hasByte), an @ or a k.
func (c *classifier) plainText(src string) (ok bool, seen uint8) {
	for i := 0; i < len(src); i++ {
		cl := textClass[src[i]]
		seen |= cl
		if cl != 0 {
			continue
		}
		ch := src[i]
		name := "control character"
		switch ch {
		case 0:
			name = "NUL byte"
		case '\r':
			name = "carriage return"
		}
		c.unknown("command", fmt.Sprintf("contains a %s (0x%02x) at offset %d", name, ch, i))
		return false, 0
	}
	if seen&textHigh != 0 && !utf8.ValidString(src) {
		c.unknown("command", "contains invalid UTF-8")
		return false, 0
	}
	return true, seen
}

// netDevice returns the offset of a /dev/tcp or /dev/udp path in s, or -1:
// bash opens a network connection for a redirection to one. It looks for
// "/dev/" once and checks what follows each.
func netDevice(s string) int {
	for off := 0; ; {
		i := strings.Index(s[off:], "/dev/")
		if i < 0 {
			return -1
		}
		i += off
		if rest := s[i+len("/dev/"):]; strings.HasPrefix(rest, "tcp") || strings.HasPrefix(rest, "udp") {
			return i
		}
		off = i + 1
	}
}

// verdict turns the findings into the caller's Verdict.
func (c *classifier) verdict(cmd string) Verdict {
	v := Verdict{
		Command:          cmd,
		Dialect:          c.dialect,
		Bounded:          c.category == BoundOK,
		Category:         c.category,
		SuggestedRewrite: c.rewrite,
	}
	if c.unboundedN != 1 {
		v.SuggestedRewrite = ""
	}
	writes, inspected := 0, false
	for _, f := range c.findings {
		if f.write {
			writes++
		} else if f.phase == phaseInspect {
			inspected = true
		}
	}
	switch {
	case writes > 0:
		v.Intent, v.Risk = IntentWriteOrUnknown, RiskLow
		// Reasons of the dominating phases first, each phase in walk order.
		order := c.order[:0]
		for p := phaseConstruct; p <= phaseUnknown; p++ {
			for i, f := range c.findings {
				if f.write && f.phase == p {
					order = append(order, i)
					v.Risk = maxRisk(v.Risk, f.risk)
				}
			}
		}
		c.order = order
		v.Reasons = c.reasons(order)
	case len(c.findings) == 0:
		// Only comments or empty statements: nothing runs, nothing to prove.
		v.Intent, v.Risk = IntentWriteOrUnknown, RiskMedium
		v.Reasons = []string{"command: nothing to run"}
	default:
		v.Intent, v.Risk = IntentReadOnlyCertain, RiskReadOnly
		if len(c.dests) > 0 {
			v.Network = true
			v.Destinations = slices.Clone(c.dests)
		}
		if inspected {
			v.Intent = IntentReadOnlyConditional
		}
		v.Reasons = c.reasons(nil)
	}
	return v
}

// reasons builds the distinct "word: msg" texts of the findings at the
// given indices (all findings when order is nil), in that order. A
// finding that carries its text built in advance is used as it is; the
// others share one allocation for all their text.
func (c *classifier) reasons(order []int) []string {
	n := len(order)
	if order == nil {
		n = len(c.findings)
	}
	at := func(i int) *finding {
		if order == nil {
			return &c.findings[i]
		}
		return &c.findings[order[i]]
	}
	// ends[i] is the end offset of reason i in the text built here, -1
	// for a duplicate of an earlier one and -2 for one with its own text.
	ends := c.ends[:0]
	size, count := 0, 0
	for i := 0; i < n; i++ {
		f := at(i)
		dup := false
		for j := 0; j < i && !dup; j++ {
			g := at(j)
			dup = ends[j] != -1 && g.word == f.word && g.msg == f.msg
		}
		switch {
		case dup:
			ends = append(ends, -1)
			continue
		case f.text != "":
			ends = append(ends, -2)
		default:
			size += len(f.word) + 2 + len(f.msg)
			ends = append(ends, size)
		}
		count++
	}
	c.ends = ends
	all := ""
	if size > 0 {
		var b strings.Builder
		b.Grow(size)
		for i := 0; i < n; i++ {
			if ends[i] >= 0 {
				f := at(i)
				b.WriteString(f.word)
				b.WriteString(": ")
				b.WriteString(f.msg)
			}
		}
		all = b.String()
	}
	out := make([]string, 0, count)
	start := 0
	for i, end := range ends {
		switch {
		case end >= 0:
			out = append(out, all[start:end])
			start = end
		case end == -2:
			out = append(out, at(i).text)
		}
	}
	return out
}

// riskRank orders risks from read-only to high.
func riskRank(r Risk) int {
	switch r {
	case RiskLow:
		return 1
	case RiskMedium:
		return 2
	case RiskHigh:
		return 3
	}
	return 0
}

func maxRisk(a, b Risk) Risk {
	if riskRank(b) > riskRank(a) {
		return b
	}
	return a
}

// addFinding records one finding.
func (c *classifier) addFinding(p phase, write bool, risk Risk, word, msg string) {
	c.findings = append(c.findings, finding{phase: p, write: write, risk: risk, word: word, msg: msg})
}

// addText records a finding whose reason text ("word: msg") was built in
// advance.
func (c *classifier) addText(p phase, write bool, risk Risk, word, msg, text string) {
	if noTexts {
		text = ""
	}
	c.findings = append(c.findings, finding{phase: p, write: write, risk: risk, word: word, msg: msg, text: text})
}

// noTexts turns reasons built in advance off (tests compare the verdicts).
var noTexts = false

// construct records a phase-1 finding: a shell construct that can mutate.
func (c *classifier) construct(word string, risk Risk, msg string) {
	c.addFinding(phaseConstruct, true, risk, word, msg)
}

// writer records a phase-2 finding: a command known to change things.
func (c *classifier) writer(word string, risk Risk, msg string) {
	c.addFinding(phaseWriter, true, risk, word, msg)
}

// read records a phase-3 finding: read-only by construction.
func (c *classifier) read(word, msg string) {
	c.addFinding(phaseRead, false, RiskReadOnly, word, msg)
}

// inspected records a phase-4 finding: a dual-use tool whose content was
// inspected. write says whether the content can change things.
func (c *classifier) inspected(word string, write bool, risk Risk, msg string) {
	if !write {
		risk = RiskReadOnly
	}
	c.addFinding(phaseInspect, write, risk, word, msg)
}

// unknown records a phase-5 finding: nothing proves the part read-only.
func (c *classifier) unknown(word, msg string) {
	c.addFinding(phaseUnknown, true, RiskMedium, word, msg)
}

// unbounded records that part of the command may not terminate by itself.
// rewrite is a bounded replacement for the whole command, or "".
func (c *classifier) unbounded(ctx callCtx, cat BoundCategory, rewrite string) {
	if ctx.timed {
		return
	}
	c.unboundedN++
	if c.category == BoundOK {
		c.category, c.rewrite = cat, rewrite
	}
}

package command

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// callCtx is what a command inherits from where it sits in the script.
type callCtx struct {
	nest  uint8 // re-parsed command strings around this one
	chain uint8 // wrappers peeled off this simple command
	// piped: stdin comes from a pipe; fed: stdin comes from a pipe, a
	// redirection or a here-document, so a REPL would not wait for a person.
	piped, fed bool
	// null: stdin is /dev/null (fed, with nothing to send).
	null bool
	// timed: a timeout wrapper bounds everything inside.
	timed bool
	// extra: more arguments are appended at run time (xargs, find -exec),
	// so every argument-sensitive command is unknown.
	extra bool
	// top: the statement is one of the top-level script's own, run by the
	// shell itself in order (not in a subshell, branch or pipeline), so a
	// function it defines exists for the statements after it.
	top bool
}

// nested returns the context for a re-parsed command string.
func (ctx callCtx) nested() callCtx {
	ctx.nest++
	ctx.chain = 0
	return ctx
}

func (c *classifier) stmts(list []*syntax.Stmt, ctx callCtx) {
	for _, s := range list {
		c.stmt(s, ctx)
	}
}

func (c *classifier) stmt(s *syntax.Stmt, ctx callCtx) {
	top := ctx.top && !s.Background
	ctx.top = false
	for _, r := range s.Redirs {
		if input, null := c.redirect(r, ctx); input {
			ctx.fed, ctx.null = true, null
		}
	}
	if s.Coprocess || s.Disown {
		c.construct("coproc", RiskMedium, "runs a background coprocess")
	}
	if s.Cmd != nil {
		c.command(s.Cmd, ctx)
	}
	if fn, ok := s.Cmd.(*syntax.FuncDecl); ok && top && fn.Name != nil {
		if c.funcs == nil {
			c.funcs = make(map[string]bool, 2)
		}
		c.funcs[fn.Name.Value] = true
	}
}

// command classifies one compound or simple command.
func (c *classifier) command(cmd syntax.Command, ctx callCtx) {
	switch x := cmd.(type) {
	case *syntax.CallExpr:
		c.call(x, ctx)
	case *syntax.BinaryCmd:
		c.stmt(x.X, ctx)
		if x.Op == syntax.Pipe || x.Op == syntax.PipeAll {
			ctx.piped, ctx.fed, ctx.null = true, true, emptyProducer(x.X)
		}
		c.stmt(x.Y, ctx)
	case *syntax.Block:
		c.stmts(x.Stmts, ctx)
	case *syntax.Subshell:
		c.stmts(x.Stmts, ctx)
	case *syntax.IfClause:
		for ; x != nil; x = x.Else {
			c.stmts(x.Cond, ctx)
			c.stmts(x.Then, ctx)
		}
	case *syntax.WhileClause:
		c.stmts(x.Cond, ctx)
		c.stmts(x.Do, ctx)
		if foreverCond(x) {
			c.unbounded(ctx, BoundUnboundedStream, "")
		}
	case *syntax.ForClause:
		if loop, ok := x.Loop.(*syntax.CStyleLoop); ok && loop.Cond == nil {
			c.unbounded(ctx, BoundUnboundedStream, "")
		}
		if iter, ok := x.Loop.(*syntax.WordIter); ok && iter.Name != nil {
			c.shellVar(iter.Name.Value, "for")
		}
		c.stmts(x.Do, ctx)
	case *syntax.CaseClause:
		for _, item := range x.Items {
			c.stmts(item.Stmts, ctx)
		}
	case *syntax.FuncDecl:
		// The body runs whenever the name is called; judge it as if inline.
		c.stmt(x.Body, ctx)
	case *syntax.ArithmCmd:
		c.read("((", "shell arithmetic")
	case *syntax.TestClause:
		c.read("[[", "shell test")
	case *syntax.LetClause:
		c.read("let", "shell arithmetic")
	case *syntax.DeclClause:
		c.decl(x)
	case *syntax.TimeClause:
		if x.Stmt != nil {
			c.stmt(x.Stmt, ctx)
		} else {
			c.read("time", "shell keyword")
		}
	case *syntax.CoprocClause:
		c.construct("coproc", RiskMedium, "runs a background coprocess")
		if x.Stmt != nil {
			c.stmt(x.Stmt, ctx)
		}
	default:
		c.unknown("shell", "unsupported construct")
	}
}

// emptyProducer reports a pipeline stage that writes nothing but at most
// a new line: a bare echo, true or ":" (echo | openssl s_client ...).
func emptyProducer(s *syntax.Stmt) bool {
	call, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(s.Redirs) > 0 || len(call.Assigns) > 0 || len(call.Args) == 0 {
		return false
	}
	switch call.Args[0].Lit() {
	case "echo":
		return len(call.Args) == 1 || len(call.Args) == 2 && call.Args[1].Lit() == "-n"
	case "true", ":":
		return len(call.Args) == 1
	}
	return false
}

// foreverCond reports a while/until loop whose condition is a constant that
// never ends it: while true, while :, until false.
func foreverCond(w *syntax.WhileClause) bool {
	if len(w.Cond) != 1 {
		return false
	}
	call, ok := w.Cond[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) != 1 || w.Cond[0].Negated {
		return false
	}
	switch call.Args[0].Lit() {
	case "true", ":":
		return !w.Until
	case "false":
		return w.Until
	}
	return false
}

// redirect classifies one redirection and reports whether it supplies
// stdin, and whether that stdin is /dev/null.
func (c *classifier) redirect(r *syntax.Redirect, ctx callCtx) (input, null bool) {
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		return true, false
	case syntax.DplIn:
		return true, false
	case syntax.RdrIn:
		if len(r.Word.Parts) == 1 {
			if _, ok := r.Word.Parts[0].(*syntax.ProcSubst); ok {
				return true, false // < <(cmd): a pipe from cmd, classified in turn
			}
		}
		t := c.resolve(r.Word)
		if !t.static || t.glob {
			// bash opens /dev/tcp/HOST/PORT as a connection: an input path
			// the classifier cannot see could be one.
			c.unknown("< "+c.wordText(r.Word, ctx), "input redirection from a path the classifier cannot see")
			return true, false
		}
		if netDevice(t.s) >= 0 {
			c.construct("< "+t.s, RiskMedium, "redirection to a network device: bash opens a connection")
		}
		return true, c.devNull(r.Word, t)
	case syntax.DplOut:
		// >&2, 2>&1, >&-: duplicating or closing descriptors writes nothing.
		if t := c.resolve(r.Word); t.static && (isNumber(t.s) || t.s == "-") {
			return false, false
		}
	case syntax.RdrInOut:
		c.construct("<> "+c.wordText(r.Word, ctx), RiskMedium, "opens a file for writing")
		return true, false
	}
	t := c.resolve(r.Word)
	if c.devNull(r.Word, t) || t.static && !t.glob && (t.s == "/dev/stdout" || t.s == "/dev/stderr") {
		return false, false
	}
	if t.static && netDevice(t.s) >= 0 {
		c.construct(r.Op.String()+" "+t.s, RiskHigh, "redirection to a network device: network write")
		return false, false
	}
	risk := RiskMedium
	if t.static && sensitivePath(t.s) {
		risk = RiskHigh
	}
	c.construct(r.Op.String()+" "+c.wordText(r.Word, ctx), risk, "output redirection")
	return false, false
}

// devNull reports whether a redirection target is provably /dev/null. The
// word is judged by what the shell expands it to; an ANSI-C escape whose
// expansion depends on the locale or bash version (\u, \U, \c) is not
// proof.
func (c *classifier) devNull(w *syntax.Word, t arg) bool {
	if !t.static || t.glob || t.s != "/dev/null" {
		return false
	}
	for _, p := range w.Parts {
		if q, ok := p.(*syntax.SglQuoted); ok && q.Dollar && strings.Contains(q.Value, "\\") &&
			(strings.Contains(q.Value, "\\u") || strings.Contains(q.Value, "\\U") || strings.Contains(q.Value, "\\c")) {
			return false
		}
	}
	return true
}

// wordText is a word as written, for reasons.
func (c *classifier) wordText(w *syntax.Word, ctx callCtx) string {
	a := c.resolve(w)
	if raw := c.raw(a, ctx); raw != "" {
		return raw
	}
	if a.static {
		return a.s
	}
	return "(dynamic)"
}

// sensitivePath reports system locations where a write is high risk.
func sensitivePath(p string) bool {
	for _, prefix := range []string{"/etc/", "/boot", "/dev/sd", "/dev/nvme", "/dev/vd", "/dev/xvd", "/dev/mapper", "/dev/disk", "/proc/sys", "/proc/sysrq", "/sys/", "/bin", "/sbin", "/usr/", "/lib", "/var/lib/"} {
		if strings.HasPrefix(p, prefix) {
			return true
		}
	}
	return p == "/" || p == "/etc"
}

// call classifies a simple command: assignments, then the command itself.
func (c *classifier) call(x *syntax.CallExpr, ctx callCtx) {
	for _, a := range x.Assigns {
		c.assign(a, len(x.Args) == 0)
	}
	if len(x.Args) == 0 {
		if len(x.Assigns) > 0 && x.Assigns[0].Name != nil {
			c.read(x.Assigns[0].Name.Value+"=", "shell variable")
		}
		return
	}
	start := len(c.args)
	for _, w := range x.Args {
		c.args = append(c.args, c.resolve(w))
	}
	end := len(c.args)
	c.argv(c.args[start:end:end], ctx)
	clear(c.args[start:])
	c.args = c.args[:start]
}

// argv classifies one command line given as resolved words: the command
// word picks a rule from the table.
func (c *classifier) argv(args []arg, ctx callCtx) {
	if len(args) == 0 {
		return
	}
	if ctx.chain > maxChain {
		c.unknown("wrappers", "too many to classify")
		return
	}
	word := args[0]
	if !word.static || word.glob {
		c.construct(c.displayWord(word, ctx), RiskMedium, "dynamic command word")
		return
	}
	name, trusted := commandName(word.s)
	r, known := c.table[name]
	if !known && writerFamily(name) {
		r, known = rule{class: ruleWrite, risk: RiskHigh}, true
	}
	rest := args[1:]
	if ctx.extra && known && (r.class == ruleCheck || r.class == ruleTool) {
		// xargs appends any number of words read at run time: the checker
		// sees two unknown words at the end, so that one still stands
		// alone if the other is taken as an option's value.
		rest = append(rest[:len(rest):len(rest)], arg{}, arg{})
	}
	extra := ctx.extra
	ctx.extra = false
	k := c.newCall(call{name: name, word: word, args: rest, ctx: ctx, read: r.read})
	defer c.freeCall()
	if known && r.class != ruleWrite && (r.net || r.class == ruleTool && r.tool.net) {
		if extra {
			c.construct(name, RiskHigh, "arguments are appended at run time (xargs): a network read sends only static text")
			return
		}
		svc, why := "", ""
		if r.class == ruleTool {
			svc, why = r.tool.service, r.tool.serviceWhy
		}
		if !c.enterNet(k, svc, why) {
			return
		}
		defer c.leaveNet(k)
	}
	if known && r.class == ruleCheck {
		for _, a := range rest {
			if a.split {
				c.unknown(name, "unquoted expansion may split into more options")
				return
			}
		}
	}
	switch {
	case !known && c.funcs[name] && trusted && ctx.chain == 0 && ctx.nest == 0:
		// A function defined earlier in the script, called by the shell
		// itself (wrappers run programs, never functions): its body was
		// judged where it was defined.
		c.read(name, "shell function")
	case !known:
		if strings.IndexByte(word.s, '/') >= 0 {
			c.unknown(word.s, "runs a program or script")
		} else {
			c.unknown(name, "unknown command")
		}
	case r.class == ruleWrite:
		c.addText(phaseWriter, true, r.risk, name, "known writer", r.write)
	case !trusted:
		// A command's name in an unusual directory could be anything: it
		// is unknown, and also judged as the command it names.
		switch r.class {
		case ruleCheck:
			r.check(c, k)
		case ruleTool:
			c.runTool(k, r.tool)
		}
		c.unknown(word.s, "program outside the system directories")
	case r.class == ruleRead:
		c.addText(phaseRead, false, RiskReadOnly, name, "read-only", r.read)
	case r.class == ruleTool:
		c.runTool(k, r.tool)
	default:
		r.check(c, k)
	}
}

// newCall takes a call from the classifier's arena; calls nest like a
// stack (a wrapper's call outlives the call it wraps), and freeCall
// releases the most recent one.
func (c *classifier) newCall(v call) *call {
	if c.ncalls == len(c.calls) {
		c.calls = append(c.calls, new(call))
	}
	k := c.calls[c.ncalls]
	c.ncalls++
	*k = v
	return k
}

func (c *classifier) freeCall() {
	c.ncalls--
	*c.calls[c.ncalls] = call{}
}

// displayWord is a command word as written, for reasons.
func (c *classifier) displayWord(a arg, ctx callCtx) string {
	if raw := c.raw(a, ctx); raw != "" {
		return raw
	}
	if a.s != "" {
		return a.s
	}
	return "(dynamic)"
}

// systemDirs are where the read-only commands of the table live. A
// command word with a path elsewhere is only trusted to be a writer.
var systemDirs = map[string]bool{
	"/bin": true, "/sbin": true, "/usr/bin": true, "/usr/sbin": true,
	"/usr/local/bin": true, "/usr/local/sbin": true,
}

// commandName returns the name a command word is looked up by (its base
// name) and whether its directory, if any, is a system one.
func commandName(word string) (name string, trusted bool) {
	slash := strings.LastIndexByte(word, '/')
	if slash < 0 {
		return word, true
	}
	dir := path.Clean(word[:slash+1])
	return word[slash+1:], systemDirs[dir]
}

// assign classifies a variable assignment: alone (a shell variable,
// which may be a shell-local name), or before a command (its
// environment, which must be on the inert list).
func (c *classifier) assign(a *syntax.Assign, alone bool) {
	if a.Name == nil {
		return
	}
	name := a.Name.Value
	if a.Index != nil {
		c.construct(name+"[...]=", RiskMedium, "array subscript is evaluated as arithmetic")
		return
	}
	value, static := "", true
	if a.Value != nil {
		v := c.resolve(a.Value)
		value, static = v.s, v.static
	}
	if alone && shellLocal(name) {
		return
	}
	switch env := envClass(name, value, static); env {
	case envInjects:
		c.construct(name+"=", RiskHigh, "environment can inject code or change which program runs")
	case envUnknown:
		if alone {
			c.unknown(name+"=", "variable not known to be inert: a shell variable must be a lower-case name (letters and digits), an environment variable one of the inert ones (LANG, LC_*, TZ, COLUMNS, NO_COLOR, PAGER=cat, ...)")
			return
		}
		c.unknown(name+"=", "environment variable not known to be inert (only LANG, LC_*, TZ, TERM, COLUMNS, LINES, NO_COLOR, PAGER=cat and a few others are)")
	}
}

// shellVar judges a variable the shell sets by other means than an
// assignment word (for NAME in, ${NAME:=value}): a variable a program
// reads (PATH, IFS, LD_PRELOAD, ...) changes what later commands do.
func (c *classifier) shellVar(name, where string) {
	switch shellVarClass(name) {
	case envInjects:
		c.construct(where+" "+name, RiskHigh, "sets a variable that can inject code or change which program runs")
	case envUnknown:
		c.unknown(where+" "+name, "sets a variable not known to be inert")
	}
}

// declFlags are the declare, typeset and local options that change
// nothing outside the shell: arrays, case conversion, read-only,
// global, trace, and the listing options. -i makes every assignment
// arithmetic (bash evaluates the value, and a[$(cmd)] in it runs cmd), -n
// makes a name refer to another (assigning it then sets that one), -x
// exports (vetted like an environment assignment).
const declFlags = "aAfFglprtu"

// decl classifies declare, export, local, readonly and typeset: only
// their listing forms and assignments of shell-local names (or exported
// inert environment variables) with static names are read-only. A quoted
// 'NAME=value' word is an assignment bash parses when it runs, so its
// name must be plain too (a subscript is evaluated as arithmetic).
func (c *classifier) decl(d *syntax.DeclClause) {
	variant := d.Variant.Value
	export := variant == "export"
	flagsOK := declFlags
	switch variant {
	case "export":
		flagsOK = "p"
	case "readonly":
		flagsOK = "aApf"
	}
	type named struct {
		name, value string
		static      bool
	}
	var names []named
	for _, a := range d.Args {
		if a.Naked && a.Name == nil {
			w := c.resolve(a.Value)
			if !w.static || w.glob {
				c.unknown(variant+" "+c.wordText(a.Value, callCtx{}), "dynamic option, name or assignment")
				return
			}
			if strings.HasPrefix(w.s, "-") || strings.HasPrefix(w.s, "+") && len(w.s) > 1 {
				for _, ch := range w.s[1:] {
					switch {
					case ch == 'x' && variant != "export" && variant != "readonly":
						export = w.s[0] == '-'
						if w.s[0] == '+' {
							c.unknown(variant+" "+w.s, "removes a variable from the environment")
							return
						}
					case strings.ContainsRune(flagsOK, ch):
					default:
						c.construct(variant+" "+w.s, RiskMedium, "option not known to leave the shell's behaviour alone (-i evaluates values as arithmetic, -n makes names refer to others, -f exports functions)")
						return
					}
				}
				continue
			}
			name, value, hasEq := strings.Cut(w.s, "=")
			if !isIdentifier(name) {
				c.construct(variant+" "+w.s, RiskMedium, "name with a subscript or other text is evaluated when the declaration runs")
				return
			}
			_ = hasEq
			names = append(names, named{name, value, true})
			continue
		}
		if a.Name == nil {
			continue
		}
		if a.Index != nil {
			c.construct(variant+" "+a.Name.Value+"[...]", RiskMedium, "array subscript is evaluated as arithmetic")
			return
		}
		n := named{name: a.Name.Value, static: true}
		if a.Value != nil {
			v := c.resolve(a.Value)
			n.value, n.static = v.s, v.static
		}
		names = append(names, n)
	}
	for _, n := range names {
		kind := envClass(n.name, n.value, n.static)
		if !export && shellLocal(n.name) {
			kind = envInert
		}
		switch kind {
		case envInjects:
			c.construct(variant+" "+n.name, RiskHigh, "sets a variable that can inject code or change which program runs")
			return
		case envUnknown:
			if export {
				c.unknown(variant+" "+n.name, "exports a variable not known to be inert (only LANG, LC_*, TZ, TERM, COLUMNS, NO_COLOR, PAGER=cat and a few others are)")
			} else {
				c.unknown(variant+" "+n.name, "variable not known to be inert: a shell variable must be a lower-case name (letters and digits)")
			}
			return
		}
	}
	c.read(variant, "shell variable")
}

// substitutions walks every node of a parsed script for the constructs
// that matter wherever they appear: command and process substitutions,
// whose commands run (and are classified in turn), arithmetic that
// evaluates variables (whose values bash may evaluate as code, as in
// a[$(cmd)]), and expansions that evaluate text.
func (c *classifier) substitutions(f *syntax.File) {
	syntax.Walk(f, c.visit)
}

// visitNode is the syntax.Walk visitor of substitutions.
func (c *classifier) visitNode(n syntax.Node) bool {
	switch x := n.(type) {
	case *syntax.CmdSubst:
		c.substitution(x.Stmts, callCtx{})
		return false
	case *syntax.ProcSubst:
		// >(cmd) reads what the outer command writes into it.
		ctx := callCtx{}
		if x.Op == syntax.CmdOut {
			ctx.piped, ctx.fed = true, true
		}
		c.substitution(x.Stmts, ctx)
		return false
	case *syntax.DblQuoted:
		if x.Dollar {
			// bash looks $"..." up in the locale's message catalogue and
			// expands the translation again.
			c.construct(`$"..."`, RiskMedium, "locale translation is expanded again")
		}
	case *syntax.ExtGlob:
		// zsh reads *(e:cmd:) and similar glob qualifiers as code.
		c.construct(x.Op.String()+"...)", RiskMedium, "extended glob may run code in zsh")
	case *syntax.ArithmExp:
		c.arithm(x.X, "$((...))")
	case *syntax.ArithmCmd:
		c.arithm(x.X, "((...))")
	case *syntax.LetClause:
		for _, e := range x.Exprs {
			c.arithm(e, "let")
		}
	case *syntax.CStyleLoop:
		c.arithm(x.Init, "for ((...))")
		c.arithm(x.Cond, "for ((...))")
		c.arithm(x.Post, "for ((...))")
	case *syntax.Assign:
		if x.Index != nil {
			c.arithm(x.Index, "[...]=")
		}
	case *syntax.ArrayElem:
		c.arithm(x.Index, "[...]=")
	case *syntax.ParamExp:
		c.paramExp(x)
	case *syntax.TestClause:
		c.testExpr(x.X)
	}
	return true
}

// substitution classifies the commands of a command or process
// substitution: they run, so each must be read-only; their output becomes
// a word, which is dynamic wherever it is used (a command word, a
// redirection target or an option made of it is judged as such).
func (c *classifier) substitution(stmts []*syntax.Stmt, ctx callCtx) {
	if c.substDepth >= maxNesting {
		c.unknown("$(...)", "substitutions nested too deep to classify")
		return
	}
	if len(stmts) == 0 {
		c.read("$(...)", "empty substitution")
		return
	}
	c.substDepth++
	ctx.nest = 1 // no rewrite reaches inside a substitution
	for _, st := range stmts {
		syntax.Walk(st, c.visit)
		c.stmt(st, ctx)
	}
	c.substDepth--
}

// arithm flags arithmetic that reads variables: bash evaluates a variable's
// value recursively, and a value like a[$(cmd)] runs cmd.
func (c *classifier) arithm(e syntax.ArithmExpr, where string) {
	if e != nil && arithmUsesVars(e) {
		c.construct(where, RiskMedium, "arithmetic on variables may evaluate command text")
	}
}

func arithmUsesVars(e syntax.ArithmExpr) bool {
	switch x := e.(type) {
	case *syntax.BinaryArithm:
		return arithmUsesVars(x.X) || arithmUsesVars(x.Y)
	case *syntax.UnaryArithm:
		return arithmUsesVars(x.X)
	case *syntax.ParenArithm:
		return arithmUsesVars(x.X)
	case *syntax.Word:
		l := x.Lit()
		return l == "" || !isArithmNumber(l)
	}
	return true
}

// isArithmNumber reports a bash integer constant: 42, 0x1f, 8#17.
func isArithmNumber(s string) bool {
	if s == "" || s[0] < '0' || s[0] > '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if !(ch >= '0' && ch <= '9' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch == '#' || ch == '@' || ch == '_') {
			return false
		}
	}
	return true
}

// promptSafeOps are the ${var@X} transformations that only quote or
// change case; @P expands the value as a prompt string, which runs
// command substitutions in it.
const promptSafeOps = "QEAaKkUuL"

func (c *classifier) paramExp(p *syntax.ParamExp) {
	if p.Exp != nil {
		switch p.Exp.Op {
		case syntax.OtherParamOps:
			op := ""
			if p.Exp.Word != nil {
				op = p.Exp.Word.Lit()
			}
			if len(op) != 1 || !strings.Contains(promptSafeOps, op) {
				c.construct("${...@"+op+"}", RiskMedium, "expansion evaluates the value as a prompt string or code")
			}
		case syntax.AssignUnset, syntax.AssignUnsetOrNull:
			if p.Param != nil {
				c.shellVar(p.Param.Value, "${"+p.Param.Value+p.Exp.Op.String()+"...}")
			}
		}
	}
	if p.Excl && p.Names == 0 && p.Index == nil {
		c.construct("${!...}", RiskMedium, "indirect expansion may evaluate command text")
	}
	if p.NestedParam != nil {
		c.construct("${...}", RiskMedium, "nested expansion")
	}
	if p.Index != nil {
		if w, ok := p.Index.(*syntax.Word); !ok || (w.Lit() != "@" && w.Lit() != "*") {
			c.arithm(p.Index, "${...[...]}")
		}
	}
	if p.Slice != nil {
		c.arithm(p.Slice.Offset, "${...:...}")
		c.arithm(p.Slice.Length, "${...:...}")
	}
}

// testExpr flags [[ ]] tests that evaluate operands as arithmetic or names.
func (c *classifier) testExpr(e syntax.TestExpr) {
	switch x := e.(type) {
	case *syntax.BinaryTest:
		switch x.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			if !testNumber(x.X) || !testNumber(x.Y) {
				c.construct("[[ "+x.Op.String()+" ]]", RiskMedium, "arithmetic on variables may evaluate command text")
			}
		default:
			c.testExpr(x.X)
			c.testExpr(x.Y)
		}
	case *syntax.UnaryTest:
		if x.Op == syntax.TsVarSet || x.Op == syntax.TsRefVar {
			if w, ok := x.X.(*syntax.Word); !ok || !isIdentifier(w.Lit()) {
				c.construct("[[ "+x.Op.String()+" ]]", RiskMedium, "evaluates a variable name")
			}
			return
		}
		c.testExpr(x.X)
	case *syntax.ParenTest:
		c.testExpr(x.X)
	}
}

func testNumber(e syntax.TestExpr) bool {
	w, ok := e.(*syntax.Word)
	return ok && isArithmNumber(w.Lit())
}

package command

import "strings"

// checkFunc decides about one command by looking at its arguments.
type checkFunc func(c *classifier, k *call)

// shellCheckers cover shell builtins, wrappers that run another command,
// shells and interpreters.
var shellCheckers = map[string]checkFunc{
	"eval":      constructCheck(RiskMedium, "evaluates text as a command"),
	"source":    constructCheck(RiskMedium, "runs a script in the shell"),
	".":         constructCheck(RiskMedium, "runs a script in the shell"),
	"alias":     constructCheck(RiskMedium, "redefines a command"),
	"enable":    constructCheck(RiskMedium, "loads or toggles builtins"),
	"fc":        constructCheck(RiskMedium, "re-runs commands from history"),
	"bind":      constructCheck(RiskMedium, "binds keys to commands"),
	"complete":  constructCheck(RiskMedium, "may run commands on completion"),
	"compgen":   constructCheck(RiskMedium, "may run commands"),
	"sudo":      checkPrivileged,
	"doas":      checkPrivileged,
	"pkexec":    checkPrivileged,
	"run0":      checkPrivileged,
	"su":        constructCheck(RiskHigh, "privilege escalation"),
	"runuser":   constructCheck(RiskHigh, "privilege escalation"),
	"sg":        constructCheck(RiskHigh, "privilege escalation"),
	"newgrp":    constructCheck(RiskHigh, "privilege escalation"),
	"exec":      checkExec,
	"trap":      checkTrap,
	"hash":      checkHash,
	"read":      checkRead,
	"mapfile":   checkMapfile,
	"readarray": checkMapfile,
	"unset":     checkUnset,
	"getopts":   checkGetopts,
	"wait":      checkNames("nf", "p", false),
	"printf":    checkPrintf,
	"test":      checkTest,
	"[":         checkTest,
	"sleep":     checkSleep,
	"yes":       checkYes,
	"env":       checkEnv,
	"nice":      checkNice,
	"ionice":    checkIonice,
	"timeout":   checkTimeout,
	"nohup":     checkNohup,
	"stdbuf":    checkStdbuf,
	"chroot":    checkChroot,
	"command":   checkCommand,
	"builtin":   checkBuiltin,
	"busybox":   checkBuiltin,
	"toybox":    checkBuiltin,
	"unbuffer":  checkBuiltin,
	"setsid":    checkSetsid,
	"nsenter":   checkNsenter,
	"taskset":   checkTaskset,
	"time":      checkTime,
	"xargs":     checkXargs,
	"watch":     checkWatch,
	"sh":        checkShell,
	"bash":      checkShell,
	"zsh":       checkShell,
	"dash":      checkShell,
	"ksh":       checkShell,
	"mksh":      checkShell,
	"ash":       checkShell,
	"python":    checkInterpreter,
	"python2":   checkInterpreter,
	"python3":   checkInterpreter,
	"perl":      checkInterpreter,
	"node":      checkInterpreter,
	"nodejs":    checkInterpreter,
	"ruby":      checkInterpreter,
	"irb":       checkInterpreter,
	"php":       checkInterpreter,
	"lua":       checkInterpreter,
	"luajit":    checkInterpreter,
	"Rscript":   checkInterpreter,
	"R":         checkInterpreter,
	"tclsh":     checkInterpreter,
	"expect":    checkInterpreter,
	"deno":      checkInterpreter,
	"bun":       checkInterpreter,
	"pwsh":      checkInterpreter,
	"jshell":    checkInterpreter,
	"julia":     checkInterpreter,
	"bc":        checkInterpreter,
	"dc":        checkInterpreter,
}

// constructCheck returns a checker recording a phase-1 finding.
func constructCheck(risk Risk, msg string) checkFunc {
	return func(c *classifier, k *call) { c.construct(k.name, risk, msg) }
}

// readOnly records the command as read-only.
func (c *classifier) readOnly(k *call) { c.read(k.name, "read-only") }

// badOption records an option not known to be read-only.
func (c *classifier) badOption(k *call, t token) {
	if t.kind == tokDynamic {
		c.unknown(k.name, "dynamic argument")
		return
	}
	c.unknown(k.name+" "+optText(t), "option not known to be read-only")
}

// runInner classifies the command a wrapper runs.
func (c *classifier) runInner(k *call, inner []arg, ctx callCtx) {
	ctx.chain++
	c.argv(inner, ctx)
}

// peel scans a wrapper's options with spec, asking ok for each option, and
// returns the wrapped command line after skip leading operands (a duration,
// a directory, ...). done is false when an option was refused.
func (c *classifier) peel(k *call, spec *optSpec, ok func(t token) bool, skip int) (inner []arg, done bool) {
	s := scanOpts(spec, k.args)
	for t, more := s.next(); more; t, more = s.next() {
		switch t.kind {
		case tokOperand:
			if skip > 0 {
				skip--
				continue
			}
			return k.args[t.i:], true
		case tokDynamic:
			return k.args[t.i:], true
		default:
			if ok == nil || !ok(t) {
				c.badOption(k, t)
				return nil, false
			}
		}
	}
	return nil, true
}

// wrap peels a wrapper and classifies what it runs; with nothing to run the
// wrapper itself is read-only.
func (c *classifier) wrap(k *call, spec *optSpec, ok func(t token) bool, skip int) {
	inner, done := c.peel(k, spec, ok, skip)
	switch {
	case !done:
	case inner == nil:
		c.readOnly(k)
	default:
		c.runInner(k, inner, k.ctx)
	}
}

// allow returns an option filter accepting the listed names.
func allow(names ...string) func(t token) bool {
	return func(t token) bool {
		for _, n := range names {
			if t.name == n {
				return true
			}
		}
		return false
	}
}

func checkPrivileged(c *classifier, k *call) {
	c.construct(k.name, RiskHigh, "privilege escalation")
	spec := optSpec{shortArg: "ugChDpRrTtU", longArg: []string{"user", "group", "close-from", "host", "prompt", "role", "type", "command-timeout", "other-user", "chdir"}, stopAtOperand: true}
	inner, done := c.peel(k, &spec, func(token) bool { return true }, 0)
	for done && len(inner) > 0 && inner[0].static && isAssignment(inner[0].s) {
		inner = inner[1:]
	}
	if done && len(inner) > 0 {
		c.runInner(k, inner, k.ctx)
	}
}

// isAssignment reports a NAME=value word.
func isAssignment(s string) bool {
	eq := strings.IndexByte(s, '=')
	return eq > 0 && isIdentifier(s[:eq])
}

func checkExec(c *classifier, k *call) {
	c.construct("exec", RiskMedium, "replaces the shell")
	spec := optSpec{shortArg: "a", stopAtOperand: true}
	if inner, done := c.peel(k, &spec, allow("a", "c", "l"), 0); done && inner != nil {
		c.runInner(k, inner, k.ctx)
	}
}

func checkTrap(c *classifier, k *call) {
	for _, a := range k.args {
		if !a.static || (a.s != "-l" && a.s != "-p") {
			c.construct("trap", RiskMedium, "runs command text on a signal")
			return
		}
	}
	c.readOnly(k)
}

func checkHash(c *classifier, k *call) {
	for _, a := range k.args {
		if !a.static || strings.HasPrefix(a.s, "-") && strings.ContainsRune(a.s, 'p') {
			c.construct("hash -p", RiskMedium, "changes which program a name runs")
			return
		}
	}
	c.readOnly(k)
}

// requireNames records a finding unless every operand is a plain variable
// name: bash evaluates a subscript in a name such as a[$(cmd)].
func (c *classifier) requireNames(k *call, names []string) bool {
	for _, n := range names {
		if !isIdentifier(n) {
			c.construct(k.name, RiskMedium, "variable name may evaluate command text")
			return false
		}
	}
	return true
}

// checkNames returns a checker for builtins whose option values in nameOpts
// (and operands, when operandNames) are variable names; flags lists
// value-less options.
func checkNames(flags, nameOpts string, operandNames bool) checkFunc {
	spec := optSpec{shortArg: nameOpts}
	return func(c *classifier, k *call) {
		s := scanOpts(&spec, k.args)
		for t, more := s.next(); more; t, more = s.next() {
			switch {
			case t.kind == tokOperand && !operandNames:
			case t.kind == tokOperand && t.valStatic:
				if !c.requireNames(k, []string{t.val}) {
					return
				}
			case t.kind == tokShort && strings.Contains(nameOpts, t.name):
				if !t.valStatic || !c.requireNames(k, []string{t.val}) {
					return
				}
			case t.kind == tokShort && strings.Contains(flags, t.name):
			default:
				c.badOption(k, t)
				return
			}
		}
		c.readOnly(k)
	}
}

// checkUnset checks the names like other name-taking builtins, and forgets
// functions it may remove.
func checkUnset(c *classifier, k *call) {
	checkNames("fvn", "", true)(c, k)
	for _, a := range k.args {
		delete(c.funcs, a.s)
	}
}

var readSpec = optSpec{shortArg: "adinNptu"}

func checkRead(c *classifier, k *call) {
	s := scanOpts(&readSpec, k.args)
	timed := false
	for t, more := s.next(); more; t, more = s.next() {
		switch {
		case t.kind == tokOperand && t.valStatic:
			if !c.requireNames(k, []string{t.val}) {
				return
			}
		case t.kind == tokShort && t.name == "a":
			if !t.valStatic || !c.requireNames(k, []string{t.val}) {
				return
			}
		case t.kind == tokShort && t.name == "t":
			timed = true
		case t.kind == tokShort && strings.Contains("dinNpurse", t.name):
		default:
			c.badOption(k, t)
			return
		}
	}
	if !k.ctx.fed && !timed {
		c.unbounded(k.ctx, BoundInteractiveREPL, "")
	}
	c.readOnly(k)
}

var mapfileSpec = optSpec{shortArg: "dnOsuCc"}

func checkMapfile(c *classifier, k *call) {
	s := scanOpts(&mapfileSpec, k.args)
	for t, more := s.next(); more; t, more = s.next() {
		switch {
		case t.kind == tokShort && t.name == "C":
			c.construct(k.name+" -C", RiskMedium, "runs a callback")
			return
		case t.kind == tokOperand && t.valStatic:
			if !c.requireNames(k, []string{t.val}) {
				return
			}
		case t.kind == tokShort && strings.Contains("dnOsuct", t.name):
		default:
			c.badOption(k, t)
			return
		}
	}
	c.readOnly(k)
}

func checkGetopts(c *classifier, k *call) {
	if len(k.args) < 2 || !k.args[1].static {
		c.unknown(k.name, "dynamic variable name")
		return
	}
	if c.requireNames(k, []string{k.args[1].s}) {
		c.readOnly(k)
	}
}

func checkPrintf(c *classifier, k *call) {
	if len(k.args) > 0 && !k.args[0].static {
		// The format might be -v, making the next word a variable name.
		c.unknown(k.name, "dynamic format")
		return
	}
	if len(k.args) > 0 && strings.HasPrefix(k.args[0].s, "-v") {
		name := strings.TrimPrefix(k.args[0].s, "-v")
		if name == "" && len(k.args) > 1 {
			if !k.args[1].static {
				c.unknown(k.name, "dynamic variable name")
				return
			}
			name = k.args[1].s
		}
		if !c.requireNames(k, []string{name}) {
			return
		}
	}
	c.readOnly(k)
}

func checkTest(c *classifier, k *call) {
	dynamic, subscript := false, false
	for _, a := range k.args {
		dynamic = dynamic || !a.static
		subscript = subscript || a.static && strings.ContainsRune(a.s, '[')
	}
	if dynamic && subscript {
		// A dynamic word could be -v, and a subscript is evaluated.
		c.unknown(k.name, "dynamic operator with a subscript")
		return
	}
	for i, a := range k.args {
		if a.static && (a.s == "-v" || a.s == "-R") && i+1 < len(k.args) {
			n := k.args[i+1]
			if !n.static || !isIdentifier(n.s) {
				c.construct(k.name, RiskMedium, "variable name may evaluate command text")
				return
			}
		}
	}
	c.readOnly(k)
}

func checkSleep(c *classifier, k *call) {
	for _, a := range k.args {
		if !a.static || strings.HasPrefix(a.s, "inf") {
			c.unbounded(k.ctx, BoundUnboundedStream, "")
		}
	}
	c.readOnly(k)
}

func checkYes(c *classifier, k *call) {
	c.unbounded(k.ctx, BoundUnboundedStream, "")
	c.readOnly(k)
}

var envSpec = optSpec{shortArg: "uCS", longArg: []string{"unset", "chdir", "split-string"}, stopAtOperand: true}

func checkEnv(c *classifier, k *call) {
	s := scanOpts(&envSpec, k.args)
	for t, more := s.next(); more; t, more = s.next() {
		switch t.kind {
		case tokDynamic:
			c.construct(c.displayWord(k.args[t.i], k.ctx), RiskMedium, "dynamic command word")
			return
		case tokOperand:
			if !t.valStatic {
				c.construct(c.displayWord(k.args[t.i], k.ctx), RiskMedium, "dynamic command word")
				return
			}
			if isAssignment(t.val) {
				eq := strings.IndexByte(t.val, '=')
				switch envClass(t.val[:eq], t.val[eq+1:], true) {
				case envInjects:
					c.construct(t.val[:eq+1], RiskHigh, "environment can inject code or change which program runs")
				case envUnknown:
					c.unknown(t.val[:eq+1], "environment variable not known to be inert")
				}
				continue
			}
			c.runInner(k, k.args[t.i:], k.ctx)
			return
		case tokShort:
			if t.name == "S" {
				c.unknown("env -S", "splits a string into a command")
				return
			}
			if !strings.Contains("i0vuC", t.name) {
				c.badOption(k, t)
				return
			}
		case tokLong:
			if !matchOneOf(t.name, "ignore-environment", "null", "unset", "chdir", "debug") {
				c.badOption(k, t)
				return
			}
		}
	}
	c.readOnly(k)
}

// matchOneOf reports whether name is exactly one of names.
func matchOneOf(name string, names ...string) bool {
	for _, n := range names {
		if name == n {
			return true
		}
	}
	return false
}

var niceSpec = optSpec{shortArg: "n", longArg: []string{"adjustment"}, stopAtOperand: true}

func checkNice(c *classifier, k *call) {
	c.wrap(k, &niceSpec, func(t token) bool {
		return t.name == "n" || t.name == "adjustment" || isNumber(t.name) || t.name == "-"
	}, 0)
}

var ioniceSpec = optSpec{shortArg: "cnpPu", longArg: []string{"class", "classdata", "pid", "pgid", "uid"}, stopAtOperand: true}

func checkIonice(c *classifier, k *call) {
	setting, target := false, false
	inner, done := c.peel(k, &ioniceSpec, func(t token) bool {
		switch t.name {
		case "c", "n", "class", "classdata":
			setting = true
		case "p", "P", "u", "pid", "pgid", "uid":
			target = true
		case "t", "ignore":
		default:
			return false
		}
		return true
	}, 0)
	switch {
	case !done:
	case target && setting:
		c.writer("ionice", RiskLow, "changes a running process's I/O priority")
	case inner == nil:
		c.readOnly(k)
	case target:
		c.unknown(k.name, "process ids mixed with a command")
	default:
		c.runInner(k, inner, k.ctx)
	}
}

var timeoutSpec = optSpec{shortArg: "sk", longArg: []string{"signal", "kill-after"}, stopAtOperand: true}

func checkTimeout(c *classifier, k *call) {
	inner, done := c.peel(k, &timeoutSpec, allow("s", "k", "v", "signal", "kill-after", "preserve-status", "foreground", "verbose"), 1)
	if !done {
		return
	}
	if inner == nil {
		c.readOnly(k)
		return
	}
	ctx := k.ctx
	ctx.timed = true
	c.runInner(k, inner, ctx)
}

var noSpec = optSpec{stopAtOperand: true}

func checkNohup(c *classifier, k *call) { c.wrap(k, &noSpec, nil, 0) }

func checkBuiltin(c *classifier, k *call) { c.wrap(k, &noSpec, nil, 0) }

var stdbufSpec = optSpec{shortArg: "ioe", longArg: []string{"input", "output", "error"}, stopAtOperand: true}

func checkStdbuf(c *classifier, k *call) {
	c.wrap(k, &stdbufSpec, allow("i", "o", "e", "input", "output", "error"), 0)
}

var chrootSpec = optSpec{longArg: []string{"userspec", "groups"}, stopAtOperand: true}

func checkChroot(c *classifier, k *call) {
	inner, done := c.peel(k, &chrootSpec, allow("userspec", "groups", "skip-chdir"), 1)
	switch {
	case !done:
	case inner == nil:
		c.unknown(k.name, "runs an interactive shell")
	default:
		c.runInner(k, inner, k.ctx)
	}
}

func checkCommand(c *classifier, k *call) {
	for _, a := range k.args {
		if a.static && (a.s == "-v" || a.s == "-V") {
			c.read("command -v", "looks a name up")
			return
		}
		if !a.static || !strings.HasPrefix(a.s, "-") {
			break
		}
	}
	c.wrap(k, &noSpec, allow("p"), 0)
}

func checkSetsid(c *classifier, k *call) {
	c.wrap(k, &noSpec, allow("c", "f", "w", "ctty", "fork", "wait"), 0)
}

var nsenterSpec = optSpec{shortArg: "tSG", longArg: []string{"target", "setuid", "setgid"}, stopAtOperand: true}

func checkNsenter(c *classifier, k *call) {
	c.wrap(k, &nsenterSpec, allow("t", "S", "G", "m", "u", "i", "n", "p", "U", "C", "T", "a", "F",
		"target", "setuid", "setgid", "mount", "uts", "ipc", "net", "pid", "user", "cgroup", "time", "all",
		"no-fork", "preserve-credentials"), 0)
}

func checkTaskset(c *classifier, k *call) {
	pidMode := false
	inner, done := c.peel(k, &noSpec, func(t token) bool {
		switch t.name {
		case "p", "pid":
			pidMode = true
		case "a", "c", "all-tasks", "cpu-list":
		default:
			return false
		}
		return true
	}, 0)
	switch {
	case !done:
	case pidMode && len(inner) == 1:
		c.read("taskset -p", "shows a process's CPU affinity")
	case pidMode:
		c.writer("taskset -p", RiskLow, "changes a running process's CPU affinity")
	case len(inner) < 2:
		c.readOnly(k)
	default:
		c.runInner(k, inner[1:], k.ctx)
	}
}

var timeSpec = optSpec{shortArg: "of", longArg: []string{"output", "format"}, stopAtOperand: true}

func checkTime(c *classifier, k *call) {
	inner, done := c.peel(k, &timeSpec, func(t token) bool {
		switch t.name {
		case "o", "output":
			c.construct("time -o", RiskLow, "writes a file")
			return true
		}
		return matchOneOf(t.name, "f", "format", "p", "portability", "v", "verbose", "q", "quiet", "a", "append")
	}, 0)
	switch {
	case !done:
	case inner == nil:
		c.readOnly(k)
	default:
		c.runInner(k, inner, k.ctx)
	}
}

var xargsSpec = optSpec{
	shortArg:      "aEdILnPs",
	shortOptArg:   "iel",
	longArg:       []string{"arg-file", "delimiter", "max-args", "max-procs", "max-chars"},
	stopAtOperand: true,
}

func checkXargs(c *classifier, k *call) {
	inner, done := c.peel(k, &xargsSpec, allow("a", "E", "d", "I", "L", "n", "P", "s", "i", "e", "l",
		"0", "r", "t", "x", "arg-file", "delimiter", "max-args", "max-procs", "max-chars", "null",
		"no-run-if-empty", "verbose", "exit", "eof", "replace", "max-lines"), 0)
	switch {
	case !done:
	case inner == nil:
		c.read("xargs", "runs echo")
	default:
		ctx := k.ctx
		ctx.extra, ctx.piped, ctx.fed = true, false, true
		c.runInner(k, inner, ctx)
	}
}

var watchSpec = optSpec{shortArg: "nq", longArg: []string{"interval", "equexit"}, stopAtOperand: true}

func checkWatch(c *classifier, k *call) {
	execMode := false
	inner, done := c.peel(k, &watchSpec, func(t token) bool {
		if t.name == "x" || t.name == "exec" {
			execMode = true
			return true
		}
		return matchOneOf(t.name, "n", "q", "d", "t", "b", "e", "g", "c", "p", "w", "r", "f",
			"interval", "equexit", "differences", "no-title", "beep", "errexit", "chgexit",
			"color", "no-color", "precise", "no-wrap", "no-rerun", "follow")
	}, 0)
	if !done {
		return
	}
	if inner == nil {
		c.unknown(k.name, "no command")
		return
	}
	if execMode {
		c.unbounded(k.ctx, BoundUnboundedStream, c.splice(k, c.rawSpan(inner, k.ctx)))
		c.runInner(k, inner, k.ctx)
		return
	}
	// watch hands its arguments, joined by spaces, to sh -c; running that
	// string once is the bounded equivalent.
	script, ok := joinStatic(inner)
	if !ok {
		c.unbounded(k.ctx, BoundUnboundedStream, "")
		c.construct("watch", RiskMedium, "dynamic command string")
		return
	}
	c.unbounded(k.ctx, BoundUnboundedStream, c.splice(k, script))
	c.script(script, k.ctx.nested())
}

// rawSpan is the top-level source text from the first to the last of args.
func (c *classifier) rawSpan(args []arg, ctx callCtx) string {
	first, last := args[0].w, args[len(args)-1].w
	if ctx.nest != 0 || first == nil || last == nil {
		return ""
	}
	return c.src[first.Pos().Offset():last.End().Offset()]
}

// joinStatic joins static words with spaces, as ssh and watch do before
// handing them to a shell.
func joinStatic(args []arg) (string, bool) {
	var b strings.Builder
	for i, a := range args {
		if !a.static {
			return "", false
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(a.s)
	}
	return b.String(), true
}

// checkShell handles sh, bash and friends: -c runs a command string, which
// is parsed and classified in turn; a script file is unknown; with neither,
// the shell reads commands from stdin.
func checkShell(c *classifier, k *call) {
	hasC, hasS := false, false
	i := 0
	for ; i < len(k.args); i++ {
		a := k.args[i]
		if !a.static {
			break
		}
		s := a.s
		if s == "--" || s == "-" {
			i++
			break
		}
		if len(s) < 2 || (s[0] != '-' && s[0] != '+') {
			break
		}
		if strings.HasPrefix(s, "--") {
			switch s {
			case "--norc", "--noprofile", "--posix", "--login", "--noediting", "--restricted", "--verbose", "--no-rcs":
				continue
			}
			c.unknown(k.name+" "+s, "option not known to be read-only")
			return
		}
		for _, ch := range s[1:] {
			switch {
			case ch == 'c':
				hasC = true
			case ch == 's':
				hasS = true
			case ch == 'o' || ch == 'O':
				i++ // the option name follows
			case strings.ContainsRune("abefhiklmnprstuvxBCEHPT", ch):
			default:
				c.unknown(k.name+" "+s, "option not known to be read-only")
				return
			}
		}
	}
	rest := k.args[min(i, len(k.args)):]
	switch {
	case hasC && len(rest) == 0:
		c.unknown(k.name+" -c", "missing command string")
	case hasC && !rest[0].static:
		c.construct(k.name+" -c", RiskMedium, "dynamic command string")
	case hasC:
		ctx := k.ctx.nested()
		ctx.extra = false
		c.script(rest[0].s, ctx)
	case len(rest) > 0 && !hasS:
		c.unknown(k.name+" "+c.displayWord(rest[0], k.ctx), "runs a script")
	case k.ctx.piped:
		c.construct("| "+k.name, RiskHigh, "pipe into a shell")
	case k.ctx.fed:
		c.construct(k.name, RiskHigh, "reads commands from stdin")
	default:
		c.unknown(k.name, "interactive shell")
		c.unbounded(k.ctx, BoundInteractiveREPL, "")
	}
}

// checkInterpreter handles python, perl, node and other language runtimes:
// they can do anything, so they are never read-only; only a version query
// is. A bare interpreter waits for a person.
func checkInterpreter(c *classifier, k *call) {
	if len(k.args) == 1 && k.args[0].static {
		switch k.args[0].s {
		case "--version", "-V", "-v", "version":
			c.read(k.name+" "+k.args[0].s, "version query")
			return
		}
	}
	if k.name == "perl" {
		for _, a := range k.args {
			if a.static && len(a.s) > 1 && a.s[0] == '-' && a.s[1] != '-' && strings.ContainsRune(a.s, 'i') &&
				!strings.ContainsAny(a.s[:strings.IndexByte(a.s, 'i')], "eEM") {
				c.writer("perl -i", RiskMedium, "edits files in place")
				return
			}
		}
	}
	code := len(k.args) > 0 && !(len(k.args) == 1 && k.args[0].static && k.args[0].s == "-")
	switch {
	case code:
		c.unknown(k.name, "interpreter runs code")
	case k.ctx.piped:
		c.construct("| "+k.name, RiskHigh, "pipe into an interpreter")
	case k.ctx.fed:
		c.construct(k.name, RiskHigh, "reads code from stdin")
	default:
		c.unknown(k.name, "interactive interpreter")
		c.unbounded(k.ctx, BoundInteractiveREPL, "")
	}
}

package command

import "strings"

// checkFunc decides about one command by looking at its arguments.
type checkFunc func(c *classifier, k *call)

// shellCheckers cover shell builtins, shells and interpreters: syntaxes of
// their own rather than getopt-like options.
var shellCheckers = map[string]checkFunc{
	"eval":      constructCheck(RiskMedium, "evaluates text as a command"),
	"source":    constructCheck(RiskMedium, "runs a script in the shell"),
	".":         constructCheck(RiskMedium, "runs a script in the shell"),
	"alias":     checkAlias,
	"enable":    checkEnable,
	"fc":        constructCheck(RiskMedium, "re-runs commands from history"),
	"bind":      constructCheck(RiskMedium, "binds keys to commands"),
	"complete":  constructCheck(RiskMedium, "may run commands on completion"),
	"compgen":   constructCheck(RiskMedium, "may run commands"),
	"doas":      checkPrivileged,
	"pkexec":    checkPrivileged,
	"run0":      checkPrivileged,
	"su":        constructCheck(RiskHigh, "privilege escalation"),
	"runuser":   constructCheck(RiskHigh, "privilege escalation"),
	"sg":        constructCheck(RiskHigh, "privilege escalation"),
	"newgrp":    constructCheck(RiskHigh, "privilege escalation"),
	"exec":      checkExec,
	"trap":      checkTrap,
	"jobs":      checkJobs,
	"hash":      checkHash,
	"read":      checkRead,
	"mapfile":   checkMapfile,
	"readarray": checkMapfile,
	"unset":     checkUnset,
	"getopts":   checkGetopts,
	"wait":      checkWait,
	"printf":    checkPrintf,
	"test":      checkTest,
	"[":         checkTest,
	"sleep":     checkSleep,
	"yes":       checkYes,
	"command":   checkCommand,
	"builtin":   checkBuiltin,
	"busybox":   checkBuiltin,
	"toybox":    checkBuiltin,
	"unbuffer":  checkBuiltin,
	"set":       checkSet,
	"shopt":     checkShopt,
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
	"java":      checkInterpreter,
}

// wrapperTools are commands that run another command: their grammar ends
// at the first operand, and what they run is classified in turn.
var wrapperTools = map[string]*tool{
	"sudo":    sudoTool,
	"env":     envTool,
	"nice":    niceTool,
	"ionice":  ioniceTool,
	"timeout": timeoutTool,
	"nohup":   nohupTool,
	"stdbuf":  stdbufTool,
	"chroot":  chrootTool,
	"setsid":  setsidTool,
	"nsenter": nsenterTool,
	"taskset": tasksetTool,
	"time":    timeTool,
	"xargs":   xargsTool,
	"watch":   watchTool,
}

// constructCheck returns a checker recording a phase-1 finding.
func constructCheck(risk Risk, msg string) checkFunc {
	return func(c *classifier, k *call) { c.construct(k.name, risk, msg) }
}

// readOnly records the command as read-only.
func (c *classifier) readOnly(k *call) {
	c.addText(phaseRead, false, RiskReadOnly, k.name, "read-only", readReason(k.name, k.read))
}

// badOption records an option not known to be read-only (for checkers
// that scan with the legacy optSpec scanner).
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

// wrapped returns the command a wrapper runs, starting at its operand
// number skip (after a duration, a directory, ...), or nil.
func wrapped(k *call, skip int) []arg {
	if len(k.p.ops) <= skip {
		return nil
	}
	return k.args[k.p.ops[skip]:]
}

// wrap classifies what a wrapper runs; with nothing to run the wrapper
// itself is read-only.
func (c *classifier) wrap(k *call, skip int) {
	if inner := wrapped(k, skip); inner != nil {
		c.runInner(k, inner, k.ctx)
		return
	}
	c.readOnly(k)
}

// wrapCheck is the check of a plain wrapper.
func wrapCheck(c *classifier, k *call) { c.wrap(k, 0) }

// strictWrapCheck is the check of a wrapper that runs its command in
// other namespaces (nsenter): the command is judged by the strictest
// rules, as if it ran on another machine (its loopback and files are not
// this host's).
func strictWrapCheck(c *classifier, k *call) {
	c.strict++
	c.wrap(k, 0)
	c.strict--
}

// sudo runs a command as another user; sudo -l only lists what the user
// may run (with a command: whether it may run it), running nothing.
var sudoTool = &tool{
	name: "sudo", style: styleGNUStop,
	opts: opts(
		reads(`-a|--auth-type= -B|--bell -b|--background -C|--close-from= -c|--login-class=
			-D|--chdir= -E|--preserve-env[--=] -e|--edit -g|--group= -H|--set-home -h|--host[=]
			-i|--login -l|--list -N|--no-update -n|--non-interactive -P|--preserve-groups
			-p|--prompt= -R|--chroot= -r|--role= -S|--stdin -s|--shell -T|--command-timeout=
			-t|--type= -U|--other-user= -u|--user= -V|--version --help`),
		unknowns("runs a password helper program", `-A|--askpass`),
		states(RiskLow, "changes the cached credentials", `-K|--remove-timestamp -k|--reset-timestamp -v|--validate`),
	),
	check: checkSudo,
}

func checkSudo(c *classifier, k *call) {
	if k.p.has("list") && !k.p.hasAny("edit", "login", "shell") {
		c.read("sudo -l", "lists privileges, runs nothing")
		return
	}
	// -V, --help and -h without a host show text; a word after them may be
	// a remote host (-h HOST) or a command, so they must stand alone.
	help := k.p.has("help") || k.p.has("host") && !k.p.last("host").hasVal
	if (k.p.has("version") || help && len(k.p.uses) == 1) && len(k.p.ops) == 0 {
		c.read("sudo", "version or help")
		return
	}
	c.construct("sudo", RiskHigh, "privilege escalation")
	inner := wrapped(k, 0)
	for len(inner) > 0 && inner[0].static && isAssignment(inner[0].s) {
		c.envWord(inner[0].s)
		inner = inner[1:]
	}
	if len(inner) > 0 {
		c.runInner(k, inner, k.ctx)
	}
}

// checkPrivileged: doas, pkexec and run0 run a command as another user.
func checkPrivileged(c *classifier, k *call) {
	c.construct(k.name, RiskHigh, "privilege escalation")
	i := 0
	for i < len(k.args) && k.args[i].static && strings.HasPrefix(k.args[i].s, "-") {
		if k.args[i].s == "--" {
			i++
			break
		}
		if matchOneOf(k.args[i].s, "-u", "--user", "-C", "-a") {
			i++
		}
		i++
	}
	if i < len(k.args) {
		c.runInner(k, k.args[i:], k.ctx)
	}
}

// isAssignment reports a NAME=value word.
func isAssignment(s string) bool {
	eq := strings.IndexByte(s, '=')
	return eq > 0 && isIdentifier(s[:eq])
}

// envWord judges a NAME=value word given to a program's environment.
func (c *classifier) envWord(s string) bool {
	eq := strings.IndexByte(s, '=')
	switch envClass(s[:eq], s[eq+1:], true) {
	case envInjects:
		c.construct(s[:eq+1], RiskHigh, "environment can inject code or change which program runs")
		return false
	case envUnknown:
		c.unknown(s[:eq+1], "environment variable not known to be inert")
		return false
	}
	return true
}

func checkExec(c *classifier, k *call) {
	c.construct("exec", RiskMedium, "replaces the shell")
	i := 0
	for i < len(k.args) && k.args[i].static && strings.HasPrefix(k.args[i].s, "-") && k.args[i].s != "--" {
		if k.args[i].s == "-a" {
			i++
		}
		i++
	}
	if i < len(k.args) && k.args[i].static && k.args[i].s == "--" {
		i++
	}
	if i < len(k.args) {
		c.runInner(k, k.args[i:], k.ctx)
	}
}

// checkTrap: trap alone, -l and -p list; anything else sets a trap,
// command text run on a signal or at exit.
func checkTrap(c *classifier, k *call) {
	for _, a := range k.args {
		if !a.static || (a.s != "-l" && a.s != "-p") {
			c.construct("trap", RiskMedium, "runs command text on a signal")
			return
		}
	}
	c.readOnly(k)
}

// checkJobs: jobs lists jobs (-l -n -p -r -s); jobs -x CMD ARGS runs CMD
// with job specs in ARGS replaced by process group ids.
func checkJobs(c *classifier, k *call) {
	for _, a := range k.args {
		if !a.static || strings.HasPrefix(a.s, "-") && strings.ContainsRune(a.s, 'x') {
			c.construct("jobs -x", RiskMedium, "runs a command")
			return
		}
		if strings.HasPrefix(a.s, "-") && strings.Trim(a.s[1:], "lnprs") != "" {
			c.unknown("jobs "+a.s, "option not known")
			return
		}
	}
	c.readOnly(k)
}

// checkHash: hash alone, -l and -t NAME print the table; -p sets which
// program a name runs, -d and -r drop entries, and hash NAME looks a name
// up again (harmless, but nothing a read needs).
func checkHash(c *classifier, k *call) {
	for i, a := range k.args {
		if !a.static || !(a.s == "-l" || a.s == "-t" && i == 0 && len(k.args) > 1 || i > 0 && k.args[0].s == "-t" && isIdentifier(a.s)) {
			c.construct("hash "+c.displayWord(a, k.ctx), RiskMedium, "changes the shell's table of programs")
			return
		}
	}
	c.readOnly(k)
}

// checkAlias: alias alone or -p lists the aliases, alias NAME prints one;
// alias NAME=VALUE redefines a command.
func checkAlias(c *classifier, k *call) {
	for _, a := range k.args {
		if !a.static || a.s == "" || strings.Contains(a.s, "=") || strings.HasPrefix(a.s, "-") && a.s != "-p" {
			c.construct("alias", RiskMedium, "redefines a command")
			return
		}
	}
	c.readOnly(k)
}

// checkEnable: enable alone, -a and -p list the builtins; enable NAME,
// -n (which makes a name run a program instead of a builtin), -f (loads a
// shared object) and -d change them.
func checkEnable(c *classifier, k *call) {
	for _, a := range k.args {
		if !a.static || !matchOneOf(a.s, "-a", "-p", "-s", "-ap", "-pa") {
			c.construct("enable", RiskMedium, "loads or toggles builtins")
			return
		}
	}
	c.readOnly(k)
}

// setsVar vets a variable a builtin assigns (read, printf -v, mapfile,
// getopts, wait -p): a name with a subscript makes bash evaluate it, and
// a variable a program reads (PATH, LD_PRELOAD, PAGER, ...) changes what
// later commands do.
func (c *classifier) setsVar(k *call, a arg) bool {
	if !a.static {
		c.unknown(k.name, "dynamic variable name")
		return false
	}
	if !isIdentifier(a.s) {
		c.construct(k.name, RiskMedium, "variable name may evaluate command text")
		return false
	}
	switch shellVarClass(a.s) {
	case envInjects:
		c.construct(k.name+" "+a.s, RiskHigh, "sets a variable that can inject code or change which program runs")
		return false
	case envUnknown:
		c.unknown(k.name+" "+a.s, "sets a variable not known to be inert")
		return false
	}
	return true
}

// requireNames records a finding unless every name is a plain variable
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

// builtinArgs walks a builtin's arguments the way bash's internal_getopt
// does: clusters, values attached or in the next word, options end at
// the first operand or "--". valued lists the options taking a value.
// visit sees each option (with its value) and each operand; it returns
// false after recording a finding.
func (c *classifier) builtinArgs(k *call, flags, valued string, visit func(opt byte, val arg, operand bool) bool) bool {
	args := k.args
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if !a.static {
			if !a.noDash || a.split {
				c.unknown(k.name, "dynamic argument where an option may be")
				return false
			}
			break
		}
		if a.s == "--" {
			i++
			break
		}
		if len(a.s) < 2 || a.s[0] != '-' {
			break
		}
		for j := 1; j < len(a.s); j++ {
			ch := a.s[j]
			switch {
			case strings.IndexByte(valued, ch) >= 0:
				var v arg
				if j+1 < len(a.s) {
					v = lit(a.s[j+1:])
				} else if i+1 < len(args) {
					i++
					v = args[i]
				} else {
					c.unknown(k.name+" -"+string(ch), "missing value")
					return false
				}
				if !visit(ch, v, false) {
					return false
				}
				j = len(a.s)
			case strings.IndexByte(flags, ch) >= 0:
				if !visit(ch, arg{}, false) {
					return false
				}
			default:
				c.unknown(k.name, "unknown option -"+string(ch))
				return false
			}
		}
	}
	for ; i < len(args); i++ {
		if !visit(0, args[i], true) {
			return false
		}
	}
	return true
}

// checkUnset: unsetting a variable or function changes nothing outside the
// shell; names are checked for subscripts, and functions it removes are
// forgotten.
func checkUnset(c *classifier, k *call) {
	ok := c.builtinArgs(k, "fvn", "", func(_ byte, v arg, operand bool) bool {
		if !operand {
			return true
		}
		if !v.static {
			c.unknown(k.name, "dynamic name")
			return false
		}
		return c.requireNames(k, []string{v.s})
	})
	for _, a := range k.args {
		delete(c.funcs, a.s)
	}
	if ok {
		c.readOnly(k)
	}
}

// checkRead: read assigns the line to variables (-a to an array); without
// a timeout or redirected input it waits for a person.
func checkRead(c *classifier, k *call) {
	timed := false
	ok := c.builtinArgs(k, "ersEN", "adinNptu", func(opt byte, v arg, operand bool) bool {
		switch {
		case operand, opt == 'a':
			return c.setsVar(k, v)
		case opt == 't':
			timed = true
		}
		return true
	})
	if !ok {
		return
	}
	if !k.ctx.fed && !timed {
		c.unbounded(k.ctx, BoundInteractiveREPL, "")
	}
	c.readOnly(k)
}

// checkMapfile: mapfile assigns lines to an array; -C runs a callback.
func checkMapfile(c *classifier, k *call) {
	ok := c.builtinArgs(k, "t", "dnOsuCc", func(opt byte, v arg, operand bool) bool {
		switch {
		case opt == 'C':
			c.construct(k.name+" -C", RiskMedium, "runs a callback")
			return false
		case operand:
			return c.setsVar(k, v)
		}
		return true
	})
	if ok {
		c.readOnly(k)
	}
}

func checkGetopts(c *classifier, k *call) {
	if len(k.args) < 2 {
		c.unknown(k.name, "no variable name")
		return
	}
	if c.setsVar(k, k.args[1]) {
		c.readOnly(k)
	}
}

// checkWait: wait -p NAME stores a process id in NAME.
func checkWait(c *classifier, k *call) {
	ok := c.builtinArgs(k, "nf", "p", func(opt byte, v arg, operand bool) bool {
		if opt == 'p' {
			return c.setsVar(k, v)
		}
		return true
	})
	if ok {
		c.readOnly(k)
	}
}

// checkPrintf: printf -v NAME assigns its output to NAME; the format is
// the first operand, so a dynamic first word could be -v.
func checkPrintf(c *classifier, k *call) {
	if len(k.args) > 0 && !k.args[0].static {
		c.unknown(k.name, "dynamic format")
		return
	}
	if len(k.args) > 0 && strings.HasPrefix(k.args[0].s, "-v") {
		name := lit(strings.TrimPrefix(k.args[0].s, "-v"))
		if name.s == "" {
			if len(k.args) < 2 {
				c.unknown(k.name+" -v", "missing variable name")
				return
			}
			name = k.args[1]
		}
		if !c.setsVar(k, name) {
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

// setSafe are the set -o options that change nothing outside the shell
// and nothing about how the classifier reads the rest of the command:
// error handling, tracing, noclobber and noglob (which only make the
// shell do less). keyword (-k) turns every NAME=value word on a line into
// environment, allexport (-a) exports every assignment, posix changes the
// grammar, histexpand and history make ! words expand to earlier command
// lines, braceexpand and interactive-comments change how words split,
// privileged and monitor change what runs.
var setSafe = wordSet(`errexit errtrace functrace noclobber noexec noglob nounset onecmd physical
	pipefail verbose xtrace notify`)

// setFlags are the single-letter set options in setSafe.
const setFlags = "eEfnCtPTuvxb"

// checkSet: set changes shell options and positional parameters.
func checkSet(c *classifier, k *call) {
	args := k.args
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.static {
			c.unknown("set", "dynamic argument may be an option")
			return
		}
		s := a.s
		if s == "--" || s == "-" {
			break
		}
		if len(s) < 2 || s[0] != '-' && s[0] != '+' {
			break // positional parameters: the rest are operands
		}
		for j := 1; j < len(s); j++ {
			switch ch := s[j]; {
			case ch == 'o':
				if i+1 >= len(args) {
					break // set -o lists the options
				}
				i++
				n := args[i]
				if !n.static || !setSafe[n.s] {
					c.construct("set "+s[:1]+"o "+n.s, RiskMedium, "shell option not known to be harmless")
					return
				}
			case ch == 'k':
				c.construct("set "+s[:1]+"k", RiskHigh, "assignments anywhere on a command line become its environment")
				return
			case ch == 'a':
				c.construct("set "+s[:1]+"a", RiskMedium, "exports every assignment")
				return
			case strings.IndexByte(setFlags, ch) < 0:
				c.unknown("set "+s, "shell option not known")
				return
			}
		}
	}
	c.readOnly(k)
}

// shoptSafe are the shopt options a read may set or unset: they change
// nothing outside the shell and nothing the classifier relies on. The
// glob options (nullglob, failglob, dotglob, globstar, nocaseglob,
// extglob) change how later words expand and split, nocasematch changes
// which branch a test takes, expand_aliases and sourcepath change what a
// name runs, extdebug and the compatibility levels change the shell's
// behaviour: none is here.
var shoptSafe = wordSet(`checkwinsize cmdhist gnu_errfmt huponexit inherit_errexit lithist
	shift_verbose checkjobs`)

// checkShopt: shopt -s/-u change options; -q and -p only query them.
func checkShopt(c *classifier, k *call) {
	setO, changes := false, false
	ok := c.builtinArgs(k, "supqo", "", func(opt byte, v arg, operand bool) bool {
		switch {
		case opt == 'o':
			setO = true
		case opt == 's' || opt == 'u':
			changes = true
		case operand:
			if !v.static {
				c.unknown("shopt", "dynamic option name")
				return false
			}
			if changes && (setO && !setSafe[v.s] || !setO && !shoptSafe[v.s]) {
				c.construct("shopt "+v.s, RiskMedium, "shell option not known to be harmless")
				return false
			}
		}
		return true
	})
	if ok {
		c.readOnly(k)
	}
}

var envTool = &tool{
	name: "env", style: styleGNUStop,
	opts: opts(
		reads(`-i|--ignore-environment -0|--null -u|--unset= -C|--chdir= --block-signal[=]
			--default-signal[=] --ignore-signal[=] --list-signal-handling -v|--debug --help --version`),
		unknowns("splits a string into a command", `-S|--split-string=`),
	),
	check: checkEnv,
}

// checkEnv: env NAME=VALUE... COMMAND runs COMMAND with the assignments.
func checkEnv(c *classifier, k *call) {
	inner := wrapped(k, 0)
	for len(inner) > 0 {
		a := inner[0]
		if !a.static {
			c.construct(c.displayWord(a, k.ctx), RiskMedium, "dynamic command word")
			return
		}
		if a.s == "-" {
			inner = inner[1:]
			continue
		}
		if !isAssignment(a.s) {
			break
		}
		if !c.envWord(a.s) {
			return
		}
		inner = inner[1:]
	}
	if len(inner) == 0 {
		c.readOnly(k)
		return
	}
	c.runInner(k, inner, k.ctx)
}

var (
	niceTool = &tool{name: "nice", style: styleGNUStop, digitOpts: true, check: wrapCheck,
		opts: opts(reads(`-n|--adjustment= --help --version`))}
	nohupTool = &tool{name: "nohup", style: styleGNUStop, check: wrapCheck,
		opts: opts(reads(`--help --version`))}
	stdbufTool = &tool{name: "stdbuf", style: styleGNUStop, check: wrapCheck,
		opts: opts(reads(`-i|--input= -o|--output= -e|--error= --help --version`))}
	setsidTool = &tool{name: "setsid", style: styleGNUStop, check: wrapCheck,
		opts: opts(reads(`-c|--ctty -f|--fork -w|--wait -h|--help -V|--version`))}
	nsenterTool = &tool{name: "nsenter", style: styleGNUStop, check: strictWrapCheck,
		opts: opts(reads(`-a|--all -t|--target= -m|--mount[=] -u|--uts[=] -i|--ipc[=] -n|--net[=]
			-p|--pid[=] -U|--user[=] -C|--cgroup[=] -T|--time[=] -S|--setuid= -G|--setgid=
			--preserve-credentials -r|--root[=] -w|--wd[=] -W|--wdns= -e|--env -F|--no-fork
			-Z|--follow-context -c|--join-cgroup --user-parent -h|--help -V|--version`))}
	timeoutTool = &tool{name: "timeout", style: styleGNUStop,
		opts: opts(reads(`-s|--signal= -k|--kill-after= --preserve-status --foreground -v|--verbose
			--help --version`)),
		check: func(c *classifier, k *call) {
			inner := wrapped(k, 1)
			if inner == nil {
				c.readOnly(k)
				return
			}
			ctx := k.ctx
			ctx.timed = true
			c.runInner(k, inner, ctx)
		},
	}
	chrootTool = &tool{name: "chroot", style: styleGNUStop,
		opts: opts(reads(`--userspec= --groups= --skip-chdir --help --version`)),
		check: func(c *classifier, k *call) {
			if inner := wrapped(k, 1); inner != nil {
				c.strict++
				c.runInner(k, inner, k.ctx)
				c.strict--
				return
			}
			if len(k.p.ops) == 0 {
				c.readOnly(k)
				return
			}
			c.unknown(k.name, "runs an interactive shell")
		},
	}
	ioniceTool = &tool{name: "ionice", style: styleGNUStop,
		opts: opts(reads(`-c|--class= -n|--classdata= -p|--pid= -P|--pgid= -u|--uid= -t|--ignore
			-h|--help -V|--version`)),
		check: func(c *classifier, k *call) {
			setting := k.p.hasAny("class", "classdata")
			target := k.p.hasAny("pid", "pgid", "uid")
			switch {
			case target && setting:
				c.writer("ionice", RiskLow, "changes a running process's I/O priority")
			case target && len(k.p.ops) > 0:
				// More process ids follow -p.
				c.read("ionice -p", "shows I/O priorities")
			case target:
				c.readOnly(k)
			default:
				c.wrap(k, 0)
			}
		},
	}
	tasksetTool = &tool{name: "taskset", style: styleGNUStop,
		opts: opts(reads(`-a|--all-tasks -p|--pid -c|--cpu-list -h|--help -V|--version`)),
		check: func(c *classifier, k *call) {
			n := len(k.p.ops)
			switch {
			case k.p.has("pid") && n == 1:
				c.read("taskset -p", "shows a process's CPU affinity")
			case k.p.has("pid") && n > 1:
				c.writer("taskset -p", RiskLow, "changes a running process's CPU affinity")
			case n < 2:
				c.readOnly(k)
			default:
				c.wrap(k, 1)
			}
		},
	}
	timeTool = &tool{name: "time", style: styleGNUStop, check: wrapCheck,
		opts: opts(
			reads(`-a|--append -f|--format= -p|--portability -v|--verbose -q|--quiet --help -V|--version`),
			writes(RiskLow, "writes a file", `-o|--output=`),
		)}
)

// checkCommand: command -v/-V look a name up; command [-p] CMD runs CMD
// bypassing functions.
func checkCommand(c *classifier, k *call) {
	i := 0
	for ; i < len(k.args); i++ {
		a := k.args[i]
		if !a.static {
			c.unknown("command", "dynamic argument")
			return
		}
		if a.s == "--" {
			i++
			break
		}
		if !strings.HasPrefix(a.s, "-") || a.s == "-" {
			break
		}
		for _, ch := range a.s[1:] {
			switch ch {
			case 'v', 'V':
				c.read("command -v", "looks a name up")
				return
			case 'p':
			default:
				c.unknown("command", "unknown option -"+string(ch))
				return
			}
		}
	}
	if i < len(k.args) {
		c.runInner(k, k.args[i:], k.ctx)
		return
	}
	c.readOnly(k)
}

// checkBuiltin: builtin, busybox and the like run the command they name.
func checkBuiltin(c *classifier, k *call) {
	if len(k.args) == 0 {
		c.readOnly(k)
		return
	}
	if !k.args[0].static || strings.HasPrefix(k.args[0].s, "-") {
		c.unknown(k.name+" "+c.displayWord(k.args[0], k.ctx), "option not known to be read-only")
		return
	}
	c.runInner(k, k.args, k.ctx)
}

// xargs reads words from its input and runs a command with them appended
// or, with -I, pasted into the command's words wherever the replacement
// string occurs.
var xargsTool = &tool{
	name: "xargs", style: styleGNUStop,
	opts: opts(
		reads(`-0|--null -a|--arg-file= -d|--delimiter= -E= -e|--eof[=] -I= -i|--replace[=]
			-L|--max-lines= -l[=] -n|--max-args= -P|--max-procs= -r|--no-run-if-empty
			-s|--max-chars= --show-limits -t|--verbose -x|--exit --help --version`),
		readsVal(xargsSlotVar, `--process-slot-var=`),
		unknowns("asks a person before running each command", `-p|--interactive -o|--open-tty`),
	),
	check: checkXargs,
}

// xargsSlotVar: --process-slot-var=NAME sets NAME in every child's
// environment.
func xargsSlotVar(c *classifier, k *call, u *optUse) bool {
	return u.val.static && c.envWord(u.val.s+"=0")
}

func checkXargs(c *classifier, k *call) {
	inner := wrapped(k, 0)
	if inner == nil {
		c.read("xargs", "runs echo")
		return
	}
	ctx := k.ctx
	ctx.piped, ctx.fed = false, true
	repl := ""
	if u := k.p.last("I"); u != nil {
		repl = u.val.s
	}
	if u := k.p.last("replace"); u != nil {
		repl = "{}"
		if u.hasVal {
			repl = u.val.s
		}
	}
	if repl != "" || k.p.has("I") {
		if repl == "" {
			c.unknown("xargs -I", "empty replacement string")
			return
		}
		c.runInner(k, substituted(inner, repl, false), ctx)
		return
	}
	ctx.extra = true
	c.runInner(k, inner, ctx)
}

var watchTool = &tool{
	name: "watch", style: styleGNUStop,
	opts: opts(reads(`-n|--interval= -q|--equexit= -d|--differences[=] -t|--no-title -b|--beep
		-e|--errexit -g|--chgexit -c|--color -C|--no-color -p|--precise -w|--no-wrap -r|--no-rerun
		-f|--follow -x|--exec -h|--help -v|--version`)),
	check: checkWatch,
}

func checkWatch(c *classifier, k *call) {
	inner := wrapped(k, 0)
	if inner == nil {
		c.unknown(k.name, "no command")
		return
	}
	if k.p.has("exec") {
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
	c.shScript(script, k.ctx.nested())
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

// shellOptSafe are the single-letter options of a shell's invocation that
// neither run startup code the classifier cannot see nor change how the
// command string is read: -i and -l (interactive and login shells) read
// ~/.bashrc and the profile files, -k and -a are set's keyword and
// allexport, -H turns history expansion on, -B and -m change what words
// and jobs do.
const shellOptSafe = "bCeEfnprtTuvxP"

// checkShell handles sh, bash and friends: -c runs a command string, which
// is parsed and classified in turn; a script file is unknown; with neither,
// the shell reads commands from stdin. zsh and ksh read a different
// grammar than the classifier models, so their command strings are
// unknown.
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
			case "--norc", "--noprofile", "--noediting", "--restricted", "--verbose", "--no-rcs":
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
				i++
				if i >= len(k.args) || !k.args[i].static ||
					ch == 'o' && !setSafe[k.args[i].s] || ch == 'O' && !shoptSafe[k.args[i].s] {
					c.unknown(k.name+" "+s, "shell option not known to be harmless")
					return
				}
			case ch == 'k':
				c.construct(k.name+" -k", RiskHigh, "assignments anywhere on a command line become its environment")
				return
			case strings.ContainsRune(shellOptSafe, ch):
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
	case hasC && (k.name == "zsh" || k.name == "ksh" || k.name == "mksh"):
		c.unknown(k.name+" -c", "this shell's grammar is not one the classifier reads")
	case hasC:
		ctx := k.ctx.nested()
		ctx.extra = false
		switch k.name {
		case "bash":
			c.scriptIn(rest[0].s, ctx, DialectBash)
		case "dash":
			c.scriptIn(rest[0].s, ctx, DialectPOSIX)
		default:
			// sh is dash on Debian and bash elsewhere, and busybox ash
			// takes some bash syntax: the string must be read-only read
			// either way.
			c.shScript(rest[0].s, ctx)
		}
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

// versionFlags are each interpreter's options that print its version and
// exit, from their manuals. Other spellings are not: "python3 version"
// runs a file named version, tclsh has no such option (its first word is
// a script), ruby -v runs the program on its standard input when given
// one, and java -showversion goes on to run a class.
var versionFlags = map[string]string{
	"python": "-V --version -VV", "python2": "-V --version", "python3": "-V --version -VV",
	"perl": "-v --version", "node": "-v --version", "nodejs": "-v --version",
	"ruby": "--version", "irb": "-v --version", "php": "-v --version", "lua": "-v",
	"luajit": "-v", "Rscript": "--version", "R": "--version", "expect": "-v",
	"deno": "--version -V", "bun": "--version -v", "pwsh": "-v --version -Version",
	"jshell": "--version -version", "julia": "-v --version", "bc": "-v --version",
	"dc": "-V --version", "java": "-version --version",
}

// checkInterpreter handles python, perl, node and other language runtimes:
// they can do anything, so they are never read-only; only a version query
// is: the interpreter with exactly one of its own version options and
// nothing on its standard input (several read and run code from it
// whatever the options say). A bare interpreter waits for a person.
func checkInterpreter(c *classifier, k *call) {
	if len(k.args) == 1 && k.args[0].static && hasWord(versionFlags[k.name], k.args[0].s) {
		if k.ctx.fed && !k.ctx.null {
			c.construct(k.name+" "+k.args[0].s, RiskHigh, "an interpreter with input on its standard input may run it as code")
			return
		}
		c.read(k.name+" "+k.args[0].s, "version query")
		return
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

// matchOneOf reports whether name is exactly one of names.
func matchOneOf(name string, names ...string) bool {
	for _, n := range names {
		if name == n {
			return true
		}
	}
	return false
}

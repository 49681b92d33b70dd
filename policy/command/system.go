package command

import "strings"

// systemCheckers cover init, logging, kernel and monitoring tools.
var systemCheckers = map[string]checkFunc{
	"systemctl":       sub(&systemctlTool),
	"service":         checkService,
	"journalctl":      checkJournalctl,
	"dmesg":           checkDmesg,
	"date":            checkDate,
	"hostname":        checkHostname,
	"sysctl":          checkSysctl,
	"timedatectl":     sub(&timedatectlTool),
	"hostnamectl":     sub(&hostnamectlTool),
	"localectl":       sub(&localectlTool),
	"loginctl":        sub(&loginctlTool),
	"networkctl":      sub(&networkctlTool),
	"resolvectl":      sub(&resolvectlTool),
	"busctl":          sub(&busctlTool),
	"coredumpctl":     sub(&coredumpctlTool),
	"systemd-analyze": sub(&systemdAnalyzeTool),
	"mount":           checkMount,
	"crontab":         checkCrontab,
	"top":             checkTop,
	"htop":            checkHtop,
	"btop":            checkHtop,
	"atop":            checkHtop,
	"glances":         checkHtop,
	"nmon":            checkHtop,
	"vmstat":          checkInterval("pS"),
	"iostat":          checkInterval("jogf"),
	"mpstat":          checkInterval("PIoN"),
	"pidstat":         checkPidstat,
	"sar":             checkSar,
	"free":            checkFree,
	"iotop":           checkBatchCount,
	"slabtop":         checkSlabtop,
	"systemd-cgtop":   checkBatchCount,
	"lsof":            checkLsof,
	"fuser":           checkFuser,
	"findmnt":         checkFindmnt,
	"blkid":           checkBlkid,
	"sensors":         checkSensors,
	"chage":           checkChage,
	"smartctl":        checkSmartctl,
	"mdadm":           checkMdadm,
	"chronyc":         sub(&chronycTool),
	"supervisorctl":   sub(&supervisorctlTool),
	"nginx":           checkNginx,
	"apachectl":       checkApachectl,
	"apache2ctl":      checkApachectl,
	"auditctl":        checkAuditctl,
}

var systemctlTool = subTool{
	spec: optSpec{
		shortArg: "tpPsnoHM",
		longArg: []string{"type", "property", "what", "job-mode", "signal", "kill-whom", "kill-value",
			"root", "image", "image-policy", "host", "machine", "state", "lines", "output",
			"preset-mode", "timestamp", "message", "boot-loader-menu", "boot-loader-entry",
			"reboot-argument", "drop-in", "when", "check-inhibitors", "legend"},
	},
	none: rd,
	verbs: map[string]verb{
		"status": rd, "show": rd, "cat": rd, "is-active": rd, "is-enabled": rd, "is-failed": rd,
		"is-system-running": rd, "list-units": rd, "list-unit-files": rd, "list-timers": rd,
		"list-sockets": rd, "list-dependencies": rd, "list-jobs": rd, "list-machines": rd,
		"list-automounts": rd, "list-paths": rd, "get-default": rd, "show-environment": rd,
		"log-level": ck(noMoreOperands(0, RiskMedium)), "log-target": ck(noMoreOperands(0, RiskMedium)),
		"service-watchdogs": ck(noMoreOperands(0, RiskMedium)),
		"start":             wrMed, "restart": wrMed, "reload": wrMed, "try-restart": wrMed,
		"reload-or-restart": wrMed, "try-reload-or-restart": wrMed, "condrestart": wrMed,
		"condreload": wrMed, "force-reload": wrMed, "enable": wrMed, "reenable": wrMed,
		"preset": wrMed, "preset-all": wrMed, "unmask": wrMed, "link": wrMed, "revert": wrMed,
		"set-property": wrMed, "set-default": wrMed, "set-environment": wrMed,
		"unset-environment": wrMed, "import-environment": wrMed, "daemon-reload": wrMed,
		"daemon-reexec": wrMed, "clean": wrMed, "freeze": wrMed, "thaw": wrMed,
		"reset-failed": wrLow, "add-wants": wrMed, "add-requires": wrMed, "bind": wrMed,
		"mount-image": wrMed, "edit": ck(checkSystemctlEdit),
		"stop": wrHigh, "condstop": wrHigh, "kill": wrHigh, "mask": wrHigh, "disable": wrHigh,
		"isolate": wrHigh, "reboot": wrHigh, "soft-reboot": wrHigh, "poweroff": wrHigh,
		"halt": wrHigh, "kexec": wrHigh, "emergency": wrHigh, "rescue": wrHigh,
		"default": wrHigh, "switch-root": wrHigh, "suspend": wrHigh, "hibernate": wrHigh,
		"hybrid-sleep": wrHigh, "suspend-then-hibernate": wrHigh, "exit": wrHigh,
	},
}

func checkSystemctlEdit(c *classifier, k *call) {
	c.writer(k.name, RiskMedium, "known writer")
	c.unbounded(k.ctx, BoundPager, "")
}

// checkService: the SysV service wrapper; only status and --status-all read.
func checkService(c *classifier, k *call) {
	if len(k.args) == 1 && k.args[0].static && k.args[0].s == "--status-all" {
		c.read("service --status-all", "read-only")
		return
	}
	if len(k.args) >= 2 && k.args[1].static {
		switch v := k.args[1].s; v {
		case "status":
			c.read("service status", "read-only")
			return
		case "stop", "force-stop":
			c.writer("service "+v, RiskHigh, "known writer")
			return
		default:
			c.writer("service "+v, RiskMedium, "known writer")
			return
		}
	}
	c.unknown("service", "no action known to be read-only")
}

// journalWriters are journalctl options that change the journal; they are
// matched as getopt_long abbreviations, anywhere on the line.
var journalWriters = []string{"vacuum-size", "vacuum-time", "vacuum-files", "rotate", "flush", "sync",
	"relinquish-var", "smart-relinquish-var", "setup-keys", "update-catalog", "cursor-file"}

// journalLong are journalctl's own long options that an abbreviation check
// must not mistake for a writer ("--cursor" is not "--cursor-file").
var journalLong = []string{"since", "until", "unit", "user-unit", "user", "system", "boot", "lines",
	"no-pager", "output", "output-fields", "priority", "grep", "case-sensitive", "identifier",
	"exclude-identifier", "directory", "file", "root", "image", "machine", "cursor", "after-cursor",
	"show-cursor", "reverse", "utc", "catalog", "quiet", "merge", "all", "full", "no-full",
	"no-hostname", "pager-end", "dmesg", "list-boots", "disk-usage", "header", "verify",
	"fields", "field", "facility", "namespace", "new-id128", "list-catalog", "dump-catalog",
	"no-tail", "boot-id", "invocation", "list-invocations", "truncate-newline", "interval"}

var journalSpec = optSpec{shortArg: "utTpSUogDMcFI", longArg: []string{"unit", "user-unit", "identifier",
	"exclude-identifier", "priority", "since", "until", "output", "grep", "directory", "machine",
	"cursor", "after-cursor", "field", "file", "root", "image", "output-fields", "facility", "namespace"}}

// checkJournalctl: journalctl reads unless it vacuums, rotates, flushes or
// writes a cursor file; -f/--follow never ends whatever -n or --since say.
func checkJournalctl(c *classifier, k *call) {
	for _, a := range k.args {
		if !a.static {
			c.unknown("journalctl", "dynamic argument")
			return
		}
		if !strings.HasPrefix(a.s, "--") || len(a.s) == 2 {
			continue
		}
		name := strings.SplitN(a.s[2:], "=", 2)[0]
		if !matchOneOf(name, journalLong...) && matchesAnyLong(name, journalWriters...) {
			c.writer("journalctl "+a.s, RiskMedium, "changes the journal")
			return
		}
	}
	f, counted, pager := newFollow(), false, false
	s := scanOpts(&journalSpec, k.args)
	for t, more := s.next(); more; t, more = s.next() {
		switch t.kind {
		case tokShort:
			switch t.name {
			case "f":
				f.dropShort(c, k, t.i, "f", "utTpSUogDMcFI")
			case "n":
				counted = true
			}
		case tokLong:
			switch {
			case t.name == "lines":
				counted = true
			case t.name == "no-pager":
				pager = true
			case len(t.name) >= 2 && isPrefixOf(t.name, "follow"):
				f.dropArg(t.i)
			}
		}
	}
	var extra edit
	if !counted {
		extra.appendText = "-n " + rewriteLines
	}
	if !pager {
		extra.appendText = strings.TrimSpace(extra.appendText + " --no-pager")
	}
	f.report(c, k, extra)
	c.readOnly(k)
}

var dmesgSpec = optSpec{shortArg: "flnsFS", longArg: []string{"facility", "level", "console-level", "buffer-size", "file", "time-format", "since", "until"}}

// checkDmesg: clearing the ring buffer or the console level writes; -w
// follows.
func checkDmesg(c *classifier, k *call) {
	f := newFollow()
	s := scanOpts(&dmesgSpec, k.args)
	for t, more := s.next(); more; t, more = s.next() {
		switch t.kind {
		case tokDynamic:
			c.unknown("dmesg", "dynamic argument")
			return
		case tokShort:
			switch t.name {
			case "c", "C", "D", "E", "n":
				c.writer("dmesg -"+t.name, RiskMedium, "changes the kernel log")
				return
			case "w", "W":
				f.dropShort(c, k, t.i, "wW", "flnsFS")
			}
		case tokLong:
			switch {
			case matchesAnyLong(t.name, "read-clear", "clear", "console-off", "console-on", "console-level") && !matchOneOf(t.name, "color", "ctime"):
				c.writer("dmesg --"+t.name, RiskMedium, "changes the kernel log")
				return
			case len(t.name) >= 3 && matchesAnyLong(t.name, "follow", "follow-new"):
				f.dropArg(t.i)
			}
		}
	}
	f.report(c, k, edit{})
	c.readOnly(k)
}

var dateSpec = optSpec{shortArg: "dfrs", shortOptArg: "I", longArg: []string{"date", "file", "reference", "set", "rfc-3339", "resolution"}}

// checkDate: -s/--set or an MMDDhhmm operand sets the clock.
func checkDate(c *classifier, k *call) {
	s := scanOpts(&dateSpec, k.args)
	for t, more := s.next(); more; t, more = s.next() {
		switch t.kind {
		case tokOperand:
			if !t.valStatic || !strings.HasPrefix(t.val, "+") {
				c.writer("date", RiskMedium, "sets the clock")
				return
			}
			continue
		case tokShort:
			switch t.name {
			case "s":
				c.writer("date -s", RiskMedium, "sets the clock")
				return
			case "d", "f", "r", "I", "u", "R":
				continue
			}
		case tokLong:
			switch {
			case len(t.name) >= 2 && isPrefixOf(t.name, "set"):
				c.writer("date --set", RiskMedium, "sets the clock")
				return
			case matchOneOf(t.name, "date", "file", "reference", "utc", "universal", "rfc-email",
				"rfc-3339", "iso-8601", "debug", "resolution", "rfc-2822"):
				continue
			}
		}
		c.badOption(k, t)
		return
	}
	c.readOnly(k)
}

// checkHostname: an operand, -F or -b sets the host name.
func checkHostname(c *classifier, k *call) {
	for _, a := range k.args {
		if !a.static {
			c.unknown("hostname", "dynamic argument")
			return
		}
		switch a.s {
		case "-f", "-s", "-i", "-I", "-d", "-a", "-A", "-y", "-v", "--fqdn", "--long", "--short",
			"--ip-address", "--ip-addresses", "--all-ip-addresses", "--all-fqdns", "--domain",
			"--alias", "--yp", "--nis", "--verbose":
			continue
		}
		c.writer("hostname", RiskMedium, "sets the host name")
		return
	}
	c.readOnly(k)
}

// checkSysctl: -w, -p, --system, --load or name=value set kernel parameters.
func checkSysctl(c *classifier, k *call) {
	for _, a := range k.args {
		if !a.static {
			c.unknown("sysctl", "dynamic argument")
			return
		}
		s := a.s
		switch {
		case strings.Contains(s, "="):
			c.writer("sysctl", RiskHigh, "sets a kernel parameter")
			return
		case strings.HasPrefix(s, "--"):
			if !matchOneOf(s[2:], "all", "values", "names", "ignore", "binary", "pattern", "deprecated", "help", "version") {
				c.writer("sysctl "+s, RiskHigh, "sets kernel parameters")
				return
			}
		case strings.HasPrefix(s, "-"):
			if strings.ContainsAny(s, "wpf") {
				c.writer("sysctl "+s, RiskHigh, "sets kernel parameters")
				return
			}
		}
	}
	c.readOnly(k)
}

// ctlTool returns a subcommand tool whose listed verbs read and whose other
// verbs write (the systemd *ctl pattern).
func ctlTool(none verb, reads ...string) subTool {
	t := subTool{none: none, verbs: make(map[string]verb, len(reads))}
	for _, r := range reads {
		t.verbs[r] = rd
	}
	return t
}

var (
	timedatectlTool = withWriters(ctlTool(rd, "status", "show", "list-timezones", "timesync-status", "show-timesync"),
		RiskMedium, "set-time", "set-timezone", "set-local-rtc", "set-ntp", "ntp-servers", "revert")
	hostnamectlTool = withVerbs(withWriters(ctlTool(rd, "status", "show"), RiskMedium, "set-hostname", "set-icon-name",
		"set-chassis", "set-deployment", "set-location"), map[string]verb{
		"hostname": ck(noMoreOperands(0, RiskMedium)), "icon-name": ck(noMoreOperands(0, RiskMedium)),
		"chassis": ck(noMoreOperands(0, RiskMedium)), "deployment": ck(noMoreOperands(0, RiskMedium)),
		"location": ck(noMoreOperands(0, RiskMedium)),
	})
	localectlTool = withWriters(ctlTool(rd, "status", "list-locales", "list-keymaps", "list-x11-keymap-models",
		"list-x11-keymap-layouts", "list-x11-keymap-variants", "list-x11-keymap-options"),
		RiskMedium, "set-locale", "set-keymap", "set-x11-keymap")
	loginctlTool = withWriters(ctlTool(rd, "list-sessions", "list-users", "list-seats", "session-status",
		"show-session", "user-status", "show-user", "seat-status", "show-seat"),
		RiskMedium, "activate", "lock-session", "unlock-session", "lock-sessions", "unlock-sessions",
		"terminate-session", "kill-session", "enable-linger", "disable-linger", "terminate-user",
		"kill-user", "attach", "flush-devices", "terminate-seat")
	networkctlTool = withWriters(ctlTool(rd, "list", "status", "lldp", "label", "cat"),
		RiskHigh, "up", "down", "renew", "forcerenew", "reconfigure", "reload", "delete", "edit")
	resolvectlTool = withVerbs(withWriters(ctlTool(rd, "status", "query", "service", "openpgp", "tlsa",
		"statistics", "show-cache", "show-server-state"), RiskMedium, "flush-caches", "reset-statistics",
		"reset-server-features", "revert"), map[string]verb{
		"dns": ck(noMoreOperands(1, RiskMedium)), "domain": ck(noMoreOperands(1, RiskMedium)),
		"default-route": ck(noMoreOperands(1, RiskMedium)), "llmnr": ck(noMoreOperands(1, RiskMedium)),
		"mdns": ck(noMoreOperands(1, RiskMedium)), "dnssec": ck(noMoreOperands(1, RiskMedium)),
		"dnsovertls": ck(noMoreOperands(1, RiskMedium)), "nta": ck(noMoreOperands(1, RiskMedium)),
		"log-level": ck(noMoreOperands(0, RiskMedium)),
	})
	busctlTool = withVerbs(withWriters(ctlTool(rd, "list", "status", "tree", "introspect", "get-property", "help"),
		RiskMedium, "call", "set-property", "emit", "wait"), map[string]verb{
		"monitor": ck(streamVerb), "capture": ck(streamVerb),
	})
	coredumpctlTool = withVerbs(ctlTool(rd, "list", "info"), map[string]verb{
		"dump": ck(checkCoredumpDump), "debug": ck(checkInteractive), "gdb": ck(checkInteractive),
	})
	systemdAnalyzeTool = withVerbs(ctlTool(rd, "time", "blame", "critical-chain", "plot", "dot", "dump",
		"cat-config", "unit-files", "unit-paths", "exit-status", "capability", "condition",
		"syscall-filter", "filesystems", "calendar", "timestamp", "timespan", "security",
		"inspect-elf", "verify", "architectures", "smbios11", "pcrs", "image-policy", "has-tpm2"),
		map[string]verb{
			"log-level": ck(noMoreOperands(0, RiskMedium)), "log-target": ck(noMoreOperands(0, RiskMedium)),
			"service-watchdogs": ck(noMoreOperands(0, RiskMedium)),
		})
	chronycTool = withWriters(ctlTool(rd, "tracking", "sources", "sourcestats", "activity", "clients",
		"ntpdata", "serverstats", "selectdata", "authdata", "rtcdata", "smoothing", "waitsync"),
		RiskMedium, "makestep", "burst", "online", "offline", "add", "delete", "reload", "reselect",
		"settime", "cyclelogs", "dump", "writertc", "trimrtc", "shutdown")
	supervisorctlTool = withWriters(ctlTool(rd, "status", "avail", "pid", "version", "help", "maintail"),
		RiskMedium, "start", "stop", "restart", "reload", "reread", "update", "add", "remove", "clear",
		"signal", "shutdown", "fg")
)

// withWriters adds verbs that write with the given risk.
func withWriters(t subTool, risk Risk, names ...string) subTool {
	for _, n := range names {
		t.verbs[n] = verb{class: ruleWrite, risk: risk}
	}
	return t
}

// withVerbs adds verbs with their own rules.
func withVerbs(t subTool, more map[string]verb) subTool {
	for n, v := range more {
		t.verbs[n] = v
	}
	return t
}

// streamVerb reads but never ends by itself (busctl monitor, ...).
func streamVerb(c *classifier, k *call) {
	c.unbounded(k.ctx, BoundUnboundedStream, "")
	c.readOnly(k)
}

// checkInteractive is a subcommand that opens an interactive session.
func checkInteractive(c *classifier, k *call) {
	c.unknown(k.name, "interactive session")
	c.unbounded(k.ctx, BoundInteractiveREPL, "")
}

func checkCoredumpDump(c *classifier, k *call) {
	for _, a := range k.args {
		if !a.static || a.s == "-o" || strings.HasPrefix(a.s, "--output") {
			c.writer(k.name+" -o", RiskLow, "writes a file")
			return
		}
	}
	c.readOnly(k)
}

// checkMount: with no operands mount lists what is mounted.
func checkMount(c *classifier, k *call) {
	for i := 0; i < len(k.args); i++ {
		a := k.args[i]
		if !a.static {
			c.unknown("mount", "dynamic argument")
			return
		}
		switch a.s {
		case "-l", "--show-labels", "-v", "--verbose", "-h", "--help", "-V", "--version":
			continue
		case "-t", "--types":
			i++
			continue
		}
		c.writer("mount", RiskHigh, "mounts a file system")
		return
	}
	c.readOnly(k)
}

// checkCrontab: only -l (for a user) reads; crontab FILE or stdin installs.
func checkCrontab(c *classifier, k *call) {
	list := false
	for i := 0; i < len(k.args); i++ {
		a := k.args[i]
		if !a.static {
			c.unknown("crontab", "dynamic argument")
			return
		}
		switch a.s {
		case "-l":
			list = true
		case "-u":
			i++
		case "-e":
			c.writer("crontab -e", RiskMedium, "edits the crontab")
			c.unbounded(k.ctx, BoundPager, "")
			return
		case "-r", "-ri", "-ir":
			c.writer("crontab -r", RiskHigh, "removes the crontab")
			return
		default:
			c.writer("crontab", RiskMedium, "installs a crontab")
			return
		}
	}
	if !list {
		c.writer("crontab", RiskMedium, "installs a crontab from stdin")
		return
	}
	c.read("crontab -l", "read-only")
}

var topSpec = optSpec{shortArg: "dnpuUoOsE", shortOptArg: "w"}

// checkTop: top only ends by itself with an iteration count (-n).
func checkTop(c *classifier, k *call) {
	iterations, batch := false, false
	s := scanOpts(&topSpec, k.args)
	for t, more := s.next(); more; t, more = s.next() {
		switch {
		case t.kind == tokShort && t.name == "n":
			iterations = true
		case t.kind == tokShort && t.name == "b":
			batch = true
		case t.kind == tokDynamic:
			c.unknown("top", "dynamic argument")
			return
		}
	}
	if !iterations {
		e := edit{insertAfter: -1, insert: "-b -n 1"}
		if batch {
			e = edit{insertAfter: -1, appendText: "-n 1"}
		}
		c.unbounded(k.ctx, BoundUnboundedStream, c.rebuild(k, e))
	}
	c.readOnly(k)
}

// checkHtop: full-screen monitors never end; top -b -n 1 is the bounded
// equivalent.
func checkHtop(c *classifier, k *call) {
	c.unbounded(k.ctx, BoundUnboundedStream, c.splice(k, "top -b -n 1"))
	c.readOnly(k)
}

// checkInterval returns a checker for tools taking [interval [count]]
// operands: an interval without a count never ends. valued lists short
// options taking a value.
func checkInterval(valued string) checkFunc {
	spec := optSpec{shortArg: valued}
	return func(c *classifier, k *call) {
		numbers, last := 0, -1
		s := scanOpts(&spec, k.args)
		for t, more := s.next(); more; t, more = s.next() {
			switch t.kind {
			case tokDynamic:
				c.unknown(k.name, "dynamic argument")
				return
			case tokOperand:
				if isNumber(t.val) || strings.Count(t.val, ".") == 1 && isNumber(strings.Replace(t.val, ".", "", 1)) {
					numbers++
					last = t.i
				}
			}
		}
		if numbers == 1 {
			c.unbounded(k.ctx, BoundUnboundedStream, c.rebuild(k, edit{insertAfter: last, insert: "5"}))
		}
		c.readOnly(k)
	}
}

// checkPidstat: like checkInterval, but -e runs a program.
func checkPidstat(c *classifier, k *call) {
	for _, a := range k.args {
		if a.static && a.s == "-e" {
			c.unknown("pidstat -e", "runs a program")
			return
		}
	}
	checkInterval("pGTU")(c, k)
}

// checkSar: -o writes a data file; an interval without a count never ends.
func checkSar(c *classifier, k *call) {
	for _, a := range k.args {
		if a.static && len(a.s) > 1 && a.s[0] == '-' && a.s[1] != '-' && strings.ContainsRune(a.s, 'o') {
			c.writer("sar -o", RiskLow, "writes a data file")
			return
		}
	}
	checkInterval("fsePinIm")(c, k)
}

// checkFree: -s repeats forever unless -c counts.
func checkFree(c *classifier, k *call) {
	seconds, count := false, false
	for _, a := range k.args {
		if !a.static {
			continue
		}
		switch {
		case a.s == "-s" || strings.HasPrefix(a.s, "--seconds"):
			seconds = true
		case a.s == "-c" || strings.HasPrefix(a.s, "--count"):
			count = true
		}
	}
	if seconds && !count {
		c.unbounded(k.ctx, BoundUnboundedStream, "")
	}
	c.readOnly(k)
}

// checkBatchCount: iotop and systemd-cgtop end with -n/--iterations.
func checkBatchCount(c *classifier, k *call) {
	for _, a := range k.args {
		if a.static && (a.s == "-n" || strings.HasPrefix(a.s, "--iter") || len(a.s) > 2 && a.s[0] == '-' && a.s[1] != '-' && strings.ContainsRune(a.s, 'n')) {
			c.readOnly(k)
			return
		}
	}
	c.unbounded(k.ctx, BoundUnboundedStream, "")
	c.readOnly(k)
}

// checkSlabtop: -o prints once.
func checkSlabtop(c *classifier, k *call) {
	streamsUnless(c, k, "-o", "-o", "--once")
}

// checkLsof: -r/+r repeat forever.
func checkLsof(c *classifier, k *call) {
	for _, a := range k.args {
		if a.static && (strings.HasPrefix(a.s, "-r") || strings.HasPrefix(a.s, "+r")) {
			c.unbounded(k.ctx, BoundUnboundedStream, "")
		}
	}
	c.readOnly(k)
}

// checkFuser: -k kills the processes it finds.
func checkFuser(c *classifier, k *call) {
	for _, a := range k.args {
		if !a.static || a.s == "--kill" || len(a.s) > 1 && a.s[0] == '-' && a.s[1] != '-' && strings.ContainsRune(a.s, 'k') {
			c.writer("fuser -k", RiskHigh, "kills processes")
			return
		}
	}
	c.readOnly(k)
}

// checkFindmnt: --poll watches forever.
func checkFindmnt(c *classifier, k *call) {
	for _, a := range k.args {
		if a.static && (a.s == "-p" || strings.HasPrefix(a.s, "--poll")) {
			c.unbounded(k.ctx, BoundUnboundedStream, "")
		}
	}
	c.readOnly(k)
}

// checkBlkid: -g garbage-collects the cache file.
func checkBlkid(c *classifier, k *call) {
	for _, a := range k.args {
		if !a.static || a.s == "-g" || a.s == "--garbage-collect" {
			c.writer("blkid -g", RiskLow, "rewrites the cache")
			return
		}
	}
	c.readOnly(k)
}

// checkSensors: -s sets limits.
func checkSensors(c *classifier, k *call) {
	for _, a := range k.args {
		if !a.static || a.s == "-s" || a.s == "--set" {
			c.writer("sensors -s", RiskMedium, "sets limits")
			return
		}
	}
	c.readOnly(k)
}

// checkChage: only -l lists; everything else changes password ageing.
func checkChage(c *classifier, k *call) {
	if len(k.args) > 0 && k.args[0].static && (k.args[0].s == "-l" || k.args[0].s == "--list") {
		c.read("chage -l", "read-only")
		return
	}
	c.writer("chage", RiskMedium, "known writer")
}

// checkSmartctl: information, health and logs read; tests and settings write.
func checkSmartctl(c *classifier, k *call) {
	for i := 0; i < len(k.args); i++ {
		a := k.args[i]
		if !a.static {
			c.unknown("smartctl", "dynamic argument")
			return
		}
		switch a.s {
		case "-a", "-A", "-i", "-H", "-x", "-c", "-j", "--all", "--info", "--health", "--xall",
			"--capabilities", "--attributes", "--json", "--scan", "--scan-open", "-q", "--quietmode":
			continue
		case "-l", "--log", "-d", "--device", "-n", "--nocheck", "-f", "--format":
			i++
			continue
		}
		if strings.HasPrefix(a.s, "-") {
			c.writer("smartctl "+a.s, RiskMedium, "changes drive settings or starts a test")
			return
		}
	}
	c.readOnly(k)
}

// checkMdadm: --detail, --examine and --query read.
func checkMdadm(c *classifier, k *call) {
	for _, a := range k.args {
		if !a.static {
			c.unknown("mdadm", "dynamic argument")
			return
		}
		switch a.s {
		case "-D", "--detail", "-E", "--examine", "-Q", "--query", "--detail-platform":
			c.read("mdadm "+a.s, "read-only")
			return
		}
		if strings.HasPrefix(a.s, "-") && a.s != "--scan" && a.s != "-s" && a.s != "-v" && a.s != "--verbose" && a.s != "-b" && a.s != "--brief" {
			break
		}
	}
	c.writer("mdadm", RiskHigh, "changes RAID arrays")
}

// checkNginx: -t/-T test and dump configuration; -s signals the server and
// a bare nginx starts one.
func checkNginx(c *classifier, k *call) {
	test := false
	for i := 0; i < len(k.args); i++ {
		a := k.args[i]
		if !a.static {
			c.unknown("nginx", "dynamic argument")
			return
		}
		switch a.s {
		case "-t", "-T", "-v", "-V", "-q", "-tq", "-qt", "-h", "-?":
			test = true
		case "-c", "-p", "-g", "-e":
			i++
		default:
			c.writer("nginx "+a.s, RiskMedium, "signals or starts the server")
			return
		}
	}
	if !test {
		c.writer("nginx", RiskMedium, "starts the server")
		return
	}
	c.read("nginx -t", "tests the configuration")
}

// checkApachectl: configtest, status and listings read; anything else is
// passed to httpd, which starts or signals the server.
func checkApachectl(c *classifier, k *call) {
	mode := false
	for i := 0; i < len(k.args); i++ {
		a := k.args[i]
		if !a.static {
			c.unknown(k.name, "dynamic argument")
			return
		}
		switch a.s {
		case "-t", "configtest", "-S", "-M", "-l", "-L", "-v", "-V", "status", "fullstatus":
			mode = true
			continue
		case "-D":
			if i+1 < len(k.args) && k.args[i+1].static && strings.HasPrefix(k.args[i+1].s, "DUMP_") {
				i++
				continue
			}
		}
		c.writer(k.name+" "+a.s, RiskMedium, "controls the server")
		return
	}
	if !mode {
		c.writer(k.name, RiskMedium, "starts the server")
		return
	}
	c.read(k.name, "tests the configuration")
}

// checkAuditctl: -l and -s list; everything else changes audit rules.
func checkAuditctl(c *classifier, k *call) {
	if len(k.args) == 1 && k.args[0].static && (k.args[0].s == "-l" || k.args[0].s == "-s") {
		c.read("auditctl "+k.args[0].s, "read-only")
		return
	}
	c.writer("auditctl", RiskHigh, "changes audit rules")
}

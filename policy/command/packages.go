package command

import "strings"

// packageCheckers cover package managers: queries read, everything that
// installs, removes, downloads or refreshes writes.
var packageCheckers = map[string]checkFunc{
	"apt":       sub(&aptTool),
	"apt-get":   sub(&aptGetTool),
	"apt-cache": sub(&aptCacheTool),
	"dpkg":      checkDpkg,
	"rpm":       checkRpm,
	"yum":       sub(&yumTool),
	"dnf":       sub(&yumTool),
	"apk":       sub(&apkTool),
	"snap":      sub(&snapTool),
	"pip":       sub(&pipTool),
	"pip3":      sub(&pipTool),
	"npm":       sub(&npmTool),
}

// pkgOptions accepts the quiet/verbose/yes style options package managers
// share before their subcommand.
func pkgOptions(t token) bool {
	return matchOneOf(t.name, "q", "qq", "y", "v", "quiet", "verbose", "no-color", "color",
		"installed", "upgradable", "all-versions", "no-cache-dir", "disable-pip-version-check",
		"isolated", "no-input", "C", "cacheonly", "assumeno", "json")
}

var (
	aptTool = withWriters(subTool{
		spec: optSpec{shortArg: "oc", longArg: []string{"option", "config-file"}}, globalOK: pkgOptions,
		verbs: map[string]verb{"list": rd, "show": rd, "search": rd, "policy": rd, "depends": rd,
			"rdepends": rd, "showsrc": rd, "madison": rd, "help": rd},
		none: rd,
	}, RiskMedium, "install", "remove", "purge", "upgrade", "full-upgrade", "dist-upgrade",
		"autoremove", "autopurge", "update", "edit-sources", "satisfy", "reinstall", "source",
		"download", "clean", "autoclean", "build-dep", "changelog")
	aptGetTool = withWriters(subTool{
		spec: optSpec{shortArg: "oc", longArg: []string{"option", "config-file"}}, globalOK: pkgOptions,
		verbs: map[string]verb{"check": rd, "help": rd}, none: rd,
	}, RiskMedium, "install", "remove", "purge", "upgrade", "dist-upgrade", "full-upgrade",
		"autoremove", "autopurge", "update", "satisfy", "source", "download", "clean",
		"autoclean", "build-dep", "changelog", "dselect-upgrade", "markauto", "unmarkauto")
	aptCacheTool = withWriters(ctlTool(rd, "pkgnames", "policy", "show", "search", "depends",
		"rdepends", "madison", "stats", "dump", "dumpavail", "showpkg", "showsrc", "unmet",
		"dotty", "xvcg"), RiskLow, "gencaches")
	yumTool = withVerbs(withWriters(subTool{
		spec: optSpec{shortArg: "cdexR", longArg: []string{"config", "debuglevel", "errorlevel", "exclude", "enablerepo", "disablerepo", "repo", "releasever", "setopt"}},
		globalOK: func(t token) bool {
			return pkgOptions(t) || matchOneOf(t.name, "enablerepo", "disablerepo", "repo", "exclude", "x")
		},
		verbs: map[string]verb{"list": rd, "info": rd, "search": rd, "provides": rd, "whatprovides": rd,
			"repolist": rd, "repoinfo": rd, "check-update": rd, "deplist": rd, "repoquery": rd,
			"updateinfo": rd, "help": rd, "grouplist": rd, "groupinfo": rd, "check": rd, "alias": rd},
		none: rd,
	}, RiskMedium, "install", "remove", "erase", "update", "upgrade", "downgrade", "reinstall",
		"autoremove", "distro-sync", "distrosync", "swap", "makecache", "clean", "groupinstall",
		"groupremove", "localinstall", "upgrade-minimal", "mark", "config-manager", "builddep",
		"download", "shell"), map[string]verb{
		"history": ck(subOnly("list", "info", "summary", "userinstalled")),
		"group":   ck(subOnly("list", "info", "summary")),
		"module":  ck(subOnly("list", "info", "provides")),
	})
	apkTool = withWriters(ctlTool(rd, "info", "list", "search", "policy", "dot", "stats", "version",
		"audit", "manifest", "help"), RiskMedium, "add", "del", "fix", "update", "upgrade", "cache",
		"fetch", "index", "mkndx")
	snapTool = withVerbs(withWriters(ctlTool(rd, "list", "info", "find", "version", "services",
		"changes", "change", "tasks", "connections", "interface", "interfaces", "known", "get",
		"model", "whoami", "warnings", "aliases", "routine", "help"), RiskMedium, "install",
		"remove", "refresh", "revert", "enable", "disable", "set", "unset", "start", "stop",
		"restart", "connect", "disconnect", "alias", "unalias", "switch", "download",
		"create-user", "login", "logout", "prefer", "save", "restore", "forget", "ack", "abort"),
		map[string]verb{"logs": ck(checkFollowFlag("-f", "--follow")), "run": ck(checkRunsProgram)})
	pipTool = withVerbs(withWriters(subTool{
		spec: optSpec{longArg: []string{"python", "proxy", "retries", "timeout", "exists-action", "trusted-host", "cert", "client-cert", "cache-dir", "use-feature", "use-deprecated"}},
		globalOK: func(t token) bool {
			return pkgOptions(t) || matchOneOf(t.name, "python", "proxy", "retries", "timeout", "trusted-host", "cert", "client-cert", "require-virtualenv", "no-python-version-warning")
		},
		verbs: map[string]verb{"list": rd, "show": rd, "freeze": rd, "check": rd, "debug": rd,
			"inspect": rd, "hash": rd, "help": rd, "search": rd},
		none: rd,
	}, RiskMedium, "install", "uninstall", "download", "wheel"), map[string]verb{
		"config": ck(subOnly("list", "get", "debug")),
		"cache":  ck(subOnly("list", "info", "dir")),
		"index":  ck(subOnly("versions")),
	})
	npmTool = withVerbs(withWriters(ctlTool(rd, "ls", "list", "ll", "la", "view", "show", "info", "v",
		"outdated", "search", "root", "prefix", "explain", "why", "help", "query", "fund", "ping",
		"doctor"), RiskMedium, "install", "i", "add", "ci", "uninstall", "rm", "remove", "update",
		"up", "run", "run-script", "start", "stop", "restart", "test", "exec", "x", "publish",
		"link", "prune", "dedupe", "rebuild", "pack", "init", "unpublish", "deprecate", "login",
		"logout", "adduser", "owner", "access", "dist-tag", "token", "set", "edit"), map[string]verb{
		"config":  ck(subOnly("get", "list", "ls")),
		"audit":   ck(checkNpmAudit),
		"version": ck(noMoreOperands(0, RiskMedium)),
		"cache":   ck(subOnly("ls", "verify")),
	})
)

// subOnly returns a checker that reads only when the next operand, if any,
// is one of reads.
func subOnly(reads ...string) checkFunc {
	return func(c *classifier, k *call) {
		for _, a := range k.args {
			if !a.static {
				c.unknown(k.name, "dynamic argument")
				return
			}
			if strings.HasPrefix(a.s, "-") {
				continue
			}
			if matchOneOf(a.s, reads...) {
				c.read(k.name+" "+a.s, "read-only")
				return
			}
			c.writer(k.name+" "+a.s, RiskMedium, "known writer")
			return
		}
		c.readOnly(k)
	}
}

func checkNpmAudit(c *classifier, k *call) {
	for _, a := range k.args {
		if !a.static || a.s == "fix" {
			c.writer("npm audit fix", RiskMedium, "known writer")
			return
		}
	}
	c.readOnly(k)
}

// checkRunsProgram is a subcommand that runs an arbitrary program.
func checkRunsProgram(c *classifier, k *call) {
	c.unknown(k.name, "runs a program")
}

// checkFollowFlag returns a checker that reads and is unbounded when one of
// the follow flags is present.
func checkFollowFlag(flags ...string) checkFunc {
	return func(c *classifier, k *call) {
		for _, a := range k.args {
			if a.static && matchOneOf(a.s, flags...) {
				c.unbounded(k.ctx, BoundUnboundedStream, "")
			}
		}
		c.readOnly(k)
	}
}

// dpkgReads are the dpkg actions that only query.
var dpkgReads = []string{"-l", "--list", "-L", "--listfiles", "-s", "--status", "-S", "--search",
	"-p", "--print-avail", "--get-selections", "--print-architecture", "--print-foreign-architectures",
	"--compare-versions", "-C", "--audit", "-V", "--verify", "-c", "--contents", "-I", "--info",
	"-f", "--field", "--version", "--help", "--yet-to-unpack", "-W", "--show"}

// checkDpkg: query actions read; -i, -r, -P, --configure and the rest write.
func checkDpkg(c *classifier, k *call) {
	for _, a := range k.args {
		if !a.static {
			c.unknown("dpkg", "dynamic argument")
			return
		}
		if !strings.HasPrefix(a.s, "-") {
			continue
		}
		if matchOneOf(a.s, dpkgReads...) || strings.HasPrefix(a.s, "--showformat=") || strings.HasPrefix(a.s, "-f=") {
			continue
		}
		if a.s == "--root" || strings.HasPrefix(a.s, "--root=") || strings.HasPrefix(a.s, "--admindir") {
			continue
		}
		risk := RiskMedium
		if matchOneOf(a.s, "-r", "--remove", "-P", "--purge") {
			risk = RiskHigh
		}
		c.writer("dpkg "+a.s, risk, "known writer")
		return
	}
	c.readOnly(k)
}

// checkRpm: queries (-q...) and verification (-V) read; macro definitions
// and --pipe run code; everything else writes.
func checkRpm(c *classifier, k *call) {
	query := false
	for i, a := range k.args {
		if !a.static {
			c.unknown("rpm", "dynamic argument")
			return
		}
		s := a.s
		switch {
		case s == "--eval" || s == "-E" || s == "--define" || s == "-D" || strings.HasPrefix(s, "--pipe") ||
			strings.HasPrefix(s, "--eval=") || strings.HasPrefix(s, "--define=") || strings.HasPrefix(s, "--macros") ||
			strings.HasPrefix(s, "--rcfile"):
			c.construct("rpm "+s, RiskMedium, "expands macros or runs a program")
			return
		case i == 0 && (strings.HasPrefix(s, "-q") || s == "--query" || s == "-V" || strings.HasPrefix(s, "-V") || s == "--verify" || s == "--version" || s == "--showrc"):
			query = true
		case i == 0:
			c.writer("rpm "+s, RiskMedium, "known writer")
			return
		}
	}
	if !query {
		c.unknown("rpm", "no query")
		return
	}
	c.read("rpm -q", "read-only")
}

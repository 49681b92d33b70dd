package command

import "strings"

var gitCheckers = map[string]checkFunc{"git": sub(&gitTool)}

var gitGlobals = optSpec{shortArg: "Cc", longArg: []string{"git-dir", "work-tree", "namespace", "super-prefix"}}

// gitSafeConfig are -c settings that only change formatting or which
// repositories git trusts; any other setting may run a program
// (core.pager, core.sshCommand, core.editor, core.fsmonitor, alias.*,
// diff.external, ...).
var gitSafeConfig = []string{"color.", "column.", "advice.", "core.quotepath", "safe.directory",
	"log.decorate", "log.date", "log.abbrevcommit", "grep.linenumber", "grep.patterntype",
	"diff.noprefix", "core.abbrev", "i18n.logoutputencoding", "log.showsignature"}

// gitGlobalOK vets git's options before the subcommand. A -c setting that
// is not known to be inert is refused: it may run a program.
func gitGlobalOK(t token) bool {
	switch t.name {
	case "C", "git-dir", "work-tree", "namespace", "no-pager", "P", "bare", "no-replace-objects",
		"literal-pathspecs", "glob-pathspecs", "noglob-pathspecs", "icase-pathspecs",
		"no-optional-locks", "version", "help", "no-lazy-fetch", "no-advice":
		return true
	case "c":
		return t.valStatic && gitConfigSafe(t.val)
	}
	return false
}

// gitConfigSafe reports whether a -c key=value setting is inert.
func gitConfigSafe(kv string) bool {
	key, value, _ := strings.Cut(kv, "=")
	key = strings.ToLower(key)
	switch {
	case key == "core.pager":
		return value == "cat" || value == ""
	case strings.HasPrefix(key, "pager."):
		return matchOneOf(strings.ToLower(value), "false", "no", "off", "0")
	}
	for _, p := range gitSafeConfig {
		if key == p || strings.HasSuffix(p, ".") && strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

var gitTool = subTool{
	spec:     gitGlobals,
	globalOK: gitGlobalOK,
	none:     rd,
	verbs: readWrite(nil, RiskMedium,
		[]string{"commit", "rebase", "checkout", "switch", "restore", "merge", "cherry-pick", "revert",
			"am", "apply", "add", "rm", "mv", "gc", "prune", "fetch", "pull", "clone", "init",
			"update-ref", "update-index", "replace", "repack", "pack-refs", "maintenance",
			"sparse-checkout", "mergetool", "commit-tree", "hash-object", "mktag", "mktree",
			"send-email", "format-patch", "bundle", "symbolic-ref", "read-tree", "checkout-index",
			"write-tree", "stage", "citool", "gui", "lfs"},
		map[string]verb{
			"push": ck(checkGitPush), "reset": ck(checkGitReset), "clean": wrHigh,
			"filter-branch": wrHigh, "filter-repo": wrHigh,
			"log": ck(checkGitRead), "show": ck(checkGitRead), "diff": ck(checkGitRead),
			"whatchanged": ck(checkGitRead), "shortlog": ck(checkGitRead), "diff-tree": ck(checkGitRead),
			"diff-files": ck(checkGitRead), "diff-index": ck(checkGitRead), "range-diff": ck(checkGitRead),
			"show-branch": ck(checkGitRead), "blame": ck(checkGitRead), "annotate": ck(checkGitRead),
			"rev-parse": ck(checkGitRead), "rev-list": ck(checkGitRead), "describe": ck(checkGitRead),
			"ls-files": ck(checkGitRead), "ls-tree": ck(checkGitRead), "cat-file": ck(checkGitRead),
			"grep": ck(checkGitRead), "status": ck(checkGitRead), "ls-remote": ck(checkGitRead),
			"merge-base": ck(checkGitRead), "name-rev": ck(checkGitRead), "show-ref": ck(checkGitRead),
			"for-each-ref": ck(checkGitRead), "count-objects": ck(checkGitRead),
			"check-ignore": ck(checkGitRead), "check-attr": ck(checkGitRead),
			"check-ref-format": ck(checkGitRead), "var": ck(checkGitRead), "version": ck(checkGitRead),
			"verify-commit": ck(checkGitRead), "verify-tag": ck(checkGitRead), "fsck": ck(checkGitRead),
			"cherry": ck(checkGitRead), "show-index": ck(checkGitRead), "verify-pack": ck(checkGitRead),
			"branch": ck(checkGitBranch), "tag": ck(checkGitTag), "config": ck(checkGitConfig),
			"remote":    ck(gitSubOnly(true, "show", "get-url")),
			"stash":     ck(gitSubOnly(false, "list", "show")),
			"reflog":    ck(checkGitReflog),
			"worktree":  ck(gitSubOnly(false, "list")),
			"submodule": ck(gitSubOnly(true, "status", "summary")),
			"notes":     ck(gitSubOnly(true, "list", "show")),
			"bisect":    ck(gitSubOnly(false, "log")),
		}),
}

// gitReadDeny are options of git's reading commands that write a file or
// run a program; they are matched as abbreviations too.
var gitReadDeny = []string{"output", "open-files-in-pager", "upload-pack", "ext-diff", "exec",
	"lost-found", "paginate"}

// gitReadLong are long options that must not be mistaken for an
// abbreviation of a denied one.
var gitReadLong = []string{"oneline", "no-ext-diff", "exclude", "exclude-standard", "exclude-from",
	"exclude-per-directory", "exit-code", "expand-tabs", "no-expand-tabs", "parents", "patch",
	"pretty", "patch-with-stat", "patch-with-raw", "ours", "others", "exclude-existing",
	"exact-match", "only-matching", "or"}

// checkGitRead: log, show, diff, grep, status and the other reading
// subcommands read, unless --output writes a file, -O/--open-files-in-pager
// or --upload-pack run a program, or --ext-diff runs a diff driver.
func checkGitRead(c *classifier, k *call) {
	grep := strings.HasSuffix(k.name, " grep")
	lsRemote := strings.HasSuffix(k.name, " ls-remote")
	for _, a := range k.args {
		if !a.static {
			c.unknown(k.name, "dynamic argument")
			return
		}
		s := a.s
		if s == "--" {
			break
		}
		switch {
		case strings.HasPrefix(s, "--") && len(s) > 2:
			name, _, _ := strings.Cut(s[2:], "=")
			if !matchOneOf(name, gitReadLong...) && matchesAnyLong(name, gitReadDeny...) {
				c.writer(k.name+" --"+name, RiskLow, "writes a file or runs a program")
				return
			}
		case len(s) > 1 && s[0] == '-':
			if grep && strings.ContainsRune(s, 'O') || lsRemote && strings.ContainsRune(s, 'u') {
				c.writer(k.name+" "+s, RiskLow, "runs a program")
				return
			}
		}
	}
	c.readOnly(k)
}

func checkGitPush(c *classifier, k *call) {
	for _, a := range k.args {
		if !a.static || matchOneOf(a.s, "-f", "--force", "--mirror", "--delete", "-d", "--prune") ||
			strings.HasPrefix(a.s, "--force") || strings.HasPrefix(a.s, "+") || strings.HasPrefix(a.s, ":") {
			c.writer("git push --force", RiskHigh, "known writer")
			return
		}
	}
	c.writer("git push", RiskMedium, "known writer")
}

func checkGitReset(c *classifier, k *call) {
	for _, a := range k.args {
		if !a.static || a.s == "--hard" || a.s == "--merge" || a.s == "--keep" {
			c.writer("git reset --hard", RiskHigh, "known writer")
			return
		}
	}
	c.writer("git reset", RiskMedium, "known writer")
}

// gitListMode vets the arguments of git branch and git tag: listing
// options and their values are fine; writeShort and writeLong create,
// delete or move; an operand outside list mode names a new ref.
func (c *classifier) gitListMode(k *call, listShort string, valued []string) {
	list := false
	args := k.args
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.static {
			c.unknown(k.name, "dynamic argument")
			return
		}
		s := a.s
		switch {
		case strings.HasPrefix(s, "--"):
			name, _, hasVal := strings.Cut(s[2:], "=")
			switch {
			case name == "list":
				list = true
			case matchOneOf(name, valued...):
				if !hasVal {
					i++
				}
			case matchOneOf(name, "all", "remotes", "verbose", "show-current", "ignore-case", "no-color", "no-column", "omit-empty"):
			default:
				c.writer(k.name+" "+s, RiskMedium, "changes refs")
				return
			}
		case len(s) > 1 && s[0] == '-':
			for _, ch := range s[1:] {
				switch {
				case ch == 'l':
					list = true
				case strings.ContainsRune(listShort, ch):
				default:
					c.writer(k.name+" "+s, RiskMedium, "changes refs")
					return
				}
			}
		default:
			if !list {
				c.writer(k.name+" "+s, RiskLow, "creates a ref")
				return
			}
		}
	}
	c.readOnly(k)
}

var gitListValued = []string{"contains", "no-contains", "merged", "no-merged", "points-at", "sort", "format", "color", "column"}

func checkGitBranch(c *classifier, k *call) { c.gitListMode(k, "arvi", gitListValued) }

func checkGitTag(c *classifier, k *call) { c.gitListMode(k, "ni0123456789", gitListValued) }

// checkGitConfig: --get*, --list and one-operand lookups read; setting,
// unsetting and editing write.
func checkGitConfig(c *classifier, k *call) {
	operands := 0
	read := false
	args := k.args
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.static {
			c.unknown(k.name, "dynamic argument")
			return
		}
		s := a.s
		switch {
		case matchOneOf(s, "get", "list") && operands == 0 && i == firstOperand(args):
			read = true
			continue
		case strings.HasPrefix(s, "-"):
			name, _, hasVal := strings.Cut(strings.TrimLeft(s, "-"), "=")
			switch {
			case matchOneOf(name, "get", "get-all", "get-regexp", "get-urlmatch", "get-color", "get-colorbool", "list", "l"):
				read = true
			case matchOneOf(name, "show-origin", "show-scope", "name-only", "null", "z", "global",
				"system", "local", "worktree", "includes", "no-includes", "bool", "int", "path",
				"bool-or-int", "expiry-date"):
			case matchOneOf(name, "file", "f", "blob", "type", "default", "value", "fixed-value"):
				if !hasVal {
					i++
				}
			default:
				c.writer("git config "+s, RiskMedium, "changes configuration")
				return
			}
		default:
			operands++
		}
	}
	if read || operands == 1 {
		c.readOnly(k)
		return
	}
	c.writer("git config", RiskMedium, "changes configuration")
}

// firstOperand returns the index of the first argument not starting with
// "-", or -1.
func firstOperand(args []arg) int {
	for i, a := range args {
		if !strings.HasPrefix(a.s, "-") {
			return i
		}
	}
	return -1
}

// gitSubOnly returns a checker for git subcommands with their own verbs:
// the listed verbs read; bare (no verb) reads when bareReads.
func gitSubOnly(bareReads bool, reads ...string) checkFunc {
	return func(c *classifier, k *call) {
		for _, a := range k.args {
			if !a.static {
				c.unknown(k.name, "dynamic argument")
				return
			}
			if strings.HasPrefix(a.s, "-") {
				if a.s == "-v" || a.s == "--verbose" || a.s == "-q" || a.s == "--quiet" || a.s == "--cached" || a.s == "--recursive" {
					continue
				}
				c.writer(k.name+" "+a.s, RiskMedium, "known writer")
				return
			}
			if matchOneOf(a.s, reads...) {
				c.read(k.name+" "+a.s, "read-only")
				return
			}
			c.writer(k.name+" "+a.s, RiskMedium, "known writer")
			return
		}
		if !bareReads {
			c.writer(k.name, RiskMedium, "known writer")
			return
		}
		c.readOnly(k)
	}
}

// checkGitReflog: showing reads; expire, delete and drop write.
func checkGitReflog(c *classifier, k *call) {
	for _, a := range k.args {
		if !a.static {
			c.unknown(k.name, "dynamic argument")
			return
		}
		if matchOneOf(a.s, "expire", "delete", "drop", "write") {
			c.writer(k.name+" "+a.s, RiskHigh, "known writer")
			return
		}
	}
	c.readOnly(k)
}

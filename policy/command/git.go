package command

import "strings"

var gitTools = map[string]*tool{"git": gitTool}

// gitSafeConfig are -c settings that only change formatting or which
// repositories git trusts; any other setting may run a program
// (core.pager, core.sshCommand, core.editor, core.fsmonitor, alias.*,
// diff.external, ...).
var gitSafeConfig = []string{"color.", "column.", "advice.", "core.quotepath", "safe.directory",
	"log.decorate", "log.date", "log.abbrevcommit", "grep.linenumber", "grep.patterntype",
	"diff.noprefix", "core.abbrev", "i18n.logoutputencoding", "log.showsignature"}

// gitConfigValue vets a -c key=value setting.
func gitConfigValue(c *classifier, k *call, u *optUse) bool {
	if u.val.static && gitConfigSafe(u.val.s) {
		return true
	}
	c.unknown("git -c "+u.val.s, "setting may run a program")
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

// gitGlobals are git's own options, before the subcommand. -p/--paginate
// runs the pager, --exec-path moves where git finds its subcommands, and
// --config-env reads a setting from the environment.
var gitGlobals = opts(
	reads(`-C= --git-dir= --work-tree= --namespace= --super-prefix= --no-pager|-P --bare
		--no-replace-objects --literal-pathspecs --glob-pathspecs --noglob-pathspecs
		--icase-pathspecs --no-optional-locks --version -v --help -h --no-lazy-fetch --no-advice
		--html-path --man-path --info-path --list-cmds= --attr-source=`),
	readsVal(gitConfigValue, `-c=`),
	execs("runs the pager", `-p|--paginate`),
	execs("runs git subcommands from another directory", `--exec-path[=]`),
	unknowns("reads a setting from the environment", `--config-env=`),
)

// gitStyle: git's revision and diff parsers read options anywhere until
// "--" and accept long names only spelled out.
var gitStyle = styleExact

// gitRevOpts are the revision-walking and formatting options of log,
// show, rev-list, shortlog and whatchanged.
const gitRevOpts = `-n|--max-count= --skip= --since|--after= --since-as-filter= --until|--before=
	--author= --committer= --grep-reflog= --grep= --all-match --invert-grep -i|--regexp-ignore-case
	--basic-regexp -E|--extended-regexp -F|--fixed-strings -P|--perl-regexp --remove-empty
	--merges --no-merges --min-parents= --max-parents= --no-min-parents --no-max-parents
	--first-parent --exclude-first-parent-only --not --all --branches[=] --tags[=] --remotes[=]
	--glob= --exclude= --exclude-hidden= --reflog --alternate-refs --single-worktree
	--ignore-missing --bisect --stdin --cherry-mark --cherry-pick --left-only --right-only
	--cherry -g|--walk-reflogs --merge --boundary --simplify-by-decoration --full-history --dense
	--sparse --simplify-merges --ancestry-path[=] --show-pulls --date-order --author-date-order
	--topo-order --reverse --no-walk[=] --do-walk --pretty[=] --format= --abbrev-commit
	--no-abbrev-commit --oneline --encoding= --expand-tabs[=] --no-expand-tabs --notes[=]
	--no-notes --show-notes[=] --standard-notes --no-standard-notes --show-signature --no-show-signature
	--relative-date --date= --parents --children --left-right --graph --show-linear-break[=]
	--decorate[=] --no-decorate --decorate-refs= --decorate-refs-exclude= --clear-decorations
	--source --mailmap --no-mailmap --use-mailmap --no-use-mailmap --full-diff --log-size
	-L= --follow --count --objects --objects-edge --in-commit-order --timestamp --header
	--no-object-names --unpacked --disk-usage[=] --bisect-all --bisect-vars`

// gitDiffOpts are the diff options of log, show, diff and friends.
// --output writes a file and --ext-diff runs an external diff program.
const gitDiffOpts = `-p|-u|--patch -s|--no-patch -U|--unified= --output-indicator-new=
	--output-indicator-old= --output-indicator-context= --raw --patch-with-raw -t
	--indent-heuristic --no-indent-heuristic --minimal --patience --histogram --anchored=
	--diff-algorithm= --stat[=] --stat-width= --stat-name-width= --stat-graph-width= --stat-count=
	--compact-summary --numstat --shortstat -X|--dirstat[=] --cumulative --dirstat-by-file[=]
	--summary --patch-with-stat -z --name-only --name-status --submodule[=] --color[=] --no-color
	--color-moved[=] --no-color-moved --color-moved-ws= --no-color-moved-ws --word-diff[=]
	--word-diff-regex= --color-words[=] --no-renames --rename-empty --no-rename-empty --check
	--ws-error-highlight= --full-index --binary --abbrev[=] -B|--break-rewrites[=]
	-M|--find-renames[=] -C|--find-copies[=] --find-copies-harder -D|--irreversible-delete -l=
	--diff-filter= -S= -G= --find-object= --pickaxe-all --pickaxe-regex -O= --skip-to= --rotate-to=
	-R --relative[=] --no-relative -a|--text --ignore-cr-at-eol --ignore-space-at-eol
	-b|--ignore-space-change -w|--ignore-all-space --ignore-blank-lines -I|--ignore-matching-lines=
	--inter-hunk-context= -W|--function-context --exit-code --quiet --no-ext-diff --textconv
	--no-textconv --ignore-submodules[=] --src-prefix= --dst-prefix= --no-prefix --default-prefix
	--line-prefix= --ita-invisible-in-index --ita-visible-in-index -c --cc --combined-all-paths
	-m --diff-merges= --no-diff-merges --remerge-diff`

// gitDiffWriters are the diff options that write a file or run a program.
var gitDiffWriters = []optGroup{
	writes(RiskLow, "writes a file", `--output=`),
	execs("runs an external diff program", `--ext-diff`),
}

// gitLogTable are the options of log, show, whatchanged, rev-list and
// shortlog.
var gitLogTable = opts(append([]optGroup{reads(gitRevOpts + " " + gitDiffOpts)}, gitDiffWriters...)...)

// gitShortlogTable: shortlog's own -n, -s, -e, -c and -w come first.
var gitShortlogTable = opts(reads(`-n|--numbered -s|--summary -e|--email -c|--committer --group= -w[=] ` +
	strings.NewReplacer("-n|--max-count=", "--max-count=", "--committer=", "").Replace(gitRevOpts)))

// gitDiffTable are the options of diff and its plumbing variants.
var gitDiffTable = opts(append([]optGroup{reads(gitDiffOpts +
	` --cached|--staged --merge-base --no-index -0 -1 -2 -3 --base --ours --theirs -r --root
	--no-commit-id --always --stdin -v --pretty[=] --format= --creation-factor= --no-dual-color
	--left-only --right-only --notes[=] --no-notes --encoding=`)}, gitDiffWriters...)...)

func gitRead(spec string) *verbRule { return readWith(opts(reads(spec))) }

var gitTool = &tool{
	name: "git", style: styleExactStop, noVerb: readVerb,
	opts: gitGlobals,
	verbs: verbTable(
		vrule(&verbRule{class: ruleRead, opts: gitLogTable, style: &gitStyle, digits: true},
			"log show whatchanged rev-list"),
		vrule(&verbRule{class: ruleRead, opts: gitShortlogTable, style: &gitStyle, digits: true}, "shortlog"),
		vrule(&verbRule{class: ruleRead, opts: gitDiffTable, style: &gitStyle},
			"diff diff-tree diff-files diff-index range-diff"),
		vrule(&verbRule{class: ruleRead, style: &gitStyle, opts: opts(
			reads(`--cached --no-index --untracked --no-exclude-standard --exclude-standard
				--recurse-submodules -a|--text --textconv --no-textconv -i|--ignore-case -I
				--max-depth= -r|--recursive --no-recursive -w|--word-regexp -v|--invert-match -h -H
				--full-name -E|--extended-regexp -G|--basic-regexp -P|--perl-regexp -F|--fixed-strings
				-n|--line-number --column -l|--files-with-matches|--name-only -L|--files-without-match
				-z|--null -o|--only-matching -c|--count --color[=] --no-color --break --heading
				-p|--show-function -C|--context= -A|--after-context= -B|--before-context=
				-W|--function-context -m|--max-count= --threads= -f= -e= --and --or --not
				--all-match -q|--quiet`),
			execs("opens the matching files in a pager", `-O|--open-files-in-pager[=]`),
		)}, "grep"),
		vrule(gitRead(`-s|--short -b|--branch --show-stash --porcelain[=] --long -v|--verbose
			-u|--untracked-files[=] --ignore-submodules[=] --ignored[=] -z --column[=] --no-column
			--ahead-behind --no-ahead-behind --renames --no-renames --find-renames[=]`), "status"),
		vrule(gitRead(`-b --root --show-stats -L= -l -t -S= --reverse= --first-parent -p|--porcelain
			--line-porcelain --incremental --encoding= --contents= --date= --progress --no-progress
			-M[=] -C[=] --ignore-rev= --ignore-revs-file= --color-lines --color-by-age -h -c
			--score-debug -f|--show-name -n|--show-number -s -e|--show-email -w --abbrev[=]`), "blame annotate"),
		vrule(gitRead(`-c|--cached -d|--deleted -m|--modified -o|--others -i|--ignored -s|--stage
			-u|--unmerged -k|--killed -z -t -v -f --directory --no-empty-directory --eol --deduplicate
			-x|--exclude= -X|--exclude-from= --exclude-per-directory= --exclude-standard
			--error-unmatch --with-tree= --full-name --recurse-submodules --abbrev[=] --debug --sparse
			--format= --resolve-undo`), "ls-files"),
		vrule(gitRead(`-d -r -t -l|--long -z --name-only --name-status --object-only --full-name
			--full-tree --abbrev[=] --format=`), "ls-tree"),
		vrule(&verbRule{class: ruleRead, style: &gitStyle, opts: opts(reads(`--parseopt --sq-quote
			--keep-dashdash --stop-at-non-option --stuck-long --revs-only --no-revs --flags --no-flags
			--default= --prefix= --verify -q|--quiet --sq --short[=] --not --abbrev-ref[=] --symbolic
			--symbolic-full-name --all --branches[=] --tags[=] --remotes[=] --glob= --exclude=
			--exclude-hidden= --disambiguate= --local-env-vars --path-format= --git-dir
			--git-common-dir --resolve-git-dir= --git-path= --show-toplevel --show-superproject-working-tree
			--shared-index-path --absolute-git-dir --is-inside-git-dir --is-inside-work-tree
			--is-bare-repository --is-shallow-repository --show-cdup --show-prefix --show-object-format[=]
			--show-ref-format --since|--after= --until|--before= --end-of-options`))}, "rev-parse"),
		vrule(gitRead(`--all --tags --contains --abbrev= --candidates= --exact-match --debug --long
			--match= --exclude= --always --first-parent --dirty[=] --broken[=]`), "describe"),
		vrule(gitRead(`-t -s -e -p --textconv --filters --path= --batch[=] --batch-check[=]
			--batch-command[=] --batch-all-objects --buffer --unordered --follow-symlinks -Z -z
			--allow-unknown-type --use-mailmap --no-use-mailmap --mailmap --no-mailmap`), "cat-file"),
		vrule(&verbRule{class: ruleCheck, net: true, reads: true, style: &gitStyle, check: checkGitLsRemote, opts: opts(
			reads(`--heads --tags --refs --exit-code --get-url --sort= -o|--server-option= -q|--quiet
				--symref -h -t -b --branches`),
			execs("runs a program on the remote side", `--upload-pack=`),
		)}, "ls-remote"),
		vrule(gitRead(`-a|--all --octopus --independent --is-ancestor --fork-point`), "merge-base"),
		vrule(gitRead(`--tags --refs= --exclude= --all --stdin --annotate-stdin --name-only
			--no-undefined --always`), "name-rev"),
		vrule(gitRead(`--head --tags --heads --branches --verify -d|--dereference -s|--hash[--=]
			--abbrev[=] -q|--quiet --exclude-existing[=] --exists`), "show-ref"),
		vrule(gitRead(`--count= --shell --perl --python --tcl --sort= --format= --color[=]
			--points-at= --merged[=] --no-merged[=] --contains[=] --no-contains[=] --ignore-case
			--omit-empty --exclude= --stdin --include-root-refs`), "for-each-ref"),
		vrule(gitRead(`-v|--verbose -H|--human-readable`), "count-objects"),
		vrule(gitRead(`-q|--quiet -v|--verbose --stdin -z -n|--non-matching --no-index`), "check-ignore"),
		vrule(gitRead(`-a|--all --cached --stdin -z --source=`), "check-attr"),
		vrule(gitRead(`--branch --normalize --allow-onelevel --no-allow-onelevel --refspec-pattern`), "check-ref-format"),
		vrule(gitRead(`-l`), "var"),
		vrule(gitRead(`--build-options`), "version"),
		vrule(gitRead(`-v|--verbose --raw --format=`), "verify-commit verify-tag"),
		vrule(&verbRule{class: ruleRead, style: &gitStyle, opts: opts(
			reads(`--unreachable --dangling --no-dangling --root --tags --cache --no-reflogs --full
				--no-full --connectivity-only --strict --verbose --progress --no-progress --name-objects
				--no-name-objects`),
			writes(RiskLow, "writes dangling objects", `--lost-found`),
		)}, "fsck"),
		vrule(gitRead(`-v --abbrev[=]`), "cherry"),
		vrule(gitRead(`--object-format=`), "show-index"),
		vrule(gitRead(`-v|--verbose -s|--stat-only`), "verify-pack"),
		vrule(gitRead(`-a|--all -r|--remotes --topo-order --date-order --current --color[=]
			--no-color --sparse --more[=] --list --merge-base --independent --no-name --sha1-name
			--topics -g|--reflog[=]`), "show-branch"),
		vrule(&verbRule{class: ruleCheck, check: checkGitBranch, noScan: true}, "branch"),
		vrule(&verbRule{class: ruleCheck, check: checkGitTag, noScan: true}, "tag"),
		vrule(&verbRule{class: ruleCheck, check: checkGitConfig, noScan: true}, "config"),
		vrule(nestedVerb(gitSub(readVerb, gitVerbose, vrule(netReadCheck(opts(reads(`-n`)), checkGitRemoteShow), "show"),
			vrule(gitRead(`--push --all`), "get-url"))), "remote"),
		vrule(nestedVerb(gitSub(nil, nil, vrule(&verbRule{class: ruleRead, opts: gitLogTable, style: &gitStyle}, "list show"))), "stash"),
		vrule(nestedVerb(gitSub(readVerb, gitLogTable, vrule(readVerb, "show"),
			vrule(gitRead(`--ref`), "exists"), vwrites(RiskHigh, "expire delete drop write"))), "reflog"),
		vrule(nestedVerb(gitSub(nil, nil, vrule(gitRead(`--porcelain -v|--verbose -z --expire=`), "list"))), "worktree"),
		vrule(nestedVerb(gitSub(readVerb, opts(reads(`-q|--quiet --cached --recursive`)),
			vrule(gitRead(`--cached --recursive -q|--quiet`), "status"),
			vrule(gitRead(`--cached --files -n|--summary-limit=`), "summary"),
			vrule(runsVerb, "foreach"))), "submodule"),
		vrule(nestedVerb(gitSub(readVerb, opts(reads(`--ref=`)), vrule(readVerb, "list show"))), "notes"),
		vrule(nestedVerb(gitSub(nil, nil, vrule(readVerb, "log"), vrule(runsVerb, "visualize view run"))), "bisect"),
		vrule(&verbRule{class: ruleCheck, check: checkGitPush, noScan: true}, "push"),
		vrule(&verbRule{class: ruleCheck, check: checkGitReset, noScan: true}, "reset"),
		vwrites(RiskHigh, "clean filter-branch filter-repo"),
		vwrites(RiskMedium, `commit rebase checkout switch restore merge cherry-pick revert am apply add
			rm mv gc prune fetch pull clone init update-ref update-index replace repack pack-refs
			maintenance sparse-checkout mergetool commit-tree hash-object mktag mktree send-email
			format-patch bundle symbolic-ref read-tree checkout-index write-tree stage citool gui lfs
			archive daemon instaweb difftool`),
	),
}

// gitVerbose is -v/--verbose, -q/--quiet.
var gitVerbose = opts(reads(`-v|--verbose -q|--quiet`))

// gitSub is a git subcommand with verbs of its own; bare is its rule
// without one, with the options in t (which its verbs share).
func gitSub(bare *verbRule, t *optTable, groups ...verbGroup) *tool {
	return &tool{name: "git", style: gitStyle, noVerb: bare, opts: t, globalsAfterVerb: true, verbs: verbTable(groups...)}
}

// checkGitLsRemote: ls-remote connects to the repository it names: a URL
// or scp-like address must be on a known host; a remote's name takes its
// URL from the repository's configuration, which the classifier cannot
// see; a local path connects nowhere. --get-url only prints the URL.
func checkGitLsRemote(c *classifier, k *call) {
	if !c.readVerbOperands(k) {
		return
	}
	if k.p.has("get-url") {
		c.localNet()
		c.readOnly(k)
		return
	}
	if len(k.p.ops) == 0 {
		c.writer(k.name, RiskMedium, "connects to the current branch's remote, whose URL comes from the repository's configuration; give a URL of a known host")
		return
	}
	if c.gitRemoteDest(k, k.args[k.p.ops[0]].s) {
		c.readOnly(k)
	}
}

// checkGitRemoteShow: remote show asks each remote for its refs, unless
// -n; its operands are remote names or URLs.
func checkGitRemoteShow(c *classifier, k *call) {
	if !c.readVerbOperands(k) {
		return
	}
	if k.p.has("n") {
		c.localNet()
		c.readOnly(k)
		return
	}
	for _, i := range k.p.ops {
		if !c.gitRemoteDest(k, k.args[i].s) {
			return
		}
	}
	if len(k.p.ops) == 0 {
		c.localNet() // lists the remotes' names
	}
	c.readOnly(k)
}

// gitRemoteDest records where git connects for a repository argument.
func (c *classifier) gitRemoteDest(k *call, repo string) bool {
	lower := strings.ToLower(repo)
	switch {
	case strings.HasPrefix(repo, "/") || strings.HasPrefix(repo, "./") || strings.HasPrefix(repo, "../") ||
		strings.HasPrefix(lower, "file://"):
		c.localNet()
		return true
	case strings.Contains(repo, "::"):
		c.writer(k.name+" "+repo, RiskMedium, "a transport::address repository runs a remote helper program")
		return false
	}
	if scheme, _, ok := strings.Cut(lower, "://"); ok {
		authority, _, _ := strings.Cut(repo[len(scheme)+3:], "/")
		switch scheme {
		case "http", "https", "ssh", "git":
		case "git+ssh", "ssh+git":
			scheme = "ssh"
		default:
			c.writer(k.name+" "+repo, RiskMedium, "transport "+scheme+" not known to be read-only")
			return false
		}
		if at := strings.LastIndexByte(authority, '@'); at >= 0 && scheme == "ssh" {
			authority = authority[at+1:]
		}
		return c.urlDest(k, scheme, authority)
	}
	if colon := strings.IndexByte(repo, ':'); colon > 0 && !strings.Contains(repo[:colon], "/") {
		// scp-like [user@]host:path, over ssh.
		host := repo[:colon]
		if at := strings.LastIndexByte(host, '@'); at >= 0 {
			host = host[at+1:]
		}
		return c.destination(k, host, 22)
	}
	c.writer(k.name+" "+repo, RiskMedium, "a remote's name takes its URL from the repository's configuration, which the classifier cannot see; give a URL of a known host")
	return false
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
			case matchOneOf(name, "all", "remotes", "verbose", "show-current", "ignore-case", "no-color", "no-column", "omit-empty"),
				matchOneOf(name, "color", "column") && (hasVal || !strings.Contains(s, "=")):
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

// gitListValued are the branch and tag options that take the next word as
// their value when it is not attached. --color and --column take an
// optional value only when attached (--color=always): the word after
// them is an operand, which outside list mode names a new ref.
var gitListValued = []string{"contains", "no-contains", "merged", "no-merged", "points-at", "sort", "format"}

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

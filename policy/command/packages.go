package command

import "strings"

// Package managers: queries read, everything that installs, removes,
// downloads or refreshes writes. Configuration given on the command line
// (apt's -o and -c, dnf's --setopt, rpm's macros, pip's --python) can run
// programs, so it is refused.

var packageTools = map[string]*tool{
	"apt":        aptTool,
	"apt-get":    aptGetTool,
	"apt-cache":  aptCacheTool,
	"dpkg":       dpkgTool,
	"dpkg-query": dpkgQueryTool,
	"yum":        dnfTool,
	"dnf":        dnfTool,
	"apk":        apkTool,
	"snap":       snapTool,
	"pip":        pipTool,
	"pip3":       pipTool,
	"npm":        npmTool,
}

var packageCheckers = map[string]checkFunc{
	"rpm": checkRpm,
}

// aptConfig are apt's configuration options: -o Dir::Bin::dpkg=...,
// APT::Update::Pre-Invoke and the like run programs.
var aptConfig = unknowns("sets configuration that can name programs to run", `-o|--option= -c|--config-file=`)

// aptCommon are the options apt, apt-get and apt-cache share.
const aptCommon = `-h|--help -v|--version -q|--quiet -y|--yes|--assume-yes --assume-no
	-a|--host-architecture= -t|--target-release|--default-release= --color --no-color
	-V|--verbose-versions`

// aptSimulate is apt's and apt-get's -s (apt-cache's -s is --src-cache).
const aptSimulate = ` -s|--simulate|--dry-run|--just-print|--no-act|--recon`

var (
	aptTool = &tool{
		name: "apt", style: styleExact, globalsAfterVerb: true, noVerb: readVerb,
		opts: opts(reads(aptCommon+aptSimulate+` --installed --upgradable --manual-installed --all-versions -f|--full
			--names-only -n --format=`), aptConfig),
		verbs: verbTable(
			vreads("list show search policy depends rdepends showsrc madison help"),
			vwrites(RiskMedium, `install remove purge upgrade full-upgrade dist-upgrade autoremove
				autopurge update edit-sources satisfy reinstall source download clean autoclean build-dep
				changelog`),
		),
	}
	aptGetTool = &tool{
		name: "apt-get", style: styleExact, globalsAfterVerb: true, noVerb: readVerb,
		opts: opts(reads(aptCommon+aptSimulate), aptConfig),
		verbs: verbTable(
			vreads("check help"),
			vwrites(RiskMedium, `install remove purge upgrade dist-upgrade full-upgrade autoremove
				autopurge update satisfy source download clean autoclean build-dep changelog
				dselect-upgrade markauto unmarkauto`),
		),
	}
	aptCacheTool = &tool{
		name: "apt-cache", style: styleExact, globalsAfterVerb: true,
		opts: opts(
			reads(aptCommon+` -i|--important -g|--generate --no-generate --names-only -n -f|--full
				--installed --recurse --no-pre-depends --no-depends --no-recommends --no-suggests
				--no-conflicts --no-breaks --no-replaces --no-enhances --implicit --all-versions
				--all-names`),
			aptConfig,
			writes(RiskLow, "writes a package cache file", `-p|--pkg-cache= -s|--src-cache=`),
		),
		verbs: verbTable(
			vreads(`pkgnames policy show search depends rdepends madison stats dump dumpavail showpkg
				showsrc unmet dotty xvcg`),
			vwrites(RiskLow, "gencaches"),
		),
	}
)

// dpkgQueryActions are dpkg-query's commands; dpkg forwards them.
const dpkgQueryActions = `-l|--list -W|--show -s|--status -p|--print-avail -L|--listfiles -S|--search
	-c|--control-path --control-list --control-show --admindir= --root= --instdir= --load-avail
	--no-pager -f|--showformat= --help -?  --version`

var dpkgQueryTool = &tool{
	name: "dpkg-query", style: styleExact,
	opts: opts(reads(dpkgQueryActions)),
}

// dpkg: the query actions, dpkg-deb's inspections and the --assert and
// --compare-versions checks read; everything else changes packages.
var dpkgTool = &tool{
	name: "dpkg", style: styleExact,
	opts: opts(
		reads(`-l|--list -W|--show -s|--status -p|--print-avail -L|--listfiles -S|--search
			--control-path --control-list --control-show --admindir= --root= --instdir= --no-pager
			--showformat= -?|--help --version --force-help --get-selections
			--print-architecture --print-foreign-architectures --compare-versions==
			-C|--audit -V|--verify --verify-format= -c|--contents -I|--info -f|--field
			--yet-to-unpack --predep-package --assert-support-predepends --assert-working-epoch
			--assert-long-filenames --assert-multi-conrep --assert-multi-arch --assert-versioned-provides
			--assert-protected-field --validate-pkgname --validate-trigname --validate-archname
			--validate-version --ctrl-tarball --fsys-tarfile --license --licence`),
		states(RiskMedium, "changes packages", `-i|--install --unpack --configure --triggers-only
			--set-selections --clear-selections --update-avail --merge-avail --clear-avail
			--forget-old-unavail --record-avail -A --add-architecture= --remove-architecture=
			-x|--extract -X|--vextract -R|--raw-extract -e|--control -b|--build -a|--pending
			-G|--refuse-downgrade -B|--auto-deconfigure -E|--skip-same-version -O|--selected-only
			--abort-after= --force-all --no-triggers --triggers --no-act --dry-run --simulate
			-D|--debug=`),
		states(RiskHigh, "removes packages", `-r|--remove -P|--purge`),
		writes(RiskLow, "appends to a log file", `--log=`),
		execs("runs a program", `--status-logger=`),
		unknowns("status file descriptor", `--status-fd=`),
	),
}

// checkRpm: queries (-q...) and verification (-V) read. rpm expands
// macros in option values (--dbpath, --root, ...) and %(cmd) runs cmd;
// --eval, --define, --pipe, --macros and --rcfile run or load code.
func checkRpm(c *classifier, k *call) {
	if len(k.args) == 0 {
		c.unknown("rpm", "no query")
		return
	}
	for i, a := range k.args {
		if !a.static {
			c.unknown("rpm", "dynamic argument")
			return
		}
		s := a.s
		name, _, _ := strings.Cut(s, "=")
		prevFormat := i > 0 && matchOneOf(k.args[i-1].s, "--qf", "--queryformat")
		switch {
		case matchOneOf(name, "--eval", "-E", "--define", "-D", "--undefine", "--predefine", "--macros",
			"--rcfile", "--load", "--pipe", "--target", "--dbpath", "--root", "-r", "--httpproxy", "--ftpproxy") && strings.Contains(s, "%"),
			matchOneOf(name, "--eval", "-E", "--define", "-D", "--undefine", "--predefine", "--macros", "--rcfile", "--load", "--pipe"):
			c.construct("rpm "+name, RiskMedium, "expands macros or runs a program")
			return
		case strings.Contains(s, "%(") && !prevFormat && name != "--qf" && name != "--queryformat":
			c.construct("rpm "+s, RiskMedium, "macro runs a shell command")
			return
		case i == 0 && (strings.HasPrefix(s, "-q") || s == "--query" || strings.HasPrefix(s, "-V") ||
			s == "--verify" || s == "--version" || s == "--showrc" || s == "--querytags"):
		case i == 0:
			c.writer("rpm "+s, RiskMedium, "known writer")
			return
		case matchOneOf(name, "-i", "--install", "-U", "--upgrade", "-F", "--freshen", "-e", "--erase",
			"--reinstall", "--import", "--initdb", "--rebuilddb", "--setperms", "--setugids", "--restore",
			"--addsign", "--resign", "--delsign", "--checksig"):
			c.writer("rpm "+s, RiskMedium, "known writer")
			return
		}
	}
	// Verification (-V, -qV, --verify) runs each package's %verifyscript
	// scriptlet unless --noscripts.
	verify, noScripts := false, false
	for _, a := range k.args {
		switch {
		case a.s == "--verify":
			verify = true
		case a.s == "--noscripts":
			noScripts = true
		case len(a.s) > 1 && a.s[0] == '-' && a.s[1] != '-' && strings.ContainsRune(a.s, 'V'):
			verify = true
		}
	}
	if verify && !noScripts {
		c.construct("rpm -V", RiskMedium, "runs the packages' %verifyscript scriptlets (add --noscripts)")
		return
	}
	c.read("rpm -q", "read-only")
}

// dnfReadOpts are the selection and display options of dnf's and yum's
// reading commands.
const dnfReadOpts = `--all --available --installed --extras --obsoletes --recent --upgrades --updates
	--autoremove --showduplicates --enabled --disabled --summary --info --security --bugfix
	--enhancement --newpackage --advisory= --advisories= --bz= --cve= --sec-severity= --secseverity=
	--qf|--queryformat= --requires --provides --conflicts --recommends --suggests
	--supplements --enhances --whatrequires= --whatprovides= --whatconflicts= --whatobsoletes=
	--whatrecommends= --whatsuggests= --whatsupplements= --whatenhances= --whatdepends= --location
	-l|--list --changelogs --resolve --recursive --arch|--archlist= --latest-limit= --userinstalled
	--duplicates --leaves --unneeded --srpm --source --tree --deplist --file= --nevra --envra
	--querytags --exactdeps --alldeps --depends --changelog --repo= --repoid= --reverse -v`

var dnfTool = &tool{
	name: "dnf", style: styleArgparse, globalsAfterVerb: true,
	opts: opts(
		reads(`-q|--quiet -v|--verbose -y|--assumeyes --assumeno -C|--cacheonly -d|--debuglevel=
			-e|--errorlevel= --enablerepo= --disablerepo= --repo|--repoid= -x|--exclude= --releasever=
			--installroot= --nogpgcheck --noplugins --disableplugin= --enableplugin= --showduplicates
			--color= --nobest --best --security --bugfix --enhancement --newpackage --advisory=
			--forcearch= -4 -6 -b --skip-broken --allowerasing --comment= -h|--help --version
			--disableexcludes= --obsoletes --noautoremove --nodocs`),
		unknowns("sets configuration that can load plugins or run programs", `-c|--config= --setopt=`),
		writes(RiskLow, "refreshes or writes caches and downloads", `--refresh --downloadonly
			--downloaddir|--destdir= --debugsolver`),
	),
	noVerb: readVerb,
	verbs: verbTable(
		vrule(netReadCheck(opts(reads(dnfReadOpts)), checkDnfCache),
			`list info search provides whatprovides repolist repoinfo check-update deplist repoquery
			updateinfo grouplist groupinfo check`),
		vrule(readVerb, "help"),
		vrule(nestedVerb(dnfSub("list info summary userinstalled", false)), "history"),
		vrule(nestedVerb(dnfSub("list info summary", true)), "group groups"),
		vrule(nestedVerb(dnfSub("list info provides", true)), "module"),
		vrule(nestedVerb(dnfSub("list", false)), "alias"),
		vwrites(RiskMedium, `install remove erase update upgrade downgrade reinstall autoremove
			distro-sync distrosync swap makecache clean groupinstall groupremove localinstall
			upgrade-minimal mark config-manager builddep download shell`),
	),
}

// dnfSub is a dnf command group whose verbs read; repos: they load the
// repositories' metadata (checkDnfCache).
func dnfSub(reads string, repos bool) *tool {
	r := readVerb
	if repos {
		r = netReadCheck(nil, checkDnfCache)
	}
	return &tool{name: "dnf", style: styleArgparse, globalsAfterVerb: true, noVerb: r,
		opts: opts(reads2(dnfReadOpts)), verbs: verbTable(vrule(r, reads))}
}

// checkDnfCache: the commands that load the repositories' metadata
// download it when it has expired, and write the cache: they read only
// with -C (the cache alone). list, info and repoquery of installed
// packages need no repository.
func checkDnfCache(c *classifier, k *call) {
	if !c.readVerbOperands(k) {
		return
	}
	installed := k.p.has("installed")
	for _, i := range k.p.ops {
		if k.args[i].s == "installed" {
			installed = true
		}
	}
	verb := k.name[strings.LastIndexByte(k.name, ' ')+1:]
	switch {
	case k.p.has("cacheonly"):
	case installed && matchOneOf(verb, "list", "info", "repoquery"):
	default:
		c.writer(k.name, RiskLow, "may download the repositories' metadata and write the cache; add -C to read the cache only")
		return
	}
	c.localNet()
	c.readOnly(k)
}

// apk (getopt_long): its global options are valid after the applet too.
var apkTool = &tool{
	name: "apk", style: styleGNU, globalsAfterVerb: true,
	opts: opts(
		reads(`-p|--root= -q|--quiet -v|--verbose -V|--version -X|--repository= --allow-untrusted
			--arch= --cache-max-age= --keys-dir= --no-cache --no-network --no-progress --print-arch
			--progress --repositories-file= --timeout= --wait= --no-interactive -h|--help
			--force-no-chroot --force-broken-world --force-non-repository --force-old-apk
			--force-overwrite --force-refresh --purge --preserve-env`),
		unknowns("asks a person before changes", `-i|--interactive`),
		writes(RiskLow, "writes caches", `-U|--update-cache --cache-dir= --progress-fd=`),
	),
	verbs: verbTable(
		vrule(readWith(opts(reads(`-L|--contents -e|--installed -W|--who-owns -R|--depends
			-P|--provides -r|--rdepends --replaces -i|--install-if -I|--rinstall-if -d|--description
			-s|--size -w|--webpage -t|--triggers -a|--all --license`))), "info"),
		vrule(readWith(opts(reads(`-I|--installed -O|--orphaned -a|--available -u|--upgradable
			-o|--origin -d|--depends -P|--providers`))), "list"),
		vrule(readWith(opts(reads(`-a|--all -d|--description -e|--exact -o|--origin -r|--rdepends
			--has-origin`))), "search"),
		vrule(readWith(opts(reads(`--errors --installed`))), "dot"),
		vrule(readWith(opts(reads(`-I|--index -l|--limit= -a|--all -c|--check -t|--test`))), "version"),
		vrule(readWith(opts(reads(`--backup --system --check-permissions --packages -r|--recursive
			--ignore-busybox-symlinks`))), "audit"),
		vreads("policy stats manifest help"),
		vwrites(RiskMedium, "add del fix update upgrade cache fetch index mkndx"),
	),
}

// snap (go-flags: long options spelled out).
var snapTool = &tool{
	name: "snap", style: styleExact, globalsAfterVerb: false,
	opts: opts(reads(`-h|--help --version`)),
	verbs: verbTable(
		vrule(readWith(opts(reads(`--all`))), "list"),
		vrule(netReadCheck(opts(reads(`--verbose --abs-time --color= --unicode=`)), checkSnapStore), "info"),
		vrule(netReadCheck(opts(reads(`--narrow --section[=] --private --color= --unicode=`)), checkSnapStore), "find search"),
		vrule(readWith(opts(reads(`--abs-time --verbose --color= --unicode= --all --disconnected
			--attrs -d -l -t --assertion --serial`),
			nets("asks the snap store (through snapd) for assertions", `--remote`))), `version services changes change tasks
			connections interface interfaces known get model whoami warnings aliases routine help`),
		vrule(checkWith(opts(reads(`-f|--follow -n=`)), checkSnapLogs), "logs"),
		vrule(runsVerb, "run"),
		vwrites(RiskMedium, `install remove refresh revert enable disable set unset start stop restart
			connect disconnect alias unalias switch download create-user login logout prefer save
			restore forget ack abort okay`),
	),
}

// checkSnapStore: snap info, find and search have snapd ask the snap
// store (api.snapcraft.io) about the names they spell; snapd, not the
// sandbox, makes the connection, so the store must be a known destination.
func checkSnapStore(c *classifier, k *call) {
	if c.destination(k, "api.snapcraft.io", 443) {
		c.readOnly(k)
	}
}

func checkSnapLogs(c *classifier, k *call) {
	if k.p.has("follow") {
		c.unbounded(k.ctx, BoundUnboundedStream, "")
	}
	c.readOnly(k)
}

// pip (optparse: abbreviations accepted; the table spells names out, so
// an abbreviation is unknown). --python runs another interpreter, --log
// and --cache-dir write.
var pipGlobals = opts(
	reads(`-h|--help --debug --isolated --require-virtualenv -v|--verbose -V|--version -q|--quiet
		--no-input --proxy= --retries= --timeout= --exists-action= --trusted-host=
		--cert= --client-cert= --no-cache-dir --disable-pip-version-check --no-color
		--no-python-version-warning --use-feature= --use-deprecated= --resume-retries=`),
	execs("runs another Python interpreter", `--python=`),
	execs("may run the keyring program", `--keyring-provider=`),
	writes(RiskLow, "writes a file", `--log= --log-file= --cache-dir=`),
)

var pipTool = &tool{
	name: "pip", style: styleExact, globalsAfterVerb: true, noVerb: readVerb,
	opts: pipGlobals,
	verbs: verbTable(
		vrule(readWith(opts(reads(`-e|--editable -l|--local --user --path= --format= --not-required
			--exclude-editable --include-editable --exclude=`),
			nets("sends the names of the installed packages to the package index", `-o|--outdated -u|--uptodate`))), "list"),
		vrule(readWith(opts(reads(`-f|--files`))), "show"),
		vrule(readWith(opts(reads(`-r|--requirement= -l|--local --user --path= --all --exclude-editable
			--exclude=`))), "freeze"),
		vrule(readVerb, "check help"),
		vrule(readWith(opts(reads(`--platform= --python-version= --implementation= --abi=`))), "debug"),
		vrule(readWith(opts(reads(`--local --user --path=`))), "inspect"),
		vrule(readWith(opts(reads(`-a|--algorithm=`))), "hash"),
		vrule(netReadCheck(pipIndexTable, checkPipIndex), "search"),
		vrule(nestedVerb(&tool{name: "pip config", style: styleExact, globalsAfterVerb: true,
			opts:  opts(reads(`--editor= --global --user --site`)),
			verbs: verbTable(vreads("list get debug"))}), "config"),
		vrule(nestedVerb(&tool{name: "pip cache", style: styleExact, globalsAfterVerb: true,
			verbs: verbTable(vrule(readWith(opts(reads(`--format=`))), "list info dir"))}), "cache"),
		vrule(nestedVerb(&tool{name: "pip index", style: styleExact, globalsAfterVerb: true,
			verbs: verbTable(vrule(netReadCheck(pipIndexTable, checkPipIndex), "versions"))}), "index"),
		vwrites(RiskMedium, "install uninstall download wheel"),
	),
}

// pipIndexTable are the options that choose package indexes.
var pipIndexTable = opts(reads(`-i|--index-url= --extra-index-url= --no-index -f|--find-links= --pre`))

// checkPipIndex: search and index versions ask the package indexes
// (--index-url, --extra-index-url; PyPI by default) about the names the
// command spells.
func checkPipIndex(c *classifier, k *call) {
	if !c.readVerbOperands(k) {
		return
	}
	if k.p.has("no-index") {
		c.localNet()
		c.readOnly(k)
		return
	}
	index := false
	for _, u := range k.p.uses {
		if u.key != "index-url" && u.key != "extra-index-url" && u.key != "find-links" {
			continue
		}
		scheme, rest, ok := strings.Cut(u.val.s, "://")
		if !ok {
			if u.key == "find-links" {
				continue // a local directory
			}
			c.writer(k.name+" "+u.as+" "+u.val.s, RiskMedium, "index must be a URL")
			return
		}
		authority, _, _ := strings.Cut(rest, "/")
		if !c.urlDest(k, strings.ToLower(scheme), authority) {
			return
		}
		index = index || u.key == "index-url"
	}
	if !index && !c.destination(k, "pypi.org", 443) {
		return
	}
	c.readOnly(k)
}

// npm (nopt): the configuration options that name programs or files run
// or written by npm are refused; the rest shape the output.
var npmGlobals = opts(
	reads(`-g|--global --json --long -l --parseable -p --depth= --all -a --omit= --include=
		-w|--workspace= --workspaces --include-workspace-root --link --package-lock-only --unicode
		--registry= --loglevel= -s|--silent -q|--quiet -d|--verbose --color= --no-color --prefix=
		--production --dev --location= --before= --tag= --no-audit --no-fund --no-update-notifier
		-h|--help -v|--version --usage --offline --prefer-offline --prefer-online --expect-results
		--expect-result-count=`),
	unknowns("reads configuration that can name programs", `--userconfig= --globalconfig=`),
	execs("names a program npm runs", `--script-shell= --node-options= --shell= --editor= --browser=`),
	writes(RiskLow, "writes files", `--cache= --logs-dir=`),
)

var npmTool = &tool{
	name: "npm", style: styleExact, globalsAfterVerb: true,
	opts: npmGlobals,
	verbs: verbTable(
		vreads("ls list ll la root prefix explain why help query"),
		vrule(netReadCheck(nil, checkNpmRegistry), "view show info v search ping"),
		vrule(localVerb, "fund"),
		vrule(nestedVerb(&tool{name: "npm config", style: styleExact, globalsAfterVerb: true,
			verbs: verbTable(vreads("get list ls"))}), "config c"),
		vrule(&verbRule{class: ruleWrite, risk: RiskMedium, msg: "sends the project's dependency names, read from local files, to the registry"}, "audit outdated"),
		vrule(setterVerb(0), "version"),
		vrule(nestedVerb(&tool{name: "npm cache", style: styleExact, globalsAfterVerb: true,
			verbs: verbTable(vreads("ls list"), vwrites(RiskLow, "verify clean add"))}), "cache"),
		vwrites(RiskMedium, `install i add ci uninstall rm remove update up run run-script start stop
			restart test exec x publish link prune dedupe rebuild pack init unpublish deprecate login
			logout adduser owner access dist-tag token set edit doctor`),
	),
}

// checkNpmRegistry: view, search and ping ask the registry (--registry,
// else registry.npmjs.org) about the names the command spells.
func checkNpmRegistry(c *classifier, k *call) {
	if !c.readVerbOperands(k) {
		return
	}
	if u := k.p.last("registry"); u != nil {
		scheme, rest, ok := strings.Cut(u.val.s, "://")
		if !ok {
			c.writer(k.name+" --registry "+u.val.s, RiskMedium, "registry must be a URL")
			return
		}
		authority, _, _ := strings.Cut(rest, "/")
		if !c.urlDest(k, strings.ToLower(scheme), authority) {
			return
		}
	} else if !c.destination(k, "registry.npmjs.org", 443) {
		return
	}
	c.readOnly(k)
}

package command

import (
	"strconv"
	"strings"
)

// Grammars of init, logging, kernel and monitoring tools. Each table lists
// every option of the tool (from its --help and manual, systemd 252-256,
// util-linux 2.38-2.40, procps-ng 4); an option not listed is unknown.

var systemTools = map[string]*tool{
	"systemctl":           systemctlTool,
	"journalctl":          journalctlTool,
	"dmesg":               dmesgTool,
	"date":                dateTool,
	"hostname":            hostnameTool,
	"sysctl":              sysctlTool,
	"timedatectl":         timedatectlTool,
	"hostnamectl":         hostnamectlTool,
	"localectl":           localectlTool,
	"loginctl":            loginctlTool,
	"networkctl":          networkctlTool,
	"resolvectl":          resolvectlTool,
	"systemd-resolve":     resolvectlTool,
	"busctl":              busctlTool,
	"coredumpctl":         coredumpctlTool,
	"systemd-analyze":     systemdAnalyzeTool,
	"mount":               mountTool,
	"crontab":             crontabTool,
	"top":                 topTool,
	"vmstat":              vmstatTool,
	"iostat":              iostatTool,
	"mpstat":              mpstatTool,
	"pidstat":             pidstatTool,
	"sar":                 sarTool,
	"free":                freeTool,
	"findmnt":             findmntTool,
	"blkid":               blkidTool,
	"fuser":               fuserTool,
	"chage":               chageTool,
	"passwd":              passwdTool,
	"smartctl":            smartctlTool,
	"mdadm":               mdadmTool,
	"chronyc":             chronycTool,
	"supervisorctl":       supervisorctlTool,
	"nginx":               nginxTool,
	"auditctl":            auditctlTool,
	"udevadm":             udevadmTool,
	"dmidecode":           dmidecodeTool,
	"modinfo":             modinfoTool,
	"update-alternatives": updateAlternativesTool,
	"mailq":               mailqTool,
	"lvs":                 lvmReportTool("lvs", lvsOpts),
	"vgs":                 lvmReportTool("vgs", ""),
	"pvs":                 lvmReportTool("pvs", ""),
	"lvdisplay":           lvmReportTool("lvdisplay", lvmDisplayOpts+" -m|--maps --history"),
	"vgdisplay":           lvmReportTool("vgdisplay", lvmDisplayOpts+" -A|--activevolumegroups -s|--short"),
	"pvdisplay":           lvmReportTool("pvdisplay", lvmDisplayOpts+" -m|--maps -s|--short"),
}

// LVM's reporting tools (LVM 2.03; its own getopt_long, so abbreviations
// are accepted) only report, but --config sets any LVM configuration,
// which names log files (log/file) and programs, and the profile options
// load configuration from files.
const (
	lvmReportOpts = `-a|--all --aligned --binary -d|--debug --driverloaded= --foreign -h|--help
		--ignorelockingfailure --ignoreskippedcluster --lockopt= --longhelp --nameprefixes
		--noheadings --nolocking --nosuffix -o|--options= -P|--partial --readonly
		--reportformat= --rows -S|--select= --separator= --shared -O|--sort= -t|--test
		--unbuffered --units= --unquoted -v|--verbose --version -q|--quiet --devices=
		--devicesfile= --nohints --journal= --logonly --configreport= -y|--yes`
	lvsOpts        = `-H|--history --segments`
	lvmDisplayOpts = `-c|--colon -C|--columns`
)

func lvmReportTool(name, extra string) *tool {
	return &tool{
		name: name, style: styleGNU,
		opts: opts(
			reads(lvmReportOpts+" "+extra),
			unknowns("sets LVM configuration, which names log files and programs", `--config= --commandprofile= --profile= --metadataprofile=`),
		),
	}
}

// systemCheckers are system tools whose syntax is not getopt-like.
var systemCheckers = map[string]checkFunc{
	"service":    checkService,
	"lsof":       checkLsof,
	"apachectl":  checkApachectl,
	"apache2ctl": checkApachectl,
	"kill":       checkKill,
}

// systemdRemote are the options of systemd tools that reach another
// machine: -H runs the tool's bus connection over ssh.
var systemdRemote = nets("operates on a remote host over ssh", `-H|--host=`)

// systemdImage are options that mount a disk image to operate on.
var systemdImage = unknowns("mounts a disk image", `--image=`)

var systemctlTool = &tool{
	name: "systemctl", style: styleGNU, globalsAfterVerb: true,
	opts: opts(
		reads(`-h|--help --version --system --user -M|--machine= -t|--type= --state= --failed
			-p|--property= -P= -a|--all -l|--full -r|--recursive --reverse --with-dependencies
			--job-mode= -T|--show-transaction --show-types --value --check-inhibitors= -i
			--kill-whom= --kill-value= -s|--signal= --what= --now --dry-run -q|--quiet --wait
			--no-block --no-wall --no-reload --legend= --no-pager --no-ask-password --global
			--runtime -f|--force --preset-mode= --root= -n|--lines= -o|--output= --plain
			--timestamp= --read-only --mkdir --marked --drop-in= --no-warn -C|--capsule=
			--image-policy= --stdin --no-legend`),
		systemdRemote, systemdImage,
		states(RiskHigh, "sets what the next boot or shutdown does",
			`--firmware-setup --boot-loader-menu= --boot-loader-entry= --reboot-argument= --when= --message=`),
	),
	noVerb: readVerb,
	verbs: verbTable(
		vreads(`status show cat is-active is-enabled is-failed is-system-running list-units
			list-unit-files list-timers list-sockets list-dependencies list-jobs list-machines
			list-automounts list-paths get-default show-environment whoami`),
		vrule(setterVerb(0), "log-level log-target service-watchdogs"),
		vwrites(RiskMedium, `start restart reload try-restart reload-or-restart try-reload-or-restart
			condrestart condreload force-reload enable reenable preset preset-all unmask link revert
			set-property set-default set-environment unset-environment import-environment
			daemon-reload daemon-reexec clean freeze thaw add-wants add-requires bind mount-image
			reset-failed`),
		vrule(editVerb, "edit"),
		vwrites(RiskHigh, `stop condstop kill mask disable isolate reboot soft-reboot poweroff halt
			kexec emergency rescue default switch-root suspend hibernate hybrid-sleep
			suspend-then-hibernate exit sleep`),
	),
}

// journalFollow and journalCount are the keys checkJournalctl looks at.
var journalctlTool = &tool{
	name: "journalctl", style: styleGNU, digitOpts: true,
	opts: opts(
		reads(`--system --user -M|--machine= -m|--merge -D|--directory= --file= --root=
			--namespace= -S|--since= -U|--until= -c|--cursor= --after-cursor= -b|--boot[=]
			-u|--unit= --user-unit= -t|--identifier= -T|--exclude-identifier= -p|--priority=
			--facility= -g|--grep= --case-sensitive[=] -k|--dmesg -o|--output= --output-fields=
			-n|--lines[=] -r|--reverse --show-cursor --utc -x|--catalog --no-hostname --no-full
			-a|--all -f|--follow --no-tail -q|--quiet --no-pager -e|--pager-end --interval=
			--verify-key= --force -h|--help --version -N|--fields -F|--field= --list-boots
			--disk-usage --verify --header --list-catalog --dump-catalog --new-id128
			--list-namespaces --image-policy= --truncate-newline -I --invocation=
			--list-invocations -l|--full --list-fields`),
		systemdImage,
		writes(RiskMedium, "changes the journal", `--vacuum-size= --vacuum-files= --vacuum-time=
			--sync --relinquish-var --smart-relinquish-var --flush --rotate --update-catalog
			--synchronize-on-exit=`),
		writes(RiskMedium, "creates sealing keys", `--setup-keys`),
		writes(RiskLow, "writes the cursor to a file", `--cursor-file=`),
	),
	check: checkJournalctl,
}

// checkJournalctl: journalctl reads; -f/--follow never ends whatever -n or
// --since say. The rewrite drops the follow flag and bounds the output.
func checkJournalctl(c *classifier, k *call) {
	f := newFollow()
	f.dropKeys(c, k, "follow")
	var extra edit
	if !k.p.has("lines") {
		extra.appendText = "-n " + rewriteLines
	}
	if !k.p.has("no-pager") {
		extra.appendText = strings.TrimSpace(extra.appendText + " --no-pager")
	}
	f.report(c, k, extra)
	c.readOnly(k)
}

var dmesgTool = &tool{
	name: "dmesg", style: styleGNU,
	opts: opts(
		reads(`-F|--file= -f|--facility= -H|--human -J|--json -k|--kernel -L|--color[=]
			-l|--level= -P|--nopager -p|--force-prefix -r|--raw --noescape -S|--syslog
			-s|--buffer-size= -u|--userspace -w|--follow -W|--follow-new -x|--decode
			-d|--show-delta -e|--reltime -T|--ctime -t|--notime --time-format= --since= --until=
			-h|--help -V|--version`),
		writes(RiskMedium, "changes the kernel log", `-C|--clear -c|--read-clear -D|--console-off
			-E|--console-on -n|--console-level=`),
	),
	check: func(c *classifier, k *call) {
		f := newFollow()
		f.dropKeys(c, k, "follow", "follow-new")
		f.report(c, k, edit{})
		c.readOnly(k)
	},
}

var dateTool = &tool{
	name: "date", style: styleGNU,
	opts: opts(
		reads(`-d|--date= --debug -f|--file= -I|--iso-8601[=] --resolution -R|--rfc-email|--rfc-2822
			--rfc-3339= -r|--reference= -u|--utc|--universal --help --version`),
		states(RiskMedium, "sets the clock", `-s|--set=`),
	),
	check: checkDate,
}

// checkDate: an operand other than +FORMAT sets the clock (MMDDhhmm...).
func checkDate(c *classifier, k *call) {
	for _, i := range k.p.ops {
		if a := k.args[i]; !a.static || !strings.HasPrefix(a.s, "+") {
			c.writer("date", RiskMedium, "sets the clock")
			return
		}
	}
	c.readOnly(k)
}

var hostnameTool = &tool{
	name: "hostname", style: styleGNU,
	opts: opts(
		reads(`-a|--alias -A|--all-fqdns -d|--domain -f|--fqdn|--long -i|--ip-address
			-I|--all-ip-addresses -s|--short -y|--yp|--nis -v|--verbose -h|--help -V|--version`),
		states(RiskMedium, "sets the host name", `-b|--boot -F|--file=`),
	),
	check: func(c *classifier, k *call) {
		if len(k.p.ops) > 0 {
			c.writer("hostname", RiskMedium, "sets the host name")
			return
		}
		c.readOnly(k)
	},
}

var sysctlTool = &tool{
	name: "sysctl", style: styleGNU,
	opts: opts(
		reads(`-a|--all -A -X --deprecated -b|--binary -e|--ignore -N|--names -n|--values
			-r|--pattern= -q|--quiet -o -x -d -h|--help -V|--version`),
		states(RiskHigh, "sets kernel parameters", `-w|--write -p|-f|--load[=] --system --dry-run`),
	),
	check: func(c *classifier, k *call) {
		for _, i := range k.p.ops {
			if a := k.args[i]; !a.static || strings.Contains(a.s, "=") {
				c.writer("sysctl", RiskHigh, "sets a kernel parameter")
				return
			}
		}
		c.readOnly(k)
	},
}

// systemdBusOpts are the options systemd's small *ctl tools share.
const systemdBusOpts = `-h|--help --version --no-pager --no-legend --no-ask-password -M|--machine=
	-p|--property= -P= -a|--all --value -l|--full --json=`

var (
	timedatectlTool = &tool{
		name: "timedatectl", style: styleGNU, globalsAfterVerb: true, noVerb: readVerb,
		opts: opts(reads(systemdBusOpts+" --adjust-system-clock"), systemdRemote,
			// --monitor follows timesyncd until interrupted.
			unknowns("follows until interrupted", "--monitor")),
		verbs: verbTable(
			vreads("status show list-timezones timesync-status show-timesync"),
			vwrites(RiskMedium, "set-time set-timezone set-local-rtc set-ntp ntp-servers revert"),
		),
	}
	hostnamectlTool = &tool{
		name: "hostnamectl", style: styleGNU, globalsAfterVerb: true, noVerb: readVerb,
		opts: opts(reads(systemdBusOpts+" --transient --static --pretty"), systemdRemote),
		verbs: verbTable(
			vreads("status show"),
			vrule(setterVerb(0), "hostname icon-name chassis deployment location"),
			vwrites(RiskMedium, "set-hostname set-icon-name set-chassis set-deployment set-location"),
		),
	}
	localectlTool = &tool{
		name: "localectl", style: styleGNU, globalsAfterVerb: true, noVerb: readVerb,
		opts: opts(reads(systemdBusOpts+" --no-convert"), systemdRemote),
		verbs: verbTable(
			vreads(`status list-locales list-keymaps list-x11-keymap-models list-x11-keymap-layouts
				list-x11-keymap-variants list-x11-keymap-options`),
			vwrites(RiskMedium, "set-locale set-keymap set-x11-keymap"),
		),
	}
	loginctlTool = &tool{
		name: "loginctl", style: styleGNU, globalsAfterVerb: true, noVerb: readVerb,
		opts: opts(reads(systemdBusOpts+" --kill-whom= -s|--signal= -n|--lines= -o|--output= --no-wall"), systemdRemote),
		verbs: verbTable(
			vreads(`list-sessions list-users list-seats session-status show-session user-status
				show-user seat-status show-seat`),
			vwrites(RiskMedium, `activate lock-session unlock-session lock-sessions unlock-sessions
				terminate-session kill-session enable-linger disable-linger terminate-user kill-user
				attach flush-devices terminate-seat`),
		),
	}
	networkctlTool = &tool{
		name: "networkctl", style: styleGNU, globalsAfterVerb: true, noVerb: readVerb,
		opts: opts(reads(`-h|--help --version --no-pager --no-legend -a|--all -s|--stats -l|--full
			-n|--lines= --json= --no-reload --drop-in= --runtime`)),
		verbs: verbTable(
			vreads("list status lldp label cat"),
			vwrites(RiskHigh, "up down renew forcerenew reconfigure reload delete edit mask unmask persistent-storage"),
		),
	}
	resolvectlTool = &tool{
		name: "resolvectl", style: styleGNU, globalsAfterVerb: true, noVerb: readVerb,
		opts: opts(reads(`-h|--help --version -4 -6 -i|--interface= -p|--protocol= -t|--type=
			-c|--class= --service-address= --service-txt= --cname= --validate= --synthesize=
			--cache= --zone= --trust-anchor= --network= --search= --stale-data= --relax-single-label=
			--raw[=] --legend= --no-pager --json= -j`)),
		verbs: verbTable(
			vrule(netReadCheck(nil, checkResolveQuery), "query service openpgp tlsa"),
			vreads("status statistics show-cache show-server-state monitor"),
			vwrites(RiskMedium, "flush-caches reset-statistics reset-server-features revert"),
			vrule(&verbRule{class: ruleCheck, check: resolvectlLinkSetting}, "dns domain default-route llmnr mdns dnssec dnsovertls nta"),
			vrule(setterVerb(0), "log-level"),
		),
	}
	busctlTool = &tool{
		name: "busctl", style: styleGNU, globalsAfterVerb: true, noVerb: readVerb,
		opts: opts(
			reads(`-h|--help --version --no-pager --no-legend -l|--full --system --user -M|--machine=
				--show-machine --unique --acquired --activatable --match= --size= --list -q|--quiet
				--verbose --json= -j --xml-interface --expect-reply= --auto-start=
				--allow-interactive-authorization= --timeout= --augment-creds= --watch-bind=
				--destination= -N|--limit-messages= -C|--capsule=`),
			systemdRemote,
			unknowns("connects to a bus the command names", "--address="),
		),
		verbs: verbTable(
			vreads("list status tree introspect get-property help"),
			vwrites(RiskMedium, "call set-property emit wait"),
			vrule(&verbRule{class: ruleCheck, check: streamVerb}, "monitor"),
			// capture writes a pcap stream to stdout, forever.
			vrule(&verbRule{class: ruleCheck, check: streamVerb}, "capture"),
		),
	}
	coredumpctlTool = &tool{
		name: "coredumpctl", style: styleGNU, globalsAfterVerb: true, noVerb: readVerb,
		opts: opts(
			reads(`-h|--help --version --no-pager --no-legend -n= -1 -S|--since= -U|--until= -r|--reverse
				-F|--field= -D|--directory= --file= -q|--quiet --json= --all --root=`),
			writes(RiskLow, "writes the core dump to a file", `-o|--output=`),
			execs("runs a debugger", `--debugger= -A|--debugger-arguments=`),
			systemdImage,
		),
		verbs: verbTable(
			vreads("list info dump"),
			vrule(interactiveVerb, "debug gdb"),
		),
	}
	systemdAnalyzeTool = &tool{
		name: "systemd-analyze", style: styleGNU, globalsAfterVerb: true, noVerb: readVerb,
		opts: opts(
			reads(`-h|--help --version -q|--quiet --no-pager --system --user --global --order
				--require --from-pattern= --to-pattern= --fuzz= --man[=] --iterations= --base-time=
				--root= --recursive-errors= --offline= --threshold= --security-policy= --json=
				--unit= --table --no-legend --tldr --scale-svg= --detailed --image-policy=
				-M|--machine= --profile=`),
			systemdRemote, systemdImage,
			// Generators are programs systemd-analyze verify runs.
			execs("runs unit generators", `--generators[=]`),
		),
		verbs: verbTable(
			vreads(`time blame critical-chain plot dot dump cat-config unit-files unit-paths
				exit-status capability condition syscall-filter filesystems calendar timestamp
				timespan security inspect-elf verify architectures smbios11 pcrs image-policy
				has-tpm2 fdstore malloc srk`),
			vrule(setterVerb(0), "log-level log-target service-watchdogs"),
		),
	}
)

// checkResolveQuery: resolvectl asks systemd-resolved, which asks the
// host's own upstream servers.
func checkResolveQuery(c *classifier, k *call) {
	if !c.readVerbOperands(k) {
		return
	}
	c.resolver()
	c.readOnly(k)
}

// resolvectlLinkSetting: "resolvectl dns [LINK [SERVER...]]" shows a
// link's setting with at most the link, and sets it with more; -i names
// the link, so then any operand sets.
func resolvectlLinkSetting(c *classifier, k *call) {
	n := 1
	if k.p.has("interface") {
		n = 0
	}
	if len(k.p.ops) > n {
		c.writer(k.name, RiskMedium, "sets a link's setting")
		return
	}
	c.readOnly(k)
}

// checkService: the SysV service wrapper, "service NAME ACTION"; only
// status and --status-all read.
func checkService(c *classifier, k *call) {
	if len(k.args) == 1 && k.args[0].static && k.args[0].s == "--status-all" {
		c.read("service --status-all", "read-only")
		return
	}
	if len(k.args) == 2 && k.args[0].static && k.args[1].static && !strings.HasPrefix(k.args[0].s, "-") {
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
	if len(k.args) > 2 {
		c.writer("service", RiskMedium, "action with arguments")
		return
	}
	c.unknown("service", "no action known to be read-only")
}

var mountTool = &tool{
	name: "mount", style: styleGNU,
	opts: opts(reads(`-l|--show-labels -v|--verbose -h|--help -V|--version -t|--types=`)),
	check: func(c *classifier, k *call) {
		if len(k.p.ops) > 0 {
			c.writer("mount", RiskHigh, "mounts a file system")
			return
		}
		c.readOnly(k)
	},
}

var crontabTool = &tool{
	name: "crontab", style: styleGNU,
	opts: opts(
		reads(`-u= -l -i -n -h -V -s -T`),
		readsVal(checkCrontabEdit, `-e`),
		writes(RiskHigh, "removes the crontab", `-r`),
	),
	check: func(c *classifier, k *call) {
		switch {
		case k.p.has("e"):
		case !k.p.has("l") || len(k.p.ops) > 0 || k.p.has("n"):
			c.writer("crontab", RiskMedium, "installs a crontab")
			return
		}
		c.read("crontab -l", "read-only")
	},
}

// checkCrontabEdit: crontab -e edits in an editor, a writer that waits
// on a person.
func checkCrontabEdit(c *classifier, k *call, u *optUse) bool {
	c.writer("crontab -e", RiskMedium, "edits the crontab")
	c.unbounded(k.ctx, BoundPager, "")
	return false
}

var topTool = &tool{
	name: "top", style: styleGNU,
	opts: opts(reads(`-b|--batch-mode -c|--cmdline-toggle -d|--delay= -E|--scale-summary-mem=
		-e|--scale-task-mem= -H|--threads-show -i|--idle-toggle -n|--iterations= -O|--list-fields
		-o|--sort-override= -p|--pid= -S|--accum-time-toggle -s|--secure-mode
		-U|--filter-any-user= -u|--filter-only-euser= -w|--width[=] -1|--single-cpu-toggle
		-h|--help -V|--version`)),
	check: checkTop,
}

// checkTop: top only ends by itself with an iteration count (-n).
func checkTop(c *classifier, k *call) {
	if !k.p.hasAny("iterations", "list-fields", "help", "version") {
		e := edit{insertAfter: -1, insert: "-b -n 1"}
		if k.p.has("batch-mode") {
			e = edit{insertAfter: -1, appendText: "-n 1"}
		}
		c.unbounded(k.ctx, BoundUnboundedStream, c.rebuild(k, e))
	}
	c.readOnly(k)
}

// intervalCheck is the check of tools taking [interval [count]]
// operands: an interval without a count never ends.
func intervalCheck(c *classifier, k *call) {
	numbers, last := 0, -1
	for _, i := range k.p.ops {
		a := k.args[i]
		if !a.static {
			c.unknown(k.name, "dynamic interval or count")
			return
		}
		if isNumber(a.s) || strings.Count(a.s, ".") == 1 && isNumber(strings.Replace(a.s, ".", "", 1)) {
			numbers++
			last = i
		}
	}
	if numbers == 1 {
		c.unbounded(k.ctx, BoundUnboundedStream, c.rebuild(k, edit{insertAfter: last, insert: "5"}))
	}
	c.readOnly(k)
}

var (
	vmstatTool = &tool{
		name: "vmstat", style: styleGNU, check: intervalCheck,
		opts: opts(reads(`-a|--active -f|--forks -m|--slabs -n|--one-header -s|--stats -d|--disk
			-D|--disk-sum -p|--partition= -S|--unit= -w|--wide -t|--timestamp -y|--no-first
			-h|--help -V|--version`)),
	}
	// iostat, mpstat, pidstat and sar come from sysstat, whose parser takes
	// short options one at a time (clusters like -xz work) and long
	// options spelled out.
	iostatTool = &tool{
		name: "iostat", style: styleExact, check: intervalCheck,
		opts: opts(reads(`-c -d -h -k -m -N -s -t -V -x -y -z -H -o= -j= -g= -p[=] -f= --compact
			--dec= --human --pretty -e`)),
	}
	mpstatTool = &tool{
		name: "mpstat", style: styleExact, check: intervalCheck,
		opts: opts(reads(`-A -H -n -T -u -V -I= -N= -o= -P= --dec=`)),
	}
	pidstatTool = &tool{
		name: "pidstat", style: styleExact, check: intervalCheck,
		opts: opts(
			reads(`-d -H -h -I -l -R -r -s -t -U[=] -u -V -v -w -C= -G= -p= -T= --dec= --human`),
			execs("runs a program", `-e`),
		),
	}
	sarTool = &tool{
		name: "sar", style: styleExact, check: intervalCheck,
		opts: opts(
			reads(`-A -B -b -C -d -F -H -h -p -q -r -S -t -u -V -v -W -w -y -z -I= -j= -m= -n= -P=
				-f= -e= -i= -s= --dec= --human --pretty --sadc -x -X`),
			writes(RiskLow, "writes a data file", `-o=`),
		),
	}
	freeTool = &tool{
		name: "free", style: styleGNU,
		opts: opts(reads(`-b|--bytes --kilo --mega --giga --tera --peta -k|--kibi -m|--mebi -g|--gibi
			--tebi --pebi -h|--human --si -l|--lohi -L|--line -t|--total -v|--committed
			-s|--seconds= -c|--count= -w|--wide --help -V|--version`)),
		check: func(c *classifier, k *call) {
			if k.p.has("seconds") && !k.p.has("count") {
				c.unbounded(k.ctx, BoundUnboundedStream, "")
			}
			c.readOnly(k)
		},
	}
	findmntTool = &tool{
		name: "findmnt", style: styleGNU,
		opts: opts(reads(`-s|--fstab -m|--mtab -k|--kernel -p|--poll[=] -w|--timeout= -A|--all
			-a|--ascii -b|--bytes -C|--nocanonicalize -c|--canonicalize -D|--df -d|--direction=
			-e|--evaluate -F|--tab-file= -f|--first-only -i|--invert -J|--json -l|--list
			-N|--task= -n|--noheadings -O|--options= -o|--output= --output-all -P|--pairs
			--pseudo --shadowed -R|--submounts -r|--raw --real -S|--source= -T|--target= --tree
			-M|--mountpoint= -t|--types= -U|--uniq -u|--notruncate -v|--nofsroot -y|--shell
			-x|--verify --verbose --vfs-all -h|--help -V|--version -I|--dfi -Q|--filter=
			-H|--list-columns --hyperlink[=] --id= --uniq-id=`)),
		check: func(c *classifier, k *call) {
			if k.p.has("poll") {
				c.unbounded(k.ctx, BoundUnboundedStream, "")
			}
			c.readOnly(k)
		},
	}
	blkidTool = &tool{
		name: "blkid", style: styleGNU,
		opts: opts(
			reads(`-d|--no-encoding -o|--output= -k|--list-filesystems -s|--match-tag= -t|--match-token=
				-l|--list-one -L|--label= -U|--uuid= -p|--probe -i|--info -S|--size= -O|--offset=
				-u|--usages= -n|--match-types= -D|--no-part-details -H|--hint= -h|--help
				-V|--version`),
			readsVal(devNullOnly("blkid -c", "writes the cache to the file"), `-c|--cache-file=`),
			writes(RiskLow, "rewrites the cache", `-g|--garbage-collect -w|--wipe-cache`),
		),
	}
	fuserTool = &tool{
		name: "fuser", style: styleGNU,
		opts: opts(
			reads(`-a|--all -i|--interactive -I|--inode -l|--list-signals -m|--mount -M|--ismountpoint
				-n|--namespace= -s|--silent -u|--user -v|--verbose -w|--writeonly -V|--version
				-4|--ipv4 -6|--ipv6`),
			states(RiskHigh, "kills processes", `-k|--kill`),
		),
		check: func(c *classifier, k *call) {
			// -SIGNAL is only used with -k; a word -TERM is an option
			// the table does not list, so it is refused before here.
			c.readOnly(k)
		},
	}
	chageTool = &tool{
		name: "chage", style: styleGNU,
		opts: opts(
			reads(`-l|--list -h|--help -R|--root= -P|--prefix=`),
			states(RiskMedium, "changes password ageing", `-d|--lastday= -E|--expiredate= -I|--inactive=
				-i|--iso8601 -m|--mindays= -M|--maxdays= -W|--warndays=`),
		),
		check: func(c *classifier, k *call) {
			if !k.p.hasAny("list", "help") {
				c.writer("chage", RiskMedium, "changes password ageing interactively")
				return
			}
			c.read("chage -l", "read-only")
		},
	}
	// passwd -S shows an account's password status; every other mode
	// changes the password or the account.
	passwdTool = &tool{
		name: "passwd", style: styleGNU,
		opts: opts(
			reads(`-S|--status -a|--all -h|--help -R|--root= -P|--prefix= -q|--quiet`),
			states(RiskMedium, "changes a password or account", `-d|--delete -e|--expire -i|--inactive=
				-k|--keep-tokens -l|--lock -n|--mindays= -r|--repository= -u|--unlock -w|--warndays=
				-x|--maxdays=`),
		),
		check: func(c *classifier, k *call) {
			if !k.p.hasAny("status", "help") {
				c.writer("passwd", RiskMedium, "changes a password")
				return
			}
			if !k.p.has("status") {
				c.read("passwd -h", "shows help")
				return
			}
			c.read("passwd -S", "shows password status")
		},
	}
)

// devNullOnly returns a value check that accepts only /dev/null: any
// other file would be written.
func devNullOnly(word, msg string) valueCheck {
	return func(c *classifier, k *call, u *optUse) bool {
		if u.val.static && u.val.s == "/dev/null" {
			return true
		}
		c.writer(word+" "+u.val.s, RiskLow, msg)
		return false
	}
}

// smartLogValue vets smartctl -l: most logs read, but sasphy,reset and
// sataphy,reset clear counters and scterc,N,M / scttempint,N set values.
func smartLogValue(c *classifier, k *call, u *optUse) bool {
	v := u.val.s
	if !u.val.static || strings.HasSuffix(v, ",reset") || strings.HasPrefix(v, "scttempint") ||
		strings.HasPrefix(v, "scterc,") {
		c.writer("smartctl -l "+v, RiskMedium, "changes drive settings")
		return false
	}
	return true
}

var smartctlTool = &tool{
	name: "smartctl", style: styleGNU,
	opts: opts(
		reads(`-h|--help|--usage -V|--version|--copyright|--license -i|--info --identify[=]
			-g|--get= -a|--all -x|--xall --scan --scan-open -j|--json[--=] -q|--quietmode=
			-d|--device= -T|--tolerance= -b|--badsum= -r|--report= -n|--nocheck= -H|--health
			-c|--capabilities -A|--attributes -f|--format= -v|--vendorattribute= -F|--firmwarebug=
			-P|--presets= -B|--drivedb=`),
		readsVal(smartLogValue, `-l|--log=`),
		states(RiskMedium, "changes drive settings or starts a test", `-s|--smart|--set= -o|--offlineauto=
			-S|--saveauto= -t|--test= -C|--captive -X|--abort`),
	),
}

var mdadmTool = &tool{
	name: "mdadm", style: styleGNU,
	opts: opts(
		reads(`-Q|--query -D|--detail --detail-platform -E|--examine -X|--examine-bitmap
			--examine-badblocks -s|--scan -v|--verbose -b|--brief -Y|--export -q|--quiet -t|--test
			-c|--config= --misc -h|--help --help-options -V|--version -e|--metadata= --homehost=
			--prefer=`),
		states(RiskHigh, "changes RAID arrays", `-C|--create -A|--assemble -B|--build --manage -G|--grow
			-I|--incremental -F|--follow|--monitor --zero-superblock -R|--run -S|--stop -o|--readonly
			-w|--readwrite -a|--add -r|--remove -f|--fail|--set-faulty --re-add --replace --with=
			--action= -W|--wait --wait-clean --update= --add-spare --kill-subarray= --update-subarray=
			--dump= --restore= --auto-detect --write-mostly --readwrite-mostly --remove-failed
			--cluster-confirm`),
	),
	check: func(c *classifier, k *call) {
		if !k.p.hasAny("query", "detail", "detail-platform", "examine", "examine-bitmap",
			"examine-badblocks", "help", "help-options", "version") {
			c.writer("mdadm", RiskHigh, "manages an array (no read-only mode given)")
			return
		}
		c.readOnly(k)
	},
}

// chronyc joins its operands into one command, or with -m takes each as a
// command: every one must be a report. manual reads only as "manual
// list" (manual on, off, delete and reset change the daemon).
var chronycReads = wordSet(`tracking sources sourcestats activity clients ntpdata serverstats
	selectdata authdata rtcdata smoothing waitsync sourcename help quit exit`)

// chronyc talks to chronyd: the daemon of -h HOST (port 323, or -p), else
// the local one over its socket or 127.0.0.1:323.
var chronycTool = &tool{
	name: "chronyc", style: styleExactStop, net: true,
	opts: opts(reads(`-4 -6 -n -N -c -m -a -d -e -h= -p= -v|--version --help -f=`)),
	check: func(c *classifier, k *call) {
		if len(k.p.ops) == 0 && k.p.hasAny("version", "help") {
			c.localNet()
			c.readOnly(k)
			return
		}
		host, port := "127.0.0.1", 323
		if u := k.p.last("h"); u != nil {
			host = u.val.s
		}
		if u := k.p.last("p"); u != nil {
			n, err := strconv.Atoi(u.val.s)
			if err != nil {
				c.writer("chronyc -p "+u.val.s, RiskMedium, "port is not a number")
				return
			}
			port = n
		}
		for _, h := range strings.Split(host, ",") {
			if !c.destination(k, h, port) {
				return
			}
		}
		if len(k.p.ops) == 0 {
			c.unknown("chronyc", "interactive")
			c.unbounded(k.ctx, BoundInteractiveREPL, "")
			return
		}
		multi := k.p.has("m")
		for n, i := range k.p.ops {
			a := k.args[i]
			if !a.static {
				c.unknown("chronyc", "dynamic command")
				return
			}
			if !multi && n > 0 {
				// "chronyc sources -v": the rest is the command's arguments.
				if !strings.HasPrefix(a.s, "-") && !isNumber(a.s) {
					c.unknown("chronyc "+a.s, "extra argument after a read-only command")
					return
				}
				continue
			}
			word, rest, _ := strings.Cut(strings.TrimSpace(a.s), " ")
			if word == "manual" {
				if multi && strings.TrimSpace(rest) == "list" {
					continue
				}
				if !multi && (strings.TrimSpace(rest) == "list" && len(k.p.ops) == 1 ||
					rest == "" && len(k.p.ops) == 2 && k.args[k.p.ops[1]].s == "list") {
					c.read("chronyc manual list", "lists the manual samples")
					return
				}
			}
			if !chronycReads[word] || multi && strings.ContainsAny(a.s, ";\n") {
				c.writer("chronyc "+word, RiskMedium, "changes the time service")
				return
			}
		}
		c.readOnly(k)
	},
}

var supervisorctlTool = &tool{
	name: "supervisorctl", style: styleGNUStop, globalsAfterVerb: false,
	opts: opts(
		reads(`-c|--configuration= -h|--help -s|--serverurl= -u|--username= -p|--password=`),
		unknowns("starts an interactive shell", `-i|--interactive`),
		writes(RiskLow, "keeps a history file", `-r|--history-file=`),
	),
	verbs: verbTable(
		vreads("status avail pid version help"),
		vrule(&verbRule{class: ruleCheck, check: checkSupervisorTail}, "tail maintail"),
		vwrites(RiskMedium, `start stop restart reload reread update add remove clear signal shutdown
			fg open`),
	),
}

// checkSupervisorTail: tail -f follows forever.
func checkSupervisorTail(c *classifier, k *call) {
	for _, i := range k.p.ops {
		if a := k.args[i]; !a.static || a.s == "-f" {
			c.unbounded(k.ctx, BoundUnboundedStream, "")
		}
	}
	c.readOnly(k)
}

// nginx -t and -T test the configuration. -e names the error log nginx
// opens (creating it) even while testing, -p moves every relative path,
// -g adds directives (load_module loads code), -s signals the server, and
// without a test flag nginx starts a server.
var nginxTool = &tool{
	name: "nginx", style: styleExact,
	opts: opts(
		reads(`-t -T -v -V -q -h -? -c=`),
		writes(RiskMedium, "opens (creates) the error log it names", `-e=`),
		writes(RiskMedium, "moves every relative path nginx opens", `-p=`),
		execs("adds directives, which may load modules", `-g=`),
		states(RiskMedium, "signals the server", `-s=`),
	),
	check: func(c *classifier, k *call) {
		switch {
		case len(k.p.ops) > 0:
			c.unknown("nginx "+k.args[k.p.ops[0]].s, "unexpected argument")
		case !k.p.hasAny("t", "T", "v", "V", "h", "?"):
			c.writer("nginx", RiskMedium, "starts the server")
		default:
			c.read("nginx -t", "tests the configuration")
		}
	},
}

// checkApachectl: configtest, status and listings read; anything else is
// passed to httpd, which starts or signals the server. -E names a startup
// log file, -C/-c add directives (LoadModule loads code).
func checkApachectl(c *classifier, k *call) {
	mode := false
	for i := 0; i < len(k.args); i++ {
		a := k.args[i]
		if !a.static {
			c.unknown(k.name, "dynamic argument")
			return
		}
		switch a.s {
		case "-t", "configtest", "-S", "-M", "-l", "-L", "-v", "-V", "status", "fullstatus", "-h":
			mode = true
			continue
		case "-D":
			if i+1 < len(k.args) && k.args[i+1].static && strings.HasPrefix(k.args[i+1].s, "DUMP_") {
				i++
				continue
			}
		case "-f", "-d":
			if i+1 < len(k.args) {
				i++
				continue
			}
		case "-E":
			c.writer(k.name+" -E", RiskMedium, "writes a startup log file")
			return
		case "-C", "-c":
			c.construct(k.name+" "+a.s, RiskMedium, "adds directives, which may load modules")
			return
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

var auditctlTool = &tool{
	name: "auditctl", style: styleGNU,
	opts: opts(reads(`-l -s -v|--version -h -k=`)),
	check: func(c *classifier, k *call) {
		if len(k.p.ops) > 0 || !k.p.hasAny("l", "s", "version", "h") {
			c.writer("auditctl", RiskHigh, "changes audit rules")
			return
		}
		c.readOnly(k)
	},
}

// udevadm: info, monitor, verify, cat and settle read; the others change
// the device manager or run rule programs.
var udevadmTool = &tool{
	name: "udevadm", style: styleGNUStop, noVerb: nil,
	opts: opts(reads(`-h|--help -V|--version -d|--debug`)),
	verbs: verbTable(
		vrule(readWith(opts(
			reads(`-h|--help -V|--version -q|--query= --property= --value -p|--path= -n|--name=
				-r|--root -a|--attribute-walk -t|--tree -d|--device-id-of-file= -x|--export
				-P|--export-prefix -e|--export-db -w|--wait-for-initialization[=] --no-pager
				--json= -s|--subsystem-match= -S|--subsystem-nomatch= --attr-match= --attr-nomatch=
				--property-match= --tag-match= --sysname-match= --name-match= --parent-match=
				--initialized-match= --initialized-nomatch= -N|--resolve-names=`),
			writes(RiskMedium, "removes the udev database", `-c|--cleanup-db`),
		)), "info"),
		vrule(&verbRule{class: ruleCheck, check: streamVerb, opts: opts(reads(`-h|--help -V|--version
			-p|--property -k|--kernel -u|--udev -s|--subsystem-match= -t|--tag-match=`))}, "monitor"),
		vrule(readWith(opts(reads(`-h|--help -V|--version -t|--timeout= -E|--exit-if-exists=`))), "settle"),
		vrule(readWith(opts(reads(`-h|--help -V|--version -N|--resolve-names= --root= --no-summary
			--no-style`))), "verify"),
		vrule(readWith(opts(reads(`-h|--help -V|--version --root= --tldr --config`))), "cat"),
		vwrites(RiskMedium, "trigger control hwdb"),
		vrule(runsVerb, "test test-builtin lock"),
		vrule(readWith(opts(reads(`-h|--help -V|--version -t|--timeout= --initialized= --removed
			--settle`))), "wait"),
	),
}

var dmidecodeTool = &tool{
	name: "dmidecode", style: styleGNU,
	opts: opts(
		reads(`-d|--dev-mem= -h|--help -q|--quiet -s|--string= -t|--type= -H|--handle= -u|--dump
			--from-dump= --no-sysfs --oem-string= --no-quirks -V|--version -j|--json`),
		writes(RiskLow, "dumps the DMI data to a file", `--dump-bin=`),
	),
}

var modinfoTool = &tool{
	name: "modinfo", style: styleGNU,
	opts: opts(reads(`-a|--author -d|--description -l|--license -p|--parameters -n|--filename
		-0|--null -m|--modname -F|--field= -k|--set-version= -b|--basedir= -V|--version -h|--help`)),
}

// update-alternatives parses spelled-out long options itself; --display,
// --query, --list and --get-selections read, the other commands change
// the alternatives system, and --log names a file it appends to.
var updateAlternativesTool = &tool{
	name: "update-alternatives", style: styleExact,
	opts: opts(
		reads(`--display= --query= --list= --get-selections --help --version --altdir= --admindir=
			--instdir= --root= --quiet --verbose --debug --force --skip-auto`),
		writes(RiskLow, "appends to the log file it names", `--log=`),
		states(RiskMedium, "changes the alternatives", `--install== --remove== --remove-all= --auto=
			--set== --config= --all --set-selections --slave==`),
	),
	check: func(c *classifier, k *call) {
		if len(k.p.ops) > 0 || !k.p.hasAny("display", "query", "list", "get-selections", "help", "version") {
			c.unknown("update-alternatives", "no read-only command")
			return
		}
		c.readOnly(k)
	},
}

// kill -0 checks that processes exist and kill -l/-L list signals; any
// other signal changes a process. bash's kill reads every word that
// starts with "-" before the first process id as a (new) signal, so the
// words after -0 must start with a process id or "--".
func checkKill(c *classifier, k *call) {
	args := k.args
	for _, a := range args {
		if !a.static && (a.split || !a.noDash) {
			c.writer("kill", RiskMedium, "dynamic signal or process")
			return
		}
	}
	if len(args) == 0 {
		c.unknown("kill", "no process")
		return
	}
	switch s := args[0].s; {
	case s == "-l" || s == "--list":
		if len(args) <= 2 {
			c.read("kill -l", "lists signals")
			return
		}
	case s == "-L" || s == "--table":
		if len(args) == 1 {
			c.read("kill -L", "lists signals")
			return
		}
	case s == "-0" || (s == "-s" || s == "-n") && len(args) > 1 && args[1].static && args[1].s == "0":
		rest := args[1:]
		if s != "-0" {
			rest = args[2:]
		}
		if len(rest) > 0 && rest[0].static && rest[0].s == "--" {
			rest = rest[1:]
		}
		ok := len(rest) > 0
		for i, a := range rest {
			// The first word must be a process (id, %job); later ones may
			// be process groups (-PGID), read as processes by then.
			if !a.static && i > 0 {
				continue
			}
			if !isProcessID(a.s, i > 0) {
				ok = false
			}
		}
		if ok {
			c.read("kill -0", "checks that processes exist")
			return
		}
	}
	c.writer("kill", RiskMedium, "signals processes")
}

// isProcessID reports a process id, a job (%1) or, when group is true, a
// process group (-PGID).
func isProcessID(s string, group bool) bool {
	switch {
	case isNumber(s):
		return true
	case strings.HasPrefix(s, "%") && len(s) > 1:
		return !strings.ContainsAny(s, " \t\n;&|`$")
	case group && strings.HasPrefix(s, "-"):
		return isNumber(s[1:])
	}
	return false
}

// mailq lists the mail queue; the sendmail implementations pass other
// options on (-q runs the queue, -bi rebuilds the aliases).
var mailqTool = &tool{
	name: "mailq", style: styleExact,
	opts: opts(reads(`-v`)),
	check: func(c *classifier, k *call) {
		if len(k.p.ops) > 0 {
			c.unknown("mailq", "arguments are passed to sendmail")
			return
		}
		c.readOnly(k)
	},
}

package command

import "strings"

// Administration tools whose every mode but one or two changes the
// system: partitioners, loop and swap devices, device-mapper, file system
// tunables, the dynamic linker's cache, the hardware clock, certificate
// and key agents. Each read mode is tabled from the tool's manual and its
// check requires it; anything else (an unlisted option, an operand the
// read mode does not take) is a write.

var adminTools = map[string]*tool{
	"fdisk":     fdiskTool,
	"parted":    partedTool,
	"dmsetup":   dmsetupTool,
	"losetup":   losetupTool,
	"swapon":    swaponTool,
	"tune2fs":   tune2fsTool,
	"ldconfig":  ldconfigTool,
	"certbot":   certbotTool,
	"ssh-add":   sshAddTool,
	"hwclock":   hwclockTool,
	"e2fsck":    e2fsckTool,
	"xfs_info":  xfsInfoTool,
	"nvme":      nvmeTool,
	"postqueue": postqueueTool,
	"ntpq":      ntpqTool,
	"showmount": showmountTool,
}

// fdisk (util-linux) lists with -l or -x; without them it opens a device
// for interactive editing and writes the partition table.
var fdiskTool = &tool{
	name: "fdisk", style: styleGNU,
	opts: opts(
		reads(`-l|--list -x|--list-details -b|--sector-size= -o|--output= -u|--units[=] -C|--cylinders=
			-H|--heads= -S|--sectors= -t|--type= --bytes -L|--color[=] -c|--compatibility[=]
			-h|--help -V|--version --lock[=]`),
		states(RiskHigh, "edits partition tables", `-n|--noauto-pt -w|--wipe= -W|--wipe-partitions=
			-B|--protect-boot -s|--getsz`),
	),
	check: func(c *classifier, k *call) {
		if !k.p.hasAny("list", "list-details", "help", "version") {
			c.writer("fdisk", RiskHigh, "edits the partition table (only -l and -x list)")
			return
		}
		c.read("fdisk -l", "lists partition tables")
	},
}

// parted lists with -l; "parted DEVICE print" prints one table. Every
// other command on its line changes partitions; -s keeps it from asking.
var partedTool = &tool{
	name: "parted", style: styleGNU,
	opts: opts(reads(`-l|--list -m|--machine -j|--json -s|--script -f|--fix -a|--align= -h|--help
		-v|--version`)),
	check: func(c *classifier, k *call) {
		ops := k.p.ops
		if len(ops) == 0 && k.p.hasAny("list", "help", "version") {
			c.read("parted -l", "lists partition tables")
			return
		}
		if k.p.has("fix") {
			c.writer("parted --fix", RiskHigh, "fixes partition tables")
			return
		}
		words := make([]string, 0, len(ops))
		for _, i := range ops {
			words = append(words, k.args[i].s)
		}
		if k.p.has("list") && len(words) == 0 || len(words) >= 2 && partedReadCommands(words[1:]) {
			c.read("parted print", "prints a partition table")
			return
		}
		c.writer("parted "+strings.Join(words, " "), RiskHigh, "changes partitions (only -l and DEVICE print read)")
	},
}

// partedReadCommands reports parted commands that only show: print (with
// free, all, list or devices) after optional unit settings.
func partedReadCommands(w []string) bool {
	for len(w) >= 2 && w[0] == "unit" {
		w = w[2:]
	}
	if len(w) == 0 || w[0] != "print" {
		return false
	}
	return len(w) == 1 || len(w) == 2 && matchOneOf(w[1], "free", "all", "list", "devices")
}

// dmsetup: ls, info, table, status, deps, targets and version report;
// every other command creates, removes, suspends, reloads or messages
// devices. ls --exec runs a command for each device, table --showkeys
// prints encryption keys.
var dmsetupTool = &tool{
	name: "dmsetup", style: styleGNU, globalsAfterVerb: true,
	opts: opts(
		reads(`-c|-C|--columns -o|--options= --noheadings --separator= -S|--select= --sort= -v|--verbose
			--tree --target= -u|--uuid= -j|--major= -m|--minor= --nameprefixes --rows --unbuffered
			--unquoted --noudevsync --noudevrules -y|--yes --headings= --help -h --version
			--manglename= --noflush --nolockfs --readonly --inactive --count= --interval=`),
		execs("runs a command for each device", `--exec=`),
		nets("prints the encryption keys of crypt targets", `--showkeys`),
	),
	verbs: verbTable(
		vreads("ls info table status deps targets version help udevcookies"),
		vwrites(RiskHigh, `create remove remove_all suspend resume load reload rename message wipe_table
			mknodes setgeometry mangle splitname clear udevcomplete udevcomplete_all udevflags
			udevcreatecookie udevreleasecookie measure wait`),
	),
}

// losetup lists (-a, -l, -j FILE), shows one device (a device name
// alone) or finds the first free one (-f alone); with a file it attaches
// it, and -d, -D, -c and -r change devices.
var losetupTool = &tool{
	name: "losetup", style: styleGNU,
	opts: opts(
		reads(`-a|--all -l|--list -O|--output= --output-all -n|--noheadings --raw -J|--json
			-j|--associated= -o|--offset= -f|--find -h|--help -V|--version`),
		states(RiskMedium, "attaches, detaches or changes loop devices", `-d|--detach -D|--detach-all
			-c|--set-capacity -r|--read-only -P|--partscan --sizelimit= -b|--sector-size= --direct-io[=]
			--loop-ref= --show -L|--nooverlap`),
	),
	check: func(c *classifier, k *call) {
		ops := k.p.ops
		switch {
		case k.p.has("find") && len(ops) > 0:
			c.writer("losetup -f "+k.args[ops[0]].s, RiskMedium, "attaches a file to a loop device")
		case len(ops) > 1:
			c.writer("losetup "+k.args[ops[1]].s, RiskMedium, "attaches a file to a loop device")
		case len(ops) == 1 && !strings.HasPrefix(k.args[ops[0]].s, "/dev/loop"):
			c.writer("losetup "+k.args[ops[0]].s, RiskMedium, "operand is not a loop device")
		default:
			c.read("losetup", "lists loop devices")
		}
	},
}

// swapon --show (and the old -s) lists swap areas; with operands or -a it
// turns swap on.
var swaponTool = &tool{
	name: "swapon", style: styleGNU,
	opts: opts(
		reads(`--show[=] -s|--summary --noheadings --raw --bytes -h|--help -V|--version`),
		states(RiskMedium, "turns swap on", `-a|--all -d|--discard[=] -e|--ifexists -f|--fixpgsz
			-o|--options= -p|--priority= -v|--verbose -T|--fstab=`),
	),
	check: listingMode("swapon", RiskMedium, "turns swap on (only --show lists)", "swapon --show", "lists swap areas", "show", "summary", "help", "version"),
}

// tune2fs -l lists a file system's superblock; every other option
// changes it.
var tune2fsTool = &tool{
	name: "tune2fs", style: styleExact,
	opts: opts(
		reads(`-l`),
		states(RiskHigh, "changes the file system", `-c= -C= -e= -E= -f -g= -i= -I= -j -J= -L= -m= -M=
			-o= -O= -Q= -r= -T= -u= -U= -z=`),
	),
	check: func(c *classifier, k *call) {
		if !k.p.has("l") || len(k.p.ops) != 1 {
			c.writer("tune2fs", RiskHigh, "changes the file system (only -l DEVICE lists)")
			return
		}
		c.read("tune2fs -l", "lists the superblock")
	},
}

// ldconfig -p prints the linker cache; every other form rebuilds it and
// the links.
var ldconfigTool = &tool{
	name: "ldconfig", style: styleGNU,
	opts: opts(
		reads(`-p|--print-cache -c|--format= -?|--help --usage -V|--version`),
		states(RiskMedium, "rebuilds the linker cache", `-v|--verbose -n -N -X -f= -C= -r= -l -i|--ignore-aux-cache`),
	),
	check: listingMode("ldconfig", RiskMedium, "rebuilds the linker cache (only -p prints it)", "ldconfig -p", "prints the linker cache", "print-cache", "help", "usage", "version"),
}

// certbot certificates lists the certificates it manages (reading its
// configuration directory; like every certbot command it also appends to
// its own log under /var/log/letsencrypt and takes its lock files, which
// the read sandbox turns into warnings); every other
// subcommand obtains, renews, revokes or deletes certificates.
var certbotTool = &tool{
	name: "certbot", style: styleArgparse, globalsAfterVerb: true,
	opts: opts(
		reads(`--cert-name= -d|--domains|--domain= --config-dir= --work-dir= --logs-dir=
			-q|--quiet -v|--verbose -h|--help --version`),
		unknowns("reads a configuration file, which can name hooks", `-c|--config=`),
	),
	verbs: verbTable(
		vreads("certificates"),
		vwrites(RiskMedium, `run certonly renew revoke delete install rollback register unregister
			update_account reconfigure enhance update_symlinks plugins show_account`),
	),
}

// ssh-add -l and -L list the agent's keys (over its local socket); every
// other form adds, removes or locks keys.
var sshAddTool = &tool{
	name: "ssh-add", style: styleGNU,
	opts: opts(
		reads(`-l -L -E= -v -q`),
		states(RiskLow, "changes the agent's keys", `-c -C -D -d -e= -H= -h= -K -k -M -m= -S= -s= -T -t= -X -x`),
	),
	check: listingMode("ssh-add", RiskLow, "adds keys to the agent (only -l and -L list)", "ssh-add -l", "lists the agent's keys", "l", "L"),
}

// hwclock --show (-r, --get, --predict) reads the hardware clock; every
// other function sets it, the system clock or the drift file.
var hwclockTool = &tool{
	name: "hwclock", style: styleGNU,
	opts: opts(
		reads(`-r|--show --get --predict -u|--utc -l|--localtime --rtc= -f= --directisa --noadjfile
			--adjfile= --date= --delay= -v|--verbose -D|--debug --test -h|--help -V|--version --ul-debug=`),
		states(RiskMedium, "sets a clock or the drift file", `-a|--adjust -s|--hctosys -w|--systohc
			--systz --set --update-drift --epoch= --getepoch --setepoch --param-get= --param-set=
			--param-index= --vl-read --vl-clear`),
	),
	check: listingMode("hwclock", RiskMedium, "sets a clock (only --show reads)", "hwclock --show", "reads the hardware clock", "show", "get", "predict", "help", "version"),
}

// e2fsck -n opens the file system read-only and answers no to every
// question; -p and -y repair, -c writes the bad blocks list, -l and -L
// read one into the file system, -z writes an undo file, -D and -E
// change directories and options, -k and -j write too.
var e2fsckTool = &tool{
	name: "e2fsck", style: styleExact,
	opts: opts(
		reads(`-n -f -v -t -b= -B= -C= -d -V`),
		states(RiskHigh, "repairs or changes the file system", `-p -a -y -c -l= -L= -z= -D -E= -k -j=
			-r`),
	),
	check: func(c *classifier, k *call) {
		if !k.p.has("n") && !k.p.has("V") || len(k.p.ops) > 1 {
			c.writer("e2fsck", RiskHigh, "repairs the file system (only -n checks without changing it)")
			return
		}
		c.read("e2fsck -n", "checks without changing anything")
	},
}

// xfs_info prints an XFS file system's geometry (it runs xfs_spaceman or
// xfs_db read-only).
var xfsInfoTool = &tool{
	name: "xfs_info", style: styleGNU,
	opts: opts(reads(`-t= -V`)),
	check: func(c *classifier, k *call) {
		if len(k.p.ops) > 1 {
			c.unknown("xfs_info "+k.args[k.p.ops[1]].s, "unexpected argument")
			return
		}
		c.readOnly(k)
	},
}

// nvme (nvme-cli): list, identify, and the logs read; format, sanitize,
// firmware, feature-setting and admin pass-through commands change the
// device.
var nvmeTool = &tool{
	name: "nvme", style: styleGNU, globalsAfterVerb: true,
	opts: opts(reads(`-o|--output-format= -v|--verbose -H|--human-readable -b|--raw-binary
		-n|--namespace-id= -h|--help --version`)),
	verbs: verbTable(
		vreads(`list list-subsys list-ns list-ctrl id-ctrl id-ns id-ns-desc id-ns-granularity
			smart-log error-log fw-log effects-log show-regs version help`),
		vwrites(RiskHigh, `format sanitize fw-download fw-commit fw-activate set-feature admin-passthru
			io-passthru write write-zeroes write-uncor flush reset subsystem-reset ns-rescan
			create-ns delete-ns attach-ns detach-ns dsm security-send resv-acquire resv-register
			resv-release device-self-test virt-mgmt gen-hostnqn connect disconnect disconnect-all
			connect-all discover`),
	),
}

// postqueue -p (and -j, as JSON) lists the mail queue over Postfix's
// local socket; -f and -s flush it and -i delivers a message.
var postqueueTool = &tool{
	name: "postqueue", style: styleExact,
	opts: opts(
		reads(`-p -j -c= -v`),
		states(RiskMedium, "delivers queued mail", `-f -i= -s=`),
	),
	check: listingMode("postqueue", RiskMedium, "delivers queued mail (only -p and -j list)", "postqueue -p", "lists the mail queue", "p", "j"),
}

// ntpqReads are ntpq's commands that only query (-c); :config,
// config-from-file, keyid, passwd and writevar change the daemon.
var ntpqReads = wordSet(`peers lpeers opeers associations lassociations passociations
	readvar rv readlist rl sysinfo sysstats kerninfo iostats monstats mrulist clockvar cv
	pstats authinfo ifstats reslist version help`)

// ntpq asks ntpd (the hosts it names, else localhost) over UDP 123.
var ntpqTool = &tool{
	name: "ntpq", style: styleExact, net: true,
	opts: opts(
		reads(`-4 -6 -d -n -p -w -a= -k= -l= --help --version`),
		readsVal(ntpqCommand, `-c=`),
		unknowns("interactive", `-i`),
	),
	check: func(c *classifier, k *call) {
		if !k.p.hasAny("p", "c", "help", "version") {
			c.unknown("ntpq", "interactive")
			c.unbounded(k.ctx, BoundInteractiveREPL, "")
			return
		}
		if len(k.p.ops) == 0 && !c.destination(k, "localhost", 123) {
			return
		}
		for _, i := range k.p.ops {
			if !c.destination(k, k.args[i].s, 123) {
				return
			}
		}
		c.readOnly(k)
	},
}

// ntpqCommand vets a -c command: a listed query.
func ntpqCommand(c *classifier, k *call, u *optUse) bool {
	word, _, _ := strings.Cut(strings.TrimSpace(u.val.s), " ")
	if ntpqReads[word] && !strings.ContainsAny(u.val.s, ";\n") {
		return true
	}
	c.writer("ntpq -c "+u.val.s, RiskMedium, "command not known to be read-only")
	return false
}

// showmount asks a host's NFS mount daemon (through its portmapper, port
// 111) what it exports (-e) or who mounts it.
var showmountTool = &tool{
	name: "showmount", style: styleGNU, net: true,
	opts: opts(reads(`-a|--all -d|--directories -e|--exports --no-headers -h|--help -v|--version`)),
	check: func(c *classifier, k *call) {
		host := "localhost"
		switch ops := k.p.ops; {
		case len(ops) > 1:
			c.unknown("showmount "+k.args[ops[1]].s, "unexpected argument")
			return
		case len(ops) == 1:
			host = k.args[ops[0]].s
		}
		if c.destination(k, host, 111) {
			c.readOnly(k)
		}
	},
}

// listingMode is the check of an administration tool that only lists
// with one of the given options and no operand; any other form is a
// write, for why.
func listingMode(name string, risk Risk, why, readName, readWhy string, modes ...string) checkFunc {
	return func(c *classifier, k *call) {
		if len(k.p.ops) > 0 || !k.p.hasAny(modes...) {
			c.writer(name, risk, why)
			return
		}
		c.read(readName, readWhy)
	}
}

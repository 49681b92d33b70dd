package command

import "strings"

// storageTools are ZFS, Ceph block and object tools, Proxmox VE,
// libvirt and LXD.
var storageTools = map[string]*tool{
	"zpool":      zpoolTool,
	"zfs":        zfsTool,
	"rbd":        rbdTool,
	"rados":      radosTool,
	"pvesh":      pveshTool,
	"qm":         qmTool,
	"pct":        pctTool,
	"pvecm":      pvecmTool,
	"pvesm":      pvesmTool,
	"ha-manager": haManagerTool,
	"virsh":      virshTool,
	"lxc":        lxdTool,
	"incus":      lxdTool,
}

// storageCheckers are storage tools with syntaxes of their own.
var storageCheckers = map[string]checkFunc{
	"ceph":       checkCeph,
	"lxc-attach": checkLxcAttach,
}

// zfsVerb is a ZFS verb with its own getopt options.
func zfsVerb(spec string) *verbRule { return readWith(opts(reads(spec))) }

var (
	// zpool status -c and zpool iostat -c run scripts from zpool.d.
	zpoolScripts = execs("runs zpool.d scripts", `-c=`)
	zpoolTool    = &tool{
		name: "zpool", style: styleExactStop,
		opts: opts(reads(`-?`)),
		verbs: verbTable(
			vrule(readWith(opts(reads(`-D -e -g -i -L -p -P -s -t -T= -v -x --json --json-int
				--json-flat-vdevs --json-pool-key-guid --power`), zpoolScripts)), "status"),
			vrule(zfsVerb(`-g -H -L -p -P -T= -v -o= --json --json-int --json-pool-key-guid`), "list"),
			vrule(zfsVerb(`-i -l`), "history"),
			vrule(zfsVerb(`-H -o= -p --json --json-int`), "get"),
			vrule(readVerb, "version help"),
			vrule(checkWith(opts(reads(`-g -H -L -l -n -p -P -q -r -T= -v -w -y`), zpoolScripts), intervalCheck), "iostat"),
			vrule(checkWith(opts(reads(`-f -H -v`), writes(RiskLow, "clears the event log", `-c`)),
				checkZpoolEvents), "events"),
			vwrites(RiskMedium, `scrub create add remove attach detach replace offline online clear
				export import set upgrade split resilver trim initialize reguid reopen checkpoint sync
				wait prefetch`),
			vwrites(RiskHigh, "destroy labelclear"),
		),
	}
	zfsTool = &tool{
		name: "zfs", style: styleExactStop,
		opts: opts(reads(`-?`)),
		verbs: verbTable(
			vrule(zfsVerb(`-H -p -r -d= -o= -s= -S= -t= --json --json-int`), "list"),
			vrule(zfsVerb(`-H -p -r -d= -o= -s= -t= --json --json-int`), "get"),
			vrule(zfsVerb(`-r -H -p --json --json-int`), "holds"),
			vrule(zfsVerb(`-H -i -n -p -o= -s= -S= -t=`), "userspace groupspace projectspace"),
			vrule(zfsVerb(`-F -H -t -h`), "diff"),
			vrule(readVerb, "version help"),
			vrule(&verbRule{class: ruleRead, setter: true, maxOps: 0, opts: opts(reads(`-j --json`))}, "mount"),
			vwrites(RiskMedium, `create snapshot snap clone promote rename set inherit unmount umount share
				unshare receive recv allow unallow hold release load-key unload-key change-key bookmark
				upgrade redact program jail unjail send`),
			vwrites(RiskHigh, "destroy rollback"),
		),
	}
)

// Ceph's clients connect to the monitors their configuration names
// (ceph.conf, or -m): those declared for the "ceph" service. -c and
// --cluster read another configuration, so their monitors are unknown.
const (
	cephService = "ceph"
	cephWhy     = "connects to the monitors its ceph.conf names"
)

// cephMonitors: -m/--mon-host HOST[:PORT][,...] names the monitors (ports
// 3300 and 6789 when none is given).
func cephMonitors(c *classifier, k *call, u *optUse) bool {
	for _, m := range strings.FieldsFunc(u.val.s, func(r rune) bool { return r == ',' || r == ' ' || r == ';' }) {
		m = strings.TrimPrefix(strings.TrimPrefix(m, "v1:"), "v2:")
		m, _, _ = strings.Cut(m, "/")
		host, port, err := splitHostPort(m)
		if err != nil {
			c.writer(k.name+" -m "+u.val.s, RiskMedium, "monitor address: "+err.Error())
			return false
		}
		ports := []int{port}
		if port == 0 {
			ports = []int{3300, 6789}
		}
		for _, p := range ports {
			if !c.destination(k, host, p) {
				return false
			}
		}
	}
	return true
}

// cephOpts are the options of Ceph's rbd and rados clients (boost
// program_options: spelled out here; an abbreviation is unknown).
const cephOpts = `--id= -n|--name= -k|--keyring= --format= --pretty-format -p|--pool= --namespace=
	--debug-ms= --no-mon-config --keyfile= --user=`

// cephConfOpts are the options that choose the monitors.
var cephConfOpts = []optGroup{
	readsVal(cephMonitors, `-m|--mon-host=`),
	unknowns("reads another configuration, whose monitors cannot be told", `-c|--conf= --cluster=`),
}

var (
	rbdTool = &tool{
		name: "rbd", style: styleExact, globalsAfterVerb: true, net: true,
		service: cephService, serviceWhy: cephWhy,
		opts: opts(append([]optGroup{reads(cephOpts + ` -l|--long --image= --snap= --all --exact --from-snap= --whole-object
			--merge-snapshots --limit= --image-id= --group-pool= --group= -h|--help --io-pattern= --verbose
			--dest-pool= --dest-namespace=`)}, cephConfOpts...)...),
		verbs: verbTable(
			vreads("ls list info status du disk-usage showmapped children diff"),
			vrule(&verbRule{class: ruleCheck, check: streamVerb}, "watch"),
			vrule(nestedVerb(rbdSub("ls list")), "snap trash"),
			vrule(nestedVerb(rbdSub("list ls")), "device"),
			vrule(nestedVerb(rbdSub("stats")), "pool"),
			vrule(nestedVerb(rbdSub("info status inspect")), "journal"),
			vrule(nestedVerb(&tool{name: "rbd mirror", style: styleExact, globalsAfterVerb: true,
				verbs: verbTable(vrule(nestedVerb(rbdSub("status info")), "image pool snapshot"))}), "mirror"),
			vwrites(RiskMedium, `create resize rm remove map unmap import export cp copy mv rename flatten
				bench lock feature config migration clone`),
		),
	}
	radosTool = &tool{
		name: "rados", style: styleExact, globalsAfterVerb: true, net: true,
		service: cephService, serviceWhy: cephWhy,
		opts: opts(append([]optGroup{reads(cephOpts + ` -N= --all --default -s|--snap= --object-locator= --target-pool=
			--max-objects= -h|--help`)}, cephConfOpts...)...),
		verbs: verbTable(
			vreads(`df lspools ls stat getxattr listxattr listomapkeys listomapvals list-inconsistent-pg
				list-inconsistent-obj list-inconsistent-snapset listsnaps listwatchers`),
			// getomapval OBJ KEY [out-file] writes the value to out-file.
			vrule(&verbRule{class: ruleRead, setter: true, maxOps: 2}, "getomapval"),
			vwrites(RiskMedium, `put append truncate create rm cp setxattr rmxattr setomapval rmomapkey
				clearomap bench cleanup mkpool rmpool import export get lock watch notify mksnap rmsnap
				rollback`),
		),
	}
)

func rbdSub(reads string) *tool {
	return &tool{name: "rbd", style: styleExact, globalsAfterVerb: true, verbs: verbTable(vreads(reads))}
}

// pveReadOpts are the options of Proxmox VE's reading commands (GET API
// calls): formatting and selection only.
const pveReadOpts = `-full -verbose -current -snapshot= -output-format= -human-readable -noborder
	-noheader -quiet -noproxy -storage= -content= -enabled= -format= -target= -vmid= -type= -node=
	-pretty -h|-help`

// pveSub builds a Proxmox VE CLI (Getopt::Long: -name or --name, spelled
// out here).
func pveSub(reads string, risk Risk, writes string, extra ...verbGroup) *tool {
	groups := append([]verbGroup{vrule(readWith(opts(reads2(pveReadOpts))), reads), vwrites(risk, writes)}, extra...)
	return &tool{name: "pve", style: parseStyle{dashLong: true, permute: true}, verbs: verbTable(groups...)}
}

func reads2(spec string) optGroup { return reads(spec) }

var (
	pveshTool = pveSub("get ls usage help", RiskMedium, "create set",
		vwrites(RiskHigh, "delete"))
	qmTool = pveSub("list status config pending showcmd listsnapshot help", RiskMedium,
		`start shutdown reboot reset suspend resume migrate clone create set unlink resize rollback
		snapshot delsnapshot template move-disk move_disk importdisk importovf unlock cleanup
		remote-migrate disk rescan sendkey vncproxy mtunnel wait`,
		vwrites(RiskHigh, "stop destroy"),
		vrule(nestedVerb(&tool{name: "qm cloudinit", style: parseStyle{dashLong: true, permute: true},
			verbs: verbTable(vrule(readWith(opts(reads2(pveReadOpts))), "dump pending"))}), "cloudinit"),
		vrule(nestedVerb(qmGuestTool), "guest"),
		vrule(&verbRule{class: ruleCheck, check: checkQmAgent, noScan: true}, "agent"),
		vrule(&verbRule{class: ruleCheck, check: checkInteractive, noScan: true}, "monitor terminal"),
	)
	qmGuestTool = &tool{name: "qm guest", style: parseStyle{dashLong: true, permute: true},
		verbs: verbTable(
			vrule(&verbRule{class: ruleCheck, check: checkGuestExec, noScan: true}, "exec"),
			vrule(readWith(opts(reads2(pveReadOpts))), "exec-status"),
			vrule(&verbRule{class: ruleCheck, check: checkQmAgent, noScan: true}, "cmd"),
			vwrites(RiskMedium, "passwd"),
		)}
	pctTool = pveSub("list status config pending df listsnapshot help cpusets", RiskMedium,
		`start shutdown reboot suspend resume migrate clone create set resize restore rollback
		snapshot delsnapshot template unlock move-volume move_volume remote-migrate rescan push pull
		fsck mount unmount fstrim`,
		vwrites(RiskHigh, "stop destroy"),
		vrule(&verbRule{class: ruleCheck, check: checkGuestExec, noScan: true}, "exec"),
		vrule(&verbRule{class: ruleCheck, check: checkInteractive, noScan: true}, "enter console"),
	)
	pvecmTool = pveSub("status nodes help", RiskHigh,
		"expected add addnode delnode updatecerts create qdevice mtunnel")
	pvesmTool = pveSub("status list scan path help extractconfig", RiskMedium,
		"alloc free add remove set import export prune-backups apiinfo")
	haManagerTool = pveSub("status config groupconfig help", RiskMedium,
		"add remove set migrate relocate crm-command groupadd groupremove groupset")
)

// virshReadOpts are the options of virsh's reading commands.
const virshReadOpts = `--all --inactive --transient --persistent --with-snapshot --without-snapshot
	--state-running --state-paused --state-shutoff --state-other --autostart --no-autostart
	--with-managed-save --without-managed-save --uuid --name --id --table --managed-save --title
	--reason --source= --full --interface= --security-info --update-cpu --migratable --xpath= --wrap
	--domain= --network= --pool= --details --type= --device= --human --cap= --parent= --tree
	--leaves --roots --current --descendants --internal --external --disk-only --topological
	--from= --metadata --no-metadata --snapshotname= --snapshot= --config --live --state --cpu
	--balloon --vcpu --block --perf --iothread --list-all --enforce --raw
	--cellno= --timeout= --xml --bootorder -h|--help`

var virshTool = &tool{
	name: "virsh", style: styleExactStop, net: true,
	opts: opts(
		reads(`-d|--debug= -e|--escape= -h|--help -k|--keepalive-interval= -K|--keepalive-count=
			-q|--quiet -r|--readonly -t|--timing -v -V|--version`),
		readsVal(virshConnect, `-c|--connect=`),
		writes(RiskLow, "writes a log file", `-l|--log=`),
	),
	verbs: verbTable(
		vrule(checkWith(opts(reads(virshReadOpts)), checkVirshArgs), `list dominfo domstate domifaddr
			dumpxml nodeinfo capabilities version vcpuinfo domblklist domiflist dommemstat domstats
			domblkinfo domblkstat domifstat net-list net-info net-dumpxml net-dhcp-leases pool-list
			pool-info pool-dumpxml vol-list vol-info snapshot-list snapshot-info snapshot-dumpxml
			hostname uri sysinfo nodememstats nodecpustats iface-list nwfilter-list secret-list domid
			domname domuuid domjobinfo nodedev-list help`),
		vwrites(RiskMedium, `start shutdown reboot reset define create setmem setmaxmem setvcpus
			attach-disk attach-device attach-interface detach-disk detach-device detach-interface
			migrate snapshot-create snapshot-create-as snapshot-delete snapshot-revert suspend resume
			autostart net-start net-destroy net-define net-undefine net-autostart pool-start pool-destroy
			pool-define pool-delete vol-create vol-delete vol-resize blockcommit blockpull blockcopy save
			restore managedsave dump send-key setlinkstate update-device domrename`),
		vwrites(RiskHigh, "destroy undefine"),
		vrule(editVerb, "edit"),
		vrule(interactiveVerb, "console"),
	),
}

// virshConnect: a local URI, or a remote one over TCP or TLS; +ssh and
// +ext transports run programs.
func virshConnect(c *classifier, k *call, u *optUse) bool {
	v := u.val.s
	if !u.val.static || strings.Contains(v, "+ssh") || strings.Contains(v, "+ext") || strings.Contains(v, "+libssh") {
		c.unknown(k.name+" -c "+v, "connection may run ssh or another program")
		return false
	}
	scheme, rest, ok := strings.Cut(v, "://")
	if !ok || strings.HasPrefix(rest, "/") {
		return true // a local connection
	}
	authority, _, _ := strings.Cut(rest, "/")
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		authority = authority[at+1:]
	}
	host, port, err := splitAuthority(authority)
	if err != nil {
		c.writer(k.name+" -c "+v, RiskMedium, "connection URI host: "+err.Error())
		return false
	}
	if port == 0 {
		// libvirt's TCP port for +tcp, its TLS port otherwise.
		port = 16514
		if strings.HasSuffix(scheme, "+tcp") {
			port = 16509
		}
	}
	return c.destination(k, host, port)
}

// checkVirshArgs: virsh reads a single command argument as a command
// line, where ";" separates commands.
func checkVirshArgs(c *classifier, k *call) {
	for _, a := range k.args {
		if strings.ContainsAny(a.s, ";\n") {
			c.unknown(k.name+" "+a.s, "virsh runs several commands separated by ;")
			return
		}
	}
	if k.of != nil && !c.noExtraVerb(k, k.of) {
		return
	}
	c.localNet() // a remote -c recorded its destination
	c.readOnly(k)
}

// lxdReadOpts are the options of the LXD/Incus client's reading verbs.
const lxdReadOpts = `-c|--columns= -f|--format= --all-projects --fast --resources --show-log --target=
	--expanded --property --all -p|--project= --debug --force-local -q|--quiet -v|--verbose
	-h|--help --sub-commands`

var lxdTool = &tool{
	name: "lxc", style: stylePflag, globalsAfterVerb: true, net: true,
	opts: opts(reads(`--debug --force-local -h|--help -p|--project= -q|--quiet --sub-commands
		-v|--verbose --version`)),
	verbs: verbTable(
		vrule(readCheck(opts(reads(`-c|--columns= -f|--format= --all-projects --fast`)), checkLxdLocal), "list ls"),
		vrule(readCheck(opts(reads(`--resources --show-log --target=`)), checkLxdLocal), "info"),
		vrule(readCheck(nil, checkLxdLocal), "version help"),
		vrule(&verbRule{class: ruleCheck, check: checkLxdExec, noScan: true}, "exec"),
		vrule(interactiveVerb, "console shell"),
		vrule(nestedVerb(lxdSub("show get")), "config"),
		vrule(nestedVerb(lxdSub("list ls info show")), "image storage network"),
		vrule(nestedVerb(lxdSub("list ls get-default")), "remote"),
		vrule(nestedVerb(lxdSub("list ls show get")), "profile project"),
		vwrites(RiskMedium, `launch init start stop restart delete rm copy move snapshot restore publish
			file rename pause import export rebuild`),
	),
}

func lxdSub(reads string) *tool {
	return &tool{name: "lxc", style: stylePflag, globalsAfterVerb: true,
		verbs: verbTable(vrule(readCheck(opts(reads2(lxdReadOpts)), checkLxdLocal), reads))}
}

// checkLxdLocal: the client talks to the local daemon over its socket; an
// operand REMOTE:[NAME] asks another server (images:, a configured
// remote), a destination the command does not name.
func checkLxdLocal(c *classifier, k *call) {
	if !c.readVerbOperands(k) {
		return
	}
	for _, i := range k.p.ops {
		if a := k.args[i].s; strings.Contains(a, ":") {
			c.writer(k.name+" "+a, RiskMedium, "asks a remote server, whose address comes from the client's configuration")
			return
		}
	}
	c.localNet()
	c.readOnly(k)
}

// checkZpoolEvents: -f follows the event log.
func checkZpoolEvents(c *classifier, k *call) {
	if k.p.has("f") {
		c.unbounded(k.ctx, BoundUnboundedStream, "")
	}
	c.readOnly(k)
}

// qmAgentReads are guest-agent commands that only report.
var qmAgentReads = []string{"network-get-interfaces", "get-osinfo", "get-time", "get-timezone",
	"get-users", "get-vcpus", "get-fsinfo", "get-host-name", "get-memory-blocks",
	"get-memory-block-info", "info", "ping"}

// checkQmAgent: "qm guest cmd VMID COMMAND" reads for reporting commands.
func checkQmAgent(c *classifier, k *call) {
	if len(k.args) >= 2 && k.args[1].static && matchOneOf(k.args[1].s, qmAgentReads...) {
		c.read(k.name+" "+k.args[1].s, "read-only")
		return
	}
	c.writer(k.name, RiskMedium, "runs a guest agent command")
}

// checkGuestExec: "pct exec ID -- CMD" and "qm guest exec ID [opts] -- CMD"
// run CMD in the guest.
func checkGuestExec(c *classifier, k *call) {
	for i, a := range k.args {
		if a.static && a.s == "--" {
			c.execInto(k, k.args[i+1:], true, true, newFollow())
			return
		}
	}
	// Without "--" everything after the guest id (and qm's options) runs.
	if len(k.args) >= 2 {
		rest := k.args[1:]
		for len(rest) > 0 && rest[0].static && strings.HasPrefix(rest[0].s, "--") {
			if matchOneOf(rest[0].s, "--timeout") && len(rest) > 1 {
				rest = rest[1:]
			}
			rest = rest[1:]
		}
		c.execInto(k, rest, true, true, newFollow())
		return
	}
	c.unknown(k.name, "no command")
}

// checkLxdExec: "lxc exec NAME -- CMD".
func checkLxdExec(c *classifier, k *call) {
	for i, a := range k.args {
		if a.static && a.s == "--" {
			c.execInto(k, k.args[i+1:], true, true, newFollow())
			return
		}
	}
	c.unknown(k.name, "command without --")
}

// checkLxcAttach: "lxc-attach -n NAME -- CMD"; without a command it opens a
// shell.
func checkLxcAttach(c *classifier, k *call) {
	for i, a := range k.args {
		if a.static && a.s == "--" {
			c.execInto(k, k.args[i+1:], true, true, newFollow())
			return
		}
	}
	c.unknown(k.name, "interactive shell")
	c.unbounded(k.ctx, BoundInteractiveREPL, "")
}

// cephNamespaces are ceph command words that select a subsystem.
var cephNamespaces = map[string]bool{
	"osd": true, "pool": true, "crush": true, "pg": true, "mon": true, "mgr": true, "fs": true,
	"mds": true, "auth": true, "config": true, "crash": true, "balancer": true, "orch": true,
	"device": true, "host": true, "log": true, "node": true, "tier": true, "rule": true,
	"erasure-code-profile": true, "module": true, "service": true, "subvolume": true,
	"subvolumegroup": true, "volume": true, "daemon": false, "blocklist": true, "blacklist": true,
}

// cephReads are ceph command words that only report.
var cephReads = map[string]bool{
	"status": true, "health": true, "detail": true, "df": true, "versions": true, "version": true,
	"features": true, "report": true, "quorum_status": true, "mon_status": true, "fsid": true,
	"tree": true, "stat": true, "stats": true, "dump": true, "ls": true, "list": true, "perf": true,
	"find": true, "metadata": true, "utilization": true, "blocked-by": true, "query": true,
	"dump_stuck": true, "get": true, "show": true, "info": true, "services": true,
	"count-metadata": true, "last": true, "ls-by-host": true, "ls-by-class": true,
	"ok-to-stop": true, "safe-to-destroy": true, "time-sync-status": true, "lspools": true,
	"help": true, "ps": true,
}

// cephTool: ceph parses its options with argparse (abbreviations
// accepted) anywhere on the line; the remaining words are the command.
var cephTool = &tool{
	name: "ceph", style: styleArgparse, net: true,
	opts: opts(
		reads(`-h|--help -i|--in-file= --id|--user= -n|--name= -s|--status
			-w|--watch --watch-debug --watch-info --watch-sec --watch-warn --watch-error
			-W|--watch-channel= -v|--version --verbose --concise -f|--format= --connect-timeout=
			--block -p|--period=`),
		readsVal(cephMonitors, `-m|--mon-host=`),
		unknowns("reads another configuration, whose monitors cannot be told", `-c|--conf= --cluster=`),
		writes(RiskLow, "writes a file", `-o|--out-file= --setuser= --setgroup=`),
		unknowns("sends commands to a daemon's admin socket", `--admin-daemon=`),
	),
	check: checkCephWords,
}

// checkCeph: see checkCephWords. ceph connects to the cluster's monitors.
func checkCeph(c *classifier, k *call) {
	c.setService(cephService, cephWhy)
	c.runTool(k, cephTool)
}

// checkCephWords: ceph commands are words; the first word that is not a
// subsystem decides: a reporting word reads, anything else changes the
// cluster. -w watches forever.
func checkCephWords(c *classifier, k *call) {
	var first string
	if k.p.hasAny("status", "watch", "watch-debug", "watch-info", "watch-sec", "watch-warn", "watch-error", "watch-channel") {
		first = "status"
	}
	if k.p.hasAny("watch", "watch-debug", "watch-info", "watch-sec", "watch-warn", "watch-error", "watch-channel") {
		c.unbounded(k.ctx, BoundUnboundedStream, "")
	}
	if k.p.hasAny("help", "version") {
		first = "help"
	}
	ns := ""
	for _, i := range k.p.ops {
		a := k.args[i]
		if !a.static {
			c.unknown("ceph", "dynamic argument")
			return
		}
		if first != "" && first != "status" && first != "help" {
			break
		}
		if cephNamespaces[a.s] {
			ns = a.s
			continue
		}
		first = a.s
		break
	}
	if ns == "log" && first != "last" && first != "" {
		// "ceph log TEXT..." writes TEXT to the cluster log.
		c.writer("ceph log "+first, RiskLow, "writes a message to the cluster log")
		return
	}
	if k.p.has("version") && len(k.p.ops) == 0 {
		c.localNet()
	}
	switch {
	case first == "":
		c.unknown("ceph", "interactive or no command")
	case cephReads[first]:
		c.read("ceph "+first, "read-only")
	default:
		risk := RiskMedium
		if matchOneOf(first, "rm", "delete", "destroy", "purge", "out", "down", "lost", "reweight", "set", "pause") {
			risk = RiskHigh
		}
		c.writer("ceph "+first, risk, "changes the cluster")
	}
}

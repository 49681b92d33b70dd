package command

import "strings"

// storageCheckers cover ZFS, Ceph, Proxmox VE, libvirt and LXC.
var storageCheckers = map[string]checkFunc{
	"zpool":      sub(&zpoolTool),
	"zfs":        sub(&zfsTool),
	"ceph":       checkCeph,
	"rbd":        sub(&rbdTool),
	"rados":      sub(&radosTool),
	"pvesh":      sub(&pveshTool),
	"qm":         sub(&qmTool),
	"pct":        sub(&pctTool),
	"pvecm":      sub(&pvecmTool),
	"pvesm":      sub(&pvesmTool),
	"ha-manager": sub(&haManagerTool),
	"virsh":      sub(&virshTool),
	"lxc":        sub(&lxdTool),
	"incus":      sub(&lxdTool),
	"lxc-attach": checkLxcAttach,
}

var (
	zpoolTool = subTool{verbs: readWrite(
		[]string{"status", "list", "history", "get", "version", "help"}, RiskMedium,
		[]string{"scrub", "create", "add", "remove", "attach", "detach", "replace", "offline",
			"online", "clear", "export", "import", "set", "upgrade", "split", "resilver", "trim",
			"initialize", "reguid", "reopen", "checkpoint", "sync", "wait"},
		map[string]verb{"destroy": wrHigh, "labelclear": wrHigh,
			"iostat": ck(checkInterval("T")), "events": ck(checkZpoolEvents)})}
	zfsTool = subTool{verbs: readWrite(
		[]string{"list", "get", "holds", "userspace", "groupspace", "projectspace", "diff", "version", "help"},
		RiskMedium,
		[]string{"create", "snapshot", "snap", "clone", "promote", "rename", "set", "inherit",
			"unmount", "umount", "share", "unshare", "receive", "recv", "allow", "unallow", "hold",
			"release", "load-key", "unload-key", "change-key", "bookmark", "upgrade", "redact",
			"program", "jail", "unjail", "send"},
		map[string]verb{"destroy": wrHigh, "rollback": wrHigh, "mount": ck(noMoreOperands(0, RiskMedium))})}
	rbdTool = subTool{verbs: readWrite(
		[]string{"ls", "list", "info", "status", "du", "disk-usage", "showmapped", "children", "diff"},
		RiskMedium,
		[]string{"create", "resize", "rm", "remove", "map", "unmap", "import", "export", "cp", "copy",
			"mv", "rename", "flatten", "bench", "lock", "feature", "config", "migration", "clone"},
		map[string]verb{
			"watch":   ck(streamVerb),
			"snap":    ck(subOnly("ls", "list")),
			"device":  ck(subOnly("list", "ls")),
			"trash":   ck(subOnly("ls", "list")),
			"pool":    ck(subOnly("stats")),
			"mirror":  ck(subOnlyDeep("status", "info")),
			"journal": ck(subOnly("info", "status", "inspect")),
		})}
	radosTool = subTool{
		spec: optSpec{shortArg: "pcn", longArg: []string{"pool", "conf", "namespace"}},
		verbs: readWrite(
			[]string{"df", "lspools", "ls", "stat", "getxattr", "listxattr", "getomapval",
				"listomapkeys", "listomapvals", "list-inconsistent-pg", "list-inconsistent-obj",
				"list-inconsistent-snapset", "listsnaps"},
			RiskMedium,
			[]string{"put", "append", "truncate", "create", "rm", "cp", "setxattr", "rmxattr",
				"setomapval", "rmomapkey", "clearomap", "bench", "cleanup", "mkpool", "rmpool",
				"import", "export", "get", "lock", "watch", "notify", "mksnap", "rmsnap", "rollback"},
			nil)}
	pveshTool = subTool{verbs: readWrite([]string{"get", "ls", "usage", "help"}, RiskMedium,
		[]string{"create", "set"}, map[string]verb{"delete": wrHigh})}
	qmTool = subTool{verbs: readWrite(
		[]string{"list", "status", "config", "pending", "showcmd", "listsnapshot", "help"},
		RiskMedium,
		[]string{"start", "shutdown", "reboot", "reset", "suspend", "resume", "migrate", "clone",
			"create", "set", "unlink", "resize", "rollback", "snapshot", "delsnapshot", "template",
			"move-disk", "move_disk", "importdisk", "importovf", "unlock", "cleanup", "remote-migrate",
			"disk", "rescan", "sendkey", "vncproxy", "mtunnel", "wait"},
		map[string]verb{
			"stop": wrHigh, "destroy": wrHigh,
			"cloudinit": ck(subOnly("dump", "pending")),
			"guest":     nested(&qmGuestTool),
			"agent":     ck(checkQmAgent),
			"monitor":   ck(checkInteractive),
			"terminal":  ck(checkInteractive),
		})}
	qmGuestTool = subTool{verbs: map[string]verb{
		"exec": ck(checkGuestExec), "exec-status": rd, "cmd": ck(checkQmAgent),
		"passwd": wrMed,
	}}
	pctTool = subTool{verbs: readWrite(
		[]string{"list", "status", "config", "pending", "df", "listsnapshot", "help", "cpusets"},
		RiskMedium,
		[]string{"start", "shutdown", "reboot", "suspend", "resume", "migrate", "clone", "create",
			"set", "resize", "restore", "rollback", "snapshot", "delsnapshot", "template", "unlock",
			"move-volume", "move_volume", "remote-migrate", "rescan", "push", "pull", "fsck", "mount",
			"unmount", "fstrim"},
		map[string]verb{
			"stop": wrHigh, "destroy": wrHigh,
			"exec":    ck(checkGuestExec),
			"enter":   ck(checkInteractive),
			"console": ck(checkInteractive),
		})}
	pvecmTool = subTool{verbs: readWrite([]string{"status", "nodes", "help"}, RiskHigh,
		[]string{"expected", "add", "addnode", "delnode", "updatecerts", "create", "qdevice", "mtunnel"}, nil)}
	pvesmTool = subTool{verbs: readWrite([]string{"status", "list", "scan", "path", "help", "extractconfig"},
		RiskMedium, []string{"alloc", "free", "add", "remove", "set", "import", "export", "prune-backups", "apiinfo"}, nil)}
	haManagerTool = subTool{verbs: readWrite([]string{"status", "config", "groupconfig", "help"}, RiskMedium,
		[]string{"add", "remove", "set", "migrate", "relocate", "crm-command", "groupadd", "groupremove", "groupset"}, nil)}
	virshTool = subTool{
		spec: optSpec{shortArg: "cl", longArg: []string{"connect", "log"}},
		globalOK: func(t token) bool {
			return matchOneOf(t.name, "c", "connect", "r", "readonly", "q", "quiet", "d", "debug")
		},
		verbs: readWrite(
			[]string{"list", "dominfo", "domstate", "domifaddr", "dumpxml", "nodeinfo", "capabilities",
				"version", "vcpuinfo", "domblklist", "domiflist", "dommemstat", "domstats", "domblkinfo",
				"domblkstat", "domifstat", "net-list", "net-info", "net-dumpxml", "net-dhcp-leases",
				"pool-list", "pool-info", "pool-dumpxml", "vol-list", "vol-info", "snapshot-list",
				"snapshot-info", "snapshot-dumpxml", "hostname", "uri", "sysinfo", "nodememstats",
				"nodecpustats", "iface-list", "nwfilter-list", "secret-list", "domid", "domname",
				"domuuid", "domjobinfo", "nodedev-list", "help"},
			RiskMedium,
			[]string{"start", "shutdown", "reboot", "reset", "define", "create", "setmem", "setmaxmem",
				"setvcpus", "attach-disk", "attach-device", "attach-interface", "detach-disk",
				"detach-device", "detach-interface", "migrate", "snapshot-create", "snapshot-create-as",
				"snapshot-delete", "snapshot-revert", "suspend", "resume", "autostart", "net-start",
				"net-destroy", "net-define", "net-undefine", "net-autostart", "pool-start",
				"pool-destroy", "pool-define", "pool-delete", "vol-create", "vol-delete", "vol-resize",
				"blockcommit", "blockpull", "blockcopy", "save", "restore", "managedsave", "dump",
				"send-key", "setlinkstate", "update-device", "domrename"},
			map[string]verb{"destroy": wrHigh, "undefine": wrHigh, "edit": ck(checkEditVerb),
				"console": ck(checkInteractive)}),
	}
	lxdTool = subTool{
		verbs: readWrite([]string{"list", "ls", "info", "version", "help"}, RiskMedium,
			[]string{"launch", "init", "start", "stop", "restart", "delete", "rm", "copy", "move",
				"snapshot", "restore", "publish", "file", "rename", "pause", "import", "export", "rebuild"},
			map[string]verb{
				"exec":    ck(checkLxdExec),
				"console": ck(checkInteractive),
				"shell":   ck(checkInteractive),
				"config":  ck(subOnly("show", "get")),
				"image":   ck(subOnly("list", "ls", "info", "show")),
				"storage": ck(subOnly("list", "ls", "info", "show")),
				"network": ck(subOnly("list", "ls", "info", "show")),
				"remote":  ck(subOnly("list", "ls", "get-default")),
				"profile": ck(subOnly("list", "ls", "show", "get")),
				"project": ck(subOnly("list", "ls", "show", "get")),
			}),
	}
)

// checkZpoolEvents: -c clears the event log; -f follows it.
func checkZpoolEvents(c *classifier, k *call) {
	for _, a := range k.args {
		if !a.static || len(a.s) > 1 && a.s[0] == '-' && strings.ContainsRune(a.s, 'c') {
			c.writer("zpool events -c", RiskLow, "clears the event log")
			return
		}
	}
	checkFollowFlag("-f")(c, k)
}

// subOnlyDeep is subOnly for tools whose read words may come after an
// object word ("rbd mirror pool status").
func subOnlyDeep(reads ...string) checkFunc {
	return func(c *classifier, k *call) {
		for _, a := range k.args {
			if !a.static {
				c.unknown(k.name, "dynamic argument")
				return
			}
			if matchOneOf(a.s, reads...) {
				c.read(k.name+" "+a.s, "read-only")
				return
			}
			if matchOneOf(a.s, "image", "pool", "snapshot") || strings.HasPrefix(a.s, "-") {
				continue
			}
			break
		}
		c.writer(k.name, RiskMedium, "known writer")
	}
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
			c.execInto(k, k.args[i+1:], true, newFollow())
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
		c.execInto(k, rest, true, newFollow())
		return
	}
	c.unknown(k.name, "no command")
}

// checkLxdExec: "lxc exec NAME -- CMD".
func checkLxdExec(c *classifier, k *call) {
	for i, a := range k.args {
		if a.static && a.s == "--" {
			c.execInto(k, k.args[i+1:], true, newFollow())
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
			c.execInto(k, k.args[i+1:], true, newFollow())
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
	"subvolumegroup": true, "volume": true, "daemon": false,
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

// checkCeph: ceph commands are words; the first word that is not a
// subsystem decides: a reporting word reads, anything else changes the
// cluster. -w watches forever; -o writes the output to a file.
func checkCeph(c *classifier, k *call) {
	var first string
	for i := 0; i < len(k.args); i++ {
		a := k.args[i]
		if !a.static {
			c.unknown("ceph", "dynamic argument")
			return
		}
		s := a.s
		switch {
		case s == "-s" || s == "--status":
			if first == "" {
				first = "status"
			}
		case s == "-w" || s == "--watch" || strings.HasPrefix(s, "--watch-") || s == "-W":
			c.unbounded(k.ctx, BoundUnboundedStream, "")
			if first == "" {
				first = "status"
			}
			if s == "-W" {
				i++
			}
		case s == "-o" || strings.HasPrefix(s, "--out-file"):
			c.writer("ceph -o", RiskLow, "writes a file")
			return
		case matchOneOf(s, "-c", "--conf", "-k", "--keyring", "-n", "--name", "--id", "-i", "--in-file",
			"--cluster", "-f", "--format", "--connect-timeout", "--watch-channel"):
			i++
		case strings.HasPrefix(s, "-"):
		case first != "":
		case cephNamespaces[s]:
		default:
			first = s
		}
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

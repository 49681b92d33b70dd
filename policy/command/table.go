package command

import "strings"

// ruleClass is how a command name is judged.
type ruleClass uint8

const (
	// ruleCheck: a checker looks at the arguments and decides.
	ruleCheck ruleClass = iota
	// ruleRead: read-only whatever the arguments (no option of the command
	// writes, runs another program, or keeps it running).
	ruleRead
	// ruleWrite: a known writer whatever the arguments.
	ruleWrite
	// ruleTool: a grammar describes the tool's options and verbs.
	ruleTool
)

// rule says how to classify one command name.
type rule struct {
	class ruleClass
	risk  Risk                         // for ruleWrite
	check func(c *classifier, k *call) // for ruleCheck
	tool  *tool                        // for ruleTool
	net   bool                         // talks over the network when it reads
}

// call is one simple command being classified.
type call struct {
	name string // the command name as looked up (a base name)
	word arg    // the command word as written
	lead []arg  // words between the command word and args (global options, subcommand)
	args []arg  // the arguments being judged
	ctx  callCtx
	// p is the grammar scan of args, for tools judged by a grammar; it
	// points at scan, which the call holds so that it is not allocated.
	p    *parsed
	scan parsed
	// of is the tool whose verb this call is (for checks that vet their
	// operands against the tool's other verbs).
	of *tool
}

// setParsed records the grammar scan of k.
func (k *call) setParsed(p parsed) {
	k.scan = p
	k.p = &k.scan
}

// commandTable maps every command name the classifier knows to its rule.
// It is built once and never changed.
var commandTable = buildCommandTable()

func buildCommandTable() map[string]rule {
	t := make(map[string]rule, 1024)
	for _, name := range pureReaders {
		t[name] = rule{class: ruleRead}
	}
	for name, risk := range knownWriters {
		t[name] = rule{class: ruleWrite, risk: risk}
	}
	for _, group := range checkerGroups {
		for name, check := range group {
			t[name] = rule{class: ruleCheck, check: check}
		}
	}
	for _, group := range toolGroups {
		for name, g := range group {
			t[name] = rule{class: ruleTool, tool: g}
		}
	}
	// Database clients connect to their server (over TCP unless given a
	// socket); their checkers inspect the statements.
	for _, name := range []string{"psql", "mysql", "mariadb"} {
		r := t[name]
		r.net = true
		t[name] = r
	}
	return t
}

// checkerGroups are the per-concern tables of commands judged by a check
// of their own (syntaxes that are not getopt-like).
var checkerGroups = []map[string]checkFunc{
	shellCheckers, fileCheckers, systemCheckers, packageCheckers, netCheckers,
	storageCheckers, inspectCheckers,
}

// toolGroups are the per-concern tables of commands judged by a grammar:
// every option and verb of the tool is listed, and anything unlisted is
// unknown.
var toolGroups = []map[string]*tool{
	wrapperTools, fileTools, systemTools, packageTools, netTools, containerTools,
	storageTools, gitTools, cloudTools, readerTools, monitorTools,
}

// writerPrefixes name families of writers: mkfs.ext4, fsck.xfs, ...
var writerPrefixes = []string{"mkfs.", "fsck.", "mount.", "umount.", "mkswap.", "mkdosfs"}

// writerFamily reports whether name belongs to a family of writers.
func writerFamily(name string) bool {
	for _, p := range writerPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// pureReaders are read-only by construction: no argument makes them write a
// file, run another program, send local data or keep running. Each was
// audited option by option against its --help and manual (coreutils 9,
// util-linux 2.38, procps-ng 4, GNU grep 3, jq 1.6, LVM 2.03); a tool with
// even one option that writes, loads code or talks to a server the command
// names (zstdcat -o, nm --plugin, dig -f, whois -p, lxc-info -o, mailq -q)
// has a grammar instead.
var pureReaders = []string{
	// Files and text.
	"cat", "tac", "nl", "head", "wc", "cut", "tr", "column", "fold", "fmt",
	"paste", "join", "comm", "expand", "unexpand", "rev", "od",
	"hexdump", "hd", "base32", "base64", "basenc", "md5sum", "sha1sum",
	"sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum",
	"sum", "grep", "egrep", "fgrep", "zgrep", "zegrep", "zfgrep", "bzgrep",
	"xzgrep", "zcat", "bzcat", "xzcat", "lzcat", "ls", "dir",
	"vdir", "stat", "du", "df", "readlink", "realpath", "basename", "dirname",
	"pwd", "namei", "getfacl", "getcap", "lsattr", "jq", "cmp", "diff",
	"diff3", "expr", "factor", "numfmt", "tsort", "zipinfo",
	// Who and what is running.
	"uptime", "uname", "whoami", "id", "groups", "logname", "users", "who",
	"w", "last", "lastb", "ps", "pgrep", "pidof", "pstree",
	"pwdx", "pmap", "ipcs", "lsipc", "lslocks", "lslogins",
	// Hardware and kernel.
	"nproc", "lscpu", "lsblk", "lsusb", "lspci", "lsmod", "lsns", "lsmem",
	"lsscsi", "numastat", "systemd-detect-virt", "virt-what", "arch",
	"hostid", "getconf", "locale", "tty", "cal", "ncal", "systemd-cgls",
	"sestatus", "getenforce", "aa-status", "apparmor_status",
	"lvs", "vgs", "pvs", "lvdisplay", "vgdisplay", "pvdisplay",
	"pveversion", "named-checkconf", "atq",
	// Names.
	"which", "whereis", "type", "printenv", "apropos", "whatis",
	// Shell builtins that only affect the shell itself.
	"echo", "true", "false", ":", "seq", "umask", "ulimit",
	"cd", "pushd", "popd", "dirs", "jobs", "times", "help", "shift", "exit",
	"return", "break", "continue",
}

// knownWriters change the system whatever their arguments (SPEC P1 phase 2).
var knownWriters = map[string]Risk{
	// Destroying data and disks.
	"dd": RiskHigh, "shred": RiskHigh, "wipefs": RiskHigh, "mkfs": RiskHigh,
	"mke2fs": RiskHigh, "mkswap": RiskHigh, "fdisk": RiskHigh, "sfdisk": RiskHigh,
	"gdisk": RiskHigh, "sgdisk": RiskHigh, "cfdisk": RiskHigh, "parted": RiskHigh,
	"blkdiscard": RiskHigh, "cryptsetup": RiskHigh, "truncate": RiskHigh,
	"fsck": RiskHigh, "e2fsck": RiskHigh, "xfs_repair": RiskHigh,
	"tune2fs": RiskHigh, "resize2fs": RiskHigh, "lvremove": RiskHigh,
	"vgremove": RiskHigh, "pvremove": RiskHigh, "lvreduce": RiskHigh,
	"grub-install": RiskHigh, "dmsetup": RiskHigh,
	// Power and init.
	"reboot": RiskHigh, "shutdown": RiskHigh, "halt": RiskHigh,
	"poweroff": RiskHigh, "init": RiskHigh, "telinit": RiskHigh, "kexec": RiskHigh,
	// Users.
	"userdel": RiskHigh, "groupdel": RiskHigh, "deluser": RiskHigh,
	"delgroup": RiskHigh, "useradd": RiskMedium, "usermod": RiskMedium,
	"groupadd": RiskMedium, "groupmod": RiskMedium, "adduser": RiskMedium,
	"addgroup": RiskMedium, "chpasswd": RiskMedium,
	"chsh": RiskMedium, "chfn": RiskMedium, "gpasswd": RiskMedium,
	"newusers": RiskMedium, "visudo": RiskMedium, "vipw": RiskMedium,
	"vigr": RiskMedium, "sudoedit": RiskHigh,
	// Files.
	"mv": RiskMedium, "cp": RiskMedium, "chmod": RiskMedium, "chown": RiskMedium,
	"chgrp": RiskMedium, "chattr": RiskMedium, "setfacl": RiskMedium,
	"setcap": RiskMedium, "install": RiskMedium, "rsync": RiskMedium,
	"scp": RiskMedium, "sftp": RiskMedium, "fallocate": RiskMedium,
	"unlink": RiskMedium, "patch": RiskMedium, "zip": RiskLow, "cpio": RiskMedium,
	"touch": RiskLow, "mkdir": RiskLow, "ln": RiskLow, "link": RiskLow,
	"rmdir": RiskLow, "mknod": RiskLow, "mkfifo": RiskLow, "mktemp": RiskLow,
	"split": RiskLow, "csplit": RiskLow, "restorecon": RiskMedium,
	"chcon": RiskMedium, "updatedb": RiskLow,
	// Kernel, services and system state.
	"swapon": RiskMedium, "swapoff": RiskMedium, "modprobe": RiskMedium,
	"insmod": RiskMedium, "rmmod": RiskMedium, "depmod": RiskMedium,
	"umount": RiskMedium, "losetup": RiskMedium, "fstrim": RiskMedium,
	"sync": RiskLow, "ldconfig": RiskMedium, "locale-gen": RiskMedium,
	"update-grub":      RiskHigh,
	"update-initramfs": RiskHigh, "dracut": RiskHigh, "mkinitramfs": RiskHigh,
	"update-rc.d": RiskMedium, "chkconfig": RiskMedium, "setenforce": RiskHigh,
	"setsebool": RiskMedium, "ifup": RiskHigh, "ifdown": RiskHigh,
	"dhclient": RiskMedium, "hwclock": RiskMedium, "ntpdate": RiskMedium,
	"systemd-run": RiskMedium, "at": RiskMedium, "batch": RiskMedium,
	"lvcreate": RiskMedium, "vgcreate": RiskMedium, "pvcreate": RiskMedium,
	"lvchange": RiskMedium, "vgchange": RiskMedium, "pvchange": RiskMedium,
	"lvextend": RiskMedium, "lvresize": RiskHigh, "vgextend": RiskMedium,
	"vgreduce": RiskHigh, "pvmove": RiskMedium, "lvrename": RiskMedium,
	"vgrename": RiskMedium, "vzdump": RiskMedium, "kubectx": RiskLow,
	"kubens": RiskLow, "postsuper": RiskMedium, "certbot": RiskMedium,
	"htpasswd": RiskMedium, "ssh-copy-id": RiskMedium, "ssh-add": RiskLow,
	"mail": RiskLow, "mailx": RiskLow, "sendmail": RiskLow,
	// Processes.
	"iptables-restore": RiskHigh, "ip6tables-restore": RiskHigh,
	"pkill": RiskMedium, "killall": RiskMedium,
	"skill": RiskMedium, "renice": RiskLow, "logger": RiskLow, "wall": RiskLow,
	// Building and package managers without read-only subcommands here.
	"make": RiskMedium, "aptitude": RiskMedium, "zypper": RiskMedium,
	"pacman": RiskMedium, "flatpak": RiskMedium, "yarn": RiskMedium,
	"pnpm": RiskMedium, "gem": RiskMedium, "cargo": RiskMedium,
	"brew": RiskMedium, "easy_install": RiskMedium,
}

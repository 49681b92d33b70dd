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
	// read and write are the reasons "name: read-only" and, for
	// ruleWrite, "name: known writer", built once with the table so
	// that a verdict does not build them again.
	read, write string
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
	// read is the reason "name: read-only" when it was built in advance
	// (readReason), or "".
	read string
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
	for name := range pureReaders {
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
	for _, name := range netCheckerClients {
		r := t[name]
		r.net = true
		t[name] = r
	}
	for name, r := range t {
		r.read = name + readSuffix
		if r.class == ruleWrite {
			r.write = name + ": known writer"
		}
		t[name] = r
		if r.class == ruleTool {
			verbReasons(r.tool, name)
		}
	}
	return t
}

// readSuffix ends the reason of a read-only command.
const readSuffix = ": read-only"

// readReason returns read when it is the reason "name: read-only", built
// in advance, and "" otherwise.
func readReason(name, read string) string {
	if len(read) == len(name)+len(readSuffix) && read[:len(name)] == name && read[len(name):] == readSuffix {
		return read
	}
	return ""
}

// verbReasons builds the reasons "name verb: read-only" of the verbs of
// t, the tool of the command name, and of their nested verbs. A verb set
// reached under two names (a grammar shared by two tools) keeps none:
// its calls build their names as they go.
func verbReasons(t *tool, name string) {
	s := t.verbs
	if s == nil || s.shared {
		return
	}
	if s.texts != nil {
		if s.prefix != name {
			s.shared, s.prefix, s.texts = true, "", nil
		}
		return
	}
	s.prefix = name
	s.texts = make([]string, len(s.names))
	for i, v := range s.names {
		s.texts[i] = name + " " + v + readSuffix
	}
	for i, r := range s.rules {
		if r.sub != nil {
			verbReasons(r.sub, name+" "+s.names[i])
		}
	}
}

// netCheckerClients are the network clients judged by a check of their
// own (the grammar tools say so with tool.net): their whole command line
// must be static text, and their check proves where they connect
// (netclient.go, dest.go).
var netCheckerClients = []string{"curl", "wget", "http", "https", "ssh", "dig", "nslookup",
	"nc", "ncat", "netcat", "pg_isready", "psql", "mysql", "mariadb", "redis-cli", "valkey-cli",
	"keydb-cli", "ceph"}

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
	storageTools, gitTools, cloudTools, readerTools, monitorTools, adminTools, argocdTools,
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
// file, run another program, send local data, connect anywhere or keep
// running. Each was audited option by option against its --help and
// manual (coreutils 9, util-linux 2.38-2.40, procps-ng 4, GNU grep 3, jq
// 1.6-1.7, bash 5); a tool with even one option that writes, loads code,
// runs a program or talks to a server the command names (zstdcat -o, nm
// --plugin, dig -f, whois -p, lxc-info -o, mailq -q, jobs -x, diff3
// --diff-program, lvs --config) has a grammar or a check instead. Each
// entry says what the tool can do and why no form of it can do more
// (TestPureReadersJustified requires one).
var pureReaders = map[string]string{
	// Files and text.
	"cat":       "prints files; its options only mark or number what it prints",
	"tac":       "prints files last line first; -s names a separator, nothing else",
	"nl":        "numbers lines to stdout; every option shapes the numbering",
	"head":      "prints the start of files; -n/-c count, -q/-v label",
	"wc":        "counts; --files0-from only reads a list of names",
	"cut":       "selects fields to stdout; no option names an output",
	"tr":        "translates stdin to stdout; its operands are character sets",
	"column":    "formats columns to stdout (util-linux); options shape the table",
	"fold":      "wraps lines to stdout",
	"fmt":       "reflows text to stdout",
	"paste":     "merges lines of files to stdout",
	"join":      "joins two sorted files to stdout",
	"comm":      "compares two sorted files to stdout",
	"expand":    "turns tabs into spaces to stdout",
	"unexpand":  "turns spaces into tabs to stdout",
	"rev":       "reverses lines to stdout",
	"od":        "dumps bytes to stdout; options choose the format",
	"hexdump":   "dumps bytes to stdout; -f only reads a format file",
	"hd":        "hexdump -C: dumps bytes to stdout",
	"base32":    "encodes or decodes to stdout",
	"base64":    "encodes or decodes to stdout",
	"basenc":    "encodes or decodes to stdout",
	"md5sum":    "hashes files; -c only reads a list of sums",
	"sha1sum":   "hashes files; -c only reads a list of sums",
	"sha224sum": "hashes files; -c only reads a list of sums",
	"sha256sum": "hashes files; -c only reads a list of sums",
	"sha384sum": "hashes files; -c only reads a list of sums",
	"sha512sum": "hashes files; -c only reads a list of sums",
	"b2sum":     "hashes files; -c only reads a list of sums",
	"cksum":     "checksums files to stdout",
	"sum":       "checksums files to stdout",
	"grep":      "searches files; -f reads patterns, nothing writes or runs",
	"egrep":     "grep -E",
	"fgrep":     "grep -F",
	"zgrep":     "a script running gzip -cd and grep on the files, to stdout",
	"zegrep":    "zgrep -E",
	"zfgrep":    "zgrep -F",
	"bzgrep":    "a script running bzip2 -cd and grep, to stdout",
	"xzgrep":    "a script running xz -cd and grep, to stdout",
	"zcat":      "gzip -cd: decompresses to stdout only",
	"bzcat":     "bzip2 -cd: decompresses to stdout only",
	"xzcat":     "xz -cd: decompresses to stdout only",
	"lzcat":     "xz -cd --format=lzma: decompresses to stdout only",
	"ls":        "lists directories; every option shapes the listing",
	"dir":       "ls -C -b",
	"vdir":      "ls -l -b",
	"stat":      "prints file status; -c/--printf are formats",
	"du":        "sums disk usage; --files0-from only reads names",
	"df":        "prints file system usage",
	"readlink":  "prints where a link points",
	"realpath":  "prints resolved paths; --relative-to only computes",
	"basename":  "strips directories from names",
	"dirname":   "strips the last component of names",
	"pwd":       "prints the working directory",
	"namei":     "follows a path, printing each component",
	"getfacl":   "prints ACLs (setfacl is the writer)",
	"getcap":    "prints file capabilities (setcap is the writer)",
	"lsattr":    "prints ext2 attributes (chattr is the writer)",
	"jq":        "filters JSON to stdout; its language has no output or process builtins, -f/--rawfile/--slurpfile only read",
	"cmp":       "compares two files byte by byte",
	"diff":      "GNU diff compares files to stdout; --from-file/--to-file are operands, no option names a program",
	"expr":      "evaluates its operands as an expression",
	"factor":    "prints prime factors",
	"numfmt":    "reformats numbers to stdout",
	"tsort":     "sorts a partial order to stdout",
	"zipinfo":   "unzip -Z: lists an archive",
	// Who and what is running.
	"uptime":   "prints load and uptime",
	"uname":    "prints system names",
	"whoami":   "prints the user name",
	"id":       "prints user and group ids",
	"groups":   "prints group names",
	"logname":  "prints the login name",
	"users":    "prints logged-in users",
	"who":      "prints utmp entries; a file operand is only read",
	"w":        "prints users and their processes",
	"last":     "prints wtmp entries; -f only reads a file",
	"lastb":    "prints btmp entries",
	"ps":       "prints processes (procps); no option signals or writes",
	"pgrep":    "prints matching process ids (pkill is the signaller)",
	"pidof":    "prints process ids",
	"pstree":   "prints the process tree",
	"pwdx":     "prints processes' working directories",
	"pmap":     "prints processes' memory maps",
	"ipcs":     "lists IPC objects (ipcrm is the writer)",
	"lsipc":    "lists IPC objects",
	"lslocks":  "lists file locks",
	"lslogins": "lists accounts",
	// Hardware and kernel.
	"nproc":               "prints the number of CPUs",
	"lscpu":               "prints CPU information; -s only reads another sysroot",
	"lsblk":               "lists block devices",
	"lsusb":               "lists USB devices",
	"lspci":               "lists PCI devices; -F only reads a dump, no option writes config space",
	"lsmod":               "lists kernel modules",
	"lsns":                "lists namespaces",
	"lsmem":               "lists memory blocks (chmem is the writer)",
	"lsscsi":              "lists SCSI devices",
	"numastat":            "prints NUMA statistics",
	"systemd-detect-virt": "prints the virtualisation in use",
	"virt-what":           "prints the virtualisation in use",
	"arch":                "prints the machine architecture",
	"hostid":              "prints the host id (it has no option that sets it)",
	"getconf":             "prints configuration values",
	"locale":              "prints locale settings (localectl and locale-gen change them)",
	"tty":                 "prints the terminal's name",
	"cal":                 "prints a calendar",
	"ncal":                "prints a calendar",
	"systemd-cgls":        "prints the control group tree",
	"sestatus":            "prints SELinux status",
	"getenforce":          "prints the SELinux mode (setenforce is the writer)",
	"aa-status":           "prints AppArmor status",
	"apparmor_status":     "another name of aa-status: prints AppArmor status",
	"pveversion":          "prints Proxmox VE package versions",
	"named-checkconf":     "parses a BIND configuration; -z only loads the zones it names",
	"atq":                 "lists queued at jobs (atrm is the writer)",
	// Names.
	"which":    "prints where names resolve in PATH",
	"whereis":  "prints where binaries, sources and pages are",
	"type":     "prints what a name is",
	"printenv": "prints environment variables",
	"apropos":  "searches the manual page descriptions",
	"whatis":   "prints manual page descriptions",
	// Shell builtins that only affect the shell itself.
	"echo":     "prints its operands",
	"true":     "exits 0",
	"false":    "exits 1",
	":":        "does nothing",
	"seq":      "prints a sequence of numbers",
	"umask":    "prints or sets the shell's file mode mask, which affects only files the shell creates",
	"ulimit":   "prints or sets the shell's resource limits",
	"cd":       "changes the shell's directory",
	"pushd":    "changes the shell's directory, keeping a stack",
	"popd":     "changes the shell's directory back",
	"dirs":     "prints the directory stack",
	"times":    "prints the shell's times",
	"help":     "prints builtin help",
	"shift":    "shifts the positional parameters",
	"exit":     "ends the shell",
	"return":   "ends a function",
	"break":    "ends a loop",
	"continue": "continues a loop",
}

// knownWriters change the system whatever their arguments (SPEC P1 phase 2).
var knownWriters = map[string]Risk{
	// Destroying data and disks.
	"dd": RiskHigh, "shred": RiskHigh, "wipefs": RiskHigh, "mkfs": RiskHigh,
	"mke2fs": RiskHigh, "mkswap": RiskHigh, "sfdisk": RiskHigh,
	"gdisk": RiskHigh, "sgdisk": RiskHigh, "cfdisk": RiskHigh, "blkdiscard": RiskHigh, "cryptsetup": RiskHigh, "truncate": RiskHigh,
	"fsck": RiskHigh, "xfs_repair": RiskHigh,
	"resize2fs": RiskHigh, "lvremove": RiskHigh,
	"vgremove": RiskHigh, "pvremove": RiskHigh, "lvreduce": RiskHigh,
	"grub-install": RiskHigh, // Power and init.
	"reboot":       RiskHigh, "shutdown": RiskHigh, "halt": RiskHigh,
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
	"swapoff": RiskMedium, "modprobe": RiskMedium,
	"insmod": RiskMedium, "rmmod": RiskMedium, "depmod": RiskMedium,
	"umount": RiskMedium, "fstrim": RiskMedium,
	"sync": RiskLow, "locale-gen": RiskMedium,
	"update-grub":      RiskHigh,
	"update-initramfs": RiskHigh, "dracut": RiskHigh, "mkinitramfs": RiskHigh,
	"update-rc.d": RiskMedium, "chkconfig": RiskMedium, "setenforce": RiskHigh,
	"setsebool": RiskMedium, "ifup": RiskHigh, "ifdown": RiskHigh,
	"dhclient": RiskMedium, "ntpdate": RiskMedium,
	"systemd-run": RiskMedium, "at": RiskMedium, "batch": RiskMedium,
	"lvcreate": RiskMedium, "vgcreate": RiskMedium, "pvcreate": RiskMedium,
	"lvchange": RiskMedium, "vgchange": RiskMedium, "pvchange": RiskMedium,
	"lvextend": RiskMedium, "lvresize": RiskHigh, "vgextend": RiskMedium,
	"vgreduce": RiskHigh, "pvmove": RiskMedium, "lvrename": RiskMedium,
	"vgrename": RiskMedium, "vzdump": RiskMedium, "kubectx": RiskLow,
	"kubens": RiskLow, "postsuper": RiskMedium, "htpasswd": RiskMedium, "ssh-copy-id": RiskMedium, "mail": RiskLow, "mailx": RiskLow, "sendmail": RiskLow,
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

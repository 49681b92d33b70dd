package claims

import (
	"path"
	"regexp"
	"strings"
)

// Which claims a command that ran can back. A control write's command may
// be compound (cp x.bak x && systemctl restart x): every part of it ran,
// so each part backs the claims of its kind. A part's kind comes from its
// program (and subcommand) in the table below; a program the table does
// not know may have done anything (a script, a tool of the site's own),
// so it backs every claim, as a plugin's write does.

// anyFamily marks a part whose effect vigil cannot read.
const anyFamily = "*"

// fileWrite are the claims a command that writes files can back, as a
// file_edit write does: copying a backup over a file restores it, writing
// one deploys or updates it, emptying one cleans it up.
var fileWrite = []string{"", "delete", "cleanup", "rollback", "deploy"}

// programFamilies maps a program to the claim families it backs, by its
// first argument that is not an option when the map has one ("restart"),
// else by "" (any use of the program).
var programFamilies = map[string]map[string][]string{
	"systemctl": {
		"restart": {"restart"}, "reload": {"restart"}, "try-restart": {"restart"}, "reload-or-restart": {"restart"},
		"try-reload-or-restart": {"restart"}, "condrestart": {"restart"}, "daemon-reload": {"restart"}, "kill": {"kill", "stop"},
		"stop": {"stop"}, "start": {"start"}, "enable": {"start"}, "disable": {"stop"}, "mask": {"stop"}, "unmask": {"start"},
		"reboot": {"reboot"}, "poweroff": {"stop"}, "halt": {"stop"}, "set-property": {"", "scale"}, "edit": {""},
		"reset-failed": {"", "cleanup"}, "clean": {"cleanup", "delete"}, "isolate": {"stop", "start"},
	},
	"service":       {"restart": {"restart"}, "reload": {"restart"}, "force-reload": {"restart"}, "stop": {"stop"}, "start": {"start"}},
	"rc-service":    {"restart": {"restart"}, "reload": {"restart"}, "stop": {"stop"}, "start": {"start"}},
	"supervisorctl": {"restart": {"restart"}, "reload": {"restart"}, "stop": {"stop"}, "start": {"start"}, "update": {"restart", "deploy"}},
	"pm2":           {"restart": {"restart"}, "reload": {"restart"}, "stop": {"stop"}, "start": {"start"}, "delete": {"delete", "stop"}, "scale": {"scale"}},
	"docker": {
		"restart": {"restart"}, "stop": {"stop"}, "kill": {"kill", "stop"}, "start": {"start"}, "unpause": {"start"}, "pause": {"stop"},
		"rm": {"delete"}, "rmi": {"delete", "cleanup"}, "prune": {"cleanup", "delete"}, "system": {"cleanup", "delete"},
		"volume": {"cleanup", "delete"}, "image": {"cleanup", "delete"}, "container": {"cleanup", "delete", "stop", "start", "restart"},
		"run": {"start", "deploy"}, "pull": {"deploy"}, "update": {"", "scale"}, "compose": {"start", "stop", "restart", "deploy", "delete"},
		"cp": fileWrite, "exec": {anyFamily}, "service": {"scale", "deploy", "restart", "rollback"},
	},
	"docker-compose": {"": {"start", "stop", "restart", "deploy", "delete"}},
	"kubectl": {
		"rollout": {"restart", "rollback", "deploy"}, "delete": {"delete", "stop"}, "scale": {"scale", "stop", "start"},
		"autoscale": {"scale"}, "apply": {"", "deploy", "rollback"}, "create": {"", "deploy"}, "replace": {"", "deploy", "rollback"},
		"set": {"", "deploy", "rollback"}, "patch": {"", "deploy", "rollback", "scale"}, "edit": {"", "deploy", "rollback", "scale"},
		"cordon": {"stop"}, "uncordon": {"start"}, "drain": {"stop", "delete"}, "label": {""}, "annotate": {""}, "taint": {""},
		"exec": {anyFamily}, "cp": fileWrite,
	},
	"helm":                   {"upgrade": {"deploy", "rollback"}, "install": {"deploy"}, "rollback": {"rollback"}, "uninstall": {"delete"}, "delete": {"delete"}},
	"git":                    {"checkout": {"rollback", "deploy"}, "revert": {"rollback"}, "reset": {"rollback"}, "restore": {"rollback"}, "pull": {"deploy"}, "switch": {"rollback", "deploy"}},
	"apt":                    {"install": {"deploy"}, "upgrade": {"deploy"}, "dist-upgrade": {"deploy"}, "remove": {"delete"}, "purge": {"delete"}, "autoremove": {"cleanup", "delete"}, "clean": {"cleanup"}, "autoclean": {"cleanup"}},
	"apt-get":                {"install": {"deploy", "rollback"}, "upgrade": {"deploy"}, "dist-upgrade": {"deploy"}, "remove": {"delete"}, "purge": {"delete"}, "autoremove": {"cleanup", "delete"}, "clean": {"cleanup"}, "autoclean": {"cleanup"}},
	"dnf":                    {"install": {"deploy"}, "upgrade": {"deploy"}, "update": {"deploy"}, "downgrade": {"rollback"}, "remove": {"delete"}, "clean": {"cleanup"}},
	"yum":                    {"install": {"deploy"}, "upgrade": {"deploy"}, "update": {"deploy"}, "downgrade": {"rollback"}, "remove": {"delete"}, "clean": {"cleanup"}},
	"journalctl":             {"": {"cleanup", "delete"}},
	"logrotate":              {"": {"cleanup"}},
	"nginx":                  {"": {"restart"}},
	"apachectl":              {"": {"restart", "stop", "start"}},
	"kill":                   {"": {"kill", "stop", "restart"}},
	"pkill":                  {"": {"kill", "stop"}},
	"killall":                {"": {"kill", "stop"}},
	"reboot":                 {"": {"reboot", "restart"}},
	"shutdown":               {"": {"reboot", "stop"}},
	"poweroff":               {"": {"stop"}},
	"halt":                   {"": {"stop"}},
	"rm":                     {"": {"delete", "cleanup"}},
	"rmdir":                  {"": {"delete", "cleanup"}},
	"unlink":                 {"": {"delete", "cleanup"}},
	"shred":                  {"": {"delete", "cleanup"}},
	"truncate":               {"": {"delete", "cleanup", ""}},
	"find":                   {"": {"delete", "cleanup"}},
	"fstrim":                 {"": {"cleanup"}},
	"cp":                     {"": fileWrite},
	"mv":                     {"": fileWrite},
	"install":                {"": fileWrite},
	"rsync":                  {"": fileWrite},
	"ln":                     {"": fileWrite},
	"tee":                    {"": fileWrite},
	"dd":                     {"": fileWrite},
	"patch":                  {"": fileWrite},
	"sed":                    {"": fileWrite},
	"tar":                    {"": fileWrite},
	"unzip":                  {"": fileWrite},
	"gzip":                   {"": {"cleanup", ""}},
	"mkdir":                  {"": {""}},
	"touch":                  {"": {""}},
	"chmod":                  {"": {""}},
	"chown":                  {"": {""}},
	"setfacl":                {"": {""}},
	"mount":                  {"": {"", "start"}},
	"umount":                 {"": {"", "stop"}},
	"sysctl":                 {"": {"", "scale"}},
	"ulimit":                 {"": {"", "scale"}},
	"lvextend":               {"": {"scale"}},
	"resize2fs":              {"": {"scale"}},
	"xfs_growfs":             {"": {"scale"}},
	"iptables":               {"": {""}},
	"nft":                    {"": {""}},
	"ufw":                    {"": {"", "start", "stop"}},
	"crontab":                {"": {""}},
	"chronyc":                {"": {"", "restart"}},
	"timedatectl":            {"": {""}},
	"hwclock":                {"": {""}},
	"update-ca-certificates": {"": {"", "deploy"}},
	"certbot":                {"": {"", "deploy"}},
	"psql":                   {"": {anyFamily}},
	"mysql":                  {"": {anyFamily}},
	"redis-cli":              {"": {anyFamily}},
	"pct":                    {"start": {"start"}, "stop": {"stop"}, "shutdown": {"stop"}, "reboot": {"reboot", "restart"}, "resize": {"scale"}, "set": {"", "scale"}, "destroy": {"delete"}, "rollback": {"rollback"}},
	"qm":                     {"start": {"start"}, "stop": {"stop"}, "shutdown": {"stop"}, "reboot": {"reboot", "restart"}, "reset": {"reboot", "restart"}, "resize": {"scale"}, "set": {"", "scale"}, "destroy": {"delete"}, "rollback": {"rollback"}},
	"echo":                   {"": nil},
	"printf":                 {"": nil},
	"true":                   {"": nil},
	"sleep":                  {"": nil},
	"cat":                    {"": nil},
	"test":                   {"": nil},
}

// readPrograms only read (what a compound write also ran to check its
// work): they back no claim.
var readPrograms = setOf("df", "du", "ls", "ps", "top", "free", "uptime", "grep", "egrep", "tail", "head", "awk", "cut",
	"sort", "uniq", "wc", "date", "hostname", "ss", "netstat", "ip", "ping", "dig", "nslookup", "id", "whoami", "stat",
	"which", "lsof", "vmstat", "iostat", "less", "more", "jq", "diff", "md5sum", "sha256sum", "getent", "openssl",
	"curl", "wget", "nc", "pgrep", "pidof", "dmesg", "lsblk", "blkid", "findmnt", "mountpoint", "nproc", "uname", "[")

// wrappers run the command that follows them: their own options (and, for
// timeout and nice, an argument) come first.
var wrappers = setOf("sudo", "doas", "nohup", "env", "timeout", "nice", "ionice", "stdbuf", "chroot", "xargs", "exec", "command", "time", "setsid")

// shellSeparators split a command into the simple commands that ran.
var shellSeparators = strings.NewReplacer("&&", "\n", "||", "\n", ";", "\n", "|", "\n", "&", "\n", "$(", "\n", "`", "\n", "(", "\n", ")", "\n")

// commandFamilies returns the claim families a command backs, anyFamily
// included when a part's effect is unknown.
func commandFamilies(cmd string) map[string]bool {
	out := map[string]bool{}
	for _, part := range strings.Split(shellSeparators.Replace(fdDup.ReplaceAllStringFunc(cmd, func(m string) string {
		if m == "&>" {
			return ">" // both streams into a file
		}
		return " "
	})), "\n") {
		for _, f := range partFamilies(part, 0) {
			out[f] = true
		}
	}
	return out
}

// partFamilies are the families of one simple command.
func partFamilies(part string, depth int) []string {
	var fams []string
	// Output redirected into a file writes it.
	for _, m := range redirect.FindAllStringSubmatch(part, -1) {
		if m[1] != "/dev/null" {
			fams = append(fams, fileWrite...)
			break
		}
	}
	words := strings.Fields(redirect.ReplaceAllString(part, " "))
	i := 0
	for i < len(words) {
		w := path.Base(words[i])
		if strings.Contains(words[i], "=") && !strings.HasPrefix(words[i], "-") {
			i++ // VAR=value
			continue
		}
		if !wrappers[w] {
			break
		}
		i++
		for i < len(words) && (strings.HasPrefix(words[i], "-") || w == "timeout" && isNumberish(words[i])) {
			i++
		}
	}
	if i >= len(words) {
		return fams
	}
	prog := path.Base(words[i])
	args := words[i+1:]
	if (prog == "sh" || prog == "bash" || prog == "zsh" || prog == "dash") && depth < 2 {
		for k, a := range args {
			if a == "-c" && k+1 < len(args) {
				inner := strings.Trim(strings.Join(args[k+1:], " "), `'"`)
				for _, p := range strings.Split(shellSeparators.Replace(inner), "\n") {
					fams = append(fams, partFamilies(p, depth+1)...)
				}
				return fams
			}
		}
		return append(fams, anyFamily) // a script
	}
	if readPrograms[prog] {
		return fams
	}
	table, known := programFamilies[prog]
	if !known {
		return append(fams, anyFamily)
	}
	if f, ok := table[""]; ok {
		return append(fams, f...)
	}
	// An option that makes the program write (sed -i, find -delete,
	// journalctl --vacuum-size=…).
	for _, a := range args {
		for k, f := range table {
			if strings.HasPrefix(k, "-") && strings.HasPrefix(a, k) {
				return append(fams, f...)
			}
		}
	}
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			continue
		}
		if f, ok := table[a]; ok {
			return append(fams, f...)
		}
		break
	}
	return fams // a read use of a known program (systemctl status)
}

// redirect is an output redirection and its target; duplications of a
// descriptor (2>&1) are not writes and were taken out before splitting.
var redirect = regexp.MustCompile(`\d*>>?\s*([^\s;&|<>]+)`)

// fdDup is a descriptor duplication (2>&1, >&2), which the split on & would
// otherwise break apart.
var fdDup = regexp.MustCompile(`\d*>&\d+|&>`)

func isNumberish(s string) bool {
	return s != "" && strings.Trim(s, "0123456789.smhd") == ""
}

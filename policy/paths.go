package policy

import (
	"path"
	"strings"
)

// systemPath is a place where a write changes how a machine boots, who may
// log in, or what software runs. A write there is high risk whichever tool
// proposes it (a file_edit, a control command), and the approval card says
// which place and why.
type systemPath struct {
	// prefix is a directory (matching itself and everything below it) or a
	// file.
	prefix string
	what   string
}

// systemPaths is the table of system places, most specific first: the first
// entry that matches names the reason.
var systemPaths = []systemPath{
	{"/etc/sudoers", "sudo rules"},
	{"/etc/sudoers.d", "sudo rules"},
	{"/etc/ssh", "SSH configuration"},
	{"/etc/passwd", "user accounts"},
	{"/etc/shadow", "password hashes"},
	{"/etc/group", "user groups"},
	{"/etc/gshadow", "user groups"},
	{"/etc/pam.d", "login authentication"},
	{"/etc/security", "login security settings"},
	{"/etc/systemd", "systemd units and settings"},
	{"/etc/init.d", "init scripts"},
	{"/etc/crontab", "scheduled jobs"},
	{"/etc/cron.d", "scheduled jobs"},
	{"/etc/fstab", "filesystems mounted at boot"},
	{"/etc/ld.so.preload", "libraries loaded into every program"},
	{"/etc/ld.so.conf", "library search paths"},
	{"/etc/ld.so.conf.d", "library search paths"},
	{"/etc/sysctl.conf", "kernel settings"},
	{"/etc/sysctl.d", "kernel settings"},
	{"/etc/modprobe.d", "kernel modules"},
	{"/etc/apt", "package sources"},
	{"/etc/yum.repos.d", "package sources"},
	{"/etc/hosts", "name resolution"},
	{"/etc/resolv.conf", "name resolution"},
	{"/etc", "system configuration"},
	{"/boot", "boot loader and kernels"},
	{"/lib/systemd", "systemd units"},
	{"/usr/lib/systemd", "systemd units"},
	{"/run/systemd/system", "systemd units"},
	{"/usr", "installed software"},
	{"/bin", "installed software"},
	{"/sbin", "installed software"},
	{"/lib", "installed software"},
	{"/lib32", "installed software"},
	{"/lib64", "installed software"},
	{"/libx32", "installed software"},
	{"/var/lib", "application and package state"},
	{"/var/spool/cron", "scheduled jobs"},
	{"/root", "root's home (keys, shell start-up files)"},
	{"/proc/sys", "kernel settings"},
	{"/sys", "kernel and device settings"},
	{"/dev", "devices"},
}

// systemPathParts are names that are system places wherever they live: a
// path holding one of these segments, or ending in one of these suffixes.
var systemPathParts = []struct {
	segment, suffix string
	what            string
}{
	{segment: "/.ssh/", what: "SSH keys"},
	{suffix: "/.ssh", what: "SSH keys"},
	{suffix: "/authorized_keys", what: "SSH keys"},
	{segment: "/systemd/system/", what: "systemd units"},
	{segment: "/systemd/user/", what: "systemd units"},
	{suffix: ".service", what: "a systemd unit"},
	{suffix: ".socket", what: "a systemd unit"},
	{suffix: ".timer", what: "a systemd unit"},
	{suffix: ".mount", what: "a systemd unit"},
	{suffix: "/sudoers", what: "sudo rules"},
	{suffix: "/.bashrc", what: "a shell start-up file"},
	{suffix: "/.bash_profile", what: "a shell start-up file"},
	{suffix: "/.profile", what: "a shell start-up file"},
	{suffix: "/.zshrc", what: "a shell start-up file"},
}

// harmlessPaths are under system directories but writing them changes
// nothing (sinks and the process's own streams).
var harmlessPaths = []string{
	"/dev/null", "/dev/zero", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd", "/dev/shm",
}

// SystemPath reports whether p is a system place (systemPaths,
// systemPathParts) and says what it holds. p is cleaned first, so
// "/tmp/../etc/passwd" is /etc/passwd; "~" counts as a home directory.
func SystemPath(p string) (what string, ok bool) {
	if strings.HasPrefix(p, "~") {
		p = "/home/" + strings.TrimPrefix(p, "~")
	}
	if !strings.HasPrefix(p, "/") {
		return "", false
	}
	p = path.Clean(p)
	for _, h := range harmlessPaths {
		if under(p, h) {
			return "", false
		}
	}
	for _, sp := range systemPaths {
		if under(p, sp.prefix) {
			return sp.what, true
		}
	}
	for _, part := range systemPathParts {
		if part.segment != "" && strings.Contains(p, part.segment) ||
			part.suffix != "" && strings.HasSuffix(p, part.suffix) {
			return part.what, true
		}
	}
	return "", false
}

// under reports whether p is dir or below it.
func under(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir) && p[len(dir)] == '/'
}

// pathWordSeparators split a command into the words that may be paths:
// blanks, shell operators and quotes, and the '=' of --opt=/path and
// of=/dev/sda.
const pathWordSeparators = " \t\r\n;|&<>()'\"`=,"

// systemPathsIn returns the system places a command names, in order, each
// once. It reads words, not a parse: a command that names a system path
// anywhere (an argument, a redirection, an option's value) counts, so the
// approval card errs towards high risk.
func systemPathsIn(cmd string) (paths, whats []string) {
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(cmd, func(r rune) bool { return strings.ContainsRune(pathWordSeparators, r) }) {
		if w[0] != '/' && w[0] != '~' {
			continue
		}
		what, ok := SystemPath(w)
		if !ok || seen[w] {
			continue
		}
		seen[w] = true
		paths, whats = append(paths, w), append(whats, what)
	}
	return paths, whats
}

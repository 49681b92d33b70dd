package command

import (
	"net"
	"slices"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// oracleWriters are commands that change the system whatever their
// arguments. The fuzz oracle keeps its own list, independent of the
// classifier's tables, so a mistake in the tables cannot hide itself.
var oracleWriters = map[string]bool{
	"rm": true, "mv": true, "cp": true, "dd": true, "shred": true, "mkfs": true, "mkfs.ext4": true,
	"truncate": true, "chmod": true, "chown": true, "chgrp": true, "ln": true, "mkdir": true,
	"touch": true, "rmdir": true, "reboot": true, "shutdown": true, "halt": true, "poweroff": true,
	"pkill": true, "killall": true, "useradd": true, "userdel": true,
	"install": true, "rsync": true, "scp": true, "wipefs": true,
	"swapoff": true, "modprobe": true, "insmod": true, "rmmod": true, "umount": true,
	"chattr": true, "setfacl": true, "fallocate": true, "tee": true, "eval": true, "exec": true,
	"doas": true, "source": true, ".": true,
}

// onlyNames reports alias words that only name aliases (alias NAME
// prints one, whatever characters it has, such as "0-"; NAME=VALUE
// defines one; a word starting with "-" is an option, of which only -p
// lists).
func onlyNames(ws []*syntax.Word) bool {
	for _, w := range ws {
		if l := litOf(w); l == "" || strings.Contains(l, "=") || strings.HasPrefix(l, "-") && l != "-p" {
			return false
		}
	}
	return true
}

// hasWordIn reports whether one of the words is literally one of lits.
func hasWordIn(ws []*syntax.Word, lits ...string) bool {
	for _, w := range ws {
		if slices.Contains(lits, litOf(w)) {
			return true
		}
	}
	return false
}

// partedPrints reports parted's listing forms: -l alone, or a device
// followed by print (after unit settings), with only -s, -m and -j.
func partedPrints(ws []*syntax.Word) bool {
	var ops []string
	list := false
	for _, w := range ws {
		switch l := litOf(w); {
		case l == "-l" || l == "--list":
			list = true
		case l == "-s" || l == "-m" || l == "-j" || l == "-sm" || l == "-ms":
		case strings.HasPrefix(l, "-") || l == "":
			return false
		default:
			ops = append(ops, l)
		}
	}
	if list && len(ops) == 0 {
		return true
	}
	if len(ops) < 2 {
		return false
	}
	ops = ops[1:]
	for len(ops) >= 2 && ops[0] == "unit" {
		ops = ops[2:]
	}
	return len(ops) >= 1 && ops[0] == "print" && len(ops) <= 2
}

// oracleNetClients are programs that send their words to a server, listed
// independently of the classifier's tables (git counts for ls-remote).
var oracleNetClients = map[string]bool{
	"curl": true, "wget": true, "http": true, "https": true, "ssh": true, "nc": true,
	"ncat": true, "netcat": true, "dig": true, "nslookup": true, "host": true, "whois": true,
	"redis-cli": true, "valkey-cli": true, "psql": true, "mysql": true, "mariadb": true,
	"kubectl": true, "helm": true, "aws": true, "gcloud": true, "az": true, "etcdctl": true,
	"ping": true, "traceroute": true, "mtr": true, "pg_isready": true, "argocd": true,
	"tcpdump": true, "ss": true, "arp": true, "conntrack": true,
}

// oracleNetFindings reports why src must not be read-only by the
// confidentiality rule (SPEC R1) under the zero Options: a network client
// with a word the shell expands (parameter, command, arithmetic or
// process substitution, a glob, brace or tilde), or with a URL whose host
// is not the loopback.
func oracleNetFindings(src string) string {
	f, err := syntax.NewParser().Parse(strings.NewReader(src), "")
	if err != nil {
		return ""
	}
	why := ""
	syntax.Walk(f, func(n syntax.Node) bool {
		x, ok := n.(*syntax.CallExpr)
		if !ok || len(x.Args) == 0 || why != "" {
			return why == ""
		}
		name := litOf(x.Args[0])
		if i := strings.LastIndexByte(name, '/'); i >= 0 {
			name = name[i+1:]
		}
		if !oracleNetClients[name] && !(name == "git" && hasWordIn(x.Args[1:], "ls-remote")) {
			return true
		}
		// A help or version query connects nowhere, whatever else it
		// spells (curl -h://0 and -0h000://0 ask for a help category;
		// wget -ht://0 prints its help before it reads -t).
		query := false
		for _, w := range x.Args[1:] {
			l := litOf(w)
			curlHelp := (name == "curl" || name == "wget") && len(l) > 1 && l[0] == '-' && l[1] != '-' && strings.Contains(l, "h")
			// curl over a local socket (--unix-socket, abbreviated as
			// GNU getopt allows: --un) connects to no host.
			opt, _, _ := strings.Cut(l, "=")
			curlSocket := name == "curl" && len(opt) > 3 && (strings.HasPrefix("--unix-socket", opt) || strings.HasPrefix("--abstract-unix-socket", opt))
			query = query || curlHelp || curlSocket || l == "--help" || l == "-V" || l == "--version"
		}
		for i, w := range x.Args[1:] {
			if wordExpands(w) {
				why = name + " with a word the shell expands"
				return false
			}
			l := litOf(w)
			// The value of a curl option that names no server (-A
			// http://0 is a user agent) is no URL.
			text := i > 0 && name == "curl" && curlTextOpts[litOf(x.Args[i])]
			if before, rest, ok := strings.Cut(l, "://"); ok && !query && !text && !oracleLookupOnly[name] && oracleSchemes[trailingLetters(before)] {
				host := rest
				if i := strings.IndexAny(host, "/?#"); i >= 0 {
					host = host[:i]
				}
				if i := strings.LastIndexByte(host, '@'); i >= 0 {
					host = host[i+1:]
				}
				if h, _, err := net.SplitHostPort(host); err == nil {
					host = h
				}
				host = strings.ToLower(strings.Trim(host, "[]")) // host names ignore case
				if host != "localhost" && !strings.HasPrefix(host, "127.") && host != "::1" && host != "" {
					why = name + " to " + host + ", not a destination the zero Options know"
					return false
				}
			}
		}
		return true
	})
	return why
}

// oracleLookupOnly are clients that only ask the resolver about the names
// they are given (a filter's host), never connect to them.
var oracleLookupOnly = map[string]bool{"tcpdump": true, "ss": true, "arp": true, "conntrack": true}

// curlTextOpts are curl options whose value (the next word) is text the
// request carries or a local file, never a server.
var curlTextOpts = map[string]bool{"-A": true, "--user-agent": true, "-e": true, "--referer": true,
	"-H": true, "--header": true, "-u": true, "--user": true, "-b": true, "--cookie": true,
	"-o": true, "--output": true, "-w": true, "--write-out": true, "-X": true, "--request": true}

// oracleSchemes are URL schemes whose URLs name a server to connect to.
// Text such as pg_isready -d'://0' is no URL (a database name): the
// scheme must be one of these, spelled right before "://".
var oracleSchemes = map[string]bool{"http": true, "https": true, "ftp": true, "ftps": true,
	"sftp": true, "scp": true, "ssh": true, "git": true, "postgres": true, "postgresql": true,
	"mysql": true, "redis": true, "rediss": true, "ldap": true, "ldaps": true, "ws": true,
	"wss": true, "smtp": true, "smtps": true, "imap": true, "imaps": true, "pop3": true,
	"telnet": true, "dict": true, "gopher": true, "tftp": true, "mongodb": true}

// trailingLetters is the run of ASCII letters and digits that ends s,
// lower-cased.
func trailingLetters(s string) string {
	i := len(s)
	for i > 0 && (s[i-1] >= 'a' && s[i-1] <= 'z' || s[i-1] >= 'A' && s[i-1] <= 'Z' || s[i-1] >= '0' && s[i-1] <= '9') {
		i--
	}
	return strings.ToLower(s[i:])
}

// wordExpands reports a word the shell expands: anything but plain and
// quoted literal text, or unquoted text with a glob, brace expansion or
// tilde.
func wordExpands(w *syntax.Word) bool {
	// mvdan.cc/sh's own reading of brace expansion ("a{b" is none), on
	// a copy: SplitBraces rewrites the word it is given (and reports true
	// for any "{", expansion or not).
	cp := *w
	cp.Parts = slices.Clone(w.Parts)
	if syntax.SplitBraces(&cp) && slices.ContainsFunc(cp.Parts, func(p syntax.WordPart) bool {
		_, ok := p.(*syntax.BraceExp)
		return ok
	}) {
		return true
	}
	for i, p := range w.Parts {
		switch x := p.(type) {
		case *syntax.Lit:
			// A bracket is a pattern only when a "]" closes it.
			open := strings.IndexByte(x.Value, '[')
			if strings.ContainsAny(x.Value, "*?") || open >= 0 && strings.IndexByte(x.Value[open:], ']') > 0 ||
				i == 0 && strings.HasPrefix(x.Value, "~") {
				return true
			}
		case *syntax.SglQuoted:
		case *syntax.DblQuoted:
			if x.Dollar {
				return true
			}
			for _, q := range x.Parts {
				if _, ok := q.(*syntax.Lit); !ok {
					return true
				}
			}
		default:
			return true
		}
	}
	return false
}

// oracleFindings walks src independently of the classifier and returns
// the literal command words of simple commands that are known writers,
// inside substitutions too (which run). kill writes unless it sends signal
// 0 or lists signals, passwd unless it shows a status or help (-S, -aS, -h), and sudo runs
// its command unless it lists (-l, -B -l) or shows help (-h alone); trap
// sets a trap unless it lists them. ok
// is false if src does not parse.
func oracleFindings(src string) (writers []string, ok bool) {
	f, err := syntax.NewParser().Parse(strings.NewReader(src), "")
	if err != nil {
		return nil, false
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		x, isCall := n.(*syntax.CallExpr)
		if !isCall || len(x.Args) == 0 {
			return true
		}
		word := litOf(x.Args[0])
		second := ""
		if len(x.Args) > 1 {
			second = litOf(x.Args[1])
		}
		switch {
		case oracleWriters[word]:
			writers = append(writers, word)
		case word == "trap" && !onlyWords(x.Args[1:], "-l", "-p"):
			writers = append(writers, word)
		case word == "kill" && second != "-0" && second != "-l" && second != "-L" && second != "-s" && second != "-n":
			writers = append(writers, word)
		case word == "passwd" && !passwdShows(x.Args[1:]):
			writers = append(writers, word)
		case word == "sudo" && !sudoRunsNothing(x.Args[1:]):
			writers = append(writers, word)
		case word == "alias" && !onlyNames(x.Args[1:]):
			writers = append(writers, word)
		case word == "fdisk" && !hasWordIn(x.Args[1:], "-l", "--list", "-x", "--list-details"):
			writers = append(writers, word)
		case word == "parted" && !partedPrints(x.Args[1:]):
			writers = append(writers, word)
		case expands(x.Args[0]):
			writers = append(writers, "(dynamic command word)")
		}
		return true
	})
	return writers, true
}

// litOf returns a word's value with quotes and backslashes removed when
// it is made of literal text and quoted literal text only (-0 written
// as '-0', "-0" or -\0), else "".
func litOf(w *syntax.Word) string {
	var b strings.Builder
	for _, p := range w.Parts {
		switch x := p.(type) {
		case *syntax.Lit:
			b.WriteString(unescape(x.Value, ""))
		case *syntax.SglQuoted:
			if x.Dollar {
				return ""
			}
			b.WriteString(x.Value)
		case *syntax.DblQuoted:
			for _, q := range x.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return ""
				}
				b.WriteString(unescape(l.Value, "$`\"\\\n"))
			}
		default:
			return ""
		}
	}
	return b.String()
}

// unescape removes the backslashes the shell removes: before any byte
// outside quotes (special == ""), before the special bytes inside double
// quotes; a backslash-newline disappears.
func unescape(s, special string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (special == "" || strings.IndexByte(special, s[i+1]) >= 0) {
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// onlyWords reports whether every word is one of the literals (trap
// alone, -l and -p list traps).
func onlyWords(ws []*syntax.Word, lits ...string) bool {
	for _, w := range ws {
		if !slices.Contains(lits, litOf(w)) {
			return false
		}
	}
	return true
}

// passwdShows reports a passwd option word that shows the status or help
// (-S or -h in any cluster, --status, --help and their abbreviations) among the leading options.
func passwdShows(ws []*syntax.Word) bool {
	for _, w := range ws {
		l := litOf(w)
		long := len(l) > 2 && strings.HasPrefix(l, "--") && (strings.HasPrefix("--status", l) || strings.HasPrefix("--help", l))
		if long || strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "--") && strings.ContainsAny(l, "Sh") {
			return true
		}
		if l == "--" {
			return false
		}
	}
	return false
}

// sudoRunsNothing reports sudo options that list (-l in any cluster,
// --list), show the version or, alone, help (-h). Short options that take
// a value (-u user) skip it; the first other word ends the options.
func sudoRunsNothing(ws []*syntax.Word) bool {
	if len(ws) == 1 {
		if w := litOf(ws[0]); w == "-h" || len(w) >= 5 && strings.HasPrefix("--help", w) {
			return true
		}
	}
	for i := 0; i < len(ws); i++ {
		w := litOf(ws[i])
		switch {
		case len(w) >= 4 && strings.HasPrefix(w, "--") && (strings.HasPrefix("--list", w) || strings.HasPrefix("--version", w)),
			w == "-V":
			return true
		case w == "" || w == "--" || !strings.HasPrefix(w, "-"):
			return false
		case strings.HasPrefix(w, "--"):
			if !strings.Contains(w, "=") && slices.Contains([]string{"--user", "--group", "--prompt",
				"--role", "--type", "--other-user", "--chdir", "--chroot", "--close-from",
				"--login-class", "--auth-type", "--command-timeout"}, w) {
				i++
			}
		default:
			for j := 1; j < len(w); j++ {
				if w[j] == 'l' || w[j] == 'V' {
					return true
				}
				if strings.IndexByte("aCcDgprRtTUu", w[j]) >= 0 {
					if j == len(w)-1 {
						i++
					}
					break
				}
			}
		}
	}
	return false
}

// expands reports whether a word contains a parameter expansion, so that
// as a command word it could name any program.
func expands(w *syntax.Word) bool {
	found := false
	syntax.Walk(w, func(n syntax.Node) bool {
		if _, ok := n.(*syntax.ParamExp); ok {
			found = true
		}
		return !found
	})
	return found
}

// subcommandTools are tools whose grammar has verbs; the fuzz oracle
// inserts an option none of them has after their name.
var subcommandTools = map[string]bool{
	"systemctl": true, "kubectl": true, "helm": true, "docker": true, "git": true, "apt": true,
	"apt-get": true, "dnf": true, "yum": true, "zfs": true, "zpool": true, "timedatectl": true,
	"loginctl": true, "busctl": true, "networkctl": true, "resolvectl": true, "coredumpctl": true,
	"systemd-analyze": true, "supervisorctl": true, "crictl": true, "etcdctl": true, "virsh": true,
	"lxc": true, "pip": true, "npm": true, "snap": true, "apk": true, "terraform": true,
	"rbd": true, "rados": true, "udevadm": true, "hostnamectl": true, "localectl": true,
}

// unknownOption is an option no tool has.
const unknownOption = " --vigil-fuzz-unknown"

// oracleSecondGen reports why src must not be read-only by the second
// review's rules, independently of the classifier: a network device path,
// set -k, an @P expansion. It also returns src with an unknown option
// inserted after the first subcommand tool's name, or "".
func oracleSecondGen(src string) (why, withUnknown string) {
	switch {
	case strings.Contains(src, "/dev/tcp"), strings.Contains(src, "/dev/udp"):
		why = "a network device path"
	case strings.Contains(src, "set -k"):
		why = "set -k"
	}
	f, err := syntax.NewParser().Parse(strings.NewReader(src), "")
	if err != nil {
		return why, ""
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.ParamExp:
			if x.Exp != nil && x.Exp.Op == syntax.OtherParamOps && x.Exp.Word != nil && x.Exp.Word.Lit() == "P" {
				why = "an @P expansion"
			}
		case *syntax.CallExpr:
			if withUnknown == "" && len(x.Args) > 0 && subcommandTools[x.Args[0].Lit()] {
				end := x.Args[0].End().Offset()
				if end <= uint(len(src)) {
					withUnknown = src[:end] + unknownOption + src[end:]
				}
			}
		}
		return true
	})
	return why, withUnknown
}

func FuzzClassifyCommand(f *testing.F) {
	for _, file := range allCorpusFiles {
		rows, err := loadCorpus("testdata/commands/" + file)
		if err != nil {
			f.Fatalf("seed corpus: %v", err)
		}
		for _, r := range rows {
			f.Add(r.command)
		}
	}
	shared, _ := sharedCorpusPath()
	if rows, err := loadCorpus(shared); err == nil {
		for _, r := range rows {
			f.Add(r.command)
		}
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		v := Classify(cmd)
		checkInvariants(t, cmd, v)
		if !v.ReadOnly() {
			return
		}
		writers, ok := oracleFindings(cmd)
		if !ok {
			t.Fatalf("Classify(%q) = %s %q, but the command does not parse", cmd, v.Intent, v.Reasons)
		}
		if len(writers) > 0 {
			t.Fatalf("Classify(%q) = %s %q, but it runs the writer %q", cmd, v.Intent, v.Reasons, writers[0])
		}
		why, withUnknown := oracleSecondGen(cmd)
		if why != "" {
			t.Fatalf("Classify(%q) = %s %q despite %s", cmd, v.Intent, v.Reasons, why)
		}
		if why := oracleNetFindings(cmd); why != "" {
			t.Fatalf("Classify(%q) = %s %q despite a network read: %s", cmd, v.Intent, v.Reasons, why)
		}
		for _, d := range v.Destinations {
			if !LoopbackHost(d.Host) && d != resolverDest {
				t.Fatalf("Classify(%q) = %s to %v, a destination the zero Options do not know", cmd, v.Intent, d)
			}
		}
		if withUnknown != "" {
			if u := Classify(withUnknown); u.ReadOnly() {
				t.Fatalf("Classify(%q) = %s %q despite an unknown option of a subcommand tool", withUnknown, u.Intent, u.Reasons)
			}
		}
	})
}

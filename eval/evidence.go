package eval

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Evidence is graded by class, not by spelling: "which process owns the
// port" is answered by ss, lsof, netstat or fuser alike. A scenario names a
// class as `class:NAME TARGET[: ARG]`, alone or among " || " alternatives;
// the class expands to the matchers below, with {t} the target and {a} the
// argument (a path, a unit, a name). The table is the one place that says
// which reads are equivalent.
var evidenceClasses = map[string][]string{
	// Block usage of filesystems.
	"disk": {"read {t}: df *", "read {t}: findmnt * -D *", "read {t}: findmnt -D *"},
	// Inode usage of filesystems.
	"inodes": {"read {t}: df -i *", "read {t}: tune2fs -l *"},
	// What fills a directory tree.
	"dir-usage": {"read {t}: du *", "read {t}: ls *", "read {t}: find *", "read {t}: ncdu *", "read.find {t}"},
	// Which process listens on or holds a port.
	// Or two reads together: the process list (its PID and command line)
	// and the owner's or the loser's bind or listen line (the journal, a
	// unit's status or logs); neither alone shows who holds the port.
	"port-owner": {"read {t}: ss *", "read {t}: lsof *", "read {t}: netstat *", "read {t}: fuser *",
		"read {t}: ps * && read {t} ~ bind()|address already in use|listening on|bound to"},
	// Whether the clock is synchronised and by how much it is off.
	"clock": {"read {t}: timedatectl *", "read {t}: chronyc *", "read {t}: ntpq *", "read {t}: ntpstat *"},
	// The path MTU or interface MTU.
	"mtu": {"read {t}: ip link *", "read {t}: ip -d link *", "read {t}: ip addr *", "read {t}: ip a *", "read {t}: tracepath *",
		"read {t}: ping * -M do *", "read {t}: ifconfig *", "read {t}: cat /sys/class/net/*/mtu"},
	// A unit's logs: the journal, its status tail, or read.logs.
	"logs": {"read {t}: journalctl * -u {a}* *", "read {t}: journalctl * --unit={a}* *", "read {t}: journalctl * --unit {a}* *",
		"read {t}: systemctl status * {a}* *", "read {t}: systemctl status {a}* *"},
	// A unit's state.
	"status": {"read {t}: systemctl status * {a}* *", "read {t}: systemctl is-active * {a}* *",
		"read {t}: systemctl show * {a}* *", "read {t}: service {a} status"},
	// A file's content: read.file, read.tail or any reader of the path.
	"file": {"read {t}: {a}", "read {t}: cat * {a}", "read {t}: head * {a}", "read {t}: tail * {a}", "read {t}: grep * {a}",
		"read {t}: less * {a}", "read {t}: sed * {a}", "read {t}: awk * {a}", "read {t}: stat * {a}"},
	// Processes and their resource use.
	"processes": {"read {t}: ps *", "read {t}: top *", "read {t}: pgrep *", "read {t}: pidstat *", "read {t}: htop *"},
	// Memory and the kernel's OOM killer.
	"oom": {"read {t}: dmesg *", "read {t}: journalctl * -k *", "read {t}: journalctl -k *", "read {t}: journalctl * --dmesg *",
		"read {t}: grep * /var/log/kern.log", "read {t}: grep * /var/log/syslog"},
	// Name resolution.
	"dns": {"read {t}: cat /etc/resolv.conf", "read {t}: head * /etc/resolv.conf", "read {t}: resolvectl *", "read {t}: dig *",
		"read {t}: nslookup *", "read {t}: host *", "read {t}: getent hosts *", "read {t}: systemd-resolve *"},
	// Firewall rules.
	"firewall": {"read {t}: nft *", "read {t}: iptables *", "read {t}: iptables-save *", "read {t}: ufw status *", "read {t}: firewall-cmd *"},
	// Reachability of a service from a client.
	"connect": {"read {t}: nc *", "read {t}: curl *", "read {t}: telnet *", "read {t}: psql *", "read {t}: pg_isready *"},
	// A certificate's validity.
	"cert": {"read {t}: openssl *", "read {t}: certbot certificates *", "read {t}: curl -v *", "read {t}: step certificate *"},
}

// evidenceAlt is one way to show an evidence class: reads that count only
// together. Every part must be read, with data, before the first change;
// a part is any of its matchers. Most ways are one read.
type evidenceAlt [][]Matcher

// matchers are every matcher of every way, for reads that verify a fix.
func matchersOf(alts []evidenceAlt) []Matcher {
	var out []Matcher
	for _, a := range alts {
		for _, part := range a {
			out = append(out, part...)
		}
	}
	return out
}

// parseAlternatives reads an evidence entry: ways separated by " || ",
// each a matcher or class, or reads that count together joined by " && ".
// A part may end in " ~ TEXT": the read must have shown one of TEXT's
// |-separated alternatives (case ignored), e.g. the journal's bind line.
func parseAlternatives(s string) ([]evidenceAlt, error) {
	var out []evidenceAlt
	for _, a := range strings.Split(s, " || ") {
		a = strings.TrimSpace(a)
		if strings.HasPrefix(a, "class:") && !strings.Contains(a, " && ") {
			alts, err := expandClass(a)
			if err != nil {
				return nil, err
			}
			out = append(out, alts...)
			continue
		}
		var alt evidenceAlt
		for _, part := range strings.Split(a, " && ") {
			ms, err := parsePart(strings.TrimSpace(part))
			if err != nil {
				return nil, err
			}
			alt = append(alt, ms)
		}
		out = append(out, alt)
	}
	return out, nil
}

// parsePart reads one part of a way: a matcher, or a class whose every
// one-read way is an alternative, with an optional " ~ TEXT".
func parsePart(s string) ([]Matcher, error) {
	s, shows, hasShows := strings.Cut(s, " ~ ")
	var ms []Matcher
	if strings.HasPrefix(s, "class:") {
		alts, err := expandClass(s)
		if err != nil {
			return nil, err
		}
		for _, a := range alts {
			if len(a) == 1 {
				ms = append(ms, a[0]...)
			}
		}
	} else {
		m, err := ParseMatcher(s)
		if err != nil {
			return nil, err
		}
		ms = []Matcher{m}
	}
	if hasShows {
		if strings.TrimSpace(shows) == "" {
			return nil, fmt.Errorf("%q: empty text after '~'", s)
		}
		for i := range ms {
			ms[i].shows = strings.TrimSpace(shows)
			ms[i].Raw += " ~ " + ms[i].shows
		}
	}
	return ms, nil
}

// expandClass turns `class:NAME TARGET[: ARG]` into its ways.
func expandClass(s string) ([]evidenceAlt, error) {
	head, arg, hasArg := strings.Cut(strings.TrimPrefix(s, "class:"), ":")
	f := strings.Fields(head)
	if len(f) != 2 {
		return nil, fmt.Errorf("%q: want \"class:NAME TARGET[: ARG]\"", s)
	}
	tmpl, ok := evidenceClasses[f[0]]
	if !ok {
		var names []string
		for n := range evidenceClasses {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("%q: no evidence class %q; known: %s", s, f[0], strings.Join(names, ", "))
	}
	arg = strings.TrimSpace(arg)
	needs := slices.ContainsFunc(tmpl, func(t string) bool { return strings.Contains(t, "{a}") })
	if needs && (!hasArg || arg == "") {
		return nil, fmt.Errorf("%q: class %s needs an argument after ':'", s, f[0])
	}
	var out []evidenceAlt
	for _, t := range tmpl {
		if t == "read {t}: {a}" {
			// read.file and read.tail of the path itself.
			for _, act := range []string{"read.file", "read.tail"} {
				m, err := ParseMatcher(act + " " + f[1] + ": " + arg)
				if err != nil {
					return nil, fmt.Errorf("%q: %v", s, err)
				}
				m.Raw = s
				out = append(out, evidenceAlt{{m}})
			}
			continue
		}
		var alt evidenceAlt
		for _, part := range strings.Split(t, " && ") {
			ms, err := parsePart(strings.NewReplacer("{t}", f[1], "{a}", arg).Replace(part))
			if err != nil {
				return nil, fmt.Errorf("%q: %v", s, err)
			}
			for i := range ms {
				ms[i].Raw = s
			}
			alt = append(alt, ms)
		}
		out = append(out, alt)
	}
	return out, nil
}

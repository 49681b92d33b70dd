package command

import "strings"

// netCheckers cover network configuration, diagnostics and HTTP clients.
var netCheckers = map[string]checkFunc{
	"ip":              checkIP,
	"iptables":        checkIptables,
	"ip6tables":       checkIptables,
	"iptables-legacy": checkIptables,
	"iptables-nft":    checkIptables,
	"ebtables":        checkIptables,
	"arptables":       checkIptables,
	"iptables-save":   checkIptablesSave,
	"ip6tables-save":  checkIptablesSave,
	"nft":             checkNft,
	"ufw":             checkUfw,
	"firewall-cmd":    checkFirewallCmd,
	"ipset":           checkListVerb("list", "ls", "save", "test", "version", "help", "-L", "-l", "-S", "-T", "-v", "-h"),
	"conntrack":       checkConntrack,
	"tc":              checkShowVerb("show", "list", "ls", "sh"),
	"bridge":          checkShowVerb("show", "list", "ls", "sh"),
	"route":           checkRoute,
	"arp":             checkArp,
	"ifconfig":        checkIfconfig,
	"ethtool":         checkEthtool,
	"nmcli":           checkNmcli,
	"ping":            checkPing,
	"ping6":           checkPing,
	"arping":          checkPing,
	"mtr":             checkMtr,
	"tcpdump":         checkTcpdump,
	"netstat":         checkNetstat,
	"ss":              checkSs,
	"nslookup":        checkNslookup,
	"curl":            checkCurl,
	"wget":            checkWget,
	"openssl":         checkOpenssl,
	"ssh":             checkSSH,
}

// ipObjects maps the object words ip accepts (with iproute2's
// abbreviations) to the object.
var ipObjects = map[string]string{
	"a": "address", "ad": "address", "add": "address", "addr": "address", "addre": "address",
	"addres": "address", "address": "address", "l": "link", "li": "link", "lin": "link",
	"link": "link", "r": "route", "ro": "route", "rou": "route", "rout": "route", "route": "route",
	"ru": "rule", "rul": "rule", "rule": "rule", "n": "neigh", "ne": "neigh", "nei": "neigh",
	"neigh": "neigh", "neighbor": "neigh", "neighbour": "neigh", "netconf": "netconf",
	"ntable": "ntable", "m": "maddress", "ma": "maddress", "maddr": "maddress",
	"maddress": "maddress", "mr": "mroute", "mroute": "mroute", "t": "tunnel", "tu": "tunnel",
	"tunnel": "tunnel", "tuntap": "tuntap", "xfrm": "xfrm", "vrf": "vrf", "nexthop": "nexthop",
	"nh": "nexthop", "stats": "stats", "token": "token", "tcp_metrics": "tcp_metrics",
	"tcpmetrics": "tcp_metrics", "mptcp": "mptcp", "sr": "sr", "ioam": "ioam",
	"netns": "netns", "monitor": "monitor", "mo": "monitor", "mon": "monitor",
}

// ipReadCommands are the show-style commands ip accepts for any object.
var ipReadCommands = map[string]bool{"": true, "show": true, "sh": true, "sho": true, "list": true,
	"lst": true, "ls": true, "l": true, "get": true, "help": true}

// checkIP: "ip [options] OBJECT [show|list|get ...]" reads; add, del, set,
// flush and the rest write; "ip netns exec NS CMD" runs CMD.
func checkIP(c *classifier, k *call) {
	args := k.args
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if !a.static {
			c.unknown("ip", "dynamic argument")
			return
		}
		if !strings.HasPrefix(a.s, "-") {
			break
		}
		switch strings.TrimLeft(a.s, "-") {
		case "b", "batch", "rc", "rcvbuf":
			c.unknown("ip "+a.s, "option not known to be read-only")
			return
		case "n", "netns", "f", "family", "l", "loops":
			i++
		}
	}
	if i >= len(args) {
		c.readOnly(k)
		return
	}
	obj, ok := ipObjects[args[i].s]
	if !ok {
		c.unknown("ip "+args[i].s, "object not known")
		return
	}
	cmd := ""
	if i+1 < len(args) {
		if !args[i+1].static {
			c.unknown("ip "+obj, "dynamic command")
			return
		}
		cmd = args[i+1].s
	}
	switch {
	case obj == "monitor":
		c.unbounded(k.ctx, BoundUnboundedStream, "")
		c.read("ip monitor", "read-only")
	case obj == "netns" && cmd == "exec":
		if i+3 >= len(args) {
			c.unknown("ip netns exec", "no command")
			return
		}
		c.runInner(k, args[i+3:], k.ctx)
	case obj == "netns" && matchOneOf(cmd, "identify", "pids", "list-id"):
		c.read("ip netns "+cmd, "read-only")
	case ipReadCommands[cmd] || cmd == "s" && (obj == "address" || obj == "route" || obj == "neigh"):
		c.read("ip "+obj, "read-only")
	case cmd == "dev" || cmd == "to" || cmd == "table" || cmd == "scope" || cmd == "vrf" || isAddressLike(cmd):
		// "ip route table main", "ip addr dev eth0": a selector without a
		// command is a show.
		if obj == "route" || obj == "address" || obj == "neigh" || obj == "link" || obj == "rule" {
			c.read("ip "+obj, "read-only")
			return
		}
		c.unknown("ip "+obj+" "+cmd, "command not known to be read-only")
	default:
		risk := RiskMedium
		if matchOneOf(cmd, "flush", "del", "delete", "set") {
			risk = RiskHigh
		}
		c.writer("ip "+obj+" "+cmd, risk, "known writer")
	}
}

// isAddressLike reports an IP address or prefix, which ip treats as a
// selector for show.
func isAddressLike(s string) bool {
	return s != "" && (s[0] >= '0' && s[0] <= '9' || strings.Contains(s, ":")) && strings.Trim(s, "0123456789abcdefABCDEF.:/") == ""
}

// checkIptables: listing (-L, -S, with -n -v -x --line-numbers -t -w) and
// checking a rule (-C) read; every other command changes rules.
func checkIptables(c *classifier, k *call) {
	listing := false
	for i := 0; i < len(k.args); i++ {
		a := k.args[i]
		if !a.static {
			c.unknown(k.name, "dynamic argument")
			return
		}
		s := a.s
		switch {
		case s == "-t" || s == "--table" || s == "-w" || s == "--wait" || s == "-W" || s == "--wait-interval":
			if i+1 < len(k.args) && k.args[i+1].static && !strings.HasPrefix(k.args[i+1].s, "-") && (s == "-t" || s == "--table" || isNumber(k.args[i+1].s)) {
				i++
			}
		case matchOneOf(s, "--list", "--list-rules", "--numeric", "--verbose", "--exact", "--line-numbers"):
			listing = listing || s == "--list" || s == "--list-rules"
		case strings.HasPrefix(s, "--"):
			c.writer(k.name+" "+s, iptablesRisk(s), "changes firewall rules")
			return
		case strings.HasPrefix(s, "-") && len(s) > 1:
			for _, ch := range s[1:] {
				switch ch {
				case 'L', 'S':
					listing = true
				case 'n', 'v', 'x', 't', 'w':
				default:
					c.writer(k.name+" "+s, iptablesRisk(s), "changes firewall rules")
					return
				}
			}
		default:
			// A chain name after -L or -S.
			if !listing {
				c.unknown(k.name+" "+s, "argument not known")
				return
			}
		}
	}
	if !listing {
		c.unknown(k.name, "no listing command")
		return
	}
	c.read(k.name+" -L", "lists rules")
}

func iptablesRisk(s string) Risk {
	if strings.ContainsAny(strings.TrimLeft(s, "-"), "FXP") || s == "--flush" || s == "--delete-chain" || s == "--policy" {
		return RiskHigh
	}
	return RiskMedium
}

// checkIptablesSave: prints rules, unless -f writes them to a file.
func checkIptablesSave(c *classifier, k *call) {
	for _, a := range k.args {
		if !a.static || a.s == "-f" || strings.HasPrefix(a.s, "--file") {
			c.writer(k.name+" -f", RiskLow, "writes a file")
			return
		}
	}
	c.readOnly(k)
}

// checkNft: "nft list ..." and "nft describe" read; -f files, -i and every
// other command change the ruleset.
func checkNft(c *classifier, k *call) {
	for i := 0; i < len(k.args); i++ {
		a := k.args[i]
		if !a.static {
			c.unknown("nft", "dynamic argument")
			return
		}
		s := a.s
		if strings.HasPrefix(s, "-") {
			switch s {
			case "-a", "--handle", "-n", "--numeric", "-N", "-s", "--stateless", "-j", "--json",
				"-t", "--terse", "-y", "--numeric-priority", "-p", "--numeric-protocol", "-T", "--numeric-time",
				"-c", "--check", "-e", "--echo", "-S", "--service":
				continue
			}
			c.writer("nft "+s, RiskHigh, "changes the ruleset")
			return
		}
		switch s {
		case "list", "describe":
			c.read("nft "+s, "read-only")
			return
		case "monitor":
			c.unbounded(k.ctx, BoundUnboundedStream, "")
			c.read("nft monitor", "read-only")
			return
		}
		risk := RiskMedium
		if matchOneOf(s, "flush", "delete", "destroy") {
			risk = RiskHigh
		}
		c.writer("nft "+s, risk, "changes the ruleset")
		return
	}
	c.unknown("nft", "interactive or no command")
}

// checkUfw: status, show, app list/info and version read.
func checkUfw(c *classifier, k *call) {
	for i, a := range k.args {
		if !a.static {
			c.unknown("ufw", "dynamic argument")
			return
		}
		if strings.HasPrefix(a.s, "-") {
			continue
		}
		switch a.s {
		case "status", "show", "version", "help":
			c.read("ufw "+a.s, "read-only")
			return
		case "app":
			if i+1 < len(k.args) && k.args[i+1].static && (k.args[i+1].s == "list" || k.args[i+1].s == "info") {
				c.read("ufw app", "read-only")
				return
			}
		}
		risk := RiskMedium
		if matchOneOf(a.s, "disable", "reset", "deny", "reject", "delete") {
			risk = RiskHigh
		}
		c.writer("ufw "+a.s, risk, "changes firewall rules")
		return
	}
	c.unknown("ufw", "no command")
}

// checkFirewallCmd: --state, --list-*, --get-*, --query-* and --info-* read.
func checkFirewallCmd(c *classifier, k *call) {
	for _, a := range k.args {
		if !a.static {
			c.unknown("firewall-cmd", "dynamic argument")
			return
		}
		name := strings.SplitN(a.s, "=", 2)[0]
		switch {
		case !strings.HasPrefix(name, "--"):
		case matchOneOf(name, "--state", "--version", "--help", "--permanent", "--zone", "--quiet"),
			strings.HasPrefix(name, "--list-"), strings.HasPrefix(name, "--get-"),
			strings.HasPrefix(name, "--query-"), strings.HasPrefix(name, "--info-"):
		default:
			c.writer("firewall-cmd "+name, RiskHigh, "changes firewall rules")
			return
		}
	}
	c.readOnly(k)
}

// checkListVerb returns a checker for tools whose first operand or option
// is an action: the listed ones read.
func checkListVerb(reads ...string) checkFunc {
	return func(c *classifier, k *call) {
		if len(k.args) == 0 {
			c.unknown(k.name, "no command")
			return
		}
		a := k.args[0]
		if a.static && matchOneOf(a.s, reads...) {
			c.read(k.name+" "+a.s, "read-only")
			return
		}
		if !a.static {
			c.unknown(k.name, "dynamic argument")
			return
		}
		c.writer(k.name+" "+a.s, RiskMedium, "known writer")
	}
}

// checkShowVerb returns a checker for "tool [options] OBJECT show ...".
func checkShowVerb(reads ...string) checkFunc {
	return func(c *classifier, k *call) {
		operands := 0
		for _, a := range k.args {
			if !a.static {
				c.unknown(k.name, "dynamic argument")
				return
			}
			if strings.HasPrefix(a.s, "-") {
				continue
			}
			operands++
			if operands == 2 {
				if matchOneOf(a.s, reads...) {
					c.read(k.name+" "+a.s, "read-only")
					return
				}
				c.writer(k.name+" "+a.s, RiskMedium, "known writer")
				return
			}
		}
		if operands == 1 {
			c.readOnly(k) // "tc qdisc" alone shows
			return
		}
		c.unknown(k.name, "no command")
	}
}

// checkConntrack: -L, -G, -S, -C list; -E streams events; -D, -F, -U, -I
// change the table.
func checkConntrack(c *classifier, k *call) {
	for _, a := range k.args {
		if !a.static {
			c.unknown("conntrack", "dynamic argument")
			return
		}
		switch a.s {
		case "-L", "--dump", "-G", "--get", "-S", "--stats", "-C", "--count":
			c.read("conntrack "+a.s, "read-only")
			return
		case "-E", "--event":
			c.unbounded(k.ctx, BoundUnboundedStream, "")
			c.read("conntrack -E", "read-only")
			return
		case "-D", "--delete", "-F", "--flush", "-U", "--update", "-I", "--create":
			c.writer("conntrack "+a.s, RiskHigh, "changes connection tracking")
			return
		}
	}
	c.unknown("conntrack", "no command")
}

// checkRoute: "route -n" lists; add and del change routes.
func checkRoute(c *classifier, k *call) {
	for _, a := range k.args {
		if !a.static {
			c.unknown("route", "dynamic argument")
			return
		}
		if !strings.HasPrefix(a.s, "-") {
			c.writer("route "+a.s, RiskHigh, "changes routes")
			return
		}
	}
	c.readOnly(k)
}

// checkArp: -a/-n list; -s and -d change the table.
func checkArp(c *classifier, k *call) {
	for _, a := range k.args {
		if !a.static {
			c.unknown("arp", "dynamic argument")
			return
		}
		if strings.HasPrefix(a.s, "-") && !strings.HasPrefix(a.s, "--") && strings.ContainsAny(a.s, "sdf") ||
			matchOneOf(a.s, "--set", "--delete", "--file") {
			c.writer("arp "+a.s, RiskMedium, "changes the ARP table")
			return
		}
	}
	c.readOnly(k)
}

// checkIfconfig: no arguments, -a, -s or one interface name show; anything
// more configures the interface.
func checkIfconfig(c *classifier, k *call) {
	operands := 0
	for _, a := range k.args {
		if !a.static {
			c.unknown("ifconfig", "dynamic argument")
			return
		}
		if matchOneOf(a.s, "-a", "-s", "-v", "--all", "--short", "--verbose") {
			continue
		}
		operands++
	}
	if operands > 1 {
		c.writer("ifconfig", RiskHigh, "configures an interface")
		return
	}
	c.readOnly(k)
}

// checkEthtool: showing options read; the setting ones (-s, -K, -G, -A,
// -C, -L, -E, -p blink, -r, -f, -W, -P? no) write.
func checkEthtool(c *classifier, k *call) {
	for _, a := range k.args {
		if !a.static {
			c.unknown("ethtool", "dynamic argument")
			return
		}
		s := a.s
		if !strings.HasPrefix(s, "-") {
			continue
		}
		switch s {
		case "-i", "--driver", "-S", "--statistics", "-k", "--show-features", "--show-offload",
			"-g", "--show-ring", "-a", "--show-pause", "-c", "--show-coalesce", "-l", "--show-channels",
			"-P", "--show-permaddr", "-T", "--show-time-stamping", "-m", "--dump-module-eeprom",
			"--module-info", "-d", "--register-dump", "-e", "--eeprom-dump", "--show-eee",
			"--show-fec", "--show-priv-flags", "-n", "--show-nfc", "-x", "--show-rxfh-indir",
			"--show-rxfh", "-u", "--show-ntuple", "--json", "-I", "--include-statistics", "-h", "--help",
			"--version", "--show-tunnels", "--show-mm", "--show-pse", "--show-plca":
			continue
		}
		c.writer("ethtool "+s, RiskHigh, "changes interface settings")
		return
	}
	c.readOnly(k)
}

// checkNmcli: status, show and list style commands read.
func checkNmcli(c *classifier, k *call) {
	var ops []string
	for _, a := range k.args {
		if !a.static {
			c.unknown("nmcli", "dynamic argument")
			return
		}
		if strings.HasPrefix(a.s, "-") {
			continue
		}
		ops = append(ops, a.s)
	}
	if len(ops) == 0 {
		c.readOnly(k)
		return
	}
	obj := ops[0]
	cmd := ""
	if len(ops) > 1 {
		cmd = ops[1]
	}
	switch {
	case matchOneOf(obj, "g", "general") && (cmd == "" || matchOneOf(cmd, "status", "permissions", "logging") && len(ops) <= 2):
	case matchOneOf(obj, "c", "con", "connection", "d", "dev", "device", "r", "radio", "n", "networking") &&
		(cmd == "" || matchOneOf(cmd, "show", "s", "status", "list", "ls", "connectivity", "lldp", "wifi") && (cmd != "wifi" || len(ops) <= 3 && (len(ops) < 3 || ops[2] == "list"))):
	case obj == "monitor" || obj == "m":
		c.unbounded(k.ctx, BoundUnboundedStream, "")
	default:
		c.writer("nmcli "+strings.Join(ops[:min(2, len(ops))], " "), RiskHigh, "changes network configuration")
		return
	}
	c.readOnly(k)
}

var pingSpec = optSpec{shortArg: "ciIlmMpQsStTwWF", longArg: []string{"count", "interval", "interface", "deadline", "timeout"}}

// checkPing: ping only ends with a count (-c) or a deadline (-w).
func checkPing(c *classifier, k *call) {
	bounded, hostAt := false, -1
	s := scanOpts(&pingSpec, k.args)
	for t, more := s.next(); more; t, more = s.next() {
		switch {
		case t.kind == tokShort && (t.name == "c" || t.name == "w") || t.kind == tokLong && (t.name == "count" || t.name == "deadline"):
			bounded = true
		case t.kind == tokOperand && hostAt < 0:
			hostAt = t.i
		}
	}
	if !bounded {
		c.unbounded(k.ctx, BoundUnboundedStream, c.rebuild(k, edit{insertAfter: -1, insert: "-c 4"}))
	}
	c.readOnly(k)
}

// checkMtr: mtr only ends in report, JSON, XML, CSV or wide-report mode.
func checkMtr(c *classifier, k *call) {
	for _, a := range k.args {
		if a.static && (matchOneOf(a.s, "-r", "--report", "-w", "--report-wide", "-j", "--json", "-x", "--xml", "-C", "--csv") ||
			len(a.s) > 2 && a.s[0] == '-' && a.s[1] != '-' && strings.ContainsAny(a.s, "rwjxC") && !strings.ContainsAny(a.s[:2], "acfimsBGIPQTYZ")) {
			c.readOnly(k)
			return
		}
	}
	c.unbounded(k.ctx, BoundUnboundedStream, c.rebuild(k, edit{insertAfter: -1, insert: "--report"}))
	c.readOnly(k)
}

var tcpdumpSpec = optSpec{shortArg: "cCEFGiMmrsTwWyzZBjQV", longArg: []string{"interface", "count", "time-stamp-type", "snapshot-length", "buffer-size", "direction", "relinquish-privileges", "time-stamp-precision"}}

// checkTcpdump: -w writes a capture and -z runs a program; without -c (or
// -r reading a capture file) it never ends.
func checkTcpdump(c *classifier, k *call) {
	bounded := false
	s := scanOpts(&tcpdumpSpec, k.args)
	for t, more := s.next(); more; t, more = s.next() {
		switch {
		case t.kind == tokDynamic:
			c.unknown("tcpdump", "dynamic argument")
			return
		case t.kind == tokShort && (t.name == "w" || t.name == "z" || t.name == "G" || t.name == "C" || t.name == "W"):
			c.writer("tcpdump -"+t.name, RiskLow, "writes capture files or runs a program")
			return
		case t.kind == tokShort && (t.name == "c" || t.name == "r" || t.name == "V") || t.kind == tokLong && t.name == "count":
			bounded = true
		}
	}
	if !bounded {
		c.unbounded(k.ctx, BoundUnboundedStream, c.rebuild(k, edit{insertAfter: -1, insert: "-c 100"}))
	}
	c.readOnly(k)
}

// checkNetstat: -c repeats forever.
func checkNetstat(c *classifier, k *call) {
	for _, a := range k.args {
		if a.static && (a.s == "--continuous" || len(a.s) > 1 && a.s[0] == '-' && a.s[1] != '-' && strings.ContainsRune(a.s, 'c')) {
			c.unbounded(k.ctx, BoundUnboundedStream, "")
		}
	}
	c.readOnly(k)
}

var ssSpec = optSpec{shortArg: "fAFDN", longArg: []string{"family", "query", "socket", "filter", "diag", "net"}}

// checkSs: -K kills sockets and -D dumps to a file; -E streams events.
func checkSs(c *classifier, k *call) {
	s := scanOpts(&ssSpec, k.args)
	for t, more := s.next(); more; t, more = s.next() {
		switch {
		case t.kind == tokDynamic:
			c.unknown("ss", "dynamic argument")
			return
		case t.kind == tokShort && (t.name == "K" || t.name == "D"),
			t.kind == tokLong && (isPrefixOf(t.name, "kill") || len(t.name) >= 2 && isPrefixOf(t.name, "diag")):
			c.writer("ss "+optText(t), RiskHigh, "kills sockets or writes a file")
			return
		case t.kind == tokShort && t.name == "E", t.kind == tokLong && t.name == "events":
			c.unbounded(k.ctx, BoundUnboundedStream, "")
		}
	}
	c.readOnly(k)
}

// checkNslookup: without a name to look up, nslookup is interactive.
func checkNslookup(c *classifier, k *call) {
	for _, a := range k.args {
		if !a.static || !strings.HasPrefix(a.s, "-") {
			c.readOnly(k)
			return
		}
	}
	if !k.ctx.fed {
		c.unbounded(k.ctx, BoundInteractiveREPL, "")
	}
	c.readOnly(k)
}

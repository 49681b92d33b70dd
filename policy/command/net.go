package command

import (
	"strconv"
	"strings"
)

// Network configuration and diagnostic tools. A read-only verdict for a
// tool that talks over the network requires that it sends nothing local
// beyond the request the command spells out, and only to a port that
// speaks the tool's protocol: whois, DNS and netcat pointed at an
// arbitrary port can smuggle commands into another protocol (Redis,
// memcached, SMTP read lines of text).

var netTools = map[string]*tool{
	"iptables-save":  iptablesSaveTool("iptables-save"),
	"ip6tables-save": iptablesSaveTool("ip6tables-save"),
	"ipvsadm":        ipvsadmTool,
	"ss":             ssTool,
	"tcpdump":        tcpdumpTool,
	"ping":           pingTool("ping"),
	"ping6":          pingTool("ping6"),
	"arping":         arpingTool,
	"mtr":            mtrTool,
	"whois":          whoisTool,
	"host":           hostTool,
	"nft":            nftTool,
	"ipset":          ipsetTool,
	"netstat":        netstatTool,
	"arp":            arpTool,
	"route":          routeTool,
	"conntrack":      conntrackTool,
	"traceroute":     tracerouteTool("traceroute"),
	"traceroute6":    tracerouteTool("traceroute6"),
	"tracepath":      tracepathTool("tracepath"),
	"tracepath6":     tracepathTool("tracepath6"),
	"getent":         getentTool,
}

// netCheckers are network tools with syntaxes of their own.
var netCheckers = map[string]checkFunc{
	"ip":               checkIP,
	"iptables":         checkIptables,
	"ip6tables":        checkIptables,
	"iptables-legacy":  checkIptables,
	"ip6tables-legacy": checkIptables,
	"iptables-nft":     checkIptables,
	"ip6tables-nft":    checkIptables,
	"ebtables":         checkEbtables,
	"arptables":        checkEbtables,
	"ufw":              checkUfw,
	"firewall-cmd":     checkFirewallCmd,
	"tc":               checkShowVerb(tcGlobals, tcObjects, "show", "sho", "sh", "list", "lst"),
	"bridge":           checkShowVerb(bridgeGlobals, bridgeObjects, "show", "sho", "sh", "list", "lst"),
	"ifconfig":         checkIfconfig,
	"ethtool":          checkEthtool,
	"nmcli":            checkNmcli,
	"nslookup":         checkNslookup,
	"dig":              checkDig,
	"nc":               checkNetcat,
	"ncat":             checkNetcat,
	"netcat":           checkNetcat,
	"openssl":          checkOpenssl,
	"ssh":              checkSSH,
	"curl":             checkCurl,
	"wget":             checkWget,
	"http":             checkHTTPie,
	"https":            checkHTTPie,
	"pg_isready":       checkPgIsReady,
}

// noControl refuses a word with control characters: a line break in a
// header, a query or a host name can end one request and start another.
func (c *classifier) noControl(k *call, a arg) bool {
	for i := 0; i < len(a.s); i++ {
		if ch := a.s[i]; ch < 0x20 || ch == 0x7f {
			c.writer(k.name, RiskMedium, "control character in a network request (request smuggling)")
			return false
		}
	}
	return true
}

// ipObjects maps the object words ip accepts (with iproute2's
// abbreviations, in its own order) to the object.
var ipObjects = map[string]string{
	"a": "address", "ad": "address", "add": "address", "addr": "address", "addre": "address",
	"addres": "address", "address": "address", "l": "link", "li": "link", "lin": "link",
	"link": "link", "r": "route", "ro": "route", "rou": "route", "rout": "route", "route": "route",
	"ru": "rule", "rul": "rule", "rule": "rule", "n": "neigh", "ne": "neigh", "nei": "neigh",
	"neigh": "neigh", "neighbor": "neigh", "neighbour": "neigh", "netconf": "netconf",
	"ntable": "ntable", "m": "maddress", "ma": "maddress", "maddr": "maddress",
	"maddress": "maddress", "mr": "mroute", "mroute": "mroute", "t": "tunnel", "tu": "tunnel",
	"tunnel": "tunnel", "tuntap": "tuntap", "x": "xfrm", "xf": "xfrm", "xfrm": "xfrm", "vrf": "vrf",
	"nexthop": "nexthop", "nh": "nexthop", "stats": "stats", "token": "token", "tcp_metrics": "tcp_metrics",
	"tcpmetrics": "tcp_metrics", "mptcp": "mptcp", "sr": "sr", "ioam": "ioam",
	"netns": "netns", "monitor": "monitor", "mo": "monitor", "mon": "monitor",
}

// ipReadCommands are the show-style commands ip accepts for any object.
var ipReadCommands = map[string]bool{"": true, "show": true, "sh": true, "sho": true, "list": true,
	"lst": true, "ls": true, "l": true, "get": true, "help": true}

// iprouteOpt is one global option of an iproute2 tool. The tools match
// a word against their options in a fixed order, each word standing for
// the first option it is a prefix of ("-b" is -batch in ip, "-br"
// -brief), or only exactly (exact).
type iprouteOpt struct {
	name  string
	exact bool
	value bool // takes the next word
	batch bool // reads commands from a file
}

// ipGlobals, tcGlobals and bridgeGlobals are the global options of ip,
// tc and bridge in the order their main() tries them (iproute2 6.x
// ip.c, tc.c, bridge.c). -color takes an optional attached =WHEN.
var (
	ipGlobals = []iprouteOpt{{name: "-loops", value: true}, {name: "-family", value: true},
		{name: "-4", exact: true}, {name: "-6", exact: true}, {name: "-0", exact: true},
		{name: "-M", exact: true}, {name: "-B", exact: true}, {name: "-human"},
		{name: "-human-readable"}, {name: "-iec"}, {name: "-stats"}, {name: "-statistics"},
		{name: "-details"}, {name: "-resolve"}, {name: "-oneline"}, {name: "-timestamp"},
		{name: "-tshort"}, {name: "-Version"}, {name: "-force"}, {name: "-batch", value: true, batch: true},
		{name: "-brief"}, {name: "-json"}, {name: "-pretty"}, {name: "-rcvbuf", value: true},
		{name: "-color"}, {name: "-help"}, {name: "-netns", value: true}, {name: "-Numeric"},
		{name: "-all"}, {name: "-echo", exact: true}}
	tcGlobals = []iprouteOpt{{name: "-stats"}, {name: "-statistics"}, {name: "-details"},
		{name: "-raw"}, {name: "-pretty"}, {name: "-graph"}, {name: "-Version"}, {name: "-iec"},
		{name: "-help"}, {name: "-force"}, {name: "-batch", value: true, batch: true},
		{name: "-netns", value: true}, {name: "-names"}, {name: "-nm"}, {name: "-cf", value: true},
		{name: "-conf", value: true}, {name: "-color"}, {name: "-timestamp"}, {name: "-tshort"},
		{name: "-json"}, {name: "-oneline"}, {name: "-echo"}}
	bridgeGlobals = []iprouteOpt{{name: "-help"}, {name: "-Version"}, {name: "-stats"},
		{name: "-statistics"}, {name: "-details"}, {name: "-oneline"}, {name: "-timestamp"},
		{name: "-family", value: true}, {name: "-4", exact: true}, {name: "-6", exact: true},
		{name: "-color"}, {name: "-compressvlans"}, {name: "-force"}, {name: "-json"},
		{name: "-pretty"}, {name: "-batch", value: true, batch: true}, {name: "-netns", value: true},
		{name: "-Numeric"}}
)

// iprouteGlobals scans the global options of an iproute2 tool and
// returns the index of the first operand; ok is false when an option is
// unknown or reads commands from a file (every prefix of -batch is
// refused, whatever the order says).
func (c *classifier) iprouteGlobals(k *call, table []iprouteOpt) (int, bool) {
	args := k.args
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if !a.static {
			if a.split || !a.noDash {
				c.unknown(k.name, "dynamic argument")
				return i, false
			}
			break
		}
		w := a.s
		if !strings.HasPrefix(w, "-") || w == "-" {
			break
		}
		if strings.HasPrefix(w, "--") {
			w = w[1:]
		}
		name := w
		if strings.HasPrefix(w, "-c") {
			name, _, _ = strings.Cut(w, "=") // -color=WHEN
		}
		if len(name) > 1 && strings.HasPrefix("-batch", name) {
			c.unknown(k.name+" "+a.s, "reads commands from a file")
			return i, false
		}
		var found *iprouteOpt
		for j := range table {
			o := &table[j]
			if o.exact && name == o.name || !o.exact && strings.HasPrefix(o.name, name) {
				found = o
				break
			}
		}
		if found == nil || name != w && found.name != "-color" {
			c.unknown(k.name, "unknown option "+a.s)
			return i, false
		}
		if found.value {
			i++
			if i >= len(args) {
				c.unknown(k.name+" "+a.s, "missing value")
				return i, false
			}
		}
	}
	return i, true
}

// checkIP: "ip [options] OBJECT [show|list|get ...]" reads; add, del, set,
// flush and the rest write; "ip netns exec NS CMD" runs CMD.
func checkIP(c *classifier, k *call) {
	args := k.args
	i, ok := c.iprouteGlobals(k, ipGlobals)
	if !ok {
		return
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
	case obj == "xfrm":
		c.ipXfrm(k, args[i+1:])
	case obj == "netns" && cmd == "exec":
		// "ip netns exec NS CMD", or with -all "ip -all netns exec CMD"
		// in every namespace: the command runs in another network
		// namespace, whose loopback is not this host's.
		at := i + 3
		for _, g := range args[:i] {
			w := g.s
			if strings.HasPrefix(w, "--") {
				w = w[1:]
			}
			if len(w) > 1 && strings.HasPrefix("-all", w) {
				at = i + 2
			}
		}
		if at >= len(args) {
			c.unknown("ip netns exec", "no command")
			return
		}
		c.strict++
		c.runInner(k, args[at:], k.ctx)
		c.strict--
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

// ipXfrm: "ip xfrm state|policy [list|show|get|count]" reads, the IPsec
// monitor streams, every other command changes the IPsec tables.
func (c *classifier) ipXfrm(k *call, args []arg) {
	if len(args) == 0 {
		c.unknown("ip xfrm", "no object")
		return
	}
	obj := args[0].s
	cmd := ""
	if len(args) > 1 {
		if !args[1].static {
			c.unknown("ip xfrm "+obj, "dynamic command")
			return
		}
		cmd = args[1].s
	}
	switch {
	case !args[0].static:
		c.unknown("ip xfrm", "dynamic object")
	case matchOneOf(obj, "monitor", "mon", "m") || obj == "mo":
		c.unbounded(k.ctx, BoundUnboundedStream, "")
		c.read("ip xfrm monitor", "read-only")
	case matchOneOf(obj, "state", "policy", "s", "st", "sta", "stat", "p", "po", "pol", "poli", "polic") &&
		matchOneOf(cmd, "", "list", "show", "get", "count", "ls", "lst"):
		c.read("ip xfrm "+obj, "read-only")
	default:
		c.writer("ip xfrm "+obj+" "+cmd, RiskHigh, "changes the IPsec tables")
	}
}

// isAddressLike reports an IP address or prefix, which ip treats as a
// selector for show.
func isAddressLike(s string) bool {
	return s != "" && (s[0] >= '0' && s[0] <= '9' || strings.Contains(s, ":")) && strings.Trim(s, "0123456789abcdefABCDEF.:/") == ""
}

// iptablesOpts are the options of iptables itself (extensions loaded with
// -m and -p add long options of their own, for rule specifications).
var iptablesOpts = opts(
	reads(`-L|--list[=] -S|--list-rules[=] -C|--check= -p|--protocol= -s|--source|--src=
		-d|--destination|--dst= -m|--match= -j|--jump= -g|--goto= -i|--in-interface=
		-o|--out-interface= -f|--fragment -c|--set-counters== -v|--verbose -w|--wait[=]
		-W|--wait-interval[=] -n|--numeric -x|--exact --line-numbers -t|--table= -h|--help
		-V|--version -4|--ipv4 -6|--ipv6`),
	states(RiskMedium, "changes firewall rules", `-A|--append= -D|--delete= -I|--insert= -R|--replace=
		-N|--new-chain= -E|--rename-chain== -Z|--zero[=]`),
	states(RiskHigh, "changes firewall rules", `-F|--flush[=] -X|--delete-chain[=] -P|--policy==`),
	execs("runs a program to load kernel modules", `--modprobe=`),
)

var iptablesTool = &tool{name: "iptables", style: styleGNU, opts: iptablesOpts, check: checkIptablesList}

// checkIptables: listing (-L, -S) reads, and so does -C, which only
// checks whether a rule exists: its rule specification may use any
// extension's options, which are compared, not applied. Every other
// command changes the rules.
func checkIptables(c *classifier, k *call) {
	check := false
	for _, a := range k.args {
		if !a.static {
			c.unknown(k.name, "dynamic argument")
			return
		}
		if a.s == "-C" || a.s == "--check" || strings.HasPrefix(a.s, "--check=") {
			check = true
		}
	}
	if !check {
		c.runTool(k, iptablesTool)
		return
	}
	// A rule specification: iptables's own options keep their meaning
	// (including abbreviations, which getopt_long accepts); long options
	// of extensions and their values pass.
	for i := 0; i < len(k.args); i++ {
		s := k.args[i].s
		switch {
		case strings.HasPrefix(s, "--") && len(s) > 2:
			name, _, hasEq := strings.Cut(s[2:], "=")
			o, n, full := lookupLong([]*optTable{iptablesOpts}, name, true)
			switch {
			case n > 1:
				c.unknown(k.name+" "+s, "ambiguous abbreviation (--"+full+")")
				return
			case !o.found():
				continue // an extension's option
			case o.info().eff != effRead:
				u := useOf(o, i, "--"+name)
				if full != name {
					u.full = full
				}
				c.applyOpt(k, &u)
				return
			case (o.opt().arg == argReq || o.opt().arg == argTwo) && !hasEq:
				i++
			}
		case len(s) > 1 && s[0] == '-' && s != "-":
			for j := 1; j < len(s); j++ {
				o := iptablesOpts.shortOpt(s[j])
				if !o.found() {
					c.unknown(k.name, "unknown option -"+s[j:j+1])
					return
				}
				if o.info().eff != effRead {
					u := useOf(o, i, "-"+s[j:j+1])
					c.applyOpt(k, &u)
					return
				}
				if a := o.opt().arg; a == argReq || a == argTwo {
					if j+1 == len(s) {
						i++
					}
					break
				}
			}
		}
	}
	c.read(k.name+" -C", "checks whether a rule exists")
}

// checkIptablesList: without -C only listings read; their operands are a
// chain name and the -w wait time.
func checkIptablesList(c *classifier, k *call) {
	if !k.p.hasAny("list", "list-rules", "help", "version") {
		c.unknown(k.name, "no listing command")
		return
	}
	chains := 0
	for _, i := range k.p.ops {
		// A chain name, and -w's wait time, which iptables takes from the
		// next word when it is a number.
		if !isNumber(k.args[i].s) {
			if chains++; chains > 1 {
				c.unknown(k.name+" "+k.args[i].s, "extra argument")
				return
			}
		}
	}
	c.read(k.name+" -L", "lists rules")
}

// checkEbtables: ebtables and arptables list with -L (and ebtables's
// --Ln, --Lc, --Lx, --Lmac2 list modifiers) in a table given by -t.
func checkEbtables(c *classifier, k *call) {
	list := false
	for i := 0; i < len(k.args); i++ {
		a := k.args[i]
		switch {
		case !a.static:
			c.unknown(k.name, "dynamic argument")
			return
		case a.s == "-t" || a.s == "--table":
			i++
		case a.s == "-L" || a.s == "--list":
			list = true
		case matchOneOf(a.s, "--Ln", "--Lc", "--Lx", "--Lmac2", "-n", "-v", "--numeric", "--verbose", "--line-numbers"):
		case strings.HasPrefix(a.s, "-"):
			c.writer(k.name+" "+a.s, RiskMedium, "changes firewall rules")
			return
		}
	}
	if !list {
		c.unknown(k.name, "no listing command")
		return
	}
	c.read(k.name+" -L", "lists rules")
}

func iptablesSaveTool(name string) *tool {
	return &tool{
		name: name, style: styleGNU,
		opts: opts(
			reads(`-c|--counters -t|--table= -h|--help -V|--version`),
			writes(RiskLow, "writes the rules to a file", `-f|--file=`),
			execs("runs a program to load kernel modules", `-M|--modprobe=`),
		),
	}
}

// ipvsadm lists (-L, -l, --list) and saves to stdout (-S); every other
// command changes the virtual server table.
var ipvsadmTool = &tool{
	name: "ipvsadm", style: styleExact,
	opts: opts(
		reads(`-L|-l|--list -S|--save -n|--numeric -c|--connection --exact --stats --rate
			--thresholds --persistent-conn --nosort --sort -t|--tcp-service= -u|--udp-service=
			--sctp-service= -f|--fwmark-service= -h|--help -o|--ops`),
		states(RiskMedium, "changes the virtual server table", `-A|--add-service -E|--edit-service
			-D|--delete-service -C|--clear -R|--restore -a|--add-server -e|--edit-server
			-d|--delete-server -Z|--zero --set== --start-daemon= --stop-daemon= -s|--scheduler=
			-p|--persistent[=] -M|--netmask= -r|--real-server= -g|--gatewaying -i|--ipip
			-m|--masquerading -w|--weight= -x|--u-threshold= -y|--l-threshold= --mcast-interface=
			--syncid= --pe= -b|--sched-flags= --tun-type= --tun-port= --tun-nocsum --tun-csum
			--tun-remcsum`),
	),
	check: func(c *classifier, k *call) {
		if len(k.p.ops) > 0 || !k.p.hasAny("list", "save", "help") {
			c.unknown("ipvsadm", "no listing command")
			return
		}
		c.read("ipvsadm -L", "lists the virtual server table")
	},
}

// checkUfw: status, show, app list/info and version read.
func checkUfw(c *classifier, k *call) {
	for i, a := range k.args {
		if !a.static {
			c.unknown("ufw", "dynamic argument")
			return
		}
		if strings.HasPrefix(a.s, "-") {
			if a.s != "--dry-run" && a.s != "--force" {
				c.unknown("ufw "+a.s, "option not known")
				return
			}
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

// checkFirewallCmd: --state, --list-*, --get-*, --query-* and --info-*
// read. firewall-cmd parses with argparse, which accepts unambiguous
// abbreviations: a prefix of a listed reading option still reads, any
// other word is refused.
func checkFirewallCmd(c *classifier, k *call) {
	for _, a := range k.args {
		if !a.static {
			c.unknown("firewall-cmd", "dynamic argument")
			return
		}
		name := strings.SplitN(a.s, "=", 2)[0]
		switch {
		case !strings.HasPrefix(name, "--"):
		case matchOneOf(name, "--state", "--version", "--help", "--permanent", "--zone", "--quiet", "--policy", "--ipset", "--service", "--helper", "--icmptype", "--direct"),
			strings.HasPrefix(name, "--list-"), strings.HasPrefix(name, "--get-"),
			strings.HasPrefix(name, "--query-"), strings.HasPrefix(name, "--info-"):
		default:
			c.writer("firewall-cmd "+name, RiskHigh, "changes firewall rules")
			return
		}
	}
	c.readOnly(k)
}

// ipset lists and saves sets; -f/-file sends that output to a file.
var ipsetTool = &tool{
	name: "ipset", style: styleDashLong,
	opts: opts(
		reads(`-o|-output= -q|-quiet -r|-resolve -s|-sorted -n|-name -t|-terse -h|-help -v|-version`),
		writes(RiskLow, "writes a file", `-f|-file=`),
	),
	verbs: verbTable(
		vreads("list save test version help"),
		vwrites(RiskMedium, "create add del destroy flush rename swap restore"),
	),
	globalsAfterVerb: true,
}

// tcObjects and bridgeObjects are the objects of tc and bridge in the
// order their do_cmd() matches a prefix against them.
var (
	tcObjects     = []string{"qdisc", "class", "filter", "chain", "actions", "action", "monitor", "exec", "help"}
	bridgeObjects = []string{"link", "fdb", "mdb", "vlan", "vni", "monitor", "help"}
)

// checkShowVerb returns a checker for "tool [options] OBJECT show ...":
// the object alone, or with one of the listing commands, reads; monitor
// streams; any other command changes the configuration.
func checkShowVerb(globals []iprouteOpt, objects []string, reads ...string) checkFunc {
	return func(c *classifier, k *call) {
		i, ok := c.iprouteGlobals(k, globals)
		if !ok {
			return
		}
		rest := k.args[i:]
		for _, a := range rest {
			if !a.static {
				c.unknown(k.name, "dynamic argument")
				return
			}
		}
		if len(rest) == 0 {
			c.unknown(k.name, "no object")
			return
		}
		obj := ""
		for _, o := range objects {
			if strings.HasPrefix(o, rest[0].s) {
				obj = o
				break
			}
		}
		switch {
		case obj == "":
			c.unknown(k.name+" "+rest[0].s, "object not known")
		case obj == "monitor":
			c.unbounded(k.ctx, BoundUnboundedStream, "")
			c.read(k.name+" monitor", "read-only")
		case obj == "help" || len(rest) == 1:
			c.read(k.name+" "+obj, "read-only")
		case matchOneOf(rest[1].s, reads...):
			c.read(k.name+" "+obj+" "+rest[1].s, "read-only")
		default:
			c.writer(k.name+" "+obj+" "+rest[1].s, RiskMedium, "known writer")
		}
	}
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

// checkEthtool: the showing options read; every other option changes the
// interface (settings, offloads, self-tests, LED blinking, dumps to files).
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
			"--version", "--show-tunnels", "--show-mm", "--show-pse", "--show-plca", "-Q", "--per-queue":
			continue
		}
		c.writer("ethtool "+s, RiskHigh, "changes interface settings")
		return
	}
	c.readOnly(k)
}

// nmcliObjects are nmcli's objects; nmcli accepts any prefix of an object
// or command and takes the first match in its own order, so a prefix is
// read-only only when every command it may name reads.
var nmcliObjects = []string{"general", "networking", "radio", "connection", "device", "agent", "monitor", "help"}

// nmcliReads are the read-only commands of each object ("" is the
// object alone).
var nmcliReads = map[string][]string{
	"general":    {"", "status", "permissions", "help"},
	"networking": {"", "connectivity", "help"},
	"radio":      {"", "all", "wifi", "wwan", "help"},
	"connection": {"", "show", "help"},
	"device":     {"", "status", "show", "lldp", "wifi", "help"},
	"help":       {""},
}

// nmcliWrites are the commands that change things, for the prefix rule.
var nmcliWrites = map[string][]string{
	"general":    {"hostname", "logging", "reload"},
	"networking": {"on", "off"},
	"radio":      {},
	"connection": {"up", "down", "add", "modify", "clone", "edit", "delete", "monitor", "reload", "load", "import", "export", "migrate"},
	"device":     {"set", "connect", "reapply", "modify", "disconnect", "delete", "monitor", "up", "down"},
}

// nmcliPrefix resolves a word nmcli reads by prefix among names; ok is
// false when none matches.
func nmcliPrefix(w string, names []string) (matches []string) {
	for _, n := range names {
		if w != "" && strings.HasPrefix(n, w) {
			matches = append(matches, n)
		}
	}
	return matches
}

// nmcliOpts are nmcli's global options, read as prefixes after one or two
// dashes.
var nmcliOpts = opts(
	reads(`-terse -pretty -mode= -colors= -escape= -fields= -get-values= -nocheck -show-secrets
		-wait= -version -help -overview -offline`),
	unknowns("asks a person for secrets", `-ask`),
)

// checkNmcli: status, show and list style commands read; a command with
// more arguments than a listing takes, or one that changes things, writes.
func checkNmcli(c *classifier, k *call) {
	var ops []string
	for i := 0; i < len(k.args); i++ {
		a := k.args[i]
		if !a.static {
			c.unknown("nmcli", "dynamic argument")
			return
		}
		if strings.HasPrefix(a.s, "-") && len(ops) == 0 {
			name, _, hasEq := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a.s, "-"), "-"), "=")
			o, n, _ := lookupLong([]*optTable{nmcliOpts}, name, true)
			switch {
			case n != 1:
				c.unknown("nmcli "+a.s, "option not known or ambiguous")
				return
			case o.info().eff != effRead:
				c.unknown("nmcli "+a.s, o.info().msg)
				return
			case o.opt().arg == argReq && !hasEq:
				i++
			}
			continue
		}
		ops = append(ops, a.s)
	}
	if len(ops) == 0 {
		c.readOnly(k)
		return
	}
	objs := nmcliPrefix(ops[0], nmcliObjects)
	if len(objs) != 1 {
		c.unknown("nmcli "+ops[0], "object not known or ambiguous")
		return
	}
	obj := objs[0]
	if obj == "monitor" || obj == "agent" {
		if obj == "agent" {
			c.unknown("nmcli agent", "answers secret requests")
			return
		}
		c.unbounded(k.ctx, BoundUnboundedStream, "")
		c.readOnly(k)
		return
	}
	cmd := ""
	if len(ops) > 1 {
		all := append(append([]string(nil), nmcliReads[obj]...), nmcliWrites[obj]...)
		m := nmcliPrefix(ops[1], all)
		for _, w := range m {
			if !slicesContains(nmcliReads[obj], w) {
				c.writer("nmcli "+obj+" "+ops[1], RiskHigh, "may name a command that changes network configuration ("+w+")")
				return
			}
		}
		if len(m) == 0 {
			c.unknown("nmcli "+obj+" "+ops[1], "command not known")
			return
		}
		cmd = m[0]
	}
	rest := ops[min(2, len(ops)):]
	switch {
	case obj == "radio" && len(rest) > 0:
		c.writer("nmcli radio", RiskHigh, "switches a radio")
		return
	case obj == "networking" && cmd == "connectivity" && len(rest) > 0 && rest[0] != "check":
		c.unknown("nmcli networking connectivity "+rest[0], "argument not known")
		return
	case obj == "device" && cmd == "wifi" && len(rest) > 0 && rest[0] != "list":
		c.writer("nmcli device wifi "+rest[0], RiskHigh, "changes Wi-Fi state")
		return
	case obj == "device" && cmd == "lldp" && len(rest) > 0 && rest[0] != "list":
		c.unknown("nmcli device lldp "+rest[0], "argument not known")
		return
	case obj == "general" && len(rest) > 0:
		c.writer("nmcli general "+cmd, RiskHigh, "sets a value")
		return
	}
	c.readOnly(k)
}

func slicesContains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func pingTool(name string) *tool {
	return &tool{
		name: name, style: styleGNU, net: true, check: checkPing,
		opts: opts(reads(`-4 -6 -a -A -b -B -c= -C -d -D -e= -f -F= -h -H -I= -i= -L -l= -m= -M= -n
			-N= -O -p= -q -Q= -r -R -s= -S= -t= -T= -U -v -V -w= -W=`)),
	}
}

// checkPing: ping only ends with a count (-c) or a deadline (-w); it
// probes its one operand.
func checkPing(c *classifier, k *call) {
	if !k.p.hasAny("c", "w", "h", "V") {
		c.unbounded(k.ctx, BoundUnboundedStream, c.rebuild(k, edit{insertAfter: -1, insert: "-c 4"}))
	}
	if !c.probeTarget(k, 1) {
		return
	}
	c.readOnly(k)
}

// probeTarget records the host a prober (ping, traceroute, mtr) sends its
// own probes to: its first operand, with at most maxOps operands in all
// (traceroute's packet length). Probes carry no port a sandbox could
// confine (ICMP), so the destination has port 0. A help or version query
// probes nothing.
func (c *classifier) probeTarget(k *call, maxOps int) bool {
	ops := k.p.ops
	switch {
	case len(ops) == 0 && k.p.hasAny("h", "V", "help", "version"):
		c.localNet()
		return true
	case len(ops) == 0:
		c.unknown(k.name, "no host")
		return false
	case len(ops) > maxOps:
		c.unknown(k.name+" "+k.args[ops[maxOps]].s, "unexpected argument")
		return false
	}
	return c.destination(k, k.args[ops[0]].s, 0)
}

// arping (iputils): -U and -A announce this host, updating the
// neighbours' ARP caches.
var arpingTool = &tool{
	name: "arping", style: styleGNU, net: true, check: checkPing,
	opts: opts(
		reads(`-f -q -b -D -V -c= -w= -i= -I= -s= -h`),
		states(RiskMedium, "updates the neighbours' ARP caches", `-U -A`),
	),
}

var mtrTool = &tool{
	name: "mtr", style: styleGNU, net: true,
	opts: opts(reads(`-h|--help -v|--version -6 -4 -u|--udp -T|--tcp -S|--sctp
		-I|--interface= -a|--address= -f|--first-ttl= -m|--max-ttl= -U|--max-unknown= -P|--port=
		-L|--localport= -s|--psize= -B|--bitpattern= -i|--interval= -G|--gracetime= -Q|--tos=
		-e|--mpls -Z|--timeout= -M|--mark= -r|--report -w|--report-wide -c|--report-cycles=
		-j|--json -x|--xml -C|--csv -l|--raw -p|--split -t|--curses --displaymode= -g|--gtk
		-n|--no-dns -b|--show-ips -o|--order= -z|--aslookup`),
		nets("sends its results to a lookup server it names", `-y|--ipinfo=`),
		unknowns("reads the hosts to probe from a file", `-F|--filename=`),
	),
	check: func(c *classifier, k *call) {
		if !k.p.hasAny("report", "report-wide", "json", "xml", "csv", "help", "version") {
			c.unbounded(k.ctx, BoundUnboundedStream, c.rebuild(k, edit{insertAfter: -1, insert: "--report"}))
		}
		if !c.probeTarget(k, 1) {
			return
		}
		c.readOnly(k)
	},
}

// tcpdump captures what passes an interface; it connects to nothing but
// the resolver, which is asked for the host names its filter spells.
var tcpdumpTool = &tool{
	name: "tcpdump", style: styleGNU, net: true,
	opts: opts(
		reads(`-A -b -B|--buffer-size= -c= --count -d -D|--list-interfaces -e -E= -f -F= -h|--help
			--version -H -i|--interface= --immediate-mode -j|--time-stamp-type= -J|--list-time-stamp-types
			--time-stamp-precision= --micro --nano -K|--dont-verify-checksums -l -L|--list-data-link-types
			-m= -M= -n -N -#|--number -O|--no-optimize -p|--no-promiscuous-mode --print -Q|--direction=
			-q -r= -S|--absolute-tcp-sequence-numbers -s|--snapshot-length= -T= -t -u -U|--packet-buffered
			-v -V= -x -X -y|--linktype= -Z= --relinquish-privileges=`),
		writes(RiskLow, "writes capture files", `-w= -C= -G= -W=`),
		execs("runs a program on each capture file", `-z=`),
		states(RiskMedium, "puts the interface in monitor mode", `-I|--monitor-mode`),
	),
	check: func(c *classifier, k *call) {
		if !k.p.hasAny("c", "r", "V", "list-interfaces", "help", "version", "list-time-stamp-types", "list-data-link-types", "d") {
			c.unbounded(k.ctx, BoundUnboundedStream, c.rebuild(k, edit{insertAfter: -1, insert: "-c 100"}))
		}
		c.namesHosts(len(k.p.ops) > 0 || k.p.has("F"))
		c.readOnly(k)
	},
}

// ss lists sockets; its filter may name hosts, which the resolver is
// asked for.
var ssTool = &tool{
	name: "ss", style: styleGNU, net: true,
	opts: opts(
		reads(`-h|--help -V|--version -n|--numeric -r|--resolve -a|--all -l|--listening -o|--options
			-e|--extended -m|--memory -p|--processes -T|--threads -i|--info --tipcinfo -s|--summary
			--tos --cgroup -b|--bpf -E|--events -Z|--context -z|--contexts -N|--net= -4|--ipv4
			-6|--ipv6 -0|--packet -t|--tcp -M|--mptcp -S|--sctp -u|--udp -d|--dccp -w|--raw -x|--unix
			--tipc --vsock --xdp -f|--family= -H|--no-header -O|--oneline --inet-sockopt
			-A|--query|--socket= -F|--filter= -j|--json --bpf-maps --bpf-map-id=`),
		states(RiskHigh, "closes sockets", `-K|--kill`),
		writes(RiskLow, "writes socket information to a file", `-D|--diag=`),
	),
	check: func(c *classifier, k *call) {
		if k.p.has("events") {
			c.unbounded(k.ctx, BoundUnboundedStream, "")
		}
		c.namesHosts(len(k.p.ops) > 0 || k.p.has("filter"))
		c.readOnly(k)
	},
}

// dnsPortOnly vets a port option of a DNS tool: a query sent to another
// port reaches another protocol.
func dnsPortOnly(c *classifier, k *call, u *optUse) bool {
	if u.val.static && u.val.s == "53" {
		return true
	}
	c.writer(k.name+" "+u.as+" "+u.val.s, RiskMedium, "sends DNS queries to a port other than 53")
	return false
}

// hostTool: "host [options] name [server]" asks server (port 53, or -p),
// or the host's own resolver.
var hostTool = &tool{
	name: "host", style: styleGNUStop, net: true,
	opts: opts(
		reads(`-a -A -C -d -i -l -r -s -T -U -v -V -w -4 -6 -c= -N= -t= -W= -R= -m=`),
		readsVal(dnsPortOnly, `-p=`),
	),
	check: func(c *classifier, k *call) {
		switch ops := k.p.ops; {
		case len(ops) == 0 && k.p.has("V"):
			c.localNet()
		case len(ops) == 0:
			c.unknown("host", "no name to look up")
			return
		case len(ops) > 2:
			c.unknown("host "+k.args[ops[2]].s, "unexpected argument")
			return
		case len(ops) == 2:
			if !c.noControl(k, k.args[ops[1]]) || !c.destination(k, k.args[ops[1]].s, 53) {
				return
			}
		default:
			c.resolver()
		}
		for _, i := range k.p.ops {
			if !c.noControl(k, k.args[i]) {
				return
			}
		}
		c.readOnly(k)
	},
}

// nslookupSets are the settings nslookup takes as -name[=value] (BIND 9
// nslookup.c, matched without regard to case, with the abbreviations it
// accepts); -port sends the queries to another port, which is checked.
var nslookupSets = map[string]bool{"all": true, "class": true, "cl": true, "debug": true,
	"deb": true, "nodebug": true, "nodeb": true, "d2": true, "nod2": true, "domain": true,
	"do": true, "search": true, "sea": true, "nosearch": true, "nosea": true, "port": true,
	"po": true, "querytype": true, "q": true, "type": true, "ty": true, "recurse": true,
	"rec": true, "norecurse": true, "norec": true, "retry": true, "ret": true, "timeout": true,
	"ti": true, "vc": true, "novc": true, "fail": true, "nofail": true, "ndots": true,
	"sil": true, "silent": true, "nosil": true, "nosilent": true}

// checkNslookup: "nslookup [-option...] name [server]" looks one name up,
// asking server or the host's own resolver; without a name it reads
// commands (which can set another port or server) from stdin or a person.
func checkNslookup(c *classifier, k *call) {
	var ops []string
	for _, a := range k.args {
		if strings.HasPrefix(a.s, "-") && a.s != "-" {
			opt, val, _ := strings.Cut(a.s[1:], "=")
			opt = strings.ToLower(opt)
			switch {
			case !nslookupSets[opt]:
				c.unknown("nslookup", "unknown option "+a.s)
				return
			case (opt == "port" || opt == "po") && val != "53":
				c.writer("nslookup "+a.s, RiskMedium, "sends DNS queries to a port other than 53")
				return
			}
			continue
		}
		if !c.noControl(k, a) {
			return
		}
		ops = append(ops, a.s)
	}
	switch {
	case len(ops) > 2:
		c.unknown("nslookup "+ops[2], "unexpected argument")
		return
	case len(ops) == 0 || ops[0] == "-":
		if k.ctx.fed {
			c.unknown("nslookup", "reads commands from stdin")
			return
		}
		c.unbounded(k.ctx, BoundInteractiveREPL, "")
		c.unknown("nslookup", "interactive")
		return
	case len(ops) == 2:
		if !c.destination(k, ops[1], 53) {
			return
		}
	default:
		c.resolver()
	}
	c.readOnly(k)
}

// digValued are dig's options that take a value (attached or next word).
const digValued = "bcfkpqtxyi"

// checkDig: dig sends the queries its arguments spell to each @server
// (port 53), or to the host's own resolver. -f reads a list of queries
// from a file and -p sends them to another port. Its +options are
// allowlisted: +trace and +nssearch ask servers dig finds itself, and the
// transport options (+https, +tls) change where the query goes.
func checkDig(c *classifier, k *call) {
	servers := 0
	for i := 0; i < len(k.args); i++ {
		a := k.args[i]
		if !c.noControl(k, a) {
			return
		}
		s := a.s
		switch {
		case strings.HasPrefix(s, "@"):
			servers++
			if !c.destination(k, s[1:], 53) {
				return
			}
			continue
		case strings.HasPrefix(s, "+"):
			if !digPlusOption(s[1:]) {
				c.unknown("dig "+s, "query option not known to keep the query to the named server")
				return
			}
			continue
		case len(s) < 2 || s[0] != '-':
			continue // name, type or class
		}
		opt := s[1]
		if strings.IndexByte(digValued, opt) < 0 {
			if len(s) == 2 && strings.IndexByte("46dhimruv", opt) >= 0 {
				continue
			}
			c.unknown("dig "+s, "option not known")
			return
		}
		val := s[2:]
		if val == "" && i+1 < len(k.args) {
			i++
			val = k.args[i].s
		}
		switch opt {
		case 'f':
			c.writer("dig -f", RiskMedium, "sends queries read from a file")
			return
		case 'p':
			if val != "53" {
				c.writer("dig -p "+val, RiskMedium, "sends DNS queries to a port other than 53")
				return
			}
		}
	}
	if servers == 0 {
		c.resolver()
	}
	c.readOnly(k)
}

// digPlusOptions are dig's query options (without "no" and "=value")
// that shape the query or the output and keep it to the named servers.
var digPlusOptions = wordSet(`aaflag aaonly additional adflag all answer authority besteffort
	bufsize cdflag class cmd comments crypto defname dns64prefix dnssec domain edns ednsflags
	ednsnegotiation ednsopt expandaaaa expire fail header-only identify idnin idnout ignore
	keepalive keepopen mapped multiline ndots nsid onesoa opcode padding qid qr question raflag
	rdflag recurse retry rrcomments search short showbadcookie showsearch split stats subnet tcflag
	tcp time timeout tries ttlid ttlunits unexpected unknownformat vc yaml zflag cookie`)

// digPlusOption reports a known +option, with or without "no" and a value.
func digPlusOption(s string) bool {
	name, _, _ := strings.Cut(s, "=")
	name = strings.ToLower(name)
	if digPlusOptions[name] {
		return true
	}
	base, ok := strings.CutPrefix(name, "no")
	return ok && digPlusOptions[base]
}

// whois sends its query to port 43 of the server given with -h; without
// one it picks the registry's server itself (whois.verisign-grs.com,
// whois.iana.org, ...), a destination the command does not name. -p sends
// the query to any port, where it is a line of text in another protocol.
var whoisTool = &tool{
	name: "whois", style: styleGNU, net: true,
	opts: opts(
		reads(`-I -H --verbose --no-recursion --help --version -l -L -m -M -c -x -b -B -G -d -i= -T=
			-K -r -R -a -s= -g= -t= -v= -q= -F -k -P`),
		readsVal(whoisHost, `-h|--host=`),
		nets("connects to a port the command names", `-p|--port=`),
	),
	check: func(c *classifier, k *call) {
		for _, i := range k.p.ops {
			if !c.noControl(k, k.args[i]) {
				return
			}
		}
		switch {
		case len(k.p.ops) == 0 && k.p.hasAny("help", "version"):
			c.localNet()
		case !k.p.has("host"):
			c.writer("whois", RiskMedium, "asks a server it picks itself from the name (a registry's whois server), which vigil does not know; give -h HOST of a known server")
			return
		}
		c.readOnly(k)
	},
}

// whoisHost accepts a known host name without a port.
func whoisHost(c *classifier, k *call, u *optUse) bool {
	if u.val.static && !strings.ContainsAny(u.val.s, ":/ ") && c.noControl(k, u.val) {
		return c.destination(k, u.val.s, 43)
	}
	c.writer("whois -h "+u.val.s, RiskMedium, "server may name a port")
	return false
}

// netcatSafe are netcat options (OpenBSD nc, ncat, traditional) that keep
// a port check (-z) a port check.
var netcatSafe = map[byte]bool{'z': true, 'v': true, 'n': true, '4': true, '6': true, 'w': true,
	'i': true, 'p': true, 's': true, 'D': true, 'M': true, 'm': true, 'I': true, 'O': true, 'T': true, 'V': true}

// checkNetcat: nc -z HOST PORT... only checks that ports accept
// connections and sends nothing; every other use sends stdin, listens or
// runs programs. Each port (a number or a range of at most 32) on a known
// host is a destination.
func checkNetcat(c *classifier, k *call) {
	zero := false
	var ops []string
	for i := 0; i < len(k.args); i++ {
		s := k.args[i].s
		if len(s) < 2 || s[0] != '-' {
			ops = append(ops, s)
			continue
		}
		if strings.HasPrefix(s, "--") {
			c.writer(k.name+" "+s, RiskMedium, "option not known to keep a port check")
			return
		}
		for j := 1; j < len(s); j++ {
			ch := s[j]
			if !netcatSafe[ch] {
				c.writer(k.name+" -"+string(ch), RiskMedium, "sends data, listens or runs a program")
				return
			}
			if ch == 'z' {
				zero = true
			}
			if strings.IndexByte("wipsMmIOTV", ch) >= 0 {
				if j+1 == len(s) {
					i++
				}
				break
			}
		}
	}
	if !zero {
		c.writer(k.name, RiskMedium, "sends its input over the network")
		return
	}
	if len(ops) < 2 {
		c.unknown(k.name+" -z", "needs a host and a port")
		return
	}
	ports := 0
	for _, p := range ops[1:] {
		for _, part := range strings.Split(p, ",") {
			lo, hi, isRange := strings.Cut(part, "-")
			if !isRange {
				hi = lo
			}
			a, err1 := strconv.Atoi(lo)
			b, err2 := strconv.Atoi(hi)
			if err1 != nil || err2 != nil || !isNumber(lo) || !isNumber(hi) || a < 1 || b > 65535 || a > b {
				c.writer(k.name+" "+p, RiskMedium, "port must be a number or a range of numbers")
				return
			}
			for port := a; port <= b; port++ {
				if ports++; ports > 32 {
					c.writer(k.name+" "+p, RiskMedium, "more than 32 ports: too many destinations to list")
					return
				}
				if !c.destination(k, ops[0], port) {
					return
				}
			}
		}
	}
	c.read(k.name+" -z", "checks that a port accepts connections")
}

// checkPgIsReady: pg_isready connects to PostgreSQL and reports whether it
// accepts connections; it sends no query.
func checkPgIsReady(c *classifier, k *call) {
	c.runTool(k, pgIsReadyTool)
}

var pgIsReadyTool = &tool{
	name: "pg_isready", style: styleGNU,
	opts: opts(reads(`-d|--dbname= -h|--host= -p|--port= -q|--quiet -t|--timeout= -U|--username=
		-V|--version -?|--help`)),
	check: func(c *classifier, k *call) {
		if len(k.p.ops) > 0 {
			c.unknown("pg_isready "+k.args[k.p.ops[0]].s, "unexpected argument")
			return
		}
		if k.p.hasAny("version", "?") {
			c.localNet()
			c.readOnly(k)
			return
		}
		conn := pgConn{}
		if u := k.p.last("dbname"); u != nil && !c.pgConnString(k, u.val.s, &conn) {
			return
		}
		if u := k.p.last("host"); u != nil {
			conn.hosts = u.val.s
		}
		if u := k.p.last("port"); u != nil {
			conn.ports = u.val.s
		}
		if !c.pgDestinations(k, conn) {
			return
		}
		c.readOnly(k)
	},
}

// nftTool: nft joins its words into commands separated by ";" or new
// lines; every command must list or describe, or nft must only check
// (-c).
var nftTool = &tool{
	name: "nft", style: styleGNUStop,
	opts: opts(
		reads(`-h|--help -v|--version -V -c|--check -e|--echo -j|--json -n|--numeric -N|--reversedns
			-s|--stateless -t|--terse -u|--guid -y|--numeric-priority -p|--numeric-protocol
			-T|--numeric-time -a|--handle -S|--service -d|--debug= -o|--optimize -I|--includepath=
			-D|--define=`),
		unknowns("runs commands from a file", `-f|--file=`),
		unknowns("interactive", `-i|--interactive`),
	),
	check: checkNftCommands,
}

func checkNftCommands(c *classifier, k *call) {
	words := make([]string, 0, len(k.p.ops))
	for _, i := range k.p.ops {
		a := k.args[i]
		if !a.static {
			c.unknown("nft", "dynamic argument")
			return
		}
		words = append(words, a.s)
	}
	if len(words) == 0 {
		if k.p.hasAny("help", "version", "V") {
			c.readOnly(k)
			return
		}
		c.unknown("nft", "no command")
		return
	}
	if k.p.has("check") {
		c.read("nft -c", "only checks the commands")
		return
	}
	line := strings.Join(words, " ")
	for _, cmd := range strings.FieldsFunc(line, func(r rune) bool { return r == ';' || r == '\n' }) {
		f := strings.Fields(cmd)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "list", "describe":
		case "monitor":
			c.unbounded(k.ctx, BoundUnboundedStream, "")
		default:
			risk := RiskMedium
			if matchOneOf(f[0], "flush", "delete", "destroy") {
				risk = RiskHigh
			}
			c.writer("nft "+f[0], risk, "changes the ruleset")
			return
		}
	}
	c.read("nft list", "read-only")
}

// netstat (net-tools 2.10, getopt_long): -c repeats forever; it has no
// option that writes.
var netstatTool = &tool{
	name: "netstat", style: styleGNU,
	opts: opts(reads(`-r|--route -i|--interfaces -g|--groups -s|--statistics -M|--masquerade
		-v|--verbose -W|--wide -n|--numeric --numeric-hosts --numeric-ports --numeric-users
		-N|--symbolic -e|--extend -p|--programs -o|--timers -c|--continuous -l|--listening -a|--all
		-F|--fib -C|--cache -Z|--context -t|--tcp -u|--udp -U|--udplite -S|--sctp -w|--raw -x|--unix
		--ax25 --ipx --netrom --inet --inet6 -4 -6 -A|--protocol= -T|--notrim -h|--help
		-V|--version`)),
	check: func(c *classifier, k *call) {
		if k.p.has("continuous") {
			c.unbounded(k.ctx, BoundUnboundedStream, "")
		}
		c.readOnly(k)
	},
}

// arp (net-tools): -s and -d change the table, -f loads entries from a
// file; operands are host names to show, which the resolver is asked for.
var arpTool = &tool{
	name: "arp", style: styleGNU, net: true,
	opts: opts(
		reads(`-a|--all -e -v|--verbose -n|--numeric -i|--device= -D|--use-device -A|-p|--protocol=
			-H|-t|--hw-type= -h|--help -V|--version`),
		states(RiskMedium, "changes the ARP table", `-s|--set -d|--delete -f|--file`),
	),
	check: func(c *classifier, k *call) {
		c.namesHosts(len(k.p.ops) > 0)
		c.readOnly(k)
	},
}

// route (net-tools) lists with options only; an operand (add, del,
// flush, an address family's route) changes routes.
var routeTool = &tool{
	name: "route", style: styleGNU,
	opts: opts(reads(`-v|--verbose -n|--numeric -N|--symbolic -e|--extend -F|--fib -C|--cache
		-A= -4 -6 --inet --inet6 -h|--help -V|--version`)),
	check: func(c *classifier, k *call) {
		if len(k.p.ops) > 0 {
			c.writer("route "+k.args[k.p.ops[0]].s, RiskHigh, "changes routes")
			return
		}
		c.readOnly(k)
	},
}

// conntrack (getopt_long, with the protocol extensions' options merged
// in): -L, -G, -S, -C list; -E streams events; -D, -F, -U, -I, -R change
// the table, and -z zeroes the counters of what it lists.
var conntrackTool = &tool{
	name: "conntrack", style: styleGNU, net: true,
	opts: opts(
		reads(`-L|--dump[=] -G|--get[=] -S|--stats[=] -C|--count[=] -E|--event[=]
			-s|--orig-src|--src= -d|--orig-dst|--dst= -r|--reply-src= -q|--reply-dst=
			-p|--proto|--protonum= -t|--timeout= -m|--mark= -c|--secmark= -e|--event-mask=
			-n|--src-nat[=] -g|--dst-nat[=] -j|--any-nat[=] -w|--zone= --orig-zone= --reply-zone=
			-b|--buffer-size= -o|--output= -l|--label= -f|--family= -u|--status= -V|--version
			-h|--help --sport|--orig-port-src= --dport|--orig-port-dst= --reply-port-src=
			--reply-port-dst= --state= --icmp-type= --icmp-code= --icmp-id= --mask-src= --mask-dst=
			--tuple-src= --tuple-dst= -x|--xml`),
		states(RiskHigh, "changes connection tracking", `-D|--delete[=] -F|--flush[=] -U|--update[=]
			-I|--create[=] -A|--add[=] -R|--load-file= --label-add= --label-del[=]
			-z|--zero`),
	),
	check: func(c *classifier, k *call) {
		switch {
		case k.p.has("event"):
			c.unbounded(k.ctx, BoundUnboundedStream, "")
		case !k.p.hasAny("dump", "get", "stats", "count", "version", "help"):
			c.unknown("conntrack", "no command")
			return
		}
		c.namesHosts(k.p.hasAny("orig-src", "orig-dst", "reply-src", "reply-dst", "tuple-src", "tuple-dst"))
		c.read("conntrack", "read-only")
	},
}

// tracerouteTool: traceroute (Butskoy's, with its own option parser:
// values attached or in the next word, long names spelled out) sends
// probes it builds itself; it has no option that writes or sends local
// data. -A asks a whois server for AS paths, a destination the command
// does not name.
func tracerouteTool(name string) *tool {
	return &tool{
		name: name, style: styleExact, net: true,
		opts: opts(
			reads(`-4 -6 -d|--debug -F|--dont-fragment -f|--first= -g|--gateway= -I|--icmp
			-T|--tcp -i|--interface= -m|--max-hops= -N|--sim-queries= -n -p|--port= -t|--tos=
			-l|--flowlabel= -w|--wait= -q|--queries= -r -s|--source= -z|--sendwait=
			-e|--extensions -M|--module= -O|--options= --sport= --fwmark=
			-U|--udp -D|--dccp -P|--protocol= --mtu --back -V|--version --help`),
			nets("asks a whois server it picks for AS paths", `-A|--as-path-lookups`),
		),
		check: func(c *classifier, k *call) {
			if c.probeTarget(k, 2) {
				c.readOnly(k)
			}
		},
	}
}

// tracepathTool: tracepath (iputils) sends its own probes.
func tracepathTool(name string) *tool {
	return &tool{
		name: name, style: styleGNU, net: true,
		opts: opts(reads(`-4 -6 -b -l= -m= -n -p= -V -h`)),
		check: func(c *classifier, k *call) {
			if c.probeTarget(k, 1) {
				c.readOnly(k)
			}
		},
	}
}

// getent looks entries up through NSS: host and network names go to the
// host's own resolver; the other databases are local files or daemons on
// local sockets (sssd, nscd). -s names the NSS service (a module getent
// loads), so it must be one of the common ones.
var getentTool = &tool{
	name: "getent", style: styleGNU, net: true,
	opts: opts(
		reads(`-A|--no-addrconfig -i|--no-idn -?|--help --usage -V|--version`),
		readsVal(nssService, `-s|--service=`),
	),
	check: func(c *classifier, k *call) {
		if len(k.p.ops) > 0 && matchOneOf(k.args[k.p.ops[0]].s, "hosts", "ahosts", "ahostsv4", "ahostsv6", "networks") {
			c.resolver()
		} else {
			c.localNet()
		}
		c.readOnly(k)
	},
}

// nssService accepts the NSS services shipped by glibc and the usual
// distributions, optionally per database (hosts:files).
func nssService(c *classifier, k *call, u *optUse) bool {
	v := u.val.s
	if _, after, ok := strings.Cut(v, ":"); ok {
		v = after
	}
	if u.val.static && matchOneOf(v, "files", "db", "dns", "compat", "nis", "nisplus", "hesiod",
		"systemd", "sss", "ldap", "myhostname", "mymachines", "resolve", "winbind", "wins",
		"mdns", "mdns4", "mdns6", "mdns_minimal", "mdns4_minimal", "mdns6_minimal") {
		return true
	}
	c.unknown(k.name+" "+u.as+" "+u.val.s, "NSS service not known (getent loads its module)")
	return false
}

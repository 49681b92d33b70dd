package command

import (
	"strconv"
	"strings"
)

// sshTool is OpenSSH's client. Options may come before and right after
// the destination; the first operand after it starts the remote command.
var sshTool = &tool{
	name: "ssh", style: styleExactStop, net: true,
	opts: opts(
		reads(`-4 -6 -a -C -g -k -q -T -t -v -x -y -n -B= -b= -c= -e= -i= -J= -l= -m= -p= -P=
			-G -V -Q=`),
		readsVal(sshOptionValue, `-o=`),
		nets("forwards the local agent or X display to the remote host", `-A -X -Y -K`),
		unknowns("forwards ports or runs in the background", `-L= -R= -D= -W= -w= -f -N -M -S= -O=`),
		unknowns("reads a configuration that can run local commands", `-F=`),
		execs("loads a PKCS#11 library", `-I=`),
		writes(RiskLow, "writes a log file", `-E=`),
		unknowns("requests a subsystem", `-s`),
	),
}

// sshSafeOptions are -o settings that neither run local commands, load
// code, forward anything nor write a file. StrictHostKeyChecking and
// CheckHostIP are vetted apart (sshHostKeys): ssh adds host keys to the
// known_hosts file unless they are set to yes and no.
var sshSafeOptions = map[string]bool{
	"connecttimeout": true, "batchmode": true, "loglevel": true,
	"serveraliveinterval": true, "serveralivecountmax": true, "identitiesonly": true,
	"identityfile": true, "port": true, "user": true, "passwordauthentication": true,
	"pubkeyauthentication": true, "preferredauthentications": true,
	"hostkeyalgorithms": true, "pubkeyacceptedkeytypes": true, "pubkeyacceptedalgorithms": true,
	"connectionattempts": true, "compression": true, "addressfamily": true,
	"numberofpasswordprompts": true,
	"kexalgorithms":           true, "ciphers": true, "macs": true, "proxyjump": true,
	"kbdinteractiveauthentication": true, "gssapiauthentication": true,
	"hostname": true, "tcpkeepalive": true, "visualhostkey": true,
}

// sshOptionValue vets an -o Key=value setting.
func sshOptionValue(c *classifier, k *call, u *optUse) bool {
	key := sshOptionKey(u.val.s)
	if u.val.static && (sshSafeOptions[key] || sshKnownHostsNull(u.val.s) ||
		key == "stricthostkeychecking" || key == "checkhostip") {
		return true
	}
	c.unknown("ssh -o "+u.val.s, "option may run local commands, forward things or write files")
	return false
}

// checkSSH: "ssh [options] host [options] command..." runs command, joined
// with spaces, in the remote user's shell (bash or a POSIX sh): it is
// parsed and classified like a local one, in both readings, with the
// strictest rules (there only the remote host's own loopback is a known
// destination: a read of an inventory host belongs in the read tool's
// target, which runs it in that host's sandbox). ssh itself is a network
// client: it connects to the host (and -J jump hosts) on their ports,
// which must be known. Without a command ssh opens an interactive
// session. Local input redirected into ssh is sent to the remote command.
func checkSSH(c *classifier, k *call) {
	mark, omark := len(c.uses), len(c.opIdx)
	defer func() {
		clear(c.uses[mark:])
		c.uses, c.opIdx = c.uses[:mark], c.opIdx[:omark]
	}()
	tabs := []*optTable{sshTool.opts}
	host, ok := c.scanOpts(k, styleExactStop, tabs, false, true)
	if !ok {
		return
	}
	k.setParsed(parsed{uses: c.uses[mark:]})
	if k.p.hasAny("G", "V", "Q") {
		c.localNet()
		c.read("ssh", "prints its configuration or version and exits")
		return
	}
	if host >= len(k.args) {
		c.unknown("ssh", "no host")
		return
	}
	// Options after the destination: scan the rest as a call of its own.
	rest := c.newCall(call{name: k.name, word: k.word, lead: k.lead, args: k.args[host+1:], ctx: k.ctx})
	defer c.freeCall()
	before := len(c.uses)
	cmdAt, ok := c.scanOpts(rest, styleExactStop, tabs, false, true)
	if !ok {
		return
	}
	for i := before; i < len(c.uses); i++ {
		c.uses[i].i += host + 1 // index in k.args
	}
	k.setParsed(parsed{uses: c.uses[mark:]})
	if !c.sshHostKeys(k) || !c.sshDestinations(k, k.args[host].s) {
		return
	}
	if cmdAt >= len(rest.args) {
		c.unknown("ssh", "interactive session")
		c.unbounded(k.ctx, BoundInteractiveREPL, "")
		return
	}
	if k.ctx.fed && !k.ctx.null && !k.p.has("n") {
		c.construct("ssh", RiskHigh, "sends local input on its standard input to the remote command (add -n)")
		return
	}
	if k.p.has("t") {
		c.unbounded(k.ctx, BoundTTYFlag, c.sshDropTTY(k, host))
	}
	script, ok := joinStatic(rest.args[cmdAt:])
	if !ok {
		c.construct("ssh", RiskMedium, "dynamic remote command")
		return
	}
	c.strict++
	c.remote++
	c.shScript(script, k.ctx.nested())
	c.strict--
	c.remote--
}

// sshHostKeys refuses settings with which ssh writes the known_hosts
// file: StrictHostKeyChecking other than yes (no, off and accept-new add
// new host keys) and CheckHostIP=yes (adds the host's address), unless
// UserKnownHostsFile is /dev/null.
func (c *classifier) sshHostKeys(k *call) bool {
	null := false
	for _, u := range k.p.uses {
		if u.key == "o" && sshKnownHostsNull(u.val.s) && strings.HasPrefix(sshOptionKey(u.val.s), "user") {
			null = true
		}
	}
	for _, u := range k.p.uses {
		if u.key != "o" {
			continue
		}
		key, val := sshOptionKey(u.val.s), strings.ToLower(sshOptionValueText(u.val.s))
		if key == "stricthostkeychecking" && val != "yes" && !null ||
			key == "checkhostip" && val != "no" && !null {
			c.writer("ssh -o "+u.val.s, RiskLow, "adds host keys to the known_hosts file (set UserKnownHostsFile=/dev/null, or StrictHostKeyChecking=yes)")
			return false
		}
	}
	return true
}

// sshDestinations records where ssh connects: the host ([user@]host, or
// ssh://[user@]host[:port]; -o HostName= renames it) on -p or -o Port=
// (22), and every jump host of -J or -o ProxyJump=.
func (c *classifier) sshDestinations(k *call, dest string) bool {
	host, port := dest, 22
	if rest, ok := strings.CutPrefix(dest, "ssh://"); ok {
		h, p, err := splitAuthority(rest[strings.LastIndexByte(rest, '@')+1:])
		if err != nil {
			c.writer("ssh "+dest, RiskMedium, "destination: "+err.Error())
			return false
		}
		host = h
		if p != 0 {
			port = p
		}
	} else if at := strings.LastIndexByte(dest, '@'); at >= 0 {
		host = dest[at+1:]
	}
	var jumps []string
	for _, u := range k.p.uses {
		val := u.val.s
		switch {
		case u.key == "p":
			n, err := strconv.Atoi(val)
			if err != nil {
				c.writer("ssh -p "+val, RiskMedium, "port is not a number")
				return false
			}
			port = n
		case u.key == "J":
			jumps = append(jumps, strings.Split(val, ",")...)
		case u.key == "o":
			switch sshOptionKey(val) {
			case "hostname":
				host = sshOptionValueText(val)
			case "port":
				n, err := strconv.Atoi(sshOptionValueText(val))
				if err != nil {
					c.writer("ssh -o "+val, RiskMedium, "port is not a number")
					return false
				}
				port = n
			case "proxyjump":
				if v := sshOptionValueText(val); !strings.EqualFold(v, "none") {
					jumps = append(jumps, strings.Split(v, ",")...)
				}
			}
		}
	}
	if strings.ContainsAny(host, "%") {
		c.writer("ssh "+host, RiskMedium, "host name with % tokens is expanded by ssh")
		return false
	}
	for _, j := range jumps {
		j = strings.TrimPrefix(j, "ssh://")
		if at := strings.LastIndexByte(j, '@'); at >= 0 {
			j = j[at+1:]
		}
		h, p, err := splitAuthority(j)
		if err != nil {
			c.writer("ssh -J "+j, RiskMedium, "jump host: "+err.Error())
			return false
		}
		if p == 0 {
			p = 22
		}
		if !c.destination(k, h, p) {
			return false
		}
	}
	return c.destination(k, host, port)
}

// sshDropTTY is the rewrite of an ssh call without its -t flags, when
// they stand alone before the destination.
func (c *classifier) sshDropTTY(k *call, host int) string {
	f := newFollow()
	for i := range k.p.uses {
		u := &k.p.uses[i]
		if u.key != "t" {
			continue
		}
		f.found = true
		if u.i >= host || u.cluster {
			return ""
		}
		if f.replace == nil {
			f.replace = make(map[int]string, 2)
		}
		f.replace[u.i] = ""
	}
	return c.rebuildDropTTY(k, f)
}

// rebuildDropTTY is the rewrite of a call without its -t flags.
func (c *classifier) rebuildDropTTY(k *call, tty follow) string {
	if !tty.editable {
		return ""
	}
	return c.rebuild(k, edit{replace: tty.replace, insertAfter: -1})
}

// sshKnownHostsNull accepts known-hosts files set to /dev/null only: ssh
// appends new host keys to whatever file is named.
func sshKnownHostsNull(v string) bool {
	v = strings.TrimSpace(v)
	i := strings.IndexAny(v, "= \t")
	if i < 0 {
		return false
	}
	switch strings.ToLower(v[:i]) {
	case "userknownhostsfile", "globalknownhostsfile":
		return strings.TrimSpace(strings.TrimLeft(v[i:], "= \t")) == "/dev/null"
	}
	return false
}

// sshOptionKey is the lower-cased keyword of an -o "Key=value" setting.
func sshOptionKey(v string) string {
	v = strings.TrimSpace(v)
	if i := strings.IndexAny(v, "= \t"); i >= 0 {
		v = v[:i]
	}
	return strings.ToLower(v)
}

// sshOptionValueText is the value of an -o "Key=value" or "Key value"
// setting.
func sshOptionValueText(v string) string {
	v = strings.TrimSpace(v)
	i := strings.IndexAny(v, "= \t")
	if i < 0 {
		return ""
	}
	return strings.TrimSpace(strings.TrimLeft(v[i:], "= \t"))
}

// execInto classifies the command a container or guest exec runs: argv is
// passed as is (no shell), so it is classified directly, with the
// strictest rules (it runs outside vigil's sandbox, where only its own
// loopback is a known destination); its words are still the top-level
// ones, so a rewrite of the inner command works. fed says the command
// does not wait for a person, stdin that the caller's stdin reaches it
// (-i, or an exec that always forwards it); tty are the option positions
// that allocate a terminal.
func (c *classifier) execInto(k *call, argv []arg, fed, stdin bool, tty follow) {
	if len(argv) == 0 {
		c.unknown(k.name, "no command")
		return
	}
	ctx := k.ctx
	ctx.chain++
	ctx.piped, ctx.fed = false, fed
	ctx.null = !(stdin && k.ctx.fed && !k.ctx.null)
	if tty.found {
		ctx.fed = false
	}
	c.strict++
	c.remote++
	c.argv(argv, ctx)
	c.strict--
	c.remote--
	if tty.found {
		c.unbounded(k.ctx, BoundTTYFlag, c.rebuildDropTTY(k, tty))
	}
}

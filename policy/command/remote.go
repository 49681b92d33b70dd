package command

import "strings"

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
// code nor forward anything.
var sshSafeOptions = map[string]bool{
	"connecttimeout": true, "stricthostkeychecking": true, "batchmode": true,
	"loglevel":            true,
	"serveraliveinterval": true, "serveralivecountmax": true, "identitiesonly": true,
	"identityfile": true, "port": true, "user": true, "passwordauthentication": true,
	"pubkeyauthentication": true, "preferredauthentications": true,
	"hostkeyalgorithms": true, "pubkeyacceptedkeytypes": true, "pubkeyacceptedalgorithms": true,
	"connectionattempts": true, "compression": true, "addressfamily": true,
	"numberofpasswordprompts": true,
	"checkhostip":             true,
	"kexalgorithms":           true, "ciphers": true, "macs": true, "proxyjump": true,
	"kbdinteractiveauthentication": true, "gssapiauthentication": true,
	"hostname": true, "tcpkeepalive": true, "visualhostkey": true,
}

// sshOptionValue vets an -o Key=value setting.
func sshOptionValue(c *classifier, k *call, u *optUse) bool {
	if u.val.static && (sshSafeOptions[sshOptionKey(u.val.s)] || sshKnownHostsNull(u.val.s)) {
		return true
	}
	c.unknown("ssh -o "+u.val.s, "option may run local commands or forward things")
	return false
}

// checkSSH: "ssh [options] host [options] command..." runs command, joined
// with spaces, in the remote user's shell (bash or a POSIX sh): it is
// parsed and classified like a local one, in both readings. Without a
// command ssh opens an interactive session. Local input redirected into
// ssh is sent to the remote command.
func checkSSH(c *classifier, k *call) {
	c.net = true
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
		c.read("ssh", "prints its configuration or version and exits")
		return
	}
	if host >= len(k.args) {
		c.unknown("ssh", "no host")
		return
	}
	if !k.args[host].static {
		c.unknown("ssh", "dynamic host")
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
	if cmdAt >= len(rest.args) {
		c.unknown("ssh", "interactive session")
		c.unbounded(k.ctx, BoundInteractiveREPL, "")
		return
	}
	if k.ctx.fed && !k.ctx.null && !k.p.has("n") {
		c.writer("ssh", RiskMedium, "sends local input to the remote command")
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
	c.shScript(script, k.ctx.nested())
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

// execInto classifies the command a container or guest exec runs: argv is
// passed as is (no shell), so it is classified directly; its words are
// still the top-level ones, so a rewrite of the inner command works.
// ttyFlags are the option positions that allocate a terminal.
func (c *classifier) execInto(k *call, argv []arg, fed bool, tty follow) {
	if len(argv) == 0 {
		c.unknown(k.name, "no command")
		return
	}
	ctx := k.ctx
	ctx.chain++
	ctx.piped, ctx.fed = false, fed
	if tty.found {
		ctx.fed = false
	}
	c.argv(argv, ctx)
	if tty.found {
		c.unbounded(k.ctx, BoundTTYFlag, c.rebuildDropTTY(k, tty))
	}
}

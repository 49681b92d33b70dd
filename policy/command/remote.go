package command

import "strings"

// sshValued are OpenSSH's options that take a value.
const sshValued = "bceilmopBDEFIJLOPQRSwW"

var sshSpec = optSpec{shortArg: sshValued, stopAtOperand: true}

// sshSafeOptions are -o settings that neither run local commands nor
// forward anything.
var sshSafeOptions = map[string]bool{
	"connecttimeout": true, "stricthostkeychecking": true, "batchmode": true,
	"loglevel":            true,
	"serveraliveinterval": true, "serveralivecountmax": true, "identitiesonly": true,
	"identityfile": true, "port": true, "user": true, "passwordauthentication": true,
	"pubkeyauthentication": true, "preferredauthentications": true,
	"hostkeyalgorithms": true, "pubkeyacceptedkeytypes": true, "pubkeyacceptedalgorithms": true,
	"connectionattempts": true, "compression": true, "addressfamily": true,
	"forwardagent": true, "numberofpasswordprompts": true,
	"hashknownhosts": true, "checkhostip": true, "updatehostkeys": true,
	"kexalgorithms": true, "ciphers": true, "macs": true, "proxyjump": true,
	"kbdinteractiveauthentication": true, "gssapiauthentication": true,
	"hostname": true, "tcpkeepalive": true, "visualhostkey": true,
}

// checkSSH: "ssh [options] host command..." runs command, joined with
// spaces, in the remote user's shell: it is parsed and classified like a
// local one. Without a command ssh opens an interactive session. Options
// that run local programs (ProxyCommand, LocalCommand, -F configs) or
// forward ports are unknown; -E writes a log file.
func checkSSH(c *classifier, k *call) {
	tty := newFollow()
	host := -1
	args := k.args
	// Options may come before and right after the host; the first operand
	// after the host starts the command.
	s := scanOpts(&sshSpec, args)
	for pass := 0; pass < 2; pass++ {
		var t token
		more := true
		for t, more = s.next(); more; t, more = s.next() {
			if t.kind == tokOperand || t.kind == tokDynamic {
				break
			}
			if !c.sshOption(k, t, &tty) {
				return
			}
		}
		if !more {
			break
		}
		if pass == 0 {
			if !t.valStatic && t.kind == tokDynamic {
				c.unknown("ssh", "dynamic host")
				return
			}
			host = t.i
			s = scanOpts(&sshSpec, args)
			s.i = host + 1
			continue
		}
		cmd := args[t.i:]
		if tty.found {
			c.unbounded(k.ctx, BoundTTYFlag, c.rebuildDropTTY(k, tty))
		}
		script, ok := joinStatic(cmd)
		if !ok {
			c.construct("ssh", RiskMedium, "dynamic remote command")
			return
		}
		c.script(script, k.ctx.nested())
		return
	}
	if host < 0 {
		c.unknown("ssh", "no host")
		return
	}
	c.unknown("ssh", "interactive session")
	c.unbounded(k.ctx, BoundInteractiveREPL, "")
}

// rebuildDropTTY is the rewrite of a call without its -t flags.
func (c *classifier) rebuildDropTTY(k *call, tty follow) string {
	if !tty.editable {
		return ""
	}
	return c.rebuild(k, edit{replace: tty.replace, insertAfter: -1})
}

// sshOption vets one ssh option; false means a finding was recorded.
func (c *classifier) sshOption(k *call, t token, tty *follow) bool {
	switch t.name {
	case "t":
		tty.dropShort(c, k, t.i, "t", sshValued)
		return true
	case "4", "6", "a", "A", "C", "k", "K", "q", "T", "v", "x", "n", "y",
		"l", "p", "i", "J", "c", "m", "b", "B", "e":
		return true
	case "E":
		c.writer("ssh -E", RiskLow, "writes a log file")
		return false
	case "o":
		if !t.valStatic || !sshSafeOptions[sshOptionKey(t.val)] && !sshKnownHostsNull(t.val) {
			c.unknown("ssh -o "+t.val, "option may run local commands")
			return false
		}
		return true
	}
	c.badOption(k, t)
	return false
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

package command

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Network clients (SPEC R1). A command the tables mark as a network
// client (a rule, tool or verb with net set) sends its words to a server,
// so the whole command line must be static text the user wrote: a word
// built by any expansion ($(...), `...`, $VAR, ${...}, $((...)), <(...),
// a glob, a brace or tilde expansion) could carry local data out, whatever
// option it belongs to. Nothing local may reach it on its standard input
// either, and no words may be appended at run time (xargs). The client's
// check then proves where it connects (dest.go); a client judged
// read-only without a proven destination is a write.

// netFrame is one network client being judged.
type netFrame struct {
	// hits counts the destinations proven for this client itself (not
	// for the clients it runs, such as the command of kubectl exec).
	hits     int
	findings int  // len(c.findings) when it started
	local    bool // the form judged connects nowhere (kubectl version --client)
	// service is where the client connects when its command line names no
	// server (kubectl's cluster), and why, for the refusal.
	service, why string
}

// enterNet starts judging network client k. It returns false, after
// recording a finding, when a word is not static text or local data would
// be sent; the caller then does not judge k further. Clients in
// ownStdin decide about their standard input themselves.
func (c *classifier) enterNet(k *call, service, why string) bool {
	for _, set := range [2][]arg{k.lead, k.args} {
		for i, a := range set {
			if !a.static || a.glob || a.tilde {
				c.construct(c.netWord(k, set, i), RiskHigh, "value is built by "+expansionKind(a)+": a network read sends only static text")
				return false
			}
		}
	}
	if k.ctx.fed && !k.ctx.null && !ownStdin[k.name] {
		c.construct(k.name, RiskHigh, "local data on its standard input (a pipe, redirection, here-document or here-string): a network read sends nothing local")
		return false
	}
	c.netFrames = append(c.netFrames, netFrame{findings: len(c.findings), service: service, why: why})
	return true
}

// ownStdin are network clients whose checks decide about their standard
// input: ssh reads none with -n.
var ownStdin = map[string]bool{"ssh": true}

// readVerbOperands refuses an operand of a verb judged by its own check
// that spells another of the tool's verbs not known to read (see
// noExtraVerb).
func (c *classifier) readVerbOperands(k *call) bool {
	return k.of == nil || c.noExtraVerb(k, k.of)
}

// leaveNet ends judging network client k: one judged read-only must have
// proven a destination, or connect to its service's declared servers, or
// be a form that connects nowhere.
func (c *classifier) leaveNet(k *call) {
	f := c.netFrames[len(c.netFrames)-1]
	c.netFrames = c.netFrames[:len(c.netFrames)-1]
	for _, g := range c.findings[f.findings:] {
		if g.write {
			return
		}
	}
	if f.local || f.hits > 0 {
		return
	}
	if f.service != "" {
		c.service(k, f.service, f.why)
		return
	}
	c.writer(k.name, RiskMedium, "talks over the network, but no destination could be proven from its command line")
}

// localNet marks the network client being judged as using a form that
// connects nowhere (a version or help query, a local listing).
func (c *classifier) localNet() {
	if n := len(c.netFrames); n > 0 {
		c.netFrames[n-1].local = true
	}
}

// namesHosts ends the destinations of a local tool whose words may name
// hosts it looks up (a capture filter, a socket filter): with names, it
// asks the host's resolver; without, it connects nowhere.
func (c *classifier) namesHosts(names bool) {
	if names {
		c.resolver()
		return
	}
	c.localNet()
}

// setService sets where the client being judged connects when its command
// line names no server (kubectl --context X: that context's cluster).
func (c *classifier) setService(service, why string) {
	if n := len(c.netFrames); n > 0 {
		c.netFrames[n-1].service, c.netFrames[n-1].why = service, why
	}
}

// netWord names a non-static word of a network client for its reason:
// the option it is attached to (-A$(...), --user-agent=$(...)), or the
// option before it when the client's grammar says that option takes a
// value (-A "$(...)"), else the word as written.
func (c *classifier) netWord(k *call, set []arg, i int) string {
	a := set[i]
	if s := a.s; strings.HasPrefix(s, "-") && len(s) > 1 && a.w != nil && startsLiteral(a.w) {
		if name, _, ok := strings.Cut(s, "="); ok {
			return k.name + " " + name
		}
		if !strings.HasPrefix(s, "--") {
			return k.name + " " + s[:2]
		}
		return k.name + " " + s
	}
	if i > 0 {
		if p := set[i-1]; p.static && len(p.s) > 1 && p.s[0] == '-' && !strings.Contains(p.s, "=") && c.takesValue(k.name, p.s) {
			return k.name + " " + p.s
		}
	}
	if raw := c.raw(a, k.ctx); raw != "" {
		return k.name + " " + raw
	}
	return k.name
}

// netGrammars are the grammars of network clients judged by a check of
// their own, for naming options in reasons.
var netGrammars = map[string]*tool{"curl": curlTool, "wget": wgetTool, "http": httpieTool,
	"https": httpieTool, "ssh": sshTool, "redis-cli": redisTool, "valkey-cli": redisTool,
	"keydb-cli": redisTool, "pg_isready": pgIsReadyTool, "ceph": cephTool}

// takesValue reports whether option word opt of the named client takes
// the next word as its value (the last short option of a cluster, or a
// long option), by the client's grammar; without one, any option does.
func (c *classifier) takesValue(name, opt string) bool {
	t := netGrammars[name]
	if r, ok := c.table[name]; ok && r.class == ruleTool {
		t = r.tool
	}
	if t == nil || t.opts == nil {
		return true
	}
	var o optRef
	if strings.HasPrefix(opt, "--") {
		o, _, _ = lookupLong([]*optTable{t.opts}, opt[2:], t.style.abbrev)
	} else if t.style.dashLong {
		o, _, _ = lookupLong([]*optTable{t.opts}, opt[1:], false)
	}
	if !o.found() && !strings.HasPrefix(opt, "--") {
		o = t.opts.shortOpt(opt[len(opt)-1])
	}
	return o.found() && (o.opt().arg == argReq || o.opt().arg == argTwo) && !o.opt().shortFlag
}

// startsLiteral reports a word whose first part is literal text.
func startsLiteral(w *syntax.Word) bool {
	if len(w.Parts) == 0 {
		return false
	}
	switch p := w.Parts[0].(type) {
	case *syntax.Lit:
		return true
	case *syntax.SglQuoted:
		return !p.Dollar
	case *syntax.DblQuoted:
		if len(p.Parts) > 0 {
			_, ok := p.Parts[0].(*syntax.Lit)
			return ok
		}
	}
	return false
}

// expansionKind names the first expansion in a word, for reasons.
func expansionKind(a arg) string {
	if a.w == nil {
		return "text known only at run time"
	}
	kind := ""
	syntax.Walk(a.w, func(n syntax.Node) bool {
		if kind != "" {
			return false
		}
		switch x := n.(type) {
		case *syntax.CmdSubst:
			kind = "command substitution $(…)"
			if x.Backquotes {
				kind = "command substitution `…`"
			}
		case *syntax.ProcSubst:
			kind = "process substitution " + x.Op.String() + "…)"
		case *syntax.ArithmExp:
			kind = "arithmetic expansion $((…))"
		case *syntax.ParamExp:
			if x.Short && x.Param != nil {
				kind = "parameter expansion $" + x.Param.Value
			} else if x.Param != nil {
				kind = "parameter expansion ${" + x.Param.Value + "…}"
			} else {
				kind = "parameter expansion ${…}"
			}
		case *syntax.ExtGlob:
			kind = "extended glob"
		case *syntax.DblQuoted:
			if x.Dollar {
				kind = `locale translation $"…"`
			}
		}
		return true
	})
	switch {
	case kind != "":
		return kind
	case a.tilde:
		return "tilde expansion ~"
	case a.glob:
		return "glob expansion"
	case a.split:
		return "brace expansion {…}"
	}
	return "text known only at run time"
}

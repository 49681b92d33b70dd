package command

// verb is the rule for one subcommand of a tool such as systemctl, docker
// or kubectl.
type verb struct {
	class ruleClass
	risk  Risk      // for ruleWrite
	check checkFunc // for ruleCheck: called with the verb's own arguments
}

// Shorthands for verb tables.
var (
	rd     = verb{class: ruleRead}
	wrLow  = verb{class: ruleWrite, risk: RiskLow}
	wrMed  = verb{class: ruleWrite, risk: RiskMedium}
	wrHigh = verb{class: ruleWrite, risk: RiskHigh}
)

func ck(f checkFunc) verb { return verb{class: ruleCheck, check: f} }

// subTool describes a command whose first operand is a subcommand.
type subTool struct {
	// spec describes the options that may precede the subcommand.
	spec optSpec
	// globalOK accepts an option before the subcommand; nil accepts any.
	globalOK func(t token) bool
	verbs    map[string]verb
	// none applies when there is no subcommand.
	none verb
}

// sub returns a checker for a subcommand tool.
func sub(t *subTool) checkFunc {
	return func(c *classifier, k *call) { c.subcommand(k, t) }
}

// subcommand finds the subcommand of k and applies its rule.
func (c *classifier) subcommand(k *call, tool *subTool) {
	s := scanOpts(&tool.spec, k.args)
	for t, more := s.next(); more; t, more = s.next() {
		switch t.kind {
		case tokDynamic:
			c.unknown(k.name, "dynamic subcommand or option")
			return
		case tokOperand:
			if !t.valStatic {
				c.unknown(k.name, "dynamic subcommand")
				return
			}
			v, ok := tool.verbs[t.val]
			name := k.name + " " + t.val
			if !ok {
				c.unknown(name, "subcommand not known to be read-only")
				return
			}
			lead := k.args[:t.i+1]
			if len(k.lead) > 0 {
				lead = append(append(make([]arg, 0, len(k.lead)+t.i+1), k.lead...), lead...)
			}
			c.applyVerb(c.newCall(call{name: name, word: k.word, lead: lead, args: k.args[t.i+1:], ctx: k.ctx}), v)
			c.freeCall()
			return
		default:
			if tool.globalOK != nil && !tool.globalOK(t) {
				c.badOption(k, t)
				return
			}
		}
	}
	c.applyVerb(k, tool.none)
}

func (c *classifier) applyVerb(k *call, v verb) {
	switch v.class {
	case ruleRead:
		c.readOnly(k)
	case ruleWrite:
		c.writer(k.name, v.risk, "known writer")
	default:
		if v.check == nil {
			c.unknown(k.name, "not known to be read-only")
			return
		}
		v.check(c, k)
	}
}

// noMoreOperands returns a checker that is read-only when the subcommand
// has at most n operands after it, and a writer otherwise (log-level with
// an argument sets it, without one it shows it).
func noMoreOperands(n int, risk Risk) checkFunc {
	return func(c *classifier, k *call) {
		operands := 0
		for _, a := range k.args {
			if !a.static {
				c.unknown(k.name, "dynamic argument")
				return
			}
			if len(a.s) == 0 || a.s[0] != '-' {
				operands++
			}
		}
		if operands > n {
			c.writer(k.name, risk, "sets a value")
			return
		}
		c.readOnly(k)
	}
}

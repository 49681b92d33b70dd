package command

import (
	"slices"
	"strings"
)

// Verb tables: helpers that build the verbs of a tool grammar.

// readVerb is a verb that only reads, with the tool's options.
var readVerb = &verbRule{class: ruleRead}

// localVerb is a read verb of a network tool that connects nowhere.
var localVerb = &verbRule{class: ruleRead, local: true}

// verbGroup is verbs sharing one rule.
type verbGroup struct {
	names string // space-separated
	r     *verbRule
}

// vreads are read verbs.
func vreads(names string) verbGroup { return verbGroup{names, readVerb} }

// vwrites are verbs that change things.
func vwrites(risk Risk, names string) verbGroup {
	return verbGroup{names, &verbRule{class: ruleWrite, risk: risk}}
}

// vrule gives verbs their own rule.
func vrule(r *verbRule, names string) verbGroup { return verbGroup{names, r} }

// verbSet is a tool's verbs, sorted by name (a compact table: see
// optTable).
type verbSet struct {
	names []string
	rules []*verbRule
	// texts[i] is the reason "prefix names[i]: read-only" when the set is
	// reached under one command name, prefix (verbReasons); nil otherwise.
	// A verb call takes its name from it rather than building it.
	texts  []string
	prefix string
	shared bool
}

// get returns the rule of a verb spelled out, or nil.
func (s *verbSet) get(name string) *verbRule {
	if i, ok := slices.BinarySearch(s.names, name); ok {
		return s.rules[i]
	}
	return nil
}

// verbTable builds a verb set from groups; a name given twice panics.
func verbTable(groups ...verbGroup) *verbSet {
	type named struct {
		name string
		r    *verbRule
	}
	var all []named
	for _, g := range groups {
		for _, n := range strings.Fields(g.names) {
			all = append(all, named{n, g.r})
		}
	}
	slices.SortFunc(all, func(a, b named) int { return strings.Compare(a.name, b.name) })
	s := &verbSet{names: make([]string, len(all)), rules: make([]*verbRule, len(all))}
	for i, v := range all {
		if i > 0 && all[i-1].name == v.name {
			panic("command: verb " + v.name + " defined twice")
		}
		s.names[i], s.rules[i] = v.name, v.r
	}
	return s
}

// readWith is a read verb with its own options.
func readWith(t *optTable) *verbRule { return &verbRule{class: ruleRead, opts: t} }

// readCheck is a read verb whose check proves where it connects or which
// of its forms read (an operand spelling it is no extra verb).
func readCheck(t *optTable, check checkFunc) *verbRule {
	return &verbRule{class: ruleCheck, opts: t, check: check, reads: true}
}

// netReadCheck is readCheck for a verb that talks over the network.
func netReadCheck(t *optTable, check checkFunc) *verbRule {
	return &verbRule{class: ruleCheck, opts: t, check: check, reads: true, net: true}
}

// checkWith is a verb decided by check after a scan with its own options.
func checkWith(t *optTable, check checkFunc) *verbRule {
	return &verbRule{class: ruleCheck, opts: t, check: check}
}

// setterVerb reads with at most n operands and sets a value with more
// (log-level shows the level, log-level debug sets it).
func setterVerb(n int) *verbRule { return &verbRule{class: ruleRead, setter: true, maxOps: n} }

// nestedVerb is a verb whose first operand is another verb.
func nestedVerb(t *tool) *verbRule { return &verbRule{class: ruleCheck, sub: t} }

// streamVerb reads but never ends by itself (busctl monitor, ...).
func streamVerb(c *classifier, k *call) {
	c.unbounded(k.ctx, BoundUnboundedStream, "")
	c.readOnly(k)
}

// checkInteractive is a subcommand that opens an interactive session.
func checkInteractive(c *classifier, k *call) {
	c.unknown(k.name, "interactive session")
	c.unbounded(k.ctx, BoundInteractiveREPL, "")
}

// interactiveVerb opens an interactive session.
var interactiveVerb = &verbRule{class: ruleCheck, check: checkInteractive}

// checkEditVerb: an edit subcommand opens an editor and writes.
func checkEditVerb(c *classifier, k *call) {
	c.writer(k.name, RiskMedium, "known writer")
	c.unbounded(k.ctx, BoundPager, "")
}

// editVerb opens an editor on something and saves it.
var editVerb = &verbRule{class: ruleCheck, check: checkEditVerb}

// checkRunsProgram is a subcommand that runs an arbitrary program.
func checkRunsProgram(c *classifier, k *call) {
	c.unknown(k.name, "runs a program")
}

// runsVerb runs an arbitrary program.
var runsVerb = &verbRule{class: ruleCheck, check: checkRunsProgram, noScan: true}

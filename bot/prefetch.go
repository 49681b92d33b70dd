package bot

import (
	"fmt"
	"strings"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/policy"
)

// TextResolver is an optional power of a Resolver: recognising resource
// names written without @ (SPEC A8), by fuzzy match against the inventory.
type TextResolver interface {
	RecognizeMentions(text string) []Recognized
}

// Recognized is a stretch of a message that names inventory resources
// without @: one for sure, or several equally well (Ambiguous).
type Recognized struct {
	// Text is the words of the message that matched.
	Text string
	// Chains hold each candidate's routing chain, the resource first.
	Chains     [][]policy.Resource
	Confidence float64
	Ambiguous  bool
}

// messageContext is the authoritative block that goes with a message to
// the model: the @mentions resolved against the inventory, names
// recognised without @, and the runbooks that may apply.
func (b *conversation) messageContext(s *agent.Session, m Message) string {
	c, _ := b.messageContextIn(s, m, nil)
	return c
}

// messageContextIn is messageContext within a channel's scope; it also
// returns why mentioned resources are not available there.
func (b *conversation) messageContextIn(s *agent.Session, m Message, scope *policy.Scope) (string, []string) {
	var parts []string
	block, refused := b.mentionContextIn(s, m.Mentions, scope)
	var names []string
	for _, mm := range m.Mentions {
		if scope != nil && b.opt.Resolver != nil {
			// Another team's resource brings no runbooks here either.
			if chain, ok := b.opt.Resolver.ResolveMention(mm.Name); ok && len(chain) > 0 && b.outOfScope(scope, mm.Name, chain[0]) != "" {
				continue
			}
		}
		names = append(names, mm.Name)
	}
	if c, sure := b.recognizedContext(m, block != "", scope); c != "" {
		if block != "" {
			block += "\n"
		}
		block += c
		names = append(names, sure...)
	}
	if block != "" {
		parts = append(parts, block)
	}
	if b.opt.Runbooks != nil {
		offer, err := b.opt.Runbooks.Offer(m.Text, names)
		if err != nil {
			b.log.Warn("runbooks unavailable; answering without them", "thread", m.Thread.Key(), "err", err)
		} else if offer != "" {
			parts = append(parts, offer)
		}
	}
	return strings.Join(parts, "\n\n"), refused
}

// recognizedContext lists the resources the message names without @. They
// are context, not resolution: nothing is added to the session's resolved
// resources, so a change to one still needs a query or discover first, and
// an ambiguous name is never guessed. It returns the block and the names
// recognised for sure.
func (b *conversation) recognizedContext(m Message, haveHeader bool, scope *policy.Scope) (string, []string) {
	tr, ok := b.opt.Resolver.(TextResolver)
	if !ok {
		return "", nil
	}
	recs := tr.RecognizeMentions(m.Text)
	if scope != nil {
		// A name outside the channel's scope is not offered as context.
		kept := recs[:0:0]
		for _, r := range recs {
			var cs [][]policy.Resource
			for _, c := range r.Chains {
				if len(c) > 0 && b.outOfScope(scope, c[0].Name, c[0]) == "" {
					cs = append(cs, c)
				}
			}
			if len(cs) > 0 {
				r.Chains = cs
				kept = append(kept, r)
			}
		}
		recs = kept
	}
	if len(recs) == 0 {
		return "", nil
	}
	var sb strings.Builder
	if !haveHeader {
		sb.WriteString("Context from vigil (authoritative):\n")
	}
	var sure []string
	for _, r := range recs {
		if len(r.Chains) == 0 || len(r.Chains[0]) == 0 {
			continue
		}
		if r.Ambiguous {
			names := make([]string, 0, len(r.Chains))
			for _, c := range r.Chains {
				names = append(names, fmt.Sprintf("%s (%s, %s)", c[0].Name, c[0].ID, c[0].Kind))
			}
			fmt.Fprintf(&sb, "- %q may mean any of: %s. It is ambiguous: ask the user which one, or investigate each "+
				"read-only; never change one of them on this guess.\n", r.Text, strings.Join(names, ", "))
			continue
		}
		c := r.Chains[0]
		res := c[0]
		fmt.Fprintf(&sb, "- %q probably means %s (%s); use target %q", r.Text, res.ID, res.Kind, res.Target)
		if len(c) > 1 {
			sb.WriteString("; routing: ")
			for i, p := range c {
				if i > 0 {
					sb.WriteString(" -> ")
				}
				sb.WriteString(string(p.ID))
			}
		}
		fmt.Fprintf(&sb, " (recognised from the text, confidence %.2f: resolve it with query or discover before you change it)\n", r.Confidence)
		sure = append(sure, res.Name)
	}
	return strings.TrimRight(sb.String(), "\n"), sure
}

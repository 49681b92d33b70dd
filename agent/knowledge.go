package agent

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vigilops/vigil/agent/facts"
)

// Knowledge is a session's accumulated facts, bounded (60 facts, 2000
// characters of keys and values): when full, the least recently observed
// fact goes, sparing those of the current and the previous turn while any
// other is left. It is plain data, saved with the session.
//
// The facts inform the model; they never stand in for a call. SPEC A9's
// knowledge gate (answering a repeated call from these facts) is left out
// on purpose: a fact is what a tool said at one moment, and an answer from
// it would look to the FSM like a fresh read, so a change could be
// "verified" by a stale fact. Repeated calls are bounded by loop detection
// instead (SPEC A6), and the known-facts block makes them rarer.
type Knowledge struct {
	Facts []facts.Fact `json:"facts,omitempty"`
	// Turn counts the tool-call turns learned from so far.
	Turn int `json:"turn"`
	// Seen is how many history messages were learned from.
	Seen  int   `json:"seen"`
	Clock int64 `json:"clock"`
}

// Bounds of the knowledge a session keeps.
const (
	maxFacts     = 60
	maxFactChars = 2000
)

// learn extracts facts from the history messages not yet learned from.
// Facts come from the tool results exactly as the model received them.
func (a *Agent) learn(s *Session) {
	if s.Knowledge == nil {
		s.Knowledge = &Knowledge{}
	}
	k := s.Knowledge
	if k.Seen > len(s.History) {
		*k = Knowledge{} // a history that shrank is not the one learned from
	}
	for i := k.Seen; i < len(s.History); i++ {
		m := s.History[i]
		switch {
		case m.Role == RoleAssistant && len(m.ToolCalls) > 0:
			k.Turn++
		case m.Role == RoleTool:
			c, ok := callFor(s.History, i)
			if !ok {
				continue
			}
			k.add(facts.Extract(callInfoOf(c), m.Content))
		}
	}
	k.Seen = len(s.History)
}

// callFor finds the tool call that the tool message at i answers.
func callFor(h []Message, i int) (ToolCall, bool) {
	id := h[i].ToolCallID
	for j := i - 1; j >= 0; j-- {
		if h[j].Role != RoleAssistant || len(h[j].ToolCalls) == 0 {
			continue
		}
		// Results follow their own call message: the nearest one.
		for _, c := range h[j].ToolCalls {
			if c.ID == id {
				return c, true
			}
		}
		break
	}
	return ToolCall{}, false
}

// add records facts observed in the current turn, replacing facts with the
// same key, then evicts down to the bounds.
func (k *Knowledge) add(fs []facts.Fact) {
	for _, f := range fs {
		k.Clock++
		f.Turn, f.Used = k.Turn, k.Clock
		if i := slices.IndexFunc(k.Facts, func(g facts.Fact) bool { return g.Key == f.Key }); i >= 0 {
			k.Facts[i] = f
			continue
		}
		k.Facts = append(k.Facts, f)
	}
	k.evict()
}

func (k *Knowledge) chars() int {
	n := 0
	for _, f := range k.Facts {
		n += len(f.Key) + len(f.Value)
	}
	return n
}

// evict drops the least recently observed facts until the bounds hold.
// Facts of the current and previous turn go last: only when nothing else
// is left to drop.
func (k *Knowledge) evict() {
	for len(k.Facts) > maxFacts || k.chars() > maxFactChars {
		victim := -1
		for pass := 0; pass < 2 && victim < 0; pass++ {
			for i, f := range k.Facts {
				if pass == 0 && f.Turn >= k.Turn-1 {
					continue
				}
				if victim < 0 || f.Used < k.Facts[victim].Used {
					victim = i
				}
			}
		}
		k.Facts = slices.Delete(k.Facts, victim, victim+1)
	}
}

// Lookup returns the fact stored under key.
func (k *Knowledge) Lookup(key string) (facts.Fact, bool) {
	if k == nil {
		return facts.Fact{}, false
	}
	for _, f := range k.Facts {
		if f.Key == key {
			return f, true
		}
	}
	return facts.Fact{}, false
}

// FromCalls returns the facts whose source is one of ids, in the order
// they were observed.
func (k *Knowledge) FromCalls(ids []string) []facts.Fact {
	if k == nil {
		return nil
	}
	var out []facts.Fact
	for _, f := range k.Facts {
		if slices.Contains(ids, f.Source) {
			out = append(out, f)
		}
	}
	slices.SortFunc(out, func(a, b facts.Fact) int { return int(a.Used - b.Used) })
	return out
}

// knownFactsHeader opens the facts block in the system prompt.
const knownFactsHeader = "Known facts (vigil extracted these from tool results earlier in this conversation; " +
	"older results may be shortened to these facts, so call a tool again when you need an output in full):"

// Render is the facts as one compact block for the prompt, grouped by the
// call they came from, oldest first; "" when there are none.
func (k *Knowledge) Render() string {
	if k == nil || len(k.Facts) == 0 {
		return ""
	}
	type group struct {
		call  string
		turn  int
		first int64
		facts []facts.Fact
	}
	var groups []*group
	by := map[string]*group{}
	for _, f := range k.Facts {
		g, ok := by[f.Source+"\x00"+f.Call]
		if !ok {
			g = &group{call: f.Call, turn: f.Turn, first: f.Used}
			by[f.Source+"\x00"+f.Call] = g
			groups = append(groups, g)
		}
		g.facts = append(g.facts, f)
		g.first = min(g.first, f.Used)
		g.turn = max(g.turn, f.Turn)
	}
	slices.SortStableFunc(groups, func(a, b *group) int {
		if a.turn != b.turn {
			return a.turn - b.turn
		}
		return int(a.first - b.first)
	})
	var b strings.Builder
	b.WriteString(knownFactsHeader)
	for _, g := range groups {
		fmt.Fprintf(&b, "\nfrom %s (turn %d):", g.call, g.turn)
		slices.SortStableFunc(g.facts, func(a, b facts.Fact) int { return int(a.Used - b.Used) })
		for _, f := range g.facts {
			fmt.Fprintf(&b, "\n- %s: %s", f.Key, f.Value)
		}
	}
	return b.String()
}

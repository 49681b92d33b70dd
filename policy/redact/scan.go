package redact

import (
	"slices"
	"strings"
)

// scanner finds every rule trigger in one pass over a text, matching ASCII
// letters without regard to case, and reports the lines each rule must run
// on. It replaces a search per trigger: with some sixty triggers, one pass
// with a two-byte filter is several times faster on clean output, which is
// almost all output.
type scanner struct {
	// start marks the bytes (either case) a trigger starts with; pair
	// marks the first two lowered bytes (first<<8 | second) of a trigger.
	start [256]bool
	pair  [256 * 256 / 64]uint64
	// single marks the lowered bytes that are a whole trigger.
	single [256]bool
	// byFirst lists, per lowered first byte, the triggers starting with it.
	byFirst [256][]trigger
}

// trigger is one literal and the rules it belongs to.
type trigger struct {
	lit   string
	rules []int
}

func newScanner(rules []redactRule) *scanner {
	sc := &scanner{}
	idx := map[string]int{} // literal -> position in byFirst[lit[0]]
	for i := range rules {
		if rules[i].multiline {
			continue
		}
		for _, t := range rules[i].triggers {
			c := t[0]
			if k, ok := idx[t]; ok {
				tr := &sc.byFirst[c][k]
				if !slices.Contains(tr.rules, i) {
					tr.rules = append(tr.rules, i)
				}
				continue
			}
			idx[t] = len(sc.byFirst[c])
			sc.byFirst[c] = append(sc.byFirst[c], trigger{lit: t, rules: []int{i}})
			sc.start[c] = true
			if 'a' <= c && c <= 'z' {
				sc.start[c-('a'-'A')] = true
			}
			if len(t) > 1 {
				p := int(c)<<8 | int(t[1])
				sc.pair[p/64] |= 1 << (p % 64)
			} else {
				sc.single[c] = true
			}
		}
	}
	return sc
}

// lowerTable lowers ASCII letters and leaves every other byte alone, so
// offsets in s are offsets in its lowered form.
var lowerTable = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if 'A' <= i && i <= 'Z' {
			t[i] = byte(i + ('a' - 'A'))
		}
	}
	return t
}()

// hasPrefixFold reports whether s starts with lit (lowercase), ignoring
// ASCII case in s.
func hasPrefixFold(s string, lit string) bool {
	if len(s) < len(lit) {
		return false
	}
	for k := 0; k < len(lit); k++ {
		if lowerTable[s[k]] != lit[k] {
			return false
		}
	}
	return true
}

// next returns the offset of the next place at or after i where a trigger
// may start, or len(s).
func (sc *scanner) next(s string, i int) int {
	for ; i < len(s); i++ {
		if !sc.start[s[i]] {
			continue
		}
		c := lowerTable[s[i]]
		if i+1 < len(s) {
			p := uint(c)<<8 | uint(lowerTable[s[i+1]])
			if sc.pair[p>>6]&(1<<(p&63)) != 0 {
				return i
			}
		}
		if sc.single[c] {
			return i
		}
	}
	return len(s)
}

// any reports whether s holds any trigger, not counting the triggers of
// precise rules that their worth turns down.
func (sc *scanner) any(s string, rules []redactRule) bool {
	for i := sc.next(s, 0); i < len(s); i = sc.next(s, i+1) {
		for _, t := range sc.byFirst[lowerTable[s[i]]] {
			if !hasPrefixFold(s[i:], t.lit) {
				continue
			}
			for _, ri := range t.rules {
				if ru := &rules[ri]; !ru.precise || ru.worth(s, i, i+len(t.lit)) {
					return true
				}
			}
		}
	}
	return false
}

// lineMarks is one line and the rules to run on it, in rule order.
type lineMarks struct {
	start, end int // s[start:end] is the line, newline included
	rules      []int
}

// marks returns, in line order, the lines of s holding a trigger that is
// worth its rule's regexp.
func (sc *scanner) marks(s string, rules []redactRule) []lineMarks {
	var out []lineMarks
	cur := -1 // index in out of the last marked line, or -1
	for i := sc.next(s, 0); i < len(s); i = sc.next(s, i+1) {
		for _, t := range sc.byFirst[lowerTable[s[i]]] {
			if !hasPrefixFold(s[i:], t.lit) {
				continue
			}
			for _, ri := range t.rules {
				if cur >= 0 && i < out[cur].end && slices.Contains(out[cur].rules, ri) {
					continue
				}
				if w := rules[ri].worth; w != nil && !w(s, i, i+len(t.lit)) {
					continue
				}
				if cur < 0 || i >= out[cur].end {
					start := strings.LastIndexByte(s[:i], '\n') + 1
					end := len(s)
					if k := strings.IndexByte(s[i:], '\n'); k >= 0 {
						end = i + k + 1
					}
					out = append(out, lineMarks{start: start, end: end})
					cur = len(out) - 1
				}
				out[cur].rules = append(out[cur].rules, ri)
			}
		}
	}
	for k := range out {
		slices.Sort(out[k].rules)
	}
	return out
}

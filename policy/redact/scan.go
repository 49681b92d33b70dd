package redact

import (
	"iter"
	"slices"
	"strings"
)

// scanner finds every rule trigger in one pass over a text, matching ASCII
// letters without regard to case, and reports the lines each rule must run
// on. It replaces a search per trigger: with a hundred triggers, one pass
// with a two-byte filter is several times faster on clean output, which is
// almost all output.
type scanner struct {
	// pair marks the first two bytes (first<<8 | second) of a trigger,
	// in every mix of ASCII case: one bit test per byte of text finds the
	// places a trigger may start.
	pair [256 * 256 / 64]uint64
	// singles marks the bytes (either case) that are a trigger.
	singles [256]bool
	// single lists, per lowered byte, the triggers that are that byte.
	single [256][]trigger
	// byPair lists the triggers by a hash of their first two lowered
	// bytes, so a hit compares only the few that share them.
	byPair [pairBuckets][]trigger
}

// pairBuckets is the size of the scanner's pair index.
const pairBuckets = 1 << 10

func pairBucket(a, b byte) int { return (int(a)*31 + int(b)) & (pairBuckets - 1) }

// trigger is one literal and the rules it belongs to.
type trigger struct {
	lit   string
	rules []int
}

func newScanner(rules []redactRule) *scanner {
	sc := &scanner{}
	type at struct{ single, bucket, k int }
	idx := map[string]at{} // literal -> where it is
	for i := range rules {
		for _, t := range rules[i].triggers {
			if w, ok := idx[t]; ok {
				list := sc.byPair[w.bucket]
				if w.single >= 0 {
					list = sc.single[w.single]
				}
				if !slices.Contains(list[w.k].rules, i) {
					list[w.k].rules = append(list[w.k].rules, i)
				}
				continue
			}
			c := t[0]
			if len(t) == 1 {
				for _, x := range caseForms(c) {
					sc.singles[x] = true
				}
				idx[t] = at{single: int(c), k: len(sc.single[c])}
				sc.single[c] = append(sc.single[c], trigger{lit: t, rules: []int{i}})
				continue
			}
			for _, x := range caseForms(c) {
				for _, y := range caseForms(t[1]) {
					p := int(x)<<8 | int(y)
					sc.pair[p/64] |= 1 << (p % 64)
				}
			}
			b := pairBucket(c, t[1])
			idx[t] = at{single: -1, bucket: b, k: len(sc.byPair[b])}
			sc.byPair[b] = append(sc.byPair[b], trigger{lit: t, rules: []int{i}})
		}
	}
	return sc
}

// candidates returns the triggers that may start at s[i].
func (sc *scanner) candidates(s string, i int) (pairs, singles []trigger) {
	c := lowerTable[s[i]]
	if i+1 < len(s) {
		pairs = sc.byPair[pairBucket(c, lowerTable[s[i+1]])]
	}
	return pairs, sc.single[c]
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
	for ; i+1 < len(s); i++ {
		p := uint(s[i])<<8 | uint(s[i+1])
		if sc.pair[p>>6]&(1<<(p&63)) != 0 || sc.singles[s[i]] {
			return i
		}
	}
	if i < len(s) && sc.singles[s[i]] {
		return i
	}
	return len(s)
}

// caseForms returns c and, for a lower-case ASCII letter, its upper case.
func caseForms(c byte) []byte {
	if 'a' <= c && c <= 'z' {
		return []byte{c, c - ('a' - 'A')}
	}
	return []byte{c}
}

// hits yields, in order, every place a trigger starts in s and the
// trigger.
func (sc *scanner) hits(s string) iter.Seq2[int, *trigger] {
	return func(yield func(int, *trigger) bool) {
		for i := sc.next(s, 0); i < len(s); i = sc.next(s, i+1) {
			pairs, singles := sc.candidates(s, i)
			for _, list := range [2][]trigger{pairs, singles} {
				for k := range list {
					if hasPrefixFold(s[i:], list[k].lit) && !yield(i, &list[k]) {
						return
					}
				}
			}
		}
	}
}

// any reports whether s holds any trigger, not counting the triggers of
// precise rules that their worth turns down.
func (sc *scanner) any(s string, rules []redactRule) bool {
	for i, t := range sc.hits(s) {
		for _, ri := range t.rules {
			if ru := &rules[ri]; !ru.precise || ru.worth(s, i, i+len(t.lit)) {
				return true
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
	for i, t := range sc.hits(s) {
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
	for k := range out {
		slices.Sort(out[k].rules)
	}
	return out
}

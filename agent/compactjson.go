package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Tool results are JSON envelopes (SPEC T1), and what compaction does to
// one must leave it valid JSON: a cut goes inside a string value (where
// the marker is escaped like any text), never across the document. The
// tree below keeps a result's keys in their order, so a shortened result
// reads like the original with less in it.

// jnode is one JSON value.
type jnode struct {
	kind byte // 'o' object, 'a' array, 's' string, 'r' any other scalar (raw)
	keys []string
	kids []*jnode
	str  string
	raw  string
}

// parseJSONTree reads one JSON document; ok is false when s is not one.
func parseJSONTree(s string) (*jnode, bool) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	n, err := readNode(dec)
	if err != nil {
		return nil, false
	}
	if _, err := dec.Token(); err == nil {
		return nil, false // trailing data
	}
	return n, true
}

func readNode(dec *json.Decoder) (*jnode, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &jnode{kind: 'o'}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := readNode(dec)
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, k)
				n.kids = append(n.kids, v)
			}
			_, err := dec.Token()
			return n, err
		case '[':
			n := &jnode{kind: 'a'}
			for dec.More() {
				v, err := readNode(dec)
				if err != nil {
					return nil, err
				}
				n.kids = append(n.kids, v)
			}
			_, err := dec.Token()
			return n, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case string:
		return &jnode{kind: 's', str: t}, nil
	case json.Number:
		return &jnode{kind: 'r', raw: t.String()}, nil
	case bool:
		return &jnode{kind: 'r', raw: fmt.Sprint(t)}, nil
	case nil:
		return &jnode{kind: 'r', raw: "null"}, nil
	}
	return nil, fmt.Errorf("unexpected token %T", tok)
}

// encode writes the tree as compact JSON.
func (n *jnode) encode() string {
	var b bytes.Buffer
	n.write(&b)
	return b.String()
}

func writeString(b *bytes.Buffer, s string) {
	var tmp bytes.Buffer
	enc := json.NewEncoder(&tmp)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a Go string always encodes
	b.Write(bytes.TrimRight(tmp.Bytes(), "\n"))
}

func (n *jnode) write(b *bytes.Buffer) {
	switch n.kind {
	case 'o':
		b.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k)
			b.WriteByte(':')
			n.kids[i].write(b)
		}
		b.WriteByte('}')
	case 'a':
		b.WriteByte('[')
		for i, k := range n.kids {
			if i > 0 {
				b.WriteByte(',')
			}
			k.write(b)
		}
		b.WriteByte(']')
	case 's':
		writeString(b, n.str)
	default:
		b.WriteString(n.raw)
	}
}

// strings lists the tree's string values, for cutting.
func (n *jnode) strings(out []*jnode) []*jnode {
	switch n.kind {
	case 's':
		out = append(out, n)
	case 'o', 'a':
		for _, k := range n.kids {
			out = k.strings(out)
		}
	}
	return out
}

// longestArray returns the array with the most elements, or nil.
func (n *jnode) longestArray() *jnode {
	var best *jnode
	var walk func(*jnode)
	walk = func(x *jnode) {
		if x.kind == 'a' && (best == nil || len(x.kids) > len(best.kids)) {
			best = x
		}
		for _, k := range x.kids {
			walk(k)
		}
	}
	walk(n)
	return best
}

// minCutString is the shortest string value a cut leaves.
const minCutString = 120

// cutContent shortens a tool result to about keep bytes. A JSON result
// stays valid JSON with its structure and key order: the longest string
// values are cut in their middle (their start and end kept, where a log's
// news usually is), then the longest arrays lose middle elements, each cut
// marked. Text that is not JSON is cut in its middle. The result may stay
// somewhat over keep when the structure alone is larger.
func cutContent(s string, keep int) string {
	if len(s) <= keep {
		return s
	}
	root, ok := parseJSONTree(s)
	if !ok {
		return cutMiddle(s, keep)
	}
	out := root.encode()
	if strs := root.strings(nil); len(out) > keep && len(strs) > 0 {
		// Cut every string longer than a cap down to it, the cap the
		// largest that fits (a binary search): the longest values give
		// the most, and each is cut once, from its original.
		orig := make([]string, len(strs))
		longest := 0
		for i, n := range strs {
			orig[i] = n.str
			longest = max(longest, len(n.str))
		}
		cutTo := func(limit int) string {
			for i, n := range strs {
				n.str = orig[i]
				if len(orig[i]) > limit {
					n.str = cutMiddle(orig[i], limit)
				}
			}
			return root.encode()
		}
		lo, hi := minCutString, longest // the cap: lo may not fit, hi does not cut
		if fit := cutTo(lo); len(fit) > keep {
			out = fit // even the shortest cap is too long: arrays next
		} else {
			out = fit
			for hi-lo > 16 {
				mid := lo + (hi-lo)/2
				if try := cutTo(mid); len(try) <= keep {
					lo, out = mid, try
				} else {
					hi = mid
				}
			}
			out = cutTo(lo)
		}
	}
	for len(out) > keep {
		arr := root.longestArray()
		if arr == nil || len(arr.kids) <= 3 {
			break
		}
		n := len(arr.kids)
		head, tail := (n-1)/3, (n-1)/3
		if head+tail >= n-1 {
			break
		}
		marker := &jnode{kind: 's', str: fmt.Sprintf("[vigil cut %d of %d elements here to fit the context budget]", n-head-tail, n)}
		kids := append(append(append([]*jnode{}, arr.kids[:head]...), marker), arr.kids[n-tail:]...)
		arr.kids = kids
		out = root.encode()
	}
	return out
}

// Evidence: the short form of a structured result keeps the values an
// investigation reasons about. Leaves are ranked, and the least useful go
// first until the result fits.
const (
	rankNoise    = iota // notes, orderings, long prose
	rankTime            // timestamps and windows
	rankText            // other strings
	rankIdentity        // what a value is about: names, series, targets
	rankValue           // numbers
	rankState           // states, flags and errors: read first
)

// maxEvidenceBytes bounds the data of a shortened structured result.
const maxEvidenceBytes = 1600

// evidenceString is how long a string kept as evidence may be.
const evidenceString = 160

var (
	identityKeys = setOf("name", "series", "alertname", "id", "instance", "pod", "namespace", "service", "target",
		"resource", "node", "host", "container", "job", "unit", "metric", "query", "labels", "path", "deployment")
	stateKeys = setOf("status", "state", "phase", "health", "ready", "direction", "result", "severity", "reason",
		"error", "message", "exit_code", "code", "condition", "conditions", "type", "trend", "steady", "kind")
	noiseKeys = setOf("note", "ordered_by", "description", "hint", "help", "shown", "omitted_note", "generator_url",
		"runbook_url", "url", "html_url", "summary_note")
)

// rank ranks a scalar leaf under key.
func rank(key string, n *jnode) int {
	k := strings.ToLower(key)
	switch {
	case n.kind == 'r':
		switch {
		case isTimeKey(k):
			return rankTime
		case n.raw == "true" || n.raw == "false":
			return rankState
		}
		return rankValue
	case stateKeys[k] || strings.Contains(k, "error") || strings.Contains(k, "status"):
		return rankState
	case noiseKeys[k]:
		return rankNoise
	case isTimeKey(k) || looksLikeTime(n.str):
		return rankTime
	case identityKeys[k]:
		return rankIdentity
	case mayReportError(n.str) && reErrWord.MatchString(n.str):
		return rankState
	case len(n.str) > 2*evidenceString:
		return rankNoise
	}
	return rankText
}

func isTimeKey(k string) bool {
	return k == "at" || k == "start" || k == "end" || k == "step" || k == "time" || k == "timestamp" ||
		strings.HasSuffix(k, "_at") || strings.HasSuffix(k, "_time") || strings.HasSuffix(k, "_ts")
}

func looksLikeTime(s string) bool {
	if len(s) < 10 || len(s) > 40 {
		return false
	}
	for _, layout := range []string{time.RFC3339Nano, time.RFC3339, time.DateTime} {
		if _, err := time.Parse(layout, s); err == nil {
			return true
		}
	}
	return false
}

// evidenceOf returns data with only the leaves of at least the rank that
// makes it fit in maxEvidenceBytes, long strings clipped and long arrays
// cut; ok is false when even the values do not fit.
func evidenceOf(data *jnode) (*jnode, bool) {
	for _, floor := range []int{rankText, rankIdentity} {
		for _, maxElems := range []int{12, 6, 3} {
			pruned := prune(data, "", floor, maxElems)
			if pruned == nil {
				continue
			}
			if len(pruned.encode()) <= maxEvidenceBytes {
				return pruned, true
			}
		}
	}
	return nil, false
}

// prune copies n keeping the leaves ranked at least floor and at most
// maxElems elements of each array (the rest counted in a marker); nil
// when nothing is left.
func prune(n *jnode, key string, floor, maxElems int) *jnode {
	switch n.kind {
	case 'o':
		out := &jnode{kind: 'o'}
		for i, k := range n.keys {
			v := prune(n.kids[i], k, floor, maxElems)
			if v == nil {
				continue
			}
			out.keys = append(out.keys, k)
			out.kids = append(out.kids, v)
			if child := n.kids[i]; child.kind == 'a' && len(child.kids) > maxElems {
				// The array stays a list of its kind; what it left out
				// is counted beside it.
				out.keys = append(out.keys, k+"_not_shown")
				out.kids = append(out.kids, &jnode{kind: 'r', raw: fmt.Sprint(len(child.kids) - maxElems)})
			}
		}
		if len(out.kids) == 0 {
			return nil
		}
		return out
	case 'a':
		out := &jnode{kind: 'a'}
		for i, k := range n.kids {
			if i == maxElems {
				if key == "" { // the data itself: no object to count it in
					out.kids = append(out.kids, &jnode{kind: 's', str: fmt.Sprintf("… %d more not shown", len(n.kids)-maxElems)})
				}
				break
			}
			if v := prune(k, key, floor, maxElems); v != nil {
				out.kids = append(out.kids, v)
			}
		}
		if len(out.kids) == 0 {
			return nil
		}
		return out
	case 's':
		if rank(key, n) < floor {
			return nil
		}
		return &jnode{kind: 's', str: clip(oneLineKeepingNews(n.str), evidenceString)}
	}
	if rank(key, n) < floor {
		return nil
	}
	return n
}

// oneLineKeepingNews collapses whitespace: a multi-line value kept as
// evidence is read as one line.
func oneLineKeepingNews(s string) string {
	if !strings.ContainsAny(s, "\n\t") {
		return s
	}
	return oneLine(s)
}

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

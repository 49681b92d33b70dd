package agent

import (
	"fmt"
	"strings"

	"github.com/vigilops/vigil/agent/jsontree"
)

// Tool results are JSON envelopes (SPEC T1), and what compaction does to
// one must leave it valid JSON: a cut goes inside a string value (where
// the marker is escaped like any text), never across the document. The
// tree (package jsontree) keeps a result's keys in their order, so a
// shortened result reads like the original with less in it.

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
	root, ok := jsontree.Parse(s)
	if !ok {
		return cutMiddle(s, keep)
	}
	out := root.Encode()
	if strs := root.Strings(nil); len(out) > keep && len(strs) > 0 {
		// Cut every string longer than a cap down to it, the cap the
		// largest that fits (a binary search): the longest values give
		// the most, and each is cut once, from its original.
		orig := make([]string, len(strs))
		longest := 0
		for i, n := range strs {
			orig[i] = n.Str
			longest = max(longest, len(n.Str))
		}
		cutTo := func(limit int) string {
			for i, n := range strs {
				n.Str = orig[i]
				if len(orig[i]) > limit {
					n.Str = cutMiddle(orig[i], limit)
				}
			}
			return root.Encode()
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
		arr := root.LongestArray()
		if arr == nil || len(arr.Kids) <= 3 {
			break
		}
		n := len(arr.Kids)
		head, tail := (n-1)/3, (n-1)/3
		if head+tail >= n-1 {
			break
		}
		marker := &jsontree.Node{Kind: jsontree.String, Str: fmt.Sprintf("[vigil cut %d of %d elements here to fit the context budget]", n-head-tail, n)}
		kids := append(append(append([]*jsontree.Node{}, arr.Kids[:head]...), marker), arr.Kids[n-tail:]...)
		arr.Kids = kids
		out = root.Encode()
	}
	return out
}

// maxEvidenceBytes bounds the data of a shortened structured result.
const maxEvidenceBytes = 1600

// evidenceString is how long a string kept as evidence may be.
const evidenceString = 160

// evidenceOf returns data with only the leaves of at least the rank that
// makes it fit in maxEvidenceBytes, long strings clipped and long arrays
// cut; ok is false when even the values do not fit.
func evidenceOf(data *jsontree.Node) (*jsontree.Node, bool) {
	for _, floor := range []int{jsontree.Text, jsontree.Identity} {
		for _, maxElems := range []int{12, 6, 3} {
			pruned := prune(data, "", floor, maxElems)
			if pruned == nil {
				continue
			}
			if len(pruned.Encode()) <= maxEvidenceBytes {
				return pruned, true
			}
		}
	}
	return nil, false
}

// prune copies n keeping the leaves ranked at least floor and at most
// maxElems elements of each array (the rest counted in a marker); nil
// when nothing is left.
func prune(n *jsontree.Node, key string, floor, maxElems int) *jsontree.Node {
	switch n.Kind {
	case jsontree.Object:
		out := &jsontree.Node{Kind: jsontree.Object}
		for i, k := range n.Keys {
			v := prune(n.Kids[i], k, floor, maxElems)
			if v == nil {
				continue
			}
			out.Keys = append(out.Keys, k)
			out.Kids = append(out.Kids, v)
			if child := n.Kids[i]; child.Kind == jsontree.Array && len(child.Kids) > maxElems {
				// The array stays a list of its kind; what it left out
				// is counted beside it.
				out.Keys = append(out.Keys, k+"_not_shown")
				out.Kids = append(out.Kids, &jsontree.Node{Kind: jsontree.Scalar, Raw: fmt.Sprint(len(child.Kids) - maxElems)})
			}
		}
		if len(out.Kids) == 0 {
			return nil
		}
		return out
	case jsontree.Array:
		out := &jsontree.Node{Kind: jsontree.Array}
		for i, k := range n.Kids {
			if i == maxElems {
				if key == "" { // the data itself: no object to count it in
					out.Kids = append(out.Kids, &jsontree.Node{Kind: jsontree.String, Str: fmt.Sprintf("… %d more not shown", len(n.Kids)-maxElems)})
				}
				break
			}
			if v := prune(k, key, floor, maxElems); v != nil {
				out.Kids = append(out.Kids, v)
			}
		}
		if len(out.Kids) == 0 {
			return nil
		}
		return out
	case jsontree.String:
		if jsontree.Rank(key, n) < floor {
			return nil
		}
		return &jsontree.Node{Kind: jsontree.String, Str: clip(oneLineKeepingNews(n.Str), evidenceString)}
	}
	if jsontree.Rank(key, n) < floor {
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

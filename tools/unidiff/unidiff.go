// Package unidiff writes line diffs of text in the unified format that
// `diff -u` writes and `patch` applies, bounded so that a person can read
// one on an approval card.
//
// Lines are compared whole, newline included, so a last line without a
// newline differs from the same line with one, and the diff says so with
// `\ No newline at end of file` as diff -u does. The alignment is Myers'
// shortest edit script between the parts of the texts that differ, after
// their common beginning and end are set aside; when the texts differ by
// more than maxEdits lines the differing part is shown removed and then
// added whole (Diff.Coarse). Either way applying the diff to the old text
// gives the new text exactly. Texts may hold up to 2³¹-1 lines.
package unidiff

import (
	"fmt"
	"strings"
)

// Options shape and bound a diff.
type Options struct {
	// Context is how many unchanged lines surround each change (diff -U);
	// changes closer than twice that share a hunk. Negative means 0.
	Context int
	// MaxLines, MaxBytes and MaxHunks bound Text; 0 means no bound. A diff
	// cut short stops at a whole line and ends with a note of what was
	// left out.
	MaxLines, MaxBytes, MaxHunks int
	// OldName and NewName head the diff as its "---" and "+++" lines; the
	// diff has no such lines when both are empty.
	OldName, NewName string
}

// Diff is a unified diff of two texts.
type Diff struct {
	// Text is the diff, each line ending in a newline; "" when the texts
	// are equal. When the bounds cut it short it ends with a note line
	// that starts with "…" and says how many lines were left out.
	Text string
	// Hunks is how many hunks the whole diff has.
	Hunks int
	// Omitted is how many lines of the whole diff Text leaves out, and
	// OmittedHunks how many hunks it leaves out entirely; both 0 when Text
	// is the whole diff.
	Omitted, OmittedHunks int
	// Added and Removed count the lines the change adds and removes.
	Added, Removed int
	// Coarse reports that the texts differed by more lines than the
	// alignment searches, so the part between their common beginning and
	// end is shown removed, then added, as a whole.
	Coarse bool
}

// Equal reports whether the two texts were the same.
func (d Diff) Equal() bool { return d.Hunks == 0 }

// Cut reports whether the bounds left part of the diff out of Text.
func (d Diff) Cut() bool { return d.Omitted > 0 }

// NoNewline is the marker line after a line that ends its text without a
// newline.
const NoNewline = `\ No newline at end of file`

// maxEdits bounds the edit distance the alignment searches for: its memory
// grows with the square of the distance and its time with the distance
// times the length of the differing part.
const maxEdits = 1000

// maxWork bounds the comparisons of one alignment, so that a large change
// between long texts is shown coarse rather than computed slowly.
const maxWork = 20_000_000

// Unified returns the unified diff that turns old into new.
func Unified(old, new string, o Options) Diff {
	a, b := Lines(old), Lines(new)
	eds, coarse := align(a, b)
	d := Diff{Coarse: coarse}
	for _, e := range eds {
		switch e.op {
		case opDelete:
			d.Removed++
		case opInsert:
			d.Added++
		}
	}
	lines, starts := render(a, b, eds, max(o.Context, 0))
	d.Hunks = len(starts)
	if d.Hunks == 0 {
		return d
	}
	if o.OldName != "" || o.NewName != "" {
		head := []line{{text: "--- " + o.OldName}, {text: "+++ " + o.NewName}}
		lines = append(head, lines...)
		for i := range starts {
			starts[i] += 2
		}
	}
	d.Text, d.Omitted, d.OmittedHunks = bound(lines, starts, o)
	return d
}

// Lines splits s into lines, each keeping its newline; the last one lacks
// it when s does not end in one. An empty s has no lines.
func Lines(s string) []string {
	if s == "" {
		return nil
	}
	out := make([]string, 0, strings.Count(s, "\n")+1)
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

type op byte

const (
	opEqual op = iota
	opDelete
	opInsert
)

// edit is one step of the script: line a of old kept as line b of new,
// line a of old removed, or line b of new added.
type edit struct {
	op   op
	a, b int32
}

func mk(o op, a, b int) edit { return edit{o, int32(a), int32(b)} }

// align returns the edit script from a to b: every line of each, in order.
// coarse reports that the differing middle was too far apart to align.
func align(a, b []string) (eds []edit, coarse bool) {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	eds = make([]edit, 0, len(a)+len(b)-pre-suf)
	for i := range pre {
		eds = append(eds, mk(opEqual, i, i))
	}
	am, bm := a[pre:len(a)-suf], b[pre:len(b)-suf]
	mid, ok := myers(intern(am, bm))
	if !ok {
		coarse = true
		mid = make([]edit, 0, len(am)+len(bm))
		for i := range am {
			mid = append(mid, mk(opDelete, i, 0))
		}
		for j := range bm {
			mid = append(mid, mk(opInsert, 0, j))
		}
	}
	for _, e := range mid {
		e.a += int32(pre)
		e.b += int32(pre)
		eds = append(eds, e)
	}
	for i := range suf {
		eds = append(eds, mk(opEqual, len(a)-suf+i, len(b)-suf+i))
	}
	return eds, coarse
}

// intern numbers the distinct lines of a and b, so that the alignment
// compares integers.
func intern(a, b []string) ([]int32, []int32) {
	ids := make(map[string]int32, len(a)+len(b))
	num := func(ls []string) []int32 {
		out := make([]int32, len(ls))
		for i, l := range ls {
			id, ok := ids[l]
			if !ok {
				id = int32(len(ids))
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	return num(a), num(b)
}

// myers finds a shortest edit script from a to b (E. W. Myers, "An O(ND)
// Difference Algorithm and Its Variations", 1986). It gives up (ok false)
// past maxEdits edits or maxWork comparisons.
func myers(a, b []int32) (eds []edit, ok bool) {
	n, m := len(a), len(b)
	limit := min(n+m, maxEdits)
	// v[off+k] is the furthest x reached on diagonal k = x-y.
	off := limit + 1
	v := make([]int32, 2*limit+3)
	// trace[d] holds v for diagonals -d..d as it was before round d.
	var trace [][]int32
	work := 0
	for d := 0; d <= limit; d++ {
		trace = append(trace, append([]int32(nil), v[off-d:off+d+1]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = int(v[off+k+1]) // down: a line of b added
			} else {
				x = int(v[off+k-1]) + 1 // right: a line of a removed
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
				work++
			}
			v[off+k] = int32(x)
			work++
			if x >= n && y >= m {
				return backtrack(trace, n, m, d), true
			}
		}
		if work > maxWork {
			return nil, false
		}
	}
	return nil, false
}

// backtrack walks the rounds of myers back from (n, m) and returns the
// script in order.
func backtrack(trace [][]int32, n, m, dmax int) []edit {
	var rev []edit
	x, y := n, m
	for d := dmax; d > 0; d-- {
		w := trace[d]
		at := func(k int) int { return int(w[k+d]) }
		k := x - y
		var pk int
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := at(pk)
		py := px - pk
		// The move into this round's diagonal, then its snake.
		mx, my := px, py+1
		if pk == k-1 {
			mx, my = px+1, py
		}
		for x > mx && y > my {
			x--
			y--
			rev = append(rev, mk(opEqual, x, y))
		}
		if pk == k+1 {
			rev = append(rev, mk(opInsert, px, py))
		} else {
			rev = append(rev, mk(opDelete, px, py))
		}
		x, y = px, py
	}
	for x > 0 && y > 0 {
		x--
		y--
		rev = append(rev, mk(opEqual, x, y))
	}
	out := make([]edit, len(rev))
	for i, e := range rev {
		out[len(rev)-1-i] = e
	}
	return out
}

// line is one line of a diff: its mark (" ", "-", "+", or none) and its
// text without the newline.
type line struct{ mark, text string }

// render writes the hunks of the script with ctx lines of context: the
// diff's lines, and the index of each hunk's header among them.
func render(a, b []string, eds []edit, ctx int) (lines []line, starts []int) {
	// pos[i] is how many lines of a and of b come before edit i.
	type pos struct{ a, b int }
	at := make([]pos, len(eds)+1)
	for i, e := range eds {
		at[i+1] = at[i]
		if e.op != opInsert {
			at[i+1].a++
		}
		if e.op != opDelete {
			at[i+1].b++
		}
	}
	i, prevEnd := 0, 0
	for i < len(eds) {
		if eds[i].op == opEqual {
			i++
			continue
		}
		start := max(i-ctx, prevEnd)
		j := i
		var end int
		for {
			for j < len(eds) && eds[j].op != opEqual {
				j++
			}
			r := j
			for r < len(eds) && eds[r].op == opEqual {
				r++
			}
			if r == len(eds) || r-j > 2*ctx {
				end = min(j+ctx, r)
				break
			}
			j = r
		}
		starts = append(starts, len(lines))
		lines = append(lines, line{text: "@@ -" + span(at[start].a, at[end].a-at[start].a) + " +" + span(at[start].b, at[end].b-at[start].b) + " @@"})
		for _, e := range eds[start:end] {
			var mark, text string
			switch e.op {
			case opEqual:
				mark, text = " ", a[e.a]
			case opDelete:
				mark, text = "-", a[e.a]
			default:
				mark, text = "+", b[e.b]
			}
			if body, ok := strings.CutSuffix(text, "\n"); ok {
				lines = append(lines, line{mark, body})
			} else {
				lines = append(lines, line{mark, text}, line{text: NoNewline})
			}
		}
		i, prevEnd = end, end
	}
	return lines, starts
}

// span is a hunk's range as diff -u writes it: the first line and the
// count, the count left out when it is 1, and for an empty range the line
// before it.
func span(before, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", before)
	case 1:
		return fmt.Sprint(before + 1)
	default:
		return fmt.Sprintf("%d,%d", before+1, n)
	}
}

// bound joins lines into the diff's text within o's bounds, cutting at a
// whole line and noting what was left out.
func bound(lines []line, starts []int, o Options) (text string, omitted, omittedHunks int) {
	var sb strings.Builder
	hunk := 0 // hunks whose header is written
	for i, l := range lines {
		header := hunk < len(starts) && i == starts[hunk]
		if (header && o.MaxHunks > 0 && hunk >= o.MaxHunks) ||
			(o.MaxLines > 0 && i >= o.MaxLines) || (o.MaxBytes > 0 && sb.Len()+len(l.mark)+len(l.text)+1 > o.MaxBytes) {
			return cut(&sb, len(lines)-i, len(starts)-hunk)
		}
		if header {
			hunk++
		}
		sb.WriteString(l.mark)
		sb.WriteString(l.text)
		sb.WriteByte('\n')
	}
	return sb.String(), 0, 0
}

// cut ends a diff cut short with a note of what was left out.
func cut(sb *strings.Builder, lines, hunks int) (string, int, int) {
	note := fmt.Sprintf("… %d more %s of the diff not shown", lines, plural(lines, "line", "lines"))
	if hunks > 0 {
		note += fmt.Sprintf(" (%d more %s)", hunks, plural(hunks, "hunk", "hunks"))
	}
	sb.WriteString(note + "\n")
	return sb.String(), lines, hunks
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

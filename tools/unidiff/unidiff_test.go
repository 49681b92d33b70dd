package unidiff

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// apply is patch(1) for one file, written from the format's definition: it
// applies a unified diff to old, checking every context and removed line
// (newline included), and returns the new text.
func apply(old, diff string) (string, error) {
	src := Lines(old)
	var out strings.Builder
	next := 0 // first line of src not yet used
	dl := Lines(diff)
	type entry struct {
		kind byte
		text string // with its newline, unless a marker followed
	}
	for i := 0; i < len(dl); {
		h := strings.TrimSuffix(dl[i], "\n")
		if strings.HasPrefix(h, "--- ") || strings.HasPrefix(h, "+++ ") {
			i++
			continue
		}
		var oldStart, oldN, newStart, newN int
		if !parseHeader(h, &oldStart, &oldN, &newStart, &newN) {
			return "", fmt.Errorf("line %d: not a hunk header: %q", i+1, h)
		}
		i++
		var es []entry
		gotOld, gotNew := 0, 0
		for i < len(dl) && (gotOld < oldN || gotNew < newN || strings.HasPrefix(dl[i], NoNewline)) {
			l := strings.TrimSuffix(dl[i], "\n")
			i++
			if l == NoNewline {
				if len(es) == 0 || !strings.HasSuffix(es[len(es)-1].text, "\n") {
					return "", errors.New("a no-newline marker after no line")
				}
				es[len(es)-1].text = strings.TrimSuffix(es[len(es)-1].text, "\n")
				continue
			}
			if l == "" || !strings.ContainsRune(" -+", rune(l[0])) {
				return "", fmt.Errorf("diff line %q has no +, - or space", l)
			}
			es = append(es, entry{l[0], l[1:] + "\n"})
			if l[0] != '+' {
				gotOld++
			}
			if l[0] != '-' {
				gotNew++
			}
		}
		if gotOld != oldN || gotNew != newN {
			return "", fmt.Errorf("hunk %q has %d old and %d new lines", h, gotOld, gotNew)
		}
		from := oldStart - 1
		if oldN == 0 {
			from = oldStart
		}
		if from < next || from > len(src) {
			return "", fmt.Errorf("hunk %q starts at old line %d, out of order or past the end", h, from+1)
		}
		for _, l := range src[next:from] {
			out.WriteString(l)
		}
		next = from
		for _, e := range es {
			if e.kind != '+' {
				if next >= len(src) || src[next] != e.text {
					return "", fmt.Errorf("old line %d differs from the diff's %q", next+1, e.text)
				}
				next++
			}
			if e.kind != '-' {
				out.WriteString(e.text)
			}
		}
	}
	for _, l := range src[next:] {
		out.WriteString(l)
	}
	return out.String(), nil
}

func parseHeader(h string, oldStart, oldN, newStart, newN *int) bool {
	rest, ok := strings.CutPrefix(h, "@@ -")
	if !ok {
		return false
	}
	rest, ok = strings.CutSuffix(rest, " @@")
	if !ok {
		return false
	}
	o, n, ok := strings.Cut(rest, " +")
	return ok && parseRange(o, oldStart, oldN) && parseRange(n, newStart, newN)
}

func parseRange(s string, start, n *int) bool {
	a, b, has := strings.Cut(s, ",")
	var err error
	if *start, err = strconv.Atoi(a); err != nil {
		return false
	}
	*n = 1
	if has {
		if *n, err = strconv.Atoi(b); err != nil {
			return false
		}
	}
	return true
}

// checkApplies asserts the central property: the unbounded diff of old and
// new, applied to old, gives new; and equal texts have no diff.
func checkApplies(t *testing.T, old, new string, ctx int) Diff {
	t.Helper()
	d := Unified(old, new, Options{Context: ctx, OldName: "a", NewName: "b"})
	if d.Cut() {
		t.Fatalf("an unbounded diff was cut: %+v", d)
	}
	if (old == new) != d.Equal() || (old == new) != (d.Text == "") {
		t.Fatalf("old == new is %v, diff %q", old == new, d.Text)
	}
	got, err := apply(old, d.Text)
	if err != nil {
		t.Fatalf("diff does not apply: %v\nold %q\nnew %q\ndiff:\n%s", err, old, new, d.Text)
	}
	if got != new {
		t.Fatalf("diff applied gives %q, want %q\ndiff:\n%s", got, new, d.Text)
	}
	return d
}

// Golden cases, each checked against what GNU diff -u writes for the same
// texts (headers aside).
func TestUnifiedGolden(t *testing.T) {
	tests := []struct {
		name, old, new string
		want           string
	}{
		{"one line changed in the middle",
			"1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nfive\n6\n7\n8\n9\n",
			"@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n"},
		{"a new file",
			"", "a\nb\n",
			"@@ -0,0 +1,2 @@\n+a\n+b\n"},
		{"a file emptied",
			"a\nb\n", "",
			"@@ -1,2 +0,0 @@\n-a\n-b\n"},
		{"an append, with the tail as context",
			"l1\nl2\nl3\nl4\nl5\n", "l1\nl2\nl3\nl4\nl5\n*/5 * * * * root /x\n",
			"@@ -3,3 +3,4 @@\n l3\n l4\n l5\n+*/5 * * * * root /x\n"},
		{"an append to a file without a final newline",
			"a\nb", "a\nbc\n",
			"@@ -1,2 +1,2 @@\n a\n-b\n" + NoNewline + "\n+bc\n"},
		{"only the final newline added",
			"a", "a\n",
			"@@ -1 +1 @@\n-a\n" + NoNewline + "\n+a\n"},
		{"two far changes, two hunks",
			"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "one\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\ntwelve\n",
			"@@ -1,4 +1,4 @@\n-1\n+one\n 2\n 3\n 4\n@@ -9,4 +9,4 @@\n 9\n 10\n 11\n-12\n+twelve\n"},
		{"two near changes share a hunk",
			"1\n2\n3\n4\n5\n6\n7\n8\n", "one\n2\n3\n4\n5\n6\n7\neight\n",
			"@@ -1,8 +1,8 @@\n-1\n+one\n 2\n 3\n 4\n 5\n 6\n 7\n-8\n+eight\n"},
		{"a line inserted at the top",
			"b\nc\n", "a\nb\nc\n",
			"@@ -1,2 +1,3 @@\n+a\n b\n c\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := checkApplies(t, tt.old, tt.new, 3)
			got := strings.TrimPrefix(d.Text, "--- a\n+++ b\n")
			if got != tt.want {
				t.Errorf("diff:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestUnifiedCounts(t *testing.T) {
	d := Unified("a\nb\nc\n", "a\nB\nc\nd\n", Options{Context: 1})
	if d.Added != 2 || d.Removed != 1 || d.Hunks != 1 || d.Coarse {
		t.Errorf("counts %+v, want 2 added, 1 removed, 1 hunk", d)
	}
	if strings.HasPrefix(d.Text, "---") {
		t.Errorf("a diff without names has a header: %q", d.Text)
	}
}

// The diff found is a shortest one: on texts whose shortest edit script is
// known, it removes and adds no more lines than needed.
func TestUnifiedIsMinimal(t *testing.T) {
	old := "a\nb\nc\na\nb\nb\na\n" // Myers' own example: ABCABBA → CBABAC, 5 edits
	new := "c\nb\na\nb\na\nc\n"
	d := checkApplies(t, old, new, 3)
	if d.Added+d.Removed != 5 {
		t.Errorf("%d edits, want 5:\n%s", d.Added+d.Removed, d.Text)
	}
}

// Property: random texts drawn from a small alphabet of lines (so they share
// many lines) always diff to something that applies, at every context size.
func TestUnifiedAppliesRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	text := func() string {
		var b strings.Builder
		for range r.IntN(30) {
			b.WriteString([]string{"a", "b", "c", "", "d e", "\t"}[r.IntN(6)])
			b.WriteByte('\n')
		}
		if r.IntN(3) == 0 {
			b.WriteString("tail")
		}
		return b.String()
	}
	for range 3000 {
		checkApplies(t, text(), text(), r.IntN(5))
	}
}

// A change too scattered to align within the bound is shown coarse, and
// still applies.
func TestUnifiedCoarse(t *testing.T) {
	var a, b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&a, "old %d\n", i)
		fmt.Fprintf(&b, "new %d\n", i)
		if i%2 == 0 {
			fmt.Fprintf(&a, "same %d\n", i)
			fmt.Fprintf(&b, "same %d\n", i)
		}
	}
	d := checkApplies(t, "head\n"+a.String()+"tail\n", "head\n"+b.String()+"tail\n", 3)
	if !d.Coarse || d.Hunks != 1 || !strings.HasPrefix(strings.TrimPrefix(d.Text, "--- a\n+++ b\n"), "@@ -1,") {
		t.Errorf("coarse %v, %d hunks, starts %q", d.Coarse, d.Hunks, d.Text[:40])
	}
}

// Bounds cut at a whole line, say how much is left out, and never leave a
// prefix that is not the whole diff's.
func TestUnifiedBounds(t *testing.T) {
	var a, b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&a, "line %d\n", i)
		if i%10 == 0 {
			fmt.Fprintf(&b, "changed %d\n", i)
		} else {
			fmt.Fprintf(&b, "line %d\n", i)
		}
	}
	whole := Unified(a.String(), b.String(), Options{Context: 3})
	total := len(Lines(whole.Text))
	if whole.Hunks != 20 {
		t.Fatalf("%d hunks, want 20", whole.Hunks)
	}
	for _, o := range []Options{{MaxLines: 25}, {MaxBytes: 300}, {MaxHunks: 3}, {MaxLines: 1}, {MaxBytes: 5}} {
		o.Context = 3
		d := Unified(a.String(), b.String(), o)
		if !d.Cut() {
			t.Fatalf("%+v: not cut", o)
		}
		shown := d.Text[:strings.LastIndex(strings.TrimSuffix(d.Text, "\n"), "\n")+1]
		if !strings.HasPrefix(whole.Text, shown) {
			t.Fatalf("%+v: the shown part is not the diff's beginning:\n%s", o, d.Text)
		}
		note := strings.TrimPrefix(d.Text, shown)
		if want := fmt.Sprintf("… %d more lines of the diff not shown", d.Omitted); !strings.HasPrefix(note, want) {
			t.Errorf("%+v: note %q, want it to start %q", o, note, want)
		}
		if got := len(Lines(shown)) + d.Omitted; got != total {
			t.Errorf("%+v: shown + omitted = %d lines, the diff has %d", o, got, total)
		}
		switch {
		case o.MaxLines > 0 && len(Lines(shown)) > o.MaxLines,
			o.MaxBytes > 0 && len(shown) > o.MaxBytes,
			o.MaxHunks > 0 && strings.Count(shown, "\n@@")+btoi(strings.HasPrefix(shown, "@@")) > o.MaxHunks:
			t.Errorf("%+v: bound exceeded: %d lines, %d bytes", o, len(Lines(shown)), len(shown))
		}
		if o.MaxHunks == 3 && (d.OmittedHunks != 17 || !strings.Contains(note, "(17 more hunks)")) {
			t.Errorf("hunk bound: %d hunks omitted, note %q; want 17", d.OmittedHunks, note)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Fuzz the property: any two texts diff to something that applies.
func FuzzUnified(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nc\nd\n", uint8(3))
	f.Add("", "x", uint8(0))
	f.Add("x", "", uint8(1))
	f.Add("a\r\nb\n", "a\nb\r\n", uint8(2))
	f.Add("no newline", "no newline\n", uint8(3))
	f.Add("\n\n\n", "\n", uint8(1))
	f.Fuzz(func(t *testing.T, old, new string, ctx uint8) {
		checkApplies(t, old, new, int(ctx%6))
	})
}

// A config file at the read cap (64 KiB) with a few lines changed: what a
// typical file_edit card diffs.
func BenchmarkUnifiedConfig64K(b *testing.B) {
	var old, new strings.Builder
	for i := 0; old.Len() < 64<<10; i++ {
		fmt.Fprintf(&old, "setting_%d = value %d\n", i, i)
		if i%500 == 7 {
			fmt.Fprintf(&new, "setting_%d = changed %d\n", i, i)
		} else {
			fmt.Fprintf(&new, "setting_%d = value %d\n", i, i)
		}
	}
	o := Options{Context: 3, MaxLines: 1500, MaxBytes: 64 << 10, MaxHunks: 100}
	for b.Loop() {
		Unified(old.String(), new.String(), o)
	}
}

// The worst case the bounds allow: a 64 KiB file replaced by 1 MiB of
// unrelated lines, which the alignment gives up on and shows coarse.
func BenchmarkUnifiedWorstCase(b *testing.B) {
	var old, new strings.Builder
	for i := 0; old.Len() < 64<<10; i++ {
		fmt.Fprintf(&old, "old line %d\n", i)
	}
	for i := 0; new.Len() < 1<<20; i++ {
		fmt.Fprintf(&new, "new line %d\n", i)
	}
	o := Options{Context: 3, MaxLines: 1500, MaxBytes: 64 << 10, MaxHunks: 100}
	for b.Loop() {
		Unified(old.String(), new.String(), o)
	}
}

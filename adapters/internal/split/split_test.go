package split

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// escaped measures a line the way an HTML-escaping platform would:
// &, < and > cost five bytes.
func escaped(line string, _ LineKind) int {
	n := 0
	for _, r := range line {
		switch r {
		case '&', '<', '>':
			n += 5
		default:
			n += utf8.RuneLen(r)
		}
	}
	return n
}

func measureText(t *testing.T, text string, m Measure) int {
	t.Helper()
	n := 0
	for i, line := range strings.Split(text, "\n") {
		if i > 0 {
			n++
		}
		n += m(line, Text)
	}
	return n
}

// checkPieces is the splitter's contract.
func checkPieces(t *testing.T, in string, ps []Piece, limit int, m Measure) {
	t.Helper()
	if got := Join(ps); got != in {
		t.Fatalf("Join(Split(x)) != x\n got: %q\nwant: %q", got, in)
	}
	for i, p := range ps {
		txt := p.Text()
		if n := measureText(t, txt, m); n > limit {
			t.Errorf("piece %d measures %d > %d: %q", i, n, limit, txt)
		}
		if !Balanced(txt) {
			t.Errorf("piece %d leaves a code fence open: %q", i, txt)
		}
		if !utf8.ValidString(p.Body) && utf8.ValidString(in) {
			t.Errorf("piece %d cuts a character: %q", i, p.Body)
		}
	}
	// No entity and no link is cut: no piece boundary falls inside one,
	// unless the span alone is longer than half a piece.
	var cuts []int
	off := 0
	for i, p := range ps {
		off += len(p.Sep)
		if i > 0 {
			cuts = append(cuts, off)
		}
		off += len(p.Body)
	}
	for _, sp := range protected(in) {
		if m(in[sp[0]:sp[1]], Text) > limit/2 {
			continue
		}
		for _, c := range cuts {
			if sp[0] < c && c < sp[1] {
				t.Errorf("span %q was cut at %d", in[sp[0]:sp[1]], c)
			}
		}
	}
}

func TestSplitShortTextIsOnePiece(t *testing.T) {
	ps := Split("hello\nworld", Options{Limit: 100})
	if len(ps) != 1 || ps[0].Text() != "hello\nworld" {
		t.Fatalf("got %+v", ps)
	}
}

func TestSplitClosesAndReopensFences(t *testing.T) {
	in := "intro\n```go\n" + strings.Repeat("fmt.Println(1)\n", 20) + "```\nafter"
	ps := Split(in, Options{Limit: 80})
	checkPieces(t, in, ps, 80, func(s string, _ LineKind) int { return utf8.RuneCountInString(s) })
	if len(ps) < 3 {
		t.Fatalf("want several pieces, got %d", len(ps))
	}
	if ps[1].Open != "```go" {
		t.Errorf("second piece reopens %q, want the original opening line", ps[1].Open)
	}
	if ps[0].Close != "```" {
		t.Errorf("first piece closes with %q", ps[0].Close)
	}
}

func TestSplitNeverCutsEntitiesOrLinks(t *testing.T) {
	link := "[the runbook](https://runbooks.example.org/db/failover?step=3)"
	in := strings.Repeat("word &amp; more &lt;tag&gt; ", 20) + link + strings.Repeat(" tail", 30)
	for limit := 40; limit < 200; limit += 7 {
		checkPieces(t, in, Split(in, Options{Limit: limit, Measure: escaped}), limit, escaped)
	}
}

func TestSplitLongLineInsideFence(t *testing.T) {
	in := "```\n" + strings.Repeat("x<y ", 500) + "\n```"
	ps := Split(in, Options{Limit: 300, Measure: escaped})
	checkPieces(t, in, ps, 300, escaped)
	for i, p := range ps[1:] {
		if p.Sep != "" && p.Sep != "\n" {
			t.Errorf("piece %d separator %q", i+1, p.Sep)
		}
	}
}

func TestTablesBecomeAlignedCodeBlocks(t *testing.T) {
	in := "Disks:\n\n| host | used |\n|---|--:|\n| web-1 | 91% |\n| db | 7% |\n\nend"
	got := Tables(in)
	want := "Disks:\n\n```\nhost  | used\n----- | ----\nweb-1 | 91%\ndb    | 7%\n```\n\nend"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	// Tables inside code blocks are left alone.
	code := "```\n| a | b |\n|---|---|\n```"
	if Tables(code) != code {
		t.Errorf("a table in a code block was rewritten: %q", Tables(code))
	}
}

func TestImagesAsLinks(t *testing.T) {
	in := "see ![graph](https://x.example/g.png) and ![](https://x.example/h.png)\n```\n![kept](a)\n```"
	want := "see [image: graph](https://x.example/g.png) and [image](https://x.example/h.png)\n```\n![kept](a)\n```"
	if got := ImagesAsLinks(in); got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

// randomMarkdown builds Markdown with fences, entities, links, tables and
// long lines from a seeded source.
func randomMarkdown(r *rand.Rand) string {
	atoms := []string{
		"word", "other", "&amp;", "&lt;", "<b>", "a<b>c", "&#169;", "*bold*", "`code`",
		"[link](https://example.org/a?b=c&d=e)", "<https://example.com/x>", "https://bare.example/path?q=1",
		"![img](https://img.example/p.png)", "é", "日本", "😀", "|", "**", "~~s~~", "\t",
	}
	var b strings.Builder
	lines := 1 + r.IntN(60)
	for i := 0; i < lines; i++ {
		switch r.IntN(10) {
		case 0:
			b.WriteString([]string{"```", "```sh", "~~~", "````", "   ```"}[r.IntN(5)])
		case 1:
			b.WriteString("| a | b |\n|---|---|\n| 1 | 2 |")
		case 2:
			b.WriteString("")
		default:
			words := r.IntN(20)
			if r.IntN(8) == 0 {
				words = 50 + r.IntN(400)
			}
			for w := 0; w < words; w++ {
				if w > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(atoms[r.IntN(len(atoms))])
			}
		}
		if i < lines-1 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func TestSplitProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 23))
	for i := 0; i < 200; i++ {
		in := randomMarkdown(r)
		limit := 60 + r.IntN(600)
		ps := Split(in, Options{Limit: limit, Measure: escaped})
		checkPieces(t, in, ps, limit, escaped)
		if t.Failed() {
			t.Fatalf("input %d (limit %d): %q", i, limit, in)
		}
	}
}

func FuzzSplit(f *testing.F) {
	f.Add("```\na\n```", 40)
	f.Add(strings.Repeat("&amp;&lt; ", 30), 33)
	f.Add("[x](https://e.org/"+strings.Repeat("y", 100)+")", 50)
	f.Fuzz(func(t *testing.T, in string, limit int) {
		if limit < 40 || limit > 5000 || !utf8.ValidString(in) {
			return
		}
		ps := Split(in, Options{Limit: limit, Measure: escaped})
		if Join(ps) != in {
			t.Fatalf("Join(Split(x)) != x for %q", in)
		}
		for _, p := range ps {
			if n := measureText(t, p.Text(), escaped); n > limit {
				t.Fatalf("piece measures %d > %d", n, limit)
			}
			if !Balanced(p.Text()) {
				t.Fatalf("unbalanced piece %q", p.Text())
			}
		}
	})
}

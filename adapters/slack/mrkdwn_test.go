package slack

import (
	"strings"
	"testing"
)

func TestMarkdownToMrkdwn(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"bold", "**bold** text", "*bold* text"},
		{"underscore bold", "__x__", "_x_"},
		{"italic", "an *italic* word", "an _italic_ word"},
		{"bold and italic", "**a *b* c**", "*a _b_ c*"},
		{"arithmetic stays", "2*3*4 = 24", "2*3*4 = 24"},
		{"strike", "~~old~~ new", "~old~ new"},
		{"link", "see [docs](https://x.io/a?b=1&c=2)", "see <https://x.io/a?b=1&c=2|docs> (x.io)"},
		{"bare link text", "[https://x.io](https://x.io)", "<https://x.io>"},
		{"non-http link", "[run](javascript:alert(1))", "run (javascript:alert(1))"},
		{"autolink", "<https://x.io/path>", "<https://x.io/path>"},
		{"heading", "# Heading", "*Heading*"},
		{"heading with bold", "## **Root cause**", "*Root cause*"},
		{"bullets", "- one\n* two\n+ three", "• one\n• two\n• three"},
		{"nested bullets", "- one\n  - sub", "• one\n  • sub"},
		{"tasks", "- [ ] todo\n- [x] done", "• ☐ todo\n• ☑ done"},
		{"ordered", "1. first\n2) second", "1. first\n2. second"},
		{"escape", "a < b && c > d", "a &lt; b &amp;&amp; c &gt; d"},
		{"no mentions", "<!channel> <@U123>", "&lt;!channel&gt; &lt;@U123&gt;"},
		{"inline code kept", "run `rm **x**` now", "run `rm **x**` now"},
		{"inline code escaped", "`a<b`", "`a&lt;b`"},
		{"fence", "```go\nif a < b {\n\t**x**\n}\n```", "```\nif a &lt; b {\n\t**x**\n}\n```"},
		{"unterminated fence", "```\ncode", "```\ncode\n```"},
		{"quote", "> quoted **bold**", "> quoted *bold*"},
		{"rule", "---", "──────────"},
		{"private-use runes dropped", "a\uE002x\uE002b", "axb"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := markdownToMrkdwn(c.in); got != c.want {
				t.Errorf("markdownToMrkdwn(%q)\n got %q\nwant %q", c.in, got, c.want)
			}
		})
	}
}

func TestCodeBlockCannotBeClosedEarly(t *testing.T) {
	got := codeBlock("a ``` b <x>")
	if strings.Count(got, "```") != 2 || !strings.Contains(got, "&lt;x&gt;") {
		t.Errorf("codeBlock = %q", got)
	}
}

func FuzzMarkdownToMrkdwn(f *testing.F) {
	for _, s := range []string{"**a**", "[x](https://y)", "```\nz\n```", "# h", "- [ ] t", "<@U1> & <!here>", "*a* _b_ ~~c~~"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := markdownToMrkdwn(in)
		// Nothing the model writes may become a Slack mention.
		if strings.Contains(out, "<!") || strings.Contains(out, "<@") || strings.Contains(out, "<#") {
			t.Errorf("mention-like output %q from %q", out, in)
		}
		for _, m := range renderAnswer(in, "", 0).msgs {
			checkSections(t, m)
		}
	})
}

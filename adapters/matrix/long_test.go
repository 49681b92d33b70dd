package matrix

import (
	"encoding/json"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"maunium.net/go/mautrix/event"

	"github.com/vigilops/vigil/adapters/internal/split"
	"github.com/vigilops/vigil/bot"
)

// checkEvent asserts an event the homeserver accepts and a person can read:
// within the size limit, code blocks closed in the body, HTML that passes
// the sanitiser unchanged (nothing outside the allowlist).
func checkEvent(t *testing.T, c *event.MessageEventContent) {
	t.Helper()
	raw, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) > maxEventContent {
		t.Errorf("event content is %d bytes > %d", len(raw), maxEventContent)
	}
	if !split.Balanced(c.Body) {
		t.Errorf("body leaves a code block open: …%q", c.Body[max(0, len(c.Body)-80):])
	}
	if c.Format == event.FormatHTML {
		if again := sanitizeHTML(c.FormattedBody); again != c.FormattedBody {
			t.Errorf("formatted body is not sanitiser-clean")
		}
		for _, bad := range []string{"<img", "<script", "javascript:", "data:", "onerror", "<style", "<iframe"} {
			if tagHas(strings.ToLower(c.FormattedBody), bad) {
				t.Errorf("formatted body carries %q", bad)
			}
		}
	}
}

func TestMatrixAnswerSplitProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 65536))
	atoms := []string{"word", "<b>", "a<b>c", "&amp;", "&", "**bold**", "`code`", "\"q\"", "日本", "😀",
		"[docs](https://docs.example.org/a?b=c&d=e)", "[x](javascript:alert(1))", "![img](https://img.example/p.png)",
		"<img src=https://x.example/y.png>", "<script>alert(1)</script>"}
	for i := 0; i < 12; i++ {
		var b strings.Builder
		for l := 0; l < 400+r.IntN(2000); l++ {
			switch r.IntN(15) {
			case 0:
				b.WriteString("```sh")
			case 1:
				b.WriteString("```")
			case 2:
				b.WriteString("| a | b |\n|---|---|\n| <1> | & |")
			default:
				for w := r.IntN(30); w > 0; w-- {
					b.WriteString(atoms[r.IntN(len(atoms))] + " ")
				}
			}
			b.WriteByte('\n')
		}
		md := b.String()
		ans := renderAnswer(md, "run", 1<<30)
		if ans.attach != "" {
			t.Fatal("attached without a cap")
		}
		var bodies []string
		for _, c := range ans.events {
			checkEvent(t, c)
			bodies = append(bodies, c.Body)
		}
		// Every line of the (normalised) answer is in some event, in
		// order.
		all := strings.Join(bodies, "\n")
		at := 0
		for _, line := range strings.Split(normaliseMarkdown(md), "\n") {
			if strings.TrimSpace(line) == "" {
				continue
			}
			k := strings.Index(all[at:], line)
			if k < 0 {
				t.Fatalf("answer %d lost the line %q", i, line)
			}
			at += k
		}
		if t.Failed() {
			t.FailNow()
		}
	}
}

func TestMatrixAnswerHTMLIsSanitised(t *testing.T) {
	md := "Click [here](javascript:alert(document.cookie)) or [there](data:text/html,<script>x</script>) " +
		"or [ok](https://ok.example/a).\n\n![tracker](https://tracker.example/p.png)\n\n<img src=\"https://x.example/y.png\">\n\n" +
		"```go\nfmt.Println(\"<b>\")\n```"
	c := renderReply(bot.Reply{Kind: bot.ReplyAnswer, Text: md})
	checkEvent(t, c)
	h := c.FormattedBody
	if !strings.Contains(h, `<a href="https://ok.example/a">ok</a>`) {
		t.Errorf("the safe link is gone: %s", h)
	}
	if !strings.Contains(h, `<a href="https://tracker.example/p.png">image: tracker</a>`) {
		t.Errorf("the image is not a link: %s", h)
	}
	if !strings.Contains(h, `<code class="language-go">`) {
		t.Errorf("the code block lost its language: %s", h)
	}
}

func TestMatrixTablesAreCodeBlocks(t *testing.T) {
	c := renderReply(bot.Reply{Kind: bot.ReplyAnswer, Text: "| host | disk |\n|---|---|\n| web-1 | 91% |\n| db | 7% |"})
	if !strings.Contains(c.FormattedBody, "<pre><code>host  | disk\n----- | ----\nweb-1 | 91%\ndb    | 7%\n</code></pre>") {
		t.Errorf("table not shown aligned in a code block: %s", c.FormattedBody)
	}
	if strings.Contains(c.FormattedBody, "<table") {
		t.Error("table still rendered as HTML")
	}
}

func TestMatrixLinksBounded(t *testing.T) {
	long := "https://grafana.example/d/x?" + strings.Repeat("var-host=web&", 500)
	c := renderWithLinks(bot.Reply{Kind: bot.ReplyNotice, Text: "FIRING", Links: []bot.Link{
		{Text: "dashboard", URL: long}, {Text: "runbook", URL: "https://runbooks.example/db"}, {Text: "x", URL: "javascript:alert(1)"},
	}})
	if strings.Contains(c.FormattedBody, "var-host=web&amp;var-host") || strings.Contains(c.FormattedBody, "javascript:") {
		t.Error("an unusable link was linked")
	}
	if !strings.Contains(c.FormattedBody, `href="https://runbooks.example/db"`) || !strings.Contains(c.Body, "Not linked") {
		t.Errorf("links: %s", c.Body)
	}
}

var reTag = regexp.MustCompile(`<(/?)([a-zA-Z0-9]+)`)

func FuzzSanitizeHTML(f *testing.F) {
	for _, s := range []string{
		`<a href="javascript:alert(1)">x</a>`, `<img src=x onerror=alert(1)>`, `<p style="x">a</p>`,
		`<a href="https://ok">ok</a>`, `<code class="language-go">x</code>`, `<svg><script>1</script></svg>`,
		`<a href=" JaVaScRiPt:alert(1)">`, `<a href="data:text/html;base64,PHNjcmlwdD4=">`,
	} {
		f.Add(s)
	}
	allowed := map[string]bool{}
	for _, t := range strings.Fields("a del h1 h2 h3 h4 h5 h6 blockquote p ul ol sup sub li b i u strong em s strike code hr br div table thead tbody tr th td caption pre span details summary") {
		allowed[t] = true
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := sanitizeHTML(in)
		low := strings.ToLower(out)
		for _, m := range reTag.FindAllStringSubmatch(out, -1) {
			if !allowed[strings.ToLower(m[2])] {
				t.Fatalf("tag %q survived: %q -> %q", m[2], in, out)
			}
		}
		for _, bad := range []string{"javascript:", "vbscript:", "data:", " on", "style=", "src="} {
			if strings.Contains(low, bad) && strings.Contains(low, "<") && tagHas(low, bad) {
				t.Fatalf("%q survived in a tag: %q -> %q", bad, in, out)
			}
		}
	})
}

var reAnyTag = regexp.MustCompile(`<[^>]*>`)

// tagHas reports whether s has needle inside a tag (between < and >).
func tagHas(s, needle string) bool {
	for _, m := range reAnyTag.FindAllString(s, -1) {
		if strings.Contains(m, needle) {
			return true
		}
	}
	return false
}

func TestMatrixAnswerGolden(t *testing.T) {
	md := "# Disks\n\n| host | used |\n|---|--:|\n| web-1 | 91% |\n\n![graph](https://grafana.example/g.png) " +
		"[runbook](https://runbooks.example/disk) [bad](javascript:alert(1))\n\n<script>alert(1)</script>"
	golden(t, "answer_table_image", renderReply(bot.Reply{Kind: bot.ReplyAnswer, Text: md}))
}

func TestMatrixTraceWithHugeCommandFits(t *testing.T) {
	tr := bot.Trace{Tool: "read", Action: "exec", Target: "web-1", Command: "echo " + strings.Repeat("<&>", 30000),
		Outcome: bot.OutcomeOK, Output: strings.Repeat("<x>", 2000)}
	c := renderReply(bot.Reply{Kind: bot.ReplyTrace, Trace: &tr})
	checkEvent(t, c)
	if !strings.Contains(c.Body, "Command shown up to") {
		t.Error("a cut command is not marked as cut")
	}
}

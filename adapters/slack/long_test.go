package slack

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/vigilops/vigil/bot"
)

// sectionTexts are the mrkdwn texts of a message's blocks, in order.
func sectionTexts(t *testing.T, m message) []string {
	t.Helper()
	raw, _ := json.Marshal(m.Blocks)
	var blocks []map[string]any
	_ = json.Unmarshal(raw, &blocks)
	var out []string
	for _, b := range blocks {
		if txt, ok := b["text"].(map[string]any); ok {
			out = append(out, txt["text"].(string))
		}
		if els, ok := b["elements"].([]any); ok && b["type"] == "context" {
			for _, e := range els {
				if s, ok := e.(map[string]any)["text"].(string); ok {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// reLinkTarget is the URL of a Slack link, which keeps its & as written.
var reLinkTarget = regexp.MustCompile(`<(?:https?|mailto):[^|>]*`)

// reHalfEntity finds an & that does not start one of the three entities
// vigil writes: a cut entity, or an unescaped &.
var reHalfEntity = regexp.MustCompile(`&(?:[a-z]{0,3}(?:[^a-z;]|$))`)

// checkSections asserts what people need of every text: within Slack's
// limits after escaping, code blocks closed, no entity cut in half.
func checkSections(t *testing.T, m message) {
	t.Helper()
	checkLimits(t, m)
	for i, s := range sectionTexts(t, m) {
		if n := utf8.RuneCountInString(s); n > maxSectionText {
			t.Errorf("section %d has %d characters", i, n)
		}
		if strings.Count(s, "```")%2 != 0 {
			t.Errorf("section %d leaves a code block open: …%q", i, tail(s))
		}
		for _, m := range reHalfEntity.FindAllString(reLinkTarget.ReplaceAllString(s, "<"), -1) {
			if !strings.HasPrefix(m, "&amp;") && !strings.HasPrefix(m, "&lt;") && !strings.HasPrefix(m, "&gt;") {
				t.Errorf("section %d has a cut or bare entity %q: …%q", i, m, tail(s))
			}
		}
		if strings.Count(s, "<") != strings.Count(s, ">") {
			t.Errorf("section %d has a link cut in half: …%q", i, tail(s))
		}
	}
}

func tail(s string) string {
	if len(s) > 80 {
		return s[len(s)-80:]
	}
	return s
}

// words are the runs of letters and digits of s.
var reWord = regexp.MustCompile(`[\p{L}\p{N}]+`)

// inOrder reports whether every word of in appears in out at least as
// often (links are rewritten around their text, so order is not
// compared across a link).
func inOrder(in, out string) (missing string, ok bool) {
	have := map[string]int{}
	for _, w := range reWord.FindAllString(out, -1) {
		have[w]++
	}
	for _, w := range reWord.FindAllString(in, -1) {
		if have[w] == 0 {
			return w, false
		}
		have[w]--
	}
	return "", true
}

func allText(t *testing.T, msgs []message) string {
	var b strings.Builder
	for _, m := range msgs {
		for _, s := range sectionTexts(t, m) {
			b.WriteString(s + "\n")
		}
	}
	return b.String()
}

// The answer: 1,400 list items and feedback buttons. Every item
// arrives, in order, in messages Slack accepts, and the buttons are on the
// last one.
func TestLongAnswerArrivesWhole(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Hosts\n\n")
	for i := 1; i <= 1400; i++ {
		fmt.Fprintf(&b, "- item %d: web-%d <ok> & fine\n", i, i)
	}
	ans := renderAnswer(b.String(), "run-1", 0)
	if len(ans.msgs) < 2 {
		t.Fatalf("a %d-character answer in %d message(s)", b.Len(), len(ans.msgs))
	}
	for _, m := range ans.msgs {
		checkSections(t, m)
	}
	text := allText(t, ans.msgs)
	for i := 1; i <= 1400; i++ {
		if !strings.Contains(text, fmt.Sprintf("item %d: web-%d &lt;ok&gt; &amp; fine", i, i)) {
			t.Fatalf("item %d is missing", i)
		}
	}
	if ans.attach != "" {
		t.Error("an answer under the cap was attached")
	}
	last, _ := json.Marshal(ans.msgs[len(ans.msgs)-1].Blocks)
	if !strings.Contains(string(last), actionGood) {
		t.Error("feedback buttons are not on the last message")
	}
	for _, m := range ans.msgs[:len(ans.msgs)-1] {
		if raw, _ := json.Marshal(m.Blocks); strings.Contains(string(raw), actionGood) {
			t.Error("feedback buttons on a message before the last")
		}
	}
}

// Past the cap the last message says what was cut, and the whole answer
// is to be attached.
func TestAnswerOverTheCapSaysWhatWasCut(t *testing.T) {
	md := strings.Repeat("a line of the answer that goes on\n", 400) // ~14k characters
	ans := renderAnswer(md, "run-1", 5000)
	if ans.attach != md {
		t.Fatal("the whole answer is not attached")
	}
	text := allText(t, ans.msgs)
	if !strings.Contains(text, "The whole answer is attached below as a file") {
		t.Errorf("no cut note in %q", tail(text))
	}
	if n := strings.Count(text, "a line of the answer"); n < 50 || n >= 400 {
		t.Errorf("%d lines shown with a 5,000-character cap", n)
	}
	for _, m := range ans.msgs {
		checkSections(t, m)
	}
}

// randomAnswer is Markdown with fences, entities, links, tables and long
// lines.
func randomAnswer(r *rand.Rand) string {
	atoms := []string{"word", "other", "&", "<b>", "a<b>c", "&amp;", "*bold*", "`code`", "_it_",
		"[the docs](https://docs.example.org/a?b=c&d=e)", "<https://example.com/x>", "https://bare.example/p?q=1",
		"![img](https://img.example/p.png)", "é", "日本", "😀", "~~s~~", "<!channel>", "<@U123>"}
	var b strings.Builder
	lines := 1 + r.IntN(200)
	for i := 0; i < lines; i++ {
		switch r.IntN(12) {
		case 0:
			b.WriteString([]string{"```", "```sh", "~~~"}[r.IntN(3)])
		case 1:
			b.WriteString("| host | state |\n|---|---|\n| web<1> | ok & up |")
		case 2:
			b.WriteString("# heading " + atoms[r.IntN(len(atoms))])
		default:
			n := r.IntN(25)
			if r.IntN(10) == 0 {
				n = 300 + r.IntN(900)
			}
			for w := 0; w < n; w++ {
				if w > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(atoms[r.IntN(len(atoms))])
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func TestAnswerSplitProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 3000))
	for i := 0; i < 40; i++ {
		md := randomAnswer(r)
		ans := renderAnswer(md, "run", 1<<30) // no cap: nothing may be lost
		if ans.attach != "" {
			t.Fatal("attached without a cap")
		}
		for _, m := range ans.msgs {
			checkSections(t, m)
		}
		// Fence info strings (```sh) are dropped by design.
		words := regexp.MustCompile("(?m)^```\\w+").ReplaceAllString(md, "```")
		if w, ok := inOrder(words, allText(t, ans.msgs)); !ok {
			t.Fatalf("answer %d lost the word %q", i, w)
		}
		if t.Failed() {
			t.Fatalf("answer %d: %q", i, md)
		}
	}
}

// A long command with <, > and & shows whole on its card, tail included,
// in code blocks that close.
func TestApprovalCardShowsLongCommandWhole(t *testing.T) {
	var b strings.Builder
	for b.Len() < 4000 {
		b.WriteString("grep -v '<none>' /var/log/app.log | sed 's/&/and/' && ")
	}
	cmd := b.String() + "echo done > /etc/cron.d/vigil-target"
	c := bot.ApprovalCard{ID: "a1", Token: "tok-SECRET-x", Tool: "read", Command: cmd, Status: bot.ApprovalPending,
		ChangeHash: strings.Repeat("ab", 32)}
	m, err := renderApproval(c)
	if err != nil {
		t.Fatal(err)
	}
	checkSections(t, m)
	text := allText(t, []message{m})
	if !strings.Contains(text, "echo done &gt; /etc/cron.d/vigil-target") {
		t.Fatalf("the card lost the command's tail: …%q", tail(text))
	}
	if cardAttachment(c) != nil {
		t.Error("a 4,000-character command was attached instead of shown")
	}
	// Every character of the command is on the card, across sections.
	shown := strings.NewReplacer("```", "", "*Command*\n", "", "\n", "").Replace(text)
	if !strings.Contains(shown, strings.ReplaceAll(escapeMrkdwn(cmd), "\n", "")) {
		t.Error("the command is not shown whole")
	}
}

// A change too long for any card is attached whole, and the card prints
// the hash the approval binds.
func TestApprovalCardAttachesHugeChange(t *testing.T) {
	content := strings.Repeat("0 3 * * * root /usr/local/bin/backup --target s3://bucket/<host> & \n", 3000)
	c := bot.ApprovalCard{ID: "a2", Token: "tok-SECRET-y", Tool: "file_edit", Command: "write 1 bytes to /etc/cron.d/x",
		Details: []bot.CardDetail{{Label: "new content (replaces the whole file, or creates it)", Value: content}},
		Status:  bot.ApprovalPending, ChangeHash: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}
	m, err := renderApproval(c)
	if err != nil {
		t.Fatal(err)
	}
	checkSections(t, m)
	att := cardAttachment(c)
	if att == nil || att.content != c.FullChange() || !strings.Contains(att.content, content) {
		t.Fatal("the whole change is not attached")
	}
	text := allText(t, []message{m})
	if !strings.Contains(text, c.ChangeHash) || !strings.Contains(text, cardFileName(c)) {
		t.Errorf("the card does not name the attachment and its hash: %q", tail(text))
	}
}

func TestApprovalCardListsPartsAndMentionsApprovers(t *testing.T) {
	c := bot.ApprovalCard{ID: "a3", Token: "t", Tool: "control", Command: "a && b; c | d", Parts: []string{"a", "&& b", "; c", "| d"},
		Approvers: []string{"U0BOB", "usergroup:S0OPS", "@matrix:user"}, Status: bot.ApprovalPending}
	m, err := renderApproval(c)
	if err != nil {
		t.Fatal(err)
	}
	text := allText(t, []message{m})
	if !strings.Contains(text, "a\n&amp;&amp; b\n; c\n| d") {
		t.Errorf("parts not listed one per line: %q", text)
	}
	if !strings.Contains(m.Text, "<@U0BOB>") || !strings.Contains(m.Text, "<!subteam^S0OPS>") || strings.Contains(text, "matrix:user") {
		t.Errorf("approvers not mentioned right: text %q", m.Text)
	}
	c.Status = bot.ApprovalApproved
	if m, _ := renderApproval(c); strings.Contains(m.Text, "<@U0BOB>") {
		t.Error("a decided card mentions the approvers again")
	}
}

func TestMarkdownLinkShowsItsHost(t *testing.T) {
	got := markdownToMrkdwn("see [your bank](https://evil.example/login) and [x](https://good.example@evil.example/) and <https://plain.example>")
	for _, want := range []string{"<https://evil.example/login|your bank> (evil.example)", "(evil.example)", "<https://plain.example>"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "(good.example") {
		t.Errorf("user info shown as the host: %q", got)
	}
}

func TestLinkButtonsStayWithinSlackLimits(t *testing.T) {
	long := "https://grafana.example/d/x?" + strings.Repeat("var-host=web&", 300)
	m := renderWithLinks("🔥 FIRING: HighLatency", []bot.Link{
		{Text: "dashboard", URL: long}, {Text: strings.Repeat("runbook ", 20), URL: "https://runbooks.example/db"}, {Text: "bad", URL: "javascript:alert(1)"},
	})
	checkSections(t, m)
	raw, _ := json.Marshal(m.Blocks)
	if strings.Contains(string(raw), "var-host=web&var-host") || strings.Contains(string(raw), "javascript:") {
		t.Error("a link Slack refuses became a button")
	}
	if !strings.Contains(string(raw), "https://runbooks.example/db") {
		t.Error("the usable link lost its button")
	}
	if !strings.Contains(allText(t, []message{m}), "too long for Slack") {
		t.Error("the dropped link is not mentioned")
	}
}

func TestTraceWithEscapedOutputStaysWhole(t *testing.T) {
	out := strings.Repeat("<&>", 500) // 1,500 characters, 7,500 once escaped
	tr := bot.Trace{Tool: "read", Action: "exec", Target: "web-1", Command: "cat /tmp/x", Outcome: bot.OutcomeOK, Output: out}
	m := renderTraces([]bot.Trace{tr})
	checkSections(t, m)
	if got := strings.Count(allText(t, []message{m}), "&lt;&amp;&gt;"); got != 500 {
		t.Errorf("%d of 500 output groups shown", got)
	}
}

// A notification text is cut without leaving half an entity.
func TestFallbackTextNeverCutsAnEntity(t *testing.T) {
	for n := 0; n < 12; n++ {
		m := renderNotice(strings.Repeat("x", 280+n) + strings.Repeat("<&>", 20))
		if utf8.RuneCountInString(m.Text) > maxFallbackText {
			t.Fatalf("fallback of %d characters", utf8.RuneCountInString(m.Text))
		}
		if loc := reHalfEntity.FindString(m.Text); loc != "" && !strings.HasPrefix(loc, "&amp;") && !strings.HasPrefix(loc, "&lt;") && !strings.HasPrefix(loc, "&gt;") {
			t.Fatalf("fallback %q cuts an entity", m.Text[len(m.Text)-20:])
		}
	}
}

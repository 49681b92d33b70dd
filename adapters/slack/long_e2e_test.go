package slack_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/vigilops/vigil/adapters/slack"
	"github.com/vigilops/vigil/internal/testenv/modeltest"
	"github.com/vigilops/vigil/internal/testenv/slackfake"
	"github.com/vigilops/vigil/internal/testenv/testkit"
)

// Long content end to end, through the fake Slack that refuses what Slack
// refuses (Block Kit's limits).

func TestEndToEndLongAnswerArrivesWhole(t *testing.T) {
	e := startE2E(t, slack.ModeSocket)
	var b strings.Builder
	b.WriteString("# Hosts\n\n")
	n := 0
	for b.Len() < 80_000 {
		n++
		fmt.Fprintf(&b, "- item %d: `web-%d` <ok> & fine, see [status](https://status.example/%d)\n", n, n, n)
	}
	e.model.Script(modeltest.Text(b.String()))
	e.event("EvLong", slackfake.AppMention(e2eChan, e2eAlice, "<@U0VIGIL> list every host", e2eRoot, ""), false)
	e.waitPost("the end of the answer", fmt.Sprintf("item %d: `web-%d`", n, n))
	e.idle()
	var all strings.Builder
	for _, c := range e.fake.Calls("chat.postMessage") {
		if !c.OK() {
			t.Errorf("Slack refused a message: %s", c.Error)
		}
		if strings.Contains(c.Text(), "refused") {
			t.Errorf("a refusal notice was posted: %q", c.Text())
		}
		all.WriteString(c.Text())
	}
	for i := 1; i <= n; i++ {
		if !strings.Contains(all.String(), fmt.Sprintf("item %d: `web-%d` &lt;ok&gt; &amp; fine", i, i)) {
			t.Fatalf("item %d of %d never arrived", i, n)
		}
	}
	posts := e.fake.Posts()
	if len(e.fake.Uploads()) != 0 {
		t.Error("an answer under the cap was attached as a file")
	}
	last := posts[len(posts)-1]
	good := false
	for _, b := range last.Buttons() {
		good = good || b.ActionID == "vigil_feedback_good"
	}
	if !good {
		t.Error("the feedback buttons are not under the last part of the answer")
	}
}

func TestEndToEndLongCommandCardShowsItWhole(t *testing.T) {
	e := startE2E(t, slack.ModeSocket)
	file := filepath.Join(t.TempDir(), "ran")
	var b strings.Builder
	b.WriteString("echo ")
	for utf8.RuneCountInString(b.String()) < 4000 {
		b.WriteString("'<none>&' ")
	}
	cmd := b.String() + "> " + file
	e.model.Script(
		modeltest.Calls(modeltest.Call("discover", testkit.Args("resource", "localhost"))),
		modeltest.Calls(modeltest.Call("control", testkit.Args("action", "command", "target", "localhost", "command", cmd))),
		modeltest.Text("Waiting for approval."),
	)
	e.event("EvLongCmd", slackfake.AppMention(e2eChan, e2eAlice, "<@U0VIGIL> write the file on @localhost", e2eRoot, ""), false)
	card := e.waitPost("the approval card", "Approval needed")
	if !card.OK() {
		t.Fatalf("Slack refused the card: %s", card.Error)
	}
	text := card.Text()
	if !strings.Contains(text, "&gt; "+file) {
		t.Fatalf("the card lost the command's target (> %s)", file)
	}
	if got := strings.Count(text, "'&lt;none&gt;&amp;'"); got < strings.Count(cmd, "'<none>&'") {
		t.Errorf("the card shows %d of the command's %d quoted words", got, strings.Count(cmd, "'<none>&'"))
	}
	if !strings.Contains(text, "<!subteam^S0ONCALL>") {
		t.Error("the card does not notify the approvers' group")
	}
}

// The answer: 1,400 list items, past the cap. What the messages
// show is a complete beginning, the last message says where it was cut,
// and the whole answer is attached: nothing vanishes without a sign.
func TestEndToEndAnswerPastTheCapSaysWhereItWasCut(t *testing.T) {
	e := startE2E(t, slack.ModeSocket)
	var b strings.Builder
	for i := 1; i <= 1400; i++ {
		fmt.Fprintf(&b, "- item %d: host web-%d answered <200 OK> & reported its disk, memory and load as normal\n", i, i)
	}
	md := b.String()
	e.model.Script(modeltest.Text(md))
	e.event("EvCap", slackfake.AppMention(e2eChan, e2eAlice, "<@U0VIGIL> check every host", e2eRoot, ""), false)
	e.waitPost("the cut note", "The whole answer is attached below as a file")
	e.idle()
	e.fake.WaitFor(t, e2eWait, "the attached answer", func([]slackfake.Call) bool { return len(e.fake.Uploads()) == 1 })
	if got := e.fake.Uploads()[0]; got.Content != md {
		t.Errorf("the attached answer has %d bytes, want the answer's %d", len(got.Content), len(md))
	}
	var shown strings.Builder
	for _, c := range e.fake.Calls("chat.postMessage") {
		if !c.OK() {
			t.Errorf("Slack refused a message: %s", c.Error)
		}
		shown.WriteString(c.Text())
	}
	last := 0
	for i := 1; i <= 1400; i++ {
		if strings.Contains(shown.String(), fmt.Sprintf("item %d: host web-%d ", i, i)) {
			if last != i-1 {
				t.Fatalf("item %d shown after a gap at %d", i, last+1)
			}
			last = i
		}
	}
	if last < 500 || last == 1400 {
		t.Errorf("the messages show items 1–%d of 1,400 under a 100,000-character cap", last)
	}
}

package slack_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigilops/vigil/adapters/slack"
	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/internal/testenv/modeltest"
	"github.com/vigilops/vigil/internal/testenv/slackfake"
	"github.com/vigilops/vigil/internal/testenv/testkit"
)

// feedbackClick presses a 👍/👎 button under an answer, in a signed
// interaction payload.
func (e *e2e) feedbackClick(user, actionID, value, answerTS, actionTS string) {
	e.t.Helper()
	payload := slackfake.BlockActions(slackfake.BlockAction{User: user, Channel: e2eChan, MessageTS: answerTS, ThreadTS: e2eRoot,
		BlockID: "vigil_feedback", ActionID: actionID, Value: value, ActionTS: actionTS})
	if e.mode == slack.ModeHTTP {
		e.do(slackfake.InteractiveRequest(e.t, "http://"+e.a.Addr()+"/slack/interactive", payload))
		return
	}
	e.fake.WaitAck(e.t, e.fake.PushInteractive(payload), e2eWait)
}

// TestEndToEndFeedback: an answer carries 👍/👎 buttons; a click is stored
// with the run; 👍 on an answer that names a cause posts a runbook draft
// with an approval card; the file is written only after an approver's
// click.
func TestEndToEndFeedback(t *testing.T) {
	dir := t.TempDir()
	e := startE2E(t, slack.ModeHTTP, func(o *testkit.Options) { o.RunbooksDir = dir })
	e.model.Script(
		modeltest.Calls(modeltest.Call("read", testkit.Args("action", "exec", "target", "localhost", "command", "uptime"))),
		modeltest.Text("localhost is slow because a runaway backup job saturates the CPU."),
	)
	e.event("EvFb1", slackfake.AppMention(e2eChan, e2eAlice, "<@U0VIGIL> why is @localhost slow?", e2eRoot, ""), false)
	answer := e.waitPost("the answer", "runaway backup job")
	var good, bad string
	for _, b := range answer.Buttons() {
		switch b.ActionID {
		case "vigil_feedback_good":
			good = b.Value
		case "vigil_feedback_bad":
			bad = b.Value
		}
	}
	if good == "" || bad == "" || good != bad {
		t.Fatalf("answer without 👍/👎 buttons for its run: %+v", answer.Buttons())
	}
	e.idle()

	// Mallory thinks it is bad; Bob and then Alice think it is good: her
	// rating tips the balance, so the draft is hers and Bob may approve it.
	e.feedbackClick(e2eMallet, "vigil_feedback_bad", bad, answer.TS, "1700005010.000001")
	e.idle()
	for _, c := range e.fake.Posts() {
		if strings.Contains(c.Text(), "drafted a runbook") {
			t.Fatal("a bad rating drafted a runbook")
		}
	}
	e.feedbackClick(e2eBob, "vigil_feedback_good", good, answer.TS, "1700005011.000001")
	e.feedbackClick(e2eBob, "vigil_feedback_good", good, answer.TS, "1700005011.000001") // redelivered
	e.idle()
	e.feedbackClick(e2eAlice, "vigil_feedback_good", good, answer.TS, "1700005012.000001")
	e.waitPost("the runbook draft", "drafted a runbook")
	card := e.waitPost("the runbook card", "Approval needed: runbook")
	e.idle()
	if files, _ := filepath.Glob(filepath.Join(dir, "*.md")); len(files) != 0 {
		t.Fatalf("runbook written before approval: %v", files)
	}
	s, err := e.st.Stores.Sessions.LoadSession(context.Background(), "slack:"+e2eChan+":"+e2eRoot)
	if err != nil {
		t.Fatal(err)
	}
	rec := s.RunRecord("")
	got := map[string]agent.Rating{}
	for _, f := range rec.Feedback {
		got[f.User] = f.Rating
	}
	if len(rec.Feedback) != 3 || got[e2eMallet] != agent.RatingBad || got[e2eAlice] != agent.RatingGood || got[e2eBob] != agent.RatingGood {
		t.Fatalf("feedback stored with the run: %+v", rec.Feedback)
	}

	var approve string
	for _, b := range card.Buttons() {
		if b.ActionID == "vigil_approve" {
			approve = b.Value
		}
	}
	e.click(e2eBob, "vigil_approve", approve, card.TS, "1700005013.000001")
	e.waitPost("the saved notice", "Saved runbook")
	e.idle()
	files, _ := filepath.Glob(filepath.Join(dir, "*.md"))
	if len(files) != 1 {
		t.Fatalf("runbooks after approval: %v", files)
	}
	raw, _ := os.ReadFile(files[0])
	if !strings.Contains(string(raw), "runaway backup job") {
		t.Fatalf("saved runbook:\n%s", raw)
	}
}

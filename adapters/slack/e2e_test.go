package slack_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigilops/vigil/adapters/slack"
	"github.com/vigilops/vigil/internal/testenv/modeltest"
	"github.com/vigilops/vigil/internal/testenv/slackfake"
	"github.com/vigilops/vigil/internal/testenv/testkit"
	"github.com/vigilops/vigil/policy"
)

// End to end: the real bot, agent, policy and tools (testkit) with the Slack
// adapter in front of the fake Slack, driven by the scripted model.

const (
	e2eWait   = 20 * time.Second
	e2eChan   = "C0OPS"
	e2eRoot   = "1700005000.000100"
	e2eAlice  = "U0ALICE"   // asks; an operator
	e2eBob    = "U0BOB"     // approver through the user group
	e2eMallet = "U0MALLORY" // may ask, may not approve
)

type e2e struct {
	t     *testing.T
	mode  string
	fake  *slackfake.Server
	a     *slack.Adapter
	model *modeltest.Server
	st    *testkit.Stack
}

func startE2E(t *testing.T, mode string, mutate ...func(*testkit.Options)) *e2e {
	t.Helper()
	fake := slackfake.New(t, slackfake.WithPingInterval(200*time.Millisecond))
	fake.AddUser(slackfake.User{ID: e2eAlice, Name: "alice"})
	fake.AddUser(slackfake.User{ID: e2eBob, Name: "bob"})
	fake.AddUser(slackfake.User{ID: e2eMallet, Name: "mallory"})
	fake.AddUsergroup(slackfake.Usergroup{ID: "S0ONCALL", Handle: "oncall", Members: []string{e2eBob}})
	a, err := slack.New(slack.Config{
		Mode: mode, BotToken: slackfake.BotToken, AppToken: slackfake.AppToken,
		SigningSecret: slackfake.SigningSecret, Listen: "127.0.0.1:0", APIURL: fake.APIURL(),
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	slack.SetPacing(a, 50*time.Millisecond)
	model := modeltest.New(t)
	opts := testkit.Options{
		Adapter: a,
		Model:   model,
		Channels: []policy.ChannelPolicy{{
			Match: "slack:" + e2eChan, Level: policy.LevelControlled,
			Operators: []string{e2eAlice}, Approvers: []string{"usergroup:S0ONCALL"},
		}},
	}
	for _, m := range mutate {
		m(&opts)
	}
	st := testkit.Start(t, opts)
	select {
	case <-a.Ready():
	case <-time.After(e2eWait):
		t.Fatal("slack adapter not ready")
	}
	if mode == slack.ModeSocket {
		fake.WaitConnected(t, e2eWait)
	} else {
		deadline := time.Now().Add(e2eWait)
		for a.Addr() == "" && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, c := range fake.Calls("chat.postMessage", "chat.update", "chat.postEphemeral") {
				t.Logf("%s %s: %s", c.Method, c.Param("thread_ts"), c.Text())
			}
		}
	})
	return &e2e{t: t, mode: mode, fake: fake, a: a, model: model, st: st}
}

func (e *e2e) event(eventID string, ev slackfake.Event, retry bool) {
	e.t.Helper()
	body := slackfake.EventCallback(eventID, ev)
	if e.mode == slack.ModeHTTP {
		req := slackfake.EventsRequest(e.t, "http://"+e.a.Addr()+"/slack/events", body)
		if retry {
			req.Header.Set("X-Slack-Retry-Num", "1")
			req.Header.Set("X-Slack-Retry-Reason", "http_timeout")
		}
		e.do(req)
		return
	}
	var opts []slackfake.PushOption
	if retry {
		opts = append(opts, slackfake.Retry(1, "timeout"))
	}
	e.fake.WaitAck(e.t, e.fake.PushEventsAPI(body, opts...), e2eWait)
}

func (e *e2e) click(user, actionID, value, cardTS, actionTS string) {
	e.t.Helper()
	payload := slackfake.BlockActions(slackfake.BlockAction{User: user, Channel: e2eChan, MessageTS: cardTS, ThreadTS: e2eRoot,
		BlockID: "vigil_approval", ActionID: actionID, Value: value, ActionTS: actionTS})
	if e.mode == slack.ModeHTTP {
		e.do(slackfake.InteractiveRequest(e.t, "http://"+e.a.Addr()+"/slack/interactive", payload))
		return
	}
	e.fake.WaitAck(e.t, e.fake.PushInteractive(payload), e2eWait)
}

func (e *e2e) do(req *http.Request) {
	e.t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("%s answered %d", req.URL.Path, resp.StatusCode)
	}
}

func (e *e2e) idle() {
	e.t.Helper()
	time.Sleep(50 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), e2eWait)
	defer cancel()
	if err := e.st.Bot.WaitIdle(ctx); err != nil {
		e.t.Fatalf("bot not idle: %v", err)
	}
}

// waitPost waits for a message in the thread whose text contains want.
func (e *e2e) waitPost(what, want string) slackfake.Call {
	e.t.Helper()
	var found slackfake.Call
	e.fake.WaitFor(e.t, e2eWait, what, func(calls []slackfake.Call) bool {
		for _, c := range calls {
			if c.Method == "chat.postMessage" && c.OK() && strings.Contains(c.Text(), want) {
				found = c
				return true
			}
		}
		return false
	})
	return found
}

// TestEndToEnd: a mention with @localhost → traces in the thread → an
// approval card → a refused click (ephemeral) → an approver's click → the
// command runs once → the card is updated → the answer is in the thread.
// The mention is delivered twice and the approver double-clicks: still one
// run, one execution.
func TestEndToEnd(t *testing.T) {
	for _, mode := range []string{slack.ModeSocket, slack.ModeHTTP} {
		t.Run(mode, func(t *testing.T) {
			e := startE2E(t, mode)
			file := filepath.Join(t.TempDir(), "ran")
			appendLine := "echo ran >> " + file
			e.model.Script(
				modeltest.Calls(modeltest.Call("discover", testkit.Args("resource", "localhost"))),
				modeltest.Calls(modeltest.Call("control", testkit.Args("action", "command", "target", "localhost", "command", appendLine))),
				modeltest.Calls(modeltest.Call("read", testkit.Args("action", "file", "target", "localhost", "path", file))),
				modeltest.Text("Appended a line on **localhost** and checked it."),
			)

			mention := slackfake.AppMention(e2eChan, e2eAlice, "<@U0VIGIL> append a line on @localhost", e2eRoot, "")
			e.event("EvE2E", mention, false)
			e.event("EvE2E", mention, true) // Slack's retry of the same event

			card := e.waitPost("the approval card", "Approval needed")
			var approve string
			for _, b := range card.Buttons() {
				if b.ActionID == "vigil_approve" {
					approve = b.Value
				}
			}
			if approve == "" {
				t.Fatalf("card without an approve button: %+v", card.Buttons())
			}
			if !strings.Contains(card.Text(), appendLine) || !strings.Contains(card.Text(), "<@"+e2eAlice+">") {
				t.Errorf("card does not show the command and requester: %q", card.Text())
			}
			e.idle()
			if n := testkit.LineCount(t, file); n != 0 {
				t.Fatalf("the write ran %d times before approval", n)
			}

			// Mallory may not approve: she alone is told, nothing runs.
			e.click(e2eMallet, "vigil_approve", approve, card.TS, "1700005001.000001")
			e.idle()
			e.fake.WaitFor(t, e2eWait, "an ephemeral refusal for mallory", func(calls []slackfake.Call) bool {
				for _, c := range calls {
					if c.Method == "chat.postEphemeral" && c.Param("user") == e2eMallet && c.Param("thread_ts") == e2eRoot {
						return true
					}
				}
				return false
			})
			if n := testkit.LineCount(t, file); n != 0 {
				t.Fatalf("a refused click ran the write %d times", n)
			}

			// Bob, an approver through the user group, double-clicks.
			e.click(e2eBob, "vigil_approve", approve, card.TS, "1700005002.000001")
			e.click(e2eBob, "vigil_approve", approve, card.TS, "1700005002.000002")
			e.waitPost("the final answer", "Appended a line on *localhost* and checked it.")
			e.idle()
			if n := testkit.LineCount(t, file); n != 1 {
				t.Fatalf("the approved write ran %d times, want exactly 1", n)
			}

			updated := false
			for _, c := range e.fake.Calls("chat.update") {
				if c.Param("ts") == card.TS && strings.Contains(c.Text(), "Approved by <@"+e2eBob+">") && len(c.Buttons()) == 0 {
					updated = true
				}
			}
			if !updated {
				t.Errorf("card not updated to approved: %+v", e.fake.Calls("chat.update"))
			}

			// Everything went to the thread; one card means one run.
			cards, traces := 0, 0
			for _, c := range e.fake.Posts() {
				if c.Param("channel") != e2eChan || c.Param("thread_ts") != e2eRoot {
					t.Errorf("post outside the thread: %v", c.Params)
				}
				if strings.Contains(c.Text(), "Approval needed") {
					cards++
				}
				if strings.Contains(c.Text(), "*discover* on") || strings.Contains(c.Text(), "*read.exec* on") || strings.Contains(c.Text(), "*control.command* on") {
					traces++
				}
			}
			if cards != 1 {
				t.Errorf("%d approval cards, want 1 (the redelivered mention must not start a second run)", cards)
			}
			if traces == 0 {
				t.Error("no tool traces in the thread")
			}
			if left := e.model.Remaining(); left != 0 {
				t.Errorf("%d scripted model steps unused", left)
			}
		})
	}
}

// TestEndToEndDeny: Deny opens the reason dialog; the submitted reason
// denies the approval, nothing runs, and the card says who denied it and
// why.
func TestEndToEndDeny(t *testing.T) {
	e := startE2E(t, slack.ModeSocket)
	file := filepath.Join(t.TempDir(), "ran")
	e.model.Script(
		modeltest.Calls(modeltest.Call("discover", testkit.Args("resource", "localhost"))),
		modeltest.Calls(modeltest.Call("control", testkit.Args("action", "command", "target", "localhost", "command", "echo ran >> "+file))),
		modeltest.Text("Understood, nothing was changed."),
	)
	e.event("EvDeny", slackfake.AppMention(e2eChan, e2eAlice, "<@U0VIGIL> append a line on @localhost", e2eRoot, ""), false)
	card := e.waitPost("the approval card", "Approval needed")
	var deny string
	for _, b := range card.Buttons() {
		if b.ActionID == "vigil_deny" {
			deny = b.Value
		}
	}
	e.click(e2eBob, "vigil_deny", deny, card.TS, "1700005003.000001")
	views := e.fake.WaitCalls(t, "views.open", 1, e2eWait)
	var view struct {
		PrivateMetadata string `json:"private_metadata"`
	}
	if err := json.Unmarshal([]byte(views[0].Param("view")), &view); err != nil {
		t.Fatal(err)
	}
	e.fake.WaitAck(t, e.fake.PushInteractive(slackfake.ViewSubmissionPayload(slackfake.ViewSubmission{
		User: e2eBob, ViewID: "V0DENY", CallbackID: "vigil_deny", PrivateMetadata: view.PrivateMetadata,
		Values: map[string]map[string]string{"reason": {"reason": "change freeze until Monday"}},
	})), e2eWait)
	e.waitPost("the answer after the denial", "Understood, nothing was changed.")
	e.idle()
	if n := testkit.LineCount(t, file); n != 0 {
		t.Fatalf("a denied write ran %d times", n)
	}
	e.fake.WaitFor(t, e2eWait, "the card updated to denied, with the reason", func(calls []slackfake.Call) bool {
		for _, c := range calls {
			if c.Method == "chat.update" && c.Param("ts") == card.TS && strings.Contains(c.Text(), "Denied by <@"+e2eBob+">") &&
				strings.Contains(c.Text(), "change freeze until Monday") && len(c.Buttons()) == 0 {
				return true
			}
		}
		return false
	})
}

// TestEndToEndForgedClick: a signed interaction whose button value names
// the approval but carries no token (or a wrong one) is a forged click: the
// clicker alone is told, it is audited, and nothing runs; the card's own
// button still works.
func TestEndToEndForgedClick(t *testing.T) {
	e := startE2E(t, slack.ModeHTTP)
	file := filepath.Join(t.TempDir(), "ran")
	e.model.Script(
		modeltest.Calls(modeltest.Call("discover", testkit.Args("resource", "localhost"))),
		modeltest.Calls(modeltest.Call("control", testkit.Args("action", "command", "target", "localhost", "command", "echo ran >> "+file))),
		modeltest.Calls(modeltest.Call("read", testkit.Args("action", "file", "target", "localhost", "path", file))),
		modeltest.Text("Appended and checked."),
	)
	e.event("EvForged", slackfake.AppMention(e2eChan, e2eAlice, "<@U0VIGIL> append a line on @localhost", e2eRoot, ""), false)
	card := e.waitPost("the approval card", "Approval needed")
	var approve string
	for _, b := range card.Buttons() {
		if b.ActionID == "vigil_approve" {
			approve = b.Value
		}
	}
	var v struct {
		ID    string `json:"id"`
		Token string `json:"token"`
	}
	if err := json.Unmarshal([]byte(approve), &v); err != nil || v.ID == "" || v.Token == "" {
		t.Fatalf("approve button value %q: %v", approve, err)
	}
	e.idle()

	forged := []string{`{"id":"` + v.ID + `"}`, `{"id":"` + v.ID + `","token":""}`, `{"id":"` + v.ID + `","token":"guess"}`}
	for i, value := range forged {
		e.click(e2eBob, "vigil_approve", value, card.TS, "1700005010.00000"+string(rune('1'+i)))
	}
	e.idle()
	if n := testkit.LineCount(t, file); n != 0 {
		t.Fatalf("a forged click ran the write %d times", n)
	}
	e.fake.WaitFor(t, e2eWait, "ephemeral refusals for bob", func(calls []slackfake.Call) bool {
		n := 0
		for _, c := range calls {
			if c.Method == "chat.postEphemeral" && c.Param("user") == e2eBob && strings.Contains(c.Text(), "not") {
				n++
			}
		}
		return n == len(forged)
	})
	recs, err := e.st.Stores.Audit.RecentAudit(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range recs {
		if r.ApprovalID == v.ID && r.Outcome == "forged_click" && r.Actor == e2eBob {
			n++
		}
	}
	if n != len(forged) {
		t.Fatalf("%d forged clicks audited, want %d", n, len(forged))
	}

	e.click(e2eBob, "vigil_approve", approve, card.TS, "1700005011.000001")
	e.waitPost("the final answer", "Appended and checked.")
	e.idle()
	if n := testkit.LineCount(t, file); n != 1 {
		t.Fatalf("the real click ran the write %d times, want 1", n)
	}
}

// TestEndToEndNonOperator: mallory may ask, not change. Her change is
// refused before any card, the thread is told which role is needed and who
// holds it (config users and Slack user groups), and nothing runs.
func TestEndToEndNonOperator(t *testing.T) {
	e := startE2E(t, slack.ModeSocket)
	file := filepath.Join(t.TempDir(), "ran")
	e.model.Script(
		modeltest.Calls(modeltest.Call("discover", testkit.Args("resource", "localhost"))),
		modeltest.Calls(modeltest.Call("control", testkit.Args("action", "command", "target", "localhost", "command", "echo ran >> "+file))),
		modeltest.Text("An operator has to ask for this change."),
	)
	e.event("EvMallory", slackfake.AppMention(e2eChan, e2eMallet, "<@U0VIGIL> append a line on @localhost", e2eRoot, ""), false)
	notice := e.waitPost("the role notice", "needs the operator role")
	for _, want := range []string{e2eMallet, e2eAlice, "user group S0ONCALL"} {
		if !strings.Contains(notice.Text(), want) {
			t.Errorf("notice %q does not name %s", notice.Text(), want)
		}
	}
	e.waitPost("the answer", "An operator has to ask for this change.")
	e.idle()
	for _, c := range e.fake.Posts() {
		if strings.Contains(c.Text(), "Approval needed") {
			t.Fatal("an approval card was posted for a non-operator's change")
		}
	}
	if n := testkit.LineCount(t, file); n != 0 {
		t.Fatalf("a non-operator's write ran %d times", n)
	}
}

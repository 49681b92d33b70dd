package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigilops/vigil/bot"
	"github.com/vigilops/vigil/internal/testenv/modeltest"
	"github.com/vigilops/vigil/internal/testenv/testkit"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/policy/audit"
	"github.com/vigilops/vigil/store"
)

// Approve in the console: exactly the bound call runs, once; the agent
// resumes and verifies.
func TestConsoleApproveRunsOnceAndVerifies(t *testing.T) {
	file := filepath.Join(t.TempDir(), "log")
	h := start(t, policy.LevelControlled)
	h.model.Script(
		modeltest.Calls(discoverLocal()),
		modeltest.Calls(controlCmd(testkit.AppendLine(file))),
		modeltest.Calls(readExec("cat "+file)),
		modeltest.Text("appended and verified"),
	)
	h.ask("append a line on @localhost")
	id := h.con.ApprovalID(t, 1, wait)
	out := h.con.Output()
	mustContain(t, out, "change:    "+testkit.AppendLine(file), "card shows the exact command")
	mustContain(t, out, "target:    localhost", "card shows the target")
	mustContain(t, out, "requester: alice", "card shows the requester")
	if n := testkit.LineCount(t, file); n != 0 {
		t.Fatalf("the write ran %d times before approval", n)
	}
	h.con.Send(t, "approve "+id)
	h.idle()
	h.con.WaitFor(t, "vigil> appended and verified", wait)
	mustContain(t, h.con.Output(), "[approval "+id+"] approved by alice", "card update")
	if n := testkit.LineCount(t, file); n != 1 {
		t.Fatalf("approved write ran %d times, want 1; output:\n%s", n, h.con.Output())
	}
	if h.session().Run != nil {
		t.Fatal("run still open after the final answer")
	}
	// Replaying the approval changes nothing.
	h.con.Send(t, "approve "+id)
	h.idle()
	h.con.WaitFor(t, "already approved by alice", wait)
	if n := testkit.LineCount(t, file); n != 1 {
		t.Fatalf("replayed approval ran the write again: %d lines", n)
	}
}

// Deny with a reason: nothing runs; the model is told who denied it and why,
// and so is the user.
func TestConsoleDenyReachesModelAndUser(t *testing.T) {
	file := filepath.Join(t.TempDir(), "log")
	h := start(t, policy.LevelControlled)
	h.model.Script(
		modeltest.Calls(discoverLocal()),
		modeltest.Calls(controlCmd(testkit.AppendLine(file))),
		modeltest.Text("Denied: not during the freeze."),
	)
	h.ask("append a line on @localhost")
	id := h.con.ApprovalID(t, 1, wait)
	h.con.Send(t, "deny "+id+" not during the freeze")
	h.idle()
	h.con.WaitFor(t, "vigil> Denied", wait)
	mustContain(t, h.con.Output(), "denied by alice at", "card update")
	mustContain(t, h.con.Output(), ": not during the freeze", "reason shown to the user")
	res := resultsOf(t, h.lastRequest())
	last := res[len(res)-1]
	if last.Error == nil || !strings.Contains(last.Error.Message, "denied by alice: not during the freeze") {
		t.Fatalf("model was not told of the denial: %+v", last.Error)
	}
	if n := testkit.LineCount(t, file); n != 0 {
		t.Fatalf("denied write ran %d times", n)
	}
}

// Unknown, malformed and already-decided IDs get a one-line error and change
// nothing.
func TestConsoleBadApprovalAnswers(t *testing.T) {
	h := start(t, policy.LevelControlled)
	h.con.Send(t, "approve nosuchid")
	h.con.WaitFor(t, `There is no approval with ID "nosuchid".`, wait)
	h.con.Send(t, "approve")
	h.con.WaitFor(t, "error: no approval is waiting, so there is nothing to approve.", wait)
	h.con.Send(t, "deny")
	h.con.WaitFor(t, "error: no approval is waiting, so there is nothing to deny.", wait)
	h.con.Send(t, "approve one two")
	h.con.WaitFor(t, "error: usage: approve [<id>]", wait)
	if h.model.Count() != 0 {
		t.Fatalf("bad approval answers reached the model (%d requests)", h.model.Count())
	}
}

// An expired approval cannot be approved; its card says so and the run ends
// with a message.
func TestApprovalExpires(t *testing.T) {
	file := filepath.Join(t.TempDir(), "log")
	h := start(t, policy.LevelControlled, func(o *testkit.Options) { o.ApprovalTTL = 300 * time.Millisecond })
	h.model.Script(
		modeltest.Calls(discoverLocal()),
		modeltest.Calls(controlCmd(testkit.AppendLine(file))),
	)
	h.ask("append a line on @localhost")
	id := h.con.ApprovalID(t, 1, wait)
	h.con.WaitFor(t, "[approval "+id+"] expired at", wait)
	h.con.WaitFor(t, "vigil> The approval expired before anyone decided", wait)
	h.con.Send(t, "approve "+id)
	h.idle()
	h.con.WaitFor(t, "Not accepted: expired at", wait)
	if n := testkit.LineCount(t, file); n != 0 {
		t.Fatalf("expired approval ran the write %d times", n)
	}
	if h.session().Run != nil {
		t.Fatal("run still open after expiry")
	}
}

// chatStack runs vigil on the in-memory multi-user platform.
func chatStack(t *testing.T, cp policy.ChannelPolicy, mutate ...func(*testkit.Options)) (*testkit.Chat, *modeltest.Server, *testkit.Stack) {
	t.Helper()
	model := modeltest.New(t)
	chat := testkit.NewChat()
	cp.Match = "testchat:" + cp.Match
	o := testkit.Options{Adapter: chat, Model: model, Channels: []policy.ChannelPolicy{cp}}
	for _, m := range mutate {
		m(&o)
	}
	return chat, model, testkit.Start(t, o)
}

// idle waits for the bot to finish; testkit.Chat hands messages and
// decisions to the bot before Say and Decide return.
func idle(t *testing.T, st *testkit.Stack) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := st.Bot.WaitIdle(ctx); err != nil {
		t.Fatalf("bot not idle: %v", err)
	}
}

func writeScript(model *modeltest.Server, file string) {
	model.Script(
		modeltest.Calls(discoverLocal()),
		modeltest.Calls(controlCmd(testkit.AppendLine(file))),
		modeltest.Calls(readExec("cat "+file)),
		modeltest.Text("done"),
	)
}

// Roles: a viewer cannot approve; four-eyes refuses self-approval; a proper
// approver's click runs the call once.
func TestRolesAndFourEyes(t *testing.T) {
	file := filepath.Join(t.TempDir(), "log")
	chat, model, st := chatStack(t, policy.ChannelPolicy{Match: "ops", Level: policy.LevelControlled,
		Operators: []string{"alice"}, Approvers: []string{"alice", "bob"}})
	writeScript(model, file)
	th := testkit.Thread("ops", "t1")
	chat.Say(t, th, "alice", "append a line on @localhost")
	card := chat.WaitCard(t, th, wait)

	chat.Decide(t, bot.Decision{ApprovalID: card.ID, Token: card.Token, Approve: true, User: "mallory", Thread: th})
	chat.Decide(t, bot.Decision{ApprovalID: card.ID, Token: card.Token, Approve: true, User: "alice", Thread: th})
	idle(t, st)
	if n := testkit.LineCount(t, file); n != 0 {
		t.Fatalf("refused approvals ran the write %d times", n)
	}
	if notes := chat.Notes("mallory"); len(notes) != 1 || !strings.Contains(notes[0], "approver") {
		t.Fatalf("non-approver got %q, want one refusal naming the approver role", notes)
	}
	if notes := chat.Notes("alice"); len(notes) != 1 || !strings.Contains(strings.ToLower(notes[0]), "own") {
		t.Fatalf("self-approval got %q, want one four-eyes refusal", notes)
	}
	chat.Decide(t, bot.Decision{ApprovalID: card.ID, Token: "forged-token", Approve: true, User: "bob", Thread: th})
	idle(t, st)
	if n := testkit.LineCount(t, file); n != 0 {
		t.Fatal("a forged token ran the write")
	}
	chat.Decide(t, bot.Decision{ApprovalID: card.ID, Token: card.Token, Approve: true, User: "bob", Thread: th})
	idle(t, st)
	chat.WaitText(t, th, "[answer] done", wait)
	if n := testkit.LineCount(t, file); n != 1 {
		t.Fatalf("approved write ran %d times, want 1", n)
	}
	if got, _ := chat.Card(card.ID); got.Status != bot.ApprovalApproved || got.DecidedBy != "bob" {
		t.Fatalf("card after approval: %+v", got)
	}
}

// With four-eyes off, the requester may approve their own change.
func TestSelfApprovalAllowedWhenConfigured(t *testing.T) {
	file := filepath.Join(t.TempDir(), "log")
	chat, model, st := chatStack(t, policy.ChannelPolicy{Match: "ops", Level: policy.LevelControlled,
		AllowSelfApproval: true, Approvers: []string{"alice"}})
	writeScript(model, file)
	th := testkit.Thread("ops", "t1")
	chat.Say(t, th, "alice", "append a line on @localhost")
	card := chat.WaitCard(t, th, wait)
	chat.Decide(t, bot.Decision{ApprovalID: card.ID, Token: card.Token, Approve: true, User: "alice", Thread: th})
	idle(t, st)
	chat.WaitText(t, th, "[answer] done", wait)
	if n := testkit.LineCount(t, file); n != 1 {
		t.Fatalf("self-approved write ran %d times, want 1", n)
	}
}

// People without the viewer role get a polite refusal and nothing runs.
func TestNonViewerRefused(t *testing.T) {
	chat, model, st := chatStack(t, policy.ChannelPolicy{Match: "ops", Level: policy.LevelControlled,
		Viewers: []string{"alice"}, Approvers: []string{"bob"}})
	th := testkit.Thread("ops", "t1")
	chat.Say(t, th, "eve", "what runs on @localhost?")
	idle(t, st)
	if notes := chat.Notes("eve"); len(notes) != 1 || !strings.Contains(notes[0], "not on the list") {
		t.Fatalf("non-viewer got %q", notes)
	}
	if model.Count() != 0 {
		t.Fatal("a non-viewer's message reached the model")
	}
}

// 50 concurrent approvals by 50 approvers: exactly one execution; everyone
// else is told who won.
func TestConcurrentDecisionsExecuteOnce(t *testing.T) {
	file := filepath.Join(t.TempDir(), "log")
	var approvers []string
	for i := range 50 {
		approvers = append(approvers, fmt.Sprintf("u%d", i))
	}
	chat, model, st := chatStack(t, policy.ChannelPolicy{Match: "ops", Level: policy.LevelControlled,
		Operators: []string{"alice"}, Approvers: approvers})
	writeScript(model, file)
	th := testkit.Thread("ops", "t1")
	chat.Say(t, th, "alice", "append a line on @localhost")
	card := chat.WaitCard(t, th, wait)
	var wg sync.WaitGroup
	for _, u := range approvers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			chat.Decide(t, bot.Decision{ApprovalID: card.ID, Token: card.Token, Approve: true, User: u, Thread: th})
		}()
	}
	wg.Wait()
	idle(t, st)
	chat.WaitText(t, th, "[answer] done", wait)
	if n := testkit.LineCount(t, file); n != 1 {
		t.Fatalf("50 concurrent approvals ran the write %d times, want 1", n)
	}
	lost := 0
	for _, u := range approvers {
		for _, n := range chat.Notes(u) {
			if strings.Contains(n, "already approved by") {
				lost++
			}
		}
	}
	if lost != 49 {
		t.Fatalf("%d deciders were told the approval was already decided, want 49", lost)
	}
}

// Arguments changed after approval are refused: the binding no longer
// matches and nothing runs.
func TestBindingMismatchRefused(t *testing.T) {
	dir := t.TempDir()
	file, other := filepath.Join(dir, "log"), filepath.Join(dir, "other")
	chat, model, st := chatStack(t, policy.ChannelPolicy{Match: "ops", Level: policy.LevelControlled,
		Operators: []string{"alice"}, Approvers: []string{"bob"}})
	model.Script(
		modeltest.Calls(discoverLocal()),
		modeltest.Calls(controlCmd(testkit.AppendLine(file))),
		modeltest.Text("not run"),
	)
	th := testkit.Thread("ops", "t1")
	chat.Say(t, th, "alice", "append a line on @localhost")
	card := chat.WaitCard(t, th, wait)
	idle(t, st)
	// Tamper with the saved run: the pending call now does something else.
	ctx := context.Background()
	s, err := st.Stores.Sessions.LoadSession(ctx, th.Key())
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range s.Run.Pending.Calls {
		if c.ID == s.Run.Pending.ApprovalCallID {
			s.Run.Pending.Calls[i].Arguments = testkit.Args("action", "command", "target", "localhost", "command", testkit.AppendLine(other))
		}
	}
	if err := st.Stores.Sessions.SaveSession(ctx, s); err != nil {
		t.Fatal(err)
	}
	chat.Decide(t, bot.Decision{ApprovalID: card.ID, Token: card.Token, Approve: true, User: "bob", Thread: th})
	idle(t, st)
	chat.WaitText(t, th, "[answer] not run", wait)
	if testkit.LineCount(t, file)+testkit.LineCount(t, other) != 0 {
		t.Fatal("a call that no longer matches its approval ran")
	}
	res := resultsOf(t, model.Requests()[2])
	if e := res[len(res)-1]; e.Error == nil || !strings.Contains(e.Error.Message, "not run") {
		t.Fatalf("model was not told the call did not run: %+v", e)
	}
}

// Secrets in command output are redacted in what the user sees and in the
// audit file; every decision is in the audit chain.
func TestRedactionAndAudit(t *testing.T) {
	dir := t.TempDir()
	auditPath := filepath.Join(dir, "audit.jsonl")
	file := filepath.Join(dir, "log")
	h := start(t, policy.LevelControlled, func(o *testkit.Options) { o.AuditFile = auditPath })
	secret := "ghp_" + strings.Repeat("A1b2C3d4E5", 4)
	h.model.Script(
		modeltest.Calls(discoverLocal()),
		modeltest.Calls(readExec("echo token="+secret+" password=hunter22")),
		modeltest.Calls(controlCmd(testkit.AppendLine(file))),
		modeltest.Calls(readExec("cat "+file)),
		modeltest.Text("done"),
	)
	h.ask("check @localhost")
	id := h.con.ApprovalID(t, 1, wait)
	h.con.Send(t, "approve "+id)
	h.idle()
	h.con.WaitFor(t, "vigil> done", wait)
	out := h.con.Output()
	for _, s := range []string{secret, "hunter22"} {
		mustNotContain(t, out, s, "console output")
	}
	raw, err := os.ReadFile(auditPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{secret, "hunter22"} {
		mustNotContain(t, string(raw), s, "audit file")
	}
	recs, err := audit.ReadFile(auditPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := audit.VerifyChain(recs); err != nil {
		t.Fatalf("audit chain broken: %v", err)
	}
	seen := map[audit.Action]bool{}
	for _, r := range recs {
		seen[r.Action] = true
	}
	for _, a := range []audit.Action{audit.Allow, audit.ApprovalRequested, audit.Approved, audit.Executed} {
		if !seen[a] {
			t.Fatalf("audit has no %q record; got %v", a, seen)
		}
	}
}

// A run waiting on an approval survives its process: a fresh bot on the
// same stores takes the decision and completes the run once.
func TestResumeAfterRestart(t *testing.T) {
	file := filepath.Join(t.TempDir(), "log")
	mem := store.NewMemory().Stores()
	model := modeltest.New(t)
	cp := []policy.ChannelPolicy{{Match: "testchat:ops", Level: policy.LevelControlled,
		Operators: []string{"alice"}, Approvers: []string{"bob"}}}
	th := testkit.Thread("ops", "t1")

	first := testkit.NewChat()
	ctx1, stop1 := context.WithCancel(context.Background())
	st1 := testkit.Start(t, testkit.Options{Adapter: first, Model: model, Channels: cp, Stores: &mem, NoRun: true})
	done1 := make(chan error, 1)
	go func() { done1 <- st1.Bot.Run(ctx1) }()
	model.Script(modeltest.Calls(discoverLocal()), modeltest.Calls(controlCmd(testkit.AppendLine(file))))
	first.Say(t, th, "alice", "append a line on @localhost")
	card := first.WaitCard(t, th, wait)
	idle(t, st1)
	stop1()
	<-done1

	second := testkit.NewChat()
	st2 := testkit.Start(t, testkit.Options{Adapter: second, Model: model, Channels: cp, Stores: &mem})
	model.Script(modeltest.Calls(readExec("cat "+file)), modeltest.Text("resumed"))
	second.Decide(t, bot.Decision{ApprovalID: card.ID, Token: card.Token, Approve: true, User: "bob", Thread: th})
	idle(t, st2)
	second.WaitText(t, th, "[answer] resumed", wait)
	if n := testkit.LineCount(t, file); n != 1 {
		t.Fatalf("resumed approval ran the write %d times, want 1", n)
	}
}

// A reply the platform did not mark as addressed is still answered when
// vigil already holds a conversation in that thread; elsewhere it is
// ignored.
func TestUnaddressedReplyInKnownThread(t *testing.T) {
	chat, model, st := chatStack(t, policy.ChannelPolicy{Match: "ops", Level: policy.LevelReadOnly})
	known, other := testkit.Thread("ops", "t1"), testkit.Thread("ops", "t2")
	model.Script(modeltest.Text("first"), modeltest.Text("second"))
	chat.Say(t, known, "alice", "hello")
	idle(t, st)
	chat.WaitText(t, known, "[answer] first", wait)
	chat.SayUnaddressed(t, other, "alice", "chatter elsewhere")
	chat.SayUnaddressed(t, known, "alice", "and a follow-up")
	idle(t, st)
	chat.WaitText(t, known, "[answer] second", wait)
	if n := len(chat.Posts(other)); n != 0 {
		t.Fatalf("vigil answered %d times in a thread it was never part of", n)
	}
	if model.Count() != 2 {
		t.Fatalf("model got %d requests, want 2", model.Count())
	}
}

// "stop" cancels the run in progress; while a change waits for approval it
// drops the change, and the card says so.
func TestStop(t *testing.T) {
	h := start(t, policy.LevelControlled)
	h.model.Script(modeltest.Delay(10*time.Second, modeltest.Text("too late")))
	h.con.Send(t, "think hard about @localhost")
	waitUntil(t, "the model call to start", func() bool { return h.model.Count() == 1 })
	h.con.Send(t, "stop")
	h.con.WaitFor(t, "note: Stopping.", wait)
	h.idle()
	mustNotContain(t, h.con.Output(), "too late", "a stopped run's answer")
	if s := h.session(); s.Run != nil {
		t.Fatalf("run still open after stop: %+v", s.Run)
	}

	file := filepath.Join(t.TempDir(), "log")
	h.model.Script(modeltest.Calls(discoverLocal()), modeltest.Calls(controlCmd(testkit.AppendLine(file))))
	h.ask("append a line on @localhost")
	id := h.con.ApprovalID(t, 1, wait)
	h.ask("stop")
	h.con.WaitFor(t, "[approval "+id+"] denied by alice", wait)
	h.con.WaitFor(t, "note: Stopped. Nothing more will run for that request.", wait)
	h.con.Send(t, "approve "+id)
	h.idle()
	h.con.WaitFor(t, "already denied by alice", wait)
	if n := testkit.LineCount(t, file); n != 0 {
		t.Fatalf("a stopped change ran %d times", n)
	}
	// The conversation goes on: the history is a valid one for the model.
	h.model.Script(modeltest.Text("still here"))
	h.ask("anything else?")
	h.con.WaitFor(t, "vigil> still here", wait)
}

// "stop" during a tool call ends the run for good: it is not mistaken for
// a run whose replica died and continued by the orphan sweep.
func TestStopDuringToolIsNotResumed(t *testing.T) {
	h := start(t, policy.LevelControlled)
	h.model.Script(modeltest.Calls(discoverLocal()), modeltest.Calls(readExec("sleep 5; echo slow")))
	h.con.Send(t, "slow read on @localhost")
	h.con.WaitFor(t, "[ok] discover on localhost", wait)
	waitUntil(t, "the slow read to be running", func() bool {
		// Checkpointed as in flight: the state a dead replica leaves.
		s := h.session()
		return s.Run != nil && len(s.Run.InFlight) == 1 && s.Run.InFlight[0].Name == "read"
	})
	h.con.Send(t, "stop")
	h.con.WaitFor(t, "note: Stopping.", wait)
	h.idle()
	h.st.WaitSweeps(t, 3) // the orphan finder looked, and continued nothing
	mustNotContain(t, h.con.Output(), "Picking up where the previous attempt stopped", "a stopped run")
	if s := h.session(); s.Run != nil {
		t.Fatalf("run still open after stop: %+v", s.Run)
	}
	if runs, _ := h.st.Stores.Runs.ActiveRuns(t.Context()); len(runs) != 0 {
		t.Fatalf("stopped run still indexed as active: %v", runs)
	}
	if n := h.model.Count(); n != 2 {
		t.Fatalf("model got %d requests after stop, want 2", n)
	}
}

// A decision that arrives while the card is still being posted (before the
// platform returned its ID) still edits the card.
func TestDecisionBeforeCardIsRemembered(t *testing.T) {
	file := filepath.Join(t.TempDir(), "log")
	chat, model, st := chatStack(t, policy.ChannelPolicy{Match: "ops", Level: policy.LevelControlled,
		Operators: []string{"alice"}, Approvers: []string{"bob"}})
	model.Script(
		modeltest.Calls(discoverLocal()),
		modeltest.Calls(controlCmd(testkit.AppendLine(file))),
		modeltest.Text("denied, as asked"),
	)
	th := testkit.Thread("ops", "t1")
	chat.OnCard = func(card bot.ApprovalCard) {
		if card.Status == bot.ApprovalPending {
			chat.Decide(t, bot.Decision{ApprovalID: card.ID, Token: card.Token, Approve: false, Reason: "fast no", User: "bob", Thread: th})
		}
	}
	chat.Say(t, th, "alice", "append a line on @localhost")
	idle(t, st)
	chat.WaitText(t, th, "[answer] denied, as asked", wait)
	card := chat.WaitCard(t, th, wait)
	if got, _ := chat.Card(card.ID); got.Status != bot.ApprovalDenied || got.Reason != "fast no" {
		t.Fatalf("card after a decision that beat its posting: %+v", got)
	}
	if n := testkit.LineCount(t, file); n != 0 {
		t.Fatalf("denied write ran %d times", n)
	}
}

// One person sending faster than the per-channel limit is told so; the
// excess messages do not reach the model, and "stop" is never limited.
func TestUserRateLimit(t *testing.T) {
	chat, model, st := chatStack(t, policy.ChannelPolicy{Match: "ops", Level: policy.LevelReadOnly},
		func(o *testkit.Options) { o.UserRateLimit = 2 })
	model.Default(modeltest.Text("ok"))
	for i := range 3 {
		chat.Say(t, testkit.Thread("ops", fmt.Sprint("t", i)), "alice", "hello")
	}
	chat.Say(t, testkit.Thread("ops", "t9"), "bob", "hello from bob")
	idle(t, st)
	if n := model.Count(); n != 3 {
		t.Fatalf("model got %d requests, want 3 (two of alice's, one of bob's)", n)
	}
	notes := chat.Notes("alice")
	if len(notes) != 1 || !strings.Contains(notes[0], "faster than I can work") {
		t.Fatalf("alice was told %q, want one rate-limit notice", notes)
	}
	if len(chat.Notes("bob")) != 0 {
		t.Fatal("bob was limited by alice's messages")
	}
	stopThread := testkit.Thread("ops", "t5")
	chat.Say(t, stopThread, "alice", "stop")
	idle(t, st)
	chat.WaitText(t, stopThread, "Nothing is running here.", wait)
}

package matrix_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/vigilops/vigil/adapters/matrix"
	"github.com/vigilops/vigil/internal/testenv/modeltest"
	"github.com/vigilops/vigil/internal/testenv/testkit"
	"github.com/vigilops/vigil/policy"
)

// End to end: the real bot, agent, policy and tools (internal/testenv/testkit) with
// a scripted model, talking to people through the Matrix adapter on a real
// Dendrite.

type e2e struct {
	a     *matrix.Adapter
	h     matrix.E2EHarness
	model *modeltest.Server
	stack *testkit.Stack
	file  string
}

// startE2E runs vigil on the Matrix adapter in a controlled room where alice
// may ask for changes and approvers come from room power levels alone.
func startE2E(t *testing.T, script func(file string) []modeltest.Step, opts ...func(*testkit.Options)) *e2e {
	t.Helper()
	return startE2EWith(t, script, true, opts...)
}

// startE2EWith is startE2E; aliceOperator false leaves the operators to the
// approvers, that is to power level 50 and up.
func startE2EWith(t *testing.T, script func(file string) []modeltest.Step, aliceOperator bool, opts ...func(*testkit.Options)) *e2e {
	t.Helper()
	h := matrix.NewE2EHarness(t)
	a, err := matrix.New(h.Config(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	model := modeltest.New(t)
	file := filepath.Join(t.TempDir(), "ran.log")
	model.Script(script(file)...)
	var operators []string
	if aliceOperator {
		operators = []string{string(h.Alice().UserID)}
	}
	o := testkit.Options{
		Adapter: a,
		Model:   model,
		Channels: []policy.ChannelPolicy{{
			Match:     "matrix:" + string(h.Room()),
			Level:     policy.LevelControlled,
			Operators: operators,
			// Approvers come from power levels here; the config check still
			// wants a non-empty list for a controlled channel, so it names
			// someone who is not in the room.
			Approvers: []string{"@nobody:localhost"},
		}},
	}
	for _, opt := range opts {
		opt(&o)
	}
	st := testkit.Start(t, o)
	select {
	case <-a.Ready():
	case <-time.After(30 * time.Second):
		t.Fatal("matrix adapter not ready")
	}
	h.WaitJoined()
	return &e2e{a: a, h: h, model: model, stack: st, file: file}
}

// inThread reports whether e is a bot message in the thread rooted at root.
func inThread(e *event.Event, root id.EventID) bool {
	return e.Content.AsMessage().RelatesTo.GetThreadParent() == root
}

// card waits for the approval card in the thread and returns it with its ID.
func (x *e2e) card(t *testing.T, root id.EventID) (*event.Event, string) {
	t.Helper()
	c := x.h.WaitBotMessage("the approval card", func(e *event.Event) bool {
		_, ok := e.Content.Raw[matrix.FieldApprovalID].(string)
		return ok && inThread(e, root) && e.Content.AsMessage().RelatesTo.GetReplaceID() == ""
	})
	return c, c.Content.Raw[matrix.FieldApprovalID].(string)
}

func (x *e2e) waitEdit(t *testing.T, card id.EventID, status string) map[string]any {
	t.Helper()
	e := x.h.WaitBotMessage("the card edited to "+status, func(e *event.Event) bool {
		nc, _ := e.Content.Raw["m.new_content"].(map[string]any)
		return e.Content.AsMessage().RelatesTo.GetReplaceID() == card && nc[matrix.FieldApprovalStatus] == status
	})
	return e.Content.Raw["m.new_content"].(map[string]any)
}

func (x *e2e) idle(t *testing.T) {
	t.Helper()
	time.Sleep(50 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := x.stack.Bot.WaitIdle(ctx); err != nil {
		t.Fatalf("bot not idle: %v", err)
	}
}

func discoverAndAppend(file string) []modeltest.Step {
	return []modeltest.Step{
		modeltest.Calls(modeltest.Call("discover", testkit.Args("resource", "localhost"))),
		modeltest.Calls(modeltest.Call("control", testkit.Args("action", "command", "target", "localhost", "command", "echo ran >> "+file))),
	}
}

func TestE2EApproveByReaction(t *testing.T) {
	x := startE2E(t, func(file string) []modeltest.Step {
		return append(discoverAndAppend(file),
			modeltest.Calls(modeltest.Call("read", testkit.Args("action", "exec", "target", "localhost", "command", "cat "+file))),
			modeltest.Text("Appended one line and verified it."))
	})
	root := x.h.Say(x.h.Alice(), x.h.Mention("append a line on @localhost"))

	// Traces in the thread, then the card.
	x.h.WaitBotMessage("a trace in the thread", func(e *event.Event) bool {
		return inThread(e, root) && strings.Contains(e.Content.AsMessage().Body, "discover")
	})
	card, approvalID := x.card(t, root)
	body := card.Content.AsMessage().Body
	for _, want := range []string{"echo ran >> " + x.file, "localhost", string(x.h.Alice().UserID), "!approve " + approvalID} {
		if !strings.Contains(body, want) {
			t.Fatalf("card lacks %q:\n%s", want, body)
		}
	}
	if n := testkit.LineCount(t, x.file); n != 0 {
		t.Fatalf("the write ran %d times before approval", n)
	}

	// ✅ by alice, the requester at power 0: refused with a short reply.
	x.h.React(x.h.Alice(), card.ID, "✅")
	x.h.WaitBotMessage("the refusal", func(e *event.Event) bool {
		c := e.Content.AsMessage()
		return inThread(e, root) && e.ID != card.ID && c.RelatesTo.GetReplaceID() == "" &&
			strings.Contains(strings.ToLower(c.Body), "approver")
	})
	x.idle(t)
	if n := testkit.LineCount(t, x.file); n != 0 {
		t.Fatalf("a refused approval ran the write %d times", n)
	}

	// ✅ by the moderator (power 50): runs once, card edited, final answer.
	x.h.React(x.h.Mod(), card.ID, "✅")
	nc := x.waitEdit(t, card.ID, "approved")
	if !strings.Contains(nc["body"].(string), "Approved by "+string(x.h.Mod().UserID)) {
		t.Fatalf("edited card: %v", nc["body"])
	}
	x.h.WaitBotMessage("the final answer", func(e *event.Event) bool {
		return inThread(e, root) && strings.Contains(e.Content.AsMessage().Body, "Appended one line and verified it.")
	})
	x.idle(t)
	if n := testkit.LineCount(t, x.file); n != 1 {
		t.Fatalf("approved write ran %d times, want exactly 1", n)
	}
	// A second ✅ does not run it again: the bot answers that it already
	// ran, and is then done with it.
	x.h.React(x.h.Mod(), card.ID, "✅")
	x.h.WaitBotMessage("the answer to the second ✅", func(e *event.Event) bool {
		return inThread(e, root) && strings.Contains(e.Content.AsMessage().Body, "already approved by "+string(x.h.Mod().UserID))
	})
	x.idle(t)
	if n := testkit.LineCount(t, x.file); n != 1 {
		t.Fatalf("a repeated ✅ ran the write again: %d lines", n)
	}
}

func TestE2EDenyByCommand(t *testing.T) {
	x := startE2E(t, func(file string) []modeltest.Step {
		return append(discoverAndAppend(file), modeltest.Text("Denied: change freeze."))
	})
	root := x.h.Say(x.h.Alice(), x.h.Mention("append a line on @localhost"))
	card, approvalID := x.card(t, root)

	x.h.Say(x.h.Mod(), x.h.InThread(&event.MessageEventContent{Body: "!deny " + approvalID + " change freeze"}, root))
	nc := x.waitEdit(t, card.ID, "denied")
	if !strings.Contains(nc["body"].(string), "change freeze") {
		t.Fatalf("edited card lacks the reason: %v", nc["body"])
	}
	x.h.WaitBotMessage("the final answer", func(e *event.Event) bool {
		return inThread(e, root) && strings.Contains(e.Content.AsMessage().Body, "Denied: change freeze.")
	})
	x.idle(t)
	if n := testkit.LineCount(t, x.file); n != 0 {
		t.Fatalf("denied write ran %d times", n)
	}
}

// TestE2ERolesInARoom: alice (power level 0, no operator) may ask but not
// change, and is told who may; she may not stop the moderator's change
// either, and is told so in the thread (Matrix has no private notices), and
// the change stays pending.
func TestE2ERolesInARoom(t *testing.T) {
	x := startE2EWith(t, func(file string) []modeltest.Step {
		return append(discoverAndAppend(file),
			modeltest.Text("I cannot change this for you."),
			modeltest.Calls(modeltest.Call("discover", testkit.Args("resource", "localhost"))),
			modeltest.Calls(modeltest.Call("control", testkit.Args("action", "command", "target", "localhost", "command", "echo ran >> "+file))),
			modeltest.Text("Denied."))
	}, false)
	root := x.h.Say(x.h.Alice(), x.h.Mention("append a line on @localhost"))
	x.h.WaitBotMessage("the role notice", func(e *event.Event) bool {
		b := e.Content.AsMessage().Body
		return inThread(e, root) && strings.Contains(b, "needs the operator role") &&
			strings.Contains(b, "room members with power level 50 or more")
	})
	x.h.WaitBotMessage("the answer", func(e *event.Event) bool {
		return inThread(e, root) && strings.Contains(e.Content.AsMessage().Body, "I cannot change this for you.")
	})
	x.idle(t)
	for _, e := range x.h.BotMessages() {
		if _, ok := e.Content.Raw[matrix.FieldApprovalID]; ok {
			t.Fatalf("an approval card was posted for a non-operator: %s", e.Content.AsMessage().Body)
		}
	}

	// The moderator's change waits; alice's "stop" is refused in the thread.
	modRoot := x.h.Say(x.h.Mod(), x.h.Mention("append a line on @localhost"))
	card, approvalID := x.card(t, modRoot)
	x.idle(t)
	x.h.Say(x.h.Alice(), x.h.InThread(&event.MessageEventContent{MsgType: event.MsgText, Body: "stop"}, modRoot))
	x.h.WaitBotMessage("the refusal in the thread", func(e *event.Event) bool {
		return inThread(e, modRoot) && strings.Contains(e.Content.AsMessage().Body, "nothing was stopped")
	})
	x.idle(t)
	a, err := x.stack.Stores.Approvals.GetApproval(context.Background(), approvalID)
	if err != nil || a.Status != policy.ApprovalPending {
		t.Fatalf("after alice's stop the approval is %+v (%v), want pending", a, err)
	}
	x.h.Say(x.h.Mod(), x.h.InThread(&event.MessageEventContent{MsgType: event.MsgText, Body: "!deny " + approvalID + " test over"}, modRoot))
	x.waitEdit(t, card.ID, "denied")
	x.idle(t)
	if n := testkit.LineCount(t, x.file); n != 0 {
		t.Fatalf("the write ran %d times", n)
	}
}

package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools"
)

// actorTool records the identity each call runs with: "peek" reads,
// "poke" writes.
type actorTool struct {
	mu  sync.Mutex
	got map[string][]*policy.Actor
}

func (*actorTool) Spec() tools.Spec {
	return tools.Spec{Name: "who", Parameters: json.RawMessage(`{}`),
		Kinds: policy.ActionKinds{Actions: map[string]policy.Kind{"peek": policy.KindRead, "poke": policy.KindWrite}}}
}

func (*actorTool) Propose(raw json.RawMessage) (tools.Proposal, *policy.Block) {
	var a struct{ Action string }
	_ = json.Unmarshal(raw, &a)
	return tools.Proposal{Action: policy.Action{Tool: "who", Name: a.Action, Target: "localhost"}, Summary: a.Action + " localhost",
		Details: []policy.ChangeDetail{{Label: "change", Value: a.Action}}}, nil
}

func (s *actorTool) Execute(_ context.Context, p tools.Proposal) tools.Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.got == nil {
		s.got = map[string][]*policy.Actor{}
	}
	s.got[p.Name] = append(s.got[p.Name], p.Actor)
	return tools.Result{Envelope: tools.OK(map[string]string{"ok": p.Name})}
}

// A run's reads carry the asker's identity and an approved change the
// approver's; a change approved without a resolved approver identity, in
// a run that has a mapping, gets one that refuses, never vigil's own.
func TestCallsCarryTheirPersonsIdentity(t *testing.T) {
	ids := &policy.Identities{Rules: []policy.IdentityRule{
		{Name: "alice", Match: []string{"U0ALICE"}, Targets: policy.Targets{Kube: policy.KubeIdentity{User: "alice"}}},
		{Name: "bob", Match: []string{"U0BOB"}, Targets: policy.Targets{Kube: policy.KubeIdentity{User: "bob", Groups: []string{"sre"}}}},
	}}
	alice := ids.Resolve(policy.Subject{User: "U0ALICE"}, "console")
	bob := ids.Resolve(policy.Subject{User: "U0BOB"}, "console")
	start := func(t *testing.T, tool *actorTool) (*agent.Agent, *agent.Session) {
		m := &scripted{steps: []agent.ModelResponse{call("c1", "query", getLocal), call("p1", "who", `{"action":"peek"}`),
			call("w1", "who", `{"action":"poke"}`), call("p2", "who", `{"action":"peek"}`), text("done")}}
		a := agentWith(t, m, tool)
		s := &agent.Session{Key: "t", Policy: policy.NewSessionState()}
		out, err := a.Start(context.Background(), s, agent.Input{RunID: "r1", Requester: "U0ALICE", Role: operator, Actor: alice,
			Channel: "console", Level: policy.LevelControlled, Text: "go"}, agent.RunEnv{Sink: &recorder{}})
		if err != nil || out.Status != agent.StatusAwaitingApproval {
			t.Fatalf("start = %+v, %v", out, err)
		}
		return a, s
	}

	tool := &actorTool{}
	a, s := start(t, tool)
	if _, err := a.Resume(context.Background(), s, agent.Decision{Approved: true, By: "U0BOB", Actor: bob, Level: policy.LevelControlled},
		agent.RunEnv{Sink: &recorder{}}); err != nil {
		t.Fatal(err)
	}
	if p := tool.got["peek"]; len(p) != 2 || p[0].Kube.User != "alice" || p[1].Kube.User != "alice" {
		t.Fatalf("reads ran as %+v, want alice twice", p)
	}
	if w := tool.got["poke"]; len(w) != 1 || w[0].Kube.User != "bob" || w[0].Chat != "U0BOB" {
		t.Fatalf("the approved change ran as %+v, want bob", w)
	}

	tool = &actorTool{}
	a, s = start(t, tool)
	if _, err := a.Resume(context.Background(), s, agent.Decision{Approved: true, By: "U0BOB", Level: policy.LevelControlled},
		agent.RunEnv{Sink: &recorder{}}); err != nil {
		t.Fatal(err)
	}
	w := tool.got["poke"]
	if len(w) != 1 || w[0] == nil || !errors.Is(w[0].KubeRefusal(), policy.ErrNoIdentity) {
		t.Fatalf("an unresolved approver's change ran as %+v, want an identity that refuses", w)
	}
}

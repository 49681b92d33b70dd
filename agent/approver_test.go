package agent_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools"
	"github.com/vigilops/vigil/tools/builtin"
	"github.com/vigilops/vigil/tools/inventory"
)

// approverTool is a write that records who approved each execution.
type approverTool struct {
	mu  sync.Mutex
	got []string
}

func (*approverTool) Spec() tools.Spec {
	return tools.Spec{Name: "stamp", Parameters: json.RawMessage(`{}`), Kinds: policy.ActionKinds{Every: policy.KindWrite}}
}

func (*approverTool) Propose(json.RawMessage) (tools.Proposal, *policy.Block) {
	return tools.Proposal{Action: policy.Action{Tool: "stamp", Target: "localhost"}, Summary: "stamp localhost",
		Details: []policy.ChangeDetail{{Label: "change", Value: "stamp"}}}, nil
}

func (s *approverTool) Execute(_ context.Context, p tools.Proposal) tools.Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, p.ApprovedBy)
	return tools.Result{Envelope: tools.OK(map[string]string{"stamped_by": p.ApprovedBy})}
}

func agentWith(t *testing.T, m agent.Model, extra tools.Tool) *agent.Agent {
	t.Helper()
	reg, err := tools.NewRegistry(append(builtin.Tools(inventory.Default(), instantExec{}, builtin.NewMemoryStore()), extra)...)
	if err != nil {
		t.Fatal(err)
	}
	return agent.New(m, reg, agent.Config{})
}

// The approved call learns who approved it from the decision, carried on
// the proposal it runs with; the approval request carries the change's
// detail lines for the card.
func TestApprovedCallKnowsItsApprover(t *testing.T) {
	stamp := &approverTool{}
	m := &scripted{steps: []agent.ModelResponse{call("c1", "query", getLocal), call("w1", "stamp", `{}`), call("r1", "read", uptime), text("done")}}
	a := agentWith(t, m, stamp)
	out, s, _ := run(t, a, policy.LevelControlled)
	if out.Status != agent.StatusAwaitingApproval || len(out.Approval.Proposal.Details) != 1 || out.Approval.Proposal.Details[0].Value != "stamp" {
		t.Fatalf("outcome = %+v", out)
	}
	if len(stamp.got) != 0 {
		t.Fatal("the write ran before approval")
	}
	if _, err := a.Resume(context.Background(), s, agent.Decision{Approved: true, By: "U0BOB", Level: policy.LevelControlled}, agent.RunEnv{Sink: &recorder{}}); err != nil {
		t.Fatal(err)
	}
	if len(stamp.got) != 1 || stamp.got[0] != "U0BOB" {
		t.Fatalf("the tool saw approvers %q, want [U0BOB]", stamp.got)
	}

	// Without an approval (an autonomous channel) nobody is named.
	auto := &approverTool{}
	m = &scripted{steps: []agent.ModelResponse{call("c1", "query", getLocal), call("w1", "stamp", `{}`), call("r1", "read", uptime), text("done")}}
	run(t, agentWith(t, m, auto), policy.LevelAutonomous)
	if len(auto.got) != 1 || auto.got[0] != "" {
		t.Fatalf("autonomous run: approvers %q, want one empty", auto.got)
	}
}

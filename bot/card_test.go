package bot_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/policy/command"
	"github.com/vigilops/vigil/tools"
)

// A card shows what will happen: a secret's literal value is masked, the
// command substitution hidden in it is not; a compound command is listed
// part by part; the approvers to notify are named; and the card carries
// the hash of exactly the change it shows.
func TestCardShowsWhatRunsBehindASecret(t *testing.T) {
	cmd := "export DB_PASSWORD=hunter2hunter2$(touch$IFS/tmp/pwned) && systemctl restart app; echo ok | tee /tmp/log"
	args, _ := json.Marshal(map[string]string{"action": "command", "command": cmd})
	p := tools.Proposal{Action: policy.Action{Tool: "control", Name: "command", Kind: policy.KindWrite, Command: cmd}, Summary: "restart app"}
	r := newRunner()
	r.start = func(ctx context.Context, s *agent.Session, in agent.Input, env agent.RunEnv) agent.Outcome {
		if err := begin(ctx, s, in, env); err != nil {
			return stopped(ctx, s, env, err)
		}
		call := agent.ToolCall{ID: "w1", Name: "control", Arguments: string(args)}
		s.History = append(s.History, agent.Message{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{call}})
		s.Run.Pending = &agent.PendingBatch{Calls: []agent.ToolCall{call}, Results: map[string]string{}, ApprovalCallID: call.ID}
		need := &agent.ApprovalNeeded{CallID: call.ID, Proposal: p, Args: string(args), Risk: command.RiskHigh}
		emit(ctx, s, env, agent.Event{Type: agent.EventApprovalNeeded, CallID: call.ID, Proposal: &need.Proposal, Approval: need})
		return agent.Outcome{Status: agent.StatusAwaitingApproval, Approval: need}
	}
	rep := newReplica(t, replicaOptions{runner: r})
	th := thread("secret-card")
	rep.say(th, "olga", "restart the app")
	card := rep.chat.waitCard(t, th)
	if !strings.Contains(card.Command, "$(touch$IFS/tmp/pwned)") || strings.Contains(card.Command, "hunter2hunter2") {
		t.Errorf("card command %q: want the $(…) shown and the secret masked", card.Command)
	}
	want := []string{"&& systemctl restart app", "; echo ok", "| tee /tmp/log", "inside $(…): touch$IFS/tmp/pwned"}
	for _, w := range want {
		if !slices.Contains(card.Parts, w) {
			t.Errorf("card parts %q lack %q", card.Parts, w)
		}
	}
	if !slices.Equal(card.Approvers, []string{"alice", "bob"}) {
		t.Errorf("approvers to notify = %q, want alice and bob", card.Approvers)
	}
	if card.ChangeHash == "" || card.ChangeHash != policy.ChangeHash(card.Command, nil) {
		t.Errorf("card hash %q is not the hash of the change it shows", card.ChangeHash)
	}
}

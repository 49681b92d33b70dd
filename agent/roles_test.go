package agent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/policy/command"
	"github.com/vigilops/vigil/tools"
)

// start begins a run for who in a channel at level.
func start(t *testing.T, a *agent.Agent, level policy.ControlLevel, who policy.Requester) (agent.Outcome, *agent.Session, *recorder) {
	t.Helper()
	s := &agent.Session{Key: "t", Policy: policy.NewSessionState()}
	rec := &recorder{}
	out, err := a.Start(context.Background(), s, agent.Input{RunID: "r1", Requester: who.User, Role: who, Channel: "slack:C1", Level: level, Text: "go"}, agent.RunEnv{Sink: rec})
	if err != nil {
		t.Fatal(err)
	}
	return out, s, rec
}

var viewer = policy.Requester{User: "carol", Operators: "alice"}

const touchTmp = `{"action":"command","target":"localhost","command":"touch /tmp/vigil-role-test"}`

// A requester without the operator role reads freely; the write they
// propose is refused before an approval exists, in every level, and the
// model is told why in the envelope so it can explain.
func TestNonOperatorWriteRefusedBeforeApproval(t *testing.T) {
	for _, level := range []policy.ControlLevel{policy.LevelReadOnly, policy.LevelControlled, policy.LevelAutonomous} {
		t.Run(string(level), func(t *testing.T) {
			m := &scripted{steps: []agent.ModelResponse{
				call("c1", "query", getLocal),
				call("r1", "read", uptime),
				call("w1", "control", touchTmp),
				text("I cannot make that change for you."),
			}}
			out, _, rec := start(t, newAgent(t, m, agent.Config{}), level, viewer)
			if out.Status != agent.StatusDone || out.Approval != nil || len(rec.of(agent.EventApprovalNeeded)) != 0 {
				t.Fatalf("outcome %+v: a refused write must not wait for approval", out)
			}
			codes := map[string]string{}
			for _, e := range rec.of(agent.EventToolResult) {
				codes[e.CallID] = e.Code
			}
			if codes["r1"] != "" || codes["w1"] != string(policy.CodeActionNotAllowed) {
				t.Fatalf("codes %v: want the read to run and the write refused", codes)
			}
			last := m.reqs[len(m.reqs)-1].Messages
			env := last[len(last)-1].Content
			for _, want := range []string{`"role_required":"operator"`, "carol", "alice", "recovery_hint"} {
				if !strings.Contains(env, want) {
					t.Errorf("the model's envelope lacks %s: %s", want, env)
				}
			}
		})
	}
}

// A requester who loses the operator role while their change waits is
// refused at resume, whoever approved it: the role is decided again.
func TestResumeDecidesTheRoleAgain(t *testing.T) {
	m := &scripted{steps: []agent.ModelResponse{
		call("c1", "query", getLocal),
		call("w1", "control", touchTmp),
		text("The change was not made."),
	}}
	a := newAgent(t, m, agent.Config{})
	out, s, _ := start(t, a, policy.LevelControlled, policy.Requester{User: "alice", Operator: true})
	if out.Status != agent.StatusAwaitingApproval {
		t.Fatalf("outcome %+v, want an approval", out)
	}
	lost := policy.Requester{User: "alice", Operators: "bob"}
	ran := false
	rec := &recorder{}
	res, err := a.Resume(context.Background(), s, agent.Decision{Approved: true, By: "bob", Role: &lost,
		BeforeExecute: func(context.Context, tools.Proposal, string) error { ran = true; return nil }}, agent.RunEnv{Sink: rec})
	if err != nil {
		t.Fatal(err)
	}
	if ran {
		t.Fatal("the approved call reached execution although its requester is no operator any more")
	}
	var code string
	for _, e := range rec.of(agent.EventToolResult) {
		if e.CallID == "w1" {
			code = e.Code
		}
	}
	if code != string(policy.CodeActionNotAllowed) || res.Status != agent.StatusDone {
		t.Fatalf("resume: code %q outcome %+v, want the role refusal", code, res)
	}
}

// The approval a write waits for carries policy's verdict: a file_edit of
// /etc/passwd is high risk because of its path, not "unknown command".
func TestApprovalCarriesTheVerdict(t *testing.T) {
	m := &scripted{steps: []agent.ModelResponse{
		call("c1", "query", getLocal),
		call("w1", "file_edit", `{"action":"write","target":"localhost","path":"/etc/passwd","content":"x"}`),
	}}
	out, _, rec := start(t, newAgent(t, m, agent.Config{}), policy.LevelControlled, policy.Requester{User: "alice", Operator: true})
	if out.Approval == nil {
		t.Fatalf("outcome %+v, want an approval", out)
	}
	need := out.Approval
	reasons := strings.Join(need.Reasons, "; ")
	if need.Risk != command.RiskHigh || !strings.Contains(reasons, "/etc/passwd") || strings.Contains(reasons, "unknown command") {
		t.Fatalf("approval risk %q reasons %q, want high for a system path", need.Risk, need.Reasons)
	}
	if ev := rec.of(agent.EventApprovalNeeded); len(ev) != 1 || ev[0].Approval.Risk != command.RiskHigh {
		t.Fatalf("approval event %+v", ev)
	}
}

// What the model says it did is checked against what ran: a claimed
// restart after reads only gets the note; a claimed change that ran does
// not.
func TestClaimNoteOnUnbackedAnswers(t *testing.T) {
	m := &scripted{steps: []agent.ModelResponse{
		call("c1", "query", getLocal),
		call("r1", "read", uptime),
		text("I restarted nginx and it is healthy now."),
	}}
	out, s, _ := start(t, newAgent(t, m, agent.Config{}), policy.LevelAutonomous, policy.Requester{User: "alice", Operator: true})
	if !strings.HasPrefix(out.Answer, "I restarted nginx and it is healthy now.") || !strings.Contains(out.Answer, "no change was made") {
		t.Fatalf("answer %q: want the model's text and the note", out.Answer)
	}
	if h := s.History[len(s.History)-1]; !strings.Contains(h.Content, "no change was made") {
		t.Error("the note is not in the history: the model would not learn of it")
	}

	m = &scripted{steps: []agent.ModelResponse{
		call("c1", "query", getLocal),
		call("w1", "control", `{"action":"command","target":"localhost","command":"systemctl restart nginx"}`),
		call("r1", "read", uptime),
		text("I restarted nginx and it is healthy now."),
	}}
	out, _, _ = start(t, newAgent(t, m, agent.Config{}), policy.LevelAutonomous, policy.Requester{User: "alice", Operator: true})
	if out.Answer != "I restarted nginx and it is healthy now." {
		t.Fatalf("answer %q: a restart that ran needs no note", out.Answer)
	}
}

package agent_test

import (
	"context"
	"testing"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools"
	"github.com/vigilops/vigil/tools/builtin"
	"github.com/vigilops/vigil/tools/inventory"
)

// A channel given its own registry (WithChannelTools) is offered its
// tools, in native and JSON mode, and its calls go to them; a channel
// given none gets the agent's own.
func TestChannelTools(t *testing.T) {
	inv := inventory.Default()
	all := builtin.Tools(inv, instantExec{}, builtin.NewMemoryStore())
	full, err := tools.NewRegistry(all...)
	if err != nil {
		t.Fatal(err)
	}
	var narrow []tools.Tool
	for _, tl := range all {
		if tl.Spec().Name == "query" {
			narrow = append(narrow, tl)
		}
	}
	small, err := tools.NewRegistry(narrow...)
	if err != nil {
		t.Fatal(err)
	}
	pick := func(ch string) agent.Registry {
		if ch == "team-a" {
			return small
		}
		return nil
	}
	for _, mode := range []agent.ToolMode{agent.ToolModeNative, agent.ToolModeJSON} {
		m := &scripted{steps: []agent.ModelResponse{call("c1", "read", uptime), text("done"), text("done")}}
		if mode == agent.ToolModeJSON {
			m.steps = []agent.ModelResponse{text(`{"final_answer":{"summary":"done","confidence":"high"}}`),
				text(`{"final_answer":{"summary":"done","confidence":"high"}}`)}
		}
		a := agent.New(m, full, agent.Config{ToolMode: mode}, agent.WithChannelTools(pick))
		for _, ch := range []string{"team-a", "team-b"} {
			s := &agent.Session{Key: "t-" + ch, Policy: policy.NewSessionState()}
			if _, err := a.Start(context.Background(), s, agent.Input{RunID: "r", Requester: "u", Role: operator,
				Channel: ch, Level: policy.LevelControlled, Text: "go"}, agent.RunEnv{}); err != nil {
				t.Fatal(err)
			}
		}
		first := m.reqs[0]
		if mode == agent.ToolModeNative {
			if len(first.Tools) != 1 || first.Tools[0].Name != "query" {
				t.Fatalf("%s: team-a was offered %d tools", mode, len(first.Tools))
			}
			if last := m.reqs[len(m.reqs)-1]; len(last.Tools) != len(full.Specs()) {
				t.Fatalf("%s: team-b was offered %d tools, want all %d", mode, len(last.Tools), len(full.Specs()))
			}
		} else {
			if sys := first.Messages[0].Content; !contains(sys, `"query"`) || contains(sys, `"read"`) {
				t.Fatalf("%s: team-a's prompt does not list only its tools:\n%s", mode, sys)
			}
			if sys := m.reqs[len(m.reqs)-1].Messages[0].Content; !contains(sys, `"read"`) {
				t.Fatalf("%s: team-b's prompt lacks the read tool", mode)
			}
			continue
		}
		// team-a's call to a tool its registry lacks is refused, not run.
		if got := m.reqs[1].Messages[len(m.reqs[1].Messages)-1].Content; !contains(got, "there is no tool named") {
			t.Fatalf("%s: team-a's read: %s", mode, got)
		}
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

package agent_test

import (
	"context"
	"io"
	"testing"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools"
	"github.com/vigilops/vigil/tools/builtin"
	"github.com/vigilops/vigil/tools/inventory"
	"github.com/vigilops/vigil/tools/transport"
)

// instantModel answers from a script without any I/O, so a benchmark
// measures the loop's own work.
type instantModel struct{ steps []agent.ModelResponse }

func (m *instantModel) Complete(_ context.Context, req agent.ModelRequest, _ func(string)) (agent.ModelResponse, error) {
	n := 0
	for _, msg := range req.Messages {
		if msg.Role == agent.RoleAssistant {
			n++
		}
	}
	return m.steps[n%len(m.steps)], nil
}

// instantExec returns canned output without running anything.
type instantExec struct{}

func (instantExec) Run(context.Context, inventory.Resource, transport.RunSpec, io.Reader) (transport.ExecResult, error) {
	return transport.ExecResult{Stdout: " 10:00:00 up 1 day,  load average: 0.10, 0.20, 0.30\n"}, nil
}

// BenchmarkAgentTurn measures one agent turn's own overhead — prompt
// assembly, strict decoding, policy (FSM, resolution, classifier), events,
// post-processing — with model and tool time excluded. Each iteration is a
// run of three turns: discover, a read, and the final answer.
func BenchmarkAgentTurn(b *testing.B) {
	inv := inventory.Default()
	reg, err := tools.NewRegistry(builtin.Tools(inv, instantExec{}, builtin.NewMemoryStore())...)
	if err != nil {
		b.Fatal(err)
	}
	model := &instantModel{steps: []agent.ModelResponse{
		{ToolCalls: []agent.ToolCall{{ID: "c1", Name: "query", Arguments: `{"action":"get","resource":"localhost"}`}}},
		{ToolCalls: []agent.ToolCall{{ID: "c2", Name: "read", Arguments: `{"action":"exec","target":"localhost","command":"uptime"}`}}},
		{Content: "Load is low: 0.10 over the last minute."},
	}}
	a := agent.New(model, reg, agent.Config{})
	env := agent.RunEnv{Sink: agent.SinkFunc(func(context.Context, agent.Event) {})}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		s := &agent.Session{Key: "bench", Policy: policy.NewSessionState()}
		out, err := a.Start(ctx, s, agent.Input{RunID: "r", Requester: "u", Channel: "console", Level: policy.LevelControlled, Text: "how is @localhost?"}, env)
		if err != nil || out.Status != agent.StatusDone {
			b.Fatalf("run: %v %+v", err, out)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/3, "ns/turn")
}

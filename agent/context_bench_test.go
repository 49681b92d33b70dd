package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/agent/openai"
	"github.com/vigilops/vigil/internal/testenv/modeltest"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools"
	"github.com/vigilops/vigil/tools/builtin"
	"github.com/vigilops/vigil/tools/inventory"
	"github.com/vigilops/vigil/tools/transport"
)

// investigationSteps is the length of the scripted investigation.
const investigationSteps = 20

// outputSize is the size of each command's output.
const outputSize = 8 * 1024

// logExec answers every command with about 8 KB of log-like output of its
// own: journal lines, a few errors, and per command some of what real tools
// print (a unit's status, disk usage, listening sockets).
type logExec struct{}

func (logExec) Run(_ context.Context, _ inventory.Resource, spec transport.RunSpec, _ io.Reader) (transport.ExecResult, error) {
	return transport.ExecResult{Stdout: fakeOutput(spec.Command)}, nil
}

func fakeOutput(cmd string) string {
	var b strings.Builder
	seed := len(cmd)
	switch {
	case strings.Contains(cmd, "systemctl status"):
		b.WriteString("● checkout.service - Checkout API\n     Loaded: loaded (/etc/systemd/system/checkout.service; enabled)\n")
		b.WriteString("     Active: active (running) since Tue 2025-03-04 09:12:01 UTC; 2h 3min ago\n   Main PID: 4242 (checkout)\n")
	case strings.HasPrefix(cmd, "df"):
		b.WriteString("Filesystem      Size  Used Avail Use% Mounted on\n/dev/sda1        40G   37G  3.0G  93% /\n/dev/sdb1       200G   20G  180G  10% /data\n")
	case strings.HasPrefix(cmd, "ss"):
		b.WriteString("State  Recv-Q Send-Q Local Address:Port Peer Address:Port Process\n")
		b.WriteString(`LISTEN 0      511    0.0.0.0:443        0.0.0.0:*     users:(("nginx",pid=900,fd=6))` + "\n")
		b.WriteString(`LISTEN 0      4096   127.0.0.1:8080     0.0.0.0:*     users:(("checkout",pid=4242,fd=3))` + "\n")
	}
	for i := 0; b.Len() < outputSize; i++ {
		sec := (seed + i) % 60
		switch {
		case i%17 == 3:
			fmt.Fprintf(&b, "Mar 04 11:%02d:%02d web1 checkout[4242]: ERROR upstream timed out (110: Connection timed out) while reading response header from upstream, request id %d%d\n", i%60, sec, seed, i)
		case i%23 == 5:
			fmt.Fprintf(&b, "Mar 04 11:%02d:%02d web1 checkout[4242]: WARN pool exhausted: 64/64 connections busy, waited %dms\n", i%60, sec, 100+i)
		default:
			fmt.Fprintf(&b, "Mar 04 11:%02d:%02d web1 checkout[4242]: GET /api/v1/orders/%d%d 200 %dms bytes=%d\n", i%60, sec, seed, i, 10+i%90, 900+i*7)
		}
	}
	return b.String()
}

// investigation is the model's side: twenty reads with different commands,
// then an answer.
func investigation(n int) []modeltest.Step {
	cmds := []string{
		"systemctl status checkout", "journalctl -u checkout -n 200 --no-pager", "df -h", "ss -ltnp",
		"journalctl -u nginx -n 200 --no-pager", "tail -n 200 /var/log/nginx/error.log",
	}
	steps := make([]modeltest.Step, 0, n+1)
	for i := range n {
		cmd := cmds[i%len(cmds)]
		if i >= len(cmds) {
			cmd = fmt.Sprintf("%s | tail -n %d", cmd, 150+i)
		}
		args, _ := json.Marshal(map[string]string{"action": "exec", "target": "localhost", "command": cmd})
		steps = append(steps, modeltest.Calls(modeltest.Call("read", string(args))))
	}
	return append(steps, modeltest.Text("The checkout API times out on its upstream: its connection pool is exhausted."))
}

// sentTokens runs the investigation against the scripted model over real
// HTTP and counts, with the gpt-4o tokenizer, the prompt tokens of every
// request as the server received it.
func sentTokens(tb testing.TB, steps, budget int) (total, largest, requests int) {
	tb.Helper()
	srv := modeltest.New(tb)
	srv.Script(investigation(steps)...)
	oc := openai.DefaultConfig()
	oc.BaseURL, oc.Model, oc.MaxRetries = srv.URL(), "gpt-4o", -1
	model, err := openai.New(oc)
	if err != nil {
		tb.Fatal(err)
	}
	reg, err := tools.NewRegistry(builtin.Tools(inventory.Default(), logExec{}, builtin.NewMemoryStore())...)
	if err != nil {
		tb.Fatal(err)
	}
	a := agent.New(model, reg, agent.Config{MaxTurns: steps + 2, ContextBudgetTokens: budget, Model: "gpt-4o"})
	s := &agent.Session{Key: "bench", Policy: policy.NewSessionState()}
	// As the bot does for an @mention (prefetch).
	local, _ := inventory.Default().Lookup("localhost")
	s.Policy.Context.AddExplicit(local.ToPolicy(), time.Now())
	out, err := a.Start(context.Background(), s, agent.Input{RunID: "r", Requester: "u", Channel: "console",
		Level: policy.LevelControlled, Text: "why is @localhost checkout slow?",
		Context: "Context from vigil (authoritative):\n- @localhost is node:localhost (node); use target \"localhost\""}, agent.RunEnv{})
	if err != nil || out.Status != agent.StatusDone {
		tb.Fatalf("run: %v %+v", err, out)
	}
	tc := agent.NewTokenCounter("gpt-4o")
	for _, r := range srv.Requests() {
		n := agent.RequestTokens(tc, requestOf(r))
		total += n
		largest = max(largest, n)
	}
	if got := len(srv.Requests()); got != steps+1 {
		tb.Fatalf("%d model calls, want %d", got, steps+1)
	}
	return total, largest, len(srv.Requests())
}

// requestOf is a request as the server received it, in agent's terms.
func requestOf(r modeltest.Request) agent.ModelRequest {
	var req agent.ModelRequest
	for _, m := range r.Messages {
		msg := agent.Message{Role: agent.Role(m.Role), Content: m.Content, ToolCallID: m.ToolCallID, Name: m.Name}
		for _, c := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, agent.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		}
		req.Messages = append(req.Messages, msg)
	}
	for _, d := range r.ToolDefs {
		req.Tools = append(req.Tools, tools.Spec{Name: d.Name, Description: d.Description, Parameters: d.Parameters})
	}
	return req
}

// The bounded prompt's target (issue 14): a 20-step investigation with 8 KB
// outputs sends at most 35% of the tokens a resend-everything loop sends,
// and no request exceeds the budget.
func TestBoundedContextTarget(t *testing.T) {
	full, fullMax, _ := sentTokens(t, investigationSteps, -1)
	bounded, boundedMax, _ := sentTokens(t, investigationSteps, agent.DefaultContextBudget)
	ratio := float64(bounded) / float64(full)
	t.Logf("resend everything: %d tokens (largest request %d); bounded: %d tokens (largest %d); ratio %.1f%%",
		full, fullMax, bounded, boundedMax, 100*ratio)
	if fullMax <= agent.DefaultContextBudget {
		t.Fatalf("the baseline's largest request (%d) is within the budget: the scenario does not test the bound", fullMax)
	}
	if ratio > 0.35 {
		t.Errorf("bounded prompts sent %.1f%% of the tokens of resending everything, want at most 35%%", 100*ratio)
	}
	if boundedMax > agent.DefaultContextBudget {
		t.Errorf("largest bounded request is %d tokens, over the budget of %d", boundedMax, agent.DefaultContextBudget)
	}
}

// A tight budget forces the later stages (dropping old exchanges, cutting
// results); no request may exceed it.
func TestTightBudgetHolds(t *testing.T) {
	const budget = 6000
	_, largest, _ := sentTokens(t, 6, budget)
	if largest > budget {
		t.Fatalf("largest request %d tokens, over the budget of %d", largest, budget)
	}
}

// BenchmarkBoundedContext reports the tokens a 20-step investigation with
// 8 KB outputs sends, bounded and resending everything (BENCHMARKS.md).
func BenchmarkBoundedContext(b *testing.B) {
	for _, bc := range []struct {
		name   string
		budget int
	}{{"resend-everything", -1}, {"bounded-24k", agent.DefaultContextBudget}} {
		b.Run(bc.name, func(b *testing.B) {
			var total, largest int
			for b.Loop() {
				total, largest, _ = sentTokens(b, investigationSteps, bc.budget)
			}
			b.ReportMetric(float64(total), "tokens/run")
			b.ReportMetric(float64(largest), "max-tokens/request")
		})
	}
}

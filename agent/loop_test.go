package agent_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools"
	"github.com/vigilops/vigil/tools/builtin"
	"github.com/vigilops/vigil/tools/inventory"
	"github.com/vigilops/vigil/tools/transport"
)

// scripted is an in-process model for loop tests: each call pops the next
// response and records the request.
type scripted struct {
	mu    sync.Mutex
	steps []agent.ModelResponse
	reqs  []agent.ModelRequest
	err   error
}

func (m *scripted) Complete(_ context.Context, req agent.ModelRequest, _ func(string)) (agent.ModelResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reqs = append(m.reqs, req)
	if m.err != nil {
		return agent.ModelResponse{}, m.err
	}
	if len(m.steps) == 0 {
		return agent.ModelResponse{Content: "out of script"}, nil
	}
	r := m.steps[0]
	m.steps = m.steps[1:]
	if r.Usage.TotalTokens == 0 {
		r.Usage = agent.Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15}
	}
	return r, nil
}

func call(id, name, args string) agent.ModelResponse {
	return agent.ModelResponse{ToolCalls: []agent.ToolCall{{ID: id, Name: name, Arguments: args}}}
}

func text(s string) agent.ModelResponse { return agent.ModelResponse{Content: s} }

const (
	getLocal = `{"action":"get","resource":"localhost"}`
	uptime   = `{"action":"exec","target":"localhost","command":"uptime"}`
)

func newAgent(t *testing.T, m agent.Model, cfg agent.Config, opts ...agent.Option) *agent.Agent {
	t.Helper()
	inv := inventory.Default()
	reg, err := tools.NewRegistry(builtin.Tools(inv, instantExec{}, builtin.NewMemoryStore())...)
	if err != nil {
		t.Fatal(err)
	}
	return agent.New(m, reg, cfg, opts...)
}

type recorder struct {
	mu     sync.Mutex
	events []agent.Event
}

func (r *recorder) Emit(_ context.Context, e agent.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) of(typ agent.EventType) []agent.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []agent.Event
	for _, e := range r.events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// operator is a requester the role gate lets ask for changes.
var operator = policy.Requester{User: "u", Operator: true}

func run(t *testing.T, a *agent.Agent, level policy.ControlLevel) (agent.Outcome, *agent.Session, *recorder) {
	t.Helper()
	s := &agent.Session{Key: "t", Policy: policy.NewSessionState()}
	rec := &recorder{}
	out, err := a.Start(context.Background(), s, agent.Input{RunID: "r1", Requester: "u", Role: operator, Channel: "console", Level: level, Text: "go"}, agent.RunEnv{Sink: rec})
	if err != nil {
		t.Fatal(err)
	}
	return out, s, rec
}

// The last turn offers no tools, so the model must summarise.
func TestLastTurnIsTextOnly(t *testing.T) {
	m := &scripted{steps: []agent.ModelResponse{
		call("c1", "query", getLocal), call("c2", "read", uptime), call("c3", "read", `{"action":"exec","target":"localhost","command":"date"}`),
	}}
	a := newAgent(t, m, agent.Config{MaxTurns: 3})
	out, _, rec := run(t, a, policy.LevelControlled)
	if len(m.reqs) != 3 {
		t.Fatalf("model calls = %d, want 3 (max turns)", len(m.reqs))
	}
	if len(m.reqs[2].Tools) != 0 || len(m.reqs[1].Tools) == 0 {
		t.Fatalf("tools offered per turn: %d %d %d, want the last turn without tools",
			len(m.reqs[0].Tools), len(m.reqs[1].Tools), len(m.reqs[2].Tools))
	}
	if got := len(rec.of(agent.EventToolResult)); got != 2 {
		t.Fatalf("%d tool results, want 2: a call proposed on the text-only turn must not run", got)
	}
	if out.Status != agent.StatusDone {
		t.Fatalf("outcome %+v", out)
	}
}

// More turns than allowed end with a clear message and an event.
func TestMaxTurnsStopsTheRun(t *testing.T) {
	m := &scripted{steps: []agent.ModelResponse{call("c1", "query", getLocal), text("")}}
	a := newAgent(t, m, agent.Config{MaxTurns: 1})
	out, s, _ := run(t, a, policy.LevelControlled)
	if out.Status != agent.StatusDone || s.Run != nil {
		t.Fatalf("outcome %+v run %+v", out, s.Run)
	}
	if len(m.reqs) != 1 || len(m.reqs[0].Tools) != 0 {
		t.Fatal("a one-turn run must make one text-only model call")
	}
}

// Wrap-up nudges follow the 12th and 18th tool call.
func TestWrapUpNudges(t *testing.T) {
	var steps []agent.ModelResponse
	steps = append(steps, call("c0", "query", getLocal))
	for i := 1; i < 19; i++ {
		steps = append(steps, call(fmt.Sprint("c", i), "read",
			fmt.Sprintf(`{"action":"exec","target":"localhost","command":"echo %d"}`, i)))
	}
	steps = append(steps, text("done"))
	m := &scripted{steps: steps}
	a := newAgent(t, m, agent.Config{MaxTurns: 30})
	_, s, _ := run(t, a, policy.LevelControlled)
	var nudges []int
	calls := 0
	for _, msg := range s.History {
		if msg.Role == agent.RoleAssistant {
			calls += len(msg.ToolCalls)
		}
		if msg.Role == agent.RoleUser && strings.Contains(msg.Content, "Wrap up") {
			nudges = append(nudges, calls)
		}
	}
	if len(nudges) != 2 || nudges[0] != 12 || nudges[1] != 18 {
		t.Fatalf("nudges after tool calls %v, want [12 18]", nudges)
	}
}

// Identical calls are identical whatever the key order of their JSON.
func TestLoopDetectionIgnoresKeyOrder(t *testing.T) {
	variants := []string{
		`{"action":"exec","target":"localhost","command":"uptime"}`,
		`{"target":"localhost","command":"uptime","action":"exec"}`,
		`{"command":"uptime", "action":"exec","target":"localhost"}`,
		`{"action":"exec","command":"uptime","target":"localhost"}`,
	}
	steps := []agent.ModelResponse{call("c0", "query", getLocal)}
	for i, v := range variants {
		steps = append(steps, call(fmt.Sprint("c", i+1), "read", v))
	}
	m := &scripted{steps: append(steps, text("ok"))}
	a := newAgent(t, m, agent.Config{})
	_, _, rec := run(t, a, policy.LevelControlled)
	res := rec.of(agent.EventToolResult)
	if got := res[len(res)-1].Code; got != string(policy.CodeLoopDetected) {
		t.Fatalf("fourth identical call (reordered keys): %q, want LOOP_DETECTED", got)
	}
}

// JSON-mode corrections are bounded; past the bound the run stops clearly.
func TestJSONCorrectionsBounded(t *testing.T) {
	m := &scripted{steps: []agent.ModelResponse{text("nope"), text("still no"), text("never")}}
	a := newAgent(t, m, agent.Config{ToolMode: agent.ToolModeJSON, MaxCorrections: 2})
	out, s, rec := run(t, a, policy.LevelControlled)
	if out.Status != agent.StatusFailed || !strings.Contains(out.Answer, "format") {
		t.Fatalf("outcome %+v, want a failed run explaining the format", out)
	}
	if n := len(rec.of(agent.EventCorrection)); n != 2 {
		t.Fatalf("%d corrections, want 2", n)
	}
	if s.Run != nil {
		t.Fatal("run left open")
	}
}

// A run over its token budget stops with a clear message.
func TestRunTokenBudget(t *testing.T) {
	m := &scripted{steps: []agent.ModelResponse{call("c1", "query", getLocal), call("c2", "read", uptime), text("x")}}
	a := newAgent(t, m, agent.Config{RunTokenBudget: 20})
	out, _, _ := run(t, a, policy.LevelControlled)
	if out.Status != agent.StatusFailed || !strings.Contains(out.Answer, "budget") || len(m.reqs) != 2 {
		t.Fatalf("outcome %+v after %d model calls, want a budget stop after 2", out, len(m.reqs))
	}
}

// A daily budget reported exhausted stops the run.
type spentBudget struct{ total int }

func (b *spentBudget) Spend(_ context.Context, n int) (bool, error) {
	b.total += n
	return b.total > 25, nil
}

func TestDailyTokenBudget(t *testing.T) {
	m := &scripted{steps: []agent.ModelResponse{call("c1", "query", getLocal), call("c2", "read", uptime), text("x")}}
	b := &spentBudget{}
	a := newAgent(t, m, agent.Config{}, agent.WithDailyBudget(b))
	out, _, _ := run(t, a, policy.LevelControlled)
	if out.Status != agent.StatusFailed || !strings.Contains(out.Answer, "daily") {
		t.Fatalf("outcome %+v, want the daily budget stop", out)
	}
	if b.total != 30 {
		t.Fatalf("spent %d tokens, want each call's 15 charged once", b.total)
	}
}

// Leaked markup is cleaned from answers; fake tool-call markup with no
// successful tool is a phantom.
func TestMarkupCleanedAndFakeCallsArePhantoms(t *testing.T) {
	m := &scripted{steps: []agent.ModelResponse{text("<think>plan</think>Hello there.")}}
	out, _, _ := run(t, newAgent(t, m, agent.Config{}), policy.LevelControlled)
	if out.Answer != "Hello there." {
		t.Fatalf("answer %q, want the markup removed", out.Answer)
	}
	m = &scripted{steps: []agent.ModelResponse{text(`<tool_call>{"name":"control","arguments":{}}</tool_call>`)}}
	out, _, rec := run(t, newAgent(t, m, agent.Config{}), policy.LevelControlled)
	fa := rec.of(agent.EventFinalAnswer)
	if out.Answer != agent.PhantomReply || len(fa) != 1 || !fa[0].Phantom {
		t.Fatalf("fake tool-call markup: answer %q, want the phantom reply", out.Answer)
	}
}

// A model that stays unavailable ends the run clearly; history is kept.
func TestModelUnavailableKeepsHistory(t *testing.T) {
	m := &scripted{err: errors.New("connection refused")}
	out, s, _ := run(t, newAgent(t, m, agent.Config{}), policy.LevelControlled)
	if out.Status != agent.StatusFailed || !strings.Contains(out.Answer, "unavailable") {
		t.Fatalf("outcome %+v", out)
	}
	if len(s.History) != 1 || s.History[0].Role != agent.RoleUser || s.Run != nil {
		t.Fatalf("history %+v run %+v", s.History, s.Run)
	}
}

// Two writes in one turn: the second is refused by the FSM, since the first
// must be verified before another change.
func TestSecondWriteInOneBatchRefused(t *testing.T) {
	dir := t.TempDir()
	m := &scripted{steps: []agent.ModelResponse{
		call("c1", "query", getLocal),
		{ToolCalls: []agent.ToolCall{
			{ID: "w1", Name: "control", Arguments: `{"action":"command","target":"localhost","command":"touch ` + dir + `/a"}`},
			{ID: "w2", Name: "control", Arguments: `{"action":"command","target":"localhost","command":"touch ` + dir + `/b"}`},
		}},
		call("r1", "read", uptime),
		text("done"),
	}}
	_, _, rec := run(t, newAgent(t, m, agent.Config{}), policy.LevelAutonomous)
	codes := map[string]string{}
	for _, e := range rec.of(agent.EventToolResult) {
		codes[e.CallID] = e.Code
	}
	if codes["w1"] != "" || codes["w2"] != string(policy.CodeFSMBlocked) {
		t.Fatalf("codes %v, want w1 to run and w2 FSM_BLOCKED", codes)
	}
}

// Continue after a crash: in-flight calls get a result saying so, and an
// in-flight write must be verified before the answer.
func TestContinueAfterCrash(t *testing.T) {
	m := &scripted{steps: []agent.ModelResponse{text("premature"), call("r1", "read", uptime), text("verified")}}
	a := newAgent(t, m, agent.Config{})
	s := &agent.Session{Key: "t", Policy: policy.NewSessionState()}
	write := agent.ToolCall{ID: "w1", Name: "control", Arguments: `{"action":"command","target":"localhost","command":"touch /tmp/x"}`}
	local, _ := inventory.Default().Lookup("localhost")
	s.Policy.Context.AddExplicit(local.ToPolicy(), time.Now())
	s.Policy.FSM.OnToolSuccess(policy.KindResolve, "query", "localhost")
	s.History = []agent.Message{{Role: agent.RoleUser, Content: "go"}, {Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{write}}}
	s.Run = &agent.RunState{ID: "r", Level: policy.LevelAutonomous, InFlight: []agent.ToolCall{write}, Turn: 1}
	out, err := a.Continue(context.Background(), s, agent.RunEnv{Sink: &recorder{}})
	if err != nil || out.Answer != "verified" {
		t.Fatalf("continue: %+v %v", out, err)
	}
	first := m.reqs[0].Messages
	last := first[len(first)-1]
	if last.Role != agent.RoleTool || last.ToolCallID != "w1" || !strings.Contains(last.Content, "interrupted") {
		t.Fatalf("in-flight call result %+v", last)
	}
	if !strings.HasPrefix(m.reqs[1].Messages[len(m.reqs[1].Messages)-1].Content, "verification required") {
		t.Fatal("the answer before verifying the in-flight write was not refused")
	}
}

// With no turn left to verify in, the answer still goes out, saying the
// change was not verified.
func TestUnverifiedChangeOnTheLastTurn(t *testing.T) {
	dir := t.TempDir()
	m := &scripted{steps: []agent.ModelResponse{
		call("c1", "query", getLocal),
		call("w1", "control", `{"action":"command","target":"localhost","command":"touch `+dir+`/a"}`),
		text("Created it."),
	}}
	out, s, _ := run(t, newAgent(t, m, agent.Config{MaxTurns: 3}), policy.LevelAutonomous)
	if !strings.HasPrefix(out.Answer, "Created it.") || !strings.Contains(out.Answer, "before verifying") || s.Run != nil {
		t.Fatalf("answer %q run %+v, want the answer with an unverified note", out.Answer, s.Run)
	}
}

// countingExec counts commands run and returns canned output.
type countingExec struct{ n atomic.Int32 }

func (e *countingExec) Run(ctx context.Context, r inventory.Resource, s transport.RunSpec, in io.Reader) (transport.ExecResult, error) {
	e.n.Add(1)
	return instantExec{}.Run(ctx, r, s, in)
}

func agentWithExec(t *testing.T, m agent.Model, exec transport.Executor) *agent.Agent {
	t.Helper()
	reg, err := tools.NewRegistry(builtin.Tools(inventory.Default(), exec, builtin.NewMemoryStore())...)
	if err != nil {
		t.Fatal(err)
	}
	return agent.New(m, reg, agent.Config{})
}

// The run's Checkpoint is called when the run starts, before each turn's
// tool calls run (with them recorded as in flight) and after their results
// are in the history.
func TestCheckpointsAroundEveryBatch(t *testing.T) {
	m := &scripted{steps: []agent.ModelResponse{call("c1", "query", getLocal), call("c2", "read", uptime), text("fine")}}
	a := newAgent(t, m, agent.Config{})
	type point struct {
		inFlight string
		results  int
	}
	var got []point
	env := agent.RunEnv{Checkpoint: func(_ context.Context, s *agent.Session) error {
		p := point{}
		for _, c := range s.Run.InFlight {
			p.inFlight += c.ID
		}
		for _, h := range s.History {
			if h.Role == agent.RoleTool {
				p.results++
			}
		}
		got = append(got, p)
		return nil
	}}
	s := &agent.Session{Key: "t", Policy: policy.NewSessionState()}
	out, err := a.Start(context.Background(), s, agent.Input{RunID: "r1", Requester: "u", Role: operator, Channel: "console",
		Level: policy.LevelControlled, Text: "go"}, env)
	if err != nil || out.Status != agent.StatusDone {
		t.Fatalf("run: %+v %v", out, err)
	}
	want := []point{{"", 0}, {"c1", 0}, {"", 1}, {"c2", 1}, {"", 2}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("checkpoints (in flight, results) = %v, want %v", got, want)
	}
}

// A checkpoint that fails (the caller lost the thread's lock) stops the run
// before the calls it was saving for run, and says why.
func TestFailedCheckpointStopsBeforeTheBatch(t *testing.T) {
	for _, failAt := range []int{1, 2} {
		t.Run(fmt.Sprint("checkpoint ", failAt), func(t *testing.T) {
			m := &scripted{steps: []agent.ModelResponse{call("c1", "read", uptime), text("fine")}}
			exec := &countingExec{}
			a := agentWithExec(t, m, exec)
			n := 0
			env := agent.RunEnv{Sink: &recorder{}, Checkpoint: func(context.Context, *agent.Session) error {
				n++
				if n == failAt {
					return errors.New("renew thread lock: locked")
				}
				return nil
			}}
			s := &agent.Session{Key: "t", Policy: policy.NewSessionState()}
			out, err := a.Start(context.Background(), s, agent.Input{RunID: "r1", Requester: "u", Role: operator, Channel: "console",
				Level: policy.LevelControlled, Text: "go"}, env)
			if err != nil {
				t.Fatal(err)
			}
			if out.Status != agent.StatusFailed || !strings.Contains(out.Answer, "could not save") || s.Run != nil {
				t.Fatalf("outcome %+v run %+v, want the run stopped for the failed checkpoint", out, s.Run)
			}
			if exec.n.Load() != 0 {
				t.Fatalf("%d commands ran after the checkpoint failed", exec.n.Load())
			}
			if wantCalls := failAt - 1; len(m.reqs) != wantCalls {
				t.Fatalf("%d model calls, want %d", len(m.reqs), wantCalls)
			}
		})
	}
}

package agent_test

import (
	"context"
	"encoding/json"
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
)

// runScripted runs one question against the scripted model over real HTTP
// in mode and returns the requests the model received.
func runScripted(t *testing.T, mode agent.ToolMode, steps ...modeltest.Step) []modeltest.Request {
	t.Helper()
	srv := modeltest.New(t)
	srv.Script(steps...)
	oc := openai.DefaultConfig()
	oc.BaseURL, oc.Model, oc.MaxRetries = srv.URL(), "gpt-4o", -1
	model, err := openai.New(oc)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := tools.NewRegistry(builtin.Tools(inventory.Default(), logExec{}, builtin.NewMemoryStore())...)
	if err != nil {
		t.Fatal(err)
	}
	a := agent.New(model, reg, agent.Config{MaxTurns: 6, ToolMode: mode, Model: "gpt-4o"})
	s := &agent.Session{Key: "bounds", Policy: policy.NewSessionState()}
	local, _ := inventory.Default().Lookup("localhost")
	s.Policy.Context.AddExplicit(local.ToPolicy(), time.Now())
	out, err := a.Start(context.Background(), s, agent.Input{RunID: "r", Requester: "u", Channel: "console",
		Level: policy.LevelControlled, Text: "is @localhost healthy?"}, agent.RunEnv{})
	if err != nil || out.Status != agent.StatusDone {
		t.Fatalf("run: %v %+v", err, out)
	}
	raw, _ := json.Marshal(s)
	if len(raw) > 256<<10 {
		t.Errorf("the saved session is %d bytes: the oversized call was kept", len(raw))
	}
	return srv.Requests()
}

// huge is 3 MB of arguments.
var huge = strings.Repeat("A", 3<<20)

// A tool call with megabytes of arguments, for an unknown tool or a real
// one, is refused with an error naming the limit, and only a short form of
// it stays in the conversation: the next model requests stay small.
func TestOversizedArgumentsNative(t *testing.T) {
	reqs := runScripted(t, agent.ToolModeNative,
		modeltest.Calls(modeltest.Call("no_such_tool", `{"x":"`+huge+`"}`)),
		modeltest.Calls(modeltest.Call("read", `{"action":"exec","target":"localhost","command":"echo `+huge+`"}`)),
		modeltest.Calls(modeltest.Call(strings.Repeat("n", 5000), `{}`)),
		modeltest.Text("localhost is fine."),
	)
	if len(reqs) != 4 {
		t.Fatalf("%d model requests, want 4", len(reqs))
	}
	for i, r := range reqs[1:] {
		if len(r.Body) > 64<<10 {
			t.Errorf("request %d is %d bytes after a %d-byte call: the call stayed whole in the conversation", i+2, len(r.Body), len(huge))
		}
	}
	for i, want := range []string{"over the limit of 32768 bytes", "over the limit of 32768 bytes", "tool name is 5000 bytes"} {
		res := reqs[i+1].LastToolResults()
		if len(res) != 1 || !strings.Contains(res[0].Content, want) || !json.Valid([]byte(res[0].Content)) {
			t.Errorf("result of oversized call %d = %+v, want an error saying %q", i+1, res, want)
		}
	}
	last := reqs[3]
	for _, m := range last.Messages {
		for _, c := range m.ToolCalls {
			if len(c.Arguments) > 512 || !json.Valid([]byte(c.Arguments)) || len(c.Name) > 64 {
				t.Errorf("the history keeps a call of %d bytes (%q…): want a short valid form", len(c.Arguments), c.Arguments[:min(60, len(c.Arguments))])
			}
		}
	}
}

// JSON mode: an oversized tool call and an oversized reply that is not
// valid JSON are bounded the same way.
func TestOversizedArgumentsJSONMode(t *testing.T) {
	call, _ := json.Marshal(map[string]any{"tool_call": map[string]any{"name": "read",
		"parameters": map[string]string{"action": "exec", "target": "localhost", "command": "echo " + huge}}})
	reqs := runScripted(t, agent.ToolModeJSON,
		modeltest.Text(string(call)),
		modeltest.Text(`{"tool_call": "`+huge),
		modeltest.Text(`{"final_answer":{"summary":"localhost is fine.","confidence":"high"}}`),
	)
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	for i, r := range reqs[1:] {
		if len(r.Body) > 96<<10 {
			t.Errorf("request %d is %d bytes after a %d-byte reply", i+2, len(r.Body), len(huge))
		}
	}
	if !strings.Contains(reqs[1].LastUser(), "over the limit of 32768 bytes") {
		t.Errorf("JSON mode result does not name the limit: %q", reqs[1].LastUser())
	}
}

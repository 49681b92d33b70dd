package agent

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/vigilops/vigil/agent/facts"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools"
	"github.com/vigilops/vigil/tools/builtin"
	"github.com/vigilops/vigil/tools/inventory"
)

// cmdResult is the envelope of a command that ran, as the model reads it.
func cmdResult(target, cmd string, exit int, out, stderr string) string {
	env := tools.OK(builtin.CommandData{Target: target, Command: cmd, ExitCode: exit, Output: out, Stderr: stderr})
	if exit != 0 {
		env = tools.Envelope{Data: builtin.CommandData{Target: target, Command: cmd, ExitCode: exit, Output: out, Stderr: stderr},
			Error: &tools.ErrorInfo{Code: policy.CodeExecutionFailed, Failed: true, Message: fmt.Sprintf("command exited with status %d: %s", exit, stderr),
				Details: map[string]any{"exit_code": exit}}}
	}
	return env.JSON()
}

func execCall(id, target, cmd string) ToolCall {
	args, _ := json.Marshal(map[string]string{"action": "exec", "target": target, "command": cmd})
	return ToolCall{ID: id, Name: "read", Arguments: string(args)}
}

func TestExtractFactsSeeOnlyRedactedContent(t *testing.T) {
	raw := cmdResult("web1", "cat /etc/app.env", 1, "", "error: DB_PASSWORD=hunter2hunter2 rejected by server")
	a := &Agent{}
	content := a.modelContent(mustEnvelope(t, raw))
	for _, f := range facts.Extract(callInfoOf(execCall("c1", "web1", "cat /etc/app.env")), content) {
		if strings.Contains(f.Value, "hunter2") {
			t.Fatalf("fact carries the secret: %+v", f)
		}
	}
}

func mustEnvelope(t *testing.T, raw string) tools.Envelope {
	t.Helper()
	var env tools.Envelope
	if err := json.Unmarshal([]byte(raw), &env); err != nil {
		t.Fatal(err)
	}
	return env
}

// The accumulator keeps its bounds; the newest observation of a key wins;
// eviction takes the least recently observed facts, sparing the current and
// the previous turn.
func TestKnowledgeBoundsAndEviction(t *testing.T) {
	k := &Knowledge{}
	for turn := 1; turn <= 12; turn++ {
		k.Turn = turn
		var fs []facts.Fact
		for i := range 10 {
			fs = append(fs, facts.Fact{Key: fmt.Sprintf("t%d-f%d", turn, i), Value: strings.Repeat("v", 20), Source: fmt.Sprintf("c%d", turn)})
		}
		k.add(fs)
		if len(k.Facts) > maxFacts {
			t.Fatalf("turn %d: %d facts, over %d", turn, len(k.Facts), maxFacts)
		}
		if c := k.chars(); c > maxFactChars {
			t.Fatalf("turn %d: %d characters, over %d", turn, c, maxFactChars)
		}
	}
	for _, turn := range []int{11, 12} {
		for i := range 10 {
			if _, ok := k.Lookup(fmt.Sprintf("t%d-f%d", turn, i)); !ok {
				t.Fatalf("fact of turn %d evicted while older ones remained", turn)
			}
		}
	}
	if _, ok := k.Lookup("t1-f0"); ok {
		t.Fatal("the oldest fact survived eviction")
	}
	// Observing a key again replaces it and makes it recent.
	k.Turn = 13
	k.add([]facts.Fact{{Key: "t11-f0", Value: "new", Source: "c13"}})
	if f, _ := k.Lookup("t11-f0"); f.Value != "new" || f.Source != "c13" || f.Turn != 13 {
		t.Fatalf("dedup by key did not take the newest observation: %+v", f)
	}
	n := 0
	for _, f := range k.Facts {
		if f.Key == "t11-f0" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("key stored %d times", n)
	}
}

// When one turn alone overflows the bounds, the bounds still hold.
func TestKnowledgeHardBound(t *testing.T) {
	k := &Knowledge{Turn: 1}
	var fs []facts.Fact
	for i := range 100 {
		fs = append(fs, facts.Fact{Key: fmt.Sprintf("f%d", i), Value: strings.Repeat("x", 150)})
	}
	k.add(fs)
	if len(k.Facts) > maxFacts || k.chars() > maxFactChars {
		t.Fatalf("%d facts, %d characters", len(k.Facts), k.chars())
	}
}

func newTestAgent(t *testing.T, cfg Config) *Agent {
	t.Helper()
	reg, err := tools.NewRegistry(builtin.Tools(inventory.Default(), nil, builtin.NewMemoryStore())...)
	if err != nil {
		t.Fatal(err)
	}
	return New(nil, reg, cfg)
}

// learn reads each new result once, numbering turns by tool-call turns.
func TestLearnFromHistory(t *testing.T) {
	a := newTestAgent(t, Config{})
	s := &Session{History: []Message{
		{Role: RoleUser, Content: "why is nginx down on web1?"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{execCall("c1", "web1", "systemctl status nginx")}},
		{Role: RoleTool, ToolCallID: "c1", Name: "read", Content: cmdResult("web1", "systemctl status nginx", 0,
			"● nginx.service - web\n     Active: failed (Result: exit-code)\n", "")},
	}}
	a.learn(s)
	f, ok := s.Knowledge.Lookup("service web1 nginx.service")
	if !ok || f.Turn != 1 || f.Source != "c1" {
		t.Fatalf("fact %+v %v", f, ok)
	}
	s.History = append(s.History,
		Message{Role: RoleAssistant, ToolCalls: []ToolCall{execCall("c2", "web1", "systemctl status nginx")}},
		Message{Role: RoleTool, ToolCallID: "c2", Name: "read", Content: cmdResult("web1", "systemctl status nginx", 0,
			"● nginx.service - web\n     Active: active (running)\n", "")})
	a.learn(s)
	a.learn(s) // nothing new: no change
	f, _ = s.Knowledge.Lookup("service web1 nginx.service")
	if f.Value != "active (running)" || f.Turn != 2 || f.Source != "c2" {
		t.Fatalf("newer observation not taken: %+v", f)
	}
	block := s.Knowledge.Render()
	for _, want := range []string{knownFactsHeader, "from read exec on web1: systemctl status nginx (turn 2):", "- service web1 nginx.service: active (running)"} {
		if !strings.Contains(block, want) {
			t.Fatalf("block lacks %q:\n%s", want, block)
		}
	}
}

package agent

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools"
)

// bigLog is about n bytes of journal lines with an error among them.
func bigLog(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		if i%10 == 3 {
			fmt.Fprintf(&b, "Mar 04 11:00:%02d web1 app[1]: ERROR upstream timed out after %dms\n", i%60, 1000+i)
			continue
		}
		fmt.Fprintf(&b, "Mar 04 11:00:%02d web1 app[1]: GET /orders/%d 200\n", i%60, i)
	}
	return b.String()
}

// investigationHistory is a conversation with the parts compaction must
// treat differently: reads (turns 1, 3, 5, 6, 7), an approved write (turn 2,
// with its verification prompt after it), a policy block (turn 4), and a
// second question with an earlier answer in between.
func investigationHistory() []Message {
	read := func(n int) []Message {
		id := fmt.Sprintf("r%d", n)
		cmd := fmt.Sprintf("journalctl -u app -n %d", 100+n)
		return []Message{
			{Role: RoleAssistant, ToolCalls: []ToolCall{execCall(id, "localhost", cmd)}},
			{Role: RoleTool, ToolCallID: id, Name: "read", Content: cmdResult("localhost", cmd, 0, bigLog(6000), "")},
		}
	}
	var h []Message
	h = append(h, Message{Role: RoleUser, Content: "why is the app slow?"})
	h = append(h, read(1)...)
	writeArgs, _ := json.Marshal(map[string]string{"action": "command", "target": "localhost", "command": "systemctl restart app"})
	h = append(h,
		Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "w2", Name: "control", Arguments: string(writeArgs)}}},
		Message{Role: RoleTool, ToolCallID: "w2", Name: "control", Content: cmdResult("localhost", "systemctl restart app", 0, bigLog(1000), "")},
		Message{Role: RoleAssistant, Content: "Restarted."},
		Message{Role: RoleUser, Content: "verification required: read or check localhost before answering"},
	)
	h = append(h, read(3)...)
	h = append(h, Message{Role: RoleAssistant, Content: "The app restarted and is serving again."})
	h = append(h, Message{Role: RoleUser, Content: "and now it is slow again, why?"})
	blk := tools.Blocked(&policy.Block{Code: policy.CodeFSMBlocked, Message: strings.Repeat("not now ", 60)}).JSON()
	h = append(h,
		Message{Role: RoleAssistant, ToolCalls: []ToolCall{execCall("b4", "localhost", "reboot")}},
		Message{Role: RoleTool, ToolCallID: "b4", Name: "read", Content: blk})
	h = append(h, read(5)...)
	h = append(h, read(6)...)
	h = append(h, read(7)...)
	return h
}

// compacted reports whether a result is in its short form, which is still
// an envelope.
func compacted(t *testing.T, content string) bool {
	t.Helper()
	var env tools.Envelope
	if err := json.Unmarshal([]byte(content), &env); err != nil {
		t.Fatalf("result is not an envelope: %v\n%s", err, content)
	}
	_, ok := env.Meta[compactedKey]
	return ok
}

func contentOf(h []Message, callID string) (string, bool) {
	for _, m := range h {
		if m.Role == RoleTool && m.ToolCallID == callID {
			return m.Content, true
		}
	}
	return "", false
}

func userMessages(h []Message) []string {
	var out []string
	for _, m := range h {
		if m.Role == RoleUser {
			out = append(out, m.Content)
		}
	}
	return out
}

// checkPairs fails unless every tool call has exactly its result and every
// result its call: what the API requires of a prompt.
func checkPairs(t *testing.T, h []Message) {
	t.Helper()
	open := map[string]bool{}
	for _, m := range h {
		switch m.Role {
		case RoleAssistant:
			for id := range open {
				t.Fatalf("call %s has no result before the next assistant message", id)
			}
			for _, c := range m.ToolCalls {
				open[c.ID] = true
			}
		case RoleTool:
			if !open[m.ToolCallID] {
				t.Fatalf("result %s has no call", m.ToolCallID)
			}
			delete(open, m.ToolCallID)
		}
	}
}

func historyTokens(tc TokenCounter, h []Message) int {
	n := 0
	for _, m := range h {
		n += messageTokens(tc, m)
	}
	return n
}

// With room to spare, only SPEC A10 applies: results older than the last
// two turns and longer than 300 characters become their facts, oldest
// turns first; the last two stay verbatim; writes and blocks are untouched.
func TestCompactionKeepsLastTurnsVerbatim(t *testing.T) {
	a := newTestAgent(t, Config{ContextBudgetTokens: 1_000_000})
	h := investigationHistory()
	out := a.compactHistory(h, 0)
	checkPairs(t, out)
	for _, id := range []string{"r1", "r3", "r5"} {
		c, _ := contentOf(out, id)
		if !compacted(t, c) {
			t.Errorf("result %s older than two turns is not compacted: %.80s", id, c)
		}
		if !strings.Contains(c, "errors localhost") {
			t.Errorf("compacted %s lacks its facts:\n%s", id, c)
		}
	}
	for _, id := range []string{"r6", "r7", "w2", "b4"} {
		c, _ := contentOf(out, id)
		if orig, _ := contentOf(h, id); c != orig {
			t.Errorf("result %s changed, want it verbatim", id)
		}
	}
	if !reflect.DeepEqual(userMessages(out), userMessages(h)) {
		t.Fatal("user messages changed")
	}
	if orig, _ := contentOf(h, "r1"); !strings.Contains(orig, "GET /orders") {
		t.Fatal("compaction changed the stored history")
	}
	// The same history gives the same prompt.
	if again := a.compactHistory(h, 0); !reflect.DeepEqual(again, out) {
		t.Fatal("compaction is not deterministic")
	}
}

// Over the budget, the stages go in order: the second-to-last turn is
// compacted, then whole exchanges are left out oldest first; never the
// user's messages, the answers, the write and its verification prompt, or
// the policy block.
func TestCompactionOrderingUnderPressure(t *testing.T) {
	h := investigationHistory()
	probe := newTestAgent(t, Config{ContextBudgetTokens: 1_000_000})
	tc := probe.counter
	stage1 := historyTokens(tc, probe.compactHistory(h, 0))

	// Just under what stage 1 needs: the last-but-one turn is compacted too.
	a := newTestAgent(t, Config{ContextBudgetTokens: stage1 - 10})
	out := a.compactHistory(h, 0)
	checkPairs(t, out)
	if c, _ := contentOf(out, "r6"); !compacted(t, c) {
		t.Fatal("stage 2 did not compact the second-to-last turn")
	}
	if c, _ := contentOf(out, "r7"); compacted(t, c) {
		t.Fatal("stage 2 compacted the last turn")
	}
	if _, ok := contentOf(out, "r1"); !ok {
		t.Fatal("stage 2 left out an exchange it did not need to")
	}

	// Much tighter: old exchanges go, the oldest first.
	last, _ := contentOf(h, "r7")
	tight := historyTokens(tc, []Message{{Role: RoleTool, Content: last}}) + 1200
	b := newTestAgent(t, Config{ContextBudgetTokens: tight})
	out = b.compactHistory(h, 0)
	checkPairs(t, out)
	if _, ok := contentOf(out, "r1"); ok {
		t.Fatal("the oldest read exchange was kept while the prompt is over budget")
	}
	for _, id := range []string{"w2", "b4", "r7"} {
		if _, ok := contentOf(out, id); !ok {
			t.Fatalf("exchange %s was left out", id)
		}
	}
	if c, _ := contentOf(out, "w2"); c != mustContent(t, h, "w2") {
		t.Fatal("the write's result changed")
	}
	if !reflect.DeepEqual(userMessages(out), userMessages(h)) {
		t.Fatalf("user messages changed: %q", userMessages(out))
	}
	for _, answer := range []string{"Restarted.", "The app restarted and is serving again."} {
		found := false
		for _, m := range out {
			found = found || (m.Role == RoleAssistant && m.Content == answer)
		}
		if !found {
			t.Fatalf("assistant message %q was left out", answer)
		}
	}
	if n := historyTokens(tc, out); n > tight {
		t.Fatalf("history is %d tokens, over the budget of %d", n, tight)
	}
}

func mustContent(t *testing.T, h []Message, id string) string {
	t.Helper()
	c, ok := contentOf(h, id)
	if !ok {
		t.Fatalf("no result %s", id)
	}
	return c
}

// A single result larger than the whole budget is cut, start and end kept.
func TestCompactionCutsAnOversizedResult(t *testing.T) {
	h := []Message{
		{Role: RoleUser, Content: "look at the log"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{execCall("r1", "localhost", "journalctl -n 5000")}},
		{Role: RoleTool, ToolCallID: "r1", Name: "read", Content: cmdResult("localhost", "journalctl -n 5000", 0, bigLog(60000)+"LAST LINE", "")},
	}
	const budget = 3000
	a := newTestAgent(t, Config{ContextBudgetTokens: budget})
	out := a.compactHistory(h, 500)
	c, _ := contentOf(out, "r1")
	if !strings.Contains(c, "[vigil cut ") || !strings.Contains(c, "LAST LINE") || !strings.HasPrefix(c, `{"ok":true`) {
		t.Fatalf("oversized result not cut to its start and end: %.200s … %.200s", c, c[max(0, len(c)-200):])
	}
	if n := historyTokens(a.counter, out) + 500; n > budget {
		t.Fatalf("prompt is %d tokens, over the budget of %d", n, budget)
	}
}

// A negative budget turns compaction off: the baseline resends everything.
func TestCompactionOff(t *testing.T) {
	a := newTestAgent(t, Config{ContextBudgetTokens: -1})
	h := investigationHistory()
	if out := a.compactHistory(h, 0); !reflect.DeepEqual(out, h) {
		t.Fatal("compaction ran with a negative budget")
	}
}

// Known models count with their tokenizer; others by bytes.
func TestTokenCounterChoice(t *testing.T) {
	for _, tc := range []struct {
		model string
		exact bool
	}{{"gpt-4o", true}, {"gpt-4o-mini", true}, {"openai/gpt-4.1-mini", true}, {"gpt-3.5-turbo", true},
		{"llama3.1:8b", false}, {"", false}, {"my-azure-deployment", false}} {
		c := NewTokenCounter(tc.model)
		if c.Exact() != tc.exact {
			t.Errorf("%q: exact = %v, want %v", tc.model, c.Exact(), tc.exact)
		}
		if n := c.Count("hello world, how are you today?"); n <= 0 || n > 12 {
			t.Errorf("%q: count %d", tc.model, n)
		}
	}
	if n := NewTokenCounter("gpt-4o").Count("hello world"); n != 2 {
		t.Errorf("gpt-4o counts %d tokens in \"hello world\", want 2", n)
	}
}

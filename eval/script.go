package eval

import (
	"context"
	"fmt"
	"sync"

	"github.com/vigilops/vigil/agent"
)

// Script is an agent.Model that replays scripted turns in order, one per
// model call, whatever the history says: a reference trajectory is what a
// good model would have answered. Usage is counted with the agent's own
// token counter on the request the agent built, so token figures show what
// the prompts would cost a real model (and what compaction saves). When the
// turns run out it answers that the script ended.
type Script struct {
	turns   []Turn
	counter agent.TokenCounter

	mu   sync.Mutex
	next int
	seq  int
}

var _ agent.Model = (*Script)(nil)

// NewScript replays turns, counting tokens as model would.
func NewScript(turns []Turn, model string) *Script {
	return &Script{turns: turns, counter: agent.NewTokenCounter(model)}
}

// Complete implements agent.Model.
func (s *Script) Complete(ctx context.Context, req agent.ModelRequest, onDelta func(string)) (agent.ModelResponse, error) {
	if err := ctx.Err(); err != nil {
		return agent.ModelResponse{}, err
	}
	s.mu.Lock()
	var t Turn
	if s.next < len(s.turns) {
		t = s.turns[s.next]
		s.next++
	} else {
		t = Turn{Answer: "(the scripted trajectory ended)"}
	}
	resp := agent.ModelResponse{FinishReason: "stop"}
	if len(t.Calls) > 0 {
		resp.FinishReason = "tool_calls"
		for _, c := range t.Calls {
			s.seq++
			resp.ToolCalls = append(resp.ToolCalls, agent.ToolCall{ID: fmt.Sprintf("call_%d", s.seq), Name: c.Tool, Arguments: c.JSON()})
		}
	} else {
		resp.Content = t.Answer
	}
	s.mu.Unlock()
	if onDelta != nil && resp.Content != "" {
		onDelta(resp.Content)
	}
	prompt := agent.RequestTokens(s.counter, req)
	completion := s.counter.Count(resp.Content)
	for _, c := range resp.ToolCalls {
		completion += s.counter.Count(c.Name) + s.counter.Count(c.Arguments) + 4
	}
	resp.Usage = agent.Usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}
	return resp, nil
}

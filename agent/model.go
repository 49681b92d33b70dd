package agent

import (
	"context"

	"github.com/vigilops/vigil/tools"
)

// Role is who said a message in the conversation with the model.
type Role string

const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one entry of a run's history. It is vigil's own type, not the
// SDK's, so runs can be persisted and resumed whatever client is in use.
type Message struct {
	Role       Role       `json:"role"`
	Content    string     `json:"content,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	// Name is the tool name on RoleTool messages.
	Name string `json:"name,omitempty"`
}

// ToolCall is a call the model proposed. Arguments is the raw JSON text the
// model produced; it is untrusted until a tool decodes it strictly.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Usage counts the tokens of one model call.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// Add accumulates u2 into u.
func (u *Usage) Add(u2 Usage) {
	u.PromptTokens += u2.PromptTokens
	u.CompletionTokens += u2.CompletionTokens
	u.TotalTokens += u2.TotalTokens
}

// ModelRequest is one chat completion request. Tools is empty when the turn
// must be text only.
type ModelRequest struct {
	Messages []Message
	Tools    []tools.Spec
}

// ModelResponse is the model's whole answer to one request.
type ModelResponse struct {
	Content      string
	ToolCalls    []ToolCall
	FinishReason string
	Usage        Usage
}

// Model is one chat completion with tools. Implementations stream when they
// can and call onDelta with each piece of text as it arrives (onDelta may be
// nil); they retry transient failures themselves and return an error only
// when the model stayed unavailable.
type Model interface {
	Complete(ctx context.Context, req ModelRequest, onDelta func(string)) (ModelResponse, error)
}

package modeltest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"unicode/utf8"
)

// created is the fixed "created" timestamp of every answer.
const created = 1700000000

// Pieces a streamed answer is split into, to exercise client assembly.
const (
	contentPieces   = 4
	argumentsPieces = 3
)

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

type wireFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type wireCall struct {
	Index    *int         `json:"index,omitempty"`
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"`
	Function wireFunction `json:"function"`
}

type wireOutMessage struct {
	Role      string     `json:"role"`
	Content   *string    `json:"content"`
	ToolCalls []wireCall `json:"tool_calls,omitempty"`
}

type wireDelta struct {
	Role      string     `json:"role,omitempty"`
	Content   *string    `json:"content,omitempty"`
	ToolCalls []wireCall `json:"tool_calls,omitempty"`
}

type wireChoice struct {
	Index        int             `json:"index"`
	Message      *wireOutMessage `json:"message,omitempty"`
	Delta        *wireDelta      `json:"delta,omitempty"`
	FinishReason *string         `json:"finish_reason"`
}

type wireResponse struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []wireChoice `json:"choices"`
	Usage   *usage       `json:"usage,omitempty"`
}

// tokens is the deterministic token count of a text: one per 4 bytes.
func tokens(s string) int { return (len(s) + 3) / 4 }

// usageFor computes deterministic usage: prompt tokens from the request's
// messages (plus one per message), completion tokens from the answer.
func usageFor(req Request, step Step, calls []ToolCall) usage {
	if step.usage != nil {
		return *step.usage
	}
	var u usage
	for _, m := range req.Messages {
		u.PromptTokens += 1 + tokens(m.Content)
		for _, tc := range m.ToolCalls {
			u.PromptTokens += tokens(tc.Name) + tokens(tc.Arguments)
		}
	}
	u.CompletionTokens = tokens(step.content)
	for _, tc := range calls {
		u.CompletionTokens += tokens(tc.Name) + tokens(tc.Arguments)
	}
	if u.CompletionTokens == 0 {
		u.CompletionTokens = 1
	}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}

// answer writes an assistant message, streamed or not as the request asks.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, req Request, step Step) {
	calls := make([]ToolCall, len(step.calls))
	for i, tc := range step.calls {
		if tc.ID == "" {
			tc.ID = s.newCallID()
		}
		calls[i] = tc
	}
	u := usageFor(req, step, calls)
	id := fmt.Sprintf("chatcmpl-%d", req.N)
	finish := step.finishReason()

	if !req.Stream {
		msg := &wireOutMessage{Role: "assistant"}
		if step.content != "" || len(calls) == 0 {
			msg.Content = &step.content
		}
		for _, tc := range calls {
			msg.ToolCalls = append(msg.ToolCalls, wireCall{
				ID: tc.ID, Type: "function", Function: wireFunction{Name: tc.Name, Arguments: tc.Arguments},
			})
		}
		writeJSON(w, http.StatusOK, wireResponse{
			ID: id, Object: "chat.completion", Created: created, Model: req.Model,
			Choices: []wireChoice{{Message: msg, FinishReason: &finish}},
			Usage:   &u,
		})
		return
	}

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	send := func(resp wireResponse) bool {
		resp.ID, resp.Object, resp.Created, resp.Model = id, "chat.completion.chunk", created, req.Model
		b, err := json.Marshal(resp)
		if err != nil {
			panic(err) // our own types always marshal
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		if rc.Flush() != nil {
			return false
		}
		return s.wait(r, step.chunkDelay)
	}
	delta := func(d wireDelta) bool {
		return send(wireResponse{Choices: []wireChoice{{Delta: &d}}})
	}

	empty := ""
	if !delta(wireDelta{Role: "assistant", Content: &empty}) {
		return
	}
	for _, piece := range split(step.content, contentPieces) {
		if !delta(wireDelta{Content: &piece}) {
			return
		}
	}
	for i, tc := range calls {
		if !delta(wireDelta{ToolCalls: []wireCall{{
			Index: &i, ID: tc.ID, Type: "function", Function: wireFunction{Name: tc.Name},
		}}}) {
			return
		}
		for _, piece := range split(tc.Arguments, argumentsPieces) {
			if !delta(wireDelta{ToolCalls: []wireCall{{Index: &i, Function: wireFunction{Arguments: piece}}}}) {
				return
			}
		}
	}
	if !send(wireResponse{Choices: []wireChoice{{Delta: &wireDelta{}, FinishReason: &finish}}}) {
		return
	}
	if req.IncludeUsage {
		if !send(wireResponse{Choices: []wireChoice{}, Usage: &u}) {
			return
		}
	}
	_, _ = fmt.Fprint(w, "data: [DONE]\n\n")
	_ = rc.Flush()
}

// split cuts s into at most n pieces of similar size on rune boundaries.
func split(s string, n int) []string {
	if s == "" {
		return nil
	}
	size := (len(s) + n - 1) / n
	var out []string
	for len(s) > 0 {
		end := min(size, len(s))
		for end < len(s) && !utf8.RuneStart(s[end]) {
			end++
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}

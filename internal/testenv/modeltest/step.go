package modeltest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

type stepKind int

const (
	kindNone stepKind = iota
	kindMessage
	kindStatus
	kindDrop
	kindFunc
)

// Step is the scripted model's answer to one request. Build one with Text,
// Raw, Calls, JSONCall, JSONFinal, Status, Drop, Func or Delay, and adjust
// it with its With... methods; the zero Step is "no answer" (see Route).
type Step struct {
	kind       stepKind
	content    string
	calls      []ToolCall
	finish     string
	usage      *usage
	status     int
	retryAfter string
	message    string
	delay      time.Duration
	chunkDelay time.Duration
	fn         func(Request) Step
}

// IsZero reports whether s is the zero Step.
func (s Step) IsZero() bool { return s.kind == kindNone }

// Text answers with a plain assistant message (finish reason "stop").
func Text(content string) Step {
	return Step{kind: kindMessage, content: content}
}

// Raw answers with an assistant message whose content is exactly the given
// text. It is Text under a name that reads better for JSON tool mode, where
// the content is the model's literal (possibly malformed) output.
func Raw(content string) Step { return Text(content) }

// Calls answers with one assistant message holding the given tool calls
// (finish reason "tool_calls"). Calls without an ID get a unique generated
// one ("call_<n>").
func Calls(calls ...ToolCall) Step {
	return Step{kind: kindMessage, calls: append([]ToolCall(nil), calls...)}
}

// Call is a tool call for Calls. arguments is the literal arguments text,
// normally a JSON object.
func Call(name, arguments string) ToolCall {
	return ToolCall{Name: name, Arguments: arguments}
}

// JSONCall answers, for JSON tool mode, with the content
// {"tool_call":{"name":name,"parameters":parameters}}. parameters must be a
// JSON object text.
func JSONCall(name, parameters string) Step {
	b, err := json.Marshal(map[string]any{"tool_call": map[string]any{
		"name": name, "parameters": json.RawMessage(parameters),
	}})
	if err != nil {
		panic(fmt.Sprintf("modeltest.JSONCall(%q): parameters are not JSON: %v", name, err))
	}
	return Text(string(b))
}

// JSONFinal answers, for JSON tool mode, with the content
// {"final_answer":{"summary":summary,"confidence":confidence}}.
func JSONFinal(summary, confidence string) Step {
	b, _ := json.Marshal(map[string]any{"final_answer": map[string]string{
		"summary": summary, "confidence": confidence,
	}})
	return Text(string(b))
}

// Status answers with an HTTP error in the OpenAI error format, e.g.
// Status(429) or Status(503).
func Status(code int) Step {
	return Step{kind: kindStatus, status: code}
}

// Drop closes the connection without answering, as a crashed or
// overloaded endpoint would.
func Drop() Step { return Step{kind: kindDrop} }

// Func computes the step from the request, e.g. to echo a tool result or
// choose a call from the last tool message. fn runs on the server's
// handler goroutine and may run concurrently with other requests.
func Func(fn func(Request) Step) Step {
	return Step{kind: kindFunc, fn: fn}
}

// Delay waits d before answering with s (the client sees nothing during
// the wait). The wait ends early when the client goes away or the server
// closes.
func Delay(d time.Duration, s Step) Step {
	s.delay += d
	return s
}

// RetryAfter sets the Retry-After header of the answer, e.g.
// Status(429).RetryAfter("1").
func (s Step) RetryAfter(v string) Step {
	s.retryAfter = v
	return s
}

// WithMessage sets the error message of a Status step.
func (s Step) WithMessage(msg string) Step {
	s.message = msg
	return s
}

// WithContent adds text content to a Calls step (text the model says next
// to its tool calls).
func (s Step) WithContent(content string) Step {
	s.content = content
	return s
}

// WithFinishReason overrides the finish reason ("stop", "tool_calls",
// "length", ...).
func (s Step) WithFinishReason(reason string) Step {
	s.finish = reason
	return s
}

// WithUsage overrides the reported token usage.
func (s Step) WithUsage(prompt, completion int) Step {
	s.usage = &usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}
	return s
}

// WithChunkDelay makes a streamed answer pause d between chunks (a slow
// stream). It has no effect on non-streamed answers.
func (s Step) WithChunkDelay(d time.Duration) Step {
	s.chunkDelay = d
	return s
}

func (s Step) errorBody() []byte {
	msg := s.message
	if msg == "" {
		msg = fmt.Sprintf("scripted error: HTTP %d %s", s.status, http.StatusText(s.status))
	}
	typ := "invalid_request_error"
	switch {
	case s.status == http.StatusTooManyRequests:
		typ = "rate_limit_exceeded"
	case s.status >= 500:
		typ = "server_error"
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": msg, "type": typ, "param": nil, "code": nil,
	}})
	return b
}

func (s Step) finishReason() string {
	switch {
	case s.finish != "":
		return s.finish
	case len(s.calls) > 0:
		return "tool_calls"
	default:
		return "stop"
	}
}

package openai

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/internal/testenv/modeltest"
	"github.com/vigilops/vigil/tools"
)

const testAPIKey = "sk-test-0123456789abcdef"

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// testModel builds an Model against baseURL with fast retries.
func testModel(t *testing.T, baseURL string, edit func(*Config)) (*Model, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	cfg := DefaultConfig()
	cfg.BaseURL = baseURL
	cfg.APIKey = testAPIKey
	cfg.Model = "test-model"
	cfg.Timeout = 5 * time.Second
	cfg.BackoffBase = 5 * time.Millisecond
	cfg.BackoffMax = 20 * time.Millisecond
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if edit != nil {
		edit(&cfg)
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return m, logs
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

var userOnly = agent.ModelRequest{Messages: []agent.Message{
	{Role: agent.RoleSystem, Content: "You are vigil."},
	{Role: agent.RoleUser, Content: "how is web1?"},
}}

var readSpec = tools.Spec{
	Name:        "read",
	Description: "Run a read-only command.",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`),
}

func forBothModes(t *testing.T, fn func(t *testing.T, stream bool)) {
	for _, stream := range []bool{true, false} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) { fn(t, stream) })
	}
}

func TestOpenAIText(t *testing.T) {
	forBothModes(t, func(t *testing.T, stream bool) {
		srv := modeltest.New(t)
		const answer = "web1 is healthy: load 0.3, disk 40% — ünïcödé ok."
		srv.Script(modeltest.Text(answer))
		m, _ := testModel(t, srv.URL(), func(c *Config) { c.Stream = stream })

		var deltas []string
		resp, err := m.Complete(testCtx(t), userOnly, func(d string) { deltas = append(deltas, d) })
		if err != nil {
			t.Fatal(err)
		}
		if resp.Content != answer || resp.FinishReason != "stop" || len(resp.ToolCalls) != 0 {
			t.Errorf("resp = %+v", resp)
		}
		if strings.Join(deltas, "") != answer {
			t.Errorf("deltas %q do not add up to the answer", deltas)
		}
		if stream && len(deltas) < 2 {
			t.Errorf("streamed answer arrived in %d delta(s)", len(deltas))
		}
		u := resp.Usage
		if u.PromptTokens == 0 || u.CompletionTokens == 0 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
			t.Errorf("usage = %+v", u)
		}

		req := srv.Requests()[0]
		if req.Stream != stream || req.IncludeUsage != stream || req.Model != "test-model" {
			t.Errorf("request stream=%v include_usage=%v model=%q", req.Stream, req.IncludeUsage, req.Model)
		}
		if len(req.Tools) != 0 {
			t.Errorf("text-only turn sent tools %v", req.Tools)
		}
		if got := req.Header.Get("Authorization"); got != "Bearer "+testAPIKey {
			t.Errorf("Authorization = %q", got)
		}
	})
}

func TestOpenAIToolCalls(t *testing.T) {
	forBothModes(t, func(t *testing.T, stream bool) {
		srv := modeltest.New(t)
		args1 := `{"action":"exec","target":"localhost","command":"uptime && df -h /var/lib/docker"}`
		args2 := `{"action":"search","query":"web"}`
		srv.Script(modeltest.Calls(
			modeltest.Call("read", args1),
			modeltest.Call("query", args2),
			modeltest.Call("discover", ``),
		).WithContent("Checking."))
		m, _ := testModel(t, srv.URL(), func(c *Config) { c.Stream = stream })

		req := userOnly
		req.Tools = []tools.Spec{readSpec, {Name: "query"}, {Name: "discover", Description: "d"}}
		resp, err := m.Complete(testCtx(t), req, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.FinishReason != "tool_calls" || resp.Content != "Checking." {
			t.Errorf("finish %q content %q", resp.FinishReason, resp.Content)
		}
		if len(resp.ToolCalls) != 3 {
			t.Fatalf("tool calls = %+v", resp.ToolCalls)
		}
		want := []agent.ToolCall{{Name: "read", Arguments: args1}, {Name: "query", Arguments: args2}, {Name: "discover", Arguments: "{}"}}
		ids := map[string]bool{}
		for i, tc := range resp.ToolCalls {
			if tc.Name != want[i].Name || tc.Arguments != want[i].Arguments {
				t.Errorf("call %d = %+v, want %+v", i, tc, want[i])
			}
			if tc.ID == "" || ids[tc.ID] {
				t.Errorf("call %d: empty or duplicate ID %q", i, tc.ID)
			}
			ids[tc.ID] = true
		}

		sent := srv.Requests()[0]
		if strings.Join(sent.Tools, ",") != "read,query,discover" {
			t.Errorf("tools sent = %v", sent.Tools)
		}
		if string(sent.ToolDefs[0].Parameters) != string(readSpec.Parameters) || sent.ToolDefs[0].Description != readSpec.Description {
			t.Errorf("read tool sent as %+v", sent.ToolDefs[0])
		}
		if string(sent.ToolDefs[1].Parameters) != agent.EmptyParameters {
			t.Errorf("tool without schema sent with parameters %s", sent.ToolDefs[1].Parameters)
		}
	})
}

// TestOpenAIConversationRoundTrip sends a history with assistant tool calls
// and tool results, as the loop does on the second turn, and checks what the
// server decoded.
func TestOpenAIConversationRoundTrip(t *testing.T) {
	forBothModes(t, func(t *testing.T, stream bool) {
		srv := modeltest.New(t)
		srv.Script(modeltest.Func(func(r modeltest.Request) modeltest.Step {
			res := r.LastToolResults()
			return modeltest.Text(fmt.Sprintf("%d results; %s said %s", len(res), res[0].ToolCallID, res[0].Content))
		}))
		m, _ := testModel(t, srv.URL(), func(c *Config) {
			c.Stream = stream
			c.Temperature = 0.2
			c.MaxTokens = 512
		})
		req := agent.ModelRequest{
			Messages: []agent.Message{
				{Role: agent.RoleSystem, Content: "sys"},
				{Role: agent.RoleUser, Content: "check web1"},
				{Role: agent.RoleAssistant, Content: "Looking.", ToolCalls: []agent.ToolCall{
					{ID: "call_a", Name: "read", Arguments: `{"command":"uptime"}`},
					{ID: "call_b", Name: "read", Arguments: `{"command":"df"}`},
				}},
				{Role: agent.RoleTool, ToolCallID: "call_a", Name: "read", Content: `{"ok":true,"data":"up 3 days"}`},
				{Role: agent.RoleTool, ToolCallID: "call_b", Name: "read", Content: `{"ok":true}`},
			},
			Tools: []tools.Spec{readSpec},
		}
		resp, err := m.Complete(testCtx(t), req, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := `2 results; call_a said {"ok":true,"data":"up 3 days"}`; resp.Content != want {
			t.Errorf("content = %q, want %q", resp.Content, want)
		}
		sent := srv.Requests()[0]
		if len(sent.Messages) != 5 {
			t.Fatalf("messages = %+v", sent.Messages)
		}
		a := sent.Messages[2]
		if a.Role != "assistant" || a.Content != "Looking." || len(a.ToolCalls) != 2 ||
			a.ToolCalls[1].ID != "call_b" || a.ToolCalls[1].Arguments != `{"command":"df"}` {
			t.Errorf("assistant message sent as %+v", a)
		}
		if tm := sent.Messages[3]; tm.Role != "tool" || tm.ToolCallID != "call_a" {
			t.Errorf("tool message sent as %+v", tm)
		}
		if sent.Temperature == nil || *sent.Temperature < 0.19 || *sent.Temperature > 0.21 || sent.MaxTokens != 512 {
			t.Errorf("temperature %v max_tokens %d", sent.Temperature, sent.MaxTokens)
		}
	})
}

func TestOpenAIRejectsBadHistory(t *testing.T) {
	srv := modeltest.New(t)
	m, _ := testModel(t, srv.URL(), nil)
	for _, msgs := range [][]agent.Message{
		{{Role: "robot", Content: "x"}},
		{{Role: agent.RoleTool, Content: "x"}},
	} {
		if _, err := m.Complete(testCtx(t), agent.ModelRequest{Messages: msgs}, nil); err == nil {
			t.Errorf("history %+v accepted", msgs)
		}
	}
	badTool := agent.ModelRequest{Messages: userOnly.Messages, Tools: []tools.Spec{{Name: "x", Parameters: json.RawMessage(`{"type":`)}}}
	if _, err := m.Complete(testCtx(t), badTool, nil); err == nil || !strings.Contains(err.Error(), `tool "x": parameters schema is not valid JSON`) {
		t.Errorf("invalid schema: err = %v", err)
	}
	if srv.Count() != 0 {
		t.Errorf("bad request reached the server")
	}
}

// TestOpenAIStreamTolerance: a server that omits usage, omits tool-call
// indexes and repeats the name in every delta.
func TestOpenAIStreamTolerance(t *testing.T) {
	chunks := []string{
		`{"choices":[{"index":0,"delta":{"role":"assistant","content":"Hi "}}]}`,
		`{"choices":[{"index":0,"delta":{"content":"there"}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"x1","type":"function","function":{"name":"read","arguments":"{\"a\""}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"name":"read","arguments":":1}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"x2","type":"function","function":{"name":"query","arguments":"{}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range chunks {
			fmt.Fprintf(w, "data: %s\n\n", c)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()
	m, _ := testModel(t, srv.URL+"/v1", nil)
	var deltas []string
	resp, err := m.Complete(testCtx(t), userOnly, func(d string) { deltas = append(deltas, d) })
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "Hi there" || len(deltas) != 2 {
		t.Errorf("content %q deltas %q", resp.Content, deltas)
	}
	want := []agent.ToolCall{{ID: "x1", Name: "read", Arguments: `{"a":1}`}, {ID: "x2", Name: "query", Arguments: "{}"}}
	if len(resp.ToolCalls) != 2 || resp.ToolCalls[0] != want[0] || resp.ToolCalls[1] != want[1] {
		t.Errorf("tool calls = %+v", resp.ToolCalls)
	}
	if resp.Usage.TotalTokens == 0 {
		t.Errorf("missing usage was not estimated: %+v", resp.Usage)
	}
}

func TestOpenAIRetryAfterHonoured(t *testing.T) {
	srv := modeltest.New(t)
	srv.Script(modeltest.Status(429).RetryAfter("1"), modeltest.Text("ok"))
	m, logs := testModel(t, srv.URL(), nil)
	start := time.Now()
	resp, err := m.Complete(testCtx(t), userOnly, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 950*time.Millisecond {
		t.Errorf("retried after %v, before Retry-After: 1", d)
	}
	if resp.Content != "ok" || srv.Count() != 2 {
		t.Errorf("content %q after %d requests", resp.Content, srv.Count())
	}
	if !strings.Contains(logs.String(), "retry_after=true") {
		t.Errorf("retry log does not say it honoured Retry-After:\n%s", logs)
	}
}

func TestOpenAIRetryAfterCapped(t *testing.T) {
	srv := modeltest.New(t)
	srv.Script(modeltest.Status(429).RetryAfter("3600"), modeltest.Text("ok"))
	m, _ := testModel(t, srv.URL(), func(c *Config) { c.MaxRetryAfter = 50 * time.Millisecond })
	start := time.Now()
	if _, err := m.Complete(testCtx(t), userOnly, nil); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("waited %v despite the cap", d)
	}
}

func TestOpenAI5xxRetried(t *testing.T) {
	forBothModes(t, func(t *testing.T, stream bool) {
		srv := modeltest.New(t)
		srv.Script(modeltest.Status(503), modeltest.Status(500), modeltest.Drop(), modeltest.Text("recovered"))
		m, _ := testModel(t, srv.URL(), func(c *Config) { c.Stream = stream })
		resp, err := m.Complete(testCtx(t), userOnly, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Content != "recovered" || srv.Count() != 4 {
			t.Errorf("content %q after %d requests", resp.Content, srv.Count())
		}
	})
}

func TestOpenAI5xxExhausted(t *testing.T) {
	srv := modeltest.New(t)
	srv.Default(modeltest.Status(502).WithMessage("bad gateway upstream"))
	m, _ := testModel(t, srv.URL(), func(c *Config) { c.MaxRetries = 2 })
	_, err := m.Complete(testCtx(t), userOnly, nil)
	if !errors.Is(err, ErrModelUnavailable) || errors.Is(err, ErrModelRejected) {
		t.Fatalf("err = %v", err)
	}
	var me *ModelError
	if !errors.As(err, &me) || me.Attempts != 3 || me.Status != 502 {
		t.Errorf("ModelError = %+v", me)
	}
	if want := "model unavailable after 3 attempts: HTTP 502: bad gateway upstream"; err.Error() != want {
		t.Errorf("err = %q, want %q", err, want)
	}
	if srv.Count() != 3 {
		t.Errorf("requests = %d", srv.Count())
	}
}

func TestOpenAIEndpointDown(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	m, logs := testModel(t, "http://"+addr+"/v1", nil)
	start := time.Now()
	_, err = m.Complete(testCtx(t), userOnly, nil)
	if !errors.Is(err, ErrModelUnavailable) {
		t.Fatalf("err = %v", err)
	}
	var me *ModelError
	if !errors.As(err, &me) || me.Attempts != DefaultModelRetries+1 {
		t.Errorf("attempts = %+v", me)
	}
	if !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("err = %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v with small backoff", d)
	}
	if n := strings.Count(logs.String(), "retrying"); n != DefaultModelRetries {
		t.Errorf("%d retry logs, want %d", n, DefaultModelRetries)
	}
}

func TestOpenAITimeoutPerAttempt(t *testing.T) {
	forBothModes(t, func(t *testing.T, stream bool) {
		srv := modeltest.New(t)
		srv.Default(modeltest.Delay(10*time.Second, modeltest.Text("too late")))
		m, _ := testModel(t, srv.URL(), func(c *Config) {
			c.Stream = stream
			c.Timeout = 100 * time.Millisecond
			c.MaxRetries = 2
		})
		start := time.Now()
		_, err := m.Complete(testCtx(t), userOnly, nil)
		if !errors.Is(err, ErrModelUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v", err)
		}
		if !strings.Contains(err.Error(), "no complete answer within 100ms") {
			t.Errorf("err = %v", err)
		}
		if d := time.Since(start); d < 300*time.Millisecond || d > 5*time.Second {
			t.Errorf("took %v for 3 attempts of 100ms", d)
		}
		if srv.Count() != 3 {
			t.Errorf("requests = %d", srv.Count())
		}
	})
}

// TestOpenAITimeoutThenSuccess: a slow first attempt times out and the retry
// answers.
func TestOpenAITimeoutThenSuccess(t *testing.T) {
	srv := modeltest.New(t)
	srv.Script(modeltest.Delay(10*time.Second, modeltest.Text("late")), modeltest.Text("fast"))
	m, _ := testModel(t, srv.URL(), func(c *Config) { c.Timeout = 100 * time.Millisecond })
	resp, err := m.Complete(testCtx(t), userOnly, nil)
	if err != nil || resp.Content != "fast" {
		t.Fatalf("resp %+v, err %v", resp, err)
	}
}

// TestOpenAIPartialStreamNotRetried: once text reached onDelta, a failure
// is not retried (the caller would see the text twice).
func TestOpenAIPartialStreamNotRetried(t *testing.T) {
	srv := modeltest.New(t)
	srv.Default(modeltest.Text("a long answer that streams slowly").WithChunkDelay(80 * time.Millisecond))
	m, _ := testModel(t, srv.URL(), func(c *Config) { c.Timeout = 200 * time.Millisecond })
	var deltas []string
	_, err := m.Complete(testCtx(t), userOnly, func(d string) { deltas = append(deltas, d) })
	if !errors.Is(err, ErrModelUnavailable) || !strings.Contains(err.Error(), "broke off") {
		t.Fatalf("err = %v", err)
	}
	if len(deltas) == 0 || srv.Count() != 1 {
		t.Errorf("deltas %q, requests %d", deltas, srv.Count())
	}
	// Without an onDelta nothing was shown, so the same failure is retried.
	srv2 := modeltest.New(t)
	srv2.Script(modeltest.Text("a long answer that streams slowly").WithChunkDelay(80*time.Millisecond), modeltest.Text("quick"))
	m2, _ := testModel(t, srv2.URL(), func(c *Config) { c.Timeout = 200 * time.Millisecond })
	resp, err := m2.Complete(testCtx(t), userOnly, nil)
	if err != nil || resp.Content != "quick" {
		t.Errorf("resp %+v, err %v", resp, err)
	}
}

func TestOpenAI4xxNotRetried(t *testing.T) {
	for _, code := range []int{400, 401, 403, 404, 422} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			srv := modeltest.New(t)
			srv.Default(modeltest.Status(code).WithMessage("nope"))
			m, _ := testModel(t, srv.URL(), nil)
			_, err := m.Complete(testCtx(t), userOnly, nil)
			if !errors.Is(err, ErrModelRejected) || errors.Is(err, ErrModelUnavailable) {
				t.Fatalf("err = %v", err)
			}
			if want := fmt.Sprintf("model rejected the request: HTTP %d: nope", code); err.Error() != want {
				t.Errorf("err = %q, want %q", err, want)
			}
			if srv.Count() != 1 {
				t.Errorf("requests = %d, want 1", srv.Count())
			}
		})
	}
}

func TestOpenAIAPIKeyNeverLeaks(t *testing.T) {
	srv := modeltest.New(t)
	// A server that echoes the key, as some proxies do.
	srv.Script(modeltest.Status(401).WithMessage("Incorrect API key provided: " + testAPIKey))
	srv.Default(modeltest.Status(503).WithMessage("upstream rejected key " + testAPIKey))
	m, logs := testModel(t, srv.URL(), func(c *Config) { c.MaxRetries = 1 })
	for range 2 {
		_, err := m.Complete(testCtx(t), userOnly, nil)
		if err == nil {
			t.Fatal("no error")
		}
		if strings.Contains(err.Error(), testAPIKey) || strings.Contains(fmt.Sprintf("%+v", err), testAPIKey) {
			t.Errorf("API key in error: %v", err)
		}
		if !strings.Contains(err.Error(), "***") {
			t.Errorf("key not visibly redacted: %v", err)
		}
	}
	if strings.Contains(logs.String(), testAPIKey) {
		t.Errorf("API key in logs:\n%s", logs)
	}
}

func TestOpenAICallerCancel(t *testing.T) {
	srv := modeltest.New(t)
	srv.Default(modeltest.Delay(10*time.Second, modeltest.Text("late")))
	m, _ := testModel(t, srv.URL(), nil)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := m.Complete(ctx, userOnly, nil)
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrModelUnavailable) {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 3*time.Second || srv.Count() != 1 {
		t.Errorf("took %v, %d requests", d, srv.Count())
	}
}

func TestOpenAIAzure(t *testing.T) {
	srv := modeltest.New(t)
	srv.Script(modeltest.Text("azure ok"))
	m, _ := testModel(t, strings.TrimSuffix(srv.URL(), "/v1"), func(c *Config) {
		c.APIType = "azure"
		c.Model = "gpt-4o-deploy"
	})
	resp, err := m.Complete(testCtx(t), userOnly, nil)
	if err != nil || resp.Content != "azure ok" {
		t.Fatalf("resp %+v, err %v", resp, err)
	}
	req := srv.Requests()[0]
	if req.Path != "/openai/deployments/gpt-4o-deploy/chat/completions" {
		t.Errorf("path = %q", req.Path)
	}
	if req.Header.Get("Api-Key") != testAPIKey || req.Header.Get("Authorization") != "" {
		t.Errorf("auth headers = %v", req.Header)
	}
}

// Configured headers reach the server on every request, beside the key.
func TestOpenAIHeaders(t *testing.T) {
	srv := modeltest.New(t)
	srv.Script(modeltest.Text("one"), modeltest.Text("two"))
	m, _ := testModel(t, srv.URL(), func(c *Config) {
		c.Headers = map[string]string{"OpenAI-Organization": "org-ops", "x-litellm-tags": "vigil"}
	})
	for range 2 {
		if _, err := m.Complete(testCtx(t), userOnly, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, req := range srv.Requests() {
		if req.Header.Get("OpenAI-Organization") != "org-ops" || req.Header.Get("X-Litellm-Tags") != "vigil" ||
			req.Header.Get("Authorization") != "Bearer "+testAPIKey {
			t.Errorf("request %d headers = %v", req.N, req.Header)
		}
	}
	for _, h := range []string{"authorization", "Api-Key", "bad name"} {
		c := DefaultConfig()
		c.BaseURL, c.Model, c.Headers = srv.URL(), "m", map[string]string{h: "x"}
		if _, err := New(c); err == nil || !strings.Contains(err.Error(), "llm.headers") {
			t.Errorf("header %q: err = %v", h, err)
		}
	}
}

// Azure: the deployment path, the api-version query (the default and a
// configured one), the api-key header, and the extra headers.
func TestOpenAIAzureVersionAndHeaders(t *testing.T) {
	srv := modeltest.New(t)
	srv.Script(modeltest.Text("a"), modeltest.Text("b"))
	base := strings.TrimSuffix(srv.URL(), "/v1")
	for _, version := range []string{"", "2024-10-21"} {
		m, _ := testModel(t, base, func(c *Config) {
			c.APIType, c.APIVersion, c.Model = "azure", version, "ops-gpt4o"
			c.Headers = map[string]string{"X-Ms-Useragent": "vigil"}
		})
		if _, err := m.Complete(testCtx(t), userOnly, nil); err != nil {
			t.Fatal(err)
		}
	}
	reqs := srv.Requests()
	for i, want := range []string{DefaultAzureVersion, "2024-10-21"} {
		r := reqs[i]
		if r.Path != "/openai/deployments/ops-gpt4o/chat/completions" || r.Query.Get("api-version") != want {
			t.Errorf("request %d: %s?%s, want api-version %s", i, r.Path, r.Query.Encode(), want)
		}
		if r.Header.Get("Api-Key") != testAPIKey || r.Header.Get("Authorization") != "" || r.Header.Get("X-Ms-Useragent") != "vigil" {
			t.Errorf("request %d headers = %v", i, r.Header)
		}
	}
}

func TestNewOpenAIModelValidation(t *testing.T) {
	base := func() Config {
		c := DefaultConfig()
		c.BaseURL, c.Model = "http://localhost:11434/v1", "llama3.1"
		return c
	}
	tests := []struct {
		name    string
		edit    func(*Config)
		wantErr string
	}{
		{"ok", func(*Config) {}, ""},
		{"no base url", func(c *Config) { c.BaseURL = " " }, "llm.base_url is empty"},
		{"bad scheme", func(c *Config) { c.BaseURL = "ftp://x" }, `llm.base_url "ftp://x" is not an http(s) URL`},
		{"no host", func(c *Config) { c.BaseURL = "http://" }, "is not an http(s) URL"},
		{"userinfo redacted", func(c *Config) { c.BaseURL = "gopher://u:secretpw@h" }, "u:xxxxx@h"},
		{"no model", func(c *Config) { c.Model = "" }, "llm.model is empty"},
		{"temperature", func(c *Config) { c.Temperature = 3 }, "llm.temperature 3 is out of range"},
		{"max tokens", func(c *Config) { c.MaxTokens = -1 }, "llm.max_tokens -1 is negative"},
		{"timeout", func(c *Config) { c.Timeout = -time.Second }, "llm.timeout -1s is negative"},
		{"api type", func(c *Config) { c.APIType = "bedrock" }, `llm.api_type "bedrock" is unknown`},
		{"reasoning model temperature", func(c *Config) { c.Model, c.Temperature = "o3-mini", 0.5 }, `llm.model "o3-mini" does not accept`},
		{"reasoning model max tokens", func(c *Config) { c.Model, c.MaxTokens = "o3-mini", 100 }, ""},
		{"zero config", func(c *Config) { *c = Config{BaseURL: "https://api.openai.com/v1", Model: "gpt-4o"} }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := base()
			tt.edit(&cfg)
			m, err := New(cfg)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if m != nil {
				t.Error("model returned with error")
			}
			if strings.Contains(err.Error(), "secretpw") {
				t.Errorf("password in error: %v", err)
			}
		})
	}
}

func TestOpenAIDefaults(t *testing.T) {
	m, err := New(Config{BaseURL: "https://api.openai.com/v1", Model: "gpt-4o"})
	if err != nil {
		t.Fatal(err)
	}
	r := m.retry
	if m.stream || r.timeout != DefaultModelTimeout || r.maxRetries != DefaultModelRetries ||
		r.base != DefaultBackoffBase || r.max != DefaultBackoffMax || r.maxRetryAfter != DefaultMaxRetryAfter {
		t.Errorf("defaults: stream=%v %+v", m.stream, r)
	}
	if d := DefaultConfig(); !d.Stream {
		t.Error("DefaultConfig does not stream")
	}
	m, err = New(Config{BaseURL: "https://x/v1", Model: "m", MaxRetries: -1})
	if err != nil || m.retry.maxRetries != 0 {
		t.Errorf("MaxRetries -1: %v %+v", err, m)
	}
	m, err = New(Config{BaseURL: "https://x/v1", Model: "gpt-5-mini", MaxTokens: 100})
	if err != nil || m.maxTokens != 0 || m.maxCompletionTokens != 100 {
		t.Errorf("gpt-5 max tokens: %v %+v", err, m)
	}
}

// TestOpenAIHTTP2 checks the client against an endpoint as hosted APIs
// serve: TLS with HTTP/2. The default transport negotiates HTTP/2, streams
// the answer piece by piece, and concurrent calls share one connection.
func TestOpenAIHTTP2(t *testing.T) {
	srv := modeltest.NewWith(t, modeltest.Options{HTTPS: true})
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	tr := newTransport()
	tr.TLSClientConfig = &tls.Config{RootCAs: roots}
	var dials atomic.Int64
	dial := tr.DialContext
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return dial(ctx, network, addr)
	}
	m, _ := testModel(t, srv.URL(), func(c *Config) { c.HTTPClient = &http.Client{Transport: tr} })

	const answer = "web1 is healthy: load 0.3, disk 40%."
	srv.Script(modeltest.Text(answer).WithChunkDelay(5 * time.Millisecond))
	var deltas []string
	resp, err := m.Complete(testCtx(t), userOnly, func(d string) { deltas = append(deltas, d) })
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != answer || strings.Join(deltas, "") != answer || len(deltas) < 2 {
		t.Errorf("streamed answer %q arrived as %q", resp.Content, deltas)
	}

	// Calls in flight at once: each waits at the server until all are
	// there, so they overlap on the wire.
	const calls = 8
	var arrived sync.WaitGroup
	arrived.Add(calls)
	srv.Default(modeltest.Func(func(modeltest.Request) modeltest.Step {
		arrived.Done()
		arrived.Wait()
		return modeltest.Calls(modeltest.Call("read", `{"command":"uptime"}`))
	}))
	req := userOnly
	req.Tools = []tools.Spec{readSpec}
	errs := make(chan error, calls)
	for range calls {
		go func() {
			resp, err := m.Complete(testCtx(t), req, nil)
			if err == nil && (len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Arguments != `{"command":"uptime"}`) {
				err = fmt.Errorf("resp = %+v", resp)
			}
			errs <- err
		}()
	}
	for range calls {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != calls+1 {
		t.Fatalf("server saw %d requests, want %d", len(reqs), calls+1)
	}
	for _, r := range reqs {
		if r.Proto != "HTTP/2.0" || !r.Stream {
			t.Errorf("request #%d came as %s, stream=%v; want a streamed HTTP/2.0 call", r.N, r.Proto, r.Stream)
		}
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("%d calls opened %d connections, want them all on one", calls+1, n)
	}
}

// rewindCheck is a transport that reads what each request sends and what
// its GetBody (the transport's rewind) gives, keeps both, and sends the
// request on.
type rewindCheck struct {
	next          http.RoundTripper
	mu            sync.Mutex
	sent, rewound [][]byte
}

func (c *rewindCheck) RoundTrip(req *http.Request) (*http.Response, error) {
	sent, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	_ = req.Body.Close()
	if req.GetBody == nil {
		return nil, errors.New("the request cannot be rewound: no GetBody")
	}
	rb, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	rewound, err := io.ReadAll(rb)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.sent, c.rewound = append(c.sent, sent), append(c.rewound, rewound)
	c.mu.Unlock()
	out := req.Clone(req.Context())
	out.Body = io.NopCloser(bytes.NewReader(sent))
	return c.next.RoundTrip(out)
}

// TestOpenAIRequestBodyRewind checks that the request body, released once
// sent, comes back byte for byte when the transport rewinds it (a retry on
// a connection the server closed): tools, tool calls and results included.
func TestOpenAIRequestBodyRewind(t *testing.T) {
	forBothModes(t, func(t *testing.T, stream bool) {
		srv := modeltest.New(t)
		srv.Script(modeltest.Text("done"))
		check := &rewindCheck{next: newTransport()}
		m, _ := testModel(t, srv.URL(), func(c *Config) {
			c.Stream = stream
			c.HTTPClient = &http.Client{Transport: check}
			c.Temperature = 0.2
			c.MaxTokens = 300
		})
		req := agent.ModelRequest{
			Messages: []agent.Message{
				{Role: agent.RoleSystem, Content: "You are vigil."},
				{Role: agent.RoleUser, Content: "how is web1? <ünïcödé & \"quotes\">"},
				{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "c1", Name: "read", Arguments: `{"command":"uptime"}`}}},
				{Role: agent.RoleTool, ToolCallID: "c1", Name: "read", Content: " 10:00 up 3 days,  load average: 0.30"},
			},
			Tools: []tools.Spec{readSpec, {Name: "discover", Description: "d"}},
		}
		if _, err := m.Complete(testCtx(t), req, nil); err != nil {
			t.Fatal(err)
		}
		if len(check.sent) != 1 {
			t.Fatalf("%d requests sent, want 1", len(check.sent))
		}
		if !bytes.Equal(check.sent[0], check.rewound[0]) {
			t.Errorf("a rewound body differs from the one sent:\nsent:    %s\nrewound: %s", check.sent[0], check.rewound[0])
		}
		if got := srv.Requests()[0].Body; got != string(check.sent[0]) {
			t.Errorf("the server received %s, the client sent %s", got, check.sent[0])
		}
	})
}

func TestOnceBodyLetsGo(t *testing.T) {
	o := &onceBody{r: io.NopCloser(strings.NewReader("0123456789"))}
	p := make([]byte, 4)
	var got []byte
	for {
		n, err := o.Read(p)
		got = append(got, p[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if string(got) != "0123456789" || o.r != nil {
		t.Errorf("read %q; reader kept after the end: %v", got, o.r != nil)
	}
	if n, err := o.Read(p); n != 0 || err != io.EOF {
		t.Errorf("after the end: Read = %d, %v", n, err)
	}
	o = &onceBody{r: io.NopCloser(strings.NewReader("abc"))}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	if n, err := o.Read(p); n != 0 || err != io.EOF || o.r != nil {
		t.Errorf("after Close: Read = %d, %v; reader kept: %v", n, err, o.r != nil)
	}
}

// TestToolCacheSharesOneConversion checks that a list offered again is
// converted once and shared, that a list changed in place is converted
// again, and that an invalid schema is refused every time.
func TestToolCacheSharesOneConversion(t *testing.T) {
	var c toolCache
	specs := []tools.Spec{readSpec, {Name: "discover", Description: "d"}}
	first, err := c.get(specs)
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.get(specs)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 2 || &first[0] != &again[0] {
		t.Error("the same list was converted twice")
	}
	if p, ok := first[1].Function.Parameters.(json.RawMessage); !ok || string(p) != agent.EmptyParameters {
		t.Errorf("a tool without parameters got %#v", first[1].Function.Parameters)
	}
	specs[1].Description = "changed"
	changed, err := c.get(specs)
	if err != nil {
		t.Fatal(err)
	}
	if changed[1].Function.Description != "changed" || first[1].Function.Description != "d" {
		t.Errorf("a list changed in place was not converted again: %q", changed[1].Function.Description)
	}
	bad := []tools.Spec{{Name: "broken", Parameters: json.RawMessage(`{"type":`)}}
	for range 2 {
		if _, err := c.get(bad); err == nil || !strings.Contains(err.Error(), "broken") {
			t.Errorf("invalid schema: err = %v", err)
		}
	}
	for i := range maxToolLists + 1 {
		if _, err := c.get([]tools.Spec{{Name: fmt.Sprint("t", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(c.lists); n > maxToolLists {
		t.Errorf("the cache holds %d lists, more than %d", n, maxToolLists)
	}
}

package modeltest_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/vigilops/vigil/internal/testenv/modeltest"
)

// recordingTB captures Errorf calls so tests can assert that the server
// fails the test it serves.
type recordingTB struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recordingTB) errors() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errs...)
}

func client(srv *modeltest.Server) *openai.Client {
	cfg := openai.DefaultConfig("test-key")
	cfg.BaseURL = srv.URL()
	return openai.NewClientWithConfig(cfg)
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

var userMsg = []openai.ChatCompletionMessage{{Role: "user", Content: "how is web1?"}}

func TestTextNonStreaming(t *testing.T) {
	srv := modeltest.New(t)
	srv.Script(modeltest.Text("all good"))
	resp, err := client(srv).CreateChatCompletion(ctx(t), openai.ChatCompletionRequest{Model: "m1", Messages: userMsg})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Choices[0].Message.Content; got != "all good" {
		t.Errorf("content = %q", got)
	}
	if resp.Choices[0].FinishReason != "stop" {
		t.Errorf("finish = %q", resp.Choices[0].FinishReason)
	}
	if resp.Usage.TotalTokens == 0 || resp.Usage.TotalTokens != resp.Usage.PromptTokens+resp.Usage.CompletionTokens {
		t.Errorf("usage = %+v", resp.Usage)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Model != "m1" || reqs[0].Stream || reqs[0].FirstUser() != "how is web1?" {
		t.Errorf("requests = %+v", reqs)
	}
	if got := reqs[0].Header.Get("Authorization"); got != "Bearer test-key" {
		t.Errorf("Authorization = %q", got)
	}
}

// rawStream posts a streaming request and returns the data payloads.
func rawStream(t *testing.T, srv *modeltest.Server, body string) []string {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx(t), http.MethodPost, srv.URL()+"/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type = %q", ct)
	}
	var out []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("line without data prefix: %q", line)
		}
		out = append(out, data)
	}
	return out
}

func TestStreamWireFormat(t *testing.T) {
	srv := modeltest.New(t)
	srv.Script(modeltest.Calls(
		modeltest.Call("read", `{"action":"exec","target":"localhost","command":"uptime"}`),
		modeltest.Call("query", `{"action":"search","query":"web"}`),
	).WithContent("Let me look — ünïcödé."))
	events := rawStream(t, srv, `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`)
	if events[len(events)-1] != "[DONE]" {
		t.Fatalf("last event = %q", events[len(events)-1])
	}
	var content strings.Builder
	args := map[int]*strings.Builder{}
	argChunks := map[int]int{}
	ids := map[int]string{}
	contentChunks := 0
	var finish string
	var usage *openai.Usage
	for _, e := range events[:len(events)-1] {
		var chunk openai.ChatCompletionStreamResponse
		if err := json.Unmarshal([]byte(e), &chunk); err != nil {
			t.Fatalf("chunk %q: %v", e, err)
		}
		if chunk.Object != "chat.completion.chunk" {
			t.Errorf("object = %q", chunk.Object)
		}
		if chunk.Usage != nil {
			usage = chunk.Usage
			if len(chunk.Choices) != 0 {
				t.Errorf("usage chunk has choices")
			}
			continue
		}
		c := chunk.Choices[0]
		if c.Delta.Content != "" {
			content.WriteString(c.Delta.Content)
			contentChunks++
		}
		for _, tc := range c.Delta.ToolCalls {
			if tc.Index == nil {
				t.Fatalf("tool call delta without index: %s", e)
			}
			i := *tc.Index
			if tc.ID != "" {
				ids[i] = tc.ID
			}
			if args[i] == nil {
				args[i] = &strings.Builder{}
			}
			if tc.Function.Arguments != "" {
				args[i].WriteString(tc.Function.Arguments)
				argChunks[i]++
			}
		}
		if c.FinishReason != "" {
			finish = string(c.FinishReason)
		}
	}
	if content.String() != "Let me look — ünïcödé." || contentChunks < 2 {
		t.Errorf("content %q in %d chunks", content.String(), contentChunks)
	}
	if len(ids) != 2 || ids[0] == ids[1] || ids[0] == "" {
		t.Errorf("ids = %v", ids)
	}
	if args[0].String() != `{"action":"exec","target":"localhost","command":"uptime"}` || argChunks[0] < 2 || argChunks[1] < 2 {
		t.Errorf("args = %q, %q in %v chunks", args[0], args[1], argChunks)
	}
	if finish != "tool_calls" {
		t.Errorf("finish = %q", finish)
	}
	if usage == nil || usage.CompletionTokens == 0 {
		t.Errorf("usage = %+v", usage)
	}
}

func TestStreamWithoutUsage(t *testing.T) {
	srv := modeltest.New(t)
	srv.Script(modeltest.Text("hi"))
	for _, e := range rawStream(t, srv, `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`) {
		if strings.Contains(e, `"usage"`) {
			t.Errorf("usage sent without include_usage: %s", e)
		}
	}
}

func TestStreamGoOpenAI(t *testing.T) {
	srv := modeltest.New(t)
	srv.Script(modeltest.Text("streamed text that is long enough to split"))
	stream, err := client(srv).CreateChatCompletionStream(ctx(t), openai.ChatCompletionRequest{
		Model: "m", Messages: userMsg, StreamOptions: &openai.StreamOptions{IncludeUsage: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	var sb strings.Builder
	var gotUsage bool
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if chunk.Usage != nil {
			gotUsage = true
		}
		for _, c := range chunk.Choices {
			sb.WriteString(c.Delta.Content)
		}
	}
	if sb.String() != "streamed text that is long enough to split" || !gotUsage {
		t.Errorf("text %q, usage %v", sb.String(), gotUsage)
	}
	if r := srv.Requests()[0]; !r.Stream || !r.IncludeUsage {
		t.Errorf("request = %+v", r)
	}
}

func TestStatusAndRetryAfter(t *testing.T) {
	srv := modeltest.New(t)
	srv.Script(modeltest.Status(429).RetryAfter("7"), modeltest.Status(503).WithMessage("overloaded"))
	req, _ := http.NewRequestWithContext(ctx(t), http.MethodPost, srv.URL()+"/chat/completions",
		strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"x"}]}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "7" {
		t.Errorf("status %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	_, err = client(srv).CreateChatCompletion(ctx(t), openai.ChatCompletionRequest{Model: "m", Messages: userMsg})
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 503 || apiErr.Message != "overloaded" {
		t.Errorf("err = %v", err)
	}
}

func TestToolConversationDecoded(t *testing.T) {
	srv := modeltest.New(t)
	srv.Script(modeltest.Func(func(r modeltest.Request) modeltest.Step {
		res := r.LastToolResults()
		return modeltest.Text(fmt.Sprintf("got %d results, first %s=%s", len(res), res[0].ToolCallID, res[0].Content))
	}))
	msgs := []openai.ChatCompletionMessage{
		{Role: "system", Content: "sys"},
		{Role: "user", Content: "check web1"},
		{Role: "assistant", ToolCalls: []openai.ToolCall{
			{ID: "c1", Type: "function", Function: openai.FunctionCall{Name: "read", Arguments: `{"a":1}`}},
			{ID: "c2", Type: "function", Function: openai.FunctionCall{Name: "query", Arguments: `{}`}},
		}},
		{Role: "tool", ToolCallID: "c1", Content: "up 3 days"},
		{Role: "tool", ToolCallID: "c2", Content: "[]"},
	}
	tools := []openai.Tool{
		{Type: "function", Function: &openai.FunctionDefinition{Name: "read", Parameters: json.RawMessage(`{"type":"object"}`)}},
		{Type: "function", Function: &openai.FunctionDefinition{Name: "query"}},
	}
	resp, err := client(srv).CreateChatCompletion(ctx(t), openai.ChatCompletionRequest{Model: "m", Messages: msgs, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Choices[0].Message.Content; got != "got 2 results, first c1=up 3 days" {
		t.Errorf("content = %q", got)
	}
	r := srv.Requests()[0]
	if strings.Join(r.Tools, ",") != "read,query" || !r.HasTool("read") || r.HasTool("control") {
		t.Errorf("tools = %v", r.Tools)
	}
	if r.System() != "sys" || r.Turns() != 1 || len(r.ToolResults()) != 2 {
		t.Errorf("system %q, turns %d, results %d", r.System(), r.Turns(), len(r.ToolResults()))
	}
	a := r.Messages[2]
	if a.Role != "assistant" || len(a.ToolCalls) != 2 || a.ToolCalls[1].Name != "query" || a.ToolCalls[0].Arguments != `{"a":1}` {
		t.Errorf("assistant message = %+v", a)
	}
}

func TestGeneratedCallIDsUnique(t *testing.T) {
	srv := modeltest.New(t)
	srv.Default(modeltest.Calls(modeltest.Call("read", `{}`), modeltest.Call("read", `{}`)))
	seen := map[string]bool{}
	for range 3 {
		resp, err := client(srv).CreateChatCompletion(ctx(t), openai.ChatCompletionRequest{Model: "m", Messages: userMsg})
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range resp.Choices[0].Message.ToolCalls {
			if tc.ID == "" || seen[tc.ID] {
				t.Errorf("bad or duplicate id %q", tc.ID)
			}
			seen[tc.ID] = true
		}
		if resp.Choices[0].FinishReason != "tool_calls" {
			t.Errorf("finish = %q", resp.Choices[0].FinishReason)
		}
	}
}

func TestUnexpectedRequestFailsTest(t *testing.T) {
	rec := &recordingTB{TB: t}
	srv := modeltest.New(rec)
	_, err := client(srv).CreateChatCompletion(ctx(t), openai.ChatCompletionRequest{Model: "m", Messages: userMsg})
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 500 {
		t.Errorf("err = %v", err)
	}
	errs := rec.errors()
	if len(errs) != 1 || !strings.Contains(errs[0], "unexpected request #1; last message: user: how is web1?") {
		t.Errorf("errors = %q", errs)
	}
}

func TestInvalidConversationFailsTest(t *testing.T) {
	rec := &recordingTB{TB: t}
	srv := modeltest.New(rec)
	srv.Default(modeltest.Text("never"))
	msgs := []openai.ChatCompletionMessage{
		{Role: "user", Content: "x"},
		{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: "c1", Type: "function", Function: openai.FunctionCall{Name: "read", Arguments: `{}`}}}},
		{Role: "user", Content: "y"},
	}
	_, err := client(srv).CreateChatCompletion(ctx(t), openai.ChatCompletionRequest{Model: "m", Messages: msgs})
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 400 {
		t.Errorf("err = %v", err)
	}
	if errs := rec.errors(); len(errs) != 1 || !strings.Contains(errs[0], `tool calls "c1" were not answered`) {
		t.Errorf("errors = %q", errs)
	}
}

func TestDelayEndsWhenClientLeaves(t *testing.T) {
	srv := modeltest.New(t)
	srv.Script(modeltest.Delay(time.Minute, modeltest.Text("late")), modeltest.Delay(20*time.Millisecond, modeltest.Text("soon")))
	c, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := client(srv).CreateChatCompletion(c, openai.ChatCompletionRequest{Model: "m", Messages: userMsg})
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Fatalf("err = %v after %v", err, time.Since(start))
	}
	resp, err := client(srv).CreateChatCompletion(ctx(t), openai.ChatCompletionRequest{Model: "m", Messages: userMsg})
	if err != nil || resp.Choices[0].Message.Content != "soon" {
		t.Fatalf("resp %+v, err %v", resp, err)
	}
}

func TestCloseWithDelayedRequestInFlight(t *testing.T) {
	srv := modeltest.New(t)
	srv.Script(modeltest.Delay(time.Minute, modeltest.Text("late")))
	done := make(chan error, 1)
	go func() {
		_, err := client(srv).CreateChatCompletion(ctx(t), openai.ChatCompletionRequest{Model: "m", Messages: userMsg})
		done <- err
	}()
	for srv.Count() == 0 {
		time.Sleep(time.Millisecond)
	}
	start := time.Now()
	srv.Close()
	if err := <-done; err == nil {
		t.Error("request succeeded after Close")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Close took %v", d)
	}
}

func TestDrop(t *testing.T) {
	srv := modeltest.New(t)
	srv.Script(modeltest.Drop())
	_, err := client(srv).CreateChatCompletion(ctx(t), openai.ChatCompletionRequest{Model: "m", Messages: userMsg})
	var apiErr *openai.APIError
	if err == nil || errors.As(err, &apiErr) {
		t.Errorf("err = %v, want a transport error", err)
	}
}

func TestSlowStream(t *testing.T) {
	srv := modeltest.New(t)
	srv.Script(modeltest.Text("abcdefgh").WithChunkDelay(30 * time.Millisecond))
	start := time.Now()
	stream, err := client(srv).CreateChatCompletionStream(ctx(t), openai.ChatCompletionRequest{Model: "m", Messages: userMsg})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	for {
		if _, err := stream.Recv(); err != nil {
			break
		}
	}
	if d := time.Since(start); d < 100*time.Millisecond {
		t.Errorf("slow stream took only %v", d)
	}
}

func TestRouteConcurrent(t *testing.T) {
	srv := modeltest.New(t)
	srv.Route(func(r modeltest.Request) modeltest.Step {
		if r.Turns() == 0 {
			return modeltest.Calls(modeltest.Call("read", fmt.Sprintf(`{"conv":%q}`, r.FirstUser())))
		}
		return modeltest.Text("done " + r.FirstUser() + " " + r.LastToolResults()[0].Content)
	})
	srv.Record(false)
	const n = 200
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			user := fmt.Sprintf("conv-%d", i)
			msgs := []openai.ChatCompletionMessage{{Role: "user", Content: user}}
			stream := i%2 == 0
			resp, err := complete(ctx(t), srv, msgs, stream)
			if err != nil {
				errs <- err
				return
			}
			if want := fmt.Sprintf(`{"conv":%q}`, user); len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Function.Arguments != want {
				errs <- fmt.Errorf("%s: first answer %+v", user, resp)
				return
			}
			msgs = append(msgs, resp, openai.ChatCompletionMessage{Role: "tool", ToolCallID: resp.ToolCalls[0].ID, Content: "r" + user})
			resp, err = complete(ctx(t), srv, msgs, stream)
			if err != nil {
				errs <- err
				return
			}
			if want := "done " + user + " r" + user; resp.Content != want {
				errs <- fmt.Errorf("%s: final %q, want %q", user, resp.Content, want)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if srv.Count() != 2*n || len(srv.Requests()) != 0 {
		t.Errorf("count %d, recorded %d", srv.Count(), len(srv.Requests()))
	}
}

// complete does one call with go-openai, streamed or not, and returns the
// assembled assistant message.
func complete(c context.Context, srv *modeltest.Server, msgs []openai.ChatCompletionMessage, stream bool) (openai.ChatCompletionMessage, error) {
	req := openai.ChatCompletionRequest{Model: "m", Messages: msgs}
	if !stream {
		resp, err := client(srv).CreateChatCompletion(c, req)
		if err != nil {
			return openai.ChatCompletionMessage{}, err
		}
		return resp.Choices[0].Message, nil
	}
	s, err := client(srv).CreateChatCompletionStream(c, req)
	if err != nil {
		return openai.ChatCompletionMessage{}, err
	}
	defer s.Close()
	msg := openai.ChatCompletionMessage{Role: "assistant"}
	for {
		chunk, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return msg, nil
		}
		if err != nil {
			return msg, err
		}
		for _, ch := range chunk.Choices {
			msg.Content += ch.Delta.Content
			for _, tc := range ch.Delta.ToolCalls {
				for len(msg.ToolCalls) <= *tc.Index {
					msg.ToolCalls = append(msg.ToolCalls, openai.ToolCall{Type: "function"})
				}
				dst := &msg.ToolCalls[*tc.Index]
				if tc.ID != "" {
					dst.ID = tc.ID
				}
				dst.Function.Name += tc.Function.Name
				dst.Function.Arguments += tc.Function.Arguments
			}
		}
	}
}

func TestJSONModeHelpers(t *testing.T) {
	srv := modeltest.New(t)
	srv.Script(modeltest.JSONCall("read", `{"action":"exec"}`), modeltest.JSONFinal("all fine", "high"), modeltest.Raw("not json"))
	want := []string{
		`{"tool_call":{"name":"read","parameters":{"action":"exec"}}}`,
		`{"final_answer":{"confidence":"high","summary":"all fine"}}`,
		"not json",
	}
	for _, w := range want {
		resp, err := client(srv).CreateChatCompletion(ctx(t), openai.ChatCompletionRequest{Model: "m", Messages: userMsg})
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.Choices[0].Message.Content; got != w {
			t.Errorf("content = %s, want %s", got, w)
		}
	}
	if srv.Remaining() != 0 {
		t.Errorf("remaining = %d", srv.Remaining())
	}
}

func TestModelsAndPaths(t *testing.T) {
	srv := modeltest.New(t)
	resp, err := http.Get(srv.URL() + "/models")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Contains(body, []byte("scripted-model")) {
		t.Errorf("GET /v1/models: %d %s", resp.StatusCode, body)
	}
	srv.Script(modeltest.Text("root path"))
	base := strings.TrimSuffix(srv.URL(), "/v1")
	resp, err = http.Post(base+"/chat/completions", "application/json",
		strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"x"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || srv.Requests()[0].Path != "/chat/completions" {
		t.Errorf("POST /chat/completions: %d", resp.StatusCode)
	}
}

func BenchmarkRoundTrip(b *testing.B) {
	srv := modeltest.New(b)
	srv.Record(false)
	srv.Default(modeltest.Text("ok"))
	c := client(srv)
	for b.Loop() {
		if _, err := c.CreateChatCompletion(b.Context(), openai.ChatCompletionRequest{Model: "m", Messages: userMsg}); err != nil {
			b.Fatal(err)
		}
	}
}

// Package modeltest is a scripted OpenAI-compatible chat completions server
// for tests: real HTTP, real streaming, the model's side of the conversation
// written by the test.
//
//	srv := modeltest.New(t)
//	srv.Script(
//		modeltest.Calls(modeltest.Call("read", `{"action":"exec","target":"localhost","command":"uptime"}`)),
//		modeltest.Text("up 3 days"),
//	)
//	// configure the client with base URL srv.URL(), run the code under test
//	reqs := srv.Requests() // what the client sent
//
// Each request pops the next scripted Step (FIFO). For many concurrent
// conversations, Route computes every answer from the request instead.
// Requests are checked like a strict server would (e.g. every tool call
// answered by a tool message); an invalid one fails the test and gets 400.
package modeltest

import (
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// maxFuncDepth bounds Func steps that return Func steps.
const maxFuncDepth = 8

// Server is a scripted model. It is safe for concurrent requests and for
// scripting while requests are in flight.
type Server struct {
	rep     Reporter
	srv     *httptest.Server
	closing chan struct{}
	once    sync.Once

	seq     atomic.Int64 // request numbers
	callSeq atomic.Int64 // generated tool call IDs

	mu     sync.Mutex
	queue  []Step
	def    Step
	route  func(Request) Step
	record bool
	reqs   []Request
}

// Reporter is told what a strict server would refuse: an invalid request,
// one nothing was scripted for. A testing.TB is one; a scripted model
// serving from its own process (Start) reports elsewhere.
type Reporter interface {
	Errorf(format string, args ...any)
}

// Options choose how the scripted model is served.
type Options struct {
	// HTTPS serves TLS with HTTP/2 offered, as hosted APIs (OpenAI, Azure)
	// do: a client that speaks it multiplexes calls on a few connections.
	// The certificate is httptest's (Certificate); the client must trust
	// it. Without HTTPS the server speaks plain HTTP/1.1, as a local vLLM
	// or Ollama does.
	HTTPS bool
}

// New starts a scripted model server over plain HTTP/1.1; tb.Cleanup
// closes it.
func New(tb testing.TB) *Server {
	tb.Helper()
	return NewWith(tb, Options{})
}

// NewWith starts a scripted model server served as o says; tb.Cleanup
// closes it.
func NewWith(tb testing.TB, o Options) *Server {
	tb.Helper()
	s := Start(tb, o)
	tb.Cleanup(s.Close)
	return s
}

// Start starts a scripted model server outside a test's lifetime (e.g. in
// a process of its own, so that a measurement of the client's memory does
// not count the server's): rep receives what New would fail the test for,
// and the caller closes the server.
func Start(rep Reporter, o Options) *Server {
	s := &Server{rep: rep, closing: make(chan struct{}), record: true}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", s.models)
	mux.HandleFunc("GET /models", s.models)
	mux.HandleFunc("/", s.handle)
	s.srv = httptest.NewUnstartedServer(mux)
	if o.HTTPS {
		s.srv.EnableHTTP2 = true
		s.srv.StartTLS()
	} else {
		s.srv.Start()
	}
	return s
}

// URL is the base URL to configure as llm.base_url; it ends in /v1.
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// Certificate is the server's TLS certificate (nil without HTTPS): the
// root a client must trust. It is httptest's built-in one, for 127.0.0.1
// and localhost, the same in every process of a build.
func (s *Server) Certificate() *x509.Certificate { return s.srv.Certificate() }

// Close stops the server, ending delayed answers early. It is called by
// the test cleanup and may be called earlier to simulate an endpoint going
// down.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.closing)
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
}

// Script appends steps to the queue; each request pops one.
func (s *Server) Script(steps ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, steps...)
}

// Default sets the answer to requests that find the queue empty (and that
// Route, if set, leaves unanswered). Without a default such a request fails
// the test and gets HTTP 500.
func (s *Server) Default(step Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.def = step
}

// Route makes fn answer every request, before the queue is consulted; fn
// returning the zero Step falls back to the queue, then to the default.
// fn runs concurrently for concurrent requests. Route with a nil fn removes
// the router.
func (s *Server) Route(fn func(Request) Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.route = fn
}

// Record turns the recording of requests for Requests on (the default) or
// off, e.g. in load tests where keeping every conversation costs memory.
func (s *Server) Record(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.record = on
}

// Requests returns a copy of the recorded requests in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Count returns the number of chat completion requests received, recorded
// or not.
func (s *Server) Count() int { return int(s.seq.Load()) }

// Remaining returns the number of scripted steps not yet consumed.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

func (s *Server) models(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"object": "list",
		"data": []map[string]any{{
			"id": "scripted-model", "object": "model", "created": created, "owned_by": "modeltest",
		}},
	})
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	n := int(s.seq.Add(1))
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return // client went away
	}
	req, err := decodeRequest(body)
	req.N, req.Proto, req.Path, req.Query, req.Header, req.Body = n, r.Proto, r.URL.Path, r.URL.Query(), r.Header.Clone(), string(body)
	if err != nil {
		s.rep.Errorf("scripted model: request #%d is invalid: %v", n, err)
		writeError(w, http.StatusBadRequest, "scripted model: "+err.Error())
		return
	}

	step, ok := s.next(req)
	for depth := 0; step.kind == kindFunc; depth++ {
		if depth == maxFuncDepth {
			s.rep.Errorf("scripted model: request #%d: Func steps nested deeper than %d", n, maxFuncDepth)
			writeError(w, http.StatusInternalServerError, "scripted model: Func nesting too deep")
			return
		}
		delay := step.delay
		step = step.fn(req)
		step.delay += delay
	}
	if !ok || step.IsZero() {
		s.rep.Errorf("scripted model: unexpected request #%d; last message: %s", n, describe(req.Last()))
		writeError(w, http.StatusInternalServerError, fmt.Sprintf("scripted model: no answer scripted for request #%d", n))
		return
	}
	if !s.wait(r, step.delay) {
		return
	}
	switch step.kind {
	case kindStatus:
		if step.retryAfter != "" {
			w.Header().Set("Retry-After", step.retryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(step.status)
		_, _ = w.Write(step.errorBody())
	case kindDrop:
		drop(w)
	case kindMessage:
		if step.retryAfter != "" {
			w.Header().Set("Retry-After", step.retryAfter)
		}
		s.answer(w, r, req, step)
	}
}

// next records req and picks its step: router, then queue, then default.
func (s *Server) next(req Request) (Step, bool) {
	s.mu.Lock()
	if s.record {
		s.reqs = append(s.reqs, req)
	}
	route := s.route
	s.mu.Unlock()

	if route != nil {
		if step := route(req); !step.IsZero() {
			return step, true
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) > 0 {
		step := s.queue[0]
		s.queue = s.queue[1:]
		return step, true
	}
	if !s.def.IsZero() {
		return s.def, true
	}
	return Step{}, false
}

// wait sleeps d unless the client leaves or the server closes; it reports
// whether to go on answering.
func (s *Server) wait(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	case <-s.closing:
		return false
	}
}

func (s *Server) newCallID() string {
	return fmt.Sprintf("call_%d", s.callSeq.Add(1))
}

func drop(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		// Cannot hijack (HTTP/2): abort the handler, which resets the stream.
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}

func describe(m Message) string {
	var sb strings.Builder
	if m.Role == "" {
		return "(none)"
	}
	sb.WriteString(m.Role)
	if m.ToolCallID != "" {
		fmt.Fprintf(&sb, " [%s]", m.ToolCallID)
	}
	sb.WriteString(": ")
	sb.WriteString(m.Content)
	for _, tc := range m.ToolCalls {
		fmt.Fprintf(&sb, " %s(%s)", tc.Name, tc.Arguments)
	}
	out := sb.String()
	if r := []rune(out); len(r) > 300 {
		out = string(r[:300]) + "…"
	}
	return out
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{
		"message": msg, "type": "invalid_request_error", "param": nil, "code": nil,
	}})
}

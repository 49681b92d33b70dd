package slack

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigilops/vigil/bot"
	"github.com/vigilops/vigil/internal/testenv/slackfake"
)

const wait = 5 * time.Second

// recorder is a fake bot.Handler that records what the adapter delivers.
type recorder struct {
	mu      sync.Mutex
	msgs    []bot.Message
	decs    []bot.Decision
	changed chan struct{}
}

func newRecorder() *recorder { return &recorder{changed: make(chan struct{})} }

func (r *recorder) HandleMessage(_ context.Context, m bot.Message) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, m)
	close(r.changed)
	r.changed = make(chan struct{})
}

func (r *recorder) HandleDecision(_ context.Context, d bot.Decision) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.decs = append(r.decs, d)
	close(r.changed)
	r.changed = make(chan struct{})
}

func (r *recorder) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		ok := cond()
		ch := r.changed
		r.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("timed out waiting for %s; got messages %+v decisions %+v", what, r.messages(), r.decisions())
		}
	}
}

func (r *recorder) waitMessages(t *testing.T, n int) []bot.Message {
	t.Helper()
	r.waitFor(t, "messages", func() bool { return len(r.msgs) >= n })
	return r.messages()
}

func (r *recorder) waitDecisions(t *testing.T, n int) []bot.Decision {
	t.Helper()
	r.waitFor(t, "decisions", func() bool { return len(r.decs) >= n })
	return r.decisions()
}

func (r *recorder) messages() []bot.Message {
	if !r.mu.TryLock() {
		return nil // called with the lock held (from waitFor's failure path)
	}
	defer r.mu.Unlock()
	return append([]bot.Message(nil), r.msgs...)
}

func (r *recorder) decisions() []bot.Decision {
	if !r.mu.TryLock() {
		return nil
	}
	defer r.mu.Unlock()
	return append([]bot.Decision(nil), r.decs...)
}

// logBuffer collects log output for assertions.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logBuffer) count(substr string) int { return strings.Count(l.String(), substr) }

// harness is an adapter started against a fake Slack in one mode.
type harness struct {
	mode string
	fake *slackfake.Server
	a    *Adapter
	rec  *recorder
	logs *logBuffer
	base string // HTTP mode: http://addr
	// settled counts settle calls, for unique event IDs.
	settled int
}

type harnessOption func(*Config)

func startAdapter(t *testing.T, mode string, opts ...harnessOption) *harness {
	t.Helper()
	fake := slackfake.New(t, slackfake.WithPingInterval(200*time.Millisecond), slackfake.WithAckTimeout(2*time.Second))
	fake.AddUser(slackfake.User{ID: "U0ALICE", Name: "alice", RealName: "Alice"})
	fake.AddUser(slackfake.User{ID: "U0BOB", Name: "bob", RealName: "Bob"})
	logs := &logBuffer{}
	cfg := Config{
		Mode: mode, BotToken: slackfake.BotToken, AppToken: slackfake.AppToken,
		SigningSecret: slackfake.SigningSecret, Listen: "127.0.0.1:0", APIURL: fake.APIURL(),
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	for _, o := range opts {
		o(&cfg)
	}
	a, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	a.out.interval = 50 * time.Millisecond
	h := &harness{mode: mode, fake: fake, a: a, rec: newRecorder(), logs: logs}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Start(ctx, h.rec) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Start returned %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Error("adapter did not stop")
		}
	})
	select {
	case <-a.Ready():
	case err := <-done:
		t.Fatalf("Start: %v", err)
	case <-time.After(wait):
		t.Fatal("adapter not ready")
	}
	switch mode {
	case ModeHTTP:
		deadline := time.Now().Add(wait)
		for a.Addr() == "" && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if a.Addr() == "" {
			t.Fatal("http listener not bound")
		}
		h.base = "http://" + a.Addr()
	default:
		fake.WaitConnected(t, wait)
	}
	return h
}

// event delivers an Events API callback the way the mode does: a signed
// POST, or a Socket Mode envelope (waiting for its ack).
func (h *harness) event(t *testing.T, eventID string, ev slackfake.Event, retry int) {
	t.Helper()
	body := slackfake.EventCallback(eventID, ev)
	if h.mode == ModeHTTP {
		req := slackfake.EventsRequest(t, h.base+"/slack/events", body)
		if retry > 0 {
			req.Header.Set("X-Slack-Retry-Num", "1")
			req.Header.Set("X-Slack-Retry-Reason", "http_timeout")
		}
		h.do(t, req, http.StatusOK)
		return
	}
	var opts []slackfake.PushOption
	if retry > 0 {
		opts = append(opts, slackfake.Retry(retry, "timeout"))
	}
	h.fake.WaitAck(t, h.fake.PushEventsAPI(body, opts...), wait)
}

// settle waits until the adapter has handed the bot everything sent to it
// so far, so a test can check what was not delivered. Messages go to the
// bot before HTTP answers; in Socket Mode one goroutine takes envelopes in
// order, acknowledging each and handing it to the bot before the next, so
// the ack of one more envelope (an ignored join) means the ones before it
// were handed over. Then a marker put behind the work in every shard of
// the click queues runs only after that work has.
func (h *harness) settle(t *testing.T) {
	t.Helper()
	if h.mode != ModeHTTP {
		join := slackfake.ChannelMessage(chOps, bob, "<@U0BOB> has joined", "1000000000.000001", "")
		join.SubType = "channel_join"
		h.settled++
		h.fake.WaitAck(t, h.fake.PushEventsAPI(slackfake.EventCallback(fmt.Sprint("EvSettle", h.settled), join)), wait)
	}
	var wg sync.WaitGroup
	for _, ib := range []*inbox{h.a.decisions, h.a.modals} {
		for _, shard := range ib.shards {
			wg.Add(1)
			select {
			case shard <- func(context.Context) { wg.Done() }:
			case <-time.After(wait):
				t.Fatal("an inbound queue stayed full")
			}
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(wait):
		t.Fatal("the inbound queues did not drain")
	}
}

// interact delivers an interactivity payload.
func (h *harness) interact(t *testing.T, payload []byte) {
	t.Helper()
	if h.mode == ModeHTTP {
		h.do(t, slackfake.InteractiveRequest(t, h.base+"/slack/interactive", payload), http.StatusOK)
		return
	}
	h.fake.WaitAck(t, h.fake.PushInteractive(payload), wait)
}

func (h *harness) do(t *testing.T, req *http.Request, want int) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", req.URL.Path, err)
	}
	resp.Body.Close()
	if resp.StatusCode != want {
		t.Fatalf("%s: status %d, want %d", req.URL.Path, resp.StatusCode, want)
	}
}

func bothModes(t *testing.T, fn func(t *testing.T, mode string)) {
	for _, mode := range []string{ModeSocket, ModeHTTP} {
		t.Run(mode, func(t *testing.T) { fn(t, mode) })
	}
}

package console

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigilops/vigil/bot"
)

// recorder is a bot.Handler that records what the console hands it, and a
// controllable Idler.
type recorder struct {
	mu        sync.Mutex
	got       []string // "msg <text>" or "approve <id>" / "deny <id> <reason>"
	idle      bool
	idleNow   chan struct{}
	onMessage func(text string)
	// waiting receives a value each time the console starts waiting for a
	// busy bot.
	waiting chan struct{}
}

func newRecorder() *recorder {
	return &recorder{idle: true, idleNow: make(chan struct{}), waiting: make(chan struct{}, 16)}
}

func (r *recorder) HandleMessage(_ context.Context, m bot.Message) {
	r.mu.Lock()
	r.got = append(r.got, "msg "+m.Text)
	on := r.onMessage
	r.mu.Unlock()
	if on != nil {
		on(m.Text)
	}
}

func (r *recorder) HandleDecision(_ context.Context, d bot.Decision) {
	r.mu.Lock()
	defer r.mu.Unlock()
	verb := "deny"
	if d.Approve {
		verb = "approve"
	}
	r.got = append(r.got, strings.TrimSpace(verb+" "+d.ApprovalID+" "+d.Reason))
}

func (r *recorder) setBusy() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.idle = false
}

func (r *recorder) setIdle() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.idle = true
	close(r.idleNow)
	r.idleNow = make(chan struct{})
}

// WaitIdle implements Idler.
func (r *recorder) WaitIdle(ctx context.Context) error {
	for first := true; ; first = false {
		r.mu.Lock()
		idle, next := r.idle, r.idleNow
		r.mu.Unlock()
		if idle {
			return nil
		}
		if first {
			select {
			case r.waiting <- struct{}{}:
			default:
			}
		}
		select {
		case <-next:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (r *recorder) handed() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.got...)
}

func newConsole(h *recorder, in io.Reader, out io.Writer) *Adapter {
	return New(Config{In: in, Out: out, User: "alice", Idle: h})
}

// A bare "approve" or "deny" answers the only pending approval; with none
// or several it says so and hands nothing over.
func TestBareDecision(t *testing.T) {
	card := func(id string) bot.ApprovalCard {
		return bot.ApprovalCard{ID: id, Tool: "control", Command: "systemctl restart nginx", Target: "web1", Status: bot.ApprovalPending}
	}
	cases := []struct {
		name    string
		pending []string
		decided []string // cards updated to approved after posting
		line    string
		want    string // handed to the bot, "" for nothing
		say     string
	}{
		{name: "one pending", pending: []string{"aaaa"}, line: "approve", want: "approve aaaa",
			say: "note: approving aaaa, the only approval waiting: systemctl restart nginx on web1"},
		{name: "deny the one pending", pending: []string{"aaaa"}, line: "deny", want: "deny aaaa",
			say: "note: denying aaaa"},
		{name: "none", line: "approve", say: "error: no approval is waiting, so there is nothing to approve."},
		{name: "decided meanwhile", pending: []string{"aaaa"}, decided: []string{"aaaa"}, line: "approve",
			say: "error: no approval is waiting"},
		{name: "several", pending: []string{"aaaa", "bbbb"}, line: "approve",
			say: "error: 2 approvals are waiting (aaaa, bbbb); say which: approve <id>"},
		{name: "several, one decided", pending: []string{"aaaa", "bbbb"}, decided: []string{"aaaa"}, line: "approve",
			want: "approve bbbb", say: "note: approving bbbb"},
		{name: "explicit id", pending: []string{"aaaa", "bbbb"}, line: "approve bbbb", want: "approve bbbb"},
		{name: "deny with a reason", pending: []string{"aaaa"}, line: "deny aaaa not now", want: "deny aaaa not now"},
		{name: "approve with too much", line: "approve aaaa now", say: "error: usage: approve [<id>]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newRecorder()
			var out strings.Builder
			a := newConsole(h, strings.NewReader(tc.line+"\n"), &out)
			for _, id := range tc.pending {
				if _, err := a.PostApproval(context.Background(), thread, card(id)); err != nil {
					t.Fatal(err)
				}
			}
			for _, id := range tc.decided {
				c := card(id)
				c.Status = bot.ApprovalApproved
				if err := a.UpdateApproval(context.Background(), bot.MessageRef{}, c); err != nil {
					t.Fatal(err)
				}
			}
			if err := a.Start(context.Background(), h); err != nil {
				t.Fatal(err)
			}
			got := h.handed()
			switch {
			case tc.want == "" && len(got) > 0:
				t.Fatalf("handed %q; want nothing", got)
			case tc.want != "" && (len(got) != 1 || got[0] != tc.want):
				t.Fatalf("handed %q; want %q", got, tc.want)
			}
			if !strings.Contains(out.String(), tc.say) {
				t.Fatalf("output lacks %q:\n%s", tc.say, out.String())
			}
		})
	}
}

// "stop" right after a question waits until the question's run has
// started, so it stops that run instead of overtaking it; a decision waits
// until the bot is idle.
func TestLinesInOrder(t *testing.T) {
	h := newRecorder()
	r, w := io.Pipe()
	var out strings.Builder
	a := newConsole(h, r, &out)
	// The question makes the bot busy, but its run starts only when the
	// test says so.
	h.onMessage = func(text string) {
		if text == "why is it slow?" {
			h.setBusy()
		}
	}
	done := make(chan error, 1)
	go func() { done <- a.Start(context.Background(), h) }()
	go func() { _, _ = io.WriteString(w, "why is it slow?\nstop\n"); _ = w.Close() }()

	waitHanded := func(n int) []string {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for len(h.handed()) < n {
			if time.Now().After(deadline) {
				t.Fatalf("handed %q; want %d lines", h.handed(), n)
			}
			time.Sleep(5 * time.Millisecond)
		}
		return h.handed()
	}
	waitHanded(1)
	select {
	case <-h.waiting: // the console holds the stop until the run starts
	case <-time.After(5 * time.Second):
		t.Fatalf("the console never waited for the question's run; handed %q", h.handed())
	}
	if got := h.handed(); len(got) != 1 {
		t.Fatalf("stop was handed over before the question's run started: %q", got)
	}
	// The run starts: now the stop goes through, while the run is going.
	if err := a.SetStatus(context.Background(), thread, "investigating…"); err != nil {
		t.Fatal(err)
	}
	if got := waitHanded(2); got[1] != "msg stop" {
		t.Fatalf("handed %q; want the question, then stop", got)
	}
	h.setIdle()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the console did not finish at end of input")
	}
}

// A question that never starts a run (refused, or answered at once) does
// not hold up the stop after it: the bot being idle is enough.
func TestStopAfterAQuestionThatRanNothing(t *testing.T) {
	h := newRecorder()
	var out strings.Builder
	a := newConsole(h, strings.NewReader("hello\nstop\n"), &out)
	done := make(chan error, 1)
	go func() { done <- a.Start(context.Background(), h) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("stop waited for a run that never started; handed %q", h.handed())
	}
	if got := h.handed(); len(got) != 2 || got[1] != "msg stop" {
		t.Fatalf("handed %q", got)
	}
}

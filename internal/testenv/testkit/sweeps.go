package testkit

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/vigilops/vigil/bot"
)

// sweepWatch counts the bot's listings of the runs in progress. The bot
// lists them once per sweep of its orphan finder and nowhere else, so the
// count says how many sweeps have looked at the stores: a test waits for
// sweeps instead of sleeping through them.
type sweepWatch struct {
	bot.RunIndex
	mu sync.Mutex
	n  int
	ch chan struct{} // closed and replaced at every listing
}

func newSweepWatch(idx bot.RunIndex) *sweepWatch {
	return &sweepWatch{RunIndex: idx, ch: make(chan struct{})}
}

// ActiveRuns implements bot.RunIndex.
func (w *sweepWatch) ActiveRuns(ctx context.Context) ([]bot.ThreadRef, error) {
	refs, err := w.RunIndex.ActiveRuns(ctx)
	w.mu.Lock()
	w.n++
	close(w.ch)
	w.ch = make(chan struct{})
	w.mu.Unlock()
	return refs, err
}

func (w *sweepWatch) state() (int, <-chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n, w.ch
}

// WaitSweeps waits until n sweeps of the orphan finder have started and
// finished after the call, and then until the bot is idle: whatever those
// sweeps found in the stores (a run to continue) has been done by then.
// A sweep already under way when it is called does not count.
func (s *Stack) WaitSweeps(t testing.TB, n int) {
	t.Helper()
	if s.sweeps == nil {
		t.Fatal("testkit: the stack's store has no run index, so the bot does not sweep for orphaned runs")
	}
	from, _ := s.sweeps.state()
	timeout := time.NewTimer(30 * time.Second)
	defer timeout.Stop()
	for {
		// The sweep in progress at the call may have listed before it;
		// the one after it, and every later one, began after the call.
		// The bot queues what a sweep found before the next one lists.
		got, ch := s.sweeps.state()
		if got >= from+n+2 {
			break
		}
		select {
		case <-ch:
		case <-timeout.C:
			t.Fatalf("testkit: %d of %d sweeps of the orphan finder in 30s", max(got-from-2, 0), n)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Bot.WaitIdle(ctx); err != nil {
		t.Fatalf("testkit: bot not idle after the sweeps: %v", err)
	}
}

package console

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/vigilops/vigil/bot"
)

// Input is handled in order, so that a script piped in at once means what
// it would mean typed line by line:
//
//   - a question is handed over at once (the bot queues it behind the run
//     in progress);
//   - "stop" waits until vigil has taken up what came before it (its run
//     started, or vigil is idle again), so it stops that run instead of
//     dropping a question that had not started yet;
//   - "approve" and "deny" wait until vigil is idle, so the approval the
//     lines before it lead to exists by then.

// progress follows what the bot does with the console's lines.
type progress struct {
	mu sync.Mutex
	// runs counts runs started (a status was set); started is closed and
	// replaced each time one starts.
	runs    int
	started chan struct{}
	// handed is runs at the moment the last line was handed over.
	handed int
	// pending holds the approvals waiting for a decision, by ID, in the
	// order their cards were posted.
	pending []bot.ApprovalCard
}

func newProgress() *progress { return &progress{started: make(chan struct{})} }

// runStarted notes that the bot began working on something.
func (p *progress) runStarted() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.runs++
	close(p.started)
	p.started = make(chan struct{})
}

// markHanded notes that a line was just handed to the bot.
func (p *progress) markHanded() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.handed = p.runs
}

// takenUp reports whether a run started since the last line was handed
// over, and otherwise returns a channel closed at the next start.
func (p *progress) takenUp() (bool, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.runs > p.handed, p.started
}

// card records an approval card's latest state.
func (p *progress) card(c bot.ApprovalCard) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pending = slices.DeleteFunc(p.pending, func(x bot.ApprovalCard) bool { return x.ID == c.ID })
	if c.Status == bot.ApprovalPending {
		p.pending = append(p.pending, c)
	}
}

// waiting returns the approvals waiting for a decision.
func (p *progress) waiting() []bot.ApprovalCard {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.pending)
}

// waitTakenUp blocks until the bot has taken up the last line handed over
// (a run started since), or has nothing left to do, or ctx ends.
func (a *Adapter) waitTakenUp(ctx context.Context) {
	if a.cfg.Idle == nil {
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	idle := make(chan struct{})
	go func() {
		_ = a.cfg.Idle.WaitIdle(ctx)
		close(idle)
	}()
	for {
		done, next := a.prog.takenUp()
		if done {
			return
		}
		select {
		case <-next:
		case <-idle:
			return
		case <-ctx.Done():
			return
		}
	}
}

// waitIdle blocks until the bot has nothing left to do, or ctx ends.
func (a *Adapter) waitIdle(ctx context.Context) {
	if a.cfg.Idle != nil {
		_ = a.cfg.Idle.WaitIdle(ctx)
	}
}

// onlyPending picks the approval a bare "approve" or "deny" means: the
// only one waiting. With none or several it says so and returns false.
func (a *Adapter) onlyPending(verb string) (bot.ApprovalCard, bool) {
	cards := a.prog.waiting()
	switch len(cards) {
	case 0:
		a.println("error: no approval is waiting, so there is nothing to " + verb + ".")
		return bot.ApprovalCard{}, false
	case 1:
		return cards[0], true
	}
	ids := make([]string, len(cards))
	for i, c := range cards {
		ids[i] = c.ID
	}
	a.println("error: " + strconv.Itoa(len(cards)) + " approvals are waiting (" + strings.Join(ids, ", ") +
		"); say which: " + verb + " <id>")
	return bot.ApprovalCard{}, false
}

// describe names what an approval would change, for the line that says
// which approval a bare "approve" answered.
func describe(c bot.ApprovalCard) string {
	what := c.Command
	if what == "" {
		what = c.Summary
	}
	if what == "" {
		what = c.Tool
	}
	if c.Target != "" {
		what += " on " + c.Target
	}
	return what
}

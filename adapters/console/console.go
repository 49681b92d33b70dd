// Package console is the terminal chat adapter (SPEC B6): every input line is
// a message in one conversation, and traces, approval prompts and answers are
// printed as plain text. It is the adapter `make run` starts, and the one
// other tooling drives through standard input and output: lines are handled
// in order (order.go), so a script piped in at once behaves as if typed.
package console

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/bot"
)

// Platform is the console's platform name; its channel policy key is
// "console".
const Platform bot.Platform = "console"

// thread is the console's one conversation.
var thread = bot.ThreadRef{Platform: Platform, Channel: "console", Thread: "main"}

// Idler is what the console needs to finish cleanly at end of input: a way
// to wait until the bot has nothing left to do.
type Idler interface {
	WaitIdle(ctx context.Context) error
}

// Config sets up the console.
type Config struct {
	In  io.Reader
	Out io.Writer
	// User is the local user's name, used as the requester and approver.
	User string
	// Banner is printed first (the demo label, or a greeting).
	Banner string
	// Idle is waited on at end of input; nil means return at once.
	Idle Idler
}

// Adapter is the terminal adapter.
type Adapter struct {
	cfg     Config
	mu      sync.Mutex // serialises writes to Out and guards posted
	posted  int
	lineSeq int // only touched by Start's goroutine
	now     func() time.Time
	prog    *progress
}

var _ bot.Adapter = (*Adapter)(nil)

// New builds a console adapter.
func New(cfg Config) *Adapter {
	if cfg.User == "" {
		cfg.User = "operator"
	}
	return &Adapter{cfg: cfg, now: time.Now, prog: newProgress()}
}

// SetIdle sets what to wait for at end of input, when the bot is built after
// the adapter. Call it before Start.
func (a *Adapter) SetIdle(i Idler) { a.cfg.Idle = i }

// Platform implements bot.Adapter.
func (a *Adapter) Platform() bot.Platform { return Platform }

// Start reads lines until end of input, then waits for the bot to finish
// what it is doing (a run ends or stops at a pending approval) and returns.
func (a *Adapter) Start(ctx context.Context, h bot.Handler) error {
	if a.cfg.Banner != "" {
		a.println(a.cfg.Banner)
	}
	lines := make(chan string)
	errc := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(a.cfg.In)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
		errc <- sc.Err()
		close(lines)
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case line, ok := <-lines:
			if !ok {
				if err := <-errc; err != nil {
					return fmt.Errorf("console: read input: %w", err)
				}
				if a.cfg.Idle != nil {
					return a.cfg.Idle.WaitIdle(ctx)
				}
				return nil
			}
			a.handleLine(ctx, h, line)
		}
	}
}

func (a *Adapter) handleLine(ctx context.Context, h bot.Handler, line string) {
	text := strings.TrimSpace(line)
	if text == "" {
		return
	}
	a.lineSeq++
	fields := strings.Fields(text)
	switch verb := strings.ToLower(fields[0]); verb {
	case "approve", "deny":
		a.waitIdle(ctx)
		d := bot.Decision{Approve: verb == "approve", User: a.cfg.User, UserName: a.cfg.User, Thread: thread, At: a.now()}
		switch {
		case len(fields) == 1:
			c, ok := a.onlyPending(verb)
			if !ok {
				return
			}
			d.ApprovalID = c.ID
			a.println(fmt.Sprintf("note: %s %s, the only approval waiting: %s", verbing(verb), c.ID, describe(c)))
		case verb == "approve" && len(fields) != 2:
			a.println("error: usage: approve [<id>]")
			return
		default:
			d.ApprovalID = fields[1]
			d.Reason = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(text[len(fields[0]):]), fields[1]))
		}
		a.prog.markHanded()
		h.HandleDecision(ctx, d)
		return
	}
	if rating, ok := ratingOf(text); ok {
		if fh, ok := h.(bot.FeedbackHandler); ok {
			// The rating is for the answer just given: let it finish.
			a.waitIdle(ctx)
			a.prog.markHanded()
			fh.HandleFeedback(ctx, bot.Feedback{
				EventID: fmt.Sprintf("console-%d-%d", a.now().UnixNano(), a.lineSeq),
				Thread:  thread, Rating: rating, User: a.cfg.User, UserName: a.cfg.User, At: a.now(),
			})
			return
		}
	}
	if isStop(text) {
		a.waitTakenUp(ctx)
	}
	a.prog.markHanded()
	h.HandleMessage(ctx, bot.Message{
		EventID:   fmt.Sprintf("console-%d-%d", a.now().UnixNano(), a.lineSeq),
		Thread:    thread,
		ID:        fmt.Sprint(a.lineSeq),
		User:      a.cfg.User,
		UserName:  a.cfg.User,
		Text:      text,
		Mentions:  bot.ResourceMentions(text),
		Addressed: true,
		At:        a.now(),
	})
}

// Post implements bot.Adapter.
func (a *Adapter) Post(_ context.Context, _ bot.ThreadRef, r bot.Reply) (bot.MessageRef, error) {
	a.println(Render(r))
	return bot.MessageRef{ThreadRef: thread, ID: fmt.Sprint(a.nextID())}, nil
}

// PostApproval implements bot.Adapter.
func (a *Adapter) PostApproval(_ context.Context, _ bot.ThreadRef, c bot.ApprovalCard) (bot.MessageRef, error) {
	a.prog.card(c)
	a.println(RenderCard(c))
	return bot.MessageRef{ThreadRef: thread, ID: "approval-" + c.ID}, nil
}

// UpdateApproval implements bot.Adapter: a terminal cannot edit what it
// printed, so the new state is printed as a line.
func (a *Adapter) UpdateApproval(_ context.Context, _ bot.MessageRef, c bot.ApprovalCard) error {
	a.prog.card(c)
	a.println(RenderCard(c))
	return nil
}

// SetStatus implements bot.StatusSetter: nothing to show in a terminal
// beyond the traces themselves, but a status being set means a run started,
// which is what "stop" waits for.
func (a *Adapter) SetStatus(_ context.Context, _ bot.ThreadRef, status string) error {
	if status != "" {
		a.prog.runStarted()
	}
	return nil
}

// ratingOf reads a line that rates the last answer: "good" or "bad" (or
// 👍/👎) alone on the line.
func ratingOf(text string) (agent.Rating, bool) {
	switch strings.TrimRight(strings.ToLower(strings.TrimSpace(text)), ".!") {
	case "good", "👍":
		return agent.RatingGood, true
	case "bad", "👎":
		return agent.RatingBad, true
	}
	return "", false
}

// isStop reports a line asking to stop, as the bot reads it.
func isStop(text string) bool {
	t := strings.TrimRight(strings.ToLower(strings.TrimSpace(text)), ".!")
	return t == "stop" || t == "cancel"
}

func verbing(verb string) string {
	if verb == "approve" {
		return "approving"
	}
	return "denying"
}

func (a *Adapter) nextID() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.posted++
	return a.posted
}

func (a *Adapter) println(s string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	fmt.Fprintln(a.cfg.Out, s)
}

// Package console is the terminal chat adapter (SPEC B6): every input line is
// a message in one conversation, and traces, approval prompts and answers are
// printed as plain text. It is the adapter `make run` starts, and the one
// other tooling drives through standard input and output.
package console

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

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
}

var _ bot.Adapter = (*Adapter)(nil)

// New builds a console adapter.
func New(cfg Config) *Adapter {
	if cfg.User == "" {
		cfg.User = "operator"
	}
	return &Adapter{cfg: cfg, now: time.Now}
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
	switch strings.ToLower(fields[0]) {
	case "approve":
		if len(fields) != 2 {
			a.println("error: usage: approve <id>")
			return
		}
		h.HandleDecision(ctx, bot.Decision{ApprovalID: fields[1], Approve: true, User: a.cfg.User, UserName: a.cfg.User, Thread: thread, At: a.now()})
		return
	case "deny":
		if len(fields) < 2 {
			a.println("error: usage: deny <id> <reason>")
			return
		}
		reason := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(text[len(fields[0]):]), fields[1]))
		h.HandleDecision(ctx, bot.Decision{ApprovalID: fields[1], Approve: false, Reason: reason, User: a.cfg.User, UserName: a.cfg.User, Thread: thread, At: a.now()})
		return
	}
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
	a.println(RenderCard(c))
	return bot.MessageRef{ThreadRef: thread, ID: "approval-" + c.ID}, nil
}

// UpdateApproval implements bot.Adapter: a terminal cannot edit what it
// printed, so the new state is printed as a line.
func (a *Adapter) UpdateApproval(_ context.Context, _ bot.MessageRef, c bot.ApprovalCard) error {
	a.println(RenderCard(c))
	return nil
}

// SetStatus implements bot.StatusSetter: nothing to show in a terminal
// beyond the traces themselves.
func (a *Adapter) SetStatus(context.Context, bot.ThreadRef, string) error { return nil }

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

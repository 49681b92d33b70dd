package testkit

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigilops/vigil/bot"
)

// ChatPlatform is the platform name of the in-memory test adapter. Its
// channel policy keys are "testchat:<channel>".
const ChatPlatform bot.Platform = "testchat"

// Chat is an in-memory chat platform with several users and channels, for
// tests of roles, approvals and replicas where the console (one local user
// who holds every role) is not enough. It records everything the bot posts.
type Chat struct {
	mu      sync.Mutex
	h       bot.Handler
	started chan struct{}
	once    sync.Once
	seq     atomic.Int64
	posts   []Posted
	cards   map[string]bot.ApprovalCard // by approval ID, latest state
	notes   []Posted                    // NotifyUser messages
	// Approvers are users the platform itself calls approvers (like a
	// Matrix power level), per channel.
	Approvers map[string][]string
	// OnCard, when set, runs as a card is posted, before PostApproval
	// returns: a person clicking faster than the platform answers.
	OnCard func(card bot.ApprovalCard)
}

// Posted is one thing the bot said.
type Posted struct {
	Thread bot.ThreadRef
	User   string // for notices to one user
	Reply  bot.Reply
	Card   *bot.ApprovalCard
}

var (
	_ bot.Adapter    = (*Chat)(nil)
	_ bot.Notifier   = (*Chat)(nil)
	_ bot.FactSource = (*Chat)(nil)
)

// NewChat returns an idle test platform; the bot starts it.
func NewChat() *Chat {
	return &Chat{started: make(chan struct{}), cards: map[string]bot.ApprovalCard{}}
}

// Platform implements bot.Adapter.
func (c *Chat) Platform() bot.Platform { return ChatPlatform }

// Start implements bot.Adapter: it records the handler and waits.
func (c *Chat) Start(ctx context.Context, h bot.Handler) error {
	c.mu.Lock()
	c.h = h
	c.mu.Unlock()
	c.once.Do(func() { close(c.started) })
	<-ctx.Done()
	return nil
}

func (c *Chat) handler(t testing.TB) bot.Handler {
	t.Helper()
	select {
	case <-c.started:
	case <-time.After(10 * time.Second):
		t.Fatal("testchat: the bot did not start the adapter")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.h
}

// Thread returns the ref of a thread in a channel.
func Thread(channel, thread string) bot.ThreadRef {
	return bot.ThreadRef{Platform: ChatPlatform, Channel: channel, Thread: thread}
}

// Say delivers a message from user in a thread, addressed to the bot.
func (c *Chat) Say(t testing.TB, th bot.ThreadRef, user, text string) {
	t.Helper()
	c.SayEvent(t, th, user, text, fmt.Sprintf("ev-%d", c.seq.Add(1)))
}

// SayEvent delivers a message with a given event ID (redelivery tests).
func (c *Chat) SayEvent(t testing.TB, th bot.ThreadRef, user, text, eventID string) {
	t.Helper()
	c.deliver(t, th, user, text, eventID, true)
}

// SayUnaddressed delivers a thread reply that the platform could not tell
// was meant for the bot (a replica that never saw the thread).
func (c *Chat) SayUnaddressed(t testing.TB, th bot.ThreadRef, user, text string) {
	t.Helper()
	c.deliver(t, th, user, text, fmt.Sprintf("ev-%d", c.seq.Add(1)), false)
}

func (c *Chat) deliver(t testing.TB, th bot.ThreadRef, user, text, eventID string, addressed bool) {
	t.Helper()
	c.handler(t).HandleMessage(context.Background(), bot.Message{
		EventID: eventID, Thread: th, ID: eventID, User: user, UserName: user,
		Text: text, Mentions: bot.ResourceMentions(text), Addressed: addressed, At: time.Now(),
	})
}

// Decide delivers an approval decision from user.
func (c *Chat) Decide(t testing.TB, d bot.Decision) {
	t.Helper()
	if d.Thread.Platform == "" {
		t.Fatal("testchat: Decision.Thread is required")
	}
	c.handler(t).HandleDecision(context.Background(), d)
}

// Post implements bot.Adapter.
func (c *Chat) Post(_ context.Context, th bot.ThreadRef, r bot.Reply) (bot.MessageRef, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.posts = append(c.posts, Posted{Thread: th, Reply: r})
	return bot.MessageRef{ThreadRef: th, ID: fmt.Sprint(c.seq.Add(1))}, nil
}

// PostApproval implements bot.Adapter.
func (c *Chat) PostApproval(_ context.Context, th bot.ThreadRef, card bot.ApprovalCard) (bot.MessageRef, error) {
	c.mu.Lock()
	c.cards[card.ID] = card
	c.posts = append(c.posts, Posted{Thread: th, Card: &card})
	hook := c.OnCard
	c.mu.Unlock()
	if hook != nil {
		hook(card)
	}
	return bot.MessageRef{ThreadRef: th, ID: "card-" + card.ID}, nil
}

// UpdateApproval implements bot.Adapter.
func (c *Chat) UpdateApproval(_ context.Context, ref bot.MessageRef, card bot.ApprovalCard) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cards[card.ID] = card
	c.posts = append(c.posts, Posted{Thread: ref.ThreadRef, Card: &card})
	return nil
}

// NotifyUser implements bot.Notifier.
func (c *Chat) NotifyUser(_ context.Context, th bot.ThreadRef, user, text string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.notes = append(c.notes, Posted{Thread: th, User: user, Reply: bot.Reply{Kind: bot.ReplyNotice, Text: text}})
	return nil
}

// SetApprovers replaces the users the platform calls approvers in a
// channel, while the bot runs (a power level taken away).
func (c *Chat) SetApprovers(channel string, users ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.Approvers == nil {
		c.Approvers = map[string][]string{}
	}
	c.Approvers[channel] = users
}

// UserFacts implements bot.FactSource.
func (c *Chat) UserFacts(_ context.Context, th bot.ThreadRef, user string) (bot.UserFacts, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	source := ""
	if len(c.Approvers[th.Channel]) > 0 {
		source = "the channel's platform approvers"
	}
	for _, u := range c.Approvers[th.Channel] {
		if u == user {
			return bot.UserFacts{IsApprover: true, ApproverSource: source}, nil
		}
	}
	return bot.UserFacts{ApproverSource: source}, nil
}

// Posts returns everything posted in a thread, in order.
func (c *Chat) Posts(th bot.ThreadRef) []Posted {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Posted
	for _, p := range c.posts {
		if p.Thread.Key() == th.Key() {
			out = append(out, p)
		}
	}
	return out
}

// Notes returns the messages sent to one user.
func (c *Chat) Notes(user string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, n := range c.notes {
		if n.User == user {
			out = append(out, n.Reply.Text)
		}
	}
	return out
}

// Card returns an approval card's latest state.
func (c *Chat) Card(id string) (bot.ApprovalCard, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	card, ok := c.cards[id]
	return card, ok
}

// Transcript renders a thread as text, for assertions and failure output.
func (c *Chat) Transcript(th bot.ThreadRef) string {
	var b strings.Builder
	for _, p := range c.Posts(th) {
		switch {
		case p.Card != nil:
			fmt.Fprintf(&b, "[card %s %s] %s on %s\n", p.Card.ID, p.Card.Status, p.Card.Command, p.Card.Target)
		case p.Reply.Trace != nil:
			tr := p.Reply.Trace
			fmt.Fprintf(&b, "[trace %s] %s %s %s: %s %s\n", tr.Outcome, tr.Tool, tr.Action, tr.Target, tr.Command, tr.Code)
		default:
			fmt.Fprintf(&b, "[%s] %s\n", p.Reply.Kind, p.Reply.Text)
		}
	}
	return b.String()
}

// WaitCard waits for the first pending approval card in a thread.
func (c *Chat) WaitCard(t testing.TB, th bot.ThreadRef, timeout time.Duration) bot.ApprovalCard {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		for _, p := range c.Posts(th) {
			if p.Card != nil && p.Card.Status == bot.ApprovalPending {
				return *p.Card
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("testchat: no approval card within %s; thread:\n%s", timeout, c.Transcript(th))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// WaitText waits until a reply containing want appears in the thread.
func (c *Chat) WaitText(t testing.TB, th bot.ThreadRef, want string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if strings.Contains(c.Transcript(th), want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("testchat: %q did not appear within %s; thread:\n%s", want, timeout, c.Transcript(th))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Package bot is the hub between chat adapters and the agent. It owns
// conversations (thread ↔ session, one run per thread, queueing), maps users
// to roles, resolves resource mentions, turns agent events into threaded
// replies and approval cards, and takes approval decisions from any adapter.
//
// The bot never imports a chat platform's package: adapters implement the
// small interfaces defined here.
//
// How a run is driven. HandleMessage answers at once and queues a job on
// the message's thread: one job at a time per thread, in arrival order,
// with a bound on jobs in progress per replica. The job takes the thread's
// lock in the shared store and renews it while it works, loads the
// session, decides the requester's role from the channel's policy, and
// calls the Runner (the agent) with the job's context and an
// agent.RunEnv built for that run: a sink that turns the run's events
// into threaded replies, traces and audit records, and a checkpoint that
// saves the session only while the lock is still held. Nothing of a run
// travels in a context value; the context only says when to stop. It
// ends when someone allowed to says "stop" (policy.MayStop), when the
// lock is lost (the run stops before its next side effect and nothing
// more of it is saved), or when Run's context ends (the run is left at its
// last checkpoint, to be continued elsewhere). A run that stops at a write
// becomes an approval and a card; a decision on any replica queues a
// resume job on the thread. The sweeper expires lapsed approvals,
// continues runs whose replica died from their checkpoint, and settles
// approvals left executing.
package bot

import (
	"context"
	"time"

	"github.com/vigilops/vigil/agent"
)

// Platform names a chat platform: "console", "slack", "matrix", or a test
// adapter's name.
type Platform string

// ThreadRef identifies a conversation on a platform. Thread is the root of
// the conversation (Slack thread_ts, Matrix m.thread root event ID, a fixed
// value on the console).
type ThreadRef struct {
	Platform Platform `json:"platform"`
	Channel  string   `json:"channel"`
	Thread   string   `json:"thread"`
}

// Key is the stable string form used for sessions, locks and dedup.
func (t ThreadRef) Key() string { return string(t.Platform) + ":" + t.Channel + ":" + t.Thread }

// ChannelKey is the key channel policy is configured under, e.g.
// "slack:C123" or "matrix:!room:example.org". The console's is "console".
func (t ThreadRef) ChannelKey() string {
	if t.Platform == "console" {
		return "console"
	}
	return string(t.Platform) + ":" + t.Channel
}

// MessageRef points at a message the bot posted, so it can be updated.
type MessageRef struct {
	ThreadRef
	// ID is the platform's message ID (Slack ts, Matrix event ID).
	ID string `json:"id"`
}

// Mention is an infrastructure resource a user named with @name.
type Mention struct {
	// Name is the mention without the leading @.
	Name string `json:"name"`
}

// Message is one inbound chat message, normalised by an adapter.
type Message struct {
	// EventID is the platform's unique ID for this delivery's event, used to
	// drop duplicates (Slack event_id, Matrix event ID).
	EventID string
	Thread  ThreadRef
	// ID is the message's own platform ID.
	ID string
	// User is the platform user ID of the author; UserName is for display.
	User     string
	UserName string
	// Text has the bot mention stripped.
	Text     string
	Mentions []Mention
	// Addressed is true when the message speaks to the bot (a mention, a DM,
	// a reply in a thread the bot is part of, every console line).
	Addressed bool
	At        time.Time
}

// Decision is an approval click or command from a person.
type Decision struct {
	// EventID deduplicates redelivered clicks; may be empty.
	EventID    string
	ApprovalID string
	// Token is the approval's secret when the platform carries it (a button
	// value); empty for typed commands such as "approve <id>". A non-empty
	// token must match.
	Token string
	// FromButton marks a click on a card's button. A click must carry the
	// approval's token: one without is forged, refused and audited. Typed
	// commands ("approve <id>", Matrix's "!approve <id>") and Matrix
	// reactions carry none by design; the platform's signed sender is the
	// proof of who decided.
	FromButton bool
	Approve    bool
	// Reason explains a denial.
	Reason   string
	User     string
	UserName string
	// Thread is where the decision was made.
	Thread ThreadRef
	At     time.Time
}

// Feedback is a person's rating of an answer: a 👍/👎 button on Slack, a
// reaction on Matrix, "good"/"bad" in the console.
type Feedback struct {
	// EventID deduplicates redelivered events; may be empty.
	EventID string
	Thread  ThreadRef
	// RunID names the run whose answer is rated (the Reply's RunID); ""
	// means the thread's latest answer.
	RunID    string
	Rating   agent.Rating
	User     string
	UserName string
	At       time.Time
}

// FeedbackHandler is the optional part of a Handler that takes feedback
// on answers. The bot implements it; adapters find it by type assertion.
type FeedbackHandler interface {
	HandleFeedback(ctx context.Context, f Feedback)
}

// Handler receives inbound traffic from an adapter. Adapters call it from
// their own goroutines; the bot acknowledges quickly and works in the
// background.
type Handler interface {
	HandleMessage(ctx context.Context, m Message)
	HandleDecision(ctx context.Context, d Decision)
}

// Adapter is one chat platform. Start runs until ctx is cancelled,
// delivering inbound messages and decisions to h.
type Adapter interface {
	Platform() Platform
	Start(ctx context.Context, h Handler) error
	// Post sends a reply in the thread and returns its reference.
	Post(ctx context.Context, t ThreadRef, r Reply) (MessageRef, error)
	// PostApproval sends an approval card in the thread.
	PostApproval(ctx context.Context, t ThreadRef, c ApprovalCard) (MessageRef, error)
	// UpdateApproval rewrites a card after a decision or expiry.
	UpdateApproval(ctx context.Context, ref MessageRef, c ApprovalCard) error
}

// StatusSetter is an optional power: show "investigating…" (Slack assistant
// status, typing notifications). An empty status clears it.
type StatusSetter interface {
	SetStatus(ctx context.Context, t ThreadRef, status string) error
}

// ThreadOpener is an optional power: start a new conversation in a
// channel (a top-level message whose thread is the conversation: Slack
// chat.postMessage without thread_ts, a Matrix room message that becomes
// the thread root), and edit a message so posted. Alert intake needs it:
// each alert group gets its own thread whose first message shows the
// group's current state.
type ThreadOpener interface {
	// OpenThread posts r as a new top-level message in channel; the
	// returned reference's ThreadRef is the new thread and its ID the
	// message.
	OpenThread(ctx context.Context, channel string, r Reply) (MessageRef, error)
	// EditMessage replaces the text (and links) of a message the bot
	// posted.
	EditMessage(ctx context.Context, ref MessageRef, r Reply) error
}

// Notifier is an optional power: a message only one user sees (Slack
// ephemeral messages). Adapters without it get a normal threaded reply.
type Notifier interface {
	NotifyUser(ctx context.Context, t ThreadRef, user, text string) error
}

// NameSource is an optional power: a user's display name. A message
// whose UserName is empty gets it here when its job starts, so an adapter
// need not look names up while the platform waits for its
// acknowledgement. "" when unknown.
type NameSource interface {
	UserName(ctx context.Context, t ThreadRef, user string) string
}

// FactSource is an optional power: facts about a user that decide their role
// in a channel beyond the config lists (Slack user groups, Matrix power
// levels).
type FactSource interface {
	UserFacts(ctx context.Context, t ThreadRef, user string) (UserFacts, error)
}

// UserFacts are what a platform knows about a user in a channel.
type UserFacts struct {
	// Groups are platform groups the user belongs to, written the way the
	// config names them (e.g. "usergroup:S123").
	Groups []string
	// PowerLevel is the user's Matrix power level in the room, if known.
	PowerLevel *int
	// IsApprover is set by platforms whose own permission model makes the
	// user an approver (a Matrix power level at or above the threshold).
	IsApprover bool
	// ApproverSource says whom the platform's permissions make approvers
	// in the channel ("room members with power level 50 or more"), for
	// messages naming who holds a role; "" when it has no such source.
	ApproverSource string
}

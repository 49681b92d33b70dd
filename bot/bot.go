package bot

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/policy/audit"
)

// Runner is what the bot needs of the agent (agent.Agent implements it).
// The bot calls Start, Resume or Continue from a job that holds the
// thread's lock, with the job's context and an agent.RunEnv built for that
// one run: a Sink that turns events into replies, and a Checkpoint that
// saves the session only while the lock is still held. Abandon ends a run
// no job is working on (one waiting on an approval, or one left by a
// replica that died) without a model call.
type Runner interface {
	Start(ctx context.Context, s *agent.Session, in agent.Input, env agent.RunEnv) (agent.Outcome, error)
	Resume(ctx context.Context, s *agent.Session, d agent.Decision, env agent.RunEnv) (agent.Outcome, error)
	Continue(ctx context.Context, s *agent.Session, env agent.RunEnv) (agent.Outcome, error)
	Abandon(s *agent.Session, reason string)
}

// Resolver turns a resource mention into an inventory resource and its
// routing chain (the resource first, then its parents).
type Resolver interface {
	ResolveMention(name string) (chain []policy.Resource, ok bool)
}

// Observer receives metrics-worthy happenings. All methods must be cheap.
type Observer interface {
	Observe(e agent.Event)
	ApprovalOutcome(outcome string)
	ChatEvent(platform, result string)
}

// AuditSink is an extra place audit records go, written before and
// whatever the store does (the audit file, which chains them itself).
type AuditSink interface {
	Write(r audit.Record) error
}

// Options builds a Bot. Agent, Stores and Channels are required.
type Options struct {
	Agent    Runner
	Stores   Stores
	Channels *Channels
	Resolver Resolver
	// Runbooks, when set, offers matching runbooks with each question and
	// drafts runbooks from answers rated good (feedback.go).
	Runbooks Runbooks
	// ApprovalTTL is how long an approval stays open (default 10m).
	ApprovalTTL time.Duration
	// AuditFile, when set, receives every audit record too.
	AuditFile AuditSink
	// AuditOutbox keeps audit records the store could not take until it
	// can (auditoutbox.go); nil means one in memory only.
	AuditOutbox *audit.Spool
	// AuditRetry is the first wait before sending waiting audit records
	// again (default 1s; it doubles up to 30s while the store is away).
	AuditRetry time.Duration
	Observer   Observer
	Logger     *slog.Logger
	// Clock is the time the bot reads and its timers (default the
	// system's).
	Clock Clock
	// MaxConcurrentRuns bounds runs in progress on this replica (default 32).
	MaxConcurrentRuns int
	// LockTTL is how long a thread lock lives without renewal (default 2m).
	LockTTL time.Duration
	// DedupTTL is how long an event ID is remembered (default 1h).
	DedupTTL time.Duration
	// SweepEvery is how often expired approvals are looked for (default 15s).
	SweepEvery time.Duration
	// UserRateLimit is how many messages one person may send in one channel
	// per minute, across replicas (0: no limit).
	UserRateLimit int
	// AlertDebounce is how long a new alert group settles before its
	// investigation starts (0: at once).
	AlertDebounce time.Duration
	// AlertSweep runs the sweep that starts due alert investigations no
	// live replica scheduled (see sweepAlerts); set when alert intake is
	// enabled.
	AlertSweep bool
	// MaxConcurrentInvestigations bounds alert-started runs on this
	// replica (default 4); the rest queue.
	MaxConcurrentInvestigations int
	// Identities maps people to the identities calls use on targets: a
	// run's reads act as the person who asked, an approved change as the
	// approver (policy.Identities). Nil or empty: vigil's own credentials.
	Identities *policy.Identities
}

// Bot connects adapters to the agent. Create it with New, register adapters,
// then call Run. It is the front door: each event goes to the feature
// handler that owns it (conversation, approvals, alerts, feedback), and
// every handler does its work on threads through one runtime.
type Bot struct {
	rt        *runtime
	conv      *conversation
	approvals *approvals
	alerts    *alerts
	feedback  *feedbacks
	settler   *settler
	audits    *auditor
}

// New checks the options and builds a bot.
func New(o Options) (*Bot, error) {
	switch {
	case o.Agent == nil:
		return nil, errors.New("bot: Options.Agent is required")
	case o.Stores.Sessions == nil || o.Stores.Approvals == nil || o.Stores.Audit == nil ||
		o.Stores.Dedup == nil || o.Stores.Locks == nil:
		return nil, errors.New("bot: Options.Stores must have every store set")
	case o.Channels == nil:
		return nil, errors.New("bot: Options.Channels is required")
	}
	if o.ApprovalTTL <= 0 {
		o.ApprovalTTL = 10 * time.Minute
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Clock == nil {
		o.Clock = SystemClock{}
	}
	if o.MaxConcurrentRuns <= 0 {
		o.MaxConcurrentRuns = 32
	}
	if o.LockTTL <= 0 {
		o.LockTTL = 2 * time.Minute
	}
	if o.DedupTTL <= 0 {
		o.DedupTTL = time.Hour
	}
	if o.SweepEvery <= 0 {
		o.SweepEvery = 15 * time.Second
	}
	if o.MaxConcurrentInvestigations <= 0 {
		o.MaxConcurrentInvestigations = 4
	}
	if o.AuditRetry <= 0 {
		o.AuditRetry = defaultAuditRetry
	}
	rt := &runtime{
		opt:      o,
		log:      o.Logger,
		now:      o.Clock.Now,
		clock:    o.Clock,
		sem:      make(chan struct{}, o.MaxConcurrentRuns),
		adapters: map[Platform]Adapter{},
		threads:  map[string]*thread{},
	}
	rt.idle = sync.NewCond(&rt.mu)
	b := &Bot{
		rt:        rt,
		approvals: &approvals{runtime: rt},
		alerts:    &alerts{runtime: rt, sem: make(chan struct{}, o.MaxConcurrentInvestigations)},
		feedback:  &feedbacks{runtime: rt},
		settler:   &settler{runtime: rt},
		audits:    &auditor{runtime: rt, outbox: newAuditOutbox(o.AuditOutbox)},
	}
	b.conv = &conversation{runtime: rt, pending: b.approvals}
	b.audits.settle = b.settler
	b.approvals.runbooks = b.feedback
	b.feedback.cards, b.settler.cards, b.settler.backlog = b.approvals, b.approvals, b.audits
	rt.approvals, rt.audits = b.approvals, b.audits
	return b, nil
}

// Register adds an adapter. Two adapters for one platform are a wiring bug.
func (b *Bot) Register(a Adapter) error {
	if _, dup := b.rt.adapters[a.Platform()]; dup {
		return fmt.Errorf("bot: adapter for %q registered twice", a.Platform())
	}
	b.rt.adapters[a.Platform()] = a
	return nil
}

// Run starts every adapter and the approval sweeper. It returns when every
// adapter has returned (the console at end of input) or one failed, or ctx
// is cancelled. Jobs queued meanwhile outlive the return (WaitIdle waits
// for them) but not ctx: when ctx ends, every job in progress is
// cancelled, and its run left at its last checkpoint for another replica.
func (b *Bot) Run(ctx context.Context) error {
	if len(b.rt.adapters) == 0 {
		return errors.New("bot: no chat adapter is enabled")
	}
	b.rt.mu.Lock()
	b.rt.runDone = ctx.Done()
	b.rt.mu.Unlock()
	context.AfterFunc(ctx, b.rt.shutdown)
	g, gctx := errgroup.WithContext(ctx)
	sweepCtx, stopSweep := context.WithCancel(gctx)
	defer stopSweep()
	go b.sweep(sweepCtx)
	if b.rt.opt.AlertSweep {
		go b.alerts.sweepAlerts(sweepCtx, alertSweepEvery(b.rt.opt.AlertDebounce))
	}
	b.audits.outbox.done = make(chan struct{})
	deliverCtx, stopDelivery := context.WithCancel(ctx)
	go b.audits.deliverAudit(deliverCtx)
	defer func() { stopDelivery(); <-b.audits.outbox.done }()
	for _, a := range b.rt.adapters {
		g.Go(func() error {
			if err := a.Start(gctx, b); err != nil && gctx.Err() == nil {
				return fmt.Errorf("%s adapter: %w", a.Platform(), err)
			}
			return nil
		})
	}
	return g.Wait()
}

// WaitIdle blocks until no work is queued or running on this replica, or ctx
// ends. A run stopped at a pending approval is idle.
func (b *Bot) WaitIdle(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		b.rt.mu.Lock()
		for (b.rt.active > 0 || b.rt.aside > 0) && ctx.Err() == nil {
			b.rt.idle.Wait()
		}
		b.rt.mu.Unlock()
		close(done)
	}()
	select {
	case <-done:
		return ctx.Err()
	case <-ctx.Done():
		b.rt.mu.Lock()
		b.rt.idle.Broadcast()
		b.rt.mu.Unlock()
		<-done
		return ctx.Err()
	}
}

func randRead(b []byte) (int, error) { return rand.Read(b) }

// newErrorID returns a short ID that ties a message in chat to a log line.
func newErrorID() string {
	var buf [4]byte
	_, _ = rand.Read(buf[:])
	return "E" + hex.EncodeToString(buf[:])
}

// HandleMessage implements Handler. It returns at once; the work happens on
// the thread's queue.
func (b *Bot) HandleMessage(ctx context.Context, m Message) { b.conv.HandleMessage(ctx, m) }

// HandleDecision implements Handler: an approval's button or reply.
func (b *Bot) HandleDecision(ctx context.Context, d Decision) { b.approvals.HandleDecision(ctx, d) }

// HandleFeedback implements Handler: a rating of an answer.
func (b *Bot) HandleFeedback(ctx context.Context, f Feedback) { b.feedback.HandleFeedback(ctx, f) }

// DeliverAlert implements AlertIntake: it opens or updates the group's
// thread. It returns an error only when the notification could not be
// taken (store or chat unavailable), so the source sends it again.
func (b *Bot) DeliverAlert(ctx context.Context, n AlertNotification, r AlertRoute) error {
	return b.alerts.DeliverAlert(ctx, n, r)
}

// SweepOnce expires every pending approval past its expiry. Exported so
// tests and operators' tooling can drive expiry without waiting for the
// ticker.
func (b *Bot) SweepOnce(ctx context.Context) { b.approvals.SweepOnce(ctx) }

// SweepAlertsOnce starts every due, unclaimed investigation not already
// scheduled on this replica. Exported so tests and tooling can drive it
// without waiting for the ticker.
func (b *Bot) SweepAlertsOnce(ctx context.Context) { b.alerts.SweepAlertsOnce(ctx) }

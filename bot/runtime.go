package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/policy/audit"
	"github.com/vigilops/vigil/policy/redact"
	"github.com/vigilops/vigil/tools"
)

// runtime is what every feature handler works through: the per-thread
// queue (enqueue, work), one lock helper (lockThread, keepLock), session
// load and save, the run environment (runEnv, newSink), one way to start
// a run (startRun) and to finish one (afterRun), and replies (say, tell).
// Handlers own the rest; they reach each other only through the small
// interfaces below.
type runtime struct {
	opt      Options
	log      *slog.Logger
	now      func() time.Time
	clock    Clock
	sem      chan struct{}
	adapters map[Platform]Adapter

	mu      sync.Mutex
	threads map[string]*thread
	idle    *sync.Cond
	// active counts jobs queued or running (and investigations waiting
	// for a slot); running those running.
	active  int
	running int
	// aside counts work done beside the queues (later): no run, but
	// WaitIdle waits for it.
	aside int
	load  load
	// closed is set once Run's context has ended: every job in progress
	// was cancelled then (shutdown), and jobs started later begin
	// cancelled.
	closed bool
	// runDone is Run's context's Done channel.
	runDone <-chan struct{}

	// approvals creates the approval a run stopped at (afterRun).
	approvals approvalRequester
	// audits chains audit records.
	audits auditWriter
}

// approvalRequester creates an approval and posts its card.
type approvalRequester interface {
	requestApproval(ctx context.Context, t ThreadRef, s *agent.Session, need *agent.ApprovalNeeded) error
}

// auditWriter chains an audit record, keeping it until the store takes it.
type auditWriter interface {
	audit(ctx context.Context, r audit.Record)
}

// pendingAbandoner ends a run waiting on an approval at a person's "stop".
type pendingAbandoner interface {
	abandonPending(ctx context.Context, t ThreadRef, s *agent.Session, user string, roles policy.RoleSet, cp policy.ChannelPolicy)
}

// runbookResumer carries out a decided runbook draft, which no run waits on.
type runbookResumer interface {
	resumeRunbook(ctx context.Context, t ThreadRef, rj *resumeJob)
}

// approvalCards is the approval machinery a draft runbook's approval and a
// settlement share with a run's approvals.
type approvalCards interface {
	rememberCard(ctx context.Context, id string, posted MessageRef)
	claimExecution(ctx context.Context, t ThreadRef, id string, p tools.Proposal, args string, cp policy.ChannelPolicy) error
	updateCard(ctx context.Context, a *policy.Approval)
}

// auditBacklog says how many audit records still wait for the store.
type auditBacklog interface {
	waiting() int
}

// executingSettler closes approvals left executing by a run that stopped.
type executingSettler interface {
	settleExecuting(ctx context.Context)
}

// The feature handlers. Each does its work on threads through the runtime.
type (
	// conversation answers people's messages (thread.go, prefetch.go).
	conversation struct {
		*runtime
		pending pendingAbandoner
	}
	// approvals asks for, decides, resumes and expires approvals
	// (approvals.go).
	approvals struct {
		*runtime
		runbooks runbookResumer
	}
	// feedbacks records ratings of answers and drafts runbooks from them
	// (feedback.go).
	feedbacks struct {
		*runtime
		cards approvalCards
	}
	// settler closes approvals whose run stopped mid-execution (settle.go).
	settler struct {
		*runtime
		cards   approvalCards
		backlog auditBacklog
	}
	// alerts turns alert notifications into threads and investigations
	// (alerts.go): sem bounds investigations in progress, scheduled holds
	// the groups whose investigation this replica has scheduled, with
	// when each is due as far as this replica knows (under the runtime's
	// mu).
	alerts struct {
		*runtime
		sem       chan struct{}
		scheduled map[string]time.Time
	}
	// auditor chains audit records through an outbox (auditoutbox.go).
	auditor struct {
		*runtime
		outbox *auditOutbox
		settle executingSettler
	}
)

// shutdown cancels every job in progress and makes later ones start
// cancelled: Run's context has ended.
func (b *runtime) shutdown() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for _, th := range b.threads {
		if th.cancel != nil {
			th.cancel()
		}
	}
}

// stopping reports whether the bot is shutting down. Work cut short by a
// shutdown is not saved as finished: the last checkpoint stays, and
// another replica (or this one, restarted) continues the run.
func (b *runtime) stopping() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return true
	}
	select {
	case <-b.runDone: // ended; shutdown may not have run yet
		return true
	default: // nil until Run starts
		return false
	}
}

func (b *runtime) adapter(p Platform) (Adapter, bool) {
	a, ok := b.adapters[p]
	return a, ok
}

// guard recovers a panic at a handler boundary and reports it with an ID.
func (b *runtime) guard(ctx context.Context, where string, t ThreadRef) {
	if v := recover(); v != nil {
		id := newErrorID()
		b.log.Error("panic", "where", where, "error_id", id, "thread", t.Key(), "panic", v, "stack", string(debug.Stack()))
		b.say(ctx, t, Reply{Kind: ReplyError, Text: "Something went wrong on my side; nothing further will run for this request.", ErrorID: id})
	}
}

// say posts a reply, logging (not returning) failures: there is nobody to
// return them to.
func (b *runtime) say(ctx context.Context, t ThreadRef, r Reply) {
	a, ok := b.adapter(t.Platform)
	if !ok {
		b.log.Error("no adapter for reply", "platform", t.Platform, "thread", t.Key())
		return
	}
	r.Text = redact.String(r.Text)
	if _, err := a.Post(ctx, t, r); err != nil {
		b.log.Error("post reply", "thread", t.Key(), "kind", r.Kind, "err", err)
	}
}

// tell sends a message to one user: ephemeral where the platform can, a
// threaded reply otherwise.
func (b *runtime) tell(ctx context.Context, t ThreadRef, user, text string) {
	if a, ok := b.adapter(t.Platform); ok {
		if n, ok := a.(Notifier); ok {
			if err := n.NotifyUser(ctx, t, user, text); err == nil {
				return
			} else {
				b.log.Warn("ephemeral notice failed; replying in thread", "thread", t.Key(), "err", err)
			}
		}
	}
	b.say(ctx, t, Reply{Kind: ReplyNotice, Text: text})
}

// job is one unit of work on a thread, one of the types below: the set is
// closed (run is unexported). Each job carries the handler that queued
// it, and runJob runs it with the thread locked.
type job interface {
	run(ctx context.Context, t ThreadRef, held *heldLock)
}

// messageJob is a person's message.
type messageJob struct {
	h *conversation
	m Message
}

// resumeJob resumes a run with a decided (or expired) approval.
type resumeJob struct {
	h        *approvals
	approval *policy.Approval
	decision agent.Decision
}

// orphanJob continues a run whose replica died.
type orphanJob struct{ h *conversation }

// settleJob closes the approval with this ID, left executing (settle.go).
type settleJob struct {
	h          *settler
	approvalID string
}

// feedbackJob rates an answer (feedback.go).
type feedbackJob struct {
	h *feedbacks
	f Feedback
}

func (j messageJob) run(ctx context.Context, t ThreadRef, held *heldLock) {
	if j.m.UserName == "" {
		j.m.UserName = j.h.userName(ctx, t, j.m.User)
	}
	j.h.handleMessage(ctx, t, held, j.m)
}
func (j *resumeJob) run(ctx context.Context, t ThreadRef, held *heldLock) {
	j.h.resume(ctx, t, held, j)
}
func (j orphanJob) run(ctx context.Context, t ThreadRef, held *heldLock) {
	j.h.continueOrphan(ctx, t, held)
}
func (j settleJob) run(ctx context.Context, t ThreadRef, _ *heldLock) {
	j.h.settle(ctx, t, j.approvalID)
}
func (j feedbackJob) run(ctx context.Context, t ThreadRef, _ *heldLock) {
	j.h.applyFeedback(ctx, t, j.f)
}
func (j *alertJob) run(ctx context.Context, t ThreadRef, held *heldLock) {
	j.h.investigate(ctx, t, held, j)
}

// background reports whether j is work no person waits on: it tries the
// thread's lock once and says nothing when it cannot have it.
func background(j job) bool {
	switch j.(type) {
	case orphanJob, settleJob:
		return true
	}
	return false
}

// jobRequester is the person a job serves, "" when none.
func jobRequester(j job) string {
	switch j := j.(type) {
	case messageJob:
		return j.m.User
	case *resumeJob:
		return j.approval.Requester
	}
	return ""
}

// thread serialises work on one conversation in this process (like a
// per-portal event loop): one job at a time, in arrival order.
type thread struct {
	ref     ThreadRef
	queue   []queued
	running bool
	// queued counts the jobs ever queued here: a job's number says what
	// arrived before it (a "stop" drops only the messages queued before
	// it).
	queued uint64
	// cancel stops the job in progress ("stop").
	cancel context.CancelFunc
	// requester is the user whose request the job in progress serves
	// ("" when unknown: a run continued after its replica died), and seq
	// counts jobs, so a "stop" judged for one job never cancels the next.
	requester string
	seq       uint64
}

// queued is a job waiting on its thread, with its arrival number there.
type queued struct {
	job
	n uint64
}

func (b *runtime) chatEvent(p Platform, result string) {
	if b.opt.Observer != nil {
		b.opt.Observer.ChatEvent(string(p), result)
	}
}

// enqueue adds work to a thread and starts its worker if idle. It is the
// one queue work on a thread passes through, and quick: it takes no lock
// but the process's own and does no I/O, so an adapter's acknowledgement
// may wait on it. The worker's jobs get their context from ctx without its
// cancellation (the caller may be a platform request that ends at once): a
// job ends when it is done, stopped, its lock is lost, or the bot shuts
// down (shutdown).
func (b *runtime) enqueue(ctx context.Context, t ThreadRef, j job) {
	b.mu.Lock()
	defer b.mu.Unlock()
	th, ok := b.threads[t.Key()]
	if !ok {
		th = &thread{ref: t}
		b.threads[t.Key()] = th
	}
	th.queued++
	th.queue = append(th.queue, queued{job: j, n: th.queued})
	b.active++
	b.reportLoad()
	if !th.running {
		th.running = true
		go b.work(context.WithoutCancel(ctx), th)
	}
}

// work drains a thread's queue. It holds a slot of the replica-wide
// concurrency bound for each job. Each job's context is a child of parent
// that the thread's cancel ends; once the bot is shutting down, a job
// starts cancelled.
//
// A finished job hands over to the next one (or removes the thread) in the
// same critical section that counts it done, so a "stop" always finds
// either the job in progress or no work at all, never a job that already
// ended.
func (b *runtime) work(parent context.Context, th *thread) {
	b.mu.Lock()
	for len(th.queue) > 0 {
		j := th.queue[0].job
		th.queue = th.queue[1:]
		ctx, cancel := context.WithCancel(parent)
		th.cancel = cancel
		if b.closed {
			cancel()
		}
		th.seq++
		th.requester = jobRequester(j)
		b.mu.Unlock()

		b.sem <- struct{}{}
		b.mu.Lock()
		b.running++
		b.reportLoad()
		b.mu.Unlock()
		b.runJob(ctx, th.ref, j)
		<-b.sem
		cancel()

		b.mu.Lock()
		b.running--
		b.active--
		b.reportLoad()
		b.idle.Broadcast()
	}
	th.running = false
	th.cancel = nil
	delete(b.threads, th.ref.Key())
	b.mu.Unlock()
}

// later does fn off the caller's goroutine: work an adapter's
// acknowledgement must not wait for (a reply, a platform lookup). WaitIdle
// waits for it (it is no run, so the load gauges leave it out), and a panic in it is reported like one in a job. fn's context keeps
// ctx's values, not its cancellation.
func (b *runtime) later(ctx context.Context, t ThreadRef, where string, fn func(ctx context.Context)) {
	b.mu.Lock()
	b.aside++
	b.mu.Unlock()
	ctx = context.WithoutCancel(ctx)
	go func() {
		defer func() {
			b.mu.Lock()
			b.aside--
			b.idle.Broadcast()
			b.mu.Unlock()
		}()
		defer b.guard(ctx, where, t)
		fn(ctx)
	}()
}

// runJob does one job with the thread locked across replicas. The lock is
// passed down to whatever the job runs: the run's checkpoints renew it and
// refuse to save once it is lost (runEnv), and afterRun does not save over
// a thread another replica owns.
func (b *runtime) runJob(ctx context.Context, t ThreadRef, j job) {
	defer b.guard(ctx, "run", t)
	if aj, ok := j.(*alertJob); ok {
		// A job that never runs still gives its slot back.
		defer aj.release()
	}
	quiet := background(j)
	_, loads := j.(messageJob)
	lock, pre, err := b.lockThread(ctx, t, !quiet, loads)
	if err != nil {
		if ctx.Err() != nil || quiet {
			return
		}
		id := newErrorID()
		b.log.Error("lock thread", "error_id", id, "thread", t.Key(), "err", err)
		b.say(ctx, t, Reply{Kind: ReplyError, ErrorID: id,
			Text: "I could not take this conversation's lock (state store unavailable or busy), so nothing ran. Please try again."})
		return
	}
	held := &heldLock{l: lock, pre: pre}
	defer func() {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := lock.Unlock(uctx); err != nil && !held.lost.Load() {
			b.log.Warn("unlock thread", "thread", t.Key(), "err", err)
		}
	}()
	stopRenew := b.keepLock(ctx, t, held)
	defer stopRenew()

	j.run(ctx, t, held)
}

// heldLock is the thread lock a job holds; lost is set once a renewal
// fails, after which nothing of the job may be saved.
type heldLock struct {
	l    Lock
	lost atomic.Bool
	// pre is the session loaded with the lock (SessionLocker), for the
	// job's first heldSession; nil when none was loaded.
	pre *preloaded
}

// preloaded is a session loaded with the thread's lock; s is nil when none
// was saved.
type preloaded struct{ s *agent.Session }

// heldSession returns the thread's session, or a new one: the one loaded
// with the lock the first time, else from the store.
func (b *runtime) heldSession(ctx context.Context, t ThreadRef, held *heldLock) (*agent.Session, error) {
	if p := held.pre; p != nil {
		held.pre = nil
		if p.s == nil {
			return b.newSession(t), nil
		}
		return p.s, nil
	}
	return b.loadSession(ctx, t)
}

// runEnv is the plumbing of one run under the lock h: its events go to k,
// and its checkpoints save the session after making sure this replica
// still holds the thread, so a run that lost its lock stops before its
// next side effect.
func (b *runtime) runEnv(k *sink, h *heldLock) agent.RunEnv {
	return agent.RunEnv{
		Sink: k,
		Checkpoint: func(ctx context.Context, s *agent.Session) error {
			return b.saveHeld(ctx, h, s)
		},
	}
}

// saveHeld saves the session of a thread whose lock h this replica holds,
// renewing the lock first: a replica that lost the thread saves nothing.
// A FencedLock does both in one atomic step; any failure counts as the
// lock lost, as a failed renewal does.
func (b *runtime) saveHeld(ctx context.Context, h *heldLock, s *agent.Session) error {
	if h.lost.Load() {
		return ErrLocked
	}
	if fl, ok := h.l.(FencedLock); ok {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := fl.RenewAndSave(sctx, s); err != nil {
			h.lost.Store(true)
			return fmt.Errorf("save session %s under the thread lock: %w", s.Key, err)
		}
		return nil
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	err := h.l.Renew(rctx)
	cancel()
	if err != nil {
		h.lost.Store(true)
		return fmt.Errorf("renew thread lock: %w", err)
	}
	return b.saveSession(ctx, s)
}

// lockThread takes the thread's lock, waiting while another replica holds it
// (or trying once, when wait is false). With load, and a store that can,
// the thread's session is loaded in the same step.
func (b *runtime) lockThread(ctx context.Context, t ThreadRef, wait, load bool) (Lock, *preloaded, error) {
	patience := time.Duration(0)
	if wait {
		patience = b.opt.LockTTL + 30*time.Second
	}
	sessionKey := ""
	if load {
		sessionKey = t.Key()
	}
	return b.lockLoad(ctx, "thread:"+t.Key(), b.opt.LockTTL, patience, sessionKey)
}

// lock takes the lock on key for ttl, waiting up to patience while another
// replica holds it (trying once when patience is 0). It is the one way the
// bot takes a lock: a thread's (lockThread) or an alert group's.
func (b *runtime) lock(ctx context.Context, key string, ttl, patience time.Duration) (Lock, error) {
	l, _, err := b.lockLoad(ctx, key, ttl, patience, "")
	return l, err
}

// lockLoad is lock that also loads the session under sessionKey with the
// lock when it is set and the store is a SessionLocker.
func (b *runtime) lockLoad(ctx context.Context, key string, ttl, patience time.Duration, sessionKey string) (Lock, *preloaded, error) {
	sl, canLoad := b.opt.Stores.Locks.(SessionLocker)
	deadline := b.now().Add(patience)
	pause := 20 * time.Millisecond
	for {
		lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		var l Lock
		var pre *preloaded
		var err error
		if sessionKey != "" && canLoad {
			var s *agent.Session
			if l, s, err = sl.LockAndLoad(lctx, key, ttl, sessionKey); err == nil {
				pre = &preloaded{s: s}
			}
		} else {
			l, err = b.opt.Stores.Locks.Lock(lctx, key, ttl)
		}
		cancel()
		if err == nil {
			return l, pre, nil
		}
		if patience <= 0 || !errors.Is(err, ErrLocked) || b.now().After(deadline) {
			return nil, nil, err
		}
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(pause):
		}
		if pause < time.Second {
			pause *= 2
		}
	}
}

// keepLock renews the lock while a job runs. Losing it cancels the job, so
// the run stops before its next side effect. A timer does the renewals, so
// a run waiting on its model holds no goroutine for its lock.
func (b *runtime) keepLock(ctx context.Context, t ThreadRef, h *heldLock) func() {
	ctx, cancel := context.WithCancel(ctx)
	every := b.opt.LockTTL / 3
	var (
		mu       sync.Mutex
		stopped  bool
		timer    *time.Timer
		renewing sync.WaitGroup
	)
	renew := func() {
		mu.Lock()
		if stopped {
			mu.Unlock()
			return
		}
		renewing.Add(1)
		mu.Unlock()
		defer renewing.Done()
		rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
		err := h.l.Renew(rctx)
		rcancel()
		if err != nil {
			if ctx.Err() == nil {
				h.lost.Store(true)
				b.log.Error("thread lock lost; stopping the run", "thread", t.Key(), "err", err)
				b.cancelThread(t)
			}
			return
		}
		mu.Lock()
		if !stopped {
			timer.Reset(every)
		}
		mu.Unlock()
	}
	mu.Lock()
	timer = time.AfterFunc(every, renew)
	mu.Unlock()
	return func() {
		mu.Lock()
		stopped = true
		timer.Stop()
		mu.Unlock()
		cancel()
		renewing.Wait()
	}
}

func (b *runtime) cancelThread(t ThreadRef) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if th, ok := b.threads[t.Key()]; ok && th.cancel != nil {
		th.cancel()
	}
}

// loadSession returns the thread's session, or a new one.
func (b *runtime) loadSession(ctx context.Context, t ThreadRef) (*agent.Session, error) {
	s, err := b.opt.Stores.Sessions.LoadSession(ctx, t.Key())
	if errors.Is(err, ErrNotFound) {
		return b.newSession(t), nil
	}
	if err != nil {
		return nil, fmt.Errorf("load session %s: %w", t.Key(), err)
	}
	return s, nil
}

// newSession is the session of a thread that has none yet.
func (b *runtime) newSession(t ThreadRef) *agent.Session {
	return &agent.Session{Key: t.Key(), Policy: policy.NewSessionState(), CreatedAt: b.now()}
}

func (b *runtime) saveSession(ctx context.Context, s *agent.Session) error {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := b.opt.Stores.Sessions.SaveSession(sctx, s); err != nil {
		return fmt.Errorf("save session %s: %w", s.Key, err)
	}
	return nil
}

// storeFailure tells the thread that state could not be read or written.
func (b *runtime) storeFailure(ctx context.Context, t ThreadRef, err error) {
	id := newErrorID()
	b.log.Error("state store", "error_id", id, "thread", t.Key(), "err", err)
	b.say(ctx, t, Reply{Kind: ReplyError, ErrorID: id,
		Text: "I cannot reach my state store right now, so I stopped here. Nothing was lost; please try again shortly."})
}

// userName asks the thread's adapter for a user's display name (""
// when it cannot say).
func (b *runtime) userName(ctx context.Context, t ThreadRef, user string) string {
	a, ok := b.adapter(t.Platform)
	if !ok || user == "" {
		return ""
	}
	ns, ok := a.(NameSource)
	if !ok {
		return ""
	}
	nctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return ns.UserName(nctx, t, user)
}

// subject gathers what the bot knows about a user in a channel.
func (b *runtime) subject(ctx context.Context, t ThreadRef, user string) policy.Subject {
	s := policy.Subject{User: user, Local: t.Platform == "console"}
	a, ok := b.adapter(t.Platform)
	if !ok {
		return s
	}
	fs, ok := a.(FactSource)
	if !ok {
		return s
	}
	fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	facts, err := fs.UserFacts(fctx, t, user)
	if err != nil {
		b.log.Warn("user facts unavailable; using config roles only", "thread", t.Key(), "user", user, "err", err)
		return s
	}
	s.Groups = facts.Groups
	s.PlatformApprover = facts.IsApprover
	s.PlatformApprovers = facts.ApproverSource
	s.PowerLevel = facts.PowerLevel
	return s
}

// startRun is the one way a run starts, for a person's message or an
// alert: the run is indexed as active, the thread shows a status while it
// works, its events go to a sink of the thread (onFirstPost, when set,
// runs before its first message), and afterRun saves what it left.
func (b *runtime) startRun(ctx context.Context, t ThreadRef, held *heldLock, s *agent.Session, in agent.Input, onFirstPost func()) {
	b.markActive(ctx, t)
	clear := b.showStatus(ctx, t, "investigating…")
	k := b.newSink(t, s)
	k.onFirstPost = onFirstPost
	out, err := b.opt.Agent.Start(ctx, s, in, b.runEnv(k, held))
	clear()
	b.afterRun(ctx, t, held, s, out, err)
}

// requesterRole decides again how the role gate sees a run's requester,
// from the channel's policy now: a role taken away since the run started
// counts before its next change. A run no person started keeps its role.
func (b *runtime) requesterRole(ctx context.Context, t ThreadRef, r *agent.RunState) policy.Requester {
	if r.Role.System {
		// Its role stays; its scope is the channel's now.
		role := r.Role
		if cp, ok := b.opt.Channels.Lookup(r.Channel); ok {
			role.Scope = cp.Scope
		} else {
			role.Scope = &policy.Scope{Channel: r.Channel}
		}
		return role
	}
	cp, ok := b.opt.Channels.Lookup(r.Channel)
	if !ok {
		// No channel: nothing is in scope (the role gate refuses writes).
		return policy.Requester{User: r.Requester, Scope: &policy.Scope{Channel: r.Channel}}
	}
	return cp.Requester(b.subject(ctx, t, r.Requester))
}

func newRunID() string {
	var buf [6]byte
	_, _ = randRead(buf[:])
	return "run-" + fmt.Sprintf("%x", buf)
}

// afterRun persists the session and, when the run stopped at a write,
// creates the approval and posts its card.
func (b *runtime) afterRun(ctx context.Context, t ThreadRef, held *heldLock, s *agent.Session, out agent.Outcome, err error) {
	if err != nil {
		id := newErrorID()
		b.log.Error("run failed", "error_id", id, "thread", t.Key(), "err", err)
		b.say(ctx, t, Reply{Kind: ReplyError, ErrorID: id, Text: "The run failed on my side."})
	}
	if held.lost.Load() {
		// Another replica owns the thread now; saving would overwrite it.
		b.log.Warn("thread lock lost; not saving the session", "thread", t.Key())
		return
	}
	if b.stopping() {
		// Shutting down: keep the last checkpoint so the run continues
		// elsewhere instead of being recorded as stopped.
		b.log.Info("shutting down mid-run; leaving the run to be continued", "thread", t.Key())
		return
	}
	if out.Status == agent.StatusAwaitingApproval && out.Approval != nil {
		if err := b.approvals.requestApproval(ctx, t, s, out.Approval); err != nil {
			b.storeFailure(ctx, t, err)
			return
		}
	}
	if err := b.saveHeld(ctx, held, s); err != nil {
		b.storeFailure(ctx, t, err)
		return
	}
	if s.Run == nil || s.Run.Pending != nil {
		b.markIdle(ctx, t)
	}
}

func (b *runtime) markActive(ctx context.Context, t ThreadRef) {
	if b.opt.Stores.Runs == nil {
		return
	}
	if err := b.opt.Stores.Runs.MarkActive(ctx, t); err != nil {
		b.log.Warn("index run", "thread", t.Key(), "err", err)
	}
}

func (b *runtime) markIdle(ctx context.Context, t ThreadRef) {
	if b.opt.Stores.Runs == nil {
		return
	}
	if err := b.opt.Stores.Runs.MarkIdle(context.WithoutCancel(ctx), t.Key()); err != nil {
		b.log.Warn("unindex run", "thread", t.Key(), "err", err)
	}
}

// mentionContextIn resolves @mentions against the inventory within a
// channel's scope (nil: everything), marks them as explicitly accessed, and
// writes the authoritative context block (SPEC A8). A mention of something
// outside the scope is not resolved, its line in the block says so with the
// reason, and the reasons are returned for the person.
func (b *runtime) mentionContextIn(s *agent.Session, ms []Mention, scope *policy.Scope) (string, []string) {
	if len(ms) == 0 || b.opt.Resolver == nil {
		return "", nil
	}
	var sb strings.Builder
	var refused []string
	sb.WriteString("Context from vigil (authoritative):\n")
	seen := map[string]bool{}
	now := b.now()
	for _, m := range ms {
		key := strings.ToLower(m.Name)
		if seen[key] {
			continue
		}
		seen[key] = true
		chain, ok := b.opt.Resolver.ResolveMention(m.Name)
		if !ok || len(chain) == 0 {
			fmt.Fprintf(&sb, "- @%s: not found in inventory\n", m.Name)
			continue
		}
		r := chain[0]
		if why := b.outOfScope(scope, "@"+m.Name, r); why != "" {
			fmt.Fprintf(&sb, "- @%s: %s; do not investigate or change it here\n", m.Name, why)
			refused = append(refused, why)
			continue
		}
		for _, p := range chain[1:] {
			s.Policy.Context.Add(p, now)
		}
		s.Policy.Context.AddExplicit(r, now)
		fmt.Fprintf(&sb, "- @%s is %s (%s); use target %q", m.Name, r.ID, r.Kind, r.Target)
		if len(chain) > 1 {
			sb.WriteString("; routing: ")
			for i, c := range chain {
				if i > 0 {
					sb.WriteString(" -> ")
				}
				sb.WriteString(string(c.ID))
			}
		}
		sb.WriteString("\n")
	}
	return strings.TrimRight(sb.String(), "\n"), refused
}

// outOfScope is why res (named as name) is not available under scope, or
// "" when it is: the gate's own words, so chat and the model hear the same
// reason.
func (b *runtime) outOfScope(scope *policy.Scope, name string, res policy.Resource) string {
	if scope == nil {
		return ""
	}
	var reaches []policy.Reach
	ok := false
	if sr, is := b.opt.Resolver.(policy.ScopeResolver); is {
		reaches, ok = sr.Reaches(string(res.ID))
	}
	if !ok {
		if kr, is := policy.KubeReach(res.ID); is {
			reaches, ok = []policy.Reach{kr}, true
		}
	}
	if !ok {
		return scope.Unknown(name).Message
	}
	return scope.ScopeReason(name, reaches)
}

// statusRefresh is how often a status is set again while a run works:
// platforms let it lapse (Matrix typing notifications after 30 s).
const statusRefresh = 20 * time.Second

// showStatus shows a status ("investigating…") in the thread until the
// returned function is called, which clears it.
func (b *runtime) showStatus(ctx context.Context, t ThreadRef, status string) (clear func()) {
	a, ok := b.adapter(t.Platform)
	ss, can := a.(StatusSetter)
	if !ok || !can {
		return func() {}
	}
	set := func(ctx context.Context, st string) {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if err := ss.SetStatus(sctx, t, st); err != nil {
			b.log.Debug("set status", "thread", t.Key(), "err", err)
		}
	}
	set(ctx, status)
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(statusRefresh)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				set(ctx, status)
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
		set(context.WithoutCancel(ctx), "")
	}
}

package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/policy"
)

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
	queue   []job
	running bool
	// cancel stops the job in progress ("stop").
	cancel context.CancelFunc
	// requester is the user whose request the job in progress serves
	// ("" when unknown: a run continued after its replica died), and seq
	// counts jobs, so a "stop" judged for one job never cancels the next.
	requester string
	seq       uint64
}

// HandleMessage implements Handler. It returns at once; the work happens on
// the thread's queue.
func (b *conversation) HandleMessage(ctx context.Context, m Message) {
	defer b.guard(ctx, "handle message", m.Thread)
	if !m.Addressed && !b.knownThread(ctx, m.Thread) {
		return
	}
	if m.EventID != "" {
		first, err := b.opt.Stores.Dedup.FirstSeen(ctx, "event:"+string(m.Thread.Platform)+":"+m.EventID, b.opt.DedupTTL)
		if err != nil {
			id := newErrorID()
			b.log.Error("dedup check failed", "error_id", id, "thread", m.Thread.Key(), "err", err)
			b.say(ctx, m.Thread, Reply{Kind: ReplyError, ErrorID: id,
				Text: "I cannot reach my state store right now, so I did not start on this. Please try again in a minute."})
			b.chatEvent(m.Thread.Platform, "store_error")
			return
		}
		if !first {
			b.chatEvent(m.Thread.Platform, "duplicate")
			return
		}
	}
	if isStop(m.Text) {
		b.chatEvent(m.Thread.Platform, "handled")
		b.stop(ctx, m)
		return
	}
	if !b.withinRateLimit(ctx, m) {
		b.chatEvent(m.Thread.Platform, "rate_limited")
		b.tell(ctx, m.Thread, m.User, "You are sending messages faster than I can work on them; I skipped this one. Try again in a minute.")
		return
	}
	b.chatEvent(m.Thread.Platform, "handled")
	b.enqueue(ctx, m.Thread, messageJob{b, m})
}

// withinRateLimit counts a message against its sender's per-channel limit.
// "stop" is never limited. When the counter is unreachable the message goes
// through: the state store's outage is reported where it matters.
func (b *conversation) withinRateLimit(ctx context.Context, m Message) bool {
	if b.opt.UserRateLimit <= 0 || b.opt.Stores.Limits == nil {
		return true
	}
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ok, err := b.opt.Stores.Limits.Allow(lctx, "msg:"+m.Thread.ChannelKey()+":"+m.User, b.opt.UserRateLimit, time.Minute)
	if err != nil {
		b.log.Warn("rate limit unavailable; letting the message through", "thread", m.Thread.Key(), "err", err)
		return true
	}
	return ok
}

// knownThread reports whether vigil already holds a conversation in the
// thread. Adapters mark replies in threads they saw as addressed, but with
// several replicas a reply can reach one that never saw the thread; the
// shared session store knows. A store that cannot answer is logged and the
// reply treated as not addressed to vigil: it was not addressed.
func (b *conversation) knownThread(ctx context.Context, t ThreadRef) bool {
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ok, err := b.opt.Stores.Sessions.SessionExists(lctx, t.Key())
	if err != nil {
		b.log.Warn("could not tell whether a thread is vigil's; ignoring an unaddressed reply", "thread", t.Key(), "err", err)
	}
	return ok && err == nil
}

func isStop(text string) bool {
	t := strings.ToLower(strings.TrimSpace(text))
	t = strings.TrimRight(t, ".!")
	return t == "stop" || t == "cancel"
}

func (b *runtime) chatEvent(p Platform, result string) {
	if b.opt.Observer != nil {
		b.opt.Observer.ChatEvent(string(p), result)
	}
}

// enqueue adds work to a thread and starts its worker if idle. The worker's
// jobs get their context from ctx without its cancellation (the caller may
// be a platform request that ends at once): a job ends when it is done,
// stopped, its lock is lost, or the bot shuts down (shutdown).
func (b *runtime) enqueue(ctx context.Context, t ThreadRef, j job) {
	b.mu.Lock()
	defer b.mu.Unlock()
	th, ok := b.threads[t.Key()]
	if !ok {
		th = &thread{ref: t}
		b.threads[t.Key()] = th
	}
	th.queue = append(th.queue, j)
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
		j := th.queue[0]
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

// stop cancels the run in progress in a thread, or a run waiting on an
// approval there. Only the run's requester, an operator or an approver may
// stop it (policy.MayStop); anyone else is told so, privately where the
// platform allows, and nothing changes.
func (b *conversation) stop(ctx context.Context, m Message) {
	for range 3 {
		b.mu.Lock()
		th, ok := b.threads[m.Thread.Key()]
		running := ok && th.cancel != nil
		var seq uint64
		var requester string
		if running {
			seq, requester = th.seq, th.requester
		}
		b.mu.Unlock()
		if !running {
			// Nothing running here; a run may be waiting on an approval,
			// and handleMessage judges the stop with that run at hand.
			b.enqueue(ctx, m.Thread, messageJob{b, m})
			return
		}
		if !b.mayStop(ctx, m.Thread, m.User, requester) {
			b.log.Info("stop refused", "thread", m.Thread.Key(), "user", m.User)
			b.tell(ctx, m.Thread, m.User, stopRefused)
			return
		}
		b.mu.Lock()
		th, ok = b.threads[m.Thread.Key()]
		if !ok || th.cancel == nil || th.seq != seq {
			b.mu.Unlock()
			continue // another job started meanwhile: judge again
		}
		cancel := th.cancel
		// Drop queued messages of this thread: "stop" means stop.
		kept := th.queue[:0]
		for _, j := range th.queue {
			if _, msg := j.(messageJob); !msg {
				kept = append(kept, j)
			} else {
				b.active--
			}
		}
		th.queue = kept
		b.reportLoad()
		b.idle.Broadcast()
		b.mu.Unlock()
		cancel()
		b.say(ctx, m.Thread, Reply{Kind: ReplyNotice, Text: "Stopping."})
		return
	}
	b.enqueue(ctx, m.Thread, messageJob{b, m})
}

// stopRefused is what someone who may not stop a run is told.
const stopRefused = "Only the person who asked, an operator or an approver can stop this; nothing was stopped."

// mayStop decides whether user may stop the run requester started in the
// thread's channel.
func (b *conversation) mayStop(ctx context.Context, t ThreadRef, user, requester string) bool {
	var roles policy.RoleSet
	if cp, ok := b.opt.Channels.Lookup(t.ChannelKey()); ok {
		roles = cp.RolesOf(b.subject(ctx, t, user))
	}
	return policy.MayStop(user, requester, roles)
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
	lock, err := b.lockThread(ctx, t, !quiet)
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
	held := &heldLock{l: lock}
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
}

// runEnv is the plumbing of one run under the lock h: its events go to k,
// and its checkpoints save the session after making sure this replica
// still holds the thread, so a run that lost its lock stops before its
// next side effect.
func (b *runtime) runEnv(k *sink, h *heldLock) agent.RunEnv {
	return agent.RunEnv{
		Sink: k,
		Checkpoint: func(ctx context.Context, s *agent.Session) error {
			if h.lost.Load() {
				return ErrLocked
			}
			rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			err := h.l.Renew(rctx)
			cancel()
			if err != nil {
				h.lost.Store(true)
				return fmt.Errorf("renew thread lock: %w", err)
			}
			return b.saveSession(ctx, s)
		},
	}
}

// lockThread takes the thread's lock, waiting while another replica holds it
// (or trying once, when wait is false).
func (b *runtime) lockThread(ctx context.Context, t ThreadRef, wait bool) (Lock, error) {
	deadline := b.now().Add(b.opt.LockTTL + 30*time.Second)
	pause := 50 * time.Millisecond
	for {
		lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		l, err := b.opt.Stores.Locks.Lock(lctx, "thread:"+t.Key(), b.opt.LockTTL)
		cancel()
		if err == nil {
			return l, nil
		}
		if !wait || !errors.Is(err, ErrLocked) || b.now().After(deadline) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(pause):
		}
		if pause < time.Second {
			pause *= 2
		}
	}
}

// keepLock renews the lock while a job runs. Losing it cancels the job, so
// the run stops before its next side effect.
func (b *runtime) keepLock(ctx context.Context, t ThreadRef, h *heldLock) func() {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(b.opt.LockTTL / 3)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
				err := h.l.Renew(rctx)
				rcancel()
				if err != nil && ctx.Err() == nil {
					h.lost.Store(true)
					b.log.Error("thread lock lost; stopping the run", "thread", t.Key(), "err", err)
					b.cancelThread(t)
					return
				}
			}
		}
	}()
	return func() { cancel(); <-done }
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
		return &agent.Session{Key: t.Key(), Policy: policy.NewSessionState(), CreatedAt: b.now()}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load session %s: %w", t.Key(), err)
	}
	return s, nil
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
	return s
}

// handleMessage starts a run for a user's message.
func (b *conversation) handleMessage(ctx context.Context, t ThreadRef, held *heldLock, m Message) {
	cp, ok := b.opt.Channels.Lookup(t.ChannelKey())
	if !ok {
		b.say(ctx, t, Reply{Kind: ReplyNotice, Text: "I am not set up to work in this channel. Ask an administrator to add it to vigil's channels."})
		return
	}
	subj := b.subject(ctx, t, m.User)
	roles := cp.RolesOf(subj)
	if !roles.Viewer {
		b.tell(ctx, t, m.User, "Sorry, you are not on the list of people who may ask me things in this channel.")
		return
	}
	s, err := b.loadSession(ctx, t)
	if err != nil {
		b.storeFailure(ctx, t, err)
		return
	}
	if s.Run != nil {
		if isStop(m.Text) {
			b.pending.abandonPending(ctx, t, s, m.User, roles, cp)
			return
		}
		if s.Run.Pending != nil {
			b.say(ctx, t, Reply{Kind: ReplyNotice, Text: fmt.Sprintf(
				"A change is waiting for approval (%s). Approve or deny it first, or say \"stop\" to drop it; then ask again.",
				s.Run.Pending.ApprovalID)})
			return
		}
		// A run this replica does not own was interrupted (its replica died
		// mid-run). The history is intact; start over from it.
		b.log.Warn("abandoned run found; starting afresh", "thread", t.Key(), "run", s.Run.ID)
		b.opt.Agent.Abandon(s, "the previous run was interrupted")
	}
	if isStop(m.Text) {
		b.say(ctx, t, Reply{Kind: ReplyNotice, Text: "Nothing is running here."})
		return
	}
	in := agent.Input{
		RunID:     newRunID(),
		Requester: m.User,
		Role:      cp.Requester(subj),
		Channel:   cp.Match,
		Level:     cp.Level,
		Text:      m.Text,
		Context:   b.messageContext(s, m),
	}
	b.markActive(ctx, t)
	clear := b.showStatus(ctx, t, "investigating…")
	out, err := b.opt.Agent.Start(ctx, s, in, b.runEnv(b.newSink(t, s), held))
	clear()
	b.afterRun(ctx, t, held, s, out, err)
}

// requesterRole decides again how the role gate sees a run's requester,
// from the channel's policy now: a role taken away since the run started
// counts before its next change. A run no person started keeps its role.
func (b *runtime) requesterRole(ctx context.Context, t ThreadRef, r *agent.RunState) policy.Requester {
	if r.Role.System {
		return r.Role
	}
	cp, ok := b.opt.Channels.Lookup(r.Channel)
	if !ok {
		return policy.Requester{User: r.Requester}
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
	if err := b.saveSession(ctx, s); err != nil {
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

// recoverOrphans queues runs in progress that no replica is working on:
// their replica died. A run another replica is working on holds the
// thread's lock and is skipped when the job tries it.
func (b *conversation) recoverOrphans(ctx context.Context) {
	if b.opt.Stores.Runs == nil {
		return
	}
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	refs, err := b.opt.Stores.Runs.ActiveRuns(lctx)
	cancel()
	if err != nil {
		b.log.Warn("list active runs", "err", err)
		return
	}
	for _, t := range refs {
		b.mu.Lock()
		_, busy := b.threads[t.Key()]
		b.mu.Unlock()
		if busy {
			continue
		}
		if _, ok := b.adapter(t.Platform); !ok {
			continue // another replica serves that platform
		}
		b.enqueue(ctx, t, orphanJob{b})
	}
}

// continueOrphan finishes a run whose replica died, from its checkpoint.
func (b *conversation) continueOrphan(ctx context.Context, t ThreadRef, held *heldLock) {
	s, err := b.loadSession(ctx, t)
	if err != nil {
		b.log.Warn("load orphaned run", "thread", t.Key(), "err", err)
		return
	}
	if s.Run == nil || s.Run.Pending != nil {
		b.markIdle(ctx, t)
		return
	}
	b.log.Info("continuing a run whose replica stopped", "thread", t.Key(), "run", s.Run.ID)
	s.Run.Role = b.requesterRole(ctx, t, s.Run)
	b.mu.Lock()
	if th, ok := b.threads[t.Key()]; ok {
		th.requester = s.Run.Requester // its requester may stop it too
	}
	b.mu.Unlock()
	b.say(ctx, t, Reply{Kind: ReplyNotice, Text: "Picking up where the previous attempt stopped."})
	clear := b.showStatus(ctx, t, "investigating…")
	out, err := b.opt.Agent.Continue(ctx, s, b.runEnv(b.newSink(t, s), held))
	clear()
	b.afterRun(ctx, t, held, s, out, err)
}

// mentionContext resolves @mentions against the inventory, marks them as
// explicitly accessed, and writes the authoritative context block (SPEC A8).
func (b *runtime) mentionContext(s *agent.Session, ms []Mention) string {
	if len(ms) == 0 || b.opt.Resolver == nil {
		return ""
	}
	var sb strings.Builder
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
	return strings.TrimRight(sb.String(), "\n")
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

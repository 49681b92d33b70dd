package bot

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/policy"
)

// HandleMessage implements Handler. It is the fast path an adapter calls
// while the platform waits for its acknowledgement (Slack allows 3 s), so
// adapters hand messages straight to it, with no queue or dedup of their
// own: it leaves alone what is not vigil's, claims the event ID in the
// shared store (the one dedup, across replicas: a platform's redelivery
// or a sync replay of the event, on any replica, gets no further), counts
// the sender's rate and queues the message on its thread (the one queue).
// It never waits on the chat platform or the model: what it owes the
// thread (a store failure, a rate-limit notice, a "stop") goes out in the
// background (later).
func (b *conversation) HandleMessage(ctx context.Context, m Message) {
	defer b.guard(ctx, "handle message", m.Thread)
	// The store work is bounded so the acknowledgement comes in time even
	// when the store is slow: a dedup check that does not finish is a
	// store failure, reported in the thread.
	sctx, cancel := context.WithTimeout(ctx, handleBudget)
	defer cancel()
	if !m.Addressed && !b.knownThread(sctx, m.Thread) {
		return
	}
	if m.EventID != "" {
		first, err := b.opt.Stores.Dedup.FirstSeen(sctx, "event:"+string(m.Thread.Platform)+":"+m.EventID, b.opt.DedupTTL)
		if err != nil {
			id := newErrorID()
			b.log.Error("dedup check failed", "error_id", id, "thread", m.Thread.Key(), "err", err)
			b.chatEvent(m.Thread.Platform, "store_error")
			b.later(ctx, m.Thread, "handle message", func(ctx context.Context) {
				b.say(ctx, m.Thread, Reply{Kind: ReplyError, ErrorID: id,
					Text: "I cannot reach my state store right now, so I did not start on this. Please try again in a minute."})
			})
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
	if !b.withinRateLimit(sctx, m) {
		b.chatEvent(m.Thread.Platform, "rate_limited")
		b.later(ctx, m.Thread, "handle message", func(ctx context.Context) {
			b.tell(ctx, m.Thread, m.User, "You are sending messages faster than I can work on them; I skipped this one. Try again in a minute.")
		})
		return
	}
	b.chatEvent(m.Thread.Platform, "handled")
	b.enqueue(ctx, m.Thread, messageJob{b, m})
}

// handleBudget bounds HandleMessage's store work (the thread check, the
// dedup, the rate limit), within Slack's 3 s acknowledgement.
const handleBudget = 2 * time.Second

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

// stop cancels the run in progress in a thread, or a run waiting on an
// approval there. Only the run's requester, an operator or an approver may
// stop it (policy.MayStop); anyone else is told so, privately where the
// platform allows, and nothing changes. With no job in progress the stop
// is queued like any message (handleMessage judges it against a run
// waiting on an approval); otherwise it is judged in the background (the
// platform says who the user is), against the job in progress when it
// arrived, and drops the messages queued before it.
func (b *conversation) stop(ctx context.Context, m Message) {
	b.mu.Lock()
	th, ok := b.threads[m.Thread.Key()]
	running := ok && th.cancel != nil
	var seq, before uint64
	var requester string
	if running {
		seq, requester, before = th.seq, th.requester, th.queued
	}
	b.mu.Unlock()
	if !running {
		b.enqueue(ctx, m.Thread, messageJob{b, m})
		return
	}
	b.later(ctx, m.Thread, "stop", func(ctx context.Context) {
		for range 3 {
			if !b.mayStop(ctx, m.Thread, m.User, requester) {
				b.log.Info("stop refused", "thread", m.Thread.Key(), "user", m.User)
				b.tell(ctx, m.Thread, m.User, stopRefused)
				return
			}
			b.mu.Lock()
			th, ok := b.threads[m.Thread.Key()]
			if !ok || th.cancel == nil {
				b.mu.Unlock()
				// The job ended meanwhile and nothing followed it: a run
				// may wait on an approval, which handleMessage judges.
				b.enqueue(ctx, m.Thread, messageJob{b, m})
				return
			}
			if th.seq != seq {
				// Another job started meanwhile: judge again for it.
				seq, requester = th.seq, th.requester
				b.mu.Unlock()
				continue
			}
			cancel := th.cancel
			// Drop the messages queued before the stop: "stop" means stop.
			kept := th.queue[:0]
			for _, q := range th.queue {
				if _, msg := q.job.(messageJob); !msg || q.n > before {
					kept = append(kept, q)
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
	})
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
	s, err := b.heldSession(ctx, t, held)
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
	mctx, refused := b.messageContextIn(s, m, cp.Scope)
	if len(refused) > 0 {
		// Go, not the model, says what this channel cannot reach.
		b.say(ctx, t, Reply{Kind: ReplyNotice, Text: "Not in this channel's scope: " + strings.Join(refused, "; ") + "."})
	}
	in := agent.Input{
		RunID:     newRunID(),
		Requester: m.User,
		Role:      cp.Requester(subj),
		Actor:     b.opt.Identities.Resolve(subj, t.ChannelKey()),
		Channel:   cp.Match,
		Level:     cp.Level,
		Text:      m.Text,
		Context:   mctx,
	}
	b.startRun(ctx, t, held, s, in, nil)
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

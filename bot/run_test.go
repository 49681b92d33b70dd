package bot_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/bot"
	"github.com/vigilops/vigil/policy"
)

// pausedAt is a run that reached its pause: its input and context.
type pausedAt struct {
	in  agent.Input
	ctx context.Context
}

// pausedRun is a scripted Start that checkpoints the new run, reports it
// is under way, and then waits: for proceed, after which it checkpoints
// again before its side effect as the agent does, or for its context to
// end. What it does after it stopped (mark) is what a save would reveal.
type pausedRun struct {
	paused  chan pausedAt
	proceed chan struct{}
	// checkpointErr receives the result of the checkpoint before the side
	// effect.
	checkpointErr chan error
	sideEffects   chan string
}

func newPausedRun(r *fakeRunner) *pausedRun {
	p := &pausedRun{paused: make(chan pausedAt, 8), proceed: make(chan struct{}), checkpointErr: make(chan error, 8),
		sideEffects: make(chan string, 8)}
	r.start = func(ctx context.Context, s *agent.Session, in agent.Input, env agent.RunEnv) agent.Outcome {
		if err := begin(ctx, s, in, env); err != nil {
			return stopped(ctx, s, env, err)
		}
		p.paused <- pausedAt{in: in, ctx: ctx}
		select {
		case <-ctx.Done():
			s.History = append(s.History, agent.Message{Role: agent.RoleAssistant, Content: "mark: cancelled run of " + in.Requester})
			return stopped(ctx, s, env, ctx.Err())
		case <-p.proceed:
		}
		err := checkpoint(ctx, s, env)
		p.checkpointErr <- err
		if err != nil {
			s.History = append(s.History, agent.Message{Role: agent.RoleAssistant, Content: "mark: run that lost its lock"})
			return stopped(ctx, s, env, err)
		}
		p.sideEffects <- in.Text
		return answer(ctx, s, env, "did "+in.Text)
	}
	return p
}

func historyHas(s *agent.Session, text string) bool {
	for _, m := range s.History {
		if strings.Contains(m.Content, text) {
			return true
		}
	}
	return false
}

// A replica whose thread lock expired while its run was busy finds out at
// the run's next checkpoint: the checkpoint fails, the side effect after it
// does not happen, and nothing of the run is saved over the session that
// the replica now holding the thread wrote.
func TestLockLostAtCheckpointStopsTheRunBeforeItsSideEffect(t *testing.T) {
	clk := newClock()
	stores := memStores(clk)
	a := newReplica(t, replicaOptions{stores: stores, lockTTL: time.Minute})
	run := newPausedRun(a.runner)
	b := newReplica(t, replicaOptions{stores: stores})
	th := thread("lock-checkpoint")

	a.say(th, "olga", "restart nginx")
	recv(t, run.paused, "replica A's run to be under way")
	// A stalls past its lock's lifetime (a long GC pause, a network
	// partition); B takes the thread over and answers there.
	clk.add(2 * time.Minute)
	b.say(th, "olga", "what changed?")
	b.chat.waitText(t, th, "answer to what changed?")
	b.idle(t)

	close(run.proceed)
	err := recv(t, run.checkpointErr, "replica A's checkpoint")
	if !errors.Is(err, bot.ErrLocked) {
		t.Fatalf("checkpoint after losing the lock: %v, want ErrLocked", err)
	}
	a.idle(t)
	select {
	case what := <-run.sideEffects:
		t.Fatalf("replica A ran %q after losing the thread", what)
	default:
	}
	s := b.session(t, th)
	if historyHas(s, "mark:") || !historyHas(s, "answer to what changed?") || s.Run != nil {
		t.Fatalf("stored session %+v: want replica B's, untouched by replica A's lost run", s.History)
	}
}

// A replica whose lock renewal fails while its run waits on something
// (a slow tool, a slow model) cancels the run at once; nothing more of it
// is saved, so its last checkpoint stays for whoever continues it.
func TestLockLostWhileRunningCancelsTheRun(t *testing.T) {
	clk := newClock()
	stores := memStores(clk)
	// Renewals every 20ms; the store's clock stands still until the test
	// moves it, so only the test ends the lock.
	a := newReplica(t, replicaOptions{stores: stores, lockTTL: 60 * time.Millisecond})
	run := newPausedRun(a.runner)
	th := thread("lock-renewal")

	a.say(th, "olga", "restart nginx")
	recv(t, run.paused, "the run to be under way")
	clk.add(time.Minute)

	calls := a.runner.waitCalls(t, "start", 1)
	if !errors.Is(calls[0].err, context.Canceled) {
		t.Fatalf("run ended with context error %v, want it cancelled by the lost lock", calls[0].err)
	}
	a.idle(t)
	select {
	case what := <-run.sideEffects:
		t.Fatalf("the run did %q after losing its lock", what)
	default:
	}
	s := a.session(t, th)
	if historyHas(s, "mark:") || s.Run == nil {
		t.Fatalf("stored session run %+v history %+v: want the run's last checkpoint, nothing after it", s.Run, s.History)
	}
	refs, err := stores.Runs.ActiveRuns(context.Background())
	if err != nil || len(refs) != 1 || refs[0] != th {
		t.Fatalf("runs in progress %v (%v): want the thread, for another replica to continue", refs, err)
	}
}

// "stop" while a new run waits for the thread's lock (another replica is
// working in the thread) ends it before it starts: nothing runs, and no
// error about the lock is shown. The thread works normally afterwards.
func TestStopWhileARunWaitsToStart(t *testing.T) {
	stores := memStores(nil)
	b := newReplica(t, replicaOptions{stores: stores})
	busy := newPausedRun(b.runner)
	a := newReplica(t, replicaOptions{stores: stores})
	th := thread("stop-starting")

	b.say(th, "bob", "check the disks")
	recv(t, busy.paused, "replica B's run to hold the thread")
	a.say(th, "olga", "restart nginx")
	waitOn(t, &a.locks.sig, "replica A to find the thread locked",
		func() bool { return a.locks.refused("thread:"+th.Key()) > 0 }, nil)
	a.say(th, "olga", "stop")
	a.chat.waitText(t, th, "Stopping.")
	a.idle(t)
	if n := len(a.runner.of("start")); n != 0 {
		t.Fatalf("%d runs started after the stop", n)
	}
	if a.chat.has(th, "lock") {
		t.Fatalf("a stopped start reported a lock problem:\n%s", a.chat.transcript(th))
	}

	close(busy.proceed)
	b.chat.waitText(t, th, "did check the disks")
	b.idle(t)
	a.say(th, "olga", "restart nginx")
	a.chat.waitText(t, th, "answer to restart nginx")
}

// The requester's "stop" cancels the run in progress and drops the
// thread's queued messages; another viewer's "stop" is refused and
// changes nothing.
func TestStopCancelsTheRunAndTheQueue(t *testing.T) {
	r := newReplica(t, replicaOptions{})
	run := newPausedRun(r.runner)
	th := thread("stop-running")

	r.say(th, "rita", "why is the disk full?")
	at := recv(t, run.paused, "the run to be under way")
	r.say(th, "victor", "and the memory?")
	r.say(th, "victor", "stop") // judged, and refused, in the background
	r.chat.waitText(t, th, "[to victor] Only the person who asked")
	if at.ctx.Err() != nil {
		t.Fatalf("victor's stop: run context %v, thread:\n%s", at.ctx.Err(), r.chat.transcript(th))
	}

	r.say(th, "rita", "stop")
	r.chat.waitText(t, th, "Stopping.")
	calls := r.runner.waitCalls(t, "start", 1)
	if !errors.Is(calls[0].err, context.Canceled) {
		t.Fatalf("run ended with %v, want it cancelled", calls[0].err)
	}
	r.idle(t)
	if n := len(r.runner.of("start")); n != 1 {
		t.Fatalf("%d runs, want 1: the queued message must be dropped by the stop", n)
	}
	if s := r.session(t, th); s.Run != nil {
		t.Fatalf("stopped run still in the session: %+v", s.Run)
	}
	if refs, _ := r.stores.Runs.ActiveRuns(context.Background()); len(refs) != 0 {
		t.Fatalf("stopped run still listed in progress: %v", refs)
	}
}

// A "stop" is judged for the job in progress when it arrives. If that job
// ends and the next one starts while the stop is judged, it is judged
// again for the new job: rita may stop her own run, not victor's, which
// started meanwhile.
func TestStopJudgedForOneJobNeverStopsTheNext(t *testing.T) {
	r := newReplica(t, replicaOptions{})
	run := newPausedRun(r.runner)
	th := thread("stop-race")

	r.say(th, "rita", "why is the disk full?")
	recv(t, run.paused, "rita's run")
	r.say(th, "victor", "and the memory?")

	// rita's stop stalls while the platform says who she is.
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	r.chat.mu.Lock()
	r.chat.onFacts = func(user string) {
		if user == "rita" {
			once.Do(func() { close(entered); <-release })
		}
	}
	r.chat.mu.Unlock()
	stopDone := make(chan struct{})
	go func() {
		defer close(stopDone)
		r.say(th, "rita", "stop")
	}()
	recv(t, entered, "rita's stop to be judged")

	run.proceed <- struct{}{} // rita's run ends; victor's starts
	if at := recv(t, run.paused, "victor's run"); at.in.Requester != "victor" {
		t.Fatalf("next run is %s's, want victor's", at.in.Requester)
	}
	close(release)
	recv(t, stopDone, "rita's stop to be handled")
	r.chat.waitText(t, th, "[to rita] Only the person who asked")
	if r.chat.has(th, "Stopping.") {
		t.Fatalf("rita's stop stopped something:\n%s", r.chat.transcript(th))
	}

	run.proceed <- struct{}{}
	r.chat.waitText(t, th, "did and the memory?")
	calls := r.runner.waitCalls(t, "start", 2)
	for _, c := range calls {
		if c.err != nil {
			t.Fatalf("%s's run was cancelled (%v)", c.in.Requester, c.err)
		}
	}
}

// writeRunner is a runner whose runs propose the restart.
func writeRunner() *fakeRunner {
	r := newRunner()
	r.start = func(ctx context.Context, s *agent.Session, in agent.Input, env agent.RunEnv) agent.Outcome {
		if err := begin(ctx, s, in, env); err != nil {
			return stopped(ctx, s, env, err)
		}
		return proposeWrite(ctx, s, env)
	}
	return r
}

// A run waiting on an approval is stopped by its requester, not by a
// viewer: the approval is withdrawn (denied, on the card too), and a late
// approval finds it decided and runs nothing.
func TestStopWhileWaitingForApproval(t *testing.T) {
	r := newReplica(t, replicaOptions{runner: writeRunner()})
	th := thread("stop-approval")

	r.say(th, "olga", "restart nginx")
	card := r.chat.waitCard(t, th)
	r.idle(t)

	r.say(th, "victor", "stop")
	r.idle(t)
	if !r.chat.has(th, "[to victor] Only the person who asked") {
		t.Fatalf("victor's stop was not refused:\n%s", r.chat.transcript(th))
	}
	if a := r.approval(t, card.ID); a.Status != policy.ApprovalPending {
		t.Fatalf("approval %s after a refused stop, want pending", a.Status)
	}

	r.say(th, "olga", "stop")
	r.chat.waitText(t, th, "Stopped. Nothing more will run")
	r.idle(t)
	a := r.approval(t, card.ID)
	if a.Status != policy.ApprovalDenied || a.DecidedBy != "olga" || a.Reason != "stopped" {
		t.Fatalf("approval after the stop: %s by %q (%q), want denied by olga: stopped", a.Status, a.DecidedBy, a.Reason)
	}
	cards := r.chat.cards(th)
	if last := cards[len(cards)-1].card; last.Status != bot.ApprovalDenied {
		t.Fatalf("card shows %s, want denied", last.Status)
	}
	if len(r.runner.of("abandon")) != 1 || r.session(t, th).Run != nil {
		t.Fatal("the stopped run was not abandoned")
	}

	r.click(th, "alice", card, true)
	r.idle(t)
	if !r.chat.has(th, "[to alice] Not accepted") {
		t.Fatalf("a late approval was not refused:\n%s", r.chat.transcript(th))
	}
	if n := len(r.runner.of("resume")); n != 0 || r.runner.executed.Load() != 0 {
		t.Fatalf("%d resumes, %d executions after the stop", n, r.runner.executed.Load())
	}
}

// A run whose replica shut down mid-run keeps its last checkpoint and is
// continued, once, by another replica; with two replicas sweeping, still
// once.
func TestShutdownLeavesTheRunToAnotherReplica(t *testing.T) {
	stores := memStores(nil)
	a := newReplica(t, replicaOptions{stores: stores})
	run := newPausedRun(a.runner)
	th := thread("orphan-shutdown")

	a.say(th, "olga", "restart nginx")
	recv(t, run.paused, "the run to be under way")
	a.stop()
	calls := a.runner.waitCalls(t, "start", 1)
	if calls[0].err == nil {
		t.Fatal("shutdown did not cancel the run")
	}
	a.idle(t)
	s := a.session(t, th)
	if s.Run == nil || historyHas(s, "mark:") {
		t.Fatalf("after shutdown the session has run %+v history %+v: want the last checkpoint", s.Run, s.History)
	}
	if a.chat.has(th, "stopped") {
		t.Fatalf("a shutdown told the thread the run stopped:\n%s", a.chat.transcript(th))
	}
	// A message that reaches the replica after it stopped starts nothing.
	if err := recv(t, a.done, "replica A's Run to return"); err != nil {
		t.Fatal(err)
	}
	a.done <- nil // for the cleanup
	a.say(thread("after-shutdown"), "olga", "anyone there?")
	a.idle(t)
	if n := len(a.runner.of("start")); n != 1 {
		t.Fatalf("%d runs started, want none after the shutdown", n-1)
	}
	runner, reps := sweepAfterDone(t, stores, th)
	if n := len(runner.of("continue")); n != 1 {
		t.Fatalf("the run was continued %d times by two replicas, want once", n)
	}
	notice := "Picking up where the previous attempt stopped."
	if n := reps[0].chat.count(th, notice) + reps[1].chat.count(th, notice); n != 1 {
		t.Fatalf("%d notices of the continuation, want 1", n)
	}
}

// A run whose replica died (its lock still held until it expires) is
// continued by another replica once the lock lapses, and only once.
func TestOrphanIsContinuedOnceTheDeadReplicasLockLapses(t *testing.T) {
	clk := newClock()
	stores := memStores(clk)
	th := thread("orphan-crash")
	ctx := context.Background()
	// The dead replica's last checkpoint, index entry and lock.
	s := &agent.Session{Key: th.Key(), Policy: policy.NewSessionState(), History: []agent.Message{{Role: agent.RoleUser, Content: "restart nginx"}},
		Run: &agent.RunState{ID: "run-dead", Requester: "olga", Channel: "unit:C1", Level: policy.LevelControlled, Turn: 2}}
	if err := stores.Sessions.SaveSession(ctx, s); err != nil {
		t.Fatal(err)
	}
	if err := stores.Runs.MarkActive(ctx, th); err != nil {
		t.Fatal(err)
	}
	if _, err := stores.Locks.Lock(ctx, "thread:"+th.Key(), time.Minute); err != nil {
		t.Fatal(err)
	}

	b := newReplica(t, replicaOptions{stores: stores, sweepEvery: 10 * time.Millisecond})
	waitOn(t, &b.locks.sig, "the orphan finder to try the thread twice",
		func() bool { return b.locks.refused("thread:"+th.Key()) >= 2 }, nil)
	if n := len(b.runner.of("continue")); n != 0 {
		t.Fatalf("continued %d times while the dead replica's lock was live", n)
	}
	clk.add(2 * time.Minute)
	b.chat.waitText(t, th, "finished the interrupted run")
	b.stop()
	b.idle(t)
	if got := b.runner.of("continue"); len(got) != 1 {
		t.Fatalf("continued %d times, want once", len(got))
	}
	if runner, _ := sweepAfterDone(t, stores, th); len(runner.of("continue")) != 0 {
		t.Fatalf("a finished run was continued again %d times", len(runner.of("continue")))
	}
}

// sweepAfterDone runs two more replicas over stores until the run in th
// is finished and each has swept at least twice since, then stops them
// and returns their shared runner: whatever they would continue, they
// have by then.
func sweepAfterDone(t *testing.T, stores bot.Stores, th bot.ThreadRef) (*fakeRunner, []*replica) {
	t.Helper()
	runner := newRunner()
	reps := []*replica{
		newReplica(t, replicaOptions{stores: stores, runner: runner, sweepEvery: 10 * time.Millisecond}),
		newReplica(t, replicaOptions{stores: stores, runner: runner, sweepEvery: 10 * time.Millisecond}),
	}
	ctx := context.Background()
	waitOn(t, &reps[0].runs.sig, "the run to be finished", func() bool {
		s, err := stores.Sessions.LoadSession(ctx, th.Key())
		refs, lerr := stores.Runs.ActiveRuns(ctx)
		return err == nil && s.Run == nil && lerr == nil && len(refs) == 0
	}, nil)
	for _, r := range reps {
		from := r.runs.lists.Load()
		waitOn(t, &r.runs.sig, "two more sweeps", func() bool { return r.runs.lists.Load() >= from+2 }, nil)
		r.stop()
		r.idle(t)
	}
	return runner, reps
}

// Role checks. C1: olga operator; alice, bob approvers; rita, victor
// viewers. C2: only olga may ask.
func TestRoles(t *testing.T) {
	t.Run("a person not among the channel's viewers is not served", func(t *testing.T) {
		r := newReplica(t, replicaOptions{})
		th := thread("roles-viewer", "C2")
		r.say(th, "victor", "what is wrong?")
		r.chat.waitText(t, th, "[to victor] Sorry, you are not on the list")
		r.idle(t)
		if n := len(r.runner.of("start")); n != 0 {
			t.Fatalf("%d runs for a person who may not ask", n)
		}
	})
	t.Run("a non-operator's change is refused before any card exists", func(t *testing.T) {
		r := newReplica(t, replicaOptions{runner: writeRunner()})
		th := thread("roles-operator")
		r.say(th, "rita", "restart nginx")
		r.chat.waitText(t, th, "I may not make that change")
		r.idle(t)
		if in := r.runner.of("start")[0].in; in.Role.Operator || in.Role.User != "rita" {
			t.Fatalf("rita's run role %+v, want a non-operator", in.Role)
		}
		if !r.chat.has(th, "No change was proposed: this change needs the operator role") {
			t.Fatalf("the thread was not told why:\n%s", r.chat.transcript(th))
		}
		pending, err := r.stores.Approvals.ListPending(context.Background())
		if err != nil || len(pending) != 0 || len(r.chat.cards(th)) != 0 {
			t.Fatalf("a refused change got approvals %v (%v) and cards:\n%s", pending, err, r.chat.transcript(th))
		}
		r.say(th, "olga", "restart nginx")
		card := r.chat.waitCard(t, th)
		if card.Requester != "olga" || card.Status != bot.ApprovalPending {
			t.Fatalf("operator's card %+v", card)
		}
	})
	t.Run("only approvers decide, never their own request", func(t *testing.T) {
		r := newReplica(t, replicaOptions{runner: writeRunner()})
		th := thread("roles-approver")
		r.say(th, "alice", "restart nginx")
		card := r.chat.waitCard(t, th)
		r.idle(t)
		for _, who := range []string{"olga", "rita", "alice"} {
			r.click(th, who, card, true)
		}
		r.idle(t)
		for who, why := range map[string]string{"olga": "not an approver", "rita": "not an approver", "alice": "cannot approve your own request"} {
			if !r.chat.has(th, "[to "+who+"] Not accepted: "+policyText(why)) {
				t.Fatalf("%s's approval was not refused (%s):\n%s", who, why, r.chat.transcript(th))
			}
		}
		if a := r.approval(t, card.ID); a.Status != policy.ApprovalPending || len(r.runner.of("resume")) != 0 {
			t.Fatalf("approval %s after refused decisions, %d resumes", a.Status, len(r.runner.of("resume")))
		}
		// A click that did not come from the card is refused too.
		forged := card
		forged.Token = ""
		r.click(th, "bob", forged, true)
		r.idle(t)
		if !r.chat.has(th, "[to bob] Not accepted: "+policy.ErrTokenMissing.Error()) {
			t.Fatalf("a click without the card's token was not refused:\n%s", r.chat.transcript(th))
		}

		r.click(th, "bob", card, true)
		r.chat.waitText(t, th, "Restarted nginx.")
		r.idle(t)
		res := r.runner.of("resume")
		if len(res) != 1 || !res[0].d.Approved || res[0].d.By != "bob" || res[0].d.Role == nil || !res[0].d.Role.Operator {
			t.Fatalf("resume %+v, want approved by bob for an operator", res)
		}
		if a := r.approval(t, card.ID); a.Status != policy.ApprovalExecuted || r.runner.executed.Load() != 1 {
			t.Fatalf("approval %s, %d executions, want executed once", a.Status, r.runner.executed.Load())
		}
	})
}

// policyText returns the refusal policy words for what a test expects.
func policyText(why string) string {
	switch why {
	case "not an approver":
		return policy.ErrNotApprover.Error()
	default:
		return policy.ErrSelfApproval.Error()
	}
}

// An approval decided while its card is still being posted (a fast
// approver, a slow platform) ends with the card showing the decision.
func TestApprovalDecidedBeforeItsCardIsPosted(t *testing.T) {
	r := newReplica(t, replicaOptions{runner: writeRunner()})
	th := thread("fast-approver")
	posting, release := make(chan bot.ApprovalCard, 1), make(chan struct{})
	r.chat.mu.Lock()
	r.chat.onCard = func(card bot.ApprovalCard) {
		posting <- card
		<-release
	}
	r.chat.mu.Unlock()

	r.say(th, "olga", "restart nginx")
	card := recv(t, posting, "the card to be on its way")
	r.click(th, "bob", card, true)
	if a := r.approval(t, card.ID); a.Status != policy.ApprovalApproved {
		t.Fatalf("approval %s, want approved before the card is posted", a.Status)
	}
	if n := len(r.chat.cards(th)); n != 0 {
		t.Fatalf("%d card messages before the card was posted", n)
	}
	close(release)
	r.chat.waitText(t, th, "Restarted nginx.")
	r.idle(t)

	cards := r.chat.cards(th)
	last := cards[len(cards)-1]
	if !last.update || last.card.Status != bot.ApprovalApproved || last.card.DecidedBy != "bob" {
		t.Fatalf("card ends as %+v (update %v), want it updated to approved by bob:\n%s", *last.card, last.update, r.chat.transcript(th))
	}
	if r.runner.executed.Load() != 1 {
		t.Fatalf("%d executions, want 1", r.runner.executed.Load())
	}
}

package bot_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/bot"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/store"
	"github.com/vigilops/vigil/tools"
)

// The bot's unit tests drive a real Bot over the memory stores with an
// in-memory runner in place of the agent and a recording adapter in place
// of a chat platform. Waits are on events (something posted, a runner
// call, a store call, the bot idle), never on a fixed time.

// signal is a broadcast that something changed; waiters re-check their
// condition each time it fires.
type signal struct {
	mu sync.Mutex
	ch chan struct{}
}

func (s *signal) changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

func (s *signal) fire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
}

// waitOn waits until cond holds, re-checking it whenever sig fires.
func waitOn(t *testing.T, sig *signal, what string, cond func() bool, describe func() string) {
	t.Helper()
	timeout := time.NewTimer(wait)
	defer timeout.Stop()
	for {
		ch := sig.changed()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-timeout.C:
			msg := ""
			if describe != nil {
				msg = "\n" + describe()
			}
			t.Fatalf("waited %s for %s%s", wait, what, msg)
		}
	}
}

// recv waits for a value on ch.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(wait):
		t.Fatalf("waited %s for %s", wait, what)
		panic("unreachable")
	}
}

const unit bot.Platform = "unit"

// thread returns a thread of channel C1 (or another channel).
func thread(id string, channel ...string) bot.ThreadRef {
	c := "C1"
	if len(channel) > 0 {
		c = channel[0]
	}
	return bot.ThreadRef{Platform: unit, Channel: c, Thread: id}
}

// The people of the tests, in channel C1: olga is an operator, alice and
// bob are approvers (and so operators), rita and victor may only ask
// questions. In C2 only olga may ask anything.
var channels = []policy.ChannelPolicy{
	{Match: "unit:C1", Level: policy.LevelControlled, Operators: []string{"olga"}, Approvers: []string{"alice", "bob"}},
	{Match: "unit:C2", Level: policy.LevelControlled, Viewers: []string{"olga"}, Operators: []string{"olga"}, Approvers: []string{"alice"}},
}

// posted is one thing the bot said.
type posted struct {
	thread bot.ThreadRef
	user   string // set for a notice to one user
	reply  bot.Reply
	card   *bot.ApprovalCard
	update bool // card is an update of a posted card
	// root marks a thread's first message (OpenThread); edit names the
	// message an EditMessage replaced.
	root bool
	edit string
}

// recChat is a recording chat platform. It implements the optional
// Notifier and FactSource powers, so private notices and per-user facts go
// through the paths real platforms use.
type recChat struct {
	sig signal
	mu  sync.Mutex
	log []posted
	seq int
	// onCard, when set, runs as a card is posted, before PostApproval
	// returns: a person deciding before the platform has answered.
	onCard func(card bot.ApprovalCard)
	// onFacts, when set, runs as the bot asks what the platform knows of
	// a user (every role decision does).
	onFacts func(user string)
}

var (
	_ bot.Adapter    = (*recChat)(nil)
	_ bot.Notifier   = (*recChat)(nil)
	_ bot.FactSource = (*recChat)(nil)
)

func (c *recChat) Platform() bot.Platform { return unit }

func (c *recChat) Start(ctx context.Context, _ bot.Handler) error {
	<-ctx.Done()
	return nil
}

func (c *recChat) record(p posted) string {
	c.mu.Lock()
	c.seq++
	id := fmt.Sprint("m", c.seq)
	c.log = append(c.log, p)
	c.mu.Unlock()
	c.sig.fire()
	return id
}

func (c *recChat) Post(_ context.Context, t bot.ThreadRef, r bot.Reply) (bot.MessageRef, error) {
	return bot.MessageRef{ThreadRef: t, ID: c.record(posted{thread: t, reply: r})}, nil
}

// OpenThread implements bot.ThreadOpener: the new thread's ID is the
// root message's.
func (c *recChat) OpenThread(_ context.Context, channel string, r bot.Reply) (bot.MessageRef, error) {
	c.mu.Lock()
	c.seq++
	root := fmt.Sprint("root", c.seq)
	c.mu.Unlock()
	t := bot.ThreadRef{Platform: unit, Channel: channel, Thread: root}
	c.record(posted{thread: t, reply: r, root: true})
	return bot.MessageRef{ThreadRef: t, ID: root}, nil
}

// EditMessage implements bot.ThreadOpener.
func (c *recChat) EditMessage(_ context.Context, ref bot.MessageRef, r bot.Reply) error {
	c.record(posted{thread: ref.ThreadRef, reply: r, edit: ref.ID})
	return nil
}

func (c *recChat) PostApproval(_ context.Context, t bot.ThreadRef, card bot.ApprovalCard) (bot.MessageRef, error) {
	c.mu.Lock()
	hook := c.onCard
	c.mu.Unlock()
	if hook != nil {
		hook(card)
	}
	c.record(posted{thread: t, card: &card})
	return bot.MessageRef{ThreadRef: t, ID: "card-" + card.ID}, nil
}

func (c *recChat) UpdateApproval(_ context.Context, ref bot.MessageRef, card bot.ApprovalCard) error {
	if ref.ID != "card-"+card.ID {
		return fmt.Errorf("update of message %q, which is not card %s", ref.ID, card.ID)
	}
	c.record(posted{thread: ref.ThreadRef, card: &card, update: true})
	return nil
}

func (c *recChat) NotifyUser(_ context.Context, t bot.ThreadRef, user, text string) error {
	c.record(posted{thread: t, user: user, reply: bot.Reply{Kind: bot.ReplyNotice, Text: text}})
	return nil
}

func (c *recChat) UserFacts(_ context.Context, _ bot.ThreadRef, user string) (bot.UserFacts, error) {
	c.mu.Lock()
	hook := c.onFacts
	c.mu.Unlock()
	if hook != nil {
		hook(user)
	}
	return bot.UserFacts{}, nil
}

func (c *recChat) posts() []posted {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]posted(nil), c.log...)
}

// transcript renders what was said in a thread, for failure messages and
// text checks.
func (c *recChat) transcript(t bot.ThreadRef) string {
	var b strings.Builder
	for _, p := range c.posts() {
		if p.thread != t {
			continue
		}
		switch {
		case p.card != nil:
			fmt.Fprintf(&b, "[card %s %s by %s]\n", p.card.ID, p.card.Status, p.card.DecidedBy)
		case p.user != "":
			fmt.Fprintf(&b, "[to %s] %s\n", p.user, p.reply.Text)
		case p.reply.Trace != nil:
			fmt.Fprintf(&b, "[trace %s] %s %s\n", p.reply.Trace.Outcome, p.reply.Trace.Tool, p.reply.Trace.Code)
		default:
			fmt.Fprintf(&b, "[%s] %s\n", p.reply.Kind, p.reply.Text)
		}
	}
	return b.String()
}

func (c *recChat) has(t bot.ThreadRef, text string) bool {
	return strings.Contains(c.transcript(t), text)
}

func (c *recChat) count(t bot.ThreadRef, text string) int {
	return strings.Count(c.transcript(t), text)
}

func (c *recChat) waitText(t *testing.T, th bot.ThreadRef, text string) {
	t.Helper()
	waitOn(t, &c.sig, fmt.Sprintf("%q in the thread", text), func() bool { return c.has(th, text) },
		func() string { return c.transcript(th) })
}

// cards returns every card posted or updated in the thread, in order.
func (c *recChat) cards(t bot.ThreadRef) []posted {
	var out []posted
	for _, p := range c.posts() {
		if p.thread == t && p.card != nil {
			out = append(out, p)
		}
	}
	return out
}

func (c *recChat) waitCard(t *testing.T, th bot.ThreadRef) bot.ApprovalCard {
	t.Helper()
	var card bot.ApprovalCard
	waitOn(t, &c.sig, "an approval card", func() bool {
		cs := c.cards(th)
		if len(cs) == 0 {
			return false
		}
		card = *cs[0].card
		return true
	}, func() string { return c.transcript(th) })
	return card
}

// runCall is one call the bot made of the runner.
type runCall struct {
	kind string // start, resume, continue, abandon
	in   agent.Input
	d    agent.Decision
	// err is the run context's error when the call returned.
	err error
}

// fakeRunner stands in for the agent. Each test scripts Start, Resume and
// Continue from the steps below (begin, answer, proposeWrite, ...), which
// do what agent.Agent does to a session at those points.
type fakeRunner struct {
	start  func(ctx context.Context, s *agent.Session, in agent.Input, env agent.RunEnv) agent.Outcome
	resume func(ctx context.Context, s *agent.Session, d agent.Decision, env agent.RunEnv) agent.Outcome
	cont   func(ctx context.Context, s *agent.Session, env agent.RunEnv) agent.Outcome

	sig   signal
	mu    sync.Mutex
	calls []runCall
	// entered receives a call as it begins (buffered; tests that block a
	// run read it to know the run is under way).
	entered chan runCall
	// executed counts approved calls that "ran".
	executed atomic.Int64
}

var _ bot.Runner = (*fakeRunner)(nil)

func newRunner() *fakeRunner {
	r := &fakeRunner{entered: make(chan runCall, 64)}
	r.start = func(ctx context.Context, s *agent.Session, in agent.Input, env agent.RunEnv) agent.Outcome {
		if err := begin(ctx, s, in, env); err != nil {
			return stopped(ctx, s, env, err)
		}
		return answer(ctx, s, env, "answer to "+in.Text)
	}
	r.resume = r.resumeDecision
	r.cont = func(ctx context.Context, s *agent.Session, env agent.RunEnv) agent.Outcome {
		return answer(ctx, s, env, "finished the interrupted run")
	}
	return r
}

func (r *fakeRunner) record(c runCall) {
	r.mu.Lock()
	r.calls = append(r.calls, c)
	r.mu.Unlock()
	r.sig.fire()
}

func (r *fakeRunner) Start(ctx context.Context, s *agent.Session, in agent.Input, env agent.RunEnv) (agent.Outcome, error) {
	r.entered <- runCall{kind: "start", in: in}
	out := r.start(ctx, s, in, env)
	r.record(runCall{kind: "start", in: in, err: ctx.Err()})
	return out, nil
}

func (r *fakeRunner) Resume(ctx context.Context, s *agent.Session, d agent.Decision, env agent.RunEnv) (agent.Outcome, error) {
	r.entered <- runCall{kind: "resume", d: d}
	out := r.resume(ctx, s, d, env)
	r.record(runCall{kind: "resume", d: d, err: ctx.Err()})
	return out, nil
}

func (r *fakeRunner) Continue(ctx context.Context, s *agent.Session, env agent.RunEnv) (agent.Outcome, error) {
	r.entered <- runCall{kind: "continue"}
	out := r.cont(ctx, s, env)
	r.record(runCall{kind: "continue", err: ctx.Err()})
	return out, nil
}

func (r *fakeRunner) Abandon(s *agent.Session, reason string) {
	s.Run = nil
	r.record(runCall{kind: "abandon", d: agent.Decision{Reason: reason}})
}

// of returns the finished calls of one kind.
func (r *fakeRunner) of(kind string) []runCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []runCall
	for _, c := range r.calls {
		if c.kind == kind {
			out = append(out, c)
		}
	}
	return out
}

func (r *fakeRunner) waitCalls(t *testing.T, kind string, n int) []runCall {
	t.Helper()
	waitOn(t, &r.sig, fmt.Sprintf("%d finished %s calls", n, kind), func() bool { return len(r.of(kind)) >= n }, nil)
	return r.of(kind)
}

// Runner steps.

func emit(ctx context.Context, s *agent.Session, env agent.RunEnv, e agent.Event) {
	e.Session = s.Key
	if s.Run != nil {
		e.Run = s.Run.ID
	}
	e.At = time.Now()
	env.Sink.Emit(ctx, e)
}

// checkpoint saves the session as the agent does before a side effect:
// not once the run is cancelled.
func checkpoint(ctx context.Context, s *agent.Session, env agent.RunEnv) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return env.Checkpoint(ctx, s)
}

// begin records a new run in the session and checkpoints it.
func begin(ctx context.Context, s *agent.Session, in agent.Input, env agent.RunEnv) error {
	s.Run = &agent.RunState{ID: in.RunID, Requester: in.Requester, Role: in.Role, Channel: in.Channel,
		Level: in.Level, StartedAt: time.Now()}
	s.History = append(s.History, agent.Message{Role: agent.RoleUser, Content: in.Text})
	emit(ctx, s, env, agent.Event{Type: agent.EventRunStarted, Text: in.Text})
	return checkpoint(ctx, s, env)
}

// answer ends the run with a final answer.
func answer(ctx context.Context, s *agent.Session, env agent.RunEnv, text string) agent.Outcome {
	s.History = append(s.History, agent.Message{Role: agent.RoleAssistant, Content: text})
	emit(ctx, s, env, agent.Event{Type: agent.EventFinalAnswer, Text: text})
	s.Run = nil
	return agent.Outcome{Status: agent.StatusDone, Answer: text}
}

// stopped ends the run on a failure (a cancelled context, a checkpoint
// that failed).
func stopped(ctx context.Context, s *agent.Session, env agent.RunEnv, err error) agent.Outcome {
	msg := "stopped: " + err.Error()
	emit(ctx, s, env, agent.Event{Type: agent.EventError, Text: msg})
	s.Run = nil
	return agent.Outcome{Status: agent.StatusFailed, Answer: msg}
}

// restart is the write the tests' runs propose.
var restart = tools.Proposal{
	Action:  policy.Action{Tool: "control", Name: "command", Kind: policy.KindWrite, Command: "systemctl restart nginx"},
	Summary: "restart nginx",
}

const restartArgs = `{"action":"command","command":"systemctl restart nginx"}`

// proposeWrite asks the real policy gate about the restart for the run's
// requester, as the agent's pre-check does. Refused (the role gate), the
// refusal is reported and the run answers; else the run stops at an
// approval.
func proposeWrite(ctx context.Context, s *agent.Session, env agent.RunEnv) agent.Outcome {
	s.Policy.FSM.OnToolSuccess(policy.KindResolve, "query", "web1")
	dec := policy.NewGate(policy.Rules{}).Authorize(s.Policy, restart.Action, s.Run.Level, s.Run.Role, time.Now())
	call := agent.ToolCall{ID: "w1", Name: restart.Tool, Arguments: restartArgs}
	s.History = append(s.History, agent.Message{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{call}})
	if dec.Block != nil {
		env2 := tools.Blocked(dec.Block)
		p := restart
		emit(ctx, s, env, agent.Event{Type: agent.EventToolResult, CallID: call.ID, Proposal: &p, Result: &env2, Code: string(dec.Block.Code)})
		s.History = append(s.History, agent.Message{Role: agent.RoleTool, ToolCallID: call.ID, Content: env2.JSON()})
		return answer(ctx, s, env, "I may not make that change for you.")
	}
	if !dec.NeedsApproval {
		panic(fmt.Sprintf("the gate let the restart run unapproved: %+v", dec))
	}
	s.Run.Pending = &agent.PendingBatch{Calls: []agent.ToolCall{call}, Results: map[string]string{}, ApprovalCallID: call.ID}
	need := &agent.ApprovalNeeded{CallID: call.ID, Proposal: restart, Args: restartArgs, Risk: dec.Risk, Reasons: dec.Reasons}
	emit(ctx, s, env, agent.Event{Type: agent.EventApprovalNeeded, CallID: call.ID, Proposal: &need.Proposal, Approval: need})
	return agent.Outcome{Status: agent.StatusAwaitingApproval, Approval: need}
}

// resumeDecision does what the agent does with a decision: an approved
// call passes BeforeExecute (the bot's claim) and "runs"; a denial or a
// refused claim is reported. Either way the run answers.
func (r *fakeRunner) resumeDecision(ctx context.Context, s *agent.Session, d agent.Decision, env agent.RunEnv) agent.Outcome {
	pb := s.Run.Pending
	s.Run.Pending = nil
	p := restart
	switch {
	case d.Expired:
		return answer(ctx, s, env, "The approval expired.")
	case !d.Approved:
		return answer(ctx, s, env, "Denied by "+d.By+".")
	}
	if d.BeforeExecute != nil {
		if err := d.BeforeExecute(ctx, p, restartArgs); err != nil {
			res := tools.Envelope{Error: &tools.ErrorInfo{Code: policy.CodeActionNotAllowed, Blocked: true, Message: err.Error()}}
			emit(ctx, s, env, agent.Event{Type: agent.EventToolResult, CallID: pb.ApprovalCallID, Proposal: &p, Result: &res})
			return answer(ctx, s, env, "The approved change was refused: "+err.Error())
		}
	}
	r.executed.Add(1)
	res := tools.OK(map[string]any{"restarted": "nginx"})
	emit(ctx, s, env, agent.Event{Type: agent.EventToolResult, CallID: pb.ApprovalCallID, Proposal: &p, Result: &res})
	return answer(ctx, s, env, "Restarted nginx.")
}

// clock is a settable clock for the memory store, so a test can let a
// thread lock expire at will.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Now()} }

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// fakeClock is a bot.Clock a test moves by hand (advance). Timers that
// fall due run in advance, one after another in the order they fall due,
// with the clock set to their time; a timer of no duration runs at once.
type fakeClock struct {
	mu     sync.Mutex
	t      time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	at time.Time
	f  func()
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Now()} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) func() bool {
	if d <= 0 {
		go f()
		return func() bool { return false }
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	tm := &fakeTimer{at: c.t.Add(d), f: f}
	c.timers = append(c.timers, tm)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		for i, x := range c.timers {
			if x == tm {
				c.timers = append(c.timers[:i], c.timers[i+1:]...)
				return true
			}
		}
		return false
	}
}

// advance moves the clock by d, running every timer due meanwhile
// (including those the timers set) before it returns.
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	end := c.t.Add(d)
	for {
		next := -1
		for i, tm := range c.timers {
			if !tm.at.After(end) && (next < 0 || tm.at.Before(c.timers[next].at)) {
				next = i
			}
		}
		if next < 0 {
			break
		}
		tm := c.timers[next]
		c.timers = append(c.timers[:next], c.timers[next+1:]...)
		if tm.at.After(c.t) {
			c.t = tm.at
		}
		c.mu.Unlock()
		tm.f()
		c.mu.Lock()
	}
	c.t = end
	c.mu.Unlock()
}

// watchedLocks reports every attempt to take a lock.
type watchedLocks struct {
	bot.Locker
	sig    signal
	mu     sync.Mutex
	refuse map[string]int // refused attempts by key
}

func (w *watchedLocks) Lock(ctx context.Context, key string, ttl time.Duration) (bot.Lock, error) {
	l, err := w.Locker.Lock(ctx, key, ttl)
	if err != nil {
		w.mu.Lock()
		if w.refuse == nil {
			w.refuse = map[string]int{}
		}
		w.refuse[key]++
		w.mu.Unlock()
	}
	w.sig.fire()
	return l, err
}

func (w *watchedLocks) refused(key string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.refuse[key]
}

// watchedRuns reports every listing of the runs in progress: each is one
// pass of a replica's orphan finder.
type watchedRuns struct {
	bot.RunIndex
	sig   signal
	lists atomic.Int64
}

func (w *watchedRuns) ActiveRuns(ctx context.Context) ([]bot.ThreadRef, error) {
	refs, err := w.RunIndex.ActiveRuns(ctx)
	w.lists.Add(1)
	w.sig.fire()
	return refs, err
}

// replica is one bot with its runner and chat over some stores.
type replica struct {
	bot    *bot.Bot
	runner *fakeRunner
	chat   *recChat
	locks  *watchedLocks
	runs   *watchedRuns
	stores bot.Stores
	stop   context.CancelFunc
	done   chan error
}

type replicaOptions struct {
	// resolver and alertSlots are the bot's Resolver and
	// MaxConcurrentInvestigations.
	resolver      bot.Resolver
	alertSlots    int
	alertDebounce time.Duration
	stores        bot.Stores
	runner        *fakeRunner
	lockTTL       time.Duration
	sweepEvery    time.Duration
	// noRun leaves the bot's Run loop (sweeper, shutdown) unstarted.
	noRun bool
	// clock, when set, is the bot's clock (the alert debounce and sweep
	// wait on it).
	clock bot.Clock
	// observer is the bot's Observer (nil: none).
	observer bot.Observer
}

// memStores returns fresh memory stores on clk (nil: the real clock).
func memStores(clk *clock) bot.Stores {
	if clk == nil {
		return store.NewMemory().Stores()
	}
	return store.NewMemory(store.WithClock(clk.now)).Stores()
}

// newReplica builds and runs a bot; the test's cleanup stops it.
func newReplica(t *testing.T, o replicaOptions) *replica {
	t.Helper()
	if o.stores.Sessions == nil {
		o.stores = memStores(nil)
	}
	if o.runner == nil {
		o.runner = newRunner()
	}
	if o.sweepEvery == 0 {
		o.sweepEvery = time.Hour
	}
	r := &replica{runner: o.runner, chat: &recChat{}, done: make(chan error, 1)}
	r.locks = &watchedLocks{Locker: o.stores.Locks}
	r.runs = &watchedRuns{RunIndex: o.stores.Runs}
	r.stores = o.stores
	r.stores.Locks = r.locks
	r.stores.Runs = r.runs
	ch, err := bot.NewChannels(channels)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bot.New(bot.Options{Agent: r.runner, Stores: r.stores, Channels: ch, LockTTL: o.lockTTL, SweepEvery: o.sweepEvery,
		Resolver: o.resolver, MaxConcurrentInvestigations: o.alertSlots, AlertDebounce: o.alertDebounce, AlertSweep: true,
		Clock: o.clock, Observer: o.observer})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Register(r.chat); err != nil {
		t.Fatal(err)
	}
	r.bot = b
	ctx, cancel := context.WithCancel(context.Background())
	r.stop = cancel
	if o.noRun {
		r.done <- nil
	} else {
		go func() { r.done <- b.Run(ctx) }()
	}
	t.Cleanup(func() {
		cancel()
		if err := <-r.done; err != nil {
			t.Errorf("bot.Run: %v", err)
		}
		ictx, icancel := context.WithTimeout(context.Background(), wait)
		defer icancel()
		if err := b.WaitIdle(ictx); err != nil {
			t.Errorf("bot not idle at the end: %v", err)
		}
	})
	return r
}

var eventSeq atomic.Int64

// halt stops the replica and waits until its Run has returned.
func (r *replica) halt(t *testing.T) {
	t.Helper()
	r.stop()
	select {
	case err := <-r.done:
		r.done <- err // for the cleanup
	case <-time.After(wait):
		t.Fatal("bot.Run did not return after its context ended")
	}
}

// say delivers a message from user, addressed to the bot.
func (r *replica) say(th bot.ThreadRef, user, text string) {
	r.bot.HandleMessage(context.Background(), bot.Message{
		EventID: fmt.Sprint("ev", eventSeq.Add(1)), Thread: th, User: user, UserName: user,
		Text: text, Addressed: true, At: time.Now(),
	})
}

// click delivers a click on a card's button.
func (r *replica) click(th bot.ThreadRef, user string, card bot.ApprovalCard, approve bool) {
	r.bot.HandleDecision(context.Background(), bot.Decision{
		EventID: fmt.Sprint("ev", eventSeq.Add(1)), ApprovalID: card.ID, Token: card.Token, FromButton: true,
		Approve: approve, User: user, UserName: user, Thread: th, At: time.Now(),
	})
}

// idle waits until the bot has nothing queued or running.
func (r *replica) idle(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := r.bot.WaitIdle(ctx); err != nil {
		t.Fatalf("bot not idle: %v", err)
	}
}

// approval returns the stored approval behind a card.
func (r *replica) approval(t *testing.T, id string) *policy.Approval {
	t.Helper()
	a, err := r.stores.Approvals.GetApproval(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// session returns the stored session of a thread.
func (r *replica) session(t *testing.T, th bot.ThreadRef) *agent.Session {
	t.Helper()
	s, err := r.stores.Sessions.LoadSession(context.Background(), th.Key())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

package bot_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/bot"
	"github.com/vigilops/vigil/internal/testenv/modeltest"
	"github.com/vigilops/vigil/internal/testenv/testkit"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/policy/audit"
	"github.com/vigilops/vigil/store"
)

const wait = 20 * time.Second

var errDown = errors.New("state store unreachable (test outage)")

// flakyStore is the in-memory store behind a switch: while down, every
// call fails as an unreachable Redis would. downAfterClaim takes it down
// the moment an approval is claimed for execution, the worst moment: the
// call runs, and nothing about it can be saved.
type flakyStore struct {
	mem            *store.Memory
	down           atomic.Bool
	downAfterClaim atomic.Bool
	// auditDown fails the audit chain alone.
	auditDown atomic.Bool
	// lateAppends counts appends that land but report a failure, as an
	// append that timed out on the client but reached Redis does.
	lateAppends atomic.Int32
}

func (f *flakyStore) err() error {
	if f.down.Load() {
		return errDown
	}
	return nil
}

func (f *flakyStore) stores() bot.Stores {
	mem := f.mem.Stores()
	return bot.Stores{Sessions: f, Approvals: f, Audit: f, Dedup: f, Locks: f, Runs: flakyRuns{f, mem.Runs}}
}

func (f *flakyStore) LoadSession(ctx context.Context, key string) (*agent.Session, error) {
	if err := f.err(); err != nil {
		return nil, err
	}
	return f.mem.LoadSession(ctx, key)
}

func (f *flakyStore) SessionExists(ctx context.Context, key string) (bool, error) {
	if err := f.err(); err != nil {
		return false, err
	}
	return f.mem.SessionExists(ctx, key)
}

func (f *flakyStore) SaveSession(ctx context.Context, s *agent.Session) error {
	if err := f.err(); err != nil {
		return err
	}
	return f.mem.SaveSession(ctx, s)
}

func (f *flakyStore) CreateApproval(ctx context.Context, a *policy.Approval) error {
	if err := f.err(); err != nil {
		return err
	}
	return f.mem.CreateApproval(ctx, a)
}

func (f *flakyStore) GetApproval(ctx context.Context, id string) (*policy.Approval, error) {
	if err := f.err(); err != nil {
		return nil, err
	}
	return f.mem.GetApproval(ctx, id)
}

func (f *flakyStore) UpdateApproval(ctx context.Context, id string, step policy.Transition) (*policy.Approval, error) {
	if err := f.err(); err != nil {
		return nil, err
	}
	a, err := f.mem.UpdateApproval(ctx, id, step)
	if err == nil && a.Status == policy.ApprovalExecuting && f.downAfterClaim.Load() {
		f.down.Store(true)
	}
	return a, err
}

func (f *flakyStore) ListPending(ctx context.Context) ([]*policy.Approval, error) {
	if err := f.err(); err != nil {
		return nil, err
	}
	return f.mem.ListPending(ctx)
}

func (f *flakyStore) ListExecuting(ctx context.Context) ([]*policy.Approval, error) {
	if err := f.err(); err != nil {
		return nil, err
	}
	return f.mem.ListExecuting(ctx)
}

func (f *flakyStore) AppendAudit(ctx context.Context, r audit.Record) (audit.Record, error) {
	if err := f.err(); err != nil {
		return audit.Record{}, err
	}
	if f.auditDown.Load() {
		return audit.Record{}, errDown
	}
	rec, err := f.mem.AppendAudit(ctx, r)
	if err == nil && f.lateAppends.Add(-1) >= 0 {
		return audit.Record{}, context.DeadlineExceeded
	}
	return rec, err
}

func (f *flakyStore) RecentAudit(ctx context.Context, n int) ([]audit.Record, error) {
	if err := f.err(); err != nil {
		return nil, err
	}
	if f.auditDown.Load() {
		return nil, errDown
	}
	return f.mem.RecentAudit(ctx, n)
}

func (f *flakyStore) FirstSeen(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	if err := f.err(); err != nil {
		return false, err
	}
	return f.mem.FirstSeen(ctx, key, ttl)
}

func (f *flakyStore) Lock(ctx context.Context, key string, ttl time.Duration) (bot.Lock, error) {
	if err := f.err(); err != nil {
		return nil, err
	}
	l, err := f.mem.Lock(ctx, key, ttl)
	if err != nil {
		return nil, err
	}
	return flakyLock{f, l}, nil
}

type flakyLock struct {
	f *flakyStore
	l bot.Lock
}

func (l flakyLock) Renew(ctx context.Context) error {
	if err := l.f.err(); err != nil {
		return err
	}
	return l.l.Renew(ctx)
}

func (l flakyLock) Unlock(ctx context.Context) error {
	if err := l.f.err(); err != nil {
		return err
	}
	return l.l.Unlock(ctx)
}

type flakyRuns struct {
	f    *flakyStore
	runs bot.RunIndex
}

func (r flakyRuns) MarkActive(ctx context.Context, t bot.ThreadRef) error {
	if err := r.f.err(); err != nil {
		return err
	}
	return r.runs.MarkActive(ctx, t)
}

func (r flakyRuns) MarkIdle(ctx context.Context, key string) error {
	if err := r.f.err(); err != nil {
		return err
	}
	return r.runs.MarkIdle(ctx, key)
}

func (r flakyRuns) ActiveRuns(ctx context.Context) ([]bot.ThreadRef, error) {
	if err := r.f.err(); err != nil {
		return nil, err
	}
	return r.runs.ActiveRuns(ctx)
}

func discover() modeltest.ToolCall {
	return modeltest.Call("discover", testkit.Args("resource", "localhost"))
}

func appendLine(file string) modeltest.ToolCall {
	return modeltest.Call("control", testkit.Args("action", "command", "target", "localhost", "command", testkit.AppendLine(file)))
}

func readFile(file string) modeltest.ToolCall {
	return modeltest.Call("read", testkit.Args("action", "exec", "target", "localhost", "command", "cat "+file))
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", wait, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// allAudit is the whole chain the store holds.
func allAudit(t *testing.T, f *flakyStore) []audit.Record {
	t.Helper()
	recs, err := f.mem.RecentAudit(context.Background(), 100000)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func count(recs []audit.Record, action audit.Action, approval string) int {
	n := 0
	for _, r := range recs {
		if r.Action == action && r.ApprovalID == approval {
			n++
		}
	}
	return n
}

// The store goes away the moment an approved call is claimed: the call
// runs, and neither its "executed" record nor the approval's new status
// can be saved. The record is in the audit file at once and waits in the
// outbox; when the store returns it reaches the chain, in order, the
// chain verifies, the approval is settled as executed, the waiting run is
// closed with the call's result, and nothing runs twice.
func TestAuditSurvivesStoreOutage(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	auditFile := filepath.Join(dir, "audit.jsonl")
	model := modeltest.New(t)
	model.Script(
		modeltest.Calls(discover()),
		modeltest.Calls(appendLine(target)),
		modeltest.Calls(readFile(target)), // after the write; its checkpoint fails
		modeltest.Calls(readFile(target)), // the next question verifies the change first
		modeltest.Text("all good"),
	)
	f := &flakyStore{mem: store.NewMemory()}
	stores := f.stores()
	chat := testkit.NewChat()
	st := testkit.Start(t, testkit.Options{
		Adapter: chat, Model: model, Stores: &stores, AuditFile: auditFile,
		Channels: []policy.ChannelPolicy{{Match: "testchat:ops", Level: policy.LevelControlled,
			Operators: []string{"alice"}, Approvers: []string{"bob"}}},
		LockTTL: 3 * time.Second,
	})
	th := testkit.Thread("ops", "t1")
	chat.Say(t, th, "alice", "append a line on @localhost")
	card := chat.WaitCard(t, th, wait)
	ctx := context.Background()
	if err := st.Bot.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}

	f.downAfterClaim.Store(true)
	chat.Decide(t, bot.Decision{EventID: "click-1", ApprovalID: card.ID, Token: card.Token, Approve: true, User: "bob", Thread: th})
	chat.WaitText(t, th, "[trace ok] control command localhost", wait)
	waitUntil(t, "the run to stop on the outage", func() bool { return st.Bot.WaitIdle(ctx) == nil && model.Count() >= 3 })
	if err := st.Bot.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	if n := testkit.LineCount(t, target); n != 1 {
		t.Fatalf("the approved call ran %d times", n)
	}
	// During the outage: the file has the record; the chain does not; the
	// approval is stuck executing; the outbox holds the record on disk.
	fileRecs, err := audit.ReadFile(auditFile)
	if err != nil {
		t.Fatal(err)
	}
	if count(fileRecs, audit.Executed, card.ID) != 1 {
		t.Fatalf("the audit file lacks the executed record during the outage:\n%+v", fileRecs)
	}
	if count(allAudit(t, f), audit.Executed, card.ID) != 0 {
		t.Fatal("the chain has the executed record although the store was down")
	}
	if a, _ := f.mem.GetApproval(ctx, card.ID); a.Status != policy.ApprovalExecuting {
		t.Fatalf("approval is %s during the outage, want executing", a.Status)
	}
	waiting, err := audit.OpenSpool(auditFile + ".outbox")
	if err != nil {
		t.Fatal(err)
	}
	spooled := waiting.Peek(100)
	waiting.Close()
	if len(spooled) == 0 || spooled[0].Action != audit.Executed || spooled[0].ApprovalID != card.ID {
		t.Fatalf("the outbox file does not hold the executed record: %+v", spooled)
	}

	f.down.Store(false)
	waitUntil(t, "the approval to be settled", func() bool {
		a, err := f.mem.GetApproval(ctx, card.ID)
		return err == nil && a.Status != policy.ApprovalExecuting
	})
	chat.WaitText(t, th, "ran while my state store was unreachable; its result: ok", wait)
	if err := st.Bot.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	a, _ := f.mem.GetApproval(ctx, card.ID)
	if a.Status != policy.ApprovalExecuted {
		t.Fatalf("approval settled as %s, want executed (the chain records its result)", a.Status)
	}

	recs := allAudit(t, f)
	if err := audit.VerifyChain(recs); err != nil {
		t.Fatalf("the chain is broken after the outage: %v", err)
	}
	if n := count(recs, audit.Executed, card.ID); n != 1 {
		t.Fatalf("the chain holds %d executed records for %s, want 1", n, card.ID)
	}
	if n := count(recs, audit.Settled, card.ID); n != 1 {
		t.Fatalf("the chain holds %d settled records, want 1", n)
	}
	order := []audit.Action{}
	for _, r := range recs {
		if r.ApprovalID == card.ID {
			order = append(order, r.Action)
		}
	}
	if want := []audit.Action{audit.ApprovalRequested, audit.Approved, audit.Executed, audit.Settled}; !equalActions(order, want) {
		t.Fatalf("the approval's records are %v, want %v", order, want)
	}
	if n, err := audit.VerifyFile(auditFile); err != nil {
		t.Fatalf("vigil audit verify would fail on the audit file (%d records): %v", n, err)
	}
	if raw, err := os.ReadFile(auditFile + ".outbox"); err != nil || len(raw) != 0 {
		t.Fatalf("the outbox file should be empty once delivered: %q %v", raw, err)
	}

	s, err := f.mem.LoadSession(ctx, th.Key())
	if err != nil {
		t.Fatal(err)
	}
	if s.Run != nil {
		t.Fatalf("the run waiting on the approval was not closed: %+v", s.Run)
	}
	if !strings.Contains(lastToolResult(s), "ran while vigil's state store was unreachable") {
		t.Fatalf("the history does not record the call's result: %q", lastToolResult(s))
	}

	// Nothing runs twice: a second click is refused, and the thread works.
	chat.Decide(t, bot.Decision{EventID: "click-2", ApprovalID: card.ID, Token: card.Token, Approve: true, User: "bob", Thread: th})
	chat.Say(t, th, "alice", "and now, how is @localhost?")
	chat.WaitText(t, th, "[answer] all good", wait)
	if err := st.Bot.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	if n := testkit.LineCount(t, target); n != 1 {
		t.Fatalf("the approved call ran %d times in all, want 1", n)
	}
	if notes := strings.Join(chat.Notes("bob"), "\n"); !strings.Contains(notes, "already approved") {
		t.Fatalf("the second click was not refused: notes %q\n%s", notes, chat.Transcript(th))
	}
}

func equalActions(a, b []audit.Action) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func lastToolResult(s *agent.Session) string {
	for i := len(s.History) - 1; i >= 0; i-- {
		if s.History[i].Role == agent.RoleTool {
			return s.History[i].Content
		}
	}
	return ""
}

// startBot runs a stack's bot until the returned stop is called (a
// process that is shut down, or dies), so a test can start another on the
// same state.
func startBot(t *testing.T, o testkit.Options) (*testkit.Stack, func()) {
	t.Helper()
	o.NoRun = true
	st := testkit.Start(t, o)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- st.Bot.Run(ctx) }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case <-done:
		case <-time.After(wait):
			t.Fatal("the bot did not stop")
		}
		if err := st.App.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}
	t.Cleanup(stop)
	return st, stop
}

// Records made while the chain is unreachable reach it in the order they
// were made, each once, even when some appends land but report a failure
// (a timeout after Redis took the record); the audit file has them all
// at once, in the same order.
func TestAuditOutboxOrderAndNoDuplicates(t *testing.T) {
	dir := t.TempDir()
	auditFile := filepath.Join(dir, "audit.jsonl")
	model := modeltest.New(t)
	var reads []modeltest.ToolCall
	for i := range 6 {
		reads = append(reads, modeltest.Call("read", testkit.Args("action", "exec", "target", "localhost", "command", "echo line-"+string(rune('a'+i)))))
	}
	model.Script(modeltest.Calls(discover()), modeltest.Calls(reads...), modeltest.Text("done"))
	f := &flakyStore{mem: store.NewMemory()}
	stores := f.stores()
	chat := testkit.NewChat()
	st := testkit.Start(t, testkit.Options{Adapter: chat, Model: model, Stores: &stores, AuditFile: auditFile,
		Channels: []policy.ChannelPolicy{{Match: "testchat:ops", Level: policy.LevelReadOnly}}})
	ctx := context.Background()

	f.auditDown.Store(true)
	th := testkit.Thread("ops", "t1")
	chat.Say(t, th, "alice", "look around @localhost")
	chat.WaitText(t, th, "[answer] done", wait)
	if err := st.Bot.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	fileRecs, err := audit.ReadFile(auditFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(fileRecs) != 7 {
		t.Fatalf("the audit file has %d records during the outage, want 7 (discover and 6 reads)", len(fileRecs))
	}
	if n := len(allAudit(t, f)); n != 0 {
		t.Fatalf("the chain took %d records while it was down", n)
	}

	f.lateAppends.Store(2)
	f.auditDown.Store(false)
	// Once the outbox beside the audit file is empty the delivery is over:
	// a record leaves it only after the chain holds it, so no duplicate
	// can still be on its way.
	waitUntil(t, "the waiting records to reach the chain and leave the outbox", func() bool {
		raw, err := os.ReadFile(auditFile + ".outbox")
		return err == nil && len(raw) == 0 && len(allAudit(t, f)) >= 7
	})
	recs := allAudit(t, f)
	if err := audit.VerifyChain(recs); err != nil {
		t.Fatalf("chain broken: %v", err)
	}
	if len(recs) != len(fileRecs) {
		t.Fatalf("the chain has %d records, the file %d: lost or duplicated", len(recs), len(fileRecs))
	}
	for i := range recs {
		if !audit.SameRecord(recs[i], fileRecs[i]) {
			t.Fatalf("record %d differs between chain and file (out of order?):\nchain %+v\nfile  %+v", i+1, recs[i], fileRecs[i])
		}
	}
}

// Records waiting on disk survive a restart: a vigil that stops while the
// chain is down leaves them in state_dir, and the next one delivers them
// as it starts.
func TestAuditOutboxSurvivesRestart(t *testing.T) {
	stateDir := t.TempDir()
	model := modeltest.New(t)
	model.Script(modeltest.Calls(discover()), modeltest.Calls(modeltest.Call("read", testkit.Args("action", "exec", "target", "localhost", "command", "uptime"))), modeltest.Text("done"))
	f := &flakyStore{mem: store.NewMemory()}
	stores := f.stores()
	channels := []policy.ChannelPolicy{{Match: "testchat:ops", Level: policy.LevelReadOnly}}

	chat1 := testkit.NewChat()
	st1, stop1 := startBot(t, testkit.Options{Adapter: chat1, Model: model, Stores: &stores, StateDir: stateDir, Channels: channels})
	f.auditDown.Store(true)
	th := testkit.Thread("ops", "t1")
	chat1.Say(t, th, "alice", "uptime of @localhost?")
	chat1.WaitText(t, th, "[answer] done", wait)
	if err := st1.Bot.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	stop1()
	spool, err := audit.OpenSpool(filepath.Join(stateDir, "audit-outbox.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	waiting := spool.Peek(100)
	spool.Close()
	if len(waiting) != 2 {
		t.Fatalf("%d records wait on disk after the stop, want 2", len(waiting))
	}

	f.auditDown.Store(false)
	startBot(t, testkit.Options{Adapter: testkit.NewChat(), Model: model, Stores: &stores, StateDir: stateDir, Channels: channels})
	waitUntil(t, "the records from before the restart to reach the chain", func() bool { return len(allAudit(t, f)) >= 2 })
	recs := allAudit(t, f)
	if len(recs) != 2 || !audit.SameRecord(recs[0], waiting[0]) || !audit.SameRecord(recs[1], waiting[1]) {
		t.Fatalf("chain after restart: %+v\nwant the waiting records %+v", recs, waiting)
	}
	if err := audit.VerifyChain(recs); err != nil {
		t.Fatal(err)
	}
}

// vigil dies during an outage with the call's record in memory only: when
// a vigil starts again nobody knows whether the call ran. The approval is
// settled as failed, the waiting run is closed saying so, the thread is
// told to check the target, and the call is never run again.
func TestSettleUnknownOutcomeAsFailed(t *testing.T) {
	target := filepath.Join(t.TempDir(), "target")
	model := modeltest.New(t)
	model.Script(modeltest.Calls(discover()), modeltest.Calls(appendLine(target)), modeltest.Calls(readFile(target)))
	f := &flakyStore{mem: store.NewMemory()}
	stores := f.stores()
	channels := []policy.ChannelPolicy{{Match: "testchat:ops", Level: policy.LevelControlled,
		Operators: []string{"alice"}, Approvers: []string{"bob"}}}

	chat1 := testkit.NewChat()
	st1, stop1 := startBot(t, testkit.Options{Adapter: chat1, Model: model, Stores: &stores, Channels: channels, LockTTL: 3 * time.Second})
	th := testkit.Thread("ops", "t1")
	chat1.Say(t, th, "alice", "append a line on @localhost")
	card := chat1.WaitCard(t, th, wait)
	ctx := context.Background()
	if err := st1.Bot.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	f.downAfterClaim.Store(true)
	chat1.Decide(t, bot.Decision{EventID: "click-1", ApprovalID: card.ID, Token: card.Token, Approve: true, User: "bob", Thread: th})
	chat1.WaitText(t, th, "I stopped", wait)
	if err := st1.Bot.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	stop1() // dies: its outbox was in memory only
	f.downAfterClaim.Store(false)
	f.down.Store(false)
	if n := count(allAudit(t, f), audit.Executed, card.ID); n != 0 {
		t.Fatalf("the chain has %d executed records; this test needs the record lost", n)
	}

	chat2 := testkit.NewChat()
	startBot(t, testkit.Options{Adapter: chat2, Model: model, Stores: &stores, Channels: channels})
	chat2.WaitText(t, th, "I cannot tell whether it took effect", wait)
	a, _ := f.mem.GetApproval(ctx, card.ID)
	if a.Status != policy.ApprovalFailed {
		t.Fatalf("approval is %s, want failed", a.Status)
	}
	recs := allAudit(t, f)
	if err := audit.VerifyChain(recs); err != nil {
		t.Fatal(err)
	}
	var settled *audit.Record
	for i := range recs {
		if recs[i].Action == audit.Settled && recs[i].ApprovalID == card.ID {
			settled = &recs[i]
		}
	}
	if settled == nil || settled.Outcome != "failed" || !strings.Contains(settled.Reason, "unknown") {
		t.Fatalf("no settled record saying failed/unknown: %+v", settled)
	}
	s, err := f.mem.LoadSession(ctx, th.Key())
	if err != nil || s.Run != nil {
		t.Fatalf("the waiting run was not closed: %+v %v", s, err)
	}
	if !strings.Contains(lastToolResult(s), "whether it took effect is unknown") {
		t.Fatalf("the history does not say the outcome is unknown: %q", lastToolResult(s))
	}
	chat2.Decide(t, bot.Decision{EventID: "click-2", ApprovalID: card.ID, Token: card.Token, Approve: true, User: "bob", Thread: th})
	if notes := strings.Join(chat2.Notes("bob"), "\n"); !strings.Contains(notes, "will not run again") {
		t.Fatalf("a click on the failed approval was not refused: %q", notes)
	}
	if n := testkit.LineCount(t, target); n != 1 {
		t.Fatalf("the call ran %d times, want 1", n)
	}
}

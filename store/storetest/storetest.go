// Package storetest is the conformance suite every implementation of the
// bot's stores must pass: the in-memory store now, the Redis store later.
// It states the contract the bot relies on — copies not aliases, atomic
// compare-and-set on approvals, a gapless audit chain under concurrent
// writers, expiring dedup keys and locks — as tests.
//
// Use it from the implementation's tests:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) bot.Stores { return store.NewMemory().Stores() })
//	}
//
// open is called once per subtest and must return empty stores (for Redis,
// a fresh key prefix). Time-based cases use real time with short TTLs, so
// they hold for a backend whose clock is not the test's.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/bot"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/policy/audit"
	"github.com/vigilops/vigil/policy/command"
)

// Run runs every conformance test against stores from open.
func Run(t *testing.T, open func(t *testing.T) bot.Stores) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(*testing.T, bot.Stores)
	}{
		{"SessionRoundTrip", testSessionRoundTrip},
		{"SessionNotFound", testSessionNotFound},
		{"SessionExists", testSessionExists},
		{"SessionCopies", testSessionCopies},
		{"ApprovalRoundTrip", testApprovalRoundTrip},
		{"ApprovalNotFound", testApprovalNotFound},
		{"ApprovalCreateTwice", testApprovalCreateTwice},
		{"ApprovalTransitions", testApprovalTransitions},
		{"ApprovalCASRace", testApprovalCASRace},
		{"ApprovalListPending", testApprovalListPending},
		{"ApprovalListExecuting", testApprovalListExecuting},
		{"AuditChain", testAuditChain},
		{"AuditConcurrentAppenders", testAuditConcurrent},
		{"Dedup", testDedup},
		{"LockExclusive", testLockExclusive},
		{"LockRenewUnlock", testLockRenewUnlock},
		{"LockExpiry", testLockExpiry},
		{"FencedSave", testFencedSave},
		{"FencedSaveLostLock", testFencedSaveLostLock},
		{"LockAndLoad", testLockAndLoad},
		{"RunIndex", testRunIndex},
		{"RateLimit", testRateLimit},
		{"AlertGroupRoundTrip", testAlertGroupRoundTrip},
		{"AlertGroupExpiry", testAlertGroupExpiry},
		{"AlertGroupOpenedOnce", testAlertGroupOpenedOnce},
		{"AlertGroupDue", testAlertGroupDue},
		{"AlertGroupDueSkipsExpired", testAlertGroupDueSkipsExpired},
		{"AlertOpenGroupLimit", testAlertOpenGroupLimit},
		{"AlertOpenGroupConcurrent", testAlertOpenGroupConcurrent},
		{"AlertOpenGroupIdle", testAlertOpenGroupIdle},
		{"AlertEventClaims", testAlertEventClaims},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, open(t))
		})
	}
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// jsonOf is how the suite compares stored values: what a store must keep is
// exactly what the value's JSON says.
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sampleSession is a session in the middle of a run: history with tool
// calls, an FSM awaiting verification, resolved resources (one explicit,
// one pinned), and a batch waiting on an approval.
func sampleSession(key string) *agent.Session {
	now := time.Now().UTC().Truncate(time.Millisecond)
	ps := policy.NewSessionState()
	ps.Context.AddExplicit(policy.Resource{ID: "lxc:delly:141", Kind: "lxc", Name: "web1", Aliases: []string{"www"},
		Parent: "node:delly", Node: "delly", Target: "web1"}, now)
	ps.Context.Add(policy.Resource{ID: "node:delly", Kind: "node", Name: "delly"}, now)
	ps.Context.Pin("node:delly")
	ps.FSM.OnToolSuccess(policy.KindRead, "read", "web1")
	ps.FSM.OnToolSuccess(policy.KindWrite, "control", "web1")
	calls := []agent.ToolCall{
		{ID: "call_1", Name: "read", Arguments: `{"target":"web1","command":"systemctl status nginx"}`},
		{ID: "call_2", Name: "control", Arguments: `{"target":"web1","action":"restart","service":"nginx"}`},
	}
	return &agent.Session{
		Key: key,
		History: []agent.Message{
			{Role: agent.RoleUser, Content: "nginx on @web1 is down"},
			{Role: agent.RoleAssistant, ToolCalls: calls},
			{Role: agent.RoleTool, ToolCallID: "call_1", Name: "read", Content: `{"ok":true,"output":"inactive (dead)"}`},
		},
		Policy: ps,
		Run: &agent.RunState{
			ID: "run_1", Requester: "U_REQ", Channel: "slack:C1", Turn: 2, ToolCalls: 2,
			CallCounts: map[string]int{"read:abc": 1},
			Recovered:  map[string]bool{"read:def": true},
			Succeeded:  1,
			Pending: &agent.PendingBatch{
				Calls:          calls,
				Results:        map[string]string{"call_1": `{"ok":true}`},
				ApprovalCallID: "call_2",
				ApprovalID:     "abcdefghij",
			},
			Usage:     agent.Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15},
			StartedAt: now,
		},
		Usage:     agent.Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15},
		CreatedAt: now,
		UpdatedAt: now,
	}
}

func testSessionRoundTrip(t *testing.T, st bot.Stores) {
	ctx := ctxFor(t)
	s := sampleSession("slack:C1:1700000000.000100")
	want := jsonOf(t, s)
	if err := st.Sessions.SaveSession(ctx, s); err != nil {
		t.Fatal(err)
	}
	got, err := st.Sessions.LoadSession(ctx, s.Key)
	if err != nil {
		t.Fatal(err)
	}
	if g := jsonOf(t, got); g != want {
		t.Errorf("loaded session differs:\n got %s\nwant %s", g, want)
	}
	if got.Policy == nil || got.Policy.FSM.State != s.Policy.FSM.State {
		t.Errorf("FSM state lost: %+v", got.Policy)
	}
	if r, ok := got.Policy.Context.Lookup("www", time.Now()); !ok || r.ID != "lxc:delly:141" {
		t.Errorf("resolved context lost: %+v %v", r, ok)
	}
	if got.Run == nil || got.Run.Pending == nil || got.Run.Pending.ApprovalID != "abcdefghij" || len(got.Run.Pending.Calls) != 2 {
		t.Errorf("pending batch lost: %+v", got.Run)
	}

	// Saving again replaces.
	got.Run = nil
	got.History = append(got.History, agent.Message{Role: agent.RoleAssistant, Content: "done"})
	if err := st.Sessions.SaveSession(ctx, got); err != nil {
		t.Fatal(err)
	}
	again, err := st.Sessions.LoadSession(ctx, s.Key)
	if err != nil {
		t.Fatal(err)
	}
	if again.Run != nil || len(again.History) != 4 {
		t.Errorf("second save not stored: run %+v, %d messages", again.Run, len(again.History))
	}
}

func testSessionNotFound(t *testing.T, st bot.Stores) {
	_, err := st.Sessions.LoadSession(ctxFor(t), "slack:C1:nope")
	if !errors.Is(err, bot.ErrNotFound) {
		t.Errorf("LoadSession of a missing key = %v, want ErrNotFound", err)
	}
	if ok, err := st.Sessions.SessionExists(ctxFor(t), "slack:C1:nope"); ok || err != nil {
		t.Errorf("SessionExists of a missing key = %v, %v; want false, nil", ok, err)
	}
}

func testSessionExists(t *testing.T, st bot.Stores) {
	ctx := ctxFor(t)
	s := sampleSession("slack:C1:exists")
	if ok, err := st.Sessions.SessionExists(ctx, s.Key); ok || err != nil {
		t.Fatalf("before saving: SessionExists = %v, %v; want false, nil", ok, err)
	}
	if err := st.Sessions.SaveSession(ctx, s); err != nil {
		t.Fatal(err)
	}
	if ok, err := st.Sessions.SessionExists(ctx, s.Key); !ok || err != nil {
		t.Errorf("after saving: SessionExists = %v, %v; want true, nil", ok, err)
	}
	if ok, _ := st.Sessions.SessionExists(ctx, "slack:C1:exist"); ok {
		t.Error("SessionExists matched a key that is only a prefix of a saved one")
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := st.Sessions.SessionExists(canceled, s.Key); err == nil {
		t.Error("SessionExists on a cancelled context returned no error")
	}
}

func testSessionCopies(t *testing.T, st bot.Stores) {
	ctx := ctxFor(t)
	s := sampleSession("slack:C1:2")
	want := jsonOf(t, s)
	if err := st.Sessions.SaveSession(ctx, s); err != nil {
		t.Fatal(err)
	}
	s.History[0].Content = "changed after save"
	s.Run.Pending.Results["call_2"] = "x"
	loaded, err := st.Sessions.LoadSession(ctx, s.Key)
	if err != nil {
		t.Fatal(err)
	}
	if jsonOf(t, loaded) != want {
		t.Error("changing a saved session changed the store")
	}
	loaded.Run.CallCounts["read:abc"] = 99
	again, err := st.Sessions.LoadSession(ctx, s.Key)
	if err != nil {
		t.Fatal(err)
	}
	if jsonOf(t, again) != want {
		t.Error("changing a loaded session changed the store")
	}
}

// newApproval makes a pending approval expiring after ttl.
func newApproval(t *testing.T, ttl time.Duration) *policy.Approval {
	t.Helper()
	a, err := policy.NewApproval(policy.ApprovalRequest{
		Tool: "control", Args: json.RawMessage(`{"target":"web1","action":"restart"}`),
		Target: "web1", Command: "systemctl restart nginx", Risk: command.RiskMedium,
		Requester: "U_REQ", Channel: "slack:C1", Thread: "slack:C1:1.2", SessionKey: "slack:C1:1.2",
		CallID: "call_2", TTL: ttl,
	}, time.Now().UTC().Truncate(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	a.CardRef = json.RawMessage(`{"platform":"slack","channel":"C1","thread":"1.2","id":"1.3"}`)
	return a
}

func testApprovalRoundTrip(t *testing.T, st bot.Stores) {
	ctx := ctxFor(t)
	a := newApproval(t, time.Minute)
	want := jsonOf(t, a)
	if err := st.Approvals.CreateApproval(ctx, a); err != nil {
		t.Fatal(err)
	}
	a.Status = policy.ApprovalApproved // must not reach the store
	got, err := st.Approvals.GetApproval(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if g := jsonOf(t, got); g != want {
		t.Errorf("loaded approval differs:\n got %s\nwant %s", g, want)
	}
	if !got.TokenMatches(a.Token) {
		t.Error("token lost")
	}
	if err := got.Binds("control", json.RawMessage(`{"action":"restart","target":"web1"}`)); err != nil {
		t.Errorf("binding lost: %v", err)
	}
}

func testApprovalNotFound(t *testing.T, st bot.Stores) {
	ctx := ctxFor(t)
	if _, err := st.Approvals.GetApproval(ctx, "zzzzzzzzzz"); !errors.Is(err, bot.ErrNotFound) {
		t.Errorf("GetApproval of an unknown ID = %v, want ErrNotFound", err)
	}
	_, err := st.Approvals.UpdateApproval(ctx, "zzzzzzzzzz", policy.Decide(Decision("U_BOSS", true), time.Now()))
	if !errors.Is(err, bot.ErrNotFound) {
		t.Errorf("UpdateApproval of an unknown ID = %v, want ErrNotFound", err)
	}
}

func testApprovalCreateTwice(t *testing.T, st bot.Stores) {
	ctx := ctxFor(t)
	a := newApproval(t, time.Minute)
	if err := st.Approvals.CreateApproval(ctx, a); err != nil {
		t.Fatal(err)
	}
	b := *a
	b.Tool = "other"
	if err := st.Approvals.CreateApproval(ctx, &b); !errors.Is(err, bot.ErrExists) {
		t.Errorf("second CreateApproval with the same ID = %v, want ErrExists", err)
	}
	if got, _ := st.Approvals.GetApproval(ctx, a.ID); got == nil || got.Tool != "control" {
		t.Error("second CreateApproval overwrote the first")
	}
}

// Decision is a typed approve (or deny) by user in the channel of the
// suite's approvals, which policy.Decide accepts while they are pending.
func Decision(user string, approve bool) policy.DecisionRequest {
	return policy.DecisionRequest{User: user, Approve: approve, Roles: policy.RoleSet{Approver: true},
		Channel: "slack:C1", Level: policy.LevelControlled}
}

// testApprovalTransitions takes each lifecycle step once through the
// store: what comes back is what was stored, the store keeps a copy, and a
// step that no longer applies changes nothing and returns the current
// record with the step's reason.
func testApprovalTransitions(t *testing.T, st bot.Stores) {
	ctx := ctxFor(t)
	at := time.Now().UTC().Truncate(time.Millisecond)
	card := json.RawMessage(`{"platform":"slack","channel":"C1","thread":"1.2","id":"1.9"}`)
	apply := func(a *policy.Approval, step policy.Transition, want policy.ApprovalStatus) *policy.Approval {
		t.Helper()
		got, err := st.Approvals.UpdateApproval(ctx, a.ID, step)
		if err != nil || got.Status != want {
			t.Fatalf("%s from %s: %+v, %v; want %s", step.Step(), a.Status, got, err, want)
		}
		stored, err := st.Approvals.GetApproval(ctx, a.ID)
		if err != nil || jsonOf(t, stored) != jsonOf(t, got) {
			t.Fatalf("%s: returned\n %s\nstored\n %+v, %v", step.Step(), jsonOf(t, got), stored, err)
		}
		got.Reason = "changed after update" // must not reach the store
		return stored
	}
	create := func(ttl time.Duration) *policy.Approval {
		t.Helper()
		a := newApproval(t, ttl)
		if err := st.Approvals.CreateApproval(ctx, a); err != nil {
			t.Fatal(err)
		}
		return a
	}

	// pending → approved → executing → executed, with the card attached
	// on the way.
	a := create(time.Minute)
	a = apply(a, policy.AttachCard(card), policy.ApprovalPending)
	a = apply(a, policy.Decide(Decision("U_BOSS", true), at), policy.ApprovalApproved)
	a = apply(a, policy.ClaimExecution(at), policy.ApprovalExecuting)
	a = apply(a, policy.MarkExecuted(policy.ApprovalExecuted, at), policy.ApprovalExecuted)
	if a.DecidedBy != "U_BOSS" || !a.DecidedAt.Equal(at) || !a.ExecutedAt.Equal(at) || a.Reason != "" ||
		string(a.CardRef) != string(card) {
		t.Fatalf("after the steps: %+v", a)
	}

	// A step that no longer applies: nothing changes, the current record
	// comes back with why.
	got, err := st.Approvals.UpdateApproval(ctx, a.ID, policy.Decide(Decision("U_OTHER", false), at))
	var te *policy.TransitionError
	if !errors.Is(err, bot.ErrStatusConflict) || !errors.Is(err, policy.ErrAlreadyDecided) || !errors.As(err, &te) ||
		te.Step != policy.StepDecide || te.Status != policy.ApprovalExecuted {
		t.Errorf("late decision = %v; want ErrStatusConflict and a *policy.TransitionError (decide, executed)", err)
	}
	if got == nil || jsonOf(t, got) != jsonOf(t, a) {
		t.Errorf("late decision returned %+v; want the current record", got)
	}
	if cur, err := st.Approvals.GetApproval(ctx, a.ID); err != nil || jsonOf(t, cur) != jsonOf(t, a) {
		t.Errorf("a refused step changed the record: %+v, %v", cur, err)
	}

	// pending → denied.
	d := create(time.Minute)
	d = apply(d, policy.Decide(Decision("U_BOSS", false), at), policy.ApprovalDenied)
	if d.DecidedBy != "U_BOSS" {
		t.Errorf("denied by %q", d.DecidedBy)
	}

	// executing → failed, settled after an outage.
	f := create(time.Minute)
	apply(f, policy.Decide(Decision("U_BOSS", true), at), policy.ApprovalApproved)
	apply(f, policy.ClaimExecution(at), policy.ApprovalExecuting)
	f = apply(f, policy.Settle(policy.ApprovalFailed, at), policy.ApprovalFailed)
	if !f.ExecutedAt.Equal(at) {
		t.Errorf("settled at %v, want %v", f.ExecutedAt, at)
	}

	// pending → expired, once the window has closed.
	e := create(time.Minute)
	if _, err := st.Approvals.UpdateApproval(ctx, e.ID, policy.Expire(at)); !errors.Is(err, policy.ErrNotYetExpired) {
		t.Errorf("expire inside the window = %v, want ErrNotYetExpired", err)
	}
	apply(e, policy.Expire(e.ExpiresAt), policy.ApprovalExpired)
}

// testApprovalCASRace: 50 deciders race to approve; exactly one wins, every
// other is told who did.
func testApprovalCASRace(t *testing.T, st bot.Stores) {
	ctx := ctxFor(t)
	a := newApproval(t, time.Minute)
	if err := st.Approvals.CreateApproval(ctx, a); err != nil {
		t.Fatal(err)
	}
	const racers = 50
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		winners []string
		losers  []*policy.Approval
	)
	start := make(chan struct{})
	for i := range racers {
		user := fmt.Sprintf("U%02d", i)
		wg.Go(func() {
			<-start
			got, err := st.Approvals.UpdateApproval(ctx, a.ID, policy.Decide(Decision(user, true), time.Now().UTC()))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				winners = append(winners, user)
			case errors.Is(err, bot.ErrStatusConflict):
				losers = append(losers, got)
			default:
				t.Errorf("racer %s: %v", user, err)
			}
		})
	}
	close(start)
	wg.Wait()
	if len(winners) != 1 {
		t.Fatalf("%d winners (%v), want exactly 1", len(winners), winners)
	}
	if len(losers) != racers-1 {
		t.Fatalf("%d losers, want %d", len(losers), racers-1)
	}
	for _, l := range losers {
		if l == nil || l.Status != policy.ApprovalApproved || l.DecidedBy != winners[0] {
			t.Fatalf("a loser saw %+v, want the winner %s's record", l, winners[0])
		}
	}
	cur, err := st.Approvals.GetApproval(ctx, a.ID)
	if err != nil || cur.DecidedBy != winners[0] {
		t.Errorf("stored: %+v, %v", cur, err)
	}
}

func testApprovalListPending(t *testing.T, st bot.Stores) {
	ctx := ctxFor(t)
	if got, err := st.Approvals.ListPending(ctx); err != nil || len(got) != 0 {
		t.Fatalf("empty store lists %d, %v", len(got), err)
	}
	late := newApproval(t, 10*time.Minute)
	soon := newApproval(t, time.Minute)
	lapsed := newApproval(t, time.Millisecond) // already past expiry when listed
	denied := newApproval(t, time.Minute)
	approved := newApproval(t, time.Minute)
	for _, a := range []*policy.Approval{late, soon, lapsed, denied, approved} {
		if err := st.Approvals.CreateApproval(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	for a, approve := range map[*policy.Approval]bool{denied: false, approved: true} {
		if _, err := st.Approvals.UpdateApproval(ctx, a.ID, policy.Decide(Decision("U_BOSS", approve), time.Now())); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(5 * time.Millisecond)
	got, err := st.Approvals.ListPending(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, a := range got {
		ids = append(ids, a.ID)
	}
	want := []string{lapsed.ID, soon.ID, late.ID}
	if fmt.Sprint(ids) != fmt.Sprint(want) {
		t.Fatalf("ListPending = %v, want %v (pending only, expired included, oldest expiry first)", ids, want)
	}

	// The sweeper's move: pending → expired takes it off the list.
	if _, err := st.Approvals.UpdateApproval(ctx, lapsed.ID, policy.Expire(time.Now())); err != nil {
		t.Fatal(err)
	}
	got, err = st.Approvals.ListPending(ctx)
	if err != nil || len(got) != 2 || got[0].ID != soon.ID {
		t.Errorf("after expiring one: %d listed, %v", len(got), err)
	}
}

// ListExecuting lists exactly the approvals claimed for execution and not
// settled: what vigil looks for after a store outage or a crash.
func testApprovalListExecuting(t *testing.T, st bot.Stores) {
	ctx := ctxFor(t)
	if got, err := st.Approvals.ListExecuting(ctx); err != nil || len(got) != 0 {
		t.Fatalf("empty store lists %d, %v", len(got), err)
	}
	now := time.Now()
	step := func(a *policy.Approval, step policy.Transition) {
		t.Helper()
		if _, err := st.Approvals.UpdateApproval(ctx, a.ID, step); err != nil {
			t.Fatal(err)
		}
	}
	pending, approved, executing, executed, failed := newApproval(t, time.Minute), newApproval(t, time.Minute),
		newApproval(t, time.Minute), newApproval(t, time.Minute), newApproval(t, time.Minute)
	for _, a := range []*policy.Approval{pending, approved, executing, executed, failed} {
		if err := st.Approvals.CreateApproval(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range []*policy.Approval{approved, executing, executed, failed} {
		step(a, policy.Decide(Decision("U_BOSS", true), now))
	}
	for _, a := range []*policy.Approval{executing, executed, failed} {
		step(a, policy.ClaimExecution(now))
	}
	step(executed, policy.MarkExecuted(policy.ApprovalExecuted, now))
	step(failed, policy.MarkExecuted(policy.ApprovalFailed, now))
	got, err := st.Approvals.ListExecuting(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != executing.ID || got[0].Status != policy.ApprovalExecuting {
		t.Fatalf("ListExecuting = %v; want only %s", got, executing.ID)
	}
	step(executing, policy.Settle(policy.ApprovalExecuted, now))
	if got, err := st.Approvals.ListExecuting(ctx); err != nil || len(got) != 0 {
		t.Fatalf("after settling: %d listed, %v", len(got), err)
	}
}

func auditRecord(actor string, i int) audit.Record {
	return audit.Record{
		Time: time.Now().UTC(), Actor: actor, Action: audit.Allow, Tool: "read", Target: "web1",
		Command: fmt.Sprintf("uptime # %d", i), Channel: "slack:C1", Thread: "slack:C1:1.2", Outcome: "ok",
	}
}

func testAuditChain(t *testing.T, st bot.Stores) {
	ctx := ctxFor(t)
	if recs, err := st.Audit.RecentAudit(ctx, 10); err != nil || len(recs) != 0 {
		t.Fatalf("empty store: %d records, %v", len(recs), err)
	}
	var appended []audit.Record
	for i := range 5 {
		r, err := st.Audit.AppendAudit(ctx, auditRecord("U1", i))
		if err != nil {
			t.Fatal(err)
		}
		if r.Seq != int64(i+1) || r.Hash == "" {
			t.Fatalf("append %d returned %+v", i, r)
		}
		appended = append(appended, r)
	}
	secret, err := st.Audit.AppendAudit(ctx, audit.Record{Time: time.Now().UTC(), Actor: "U1", Action: audit.Denied,
		Command: "mysql -phunter2", Reason: "password=hunter2"})
	if err != nil {
		t.Fatal(err)
	}
	appended = append(appended, secret)
	recs, err := st.Audit.RecentAudit(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	if jsonOf(t, recs) != jsonOf(t, appended) {
		t.Errorf("RecentAudit differs from what AppendAudit returned:\n%v\n%v", recs, appended)
	}
	if err := audit.VerifyChain(recs); err != nil {
		t.Error(err)
	}
	if b := jsonOf(t, recs[5]); strings.Contains(b, "hunter2") {
		t.Errorf("a secret reached the audit store: %s", b)
	}
	last, err := st.Audit.RecentAudit(ctx, 2)
	if err != nil || len(last) != 2 || last[0].Seq != 5 || last[1].Seq != 6 {
		t.Fatalf("RecentAudit(2) = %+v, %v; want records 5 and 6, oldest first", last, err)
	}
	if err := audit.VerifySegment(last); err != nil {
		t.Error(err)
	}
}

// testAuditConcurrent: 20 appenders at once still make one gapless chain.
func testAuditConcurrent(t *testing.T, st bot.Stores) {
	ctx := ctxFor(t)
	const writers, each = 20, 10
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := range writers {
		wg.Go(func() {
			<-start
			for i := range each {
				if _, err := st.Audit.AppendAudit(ctx, auditRecord(fmt.Sprintf("U%02d", w), i)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	close(start)
	wg.Wait()
	recs, err := st.Audit.RecentAudit(ctx, writers*each)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != writers*each {
		t.Fatalf("%d records, want %d", len(recs), writers*each)
	}
	if err := audit.VerifyChain(recs); err != nil {
		t.Fatal(err)
	}
	for i, r := range recs {
		if r.Seq != int64(i+1) {
			t.Fatalf("record %d has seq %d", i, r.Seq)
		}
	}
}

func testDedup(t *testing.T, st bot.Stores) {
	ctx := ctxFor(t)
	const ttl = 500 * time.Millisecond
	first, err := st.Dedup.FirstSeen(ctx, "event:slack:Ev1", ttl)
	if err != nil || !first {
		t.Fatalf("first delivery: %v, %v", first, err)
	}
	if again, err := st.Dedup.FirstSeen(ctx, "event:slack:Ev1", ttl); err != nil || again {
		t.Fatalf("redelivery counted as first: %v, %v", again, err)
	}
	if other, err := st.Dedup.FirstSeen(ctx, "event:slack:Ev2", ttl); err != nil || !other {
		t.Fatalf("another key: %v, %v", other, err)
	}

	// 50 concurrent deliveries of one event: exactly one is first.
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		firsts int
	)
	for range 50 {
		wg.Go(func() {
			ok, err := st.Dedup.FirstSeen(ctx, "event:slack:Ev3", time.Minute)
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				firsts++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if firsts != 1 {
		t.Errorf("%d concurrent deliveries were first, want 1", firsts)
	}

	time.Sleep(ttl + 200*time.Millisecond)
	if after, err := st.Dedup.FirstSeen(ctx, "event:slack:Ev1", ttl); err != nil || !after {
		t.Errorf("after the TTL the key must be new again: %v, %v", after, err)
	}
}

func testLockExclusive(t *testing.T, st bot.Stores) {
	ctx := ctxFor(t)
	const key = "thread:slack:C1:1.2"
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		held []bot.Lock
	)
	for range 20 {
		wg.Go(func() {
			l, err := st.Locks.Lock(ctx, key, time.Minute)
			switch {
			case err == nil:
				mu.Lock()
				held = append(held, l)
				mu.Unlock()
			case !errors.Is(err, bot.ErrLocked):
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if len(held) != 1 {
		t.Fatalf("%d of 20 concurrent Lock calls succeeded, want 1", len(held))
	}
	if _, err := st.Locks.Lock(ctx, "thread:slack:C1:other", time.Minute); err != nil {
		t.Errorf("another key is independent: %v", err)
	}
	if err := held[0].Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	l, err := st.Locks.Lock(ctx, key, time.Minute)
	if err != nil {
		t.Fatalf("Lock after Unlock: %v", err)
	}
	if err := l.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

func testLockRenewUnlock(t *testing.T, st bot.Stores) {
	ctx := ctxFor(t)
	const (
		key = "thread:slack:C1:renew"
		// Long enough that a loaded CI machine's scheduling delay
		// between two renewals (a tenth of it apart) cannot reach it.
		ttl = 3 * time.Second
	)
	l, err := st.Locks.Lock(ctx, key, ttl)
	if err != nil {
		t.Fatal(err)
	}
	// Renewing keeps it past its first expiry.
	for range 12 {
		time.Sleep(ttl / 10)
		if err := l.Renew(ctx); err != nil {
			t.Fatalf("Renew while held: %v", err)
		}
	}
	if _, err := st.Locks.Lock(ctx, key, ttl); !errors.Is(err, bot.ErrLocked) {
		t.Fatalf("Lock on a renewed lock = %v, want ErrLocked", err)
	}
	if err := l.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := l.Renew(ctx); !errors.Is(err, bot.ErrLocked) {
		t.Errorf("Renew after Unlock = %v, want ErrLocked", err)
	}
	if err := l.Unlock(ctx); !errors.Is(err, bot.ErrLocked) {
		t.Errorf("second Unlock = %v, want ErrLocked", err)
	}
}

func testLockExpiry(t *testing.T, st bot.Stores) {
	ctx := ctxFor(t)
	const (
		key = "thread:slack:C1:expiry"
		ttl = 150 * time.Millisecond
	)
	old, err := st.Locks.Lock(ctx, key, ttl)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(ttl + 100*time.Millisecond)
	next, err := st.Locks.Lock(ctx, key, time.Minute)
	if err != nil {
		t.Fatalf("Lock after expiry: %v", err)
	}
	if err := old.Renew(ctx); !errors.Is(err, bot.ErrLocked) {
		t.Errorf("Renew of a lost lock = %v, want ErrLocked", err)
	}
	if err := old.Unlock(ctx); !errors.Is(err, bot.ErrLocked) {
		t.Errorf("Unlock of a lost lock = %v, want ErrLocked", err)
	}
	// The old holder's Unlock must not have released the new holder's lock.
	if _, err := st.Locks.Lock(ctx, key, time.Minute); !errors.Is(err, bot.ErrLocked) {
		t.Errorf("the new holder lost the lock to the old one's Unlock: %v", err)
	}
	if err := next.Renew(ctx); err != nil {
		t.Errorf("new holder's Renew: %v", err)
	}
	if err := next.Unlock(ctx); err != nil {
		t.Errorf("new holder's Unlock: %v", err)
	}
}

// fencedLock takes key's lock, which must be a bot.FencedLock: every store
// here saves a run's checkpoints with its lock.
func fencedLock(t *testing.T, st bot.Stores, key string, ttl time.Duration) bot.FencedLock {
	t.Helper()
	l, err := st.Locks.Lock(ctxFor(t), key, ttl)
	if err != nil {
		t.Fatal(err)
	}
	fl, ok := l.(bot.FencedLock)
	if !ok {
		t.Fatalf("the store's lock %T is not a bot.FencedLock", l)
	}
	return fl
}

// loadJSON is the stored session's JSON.
func loadJSON(t *testing.T, st bot.Stores, key string) string {
	t.Helper()
	got, err := st.Sessions.LoadSession(ctxFor(t), key)
	if err != nil {
		t.Fatal(err)
	}
	return jsonOf(t, got)
}

// testFencedSave: RenewAndSave saves as SaveSession does, through growing,
// rewritten and shrinking histories and saves made without the lock in
// between, and renews the lock.
func testFencedSave(t *testing.T, st bot.Stores) {
	ctx := ctxFor(t)
	const (
		lockKey = "thread:slack:C1:fenced"
		// As in testLockRenewUnlock: far above a loaded machine's pauses.
		ttl = 3 * time.Second
	)
	l := fencedLock(t, st, lockKey, ttl)
	s := sampleSession("slack:C1:fenced")
	save := func(what string) {
		t.Helper()
		want := jsonOf(t, s)
		if err := l.RenewAndSave(ctx, s); err != nil {
			t.Fatalf("%s: RenewAndSave: %v", what, err)
		}
		if got := loadJSON(t, st, s.Key); got != want {
			t.Fatalf("%s: loaded session differs:\n got %s\nwant %s", what, got, want)
		}
	}
	save("first save")
	// A loaded session saved under the lock, as a run continues one.
	loaded, err := st.Sessions.LoadSession(ctx, s.Key)
	if err != nil {
		t.Fatal(err)
	}
	s = loaded
	for i := range 12 {
		// Past the lock's first expiry: each save renews it.
		time.Sleep(ttl / 10)
		s.History = append(s.History, agent.Message{Role: agent.RoleAssistant, Content: fmt.Sprintf("step %d", i)})
		s.UpdatedAt = s.UpdatedAt.Add(time.Second)
		save(fmt.Sprintf("growing save %d", i))
	}
	if _, err := st.Locks.Lock(ctx, lockKey, ttl); !errors.Is(err, bot.ErrLocked) {
		t.Fatalf("Lock on a lock renewed by RenewAndSave = %v, want ErrLocked", err)
	}
	s.History[1].Content = "compacted"
	save("rewritten history")
	s.History = s.History[:2]
	save("shorter history")
	// Another writer saves without the lock (an approval's decision);
	// the next fenced save still stores exactly what it is given.
	other := sampleSession(s.Key)
	other.History = append(other.History, agent.Message{Role: agent.RoleUser, Content: "from elsewhere"})
	if err := st.Sessions.SaveSession(ctx, other); err != nil {
		t.Fatal(err)
	}
	s.History = append(s.History, agent.Message{Role: agent.RoleAssistant, Content: "after the other save"})
	save("save after another writer's")
	s.History = nil
	save("no history")
	s.History = []agent.Message{}
	save("empty history")
	if err := l.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// testFencedSaveLostLock: a holder that lost its lock, released or expired
// and taken by another, saves nothing.
func testFencedSaveLostLock(t *testing.T, st bot.Stores) {
	ctx := ctxFor(t)
	const (
		lockKey = "thread:slack:C1:lost"
		ttl     = 150 * time.Millisecond
	)
	key := "slack:C1:lost"
	old := fencedLock(t, st, lockKey, ttl)
	first := sampleSession(key)
	if err := old.RenewAndSave(ctx, first); err != nil {
		t.Fatal(err)
	}
	time.Sleep(ttl + 100*time.Millisecond)
	next := fencedLock(t, st, lockKey, time.Minute)
	mine := sampleSession(key)
	mine.History = append(mine.History, agent.Message{Role: agent.RoleAssistant, Content: "new holder"})
	if err := next.RenewAndSave(ctx, mine); err != nil {
		t.Fatalf("new holder's RenewAndSave: %v", err)
	}
	want := jsonOf(t, mine)
	stale := sampleSession(key)
	stale.History = append(stale.History, agent.Message{Role: agent.RoleAssistant, Content: "stale holder"})
	if err := old.RenewAndSave(ctx, stale); !errors.Is(err, bot.ErrLocked) {
		t.Fatalf("RenewAndSave of an expired, retaken lock = %v, want ErrLocked", err)
	}
	if got := loadJSON(t, st, key); got != want {
		t.Fatalf("a holder that lost the lock overwrote the session:\n got %s\nwant %s", got, want)
	}
	if err := next.Renew(ctx); err != nil {
		t.Fatalf("the stale save took the new holder's lock: %v", err)
	}
	// Released: nothing saved either, and the lock stays free.
	if err := next.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := next.RenewAndSave(ctx, stale); !errors.Is(err, bot.ErrLocked) {
		t.Fatalf("RenewAndSave after Unlock = %v, want ErrLocked", err)
	}
	if got := loadJSON(t, st, key); got != want {
		t.Fatalf("a released holder overwrote the session:\n got %s\nwant %s", got, want)
	}
	again := fencedLock(t, st, lockKey, time.Minute)
	if err := again.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// testLockAndLoad: LockAndLoad takes the lock as Lock does and returns the
// session as stored, nil when there is none; a taken lock loads nothing.
func testLockAndLoad(t *testing.T, st bot.Stores) {
	ctx := ctxFor(t)
	sl, ok := st.Locks.(bot.SessionLocker)
	if !ok {
		t.Fatalf("the store's Locker %T is not a bot.SessionLocker", st.Locks)
	}
	const lockKey = "thread:slack:C1:lockload"
	key := "slack:C1:lockload"
	l, s, err := sl.LockAndLoad(ctx, lockKey, time.Minute, key)
	if err != nil || l == nil || s != nil {
		t.Fatalf("LockAndLoad with no session = %v, %+v, %v; want a lock, nil, nil", l, s, err)
	}
	if _, _, err := sl.LockAndLoad(ctx, lockKey, time.Minute, key); !errors.Is(err, bot.ErrLocked) {
		t.Fatalf("LockAndLoad of a held lock = %v, want ErrLocked", err)
	}
	if _, err := st.Locks.Lock(ctx, lockKey, time.Minute); !errors.Is(err, bot.ErrLocked) {
		t.Fatalf("Lock after LockAndLoad = %v, want ErrLocked", err)
	}
	saved := sampleSession(key)
	want := jsonOf(t, saved)
	if err := l.(bot.FencedLock).RenewAndSave(ctx, saved); err != nil {
		t.Fatal(err)
	}
	if err := l.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	l, s, err = sl.LockAndLoad(ctx, lockKey, time.Minute, key)
	if err != nil {
		t.Fatal(err)
	}
	if got := jsonOf(t, s); got != want {
		t.Fatalf("LockAndLoad's session differs:\n got %s\nwant %s", got, want)
	}
	// The loaded session is a copy, and saving it grown goes through.
	s.History = append(s.History, agent.Message{Role: agent.RoleAssistant, Content: "next"})
	if got := loadJSON(t, st, key); got != want {
		t.Fatal("changing a session from LockAndLoad changed the store")
	}
	want = jsonOf(t, s)
	if err := l.(bot.FencedLock).RenewAndSave(ctx, s); err != nil {
		t.Fatal(err)
	}
	if got := loadJSON(t, st, key); got != want {
		t.Fatalf("saved after LockAndLoad:\n got %s\nwant %s", got, want)
	}
	if err := l.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

func testRunIndex(t *testing.T, st bot.Stores) {
	if st.Runs == nil {
		t.Fatal("Stores.Runs is nil: every store must index runs in progress")
	}
	ctx := ctxFor(t)
	a := bot.ThreadRef{Platform: "slack", Channel: "C1", Thread: "1700000000.000100"}
	b := bot.ThreadRef{Platform: "matrix", Channel: "!room:example.org", Thread: "$root"}
	for _, ref := range []bot.ThreadRef{a, b, a} {
		if err := st.Runs.MarkActive(ctx, ref); err != nil {
			t.Fatal(err)
		}
	}
	got, err := st.Runs.ActiveRuns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != b || got[1] != a {
		t.Fatalf("active runs = %+v, want [%+v %+v] (deduplicated, ordered by key)", got, b, a)
	}
	if err := st.Runs.MarkIdle(ctx, a.Key()); err != nil {
		t.Fatal(err)
	}
	if err := st.Runs.MarkIdle(ctx, "never:was:active"); err != nil {
		t.Fatalf("idling an unknown run: %v", err)
	}
	got, err = st.Runs.ActiveRuns(ctx)
	if err != nil || len(got) != 1 || got[0] != b {
		t.Fatalf("after idling one: %+v %v", got, err)
	}
}

func testRateLimit(t *testing.T, st bot.Stores) {
	if st.Limits == nil {
		t.Fatal("Stores.Limits is nil: every store must count rate limits")
	}
	ctx := ctxFor(t)
	// A window long enough that the test never straddles two.
	const window = time.Hour
	for i := 1; i <= 5; i++ {
		ok, err := st.Limits.Allow(ctx, "msg:slack:C1:U1", 3, window)
		if err != nil {
			t.Fatal(err)
		}
		if want := i <= 3; ok != want {
			t.Fatalf("event %d allowed = %v, want %v", i, ok, want)
		}
	}
	if ok, err := st.Limits.Allow(ctx, "msg:slack:C1:U2", 3, window); err != nil || !ok {
		t.Fatalf("another key shares the count: %v %v", ok, err)
	}
	if _, err := st.Limits.Allow(ctx, "k", 1, 0); err == nil {
		t.Fatal("a zero window was accepted")
	}
}

func sampleAlertGroup(key string) *bot.AlertGroup {
	at := time.Date(2026, 11, 24, 21, 0, 0, 0, time.UTC)
	return &bot.AlertGroup{
		Key: key, Source: "alertmanager", GroupKey: `{}:{alertname="HighLatency"}`, Route: "routes[0]",
		Thread: bot.ThreadRef{Platform: "slack", Channel: "C1", Thread: "1700000000.000100"},
		Root:   bot.MessageRef{ThreadRef: bot.ThreadRef{Platform: "slack", Channel: "C1", Thread: "1700000000.000100"}, ID: "1700000000.000100"},
		Alerts: []bot.Alert{{ID: "fp1", Status: "firing", Labels: map[string]string{"alertname": "HighLatency"},
			Annotations: map[string]string{"summary": "slow"}, StartsAt: at,
			Links: []bot.Link{{Text: "Runbook", URL: "https://runbooks.example.org/x"}}}},
		CreatedAt: at, UpdatedAt: at, Investigate: true,
	}
}

func testAlertGroupRoundTrip(t *testing.T, st bot.Stores) {
	if st.Alerts == nil {
		t.Fatal("Stores.Alerts is nil: every store must keep alert groups")
	}
	ctx := ctxFor(t)
	if _, err := st.Alerts.LoadAlertGroup(ctx, "alertmanager:none"); !errors.Is(err, bot.ErrNotFound) {
		t.Fatalf("load of a missing group: %v, want ErrNotFound", err)
	}
	g := sampleAlertGroup("alertmanager:abc")
	want := jsonOf(t, g)
	if err := st.Alerts.SaveAlertGroup(ctx, g, time.Hour); err != nil {
		t.Fatal(err)
	}
	g.Alerts[0].Status = "resolved" // changing the saved value changes nothing stored
	got, err := st.Alerts.LoadAlertGroup(ctx, "alertmanager:abc")
	if err != nil {
		t.Fatal(err)
	}
	if jsonOf(t, got) != want {
		t.Fatalf("round trip:\n got %s\nwant %s", jsonOf(t, got), want)
	}
	got.Resolved = true
	if err := st.Alerts.SaveAlertGroup(ctx, got, time.Hour); err != nil {
		t.Fatal(err)
	}
	again, err := st.Alerts.LoadAlertGroup(ctx, "alertmanager:abc")
	if err != nil || !again.Resolved {
		t.Fatalf("a second save did not replace the first: %+v %v", again, err)
	}
	if err := st.Alerts.SaveAlertGroup(ctx, &bot.AlertGroup{}, time.Hour); err == nil {
		t.Error("saved a group without a key")
	}
}

func testAlertGroupExpiry(t *testing.T, st bot.Stores) {
	ctx := ctxFor(t)
	if err := st.Alerts.SaveAlertGroup(ctx, sampleAlertGroup("grafana:short"), 150*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Alerts.LoadAlertGroup(ctx, "grafana:short"); err != nil {
		t.Fatalf("load before expiry: %v", err)
	}
	time.Sleep(400 * time.Millisecond)
	if _, err := st.Alerts.LoadAlertGroup(ctx, "grafana:short"); !errors.Is(err, bot.ErrNotFound) {
		t.Fatalf("load after expiry: %v, want ErrNotFound", err)
	}
}

// testAlertGroupDue: DueAlertGroups lists exactly the pending groups due
// at the time asked, earliest first, up to the limit, and follows every
// save: a claimed, resolved or not-investigated group leaves the index,
// a group whose due time moves is listed at the new time.
func testAlertGroupDue(t *testing.T, st bot.Stores) {
	ctx := ctxFor(t)
	t0 := time.Date(2026, 11, 24, 21, 5, 0, 0, time.UTC)
	save := func(key string, due time.Time, edit func(g *bot.AlertGroup)) {
		t.Helper()
		g := sampleAlertGroup(key)
		g.DueAt = due
		if edit != nil {
			edit(g)
		}
		if err := st.Alerts.SaveAlertGroup(ctx, g, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	due := func(now time.Time, limit int, want ...string) {
		t.Helper()
		got, err := st.Alerts.DueAlertGroups(ctx, now, limit)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("due at %s (limit %d) = %q, want %q", now.Format(time.TimeOnly), limit, got, want)
		}
	}
	due(t0.Add(time.Hour), 10)
	save("am:b", t0.Add(time.Minute), nil)
	save("am:a", t0, nil)
	save("am:quiet", t0, func(g *bot.AlertGroup) { g.Investigate = false })
	save("am:resolved", t0, func(g *bot.AlertGroup) { g.Resolved = true })
	save("am:claimed", t0, func(g *bot.AlertGroup) { g.Investigated = true })

	due(t0.Add(-time.Second), 10)
	due(t0, 10, "am:a")
	due(t0.Add(30*time.Second), 10, "am:a")
	due(t0.Add(2*time.Minute), 10, "am:a", "am:b")
	due(t0.Add(2*time.Minute), 1, "am:a")

	// Claimed: it leaves the index.
	save("am:a", t0, func(g *bot.AlertGroup) { g.Investigated = true })
	due(t0.Add(2*time.Minute), 10, "am:b")
	// A new notification moves b's due time later.
	save("am:b", t0.Add(5*time.Minute), nil)
	due(t0.Add(2*time.Minute), 10)
	due(t0.Add(5*time.Minute), 10, "am:b")
	// Resolved: it leaves the index; firing again brings it back.
	save("am:b", t0.Add(5*time.Minute), func(g *bot.AlertGroup) { g.Resolved = true })
	due(t0.Add(time.Hour), 10)
	save("am:b", t0.Add(6*time.Minute), nil)
	due(t0.Add(time.Hour), 10, "am:b")
	// A group saved with investigate off leaves it too.
	save("am:b", t0.Add(6*time.Minute), func(g *bot.AlertGroup) { g.Investigate = false })
	due(t0.Add(time.Hour), 10)

	if _, err := st.Alerts.DueAlertGroups(ctx, t0, 0); err == nil {
		t.Fatal("a zero limit was accepted")
	}
}

// testAlertGroupDueSkipsExpired: a pending group whose record expired is
// not listed (its index entry, if any, is dropped).
func testAlertGroupDueSkipsExpired(t *testing.T, st bot.Stores) {
	ctx := ctxFor(t)
	at := time.Date(2026, 11, 24, 21, 5, 0, 0, time.UTC)
	short := sampleAlertGroup("grafana:gone")
	short.DueAt = at
	if err := st.Alerts.SaveAlertGroup(ctx, short, 150*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	kept := sampleAlertGroup("grafana:kept")
	kept.DueAt = at.Add(time.Second)
	if err := st.Alerts.SaveAlertGroup(ctx, kept, time.Hour); err != nil {
		t.Fatal(err)
	}
	got, err := st.Alerts.DueAlertGroups(ctx, at.Add(time.Minute), 10)
	if err != nil || strings.Join(got, ",") != "grafana:gone,grafana:kept" {
		t.Fatalf("before expiry: %q, %v", got, err)
	}
	time.Sleep(400 * time.Millisecond)
	for range 2 {
		got, err = st.Alerts.DueAlertGroups(ctx, at.Add(time.Minute), 10)
		if err != nil || strings.Join(got, ",") != "grafana:kept" {
			t.Fatalf("after expiry: %q, %v, want only grafana:kept", got, err)
		}
	}
}

// testAlertGroupOpenedOnce is the bot's use: replicas receiving the same
// notification each take the group's lock, load, and open the thread only
// when no record exists. Exactly one of them opens it.
func testAlertGroupOpenedOnce(t *testing.T, st bot.Stores) {
	ctx := ctxFor(t)
	var mu sync.Mutex
	opened := 0
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var l bot.Lock
			for {
				var err error
				l, err = st.Locks.Lock(ctx, "alertgroup:pagerduty:P1", 5*time.Second)
				if err == nil {
					break
				}
				if !errors.Is(err, bot.ErrLocked) {
					t.Errorf("replica %d: lock: %v", i, err)
					return
				}
				time.Sleep(5 * time.Millisecond)
			}
			defer func() { _ = l.Unlock(ctx) }()
			_, err := st.Alerts.LoadAlertGroup(ctx, "pagerduty:P1")
			if errors.Is(err, bot.ErrNotFound) {
				mu.Lock()
				opened++
				mu.Unlock()
				if err := st.Alerts.SaveAlertGroup(ctx, sampleAlertGroup("pagerduty:P1"), time.Hour); err != nil {
					t.Errorf("replica %d: save: %v", i, err)
				}
			} else if err != nil {
				t.Errorf("replica %d: load: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if opened != 1 {
		t.Fatalf("%d replicas opened the group's thread, want exactly 1", opened)
	}
}

// AuditHeadStore is an audit store that keeps the chain's head (SPEC R4).
type AuditHeadStore interface {
	bot.AuditStore
	// AuditHead returns the newest record's sequence number and hash,
	// sealed with the audit key; ok is false while the chain is empty.
	AuditHead(ctx context.Context) (h audit.Head, ok bool, err error)
}

// RunAuditHead runs the audit head and key conformance tests against
// stores from open, which seal the chain with keys (nil: only hashed).
func RunAuditHead(t *testing.T, open func(t *testing.T, keys *audit.Keyring) AuditHeadStore) {
	t.Helper()
	key, err := audit.ParseKey([]byte(strings.Repeat("conformance-key-", 4)))
	if err != nil {
		t.Fatal(err)
	}
	keys := audit.NewKeyring(key)
	t.Run("HeadFollowsChain", func(t *testing.T) {
		t.Parallel()
		testAuditHead(t, open(t, nil), nil)
	})
	t.Run("KeyedHeadFollowsChain", func(t *testing.T) {
		t.Parallel()
		testAuditHead(t, open(t, keys), keys)
	})
	t.Run("KeyedConcurrentAppenders", func(t *testing.T) {
		t.Parallel()
		st := open(t, keys)
		testAuditConcurrent(t, bot.Stores{Audit: keyedVerifier{st, keys}})
	})
}

// testAuditHead: the head names the newest record, is sealed when the chain
// is, and the records verify against it; without the key they do not.
func testAuditHead(t *testing.T, st AuditHeadStore, keys *audit.Keyring) {
	ctx := ctxFor(t)
	if _, ok, err := st.AuditHead(ctx); ok || err != nil {
		t.Fatalf("empty store has a head: %v, %v", ok, err)
	}
	var last audit.Record
	for i := range 4 {
		r, err := st.AppendAudit(ctx, auditRecord("U1", i))
		if err != nil {
			t.Fatal(err)
		}
		if r.KeyID != keys.CurrentID() {
			t.Fatalf("record sealed with key %q, want %q", r.KeyID, keys.CurrentID())
		}
		last = r
	}
	h, ok, err := st.AuditHead(ctx)
	if err != nil || !ok || h.Seq != last.Seq || h.Hash != last.Hash || h.KeyID != keys.CurrentID() || (keys != nil) != (h.MAC != "") {
		t.Fatalf("head = %+v, %v, %v; want record %d sealed with %q", h, ok, err, last.Seq, keys.CurrentID())
	}
	recs, err := st.RecentAudit(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := audit.Verify(recs, audit.VerifyOptions{Keys: keys, FromStart: true, Head: &h, RequireHead: true}); err != nil {
		t.Fatalf("Verify against the head: %v", err)
	}
	if _, err := audit.Verify(recs[:3], audit.VerifyOptions{Keys: keys, FromStart: true, Head: &h}); err == nil ||
		!strings.Contains(err.Error(), "records 4 to 4 were cut off") {
		t.Fatalf("Verify of a chain cut short: %v", err)
	}
	if keys != nil {
		if err := audit.VerifyChain(recs); err == nil {
			t.Fatal("a keyed chain verified without its key")
		}
	}
}

// keyedVerifier lets testAuditConcurrent's VerifyChain check a keyed chain:
// RecentAudit returns the records re-sealed without the key after checking
// them with it, so the shared test's checks hold for both.
type keyedVerifier struct {
	AuditHeadStore
	keys *audit.Keyring
}

func (k keyedVerifier) RecentAudit(ctx context.Context, n int) ([]audit.Record, error) {
	recs, err := k.AuditHeadStore.RecentAudit(ctx, n)
	if err != nil {
		return nil, err
	}
	h, _, err := k.AuditHead(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := audit.Verify(recs, audit.VerifyOptions{Keys: k.keys, FromStart: true, Head: &h, RequireHead: true}); err != nil {
		return nil, fmt.Errorf("keyed chain: %w", err)
	}
	out := make([]audit.Record, len(recs))
	var prev *audit.Record
	for i, r := range recs {
		r.Seq, r.PrevHash, r.KeyID, r.Hash = 0, "", "", ""
		out[i] = audit.Chain(prev, r)
		prev = &out[i]
	}
	return out, nil
}

package e2e

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vigilops/vigil/bot"
	"github.com/vigilops/vigil/internal/testenv/modeltest"
	"github.com/vigilops/vigil/internal/testenv/redistest"
	"github.com/vigilops/vigil/internal/testenv/testkit"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/policy/audit"
	redisstore "github.com/vigilops/vigil/store/redis"
)

// vigil beyond one Redis: two replicas on a Redis Cluster, and on a
// Sentinel-managed master whose death the Sentinels turn into a failover.
// Every server is started here (redistest) and dies with the test.

var topologyChannels = []policy.ChannelPolicy{{Match: "testchat:ops", Level: policy.LevelControlled,
	Operators: []string{"alice"}, Approvers: []string{"bob", "carol"}}}

// verifyAudit checks the audit chain in the store from record 1.
func verifyAudit(t *testing.T, s *redisstore.Store) []audit.Record {
	t.Helper()
	recs, err := s.RecentAudit(context.Background(), 10000)
	if err != nil {
		t.Fatalf("read the audit chain: %v", err)
	}
	if err := audit.VerifyChain(recs); err != nil {
		t.Fatalf("the audit chain does not verify: %v", err)
	}
	return recs
}

// waitStatusIn polls the approval until it has one of want.
func waitApprovalStatus(t *testing.T, s *redisstore.Store, id string, want ...policy.ApprovalStatus) policy.ApprovalStatus {
	t.Helper()
	var got policy.ApprovalStatus
	waitFor(t, replicaWait, "approval "+id+" to be settled", func() bool {
		a, err := s.GetApproval(context.Background(), id)
		if err != nil {
			return false
		}
		got = a.Status
		for _, w := range want {
			if got == w {
				return true
			}
		}
		return false
	})
	return got
}

// Two replicas share a Redis Cluster of three masters (each with a
// replica): an event delivered to both is handled once, an approval
// clicked on both runs its call once, the keys spread over the masters,
// and the audit chain verifies.
func TestClusterTwoReplicas(t *testing.T) {
	c := redistest.StartCluster(t, 3, 1)
	at := redisstore.Options{Addrs: c.Addrs(), KeyPrefix: "vigil:"}
	file := filepath.Join(t.TempDir(), "log")
	model := modeltest.New(t)
	routeTurns(model, map[string][]modeltest.Step{
		"append a line": writeSteps(file, "appended"),
		"look at":       {modeltest.Calls(readExec("echo hi")), modeltest.Text("looked")},
	})
	o := replicaOptions{Model: model, Channels: topologyChannels}
	reps := []*replica{startReplica(t, "A", at, o), startReplica(t, "B", at, o)}

	dup := testkit.Thread("ops", "t1")
	var wg sync.WaitGroup
	for _, r := range reps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.chat.SayEvent(t, dup, "alice", "look at @localhost", "Ev-dup")
		}()
	}
	wg.Wait()
	if texts, by := waitAnswers(t, reps, dup); len(texts) != 1 || texts[0] != "looked" {
		t.Fatalf("a duplicated event: answers %q by %v, want one \"looked\"\n%s", texts, by, transcripts(reps, dup))
	}

	th := testkit.Thread("ops", "t2")
	reps[0].chat.Say(t, th, "alice", "append a line on @localhost")
	card := reps[0].chat.WaitCard(t, th, replicaWait)
	for i, u := range []string{"bob", "carol"} {
		r := reps[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.chat.Decide(t, bot.Decision{EventID: "click-" + u, ApprovalID: card.ID, Token: card.Token, Approve: true, User: u, Thread: th})
		}()
	}
	wg.Wait()
	if texts, by := waitAnswers(t, reps, th); len(texts) != 1 || texts[0] != "appended" {
		t.Fatalf("answers %q by %v, want one \"appended\"\n%s", texts, by, transcripts(reps, th))
	}
	if n := testkit.LineCount(t, file); n != 1 {
		t.Fatalf("two clicks on two replicas ran the write %d times, want 1", n)
	}
	waitApprovalStatus(t, reps[1].store, card.ID, policy.ApprovalExecuted)

	used := 0
	for _, m := range c.Masters() {
		if n, err := m.Do("DBSIZE"); err == nil && n.(int64) > 0 {
			used++
		}
	}
	if used < 2 {
		t.Fatalf("vigil's keys are on %d master(s); want them spread over the Cluster", used)
	}
	recs := verifyAudit(t, reps[0].store)
	if !hasRecord(recs, audit.Executed, card.ID) {
		t.Fatalf("no executed record for %s in the audit chain", card.ID)
	}
}

// sentinelPair starts two replicas on Sentinel-managed Redis.
func sentinelPair(t *testing.T, ss *redistest.Sentinels, o replicaOptions, wrapB func(*bot.Stores)) (a, b *replica) {
	t.Helper()
	at := redisstore.Options{Addrs: ss.Addrs(), MasterName: redistest.MasterName, KeyPrefix: "vigil:",
		ReplicaAckTimeout: 500 * time.Millisecond}
	a = startReplica(t, "A", at, o)
	o.WrapStores = wrapB
	b = startReplica(t, "B", at, o)
	return a, b
}

// The master dies while a run waits for approval. /readyz fails until the
// Sentinels have promoted the replica and vigil has found it, then passes
// again by itself; the approval survived (its creation waited for the
// replica), is decided on the other vigil replica, and runs once. The
// failover time is logged (README, "Scaling out").
func TestSentinelFailoverWhileWaitingForApproval(t *testing.T) {
	ss := redistest.StartSentinels(t, time.Second)
	file := filepath.Join(t.TempDir(), "log")
	model := modeltest.New(t)
	routeTurns(model, map[string][]modeltest.Step{"append a line": writeSteps(file, "appended")})
	reg := prometheus.NewRegistry()
	a, b := sentinelPair(t, ss, replicaOptions{Model: model, Channels: topologyChannels, SweepEvery: 300 * time.Millisecond}, nil)
	ops := opsServer(t, a, reg)

	th := testkit.Thread("ops", "t1")
	a.chat.Say(t, th, "alice", "append a line on @localhost")
	card := a.chat.WaitCard(t, th, replicaWait)
	idleAll(t, []*replica{a, b})
	waitStatus(t, ops+"/readyz", http.StatusOK)

	crashed := time.Now()
	ss.Master.Crash()
	if body := waitStatus(t, ops+"/readyz", http.StatusServiceUnavailable); !strings.Contains(body, "redis") {
		t.Fatalf("/readyz during the failover says %q; it should name redis", body)
	}
	unready := time.Since(crashed)
	promoted := ss.WaitPromoted(crashed, replicaWait)
	waitStatus(t, ops+"/readyz", http.StatusOK)
	ready := time.Since(crashed)
	t.Logf("failover (down-after %s): /readyz failed after %s, replica promoted after %s, /readyz ok after %s",
		ss.DownAfter, unready.Round(time.Millisecond), promoted.Round(time.Millisecond), ready.Round(time.Millisecond))

	// Each vigil replica finds the new master on its own (go-redis asks
	// the Sentinels); a click on one that has not yet is refused with a
	// "try again" (see TestOutageRedisRecovers), so wait for B too.
	waitFor(t, replicaWait, "replica B to reach the new master", func() bool { return b.store.Ping(context.Background()) == nil })
	b.chat.Decide(t, bot.Decision{EventID: "click-1", ApprovalID: card.ID, Token: card.Token, Approve: true, User: "bob", Thread: th})
	reps := []*replica{a, b}
	if texts, by := waitAnswers(t, reps, th); len(texts) != 1 || texts[0] != "appended" {
		t.Fatalf("answers %q by %v, want one \"appended\"\n%s", texts, by, transcripts(reps, th))
	}
	waitApprovalStatus(t, b.store, card.ID, policy.ApprovalExecuted)
	if n := testkit.LineCount(t, file); n != 1 {
		t.Fatalf("the approved write ran %d times across the failover, want 1", n)
	}
	recs := verifyAudit(t, a.store)
	if !hasRecord(recs, audit.Executed, card.ID) {
		t.Fatalf("no executed record for %s in the audit chain", card.ID)
	}
}

// crashAtClaim kills the master at the approved -> executing claim, before
// or after it is written.
type crashAtClaim struct {
	bot.ApprovalStore
	before bool
	crash  func()
	once   sync.Once
}

func (c *crashAtClaim) UpdateApproval(ctx context.Context, id string, step policy.Transition) (*policy.Approval, error) {
	claim := step.Step() == policy.StepClaimExecution
	if claim && c.before {
		c.once.Do(c.crash)
	}
	a, err := c.ApprovalStore.UpdateApproval(ctx, id, step)
	if claim && !c.before && err == nil && a.Status == policy.ApprovalExecuting {
		c.once.Do(c.crash)
	}
	return a, err
}

// The master dies at the approved -> executing claim. Killed after the
// claim was written (and, by WAIT, replicated), the call runs once and the
// new master knows it was claimed: no replica runs it again. Killed before,
// the claim fails, nothing runs, and the person is told; after the
// failover nothing runs it either. Either way the audit chain verifies.
func TestSentinelFailoverAtClaim(t *testing.T) {
	for _, before := range []bool{false, true} {
		name := "after the claim"
		if before {
			name = "before the claim"
		}
		t.Run(name, func(t *testing.T) {
			ss := redistest.StartSentinels(t, time.Second)
			file := filepath.Join(t.TempDir(), "log")
			model := modeltest.New(t)
			routeTurns(model, map[string][]modeltest.Step{"append a line": writeSteps(file, "appended")})
			var crashed time.Time
			wrap := func(st *bot.Stores) {
				st.Approvals = &crashAtClaim{ApprovalStore: st.Approvals, before: before, crash: func() {
					crashed = time.Now()
					ss.Master.Crash()
				}}
			}
			a, b := sentinelPair(t, ss, replicaOptions{Model: model, Channels: topologyChannels,
				SweepEvery: 300 * time.Millisecond, LockTTL: 3 * time.Second, AuditRetry: 300 * time.Millisecond}, wrap)
			reps := []*replica{a, b}
			th := testkit.Thread("ops", "t1")
			a.chat.Say(t, th, "alice", "append a line on @localhost")
			card := a.chat.WaitCard(t, th, replicaWait)
			idleAll(t, reps)

			b.chat.Decide(t, bot.Decision{EventID: "click-1", ApprovalID: card.ID, Token: card.Token, Approve: true, User: "bob", Thread: th})
			waitFor(t, replicaWait, "the master to be killed at the claim", func() bool { return ss.Master.Pid() == 0 })
			ss.WaitPromoted(crashed, replicaWait)
			// Let both replicas sweep (orphaned runs, approvals left
			// executing) on the new master for a while.
			time.Sleep(3 * time.Second)
			idleAll(t, reps)

			n := testkit.LineCount(t, file)
			st, err := b.store.GetApproval(context.Background(), card.ID)
			if err != nil {
				t.Fatalf("the approval is gone after the failover: %v", err)
			}
			t.Logf("after the failover: the write ran %d time(s), approval %s\n%s", n, st.Status, transcripts(reps, th))
			if before {
				if n != 0 {
					t.Fatalf("the claim failed with the master, yet the write ran %d times", n)
				}
				if st.Status == policy.ApprovalExecuted || st.Status == policy.ApprovalExecuting {
					t.Fatalf("approval %s after a failed claim", st.Status)
				}
				if len(errorReplies(b.chat, th)) == 0 {
					t.Fatalf("nobody was told the approved call did not run\n%s", transcripts(reps, th))
				}
			} else {
				if n != 1 {
					t.Fatalf("the claimed write ran %d times across the failover, want exactly 1", n)
				}
				got := waitApprovalStatus(t, b.store, card.ID, policy.ApprovalExecuted, policy.ApprovalFailed)
				if got == policy.ApprovalFailed {
					t.Logf("the approval was settled as failed (its outcome was not recorded before the failover)")
				}
			}
			verifyAudit(t, b.store)
		})
	}
}

// A replica that stops acknowledging (frozen) makes an approval click
// fail: nothing runs and the person is told; when it acknowledges again,
// the same approval is decided and runs once.
func TestSentinelUnacknowledgedDecisionRunsNothing(t *testing.T) {
	ss := redistest.StartSentinels(t, 5*time.Second)
	file := filepath.Join(t.TempDir(), "log")
	model := modeltest.New(t)
	routeTurns(model, map[string][]modeltest.Step{"append a line": writeSteps(file, "appended")})
	a, b := sentinelPair(t, ss, replicaOptions{Model: model, Channels: topologyChannels}, nil)
	reps := []*replica{a, b}
	th := testkit.Thread("ops", "t1")
	a.chat.Say(t, th, "alice", "append a line on @localhost")
	card := a.chat.WaitCard(t, th, replicaWait)
	idleAll(t, reps)

	ss.Replica.Freeze()
	thawed := false
	t.Cleanup(func() {
		if !thawed {
			ss.Replica.Thaw()
		}
	})
	b.chat.Decide(t, bot.Decision{EventID: "click-1", ApprovalID: card.ID, Token: card.Token, Approve: true, User: "bob", Thread: th})
	idleAll(t, reps)
	if n := testkit.LineCount(t, file); n != 0 {
		t.Fatalf("an unacknowledged decision ran the write %d times", n)
	}
	if st, err := b.store.GetApproval(context.Background(), card.ID); err != nil || st.Status != policy.ApprovalPending {
		t.Fatalf("after an unacknowledged decision the approval is %+v (%v), want still pending", st, err)
	}
	told := len(errorReplies(b.chat, th)) + len(b.chat.Notes("bob"))
	if told == 0 {
		t.Fatalf("bob was not told his click failed\n%s", transcripts(reps, th))
	}
	ss.Replica.Thaw()
	thawed = true

	waitFor(t, replicaWait, "the approval to be decided after the thaw", func() bool {
		b.chat.Decide(t, bot.Decision{EventID: "click-" + time.Now().Format("150405.000"), ApprovalID: card.ID, Token: card.Token, Approve: true, User: "bob", Thread: th})
		idleAll(t, reps)
		st, err := b.store.GetApproval(context.Background(), card.ID)
		return err == nil && st.Status != policy.ApprovalPending
	})
	if texts, by := waitAnswers(t, reps, th); len(texts) != 1 || texts[0] != "appended" {
		t.Fatalf("answers %q by %v, want one \"appended\"\n%s", texts, by, transcripts(reps, th))
	}
	if n := testkit.LineCount(t, file); n != 1 {
		t.Fatalf("the approved write ran %d times, want 1", n)
	}
	verifyAudit(t, b.store)
}

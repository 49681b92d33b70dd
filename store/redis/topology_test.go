package redis

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vigilops/vigil/bot"
	"github.com/vigilops/vigil/internal/testenv/redistest"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/policy/audit"
	"github.com/vigilops/vigil/store/storetest"
)

// The store on a real Redis Cluster (three masters, each with a replica)
// and on a Sentinel-managed master with a replica, all started here.

func clusterStore(t *testing.T, c *redistest.Cluster, prefix string) *Store {
	t.Helper()
	return openStoreWith(t, Options{Addrs: c.Addrs(), KeyPrefix: prefix})
}

// TestCluster runs the conformance suite on a Cluster and checks that the
// keys spread over the masters while each script's keys share one slot.
func TestCluster(t *testing.T) {
	c := redistest.StartCluster(t, 3, 1)
	t.Run("conformance", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) bot.Stores { return clusterStore(t, c, testPrefix(t)).Stores() })
	})
	t.Run("audit head", func(t *testing.T) {
		storetest.RunAuditHead(t, func(t *testing.T, keys *audit.Keyring) storetest.AuditHeadStore {
			return openStoreWith(t, Options{Addrs: c.Addrs(), KeyPrefix: testPrefix(t), AuditKeys: keys})
		})
	})
	t.Run("audit crowd", func(t *testing.T) {
		testAuditCrowd(t, func(prefix string) *Store { return clusterStore(t, c, prefix) })
	})
	t.Run("slots", func(t *testing.T) { testClusterSlots(t, c) })
	t.Run("replica ack", func(t *testing.T) { testClusterReplicaAck(t, c) })
	t.Run("failover", func(t *testing.T) { testClusterFailover(t, c) }) // last: it kills a master
}

// testClusterFailover kills the master owning the approvals' slot: Ping
// (what /readyz asks) fails until the Cluster has promoted its replica and
// then passes by itself; the approval, whose creation waited for that
// replica, is still there and can be decided.
func testClusterFailover(t *testing.T, c *redistest.Cluster) {
	s := clusterStore(t, c, testPrefix(t))
	ctx := t.Context()
	a := approvalFor("ap-failover")
	if err := s.CreateApproval(ctx, a); err != nil {
		t.Fatal(err)
	}
	slot, err := c.Client().ClusterKeySlot(ctx, s.keys.approvalsPending()).Result()
	if err != nil {
		t.Fatal(err)
	}
	master := masterOfSlot(t, c, slot)
	killed := time.Now()
	master.Crash()
	deadline := time.Now().Add(5 * time.Second)
	for s.Ping(ctx) == nil {
		if time.Now().After(deadline) {
			t.Fatal("Ping still passes 5s after a master died")
		}
		time.Sleep(50 * time.Millisecond)
	}
	unready := time.Since(killed)
	deadline = time.Now().Add(25 * time.Second)
	for s.Ping(ctx) != nil {
		if time.Now().After(deadline) {
			t.Fatal("Ping still fails 25s after a master died; the Cluster should have promoted its replica")
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("Cluster failover (cluster-node-timeout 2s): Ping failed after %s, passed again after %s",
		unready.Round(time.Millisecond), time.Since(killed).Round(time.Millisecond))
	got, err := s.GetApproval(ctx, a.ID)
	if err != nil {
		t.Fatalf("the approval did not survive the failover: %v", err)
	}
	if got.Status != policy.ApprovalPending {
		t.Fatalf("approval %s after the failover, want pending", got.Status)
	}
	if _, err := s.UpdateApproval(ctx, a.ID, policy.Decide(storetest.Decision("U_BOSS", true), time.Now())); err != nil {
		t.Fatalf("decide after the failover: %v", err)
	}
}

// masterOfSlot is the master node serving slot.
func masterOfSlot(t *testing.T, c *redistest.Cluster, slot int64) *redistest.Server {
	t.Helper()
	//lint:ignore SA1019 CLUSTER SLOTS answers slot ranges directly, which is what the test asks; redistest runs Redis 7, where it still works.
	slots, err := c.Client().ClusterSlots(t.Context()).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range slots {
		if int64(r.Start) <= slot && slot <= int64(r.End) {
			for _, n := range c.Nodes {
				if n.Addr() == r.Nodes[0].Addr {
					return n
				}
			}
		}
	}
	t.Fatalf("no master serves slot %d", slot)
	return nil
}

// testClusterSlots proves, with CLUSTER KEYSLOT on the real Cluster, that
// every key one script or transaction touches lands in one slot, and that
// a deployment's keys use more than one master.
func testClusterSlots(t *testing.T, c *redistest.Cluster) {
	s := clusterStore(t, c, testPrefix(t))
	k := s.keys
	groups := map[string][]string{
		"session":   {k.sessionMeta("slack:T1:C1:1700.1"), k.sessionHistory("slack:T1:C1:1700.1")},
		"approval":  {k.approval("ap-1"), k.approvalsPending(), k.approvalsExecuting(), k.approval("ap-2")},
		"audit":     {k.auditLog(), k.auditHead()},
		"memory":    {k.memoryItems(), k.memoryRecent()},
		"lock":      {k.lock("slack:T1:C1:1700.1")},
		"plugin":    {k.pluginKV("pager")},
		"ratelimit": {k.rate("u1")},
	}
	cc := c.Client()
	ctx := t.Context()
	slotOf := func(key string) int64 {
		n, err := cc.ClusterKeySlot(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for name, ks := range groups {
		want := slotOf(ks[0])
		for _, key := range ks[1:] {
			if got := slotOf(key); got != want {
				t.Errorf("%s: %s is in slot %d, %s in %d; one script's keys must share a hash tag", name, ks[0], want, key, got)
			}
		}
	}
	// Many threads' sessions, dedup marks and locks spread over masters.
	for i := range 30 {
		key := "slack:T1:C1:" + strings.Repeat("9", i%5) + string(rune('a'+i))
		if _, err := s.FirstSeen(ctx, "event:"+key, time.Minute); err != nil {
			t.Fatal(err)
		}
		l, err := s.Lock(ctx, key, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		_ = l.Unlock(ctx)
	}
	used := 0
	for _, m := range c.Masters() {
		v, err := m.Do("SCAN", "0", "MATCH", s.keys.all(), "COUNT", "1000")
		if err != nil {
			t.Fatal(err)
		}
		if page, _ := v.([]any); len(page) == 2 {
			if ks, _ := page[1].([]any); len(ks) > 0 {
				used++
			}
		}
	}
	if used < 2 {
		t.Fatalf("keys live on %d master(s); the hash tags should spread threads over the Cluster", used)
	}
}

// testClusterReplicaAck freezes the replica of the master owning the
// approvals' slot: an approval can then not be created nor claimed, and
// nothing of it stays behind; thawed, the same calls succeed.
func testClusterReplicaAck(t *testing.T, c *redistest.Cluster) {
	s := openStoreWith(t, Options{Addrs: c.Addrs(), KeyPrefix: testPrefix(t), ReplicaAckTimeout: 300 * time.Millisecond})
	ctx := t.Context()
	slot, err := c.Client().ClusterKeySlot(ctx, s.keys.approvalsPending()).Result()
	if err != nil {
		t.Fatal(err)
	}
	replica := replicaOfSlot(t, c, slot)
	a := approvalFor("ap-frozen")
	b := approvalFor("ap-claimed")
	if err := s.CreateApproval(ctx, b); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateApproval(ctx, b.ID, policy.Decide(storetest.Decision("U_BOSS", true), time.Now())); err != nil {
		t.Fatal(err)
	}

	// A dedup mark in a slot of the same master: its replica is frozen too.
	dedupKey := ""
	for i := 0; dedupKey == ""; i++ {
		k := fmt.Sprintf("event:slack:Ev%d", i)
		ks, err := c.Client().ClusterKeySlot(ctx, s.keys.dedup(k)).Result()
		if err != nil {
			t.Fatal(err)
		}
		if replicaOfSlot(t, c, ks) == replica {
			dedupKey = k
		}
	}
	// One acknowledged mark first, so the replica count is known and the
	// mark and its WAIT go in one pipeline.
	if first, err := s.FirstSeen(ctx, "warm:"+dedupKey, time.Minute); err != nil || !first {
		t.Fatalf("dedup with the replica up: %v, %v", first, err)
	}

	replica.Freeze()
	if first, err := s.FirstSeen(ctx, dedupKey, time.Minute); !errors.Is(err, ErrNotReplicated) || first {
		replica.Thaw()
		t.Fatalf("dedup with the replica frozen: %v, %v; want ErrNotReplicated", first, err)
	}
	err = s.CreateApproval(ctx, a)
	if !errors.Is(err, ErrNotReplicated) {
		replica.Thaw()
		t.Fatalf("create with the replica frozen: %v, want ErrNotReplicated", err)
	}
	_, err = s.UpdateApproval(ctx, b.ID, policy.ClaimExecution(time.Now()))
	replica.Thaw()
	if !errors.Is(err, ErrNotReplicated) {
		t.Fatalf("claim with the replica frozen: %v, want ErrNotReplicated", err)
	}
	if _, err := s.GetApproval(ctx, a.ID); !errors.Is(err, bot.ErrNotFound) {
		t.Fatalf("the unreplicated approval stayed: %v", err)
	}
	if got, err := s.GetApproval(ctx, b.ID); err != nil || got.Status != policy.ApprovalApproved {
		t.Fatalf("the unreplicated claim stayed: %+v, %v; want it approved again", got, err)
	}
	// Thawed, the replica catches up and acknowledges again. The
	// unreplicated dedup mark was dropped: the event is new once more.
	waitAck(t, func() error { return s.CreateApproval(ctx, a) })
	if first, err := s.FirstSeen(ctx, dedupKey, time.Minute); err != nil || !first {
		t.Fatalf("dedup after thaw: %v, %v; want the dropped mark to be new", first, err)
	}
	if first, err := s.FirstSeen(ctx, dedupKey, time.Minute); err != nil || first {
		t.Fatalf("second dedup after thaw: %v, %v; want a duplicate", first, err)
	}
	if _, err := s.UpdateApproval(ctx, b.ID, policy.ClaimExecution(time.Now())); err != nil {
		t.Fatalf("claim after thaw: %v", err)
	}
}

// waitAck retries op while it fails with ErrNotReplicated (a thawed
// replica takes a moment to catch up), for up to 10s.
func waitAck(t *testing.T, op func() error) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := op()
		if err == nil {
			return
		}
		if !errors.Is(err, ErrNotReplicated) || time.Now().After(deadline) {
			t.Fatalf("after thaw: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// replicaOfSlot is the replica node serving slot.
func replicaOfSlot(t *testing.T, c *redistest.Cluster, slot int64) *redistest.Server {
	t.Helper()
	//lint:ignore SA1019 CLUSTER SLOTS answers slot ranges directly, which is what the test asks; redistest runs Redis 7, where it still works.
	slots, err := c.Client().ClusterSlots(t.Context()).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range slots {
		if int64(r.Start) <= slot && slot <= int64(r.End) && len(r.Nodes) > 1 {
			for _, n := range c.Nodes {
				if n.Addr() == r.Nodes[1].Addr {
					return n
				}
			}
		}
	}
	t.Fatalf("no replica serves slot %d", slot)
	return nil
}

func approvalFor(id string) *policy.Approval {
	now := time.Now()
	return &policy.Approval{ID: id, Status: policy.ApprovalPending, Tool: "shell", Command: "systemctl restart nginx",
		Channel: "slack:C1", CreatedAt: now, ExpiresAt: now.Add(10 * time.Minute)}
}

// TestSentinelReplicaAck: behind Sentinel, a frozen replica makes every
// write that must survive a failover fail (approval, dedup, audit) and
// leaves no trace of it; a live replica acknowledges them.
func TestSentinelReplicaAck(t *testing.T) {
	ss := redistest.StartSentinels(t, time.Second)
	s := openStoreWith(t, Options{Addrs: ss.Addrs(), MasterName: redistest.MasterName,
		KeyPrefix: testPrefix(t), ReplicaAckTimeout: 300 * time.Millisecond})
	ctx := t.Context()
	if err := s.CreateApproval(ctx, approvalFor("ap-ok")); err != nil {
		t.Fatal(err)
	}
	if first, err := s.FirstSeen(ctx, "event:1", time.Minute); err != nil || !first {
		t.Fatalf("FirstSeen: %v %v", first, err)
	}

	ss.Replica.Freeze()
	ackErr := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrNotReplicated) {
			ss.Replica.Thaw()
			t.Fatalf("%s with the replica frozen: %v, want ErrNotReplicated", what, err)
		}
	}
	ackErr("create approval", s.CreateApproval(ctx, approvalFor("ap-frozen")))
	_, err := s.UpdateApproval(ctx, "ap-ok", policy.Decide(storetest.Decision("U_BOSS", true), time.Now()))
	ackErr("decide approval", err)
	_, err = s.FirstSeen(ctx, "event:2", time.Minute)
	ackErr("dedup", err)
	_, err = s.AppendAudit(ctx, audit.Record{Actor: "vigil", Action: audit.Expired, Outcome: "frozen"})
	ackErr("audit append", err)
	ss.Replica.Thaw()

	if got, err := s.GetApproval(ctx, "ap-ok"); err != nil || got.Status != policy.ApprovalPending {
		t.Fatalf("the unreplicated decision stayed: %+v %v", got, err)
	}
	// The failed dedup mark is gone: a redelivery of event 2 is handled.
	waitAck(t, func() error {
		first, err := s.FirstSeen(ctx, "event:2", time.Minute)
		if err == nil && !first {
			t.Fatal("the event whose dedup failed counts as seen: its redelivery would be dropped")
		}
		return err
	})
	if _, err := s.UpdateApproval(ctx, "ap-ok", policy.Decide(storetest.Decision("U_BOSS", true), time.Now())); err != nil {
		t.Fatal(err)
	}
	n, err := ss.Master.Client().Wait(ctx, 1, time.Second).Result()
	if err != nil || n != 1 {
		t.Fatalf("replica not back: %d %v", n, err)
	}
	// The replica has everything acknowledged.
	raw, err := ss.Replica.Do("GET", s.keys.approval("ap-ok"))
	if err != nil || !strings.Contains(raw.(string), `"approved"`) {
		t.Fatalf("replica's copy: %v %v", raw, err)
	}
}

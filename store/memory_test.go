package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/vigilops/vigil/bot"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/policy/audit"
	"github.com/vigilops/vigil/store"
	"github.com/vigilops/vigil/store/storetest"
)

func TestMemoryConformance(t *testing.T) {
	storetest.Run(t, func(*testing.T) bot.Stores { return store.NewMemory().Stores() })
}

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func TestMemoryTTLWithClock(t *testing.T) {
	ctx := context.Background()
	clk := &fakeClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	m := store.NewMemory(store.WithClock(clk.Now))

	if ok, _ := m.FirstSeen(ctx, "e1", time.Hour); !ok {
		t.Fatal("first")
	}
	clk.Advance(59 * time.Minute)
	if ok, _ := m.FirstSeen(ctx, "e1", time.Hour); ok {
		t.Fatal("seen again within the TTL")
	}
	clk.Advance(time.Minute)
	if ok, _ := m.FirstSeen(ctx, "e1", time.Hour); !ok {
		t.Fatal("not new after the TTL")
	}
	if _, err := m.FirstSeen(ctx, "e2", 0); err == nil {
		t.Error("zero TTL accepted")
	}

	l, err := m.Lock(ctx, "k", 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Minute)
	if err := l.Renew(ctx); err != nil {
		t.Fatal(err)
	}
	clk.Advance(90 * time.Second) // 2m30s after taking, 1m30s after renewing
	if _, err := m.Lock(ctx, "k", time.Minute); !errors.Is(err, bot.ErrLocked) {
		t.Fatalf("renewed lock taken: %v", err)
	}
	clk.Advance(30 * time.Second)
	other, err := m.Lock(ctx, "k", time.Minute)
	if err != nil {
		t.Fatalf("expired lock not free: %v", err)
	}
	if err := l.Renew(ctx); !errors.Is(err, bot.ErrLocked) {
		t.Errorf("renew after loss: %v", err)
	}
	if err := other.Unlock(ctx); err != nil {
		t.Error(err)
	}
}

func TestMemoryAuditLimit(t *testing.T) {
	ctx := context.Background()
	m := store.NewMemory(store.WithAuditLimit(5))
	for i := range 12 {
		if _, err := m.AppendAudit(ctx, audit.Record{Actor: fmt.Sprint(i), Action: audit.Allow}); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := m.RecentAudit(ctx, 100)
	if err != nil || len(recs) != 5 || recs[0].Seq != 8 || recs[4].Seq != 12 {
		t.Fatalf("%+v %v", recs, err)
	}
	if err := audit.VerifySegment(recs); err != nil {
		t.Error(err)
	}
	if recs[0].Time.IsZero() {
		t.Error("a record without a time was not stamped")
	}
}

func TestMemoryCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m := store.NewMemory()
	if _, err := m.GetApproval(ctx, "x"); !errors.Is(err, context.Canceled) {
		t.Errorf("GetApproval: %v", err)
	}
	if _, err := m.Lock(ctx, "x", time.Second); !errors.Is(err, context.Canceled) {
		t.Errorf("Lock: %v", err)
	}
}

func TestMemoryPrunesOldApprovals(t *testing.T) {
	ctx := context.Background()
	clk := &fakeClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	m := store.NewMemory(store.WithClock(clk.Now))
	mk := func() *policy.Approval {
		a, err := policy.NewApproval(policy.ApprovalRequest{Tool: "control", Requester: "U", Channel: "slack:C1"}, clk.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := m.CreateApproval(ctx, a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	denied, pending, executing := mk(), mk(), mk()
	for _, step := range []struct {
		id   string
		step policy.Transition
	}{
		{denied.ID, policy.Decide(storetest.Decision("U_BOSS", false), clk.Now())},
		{executing.ID, policy.Decide(storetest.Decision("U_BOSS", true), clk.Now())},
		{executing.ID, policy.ClaimExecution(clk.Now())},
	} {
		if _, err := m.UpdateApproval(ctx, step.id, step.step); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(25 * time.Hour)
	mk()
	if _, err := m.GetApproval(ctx, denied.ID); !errors.Is(err, bot.ErrNotFound) {
		t.Errorf("old denied approval kept: %v", err)
	}
	for _, a := range []*policy.Approval{pending, executing} {
		if _, err := m.GetApproval(ctx, a.ID); err != nil {
			t.Errorf("%s approval dropped: %v", a.Status, err)
		}
	}
}

func TestAuditHeadConformance(t *testing.T) {
	storetest.RunAuditHead(t, func(_ *testing.T, keys *audit.Keyring) storetest.AuditHeadStore {
		return store.NewMemory(store.WithAuditKeys(keys))
	})
}

func TestMemoryRateLimitWindow(t *testing.T) {
	storetest.RunRateLimitWindow(t, func(_ *testing.T, clock *storetest.Clock) []bot.RateLimiter {
		return []bot.RateLimiter{store.NewMemory(store.WithClock(clock.Now)).Stores().Limits}
	})
}

package bot_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigilops/vigil/bot"
)

// countedAlerts counts the loads of each alert group record.
type countedAlerts struct {
	bot.AlertGroupStore
	mu    sync.Mutex
	loads map[string]int
}

func (c *countedAlerts) LoadAlertGroup(ctx context.Context, key string) (*bot.AlertGroup, error) {
	c.mu.Lock()
	c.loads[key]++
	c.mu.Unlock()
	return c.AlertGroupStore.LoadAlertGroup(ctx, key)
}

func (c *countedAlerts) count(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.loads[key]
}

// countedLocks counts the locks taken (or tried) on each key.
type countedLocks struct {
	bot.Locker
	mu    sync.Mutex
	locks map[string]int
}

func (c *countedLocks) Lock(ctx context.Context, key string, ttl time.Duration) (bot.Lock, error) {
	c.mu.Lock()
	c.locks[key]++
	c.mu.Unlock()
	return c.Locker.Lock(ctx, key, ttl)
}

func (c *countedLocks) count(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.locks[key]
}

// countedStores wraps fresh memory stores so a test can count the alert
// group's loads and locks.
func countedStores() (bot.Stores, *countedAlerts, *countedLocks) {
	st := memStores(nil)
	alerts := &countedAlerts{AlertGroupStore: st.Alerts, loads: map[string]int{}}
	locks := &countedLocks{Locker: st.Locks, locks: map[string]int{}}
	st.Alerts, st.Locks = alerts, locks
	return st, alerts, locks
}

// An alert's way from intake to investigation loads (and locks) its group
// once per step: once for each delivered notification, which opens or
// updates the thread, and once for the claim that starts the
// investigation. The debounce waits on the clock and on what this
// replica's notifications said, not on the store: a notification that
// changed the group moves the due time, and the claim, which loads the
// group under its lock anyway, is where a change made on another replica
// is seen.
func TestAlertPathLoadsTheGroupOncePerStep(t *testing.T) {
	const debounce = 400 * time.Millisecond
	ctx := context.Background()
	first := notification(bot.AlertFiring, latency("web-1", "firing"))
	second := notification(bot.AlertFiring, latency("web-1", "firing"), latency("web-2", "firing"))
	key, lockKey := first.Key(), "alertgroup:"+first.Key()

	t.Run("debounced", func(t *testing.T) {
		runner := newRunner()
		clk := newFakeClock()
		stores, alerts, locks := countedStores()
		// No Run: its sweep for due groups (a step of its own, one load
		// per group) stays out of the count.
		r := newReplica(t, replicaOptions{runner: runner, alertDebounce: debounce, clock: clk, stores: stores, noRun: true})
		step := func(what string, loads int) {
			t.Helper()
			if got := alerts.count(key); got != loads {
				t.Fatalf("after %s: the group was loaded %d times, want %d", what, got, loads)
			}
			if got := locks.count(lockKey); got != loads {
				t.Fatalf("after %s: the group was locked %d times, want %d", what, got, loads)
			}
		}

		if err := r.bot.DeliverAlert(ctx, first, alertRoute); err != nil {
			t.Fatal(err)
		}
		step("the first notification", 1)
		clk.advance(debounce / 2)
		if err := r.bot.DeliverAlert(ctx, second, alertRoute); err != nil {
			t.Fatal(err)
		}
		step("the second notification", 2)
		// The first debounce ends; the group changed half-way, so it
		// has not settled: no investigation, and no load to find out.
		clk.advance(debounce / 2)
		r.idle(t)
		if n := len(runner.of("start")); n != 0 {
			t.Fatalf("the investigation started before the group settled (%d runs)", n)
		}
		step("the first debounce", 2)
		clk.advance(debounce / 2)
		c := recv(t, runner.entered, "the investigation")
		if !strings.Contains(c.in.Text, "2 firing") {
			t.Errorf("the investigation does not cover the settled group:\n%s", c.in.Text)
		}
		r.idle(t)
		step("the investigation", 3)
	})

	t.Run("at once", func(t *testing.T) {
		runner := newRunner()
		stores, alerts, locks := countedStores()
		r := newReplica(t, replicaOptions{runner: runner, stores: stores, noRun: true})
		if err := r.bot.DeliverAlert(ctx, first, alertRoute); err != nil {
			t.Fatal(err)
		}
		recv(t, runner.entered, "the investigation")
		r.idle(t)
		if l, k := alerts.count(key), locks.count(lockKey); l != 2 || k != 2 {
			t.Fatalf("one notification and its investigation loaded the group %d times and locked it %d times, want 2 and 2", l, k)
		}
	})
}

// A notification that reaches another replica after this one scheduled
// the investigation changes the group where this replica cannot see it
// until it claims: the claim finds the group unsettled, leaves it
// unclaimed, and this replica investigates once it has settled, once.
func TestAlertChangedOnAnotherReplicaIsClaimedOnceSettled(t *testing.T) {
	const debounce = 400 * time.Millisecond
	ctx := context.Background()
	clk := newFakeClock()
	stores := memStores(nil)
	runner := newRunner()
	a := newReplica(t, replicaOptions{runner: runner, alertDebounce: debounce, clock: clk, stores: stores})
	bRunner := newRunner()
	bClock := newFakeClock()
	b := newReplica(t, replicaOptions{runner: bRunner, alertDebounce: debounce, clock: bClock, stores: stores})

	if err := a.bot.DeliverAlert(ctx, notification(bot.AlertFiring, latency("web-1", "firing")), alertRoute); err != nil {
		t.Fatal(err)
	}
	clk.advance(debounce / 2)
	// Replica B records a change at A's half-debounce: B's clock reads
	// A's, and then stands still, so B's own timer never fires.
	bClock.set(clk.Now())
	if err := b.bot.DeliverAlert(ctx, notification(bot.AlertFiring, latency("web-1", "firing"), latency("web-2", "firing")), alertRoute); err != nil {
		t.Fatal(err)
	}
	clk.advance(debounce / 2) // A's debounce: A claims, finds it unsettled
	a.idle(t)
	if n := len(runner.of("start")); n != 0 {
		t.Fatalf("replica A investigated a group another replica changed half a debounce ago (%d runs)", n)
	}
	clk.advance(debounce / 2)
	c := recv(t, runner.entered, "the investigation on replica A")
	if !strings.Contains(c.in.Text, "2 firing") {
		t.Errorf("the investigation does not cover replica B's change:\n%s", c.in.Text)
	}
	a.idle(t)
	b.idle(t)
	if n, m := len(runner.of("start")), len(bRunner.of("start")); n != 1 || m != 0 {
		t.Fatalf("investigations: %d on A, %d on B; want exactly one, on A", n, m)
	}
}

// set puts the clock at t without running timers.
func (c *fakeClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

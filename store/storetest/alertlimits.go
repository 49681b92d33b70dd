package storetest

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigilops/vigil/bot"
)

// Conformance of the alert intake bounds: each route's open groups and
// the event IDs sources sent, shared by every replica.

func admit(t *testing.T, st bot.Stores, route, key string, limit int, idle time.Duration) bool {
	t.Helper()
	ok, err := st.Alerts.AdmitOpenAlertGroup(ctxFor(t), route, key, limit, idle)
	if err != nil {
		t.Fatalf("admit %s/%s: %v", route, key, err)
	}
	return ok
}

func testAlertOpenGroupLimit(t *testing.T, st bot.Stores) {
	const idle = time.Hour
	route := "routes[0]-" + t.Name()
	for _, k := range []string{"a", "b", "c"} {
		if !admit(t, st, route, k, 3, idle) {
			t.Fatalf("group %s refused under the limit", k)
		}
	}
	if admit(t, st, route, "d", 3, idle) {
		t.Fatal("a fourth group admitted with a limit of 3")
	}
	if !admit(t, st, route, "a", 3, idle) {
		t.Fatal("a group already open was refused at the limit")
	}
	if !admit(t, st, "other-"+route, "d", 3, idle) {
		t.Fatal("another route shares the count")
	}
	// A group that resolves frees its place; one marked open again (it
	// fires again) counts whatever the limit.
	if err := st.Alerts.SetAlertGroupOpen(ctxFor(t), route, "b", false, idle); err != nil {
		t.Fatal(err)
	}
	if !admit(t, st, route, "d", 3, idle) {
		t.Fatal("a place freed by a closed group was not given to the next one")
	}
	if err := st.Alerts.SetAlertGroupOpen(ctxFor(t), route, "b", true, idle); err != nil {
		t.Fatal(err)
	}
	if admit(t, st, route, "e", 4, idle) {
		t.Fatal("a group reopened past the limit did not count: a, b, c, d are open")
	}
	if admit(t, st, route, "f", 0, idle) {
		t.Fatal("a limit of 0 admitted a group")
	}
	if _, err := st.Alerts.AdmitOpenAlertGroup(ctxFor(t), route, "g", 1, 0); err == nil {
		t.Fatal("a zero idle was accepted")
	}
}

// Replicas admitting different groups at once never open more than the
// limit between them.
func testAlertOpenGroupConcurrent(t *testing.T, st bot.Stores) {
	route := "flood-" + t.Name()
	var admitted atomic.Int32
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			ok, err := st.Alerts.AdmitOpenAlertGroup(ctxFor(t), route, fmt.Sprintf("g%d", i), 7, time.Hour)
			if err != nil {
				t.Error(err)
			}
			if ok {
				admitted.Add(1)
			}
		})
	}
	wg.Wait()
	if n := admitted.Load(); n != 7 {
		t.Fatalf("%d of 40 concurrent groups admitted with a limit of 7", n)
	}
}

// A group that is neither refreshed nor closed stops counting after idle.
func testAlertOpenGroupIdle(t *testing.T, st bot.Stores) {
	route := "idle-" + t.Name()
	const idle = 400 * time.Millisecond
	if !admit(t, st, route, "a", 1, idle) {
		t.Fatal("refused under the limit")
	}
	if admit(t, st, route, "b", 1, idle) {
		t.Fatal("admitted over the limit")
	}
	time.Sleep(idle + 200*time.Millisecond)
	if !admit(t, st, route, "b", 1, idle) {
		t.Fatal("an idle group still counts after its idle time")
	}
}

func testAlertEventClaims(t *testing.T, st bot.Stores) {
	ctx := ctxFor(t)
	const ttl = 500 * time.Millisecond
	id := "pagerduty:" + t.Name()
	claim := func(id string, ttl time.Duration) bool {
		t.Helper()
		ok, err := st.Alerts.ClaimAlertEvent(ctx, id, ttl)
		if err != nil {
			t.Fatalf("claim %s: %v", id, err)
		}
		return ok
	}
	if !claim(id, ttl) {
		t.Fatal("a new event was not claimed")
	}
	if claim(id, ttl) {
		t.Fatal("a replayed event was claimed again")
	}
	if err := st.Alerts.ReleaseAlertEvent(ctx, id); err != nil {
		t.Fatal(err)
	}
	if !claim(id, ttl) {
		t.Fatal("a released event could not be claimed by the source's retry")
	}
	time.Sleep(ttl + 200*time.Millisecond)
	if !claim(id, ttl) {
		t.Fatal("an event is still remembered after its ttl")
	}
	if _, err := st.Alerts.ClaimAlertEvent(ctx, id+"-x", 0); err == nil {
		t.Fatal("a zero ttl was accepted")
	}

	// Replicas receiving one event at once: exactly one claims it.
	var firsts atomic.Int32
	var wg sync.WaitGroup
	for range 30 {
		wg.Go(func() {
			ok, err := st.Alerts.ClaimAlertEvent(ctx, id+"-race", time.Minute)
			if err != nil {
				t.Error(err)
			}
			if ok {
				firsts.Add(1)
			}
		})
	}
	wg.Wait()
	if n := firsts.Load(); n != 1 {
		t.Fatalf("%d concurrent deliveries of one event were claimed, want 1", n)
	}
}

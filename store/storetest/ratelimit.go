package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/vigilops/vigil/bot"
)

// Clock is a clock the rate-limit suite moves by hand.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// Now is the clock's time; hand it to the store as its clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *Clock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// RunRateLimitWindow checks that a rate limiter's window slides: limit
// events fit at once, capacity comes back one event every window/limit,
// and the turn of a clock minute gives nothing back (a fixed window let
// 2×limit through around every boundary). open returns limiters that share
// one count (replicas of one store) and read the clock's time.
func RunRateLimitWindow(t *testing.T, open func(t *testing.T, clock *Clock) []bot.RateLimiter) {
	t.Helper()
	clock := &Clock{}
	replicas := open(t, clock)
	ctx := context.Background()
	// One second before a minute turns over.
	start := time.Date(2026, 11, 27, 10, 0, 59, 0, time.UTC)
	const key, limit, window = "msg:slack:C1:U1", 3, time.Minute
	n := 0
	allow := func(at time.Duration) bool {
		t.Helper()
		clock.set(start.Add(at))
		r := replicas[n%len(replicas)]
		n++
		ok, err := r.Allow(ctx, key, limit, window)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	steps := []struct {
		at   time.Duration
		want bool
		why  string
	}{
		{0, true, "first of the burst"},
		{0, true, "second of the burst"},
		{0, true, "third of the burst"},
		{500 * time.Millisecond, false, "past the limit"},
		{time.Second, false, "the minute turned over: a fixed window would start again here"},
		{2 * time.Second, false, "still within the window"},
		{19 * time.Second, false, "19s: one event comes back every 20s, after the first"},
		{20 * time.Second, true, "20s after the first, one event's capacity is back"},
		{20 * time.Second, false, "only one"},
		{39 * time.Second, false, "the next comes 20s later"},
		{40 * time.Second, true, "40s"},
		{time.Hour, true, "an hour on, the whole burst is back (1)"},
		{time.Hour, true, "(2)"},
		{time.Hour, true, "(3)"},
		{time.Hour, false, "and no more"},
	}
	for i, s := range steps {
		if got := allow(s.at); got != s.want {
			t.Fatalf("step %d at +%s: allowed = %v, want %v (%s)", i, s.at, got, s.want, s.why)
		}
	}
	// Other keys and other shapes count apart; a zero limit allows nothing.
	if ok, err := replicas[0].Allow(ctx, "msg:slack:C1:U2", limit, window); err != nil || !ok {
		t.Fatalf("another key shares the count: %v %v", ok, err)
	}
	if ok, err := replicas[0].Allow(ctx, "msg:slack:C1:U3", 0, window); err != nil || ok {
		t.Fatalf("a zero limit allowed an event: %v %v", ok, err)
	}
}

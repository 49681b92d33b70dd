package redis

import (
	"testing"
	"time"

	"github.com/vigilops/vigil/bot"
	"github.com/vigilops/vigil/store/storetest"
)

// Three replicas on one real Redis share one sliding window.
func TestRateLimitWindowAcrossReplicas(t *testing.T) {
	storetest.RunRateLimitWindow(t, func(t *testing.T, clock *storetest.Clock) []bot.RateLimiter {
		a := newTestStore(t)
		b, c := openStore(t, a.keys.prefix), openStore(t, a.keys.prefix)
		var out []bot.RateLimiter
		for _, s := range []*Store{a, b, c} {
			s.now = clock.Now
			out = append(out, s)
		}
		return out
	})
}

// A refused event says how long until the next one fits: window/limit
// after the oldest, not the end of a clock minute. The key holds no
// longer than the window.
func TestRateLimitRetryAfter(t *testing.T) {
	s := newTestStore(t)
	at := time.Date(2026, 11, 27, 10, 0, 30, 0, time.UTC)
	s.now = func() time.Time { return at }
	for range 6 {
		if ok, _, err := s.allow(t.Context(), "k", 6, time.Minute); err != nil || !ok {
			t.Fatalf("burst: %v %v", ok, err)
		}
	}
	ok, wait, err := s.allow(t.Context(), "k", 6, time.Minute)
	if err != nil || ok || wait != 10*time.Second {
		t.Fatalf("7th of 6/min: allowed=%v wait=%s err=%v; want refused, 10s", ok, wait, err)
	}
	ttl, err := s.rdb.PTTL(t.Context(), s.keys.rate("k")).Result()
	if err != nil || ttl <= 0 || ttl > time.Minute {
		t.Fatalf("rate key TTL %s, %v; want (0, 1m]", ttl, err)
	}
}

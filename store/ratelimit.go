package store

import (
	"context"
	"fmt"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/vigilops/vigil/bot"
)

// maxLimiters bounds the keys kept before idle ones are forgotten.
const maxLimiters = 10000

// rateLimits is the in-memory bot.RateLimiter: a token bucket per key
// (golang.org/x/time/rate), the same sliding window the Redis store keeps
// with GCRA: limit events at once, then one more every window/limit.
type rateLimits struct {
	mu       sync.Mutex
	now      func() time.Time // the Memory's clock
	limiters map[string]*keyLimiter
}

// keyLimiter is one key's bucket and the limit it was made for, so a
// changed limit (a config reload) starts a bucket of the new shape.
type keyLimiter struct {
	limit  int
	window time.Duration
	lim    *rate.Limiter
}

var _ bot.RateLimiter = (*rateLimits)(nil)

// Allow implements bot.RateLimiter. A limit of 0 or less allows nothing.
// A refused event does not count.
func (r *rateLimits) Allow(_ context.Context, key string, limit int, window time.Duration) (bool, error) {
	if window <= 0 {
		return false, fmt.Errorf("rate limit %q: window must be positive, got %s", key, window)
	}
	if limit <= 0 {
		return false, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	if r.limiters == nil {
		r.limiters = map[string]*keyLimiter{}
	}
	kl := r.limiters[key]
	if kl == nil || kl.limit != limit || kl.window != window {
		if len(r.limiters) >= maxLimiters {
			r.forget(now)
		}
		kl = &keyLimiter{limit: limit, window: window, lim: rate.NewLimiter(rate.Every(window/time.Duration(limit)), limit)}
		r.limiters[key] = kl
	}
	return kl.lim.AllowN(now, 1), nil
}

// forget drops the keys whose bucket is full again: they hold nothing a
// new bucket would not.
func (r *rateLimits) forget(now time.Time) {
	for k, kl := range r.limiters {
		if kl.lim.TokensAt(now) >= float64(kl.limit) {
			delete(r.limiters, k)
		}
	}
}

package store

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/vigilops/vigil/bot"
)

// rateLimits is the in-memory bot.RateLimiter: fixed windows, counted per
// key, forgotten once their window has passed.
type rateLimits struct {
	mu      sync.Mutex
	now     func() time.Time // the Memory's clock
	windows map[string]rateWindow
}

type rateWindow struct {
	start time.Time
	n     int
}

var _ bot.RateLimiter = (*rateLimits)(nil)

// Allow implements bot.RateLimiter. A limit of 0 or less allows nothing.
func (r *rateLimits) Allow(_ context.Context, key string, limit int, window time.Duration) (bool, error) {
	if window <= 0 {
		return false, fmt.Errorf("rate limit %q: window must be positive, got %s", key, window)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	start := r.now().Truncate(window)
	if r.windows == nil {
		r.windows = map[string]rateWindow{}
	}
	w := r.windows[key]
	if !w.start.Equal(start) {
		w = rateWindow{start: start}
		if len(r.windows) > 10000 {
			r.forget(start)
		}
	}
	w.n++
	r.windows[key] = w
	return w.n <= limit, nil
}

// forget drops windows older than the current one, bounding the map.
func (r *rateLimits) forget(current time.Time) {
	for k, w := range r.windows {
		if w.start.Before(current) {
			delete(r.windows, k)
		}
	}
}

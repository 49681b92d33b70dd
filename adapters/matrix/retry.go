package matrix

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"go.mau.fi/util/retryafter"
	"maunium.net/go/mautrix"
)

// Rate-limit retries: mautrix only retries a 429 when its client-wide retry
// count is set, and then only reads the Retry-After header. Matrix servers
// (Dendrite, Synapse) say how long to wait in the body's retry_after_ms, so
// the adapter retries its own requests: at most rateLimitAttempts tries, each
// wait capped at maxRateLimitWait, and never past the caller's deadline.
const (
	rateLimitAttempts    = 6
	maxRateLimitWait     = 30 * time.Second
	defaultRateLimitWait = time.Second
)

// rateLimitDelay reports whether err is M_LIMIT_EXCEEDED and how long the
// server asked to wait.
func rateLimitDelay(err error) (time.Duration, bool) {
	var httpErr mautrix.HTTPError
	if !errors.As(err, &httpErr) {
		return 0, false
	}
	limited := httpErr.RespError != nil && httpErr.RespError.ErrCode == mautrix.MLimitExceeded.ErrCode
	if !limited && (httpErr.Response == nil || httpErr.Response.StatusCode != http.StatusTooManyRequests) {
		return 0, false
	}
	if httpErr.RespError != nil {
		if ms, ok := httpErr.RespError.ExtraData["retry_after_ms"].(float64); ok && ms >= 0 {
			return time.Duration(ms) * time.Millisecond, true
		}
	}
	if httpErr.Response != nil {
		return retryafter.Parse(httpErr.Response.Header.Get("Retry-After"), defaultRateLimitWait), true
	}
	return defaultRateLimitWait, true
}

// withRateLimit runs fn, retrying while the server answers M_LIMIT_EXCEEDED.
func withRateLimit(ctx context.Context, log *slog.Logger, op string, fn func(context.Context) error) error {
	for attempt := 1; ; attempt++ {
		err := fn(ctx)
		if err == nil {
			return nil
		}
		wait, limited := rateLimitDelay(err)
		if !limited || attempt >= rateLimitAttempts {
			return err
		}
		wait = min(max(wait, 10*time.Millisecond), maxRateLimitWait)
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return err
		}
		log.Warn("matrix: rate limited, retrying", "op", op, "attempt", attempt, "wait", wait)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

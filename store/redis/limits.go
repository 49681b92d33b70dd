package redis

import (
	"context"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/vigilops/vigil/agent"
)

// countWindow adds to a counter and sets its expiry when it is created.
// KEYS: counter. ARGV: increment, ttl ms. Returns the new count.
var countWindow = goredis.NewScript(`
local n = redis.call('INCRBY', KEYS[1], ARGV[1])
if n == tonumber(ARGV[1]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return n
`)

// gcra is the generic cell rate algorithm, the sliding window that
// redis_rate and Redis's own CL.THROTTLE use: limit events per window, as
// a burst of limit at once or spread out, with capacity coming back one
// event every window/limit rather than all at once when a fixed window
// turns over (which let 2×limit through around every boundary). The key
// holds the theoretical arrival time (TAT) of the next event in µs; it
// lives no longer than the window.
//
// KEYS: the TAT key. ARGV: now µs, window µs, limit. Returns {1, 0} when
// the event is allowed, {0, µs until one would be} when not. A refused
// event does not count.
var gcra = goredis.NewScript(`
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local interval = window / tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', KEYS[1]))
if tat == nil or tat < now then tat = now end
local allowAt = tat + interval - window
if now < allowAt then
  return {0, math.ceil(allowAt - now)}
end
local next = tat + interval
redis.call('SET', KEYS[1], string.format('%.0f', next), 'PX', math.max(1, math.ceil((next - now) / 1000)))
return {1, 0}
`)

// Allow is a sliding-window rate limit shared by every replica (GCRA, see
// gcra): it reports whether one more event under key fits within limit
// events per window, and counts it when it does. A limit of 0 or less
// allows nothing. The replicas' clocks set "now"; they agree far more
// closely than window/limit for the limits vigil keeps (per minute).
func (s *Store) Allow(ctx context.Context, key string, limit int, window time.Duration) (bool, error) {
	ok, _, err := s.allow(ctx, key, limit, window)
	return ok, err
}

// allow is Allow, also saying how long until the next event would fit.
func (s *Store) allow(ctx context.Context, key string, limit int, window time.Duration) (bool, time.Duration, error) {
	if window <= 0 {
		return false, 0, fmt.Errorf("redis: rate limit %q: window must be positive, got %s", key, window)
	}
	if limit <= 0 {
		return false, window, nil
	}
	ctx, cancel := s.opctx(ctx)
	defer cancel()
	res, err := gcra.Run(ctx, s.rdb, []string{s.keys.rate(key)}, s.now().UnixMicro(), window.Microseconds(), limit).Int64Slice()
	if err != nil {
		return false, 0, fmt.Errorf("redis: rate limit %q: %w", key, err)
	}
	if len(res) != 2 {
		return false, 0, fmt.Errorf("redis: rate limit %q: script returned %v", key, res)
	}
	return res[0] == 1, time.Duration(res[1]) * time.Microsecond, nil
}

// budgetTTL keeps a day's counter past midnight in every time zone.
const budgetTTL = 48 * time.Hour

// DailyBudget returns the shared daily token budget (SPEC A3): every
// replica spends from one counter per UTC day. A limit of 0 or less is
// unlimited, and the budget still counts.
func (s *Store) DailyBudget(limit int) *DailyBudget {
	return &DailyBudget{s: s, limit: limit}
}

// DailyBudget implements agent.DailyBudget on Redis.
type DailyBudget struct {
	s     *Store
	limit int
}

var _ agent.DailyBudget = (*DailyBudget)(nil)

// Spend records tokens against today's budget and reports whether it is
// now exhausted.
func (b *DailyBudget) Spend(ctx context.Context, tokens int) (bool, error) {
	ctx, cancel := b.s.opctx(ctx)
	defer cancel()
	n, err := countWindow.Run(ctx, b.s.rdb, []string{b.s.keys.budget(b.s.now())}, max(tokens, 0), ttlMillis(budgetTTL)).Int64()
	if err != nil {
		return false, fmt.Errorf("redis: spend token budget: %w", err)
	}
	return b.limit > 0 && n >= int64(b.limit), nil
}

// Spent returns the tokens spent today.
func (b *DailyBudget) Spent(ctx context.Context) (int64, error) {
	ctx, cancel := b.s.opctx(ctx)
	defer cancel()
	n, err := b.s.rdb.Get(ctx, b.s.keys.budget(b.s.now())).Int64()
	if isNil(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("redis: read token budget: %w", err)
	}
	return n, nil
}

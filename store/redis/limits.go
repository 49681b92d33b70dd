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

// Allow is a fixed-window rate limit shared by every replica: it counts one
// event under key and reports whether it is within limit events per window.
// A limit of 0 or less allows nothing.
func (s *Store) Allow(ctx context.Context, key string, limit int, window time.Duration) (bool, error) {
	if window <= 0 {
		return false, fmt.Errorf("redis: rate limit %q: window must be positive, got %s", key, window)
	}
	now := s.now()
	start := now.Truncate(window)
	ctx, cancel := s.opctx(ctx)
	defer cancel()
	n, err := countWindow.Run(ctx, s.rdb, []string{s.keys.rate(key, start)}, 1, ttlMillis(2*window)).Int64()
	if err != nil {
		return false, fmt.Errorf("redis: rate limit %q: %w", key, err)
	}
	return n <= int64(limit), nil
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

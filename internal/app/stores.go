package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/bot"
	"github.com/vigilops/vigil/internal/config"
	"github.com/vigilops/vigil/policy/audit"
	redisstore "github.com/vigilops/vigil/store/redis"
)

// openExternalStore opens a store other than memory.
func openExternalStore(ctx context.Context, c config.Store, keys *audit.Keyring, log *slog.Logger) (bot.Stores, storeExtras, io.Closer, error) {
	switch c.Backend {
	case "redis":
		opts := c.Redis.Options()
		if len(opts.Addrs) > 0 {
			opts.Addr = "" // addrs win over addr's built-in default (config checks an explicit one)
		}
		opts.AuditKeys = keys
		opts.Logger = log.With("store", "redis")
		s, err := redisstore.New(ctx, opts)
		if err != nil {
			return bot.Stores{}, storeExtras{}, nil, fmt.Errorf("config: store.redis: %w", err)
		}
		ex := storeExtras{
			memory: s,
			budget: func(limit int) agent.DailyBudget { return s.DailyBudget(limit) },
		}
		return s.Stores(), ex, s, nil
	}
	return bot.Stores{}, storeExtras{}, nil, fmt.Errorf("config: store.backend %q is not a store; use memory or redis", c.Backend)
}

// memoryBudget is the daily token budget of a single process.
type memoryBudget struct {
	mu    sync.Mutex
	limit int
	day   string
	spent int
	now   func() time.Time
}

func newMemoryBudget(limit int) agent.DailyBudget {
	return &memoryBudget{limit: limit, now: time.Now}
}

// Spend implements agent.DailyBudget; the day turns at midnight UTC.
func (b *memoryBudget) Spend(_ context.Context, tokens int) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if day := b.now().UTC().Format(time.DateOnly); day != b.day {
		b.day, b.spent = day, 0
	}
	b.spent += tokens
	return b.spent > b.limit, nil
}

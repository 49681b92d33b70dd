package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/vigilops/vigil/bot"
	"github.com/vigilops/vigil/internal/config"
	redisstore "github.com/vigilops/vigil/store/redis"
)

// openExternalStore opens a store other than memory.
func openExternalStore(ctx context.Context, c config.Store, log *slog.Logger) (bot.Stores, io.Closer, error) {
	switch c.Backend {
	case "redis":
		s, err := redisstore.New(ctx, redisstore.Options{
			Addr:      c.Redis.Addr,
			Password:  c.Redis.Password.Reveal(),
			DB:        c.Redis.DB,
			TLS:       c.Redis.TLS,
			KeyPrefix: c.Redis.KeyPrefix,
			Logger:    log.With("store", "redis"),
		})
		if err != nil {
			return bot.Stores{}, nil, fmt.Errorf("config: store.redis: %w", err)
		}
		return s.Stores(), s, nil
	}
	return bot.Stores{}, nil, fmt.Errorf("config: store.backend %q is not a store; use memory or redis", c.Backend)
}

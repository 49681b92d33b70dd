package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/vigilops/vigil/bot"
	"github.com/vigilops/vigil/internal/config"
)

// openExternalStore opens a store other than memory.
func openExternalStore(_ context.Context, c config.Store, _ *slog.Logger) (bot.Stores, io.Closer, error) {
	return bot.Stores{}, nil, fmt.Errorf("config: store.backend %q is not available in this build; use memory", c.Backend)
}

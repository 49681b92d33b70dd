package app

import (
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/vigilops/vigil/adapters/matrix"
	"github.com/vigilops/vigil/adapters/slack"
	"github.com/vigilops/vigil/bot"
	"github.com/vigilops/vigil/internal/config"
)

// PlatformAdapters builds the chat adapters the config enables.
func PlatformAdapters(cfg *config.Config, log *slog.Logger) ([]bot.Adapter, error) {
	var out []bot.Adapter
	if cfg.Slack.Enabled {
		sc := cfg.Slack.Config
		sc.Logger = log.With("adapter", "slack")
		a, err := slack.New(sc)
		if err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
		out = append(out, a)
	}
	if cfg.Matrix.Enabled {
		mc := cfg.Matrix.Config
		if mc.StateDir != "" {
			mc.StateDir = filepath.Clean(mc.StateDir)
		}
		mc.Logger = log.With("adapter", "matrix")
		a, err := matrix.New(mc)
		if err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
		out = append(out, a)
	}
	return out, nil
}

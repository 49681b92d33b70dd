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
		stateDir := cfg.Matrix.StateDir
		if stateDir != "" {
			stateDir = filepath.Clean(stateDir)
		}
		a, err := matrix.New(matrix.Config{
			Homeserver:         cfg.Matrix.Homeserver,
			UserID:             cfg.Matrix.UserID,
			AccessToken:        cfg.Matrix.AccessToken.Reveal(),
			Password:           cfg.Matrix.Password.Reveal(),
			DeviceID:           cfg.Matrix.DeviceID,
			Rooms:              cfg.Matrix.Rooms,
			ApproverPowerLevel: cfg.Matrix.ApproverPowerLevel,
			E2EE:               cfg.Matrix.E2EE,
			StateDir:           stateDir,
			MaxAnswerChars:     cfg.Matrix.MaxAnswerChars,
			Logger:             log.With("adapter", "matrix"),
		})
		if err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
		out = append(out, a)
	}
	return out, nil
}

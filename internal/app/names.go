package app

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/vigilops/vigil/adapters/matrix"
	"github.com/vigilops/vigil/adapters/slack"
	"github.com/vigilops/vigil/internal/config"
)

// Directories are the platforms' name directories the configuration's
// credentials allow: Slack's with slack.bot_token, Matrix's with
// matrix.homeserver and matrix.access_token (a password would log in and
// create a device just to look names up). skipped says, by platform, why
// a platform has none.
func Directories(cfg *config.Config) (dirs map[string]config.Directory, skipped map[string]string) {
	dirs, skipped = map[string]config.Directory{}, map[string]string{}
	if t := cfg.Slack.BotToken.Reveal(); t != "" {
		dirs["slack"] = slack.NewDirectory(t, cfg.Slack.APIURL)
	} else {
		skipped["slack"] = "slack.bot_token is not set"
	}
	switch {
	case cfg.Matrix.Homeserver == "":
		skipped["matrix"] = "matrix.homeserver is not set"
	case cfg.Matrix.AccessToken == "":
		skipped["matrix"] = "matrix.access_token is not set"
	default:
		d, err := matrix.NewDirectory(cfg.Matrix.Homeserver, cfg.Matrix.UserID, cfg.Matrix.AccessToken.Reveal())
		if err != nil {
			skipped["matrix"] = err.Error()
		} else {
			dirs["matrix"] = d
		}
	}
	return dirs, skipped
}

// ResolveNames replaces the channel, room and people names in cfg with
// their IDs (config.Config.ResolveNames) for the platforms cfg enables.
// vigil run calls it before building the adapters: a name left as
// written would never match, so an enabled platform whose names cannot
// be looked up is an error.
func ResolveNames(ctx context.Context, cfg *config.Config) (config.Resolution, error) {
	dirs, skipped := Directories(cfg)
	enabled := map[string]bool{"slack": cfg.Slack.Enabled, "matrix": cfg.Matrix.Enabled}
	for p := range dirs {
		if !enabled[p] {
			delete(dirs, p)
		}
	}
	res, err := cfg.ResolveNames(ctx, dirs)
	if err != nil {
		return res, err
	}
	for _, p := range slices.Sorted(maps.Keys(res.Unresolved)) {
		if enabled[p] {
			return res, fmt.Errorf("config: %s names %s cannot be looked up: %s; set it, or write their IDs instead",
				p, strings.Join(res.Unresolved[p], ", "), skipped[p])
		}
	}
	return res, nil
}

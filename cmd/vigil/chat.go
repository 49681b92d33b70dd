package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/vigilops/vigil/adapters/console"
	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/bot"
	"github.com/vigilops/vigil/internal/app"
	"github.com/vigilops/vigil/internal/config"
	"github.com/vigilops/vigil/internal/demo"
	redisstore "github.com/vigilops/vigil/store/redis"
)

// noModelHelp is what `vigil chat` says when no model is configured.
const noModelHelp = `vigil: no language model is configured, so there is nobody to investigate with.

Configure any OpenAI-compatible endpoint in the config file (llm.base_url,
llm.model, llm.api_key) or through the environment, for example:

  OpenAI:  VIGIL_LLM_BASE_URL=https://api.openai.com/v1 VIGIL_LLM_MODEL=gpt-4o-mini \
           VIGIL_LLM_API_KEY=sk-... vigil chat --config configs/vigil.example.yaml
  Ollama:  VIGIL_LLM_BASE_URL=http://localhost:11434/v1 VIGIL_LLM_MODEL=llama3.1 \
           vigil chat --config configs/vigil.example.yaml

Or see a whole investigation with a scripted model, against this machine:

  vigil chat --demo          (or: make demo)
`

func newChatCmd() *cobra.Command {
	var cfgPath string
	var demoMode, play bool
	cmd := &cobra.Command{
		Use:   "chat",
		Short: "Talk to vigil in the terminal (one conversation; 'approve <id>' / 'deny <id> <reason>' answer approvals, 'good' / 'bad' rate the last answer)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			in := cmd.InOrStdin()
			if play {
				if !demoMode {
					return errors.New("--play plays the demo's scripted conversation: use it with --demo")
				}
				in = demo.Play(cmd.OutOrStdout())
			}
			return runChat(cmd.Context(), cfgPath, demoMode, play, in, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&cfgPath, "config", "", "path to the YAML configuration (default: embedded defaults)")
	cmd.Flags().BoolVar(&demoMode, "demo", false, "use a scripted model to show an investigation and an approval on this machine")
	cmd.Flags().BoolVar(&play, "play", false, "with --demo: play a short scripted conversation (a question, then approve) instead of reading the terminal")
	return cmd
}

func runChat(ctx context.Context, cfgPath string, demoMode, play bool, in io.Reader, out, errOut io.Writer) error {
	cfg, err := config.Load(cfgPath)
	if err != nil {
		return err
	}
	log := newLogger(errOut, cfg.Log, true)
	for _, w := range cfg.Warnings() {
		log.Warn(w)
	}
	var model agent.Model
	banner := "vigil: ask about your infrastructure; mention resources with @name. Ctrl-D to quit."
	if demoMode {
		model = demo.New()
		banner = demo.Banner
		if play {
			banner = demo.PlayBanner
		}
	} else if !cfg.LLM.Configured() {
		fmt.Fprint(errOut, noModelHelp)
		return exitError{code: exitNotConfigured}
	}
	user := os.Getenv("USER")
	if user == "" {
		user = "operator"
	}
	con := console.New(console.Config{In: in, Out: out, User: user, Banner: banner})
	a, err := app.New(ctx, app.Options{Config: cfg, Model: model, Adapters: []bot.Adapter{con}, Logger: log})
	if err != nil {
		if errors.Is(err, app.ErrNoModel) {
			fmt.Fprint(errOut, noModelHelp)
			return exitError{code: exitNotConfigured}
		}
		return err
	}
	defer a.Close()
	con.SetIdle(a.Bot)
	return a.Bot.Run(ctx)
}

// newLogger builds the process logger. In the terminal chat, logs share the
// screen with the conversation, so below warn they are shown only on request
// (log.level: debug). go-redis's own log lines go to it at debug level: a
// Redis outage is reported once, by vigil, in words.
func newLogger(w io.Writer, c config.Log, interactive bool) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(c.Level))
	if interactive && level > slog.LevelDebug && level < slog.LevelWarn {
		level = slog.LevelWarn
	}
	opts := &slog.HandlerOptions{Level: level}
	var log *slog.Logger
	if c.Format == "json" {
		log = slog.New(slog.NewJSONHandler(w, opts))
	} else {
		log = slog.New(slog.NewTextHandler(w, opts))
	}
	redisstore.RouteClientLogs(log)
	return log
}

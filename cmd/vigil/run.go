package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/vigilops/vigil/internal/app"
	"github.com/vigilops/vigil/internal/config"
	"github.com/vigilops/vigil/internal/metrics"
	"github.com/vigilops/vigil/internal/server"
	"github.com/vigilops/vigil/policy/command/sqlcheck"
)

func newRunCmd() *cobra.Command {
	var cfgPath string
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run vigil with every chat adapter the configuration enables (Slack, Matrix)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd.Context(), cfgPath)
		},
	}
	cmd.Flags().StringVar(&cfgPath, "config", "", "path to the YAML configuration")
	return cmd
}

func runServe(ctx context.Context, cfgPath string) error {
	cfg, err := config.Load(cfgPath)
	if err != nil {
		return err
	}
	log := newLogger(os.Stderr, cfg.Log, false)
	for _, w := range cfg.Warnings() {
		log.Warn(w)
	}
	for _, w := range sandboxWarnings(redisEndpoints(cfg), readDestinations(cfg)) {
		log.Warn(w)
	}
	if !cfg.LLM.Configured() {
		return fmt.Errorf("config: llm.base_url and llm.model are required for vigil run (try `vigil chat --demo` to see vigil without a model)")
	}
	// Names in the channel policies ("#ops", "@alice") become IDs before
	// anything uses them: a name never matches an event.
	res, err := app.ResolveNames(ctx, cfg)
	if err != nil {
		return err
	}
	for _, r := range res.Resolved {
		log.Info("resolved a name in the configuration", "platform", r.Platform, "name", r.Name, "id", r.ID, "key", r.Key)
	}
	adapters, err := app.PlatformAdapters(cfg, log)
	if err != nil {
		return err
	}
	if len(adapters) == 0 {
		return errors.New("config: no chat adapter is enabled: set slack.enabled or matrix.enabled (or use `vigil chat` for the terminal)")
	}
	// The PostgreSQL grammar takes a second or two to compile; do it now,
	// not when someone first asks about a psql command.
	go sqlcheck.Warm()
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := metrics.New(reg)
	bi := readBuildInfo()
	metrics.RegisterBuildInfo(reg, metrics.BuildInfo{Version: bi.Version, Revision: bi.Revision, GoVersion: bi.Go})
	a, err := app.New(ctx, app.Options{Config: cfg, Adapters: adapters, Logger: log, Observer: m})
	if err != nil {
		return err
	}
	defer a.Close()
	log.Info("vigil starting", "version", bi.Version, "commit", bi.Revision, "adapters", len(adapters), "store", cfg.Store.Backend)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return a.Bot.Run(gctx) })
	if cfg.Server.Listen != "" {
		srv := server.New(cfg.Server.Listen, reg, a.Ready, log)
		if a.AlertHandler != nil {
			srv.Handle("/alerts/", a.AlertHandler)
			log.Info("alert webhooks enabled", "listen", cfg.Server.Listen, "paths", "/alerts/alertmanager, /alerts/grafana, /alerts/pagerduty")
		}
		g.Go(func() error { return srv.Run(gctx) })
	}
	err = g.Wait()
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

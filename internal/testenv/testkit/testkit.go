// Package testkit starts a whole vigil (real agent, policy, tools and bot,
// wired by internal/app exactly as `vigil run` wires them) around one chat
// adapter and a scripted model server, for end-to-end tests.
package testkit

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/vigilops/vigil/adapters/console"
	"github.com/vigilops/vigil/bot"
	"github.com/vigilops/vigil/internal/app"
	"github.com/vigilops/vigil/internal/config"
	"github.com/vigilops/vigil/internal/testenv/modeltest"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/store"
	"github.com/vigilops/vigil/tools/inventory"
)

// Options describe the stack. Adapter and Model are required.
type Options struct {
	Adapter bot.Adapter
	// Extra adapters run beside Adapter.
	Extra []bot.Adapter
	Model *modeltest.Server
	// ModelURL overrides the model server's URL (an endpoint that is down).
	ModelURL string
	// ModelTimeout overrides the per-call model timeout (default 10s).
	ModelTimeout time.Duration
	Channels     []policy.ChannelPolicy
	// Stores defaults to a fresh in-memory store.
	Stores *bot.Stores
	// Inventory defaults to the local machine only.
	Inventory *inventory.Inventory
	// ApprovalTTL defaults to 10 minutes.
	ApprovalTTL time.Duration
	// ToolMode is native (default) or json.
	ToolMode string
	MaxTurns int
	// AuditFile, when set, is configured as audit.file.
	AuditFile string
	// SweepEvery defaults to 50ms so expiry tests are quick.
	SweepEvery time.Duration
	// LockTTL is the thread lock's lifetime (default 2m).
	LockTTL time.Duration
	// AuditRetry is the first wait before audit records the store could
	// not take are sent again (default 50ms, so outage tests are quick).
	AuditRetry time.Duration
	// StateDir is configured as state_dir.
	StateDir string
	// UserRateLimit is bot.user_rate_limit; 0 (the default here, unlike
	// vigil's) turns it off, so tests can send many messages as one person.
	UserRateLimit int
	Clock         func() time.Time
	// NoRun builds the stack without starting the bot (tests that drive
	// Bot.HandleMessage themselves).
	NoRun bool
	// Plugins are configured as plugins: MCP servers vigil starts.
	Plugins []config.Plugin
	// UnredactedModelInput sets policy.redact_model_input to false.
	UnredactedModelInput bool
	// Configure changes the configuration last (datasources, clusters,
	// repositories).
	Configure func(*config.Config)
	// RunbooksDir is configured as knowledge.runbooks_dir.
	RunbooksDir string
	// ContextBudgetTokens, when set, is llm.context_budget_tokens.
	ContextBudgetTokens int
}

// Stack is a running vigil.
type Stack struct {
	App    *app.App
	Bot    *bot.Bot
	Stores bot.Stores
	Model  *modeltest.Server
	// Done receives the bot's Run result once it returns.
	Done chan error
	// sweeps counts the orphan finder's passes (WaitSweeps).
	sweeps *sweepWatch
}

// Start builds and runs the stack; t.Cleanup stops it.
func Start(t testing.TB, o Options) *Stack {
	t.Helper()
	if o.Adapter == nil || o.Model == nil {
		t.Fatal("testkit: Options.Adapter and Options.Model are required")
	}
	cfg := Config(o)
	stores := o.Stores
	if stores == nil {
		s := store.NewMemory().Stores()
		stores = &s
	}
	sweep := o.SweepEvery
	if sweep == 0 {
		sweep = 50 * time.Millisecond
	}
	retry := o.AuditRetry
	if retry == 0 {
		retry = 50 * time.Millisecond
	}
	level := slog.LevelWarn
	if os.Getenv("VIGIL_TEST_DEBUG") != "" {
		level = slog.LevelDebug
	}
	// Logs are kept and shown only when the test fails: bot goroutines may
	// still log after the test function returned, when t.Log panics.
	logs := &SyncBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("vigil log:\n%s", logs.String())
		}
	})
	// The bot sees the run index through a counter of its sweeps; the
	// stack's Stores stay the plain ones, so a test's own look at the
	// index is not counted as a sweep.
	watched := *stores
	var sweeps *sweepWatch
	if watched.Runs != nil {
		sweeps = newSweepWatch(watched.Runs)
		watched.Runs = sweeps
	}
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, app.Options{
		Config:     cfg,
		Stores:     &watched,
		Adapters:   append([]bot.Adapter{o.Adapter}, o.Extra...),
		Inventory:  o.Inventory,
		Logger:     slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: level})),
		Clock:      o.Clock,
		SweepEvery: sweep,
		LockTTL:    o.LockTTL,
		AuditRetry: retry,
	})
	if err != nil {
		cancel()
		t.Fatalf("testkit: build vigil: %v", err)
	}
	for _, ad := range append([]bot.Adapter{o.Adapter}, o.Extra...) {
		if c, ok := ad.(interface{ SetIdle(console.Idler) }); ok {
			c.SetIdle(a.Bot)
		}
	}
	s := &Stack{App: a, Bot: a.Bot, Stores: *stores, Model: o.Model, Done: make(chan error, 1), sweeps: sweeps}
	if o.NoRun {
		t.Cleanup(func() { cancel(); _ = a.Close() })
		return s
	}
	go func() { s.Done <- a.Bot.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-s.Done:
			if err != nil && !errors.Is(err, context.Canceled) {
				t.Logf("testkit: bot stopped with: %v", err)
			}
			s.Done <- err
		case <-time.After(10 * time.Second):
			t.Errorf("testkit: bot did not stop within 10s of cancellation")
		}
		_ = a.Close()
	})
	return s
}

// Config is the configuration Start uses, for tests that build an App
// themselves (several replicas).
func Config(o Options) *config.Config {
	cfg, err := config.Load("")
	if err != nil {
		panic("testkit: embedded defaults do not load: " + err.Error())
	}
	if o.Model != nil {
		cfg.LLM.BaseURL = o.Model.URL()
	}
	if o.ModelURL != "" {
		cfg.LLM.BaseURL = o.ModelURL
	}
	cfg.LLM.Model = "scripted"
	cfg.LLM.Timeout = 10 * time.Second
	if o.ModelTimeout > 0 {
		cfg.LLM.Timeout = o.ModelTimeout
	}
	cfg.LLM.MaxRetries = 1
	if o.ToolMode != "" {
		cfg.LLM.ToolMode = o.ToolMode
	}
	if o.MaxTurns > 0 {
		cfg.LLM.MaxTurns = o.MaxTurns
	}
	if o.ApprovalTTL > 0 {
		cfg.Policy.ApprovalTTL = o.ApprovalTTL
	}
	cfg.Audit.File = o.AuditFile
	cfg.StateDir = o.StateDir
	cfg.Bot.UserRateLimit = o.UserRateLimit
	cfg.Plugins = o.Plugins
	cfg.Policy.RedactModelInput = !o.UnredactedModelInput
	cfg.Knowledge.RunbooksDir = o.RunbooksDir
	if o.ContextBudgetTokens > 0 {
		cfg.LLM.ContextBudgetTokens = o.ContextBudgetTokens
	}
	if len(o.Channels) > 0 {
		cfg.Channels = cfg.Channels[:0]
		for _, cp := range o.Channels {
			self := cp.AllowSelfApproval
			cfg.Channels = append(cfg.Channels, config.Channel{
				Match: cp.Match, ControlLevel: string(cp.Level), AllowSelfApproval: &self,
				Viewers: cp.Viewers, Operators: cp.Operators, Approvers: cp.Approvers,
				Scope: scopeOf(cp.Scope),
			})
		}
	}
	if o.Configure != nil {
		o.Configure(cfg)
	}
	return cfg
}

// scopeOf is a policy scope as the configuration writes it.
func scopeOf(sc *policy.Scope) *config.ChannelScope {
	if sc == nil {
		return nil
	}
	return &config.ChannelScope{Hosts: sc.Hosts, Kubernetes: sc.Kubernetes, Datasources: sc.Datasources,
		Repos: sc.Repos, Plugins: sc.Plugins}
}

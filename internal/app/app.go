// Package app is vigil's composition root: it builds the model, tools,
// agent, stores, bot and adapters from a configuration and wires them
// together. cmd/vigil and end-to-end tests both use it, so what the tests
// exercise is what users run.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/vigilops/vigil/adapters/alertwebhook"
	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/agent/openai"
	"github.com/vigilops/vigil/bot"
	"github.com/vigilops/vigil/bot/mention"
	"github.com/vigilops/vigil/internal/config"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/policy/audit"
	"github.com/vigilops/vigil/store"
	"github.com/vigilops/vigil/tools"
	"github.com/vigilops/vigil/tools/builtin"
	"github.com/vigilops/vigil/tools/inventory"
	"github.com/vigilops/vigil/tools/plugin"
	"github.com/vigilops/vigil/tools/sandbox"
	"github.com/vigilops/vigil/tools/transport"
)

// Options builds an App. Config is required; the rest override what the
// config would build (tests and the demo use them).
type Options struct {
	Config *config.Config
	// Model replaces the OpenAI-compatible model from llm.* (the demo's
	// scripted model).
	Model agent.Model
	// Stores replaces the store from store.backend.
	Stores *bot.Stores
	// Adapters are added to the ones the config enables.
	Adapters []bot.Adapter
	// Inventory replaces the one from inventory.file.
	Inventory *inventory.Inventory
	Logger    *slog.Logger
	// Observer receives metrics-worthy events (nil: none).
	Observer bot.Observer
	Clock    func() time.Time
	// SweepEvery overrides how often expired approvals and orphaned runs
	// are looked for.
	SweepEvery time.Duration
	// LockTTL overrides how long a thread lock lives without renewal, which
	// is how soon another replica takes over a dead replica's run.
	LockTTL time.Duration
	// MaxConcurrentRuns overrides how many runs this replica works on at
	// once (the bot's default, 32, when zero).
	MaxConcurrentRuns int
	// NoLocalSandbox treats this machine as one without Landlock (tests).
	NoLocalSandbox bool
	// AuditRetry overrides the first wait before audit records the store
	// could not take are sent again (the bot's default, 1s, when zero).
	AuditRetry time.Duration
}

// App is a wired vigil.
type App struct {
	Bot       *bot.Bot
	Agent     *agent.Agent
	Stores    bot.Stores
	Inventory *inventory.Inventory
	Registry  *tools.Registry
	// AlertHandler serves the alert webhooks (/alerts/...) when
	// alerts.enabled is set; nil otherwise. cmd/vigil mounts it on
	// server.listen.
	AlertHandler http.Handler
	closers      []io.Closer
	log          *slog.Logger
}

// New wires an App. Close releases what it opened.
func New(ctx context.Context, o Options) (*App, error) {
	if o.Config == nil {
		return nil, errors.New("app: Options.Config is required")
	}
	cfg := o.Config
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	a := &App{log: log}
	ok := false
	defer func() {
		if !ok {
			_ = a.Close()
		}
	}()

	auditKeys, err := openAuditKeys(cfg.Audit, cfg.Audit.File != "" || cfg.Store.Backend == "redis", log)
	if err != nil {
		return nil, err
	}

	// State first: long-term memory and the daily token budget live there.
	var extras storeExtras
	if o.Stores != nil {
		a.Stores = *o.Stores
	} else {
		st, ex, closer, err := openStores(ctx, cfg.Store, auditKeys, log)
		if err != nil {
			return nil, err
		}
		a.Stores, extras = st, ex
		if closer != nil {
			a.closers = append(a.closers, closer)
		}
	}
	if extras.memory == nil {
		extras.memory = builtin.NewMemoryStore()
	}
	if extras.budget == nil {
		extras.budget = newMemoryBudget
	}

	model := o.Model
	if model == nil {
		m, err := openAIModel(cfg.LLM, log)
		if err != nil {
			return nil, err
		}
		model = m
	}

	inv := o.Inventory
	if inv == nil {
		var err error
		inv, err = loadInventory(cfg.Inventory.File)
		if err != nil {
			return nil, err
		}
	}
	a.Inventory = inv
	if err := checkIdentities(inv, &cfg.Identities, log); err != nil {
		return nil, err
	}
	exec := transport.NewRouter(inv, transport.RouterOptions{NoLocalSandbox: o.NoLocalSandbox})
	rules := policyRules(cfg, inv, log)
	logSandbox(log, rules.ReadSandbox, exec)
	all := builtin.Tools(inv, exec, extras.memory)
	builtins := append([]tools.Tool(nil), all...)
	obs, err := observabilityTools(ctx, cfg, inv, exec, log)
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, stopper(obs.stop))
	all = append(all, obs.tools...)
	for _, pc := range cfg.Plugins {
		p, err := connectPlugin(ctx, pc, log)
		if err != nil {
			return nil, err
		}
		a.closers = append(a.closers, p)
		all = append(all, p.Tools()...)
		obs.parts.plugins = append(obs.parts.plugins, pc.Name)
		if obs.parts.pluginTools == nil {
			obs.parts.pluginTools = map[string][]tools.Tool{}
		}
		obs.parts.pluginTools[pc.Name] = p.Tools()
	}
	obs.parts.builtins, obs.parts.inv, obs.parts.exec = builtins, inv, exec
	reg, err := tools.NewRegistry(all...)
	if err != nil {
		return nil, fmt.Errorf("tools: %w", err)
	}
	a.Registry = reg

	// Each run's checkpoints and events are the bot's, passed per run
	// (agent.RunEnv); the agent holds only what every run shares.
	// A channel's scope (SPEC R8): the gate places every target with the
	// resolver @mentions use, and each channel's runs get the tools and
	// descriptions of their scope.
	resolver := mention.New(inv, obs.mentions)
	var channels *bot.Channels
	scoped := &channelRegistries{parts: obs.parts, byScope: map[*policy.Scope]*scopedRegistry{},
		lookup: func(ch string) (policy.ChannelPolicy, bool) { return channels.Lookup(ch) }}
	// A shell command's destinations are placed with one table (scopedest.go).
	gate := policy.NewGate(rules).WithScopes(resolver).WithDestinations(destinationMap(cfg, inv, rules.Command, log))
	agentOpts := []agent.Option{agent.WithLogger(log), agent.WithPolicy(gate),
		agent.WithChannelTools(scoped.For)}
	if cfg.LLM.DailyTokenBudget > 0 {
		agentOpts = append(agentOpts, agent.WithDailyBudget(extras.budget(cfg.LLM.DailyTokenBudget)))
	}
	a.Agent = agent.New(model, reg, agent.Config{
		MaxTurns:       cfg.LLM.MaxTurns,
		ToolMode:       agent.ToolMode(cfg.LLM.ToolMode),
		RunTokenBudget: cfg.LLM.RunTokenBudget,
		Instructions:   cfg.LLM.Instructions,
		// A secret a tool printed never reaches the model unless the
		// operator says so (policy.redact_model_input).
		UnredactedModelInput: !cfg.Policy.RedactModelInput,
		ContextBudgetTokens:  cfg.LLM.ContextBudgetTokens,
		Model:                cfg.LLM.Model,
	}, agentOpts...)

	runbooks, err := openRunbooks(cfg.Knowledge, o.Clock, log)
	if err != nil {
		return nil, err
	}

	var platforms []string
	for _, ad := range o.Adapters {
		platforms = append(platforms, string(ad.Platform()))
	}
	policies, err := cfg.ChannelPolicies(platforms...)
	if err != nil {
		return nil, err
	}
	channels, err = bot.NewChannels(policies)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}

	var auditFile bot.AuditSink
	if cfg.Audit.File != "" {
		f, err := audit.OpenFile(cfg.Audit.File, audit.WithKeys(auditKeys),
			audit.WithNotice(func(msg string) { log.Warn(msg, "audit_file", cfg.Audit.File) }))
		if err != nil {
			return nil, fmt.Errorf("config: audit.file: %w", err)
		}
		a.closers = append(a.closers, f)
		auditFile = f
	}

	outbox, err := openAuditOutbox(cfg)
	if err != nil {
		return nil, err
	}
	if outbox != nil {
		a.closers = append(a.closers, outbox)
	}

	maxRuns := cfg.Bot.MaxConcurrentRuns
	if o.MaxConcurrentRuns > 0 {
		maxRuns = o.MaxConcurrentRuns
	}
	b, err := bot.New(bot.Options{
		Agent:             a.Agent,
		Stores:            a.Stores,
		Channels:          channels,
		Resolver:          resolver,
		Runbooks:          runbooks,
		ApprovalTTL:       cfg.Policy.ApprovalTTL,
		AuditFile:         auditFile,
		AuditOutbox:       outbox,
		AuditRetry:        o.AuditRetry,
		Observer:          o.Observer,
		Logger:            log,
		Clock:             bot.ClockOf(o.Clock),
		SweepEvery:        o.SweepEvery,
		LockTTL:           o.LockTTL,
		UserRateLimit:     cfg.Bot.UserRateLimit,
		MaxConcurrentRuns: maxRuns,
		Identities:        &cfg.Identities,

		AlertDebounce:               cfg.Alerts.Debounce,
		AlertSweep:                  cfg.Alerts.Enabled,
		MaxConcurrentInvestigations: cfg.Alerts.MaxConcurrentInvestigations,
	})
	if err != nil {
		return nil, err
	}
	a.Bot = b
	if cfg.Alerts.Enabled {
		h, err := alertHandler(cfg, b, a.Stores.Alerts, o.Observer, o.Adapters, log, o.Clock)
		if err != nil {
			return nil, err
		}
		a.AlertHandler = h
	}
	for _, ad := range o.Adapters {
		if err := b.Register(ad); err != nil {
			return nil, err
		}
	}
	ok = true
	return a, nil
}

// Ready reports whether the app can serve: its state store answers. It
// gives up a little before ctx's deadline, so that a store that hangs is
// reported by name rather than as the caller's own timeout.
func (a *App) Ready(ctx context.Context) error {
	if p, ok := a.Stores.Sessions.(interface{ Ping(context.Context) error }); ok {
		if dl, ok := ctx.Deadline(); ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, dl.Add(-time.Until(dl)/10))
			defer cancel()
		}
		if err := p.Ping(ctx); err != nil {
			return fmt.Errorf("state store: %w", err)
		}
	}
	return nil
}

// Close releases stores and files.
func (a *App) Close() error {
	var errs []error
	for i := len(a.closers) - 1; i >= 0; i-- {
		errs = append(errs, a.closers[i].Close())
	}
	a.closers = nil
	return errors.Join(errs...)
}

// logSandbox says at start how reads will be confined on this machine:
// loudly when the sandbox is off or missing.
func logSandbox(log *slog.Logger, mode policy.SandboxMode, r *transport.Router) {
	if mode == policy.SandboxOff {
		log.Warn("READ SANDBOX OFF: policy.read_sandbox is off, so every read runs unconfined and a command the classifier "+
			"wrongly proves read-only can change things; use it only to debug", "read_sandbox", mode)
		return
	}
	abi, why := r.LocalSandbox()
	switch {
	case abi >= sandbox.MinABI:
		log.Info("read sandbox ready on this machine", "mechanism", "landlock", "abi", abi, "read_sandbox", mode)
	case abi > 0:
		log.Warn("read sandbox on this machine is partial: old Landlock ABI", "abi", abi, "needs", sandbox.MinABI, "read_sandbox", mode)
	case mode == policy.SandboxRequired:
		log.Warn("no read sandbox on this machine: reads here will be refused (policy.read_sandbox is required)", "why", why)
	default:
		log.Warn("no read sandbox on this machine: reads here run unconfined", "why", why, "read_sandbox", mode)
	}
}

func openAIModel(c config.LLM, log *slog.Logger) (agent.Model, error) {
	if !c.Configured() {
		return nil, ErrNoModel
	}
	// The llm section is the client's own configuration; code adds what
	// the file does not hold.
	oc := c.Config
	oc.Stream = true
	oc.Logger = log
	m, err := openai.New(oc)
	if err != nil {
		return nil, fmt.Errorf("config: llm: %w", err)
	}
	return m, nil
}

// AuditOutboxFile is the audit outbox's file name in state_dir.
const AuditOutboxFile = "audit-outbox.jsonl"

// openAuditOutbox opens the file where audit records wait while the store
// is unreachable, so they survive a restart: state_dir/audit-outbox.jsonl,
// or else beside the audit file (audit.file + ".outbox"). With neither
// set it returns nil, and they wait in memory only.
func openAuditOutbox(cfg *config.Config) (*audit.Spool, error) {
	var path string
	switch {
	case cfg.StateDir != "":
		if err := os.MkdirAll(cfg.StateDir, 0o700); err != nil {
			return nil, fmt.Errorf("config: state_dir: %w", err)
		}
		path = filepath.Join(cfg.StateDir, AuditOutboxFile)
	case cfg.Audit.File != "":
		path = cfg.Audit.File + ".outbox"
	default:
		return nil, nil
	}
	s, err := audit.OpenSpool(path)
	if err != nil {
		return nil, fmt.Errorf("config: audit outbox: %w", err)
	}
	return s, nil
}

// ErrNoModel means llm.base_url or llm.model is not set.
var ErrNoModel = errors.New("no model is configured (llm.base_url and llm.model)")

// connectPlugin starts one configured MCP server. A plugin that cannot
// start is a startup error naming it: running without tools the operator
// listed would surprise everyone.
func connectPlugin(ctx context.Context, c config.Plugin, log *slog.Logger) (*plugin.Plugin, error) {
	p, err := plugin.Connect(ctx, c, log)
	if err != nil {
		return nil, fmt.Errorf("config: plugins: plugin %s did not start: %w", c.Name, err)
	}
	return p, nil
}

func loadInventory(path string) (*inventory.Inventory, error) {
	if path == "" {
		return inventory.Default(), nil
	}
	inv, err := inventory.Load(path)
	if err != nil {
		return nil, fmt.Errorf("config: inventory.file: %w", err)
	}
	return inv, nil
}

// storeExtras are what a store offers beyond the bot's interfaces; nil
// fields fall back to in-process versions.
type storeExtras struct {
	memory builtin.MemoryStore
	budget func(limit int) agent.DailyBudget
}

func openStores(ctx context.Context, c config.Store, keys *audit.Keyring, log *slog.Logger) (bot.Stores, storeExtras, io.Closer, error) {
	switch c.Backend {
	case "", "memory":
		return store.NewMemory(store.WithAuditKeys(keys)).Stores(), storeExtras{}, nil, nil
	default:
		return openExternalStore(ctx, c, keys, log)
	}
}

// openAuditKeys loads the audit keys (audit.key or audit.key_file, and
// audit.previous_key_files). Without a key it says so, loudly when the
// trail outlives the process (an audit file, a Redis store): the chain then
// only shows accidents, not someone rewriting the log. A chain kept in
// memory only (vigil chat, the demo) is gone at exit anyway.
func openAuditKeys(c config.Audit, persistent bool, log *slog.Logger) (*audit.Keyring, error) {
	keys, warns, err := c.Keyring()
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	for _, w := range warns {
		log.Warn(w)
	}
	if keys.Current() == nil {
		msg := "AUDIT CHAIN UNKEYED: neither audit.key_file nor VIGIL_AUDIT_KEY is set, so anyone who can write the " +
			"audit file or the store can rewrite the audit trail undetected; set a key (README \"Audit key rotation\")"
		if persistent {
			log.Warn(msg)
		} else {
			log.Info(msg, "audit", "in memory only")
		}
		return keys, nil
	}
	log.Info("audit chain sealed with a key", "key_id", keys.CurrentID(), "verifies", keys.IDs())
	return keys, nil
}

// NewModel builds the OpenAI-compatible model llm.* describes, as New does
// (vigil eval runs scenarios with it). ErrNoModel when none is configured.
func NewModel(c config.LLM, log *slog.Logger) (agent.Model, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return openAIModel(c, log)
}

// alertHandler builds the alert intake for alerts.*: the webhooks hand
// routed notifications to the bot.
func alertHandler(cfg *config.Config, b *bot.Bot, events alertwebhook.EventLog, obs bot.Observer, extra []bot.Adapter, log *slog.Logger, clock func() time.Time) (http.Handler, error) {
	rt, err := cfg.Alerts.Router()
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	enabled := map[string]bool{"slack": cfg.Slack.Enabled, "matrix": cfg.Matrix.Enabled}
	for _, ad := range extra {
		enabled[string(ad.Platform())] = true
	}
	for _, p := range rt.Platforms() {
		if !enabled[p] {
			return nil, fmt.Errorf("config: alerts: a route sends alerts to %s, but %s.enabled is false", p, p)
		}
	}
	var ao alertwebhook.Observer
	if o, ok := obs.(alertwebhook.Observer); ok {
		ao = o
	}
	return alertwebhook.NewHandler(alertwebhook.Config{
		Token:           cfg.Alerts.Token.Reveal(),
		PagerDutySecret: cfg.Alerts.PagerDuty.Secret.Reveal(),
		Router:          rt,
		Intake:          b,
		Observer:        ao,
		Logger:          log,
		Clock:           clock,
		Events:          events,
	})
}

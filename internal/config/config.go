// Package config loads vigil's configuration: embedded defaults, then a YAML
// file, then VIGIL_* environment variables (VIGIL_LLM_API_KEY overrides
// llm.api_key). Unknown keys are errors; every error is an *Error naming
// the key, its value, where the value came from (the file or the
// variable) and an example of a good one. Durations need a unit and have
// minimums (durations.go). A VIGIL_ variable that sets nothing is a
// warning naming the closest setting.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/viper"

	"github.com/vigilops/vigil/adapters/matrix"
	"github.com/vigilops/vigil/adapters/slack"
	"github.com/vigilops/vigil/agent/openai"
	"github.com/vigilops/vigil/confkey"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/policy/command"
	redisstore "github.com/vigilops/vigil/store/redis"
	"github.com/vigilops/vigil/tools/plugin"
)

// Secret is a configuration value that must never be printed (String,
// LogValue and MarshalText all give "***"); the modules' configurations
// use the same type.
type Secret = confkey.Secret

// Config is the whole configuration.
type Config struct {
	LLM       LLM       `mapstructure:"llm"`
	Inventory Inventory `mapstructure:"inventory"`
	Store     Store     `mapstructure:"store"`
	Server    Server    `mapstructure:"server"`
	Policy    Policy    `mapstructure:"policy"`
	Audit     Audit     `mapstructure:"audit"`
	Log       Log       `mapstructure:"log"`
	Channels  []Channel `mapstructure:"channels"`
	Bot       Bot       `mapstructure:"bot"`
	Slack     Slack     `mapstructure:"slack"`
	Matrix    Matrix    `mapstructure:"matrix"`
	Plugins   []Plugin  `mapstructure:"plugins"`
	// Observability, Kubernetes and Changes configure the metrics, alerts,
	// kube and changes tools (observability.go).
	Observability Observability `mapstructure:"observability"`
	Kubernetes    Kubernetes    `mapstructure:"kubernetes"`
	Changes       Changes       `mapstructure:"changes"`
	Knowledge     Knowledge     `mapstructure:"knowledge"`
	// Eval configures `vigil eval` (eval.go).
	Eval Eval `mapstructure:"eval"`
	// Alerts configures alert intake (alerts.go).
	Alerts Alerts `mapstructure:"alerts"`
	// Identities maps people to the identities vigil uses on targets
	// (identity.go); empty: vigil's own credentials, as before.
	Identities Identities `mapstructure:"identities"`

	// StateDir is where vigil keeps state on this host that must survive
	// a restart (the audit outbox); empty: none.
	StateDir string `mapstructure:"state_dir"`

	// origin and warnings are set by Load.
	origin   *origin
	warnings []string
}

// LLM is the llm section: the model endpoint (any OpenAI-compatible API),
// whose keys and rules are the model client's (agent/openai.Config), and
// the agent's own bounds.
type LLM struct {
	openai.Config `mapstructure:",squash"`
	ToolMode      string `mapstructure:"tool_mode"`
	MaxTurns      int    `mapstructure:"max_turns"`
	// RunTokenBudget stops one run past this many tokens (0: no limit).
	RunTokenBudget int `mapstructure:"run_token_budget"`
	// DailyTokenBudget stops runs once this many tokens were spent in a UTC
	// day, across replicas sharing a Redis store (0: no limit).
	DailyTokenBudget int `mapstructure:"daily_token_budget"`
	// Instructions are extra operator text for the system prompt.
	Instructions string `mapstructure:"instructions"`
	// ContextBudgetTokens bounds the prompt of each model call; older tool
	// results are compacted to fit.
	ContextBudgetTokens int `mapstructure:"context_budget_tokens"`
}

// Knowledge configures what vigil learns and keeps.
type Knowledge struct {
	// RunbooksDir is a directory of Markdown runbooks offered with
	// matching questions and alerts, where runbooks drafted from resolved
	// investigations are saved after approval; empty: no runbooks.
	RunbooksDir string `mapstructure:"runbooks_dir"`
}

// Configured reports whether a model endpoint is set.
func (l LLM) Configured() bool { return l.BaseURL != "" && l.Model != "" }

// Inventory points at the static inventory file; empty means the local
// machine only.
type Inventory struct {
	File string `mapstructure:"file"`
}

// Store selects where state lives.
type Store struct {
	Backend string `mapstructure:"backend"`
	Redis   Redis  `mapstructure:"redis"`
}

// Redis is the store.redis section; its keys and rules are the Redis
// store's (store/redis.Config).
type Redis = redisstore.Config

// Server is the metrics and health endpoint.
type Server struct {
	Listen string `mapstructure:"listen"`
}

// Policy holds global policy settings.
type Policy struct {
	ApprovalTTL time.Duration `mapstructure:"approval_ttl"`
	// ReadSandbox is best_effort, required or off (see policy.SandboxMode).
	ReadSandbox string `mapstructure:"read_sandbox"`
	// ReadOnlyCommands are commands declared read-only, allowed without
	// approval only inside the read sandbox. An entry is a pattern string
	// or a mapping with command and network.
	ReadOnlyCommands []ReadOnlyCommand `mapstructure:"read_only_commands"`
	// HTTPReadURLs are URL prefixes the operator declares read-only for
	// HTTP clients (http://host:port/path) and kubectl get --raw (/path):
	// see command.ParseURLPrefix. Validate refuses a malformed one.
	HTTPReadURLs []string `mapstructure:"http_read_urls"`
	// ReadDestinations are servers reads may connect to besides the
	// loopback, the inventory and the datasources: "host[:port]" (no
	// port: any port of the host; "*.domain" for every name below it),
	// or "SERVICE=host[:port]" for a tool whose server is not on its
	// command line (ceph's monitors, a cloud CLI's API, Argo CD; see
	// ServiceNames). Validate refuses a malformed one.
	ReadDestinations []string `mapstructure:"read_destinations"`
	// RedactModelInput redacts secrets from tool results before the model
	// receives them (default true). Turn it off only for a model that runs
	// where the secrets already are.
	RedactModelInput bool `mapstructure:"redact_model_input"`
}

// ReadOnlyCommand is one policy.read_only_commands entry.
type ReadOnlyCommand struct {
	// Command is the command name and its read-only verb words.
	Command string `mapstructure:"command"`
	// Network lets it connect over TCP inside the sandbox.
	Network bool `mapstructure:"network"`
	// Hosts are the servers it connects to, host[:port] (with network).
	// They are destinations every read may reach.
	Hosts []string `mapstructure:"hosts"`
}

// Rules are the policy gate's settings from policy.*. Call it on a
// validated Config; invalid entries are left out.
func (p Policy) Rules() policy.Rules {
	mode, _ := policy.ParseSandboxMode(p.ReadSandbox)
	prefixes := make([]command.URLPrefix, 0, len(p.HTTPReadURLs))
	for _, s := range p.HTTPReadURLs {
		if u, err := command.ParseURLPrefix(s); err == nil {
			prefixes = append(prefixes, u)
		}
	}
	r := policy.Rules{ReadSandbox: mode, Command: command.Options{HTTPReadURLs: prefixes}}
	for _, c := range p.ReadOnlyCommands {
		if rc, err := policy.ParseReadOnlyCommand(c.Command, c.Network, c.Hosts...); err == nil {
			r.ReadOnlyCommands = append(r.ReadOnlyCommands, rc)
			r.Command.Destinations = append(r.Command.Destinations, rc.Hosts...)
		}
	}
	for _, s := range p.ReadDestinations {
		service, d, err := ParseReadDestination(s)
		switch {
		case err != nil:
		case service == "":
			r.Command.Destinations = append(r.Command.Destinations, d)
		default:
			if r.Command.Services == nil {
				r.Command.Services = map[string][]command.Destination{}
			}
			r.Command.Services[service] = append(r.Command.Services[service], d)
		}
	}
	return r
}

// ServiceNames are the services a policy.read_destinations entry may
// declare servers for (SERVICE=host[:port]): the tools whose servers come
// from their own configuration rather than their command line.
// "kubernetes" is filled from kubernetes.clusters and may be added to
// (kubernetes/CONTEXT for kubectl --context CONTEXT).
var ServiceNames = []string{"kubernetes", "ceph", "aws", "gcloud", "azure", "argocd", "terraform"}

// ParseReadDestination parses one policy.read_destinations entry:
// host[:port], or SERVICE=host[:port] with SERVICE one of ServiceNames
// (kubernetes/CONTEXT too).
func ParseReadDestination(s string) (service string, d command.Destination, err error) {
	dest := s
	if name, rest, ok := strings.Cut(s, "="); ok {
		base, context, hasContext := strings.Cut(name, "/")
		if !slices.Contains(ServiceNames, base) || hasContext && (base != "kubernetes" || context == "") {
			return "", command.Destination{}, fmt.Errorf("%q: service %q is not one of %s (or kubernetes/CONTEXT)", s, name, strings.Join(ServiceNames, ", "))
		}
		service, dest = name, rest
	}
	d, err = command.ParseDestination(dest)
	if err != nil {
		return "", command.Destination{}, err
	}
	return service, d, nil
}

// CommandOptions are the classifier's options for this configuration:
// policy.* (Policy.Rules), the datasources' hosts as known destinations,
// and vigil's own Redis store (store.redis, when the backend is redis)
// as forbidden ones. The caller adds what the configuration does not
// hold: the inventory's hosts and the Kubernetes API servers.
func (c *Config) CommandOptions() command.Options {
	o := c.Policy.Rules().Command
	for _, p := range c.Observability.Prometheus {
		if d, ok := command.URLDestination(p.URL); ok {
			o.Destinations = append(o.Destinations, d)
		}
	}
	if d, ok := command.URLDestination(c.Observability.Alertmanager.URL); ok {
		o.Destinations = append(o.Destinations, d)
	}
	if c.Store.Backend == "redis" {
		addrs := c.Store.Redis.Addrs
		if len(addrs) == 0 {
			addrs = []string{c.Store.Redis.Addr}
		}
		for _, a := range addrs {
			if d, err := command.ParseDestination(a); err == nil && d.Port != 0 {
				o.Forbidden = append(o.Forbidden, d)
			}
		}
	}
	return o
}

// readOnlyCommandHook lets a policy.read_only_commands entry be a plain
// pattern string, and the whole list a comma-separated string (from the
// environment).
func readOnlyCommandHook(from, to reflect.Type, data any) (any, error) {
	if from.Kind() != reflect.String {
		return data, nil
	}
	switch to {
	case reflect.TypeFor[ReadOnlyCommand]():
		return ReadOnlyCommand{Command: data.(string)}, nil
	case reflect.TypeFor[[]ReadOnlyCommand]():
		var out []ReadOnlyCommand
		for _, c := range strings.Split(data.(string), ",") {
			if c = strings.TrimSpace(c); c != "" {
				out = append(out, ReadOnlyCommand{Command: c})
			}
		}
		return out, nil
	}
	return data, nil
}

// Log configures logging.
type Log struct {
	Level  string `mapstructure:"level"`
	Format string `mapstructure:"format"`
}

// Channel is one channel's policy as written in the file.
type Channel struct {
	Match        string `mapstructure:"match"`
	ControlLevel string `mapstructure:"control_level"`
	// AllowSelfApproval is a pointer so an unset value can take the
	// channel's default (true only for the console).
	AllowSelfApproval *bool    `mapstructure:"allow_self_approval"`
	Viewers           []string `mapstructure:"viewers"`
	Operators         []string `mapstructure:"operators"`
	Approvers         []string `mapstructure:"approvers"`
	// Scope is what the channel may touch (scope.go); nil: everything.
	Scope *ChannelScope `mapstructure:"scope"`
}

// Bot tunes the hub.
type Bot struct {
	// MaxConcurrentRuns bounds the runs one replica works on at once; the
	// rest queue. Each run mostly waits on the model, so raise it for many
	// concurrent conversations (see BENCHMARKS.md).
	MaxConcurrentRuns int `mapstructure:"max_concurrent_runs"`
	// UserRateLimit is how many messages one person may send in one
	// channel per minute (0: no limit).
	UserRateLimit int `mapstructure:"user_rate_limit"`
}

// Slack is the slack section: whether the adapter runs, and the
// adapter's own configuration, whose keys and rules are the adapter's
// (adapters/slack.Config).
type Slack struct {
	Enabled      bool `mapstructure:"enabled"`
	slack.Config `mapstructure:",squash"`
}

// Matrix is the matrix section: whether the adapter runs, and the
// adapter's own configuration, whose keys and rules are the adapter's
// (adapters/matrix.Config).
type Matrix struct {
	Enabled       bool `mapstructure:"enabled"`
	matrix.Config `mapstructure:",squash"`
}

// Plugin is one plugins entry: an MCP server started over stdio whose
// tools the model may call as <name>_<tool> (SPEC T5). Its keys and rules
// are the plugin module's (tools/plugin.Config).
type Plugin = plugin.Config

// defaults are the embedded defaults. Every scalar key is listed so that
// VIGIL_* environment variables can override it.
var defaults = map[string]any{
	"llm.base_url":                    "",
	"llm.api_key":                     "",
	"llm.model":                       "",
	"llm.tool_mode":                   "native",
	"llm.max_turns":                   20,
	"llm.temperature":                 0.2,
	"llm.max_tokens":                  0,
	"llm.timeout":                     "120s",
	"llm.max_retries":                 4,
	"llm.run_token_budget":            0,
	"llm.daily_token_budget":          0,
	"llm.instructions":                "",
	"llm.context_budget_tokens":       24000,
	"knowledge.runbooks_dir":          "",
	"inventory.file":                  "",
	"store.backend":                   "memory",
	"store.redis.addr":                "127.0.0.1:6379",
	"store.redis.addrs":               []string{},
	"store.redis.master_name":         "",
	"store.redis.sentinel_password":   "",
	"store.redis.replica_ack_timeout": "1s",
	"store.redis.password":            "",
	"store.redis.db":                  0,
	"store.redis.tls":                 false,
	"store.redis.key_prefix":          "vigil:",
	"store.redis.pool_size":           0,
	"bot.max_concurrent_runs":         32,
	"bot.user_rate_limit":             20,
	"server.listen":                   "",
	"policy.approval_ttl":             "10m",
	"policy.read_sandbox":             "best_effort",
	"policy.read_only_commands":       []string{},
	"policy.redact_model_input":       true,
	"policy.http_read_urls":           []string{},
	"policy.read_destinations":        []string{},
	"audit.file":                      "",
	"audit.key":                       "",
	"audit.key_file":                  "",
	"log.level":                       "info",
	"log.format":                      "text",
	"slack.enabled":                   false,
	"slack.mode":                      "socket",
	"slack.bot_token":                 "",
	"slack.app_token":                 "",
	"slack.signing_secret":            "",
	"slack.listen":                    ":3000",
	"slack.api_url":                   "",
	"slack.usergroup_ttl":             "5m",
	"slack.max_answer_chars":          100000,
	"matrix.enabled":                  false,
	"matrix.homeserver":               "",
	"matrix.user_id":                  "",
	"matrix.access_token":             "",
	"matrix.password":                 "",
	"matrix.device_id":                "",
	"matrix.approver_power_level":     50,
	"matrix.e2ee":                     false,
	"matrix.state_dir":                "",
	"matrix.max_answer_chars":         100000,
	"state_dir":                       "",
	"eval.judge.base_url":             "",
	"eval.judge.api_key":              "",
	"eval.judge.model":                "",
	// The metrics, alerts, kube and changes tools (observability.go).
	"observability.alertmanager.url":                     "",
	"observability.alertmanager.bearer_token_env":        "",
	"observability.alertmanager.basic_auth.username":     "",
	"observability.alertmanager.basic_auth.password_env": "",
	"observability.alertmanager.tls_ca":                  "",
	"observability.alertmanager.timeout":                 "30s",
	"observability.alertmanager.max_silence":             "24h",
	"kubernetes.discovery_refresh":                       "2m",
	"kubernetes.timeout":                                 "30s",
	// Alert intake (alerts.go).
	"alerts.enabled":                       false,
	"alerts.token":                         "",
	"alerts.pagerduty.secret":              "",
	"alerts.default":                       "",
	"alerts.debounce":                      "30s",
	"alerts.max_concurrent_investigations": 4,
	"alerts.limits.open_groups":            25,
	"alerts.limits.new_threads_per_minute": 10,
	"alerts.limits.open_group_idle":        "24h",
}

// Load reads the configuration. path may be empty: embedded defaults and the
// environment only. Errors are *Error values, every problem at once
// (several joined): a value that cannot be decoded, an unknown key and a
// value that fails validation are reported together, and the warnings
// about VIGIL_ variables that set nothing come with them, since such a
// typo is often why a setting is missing. Warnings are also in Warnings.
func Load(path string) (*Config, error) {
	warnings := envWarnings(os.Environ())
	v, err := readViper(path, defaults)
	if err != nil {
		return nil, withWarnings(err, warnings)
	}
	o := &origin{v: v, path: path}
	var c Config
	var errs []error
	err = v.UnmarshalExact(&c, viper.DecodeHook(mapstructure.ComposeDecodeHookFunc(
		readOnlyCommandHook,
		durationHook(),
		mapstructure.StringToSliceHookFunc(","),
		mapstructure.StringToSliceHookFunc(","),
	)))
	// mapstructure decodes every value it can before it reports the
	// ones it could not, so validation still sees the rest.
	undecoded := map[string]bool{}
	if err != nil {
		derr := o.explainDecodeError(err)
		errs = append(errs, derr)
		for _, e := range configErrors(derr) {
			undecoded[e.Key] = true
		}
	}
	c.origin = o
	c.warnings = warnings
	// store.redis.addr has a default; addrs given in its place replace it.
	if len(c.Store.Redis.Addrs) > 0 && !c.redisAddrSet() {
		c.Store.Redis.Addr = ""
	}
	if len(c.Channels) == 0 && !undecoded["channels"] {
		c.Channels = []Channel{{Match: policy.ConsoleChannel, ControlLevel: string(policy.LevelControlled)}}
	}
	for _, e := range configErrors(c.Validate()) {
		// A value that could not be decoded is zero here; its decode
		// error already says what is wrong with it.
		if !coveredBy(e.Key, undecoded) {
			errs = append(errs, e)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, withWarnings(err, warnings)
	}
	return &c, nil
}

// configErrors flattens err (joined errors) into its *Error values; any
// other error becomes an *Error with only a Problem.
func configErrors(err error) []*Error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []*Error
		for _, e := range j.Unwrap() {
			out = append(out, configErrors(e)...)
		}
		return out
	}
	var ce *Error
	if errors.As(err, &ce) {
		return []*Error{ce}
	}
	return []*Error{{Problem: err.Error()}}
}

// coveredBy reports whether key or a section or list holding it is in
// keys.
func coveredBy(key string, keys map[string]bool) bool {
	for k := range keys {
		if key == k || strings.HasPrefix(key, k+".") || strings.HasPrefix(key, k+"[") ||
			strings.HasPrefix(k, key+"[") {
			return true
		}
	}
	return false
}

// Warning is a warning shown with the errors of a configuration that did
// not load.
type Warning string

func (w Warning) Error() string { return "config: warning: " + string(w) }

// withWarnings adds the warnings to err.
func withWarnings(err error, warnings []string) error {
	if len(warnings) == 0 {
		return err
	}
	errs := []error{err}
	for _, w := range warnings {
		errs = append(errs, Warning(w))
	}
	return errors.Join(errs...)
}

// readViper reads the YAML file at path ("" for none) over defs, with
// VIGIL_ environment variables overriding both.
func readViper(path string, defs map[string]any) (*viper.Viper, error) {
	v := viper.New()
	for k, val := range defs {
		v.SetDefault(k, val)
	}
	v.SetEnvPrefix("VIGIL")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	v.AutomaticEnv()
	if path == "" {
		return v, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w (give --config an existing YAML file, or leave it out to use the defaults)", err)
	}
	if err := checkYAML(path, data); err != nil {
		return nil, err
	}
	v.SetConfigType("yaml")
	if err := v.ReadConfig(bytes.NewReader(data)); err != nil {
		return nil, fmt.Errorf("config: %s is not valid YAML: %w", path, err)
	}
	return v, nil
}

// Warnings are problems that do not stop vigil (a VIGIL_ variable that
// sets nothing); the caller shows them.
func (c *Config) Warnings() []string { return c.warnings }

// problem builds the *Error for key, with its value and where it came
// from when c was loaded from a file and the environment.
func (c *Config) problem(key, msg string) *Error { return c.origin.problem(key, msg) }

// problemValue is problem with the value taken from c itself, for checks
// that also run on a Config changed after Load (channels).
func (c *Config) problemValue(key, value, msg string) *Error {
	e := c.origin.problem(key, msg)
	e.Value = strconv.Quote(value)
	return e
}

// redisAddrSet reports whether store.redis.addr was given (a file or the
// environment), not only its built-in default.
func (c *Config) redisAddrSet() bool {
	if c.origin == nil {
		return true
	}
	return c.origin.source("store.redis.addr") != "built-in default"
}

// Validate checks every value that can be checked without I/O.
func (c *Config) Validate() error {
	errs := c.checkDurations()
	bad := func(key, format string, args ...any) {
		errs = append(errs, c.problem(key, fmt.Sprintf(format, args...)))
	}
	switch c.LLM.ToolMode {
	case "native", "json":
	default:
		bad("llm.tool_mode", "not a tool mode; use native (function calling) or json (for models without it)")
	}
	if c.LLM.MaxTurns < 1 || c.LLM.MaxTurns > 200 {
		bad("llm.max_turns", "out of range; use 1–200")
	}
	if c.LLM.ContextBudgetTokens < 2000 || c.LLM.ContextBudgetTokens > 2_000_000 {
		bad("llm.context_budget_tokens", "out of range; use 2000–2000000 (a few thousand tokens go to the system prompt and tools alone)")
	}
	c.validateEval(bad)
	if d := c.Knowledge.RunbooksDir; d != "" {
		if st, err := os.Stat(d); err != nil {
			bad("knowledge.runbooks_dir", "%v; create the directory (it may start empty) or remove the key", err)
		} else if !st.IsDir() {
			bad("knowledge.runbooks_dir", "is not a directory")
		}
	}
	if c.LLM.BaseURL != "" {
		errs = append(errs, c.moduleErrors(c.LLM.Config.Validate())...)
	}
	switch c.Store.Backend {
	case "memory":
	case "redis":
		errs = append(errs, c.moduleErrors(c.Store.Redis.Validate())...)
	default:
		bad("store.backend", "not a store; use memory or redis")
	}
	if c.Bot.MaxConcurrentRuns < 1 {
		bad("bot.max_concurrent_runs", "must be at least 1")
	}
	if c.Bot.UserRateLimit < 0 {
		bad("bot.user_rate_limit", "must not be negative (0 turns the limit off)")
	}
	if _, err := policy.ParseSandboxMode(c.Policy.ReadSandbox); err != nil {
		bad("policy.read_sandbox", "%v", err)
	}
	for i, rc := range c.Policy.ReadOnlyCommands {
		if _, err := policy.ParseReadOnlyCommand(rc.Command, rc.Network, rc.Hosts...); err != nil {
			bad(fmt.Sprintf("policy.read_only_commands[%d]", i), "%v", err)
		}
	}
	for i, s := range c.Policy.ReadDestinations {
		if _, _, err := ParseReadDestination(s); err != nil {
			bad(fmt.Sprintf("policy.read_destinations[%d]", i), "%v", err)
		}
	}
	for i, u := range c.Policy.HTTPReadURLs {
		if _, err := command.ParseURLPrefix(u); err != nil {
			bad(fmt.Sprintf("policy.http_read_urls[%d]", i), "%v", err)
		}
	}
	if c.Inventory.File != "" {
		if _, err := os.Stat(c.Inventory.File); err != nil {
			bad("inventory.file", "%v; point it at an inventory YAML or remove it to use the local machine", err)
		}
	}
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		bad("log.level", "not a level; use debug, info, warn or error")
	}
	if _, err := c.ChannelPolicies(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, c.validateScopes()...)
	seenPlugins := make(map[string]bool, len(c.Plugins))
	for i, p := range c.Plugins {
		key := fmt.Sprintf("plugins[%d]", i)
		errs = append(errs, c.moduleErrorsIn(key, p.Validate())...)
		if seenPlugins[p.Name] && plugin.ValidName.MatchString(p.Name) {
			bad(key+".name", "is listed twice")
		}
		seenPlugins[p.Name] = true
	}
	c.validateObservability(bad)
	c.validateAlerts(bad)
	c.validateAudit(bad)
	errs = append(errs, c.validateIdentities()...)
	if c.Slack.Enabled {
		errs = append(errs, c.moduleErrors(c.Slack.Validate())...)
	}
	if c.Matrix.Enabled {
		errs = append(errs, c.moduleErrors(c.Matrix.Validate())...)
	}
	return errors.Join(errs...)
}

// moduleErrors words a module's Validate errors (confkey.Error) as *Error
// values: with the value as written, where it came from and an example.
func (c *Config) moduleErrors(err error) []error { return c.moduleErrorsIn("", err) }

// moduleErrorsIn is moduleErrors for a module whose keys are relative to
// section ("plugins[0]").
func (c *Config) moduleErrorsIn(section string, err error) []error {
	var out []error
	for _, e := range confkey.List(err) {
		key := e.FullKey()
		if section != "" && e.Section == "" {
			k := *e
			k.Section = section
			key = k.FullKey()
		}
		ce := c.problem(key, e.Problem)
		if e.Example != "" {
			ce.Example = e.Example
		}
		out = append(out, ce)
	}
	return out
}

// ChannelPolicies converts the channel list to policy form, applying the
// defaults and validating each entry; every problem is reported. Matches
// name console, default, slack or matrix, or one of the extra platforms
// given (adapters added by code, such as test platforms).
func (c *Config) ChannelPolicies(extraPlatforms ...string) ([]policy.ChannelPolicy, error) {
	out := make([]policy.ChannelPolicy, 0, len(c.Channels))
	seen := map[string]bool{}
	var errs []error
	for i, ch := range c.Channels {
		key := fmt.Sprintf("channels[%d]", i)
		n := len(errs)
		platform, id, _ := strings.Cut(ch.Match, ":")
		switch {
		case ch.Match == "":
			errs = append(errs, c.problemValue(key+".match", ch.Match, "is empty; use console, default, slack:<channel id> or matrix:<room id>"))
		case !validMatch(ch.Match, extraPlatforms):
			errs = append(errs, c.problemValue(key+".match", ch.Match, "not console, default, slack:<channel id> or matrix:<room id>"))
		case seen[ch.Match]:
			errs = append(errs, c.problemValue(key+".match", ch.Match, "is listed twice"))
		default:
			if msg := checkMatchForm(platform, id); msg != "" {
				errs = append(errs, c.problemValue(key+".match", ch.Match, msg))
			}
		}
		seen[ch.Match] = true
		memberPlatform := platform
		if ch.Match == policy.DefaultChannel && len(extraPlatforms) == 0 {
			memberPlatform = policy.DefaultChannel
		}
		for _, l := range []struct {
			name string
			list []string
		}{{"viewers", ch.Viewers}, {"operators", ch.Operators}, {"approvers", ch.Approvers}} {
			for j, e := range l.list {
				if msg := checkMemberForm(memberPlatform, e); msg != "" && strings.TrimSpace(e) == e && e != "" {
					errs = append(errs, c.problemValue(fmt.Sprintf("%s.%s[%d]", key, l.name, j), e, msg))
				}
			}
		}
		level := policy.ControlLevel(ch.ControlLevel)
		if level == "" {
			level = policy.LevelControlled
		}
		if !level.Valid() {
			errs = append(errs, c.problemValue(key+".control_level", ch.ControlLevel, "not a level; use read_only, controlled or autonomous"))
		}
		if len(errs) > n {
			continue
		}
		self := ch.Match == policy.ConsoleChannel
		if ch.AllowSelfApproval != nil {
			self = *ch.AllowSelfApproval
		}
		cp := policy.ChannelPolicy{
			Match: ch.Match, Level: level, AllowSelfApproval: self,
			Viewers: ch.Viewers, Operators: ch.Operators, Approvers: ch.Approvers,
			Scope: ch.Scope.policyScope(ch.Match),
		}
		if err := cp.Validate(); err != nil {
			e := c.problemValue(key, "", err.Error())
			e.Value = "{match: " + ch.Match + ", control_level: " + string(level) + "}"
			e.Example = "{match: " + ch.Match + ", control_level: controlled, approvers: [U0AAAAAAA]}"
			errs = append(errs, e)
			continue
		}
		out = append(out, cp)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

func validMatch(m string, extra []string) bool {
	if m == policy.ConsoleChannel || m == policy.DefaultChannel {
		return true
	}
	for _, p := range append([]string{"slack", "matrix"}, extra...) {
		if strings.HasPrefix(m, p+":") && len(m) > len(p)+1 {
			return true
		}
	}
	return false
}

// Redacted returns a copy safe to print: secrets are already masked by their
// type; this exists so callers do not have to know that.
func (c *Config) Redacted() Config { return *c }

package config

import (
	"fmt"
	"time"

	alerting "github.com/vigilops/vigil/adapters/alertwebhook"
)

// Alerts configures alert intake (SPEC N1): the webhook endpoints on
// server.listen and where each alert group's thread goes.
type Alerts struct {
	Enabled bool `mapstructure:"enabled"`
	// Token is the bearer token Alertmanager and Grafana must send.
	Token     Secret          `mapstructure:"token"`
	PagerDuty AlertsPagerDuty `mapstructure:"pagerduty"`
	// Routes are tried in order; the first that matches wins.
	Routes []AlertRoute `mapstructure:"routes"`
	// Default is the channel of alerts no route matches; empty refuses
	// them.
	Default string `mapstructure:"default"`
	// Debounce is how long a new group is left to settle before the
	// investigation starts.
	Debounce time.Duration `mapstructure:"debounce"`
	// MaxConcurrentInvestigations bounds alert-started runs per replica;
	// the rest queue.
	MaxConcurrentInvestigations int `mapstructure:"max_concurrent_investigations"`
	// Limits bound what each route's alerts open, across replicas.
	Limits AlertLimits `mapstructure:"limits"`
}

// AlertLimits are alerts.limits: every route's, unless the route sets its
// own (alerts.routes[].limits).
type AlertLimits struct {
	// OpenGroups bounds a route's firing groups at once: each has a
	// thread and an investigation.
	OpenGroups int `mapstructure:"open_groups"`
	// NewThreadsPerMinute bounds the threads a route opens a minute.
	NewThreadsPerMinute int `mapstructure:"new_threads_per_minute"`
	// OpenGroupIdle is how long a firing group counts as open without a
	// notification.
	OpenGroupIdle time.Duration `mapstructure:"open_group_idle"`
}

// AlertRouteLimits are a route's own limits; 0 takes alerts.limits'.
type AlertRouteLimits struct {
	OpenGroups          int `mapstructure:"open_groups"`
	NewThreadsPerMinute int `mapstructure:"new_threads_per_minute"`
}

// AlertsPagerDuty configures PagerDuty V3 webhooks.
type AlertsPagerDuty struct {
	// Secret verifies X-PagerDuty-Signature; empty refuses PagerDuty.
	Secret Secret `mapstructure:"secret"`
}

// AlertRoute is one alerts.routes entry.
type AlertRoute struct {
	Match   map[string]string `mapstructure:"match"`
	MatchRE map[string]string `mapstructure:"match_re"`
	Channel string            `mapstructure:"channel"`
	// Investigate starts an investigation for the group (default true).
	Investigate *bool            `mapstructure:"investigate"`
	Prompt      string           `mapstructure:"prompt"`
	Limits      AlertRouteLimits `mapstructure:"limits"`
}

// routeLimits are the limits of a route with its own overrides.
func (a Alerts) routeLimits(own AlertRouteLimits) alerting.RouteLimits {
	l := alerting.RouteLimits{OpenGroups: a.Limits.OpenGroups, ThreadsPerMinute: a.Limits.NewThreadsPerMinute, OpenIdle: a.Limits.OpenGroupIdle}
	if own.OpenGroups > 0 {
		l.OpenGroups = own.OpenGroups
	}
	if own.NewThreadsPerMinute > 0 {
		l.ThreadsPerMinute = own.NewThreadsPerMinute
	}
	return l
}

// RouteSpecs are the routes as the intake takes them.
func (a Alerts) RouteSpecs() []alerting.RouteSpec {
	out := make([]alerting.RouteSpec, 0, len(a.Routes))
	for i, r := range a.Routes {
		inv := true
		if r.Investigate != nil {
			inv = *r.Investigate
		}
		out = append(out, alerting.RouteSpec{Name: fmt.Sprintf("routes[%d]", i), Match: r.Match, MatchRE: r.MatchRE,
			Channel: r.Channel, Investigate: inv, Prompt: r.Prompt, Limits: a.routeLimits(r.Limits)})
	}
	return out
}

// Router compiles the routes; call it on a validated Config.
func (a Alerts) Router() (*alerting.Router, error) {
	return alerting.NewRouter(a.RouteSpecs(), a.Default, true, a.routeLimits(AlertRouteLimits{}))
}

func (c *Config) validateAlerts(bad func(key, format string, args ...any)) {
	a := c.Alerts
	for i, r := range a.RouteSpecs() {
		key := fmt.Sprintf("alerts.routes[%d]", i)
		if _, _, err := alerting.ParseChannel(r.Channel); err != nil {
			bad(key+".channel", "%v", err)
		}
		if _, err := alerting.CompileRoute(alerting.RouteSpec{Channel: "slack:C0", MatchRE: r.MatchRE}); err != nil {
			bad(key+".match_re", "%v", err)
		}
		if len(r.Match) == 0 && len(r.MatchRE) == 0 {
			bad(key, "has neither match nor match_re, so it matches every alert; use alerts.default for that")
		}
		own := a.Routes[i].Limits
		if own.OpenGroups < 0 {
			bad(key+".limits.open_groups", "must not be negative; 0 takes alerts.limits.open_groups")
		}
		if own.NewThreadsPerMinute < 0 {
			bad(key+".limits.new_threads_per_minute", "must not be negative; 0 takes alerts.limits.new_threads_per_minute")
		}
	}
	if a.Limits.OpenGroups < 1 {
		bad("alerts.limits.open_groups", "must be at least 1: it bounds the alert groups of a route that may fire at once, each with a thread and an investigation")
	}
	if a.Limits.NewThreadsPerMinute < 1 {
		bad("alerts.limits.new_threads_per_minute", "must be at least 1: it bounds the threads a route's alerts open a minute")
	}
	if a.Default != "" {
		if _, _, err := alerting.ParseChannel(a.Default); err != nil {
			bad("alerts.default", "%v", err)
		}
	}
	if a.MaxConcurrentInvestigations < 1 {
		bad("alerts.max_concurrent_investigations", "must be at least 1")
	}
	if !a.Enabled {
		return
	}
	if a.Token == "" {
		bad("alerts.token", "is required when alerts.enabled is true: the bearer token Alertmanager and Grafana send, best set in VIGIL_ALERTS_TOKEN")
	} else if len(a.Token) < 16 {
		bad("alerts.token", "is shorter than 16 characters; use a long random token (openssl rand -hex 32)")
	}
	if c.Server.Listen == "" {
		bad("server.listen", "is empty, but alerts.enabled needs it: the alert webhooks are served there")
	}
	if len(a.Routes) == 0 && a.Default == "" {
		bad("alerts.default", "is empty and there are no alerts.routes, so every alert would be refused; name a channel")
	}
}

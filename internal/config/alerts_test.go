package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	alerting "github.com/vigilops/vigil/adapters/alertwebhook"
)

func loadYAML(t *testing.T, yaml string) (*Config, error) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "vigil.yaml")
	if err := os.WriteFile(p, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return Load(p)
}

func TestAlertsConfigDefaultsAndRoutes(t *testing.T) {
	c, err := loadYAML(t, `
server: {listen: "127.0.0.1:9090"}
alerts:
  enabled: true
  token: 0123456789abcdef0123
  routes:
    - match: {team: db}
      match_re: {severity: "page|critical"}
      channel: "slack:C0DB"
      prompt: Check replication first.
    - match: {team: shop}
      channel: "matrix:!shop:example.org"
      investigate: false
  default: "slack:C0OPS"
`)
	if err != nil {
		t.Fatal(err)
	}
	if c.Alerts.Debounce != 30*time.Second || c.Alerts.MaxConcurrentInvestigations != 4 {
		t.Errorf("defaults: debounce %s, max %d", c.Alerts.Debounce, c.Alerts.MaxConcurrentInvestigations)
	}
	rt, err := c.Alerts.Router()
	if err != nil {
		t.Fatal(err)
	}
	r, _ := rt.Route(map[string]string{"team": "db", "severity": "critical"})
	if r.ChannelKey() != "slack:C0DB" || !r.Investigate || r.Prompt != "Check replication first." {
		t.Errorf("db route = %+v", r)
	}
	r, _ = rt.Route(map[string]string{"team": "shop"})
	if r.ChannelKey() != "matrix:!shop:example.org" || r.Investigate {
		t.Errorf("shop route = %+v", r)
	}
	r, _ = rt.Route(map[string]string{"team": "db", "severity": "pagefoo"})
	if r.ChannelKey() != "slack:C0OPS" {
		t.Errorf("match_re is not anchored: %+v", r)
	}
}

func TestAlertsConfigErrors(t *testing.T) {
	cases := []struct{ yaml, key, want string }{
		{"alerts: {enabled: true, default: 'slack:C1'}\nserver: {listen: ':9090'}", "alerts.token", "is required"},
		{"alerts: {enabled: true, token: short, default: 'slack:C1'}\nserver: {listen: ':9090'}", "alerts.token", "shorter than 16"},
		{"alerts: {enabled: true, token: 0123456789abcdef0, default: 'slack:C1'}", "server.listen", "alert webhooks"},
		{"alerts: {default: '#ops'}", "alerts.default", "not a channel"},
		{"alerts: {routes: [{match: {a: b}, channel: 'matrix:#ops:x.org'}]}", "alerts.routes[0].channel", "not an alias"},
		{"alerts: {routes: [{match_re: {a: '('}, channel: 'slack:C1'}]}", "alerts.routes[0].match_re", "not a regular expression"},
		{"alerts: {routes: [{channel: 'slack:C1'}]}", "alerts.routes[0]", "matches every alert"},
		{"alerts: {max_concurrent_investigations: 0}", "alerts.max_concurrent_investigations", "at least 1"},
		{"alerts: {debounce: 30}", "alerts.debounce", "unit"},
		{"alerts: {limits: {open_groups: 0}}", "alerts.limits.open_groups", "at least 1"},
		{"alerts: {limits: {new_threads_per_minute: 0}}", "alerts.limits.new_threads_per_minute", "at least 1"},
		{"alerts: {limits: {open_group_idle: 10s}}", "alerts.limits.open_group_idle", "repeat_interval"},
		{"alerts: {routes: [{match: {a: b}, channel: 'slack:C1', limits: {open_groups: -1}}]}", "alerts.routes[0].limits.open_groups", "negative"},
	}
	for _, tc := range cases {
		_, err := loadYAML(t, tc.yaml)
		if err == nil {
			t.Errorf("%s: loaded", tc.yaml)
			continue
		}
		if !strings.Contains(err.Error(), tc.key) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %q, want key %s and %q", tc.yaml, err, tc.key, tc.want)
		}
	}
}

// Each route's limits are alerts.limits unless it sets its own; the
// default route takes alerts.limits.
func TestAlertsLimits(t *testing.T) {
	c, err := loadYAML(t, `
alerts:
  limits: {open_groups: 7, open_group_idle: 12h}
  routes:
    - match: {team: db}
      channel: "slack:C0DB"
      limits: {new_threads_per_minute: 3}
  default: "slack:C0OPS"
`)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := c.Alerts.Router()
	if err != nil {
		t.Fatal(err)
	}
	db, _ := rt.Route(map[string]string{"team": "db"})
	if db.Limits != (alerting.RouteLimits{OpenGroups: 7, ThreadsPerMinute: 3, OpenIdle: 12 * time.Hour}) {
		t.Errorf("db route limits = %+v", db.Limits)
	}
	def, _ := rt.Route(nil)
	if def.Limits != (alerting.RouteLimits{OpenGroups: 7, ThreadsPerMinute: 10, OpenIdle: 12 * time.Hour}) {
		t.Errorf("default route limits = %+v", def.Limits)
	}
	d, err := loadYAML(t, "alerts: {default: 'slack:C1'}\n")
	if err != nil {
		t.Fatal(err)
	}
	if l := d.Alerts.Limits; l.OpenGroups != 25 || l.NewThreadsPerMinute != 10 || l.OpenGroupIdle != 24*time.Hour {
		t.Errorf("default limits = %+v", l)
	}
}

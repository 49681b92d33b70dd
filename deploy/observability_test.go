package deploy

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"go.yaml.in/yaml/v3"

	"github.com/vigilops/vigil/internal/metrics"
	"github.com/vigilops/vigil/internal/testenv/obsbin"
)

const (
	alertRules     = "prometheus/vigil-alerts.yaml"
	alertRuleTests = "prometheus/vigil-alerts.test.yaml"
	dashboard      = "grafana/vigil-dashboard.json"
)

// loadGauges say what a replica has in hand; the dashboard must show each.
var loadGauges = []string{"vigil_runs_in_flight", "vigil_runs_queued", "vigil_approvals_pending", "vigil_alert_groups_open"}

func promtool(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(obsbin.Promtool(t), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// The example alert rules are valid (promtool check rules) and do what
// their unit tests say (promtool test rules): each alert fires on the
// series that should raise it, with the labels and text an operator sees.
func TestAlertRules(t *testing.T) {
	n := len(ruleExprs(t))
	if out := promtool(t, "check", "rules", alertRules); !strings.Contains(out, fmt.Sprintf("SUCCESS: %d rules found", n)) {
		t.Errorf("promtool check rules did not find the file's %d rules:\n%s", n, out)
	}
	promtool(t, "test", "rules", alertRuleTests)
}

// descRecorder records the metric names of every collector registered.
type descRecorder struct{ names []string }

var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

func (r *descRecorder) Register(c prometheus.Collector) error {
	ch := make(chan *prometheus.Desc, 64)
	go func() { c.Describe(ch); close(ch) }()
	for d := range ch {
		if m := fqName.FindStringSubmatch(d.String()); m != nil {
			r.names = append(r.names, m[1])
		}
	}
	return nil
}

func (r *descRecorder) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		_ = r.Register(c)
	}
}

func (r *descRecorder) Unregister(prometheus.Collector) bool { return false }

// exported is every vigil_* metric name vigil's /metrics serves, with the
// series names histograms add.
func exported() []string {
	rec := &descRecorder{}
	metrics.New(rec)
	metrics.RegisterBuildInfo(rec, metrics.BuildInfo{})
	var names []string
	for _, n := range rec.names {
		names = append(names, n, n+"_bucket", n+"_sum", n+"_count")
	}
	return names
}

var vigilMetric = regexp.MustCompile(`\bvigil_[a-z0-9_]+`)

// usedMetrics returns the vigil_* names in PromQL expressions.
func usedMetrics(exprs []string) []string {
	var names []string
	for _, e := range exprs {
		names = append(names, vigilMetric.FindAllString(e, -1)...)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

func ruleExprs(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(alertRules)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	var exprs []string
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			exprs = append(exprs, r.Expr)
		}
	}
	return exprs
}

// dashboardExprs returns every panel query of the Grafana dashboard, with
// Grafana's variables replaced by values Prometheus accepts.
func dashboardExprs(t *testing.T) (title string, exprs []string) {
	t.Helper()
	b, err := os.ReadFile(dashboard)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Title  string `json:"title"`
		UID    string `json:"uid"`
		Panels []struct {
			Type    string `json:"type"`
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", dashboard, err)
	}
	if d.Title == "" || d.UID == "" {
		t.Fatalf("%s: want a title and a uid", dashboard)
	}
	vars := strings.NewReplacer("$__rate_interval", "5m", "$job", "vigil")
	for _, p := range d.Panels {
		if p.Type != "row" && len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			exprs = append(exprs, vars.Replace(tg.Expr))
		}
	}
	return d.Title, exprs
}

// The rules and the dashboard only use metrics vigil exports: a renamed
// metric fails here, not silently on an operator's screen.
func TestRulesAndDashboardUseExportedMetrics(t *testing.T) {
	known := exported()
	_, dash := dashboardExprs(t)
	for file, exprs := range map[string][]string{alertRules: ruleExprs(t), dashboard: dash} {
		used := usedMetrics(exprs)
		if len(used) == 0 {
			t.Errorf("%s uses no vigil metric", file)
		}
		for _, name := range used {
			if !slices.Contains(known, name) {
				t.Errorf("%s uses %s, which vigil does not export", file, name)
			}
		}
	}
	for _, g := range loadGauges {
		if !slices.Contains(usedMetrics(dash), g) {
			t.Errorf("the dashboard does not show %s", g)
		}
	}
}

// Every dashboard query is valid PromQL: promtool checks them as the
// expressions of recording rules.
func TestDashboardQueriesParse(t *testing.T) {
	_, exprs := dashboardExprs(t)
	type rule struct {
		Record string `yaml:"record"`
		Expr   string `yaml:"expr"`
	}
	var rules []rule
	for i, e := range exprs {
		rules = append(rules, rule{Record: "dashboard:query_" + string(rune('a'+i%26)) + strings.Repeat("x", i/26), Expr: e})
	}
	b, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rules}}})
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "dashboard-rules.yaml")
	if err := os.WriteFile(f, b, 0o600); err != nil {
		t.Fatal(err)
	}
	promtool(t, "check", "rules", f)
}

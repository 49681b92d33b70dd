package eval

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/vigilops/vigil/tools"
	"github.com/vigilops/vigil/tools/alerts"
	"github.com/vigilops/vigil/tools/changes"
	"github.com/vigilops/vigil/tools/metrics"
)

// The metrics, alerts and changes tools are vigil's real ones. Metrics and
// alerts talk HTTP to a Prometheus and an Alertmanager the eval serves on
// loopback with the APIs' own JSON shapes (/api/v1/query{,_range} result
// vectors and matrices; /api/v2/alerts objects), so the tools' clients and
// summaries run as they do in production. Changes reads the deployment's
// configuration repository with git log through the world, and hosts'
// package history and journal from the world's answers.

// Commit is one commit of the configuration repository.
type Commit struct {
	// At is when, relative to the simulated clock (Now): "-2h", "-35m".
	At      string `yaml:"at"`
	Hash    string `yaml:"hash"`
	Author  string `yaml:"author"`
	Subject string `yaml:"subject"`

	at time.Time
}

// MetricRule answers PromQL queries that contain Match (after removing
// spaces): an instant query gets each series' last value, a range query
// the series.
type MetricRule struct {
	Match  string         `yaml:"match"`
	Series []MetricSeries `yaml:"series"`
}

// MetricSeries is one series: its labels and its values, one per minute,
// ending at Now (the last is the current value).
type MetricSeries struct {
	Labels map[string]string `yaml:"labels"`
	Values []float64         `yaml:"values"`
}

// AlertSpec is one alert Alertmanager holds.
type AlertSpec struct {
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
	// Since is when it started firing, relative to Now ("-20m").
	Since string `yaml:"since"`
	// State is active (default) or suppressed.
	State string `yaml:"state"`

	at time.Time
}

// ConfigRepo is the configuration repository the changes tool reads.
var ConfigRepo = changes.Repo{Name: "infra", Path: "/srv/git/infra.git"}

func relTime(s string) (time.Time, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil || d > 0 {
		return time.Time{}, fmt.Errorf("%q: want a negative duration before the simulated now, e.g. -2h", s)
	}
	return Now.Add(d), nil
}

func (s *Scenario) compileTools() error {
	bad := func(field, format string, a ...any) error {
		return &Error{File: s.file, Field: field, Msg: fmt.Sprintf(format, a...)}
	}
	for i := range s.Changes {
		c := &s.Changes[i]
		t, err := relTime(c.At)
		if err != nil {
			return bad(fmt.Sprintf("changes[%d].at", i), "%v", err)
		}
		c.at = t
		if len(c.Hash) < 7 || strings.Trim(c.Hash, "0123456789abcdef") != "" || c.Author == "" || c.Subject == "" {
			return bad(fmt.Sprintf("changes[%d]", i), "want hash (hex, 7+ digits), author and subject")
		}
	}
	for i, m := range s.Metrics {
		if m.Match == "" || len(m.Series) == 0 {
			return bad(fmt.Sprintf("metrics[%d]", i), "want match and at least one series")
		}
		for j, se := range m.Series {
			if len(se.Values) == 0 {
				return bad(fmt.Sprintf("metrics[%d].series[%d].values", i, j), "required")
			}
		}
	}
	for i := range s.Alerts {
		a := &s.Alerts[i]
		t, err := relTime(a.Since)
		if err != nil {
			return bad(fmt.Sprintf("alerts[%d].since", i), "%v", err)
		}
		a.at = t
		if a.Labels["alertname"] == "" {
			return bad(fmt.Sprintf("alerts[%d].labels", i), "alertname is required")
		}
		if a.State == "" {
			a.State = "active"
		}
		if a.State != "active" && a.State != "suppressed" {
			return bad(fmt.Sprintf("alerts[%d].state", i), "%q: want active or suppressed", a.State)
		}
	}
	return nil
}

// observability builds the tools a scenario offers beyond the built-ins and
// a stop function for the servers behind them.
func observability(sc *Scenario, w *World) ([]tools.Tool, func()) {
	var out []tools.Tool
	var servers []*httptest.Server
	now := func() time.Time { return Now }
	if len(sc.Metrics) > 0 {
		srv := httptest.NewServer(prometheusAPI(sc.Metrics))
		servers = append(servers, srv)
		ds, err := metrics.Connect(metrics.Config{Name: "prometheus", URL: srv.URL, Timeout: 10 * time.Second})
		if err == nil {
			out = append(out, metrics.New([]metrics.Datasource{ds}, now))
		}
	}
	if len(sc.Alerts) > 0 {
		srv := httptest.NewServer(alertmanagerAPI(sc.Alerts))
		servers = append(servers, srv)
		if c, err := alerts.NewClient(srv.URL, srv.Client()); err == nil {
			out = append(out, alerts.New(alerts.Config{API: c, URL: srv.URL, Now: now}))
		}
	}
	if len(sc.Changes) > 0 {
		out = append(out, changes.New(changes.Config{Inventory: sc.inv, Executor: w, GitRepos: []changes.Repo{ConfigRepo}, Now: now}))
	}
	return out, func() {
		for _, s := range servers {
			s.Close()
		}
	}
}

// prometheusAPI serves /api/v1/query and /api/v1/query_range from rules,
// in the Prometheus HTTP API's JSON: a query no rule answers gets an empty
// result, as Prometheus gives for a metric it does not have.
func prometheusAPI(rules []MetricRule) http.Handler {
	find := func(q string) []MetricSeries {
		q = strings.Join(strings.Fields(q), "")
		var out []MetricSeries
		for _, r := range rules {
			if strings.Contains(q, strings.Join(strings.Fields(r.Match), "")) {
				out = append(out, r.Series...)
			}
		}
		return out
	}
	reply := func(w http.ResponseWriter, data any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": data})
	}
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v1/query", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		at := Now
		if t, err := strconv.ParseFloat(r.Form.Get("time"), 64); err == nil {
			at = time.Unix(int64(t), 0)
		}
		result := []map[string]any{}
		for _, s := range find(r.Form.Get("query")) {
			result = append(result, map[string]any{"metric": s.Labels,
				"value": []any{float64(at.Unix()), num(valueAt(s, at))}})
		}
		reply(w, map[string]any{"resultType": "vector", "result": result})
	})
	mux.HandleFunc("/api/v1/query_range", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		start, _ := strconv.ParseFloat(r.Form.Get("start"), 64)
		end, _ := strconv.ParseFloat(r.Form.Get("end"), 64)
		step, err := strconv.ParseFloat(r.Form.Get("step"), 64)
		if err != nil || step <= 0 {
			step = 60
		}
		if end <= start {
			end, start = float64(Now.Unix()), float64(Now.Add(-time.Hour).Unix())
		}
		result := []map[string]any{}
		for _, s := range find(r.Form.Get("query")) {
			var vals [][]any
			for t := start; t <= end && len(vals) < 11000; t += step {
				vals = append(vals, []any{t, num(valueAt(s, time.Unix(int64(t), 0)))})
			}
			result = append(result, map[string]any{"metric": s.Labels, "values": vals})
		}
		reply(w, map[string]any{"resultType": "matrix", "result": result})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "error", "errorType": "not_found",
			"error": "the simulated Prometheus answers /api/v1/query and /api/v1/query_range only"})
	})
	return mux
}

// valueAt is the series' value at t: one value per minute ending at Now;
// before the first, the first.
func valueAt(s MetricSeries, t time.Time) float64 {
	back := int(Now.Sub(t) / time.Minute)
	i := len(s.Values) - 1 - back
	switch {
	case i < 0:
		return s.Values[0]
	case i >= len(s.Values):
		return s.Values[len(s.Values)-1]
	}
	return s.Values[i]
}

// alertmanagerAPI serves GET /api/v2/alerts, /api/v2/alerts/groups and
// /api/v2/silences in Alertmanager's v2 JSON.
func alertmanagerAPI(as []AlertSpec) http.Handler {
	objs := make([]map[string]any, 0, len(as))
	for _, a := range as {
		keys := make([]string, 0, len(a.Labels))
		for k := range a.Labels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fp := uint64(14695981039346656037)
		for _, k := range keys {
			for _, b := range []byte(k + "=" + a.Labels[k]) {
				fp = (fp ^ uint64(b)) * 1099511628211
			}
		}
		ann := a.Annotations
		if ann == nil {
			ann = map[string]string{}
		}
		objs = append(objs, map[string]any{
			"labels": a.Labels, "annotations": ann,
			"startsAt": a.at.UTC().Format(time.RFC3339Nano), "endsAt": Now.Add(4 * time.Minute).UTC().Format(time.RFC3339Nano),
			"updatedAt":    Now.Add(-30 * time.Second).UTC().Format(time.RFC3339Nano),
			"fingerprint":  strconv.FormatUint(fp, 16),
			"generatorURL": "http://prometheus.eval.invalid:9090/graph?g0.expr=" + a.Labels["alertname"],
			"receivers":    []map[string]string{{"name": "vigil"}},
			"status":       map[string]any{"state": a.State, "silencedBy": []string{}, "inhibitedBy": []string{}, "mutedBy": []string{}},
		})
	}
	mux := http.NewServeMux()
	js := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	mux.HandleFunc("/api/v2/alerts", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			http.Error(w, `{"code":405,"message":"the simulated Alertmanager is read-only"}`, http.StatusMethodNotAllowed)
			return
		}
		js(w, objs)
	})
	mux.HandleFunc("/api/v2/alerts/groups", func(w http.ResponseWriter, r *http.Request) {
		js(w, []map[string]any{{"labels": map[string]string{}, "receiver": map[string]string{"name": "vigil"}, "alerts": objs}})
	})
	mux.HandleFunc("/api/v2/silences", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			http.Error(w, `{"code":405,"message":"the simulated Alertmanager is read-only"}`, http.StatusMethodNotAllowed)
			return
		}
		js(w, []any{})
	})
	return mux
}

// gitLog answers the changes tool's git log on vigil's machine: the
// commits in its format (%H, %ct, %an, %s separated by the unit separator),
// newest first, within the --since window.
func gitLog(sc *Scenario, words []string) (string, string, int) {
	if !strings.Contains(strings.Join(words, " "), ConfigRepo.Path) {
		return "", "fatal: cannot change to '" + lastPath(words) + "': No such file or directory\n", 128
	}
	since := time.Duration(0)
	for _, w := range words {
		if v, ok := strings.CutPrefix(w, "--since="); ok {
			if n, err := strconv.Atoi(strings.TrimSuffix(v, " minutes ago")); err == nil {
				since = time.Duration(n) * time.Minute
			}
		}
	}
	cs := append([]Commit(nil), sc.Changes...)
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].at.After(cs[j].at) })
	var b strings.Builder
	for _, c := range cs {
		if since > 0 && c.at.Before(Now.Add(-since)) {
			continue
		}
		h := c.Hash
		for len(h) < 40 {
			h += c.Hash
		}
		fmt.Fprintf(&b, "%s\x1f%d\x1f%s\x1f%s\n", h[:40], c.at.Unix(), c.Author, c.Subject)
	}
	return b.String(), "", 0
}

func lastPath(words []string) string {
	for _, w := range words {
		if strings.HasPrefix(w, "/") {
			return w
		}
	}
	return "."
}

// GitLogText renders the commits as `git log` prints them by default, for
// a read of the repository on an admin host.
func GitLogText(sc *Scenario) string {
	cs := append([]Commit(nil), sc.Changes...)
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].at.After(cs[j].at) })
	var b strings.Builder
	for _, c := range cs {
		h := c.Hash
		for len(h) < 40 {
			h += c.Hash
		}
		user := strings.ToLower(strings.Fields(c.Author)[0])
		fmt.Fprintf(&b, "commit %s\nAuthor: %s <%s@example.com>\nDate:   %s\n\n    %s\n\n", h[:40], c.Author, user,
			c.at.UTC().Format("Mon Jan 2 15:04:05 2006 -0700"), c.Subject)
	}
	return b.String()
}

// Package metrics is the `metrics` tool: reads from Prometheus HTTP APIs
// (instant and range PromQL, series, labels, scrape targets, rules),
// summarised on vigil's side so the model never receives raw series: per
// series min, max, average, last value, trend and the largest spike or step
// with its time, the top N series by a stated order and how many were left
// out. Every action is a read.
package metrics

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	promapi "github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	promconfig "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"

	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools"
)

// API is what the tool needs of a Prometheus HTTP API; promv1.API
// satisfies it.
type API interface {
	Query(ctx context.Context, query string, ts time.Time, opts ...promv1.Option) (model.Value, promv1.Warnings, promv1.Infos, error)
	QueryRange(ctx context.Context, query string, r promv1.Range, opts ...promv1.Option) (model.Value, promv1.Warnings, promv1.Infos, error)
	Series(ctx context.Context, matches []string, startTime, endTime time.Time, opts ...promv1.Option) ([]model.LabelSet, promv1.Warnings, promv1.Infos, error)
	LabelNames(ctx context.Context, matches []string, startTime, endTime time.Time, opts ...promv1.Option) (model.LabelNames, promv1.Warnings, promv1.Infos, error)
	LabelValues(ctx context.Context, label string, matches []string, startTime, endTime time.Time, opts ...promv1.Option) (model.LabelValues, promv1.Warnings, promv1.Infos, error)
	Targets(ctx context.Context) (promv1.TargetsResult, error)
	Rules(ctx context.Context, matches []string) (promv1.RulesResult, error)
}

// Datasource is one configured Prometheus.
type Datasource struct {
	Name string
	// URL is shown to the model and in errors (without credentials).
	URL     string
	API     API
	Timeout time.Duration
}

// Config describes a datasource to connect to.
type Config struct {
	Name string
	URL  string
	// HTTP is how to reach it: authentication, TLS, proxy, headers.
	HTTP    promconfig.HTTPClientConfig
	Timeout time.Duration
}

// Connect builds a datasource over the Prometheus HTTP API client. Nothing
// is contacted until the first call.
func Connect(c Config) (Datasource, error) {
	hc, err := NewHTTPClient(c.HTTP, "prometheus_"+c.Name)
	if err != nil {
		return Datasource{}, fmt.Errorf("prometheus %s: %w", c.Name, err)
	}
	client, err := promapi.NewClient(promapi.Config{Address: c.URL, Client: hc})
	if err != nil {
		return Datasource{}, fmt.Errorf("prometheus %s: %w", c.Name, err)
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	return Datasource{Name: c.Name, URL: c.URL, API: promv1.NewAPI(client), Timeout: timeout}, nil
}

// Tool is the metrics tool.
type Tool struct {
	sources []Datasource
	now     func() time.Time
	spec    tools.Spec
}

var _ tools.ToolOf[Args] = (*Tool)(nil)

// New returns the tool over the configured datasources, the first being
// the default. With none it is still offered, says so in its description,
// and answers every call with NOT_FOUND naming the setting to configure.
func New(sources []Datasource, now func() time.Time) tools.Tool {
	if now == nil {
		now = time.Now
	}
	return tools.Typed[Args](&Tool{sources: sources, now: now, spec: spec(sources)})
}

func spec(sources []Datasource) tools.Spec {
	kinds := map[string]policy.Kind{}
	for _, a := range Action("").EnumValues() {
		kinds[a] = policy.KindRead
	}
	desc := "Read metrics from Prometheus. Results are summaries, never raw series: range gives per series min, max, avg, last, " +
		"the trend and the largest spike or step with its time, for the top series by peak value. Use it to see when " +
		"something started and how it moved; a PromQL error comes back with the server's message and position."
	if len(sources) == 0 {
		desc = "Not configured here: no Prometheus datasource is set (observability.prometheus), so every call says so. " + desc
	} else {
		names := make([]string, len(sources))
		for i, s := range sources {
			names[i] = s.Name
		}
		desc += " Datasources: " + strings.Join(names, ", ") + " (default " + names[0] + ")."
	}
	return tools.Spec{Name: "metrics", Description: desc, Kinds: policy.ActionKinds{Actions: kinds}}
}

// Spec implements tools.Tool.
func (t *Tool) Spec() tools.Spec { return t.spec }

// Plan implements tools.ToolOf.
func (t *Tool) Plan(a Args) (tools.Proposal, *policy.Block) {
	p := tools.Proposal{Action: policy.Action{Tool: "metrics", Name: string(a.Action)}}
	ds, b := t.source(a.Datasource)
	if b != nil {
		return p, b
	}
	name := ds.Name
	if name == "" {
		name = "Prometheus (none configured)"
	}
	p.Summary = a.summary(name)
	return p, nil
}

// source finds the named datasource, or the default.
func (t *Tool) source(name string) (Datasource, *policy.Block) {
	if len(t.sources) == 0 {
		return Datasource{}, nil // Execute reports it
	}
	if name == "" {
		return t.sources[0], nil
	}
	names := make([]string, len(t.sources))
	for i, s := range t.sources {
		if s.Name == name {
			return s, nil
		}
		names[i] = s.Name
	}
	return Datasource{}, tools.InvalidInput("datasource", fmt.Sprintf("field %q: no datasource named %q; the datasources are: %s",
		"datasource", name, strings.Join(names, ", ")))
}

// Run implements tools.ToolOf.
func (t *Tool) Run(ctx context.Context, a Args, p tools.Proposal) tools.Result {
	if len(t.sources) == 0 {
		return tools.Result{Envelope: notConfigured()}
	}
	ds, b := t.source(a.Datasource)
	if b != nil {
		return tools.Result{Envelope: tools.Blocked(b)}
	}
	ctx, cancel := context.WithTimeout(ctx, ds.Timeout)
	defer cancel()
	start := t.now()
	data, warnings, err := t.run(ctx, ds, a)
	var env tools.Envelope
	if err != nil {
		env = apiFailure(ds, a, err)
	} else {
		env = tools.CapData(tools.OK(data), 0)
	}
	env.Meta = map[string]any{"datasource": ds.Name, "duration_ms": t.now().Sub(start).Milliseconds()}
	if len(warnings) > 0 {
		env.Meta["warnings"] = warnings
	}
	return tools.Result{Envelope: env}
}

// notConfigured is the answer of a tool with no datasource.
func notConfigured() tools.Envelope {
	return tools.FailedWith(policy.CodeNotFound,
		"no Prometheus datasource is configured here (observability.prometheus in vigil's configuration), so there are no metrics to read",
		"tell the user metrics are not configured and continue with other tools; do not retry", nil)
}

func (t *Tool) run(ctx context.Context, ds Datasource, a Args) (any, []string, error) {
	w := a.windowOf(t.now())
	var matches []string
	if a.Query != "" {
		matches = []string{a.Query}
	}
	switch a.Action {
	case ActionQuery:
		at := t.now()
		if a.End != "" {
			at = w.end
		}
		v, warn, _, err := ds.API.Query(ctx, a.Query, at)
		if err != nil {
			return nil, nil, err
		}
		return instantData(a.Query, at, v, a.limit(DefaultSeriesLimit)), warn, nil
	case ActionRange:
		step, err := a.stepFor(w)
		if err != nil {
			return nil, nil, err
		}
		v, warn, _, err := ds.API.QueryRange(ctx, a.Query, promv1.Range{Start: w.start, End: w.end, Step: step})
		if err != nil {
			return nil, nil, err
		}
		m, ok := v.(model.Matrix)
		if !ok {
			return nil, warn, fmt.Errorf("%w: a range query returned %s, not a matrix", errUnexpected, v.Type())
		}
		return SummarizeRange(a.Query, w.start, w.end, step, fromMatrix(m), a.limit(DefaultSeriesLimit)), warn, nil
	case ActionSeries:
		sets, warn, _, err := ds.API.Series(ctx, matches, w.start, w.end)
		if err != nil {
			return nil, nil, err
		}
		names := make([]string, len(sets))
		for i, s := range sets {
			names[i] = FormatLabels(labelMap(model.Metric(s)))
		}
		return listing("series", names, a.limit(DefaultListLimit), w), warn, nil
	case ActionLabels:
		ls, warn, _, err := ds.API.LabelNames(ctx, matches, w.start, w.end)
		if err != nil {
			return nil, nil, err
		}
		names := make([]string, len(ls))
		for i, l := range ls {
			names[i] = string(l)
		}
		return listing("labels", names, a.limit(DefaultListLimit), w), warn, nil
	case ActionLabelValues:
		vs, warn, _, err := ds.API.LabelValues(ctx, a.Label, matches, w.start, w.end)
		if err != nil {
			return nil, nil, err
		}
		names := make([]string, len(vs))
		for i, v := range vs {
			names[i] = string(v)
		}
		out := listing("values", names, a.limit(DefaultListLimit), w)
		out["label"] = a.Label
		return out, warn, nil
	case ActionTargets:
		r, err := ds.API.Targets(ctx)
		if err != nil {
			return nil, nil, err
		}
		return summarizeTargets(r, a.limit(DefaultListLimit)), nil, nil
	case ActionRules:
		r, err := ds.API.Rules(ctx, nil)
		if err != nil {
			return nil, nil, err
		}
		return summarizeRules(r, a.limit(DefaultListLimit)), nil, nil
	}
	return nil, nil, fmt.Errorf("%w: action %q", errUnexpected, a.Action)
}

var errUnexpected = errors.New("unexpected answer")

// listing is a sorted, capped list of names.
func listing(what string, names []string, limit int, w window) map[string]any {
	kept, omitted := keepSorted(names, limit)
	out := map[string]any{
		"total": len(names), "shown": len(kept), "omitted": omitted, "ordered_by": "name",
		what: kept, "start": w.start, "end": w.end,
	}
	if omitted > 0 {
		out["note"] = fmt.Sprintf("%d more not shown; narrow the selector or raise limit", omitted)
	}
	return out
}

func labelMap(m model.Metric) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[string(k)] = string(v)
	}
	return out
}

func fromMatrix(m model.Matrix) []Series {
	out := make([]Series, len(m))
	for i, ss := range m {
		s := Series{Labels: labelMap(ss.Metric), Points: make([]Point, len(ss.Values))}
		for j, v := range ss.Values {
			s.Points[j] = Point{T: v.Timestamp.Time().UTC(), V: float64(v.Value)}
		}
		out[i] = s
	}
	return out
}

// instantData summarises an instant query's result of whatever type.
func instantData(query string, at time.Time, v model.Value, limit int) any {
	switch r := v.(type) {
	case model.Vector:
		samples := make([]Sample, len(r))
		for i, s := range r {
			samples[i] = Sample{Series: FormatLabels(labelMap(s.Metric)), Value: Num(s.Value), At: s.Timestamp.Time().UTC()}
		}
		return SummarizeInstant(query, at, samples, limit)
	case *model.Scalar:
		return map[string]any{"query": query, "result_type": "scalar", "value": Num(r.Value), "at": r.Timestamp.Time().UTC()}
	case *model.String:
		return map[string]any{"query": query, "result_type": "string", "value": r.Value, "at": r.Timestamp.Time().UTC()}
	case model.Matrix:
		// A range selector evaluated at an instant (rate's argument asked
		// for directly): summarise it like a range.
		start, end := at, at
		for _, ss := range r {
			if len(ss.Values) > 0 && ss.Values[0].Timestamp.Time().Before(start) {
				start = ss.Values[0].Timestamp.Time()
			}
		}
		return SummarizeRange(query, start, end, 0, fromMatrix(r), limit)
	}
	return map[string]any{"query": query, "result_type": v.Type().String()}
}

// parsePosition finds "line:column" in a PromQL parse error, e.g.
// `invalid parameter "query": 1:14: parse error: unexpected ...`.
var parsePosition = regexp.MustCompile(`(\d+):(\d+)(?:-\d+:\d+)?: parse error`)

// apiFailure turns an API error into an envelope: a query the server
// refused comes back with its message, and for a syntax error the
// position and the offending line marked, so the model can fix it.
func apiFailure(ds Datasource, a Args, err error) tools.Envelope {
	if errors.Is(err, errStep) {
		return tools.Blocked(tools.InvalidInput("step", err.Error()))
	}
	var pe *promv1.Error
	if errors.As(err, &pe) {
		switch pe.Type {
		case promv1.ErrBadData:
			details := map[string]any{"server_message": pe.Msg, "error_type": string(pe.Type)}
			msg := "Prometheus refused the query: " + pe.Msg
			if m := parsePosition.FindStringSubmatch(pe.Msg); m != nil {
				line, _ := strconv.Atoi(m[1])
				col, _ := strconv.Atoi(m[2])
				details["position"] = m[1] + ":" + m[2]
				details["line"], details["column"] = line, col
				if mark := markPosition(a.Query, line, col); mark != "" {
					details["at"] = mark
				}
			}
			return tools.FailedWith(policy.CodeInvalidInput, msg, "correct the PromQL at the position given and call again", details)
		case promv1.ErrTimeout, promv1.ErrCanceled:
			return tools.FailedWith(policy.CodeExecutionFailed, "Prometheus gave up on the query: "+pe.Msg,
				"narrow the query (fewer series, a shorter window, a larger step)", map[string]any{"error_type": string(pe.Type)})
		case promv1.ErrExec:
			return tools.FailedWith(policy.CodeExecutionFailed, "Prometheus could not evaluate the query: "+pe.Msg,
				"read the message; the query may select too much or use a function wrongly", map[string]any{"error_type": string(pe.Type)})
		}
		e := tools.FailedWith(policy.CodeExecutionFailed, fmt.Sprintf("Prometheus %s answered with an error: %s", ds.Name, pe.Msg), "", map[string]any{"error_type": string(pe.Type)})
		e.Error.Retryable = true
		return e
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return tools.FailedWith(policy.CodeExecutionFailed, fmt.Sprintf("Prometheus %s did not answer within %s", ds.Name, ds.Timeout),
			"narrow the query or try again later", nil)
	}
	if errors.Is(err, context.Canceled) {
		return tools.Failed(policy.CodeExecutionFailed, "the run was cancelled before Prometheus answered", false)
	}
	e := tools.FailedWith(policy.CodeExecutionFailed, fmt.Sprintf("Prometheus %s at %s could not be read: %v", ds.Name, redactURL(ds.URL), err),
		"the datasource may be down; try again later or tell the user", nil)
	e.Error.Retryable = true
	return e
}

// markPosition returns the query's line with a caret under column (1-based).
func markPosition(query string, line, col int) string {
	lines := strings.Split(query, "\n")
	if line < 1 || line > len(lines) || col < 1 {
		return ""
	}
	l := lines[line-1]
	if col > len(l)+1 {
		return ""
	}
	return l + "\n" + strings.Repeat(" ", col-1) + "^"
}

func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(invalid URL)"
	}
	return u.Redacted()
}

// targetInfo is one scrape target as the model reads it.
type targetInfo struct {
	Job        string    `json:"job"`
	Instance   string    `json:"instance"`
	Health     string    `json:"health"`
	LastError  string    `json:"last_error,omitempty"`
	LastScrape time.Time `json:"last_scrape,omitzero"`
	Seconds    Num       `json:"scrape_seconds"`
}

// summarizeTargets counts targets by health and lists them failing first.
func summarizeTargets(r promv1.TargetsResult, limit int) map[string]any {
	counts := map[string]int{}
	ts := make([]targetInfo, 0, len(r.Active))
	for _, at := range r.Active {
		counts[string(at.Health)]++
		ts = append(ts, targetInfo{
			Job: at.ScrapePool, Instance: string(at.Labels["instance"]), Health: string(at.Health),
			LastError: at.LastError, LastScrape: at.LastScrape.UTC(), Seconds: Num(at.LastScrapeDuration),
		})
	}
	rank := func(h string) int {
		switch h {
		case string(promv1.HealthBad):
			return 0
		case string(promv1.HealthUnknown):
			return 1
		}
		return 2
	}
	slices.SortStableFunc(ts, func(a, b targetInfo) int {
		if d := rank(a.Health) - rank(b.Health); d != 0 {
			return d
		}
		return strings.Compare(a.Job+"\x00"+a.Instance, b.Job+"\x00"+b.Instance)
	})
	out := map[string]any{"total": len(ts), "by_health": counts, "dropped": len(r.Dropped), "ordered_by": "health (down first), then job and instance"}
	if len(ts) > limit {
		out["omitted"] = len(ts) - limit
		out["note"] = fmt.Sprintf("%d more targets not shown", len(ts)-limit)
		ts = ts[:limit]
	}
	out["targets"] = ts
	return out
}

// ruleInfo is one rule as the model reads it.
type ruleInfo struct {
	Group     string `json:"group"`
	Name      string `json:"name"`
	Type      string `json:"type"`
	State     string `json:"state,omitempty"`
	Health    string `json:"health"`
	Active    int    `json:"active_alerts,omitempty"`
	Summary   string `json:"summary,omitempty"`
	Query     string `json:"query"`
	LastError string `json:"last_error,omitempty"`
}

// summarizeRules lists rules firing first, then pending, then unhealthy,
// then the rest.
func summarizeRules(r promv1.RulesResult, limit int) map[string]any {
	var rs []ruleInfo
	states := map[string]int{}
	for _, g := range r.Groups {
		for _, rule := range g.Rules {
			switch x := rule.(type) {
			case promv1.AlertingRule:
				states[x.State]++
				rs = append(rs, ruleInfo{Group: g.Name, Name: x.Name, Type: "alerting", State: x.State, Health: string(x.Health),
					Active: len(x.Alerts), Summary: string(x.Annotations["summary"]), Query: x.Query, LastError: x.LastError})
			case promv1.RecordingRule:
				rs = append(rs, ruleInfo{Group: g.Name, Name: x.Name, Type: "recording", Health: string(x.Health), Query: x.Query, LastError: x.LastError})
			}
		}
	}
	rank := func(x ruleInfo) int {
		switch {
		case x.State == "firing":
			return 0
		case x.State == "pending":
			return 1
		case x.Health != string(promv1.RuleHealthGood):
			return 2
		}
		return 3
	}
	slices.SortStableFunc(rs, func(a, b ruleInfo) int {
		if d := rank(a) - rank(b); d != 0 {
			return d
		}
		return strings.Compare(a.Group+"\x00"+a.Name, b.Group+"\x00"+b.Name)
	})
	out := map[string]any{"total": len(rs), "alerting_by_state": states, "ordered_by": "firing, pending, unhealthy, then group and name"}
	if len(rs) > limit {
		out["omitted"] = len(rs) - limit
		out["note"] = fmt.Sprintf("%d more rules not shown", len(rs)-limit)
		rs = rs[:limit]
	}
	if rs == nil {
		rs = []ruleInfo{}
	}
	out["rules"] = rs
	return out
}

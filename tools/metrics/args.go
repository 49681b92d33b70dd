package metrics

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/vigilops/vigil/tools"
)

// Action is the metrics tool's action.
type Action string

const (
	ActionQuery       Action = "query"
	ActionRange       Action = "range"
	ActionSeries      Action = "series"
	ActionLabels      Action = "labels"
	ActionLabelValues Action = "label_values"
	ActionTargets     Action = "targets"
	ActionRules       Action = "rules"
)

// EnumValues implements the tools package's closed-set argument contract.
func (Action) EnumValues() []string {
	return []string{"query", "range", "series", "labels", "label_values", "targets", "rules"}
}

// Limits of the metrics tool.
const (
	// DefaultSeriesLimit is how many series a query or range summary shows.
	DefaultSeriesLimit = 10
	// DefaultListLimit is how many names, label sets, targets or rules a
	// listing shows.
	DefaultListLimit = 50
	MaxLimit         = 200
	// DefaultWindow is the window of range, series and label lookups
	// without since or start.
	DefaultWindow = time.Hour
	// MaxWindow bounds a window.
	MaxWindow = 31 * 24 * time.Hour
	// maxPoints is the most points per series a range query may ask for
	// (Prometheus refuses more than 11,000).
	maxPoints = 11000
	// autoPoints is about how many points an automatic step yields: enough
	// to see a spike, few enough to summarise quickly.
	autoPoints  = 240
	maxQueryLen = 8192
)

// Args are the metrics tool's arguments (names fixed by the tool contract).
type Args struct {
	Action     Action `json:"action" jsonschema:"query: evaluate PromQL at one instant (end, or now). range: evaluate PromQL over a window and summarise each series (min, max, avg, last, trend, largest spike or step with its time). series: list series matching a selector. labels: list label names. label_values: list the values of label. targets: scrape targets and their health, failing first. rules: alerting and recording rules and their state, firing first."`
	Datasource string `json:"datasource,omitempty" jsonschema:"which configured Prometheus to ask; default: the first"`
	Query      string `json:"query,omitempty" jsonschema:"query and range: the PromQL expression. series: a series selector such as up{job=\"api\"}. labels and label_values: an optional selector to restrict them to."`
	Since      string `json:"since,omitempty" jsonschema:"window ending now: a number and a unit s, m, h, d or w, e.g. 30m or 6h (default 1h). Not with start."`
	Start      string `json:"start,omitempty" jsonschema:"window start, RFC 3339 (e.g. 2026-03-01T12:00:00Z); not with since"`
	End        string `json:"end,omitempty" jsonschema:"window end, or the instant of a query, RFC 3339; default now"`
	Step       string `json:"step,omitempty" jsonschema:"range only: resolution, e.g. 15s or 5m; default: chosen for about 240 points"`
	Label      string `json:"label,omitempty" jsonschema:"label_values only: the label name, e.g. job"`
	Limit      int    `json:"limit,omitempty" jsonschema:"how many to show: series of query and range (default 10, highest first), or entries of a listing (default 50)"`
}

var (
	durationPattern = regexp.MustCompile(`^([1-9][0-9]{0,5})(s|m|h|d|w)$`)
	labelPattern    = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
	namePattern     = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)
)

// parseDuration reads a validated duration argument: 30s, 5m, 6h, 2d, 1w.
func parseDuration(s string) (time.Duration, bool) {
	m := durationPattern.FindStringSubmatch(s)
	if m == nil {
		return 0, false
	}
	n, _ := strconv.Atoi(m[1])
	unit := map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour, "d": 24 * time.Hour, "w": 7 * 24 * time.Hour}[m[2]]
	return time.Duration(n) * unit, true
}

// Validate checks what the types cannot.
func (a *Args) Validate() error {
	act := string(a.Action)
	if a.Datasource != "" && !namePattern.MatchString(a.Datasource) {
		return tools.FieldErrorf("datasource", "want a configured datasource name such as main, got %q", a.Datasource)
	}
	if len(a.Query) > maxQueryLen {
		return tools.FieldErrorf("query", "longer than %d characters", maxQueryLen)
	}
	if err := tools.CheckText("query", a.Query, false); err != nil {
		return err
	}
	if a.Limit < 0 || a.Limit > MaxLimit {
		return tools.FieldErrorf("limit", "must be between 1 and %d, got %d", MaxLimit, a.Limit)
	}
	if a.Since != "" {
		d, ok := parseDuration(a.Since)
		if !ok {
			return tools.FieldErrorf("since", "want a number and a unit s, m, h, d or w, e.g. 30m; got %q", a.Since)
		}
		if d > MaxWindow {
			return tools.FieldErrorf("since", "%s is longer than the %s a query may look back", a.Since, "31d")
		}
		if a.Start != "" {
			return tools.FieldErrorf("since", "give since or start, not both")
		}
	}
	for _, f := range []struct{ name, v string }{{"start", a.Start}, {"end", a.End}} {
		if f.v == "" {
			continue
		}
		if _, err := time.Parse(time.RFC3339, f.v); err != nil {
			return tools.FieldErrorf(f.name, "want an RFC 3339 time such as 2026-03-01T12:00:00Z, got %q", f.v)
		}
	}
	if a.Start != "" && a.End != "" {
		s, _ := time.Parse(time.RFC3339, a.Start)
		e, _ := time.Parse(time.RFC3339, a.End)
		if !s.Before(e) {
			return tools.FieldErrorf("start", "must be before end (%s is not before %s)", a.Start, a.End)
		}
		if e.Sub(s) > MaxWindow {
			return tools.FieldErrorf("start", "the window from start to end is longer than 31d")
		}
	}
	if a.Step != "" {
		if _, ok := parseDuration(a.Step); !ok {
			return tools.FieldErrorf("step", "want a number and a unit s, m, h or d, e.g. 15s; got %q", a.Step)
		}
	}
	if a.Label != "" && !labelPattern.MatchString(a.Label) {
		return tools.FieldErrorf("label", "want a label name such as job, got %q", a.Label)
	}
	switch a.Action {
	case ActionQuery:
		if a.Query == "" {
			return tools.FieldErrorf("query", "required for action query (a PromQL expression)")
		}
		for _, f := range []struct {
			name string
			set  bool
		}{{"since", a.Since != ""}, {"start", a.Start != ""}, {"step", a.Step != ""}, {"label", a.Label != ""}} {
			if err := tools.NotUsed(f.name, act, f.set); err != nil {
				return err
			}
		}
	case ActionRange:
		if a.Query == "" {
			return tools.FieldErrorf("query", "required for action range (a PromQL expression)")
		}
		if err := tools.NotUsed("label", act, a.Label != ""); err != nil {
			return err
		}
	case ActionSeries, ActionLabels, ActionLabelValues:
		if a.Action == ActionSeries && a.Query == "" {
			return tools.FieldErrorf("query", "required for action series (a selector such as up{job=\"api\"})")
		}
		if a.Action == ActionLabelValues && a.Label == "" {
			return tools.FieldErrorf("label", "required for action label_values (e.g. job)")
		}
		if a.Action != ActionLabelValues {
			if err := tools.NotUsed("label", act, a.Label != ""); err != nil {
				return err
			}
		}
		return tools.NotUsed("step", act, a.Step != "")
	case ActionTargets, ActionRules:
		for _, f := range []struct {
			name string
			set  bool
		}{{"query", a.Query != ""}, {"since", a.Since != ""}, {"start", a.Start != ""}, {"end", a.End != ""},
			{"step", a.Step != ""}, {"label", a.Label != ""}} {
			if err := tools.NotUsed(f.name, act, f.set); err != nil {
				return err
			}
		}
	}
	return nil
}

// TuneSchema adds the constraints struct tags cannot carry.
func (*Args) TuneSchema(s *jsonschema.Schema) {
	if p := s.Properties["limit"]; p != nil {
		p.Minimum, p.Maximum = jsonschema.Ptr(1.0), jsonschema.Ptr(float64(MaxLimit))
	}
	for _, k := range []string{"since", "step"} {
		if p := s.Properties[k]; p != nil {
			p.Pattern = durationPattern.String()
		}
	}
	if p := s.Properties["label"]; p != nil {
		p.Pattern = labelPattern.String()
	}
}

// window is the time window of a call, resolved against now.
type window struct {
	start, end time.Time
}

// windowOf resolves since/start/end (validated) against now.
func (a Args) windowOf(now time.Time) window {
	end := now
	if a.End != "" {
		end, _ = time.Parse(time.RFC3339, a.End)
	}
	start := end.Add(-DefaultWindow)
	switch {
	case a.Start != "":
		start, _ = time.Parse(time.RFC3339, a.Start)
	case a.Since != "":
		d, _ := parseDuration(a.Since)
		start = end.Add(-d)
	}
	return window{start: start.UTC(), end: end.UTC()}
}

// niceSteps are the automatic steps, smallest first.
var niceSteps = []time.Duration{
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour,
}

// autoStep picks the smallest nice step that gives at most about
// autoPoints points over span.
func autoStep(span time.Duration) time.Duration {
	want := span / autoPoints
	for _, s := range niceSteps {
		if s >= want {
			return s
		}
	}
	return niceSteps[len(niceSteps)-1]
}

// errStep is a step too small for the window.
var errStep = errors.New(`field "step"`)

// stepFor is the step of a range call: the given one, checked against the
// points limit, or an automatic one.
func (a Args) stepFor(w window) (time.Duration, error) {
	span := w.end.Sub(w.start)
	if a.Step == "" {
		return autoStep(span), nil
	}
	step, _ := parseDuration(a.Step)
	if points := span / step; points > maxPoints {
		return 0, fmt.Errorf("%w: %s over %s is %d points per series; the most is %d: use a larger step or leave it out", errStep, a.Step, span, points, maxPoints)
	}
	return step, nil
}

func (a Args) limit(def int) int {
	if a.Limit > 0 {
		return a.Limit
	}
	return def
}

// summary says in one line what a call asks.
func (a Args) summary(ds string) string {
	q := a.Query
	if len(q) > 120 {
		q = q[:117] + "..."
	}
	switch a.Action {
	case ActionQuery:
		return fmt.Sprintf("query %s: %s", ds, q)
	case ActionRange:
		w := a.Since
		if w == "" {
			w = "1h"
			if a.Start != "" {
				w = "from " + a.Start
			}
		}
		return fmt.Sprintf("summarise %s over %s from %s", q, w, ds)
	case ActionLabelValues:
		return fmt.Sprintf("list values of label %s in %s", a.Label, ds)
	default:
		return fmt.Sprintf("list %s of %s", a.Action, ds)
	}
}

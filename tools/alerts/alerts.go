// Package alerts is the `alerts` tool over Alertmanager's API v2: reads of
// active alerts (with their silenced and inhibited state), alert groups and
// silences, and two writes that need approval in controlled channels:
// creating a silence (bounded in duration, created by the person who
// approved it) and expiring one.
package alerts

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools"
)

// Action is the alerts tool's action.
type Action string

const (
	ActionList          Action = "list"
	ActionGroups        Action = "groups"
	ActionSilences      Action = "silences"
	ActionSilence       Action = "silence"
	ActionExpireSilence Action = "expire_silence"
)

// EnumValues implements the tools package's closed-set argument contract.
func (Action) EnumValues() []string {
	return []string{"list", "groups", "silences", "silence", "expire_silence"}
}

// Limits of the alerts tool.
const (
	maxMatchers   = 20
	maxComment    = 1000
	minSilence    = time.Minute
	maxShown      = 50
	maxShownGroup = 30
	maxAnnotation = 300
)

// Args are the alerts tool's arguments (names fixed by the tool contract).
type Args struct {
	Action    Action   `json:"action" jsonschema:"list: active alerts (with silenced and inhibited state), filtered by matchers. groups: alerts as Alertmanager groups them for notification. silences: active and pending silences, filtered by matchers. silence: create a silence (a change: it needs approval) for matchers, duration and comment. expire_silence: end the silence silence_id now (a change)."`
	Matchers  []string `json:"matchers,omitempty" jsonschema:"label matchers, each name=value, name!=value, name=~regex or name!~regex, e.g. [\"alertname=HighLatency\", \"service=~checkout|cart\"]; values may be double-quoted"`
	Duration  string   `json:"duration,omitempty" jsonschema:"silence only: how long, from when it is approved, e.g. 30m or 2h"`
	Comment   string   `json:"comment,omitempty" jsonschema:"silence only: why, for the people who will see the silence"`
	SilenceID string   `json:"silence_id,omitempty" jsonschema:"expire_silence only: the silence's ID (a UUID from action silences)"`
}

var (
	durationPattern = regexp.MustCompile(`^([1-9][0-9]{0,4})(m|h|d)$|^([1-9][0-9]?)h([1-5]?[0-9])m$`)
	uuidPattern     = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
)

// parseDuration reads 30m, 2h, 1d or 1h30m.
func parseDuration(s string) (time.Duration, bool) {
	m := durationPattern.FindStringSubmatch(s)
	if m == nil {
		return 0, false
	}
	if m[1] != "" {
		n, _ := strconv.Atoi(m[1])
		return time.Duration(n) * map[string]time.Duration{"m": time.Minute, "h": time.Hour, "d": 24 * time.Hour}[m[2]], true
	}
	h, _ := strconv.Atoi(m[3])
	mm, _ := strconv.Atoi(m[4])
	return time.Duration(h)*time.Hour + time.Duration(mm)*time.Minute, true
}

// Validate checks what the types cannot.
func (a *Args) Validate() error {
	act := string(a.Action)
	if len(a.Matchers) > maxMatchers {
		return tools.FieldErrorf("matchers", "at most %d matchers, got %d", maxMatchers, len(a.Matchers))
	}
	ms, err := parseMatchers(a.Matchers)
	if err != nil {
		return tools.FieldErrorf("matchers", "%v", err)
	}
	if err := tools.CheckText("comment", a.Comment, false); err != nil {
		return err
	}
	switch a.Action {
	case ActionList, ActionGroups, ActionSilences:
		for _, f := range []struct {
			name string
			set  bool
		}{{"duration", a.Duration != ""}, {"comment", a.Comment != ""}, {"silence_id", a.SilenceID != ""}} {
			if err := tools.NotUsed(f.name, act, f.set); err != nil {
				return err
			}
		}
	case ActionSilence:
		if len(ms) == 0 {
			return tools.FieldErrorf("matchers", "required for action silence: which alerts to silence, e.g. [\"alertname=HighLatency\"]")
		}
		if err := checkRestrictive(ms); err != nil {
			return err
		}
		if a.Duration == "" {
			return tools.FieldErrorf("duration", "required for action silence, e.g. 2h")
		}
		if d, ok := parseDuration(a.Duration); !ok || d < minSilence {
			return tools.FieldErrorf("duration", "want a duration of at least 1m such as 30m, 2h or 1h30m, got %q", a.Duration)
		}
		if strings.TrimSpace(a.Comment) == "" {
			return tools.FieldErrorf("comment", "required for action silence: say why, for the people who will see it")
		}
		if len(a.Comment) > maxComment {
			return tools.FieldErrorf("comment", "longer than %d characters", maxComment)
		}
		return tools.NotUsed("silence_id", act, a.SilenceID != "")
	case ActionExpireSilence:
		if !uuidPattern.MatchString(a.SilenceID) {
			return tools.FieldErrorf("silence_id", "want a silence ID (a lower-case UUID from action silences), got %q", a.SilenceID)
		}
		for _, f := range []struct {
			name string
			set  bool
		}{{"matchers", len(a.Matchers) > 0}, {"duration", a.Duration != ""}, {"comment", a.Comment != ""}} {
			if err := tools.NotUsed(f.name, act, f.set); err != nil {
				return err
			}
		}
	}
	return nil
}

// TuneSchema adds the constraints struct tags cannot carry.
func (*Args) TuneSchema(s *jsonschema.Schema) {
	if p := s.Properties["duration"]; p != nil {
		p.Pattern = durationPattern.String()
	}
	if p := s.Properties["silence_id"]; p != nil {
		p.Pattern = uuidPattern.String()
	}
	if p := s.Properties["matchers"]; p != nil {
		p.MaxItems = jsonschema.Ptr(maxMatchers)
	}
}

// API is what the tool needs of Alertmanager; *Client satisfies it.
type API interface {
	Alerts(ctx context.Context, ms []Matcher) ([]Alert, error)
	Groups(ctx context.Context, ms []Matcher) ([]Group, error)
	Silences(ctx context.Context, ms []Matcher) ([]Silence, error)
	CreateSilence(ctx context.Context, s NewSilence) (string, error)
	ExpireSilence(ctx context.Context, id string) error
}

// Config configures the tool.
type Config struct {
	// API is nil when no Alertmanager is configured.
	API API
	// URL is shown in errors.
	URL     string
	Timeout time.Duration
	// MaxSilence is the longest silence the tool creates (24h when zero).
	MaxSilence time.Duration
	Now        func() time.Time
}

// Tool is the alerts tool.
type Tool struct {
	cfg  Config
	spec tools.Spec
}

var _ tools.ToolOf[Args] = (*Tool)(nil)

// New returns the alerts tool. Without an API it is still offered, says so
// in its description, and answers every call with NOT_FOUND naming the
// setting to configure.
func New(c Config) tools.Tool {
	if c.Timeout <= 0 {
		c.Timeout = 30 * time.Second
	}
	if c.MaxSilence <= 0 {
		c.MaxSilence = 24 * time.Hour
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	desc := "Read Alertmanager: active alerts with their silenced and inhibited state, alert groups, silences. " +
		"Silence alerts (matchers, duration at most " + formatDuration(c.MaxSilence) + ", a comment) or expire a silence: " +
		"both are changes that need approval; the silence is created in the approver's name. Check the result with action silences."
	if c.API == nil {
		desc = "Not configured here: no Alertmanager is set (observability.alertmanager.url), so every call says so. " + desc
	}
	return tools.Typed[Args](&Tool{cfg: c, spec: tools.Spec{
		Name: "alerts", Description: desc,
		Kinds: policy.ActionKinds{Actions: map[string]policy.Kind{
			string(ActionList): policy.KindRead, string(ActionGroups): policy.KindRead, string(ActionSilences): policy.KindRead,
			string(ActionSilence): policy.KindWrite, string(ActionExpireSilence): policy.KindWrite,
		}},
	}})
}

// Spec implements tools.Tool.
func (t *Tool) Spec() tools.Spec { return t.spec }

// Plan implements tools.ToolOf.
func (t *Tool) Plan(a Args) (tools.Proposal, *policy.Block) {
	p := tools.Proposal{Action: policy.Action{Tool: "alerts", Name: string(a.Action)}}
	ms, _ := parseMatchers(a.Matchers)
	switch a.Action {
	case ActionSilence:
		d, _ := parseDuration(a.Duration)
		if d > t.cfg.MaxSilence {
			return p, tools.InvalidInput("duration", fmt.Sprintf("field %q: %s is longer than the %s a silence may last here (observability.alertmanager.max_silence)",
				"duration", a.Duration, formatDuration(t.cfg.MaxSilence)))
		}
		p.Summary = fmt.Sprintf("silence alerts matching %s for %s", joinMatchers(ms), formatDuration(d))
		p.Details = []policy.ChangeDetail{
			{Label: "matchers", Value: joinMatchers(ms)},
			{Label: "duration", Value: formatDuration(d) + " from when it is approved"},
			{Label: "comment", Value: a.Comment},
			{Label: "created by", Value: "the person who approves"},
		}
		if t.cfg.API != nil {
			ctx, cancel := context.WithTimeout(context.Background(), min(t.cfg.Timeout, proposeCheckTimeout))
			cov, err := coverageOf(ctx, t.cfg.API, ms)
			cancel()
			if err != nil {
				p.Details = append(p.Details, policy.ChangeDetail{Label: "firing alerts it mutes",
					Value: "not checked now (Alertmanager did not answer); checked again before the silence is created"})
				break
			}
			if why := cov.refusal(ms); why != "" {
				return p, tools.InvalidInput("matchers", fmt.Sprintf("field %q: %s", "matchers", why))
			}
			p.Details = append(p.Details, policy.ChangeDetail{Label: "firing alerts it mutes", Value: cov.String()})
		}
	case ActionExpireSilence:
		p.Summary = "expire silence " + a.SilenceID + " now"
		p.Details = []policy.ChangeDetail{{Label: "silence", Value: a.SilenceID}, {Label: "change", Value: "expire it now: the alerts it silences notify again"}}
	default:
		p.Summary = string(a.Action) + " in Alertmanager"
		if len(ms) > 0 {
			p.Summary += " matching " + joinMatchers(ms)
		}
	}
	return p, nil
}

// Run implements tools.ToolOf.
func (t *Tool) Run(ctx context.Context, a Args, p tools.Proposal) tools.Result {
	if t.cfg.API == nil {
		return tools.Result{Envelope: tools.FailedWith(policy.CodeNotFound,
			"no Alertmanager is configured here (observability.alertmanager.url in vigil's configuration)",
			"tell the user alerts are not configured and continue with other tools; do not retry", nil)}
	}
	ms, err := parseMatchers(a.Matchers)
	if err != nil {
		return tools.Result{Envelope: tools.Blocked(tools.InvalidInput("matchers", err.Error()))}
	}
	ctx, cancel := context.WithTimeout(ctx, t.cfg.Timeout)
	defer cancel()
	now := t.cfg.Now()
	var data any
	switch a.Action {
	case ActionList:
		var as []Alert
		if as, err = t.cfg.API.Alerts(ctx, ms); err == nil {
			data = summarizeAlerts(as, ms)
		}
	case ActionGroups:
		var gs []Group
		if gs, err = t.cfg.API.Groups(ctx, ms); err == nil {
			data = summarizeGroups(gs)
		}
	case ActionSilences:
		var ss []Silence
		if ss, err = t.cfg.API.Silences(ctx, ms); err == nil {
			data = summarizeSilences(ss, now)
		}
	case ActionSilence:
		data, err = t.silence(ctx, a, ms, p.ApprovedBy, now)
	case ActionExpireSilence:
		if err = t.cfg.API.ExpireSilence(ctx, a.SilenceID); err == nil {
			data = map[string]any{"silence_id": a.SilenceID, "expired": true, "at": now.UTC()}
		}
	}
	if err != nil {
		return tools.Result{Envelope: t.failure(a, err)}
	}
	return tools.Result{Envelope: tools.CapData(tools.OK(data), 0)}
}

// silence creates the silence in the approver's name.
func (t *Tool) silence(ctx context.Context, a Args, ms []Matcher, approver string, now time.Time) (any, error) {
	d, _ := parseDuration(a.Duration)
	if d > t.cfg.MaxSilence {
		// Proposed under another configuration: refuse rather than exceed.
		return nil, errTooLong
	}
	createdBy := approver
	if createdBy == "" {
		createdBy = "vigil (no approver: autonomous channel)"
	}
	// What fires may have changed since the card was shown.
	cov, err := coverageOf(ctx, t.cfg.API, ms)
	if err != nil {
		return nil, err
	}
	if why := cov.refusal(ms); why != "" {
		return nil, &refusedError{why}
	}
	s := NewSilence{Matchers: ms, StartsAt: now.UTC(), EndsAt: now.Add(d).UTC(), CreatedBy: createdBy, Comment: a.Comment}
	id, err := t.cfg.API.CreateSilence(ctx, s)
	if err != nil {
		return nil, err
	}
	return map[string]any{
		"silence_id": id, "matchers": joinMatchers(ms), "starts_at": s.StartsAt, "ends_at": s.EndsAt,
		"created_by": createdBy, "comment": a.Comment,
		"note": "verify with action silences that it is active and matches what was meant",
	}, nil
}

var errTooLong = errors.New("the silence is longer than observability.alertmanager.max_silence allows")

// refusedError is a silence refused at execution for what it would mute.
type refusedError struct{ why string }

func (e *refusedError) Error() string { return e.why }

// proposeCheckTimeout bounds asking Alertmanager what a proposed silence
// would mute, so a slow Alertmanager does not hold the turn.
const proposeCheckTimeout = 5 * time.Second

// failure turns a client error into an envelope.
func (t *Tool) failure(a Args, err error) tools.Envelope {
	var ae *APIError
	var ne net.Error
	switch {
	case errors.Is(err, errTooLong):
		return tools.Blocked(tools.InvalidInput("duration", err.Error()))
	case errors.As(err, new(*refusedError)):
		return tools.Blocked(tools.InvalidInput("matchers", "refused before creating it: "+err.Error()))
	case errors.As(err, &ae) && ae.Status == 404 && a.Action == ActionExpireSilence:
		return tools.FailedWith(policy.CodeNotFound, fmt.Sprintf("Alertmanager has no silence %s: %s", a.SilenceID, ae.Message),
			"list silences to find the right ID", nil)
	case errors.As(err, &ae) && ae.Status/100 == 4:
		return tools.FailedWith(policy.CodeInvalidInput, "Alertmanager refused the request: "+ae.Message,
			"correct the arguments as the message says", map[string]any{"status": ae.Status})
	case errors.As(err, &ae):
		e := tools.FailedWith(policy.CodeExecutionFailed, "Alertmanager failed: "+ae.Message, "try again later", map[string]any{"status": ae.Status})
		e.Error.Retryable = true
		return e
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		e := tools.FailedWith(policy.CodeExecutionFailed, fmt.Sprintf("Alertmanager did not answer within %s", t.cfg.Timeout), "try again later", nil)
		e.Error.Retryable = a.Action != ActionSilence // a silence may have been created
		return e
	case errors.Is(err, context.Canceled):
		return tools.Failed(policy.CodeExecutionFailed, "the run was cancelled before Alertmanager answered", false)
	}
	e := tools.FailedWith(policy.CodeExecutionFailed, fmt.Sprintf("Alertmanager at %s could not be reached: %v", t.cfg.URL, err),
		"it may be down; try again later or tell the user", nil)
	e.Error.Retryable = true
	return e
}

// alertInfo is one alert as the model reads it.
type alertInfo struct {
	Alertname   string            `json:"alertname"`
	Severity    string            `json:"severity,omitempty"`
	State       string            `json:"state"`
	Labels      map[string]string `json:"labels"`
	Summary     string            `json:"summary,omitempty"`
	Description string            `json:"description,omitempty"`
	StartsAt    time.Time         `json:"starts_at"`
	SilencedBy  []string          `json:"silenced_by,omitempty"`
	InhibitedBy []string          `json:"inhibited_by,omitempty"`
	Receivers   []string          `json:"receivers,omitempty"`
}

// severityRank orders the usual severities, most urgent first.
func severityRank(s string) int {
	switch strings.ToLower(s) {
	case "critical", "page", "emergency", "p1":
		return 0
	case "error", "high", "major", "p2":
		return 1
	case "warning", "warn", "medium", "p3":
		return 2
	case "info", "low", "minor", "p4", "none":
		return 4
	}
	return 3
}

func stateRank(s string) int {
	switch s {
	case "active":
		return 0
	case "unprocessed":
		return 1
	}
	return 2 // suppressed
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

func toInfo(a Alert) alertInfo {
	labels := make(map[string]string, len(a.Labels))
	for k, v := range a.Labels {
		if k != "alertname" && k != "severity" {
			labels[k] = v
		}
	}
	info := alertInfo{
		Alertname: a.Labels["alertname"], Severity: a.Labels["severity"], State: a.Status.State, Labels: labels,
		Summary: clip(a.Annotations["summary"], maxAnnotation), Description: clip(a.Annotations["description"], maxAnnotation),
		StartsAt: a.StartsAt.UTC(), SilencedBy: a.Status.SilencedBy, InhibitedBy: a.Status.InhibitedBy,
	}
	for _, r := range a.Receivers {
		info.Receivers = append(info.Receivers, r.Name)
	}
	return info
}

// summarizeAlerts lists alerts active first, most severe first, newest
// first, with counts by state and by name.
func summarizeAlerts(as []Alert, ms []Matcher) map[string]any {
	byState := map[string]int{}
	byName := map[string]int{}
	infos := make([]alertInfo, 0, len(as))
	for _, a := range as {
		byState[a.Status.State]++
		byName[a.Labels["alertname"]]++
		infos = append(infos, toInfo(a))
	}
	slices.SortStableFunc(infos, func(a, b alertInfo) int {
		if d := stateRank(a.State) - stateRank(b.State); d != 0 {
			return d
		}
		if d := severityRank(a.Severity) - severityRank(b.Severity); d != 0 {
			return d
		}
		if d := b.StartsAt.Compare(a.StartsAt); d != 0 {
			return d
		}
		return cmp.Compare(a.Alertname, b.Alertname)
	})
	out := map[string]any{
		"total": len(infos), "by_state": byState, "by_alertname": byName,
		"ordered_by": "state (active first), severity, newest first",
	}
	if len(ms) > 0 {
		out["filter"] = joinMatchers(ms)
	}
	if len(infos) > maxShown {
		out["omitted"] = len(infos) - maxShown
		out["note"] = fmt.Sprintf("%d more alerts not shown; filter with matchers to see them", len(infos)-maxShown)
		infos = infos[:maxShown]
	}
	out["alerts"] = infos
	return out
}

// groupInfo is one alert group as the model reads it.
type groupInfo struct {
	Labels     map[string]string `json:"labels"`
	Receiver   string            `json:"receiver"`
	Alerts     int               `json:"alerts"`
	Active     int               `json:"active"`
	Suppressed int               `json:"suppressed"`
	Alertnames []string          `json:"alertnames"`
}

func summarizeGroups(gs []Group) map[string]any {
	infos := make([]groupInfo, 0, len(gs))
	for _, g := range gs {
		gi := groupInfo{Labels: g.Labels, Receiver: g.Receiver.Name, Alerts: len(g.Alerts), Alertnames: []string{}}
		for _, a := range g.Alerts {
			if a.Status.State == "active" {
				gi.Active++
			} else {
				gi.Suppressed++
			}
			if n := a.Labels["alertname"]; !slices.Contains(gi.Alertnames, n) && len(gi.Alertnames) < 10 {
				gi.Alertnames = append(gi.Alertnames, n)
			}
		}
		slices.Sort(gi.Alertnames)
		infos = append(infos, gi)
	}
	slices.SortStableFunc(infos, func(a, b groupInfo) int {
		if d := b.Active - a.Active; d != 0 {
			return d
		}
		return b.Alerts - a.Alerts
	})
	out := map[string]any{"total": len(infos), "ordered_by": "active alerts, most first"}
	if len(infos) > maxShownGroup {
		out["omitted"] = len(infos) - maxShownGroup
		out["note"] = fmt.Sprintf("%d more groups not shown", len(infos)-maxShownGroup)
		infos = infos[:maxShownGroup]
	}
	out["groups"] = infos
	return out
}

// silenceInfo is one silence as the model reads it.
type silenceInfo struct {
	ID        string    `json:"id"`
	State     string    `json:"state"`
	Matchers  string    `json:"matchers"`
	StartsAt  time.Time `json:"starts_at"`
	EndsAt    time.Time `json:"ends_at"`
	Remaining string    `json:"remaining,omitempty"`
	CreatedBy string    `json:"created_by"`
	Comment   string    `json:"comment"`
}

// summarizeSilences lists active and pending silences, ending soonest
// first; expired ones are only counted.
func summarizeSilences(ss []Silence, now time.Time) map[string]any {
	byState := map[string]int{}
	var infos []silenceInfo
	for _, s := range ss {
		byState[s.Status.State]++
		if s.Status.State == "expired" {
			continue
		}
		si := silenceInfo{ID: s.ID, State: s.Status.State, Matchers: joinMatchers(s.Matchers), StartsAt: s.StartsAt.UTC(),
			EndsAt: s.EndsAt.UTC(), CreatedBy: s.CreatedBy, Comment: clip(s.Comment, maxAnnotation)}
		if s.Status.State == "active" {
			si.Remaining = formatDuration(s.EndsAt.Sub(now).Round(time.Minute))
		}
		infos = append(infos, si)
	}
	slices.SortStableFunc(infos, func(a, b silenceInfo) int {
		if a.State != b.State {
			return cmp.Compare(a.State, b.State) // active before pending
		}
		return a.EndsAt.Compare(b.EndsAt)
	})
	out := map[string]any{"by_state": byState, "shown": "active and pending; expired ones are only counted", "ordered_by": "state, then ending soonest"}
	if len(infos) > maxShown {
		out["omitted"] = len(infos) - maxShown
		infos = infos[:maxShown]
	}
	if infos == nil {
		infos = []silenceInfo{}
	}
	out["silences"] = infos
	return out
}

// formatDuration writes 2h, 45m or 1h30m.
func formatDuration(d time.Duration) string {
	d = d.Round(time.Minute)
	if d <= 0 {
		return "0m"
	}
	h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
	switch {
	case h == 0:
		return fmt.Sprintf("%dm", m)
	case m == 0:
		return fmt.Sprintf("%dh", h)
	}
	return fmt.Sprintf("%dh%dm", h, m)
}

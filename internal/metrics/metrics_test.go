package metrics_test

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"

	"github.com/vigilops/vigil/adapters/alertwebhook"
	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/bot"
	"github.com/vigilops/vigil/internal/metrics"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools"
)

// Metrics is what the bot reports to.
var _ bot.Observer = (*metrics.Metrics)(nil)

func proposal(tool string) *tools.Proposal {
	return &tools.Proposal{Action: policy.Action{Tool: tool}}
}

func blocked(code policy.Code) *tools.Envelope {
	env := tools.Blocked(&policy.Block{Code: code, Message: "no"})
	return &env
}

func ok() *tools.Envelope {
	env := tools.OK("fine")
	return &env
}

func failed() *tools.Envelope {
	env := tools.Failed(policy.CodeExecutionFailed, "exit 1", false)
	return &env
}

// run feeds a realistic sequence of events through Observe.
func run(m *metrics.Metrics) {
	events := []agent.Event{
		{Type: agent.EventRunStarted},
		{Type: agent.EventTurn, Turn: 1},
		{Type: agent.EventModelCall, Duration: 1500 * time.Millisecond, Usage: agent.Usage{PromptTokens: 100, CompletionTokens: 20, TotalTokens: 120}},
		{Type: agent.EventToolCall, Proposal: proposal("read")},
		{Type: agent.EventToolResult, Proposal: proposal("read"), Result: blocked(policy.CodeFSMBlocked)},
		{Type: agent.EventToolResult, Proposal: proposal("control"), Result: blocked(policy.CodeStrictResolution)},
		{Type: agent.EventToolResult, Proposal: proposal("file_edit"), Result: blocked(policy.CodeRoutingMismatch)},
		{Type: agent.EventToolResult, Proposal: proposal("read"), Result: blocked("P2_UNBOUNDED")},
		// Auto-recovery: the retry is marked and succeeds.
		{Type: agent.EventToolCall, Proposal: proposal("read"), Recovery: true},
		{Type: agent.EventToolResult, Proposal: proposal("read"), Result: ok(), Recovery: true, Duration: 30 * time.Millisecond},
		// A second recovery that fails again is an attempt but no success.
		{Type: agent.EventToolCall, Proposal: proposal("read"), Recovery: true},
		{Type: agent.EventToolResult, Proposal: proposal("read"), Result: blocked(policy.CodeFSMBlocked), Recovery: true},
		{Type: agent.EventToolResult, Proposal: proposal("query"), Result: ok(), Duration: 2 * time.Millisecond},
		{Type: agent.EventToolResult, Proposal: proposal("read"), Result: failed(), Duration: 2 * time.Second},
		{Type: agent.EventToolResult, Result: failed()}, // arguments did not decode: no proposal
		{Type: agent.EventTurn, Turn: 2},
		{Type: agent.EventModelCall, Duration: 500 * time.Millisecond, Usage: agent.Usage{PromptTokens: 200, CompletionTokens: 5}},
		{Type: agent.EventCorrection, Code: "verification_required"},
		{Type: agent.EventCorrection, Code: "json_malformed"},
		{Type: agent.EventFinalAnswer, Phantom: true, Text: "safe"},
		{Type: agent.EventApprovalNeeded},
		{Type: agent.EventMaxTurns},
		{Type: agent.EventError},
	}
	for _, e := range events {
		m.Observe(e)
	}
}

func TestObserveDerivesCounters(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	run(m)

	if err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP vigil_fsm_blocks_total Actions refused by the session FSM: gate=tool for tool calls, gate=final for final answers while verification is pending.
# TYPE vigil_fsm_blocks_total counter
vigil_fsm_blocks_total{gate="final"} 1
vigil_fsm_blocks_total{gate="tool"} 2
`), "vigil_fsm_blocks_total"); err != nil {
		t.Error(err)
	}

	want := map[string]float64{
		`vigil_strict_resolution_blocks_total`:                         1,
		`vigil_routing_mismatches_total`:                               1,
		`vigil_phantom_detections_total`:                               1,
		`vigil_auto_recovery_attempts_total`:                           2,
		`vigil_auto_recovery_successes_total`:                          1,
		`vigil_agent_iterations_total`:                                 2,
		`vigil_runs_started_total`:                                     1,
		`vigil_llm_tokens_total{type="prompt"}`:                        300,
		`vigil_llm_tokens_total{type="completion"}`:                    25,
		`vigil_llm_request_duration_seconds_count`:                     2,
		`vigil_llm_request_duration_seconds_sum`:                       2,
		`vigil_runs_finished_total{result="answer"}`:                   1,
		`vigil_runs_finished_total{result="approval"}`:                 1,
		`vigil_runs_finished_total{result="max_turns"}`:                1,
		`vigil_runs_finished_total{result="error"}`:                    1,
		`vigil_tool_calls_total{outcome="blocked",tool="read"}`:        3,
		`vigil_tool_calls_total{outcome="blocked",tool="control"}`:     1,
		`vigil_tool_calls_total{outcome="blocked",tool="file_edit"}`:   1,
		`vigil_tool_calls_total{outcome="ok",tool="read"}`:             1,
		`vigil_tool_calls_total{outcome="ok",tool="query"}`:            1,
		`vigil_tool_calls_total{outcome="failed",tool="read"}`:         1,
		`vigil_tool_calls_total{outcome="failed",tool="unknown"}`:      1,
		`vigil_tool_duration_seconds_count{tool="read"}`:               2, // blocked calls are not timed
		`vigil_tool_duration_seconds_count{tool="query"}`:              1,
		`vigil_tool_duration_seconds_bucket{tool="read",le="0.05"}`:    1,
		`vigil_approvals_total{outcome="requested"}`:                   0, // only the bot reports approvals
		`vigil_tool_duration_seconds_bucket{tool="unknown",le="+Inf"}`: 1,
	}
	got := scrape(t, reg)
	for series, w := range want {
		v, found := got[series]
		if !found {
			t.Errorf("series %s missing", series)
			continue
		}
		if v != w {
			t.Errorf("%s = %v, want %v", series, v, w)
		}
	}
}

func TestApprovalAndChatEvents(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	for _, o := range []string{"requested", "requested", "approved", "executed", "denied", "expired", "bogus"} {
		m.ApprovalOutcome(o)
	}
	m.ChatEvent("slack", metrics.ChatHandled)
	m.ChatEvent("slack", metrics.ChatDeduplicated)
	m.ChatEvent("Matrix", metrics.ChatHandled)
	m.Feedback("slack", metrics.FeedbackGood)
	m.Feedback("slack", metrics.FeedbackGood)
	m.Feedback("Matrix", metrics.FeedbackBad)
	m.Feedback("console", "meh")

	got := scrape(t, reg)
	want := map[string]float64{
		`vigil_approvals_total{outcome="requested"}`:                      2,
		`vigil_approvals_total{outcome="approved"}`:                       1,
		`vigil_approvals_total{outcome="executed"}`:                       1,
		`vigil_approvals_total{outcome="denied"}`:                         1,
		`vigil_approvals_total{outcome="expired"}`:                        1,
		`vigil_approvals_total{outcome="other"}`:                          1,
		`vigil_chat_events_total{platform="slack",result="handled"}`:      1,
		`vigil_chat_events_total{platform="slack",result="deduplicated"}`: 1,
		`vigil_chat_events_total{platform="matrix",result="handled"}`:     1,
		`vigil_answer_feedback_total{platform="slack",rating="good"}`:     2,
		`vigil_answer_feedback_total{platform="matrix",rating="bad"}`:     1,
		`vigil_answer_feedback_total{platform="console",rating="other"}`:  1,
	}
	for series, w := range want {
		if v := got[series]; v != w {
			t.Errorf("%s = %v, want %v", series, v, w)
		}
	}
}

func TestEveryD3MetricIsRegistered(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	run(m)
	m.ChatEvent("slack", metrics.ChatHandled)
	names := []string{
		"vigil_fsm_blocks_total",
		"vigil_strict_resolution_blocks_total",
		"vigil_routing_mismatches_total",
		"vigil_phantom_detections_total",
		"vigil_auto_recovery_attempts_total",
		"vigil_auto_recovery_successes_total",
		"vigil_agent_iterations_total",
		"vigil_approvals_total",
		"vigil_llm_tokens_total",
		"vigil_llm_request_duration_seconds",
		"vigil_tool_duration_seconds",
		"vigil_tool_calls_total",
		"vigil_runs_started_total",
		"vigil_runs_finished_total",
		"vigil_chat_events_total",
		"vigil_runs_in_flight",
		"vigil_runs_queued",
		"vigil_approvals_pending",
		"vigil_alert_groups_open",
	}
	for _, n := range names {
		c, err := testutil.GatherAndCount(reg, n)
		if err != nil {
			t.Fatalf("gather %s: %v", n, err)
		}
		if c == 0 {
			t.Errorf("%s has no series", n)
		}
	}
	// Lint the metric names and help texts the way promtool would.
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint %s: %s", p.Metric, p.Text)
	}
}

func TestNilMetricsIsANoOp(t *testing.T) {
	var m *metrics.Metrics
	m.Observe(agent.Event{Type: agent.EventTurn})
	m.Emit(context.Background(), agent.Event{Type: agent.EventTurn})
	m.ApprovalOutcome("approved")
	m.ChatEvent("slack", "handled")
}

func TestSeparateRegistriesDoNotCollide(t *testing.T) {
	a := metrics.New(prometheus.NewRegistry())
	b := metrics.New(prometheus.NewRegistry())
	a.Observe(agent.Event{Type: agent.EventTurn})
	b.Observe(agent.Event{Type: agent.EventTurn})
}

// scrape renders g in the text exposition format and returns each series
// line ("name{labels}") with its value, as Prometheus would see it.
func scrape(t *testing.T, g prometheus.Gatherer) map[string]float64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	// testutil.GatherAndFormat needs metric names; this wants them all.
	var text bytes.Buffer
	enc := expfmt.NewEncoder(&text, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			t.Fatal(err)
		}
	}
	out := map[string]float64{}
	for line := range strings.Lines(text.String()) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("parse %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
}

// Metrics is what the alert intake and the bot's alert glue report to.
var (
	_ alertwebhook.Observer = (*metrics.Metrics)(nil)
	_ bot.AlertObserver     = (*metrics.Metrics)(nil)
)

func TestAlertMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	m.AlertReceived("alertmanager", "accepted")
	m.AlertReceived("alertmanager", "accepted")
	m.AlertReceived("pagerduty", "unauthorized")
	m.AlertGroup("alertmanager", "routes[0]", bot.AlertRouted)
	m.AlertGroup("alertmanager", "routes[0]", bot.AlertDeduplicated)
	m.AlertFirstMessage("alertmanager", 12*time.Second)
	got := scrape(t, reg)
	want := map[string]float64{
		`vigil_alerts_received_total{result="accepted",source="alertmanager"}`:                    2,
		`vigil_alerts_received_total{result="unauthorized",source="pagerduty"}`:                   1,
		`vigil_alert_groups_total{result="routed",route="routes[0]",source="alertmanager"}`:       1,
		`vigil_alert_groups_total{result="deduplicated",route="routes[0]",source="alertmanager"}`: 1,
		`vigil_alert_first_message_seconds_count{source="alertmanager"}`:                          1,
		`vigil_alert_first_message_seconds_sum{source="alertmanager"}`:                            12,
	}
	for series, w := range want {
		if v, ok := got[series]; !ok || v != w {
			t.Errorf("%s = %v (present %v), want %v; have %v", series, v, ok, w, keysOf(got))
		}
	}
}

func keysOf(m map[string]float64) []string {
	var out []string
	for k := range m {
		if strings.Contains(k, "alert") {
			out = append(out, k)
		}
	}
	return out
}

// Load sets each gauge from the bot's report, and sets it again (not adds)
// on the next one.
func TestLoadSetsGauges(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	m.Load(bot.Load{RunsInFlight: 3, RunsQueued: 2, PendingApprovals: 4, OpenAlertGroups: 5})
	m.Load(bot.Load{RunsInFlight: 1, RunsQueued: 0, PendingApprovals: 4, OpenAlertGroups: 2})
	want := `
# HELP vigil_runs_in_flight Jobs (runs, resumed runs, investigations, settlements) running on this replica now.
# TYPE vigil_runs_in_flight gauge
vigil_runs_in_flight 1
# HELP vigil_runs_queued Jobs waiting on this replica: behind another job in their thread, for a run slot, or investigations for an investigation slot.
# TYPE vigil_runs_queued gauge
vigil_runs_queued 0
# HELP vigil_approvals_pending Approvals waiting for a decision across replicas, as of this replica's last approval sweep.
# TYPE vigil_approvals_pending gauge
vigil_approvals_pending 4
# HELP vigil_alert_groups_open Alert groups firing as this replica's intake last heard of them (a group quiet past alerts.limits.open_group_idle stops counting).
# TYPE vigil_alert_groups_open gauge
vigil_alert_groups_open 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"vigil_runs_in_flight", "vigil_runs_queued", "vigil_approvals_pending", "vigil_alert_groups_open"); err != nil {
		t.Fatal(err)
	}
}

// Package metrics holds vigil's Prometheus metrics (SPEC D3). Most of them are
// derived from the agent's typed run events by Observe; the bot reports what
// only it sees (approval decisions, chat events) through explicit methods.
//
// Everything registers on the registry given to New: no global state, so
// tests and several bots in one process never collide.
package metrics

import (
	"context"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/bot"
	"github.com/vigilops/vigil/policy"
)

const namespace = "vigil"

// Approval outcomes accepted by ApprovalOutcome.
const (
	ApprovalRequested = "requested"
	ApprovalApproved  = "approved"
	ApprovalDenied    = "denied"
	ApprovalExpired   = "expired"
	ApprovalExecuted  = "executed"
)

// Chat event results, the usual values of ChatEvent's result label.
const (
	ChatHandled      = "handled"
	ChatDeduplicated = "deduplicated"
	ChatIgnored      = "ignored"
)

// Tool call outcomes of vigil_tool_calls_total.
const (
	toolOK      = "ok"
	toolBlocked = "blocked"
	toolFailed  = "failed"
)

// correctionVerificationRequired is the Code of the correction the loop
// sends when gate 2 refuses a final answer (SPEC A4).
const correctionVerificationRequired = "verification_required"

// unknownTool labels tool results without a proposal (arguments that did
// not decode), keeping the tool label bounded to registered tool names.
const unknownTool = "unknown"

var (
	// llmBuckets spans a fast local model to a slow reasoning model, seconds.
	llmBuckets = []float64{0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120}
	// toolBuckets spans a cached lookup to a command near its timeout, seconds.
	toolBuckets = []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}
)

// Metrics is the set of vigil's collectors. A nil *Metrics is valid and
// records nothing, so callers need not guard optional metrics.
type Metrics struct {
	fsmBlocks         *prometheus.CounterVec
	strictBlocks      prometheus.Counter
	routingMismatches prometheus.Counter
	phantoms          prometheus.Counter
	recoveryAttempts  prometheus.Counter
	recoverySuccesses prometheus.Counter
	iterations        prometheus.Counter
	approvals         *prometheus.CounterVec
	llmTokens         *prometheus.CounterVec
	llmLatency        prometheus.Histogram
	toolLatency       *prometheus.HistogramVec
	toolCalls         *prometheus.CounterVec
	runsStarted       prometheus.Counter
	runsFinished      *prometheus.CounterVec
	chatEvents        *prometheus.CounterVec
	feedback          *prometheus.CounterVec
	alertsReceived    *prometheus.CounterVec
	alertGroups       *prometheus.CounterVec
	alertFirstMessage *prometheus.HistogramVec
	runsInFlight      prometheus.Gauge
	runsQueued        prometheus.Gauge
	approvalsPending  prometheus.Gauge
	alertGroupsOpen   prometheus.Gauge
}

// New creates vigil's metrics and registers them on reg. It panics if a
// metric is already registered there, which is a wiring bug (like
// prometheus.MustRegister).
func New(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		fsmBlocks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "fsm_blocks_total",
			Help: "Actions refused by the session FSM: gate=tool for tool calls, gate=final for final answers while verification is pending.",
		}, []string{"gate"}),
		strictBlocks: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "strict_resolution_blocks_total",
			Help: "Tool calls refused because their target was not resolved in the session (STRICT_RESOLUTION).",
		}),
		routingMismatches: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "routing_mismatches_total",
			Help: "Tool calls refused because they targeted a parent of an explicitly accessed resource (ROUTING_MISMATCH).",
		}),
		phantoms: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "phantom_detections_total",
			Help: "Final answers replaced because they claimed facts no tool had produced.",
		}),
		recoveryAttempts: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "auto_recovery_attempts_total",
			Help: "Blocked tool calls retried automatically with their suggested rewrite.",
		}),
		recoverySuccesses: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "auto_recovery_successes_total",
			Help: "Automatic retries with a suggested rewrite that succeeded.",
		}),
		iterations: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "agent_iterations_total",
			Help: "Agent loop turns (one model call and its tool calls each).",
		}),
		approvals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "approvals_total",
			Help: "Approval requests and their outcomes.",
		}, []string{"outcome"}),
		llmTokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "llm_tokens_total",
			Help: "Tokens used by model calls, by type (prompt or completion).",
		}, []string{"type"}),
		llmLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: namespace, Name: "llm_request_duration_seconds",
			Help:    "Latency of model calls, retries included.",
			Buckets: llmBuckets,
		}),
		toolLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "tool_duration_seconds",
			Help:    "Latency of tool executions, by tool. Calls refused before running are not observed.",
			Buckets: toolBuckets,
		}, []string{"tool"}),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "tool_calls_total",
			Help: "Tool results by tool and outcome (ok, blocked, failed).",
		}, []string{"tool", "outcome"}),
		runsStarted: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "runs_started_total",
			Help: "Agent runs started.",
		}),
		runsFinished: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "runs_finished_total",
			Help: "Agent runs that stopped, by result: answer, approval (waiting for a decision), error, max_turns.",
		}, []string{"result"}),
		chatEvents: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "chat_events_total",
			Help: "Inbound chat events by platform and result (handled, deduplicated, ignored).",
		}, []string{"platform", "result"}),
		feedback: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "answer_feedback_total",
			Help: "Ratings people gave vigil's answers, by platform and rating (good, bad); a changed rating counts again.",
		}, []string{"platform", "rating"}),
		alertsReceived: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "alerts_received_total",
			Help: "Alert notifications received, by source (alertmanager, grafana, pagerduty) and result (accepted, unauthorized, malformed, too_large, stale, ignored, unrouted, failed).",
		}, []string{"source", "result"}),
		alertGroups: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "alert_groups_total",
			Help: "Accepted alert notifications by source, route and what they did (routed: opened a thread, deduplicated, updated, investigated, failed).",
		}, []string{"source", "route", "result"}),
		alertFirstMessage: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "alert_first_message_seconds",
			Help:    "Time from an alert group's first notification to its investigation's first message (debounce included).",
			Buckets: []float64{1, 5, 10, 20, 30, 45, 60, 90, 120, 300, 600},
		}, []string{"source"}),
		runsInFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "runs_in_flight",
			Help: "Jobs (runs, resumed runs, investigations, settlements) running on this replica now.",
		}),
		runsQueued: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "runs_queued",
			Help: "Jobs waiting on this replica: behind another job in their thread, for a run slot, or investigations for an investigation slot.",
		}),
		approvalsPending: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "approvals_pending",
			Help: "Approvals waiting for a decision across replicas, as of this replica's last approval sweep.",
		}),
		alertGroupsOpen: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "alert_groups_open",
			Help: "Alert groups firing as this replica's intake last heard of them (a group quiet past alerts.limits.open_group_idle stops counting).",
		}),
	}
	reg.MustRegister(
		m.runsInFlight, m.runsQueued, m.approvalsPending, m.alertGroupsOpen,
		m.alertsReceived, m.alertGroups, m.alertFirstMessage,
		m.fsmBlocks, m.strictBlocks, m.routingMismatches, m.phantoms,
		m.recoveryAttempts, m.recoverySuccesses, m.iterations, m.approvals,
		m.llmTokens, m.llmLatency, m.toolLatency, m.toolCalls,
		m.runsStarted, m.runsFinished, m.chatEvents, m.feedback,
	)
	// Known label values start at zero so dashboards and rate() see the
	// series before the first event.
	for _, gate := range []string{"tool", "final"} {
		m.fsmBlocks.WithLabelValues(gate)
	}
	for _, o := range []string{ApprovalRequested, ApprovalApproved, ApprovalDenied, ApprovalExpired, ApprovalExecuted} {
		m.approvals.WithLabelValues(o)
	}
	for _, t := range []string{"prompt", "completion"} {
		m.llmTokens.WithLabelValues(t)
	}
	for _, r := range []string{"answer", "approval", "error", "max_turns"} {
		m.runsFinished.WithLabelValues(r)
	}
	for _, r := range []string{FeedbackGood, FeedbackBad} {
		m.feedback.WithLabelValues("console", r)
	}
	return m
}

// Emit makes Metrics an agent.Sink, so it can sit beside the bot's renderer.
func (m *Metrics) Emit(_ context.Context, e agent.Event) { m.Observe(e) }

var _ agent.Sink = (*Metrics)(nil)

// Observe derives metrics from one run event. Approval outcomes are not
// derived here (the bot reports them with ApprovalOutcome, including
// "requested"), so nothing is counted twice.
func (m *Metrics) Observe(e agent.Event) {
	if m == nil {
		return
	}
	switch e.Type {
	case agent.EventRunStarted:
		m.runsStarted.Inc()
	case agent.EventTurn:
		m.iterations.Inc()
	case agent.EventModelCall:
		m.llmTokens.WithLabelValues("prompt").Add(float64(max(e.Usage.PromptTokens, 0)))
		m.llmTokens.WithLabelValues("completion").Add(float64(max(e.Usage.CompletionTokens, 0)))
		m.llmLatency.Observe(e.Duration.Seconds())
	case agent.EventToolCall:
		if e.Recovery {
			m.recoveryAttempts.Inc()
		}
	case agent.EventToolResult:
		m.observeToolResult(e)
	case agent.EventCorrection:
		if e.Code == correctionVerificationRequired {
			m.fsmBlocks.WithLabelValues("final").Inc()
		}
	case agent.EventFinalAnswer:
		if e.Phantom {
			m.phantoms.Inc()
		}
		m.runsFinished.WithLabelValues("answer").Inc()
	case agent.EventApprovalNeeded:
		m.runsFinished.WithLabelValues("approval").Inc()
	case agent.EventError:
		m.runsFinished.WithLabelValues("error").Inc()
	case agent.EventMaxTurns:
		m.runsFinished.WithLabelValues("max_turns").Inc()
	}
}

func (m *Metrics) observeToolResult(e agent.Event) {
	tool := unknownTool
	if e.Proposal != nil && e.Proposal.Tool != "" {
		tool = e.Proposal.Tool
	}
	outcome := toolOK
	if r := e.Result; r != nil && (!r.OK || r.Error != nil) {
		outcome = toolFailed
		if r.Error != nil && r.Error.Blocked {
			outcome = toolBlocked
		}
		if r.Error != nil {
			switch r.Error.Code {
			case policy.CodeFSMBlocked:
				m.fsmBlocks.WithLabelValues("tool").Inc()
			case policy.CodeStrictResolution:
				m.strictBlocks.Inc()
			case policy.CodeRoutingMismatch:
				m.routingMismatches.Inc()
			}
		}
	}
	m.toolCalls.WithLabelValues(tool, outcome).Inc()
	if outcome != toolBlocked {
		m.toolLatency.WithLabelValues(tool).Observe(e.Duration.Seconds())
	}
	if e.Recovery && outcome == toolOK {
		m.recoverySuccesses.Inc()
	}
}

// ApprovalOutcome counts one approval event: requested, approved, denied,
// expired or executed. Other values are counted as "other" so a wiring
// mistake shows up instead of disappearing.
func (m *Metrics) ApprovalOutcome(outcome string) {
	if m == nil {
		return
	}
	switch outcome {
	case ApprovalRequested, ApprovalApproved, ApprovalDenied, ApprovalExpired, ApprovalExecuted:
	default:
		outcome = "other"
	}
	m.approvals.WithLabelValues(outcome).Inc()
}

// ChatEvent counts one inbound chat event on a platform ("slack",
// "matrix", "console") with its result (ChatHandled, ChatDeduplicated,
// ChatIgnored). Both values must come from a small fixed set, never from
// user input.
func (m *Metrics) ChatEvent(platform, result string) {
	if m == nil {
		return
	}
	m.chatEvents.WithLabelValues(strings.ToLower(platform), result).Inc()
}

// Feedback ratings accepted by Feedback.
const (
	FeedbackGood = "good"
	FeedbackBad  = "bad"
)

// Feedback counts one rating of an answer on a platform. Ratings other
// than good and bad are counted as "other".
func (m *Metrics) Feedback(platform, rating string) {
	if m == nil {
		return
	}
	if rating != FeedbackGood && rating != FeedbackBad {
		rating = "other"
	}
	m.feedback.WithLabelValues(strings.ToLower(platform), rating).Inc()
}

// AlertReceived counts one alert notification (alertwebhook.Observer).
func (m *Metrics) AlertReceived(source, result string) {
	if m == nil {
		return
	}
	m.alertsReceived.WithLabelValues(source, result).Inc()
}

// AlertGroup counts what an accepted notification did (bot.AlertObserver).
func (m *Metrics) AlertGroup(source, route, result string) {
	if m == nil {
		return
	}
	m.alertGroups.WithLabelValues(source, route, result).Inc()
}

// AlertFirstMessage observes the time from a group's first notification
// to its investigation's first message (bot.AlertObserver).
func (m *Metrics) AlertFirstMessage(source string, d time.Duration) {
	if m == nil {
		return
	}
	m.alertFirstMessage.WithLabelValues(source).Observe(d.Seconds())
}

// Load sets the gauges of what the bot has in hand (bot.LoadObserver).
func (m *Metrics) Load(l bot.Load) {
	if m == nil {
		return
	}
	m.runsInFlight.Set(float64(l.RunsInFlight))
	m.runsQueued.Set(float64(l.RunsQueued))
	m.approvalsPending.Set(float64(l.PendingApprovals))
	m.alertGroupsOpen.Set(float64(l.OpenAlertGroups))
}

var _ bot.LoadObserver = (*Metrics)(nil)

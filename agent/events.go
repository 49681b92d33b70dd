package agent

import (
	"context"
	"time"

	"github.com/vigilops/vigil/policy/command"
	"github.com/vigilops/vigil/tools"
)

// EventType names what happened in a run (SPEC A14).
type EventType string

const (
	EventRunStarted     EventType = "run_started"
	EventTurn           EventType = "turn"
	EventToolCall       EventType = "tool_call"
	EventToolResult     EventType = "tool_result"
	EventApprovalNeeded EventType = "approval_needed"
	EventCorrection     EventType = "correction"
	EventFinalAnswer    EventType = "final_answer"
	EventError          EventType = "error"
	EventMaxTurns       EventType = "max_turns"
	// EventModelCall reports one model call's latency and tokens.
	EventModelCall EventType = "model_call"
)

// Event is one thing the loop reports. Only the fields relevant to Type are
// set. The agent knows nothing of chat platforms; the bot renders events.
type Event struct {
	Type    EventType
	Session string
	Run     string
	Turn    int
	At      time.Time

	// Tool call and result.
	CallID   string
	Proposal *tools.Proposal
	// Result is set on EventToolResult.
	Result *tools.Envelope
	Output string // raw command output, for traces (not yet redacted)
	// Sandbox is how the command ran (landlock, bwrap or none and why, and
	// the shell); nil when the call ran no command.
	Sandbox *tools.Sandbox
	// ActedAs is the identity the call used on its target when not
	// vigil's own (tools.Result.ActedAs).
	ActedAs  string
	Duration time.Duration
	// Recovery marks a call that was an automatic retry with a suggested
	// rewrite (SPEC A12).
	Recovery bool

	// Text is the final answer, the correction sent to the model, or the
	// error message (safe to show).
	Text string
	// Phantom marks a final answer that was replaced because it claimed
	// facts no tool had produced (SPEC A7).
	Phantom bool
	// Code names the policy rule for blocks (FSM_BLOCKED, ...) and the
	// reason for corrections ("verification_required", "json_malformed").
	Code string

	// Approval is the request the bot must turn into an approval.
	Approval *ApprovalNeeded

	// Usage is set on EventModelCall.
	Usage Usage
}

// ApprovalNeeded describes a write that stopped the run until a person
// decides.
type ApprovalNeeded struct {
	CallID string
	// Proposal is the call as its card shows it: with its tool's preview
	// of the change (Details and Basis, see tools.Previewer) when it has
	// one.
	Proposal tools.Proposal
	// Args is the raw argument JSON the model gave; the approval binds it.
	Args string
	// Risk and Reasons are policy's assessment of the write
	// (policy.Decision), for the approval card.
	Risk    command.Risk
	Reasons []string
}

// Sink receives a run's events in order. Emit must not block for long: the
// bot queues rendering work.
type Sink interface {
	Emit(ctx context.Context, e Event)
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(ctx context.Context, e Event)

// Emit calls f.
func (f SinkFunc) Emit(ctx context.Context, e Event) { f(ctx, e) }

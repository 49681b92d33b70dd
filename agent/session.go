package agent

import (
	"time"

	"github.com/vigilops/vigil/policy"
)

// Session is the state of one conversation (one chat thread): its history
// with the model, its policy state (FSM and resolved context), and the run in
// progress, if any. It is plain data so any replica can load it, continue a
// run, and save it again; no goroutine holds a session between steps.
type Session struct {
	// Key identifies the conversation, e.g. "slack:C123:1700000000.000100".
	Key string `json:"key"`
	// History is everything said to and by the model, system prompt excluded
	// (it is rebuilt per run from the current tools and inventory).
	History []Message            `json:"history"`
	Policy  *policy.SessionState `json:"policy"`
	// Run is the run in progress; nil when the session is idle.
	Run *RunState `json:"run,omitempty"`
	// Knowledge is what vigil learned from the history's tool results
	// (knowledge.go): the prompt's known-facts block.
	Knowledge *Knowledge `json:"knowledge,omitempty"`
	// Runs records the conversation's finished runs, newest last, with
	// the feedback people gave on their answers (runs.go).
	Runs      []RunRecord `json:"runs,omitempty"`
	Usage     Usage       `json:"usage"`
	CreatedAt time.Time   `json:"created_at"`
	UpdatedAt time.Time   `json:"updated_at"`
}

// RunState is one run: the loop working on one user message until a final
// answer, a pending approval, or an error.
type RunState struct {
	ID string `json:"id"`
	// Requester is the user whose message started the run.
	Requester string `json:"requester"`
	// Question is the message that started the run; HistoryStart is where
	// the run's messages begin in Session.History.
	Question     string `json:"question,omitempty"`
	HistoryStart int    `json:"history_start"`
	// Role is how the role gate sees the requester (policy.Requester):
	// decided by the bot from the channel's policy when the run starts, and
	// again when it resumes. A run saved without one may read, not change.
	Role policy.Requester `json:"role"`
	// Actor is the requester's identity on targets (policy.Identities),
	// resolved by the bot when the run starts; nil without a mapping.
	Actor *policy.Actor `json:"actor,omitempty"`
	// Channel is the policy key of the channel ("console", "slack:C123", ...).
	Channel string `json:"channel"`
	// Level is the channel's control level; the bot refreshes it from
	// config when it resumes a run, so a changed level takes effect.
	Level     policy.ControlLevel `json:"level"`
	Turn      int                 `json:"turn"`
	ToolCalls int                 `json:"tool_calls"`
	// CallCounts counts identical calls (tool + canonical arguments) for
	// loop detection.
	CallCounts map[string]int `json:"call_counts,omitempty"`
	// Recovered records calls already retried once with a suggested
	// rewrite, so a second block is surfaced instead of retried again.
	Recovered map[string]bool `json:"recovered,omitempty"`
	// Corrections counts JSON-mode correction re-prompts.
	Corrections int `json:"corrections,omitempty"`
	// BudgetReported is how much of Usage was already charged to the daily
	// budget.
	BudgetReported int `json:"budget_reported,omitempty"`
	// Succeeded counts tool calls that succeeded in this run, for phantom
	// detection.
	Succeeded int `json:"succeeded"`
	// Changes are the writes that succeeded in this run (or may have: calls
	// in flight when a replica died), for the claim check of the final
	// answer.
	Changes []Change `json:"changes,omitempty"`
	// TextOnly forces the next model turn to have no tools (after a verified
	// write, or on the last turn).
	TextOnly bool `json:"text_only,omitempty"`
	// InFlight are the calls of the turn being executed, saved before they
	// run: if the process dies, Continue knows which calls may have had an
	// effect.
	InFlight []ToolCall `json:"in_flight,omitempty"`
	// Pending is the batch waiting on a human decision; nil otherwise.
	Pending   *PendingBatch `json:"pending,omitempty"`
	Usage     Usage         `json:"usage"`
	StartedAt time.Time     `json:"started_at"`
}

// Change is a write that ran in a run, as the claim check reads it.
type Change struct {
	Tool   string `json:"tool"`
	Action string `json:"action,omitempty"`
	// Summary is the proposal's one-line description ("restart service
	// nginx on web1", "run on web1: rm /tmp/x").
	Summary string `json:"summary,omitempty"`
	// Command is the shell command that ran, when the write was one
	// (control): every part of it counts as done.
	Command string `json:"command,omitempty"`
}

// PendingBatch is a model turn's tool calls, stopped because one of them needs
// approval. Results of the calls that already ran are kept so that, on
// resume, every call's result is appended in call order.
type PendingBatch struct {
	// Calls are the model's calls in order.
	Calls []ToolCall `json:"calls"`
	// Results holds the envelope JSON of each call that finished, keyed by
	// call ID.
	Results map[string]string `json:"results"`
	// ApprovalCallID is the call waiting for a decision.
	ApprovalCallID string `json:"approval_call_id"`
	// ApprovalID is the pending approval's public ID.
	ApprovalID string `json:"approval_id"`
	// Basis is the state of the target the approval card showed the
	// change against (tools.Preview.Basis); the approved call runs with it.
	Basis string `json:"basis,omitempty"`
}

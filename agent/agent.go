// Package agent is the loop that turns a user's question into an
// investigation: prompt → model → proposed tool calls → policy → tools →
// observe → repeat. It emits typed events and knows nothing of chat
// platforms.
//
// A run is data, not a goroutine: when a write needs a person's approval the
// run is left in the Session with its pending batch and the loop returns. A
// later call to Resume, on any replica, continues it.
//
// How a run is driven: the caller (the bot) loads the Session and calls
// Start for a new message, Resume with a person's Decision, or Continue for
// a run whose process died, each with the run's context and a RunEnv. The
// context bounds the run: cancelling it ("stop", a lost thread lock, a
// shutdown) ends the loop before its next model call or tool execution.
// The RunEnv is everything else the run talks to on the caller's side,
// passed explicitly for this one call: the Sink its events go to, and the
// Checkpoint that saves the Session whenever a crash would otherwise lose
// work or repeat a side effect. A Checkpoint error stops the run before
// anything further happens. The Agent itself holds only what every run
// shares (model, tools, policy, config), so one Agent serves every thread.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools"
)

// ToolMode is how tools are offered to the model (SPEC A2).
type ToolMode string

const (
	// ToolModeNative uses the API's tools/tool_calls.
	ToolModeNative ToolMode = "native"
	// ToolModeJSON puts the tool schemas in the system prompt and expects one
	// JSON object per reply, for models without function calling.
	ToolModeJSON ToolMode = "json"
)

// Config tunes the loop. Zero values take the defaults below.
type Config struct {
	// MaxTurns bounds model calls per run (default 20). The last turn is
	// text-only so the model must summarise.
	MaxTurns int
	ToolMode ToolMode
	// MaxParallel bounds concurrent tool executions in one turn (default 4).
	MaxParallel int
	// LoopLimit is how many identical calls a run may make (default 3); the
	// next one is refused with LOOP_DETECTED.
	LoopLimit int
	// NudgeAt lists tool-call counts after which the model is told to wrap
	// up (default 12 and 18).
	NudgeAt []int
	// MaxCorrections bounds JSON-mode correction re-prompts per run
	// (default 3).
	MaxCorrections int
	// RunTokenBudget stops a run that used more tokens (0: unlimited).
	RunTokenBudget int
	// Instructions is extra operator text added to the system prompt.
	Instructions string
	// UnredactedModelInput turns off the redaction of tool results before
	// they reach the model (policy.redact_model_input: false). Off by
	// default: a model, often a hosted API, never receives a secret that a
	// tool printed.
	UnredactedModelInput bool
	// ContextBudgetTokens bounds the prompt of each model call in tokens
	// (llm.context_budget_tokens; default DefaultContextBudget). Old tool
	// results are compacted to fit (compact.go). Negative turns compaction
	// and the known-facts block off: every call resends the whole history
	// (a baseline for benchmarks, not a setting).
	ContextBudgetTokens int
	// Model names the model, so prompts are counted with its tokenizer;
	// models without a known one are estimated from bytes.
	Model string
}

func (c Config) withDefaults() Config {
	if c.MaxTurns <= 0 {
		c.MaxTurns = 20
	}
	if c.ToolMode == "" {
		c.ToolMode = ToolModeNative
	}
	if c.MaxParallel <= 0 {
		c.MaxParallel = 4
	}
	if c.LoopLimit <= 0 {
		c.LoopLimit = 3
	}
	if c.NudgeAt == nil {
		c.NudgeAt = []int{12, 18}
	}
	if c.MaxCorrections <= 0 {
		c.MaxCorrections = 3
	}
	if c.ContextBudgetTokens == 0 {
		c.ContextBudgetTokens = DefaultContextBudget
	}
	return c
}

// Registry is what the loop needs of the tool registry.
type Registry interface {
	Specs() []tools.Spec
	Propose(name string, raw json.RawMessage) (tools.Proposal, *policy.Block)
	Get(name string) (tools.Tool, bool)
}

// DailyBudget is an optional shared token budget per day (SPEC A3). Spend
// records usage and reports whether the budget is now exhausted.
type DailyBudget interface {
	Spend(ctx context.Context, tokens int) (exhausted bool, err error)
}

// Agent runs the loop. It is safe for concurrent use by many sessions; all
// per-run state lives in the Session and the RunEnv passed to each call.
type Agent struct {
	model Model
	tools Registry
	// channelTools gives the registry of a channel's runs (its scope's
	// tools and descriptions); nil, or nil from it: tools.
	channelTools func(channel string) Registry
	cfg          Config
	budget       DailyBudget
	policy       Policy
	counter      TokenCounter
	prompt       *promptCache
	now          func() time.Time
	log          *slog.Logger
}

// Option configures an Agent.
type Option func(*Agent)

// WithClock replaces time.Now (tests).
func WithClock(now func() time.Time) Option { return func(a *Agent) { a.now = now } }

// WithLogger sets the logger (default: discard).
func WithLogger(l *slog.Logger) Option { return func(a *Agent) { a.log = l } }

// Policy decides whether a proposed call may run: the one question the
// agent asks of policy, before every call and again before an approved call
// runs. *policy.Gate answers it; the agent reports outcomes through the
// session's FSM and resolved context, not through this interface.
type Policy interface {
	// Authorize decides a for the session s at the channel's control level,
	// on behalf of who, at now. It must not change s.
	Authorize(s *policy.SessionState, a policy.Action, level policy.ControlLevel, who policy.Requester, now time.Time) policy.Decision
}

var _ Policy = (*policy.Gate)(nil)

// WithChannelTools has each run use the registry its channel is given
// (SPEC R8: a channel's tool descriptions list only what is in its
// scope). The registry given to New still holds every tool: a run whose
// channel gets nil uses it, and compaction reads tool kinds from it.
func WithChannelTools(f func(channel string) Registry) Option {
	return func(a *Agent) { a.channelTools = f }
}

// reg is the registry of run r's channel.
func (a *Agent) reg(r *RunState) Registry {
	if a.channelTools != nil && r != nil {
		if t := a.channelTools(r.Channel); t != nil {
			return t
		}
	}
	return a.tools
}

// WithPolicy sets the policy every proposed call passes (default: the
// strictest rules, policy.NewGate(policy.Rules{})).
func WithPolicy(p Policy) Option { return func(a *Agent) { a.policy = p } }

// WithTokenCounter replaces the tokenizer chosen from Config.Model.
func WithTokenCounter(tc TokenCounter) Option { return func(a *Agent) { a.counter = tc } }

// WithDailyBudget sets the shared daily token budget.
func WithDailyBudget(b DailyBudget) Option { return func(a *Agent) { a.budget = b } }

// New builds an agent over a model and a tool registry.
func New(model Model, reg Registry, cfg Config, opts ...Option) *Agent {
	a := &Agent{
		model: model,
		tools: reg,
		cfg:   cfg.withDefaults(),
		now:   time.Now,
		log:   slog.New(slog.DiscardHandler),
	}
	for _, o := range opts {
		o(a)
	}
	if a.policy == nil {
		a.policy = policy.NewGate(policy.Rules{})
	}
	if a.counter == nil {
		a.counter = NewTokenCounter(a.cfg.Model)
	}
	a.prompt = newPromptCache(a)
	return a
}

// Input starts a run.
type Input struct {
	RunID     string
	Requester string
	// Role is how the role gate sees the requester
	// (policy.ChannelPolicy.Requester). Its zero value may read, not
	// change.
	Role policy.Requester
	// Actor is the requester's identity on targets (policy.Identities);
	// nil when no identity mapping is configured.
	Actor *policy.Actor
	// Channel is the policy key of the channel the run belongs to.
	Channel string
	Level   policy.ControlLevel
	// Text is the user's message.
	Text string
	// Context is an authoritative block the bot prepared (resolved
	// mentions and their routing chains); empty when there is none.
	Context string
}

// RunEnv is a run's plumbing on the caller's side, passed to each call of
// Start, Resume or Continue and kept by nothing once the call returns.
type RunEnv struct {
	// Sink receives the run's events in order; nil drops them.
	Sink Sink
	// Checkpoint saves the session at the points where a crash would lose
	// work or repeat a side effect: when a run starts, before a turn's
	// tool calls run, and after their results are recorded. An error
	// stops the run before its next side effect (the caller lost the
	// thread's lock, the store is unreachable). Nil saves nothing
	// (tests, benchmarks).
	Checkpoint func(ctx context.Context, s *Session) error
}

// Status is how a call to Start or Resume ended.
type Status string

const (
	// StatusDone: the run produced a final answer (or a clear stop message)
	// and the session is idle again.
	StatusDone Status = "done"
	// StatusAwaitingApproval: the run is saved in the session with a
	// pending batch; call Resume after a person decides.
	StatusAwaitingApproval Status = "awaiting_approval"
	// StatusFailed: the run stopped on a system failure (model unavailable,
	// budget exhausted, cancelled). The session keeps its history.
	StatusFailed Status = "failed"
)

// Outcome is the result of Start or Resume.
type Outcome struct {
	Status Status
	// Answer is the final answer or the stop message, safe to show.
	Answer   string
	Approval *ApprovalNeeded
}

// Decision is a person's answer to a pending approval, as the loop needs it.
type Decision struct {
	Approved bool
	By       string
	Reason   string
	// Expired marks a decision made by the clock: the approval lapsed.
	Expired bool
	// BeforeExecute is called with the re-proposed call immediately before
	// an approved call runs; an error refuses it (binding changed, level
	// changed, approval claimed elsewhere, a Basis other than the
	// approval's). May be nil.
	BeforeExecute func(ctx context.Context, p tools.Proposal, args string) error
	// Level is the channel's control level at decision time.
	Level policy.ControlLevel
	// Role is the requester's role decided again at decision time; nil
	// keeps the run's. A requester who lost the operator role meanwhile
	// sees the approved change refused before it runs.
	Role *policy.Requester
	// Actor is the approver's identity on targets, which an approved call
	// runs with; nil when no identity mapping is configured.
	Actor *policy.Actor
}

// Errors returned by Start and Resume. The Outcome still carries a message
// for people; these are for the caller's control flow and logs.
var (
	ErrBusy      = errors.New("agent: session already has a run in progress")
	ErrNoPending = errors.New("agent: session has no pending approval")
)

// Start begins a run for a new user message. The session must be idle.
func (a *Agent) Start(ctx context.Context, s *Session, in Input, env RunEnv) (Outcome, error) {
	if s.Run != nil {
		return Outcome{}, ErrBusy
	}
	if s.Policy == nil {
		s.Policy = policy.NewSessionState()
	}
	now := a.now()
	if s.CreatedAt.IsZero() {
		s.CreatedAt = now
	}
	role := in.Role
	if role.User == "" {
		role.User = in.Requester
	}
	s.Run = &RunState{
		ID:        in.RunID,
		Requester: in.Requester,
		Role:      role,
		Actor:     in.Actor,
		Channel:   in.Channel,
		Level:     in.Level,
		StartedAt: now,
		// For the run's record (runs.go).
		Question:     in.Text,
		HistoryStart: len(s.History),
	}
	text := in.Text
	if in.Context != "" {
		text = in.Context + "\n\n" + text
	}
	s.History = append(s.History, Message{Role: RoleUser, Content: text})
	emit(ctx, env.Sink, s, Event{Type: EventRunStarted, Text: in.Text})
	if err := a.save(ctx, s, env); err != nil {
		return a.stopUnsaved(ctx, s, env.Sink, err), nil
	}
	return a.loop(ctx, s, env)
}

// Continue picks up a run whose process died mid-run, from its last
// checkpoint. Calls that were in flight get a result saying so; a write
// among them may have run, so the session must verify before it answers
// (the FSM is moved as if it had).
func (a *Agent) Continue(ctx context.Context, s *Session, env RunEnv) (Outcome, error) {
	if s.Run == nil || s.Run.Pending != nil {
		return Outcome{}, ErrNoPending
	}
	if s.Policy == nil {
		s.Policy = policy.NewSessionState()
	}
	for _, c := range s.Run.InFlight {
		if p, blk := a.reg(s.Run).Propose(c.Name, json.RawMessage(c.Arguments)); blk == nil && p.Kind == policy.KindWrite {
			s.Policy.FSM.OnToolSuccess(policy.KindWrite, p.Tool, p.Target)
			// It may have run: an answer saying so is not contradicted.
			s.Run.Changes = append(s.Run.Changes, changeOf(p))
		}
	}
	s.Run.InFlight = nil
	s.History = closeDanglingCalls(s.History, "vigil restarted while it ran")
	emit(ctx, env.Sink, s, Event{Type: EventRunStarted, Text: "continuing an interrupted run"})
	return a.loop(ctx, s, env)
}

// stoppedMessage ends a run whose context was cancelled ("stop").
const stoppedMessage = "Stopped: the run was cancelled before it finished."

// save checkpoints the session through the run's Checkpoint, when it has
// one. A cancelled run is not checkpointed: it is ending.
func (a *Agent) save(ctx context.Context, s *Session, env RunEnv) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if env.Checkpoint == nil {
		return nil
	}
	s.UpdatedAt = a.now()
	return env.Checkpoint(ctx, s)
}

// stopUnsaved ends a run that could not be checkpointed, before it does
// anything more.
func (a *Agent) stopUnsaved(ctx context.Context, s *Session, sink Sink, err error) Outcome {
	if ctx.Err() != nil {
		return a.fail(ctx, s, sink, stoppedMessage)
	}
	a.log.Error("checkpoint failed; stopping the run", "session", s.Key, "err", err)
	return a.fail(ctx, s, sink, "I stopped: I could not save this conversation's progress (state store unavailable or "+
		"another replica took over), so I did not run anything further. Nothing is lost; try again shortly.")
}

// Resume continues a run stopped at an approval with the person's decision.
func (a *Agent) Resume(ctx context.Context, s *Session, d Decision, env RunEnv) (Outcome, error) {
	if s.Run == nil || s.Run.Pending == nil {
		return Outcome{}, ErrNoPending
	}
	r := s.Run
	pb := r.Pending
	if d.Level != "" {
		r.Level = d.Level
	}
	if d.Role != nil {
		r.Role = *d.Role
	}
	call, ok := pb.call(pb.ApprovalCallID)
	if !ok {
		return Outcome{}, fmt.Errorf("agent: pending batch lost call %q", pb.ApprovalCallID)
	}
	sink := env.Sink
	var res tools.Envelope
	switch {
	case d.Expired:
		res = tools.Envelope{Error: &tools.ErrorInfo{Code: policy.CodeApprovalRequired, Blocked: true,
			Message: "the approval expired before anyone decided; nothing was changed"}}
		pb.Results[call.ID] = a.modelContent(res)
		a.flushPending(s)
		msg := "The approval expired before anyone decided; nothing was changed."
		return a.finish(ctx, s, sink, msg, false), nil
	case !d.Approved:
		reason := d.Reason
		if reason == "" {
			reason = "no reason given"
		}
		res = tools.Envelope{Error: &tools.ErrorInfo{Code: policy.CodeActionNotAllowed, Blocked: true,
			Message: fmt.Sprintf("denied by %s: %s", d.By, reason),
			Details: map[string]any{"recovery_hint": "do not retry this change; tell the user it was denied and why"}}}
		pb.Results[call.ID] = a.modelContent(res)
		emit(ctx, sink, s, Event{Type: EventToolResult, CallID: call.ID, Result: &res, Code: string(policy.CodeActionNotAllowed)})
	default:
		res = a.runApproved(ctx, s, call, d, sink)
		pb.Results[call.ID] = a.modelContent(res)
	}
	a.flushPending(s)
	return a.loop(ctx, s, env)
}

// runApproved re-checks and executes the approved call, exactly once.
func (a *Agent) runApproved(ctx context.Context, s *Session, call ToolCall, d Decision, sink Sink) tools.Envelope {
	r := s.Run
	p, blk := a.reg(r).Propose(call.Name, json.RawMessage(call.Arguments))
	if blk != nil {
		return a.refuseApproved(ctx, s, call, tools.Proposal{Action: policy.Action{Tool: call.Name, Kind: policy.KindWrite}}, tools.Blocked(blk), sink)
	}
	// Policy again, as if the call were new: the session may have changed
	// (a reset, an expired context) while the approval waited.
	dec := a.policy.Authorize(s.Policy, p.Action, r.Level, r.Role, a.now())
	if dec.Block != nil {
		return a.refuseApproved(ctx, s, call, p, tools.Blocked(dec.Block), sink)
	}
	p.Execution = dec.Execution
	// The tool learns who approved it from the call itself (a silence's
	// created_by), never from ambient state.
	p.ApprovedBy = d.By
	// It acts with the approver's identity on its target, not the
	// requester's: the approver is whose permissions the card named.
	p.Actor = d.Actor
	if p.Actor == nil && r.Actor != nil {
		// The run acts under an identity mapping but nobody resolved the
		// approver's: the call gets no identity, so tools that need one
		// refuse rather than fall back to vigil's own credentials.
		p.Actor = &policy.Actor{Chat: d.By, Unmapped: "the approver's identity was not resolved when the change was approved"}
	}
	// And the state of its target the card showed, which it must find
	// unchanged; BeforeExecute checks the approval binds the same.
	p.Basis = r.Pending.Basis
	if d.BeforeExecute != nil {
		if err := d.BeforeExecute(ctx, p, call.Arguments); err != nil {
			return a.refuseApproved(ctx, s, call, p, tools.Envelope{Error: &tools.ErrorInfo{Code: policy.CodeActionNotAllowed, Blocked: true,
				Message: "the approved call was not run: " + err.Error()}}, sink)
		}
	}
	emit(ctx, sink, s, Event{Type: EventToolCall, CallID: call.ID, Proposal: &p})
	start := a.now()
	res := a.safeExecute(ctx, a.reg(r), p)
	dur := a.now().Sub(start)
	a.observe(s, p, res)
	emit(ctx, sink, s, Event{Type: EventToolResult, CallID: call.ID, Proposal: &p, Result: &res.Envelope,
		Output: res.Output, Sandbox: res.Sandbox, ActedAs: res.ActedAs, Duration: dur, Code: errCode(res.Envelope)})
	return res.Envelope
}

// refuseApproved reports an approved call that failed its last checks.
func (a *Agent) refuseApproved(ctx context.Context, s *Session, call ToolCall, p tools.Proposal, env tools.Envelope, sink Sink) tools.Envelope {
	emit(ctx, sink, s, Event{Type: EventToolResult, CallID: call.ID, Proposal: &p, Result: &env, Code: errCode(env)})
	return env
}

// flushPending appends every result of the pending batch to the history in
// call order and clears it.
func (a *Agent) flushPending(s *Session) {
	pb := s.Run.Pending
	for _, c := range pb.Calls {
		content, ok := pb.Results[c.ID]
		if !ok {
			content = tools.Envelope{Error: &tools.ErrorInfo{Code: policy.CodeExecutionFailed, Failed: true,
				Message: "result lost"}}.JSON()
		}
		s.History = append(s.History, Message{Role: RoleTool, ToolCallID: c.ID, Name: c.Name, Content: content})
	}
	s.Run.Pending = nil
}

func (pb *PendingBatch) call(id string) (ToolCall, bool) {
	for _, c := range pb.Calls {
		if c.ID == id {
			return c, true
		}
	}
	return ToolCall{}, false
}

// finish ends the run with a message appended as the assistant's answer.
func (a *Agent) finish(ctx context.Context, s *Session, sink Sink, answer string, phantom bool) Outcome {
	s.History = append(s.History, Message{Role: RoleAssistant, Content: answer})
	emit(ctx, sink, s, Event{Type: EventFinalAnswer, Text: answer, Phantom: phantom})
	a.endRun(s)
	return Outcome{Status: StatusDone, Answer: answer}
}

// fail ends the run on a system failure; history stays intact.
func (a *Agent) fail(ctx context.Context, s *Session, sink Sink, msg string) Outcome {
	emit(ctx, sink, s, Event{Type: EventError, Text: msg})
	a.endRun(s)
	return Outcome{Status: StatusFailed, Answer: msg}
}

func (a *Agent) endRun(s *Session) {
	if s.Run != nil {
		s.Usage.Add(s.Run.Usage)
		a.recordRun(s)
	}
	s.Run = nil
	s.UpdatedAt = a.now()
}

func emit(ctx context.Context, sink Sink, s *Session, e Event) {
	if sink == nil {
		return
	}
	e.Session = s.Key
	if s.Run != nil {
		e.Run = s.Run.ID
		if e.Turn == 0 {
			e.Turn = s.Run.Turn
		}
	}
	if e.At.IsZero() {
		e.At = time.Now()
	}
	sink.Emit(ctx, e)
}

func errCode(e tools.Envelope) string {
	if e.Error == nil {
		return ""
	}
	return string(e.Error.Code)
}

// Abandon ends the session's run without another model call: a pending
// batch gets its results (the waiting call marked as not run), and tool calls
// left without results by a replica that died mid-turn get a failure, so the
// history stays a valid conversation for the next run.
func (a *Agent) Abandon(s *Session, reason string) {
	if s.Run != nil && s.Run.Pending != nil {
		pb := s.Run.Pending
		if _, done := pb.Results[pb.ApprovalCallID]; !done {
			if pb.Results == nil {
				pb.Results = map[string]string{}
			}
			pb.Results[pb.ApprovalCallID] = tools.Envelope{Error: &tools.ErrorInfo{Code: policy.CodeActionNotAllowed,
				Blocked: true, Message: "not run: " + reason}}.JSON()
		}
		a.flushPending(s)
	}
	s.History = closeDanglingCalls(s.History, reason)
	a.endRun(s)
}

// closeDanglingCalls adds a failure result for every tool call of the last
// assistant message that has none.
func closeDanglingCalls(h []Message, reason string) []Message {
	last := -1
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Role == RoleAssistant {
			last = i
			break
		}
	}
	if last < 0 || len(h[last].ToolCalls) == 0 {
		return h
	}
	answered := map[string]bool{}
	for _, m := range h[last+1:] {
		if m.Role == RoleTool {
			answered[m.ToolCallID] = true
		}
	}
	for _, c := range h[last].ToolCalls {
		if !answered[c.ID] {
			h = append(h, Message{Role: RoleTool, ToolCallID: c.ID, Name: c.Name, Content: tools.Failed(
				policy.CodeExecutionFailed, "interrupted before a result was recorded ("+reason+"); check the target's state before retrying", false).JSON()})
		}
	}
	return h
}

package bot

import (
	"context"
	"encoding/json"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/policy/audit"
	"github.com/vigilops/vigil/policy/redact"
	"github.com/vigilops/vigil/tools"
)

// sink turns one run's agent events into threaded replies, audit records
// and metrics. What to say is decided here; how it looks is the adapter's.
type sink struct {
	b       *runtime
	t       ThreadRef
	s       *agent.Session
	channel string
	// approvalID is set while an approved call is being resumed, so its
	// execution is audited against the approval.
	approvalID   string
	approvalCall string
	// executed records the outcome of the approved call once it ran.
	executed *tools.Envelope
	// roleRefused is set once the thread was told that the requester may
	// not ask for changes.
	roleRefused bool
	// onFirstPost, when set, runs before the run's first message (alert
	// latency, alerts.go).
	onFirstPost func()
}

func (b *runtime) newSink(t ThreadRef, s *agent.Session) *sink {
	return &sink{b: b, t: t, s: s, channel: t.ChannelKey()}
}

// Emit implements agent.Sink.
func (k *sink) Emit(ctx context.Context, e agent.Event) {
	b := k.b
	if b.opt.Observer != nil {
		b.opt.Observer.Observe(e)
	}
	if f := k.onFirstPost; f != nil {
		switch e.Type {
		case agent.EventToolResult, agent.EventFinalAnswer, agent.EventError:
			k.onFirstPost = nil
			f()
		}
	}
	switch e.Type {
	case agent.EventToolResult:
		k.toolResult(ctx, e)
	case agent.EventFinalAnswer:
		r := Reply{Kind: ReplyAnswer, Text: e.Text}
		if !e.Phantom {
			r.RunID = e.Run // people may rate it (feedback.go)
		}
		b.say(ctx, k.t, r)
	case agent.EventError:
		if b.stopping() {
			return // the run is left for another replica; see afterRun
		}
		id := newErrorID()
		b.log.Warn("run stopped", "error_id", id, "thread", k.t.Key(), "run", e.Run, "reason", e.Text)
		b.say(ctx, k.t, Reply{Kind: ReplyError, Text: e.Text, ErrorID: id})
	case agent.EventCorrection:
		b.log.Debug("model corrected", "thread", k.t.Key(), "run", e.Run, "code", e.Code)
	}
}

func (k *sink) toolResult(ctx context.Context, e agent.Event) {
	b := k.b
	if e.Proposal == nil || e.Result == nil {
		return
	}
	p := e.Proposal
	env := e.Result
	tr := &Trace{
		Tool:     p.Tool,
		Action:   p.Name,
		Target:   p.Target,
		Command:  redact.String(p.Command),
		Outcome:  OutcomeOK,
		Duration: e.Duration,
	}
	if p.Command == "" {
		tr.Command = redact.String(p.Summary)
	}
	if e.Sandbox != nil {
		tr.Sandbox = redact.String(e.Sandbox.String())
	}
	if env.Error != nil {
		tr.Code = string(env.Error.Code)
		tr.Message = redact.String(env.Error.Message)
		switch {
		case env.Error.Blocked && env.Error.Code == policy.CodeApprovalRequired:
			tr.Outcome = OutcomeApproval
		case env.Error.Blocked:
			tr.Outcome = OutcomeBlocked
		default:
			tr.Outcome = OutcomeFailed
		}
	}
	out := e.Output
	if out == "" && env.Error == nil && env.Data != nil && p.Command == "" {
		if raw, err := json.Marshal(env.Data); err == nil {
			out = string(raw)
		}
	}
	full := redact.String(out)
	tr.Output = full
	if len(full) > TraceOutputLimit {
		tr.Output = truncateUTF8(full, TraceOutputLimit)
		tr.Truncated = true
		tr.FullOutput = full
	}
	b.say(ctx, k.t, Reply{Kind: ReplyTrace, Trace: tr})
	k.audit(ctx, e, tr)
	if env.Error != nil && env.Error.Details[policy.DetailRoleRequired] != nil && !k.roleRefused {
		// The model hears it in the envelope; the people in the thread
		// hear it from vigil, once per run.
		k.roleRefused = true
		b.say(ctx, k.t, Reply{Kind: ReplyNotice, Text: "No change was proposed: " + env.Error.Message +
			". I can still investigate and suggest the change; an operator can ask for it."})
	}
}

// audit records the decision and outcome of one call (SPEC P8).
func (k *sink) audit(ctx context.Context, e agent.Event, tr *Trace) {
	p := e.Proposal
	rec := audit.Record{
		Actor:   k.requester(),
		Tool:    p.Tool,
		Target:  p.Target,
		Command: tr.Command,
		Channel: k.channel,
		Thread:  k.t.Key(),
		Outcome: string(tr.Outcome),
		Reason:  tr.Message,
		Sandbox: tr.Sandbox,
		ActedAs: e.ActedAs,
	}
	if p.Actor != nil && e.ActedAs != "" {
		rec.Identity = p.Actor.Chat // the asker's, or the approver's
	}
	switch {
	case tr.Outcome == OutcomeBlocked || tr.Outcome == OutcomeApproval:
		rec.Action = audit.Block
		rec.Outcome = tr.Code
	case e.CallID == k.approvalCall && k.approvalID != "":
		rec.Action = audit.Executed
		rec.ApprovalID = k.approvalID
		env := *e.Result
		k.executed = &env
	case p.Kind == policy.KindWrite:
		rec.Action = audit.Executed
	default:
		rec.Action = audit.Allow
	}
	k.b.audits.audit(ctx, rec)
}

func (k *sink) requester() string {
	if k.s.Run != nil {
		return k.s.Run.Requester
	}
	return ""
}

// truncateUTF8 cuts s to at most n bytes without splitting a character.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

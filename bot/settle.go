package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/policy/audit"
	"github.com/vigilops/vigil/tools"
)

// An approval is "executing" from the moment its call is claimed until
// the bot records how the call went. If the store is unreachable at that
// moment (or the process dies), the approval stays executing. Such an
// approval is settled once the store answers again and nobody holds its
// thread: from the run's checkpoint when the call's result is in it, else
// from the audit chain when it holds the call's "executed" record, and as
// failed (it may or may not have run) when neither knows. Settling never
// runs anything: the call is not repeated, whatever the outcome.

// settleWindow is how many of the chain's newest records are searched for
// the call's "executed" record.
const settleWindow = 2000

// settleExecuting queues a settle job for every approval left executing
// whose thread this replica serves and is not working on. Records still
// waiting in the outbox may hold an outcome, so nothing is settled until
// it is empty.
func (b *settler) settleExecuting(ctx context.Context) {
	if b.backlog.waiting() > 0 {
		return
	}
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	list, err := b.opt.Stores.Approvals.ListExecuting(lctx)
	cancel()
	if err != nil {
		b.log.Debug("list executing approvals", "err", err)
		return
	}
	for _, a := range list {
		ref, err := cardRef(a)
		if err != nil {
			b.log.Warn("approval left executing has no thread; settle it by hand", "approval", a.ID, "err", err)
			continue
		}
		t := ref.ThreadRef
		if _, ok := b.adapter(t.Platform); !ok {
			continue // another replica serves that platform
		}
		b.mu.Lock()
		_, busy := b.threads[t.Key()]
		b.mu.Unlock()
		if busy {
			continue // its run may be executing it right now
		}
		b.enqueue(ctx, t, settleJob{b, a.ID})
	}
}

// settlement is what vigil knows of an approved call's execution.
type settlement struct {
	status policy.ApprovalStatus // executed or failed
	// outcome is the call's result: "ok", "failed", or "unknown".
	outcome string
	// source says where the outcome was found, for the audit record.
	source string
}

// settle closes one approval left executing; the job holds the thread's
// lock, so no run of the thread is executing it.
func (b *settler) settle(ctx context.Context, t ThreadRef, id string) {
	a, err := b.opt.Stores.Approvals.GetApproval(ctx, id)
	if err != nil || a.Status != policy.ApprovalExecuting {
		return
	}
	s, err := b.loadSession(ctx, t)
	if err != nil {
		b.log.Debug("settle: load session", "approval", id, "err", err)
		return
	}
	waiting := s.Run != nil && s.Run.Pending != nil && s.Run.Pending.ApprovalID == a.ID
	st, err := b.findOutcome(ctx, a, s, waiting)
	if err != nil {
		b.log.Debug("settle: look for the outcome", "approval", id, "err", err)
		return
	}
	now := b.now()
	settled, err := b.opt.Stores.Approvals.UpdateApproval(ctx, id, policy.Settle(st.status, now))
	if err != nil {
		if !errors.Is(err, ErrStatusConflict) {
			b.log.Warn("settle approval", "approval", id, "err", err)
		}
		return
	}
	b.log.Warn("settled an approval left executing", "approval", id, "status", st.status, "outcome", st.outcome, "from", st.source)
	b.audits.audit(ctx, audit.Record{Actor: "vigil", Action: audit.Settled, Tool: a.Tool, Target: a.Target, Command: a.Command,
		Channel: a.Channel, Thread: a.Thread, Outcome: string(st.status), ApprovalID: a.ID,
		Reason: fmt.Sprintf("left executing by a store outage or crash; call outcome %s (%s)", st.outcome, st.source)})
	what, where := a.Command, a.Target
	if what == "" {
		what = a.Summary
	}
	if where != "" {
		what += " on " + where
	} else {
		where = "the target"
	}
	if waiting {
		// The run's checkpoint predates the call: record its result and
		// end the run, which stopped when the store went away.
		if s.Policy != nil && s.Policy.FSM != nil && st.outcome != "failed" {
			s.Policy.FSM.OnToolSuccess(policy.KindWrite, a.Tool, a.Target) // it (may have) changed: verify first
		}
		if s.Run.Pending.Results == nil {
			s.Run.Pending.Results = map[string]string{}
		}
		s.Run.Pending.Results[a.CallID] = settledResult(st)
		b.opt.Agent.Abandon(s, "vigil's state store was unreachable while the approved change ran")
		if err := b.saveSession(ctx, s); err != nil {
			b.log.Warn("settle: save session", "approval", id, "err", err)
		}
		b.markIdle(ctx, t)
	}
	switch {
	case st.status == policy.ApprovalFailed:
		b.say(ctx, t, Reply{Kind: ReplyNotice, Text: fmt.Sprintf(
			"Approval %s (%s) was running when I lost my state store, and I cannot tell whether it took effect. "+
				"It will not run again; check %s before asking for it again.", a.ID, what, where)})
	case waiting:
		b.say(ctx, t, Reply{Kind: ReplyNotice, Text: fmt.Sprintf(
			"Approval %s (%s) ran while my state store was unreachable; its result: %s. "+
				"It is recorded now and will not run again. That request stopped there; ask again to continue.",
			a.ID, what, st.outcome)})
	}
	b.cards.updateCard(ctx, settled)
}

// findOutcome looks for the call's result: in the checkpoint when the run
// went past the call, else in the audit chain.
func (b *settler) findOutcome(ctx context.Context, a *policy.Approval, s *agent.Session, waiting bool) (settlement, error) {
	if !waiting && a.CallID != "" {
		for i := len(s.History) - 1; i >= 0; i-- {
			m := s.History[i]
			if m.Role == agent.RoleTool && m.ToolCallID == a.CallID {
				return settlement{status: policy.ApprovalExecuted, outcome: envelopeOutcome(m.Content), source: "the run's checkpoint"}, nil
			}
		}
	}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	recs, err := b.opt.Stores.Audit.RecentAudit(rctx, settleWindow)
	cancel()
	if err != nil {
		return settlement{}, err
	}
	for i := len(recs) - 1; i >= 0; i-- {
		if r := recs[i]; r.Action == audit.Executed && r.ApprovalID == a.ID {
			outcome := r.Outcome
			if outcome == "" {
				outcome = "unknown"
			}
			return settlement{status: policy.ApprovalExecuted, outcome: outcome, source: "the audit chain"}, nil
		}
	}
	return settlement{status: policy.ApprovalFailed, outcome: "unknown", source: "no record of its result"}, nil
}

// envelopeOutcome reads ok or failed from a tool result.
func envelopeOutcome(content string) string {
	var env struct {
		OK bool `json:"ok"`
	}
	if json.Unmarshal([]byte(content), &env) != nil {
		return "unknown"
	}
	if env.OK {
		return string(OutcomeOK)
	}
	return string(OutcomeFailed)
}

// settledResult is what the model is told of a call settled after the
// fact: its output was not kept.
func settledResult(st settlement) string {
	switch st.outcome {
	case string(OutcomeOK):
		return tools.OK(map[string]any{"note": "the approved call ran while vigil's state store was unreachable; its output was not kept"}).JSON()
	case string(OutcomeFailed):
		return tools.Failed(policy.CodeExecutionFailed, "the approved call ran and failed while vigil's state store was unreachable; its output was not kept", false).JSON()
	}
	return tools.Failed(policy.CodeExecutionFailed, "vigil lost its state store while the approved call ran; whether it took effect is unknown", false).JSON()
}

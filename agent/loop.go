package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/vigilops/vigil/agent/claims"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools"
)

// loop runs model turns until a final answer, a pending approval, or a stop.
func (a *Agent) loop(ctx context.Context, s *Session, env RunEnv) (Outcome, error) {
	r := s.Run
	sink := env.Sink
	for {
		if ctx.Err() != nil {
			return a.fail(ctx, s, sink, stoppedMessage), nil
		}
		if r.Turn >= a.cfg.MaxTurns {
			emit(ctx, sink, s, Event{Type: EventMaxTurns})
			return a.finish(ctx, s, sink, fmt.Sprintf(
				"I reached the limit of %d steps without a conclusion. Ask a narrower question to continue.", a.cfg.MaxTurns), false), nil
		}
		r.Turn++
		emit(ctx, sink, s, Event{Type: EventTurn})
		textOnly := r.TextOnly || r.Turn == a.cfg.MaxTurns
		r.TextOnly = false

		resp, err := a.complete(ctx, s, textOnly, sink)
		if err != nil {
			if ctx.Err() != nil {
				return a.fail(ctx, s, sink, stoppedMessage), nil
			}
			a.log.Warn("model call failed", "session", s.Key, "run", r.ID, "err", err)
			return a.fail(ctx, s, sink, "The model is unavailable right now, so I could not finish. "+
				"Your conversation is kept; send your message again to retry."), nil
		}
		if msg, stop := a.overBudget(ctx, r); stop {
			return a.fail(ctx, s, sink, msg), nil
		}

		// Fake tool-call markup is judged on the raw text: cleaning removes it.
		fake := LooksLikeToolMarkup(resp.Content)
		content := CleanMarkup(resp.Content)
		calls := resp.ToolCalls
		if a.cfg.ToolMode == ToolModeJSON {
			reply, perr := ParseJSONReply(content)
			if perr != nil {
				r.Corrections++
				if r.Corrections > a.cfg.MaxCorrections {
					return a.fail(ctx, s, sink, "The model kept answering in a format I cannot use, so I stopped. "+
						"Try again, or configure a model with native tool calling."), nil
				}
				correction := JSONCorrection(content, perr)
				s.History = append(s.History,
					Message{Role: RoleAssistant, Content: keptText(content)},
					Message{Role: RoleUser, Content: correction})
				emit(ctx, sink, s, Event{Type: EventCorrection, Code: "json_malformed", Text: correction})
				continue
			}
			calls = nil
			content = ""
			if reply.ToolCall != nil {
				calls = []ToolCall{*reply.ToolCall}
			} else {
				content = reply.Final.Summary
			}
		}
		if textOnly && len(calls) > 0 {
			// The model was offered no tools; whatever it proposed is not run.
			calls = nil
		}

		if len(calls) == 0 {
			if out, done := a.finalAnswer(ctx, s, sink, content, fake); done {
				return out, nil
			}
			continue
		}

		// What the model sent beyond the bounds is not kept: oversized
		// calls get a short form, which precheck refuses.
		calls = boundCalls(calls)
		s.History = append(s.History, Message{Role: RoleAssistant, Content: keptText(content), ToolCalls: calls})
		r.InFlight = calls
		if err := a.save(ctx, s, env); err != nil {
			return a.stopUnsaved(ctx, s, sink, err), nil
		}
		out, stopped := a.runBatch(ctx, s, calls, sink)
		r.InFlight = nil
		if stopped {
			return out, nil
		}
		if err := a.save(ctx, s, env); err != nil {
			return a.stopUnsaved(ctx, s, sink, err), nil
		}
	}
}

// complete makes one model call for the current history.
func (a *Agent) complete(ctx context.Context, s *Session, textOnly bool, sink Sink) (ModelResponse, error) {
	a.learn(s)
	req := ModelRequest{Messages: a.messages(s, textOnly)}
	if !textOnly && a.cfg.ToolMode == ToolModeNative {
		req.Tools = a.reg(s.Run).Specs()
	}
	start := a.now()
	resp, err := a.model.Complete(ctx, req, nil)
	if err != nil {
		return resp, err
	}
	s.Run.Usage.Add(resp.Usage)
	emit(ctx, sink, s, Event{Type: EventModelCall, Usage: resp.Usage, Duration: a.now().Sub(start)})
	return resp, nil
}

// overBudget enforces the per-run and per-day token budgets (SPEC A3).
func (a *Agent) overBudget(ctx context.Context, r *RunState) (string, bool) {
	if a.cfg.RunTokenBudget > 0 && r.Usage.TotalTokens > a.cfg.RunTokenBudget {
		return fmt.Sprintf("Stopped: this run used %d tokens, over its budget of %d.", r.Usage.TotalTokens, a.cfg.RunTokenBudget), true
	}
	if a.budget != nil {
		spent := r.Usage.TotalTokens - r.BudgetReported
		r.BudgetReported = r.Usage.TotalTokens
		exhausted, err := a.budget.Spend(ctx, spent)
		if err != nil {
			a.log.Warn("daily token budget unavailable", "err", err)
		} else if exhausted {
			return "Stopped: the daily token budget is used up. It resets at midnight UTC.", true
		}
	}
	return "", false
}

// finalAnswer applies gate 2 and phantom detection. It reports done=false
// when the answer was refused and the loop must continue.
func (a *Agent) finalAnswer(ctx context.Context, s *Session, sink Sink, content string, fakeMarkup bool) (Outcome, bool) {
	if b := s.Policy.FSM.CanFinalAnswer(); b != nil {
		if s.Run.Turn >= a.cfg.MaxTurns {
			// No turn is left to verify in: answer, and say so plainly
			// rather than dropping what the model found.
			note := "\n\nNote: I ran out of steps before verifying the last change; check it before relying on it."
			return a.finish(ctx, s, sink, strings.TrimSpace(content)+note, false), true
		}
		prompt := s.Policy.FSM.VerificationPrompt()
		s.History = append(s.History,
			Message{Role: RoleAssistant, Content: content},
			Message{Role: RoleUser, Content: prompt})
		emit(ctx, sink, s, Event{Type: EventCorrection, Code: "verification_required", Text: prompt})
		return Outcome{}, false
	}
	if s.Run.Succeeded == 0 && (fakeMarkup || ClaimsFacts(content)) {
		a.log.Info("phantom answer replaced", "session", s.Key, "run", s.Run.ID)
		return a.finish(ctx, s, sink, PhantomReply, true), true
	}
	if strings.TrimSpace(content) == "" {
		content = "I have nothing further to add."
	}
	if unbacked := claims.Unbacked(claims.Find(content), claimChanges(s.Run.Changes)); len(unbacked) > 0 {
		// What the model says it did is untrusted too: the answer stands,
		// with a note that vigil made no such change.
		a.log.Info("answer claims a change no write backs", "session", s.Key, "run", s.Run.ID, "claims", len(unbacked))
		content = strings.TrimRight(content, " \n") + "\n\n" + claims.Note(unbacked, claimChanges(s.Run.Changes))
	}
	return a.finish(ctx, s, sink, content, false), true
}

// changeOf is how a write is remembered for the claim check.
func changeOf(p tools.Proposal) Change {
	return Change{Tool: p.Tool, Action: p.Name, Summary: p.Summary, Command: p.Command}
}

// slot is one call of a batch on its way through the three phases.
type slot struct {
	call ToolCall
	// args are the arguments that will run: the model's, or their
	// automatic rewrite.
	args     string
	prop     tools.Proposal
	env      *tools.Envelope // decided in pre-check (refused); nil when it runs
	run      bool
	approval bool
	recovery bool
	// blockedAs is the refused original of an automatically rewritten call.
	blockedAs *tools.Proposal
	blockedBy *policy.Block
	// dec is policy's decision for a call that waits for approval.
	dec policy.Decision
	res tools.Result
	dur time.Duration
}

// runBatch handles one turn's tool calls (SPEC A5): pre-checks in order,
// execution concurrently, post-processing in call order. It reports
// stopped=true when the run must return (approval pending).
func (a *Agent) runBatch(ctx context.Context, s *Session, calls []ToolCall, sink Sink) (Outcome, bool) {
	r := s.Run
	before := r.ToolCalls
	slots := make([]slot, len(calls))
	approvalAt := -1
	// Gate against a simulated FSM so a batch cannot smuggle a second write
	// past VERIFYING by proposing both at once.
	simFSM := *s.Policy.FSM
	sim := &policy.SessionState{FSM: &simFSM, Context: s.Policy.Context}
	writes := false

	for i, c := range calls {
		sl := &slots[i]
		sl.call = c
		r.ToolCalls++
		a.precheck(s, sim, sl)
		if sl.approval {
			if approvalAt >= 0 {
				sl.approval = false
				env := tools.Envelope{Error: &tools.ErrorInfo{Code: policy.CodeApprovalRequired, Blocked: true,
					Message: "another change in this turn is already waiting for approval; propose this one again after it is decided"}}
				sl.env = &env
				continue
			}
			approvalAt = i
		}
		if (sl.run || sl.approval) && sl.prop.Kind == policy.KindWrite {
			writes = true
			sim.FSM.OnToolSuccess(policy.KindWrite, sl.prop.Tool, sl.prop.Target)
		}
	}

	a.execute(ctx, a.reg(s.Run), slots, writes)

	results := make(map[string]string, len(slots))
	for i := range slots {
		sl := &slots[i]
		if sl.approval {
			continue
		}
		env := a.postprocess(ctx, s, sl, sink)
		results[sl.call.ID] = a.modelContent(env)
	}

	if approvalAt >= 0 {
		sl := slots[approvalAt]
		a.emitRecoveredBlock(ctx, s, &sl, sink)
		// The card shows the change against its target as it is now, and
		// the call runs only against that (preview.go).
		shown := a.preview(ctx, s, sl.prop)
		// The batch keeps the arguments that will run (a rewrite, if any),
		// so Resume proposes exactly what the approval binds.
		pending := slices.Clone(calls)
		pending[approvalAt].Arguments = sl.args
		r.Pending = &PendingBatch{Calls: pending, Results: results, ApprovalCallID: sl.call.ID, Basis: shown.Basis}
		need := &ApprovalNeeded{CallID: sl.call.ID, Proposal: shown, Args: sl.args, Risk: sl.dec.Risk, Reasons: sl.dec.Reasons}
		emit(ctx, sink, s, Event{Type: EventApprovalNeeded, CallID: sl.call.ID, Proposal: &sl.prop, Approval: need})
		s.UpdatedAt = a.now()
		return Outcome{Status: StatusAwaitingApproval, Approval: need}, true
	}
	for _, c := range calls {
		s.History = append(s.History, Message{Role: RoleTool, ToolCallID: c.ID, Name: c.Name, Content: results[c.ID]})
	}
	for _, n := range a.cfg.NudgeAt {
		if before < n && r.ToolCalls >= n {
			s.History = append(s.History, Message{Role: RoleUser, Content: fmt.Sprintf(
				"You have made %d tool calls. Wrap up: use only what is essential, then give your final answer.", r.ToolCalls)})
		}
	}
	return Outcome{}, false
}

// precheck decides one call: strict decoding, loop detection, policy, and
// one automatic retry with a suggested rewrite.
func (a *Agent) precheck(s *Session, sim *policy.SessionState, sl *slot) {
	r := s.Run
	refuse := func(b *policy.Block) {
		env := tools.Blocked(b)
		sl.env = &env
	}
	if b := oversizeBlock(sl.call); b != nil {
		sl.prop = tools.Proposal{Action: policy.Action{Tool: sl.call.Name, Kind: policy.KindWrite}}
		refuse(b)
		return
	}
	p, blk := a.reg(r).Propose(sl.call.Name, json.RawMessage(sl.call.Arguments))
	if blk != nil {
		sl.prop = tools.Proposal{Action: policy.Action{Tool: sl.call.Name, Kind: policy.KindWrite}}
		refuse(blk)
		return
	}
	sl.prop = p
	sl.args = sl.call.Arguments
	key := callKey(sl.call)
	if r.CallCounts == nil {
		r.CallCounts = map[string]int{}
	}
	r.CallCounts[key]++
	if r.CallCounts[key] > a.cfg.LoopLimit {
		refuse(&policy.Block{Code: policy.CodeLoopDetected,
			Message:      fmt.Sprintf("%s was called with these exact arguments %d times in this run", sl.call.Name, r.CallCounts[key]-1),
			RecoveryHint: "use the results you already have, try a different approach, or give your final answer"})
		return
	}
	dec := a.policy.Authorize(sim, p.Action, r.Level, r.Role, a.now())
	if dec.Block != nil && dec.Block.AutoRecoverable && dec.Block.SuggestedRewrite != "" && !r.Recovered[key] {
		if r.Recovered == nil {
			r.Recovered = map[string]bool{}
		}
		r.Recovered[key] = true
		if p2, dec2, raw, ok := a.rewrite(sim, r, sl.call, dec.Block); ok {
			sl.args = raw
			s.Policy.FSM.TrackPendingRecovery(dec.Block.Code, sl.call.Name)
			orig := sl.prop
			sl.blockedAs, sl.blockedBy = &orig, dec.Block
			sl.prop, dec, sl.recovery = p2, dec2, true
		}
	}
	// The tool runs the call as policy says: shell, sandbox, network.
	sl.prop.Execution = dec.Execution
	// And with the asker's identity on its target (nil: vigil's own).
	sl.prop.Actor = r.Actor
	switch {
	case dec.Block != nil:
		if dec.Block.AutoRecoverable {
			s.Policy.FSM.TrackPendingRecovery(dec.Block.Code, sl.call.Name)
		}
		refuse(dec.Block)
	case dec.NeedsApproval:
		sl.approval = true
		sl.dec = dec
	default:
		sl.run = true
	}
}

// rewrite applies a block's suggested rewrite to the call's arguments and
// asks policy again (SPEC A12). Routing mismatches rewrite the target;
// everything else rewrites the command.
func (a *Agent) rewrite(sim *policy.SessionState, r *RunState, c ToolCall, b *policy.Block) (tools.Proposal, policy.Decision, string, bool) {
	field := "command"
	if b.Code == policy.CodeRoutingMismatch {
		field = "target"
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(c.Arguments), &args); err != nil {
		return tools.Proposal{}, policy.Decision{}, "", false
	}
	if _, ok := args[field]; !ok {
		return tools.Proposal{}, policy.Decision{}, "", false
	}
	args[field] = b.SuggestedRewrite
	raw, err := json.Marshal(args)
	if err != nil {
		return tools.Proposal{}, policy.Decision{}, "", false
	}
	p, blk := a.reg(r).Propose(c.Name, raw)
	if blk != nil {
		return tools.Proposal{}, policy.Decision{}, "", false
	}
	dec := a.policy.Authorize(sim, p.Action, r.Level, r.Role, a.now())
	return p, dec, string(raw), true
}

// execute runs the calls that passed pre-checks, at most MaxParallel at once.
// A batch that writes runs in call order instead, so reads proposed after a
// write observe its effect and may count as its verification.
func (a *Agent) execute(ctx context.Context, reg Registry, slots []slot, sequential bool) {
	runOne := func(sl *slot) {
		start := a.now()
		sl.res = a.safeExecute(ctx, reg, sl.prop)
		sl.dur = a.now().Sub(start)
	}
	runnable := 0
	for i := range slots {
		if slots[i].run {
			runnable++
		}
	}
	if sequential || runnable < 2 {
		for i := range slots {
			if slots[i].run {
				runOne(&slots[i])
			}
		}
		return
	}
	sem := make(chan struct{}, a.cfg.MaxParallel)
	var wg sync.WaitGroup
	for i := range slots {
		if !slots[i].run {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func(sl *slot) {
			defer wg.Done()
			defer func() { <-sem }()
			runOne(sl)
		}(&slots[i])
	}
	wg.Wait()
}

// safeExecute turns a panicking tool into a failed envelope.
func (a *Agent) safeExecute(ctx context.Context, reg Registry, p tools.Proposal) (res tools.Result) {
	defer func() {
		if v := recover(); v != nil {
			a.log.Error("tool panicked", "tool", p.Tool, "panic", v)
			res = tools.Result{Envelope: tools.Failed(policy.CodeExecutionFailed, "the tool failed unexpectedly", false)}
		}
	}()
	t, ok := reg.Get(p.Tool)
	if !ok {
		return tools.Result{Envelope: tools.Failed(policy.CodeNotFound, "no tool named "+p.Tool, false)}
	}
	return t.Execute(ctx, p)
}

// postprocess reports one call and applies its effects on the session.
func (a *Agent) postprocess(ctx context.Context, s *Session, sl *slot, sink Sink) tools.Envelope {
	a.emitRecoveredBlock(ctx, s, sl, sink)
	emit(ctx, sink, s, Event{Type: EventToolCall, CallID: sl.call.ID, Proposal: &sl.prop, Recovery: sl.recovery})
	env := sl.res.Envelope
	if sl.env != nil {
		env = *sl.env
	} else {
		a.observe(s, sl.prop, sl.res)
	}
	emit(ctx, sink, s, Event{Type: EventToolResult, CallID: sl.call.ID, Proposal: &sl.prop, Result: &env,
		Output: sl.res.Output, Sandbox: sl.res.Sandbox, ActedAs: sl.res.ActedAs, Duration: sl.dur, Recovery: sl.recovery, Code: errCode(env)})
	return env
}

// emitRecoveredBlock shows the refusal that triggered an automatic retry.
func (a *Agent) emitRecoveredBlock(ctx context.Context, s *Session, sl *slot, sink Sink) {
	if sl.blockedAs == nil {
		return
	}
	blocked := tools.Blocked(sl.blockedBy)
	emit(ctx, sink, s, Event{Type: EventToolResult, CallID: sl.call.ID, Proposal: sl.blockedAs, Result: &blocked,
		Code: string(sl.blockedBy.Code)})
}

// observe feeds a finished call back into the session's policy state.
func (a *Agent) observe(s *Session, p tools.Proposal, res tools.Result) {
	now := a.now()
	for _, rr := range res.Resolved {
		if res.Explicit {
			s.Policy.Context.AddExplicit(rr, now)
		} else {
			s.Policy.Context.Add(rr, now)
		}
	}
	if !res.Envelope.OK {
		return
	}
	s.Run.Succeeded++
	if p.Kind != policy.KindRead && p.Kind != policy.KindResolve {
		s.Run.Changes = append(s.Run.Changes, changeOf(p))
	}
	fsm := s.Policy.FSM
	verifying := fsm.State == policy.StateVerifying || fsm.State == policy.StateWriting
	fsm.OnToolSuccess(p.Kind, p.Tool, p.Target)
	fsm.CheckRecoverySuccess(p.Tool)
	if verifying && fsm.State == policy.StateReading && fsm.WroteThisEpisode {
		// A verified write: the model must now report, not keep changing
		// things (SPEC A3).
		s.Run.TextOnly = true
	}
}

// callKey identifies identical calls for loop detection.
func callKey(c ToolCall) string {
	canon, err := policy.CanonicalJSON(json.RawMessage(c.Arguments))
	if err != nil {
		return c.Name + "\x00" + c.Arguments
	}
	return c.Name + "\x00" + string(canon)
}

// claimChanges is what the claim check needs to know of the run's changes.
func claimChanges(cs []Change) []claims.Change {
	out := make([]claims.Change, len(cs))
	for i, c := range cs {
		out[i] = claims.Change{Tool: c.Tool, Action: c.Action, Summary: c.Summary, Command: c.Command}
	}
	return out
}

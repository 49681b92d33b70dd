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
	"github.com/vigilops/vigil/policy/command"
	"github.com/vigilops/vigil/policy/redact"
	"github.com/vigilops/vigil/tools"
)

// requestApproval turns a run stopped at a write into a pending approval
// and posts its card in the thread.
func (b *approvals) requestApproval(ctx context.Context, t ThreadRef, s *agent.Session, need *agent.ApprovalNeeded) error {
	p := need.Proposal
	// The card shows policy's verdict on this exact call, not a second
	// opinion: the risk and reasons Gate.Authorize decided.
	risk, reasons := need.Risk, need.Reasons
	if risk == "" {
		risk = command.RiskMedium
	}
	a, err := policy.NewApproval(policy.ApprovalRequest{
		Tool:       p.Tool,
		Args:       json.RawMessage(need.Args),
		Target:     p.Target,
		Command:    redact.Command(p.Command),
		Summary:    redact.String(p.Summary),
		Risk:       risk,
		Reasons:    reasons,
		Details:    p.Details,
		Basis:      p.Basis,
		Requester:  s.Run.Requester,
		Channel:    s.Run.Channel,
		Thread:     t.Key(),
		SessionKey: s.Key,
		CallID:     need.CallID,
		TTL:        b.opt.ApprovalTTL,
	}, b.now())
	if err != nil {
		return fmt.Errorf("new approval: %w", err)
	}
	ref := MessageRef{ThreadRef: t}
	a.CardRef, _ = json.Marshal(ref)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := b.opt.Stores.Approvals.CreateApproval(sctx, a); err != nil {
		return fmt.Errorf("create approval: %w", err)
	}
	s.Run.Pending.ApprovalID = a.ID
	// Save before the card goes out: a click may arrive at another replica
	// at once, and it must find the run waiting.
	if err := b.saveSession(ctx, s); err != nil {
		return err
	}
	b.audits.audit(ctx, audit.Record{
		Actor: a.Requester, Action: audit.ApprovalRequested, Tool: a.Tool, Target: a.Target,
		Command: a.Command, Channel: a.Channel, Thread: a.Thread, Outcome: "pending", ApprovalID: a.ID,
	})
	b.approvalOutcome("requested")

	ad, ok := b.adapter(t.Platform)
	if !ok {
		return fmt.Errorf("no adapter for %s", t.Platform)
	}
	card := cardOf(a)
	if cp, ok := b.opt.Channels.Lookup(a.Channel); ok {
		card.Approvers = notifyApprovers(cp, a.Requester)
	}
	posted, err := ad.PostApproval(ctx, t, card)
	if err != nil {
		id := newErrorID()
		b.log.Error("post approval card", "error_id", id, "approval", a.ID, "err", err)
		b.say(ctx, t, Reply{Kind: ReplyError, ErrorID: id, Text: fmt.Sprintf(
			"I could not post the approval card for %s. It is pending; answer it with \"approve %s\" or \"deny %s <reason>\".", a.ID, a.ID, a.ID)})
		return nil
	}
	b.rememberCard(sctx, a.ID, posted)
	return nil
}

// rememberCard stores where an approval's card was posted. Someone may
// decide the approval as soon as the card shows, before this runs; their
// card update then had no card to edit, so it is done here.
func (b *approvals) rememberCard(ctx context.Context, id string, posted MessageRef) {
	raw, err := json.Marshal(posted)
	if err != nil {
		b.log.Error("encode approval card reference", "approval", id, "err", err)
		return
	}
	updated, err := b.opt.Stores.Approvals.UpdateApproval(ctx, id, policy.AttachCard(raw))
	if err != nil {
		b.log.Warn("remember approval card", "approval", id, "err", err)
		return
	}
	if updated.Status != policy.ApprovalPending {
		b.updateCard(ctx, updated) // decided meanwhile
	}
}

func cardOf(a *policy.Approval) ApprovalCard {
	return ApprovalCard{
		ID:         a.ID,
		Token:      a.Token,
		Tool:       a.Tool,
		Target:     a.Target,
		Command:    a.Command,
		Summary:    a.Summary,
		Risk:       string(a.Risk),
		Reasons:    a.Reasons,
		Details:    cardDetails(a.Details),
		Parts:      commandParts(a.Command),
		ChangeHash: a.ChangeHash,
		Requester:  a.Requester,
		ExpiresAt:  a.ExpiresAt,
		Status:     cardStatus(a.Status),
		DecidedBy:  a.DecidedBy,
		DecidedAt:  a.DecidedAt,
		Reason:     a.Reason,
	}
}

// notifyApprovers are the channel's approvers to notify of a new card:
// the requester is left out unless they may approve their own request.
func notifyApprovers(cp policy.ChannelPolicy, requester string) []string {
	var out []string
	for _, u := range cp.Approvers {
		if u == requester && !cp.AllowSelfApproval {
			continue
		}
		out = append(out, u)
	}
	return out
}

// cardDetails copies an approval's change lines into the card.
func cardDetails(ds []policy.ChangeDetail) []CardDetail {
	if len(ds) == 0 {
		return nil
	}
	out := make([]CardDetail, len(ds))
	for i, d := range ds {
		out[i] = CardDetail{Label: d.Label, Value: d.Value}
	}
	return out
}

func cardStatus(s policy.ApprovalStatus) ApprovalStatus {
	switch s {
	case policy.ApprovalApproved, policy.ApprovalExecuting, policy.ApprovalExecuted, policy.ApprovalFailed:
		return ApprovalApproved
	case policy.ApprovalDenied:
		return ApprovalDenied
	case policy.ApprovalExpired:
		return ApprovalExpired
	}
	return ApprovalPending
}

// cardRef recovers where an approval's card and thread are.
func cardRef(a *policy.Approval) (MessageRef, error) {
	var ref MessageRef
	if err := json.Unmarshal(a.CardRef, &ref); err != nil {
		return ref, fmt.Errorf("approval %s has no usable card reference: %w", a.ID, err)
	}
	return ref, nil
}

// HandleDecision implements Handler: a person approved or denied.
func (b *approvals) HandleDecision(ctx context.Context, d Decision) {
	defer b.guard(ctx, "handle decision", d.Thread)
	b.mu.Lock()
	b.active++
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		b.active--
		b.idle.Broadcast()
		b.mu.Unlock()
	}()
	if d.EventID != "" {
		first, err := b.opt.Stores.Dedup.FirstSeen(ctx, "decision:"+string(d.Thread.Platform)+":"+d.EventID, b.opt.DedupTTL)
		if err != nil {
			b.storeFailure(ctx, d.Thread, err)
			return
		}
		if !first {
			b.chatEvent(d.Thread.Platform, "duplicate")
			return
		}
	}
	b.decide(ctx, d)
}

func (b *approvals) decide(ctx context.Context, d Decision) {
	a, err := b.opt.Stores.Approvals.GetApproval(ctx, d.ApprovalID)
	if errors.Is(err, ErrNotFound) {
		b.tell(ctx, d.Thread, d.User, fmt.Sprintf("There is no approval with ID %q.", d.ApprovalID))
		return
	}
	if err != nil {
		b.storeFailure(ctx, d.Thread, err)
		return
	}
	cp, ok := b.opt.Channels.Lookup(a.Channel)
	if !ok {
		b.tell(ctx, d.Thread, d.User, "This approval belongs to a channel vigil is no longer configured for; it cannot be decided.")
		return
	}
	now := b.now()
	subj := b.subject(ctx, d.Thread, d.User)
	req := policy.DecisionRequest{
		User:              d.User,
		Token:             d.Token,
		FromButton:        d.FromButton,
		Approve:           d.Approve,
		Reason:            d.Reason,
		Roles:             cp.RolesOf(subj),
		Channel:           d.Thread.ChannelKey(),
		Level:             cp.Level,
		AllowSelfApproval: cp.AllowSelfApproval,
	}
	if err := policy.CheckDecision(a, req, now); err != nil {
		if errors.Is(err, policy.ErrApprovalExpired) {
			b.expire(ctx, a)
		}
		if errors.Is(err, policy.ErrTokenMissing) || errors.Is(err, policy.ErrTokenMismatch) {
			// A click that did not come from the card: someone is forging
			// decisions. Refused like any other, and on the record.
			b.log.Warn("forged approval click refused", "approval", a.ID, "user", d.User, "thread", d.Thread.Key(), "reason", err)
			b.audits.audit(ctx, audit.Record{Actor: d.User, Action: audit.Block, Tool: a.Tool, Target: a.Target, Command: a.Command,
				Channel: a.Channel, Thread: a.Thread, Outcome: "forged_click", ApprovalID: a.ID, Reason: err.Error()})
		}
		b.log.Info("decision refused", "approval", a.ID, "user", d.User, "reason", err)
		b.tell(ctx, d.Thread, d.User, "Not accepted: "+err.Error())
		return
	}
	decided, err := b.opt.Stores.Approvals.UpdateApproval(ctx, a.ID, policy.Decide(req, now))
	if errors.Is(err, ErrStatusConflict) {
		b.tell(ctx, d.Thread, d.User, "Not accepted: "+alreadyDecided(decided))
		return
	}
	if err != nil {
		b.storeFailure(ctx, d.Thread, err)
		return
	}
	action, outcome := audit.Denied, "denied"
	if d.Approve {
		action, outcome = audit.Approved, "approved"
	}
	b.audits.audit(ctx, audit.Record{Actor: d.User, Action: action, Tool: a.Tool, Target: a.Target, Command: a.Command,
		Channel: a.Channel, Thread: a.Thread, Outcome: outcome, ApprovalID: a.ID, Reason: redact.String(d.Reason)})
	b.approvalOutcome(outcome)
	b.updateCard(ctx, decided)

	ref, err := cardRef(decided)
	if err != nil {
		b.log.Error("resume impossible", "approval", a.ID, "err", err)
		return
	}
	// An approved change acts with the approver's identity on its target.
	actor := b.opt.Identities.Resolve(subj, d.Thread.ChannelKey())
	if d.Approve && actor != nil {
		b.say(ctx, ref.ThreadRef, Reply{Kind: ReplyNotice, Text: fmt.Sprintf("Approved by %s. Where vigil acts as a person (Kubernetes, SSH hosts with per-person logins), the change uses %s's identity: %s.", d.User, d.User, actor.Describe())})
	}
	b.enqueue(ctx, ref.ThreadRef, &resumeJob{h: b, approval: decided, decision: agent.Decision{
		Approved: d.Approve, By: d.User, Reason: decided.Reason, Actor: actor,
	}})
}

// alreadyDecided words a lost race or a replay for the person who clicked.
func alreadyDecided(a *policy.Approval) string {
	if a == nil {
		return "this approval was already decided."
	}
	if err := a.StatusError(); err != nil {
		return err.Error()
	}
	return "this approval changed while you decided; try again."
}

func (b *approvals) updateCard(ctx context.Context, a *policy.Approval) {
	ref, err := cardRef(a)
	if err != nil || ref.ID == "" {
		return
	}
	ad, ok := b.adapter(ref.Platform)
	if !ok {
		return
	}
	if err := ad.UpdateApproval(ctx, ref, cardOf(a)); err != nil {
		b.log.Warn("update approval card", "approval", a.ID, "err", err)
	}
}

func (b *runtime) approvalOutcome(outcome string) {
	if b.opt.Observer != nil {
		b.opt.Observer.ApprovalOutcome(outcome)
	}
}

// resume continues the run waiting on a decided approval.
func (b *approvals) resume(ctx context.Context, t ThreadRef, held *heldLock, rj *resumeJob) {
	a := rj.approval
	if isRunbookApproval(a) {
		b.runbooks.resumeRunbook(ctx, t, rj) // no run waits on it (feedback.go)
		return
	}
	s, err := b.loadSession(ctx, t)
	if err != nil {
		b.storeFailure(ctx, t, err)
		return
	}
	if s.Run == nil || s.Run.Pending == nil || s.Run.Pending.ApprovalID != a.ID {
		b.log.Warn("decided approval has no waiting run", "approval", a.ID, "thread", t.Key())
		if rj.decision.Approved {
			b.say(ctx, t, Reply{Kind: ReplyNotice, Text: fmt.Sprintf(
				"Approval %s no longer matches a waiting request (it was stopped or replaced); nothing was run.", a.ID)})
		}
		return
	}
	cp, ok := b.opt.Channels.Lookup(a.Channel)
	level := policy.LevelReadOnly
	if ok {
		level = cp.Level
	}
	d := rj.decision
	d.Level = level
	role := b.requesterRole(ctx, t, s.Run)
	d.Role = &role
	k := b.newSink(t, s)
	if d.Approved {
		k.approvalID, k.approvalCall = a.ID, a.CallID
		d.BeforeExecute = func(ctx context.Context, p tools.Proposal, args string) error {
			return b.claimExecution(ctx, t, a.ID, p, args, cp)
		}
	}
	clear := b.showStatus(ctx, t, "working…")
	out, err := b.opt.Agent.Resume(ctx, s, d, b.runEnv(k, held))
	clear()
	if k.executed != nil {
		if _, uerr := b.opt.Stores.Approvals.UpdateApproval(context.WithoutCancel(ctx), a.ID,
			policy.MarkExecuted(policy.ApprovalExecuted, b.now())); uerr != nil {
			b.log.Warn("mark approval executed", "approval", a.ID, "err", uerr)
		}
		b.approvalOutcome("executed")
	}
	b.afterRun(ctx, t, held, s, out, err)
}

// claimExecution re-checks everything immediately before an approved call
// runs and claims it, so it runs once even if two replicas resume it.
func (b *approvals) claimExecution(ctx context.Context, t ThreadRef, id string, p tools.Proposal, args string, cp policy.ChannelPolicy) error {
	cur, err := b.opt.Stores.Approvals.GetApproval(ctx, id)
	if err != nil {
		return fmt.Errorf("approval unavailable: %w", err)
	}
	now := b.now()
	if err := policy.CheckExecution(cur, p.Tool, json.RawMessage(args), cp.Level, now); err != nil {
		return err
	}
	// The call runs against the state of its target the card showed, as
	// the approval binds it, and no other.
	if p.Basis != cur.Basis {
		return fmt.Errorf("%w: the state the change was shown against differs from the approval's", policy.ErrBindingMismatch)
	}
	if !cp.RolesOf(b.subject(ctx, t, cur.DecidedBy)).Approver {
		return fmt.Errorf("%s no longer holds the approver role in this channel", cur.DecidedBy)
	}
	if _, err := b.opt.Stores.Approvals.UpdateApproval(ctx, id, policy.ClaimExecution(now)); err != nil {
		if errors.Is(err, ErrStatusConflict) {
			return errors.New("it was already run")
		}
		return fmt.Errorf("claim approval: %w", err)
	}
	return nil
}

// expire closes a lapsed approval: card updated, run ended with a message.
func (b *approvals) expire(ctx context.Context, a *policy.Approval) {
	expired, err := b.opt.Stores.Approvals.UpdateApproval(ctx, a.ID, policy.Expire(b.now()))
	if err != nil {
		if !errors.Is(err, ErrStatusConflict) {
			b.log.Warn("expire approval", "approval", a.ID, "err", err)
		}
		return
	}
	b.audits.audit(ctx, audit.Record{Actor: "vigil", Action: audit.Expired, Tool: a.Tool, Target: a.Target,
		Command: a.Command, Channel: a.Channel, Thread: a.Thread, Outcome: "expired", ApprovalID: a.ID})
	b.approvalOutcome("expired")
	b.updateCard(ctx, expired)
	if ref, err := cardRef(expired); err == nil {
		b.enqueue(ctx, ref.ThreadRef, &resumeJob{h: b, approval: expired, decision: agent.Decision{Expired: true}})
	}
}

// sweep expires lapsed approvals until ctx ends.
func (b *Bot) sweep(ctx context.Context) {
	tick := time.NewTicker(b.rt.opt.SweepEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			b.approvals.SweepOnce(ctx)
			b.conv.recoverOrphans(ctx)
			b.settler.settleExecuting(ctx)
		}
	}
}

// SweepOnce expires every pending approval past its expiry. Exported so tests
// and operators' tooling can drive expiry without waiting for the ticker.
func (b *approvals) SweepOnce(ctx context.Context) {
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	pending, err := b.opt.Stores.Approvals.ListPending(lctx)
	cancel()
	if err != nil {
		b.log.Warn("list pending approvals", "err", err)
		return
	}
	now := b.now()
	waiting := 0
	for _, a := range pending {
		if now.After(a.ExpiresAt) {
			b.expire(ctx, a)
		} else {
			waiting++
		}
	}
	b.notePendingApprovals(waiting)
}

// abandonPending ends a run that no job of this replica is working on (one
// waiting on an approval, or left by a replica that died) because user said
// "stop". Only the run's requester, an operator or an approver may; a
// pending approval is withdrawn as a decision, through the same policy
// check as a denial, and audited as user's.
func (b *approvals) abandonPending(ctx context.Context, t ThreadRef, s *agent.Session, user string, roles policy.RoleSet, cp policy.ChannelPolicy) {
	if !policy.MayStop(user, s.Run.Requester, roles) {
		b.log.Info("stop refused", "thread", t.Key(), "user", user)
		b.tell(ctx, t, user, stopRefused)
		return
	}
	if s.Run.Pending != nil && s.Run.Pending.ApprovalID != "" {
		if !b.withdraw(ctx, t, s.Run.Pending.ApprovalID, user, roles, cp) {
			return
		}
	}
	b.opt.Agent.Abandon(s, "stopped by "+user)
	if err := b.saveSession(ctx, s); err != nil {
		b.storeFailure(ctx, t, err)
		return
	}
	b.say(ctx, t, Reply{Kind: ReplyNotice, Text: "Stopped. Nothing more will run for that request."})
}

// withdraw denies a pending approval because user stopped its run. It
// reports false when the stop must not go on (the person may not decide
// it, or the store failed); an approval already decided or expired leaves
// nothing to withdraw, and the run still stops.
func (b *approvals) withdraw(ctx context.Context, t ThreadRef, id, user string, roles policy.RoleSet, cp policy.ChannelPolicy) bool {
	a, err := b.opt.Stores.Approvals.GetApproval(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return true
	}
	if err != nil {
		b.storeFailure(ctx, t, err)
		return false
	}
	now := b.now()
	stop := policy.DecisionRequest{
		User: user, Stop: true, Reason: "stopped", Roles: roles, Channel: t.ChannelKey(),
		Level: cp.Level, AllowSelfApproval: cp.AllowSelfApproval,
	}
	err = policy.CheckDecision(a, stop, now)
	switch {
	case errors.Is(err, policy.ErrAlreadyDecided):
		return true
	case errors.Is(err, policy.ErrApprovalExpired):
		b.expire(ctx, a)
		return true
	case err != nil:
		b.log.Info("stop refused", "approval", a.ID, "user", user, "reason", err)
		b.tell(ctx, t, user, "Not stopped: "+err.Error())
		return false
	}
	decided, err := b.opt.Stores.Approvals.UpdateApproval(ctx, id, policy.Decide(stop, now))
	switch {
	case errors.Is(err, ErrStatusConflict):
		return true // decided meanwhile; nothing left to withdraw
	case err != nil:
		b.storeFailure(ctx, t, err)
		return false
	}
	b.audits.audit(ctx, audit.Record{Actor: user, Action: audit.Denied, Tool: decided.Tool, Target: decided.Target,
		Command: decided.Command, Channel: decided.Channel, Thread: decided.Thread, Outcome: "stopped",
		ApprovalID: decided.ID, Reason: "stopped"})
	b.approvalOutcome("denied")
	b.updateCard(ctx, decided)
	return true
}

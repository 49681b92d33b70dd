package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/agent/facts"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/policy/audit"
	"github.com/vigilops/vigil/policy/command"
	"github.com/vigilops/vigil/policy/redact"
	"github.com/vigilops/vigil/tools"
)

// Learning from resolved investigations (SPEC A13). People rate answers;
// the rating is stored with the run (agent.RunRecord) and counted. An
// answer rated good whose run named a cause (and verified its fix, where
// one ran) is drafted into a runbook, and the draft is offered as an
// approval: nothing is written until an approver approves the card, and
// approving writes exactly the drafted file.

// Runbooks is the runbook directory as the bot uses it (package runbook,
// wired in internal/app).
type Runbooks interface {
	// Offer returns the block of runbooks that may apply to a question
	// naming the given resources; "" when none does.
	Offer(question string, resources []string) (string, error)
	// Draft writes a runbook from a finished run and the session's facts.
	// A run that cannot become one gives an error wrapping ErrNotEligible,
	// worded for people.
	Draft(rec *agent.RunRecord, known []facts.Fact) (RunbookDraft, error)
	// Save writes a drafted runbook under its name, never over a file,
	// and returns its path as people see it.
	Save(name, content string) (string, error)
}

// RunbookDraft is a runbook waiting for approval.
type RunbookDraft struct {
	// Name is the file name in the directory; Path how people see it
	// ("runbooks/checkout-slow.md").
	Name, Path string
	Title      string
	Content    string
	// Summary is the card's one-line account of the content.
	Summary string
}

// ErrNotEligible means a run cannot become a runbook (no answer, no cause
// named, an unverified change).
var ErrNotEligible = errors.New("not a resolved investigation")

// FeedbackObserver is an optional power of an Observer: counting feedback.
type FeedbackObserver interface {
	Feedback(platform, rating string)
}

// RunbookTool is the tool name a runbook approval is bound to; the bot
// itself executes it (no model proposes it).
const RunbookTool = "runbook"

// runbookCallPrefix marks the call ID of a runbook approval: the run it was
// drafted from follows.
const runbookCallPrefix = "runbook:"

// runbookArgs are the bound arguments of a runbook approval.
type runbookArgs struct {
	Action  string `json:"action"`
	Name    string `json:"name"`
	Content string `json:"content"`
}

func isRunbookApproval(a *policy.Approval) bool {
	return a.Tool == RunbookTool && strings.HasPrefix(a.CallID, runbookCallPrefix)
}

// HandleFeedback implements FeedbackHandler: it returns at once; the
// rating is recorded on the thread's queue.
func (b *feedbacks) HandleFeedback(ctx context.Context, f Feedback) {
	defer b.guard(ctx, "handle feedback", f.Thread)
	if f.Rating != agent.RatingGood && f.Rating != agent.RatingBad {
		return
	}
	if f.EventID != "" {
		first, err := b.opt.Stores.Dedup.FirstSeen(ctx, "feedback:"+string(f.Thread.Platform)+":"+f.EventID, b.opt.DedupTTL)
		if err != nil {
			b.storeFailure(ctx, f.Thread, err)
			return
		}
		if !first {
			b.chatEvent(f.Thread.Platform, "duplicate")
			return
		}
	}
	cp, ok := b.opt.Channels.Lookup(f.Thread.ChannelKey())
	if !ok || !cp.RolesOf(b.subject(ctx, f.Thread, f.User)).Viewer {
		b.tell(ctx, f.Thread, f.User, "Only people who may ask me things in this channel can rate my answers.")
		return
	}
	b.chatEvent(f.Thread.Platform, "handled")
	b.enqueue(ctx, f.Thread, feedbackJob{b, f})
}

// applyFeedback records a rating on the run it is for and, for a good one,
// offers the run as a runbook. It runs holding the thread's lock.
func (b *feedbacks) applyFeedback(ctx context.Context, t ThreadRef, f Feedback) {
	s, err := b.loadSession(ctx, t)
	if err != nil {
		b.storeFailure(ctx, t, err)
		return
	}
	rec := s.RunRecord(f.RunID)
	if rec == nil || !rec.Answered {
		b.tell(ctx, t, f.User, "There is no answer of mine here to rate.")
		return
	}
	changed := rec.Rate(agent.Feedback{User: f.User, Rating: f.Rating, Platform: string(t.Platform), At: f.At})
	if err := b.saveSession(ctx, s); err != nil {
		b.storeFailure(ctx, t, err)
		return
	}
	if changed {
		if fo, ok := b.opt.Observer.(FeedbackObserver); ok {
			fo.Feedback(string(t.Platform), string(f.Rating))
		}
		b.log.Info("answer rated", "thread", t.Key(), "run", rec.ID, "rating", f.Rating, "user", f.User)
	}
	if f.Rating != agent.RatingGood || !rec.MarkedGood() || rec.Runbook != "" || rec.RunbookApproval != "" || b.opt.Runbooks == nil {
		b.tell(ctx, t, f.User, fmt.Sprintf("Thanks: your rating (%s) is recorded.", f.Rating))
		return
	}
	b.offerRunbook(ctx, t, s, rec, f.User)
}

// offerRunbook drafts a runbook from a run rated good and asks for its
// approval. The draft is shown in full; the card carries its file name
// and a summary, and approving it writes exactly that content.
func (b *feedbacks) offerRunbook(ctx context.Context, t ThreadRef, s *agent.Session, rec *agent.RunRecord, user string) {
	cp, ok := b.opt.Channels.Lookup(t.ChannelKey())
	if !ok {
		return
	}
	if !cp.Level.AllowsWrites() {
		b.tell(ctx, t, user, "Thanks: your rating is recorded. This channel is read-only, so I cannot offer to save that investigation as a runbook here.")
		return
	}
	var known []facts.Fact
	if s.Knowledge != nil {
		known = s.Knowledge.Facts
	}
	d, err := b.opt.Runbooks.Draft(rec, known)
	if errors.Is(err, ErrNotEligible) {
		b.tell(ctx, t, user, "Thanks: your rating is recorded. I did not draft a runbook from that answer: "+
			strings.TrimPrefix(err.Error(), ErrNotEligible.Error()+": ")+".")
		return
	}
	if err != nil {
		id := newErrorID()
		b.log.Error("draft runbook", "error_id", id, "thread", t.Key(), "run", rec.ID, "err", err)
		b.say(ctx, t, Reply{Kind: ReplyError, ErrorID: id, Text: "Your rating is recorded, but I could not draft a runbook from that answer."})
		return
	}
	// A command the model ran may hold a secret: the file never does.
	d.Content, d.Summary = redact.String(d.Content), redact.String(d.Summary)
	args, err := json.Marshal(runbookArgs{Action: "save", Name: d.Name, Content: d.Content})
	if err != nil {
		b.log.Error("encode runbook approval", "err", err)
		return
	}
	a, err := policy.NewApproval(policy.ApprovalRequest{
		Tool:       RunbookTool,
		Args:       args,
		Command:    fmt.Sprintf("write %s (%d lines)", d.Path, strings.Count(d.Content, "\n")),
		Summary:    d.Summary,
		Risk:       command.RiskLow,
		Reasons:    []string{"saves a runbook that later questions and alerts are offered; read the draft above before approving"},
		Requester:  user,
		Channel:    cp.Match,
		Thread:     t.Key(),
		SessionKey: s.Key,
		CallID:     runbookCallPrefix + rec.ID,
		TTL:        b.opt.ApprovalTTL,
	}, b.now())
	if err != nil {
		b.log.Error("new runbook approval", "err", err)
		return
	}
	ref := MessageRef{ThreadRef: t}
	a.CardRef, _ = json.Marshal(ref)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := b.opt.Stores.Approvals.CreateApproval(sctx, a); err != nil {
		b.storeFailure(ctx, t, err)
		return
	}
	rec.RunbookApproval = a.ID
	if err := b.saveSession(ctx, s); err != nil {
		b.storeFailure(ctx, t, err)
		return
	}
	b.audits.audit(ctx, audit.Record{Actor: user, Action: audit.ApprovalRequested, Tool: a.Tool, Command: a.Command,
		Channel: a.Channel, Thread: a.Thread, Outcome: "pending", ApprovalID: a.ID})
	b.approvalOutcome("requested")
	b.say(ctx, t, Reply{Kind: ReplyAnswer, Text: fmt.Sprintf(
		"Thanks: rated good. I drafted a runbook from this investigation; it is saved as `%s` only if an approver approves the card below.\n\n```markdown\n%s\n```",
		d.Path, strings.TrimRight(d.Content, "\n"))})
	ad, ok := b.adapter(t.Platform)
	if !ok {
		return
	}
	posted, err := ad.PostApproval(ctx, t, cardOf(a))
	if err != nil {
		id := newErrorID()
		b.log.Error("post runbook approval card", "error_id", id, "approval", a.ID, "err", err)
		b.say(ctx, t, Reply{Kind: ReplyError, ErrorID: id, Text: fmt.Sprintf(
			"I could not post the approval card for the runbook. It is pending; answer it with \"approve %s\" or \"deny %s <reason>\".", a.ID, a.ID)})
		return
	}
	b.cards.rememberCard(sctx, a.ID, posted)
}

// resumeRunbook carries out a decided runbook approval: on approval it
// writes exactly the bound file, once.
func (b *feedbacks) resumeRunbook(ctx context.Context, t ThreadRef, rj *resumeJob) {
	a, d := rj.approval, rj.decision
	s, err := b.loadSession(ctx, t)
	if err != nil {
		b.storeFailure(ctx, t, err)
		return
	}
	var rec *agent.RunRecord
	for i := range s.Runs {
		if s.Runs[i].RunbookApproval == a.ID {
			rec = &s.Runs[i]
		}
	}
	var args runbookArgs
	if err := json.Unmarshal(a.Args, &args); err != nil || args.Action != "save" {
		b.log.Error("runbook approval with unusable arguments", "approval", a.ID, "err", err)
		return
	}
	forget := func() {
		if rec != nil {
			rec.RunbookApproval = "" // a later rating may offer it again
			if err := b.saveSession(ctx, s); err != nil {
				b.log.Warn("save session after a runbook decision", "thread", t.Key(), "err", err)
			}
		}
	}
	switch {
	case d.Expired:
		forget()
		b.say(ctx, t, Reply{Kind: ReplyNotice, Text: fmt.Sprintf("The runbook draft %s expired before anyone decided; nothing was saved.", args.Name)})
		return
	case !d.Approved:
		forget()
		b.say(ctx, t, Reply{Kind: ReplyNotice, Text: fmt.Sprintf("Runbook %s not saved: denied by %s: %s.", args.Name, d.By, orNone(d.Reason))})
		return
	}
	cp, ok := b.opt.Channels.Lookup(a.Channel)
	if !ok {
		return
	}
	p := tools.Proposal{Action: policy.Action{Tool: RunbookTool, Name: "save", Kind: policy.KindWrite}}
	if err := b.cards.claimExecution(ctx, t, a.ID, p, string(a.Args), cp); err != nil {
		b.say(ctx, t, Reply{Kind: ReplyNotice, Text: "The runbook was not saved: " + err.Error()})
		return
	}
	saved, saveErr := args.Name, error(nil)
	if b.opt.Runbooks == nil {
		saveErr = errors.New("no runbooks directory is configured")
	} else {
		saved, saveErr = b.opt.Runbooks.Save(args.Name, args.Content)
	}
	status, outcome := policy.ApprovalExecuted, string(OutcomeOK)
	if saveErr != nil {
		status, outcome = policy.ApprovalFailed, string(OutcomeFailed)
	}
	b.audits.audit(ctx, audit.Record{Actor: a.Requester, Action: audit.Executed, Tool: a.Tool, Command: a.Command, Channel: a.Channel,
		Thread: a.Thread, Outcome: outcome, ApprovalID: a.ID, Reason: errText(saveErr)})
	if _, uerr := b.opt.Stores.Approvals.UpdateApproval(context.WithoutCancel(ctx), a.ID,
		policy.MarkExecuted(status, b.now())); uerr != nil {
		b.log.Warn("mark runbook approval done", "approval", a.ID, "err", uerr)
	}
	if saveErr != nil {
		id := newErrorID()
		b.log.Error("save runbook", "error_id", id, "approval", a.ID, "err", saveErr)
		b.say(ctx, t, Reply{Kind: ReplyError, ErrorID: id, Text: "The runbook was approved but could not be saved: " + saveErr.Error()})
		forget()
		return
	}
	b.approvalOutcome("executed")
	if rec != nil {
		rec.Runbook = saved
		if err := b.saveSession(ctx, s); err != nil {
			b.log.Warn("save session after saving a runbook", "thread", t.Key(), "err", err)
		}
	}
	b.say(ctx, t, Reply{Kind: ReplyNotice, Text: fmt.Sprintf(
		"Saved runbook %s. Later questions and alerts that match it will be offered it.", saved)})
}

func orNone(s string) string {
	if s == "" {
		return "no reason given"
	}
	return s
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

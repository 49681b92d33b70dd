package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/vigilops/vigil/policy/redact"
)

// The approval lifecycle as pure transitions (see ApprovalStatus for the
// picture). Each step is a Transition built here: callers never write
// Status by hand. A store applies a step with one compare-and-set, so of
// two replicas taking the same step exactly one moves the record on; the
// other gets the record as it now stands and a *TransitionError saying
// why the step no longer applies.

// Errors naming why a step does not apply to an approval as it stands,
// besides the decision errors (*DecidedError, ErrApprovalExpired,
// ErrNotApproved).
var (
	ErrAlreadyClaimed  = errors.New("the approved call was already claimed for execution")
	ErrAlreadyExecuted = errors.New("the approved call already ran")
	ErrNotClaimed      = errors.New("the call was not claimed for execution")
	ErrNotYetExpired   = errors.New("the approval has not expired yet")
	ErrNoSuchStep      = errors.New("not an approval lifecycle step")
)

// Step names a lifecycle step, for errors, logs and stores that watch for
// one (a test killing the master at the claim).
type Step string

const (
	StepDecide         Step = "decide"
	StepClaimExecution Step = "claim execution"
	StepMarkExecuted   Step = "mark executed"
	StepSettle         Step = "settle"
	StepExpire         Step = "expire"
	StepAttachCard     Step = "attach card"
)

// A Transition is one step of an approval's lifecycle with its arguments
// bound. It is pure: Apply changes nothing but the copy it returns, so a
// store may run it again on a fresh read when a compare-and-set loses. Only
// this package builds transitions; the zero Transition applies to nothing.
type Transition struct {
	step  Step
	apply func(a *Approval) error
}

// Step reports which step t is.
func (t Transition) Step() Step { return t.step }

// Apply returns a copy of a moved on by t, or a *TransitionError and nil
// if t does not apply to a as it stands. a is never changed.
func (t Transition) Apply(a *Approval) (*Approval, error) {
	if a == nil {
		return nil, ErrApprovalNotFound
	}
	if t.apply == nil {
		return nil, &TransitionError{Step: t.step, ID: a.ID, Status: a.Status, Reason: ErrNoSuchStep}
	}
	next := *a
	if err := t.apply(&next); err != nil {
		return nil, &TransitionError{Step: t.step, ID: a.ID, Status: a.Status, Reason: err}
	}
	return &next, nil
}

// TransitionError says why a step does not apply to an approval: Reason
// is the approval error a person or the caller acts on (a *DecidedError
// for a decision that came too late, ErrAlreadyClaimed for a second claim,
// …). errors.Is and errors.As see through to it.
type TransitionError struct {
	Step   Step
	ID     string
	Status ApprovalStatus // the approval's status when the step was refused
	Reason error
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("approval %s (%s): cannot %s: %v", e.ID, e.Status, e.Step, e.Reason)
}

func (e *TransitionError) Unwrap() error { return e.Reason }

// Decide records d, a person's approve, deny or stop, taken at now. It
// applies only when CheckDecision accepts d for the approval as it stands
// (pending, not expired, the person allowed to), and then sets the status
// to approved or denied and records who, when and the redacted reason.
// The caller checks first too, to answer a refusal before touching the
// store; the check inside the step is what makes the decision atomic.
func Decide(d DecisionRequest, now time.Time) Transition {
	return Transition{step: StepDecide, apply: func(a *Approval) error {
		if err := CheckDecision(a, d, now); err != nil {
			return err
		}
		a.Status = ApprovalDenied
		if d.Approve {
			a.Status = ApprovalApproved
		}
		a.DecidedBy = d.User
		a.DecidedAt = now
		a.Reason = redact.String(d.Reason)
		return nil
	}}
}

// ClaimExecution claims an approved call for execution at now: approved →
// executing, so it runs once even if two replicas resume it. It applies
// only to an approval still approved and no older than ExpiresAt plus
// ExecutionGrace. The caller runs CheckExecution first, for the binding
// and the channel's level, which the record alone cannot tell.
func ClaimExecution(now time.Time) Transition {
	return Transition{step: StepClaimExecution, apply: func(a *Approval) error {
		switch a.Status {
		case ApprovalApproved:
		case ApprovalExecuting:
			return ErrAlreadyClaimed
		case ApprovalExecuted, ApprovalFailed:
			return ErrAlreadyExecuted
		default:
			return fmt.Errorf("%w (it is %s)", ErrNotApproved, a.Status)
		}
		if deadline := a.ExpiresAt.Add(ExecutionGrace); now.After(deadline) {
			return fmt.Errorf("%w: approved but not run before %s; ask again", ErrApprovalExpired, formatDecisionTime(deadline))
		}
		a.Status = ApprovalExecuting
		return nil
	}}
}

// MarkExecuted records the end of a claimed call that this replica ran:
// executing → to (ApprovalExecuted, or ApprovalFailed when it did not
// happen), at now.
func MarkExecuted(to ApprovalStatus, now time.Time) Transition {
	return finish(StepMarkExecuted, to, now)
}

// Settle closes a call left executing by a store outage or a crash, from
// what vigil recorded of it: executing → to (ApprovalExecuted when the
// result is known, ApprovalFailed when it is not), at now. The record
// changes as MarkExecuted changes it; the step is named apart because the
// outcome is recovered, not observed.
func Settle(to ApprovalStatus, now time.Time) Transition {
	return finish(StepSettle, to, now)
}

func finish(step Step, to ApprovalStatus, now time.Time) Transition {
	return Transition{step: step, apply: func(a *Approval) error {
		if to != ApprovalExecuted && to != ApprovalFailed {
			return fmt.Errorf("%w: %s cannot end in %q, only %s or %s", ErrNoSuchStep, step, to, ApprovalExecuted, ApprovalFailed)
		}
		switch a.Status {
		case ApprovalExecuting:
		case ApprovalExecuted, ApprovalFailed:
			return ErrAlreadyExecuted
		default:
			return ErrNotClaimed
		}
		a.Status = to
		a.ExecutedAt = now
		return nil
	}}
}

// Expire closes a pending approval whose decision window has closed at
// now: pending → expired. A decided approval answers with its
// *DecidedError, a pending one not yet lapsed with ErrNotYetExpired.
func Expire(now time.Time) Transition {
	return Transition{step: StepExpire, apply: func(a *Approval) error {
		if a.Status != ApprovalPending {
			return newDecidedError(a)
		}
		if !a.Expired(now) {
			return ErrNotYetExpired
		}
		a.Status = ApprovalExpired
		return nil
	}}
}

// AttachCard records where the approval's card was posted (the bot's
// opaque reference). It is not a step of the lifecycle and applies in
// every status: someone may decide the approval as soon as the card shows,
// before its reference is stored.
func AttachCard(ref json.RawMessage) Transition {
	return Transition{step: StepAttachCard, apply: func(a *Approval) error {
		a.CardRef = ref
		return nil
	}}
}

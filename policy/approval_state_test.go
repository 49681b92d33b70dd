package policy

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

var allApprovalStatuses = []ApprovalStatus{
	ApprovalPending, ApprovalApproved, ApprovalDenied, ApprovalExpired,
	ApprovalExecuting, ApprovalExecuted, ApprovalFailed,
}

// approvalIn returns a test approval as it stands in status, decided by
// U_BOSS a minute after creation where a decision is part of getting there.
func approvalIn(t *testing.T, status ApprovalStatus) *Approval {
	t.Helper()
	a := newTestApproval(t)
	a.Status = status
	if status != ApprovalPending && status != ApprovalExpired {
		a.DecidedBy, a.DecidedAt = "U_BOSS", aT0.Add(time.Minute)
	}
	if status == ApprovalExecuted || status == ApprovalFailed {
		a.ExecutedAt = aT0.Add(2 * time.Minute)
	}
	return a
}

// TestApprovalTransitions applies every step to an approval in every
// status: exactly the arrows of the lifecycle move it, and every other
// pair is refused with a *TransitionError naming the step, the status and
// the reason, leaving the input as it was.
func TestApprovalTransitions(t *testing.T) {
	during := aT0.Add(2 * time.Minute)               // inside the decision window
	lapsed := aT0.Add(DefaultApprovalTTL)            // the window just closed
	late := lapsed.Add(ExecutionGrace + time.Second) // past the execution grace
	approve := DecisionRequest{User: "U_BOSS", Approve: true, Roles: RoleSet{Approver: true},
		Channel: "slack:C1", Level: LevelControlled}
	deny := approve
	deny.Approve, deny.Reason = false, "change freeze; password=hunter2"

	tests := []struct {
		name string
		step Transition
		// at is the step's time when it matters for the check below.
		at   time.Time
		want map[ApprovalStatus]stepWant // every status; none may be missing
	}{
		{name: "approve", step: Decide(approve, during), at: during, want: map[ApprovalStatus]stepWant{
			ApprovalPending:   {to: ApprovalApproved},
			ApprovalApproved:  refusedAs(ErrAlreadyDecided),
			ApprovalDenied:    refusedAs(ErrAlreadyDecided),
			ApprovalExpired:   refusedAs(ErrApprovalExpired),
			ApprovalExecuting: refusedAs(ErrAlreadyDecided),
			ApprovalExecuted:  refusedAs(ErrAlreadyDecided),
			ApprovalFailed:    refusedAs(ErrAlreadyDecided),
		}},
		{name: "deny", step: Decide(deny, during), at: during, want: map[ApprovalStatus]stepWant{
			ApprovalPending:   {to: ApprovalDenied},
			ApprovalApproved:  refusedAs(ErrAlreadyDecided),
			ApprovalDenied:    refusedAs(ErrAlreadyDecided),
			ApprovalExpired:   refusedAs(ErrApprovalExpired),
			ApprovalExecuting: refusedAs(ErrAlreadyDecided),
			ApprovalExecuted:  refusedAs(ErrAlreadyDecided),
			ApprovalFailed:    refusedAs(ErrAlreadyDecided),
		}},
		{name: "approve after the window", step: Decide(approve, lapsed), want: map[ApprovalStatus]stepWant{
			ApprovalPending:   refusedAs(ErrApprovalExpired),
			ApprovalApproved:  refusedAs(ErrAlreadyDecided),
			ApprovalDenied:    refusedAs(ErrAlreadyDecided),
			ApprovalExpired:   refusedAs(ErrApprovalExpired),
			ApprovalExecuting: refusedAs(ErrAlreadyDecided),
			ApprovalExecuted:  refusedAs(ErrAlreadyDecided),
			ApprovalFailed:    refusedAs(ErrAlreadyDecided),
		}},
		{name: "approve by a non-approver", step: Decide(DecisionRequest{User: "U_X", Approve: true,
			Channel: "slack:C1", Level: LevelControlled}, during), want: map[ApprovalStatus]stepWant{
			ApprovalPending:   refusedAs(ErrNotApprover),
			ApprovalApproved:  refusedAs(ErrNotApprover),
			ApprovalDenied:    refusedAs(ErrNotApprover),
			ApprovalExpired:   refusedAs(ErrNotApprover),
			ApprovalExecuting: refusedAs(ErrNotApprover),
			ApprovalExecuted:  refusedAs(ErrNotApprover),
			ApprovalFailed:    refusedAs(ErrNotApprover),
		}},
		{name: "claim", step: ClaimExecution(during), want: map[ApprovalStatus]stepWant{
			ApprovalPending:   refusedAs(ErrNotApproved),
			ApprovalApproved:  {to: ApprovalExecuting},
			ApprovalDenied:    refusedAs(ErrNotApproved),
			ApprovalExpired:   refusedAs(ErrNotApproved),
			ApprovalExecuting: refusedAs(ErrAlreadyClaimed),
			ApprovalExecuted:  refusedAs(ErrAlreadyExecuted),
			ApprovalFailed:    refusedAs(ErrAlreadyExecuted),
		}},
		{name: "claim within the grace", step: ClaimExecution(lapsed.Add(ExecutionGrace)), want: map[ApprovalStatus]stepWant{
			ApprovalPending:   refusedAs(ErrNotApproved),
			ApprovalApproved:  {to: ApprovalExecuting},
			ApprovalDenied:    refusedAs(ErrNotApproved),
			ApprovalExpired:   refusedAs(ErrNotApproved),
			ApprovalExecuting: refusedAs(ErrAlreadyClaimed),
			ApprovalExecuted:  refusedAs(ErrAlreadyExecuted),
			ApprovalFailed:    refusedAs(ErrAlreadyExecuted),
		}},
		{name: "claim past the grace", step: ClaimExecution(late), want: map[ApprovalStatus]stepWant{
			ApprovalPending:   refusedAs(ErrNotApproved),
			ApprovalApproved:  refusedAs(ErrApprovalExpired),
			ApprovalDenied:    refusedAs(ErrNotApproved),
			ApprovalExpired:   refusedAs(ErrNotApproved),
			ApprovalExecuting: refusedAs(ErrAlreadyClaimed),
			ApprovalExecuted:  refusedAs(ErrAlreadyExecuted),
			ApprovalFailed:    refusedAs(ErrAlreadyExecuted),
		}},
		{name: "mark executed", step: MarkExecuted(ApprovalExecuted, during), at: during, want: finishes(ApprovalExecuted)},
		{name: "mark failed", step: MarkExecuted(ApprovalFailed, during), at: during, want: finishes(ApprovalFailed)},
		{name: "settle executed", step: Settle(ApprovalExecuted, late), at: late, want: finishes(ApprovalExecuted)},
		{name: "settle failed", step: Settle(ApprovalFailed, late), at: late, want: finishes(ApprovalFailed)},
		{name: "mark executed as approved", step: MarkExecuted(ApprovalApproved, during), want: everyStatus(refusedAs(ErrNoSuchStep))},
		{name: "settle as pending", step: Settle(ApprovalPending, during), want: everyStatus(refusedAs(ErrNoSuchStep))},
		{name: "expire", step: Expire(lapsed), want: map[ApprovalStatus]stepWant{
			ApprovalPending:   {to: ApprovalExpired},
			ApprovalApproved:  refusedAs(ErrAlreadyDecided),
			ApprovalDenied:    refusedAs(ErrAlreadyDecided),
			ApprovalExpired:   refusedAs(ErrApprovalExpired),
			ApprovalExecuting: refusedAs(ErrAlreadyDecided),
			ApprovalExecuted:  refusedAs(ErrAlreadyDecided),
			ApprovalFailed:    refusedAs(ErrAlreadyDecided),
		}},
		{name: "expire inside the window", step: Expire(during), want: map[ApprovalStatus]stepWant{
			ApprovalPending:   refusedAs(ErrNotYetExpired),
			ApprovalApproved:  refusedAs(ErrAlreadyDecided),
			ApprovalDenied:    refusedAs(ErrAlreadyDecided),
			ApprovalExpired:   refusedAs(ErrApprovalExpired),
			ApprovalExecuting: refusedAs(ErrAlreadyDecided),
			ApprovalExecuted:  refusedAs(ErrAlreadyDecided),
			ApprovalFailed:    refusedAs(ErrAlreadyDecided),
		}},
		{name: "attach card", step: AttachCard(json.RawMessage(`{"id":"m1"}`)), want: map[ApprovalStatus]stepWant{
			ApprovalPending: {to: ApprovalPending}, ApprovalApproved: {to: ApprovalApproved},
			ApprovalDenied: {to: ApprovalDenied}, ApprovalExpired: {to: ApprovalExpired},
			ApprovalExecuting: {to: ApprovalExecuting}, ApprovalExecuted: {to: ApprovalExecuted},
			ApprovalFailed: {to: ApprovalFailed},
		}},
		{name: "zero transition", step: Transition{}, want: everyStatus(refusedAs(ErrNoSuchStep))},
	}
	for _, tt := range tests {
		for _, from := range allApprovalStatuses {
			w, ok := tt.want[from]
			if !ok {
				t.Fatalf("%s: no expectation from %s", tt.name, from)
			}
			t.Run(tt.name+"/from "+string(from), func(t *testing.T) {
				a := approvalIn(t, from)
				before := *a
				got, err := tt.step.Apply(a)
				if !reflect.DeepEqual(*a, before) {
					t.Fatalf("Apply changed its input: %+v", a)
				}
				if w.to == "" {
					var te *TransitionError
					if got != nil || !errors.As(err, &te) || !errors.Is(err, w.err) {
						t.Fatalf("Apply = %+v, %v; want a *TransitionError matching %v", got, err, w.err)
					}
					if te.Step != tt.step.Step() || te.ID != a.ID || te.Status != from ||
						!strings.Contains(err.Error(), string(from)) {
						t.Errorf("refusal names %+v (%q); want step %q, ID %s, status %s", te, err, tt.step.Step(), a.ID, from)
					}
					return
				}
				if err != nil || got == nil || got.Status != w.to {
					t.Fatalf("Apply = %+v, %v; want status %s", got, err, w.to)
				}
				checkMoved(t, tt.step.Step(), a, got, tt.at)
			})
		}
	}
}

// checkMoved checks what a step wrote besides the status, and that it
// wrote nothing else.
func checkMoved(t *testing.T, step Step, from, got *Approval, at time.Time) {
	t.Helper()
	want := *from
	want.Status = got.Status
	switch step {
	case StepDecide:
		want.DecidedBy, want.DecidedAt = "U_BOSS", at
		if got.Status == ApprovalDenied {
			if got.Reason == "" || strings.Contains(got.Reason, "hunter2") {
				t.Errorf("deny reason recorded as %q; want it redacted", got.Reason)
			}
			want.Reason = got.Reason
		}
	case StepMarkExecuted, StepSettle:
		want.ExecutedAt = at
	case StepAttachCard:
		want.CardRef = json.RawMessage(`{"id":"m1"}`)
	}
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("%s wrote\n %+v\nwant\n %+v", step, *got, want)
	}
}

// stepWant is what a step does to an approval in one status.
type stepWant struct {
	to  ApprovalStatus // the status after the step; "" when refused
	err error          // what the refusal matches
}

func refusedAs(err error) stepWant { return stepWant{err: err} }

func everyStatus(w stepWant) map[ApprovalStatus]stepWant {
	m := map[ApprovalStatus]stepWant{}
	for _, s := range allApprovalStatuses {
		m[s] = w
	}
	return m
}

// finishes is the expectation of MarkExecuted and Settle ending in to.
func finishes(to ApprovalStatus) map[ApprovalStatus]stepWant {
	m := everyStatus(refusedAs(ErrNotClaimed))
	m[ApprovalExecuting] = stepWant{to: to}
	m[ApprovalExecuted] = refusedAs(ErrAlreadyExecuted)
	m[ApprovalFailed] = refusedAs(ErrAlreadyExecuted)
	return m
}

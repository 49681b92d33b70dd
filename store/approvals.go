package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/vigilops/vigil/bot"
	"github.com/vigilops/vigil/policy"
)

// ErrContention is returned when an optimistic update lost to concurrent
// writers too many times in a row; the caller may retry later.
var ErrContention = errors.New("too much concurrent contention")

// maxSwapAttempts bounds how often UpdateApproval reads again after losing
// a compare-and-set. Records change only by lifecycle steps, so a retry is
// rare and a second one almost always ends in the step being refused.
const maxSwapAttempts = 16

// LoadApproval reads an approval and the exact bytes it is stored as: the
// version a swap compares against. It returns bot.ErrNotFound when there
// is none.
type LoadApproval func(ctx context.Context) (a *policy.Approval, stored []byte, err error)

// SwapApproval replaces the approval stored as old by next (encoded), in
// one atomic step of the backend. It reports false, changing nothing, when
// the record is no longer old, and bot.ErrNotFound when it is gone.
type SwapApproval func(ctx context.Context, old []byte, next *policy.Approval, encoded []byte) (swapped bool, err error)

// UpdateApproval is the compare-and-set every approval store shares: read
// the record, apply step, and swap the result in only if the record is
// still what was read; otherwise read again. A backend supplies only its
// atomic read and swap (Memory under its mutex, Redis with a script), so
// what "the step applies" means is decided once, here and in policy.
//
// When step does not apply to the approval as it stands, nothing changes
// and it returns the current record with an error matching both
// bot.ErrStatusConflict and the step's *policy.TransitionError. step may
// run more than once, each time on a fresh read; transitions are pure.
func UpdateApproval(ctx context.Context, id string, step policy.Transition, load LoadApproval, swap SwapApproval) (*policy.Approval, error) {
	for range maxSwapAttempts {
		cur, old, err := load(ctx)
		if err != nil {
			return nil, err
		}
		next, err := step.Apply(cur)
		if errors.Is(err, policy.ErrNoSuchStep) {
			return nil, fmt.Errorf("update approval %s: %w", id, err)
		}
		if err != nil {
			return cur, fmt.Errorf("%w: %w", bot.ErrStatusConflict, err)
		}
		encoded, err := json.Marshal(next)
		if err != nil {
			return nil, fmt.Errorf("encode approval %s: %w", id, err)
		}
		swapped, err := swap(ctx, old, next, encoded)
		if err != nil {
			return nil, err
		}
		if swapped {
			return next, nil
		}
		// The record changed under us; look again.
	}
	return nil, fmt.Errorf("update approval %s: %w", id, ErrContention)
}

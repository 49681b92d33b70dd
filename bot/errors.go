package bot

import "errors"

// Store errors. Every store implementation returns these (wrapped or not),
// so the bot can tell "absent" and "someone else got there first" from a
// failure with errors.Is, whatever the backend.
var (
	// ErrNotFound: no session or approval under that key.
	ErrNotFound = errors.New("not found")
	// ErrExists: CreateApproval found a record with the same ID.
	ErrExists = errors.New("already exists")
	// ErrLocked: the lock is held by someone else, or (from Renew and
	// Unlock) this holder lost it.
	ErrLocked = errors.New("locked")
	// ErrStatusConflict: UpdateApproval found the approval in another
	// status than the caller expected; another decision or replica won.
	ErrStatusConflict = errors.New("approval status changed")
)

package transport

import "errors"

// Sentinel errors for the transports. Tools turn them into
// envelopes; callers that wire the package may match them with errors.Is.
var (
	// ErrTimeout: the command ran past its deadline and was killed.
	ErrTimeout = errors.New("command timed out")
	// ErrNoRoute: the resource cannot be reached (no transport of its own
	// and no parent to go through, or a parent that is not in the inventory).
	ErrNoRoute = errors.New("no route to resource")
	// ErrTransport: the transport itself failed (ssh dial or handshake,
	// the shell could not be started); the command may not have run.
	ErrTransport = errors.New("transport failed")
	// ErrNoSandbox: policy required the command to run confined and the
	// machine that would run it offers no sandbox; nothing ran.
	ErrNoSandbox = errors.New("no read sandbox available")
	// ErrIdentity: the host acts as the person (reach.ssh.identity:
	// per_person) and the call has no login it accepts for them; nothing
	// ran.
	ErrIdentity = errors.New("no login for this person on the host")
)

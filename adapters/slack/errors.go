package slack

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
)

var (
	// ErrNoThread is returned for a reply without a channel or thread: vigil
	// only ever speaks in threads.
	ErrNoThread = errors.New("slack: reply needs a channel and a thread")
	// ErrNotSlack is returned for a thread of another platform.
	ErrNotSlack = errors.New("slack: thread belongs to another platform")
	// ErrStarted is returned when Start is called twice.
	ErrStarted = errors.New("slack: adapter already started")
	// ErrBadPayload marks an inbound payload that could not be understood.
	ErrBadPayload = errors.New("slack: malformed payload")
)

// newErrorID returns a short random ID that ties a chat message to a log
// line.
func newErrorID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

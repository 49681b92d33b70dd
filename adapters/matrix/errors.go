package matrix

import "errors"

// ErrNotStarted is returned by calls that need a logged-in client when
// Start has not logged in before the call's deadline.
var ErrNotStarted = errors.New("matrix: adapter not started (Start logs in)")

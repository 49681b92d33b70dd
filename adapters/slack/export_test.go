package slack

import "time"

// SetPacing sets the per-channel interval between posts, so the external
// end-to-end tests need not wait a second per message.
func SetPacing(a *Adapter, d time.Duration) { a.out.interval = d }

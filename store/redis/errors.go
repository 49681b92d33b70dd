package redis

import "errors"

// ErrQuota is returned when a plugin namespace would exceed its limits
// (number of entries, key or value size).
var ErrQuota = errors.New("plugin storage quota exceeded")

// ErrContention is returned when an optimistic update lost to concurrent
// writers too many times in a row; the caller may retry later.
var ErrContention = errors.New("too much concurrent contention")

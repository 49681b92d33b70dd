package redis

import (
	"errors"

	"github.com/vigilops/vigil/store"
)

// ErrQuota is returned when a plugin namespace would exceed its limits
// (number of entries, key or value size).
var ErrQuota = errors.New("plugin storage quota exceeded")

// ErrContention is returned when an optimistic update lost to concurrent
// writers too many times in a row; the caller may retry later. It is the
// memory store's error too.
var ErrContention = store.ErrContention

//go:build !unix

package dendrite

import "context"

// lockFile is a no-op where flock is unavailable; parallel builds then
// merely duplicate work (the install is a rename).
func lockFile(context.Context, string) (func(), error) { return func() {}, nil }

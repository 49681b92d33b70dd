//go:build tools

// Package tools pins the Dendrite homeserver used by the Matrix adapter's
// integration tests. It is a separate module so that the main module's
// dependency graph never contains Dendrite.
package tools

import (
	_ "github.com/matrix-org/dendrite/cmd/create-account"
	_ "github.com/matrix-org/dendrite/cmd/dendrite"
	_ "github.com/matrix-org/dendrite/cmd/generate-keys"
)

package main

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/vigilops/vigil/tools/sandbox"
)

// TestMain lets the test binary stand in for vigil itself: startup tests
// run it as a child process to see what a user would see on the real
// stderr (VIGIL_TEST_AS_MAIN=1), and the sandbox tests run it as
// `vigil sandbox-exec` through the real command tree.
func TestMain(m *testing.M) {
	if os.Getenv("VIGIL_TEST_AS_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	if len(os.Args) > 1 && os.Args[1] == sandbox.Subcommand {
		err := run(context.Background(), os.Args[1:])
		var ee exitError
		if errors.As(err, &ee) {
			os.Exit(ee.code)
		}
		os.Exit(1)
	}
	os.Exit(m.Run())
}

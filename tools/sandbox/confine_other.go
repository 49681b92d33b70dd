//go:build !linux

package sandbox

import (
	"fmt"
	"io"
	"os/exec"
)

// ABI is 0: Landlock is a Linux feature.
func ABI() int { return 0 }

// Start starts c unconfined when s allows best effort, and refuses
// otherwise: the read sandbox needs Linux.
func Start(c *exec.Cmd, s Spec) (Report, error) {
	if !s.BestEffort {
		return Report{}, fmt.Errorf("%w: the read sandbox needs Linux (Landlock)", ErrRefused)
	}
	return Report{Note: "the read sandbox needs Linux (Landlock)"}, c.Start()
}

// Main refuses: the sandbox needs Linux.
func Main(args []string, stderr io.Writer) int {
	fmt.Fprintln(stderr, "sandbox: the read sandbox needs Linux (Landlock)")
	return 126
}

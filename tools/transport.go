package tools

import (
	"context"
	"io"
	"time"
)

// Executor runs a shell command on an inventory resource. cmd is one shell
// command line, run by /bin/sh on the machine that finally executes it; it is
// the string policy classified. stdin may be nil.
//
// A command that ran and exited non-zero is not an error: the exit code is in
// the result. Errors mean the command did not run to completion: no route,
// transport failure (ErrTransport), timeout (ErrTimeout, with the output up
// to then in the result), or the caller's context ending.
type Executor interface {
	Run(ctx context.Context, res Resource, cmd string, stdin io.Reader) (ExecResult, error)
}

// ExecResult is what one command produced.
type ExecResult struct {
	// Stdout holds at most the output cap; when more was written it ends
	// with a truncation notice and Truncated is set.
	Stdout string
	// Stderr is capped the same way, at a smaller cap.
	Stderr string
	// ExitCode is the command's exit status; -1 when it did not exit by
	// itself (killed at the timeout, or by a signal).
	ExitCode  int
	Truncated bool
	// StdoutBytes is how much the command wrote to stdout in all.
	StdoutBytes int64
	Duration    time.Duration
}

// Limits bound every command a transport runs (SPEC T4).
type Limits struct {
	// Timeout is the longest a command may run; 0 means DefaultTimeout.
	Timeout time.Duration
	// OutputCap is the most stdout returned; 0 means DefaultOutputCap.
	OutputCap int
}

func (l Limits) timeout() time.Duration {
	if l.Timeout > 0 {
		return l.Timeout
	}
	return DefaultTimeout
}

func (l Limits) outputCap() int {
	if l.OutputCap > 0 {
		return l.OutputCap
	}
	return DefaultOutputCap
}

// stderrCap is the cap for stderr: a quarter of the output cap, at least 4 KiB.
func (l Limits) stderrCap() int { return max(l.outputCap()/4, 4096) }

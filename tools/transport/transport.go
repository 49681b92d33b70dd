// Package transport runs commands on resources: locally under vigil's own
// sandbox, over SSH (inside bubblewrap when a read must be confined), and
// through a resource's parents (pct, qm, docker, kubectl exec) via the
// Router, with output caps, timeouts and the read-only environment.
package transport

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/policy/command"
	"github.com/vigilops/vigil/tools"
	"github.com/vigilops/vigil/tools/inventory"
)

// Executor runs a shell command on an inventory resource, as policy
// authorised it: with the shell the command was classified for, and confined
// or not as policy said. stdin may be nil.
//
// A command that ran and exited non-zero is not an error: the exit code is in
// the result. Errors mean the command did not run to completion: no route,
// transport failure (ErrTransport), a sandbox policy required and the target
// lacks (ErrNoSandbox), timeout (ErrTimeout, with the output up to then in
// the result), or the caller's context ending.
type Executor interface {
	Run(ctx context.Context, res inventory.Resource, spec RunSpec, stdin io.Reader) (ExecResult, error)
}

// RunSpec is one command as policy authorised it.
type RunSpec struct {
	// Command is one shell command line, exactly the string policy saw.
	Command string
	// Actor is whose identity the command uses on hosts that act as the
	// person (reach.ssh.identity: per_person); nil when no identity
	// mapping is configured (tools.Proposal.Actor). Other hosts ignore it.
	Actor *policy.Actor
	// Execution is policy's instruction: the shell (the target's when
	// empty), the sandbox requirement and whether it may use the network.
	policy.Execution
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
	// Sandbox is the confinement the command ran under.
	Sandbox tools.Sandbox
	// ActedAs is the login used when the host acts as the person ("ssh
	// user alice on web1"); "" when it was the inventory's.
	ActedAs string
}

// unconfined is the Sandbox of a command that ran without one.
func unconfined(shell command.Dialect, why string, a ...any) tools.Sandbox {
	return tools.Sandbox{Mechanism: tools.SandboxNone, Detail: fmt.Sprintf(why, a...), Shell: shell}
}

// Job is one command for a transport.
type Job struct {
	// Command runs as Shell -c Command; "" Shell means bash.
	Command string
	Shell   command.Dialect
	// Confined runs it in the transport's sandbox (Landlock locally, bwrap
	// over SSH). Network lets it reach the network: locally TCP to Ports
	// only and datagrams only with Datagrams (policy.Execution says why);
	// under bwrap, without Network, an empty network namespace.
	Confined  bool
	Network   bool
	Ports     []int
	Datagrams bool
	// BestEffort accepts a partial or failed sandbox (locally), reporting
	// what applied, instead of refusing to run.
	BestEffort bool
	// Write runs a change: without the read environment (readOnlyEnv).
	Write bool
}

func (j Job) shell() command.Dialect {
	if j.Shell == "" {
		return command.DialectBash
	}
	return j.Shell
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
	return tools.DefaultTimeout
}

func (l Limits) outputCap() int {
	if l.OutputCap > 0 {
		return l.OutputCap
	}
	return tools.DefaultOutputCap
}

// stderrCap is the cap for stderr: a quarter of the output cap, at least 4 KiB.
func (l Limits) stderrCap() int { return max(l.outputCap()/4, 4096) }

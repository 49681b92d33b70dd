// Package builtin holds the six tools vigil always offers: query and
// discover (the inventory), read (commands, files and logs, confined),
// control (services, guests, commands), file_edit and knowledge. Each is a
// tools.Typed tool over its argument struct; the commands they build run
// through a transport.Executor.
package builtin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools"
	"github.com/vigilops/vigil/tools/inventory"
	"github.com/vigilops/vigil/tools/transport"
)

// Builtins returns the built-in tools of SPEC T2 that this package provides,
// in the order they are offered to the model.
func Tools(inv *inventory.Inventory, x transport.Executor, mem MemoryStore) []tools.Tool {
	return []tools.Tool{
		NewQueryTool(inv, x),
		NewDiscoverTool(inv, x),
		NewReadTool(inv, x),
		NewControlTool(inv, x),
		NewFileEditTool(inv, x),
		NewKnowledgeTool(mem),
	}
}

// CommandData is the envelope data of a tool that ran a command.
type CommandData struct {
	Target    string `json:"target"`
	Command   string `json:"command"`
	ExitCode  int    `json:"exit_code"`
	Output    string `json:"output"`
	Stderr    string `json:"stderr,omitempty"`
	Truncated bool   `json:"truncated"`
}

// specOf is cmd as p's policy decision lets it run.
func specOf(p tools.Proposal, cmd string) transport.RunSpec {
	return transport.RunSpec{Command: cmd, Execution: p.Execution, Actor: p.Actor}
}

// stderrTailBytes is how much of stderr an EXECUTION_FAILED message quotes.
const stderrTailBytes = 400

// runCommand runs spec on res and turns the outcome into a Result: OK with
// the output for exit code 0; EXECUTION_FAILED with the exit code, the
// stderr tail and the output still included otherwise; POLICY_BLOCKED when
// policy required a sandbox the target lacks. A confined command that
// failed the way a sandbox refusal looks says so.
func runCommand(ctx context.Context, x transport.Executor, res inventory.Resource, target string, spec transport.RunSpec, stdin io.Reader) tools.Result {
	out, err := x.Run(ctx, res, spec, stdin)
	data := CommandData{
		Target:    target,
		Command:   spec.Command,
		ExitCode:  out.ExitCode,
		Output:    out.Stdout,
		Stderr:    out.Stderr,
		Truncated: out.Truncated,
	}
	r := tools.Result{Output: traceOutput(out), ActedAs: out.ActedAs}
	meta := map[string]any{"duration_ms": out.Duration.Milliseconds(), "resource_id": string(res.ID)}
	if out.Sandbox.Mechanism != "" {
		sb := out.Sandbox
		r.Sandbox = &sb
		meta["sandbox"] = sb
	}
	switch {
	case errors.Is(err, transport.ErrNoSandbox):
		r.Envelope = noSandbox(err, spec)
	case errors.Is(err, transport.ErrIdentity):
		r.Envelope = tools.FailedWith(policy.CodeActionNotAllowed, "not run: "+err.Error(),
			"do not retry on this host; tell the user it runs commands only as each person's own mapped login", nil)
	case err != nil:
		r.Envelope = execFailed(data, err)
	case out.ExitCode != 0:
		msg := fmt.Sprintf("command exited with status %d", out.ExitCode)
		if t := strings.TrimSpace(transport.Tail(out.Stderr, stderrTailBytes)); t != "" {
			msg += ": " + t
		}
		hint := "read the error and the output, then correct the command or try another approach"
		details := map[string]any{
			"exit_code":        out.ExitCode,
			"stderr_tail":      transport.Tail(out.Stderr, stderrTailBytes),
			"auto_recoverable": false,
		}
		if sandboxRefusal(out.Sandbox, out.Stderr) {
			msg += fmt.Sprintf(" — the read sandbox (%s) refused it: a read may not write files (but to /dev/null and a private temp dir), "+
				"signal or reach other processes, or open network connections it was not cleared for", out.Sandbox.Mechanism)
			hint = "if the command must change something, propose it with the control tool (it needs approval); otherwise use a read-only command"
			details["sandbox_refused"] = true
		}
		details["recovery_hint"] = hint
		r.Envelope = tools.Envelope{Data: data, Error: &tools.ErrorInfo{
			Code:    policy.CodeExecutionFailed,
			Message: msg,
			Failed:  true,
			Details: details,
		}}
	default:
		r.Envelope = tools.OK(data)
	}
	r.Envelope.Meta = meta
	return r
}

// sandboxRefusals are the errors a confined command reports when its
// sandbox refuses a change: Landlock and seccomp answer EACCES or EPERM, a
// read-only bind EROFS, a PID namespace ESRCH for outside processes.
var sandboxRefusals = []string{"Permission denied", "Operation not permitted", "Read-only file system", "No such process"}

// netnsRefusals are what a connection from an empty network namespace
// (bwrap without network) gets.
var netnsRefusals = []string{"Network is unreachable", "Connection refused"}

// sandboxRefusal reports whether a confined command's stderr looks like
// its sandbox refused something.
func sandboxRefusal(sb tools.Sandbox, stderr string) bool {
	if !sb.Confined() {
		return false
	}
	refusals := sandboxRefusals
	if sb.Mechanism == tools.SandboxBwrap && !sb.Network {
		refusals = append(slices.Clip(refusals), netnsRefusals...)
	}
	for _, s := range refusals {
		if strings.Contains(stderr, s) {
			return true
		}
	}
	return false
}

// noSandbox is the envelope for a command policy allowed only inside a
// sandbox the target does not offer: nothing ran.
func noSandbox(err error, spec transport.RunSpec) tools.Envelope {
	b := &policy.Block{
		Code:         policy.CodePolicyBlocked,
		Message:      fmt.Sprintf("not run: policy.read_sandbox is required, and %v", err),
		RecoveryHint: "propose the command with the control tool (action command); it then needs approval like any change",
	}
	if spec.Declared != "" {
		b.Message = fmt.Sprintf("not run: this command is read-only only by policy.read_only_commands (%q), which holds only inside the read sandbox, and %v",
			spec.Declared, err)
		b.Details = map[string]any{"declared": spec.Declared}
	}
	return tools.Blocked(b)
}

// execFailed is the envelope for a command that did not run to completion.
func execFailed(data any, err error) tools.Envelope {
	var msg, hint string
	retryable := false
	switch {
	case errors.Is(err, transport.ErrTimeout):
		msg = err.Error() + "; the output up to then is included"
		hint = "narrow the command (fewer lines, a smaller path, a count) so it finishes in time"
	case errors.Is(err, transport.ErrNoRoute):
		msg = err.Error()
		hint = "check the resource's reach in the inventory; use query action=topology to see the route"
	case errors.Is(err, transport.ErrTransport):
		msg = err.Error()
		hint = "the resource may be down or unreachable; try query action=health"
		retryable = true
	case errors.Is(err, context.Canceled):
		msg = "the run was cancelled before the command finished"
	default:
		msg = err.Error()
	}
	details := map[string]any{"auto_recoverable": false}
	if hint != "" {
		details["recovery_hint"] = hint
	}
	return tools.Envelope{Data: data, Error: &tools.ErrorInfo{
		Code:      policy.CodeExecutionFailed,
		Message:   msg,
		Failed:    true,
		Retryable: retryable,
		Details:   details,
	}}
}

// traceOutput is a command's output as a trace shows it.
func traceOutput(r transport.ExecResult) string {
	if r.Stderr == "" {
		return r.Stdout
	}
	if r.Stdout == "" {
		return r.Stderr
	}
	return r.Stdout + "\n[stderr]\n" + r.Stderr
}

// checkTarget validates a target argument's form; the inventory lookup
// happens when the call is planned.
func checkTarget(field, v string) error {
	if err := tools.CheckText(field, v, true); err != nil {
		return err
	}
	if len(v) > 256 {
		return tools.FieldErrorf(field, "longer than 256 characters")
	}
	return nil
}

// checkPath validates a path argument: absolute, one line, no NUL.
func checkPath(field, p string) error {
	if err := tools.CheckText(field, p, true); err != nil {
		return err
	}
	if !strings.HasPrefix(p, "/") {
		return tools.FieldErrorf(field, "must be an absolute path (starting with /), got %q", p)
	}
	if len(p) > 4096 {
		return tools.FieldErrorf(field, "longer than 4096 characters")
	}
	return nil
}

// unitPattern is a systemd unit name (also accepted for a container name in
// logs).
var unitPattern = regexp.MustCompile(`^[A-Za-z0-9@._:\\-]{1,255}$`)

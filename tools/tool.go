// Package tools is the tool protocol: the Tool interface and Typed, the
// registry, strict argument decoding with derived schemas, and the result
// envelope. The tools themselves live beside it (tools/builtin, tools/kube,
// tools/metrics, ...), as do the inventory (tools/inventory) and the
// transports that reach resources (tools/transport).
//
// Tools never check permissions: every call passes through one policy
// decision in the agent before Execute is called.
package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/vigilops/vigil/policy"
)

// Spec is what the model is told about a tool.
type Spec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"` // JSON Schema of the arguments
	// Kinds declares what each action of the tool does (resolve, read or
	// write). The registry stamps every proposal with the declared kind;
	// policy treats whatever is undeclared as a write. It is not sent to
	// the model.
	Kinds policy.ActionKinds `json:"-"`
}

// Proposal is a call decoded strictly from the model's arguments, before any
// policy check. Args holds the tool's argument struct as decoded (Typed sets
// it); Execute receives the same Proposal back.
type Proposal struct {
	policy.Action
	// Summary is a one-line description for people, e.g.
	// "restart service nginx on web1".
	Summary string `json:"summary"`
	// Details spell out the exact change of a write, line by line
	// (matchers, duration; cluster, namespace, object, replicas), for its
	// approval card. Tools that run a shell command show it as Command and
	// may leave this empty.
	Details []policy.ChangeDetail `json:"details,omitempty"`
	Args    any                   `json:"-"`
	// Execution is policy's instruction for running the call (shell,
	// sandbox, network), copied from the Decision by the agent before
	// Execute. The zero value means a best-effort sandbox.
	Execution policy.Execution `json:"-"`
	// ApprovedBy is the person who approved this call, set by the agent
	// when it runs an approved call and empty otherwise. A tool that
	// records who made a change (an Alertmanager silence's created_by)
	// takes it from here.
	ApprovedBy string `json:"-"`
	// Basis is the state of the target the approver was shown the change
	// against (Preview.Basis, as the approval binds it), set by the agent
	// when it runs an approved call whose tool previewed it; "" otherwise.
	// A tool given one changes nothing unless its target still matches it.
	Basis string `json:"-"`
	// Actor is whose identity the call uses on its target (policy
	// identity mapping): the asker's for reads, the approver's for an
	// approved change; set by the agent. Nil when no mapping is
	// configured: the tool acts with vigil's own credentials.
	Actor *policy.Actor `json:"-"`
}

// Result is what one execution produced: the envelope the model reads and the
// resources the call discovered, which the agent adds to the session's
// resolved context.
type Result struct {
	Envelope Envelope
	// Resolved lists resources this call found.
	Resolved []policy.Resource
	// Explicit marks a single-resource lookup (get one, discover one): such a
	// resource counts as explicitly accessed for routing validation.
	Explicit bool
	// Output is the raw command output before truncation, for traces. Empty
	// when the tool ran no command.
	Output string
	// Sandbox is the confinement the command ran under; nil when the tool
	// ran no command.
	Sandbox *Sandbox
	// ActedAs names the identity the call used on its target when it was
	// not vigil's own ("k8s user alice, groups sre", "ssh user alice"),
	// for the audit record; "" otherwise.
	ActedAs string
}

// Tool is one capability offered to the model.
type Tool interface {
	Spec() Spec
	// Propose decodes raw arguments strictly (unknown fields, wrong types and
	// missing required fields are INVALID_INPUT naming the field) and says
	// what the call would do.
	Propose(raw json.RawMessage) (Proposal, *policy.Block)
	// Execute runs an authorised proposal. It must honour ctx and never
	// panic; failures are envelopes, not errors.
	Execute(ctx context.Context, p Proposal) Result
}

// Previewer is the optional power of a tool whose write depends on what
// its target holds now (a file's content): it shows the change against
// that, for the approval card. The agent finds it by type assertion when a
// call stops for approval.
type Previewer interface {
	// Preview returns the card's change lines for p. What it needs to know
	// of the target it asks read for: a read call of the same tool, on the
	// same target and path, which the agent puts through policy and runs
	// like the model's own reads. Preview must not fail: when the read is
	// refused or tells it nothing, it shows the change without a basis
	// and says why.
	Preview(ctx context.Context, p Proposal, read ReadFunc) Preview
}

// ReadFunc runs a read call (the tool's own arguments) for a Previewer.
type ReadFunc func(ctx context.Context, args json.RawMessage) PreviewRead

// PreviewRead is the outcome of a Previewer's read.
type PreviewRead struct {
	// Result is what the read returned; meaningful when Refused is "".
	Result Result
	// Refused says why the read did not run: policy refused it, it was not
	// a read of the same target and path, or it would need approval.
	Refused string
	// At is when it ran (or was refused), by the agent's clock.
	At time.Time
}

// Preview is how a write will change its target, for the approval card.
type Preview struct {
	// Details replace the proposal's change lines on the card.
	Details []policy.ChangeDetail
	// Basis names the state of the target Details were computed against,
	// as one line the card shows ("the file as read at …, sha256 …"); ""
	// when the tool could not read it. The approval binds it and the call
	// runs with it as Proposal.Basis.
	Basis string
}

// DefaultTimeout bounds a command when the tool or config gives no other.
const DefaultTimeout = 30 * time.Second

// DefaultOutputCap bounds the output a command may return to the model.
const DefaultOutputCap = 64 * 1024

// badProposal is the Result for an Execute called with a proposal this tool
// did not make (wrong argument type, or a command that no longer matches what
// the arguments produce). It is a programming error upstream; the tool refuses
// rather than run something policy did not see.
func BadProposal(tool string, p Proposal, why string) Result {
	return Result{Envelope: FailedWith(policy.CodeExecutionFailed,
		fmt.Sprintf("%s: refusing to run a proposal it did not make (%s)", tool, why), "", nil)}
}

package tools

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/vigilops/vigil/policy"
)

// ToolOf is a tool written against its argument struct A, the way eino's
// InferTool builds a tool from a typed function: Typed turns it into a Tool
// that derives the JSON Schema from A, decodes the model's arguments into A
// once and strictly (DecodeArgs), and gives Run the very value Plan saw. A
// tool so written never handles raw JSON and never re-asserts its arguments.
type ToolOf[A any] interface {
	// Spec says what the model is told. Parameters may be left empty:
	// Typed derives them from A.
	Spec() Spec
	// Plan says what a call with arguments a would do, or refuses it.
	// Proposal.Args need not be set: Typed sets it to a.
	Plan(a A) (Proposal, *policy.Block)
	// Run executes an authorised call; a is the value Plan was given. It
	// must honour ctx and never panic; failures are envelopes.
	Run(ctx context.Context, a A, p Proposal) Result
}

// PreviewerOf is Previewer for a ToolOf: Preview receives the decoded
// arguments of the proposal it shows.
type PreviewerOf[A any] interface {
	Preview(ctx context.Context, a A, p Proposal, read ReadFunc) Preview
}

// Typed is the Tool that runs t. Its schema is derived from A once, here;
// an A the schema deriver cannot describe is a programming error every
// test run catches, so it panics like regexp.MustCompile. When t is a
// PreviewerOf[A], the Tool is a Previewer.
func Typed[A any](t ToolOf[A]) Tool {
	spec := t.Spec()
	spec.Parameters = MustSchema[A]()
	tt := &typed[A]{t: t, spec: spec}
	if pv, ok := t.(PreviewerOf[A]); ok {
		return &typedPreviewer[A]{typed: tt, pv: pv}
	}
	return tt
}

type typed[A any] struct {
	t    ToolOf[A]
	spec Spec
}

func (t *typed[A]) Spec() Spec { return t.spec }

// Propose decodes raw into A and plans the call. The proposal carries the
// decoded A as Args, which is how Execute gets it back.
func (t *typed[A]) Propose(raw json.RawMessage) (Proposal, *policy.Block) {
	a, b := DecodeArgs[A](raw)
	if b != nil {
		return Proposal{Action: policy.Action{Tool: t.spec.Name}}, b
	}
	p, b := t.t.Plan(a)
	p.Args = a
	return p, b
}

// Execute runs a proposal this tool made; any other is refused (BadProposal)
// rather than run with arguments policy did not see.
func (t *typed[A]) Execute(ctx context.Context, p Proposal) Result {
	a, ok := t.args(p)
	if !ok {
		return BadProposal(t.spec.Name, p, fmt.Sprintf("arguments of type %T", p.Args))
	}
	return t.t.Run(ctx, a, p)
}

func (t *typed[A]) args(p Proposal) (A, bool) {
	a, ok := p.Args.(A)
	return a, ok
}

// typedPreviewer is a typed tool that previews its writes.
type typedPreviewer[A any] struct {
	*typed[A]
	pv PreviewerOf[A]
}

// Preview shows the change of a proposal this tool made; for any other it
// keeps the proposal's own change lines.
func (t *typedPreviewer[A]) Preview(ctx context.Context, p Proposal, read ReadFunc) Preview {
	a, ok := t.args(p)
	if !ok {
		return Preview{Details: p.Details}
	}
	return t.pv.Preview(ctx, a, p, read)
}

var _ Previewer = (*typedPreviewer[struct{}])(nil)

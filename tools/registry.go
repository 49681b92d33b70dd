package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/vigilops/vigil/policy"
)

// Registry holds the tools offered to the model, in the order they were
// registered. It is built once at start and read-only afterwards, so it is
// safe for concurrent use.
type Registry struct {
	tools []Tool
	// specs are computed once: deriving schemas is far more work than a
	// model turn's own bookkeeping, and they never change.
	specs []Spec
	index map[string]int
}

// NewRegistry registers ts in order. Empty and duplicate names are errors:
// two tools answering to one name would make the model's call ambiguous.
func NewRegistry(ts ...Tool) (*Registry, error) {
	r := &Registry{index: make(map[string]int, len(ts))}
	var errs []error
	for _, t := range ts {
		if t == nil {
			errs = append(errs, errors.New("register tool: nil tool"))
			continue
		}
		spec := t.Spec()
		name := spec.Name
		if name == "" {
			errs = append(errs, fmt.Errorf("register tool %T: empty name", t))
			continue
		}
		if !spec.Kinds.Valid() {
			errs = append(errs, fmt.Errorf("register tool %q: it must declare one known kind for every call or for each action", name))
			continue
		}
		if _, dup := r.index[name]; dup {
			errs = append(errs, fmt.Errorf("register tool %q: duplicate name", name))
			continue
		}
		r.index[name] = len(r.tools)
		r.tools = append(r.tools, t)
		r.specs = append(r.specs, spec)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return r, nil
}

// Get returns the tool registered under name.
func (r *Registry) Get(name string) (Tool, bool) {
	i, ok := r.index[name]
	if !ok {
		return nil, false
	}
	return r.tools[i], true
}

// Names lists the registered tool names in registration order.
func (r *Registry) Names() []string {
	out := make([]string, len(r.specs))
	for i, s := range r.specs {
		out[i] = s.Name
	}
	return out
}

// Specs returns every tool's spec in registration order. The slice is
// shared: callers must not modify it.
func (r *Registry) Specs() []Spec { return r.specs }

// Propose decodes a call to the named tool. An unknown tool is refused with
// ACTION_NOT_ALLOWED listing the tools that exist; its proposal still carries
// the name and kind write (SPEC A4: unknown tools classify as write), so the
// agent can record and count it like any other refused call.
//
// The registry also holds tools to their contract: the proposal names the
// tool that was called, and its kind is the one the tool declared for the
// action in its spec (policy makes anything undeclared a write), whatever the
// tool's Propose set.
func (r *Registry) Propose(name string, raw json.RawMessage) (Proposal, *policy.Block) {
	t, ok := r.Get(name)
	if !ok {
		p := Proposal{Action: policy.Action{Tool: name, Kind: policy.KindWrite}, Summary: "unknown tool " + name}
		return p, &policy.Block{
			Code:         policy.CodeActionNotAllowed,
			Message:      fmt.Sprintf("there is no tool named %q; the tools are: %s", name, strings.Join(r.Names(), ", ")),
			RecoveryHint: "call one of the listed tools",
			Details:      map[string]any{"tool": name, "known_tools": r.Names()},
		}
	}
	p, b := t.Propose(raw)
	p.Tool = name
	p.Kind = r.specs[r.index[name]].Kinds.KindOf(p.Name)
	return p, b
}

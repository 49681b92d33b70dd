package tools

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/vigilops/vigil/policy"
)

// stubTool is a tool with a fixed name and kind.
type stubTool struct {
	name string
	kind policy.Kind
}

func (s stubTool) Spec() Spec { return Spec{Name: s.name, Parameters: json.RawMessage(`{}`)} }
func (s stubTool) Propose(json.RawMessage) (Proposal, *policy.Block) {
	return Proposal{Action: policy.Action{Kind: s.kind}}, nil
}
func (s stubTool) Execute(context.Context, Proposal) Result { return Result{Envelope: OK(nil)} }

func TestRegistryDuplicates(t *testing.T) {
	_, err := NewRegistry(stubTool{name: "a"}, stubTool{name: "b"}, stubTool{name: "a"})
	if err == nil || !strings.Contains(err.Error(), `"a": duplicate`) {
		t.Fatalf("NewRegistry with a duplicate: err = %v", err)
	}
	if _, err := NewRegistry(stubTool{name: ""}); err == nil {
		t.Fatal("NewRegistry accepted an empty name")
	}
	if _, err := NewRegistry(append(builtinsForSpecs(), builtinsForSpecs()[2])...); err == nil || !strings.Contains(err.Error(), `"read"`) {
		t.Fatalf("duplicate built-in: err = %v", err)
	}
}

func TestRegistryLookupAndOrder(t *testing.T) {
	r, err := NewRegistry(builtinsForSpecs()...)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"query", "discover", "read", "control", "file_edit", "knowledge"}
	if got := r.Names(); !slices.Equal(got, want) {
		t.Errorf("Names = %v, want %v", got, want)
	}
	for i, s := range r.Specs() {
		if s.Name != want[i] {
			t.Errorf("Specs[%d] = %s, want %s", i, s.Name, want[i])
		}
	}
	if tl, ok := r.Get("read"); !ok || tl.Spec().Name != "read" {
		t.Errorf("Get(read) = %v, %v", tl, ok)
	}
	if _, ok := r.Get("nope"); ok {
		t.Error("Get(nope) found something")
	}
}

func TestRegistryProposeUnknownTool(t *testing.T) {
	r, err := NewRegistry(builtinsForSpecs()...)
	if err != nil {
		t.Fatal(err)
	}
	p, b := r.Propose("shell", json.RawMessage(`{"cmd":"ls"}`))
	if b == nil || b.Code != policy.CodeActionNotAllowed {
		t.Fatalf("block = %v, want ACTION_NOT_ALLOWED", b)
	}
	if !strings.Contains(b.Message, "query, discover, read, control, file_edit, knowledge") {
		t.Errorf("message does not list the tools: %q", b.Message)
	}
	if p.Kind != policy.KindWrite || p.Tool != "shell" {
		t.Errorf("proposal = %+v, want tool shell of kind write", p.Action)
	}
}

func TestRegistryProposeFillsContract(t *testing.T) {
	r, err := NewRegistry(stubTool{name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	p, b := r.Propose("x", nil)
	if b != nil {
		t.Fatal(b)
	}
	if p.Tool != "x" || p.Kind != policy.KindWrite {
		t.Errorf("proposal = %+v; want tool x, missing kind filled as write", p.Action)
	}
}

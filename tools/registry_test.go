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
	name  string
	kinds policy.ActionKinds
	// claims is the kind the tool's own Propose sets, which the registry
	// must ignore in favour of the declaration.
	claims policy.Kind
	action string
}

func (s stubTool) Spec() Spec {
	k := s.kinds
	if k.Every == "" && k.Actions == nil {
		k = policy.ActionKinds{Every: policy.KindWrite}
	}
	return Spec{Name: s.name, Parameters: json.RawMessage(`{}`), Kinds: k}
}
func (s stubTool) Propose(json.RawMessage) (Proposal, *policy.Block) {
	return Proposal{Action: policy.Action{Kind: s.claims, Name: s.action}}, nil
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
	if _, err := NewRegistry(stubTool{name: "query"}, stubTool{name: "read"}, stubTool{name: "read"}); err == nil || !strings.Contains(err.Error(), `"read"`) {
		t.Fatalf("duplicate built-in: err = %v", err)
	}
}

func TestRegistryLookupAndOrder(t *testing.T) {
	want := []string{"query", "discover", "read", "control", "file_edit", "knowledge"}
	var ts []Tool
	for _, n := range want {
		ts = append(ts, stubTool{name: n})
	}
	r, err := NewRegistry(ts...)
	if err != nil {
		t.Fatal(err)
	}
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
	var ts []Tool
	for _, n := range []string{"query", "discover", "read", "control", "file_edit", "knowledge"} {
		ts = append(ts, stubTool{name: n})
	}
	r, err := NewRegistry(ts...)
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
	r, err := NewRegistry(
		stubTool{name: "x"},
		stubTool{name: "liar", claims: policy.KindRead},
		stubTool{name: "act", action: "look", kinds: policy.ActionKinds{Actions: map[string]policy.Kind{"look": policy.KindRead}}},
		stubTool{name: "undeclared", action: "poke", claims: policy.KindRead, kinds: policy.ActionKinds{Actions: map[string]policy.Kind{"look": policy.KindRead}}},
	)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]policy.Kind{
		"x": policy.KindWrite, "liar": policy.KindWrite, "act": policy.KindRead, "undeclared": policy.KindWrite,
	} {
		p, b := r.Propose(name, nil)
		if b != nil {
			t.Fatal(b)
		}
		if p.Tool != name || p.Kind != want {
			t.Errorf("proposal = %+v; want tool %s of the declared kind %s", p.Action, name, want)
		}
	}
}

func TestRegistryRefusesToolsWithoutDeclaredKinds(t *testing.T) {
	bad := []policy.ActionKinds{
		{Every: "observe"},
		{Every: policy.KindRead, Actions: map[string]policy.Kind{"a": policy.KindRead}},
		{Actions: map[string]policy.Kind{"a": "peek"}},
	}
	for _, k := range bad {
		if _, err := NewRegistry(stubTool{name: "t", kinds: k}); err == nil || !strings.Contains(err.Error(), "declare") {
			t.Errorf("kinds %+v: err = %v, want a refusal naming the declaration", k, err)
		}
	}
}

package agent_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools"
	"github.com/vigilops/vigil/tools/builtin"
	"github.com/vigilops/vigil/tools/inventory"
	"github.com/vigilops/vigil/tools/transport"
)

// fileExec answers every command with one file's content, and records the
// commands it ran and how.
type fileExec struct {
	mu      sync.Mutex
	content string
	runs    []transport.RunSpec
}

func (x *fileExec) Run(_ context.Context, _ inventory.Resource, spec transport.RunSpec, _ io.Reader) (transport.ExecResult, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.runs = append(x.runs, spec)
	return transport.ExecResult{Stdout: x.content}, nil
}

func registryWith(t *testing.T, x transport.Executor, replace tools.Tool) *tools.Registry {
	t.Helper()
	var ts []tools.Tool
	for _, tool := range builtin.Tools(inventory.Default(), x, builtin.NewMemoryStore()) {
		if replace != nil && tool.Spec().Name == replace.Spec().Name {
			tool = replace
		}
		ts = append(ts, tool)
	}
	reg, err := tools.NewRegistry(ts...)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func fileEditCall(id, action, path, content string) agent.ModelResponse {
	raw, _ := json.Marshal(builtin.FileEditArgs{Action: builtin.FileEditAction(action), Target: "localhost", Path: path, Content: content})
	return call(id, "file_edit", string(raw))
}

// A write stopped for approval is shown against the file as the tool's own
// read finds it: one read, decided by policy as a read (sandboxed, in the
// read environment), whose output reaches the card and nothing else. The
// approved call runs with the basis of that read.
func TestApprovalPreviewReadsThroughPolicy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.conf")
	old := "PORT=1\nold=1\n"
	x := &fileExec{content: old}
	m := &scripted{steps: []agent.ModelResponse{
		call("c1", "query", getLocal),
		fileEditCall("w1", "write", path, "PORT=1\nnew=1\n"),
		text("written"),
	}}
	a := agent.New(m, registryWith(t, x, nil), agent.Config{})
	out, s, rec := run(t, a, policy.LevelControlled)
	if out.Status != agent.StatusAwaitingApproval {
		t.Fatalf("outcome %+v", out)
	}
	if len(x.runs) != 1 || x.runs[0].Command != "cat "+path || x.runs[0].Confine != policy.ConfineBestEffort || x.runs[0].Write {
		t.Fatalf("commands run: %+v; want one cat, confined as a read", x.runs)
	}
	d := out.Approval.Proposal.Details
	if len(d) != 1 || d[0].Label != builtin.FileDiffLabel || !strings.Contains(d[0].Value, "\n PORT=1\n-old=1\n+new=1\n") {
		t.Fatalf("card details %q, want the diff", d)
	}
	sum := sha256.Sum256([]byte(old))
	basis := out.Approval.Proposal.Basis
	if !strings.Contains(basis, hex.EncodeToString(sum[:])) || s.Run.Pending.Basis != basis {
		t.Fatalf("basis %q, run's %q: want the read's SHA-256 in both", basis, s.Run.Pending.Basis)
	}
	for _, msg := range s.History {
		if strings.Contains(msg.Content, "old=1") {
			t.Fatalf("the preview's read reached the history: %+v", msg)
		}
	}
	for _, e := range rec.of(agent.EventToolResult) {
		if strings.Contains(e.Output, "old=1") {
			t.Fatal("the preview's read reached a trace")
		}
	}

	// The file is as the card showed it: the approved write runs.
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	var ran *tools.Proposal
	d2 := agent.Decision{Approved: true, By: "bob", Level: policy.LevelControlled,
		BeforeExecute: func(_ context.Context, p tools.Proposal, _ string) error { ran = &p; return nil }}
	if _, err := a.Resume(context.Background(), s, d2, agent.RunEnv{Sink: &recorder{}}); err != nil {
		t.Fatal(err)
	}
	if ran == nil || ran.Basis != basis {
		t.Fatalf("the approved call ran with basis %v, want the card's", ran)
	}
	if got, _ := os.ReadFile(path); string(got) != "PORT=1\nnew=1\n" {
		t.Fatalf("file %q after the approved write", got)
	}
}

// previewProbe is file_edit with a preview that asks for one read of its
// choosing and shows what came of it.
type previewProbe struct {
	tools.Tool
	args string
}

func (p *previewProbe) Preview(ctx context.Context, prop tools.Proposal, read tools.ReadFunc) tools.Preview {
	r := read(ctx, json.RawMessage(p.args))
	r2 := read(ctx, json.RawMessage(p.args))
	return tools.Preview{Details: []policy.ChangeDetail{{Label: "first", Value: r.Refused}, {Label: "second", Value: r2.Refused}}}
}

// A preview reads only what the change touches, only as a read, and once.
func TestApprovalPreviewReadsOnlyTheChangesOwnFile(t *testing.T) {
	const path = "/srv/app.conf"
	args := func(action, p, content string) string {
		raw, _ := json.Marshal(builtin.FileEditArgs{Action: builtin.FileEditAction(action), Target: "localhost", Path: p, Content: content})
		return string(raw)
	}
	tests := []struct{ name, args, refused string }{
		{"its own read", args("read", path, ""), ""},
		{"a write", args("write", path, "x"), "the call is not a read"},
		{"another file", args("read", "/etc/shadow", ""), "the read is not of the change's own target and path"},
		{"bad arguments", `{"action":"read"}`, "target"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := &fileExec{content: "a\n"}
			probe := &previewProbe{Tool: builtin.NewFileEditTool(inventory.Default(), x), args: tt.args}
			m := &scripted{steps: []agent.ModelResponse{call("c1", "query", getLocal), fileEditCall("w1", "write", path, "b\n")}}
			out, _, _ := run(t, agent.New(m, registryWith(t, x, probe), agent.Config{}), policy.LevelControlled)
			if out.Approval == nil {
				t.Fatalf("outcome %+v", out)
			}
			d := out.Approval.Proposal.Details
			if len(d) != 2 || (tt.refused == "") != (d[0].Value == "") || !strings.Contains(d[0].Value, tt.refused) {
				t.Fatalf("first read: %q, want refused with %q", d, tt.refused)
			}
			if d[1].Value != "a preview makes one read" {
				t.Errorf("second read: %q, want refused", d[1].Value)
			}
			wantRuns := 0
			if tt.refused == "" {
				wantRuns = 1
			}
			if len(x.runs) != wantRuns {
				t.Errorf("commands run: %+v, want %d", x.runs, wantRuns)
			}
		})
	}
}

package transport

import (
	"errors"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"

	"github.com/vigilops/vigil/tools/inventory"
	"github.com/vigilops/vigil/tools/transport/transporttest"
)

const hostile = `'; rm -rf / #`

func TestRouteWrapsNestedCommands(t *testing.T) {
	inv := transporttest.NestedInventory(t)
	tests := []struct {
		resource string
		stdin    bool
		wantVia  string
		want     string
	}{
		{resource: "delly", wantVia: "delly", want: hostile},
		{resource: "media-server", wantVia: "delly",
			want: `pct exec 141 -- bash --norc -c ''\''; rm -rf / #'`},
		{resource: "builder", wantVia: "delly",
			want: `qm guest exec 203 -- bash --norc -c ''\''; rm -rf / #'`},
		{resource: "builder", stdin: true, wantVia: "delly",
			want: `qm guest exec 203 --pass-stdin 1 -- bash --norc -c ''\''; rm -rf / #'`},
		{resource: "jellyfin", wantVia: "delly",
			want: `pct exec 141 -- bash --norc -c 'docker exec jellyfin sh -c '\'''\''\'\'''\''; rm -rf / #'\'''`},
		{resource: "jellyfin", stdin: true, wantVia: "delly",
			want: `pct exec 141 -- bash --norc -c 'docker exec -i jellyfin sh -c '\'''\''\'\'''\''; rm -rf / #'\'''`},
		{resource: "buildkit", wantVia: "delly",
			want: `qm guest exec 203 -- bash --norc -c 'docker exec 0f3a9c sh -c '\'''\''\'\'''\''; rm -rf / #'\'''`},
		{resource: "api-0", wantVia: "kube",
			want: `kubectl exec api-0 -n prod -- sh -c ''\''; rm -rf / #'`},
		{resource: "nginx", wantVia: "delly",
			want: `pct exec 141 -- bash --norc -c ''\''; rm -rf / #'`},
	}
	for _, tt := range tests {
		t.Run(tt.resource, func(t *testing.T) {
			res, _ := inv.Lookup(tt.resource)
			rt, err := FindRoute(inv, res, hostile, res.Shell, tt.stdin)
			if err != nil {
				t.Fatal(err)
			}
			if rt.Via.Name != tt.wantVia {
				t.Errorf("via %s, want %s", rt.Via.Name, tt.wantVia)
			}
			if rt.Command != tt.want {
				t.Errorf("command:\n got %s\nwant %s", rt.Command, tt.want)
			}
			// Peel the wrappers with a real shell parser: the innermost
			// argument must be the hostile string, unchanged.
			if got := innermost(t, rt.Command); got != hostile {
				t.Errorf("innermost command = %q, want %q", got, hostile)
			}
		})
	}
}

// innermost unwraps "... sh -c <word>" and "... bash --norc -c <word>" layers by parsing each one and
// taking the expanded last argument, until a command is not such a wrapper.
func innermost(t *testing.T, cmd string) string {
	t.Helper()
	for range 5 {
		f, err := syntax.NewParser().Parse(strings.NewReader(cmd), "")
		if err != nil || len(f.Stmts) != 1 {
			return cmd
		}
		call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
		if !ok || len(call.Args) < 3 {
			return cmd
		}
		n := len(call.Args)
		if sh := call.Args[n-3].Lit(); call.Args[n-2].Lit() != "-c" || sh != "sh" && sh != "--norc" {
			return cmd
		}
		cmd = roundTrip(t, wordSource(t, call.Args[n-1]))
	}
	return cmd
}

func wordSource(t *testing.T, w *syntax.Word) string {
	t.Helper()
	var sb strings.Builder
	if err := syntax.NewPrinter().Print(&sb, w); err != nil {
		t.Fatal(err)
	}
	return sb.String()
}

func TestRouteErrors(t *testing.T) {
	inv := transporttest.NestedInventory(t)
	orphan := inventory.Resource{ID: "lxc:gone:9", Name: "orphan", Kind: inventory.KindLXC, UID: "9", Parent: "node:gone"}
	if _, err := FindRoute(inv, orphan, "true", "bash", false); !errors.Is(err, ErrNoRoute) {
		t.Errorf("orphan: err = %v, want ErrNoRoute", err)
	}
	stray := inventory.Resource{ID: "host:x", Name: "x", Kind: inventory.KindHost, Parent: "node:delly"}
	if _, err := FindRoute(inv, stray, "true", "bash", false); !errors.Is(err, ErrNoRoute) {
		t.Errorf("host without reach: err = %v, want ErrNoRoute", err)
	}
}

func TestRouterRunsLocally(t *testing.T) {
	r := NewRouter(inventory.Default(), RouterOptions{})
	res, _ := inventory.Default().Lookup("localhost")
	out, err := r.Run(t.Context(), res, RunSpec{Command: "echo routed"}, nil)
	if err != nil || out.Stdout != "routed\n" {
		t.Fatalf("Run = %+v, %v", out, err)
	}
}

func TestUnwrapGuestExec(t *testing.T) {
	in := ExecResult{Stdout: `{"exitcode":2,"exited":1,"out-data":"hi\n","err-data":"bad\n"}`}
	got := unwrapGuestExec(in)
	if got.ExitCode != 2 || got.Stdout != "hi\n" || got.Stderr != "bad\n" {
		t.Errorf("unwrapGuestExec = %+v", got)
	}
	raw := ExecResult{Stdout: "not json"}
	if got := unwrapGuestExec(raw); got.Stdout != "not json" {
		t.Errorf("non-report changed: %+v", got)
	}
}

func TestRouterNestedRunsForReal(t *testing.T) {
	inv := transporttest.NestedInventory(t)
	r := NewRouter(inv, RouterOptions{LocalEnv: transporttest.FakeManagers(t)})
	res, _ := inv.Lookup("jellyfin")
	cmd := `printf '%s|' 'a b' "it's" '$(id)' '` + "`id`" + `' ` + ShellQuote(hostile)
	out, err := r.Run(t.Context(), res, RunSpec{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "a b|it's|$(id)|`id`|" + hostile + "|"
	if out.ExitCode != 0 || out.Stdout != want {
		t.Errorf("nested run = %+v, want stdout %q", out, want)
	}
	// stdin reaches the innermost command through both hops.
	out, err = r.Run(t.Context(), res, RunSpec{Command: "cat"}, strings.NewReader("through two hops\n"))
	if err != nil || out.Stdout != "through two hops\n" {
		t.Errorf("nested stdin = %+v, %v", out, err)
	}
}

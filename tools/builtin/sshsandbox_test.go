package builtin

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigilops/vigil/internal/testenv/sshdtest"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/policy/command"
	"github.com/vigilops/vigil/tools"
	"github.com/vigilops/vigil/tools/transport"
)

// requireBwrap fails, saying how to get it, without Debian's bubblewrap.
func requireBwrap(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Fatalf("bwrap is not installed: apt-get install bubblewrap (.ci/run does)")
	}
}

// TestSSHDReadSandbox runs reads on a real sshd on loopback, whose login
// PATH has bwrap: the declared writers are refused by bwrap, proven reads
// run inside it, and a container's commands are out of its reach.
func TestSSHDReadSandbox(t *testing.T) {
	requireBwrap(t)
	f := startSSHD(t)
	inv := f.inventory(t, "", "")
	tool := NewReadTool(inv, transport.NewRouter(inv, transport.RouterOptions{}))
	rules := declaredWriters(t)
	for _, a := range writeAttempts(t, t.TempDir()) {
		t.Run(a.name, func(t *testing.T) {
			p := gated(t, tool, inv, rules, "far", a.cmd)
			r := tool.Execute(t.Context(), p)
			if r.Envelope.OK {
				t.Fatalf("the write succeeded: %s", r.Envelope.JSON())
			}
			if msg := r.Envelope.Error.Message; !strings.Contains(msg, "the read sandbox (bwrap) refused it") {
				t.Errorf("message %q does not explain that the sandbox refused it", msg)
			}
			if r.Sandbox == nil || r.Sandbox.Mechanism != tools.SandboxBwrap {
				t.Errorf("sandbox = %+v, want bwrap", r.Sandbox)
			}
			if err := a.intact(); err != nil {
				t.Error(err)
			}
		})
	}

	t.Run("daily reads", func(t *testing.T) {
		for cmd, mark := range map[string]string{"uname -a": "Linux", "ps -e": "sshd", "df -h /": "Filesystem", "cat /etc/hostname": ""} {
			r := tool.Execute(t.Context(), gated(t, tool, inv, policy.Rules{ReadSandbox: policy.SandboxRequired}, "far", cmd))
			d, _ := r.Envelope.Data.(CommandData)
			if !r.Envelope.OK || !strings.Contains(d.Output, mark) || r.Sandbox == nil || r.Sandbox.Mechanism != tools.SandboxBwrap {
				t.Errorf("%s: %s, sandbox %+v", cmd, r.Envelope.JSON(), r.Sandbox)
			}
		}
	})

	t.Run("dialects", func(t *testing.T) {
		// far is a host (bash); web is a docker container on it (sh).
		for target, want := range map[string]string{"far": "a\n", "web": "$a\n"} {
			r := tool.Execute(t.Context(), gated(t, tool, inv, policy.Rules{}, target, "echo $'a'"))
			d, _ := r.Envelope.Data.(CommandData)
			if !r.Envelope.OK || d.Output != want {
				t.Errorf("%s: %s, want %q", target, r.Envelope.JSON(), want)
			}
		}
	})

	t.Run("a container is out of the sandbox's reach", func(t *testing.T) {
		r := tool.Execute(t.Context(), gated(t, tool, inv, policy.Rules{}, "web", "uptime"))
		if !r.Envelope.OK || r.Sandbox == nil || r.Sandbox.Mechanism != tools.SandboxNone ||
			!strings.Contains(r.Sandbox.Detail, "docker_container web") || r.Sandbox.Shell != command.DialectPOSIX {
			t.Errorf("best effort: %s, sandbox %+v", r.Envelope.JSON(), r.Sandbox)
		}
		r = tool.Execute(t.Context(), gated(t, tool, inv, policy.Rules{ReadSandbox: policy.SandboxRequired}, "web", "uptime"))
		if r.Envelope.OK || r.Envelope.Error.Code != policy.CodePolicyBlocked {
			t.Errorf("required: %s", r.Envelope.JSON())
		}
	})
}

// TestSSHDRequiredWithoutBwrap: a target whose login PATH has no bwrap
// offers no sandbox; required refuses, best effort runs and says so.
func TestSSHDRequiredWithoutBwrap(t *testing.T) {
	bin := t.TempDir()
	for _, tool := range []string{"sh", "bash", "env", "timeout", "touch", "uptime", "cat"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(p, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	srv := sshdtest.Start(t, sshdtest.Options{Config: []string{`SetEnv "PATH=` + bin + `"`}})
	f := sshdFixture{srv: srv, bin: bin}
	inv := f.inventory(t, "", "")
	tool := NewReadTool(inv, transport.NewRouter(inv, transport.RouterOptions{}))
	marker := filepath.Join(t.TempDir(), "ran")

	for _, p := range []tools.Proposal{
		gated(t, tool, inv, declaredWriters(t), "far", "touch "+transport.ShellQuote(marker)),
		gated(t, tool, inv, policy.Rules{ReadSandbox: policy.SandboxRequired}, "far", "uptime"),
	} {
		r := tool.Execute(t.Context(), p)
		if r.Envelope.OK || r.Envelope.Error.Code != policy.CodePolicyBlocked ||
			!strings.Contains(r.Envelope.Error.Message, "bwrap is not installed") {
			t.Errorf("%s: %s", p.Command, r.Envelope.JSON())
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the declared command ran without a sandbox")
	}
	r := tool.Execute(t.Context(), gated(t, tool, inv, policy.Rules{}, "far", "uptime"))
	if !r.Envelope.OK || r.Sandbox == nil || r.Sandbox.Mechanism != tools.SandboxNone || !strings.Contains(r.Sandbox.Detail, "bwrap is not installed") {
		t.Errorf("best effort: %s, sandbox %+v", r.Envelope.JSON(), r.Sandbox)
	}
}

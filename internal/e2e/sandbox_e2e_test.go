package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigilops/vigil/internal/testenv/modeltest"
	"github.com/vigilops/vigil/internal/testenv/testkit"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/policy/audit"
)

// TestSandboxFollowsPolicy: policy's decision, not a default, decides how
// each call runs. A change in an autonomous channel runs unconfined (it
// could not write from inside the sandbox); the read that verifies it runs
// in the sandbox. Traces and audit records say which applied.
func TestSandboxFollowsPolicy(t *testing.T) {
	dir := t.TempDir()
	made := filepath.Join(dir, "made")
	auditPath := filepath.Join(t.TempDir(), "audit.jsonl")
	h := start(t, policy.LevelAutonomous, func(o *testkit.Options) { o.AuditFile = auditPath })
	h.model.Script(
		modeltest.Calls(discoverLocal()),
		modeltest.Calls(controlCmd("touch "+made)),
		modeltest.Calls(readExec("ls "+made)),
		modeltest.Text("made it"),
	)
	h.ask("create the marker on @localhost")
	out := h.con.WaitFor(t, "vigil> made it", wait)
	if _, err := os.Stat(made); err != nil {
		t.Fatalf("the approved change did not run unconfined: %v\n%s", err, out)
	}
	mustContain(t, out, "sandbox: none (a change runs unconfined), bash", "the change's trace")
	mustContain(t, out, "sandbox: landlock (ABI ", "the read's trace")
	res := resultsOf(t, h.lastRequest())
	if len(res) != 3 || !res[1].OK || !res[2].OK {
		t.Fatalf("results: %+v", res)
	}

	recs, err := audit.ReadFile(auditPath)
	if err != nil {
		t.Fatal(err)
	}
	sandboxes := map[string]string{}
	for _, r := range recs {
		if r.Tool == "control" || r.Tool == "read" {
			sandboxes[r.Tool] = r.Sandbox
		}
	}
	if !strings.HasPrefix(sandboxes["control"], "none (a change runs unconfined)") || !strings.HasPrefix(sandboxes["read"], "landlock (ABI ") {
		t.Errorf("audit records say %v", sandboxes)
	}
	if err := audit.VerifyChain(recs); err != nil {
		t.Errorf("the chain with sandbox fields does not verify: %v", err)
	}
}

package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigilops/vigil/internal/config"
	"github.com/vigilops/vigil/internal/testenv/modeltest"
	"github.com/vigilops/vigil/internal/testenv/testkit"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools"
)

// The file_edit cards of issue 23: a write is shown as a diff against the
// file as it is, read through policy; it runs only against that file.

func fileEdit(action, target, path, content string) modeltest.ToolCall {
	return modeltest.Call("file_edit", testkit.Args("action", action, "target", target, "path", path, "content", content))
}

func fileRead(target, path string) modeltest.ToolCall {
	return modeltest.Call("file_edit", testkit.Args("action", "read", "target", target, "path", path))
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

const (
	shownOld = "PORT=8080\nLOG_LEVEL=info\nWORKERS=4\n"
	shownNew = "PORT=8080\nLOG_LEVEL=debug\nWORKERS=4\n"
)

// The card shows the write as a unified diff against the file, and the
// SHA-256 of the file it was computed against; approved, the write runs.
func TestFileEditCardShowsTheDiff(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.env")
	if err := os.WriteFile(path, []byte(shownOld), 0o644); err != nil {
		t.Fatal(err)
	}
	h := start(t, policy.LevelControlled)
	h.model.Script(
		modeltest.Calls(discoverLocal()),
		modeltest.Calls(fileEdit("write", "localhost", path, shownNew)),
		modeltest.Calls(fileRead("localhost", path)),
		modeltest.Text("log level set to debug"),
	)
	h.ask("set LOG_LEVEL=debug in the app's env file on @localhost")
	id := h.con.ApprovalID(t, 1, wait)
	out := h.con.Output()
	for _, want := range []string{
		tools.FileDiffLabel + ":",
		"| @@ -1,3 +1,3 @@",
		"|  PORT=8080",
		"| -LOG_LEVEL=info",
		"| +LOG_LEVEL=debug",
		policy.BasisLabel + ": the file as read at ",
		"sha256 " + sha256Hex(shownOld) + "; the change runs only if the file is still exactly this",
	} {
		mustContain(t, out, want, "the card shows the diff against the file")
	}
	// The file's content reached the card, not the model.
	for _, r := range h.model.Requests() {
		for _, m := range r.ToolResults() {
			if strings.Contains(m.Content, "LOG_LEVEL=info") {
				t.Fatalf("the preview's read reached the model: %s", m.Content)
			}
		}
	}
	h.con.Send(t, "approve "+id)
	h.idle()
	h.con.WaitFor(t, "vigil> log level set to debug", wait)
	if got, _ := os.ReadFile(path); string(got) != shownNew {
		t.Fatalf("file after the approved write: %q", got)
	}
}

// A file changed between the card and the approval is not written: the
// approved call is refused with the change named, and the file keeps what
// the other writer put there.
func TestFileEditRefusedWhenTheFileChangedSinceItsCard(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.env")
	if err := os.WriteFile(path, []byte(shownOld), 0o644); err != nil {
		t.Fatal(err)
	}
	h := start(t, policy.LevelControlled)
	h.model.Script(
		modeltest.Calls(discoverLocal()),
		modeltest.Calls(fileEdit("write", "localhost", path, shownNew)),
		modeltest.Text("the file changed under me; nothing was written"),
	)
	h.ask("set LOG_LEVEL=debug in the app's env file on @localhost")
	id := h.con.ApprovalID(t, 1, wait)
	mustContain(t, h.con.Output(), "| -LOG_LEVEL=info", "the card shows the diff")
	meanwhile := shownOld + "DB_URL=postgres://db/app\n"
	if err := os.WriteFile(path, []byte(meanwhile), 0o644); err != nil {
		t.Fatal(err)
	}
	h.con.Send(t, "approve "+id)
	h.idle()
	h.con.WaitFor(t, "vigil> the file changed under me", wait)
	res := resultsOf(t, h.lastRequest())
	last := res[len(res)-1]
	if last.OK || last.Error == nil || !strings.Contains(last.Error.Message,
		"nothing was written: "+path+" changed since the approval card showed it: it was sha256 "+sha256Hex(shownOld)+", and now sha256 "+sha256Hex(meanwhile)) {
		t.Fatalf("the approved write's result: %+v", last.Error)
	}
	if got, _ := os.ReadFile(path); string(got) != meanwhile {
		t.Fatalf("the changed file was overwritten: %q", got)
	}
}

// When policy refuses the read (here: reads must be sandboxed, and one in
// a container is out of a sandbox's reach), the card shows the whole new
// content and says why there is no diff; there is no basis to hold the
// call to.
func TestFileEditCardWithoutAReadableFile(t *testing.T) {
	inv, err := tools.NewInventory([]tools.Resource{
		{ID: "node:delly", Name: "delly", Kind: tools.KindNode, Reach: tools.Reach{Local: true}},
		{ID: "lxc:delly:141", Name: "media", Kind: tools.KindLXC, Parent: "node:delly", UID: "141"},
	})
	if err != nil {
		t.Fatal(err)
	}
	path := "/etc/media/app.env"
	h := start(t, policy.LevelControlled, func(o *testkit.Options) {
		o.Inventory = inv
		o.Configure = func(c *config.Config) { c.Policy.ReadSandbox = "required" }
	})
	h.model.Script(
		modeltest.Calls(modeltest.Call("query", testkit.Args("action", "search", "query", "media"))),
		modeltest.Calls(fileEdit("write", "media", path, shownNew)),
	)
	h.ask("set LOG_LEVEL=debug in @media")
	id := h.con.ApprovalID(t, 1, wait)
	out := h.con.Output()
	for _, want := range []string{
		tools.FileNoDiffLabel + ": the file's current content could not be read (the read was refused: not run: policy.read_sandbox is required",
		"so the whole new content is shown",
		tools.FileNewContentLabel + ":",
		"| LOG_LEVEL=debug",
	} {
		mustContain(t, out, want, "the card falls back to the whole content")
	}
	mustNotContain(t, out, policy.BasisLabel+":", "a card without a diff has no basis")
	a, err := h.st.Stores.Approvals.GetApproval(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if a.Basis != "" {
		t.Fatalf("basis %q without a read", a.Basis)
	}
}

// The call runs with the basis of the run that stopped, and only if it is
// the one the approval binds: a run whose basis differs from its approval's
// (a session saved by another run, or altered) runs nothing.
func TestFileEditRunsOnlyWithTheApprovalsBasis(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.env")
	if err := os.WriteFile(path, []byte(shownOld), 0o644); err != nil {
		t.Fatal(err)
	}
	h := start(t, policy.LevelControlled)
	h.model.Script(
		modeltest.Calls(discoverLocal()),
		modeltest.Calls(fileEdit("write", "localhost", path, shownNew)),
		modeltest.Text("not written"),
	)
	h.ask("set LOG_LEVEL=debug in the app's env file on @localhost")
	id := h.con.ApprovalID(t, 1, wait)
	s := h.session()
	if s.Run == nil || s.Run.Pending == nil || !strings.Contains(s.Run.Pending.Basis, sha256Hex(shownOld)) {
		t.Fatalf("the waiting run holds no basis of the file: %+v", s.Run)
	}
	// The file changes, and the run's basis with it: the tool alone would
	// find the file as the run says, but the card never showed it.
	meanwhile := shownOld + "DB_URL=postgres://db/app\n"
	if err := os.WriteFile(path, []byte(meanwhile), 0o644); err != nil {
		t.Fatal(err)
	}
	s.Run.Pending.Basis = strings.Replace(s.Run.Pending.Basis, sha256Hex(shownOld), sha256Hex(meanwhile), 1)
	if err := h.st.Stores.Sessions.SaveSession(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	h.con.Send(t, "approve "+id)
	h.idle()
	h.con.WaitFor(t, "vigil> not written", wait)
	res := resultsOf(t, h.lastRequest())
	last := res[len(res)-1]
	if last.OK || last.Error == nil || !strings.Contains(last.Error.Message, "the state the change was shown against differs from the approval's") {
		t.Fatalf("the approved write's result: %+v", last.Error)
	}
	if got, _ := os.ReadFile(path); string(got) != meanwhile {
		t.Fatalf("the file was written: %q", got)
	}
}

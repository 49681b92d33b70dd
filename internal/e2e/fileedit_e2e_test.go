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
	"github.com/vigilops/vigil/tools/builtin"
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
	// A secret in the file: the diff shows it as context, redacted like
	// everything on a card.
	fileSecret = "hunter2-in-the-file"
	shownOld   = "PORT=8080\nDB_PASSWORD=" + fileSecret + "\nLOG_LEVEL=info\nWORKERS=4\n"
	shownNew   = "PORT=8080\nDB_PASSWORD=" + fileSecret + "\nLOG_LEVEL=debug\nWORKERS=4\n"
)

// atWriteCard starts vigil with an env file holding shownOld, has the model
// propose writing shownNew to it, then take the steps after gives for the
// file's path, and returns once the write's card is up.
func atWriteCard(t *testing.T, after func(path string) []modeltest.Step) (h *harness, path, id string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "app.env")
	changeFile(t, path, shownOld)
	h = start(t, policy.LevelControlled)
	h.model.Script(append([]modeltest.Step{
		modeltest.Calls(discoverLocal()),
		modeltest.Calls(fileEdit("write", "localhost", path, shownNew)),
	}, after(path)...)...)
	h.ask("set LOG_LEVEL=debug in the app's env file on @localhost")
	return h, path, h.con.ApprovalID(t, 1, wait)
}

// answering is a script that ends with the model answering text.
func answering(text string) func(string) []modeltest.Step {
	return func(string) []modeltest.Step { return []modeltest.Step{modeltest.Text(text)} }
}

// changeFile writes content to path, as another writer would.
func changeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// approveUntil approves id and waits for the model's final answer.
func (h *harness) approveUntil(id, answer string) {
	h.t.Helper()
	h.con.Send(h.t, "approve "+id)
	h.idle()
	h.con.WaitFor(h.t, "vigil> "+answer, wait)
}

// refusedWrite asserts the approved write's result was a refusal saying
// want, and that the file still holds content.
func (h *harness) refusedWrite(path, content, want string) {
	h.t.Helper()
	res := resultsOf(h.t, h.lastRequest())
	last := res[len(res)-1]
	if last.OK || last.Error == nil || !strings.Contains(last.Error.Message, want) {
		h.t.Fatalf("the approved write's result: %+v, want %q", last.Error, want)
	}
	if got, _ := os.ReadFile(path); string(got) != content {
		h.t.Fatalf("the file was written: %q, want %q", got, content)
	}
}

// The card shows the write as a unified diff against the file, and the
// SHA-256 of the file it was computed against; approved, the write runs.
func TestFileEditCardShowsTheDiff(t *testing.T) {
	h, path, id := atWriteCard(t, func(path string) []modeltest.Step {
		return []modeltest.Step{modeltest.Calls(fileRead("localhost", path)), modeltest.Text("log level set to debug")}
	})
	out := h.con.Output()
	for _, want := range []string{
		builtin.FileDiffLabel + ":",
		"| @@ -1,4 +1,4 @@",
		"|  PORT=8080",
		"|  DB_PASSWORD=[REDACTED",
		"| -LOG_LEVEL=info",
		"| +LOG_LEVEL=debug",
		policy.BasisLabel + ": the file as read at ",
		"sha256 " + sha256Hex(shownOld) + "; the change runs only if the file is still exactly this",
	} {
		mustContain(t, out, want, "the card shows the diff against the file")
	}
	mustNotContain(t, out, fileSecret, "the card redacts the file's secrets")
	// The file's content reached the card, not the model.
	for _, r := range h.model.Requests() {
		for _, m := range r.ToolResults() {
			if strings.Contains(m.Content, "LOG_LEVEL=info") || strings.Contains(m.Content, fileSecret) {
				t.Fatalf("the preview's read reached the model: %s", m.Content)
			}
		}
	}
	h.approveUntil(id, "log level set to debug")
	if got, _ := os.ReadFile(path); string(got) != shownNew {
		t.Fatalf("file after the approved write: %q", got)
	}
}

// A file changed between the card and the approval is not written: the
// approved call is refused with the change named, and the file keeps what
// the other writer put there.
func TestFileEditRefusedWhenTheFileChangedSinceItsCard(t *testing.T) {
	h, path, id := atWriteCard(t, answering("the file changed under me; nothing was written"))
	mustContain(t, h.con.Output(), "| -LOG_LEVEL=info", "the card shows the diff")
	meanwhile := shownOld + "DB_URL=postgres://db/app\n"
	changeFile(t, path, meanwhile)
	h.approveUntil(id, "the file changed under me")
	h.refusedWrite(path, meanwhile, "nothing was written: "+path+" changed since the approval card showed it: it was sha256 "+
		sha256Hex(shownOld)+", and now sha256 "+sha256Hex(meanwhile))
}

// When policy refuses the read (here: reads must be sandboxed, and one in
// a container is out of a sandbox's reach), the card shows the whole new
// content and says why there is no diff; there is no basis to hold the
// call to.
func TestFileEditCardWithoutAReadableFile(t *testing.T) {
	inv := nodeWithContainer(t)
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
		builtin.FileNoDiffLabel + ": the file's current content could not be read (the read was refused: not run: policy.read_sandbox is required",
		"so the whole new content is shown",
		builtin.FileNewContentLabel + ":",
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
	h, path, id := atWriteCard(t, answering("not written"))
	s := h.session()
	if s.Run == nil || s.Run.Pending == nil || !strings.Contains(s.Run.Pending.Basis, sha256Hex(shownOld)) {
		t.Fatalf("the waiting run holds no basis of the file: %+v", s.Run)
	}
	// The file changes, and the run's basis with it: the tool alone would
	// find the file as the run says, but the card never showed it.
	meanwhile := shownOld + "DB_URL=postgres://db/app\n"
	changeFile(t, path, meanwhile)
	s.Run.Pending.Basis = strings.Replace(s.Run.Pending.Basis, sha256Hex(shownOld), sha256Hex(meanwhile), 1)
	if err := h.st.Stores.Sessions.SaveSession(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	h.approveUntil(id, "not written")
	h.refusedWrite(path, meanwhile, "the state the change was shown against differs from the approval's")
}

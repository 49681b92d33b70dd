package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/internal/testenv/modeltest"
	"github.com/vigilops/vigil/internal/testenv/testkit"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/runbook"
	"github.com/vigilops/vigil/tools/inventory"
)

// resolvedAnswer names a cause: it can become a runbook.
const resolvedAnswer = "localhost is slow because a runaway backup job saturates the CPU (load 7.10 on 2 cores)."

func withRunbooks(dir string) func(*testkit.Options) {
	return func(o *testkit.Options) { o.RunbooksDir = dir }
}

func markdownFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The whole learning loop through the console: an answer rated good is
// drafted into a runbook; nothing is written until the approval; the saved
// runbook is then offered with a later question that matches it, and the
// question names its resource without @.
func TestConsoleGoodAnswerBecomesRunbookAfterApproval(t *testing.T) {
	dir := t.TempDir()
	h := start(t, policy.LevelControlled, withRunbooks(dir))
	h.model.Script(
		modeltest.Calls(readExec("uptime")),
		modeltest.Text(resolvedAnswer),
	)
	h.ask("why is @localhost slow?")
	h.con.WaitFor(t, "(rate this answer: good | bad)", wait)

	h.ask("good")
	id := h.con.ApprovalID(t, 1, wait)
	out := h.con.Output()
	mustContain(t, out, "I drafted a runbook", "the draft is shown")
	mustContain(t, out, "## Cause", "the draft has its sections")
	mustContain(t, out, "runaway backup job", "the draft holds the cause")
	mustContain(t, out, "`read exec` on `localhost`: `uptime`", "the draft holds the evidence command")
	mustContain(t, out, "change:    write "+filepath.ToSlash(dir)+"/why-is-localhost-slow.md", "the card names the file")
	if files := markdownFiles(t, dir); len(files) != 0 {
		t.Fatalf("a runbook was written before approval: %v", files)
	}
	s := h.session()
	rec := s.RunRecord("")
	if rec == nil || len(rec.Feedback) != 1 || rec.Feedback[0].Rating != agent.RatingGood || rec.Feedback[0].User != "alice" {
		t.Fatalf("feedback not stored with the run: %+v", rec)
	}
	if rec.RunbookApproval != id {
		t.Fatalf("run record points at approval %q, want %q", rec.RunbookApproval, id)
	}

	h.con.Send(t, "approve "+id)
	h.idle()
	h.con.WaitFor(t, "Saved runbook "+filepath.ToSlash(dir)+"/why-is-localhost-slow.md", wait)
	raw, err := os.ReadFile(filepath.Join(dir, "why-is-localhost-slow.md"))
	if err != nil {
		t.Fatalf("approved runbook not written: %v", err)
	}
	rb, err := runbook.Parse("why-is-localhost-slow.md", raw)
	if err != nil {
		t.Fatalf("saved runbook does not parse: %v", err)
	}
	if !strings.Contains(rb.Body, "runaway backup job") || rb.Resources[0] != "localhost" {
		t.Fatalf("saved runbook: %+v", rb)
	}
	if got := h.session().RunRecord("").Runbook; !strings.HasSuffix(got, "why-is-localhost-slow.md") {
		t.Fatalf("run record does not name the saved runbook: %q", got)
	}
	// Approving again writes nothing more.
	h.con.Send(t, "approve "+id)
	h.idle()
	h.con.WaitFor(t, "already approved", wait)
	if files := markdownFiles(t, dir); len(files) != 1 {
		t.Fatalf("runbooks after a replayed approval: %v", files)
	}

	// A later question, naming localhost without @, is offered the runbook.
	h.model.Script(modeltest.Text("Following " + filepath.ToSlash(dir) + "/why-is-localhost-slow.md: check the backup job."))
	h.ask("localhost is slow again, why?")
	first := h.lastRequest().Messages
	var question string
	for _, m := range first {
		if m.Role == "user" && strings.Contains(m.Content, "localhost is slow again") {
			question = m.Content
		}
	}
	mustContain(t, question, "Runbooks that may apply", "the runbook offer")
	mustContain(t, question, filepath.ToSlash(dir)+"/why-is-localhost-slow.md", "the offered runbook's path")
	mustContain(t, question, "runaway backup job", "the offered runbook's text")
	mustContain(t, question, `"localhost" probably means node:localhost`, "the name recognised without @")
}

// A denied draft writes nothing; a bad rating drafts nothing; an answer
// without a cause is not drafted.
func TestConsoleRunbookDraftDeniedOrNotOffered(t *testing.T) {
	dir := t.TempDir()
	h := start(t, policy.LevelControlled, withRunbooks(dir))
	h.model.Script(modeltest.Calls(readExec("uptime")), modeltest.Text(resolvedAnswer))
	h.ask("why is @localhost slow?")
	h.ask("bad")
	h.con.WaitFor(t, "your rating (bad) is recorded", wait)
	if strings.Contains(h.con.Output(), "approval needed") {
		t.Fatalf("a bad rating offered a runbook")
	}
	h.ask("good") // changing one's mind counts
	id := h.con.ApprovalID(t, 1, wait)
	h.con.Send(t, "deny "+id+" not useful")
	h.idle()
	h.con.WaitFor(t, "not saved: denied by alice: not useful", wait)
	if files := markdownFiles(t, dir); len(files) != 0 {
		t.Fatalf("a denied runbook was written: %v", files)
	}
	if rec := h.session().RunRecord(""); rec.RunbookApproval != "" || rec.Runbook != "" {
		t.Fatalf("run record after denial: %+v", rec)
	}

	h.model.Script(modeltest.Calls(readExec("uptime")), modeltest.Text("Load is 0.10; nothing looks wrong."))
	h.ask("how is @localhost?")
	h.ask("good")
	h.con.WaitFor(t, "I did not draft a runbook from that answer: the answer names no cause", wait)
	if files := markdownFiles(t, dir); len(files) != 0 {
		t.Fatalf("runbook written: %v", files)
	}
}

// A read-only channel records ratings but offers no runbook: nobody could
// approve it there.
func TestRatingInReadOnlyChannel(t *testing.T) {
	dir := t.TempDir()
	h := start(t, policy.LevelReadOnly, withRunbooks(dir))
	h.model.Script(modeltest.Calls(readExec("uptime")), modeltest.Text(resolvedAnswer))
	h.ask("why is @localhost slow?")
	h.ask("good")
	h.con.WaitFor(t, "This channel is read-only", wait)
	if rec := h.session().RunRecord(""); len(rec.Feedback) != 1 {
		t.Fatalf("rating not stored: %+v", rec)
	}
}

// inventoryWithServices is the local machine with two services whose names
// share a word, and one with a distinctive name.
func inventoryWithServices(t *testing.T) *inventory.Inventory {
	t.Helper()
	inv, err := inventory.New([]inventory.Resource{
		{ID: "node:localhost", Name: "localhost", Kind: inventory.KindNode, Node: "localhost", UID: "localhost", Reach: inventory.Reach{Local: true}},
		{ID: "service:localhost:checkout-api", Name: "checkout-api", Kind: inventory.KindService, Parent: "node:localhost", Node: "localhost", UID: "checkout-api"},
		{ID: "service:localhost:checkout-db", Name: "checkout-db", Kind: inventory.KindService, Parent: "node:localhost", Node: "localhost", UID: "checkout-db"},
		{ID: "service:localhost:jellyfin", Name: "jellyfin", Kind: inventory.KindService, Parent: "node:localhost", Node: "localhost", UID: "jellyfin"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

// Names written without @ reach the model as context: a sure one with its
// route, an ambiguous one as a list. Neither is resolved, so a change to
// one proposed on that guess is refused until the model resolves it.
func TestNamesWithoutAtAreContextNotResolution(t *testing.T) {
	h := start(t, policy.LevelControlled, func(o *testkit.Options) { o.Inventory = inventoryWithServices(t) })
	restart := modeltest.Call("control", testkit.Args("action", "service", "target", "jellyfin", "operation", "restart", "service", "jellyfin"))
	getLocal := modeltest.Call("query", testkit.Args("action", "get", "resource", "localhost"))
	h.model.Script(modeltest.Calls(getLocal), modeltest.Calls(restart), modeltest.Text("I could not restart it without resolving it first."))
	h.ask("why is checkout slow, and please restart jelly")
	reqs := h.model.Requests()
	var question string
	for _, m := range reqs[0].Messages {
		if m.Role == "user" {
			question = m.Content
		}
	}
	mustContain(t, question, `"checkout" may mean any of: checkout-api (service:localhost:checkout-api, service), checkout-db (service:localhost:checkout-db, service)`, "the ambiguous name listed")
	mustContain(t, question, "never change one of them on this guess", "the ambiguity warning")
	mustContain(t, question, `"jelly" probably means service:localhost:jellyfin (service); use target "jellyfin"; routing: service:localhost:jellyfin -> node:localhost`, "the recognised name with its route")
	results := resultsOf(t, h.lastRequest())
	if len(results) != 2 || code(results[1]) != "STRICT_RESOLUTION" {
		t.Fatalf("a write on a name recognised without @ was not refused for resolution: %+v", results)
	}
	for _, name := range []string{"jellyfin", "checkout-api", "checkout-db"} {
		if _, ok := h.session().Policy.Context.Lookup(name, time.Now()); ok {
			t.Fatalf("%s, only recognised in the text, is in the resolved context", name)
		}
	}
}

package matrix_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"maunium.net/go/mautrix/event"

	"github.com/vigilops/vigil/adapters/matrix"
	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/internal/testenv/modeltest"
	"github.com/vigilops/vigil/internal/testenv/testkit"
)

// TestE2EFeedbackByReaction: an answer carries its run ID; 👍 on it from
// alice is stored with the run and, as the answer names a cause, brings a
// runbook draft and its approval card; the file is written only after the
// moderator's ✅. A 👎 with a skin tone counts as 👎.
func TestE2EFeedbackByReaction(t *testing.T) {
	dir := t.TempDir()
	x := startE2EWith(t, func(string) []modeltest.Step {
		return []modeltest.Step{
			modeltest.Calls(modeltest.Call("read", testkit.Args("action", "exec", "target", "localhost", "command", "uptime"))),
			modeltest.Text("localhost is slow because a runaway backup job saturates the CPU."),
		}
	}, true, func(o *testkit.Options) { o.RunbooksDir = dir })
	root := x.h.Say(x.h.Alice(), x.h.Mention("why is @localhost slow?"))
	answer := x.h.WaitBotMessage("the answer", func(e *event.Event) bool {
		_, ok := e.Content.Raw[matrix.FieldRunID].(string)
		return ok && inThread(e, root)
	})
	if body := answer.Content.AsMessage().Body; !strings.Contains(body, "runaway backup job") || !strings.Contains(body, "React 👍 or 👎") {
		t.Fatalf("answer body: %q", body)
	}
	runID := answer.Content.Raw[matrix.FieldRunID].(string)
	x.idle(t)

	x.h.React(x.h.Alice(), answer.ID, "👍")
	card, approvalID := x.card(t, root)
	if body := card.Content.AsMessage().Body; !strings.Contains(body, "runbook") || !strings.Contains(body, filepath.ToSlash(dir)) {
		t.Fatalf("runbook card: %q", body)
	}
	x.idle(t)
	if files, _ := filepath.Glob(filepath.Join(dir, "*.md")); len(files) != 0 {
		t.Fatalf("runbook written before approval: %v", files)
	}
	x.h.React(x.h.Mod(), answer.ID, "👎🏽")

	// The reaction reaches vigil through its next sync, which a loaded
	// machine may deliver after the bot last looked idle: wait for the
	// record to hold it rather than for one idle moment.
	var rec *agent.RunRecord
	deadline := time.Now().Add(30 * time.Second)
	for {
		x.idle(t)
		s, err := x.stack.Stores.Sessions.LoadSession(context.Background(), "matrix:"+string(x.h.Room())+":"+string(root))
		if err != nil {
			t.Fatal(err)
		}
		rec = s.RunRecord(runID)
		got := map[string]agent.Rating{}
		if rec != nil {
			for _, f := range rec.Feedback {
				got[f.User] = f.Rating
			}
		}
		if rec != nil && got[string(x.h.Alice().UserID)] == agent.RatingGood && got[string(x.h.Mod().UserID)] == agent.RatingBad && rec.RunbookApproval == approvalID {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("run record: %+v", rec)
		}
		time.Sleep(100 * time.Millisecond)
	}

	x.h.React(x.h.Mod(), card.ID, "✅")
	x.h.WaitBotMessage("the saved notice", func(e *event.Event) bool {
		return inThread(e, root) && strings.Contains(e.Content.AsMessage().Body, "Saved runbook")
	})
	x.idle(t)
	files, _ := filepath.Glob(filepath.Join(dir, "*.md"))
	if len(files) != 1 {
		t.Fatalf("runbooks after approval: %v", files)
	}
	raw, _ := os.ReadFile(files[0])
	if !strings.Contains(string(raw), "runaway backup job") {
		t.Fatalf("saved runbook:\n%s", raw)
	}
}

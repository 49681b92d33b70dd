package matrix_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"maunium.net/go/mautrix/event"

	"github.com/vigilops/vigil/adapters/matrix"
	"github.com/vigilops/vigil/internal/testenv/modeltest"
)

// A Matrix sync replayed from an old token (the sync loop retrying after a
// failed ProcessResponse, or a next_batch never saved) hands the adapter
// the same message event again. The adapter keeps no dedup of its own:
// the bot's HandleMessage drops it by its event ID, so the message runs
// once.
func TestE2ESyncReplayRunsOnce(t *testing.T) {
	x := startE2E(t, func(string) []modeltest.Step {
		return []modeltest.Step{modeltest.Text("The disks on localhost are fine.")}
	})
	a := x.a
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	since := matrix.NextBatch(ctx, a)
	if since == "" {
		t.Fatal("no sync token saved yet")
	}
	root := x.h.Say(x.h.Alice(), x.h.Mention("how are the disks on @localhost?"))
	x.h.WaitBotMessage("the answer", func(e *event.Event) bool {
		return inThread(e, root) && strings.Contains(e.Content.AsMessage().Body, "The disks on localhost are fine.")
	})
	x.idle(t)

	replayed, err := matrix.ReplaySync(ctx, a, since)
	if err != nil {
		t.Fatalf("replay the sync: %v", err)
	}
	if !slices.Contains(replayed, root) {
		t.Fatalf("the replayed sync did not carry alice's message %s (got %v)", root, replayed)
	}
	x.idle(t)
	if n := x.model.Count(); n != 1 {
		t.Fatalf("the model got %d requests, want 1: the replayed message ran again", n)
	}
	answers := 0
	for _, e := range x.h.BotMessages() {
		if inThread(e, root) && strings.Contains(e.Content.AsMessage().Body, "The disks on localhost are fine.") {
			answers++
		}
	}
	if answers != 1 {
		t.Fatalf("%d answers in the thread, want 1", answers)
	}
}

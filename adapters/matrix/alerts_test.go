package matrix

import (
	"strings"
	"testing"
	"time"

	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/vigilops/vigil/bot"
)

// An alert group's thread on a real homeserver: OpenThread posts a room
// message with no relation (the thread root) carrying its links, a reply
// in that thread is an m.thread child of it, and EditMessage replaces the
// root's content (m.replace), which the server serves as the new state.
func TestOpenThreadAndEditOnDendrite(t *testing.T) {
	h := newHarness(t)
	r := h.startJoined(h.config(t.TempDir()))
	ctx := ctxT(t, 30*time.Second)

	ref, err := r.OpenThread(ctx, string(h.room), bot.Reply{Kind: bot.ReplyNotice,
		Text:  "🔥 FIRING: HighLatency (firing 2 / resolved 0)",
		Links: []bot.Link{{Text: "Runbook", URL: "https://runbooks.example.org/high-latency?a=1&b=2"}}})
	if err != nil {
		t.Fatal(err)
	}
	if ref.Thread == "" || ref.ID != ref.Thread || ref.Channel != string(h.room) || ref.Platform != Platform {
		t.Fatalf("OpenThread ref = %+v", ref)
	}
	root := h.event(id.EventID(ref.ID)).Content.AsMessage()
	if root.RelatesTo != nil && root.RelatesTo.Type != "" {
		t.Fatalf("the thread root relates to something: %+v", root.RelatesTo)
	}
	if !strings.Contains(root.Body, "firing 2 / resolved 0") ||
		!strings.Contains(root.FormattedBody, `<a href="https://runbooks.example.org/high-latency?a=1&amp;b=2">Runbook</a>`) {
		t.Fatalf("root = %q / %q", root.Body, root.FormattedBody)
	}

	reply, err := r.Post(ctx, ref.ThreadRef, bot.Reply{Kind: bot.ReplyNotice, Text: "🔥 Firing: HighLatency (instance=web-3)"})
	if err != nil {
		t.Fatal(err)
	}
	if got := h.event(id.EventID(reply.ID)).Content.AsMessage().RelatesTo.GetThreadParent(); got != id.EventID(ref.Thread) {
		t.Fatalf("reply's thread parent = %q, want the root %q", got, ref.Thread)
	}

	if err := r.EditMessage(ctx, ref, bot.Reply{Kind: bot.ReplyNotice, Text: "✅ RESOLVED: HighLatency (firing 0 / resolved 3)"}); err != nil {
		t.Fatal(err)
	}
	edit := h.waitBotMessage("the edit of the root", func(e *event.Event) bool {
		c := e.Content.AsMessage()
		return c.RelatesTo != nil && c.RelatesTo.Type == event.RelReplace && c.RelatesTo.EventID == id.EventID(ref.ID)
	})
	ec := edit.Content.AsMessage()
	if ec.NewContent == nil || !strings.Contains(ec.NewContent.Body, "firing 0 / resolved 3") || !strings.HasPrefix(ec.Body, "* ") {
		t.Fatalf("edit = %+v", ec)
	}
}

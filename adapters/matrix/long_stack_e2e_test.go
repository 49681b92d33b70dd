package matrix_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"maunium.net/go/mautrix/event"

	"github.com/vigilops/vigil/adapters/matrix"
	"github.com/vigilops/vigil/internal/testenv/modeltest"
	"github.com/vigilops/vigil/internal/testenv/testkit"
)

// Long content through the whole stack on a real Dendrite: an 80 KB answer
// arrives whole; a 4,000-character command is on its card whole.

func TestE2ELongAnswerArrivesWhole(t *testing.T) {
	var b strings.Builder
	n := 0
	for b.Len() < 80_000 {
		n++
		fmt.Fprintf(&b, "- item %d: `web-%d` <ok> & \"fine\", see [status](https://status.example/%d?a=1&b=2)\n", n, n, n)
	}
	x := startE2E(t, func(string) []modeltest.Step { return []modeltest.Step{modeltest.Text(b.String())} })
	root := x.h.Say(x.h.Alice(), x.h.Mention("list every host"))
	msgs := x.h.WaitThread(root, func(ms []*event.Event) bool {
		return len(ms) > 0 && ms[len(ms)-1].Content.Raw[matrix.FieldRunID] != nil
	})
	var all strings.Builder
	for _, m := range msgs {
		c := m.Content.AsMessage()
		if strings.Contains(c.Body, "refused") {
			t.Fatalf("the homeserver refused part of the answer: %s", c.Body)
		}
		all.WriteString(c.Body)
	}
	for i := 1; i <= n; i++ {
		if !strings.Contains(all.String(), fmt.Sprintf("- item %d: `web-%d`", i, i)) {
			t.Fatalf("item %d of %d never arrived", i, n)
		}
	}
}

func TestE2ELongCommandCardShowsItWhole(t *testing.T) {
	var cmd string
	x := startE2E(t, func(file string) []modeltest.Step {
		var b strings.Builder
		b.WriteString("echo ")
		for utf8.RuneCountInString(b.String()) < 4000 {
			b.WriteString("'<none>&' ")
		}
		cmd = b.String() + "> " + file
		return []modeltest.Step{
			modeltest.Calls(modeltest.Call("discover", testkit.Args("resource", "localhost"))),
			modeltest.Calls(modeltest.Call("control", testkit.Args("action", "command", "target", "localhost", "command", cmd))),
			modeltest.Text("Waiting for approval."),
		}
	})
	root := x.h.Say(x.h.Alice(), x.h.Mention("write the file on @localhost"))
	card, _ := x.card(t, root)
	c := card.Content.AsMessage()
	if !strings.Contains(c.Body, cmd) {
		t.Fatalf("the card does not show the whole %d-character command", len(cmd))
	}
	if c.Mentions == nil || len(c.Mentions.UserIDs) == 0 {
		t.Error("the card mentions no approver")
	}
}

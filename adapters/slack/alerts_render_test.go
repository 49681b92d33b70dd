package slack

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/vigilops/vigil/bot"
)

// An alert's state renders as a section with link buttons (at most
// maxLinkButtons, the rest named in a note), escaped like any notice; a reply without links stays a
// plain notice.
func TestRenderWithLinkButtons(t *testing.T) {
	var links []bot.Link
	for i := range 7 {
		links = append(links, bot.Link{Text: fmt.Sprint("Link ", i), URL: fmt.Sprintf("https://example.org/%d", i)})
	}
	m := renderReply(bot.Reply{Kind: bot.ReplyNotice, Text: "🔥 FIRING: <HighLatency> & more", Links: links})
	if len(m.Blocks) != 3 {
		t.Fatalf("blocks = %d, want a section, an actions block and a note on the links left out", len(m.Blocks))
	}
	if raw, _ := json.Marshal(m.Blocks[2]); !strings.Contains(string(raw), "2 more link(s)") {
		t.Errorf("no note on the links left out: %#v", m.Blocks[2])
	}
	sec, ok := m.Blocks[0].(*slack.SectionBlock)
	if !ok || !strings.Contains(sec.Text.Text, "&lt;HighLatency&gt; &amp; more") {
		t.Fatalf("section = %#v", m.Blocks[0])
	}
	act, ok := m.Blocks[1].(*slack.ActionBlock)
	if !ok || len(act.Elements.ElementSet) != maxLinkButtons {
		t.Fatalf("actions = %#v", m.Blocks[1])
	}
	for i, e := range act.Elements.ElementSet {
		b := e.(*slack.ButtonBlockElement)
		if b.URL != links[i].URL || b.Text.Text != links[i].Text || b.ActionID == actionApprove {
			t.Errorf("button %d = %+v", i, b)
		}
	}
	plain := renderReply(bot.Reply{Kind: bot.ReplyNotice, Text: "no links"})
	if _, ok := plain.Blocks[0].(*slack.ContextBlock); !ok || len(plain.Blocks) != 1 {
		t.Errorf("a notice without links = %#v", plain.Blocks)
	}
}

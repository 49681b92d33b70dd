package slack

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

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

// alertCards are the cards both platforms' golden files render: a group
// firing with everything a card shows, and one resolved that kept fewer
// alerts than it was sent, with a link Slack cannot take.
func alertCards() map[string]bot.AlertCard {
	started := time.Date(2026, 11, 24, 21, 0, 0, 0, time.UTC)
	return map[string]bot.AlertCard{
		"alert_firing": {Name: "HighLatency <checkout>", Firing: 2, Severity: "page", Source: "alertmanager", Started: started,
			Labels:  []string{"instance=web-1:9100", "service=checkout & cart"},
			Summary: "Checkout latency above 2s", Description: "p99 over 2s for 5 minutes on *web-1*",
			Links: []bot.Link{{Text: "Runbook", URL: "https://runbooks.example.org/hl"}, {Text: "Source", URL: "https://prometheus.example.org/graph"}}},
		"alert_resolved": {Name: "DiskFull", Resolved: 3, Untracked: 4, MaxTracked: 200, Severity: "unknown", Source: "grafana", Started: started,
			Links: []bot.Link{{Text: "Panel", URL: "ftp://grafana.example.org/d/x"}}},
	}
}

// An alert group's card renders natively: the headline, fields for
// severity, source and start, labels, the summary and description, and
// link buttons, every text escaped.
func TestRenderAlertCardGolden(t *testing.T) {
	for name, c := range alertCards() {
		t.Run(name, func(t *testing.T) {
			m := renderReply(bot.Reply{Kind: bot.ReplyNotice, Text: c.Text(), Links: c.Links, Alert: &c})
			golden(t, name, m)
		})
	}
}

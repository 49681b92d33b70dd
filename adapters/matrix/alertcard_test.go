package matrix

import (
	"testing"
	"time"

	"github.com/vigilops/vigil/bot"
)

// An alert group's card renders as HTML: the headline in bold, severity,
// source and start, labels as code, summary and description, then links
// (a link that is not http(s) named, not linked); the plain body is the
// card's text. Every text is escaped.
func TestRenderAlertCardGolden(t *testing.T) {
	started := time.Date(2026, 11, 24, 21, 0, 0, 0, time.UTC)
	cards := map[string]bot.AlertCard{
		"alert_firing": {Name: "HighLatency <checkout>", Firing: 2, Severity: "page", Source: "alertmanager", Started: started,
			Labels:  []string{"instance=web-1:9100", "service=checkout & cart"},
			Summary: "Checkout latency above 2s", Description: "p99 over 2s for 5 minutes on *web-1*",
			Links: []bot.Link{{Text: "Runbook", URL: "https://runbooks.example.org/hl"}, {Text: "Source", URL: "https://prometheus.example.org/graph"}}},
		"alert_resolved": {Name: "DiskFull", Resolved: 3, Untracked: 4, MaxTracked: 200, Severity: "unknown", Source: "grafana", Started: started,
			Links: []bot.Link{{Text: "Panel", URL: "ftp://grafana.example.org/d/x"}}},
	}
	for name, c := range cards {
		t.Run(name, func(t *testing.T) {
			golden(t, name, renderReply(bot.Reply{Kind: bot.ReplyNotice, Text: c.Text(), Links: c.Links, Alert: &c}))
		})
	}
}

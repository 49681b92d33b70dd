package matrix_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"maunium.net/go/mautrix/event"

	"github.com/vigilops/vigil/internal/config"
	"github.com/vigilops/vigil/internal/testenv/modeltest"
	"github.com/vigilops/vigil/internal/testenv/testkit"
)

// A Grafana alert (the documented contact point payload) reaches the real
// bot over HTTP and becomes a thread in a Matrix room on Dendrite: its
// first message shows the alert with links, and the investigation's write
// waits for an approver.
func TestE2EGrafanaAlertOpensAMatrixThread(t *testing.T) {
	const token = "matrix-alert-token-0123456789"
	x := startE2E(t, func(file string) []modeltest.Step {
		return append(discoverAndAppend(file), modeltest.Text("Cleaned up /var on db-1."))
	}, func(o *testkit.Options) {
		prev := o.Configure
		o.Configure = func(c *config.Config) {
			if prev != nil {
				prev(c)
			}
			c.Alerts.Enabled = true
			c.Alerts.Token = token
			c.Alerts.Debounce = 0
			c.Alerts.MaxConcurrentInvestigations = 1
			c.Alerts.Default = o.Channels[0].Match // the harness's room
		}
	})
	h := x.stack.App.AlertHandler
	if h == nil {
		t.Fatal("alerts.enabled but no alert handler")
	}
	body, err := os.ReadFile("../alertwebhook/testdata/grafana_firing.json")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/alerts/grafana", strings.NewReader(string(body)))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("grafana notification: %s", resp.Status)
	}
	root := x.h.WaitBotMessage("the alert thread's first message", func(e *event.Event) bool {
		c := e.Content.AsMessage()
		return strings.Contains(c.Body, "FIRING: DiskFull") && (c.RelatesTo == nil || c.RelatesTo.Type == "")
	})
	rc := root.Content.AsMessage()
	for _, want := range []string{`<a href="https://grafana.example.org/d/infra-disks">Dashboard</a>`,
		`<a href="https://runbooks.example.org/disk-full">Runbook</a>`} {
		if !strings.Contains(rc.FormattedBody, want) {
			t.Errorf("first message lacks %s:\n%s", want, rc.FormattedBody)
		}
	}
	card, _ := x.card(t, root.ID)
	if !strings.Contains(card.Content.AsMessage().Body, "alert:grafana/DiskFull") {
		t.Errorf("the card does not name the alert:\n%s", card.Content.AsMessage().Body)
	}
	x.idle(t)
	if _, err := os.Stat(x.file); err == nil {
		t.Fatal("the alert-started run's change ran without approval")
	}
}

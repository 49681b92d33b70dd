package matrix_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/vigilops/vigil/adapters/matrix"
	"github.com/vigilops/vigil/internal/config"
	"github.com/vigilops/vigil/internal/testenv/modeltest"
	"github.com/vigilops/vigil/internal/testenv/testkit"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools/inventory"
)

const scopeAlertToken = "scope-alert-token-0123456789"

// Per-channel scope on a real Dendrite (issue 27): two rooms of two teams
// with disjoint scopes. A mention of the other team's host is refused in
// the room with the reason, and each room's runs are offered their own
// datasources.
func TestE2EScopeTwoRooms(t *testing.T) {
	h := matrix.NewE2EHarness(t)
	shop, pay := h.Room(), h.NewRoom()
	cfg := h.Config(t.TempDir())
	cfg.Rooms = append(cfg.Rooms, string(pay))
	a, err := matrix.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	invPath := filepath.Join(t.TempDir(), "inventory.yaml")
	if err := os.WriteFile(invPath, []byte(`resources:
  - {name: web-1, kind: host, reach: local, groups: [web]}
  - {name: db-1, kind: host, reach: local, labels: {team: payments}}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.Load(invPath)
	if err != nil {
		t.Fatal(err)
	}
	model := modeltest.New(t)
	model.Route(func(r modeltest.Request) modeltest.Step {
		fu := r.FirstUser()
		if r.Turns() == 0 && strings.Contains(fu, "shop question") {
			return modeltest.Calls(modeltest.Call("read", testkit.Args("action", "exec", "target", "db-1", "command", "uptime")))
		}
		return modeltest.Text("checked")
	})
	shopKey, payKey := "matrix:"+string(shop), "matrix:"+string(pay)
	st := testkit.Start(t, testkit.Options{
		Adapter: a, Model: model, Inventory: inv,
		Channels: []policy.ChannelPolicy{
			{Match: shopKey, Level: policy.LevelReadOnly},
			{Match: payKey, Level: policy.LevelReadOnly},
		},
		Configure: func(c *config.Config) {
			c.Observability.Prometheus = []config.Prometheus{
				{Name: "shop-prom", URL: "http://127.0.0.1:1", Timeout: time.Second},
				{Name: "pay-prom", URL: "http://127.0.0.1:2", Timeout: time.Second},
			}
			c.Channels[0].Scope = &config.ChannelScope{Hosts: []string{"group:web"}, Datasources: []string{"shop-prom"}}
			c.Channels[1].Scope = &config.ChannelScope{Hosts: []string{"label:team=payments"}, Datasources: []string{"pay-prom"}}
			c.Alerts.Enabled = true
			c.Alerts.Token = scopeAlertToken
			c.Alerts.Default = shopKey
			c.Alerts.Debounce = time.Second
			c.Alerts.Routes = []config.AlertRoute{{Match: map[string]string{"team": "payments"}, Channel: payKey}}
		},
	})
	select {
	case <-a.Ready():
	case <-time.After(30 * time.Second):
		t.Fatal("matrix adapter not ready")
	}
	h.WaitJoinedIn(shop)
	h.WaitJoinedIn(pay)

	body := func(e *event.Event) string { return e.Content.AsMessage().Body }
	ask := func(room id.RoomID, text string) {
		t.Helper()
		h.SayIn(room, h.Alice(), h.Mention(text))
		h.WaitBotMessageIn(room, "the answer", func(e *event.Event) bool { return strings.Contains(body(e), "checked") })
	}

	ask(shop, "shop question: is @web-1 or @db-1 slow?")
	notice := h.WaitBotMessageIn(shop, "the scope refusal", func(e *event.Event) bool {
		return strings.Contains(body(e), "Not in this channel's scope")
	})
	for _, want := range []string{"(host db-1) is not available in this channel (" + shopKey + ")", "hosts: group:web"} {
		if !strings.Contains(body(notice), want) {
			t.Errorf("the refusal lacks %q: %q", want, body(notice))
		}
	}
	ask(pay, "pay question: how is @db-1?")

	var shopReqs, payReqs []modeltest.Request
	for _, r := range model.Requests() {
		switch {
		case strings.Contains(r.FirstUser(), "shop question"):
			shopReqs = append(shopReqs, r)
		case strings.Contains(r.FirstUser(), "pay question"):
			payReqs = append(payReqs, r)
		}
	}
	if len(shopReqs) < 2 || len(payReqs) < 1 {
		t.Fatalf("model requests: shop %d, pay %d", len(shopReqs), len(payReqs))
	}
	desc := func(r modeltest.Request) string {
		for _, d := range r.ToolDefs {
			if d.Name == "metrics" {
				return d.Description
			}
		}
		t.Fatal("no metrics tool offered")
		return ""
	}
	if d := desc(shopReqs[0]); !strings.Contains(d, "shop-prom") || strings.Contains(d, "pay-prom") {
		t.Errorf("the shop room's metrics tool: %q", d)
	}
	if d := desc(payReqs[0]); !strings.Contains(d, "pay-prom") || strings.Contains(d, "shop-prom") {
		t.Errorf("the payments room's metrics tool: %q", d)
	}
	var res string
	for _, m := range shopReqs[len(shopReqs)-1].ToolResults() {
		res += m.Content
	}
	if !strings.Contains(res, "STRICT_RESOLUTION") || !strings.Contains(res, "is not available in this channel ("+shopKey+")") {
		t.Errorf("the shop room's read of db-1 was not refused for its scope: %s", res)
	}
	if !strings.Contains(payReqs[0].FirstUser(), `@db-1 is host:db-1`) {
		t.Errorf("the payments room did not resolve its own host: %s", payReqs[0].FirstUser())
	}

	// An alert routed to the payments room investigates in its scope,
	// though it names the shop's host.
	srv := httptest.NewServer(st.App.AlertHandler)
	t.Cleanup(srv.Close)
	alert, _ := json.Marshal(map[string]any{
		"version": "4", "groupKey": `{}:{alertname="HighLatency"}`, "status": "firing", "receiver": "vigil",
		"groupLabels": map[string]string{"alertname": "HighLatency"},
		"alerts": []map[string]any{{"status": "firing", "fingerprint": "f1", "startsAt": time.Now().UTC().Format(time.RFC3339),
			"labels": map[string]string{"alertname": "HighLatency", "team": "payments", "instance": "web-1:9100", "host": "db-1"}}},
	})
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/alerts/alertmanager", bytes.NewReader(alert))
	req.Header.Set("Authorization", "Bearer "+scopeAlertToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("alert webhook: %s", resp.Status)
	}
	h.WaitBotMessageIn(pay, "the alert thread", func(e *event.Event) bool { return strings.Contains(body(e), "HighLatency") })
	var alertReq *modeltest.Request
	for deadline := time.Now().Add(60 * time.Second); alertReq == nil && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		for _, r := range model.Requests() {
			if strings.Contains(r.FirstUser(), "HighLatency") {
				alertReq = &r
				break
			}
		}
	}
	if alertReq == nil {
		t.Fatal("the alert was not investigated")
	}
	if d := desc(*alertReq); !strings.Contains(d, "pay-prom") || strings.Contains(d, "shop-prom") {
		t.Errorf("the alert run's metrics tool: %q", d)
	}
	if !strings.Contains(alertReq.FirstUser(), "(host web-1) is not available in this channel ("+payKey+")") {
		t.Errorf("the alert run's context does not refuse the shop's host: %s", alertReq.FirstUser())
	}
	for _, e := range h.BotMessages() {
		if strings.Contains(body(e), "HighLatency") {
			t.Errorf("the payments alert reached the shop room: %q", body(e))
		}
	}

}

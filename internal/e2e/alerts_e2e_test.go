package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigilops/vigil/adapters/slack"
	"github.com/vigilops/vigil/bot"
	"github.com/vigilops/vigil/internal/app"
	"github.com/vigilops/vigil/internal/config"
	"github.com/vigilops/vigil/internal/testenv/modeltest"
	"github.com/vigilops/vigil/internal/testenv/obsbin"
	"github.com/vigilops/vigil/internal/testenv/redistest"
	"github.com/vigilops/vigil/internal/testenv/slackfake"
	"github.com/vigilops/vigil/internal/testenv/testkit"
	"github.com/vigilops/vigil/policy"
	redisstore "github.com/vigilops/vigil/store/redis"
)

// Alert intake with real parts (SPEC N1): a real Alertmanager notifies
// two vigil replicas (one webhook each, as an HA pair of receivers
// would), which share one real Redis and talk to one Slack (slacktest).

const (
	alertToken = "e2e-alert-token-0123456789"
	alertChan  = "C0ALERTS"
	alertWait  = 60 * time.Second
)

// alertReplica is one vigil replica with a Slack adapter and its alert
// webhooks served over real HTTP.
type alertReplica struct {
	name  string
	slack *slack.Adapter
	app   *app.App
	url   string
	logs  *testkit.SyncBuffer
}

func startAlertReplica(t *testing.T, name, redisAddr, prefix string, fake *slackfake.Server, model *modeltest.Server, tweak ...func(*config.Config)) *alertReplica {
	t.Helper()
	logs := &testkit.SyncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo})).With("replica", name)
	ad, err := slack.New(slack.Config{
		Mode: slack.ModeHTTP, BotToken: slackfake.BotToken, SigningSecret: slackfake.SigningSecret,
		Listen: "127.0.0.1:0", APIURL: fake.APIURL(), Logger: log,
	})
	if err != nil {
		t.Fatal(err)
	}
	st := openRedisStore(t, redisstore.Options{Addr: redisAddr, KeyPrefix: prefix})
	stores := st.Stores()
	cfg := testkit.Config(testkit.Options{Model: model, Channels: []policy.ChannelPolicy{{
		Match: "slack:" + alertChan, Level: policy.LevelAutonomous,
		Operators: []string{"U0ALICE"}, Approvers: []string{"U0BOB"},
	}}})
	cfg.Server.Listen = "127.0.0.1:0"
	cfg.Alerts.Enabled = true
	cfg.Alerts.Token = alertToken
	cfg.Alerts.Default = "slack:" + alertChan
	cfg.Alerts.Debounce = 1500 * time.Millisecond
	cfg.Alerts.MaxConcurrentInvestigations = 2
	for _, f := range tweak {
		f(cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, app.Options{Config: cfg, Stores: &stores, Adapters: []bot.Adapter{ad}, Logger: log})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if a.AlertHandler == nil {
		cancel()
		t.Fatal("alerts.enabled but the app built no alert handler")
	}
	done := make(chan error, 1)
	go func() { done <- a.Bot.Run(ctx) }()
	srv := httptest.NewServer(a.AlertHandler)
	t.Cleanup(func() {
		srv.Close()
		cancel()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Errorf("replica %s did not stop", name)
		}
		_ = a.Close()
		if t.Failed() {
			t.Logf("replica %s log:\n%s", name, logs.String())
		}
	})
	return &alertReplica{name: name, slack: ad, app: a, url: srv.URL, logs: logs}
}

// postAlerts sends alerts to Alertmanager's API, as Prometheus does.
func postAlerts(t *testing.T, am *obsbin.Server, alerts ...map[string]any) {
	t.Helper()
	raw, _ := json.Marshal(alerts)
	resp, err := http.Post(am.URL+"/api/v2/alerts", "application/json", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("alertmanager refused alerts: %s", resp.Status)
	}
}

func latencyAlert(instance string, endsAt time.Time) map[string]any {
	a := map[string]any{
		"labels": map[string]string{"alertname": "HighLatency", "severity": "page", "service": "checkout", "instance": instance},
		"annotations": map[string]string{"summary": "Checkout latency above 2s",
			"runbook_url": "https://runbooks.example.org/high-latency"},
		"generatorURL": "http://prometheus.example.org/graph?g0.expr=latency",
	}
	if !endsAt.IsZero() {
		a["endsAt"] = endsAt.UTC().Format(time.RFC3339)
	}
	return a
}

func TestAlertmanagerOpensOneThreadAcrossReplicas(t *testing.T) {
	redisAddr := redistest.RequireShared(t)
	prefix := uniquePrefix(t, redisAddr)
	fake := slackfake.New(t)
	fake.AddUser(slackfake.User{ID: "U0BOB", Name: "bob"})
	model := modeltest.New(t)
	file := filepath.Join(t.TempDir(), "restarted")
	investigation := []modeltest.Step{
		modeltest.Calls(discoverLocal()),
		modeltest.Calls(controlCmd(testkit.AppendLine(file))),
		modeltest.Text("Restarted the checkout worker."),
	}
	model.Route(func(r modeltest.Request) modeltest.Step {
		if strings.Contains(r.FirstUser(), "HighLatency") && r.Turns() < len(investigation) {
			return investigation[r.Turns()]
		}
		return modeltest.Text("nothing to add")
	})
	reps := []*alertReplica{
		startAlertReplica(t, "r0", redisAddr, prefix, fake, model),
		startAlertReplica(t, "r1", redisAddr, prefix, fake, model),
	}

	// Unauthenticated and wrongly authenticated notifications are refused
	// and open nothing.
	body := `{"version":"4","groupKey":"x","status":"firing","alerts":[{"status":"firing","labels":{"alertname":"Forged"}}]}`
	for _, auth := range []string{"", "Bearer wrong-token-0123456789"} {
		req, _ := http.NewRequest(http.MethodPost, reps[0].url+"/alerts/alertmanager", strings.NewReader(body))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("notification with Authorization %q: %s, want 401", auth, resp.Status)
		}
	}

	var receivers strings.Builder
	for _, r := range reps {
		fmt.Fprintf(&receivers, `      - url: %s/alerts/alertmanager
        send_resolved: true
        http_config:
          authorization:
            credentials: %s
`, r.url, alertToken)
	}
	am := obsbin.Alertmanager(t, fmt.Sprintf(`route:
  receiver: vigil
  group_by: [alertname]
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: vigil
    webhook_configs:
%s`, receivers.String()))

	postAlerts(t, am, latencyAlert("web-1:9100", time.Time{}), latencyAlert("web-2:9100", time.Time{}))

	roots := func() []slackfake.Call {
		var out []slackfake.Call
		for _, c := range fake.Posts() {
			if c.Param("channel") == alertChan && c.Param("thread_ts") == "" {
				out = append(out, c)
			}
		}
		return out
	}
	waitFor(t, alertWait, "the alert thread", func() bool { return len(roots()) > 0 })
	root := roots()[0]
	mustContain(t, root.Text(), "HighLatency", "the thread's first message")
	mustContain(t, root.Text(), "firing 2 / resolved 0", "the thread's first message")
	mustContain(t, root.Text(), "Checkout latency above 2s", "the thread's first message")
	var urls []string
	for _, b := range root.Buttons() {
		urls = append(urls, b.URL)
	}
	mustContain(t, strings.Join(urls, " "), "https://runbooks.example.org/high-latency", "the link buttons")
	mustContain(t, strings.Join(urls, " "), "http://prometheus.example.org/graph", "the link buttons")
	thread := root.TS

	inThread := func(want string) bool {
		for _, c := range fake.Posts() {
			if c.Param("thread_ts") == thread && strings.Contains(c.Text(), want) {
				return true
			}
		}
		return false
	}

	// The investigation is a run whose requester is the alert: its write
	// waits for approval although the channel is autonomous.
	var card slackfake.Call
	waitFor(t, alertWait, "the investigation's approval card", func() bool {
		for _, c := range fake.Posts() {
			if c.Param("thread_ts") == thread && strings.Contains(c.Text(), "Approval needed") {
				card = c
				return true
			}
		}
		return false
	})
	mustContain(t, card.Text(), "alert:alertmanager/HighLatency", "the approval card names the alert")
	if _, err := os.Stat(file); err == nil {
		t.Fatal("the alert-started run's change ran without approval")
	}

	// A third alert joins the group: a reply, and the first message edited.
	postAlerts(t, am, latencyAlert("web-1:9100", time.Time{}), latencyAlert("web-2:9100", time.Time{}), latencyAlert("web-3:9100", time.Time{}))
	waitFor(t, alertWait, "the reply for the third alert", func() bool { return inThread("web-3:9100") })
	waitFor(t, alertWait, "the first message edited to 3 firing", func() bool {
		for _, c := range fake.Calls("chat.update") {
			if c.Param("ts") == thread && strings.Contains(c.Text(), "firing 3 / resolved 0") {
				return true
			}
		}
		return false
	})

	// Everything resolves: replies, the final one, and the first message.
	past := time.Now().Add(-time.Second)
	postAlerts(t, am, latencyAlert("web-1:9100", past), latencyAlert("web-2:9100", past), latencyAlert("web-3:9100", past))
	waitFor(t, alertWait, "the final resolution reply", func() bool { return inThread("All 3 alerts of this group have resolved") })
	waitFor(t, alertWait, "the first message edited to resolved", func() bool {
		for _, c := range fake.Calls("chat.update") {
			if c.Param("ts") == thread && strings.Contains(c.Text(), "RESOLVED") && strings.Contains(c.Text(), "firing 0 / resolved 3") {
				return true
			}
		}
		return false
	})

	// Across both replicas and every notification: one thread, one
	// final resolution, one reply per alert that joined.
	time.Sleep(2 * time.Second) // let any duplicate delivery land
	if n := len(roots()); n != 1 {
		t.Fatalf("%d threads opened for one alert group, want 1", n)
	}
	count := func(want string) int {
		n := 0
		for _, c := range fake.Posts() {
			if c.Param("thread_ts") == thread && strings.Contains(c.Text(), want) {
				n++
			}
		}
		return n
	}
	if n := count("All 3 alerts of this group have resolved"); n != 1 {
		t.Errorf("the resolution was posted %d times, want once", n)
	}
	if n := count("Firing: HighLatency"); n != 1 {
		t.Errorf("%d firing replies, want 1 (web-3 only)", n)
	}
	if n := count("Approval needed"); n != 1 {
		t.Errorf("%d approval cards, want 1 (one investigation)", n)
	}
	if _, err := os.Stat(file); err == nil {
		t.Fatal("the change ran without approval")
	}

	// An approver approves: the alert-started run's change runs once, and
	// the investigation finishes.
	var approve string
	for _, b := range card.Buttons() {
		if b.ActionID == "vigil_approve" {
			approve = b.Value
		}
	}
	waitFor(t, alertWait, "replica r1's Slack endpoint", func() bool { return reps[1].slack.Addr() != "" })
	payload := slackfake.BlockActions(slackfake.BlockAction{User: "U0BOB", UserName: "bob", Channel: alertChan,
		MessageTS: card.TS, ThreadTS: thread, BlockID: "vigil_approval", ActionID: "vigil_approve", Value: approve,
		ActionTS: "1700009999.000001"})
	resp, err := http.DefaultClient.Do(slackfake.InteractiveRequest(t, "http://"+reps[1].slack.Addr()+"/slack/interactive", payload))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("approval click: %s", resp.Status)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, c := range fake.Calls("chat.postMessage", "chat.update", "chat.postEphemeral") {
				t.Logf("%s thread=%s ts=%s: %s", c.Method, c.Param("thread_ts"), c.Param("ts"), c.Text())
			}
		}
	})
	waitFor(t, alertWait, "the approved change's result in the thread", func() bool { return inThread("control.command") })
	waitFor(t, alertWait, "the card edited to approved", func() bool {
		for _, c := range fake.Calls("chat.update") {
			if c.Param("ts") == card.TS && strings.Contains(c.Text(), "Approved by <@U0BOB>") {
				return true
			}
		}
		return false
	})
	data, err := os.ReadFile(file)
	if err != nil || strings.Count(string(data), "ran") != 1 {
		t.Fatalf("after approval the change ran %q (%v), want once", data, err)
	}
}

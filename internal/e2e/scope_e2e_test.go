package e2e

import (
	"context"
	"encoding/json"
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
	"github.com/vigilops/vigil/internal/config"
	"github.com/vigilops/vigil/internal/testenv/kubeapi"
	"github.com/vigilops/vigil/internal/testenv/modeltest"
	"github.com/vigilops/vigil/internal/testenv/slackfake"
	"github.com/vigilops/vigil/internal/testenv/testkit"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/store"
	"github.com/vigilops/vigil/tools/inventory"
)

// Per-channel scope (SPEC R8, issue 27) with real parts: two Slack
// channels of two teams on the Slack test server, one inventory, two
// Prometheus datasources, and an alert route. Each team's channel sees
// only its own hosts and datasources; Go, not the model, says so.

const (
	shopChan   = "C0SHOP"
	payChan    = "C0PAY"
	e2eAliceID = "U0ALICE"
	e2eBobID   = "U0BOB"
)

// scopeInventory has a host of each team, both reached on this machine
// so that an allowed read really runs.
func scopeInventory(t *testing.T) *inventory.Inventory {
	t.Helper()
	p := filepath.Join(t.TempDir(), "inventory.yaml")
	if err := os.WriteFile(p, []byte(`resources:
  - name: web-1
    kind: host
    reach: local
    groups: [web]
    labels: {team: shop}
  - name: db-1
    kind: host
    reach: local
    groups: [db]
    labels: {team: payments}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

// twoTeams is the configuration both teams share: the shop channel may
// touch the web hosts and its Prometheus, the payments channel the hosts
// labelled team=payments, its Prometheus and the Alertmanager.
func twoTeams(cfg *config.Config) {
	cfg.Observability.Prometheus = []config.Prometheus{
		{Name: "shop-prom", URL: "http://127.0.0.1:1", Timeout: time.Second},
		{Name: "pay-prom", URL: "http://127.0.0.1:2", Timeout: time.Second},
	}
	for i := range cfg.Channels {
		switch cfg.Channels[i].Match {
		case "slack:" + shopChan:
			cfg.Channels[i].Scope = &config.ChannelScope{Hosts: []string{"web-*"}, Datasources: []string{"shop-prom"}}
		case "slack:" + payChan:
			cfg.Channels[i].Scope = &config.ChannelScope{Hosts: []string{"label:team=payments"}, Datasources: []string{"pay-prom"}}
		}
	}
	cfg.Alerts.Enabled = true
	cfg.Alerts.Token = alertToken
	cfg.Alerts.Default = "slack:" + shopChan
	cfg.Alerts.Debounce = time.Second
	cfg.Alerts.Routes = []config.AlertRoute{{Match: map[string]string{"team": "payments"}, Channel: "slack:" + payChan}}
}

func readOn(target string) modeltest.ToolCall {
	return modeltest.Call("read", testkit.Args("action", "exec", "target", target, "command", "uptime"))
}

// toolDesc is the description of tool name in a request.
func toolDesc(t *testing.T, r modeltest.Request, name string) string {
	t.Helper()
	for _, d := range r.ToolDefs {
		if d.Name == name {
			return d.Description
		}
	}
	t.Fatalf("request %d offers no %s tool (tools: %v)", r.N, name, r.Tools)
	return ""
}

// firstRequest is the first model request whose first user message holds
// marker, and the request that followed its tool calls.
func requestsFor(t *testing.T, model *modeltest.Server, marker string) []modeltest.Request {
	t.Helper()
	var out []modeltest.Request
	for _, r := range model.Requests() {
		if strings.Contains(r.FirstUser(), marker) {
			out = append(out, r)
		}
	}
	if len(out) < 2 {
		t.Fatalf("the model got %d requests for %q, want at least 2", len(out), marker)
	}
	return out
}

// resultFor is the tool result of the call to target in a request.
func resultFor(t *testing.T, r modeltest.Request, tool, target string) string {
	t.Helper()
	ids := map[string]bool{}
	for _, m := range r.Messages {
		for _, c := range m.ToolCalls {
			if c.Name == tool && strings.Contains(c.Arguments, `"`+target+`"`) {
				ids[c.ID] = true
			}
		}
	}
	for _, m := range r.ToolResults() {
		if ids[m.ToolCallID] {
			return m.Content
		}
	}
	t.Fatalf("no result of %s on %s in request %d", tool, target, r.N)
	return ""
}

func TestScopeTwoTeamsOnSlack(t *testing.T) {
	fake := slackfake.New(t)
	fake.AddUser(slackfake.User{ID: e2eAliceID, Name: "alice"})
	fake.AddUser(slackfake.User{ID: e2eBobID, Name: "bob"})
	ad, err := slack.New(slack.Config{
		Mode: slack.ModeHTTP, BotToken: slackfake.BotToken, SigningSecret: slackfake.SigningSecret,
		Listen: "127.0.0.1:0", APIURL: fake.APIURL(), Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	model := modeltest.New(t)
	model.Route(func(r modeltest.Request) modeltest.Step {
		fu := r.FirstUser()
		switch {
		case strings.Contains(fu, "shop question") && r.Turns() == 0:
			return modeltest.Calls(readOn("web-1"), readOn("db-1"),
				modeltest.Call("metrics", testkit.Args("action", "query", "query", "up", "datasource", "pay-prom")))
		case strings.Contains(fu, "pay question") && r.Turns() == 0:
			return modeltest.Calls(readOn("db-1"))
		case strings.Contains(fu, "HighLatency") && r.Turns() == 0:
			return modeltest.Calls(readOn("db-1"), readOn("web-1"))
		}
		return modeltest.Text("checked")
	})
	cp := func(ch string) policy.ChannelPolicy {
		return policy.ChannelPolicy{Match: "slack:" + ch, Level: policy.LevelControlled,
			Operators: []string{e2eAliceID}, Approvers: []string{e2eBobID}}
	}
	st := testkit.Start(t, testkit.Options{Adapter: ad, Model: model, Inventory: scopeInventory(t),
		Channels: []policy.ChannelPolicy{cp(shopChan), cp(payChan)}, Configure: twoTeams})
	select {
	case <-ad.Ready():
	case <-time.After(wait):
		t.Fatal("slack adapter not ready")
	}
	for deadline := time.Now().Add(wait); ad.Addr() == "" && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	send := func(id, ch, ts, text string) {
		t.Helper()
		body := slackfake.EventCallback(id, slackfake.AppMention(ch, e2eAliceID, "<@U0VIGIL> "+text, ts, ""))
		resp, err := http.DefaultClient.Do(slackfake.EventsRequest(t, "http://"+ad.Addr()+"/slack/events", body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	waitPost := func(ch, want string) slackfake.Call {
		t.Helper()
		var found slackfake.Call
		fake.WaitFor(t, wait, want, func(calls []slackfake.Call) bool {
			for _, c := range calls {
				if c.Method == "chat.postMessage" && c.Param("channel") == ch && strings.Contains(c.Text(), want) {
					found = c
					return true
				}
			}
			return false
		})
		return found
	}

	// The shop team mentions its own host and the payments team's.
	send("EvShop", shopChan, "1700007000.000100", "shop question: is @web-1 or @db-1 slow?")
	notice := waitPost(shopChan, "Not in this channel's scope")
	waitPost(shopChan, "checked")
	idle(t, st)
	for _, want := range []string{"@db-1", "host db-1", "is not available in this channel (slack:" + shopChan + ")", "hosts: web-*"} {
		if !strings.Contains(notice.Text(), want) {
			t.Errorf("the refusal in the shop channel lacks %q: %q", want, notice.Text())
		}
	}
	if strings.Contains(notice.Text(), "web-1") {
		t.Errorf("the in-scope host is refused too: %q", notice.Text())
	}
	shop := requestsFor(t, model, "shop question")
	mustContain(t, shop[0].FirstUser(), "@web-1 is host:web-1", "the shop context") // resolved
	mustContain(t, shop[0].FirstUser(), "@db-1: \"@db-1\" (host db-1) is not available in this channel", "the shop context")
	shopMetrics := toolDesc(t, shop[0], "metrics")
	mustContain(t, shopMetrics, "shop-prom", "the shop channel's metrics tool")
	mustNotContain(t, shopMetrics, "pay-prom", "the shop channel's metrics tool")
	if got := code(decodeEnvelope(t, resultFor(t, shop[1], "read", "web-1"))); got != "" {
		t.Errorf("the in-scope read failed: %s", resultFor(t, shop[1], "read", "web-1"))
	}
	refused := resultFor(t, shop[1], "read", "db-1")
	mustContain(t, refused, "STRICT_RESOLUTION", "the out-of-scope read")
	mustContain(t, refused, "is not available in this channel (slack:"+shopChan+")", "the out-of-scope read")
	ds := resultFor(t, shop[1], "metrics", "pay-prom")
	mustContain(t, ds, "datasource pay-prom is not available in this channel", "the out-of-scope datasource")

	// The payments team reaches its own host, and its tools list its own
	// datasource.
	send("EvPay", payChan, "1700007100.000100", "pay question: how is @db-1?")
	waitPost(payChan, "checked")
	idle(t, st)
	pay := requestsFor(t, model, "pay question")
	payMetrics := toolDesc(t, pay[0], "metrics")
	mustContain(t, payMetrics, "pay-prom", "the payments channel's metrics tool")
	mustNotContain(t, payMetrics, "shop-prom", "the payments channel's metrics tool")
	if shopMetrics == payMetrics {
		t.Error("both channels were offered the same metrics description")
	}
	if got := code(decodeEnvelope(t, resultFor(t, pay[1], "read", "db-1"))); got != "" {
		t.Errorf("the payments channel's own read failed: %s", resultFor(t, pay[1], "read", "db-1"))
	}
	for _, c := range fake.Posts() {
		if c.Param("channel") == payChan && strings.Contains(c.Text(), "Not in this channel's scope") {
			t.Errorf("the payments channel was refused its own host: %q", c.Text())
		}
	}

	// An alert routed to the payments channel investigates within its
	// scope, even though it names the shop's host.
	srv := httptest.NewServer(st.App.AlertHandler)
	t.Cleanup(srv.Close)
	alert, _ := json.Marshal(map[string]any{
		"version": "4", "groupKey": `{}:{alertname="HighLatency"}`, "status": "firing", "receiver": "vigil",
		"groupLabels": map[string]string{"alertname": "HighLatency"},
		"alerts": []map[string]any{{"status": "firing", "fingerprint": "f1", "startsAt": time.Now().UTC().Format(time.RFC3339),
			"labels": map[string]string{"alertname": "HighLatency", "team": "payments", "instance": "web-1:9100", "host": "db-1"}}},
	})
	if code, _, body := postWebhook(t, srv.URL, "/alerts/alertmanager", alert, map[string]string{"Authorization": "Bearer " + alertToken}); code != http.StatusOK {
		t.Fatalf("alert webhook: %d %s", code, body)
	}
	waitPost(payChan, "HighLatency")
	var al []modeltest.Request
	deadline := time.Now().Add(alertWait)
	for len(al) < 2 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		al = al[:0]
		for _, r := range model.Requests() {
			if strings.Contains(r.FirstUser(), "HighLatency") {
				al = append(al, r)
			}
		}
	}
	if len(al) < 2 {
		t.Fatalf("the alert investigation made %d model requests", len(al))
	}
	idle(t, st)
	mustContain(t, toolDesc(t, al[0], "metrics"), "pay-prom", "the alert run's metrics tool")
	mustNotContain(t, toolDesc(t, al[0], "metrics"), "shop-prom", "the alert run's metrics tool")
	mustContain(t, al[0].FirstUser(), "(host web-1) is not available in this channel (slack:"+payChan+")", "the alert's context")
	if got := code(decodeEnvelope(t, resultFor(t, al[1], "read", "db-1"))); got != "" {
		t.Errorf("the alert run's in-scope read failed: %s", resultFor(t, al[1], "read", "db-1"))
	}
	mustContain(t, resultFor(t, al[1], "read", "web-1"), "is not available in this channel (slack:"+payChan+")", "the alert run's out-of-scope read")
	for _, c := range fake.Posts() {
		if c.Param("channel") == shopChan && strings.Contains(c.Text(), "HighLatency") {
			t.Errorf("the payments alert reached the shop channel: %q", c.Text())
		}
	}
}

// An approval cannot widen a scope: a change proposed while the channel
// reached everything, approved after its scope was narrowed (a restart
// with the new configuration, the run in the shared store), does not run.
func TestScopeApprovalCannotWiden(t *testing.T) {
	file := filepath.Join(t.TempDir(), "ran")
	mem := store.NewMemory().Stores()
	model := modeltest.New(t)
	inv := scopeInventory(t)
	cps := []policy.ChannelPolicy{{Match: "testchat:ops", Level: policy.LevelControlled,
		Operators: []string{"alice"}, Approvers: []string{"bob"}}}
	th := testkit.Thread("ops", "t1")

	first := testkit.NewChat()
	ctx1, stop1 := context.WithCancel(context.Background())
	st1 := testkit.Start(t, testkit.Options{Adapter: first, Model: model, Channels: cps, Stores: &mem, Inventory: inv, NoRun: true})
	done1 := make(chan error, 1)
	go func() { done1 <- st1.Bot.Run(ctx1) }()
	model.Script(modeltest.Calls(modeltest.Call("discover", testkit.Args("resource", "db-1"))),
		modeltest.Calls(modeltest.Call("control", testkit.Args("action", "command", "target", "db-1", "command", testkit.AppendLine(file)))))
	first.Say(t, th, "alice", "append a line on @db-1")
	card := first.WaitCard(t, th, wait)
	idle(t, st1)
	stop1()
	<-done1

	second := testkit.NewChat()
	st2 := testkit.Start(t, testkit.Options{Adapter: second, Model: model, Channels: cps, Stores: &mem, Inventory: inv,
		Configure: func(cfg *config.Config) {
			cfg.Channels[0].Scope = &config.ChannelScope{Hosts: []string{"web-*"}}
		}})
	model.Script(modeltest.Text("not run"))
	second.Decide(t, bot.Decision{ApprovalID: card.ID, Token: card.Token, Approve: true, User: "bob", Thread: th})
	idle(t, st2)
	second.WaitText(t, th, "[answer] not run", wait)
	if n := testkit.LineCount(t, file); n != 0 {
		t.Fatalf("an approved change outside the channel's scope ran %d times", n)
	}
	reqs := model.Requests()
	last := reqs[len(reqs)-1]
	var got string
	for _, m := range last.ToolResults() {
		got += m.Content
	}
	mustContain(t, got, "host db-1 is not available in this channel (testchat:ops)", "the approved call's result")
}

// Kubernetes scope against the stand-in API server: the shop channel
// holds the shop namespace, the payments channel no cluster at all; the
// payments channel is refused the shop's @mentions, reads and changes,
// and each channel's kube tool says what it holds.
func TestScopeKubernetesNamespaces(t *testing.T) {
	api := kubeapi.Start(t)
	chat := testkit.NewChat()
	model := modeltest.New(t)
	model.Route(func(r modeltest.Request) modeltest.Step {
		if strings.Contains(r.FirstUser(), "restart checkout") && r.Turns() == 0 {
			return modeltest.Calls(
				modeltest.Call("kube", testkit.Args("action", "rollout_restart", "namespace", "shop", "kind", "deployment", "name", "checkout")),
				modeltest.Call("kube", testkit.Args("action", "list", "namespace", "shop", "kind", "pod")))
		}
		return modeltest.Text("checked")
	})
	cp := func(ch string, sc *policy.Scope) policy.ChannelPolicy {
		return policy.ChannelPolicy{Match: "testchat:" + ch, Level: policy.LevelControlled,
			Operators: []string{"alice"}, Approvers: []string{"bob"}, Scope: sc}
	}
	st := testkit.Start(t, testkit.Options{Adapter: chat, Model: model,
		Channels: []policy.ChannelPolicy{
			cp("shop", &policy.Scope{Kubernetes: []string{"prod/shop"}}),
			cp("pay", &policy.Scope{Hosts: []string{"*"}}),
		},
		Configure: func(c *config.Config) {
			c.Kubernetes.Clusters = []config.KubeCluster{{Name: "prod", Kubeconfig: api.Kubeconfig(t), Context: "vigil",
				Namespaces: []string{"shop"}}}
		}})
	shopTh, payTh := testkit.Thread("shop", "t1"), testkit.Thread("pay", "t1")

	chat.Say(t, payTh, "alice", "restart checkout: @checkout is returning 503s")
	idle(t, st)
	chat.WaitText(t, payTh, "namespace shop of cluster prod) is not available in this channel (testchat:pay)", wait)
	chat.Say(t, shopTh, "alice", "how is @checkout?")
	idle(t, st)
	chat.WaitText(t, shopTh, "checked", wait)

	var pay, shop []modeltest.Request
	for _, r := range model.Requests() {
		switch {
		case strings.Contains(r.FirstUser(), "restart checkout"):
			pay = append(pay, r)
		case strings.Contains(r.FirstUser(), "how is @checkout"):
			shop = append(shop, r)
		}
	}
	if len(pay) < 2 || len(shop) < 1 {
		t.Fatalf("model requests: pay %d, shop %d", len(pay), len(shop))
	}
	mustContain(t, toolDesc(t, pay[0], "kube"), "Not available in this channel: no Kubernetes cluster or namespace is in this channel's scope", "the payments channel's kube tool")
	mustNotContain(t, toolDesc(t, pay[0], "kube"), "prod", "the payments channel's kube tool")
	mustContain(t, toolDesc(t, shop[0], "kube"), "prod (namespaces shop)", "the shop channel's kube tool")
	mustContain(t, shop[0].FirstUser(), "@checkout is k8s_deployment:prod:shop/checkout", "the shop channel's context")
	for _, args := range []string{"rollout_restart", "list"} {
		res := resultFor(t, pay[1], "kube", args)
		mustContain(t, res, "namespace shop of cluster prod is not available in this channel (testchat:pay)", "the payments channel's kube "+args)
	}
	if w := api.Writes(); len(w) != 0 {
		t.Fatalf("the cluster was changed from a channel whose scope does not hold it: %+v", w)
	}
}

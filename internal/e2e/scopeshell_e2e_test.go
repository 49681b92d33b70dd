package e2e

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/vigilops/vigil/adapters/slack"
	"github.com/vigilops/vigil/internal/config"
	"github.com/vigilops/vigil/internal/testenv/kubeapi"
	"github.com/vigilops/vigil/internal/testenv/modeltest"
	"github.com/vigilops/vigil/internal/testenv/slackfake"
	"github.com/vigilops/vigil/internal/testenv/testkit"
	"github.com/vigilops/vigil/policy"
)

// Scope on the shell path (issue 27): a read on a host the channel holds
// runs a command that may itself reach a cluster or datasource outside
// the scope. On the Slack test server, with the stand-in API server and
// two real Prometheus-shaped HTTP servers: the shop channel (namespace
// shop of cluster prod, datasource shop-prom) is refused
// `kubectl -n payments get pods` and a curl to pay-prom with the reason;
// the payments channel (the whole of prod, pay-prom) runs both.
func TestScopeShellReachOnSlack(t *testing.T) {
	api := kubeapi.Start(t)
	prom := func(name string) *httptest.Server {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `{"status":"success","data":{"resultType":"vector","result":[]},"from":%q}`, name)
		}))
		t.Cleanup(s.Close)
		return s
	}
	shopProm, payProm := prom("shop-prom"), prom("pay-prom")
	payQuery := "curl -s '" + payProm.URL + "/api/v1/query?query=up'"
	kubectl := "kubectl -n payments get pods"

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
	readCmd := func(target, cmd string) modeltest.ToolCall {
		return modeltest.Call("read", testkit.Args("action", "exec", "target", target, "command", cmd))
	}
	deletePod := "kubectl -n payments delete pod ledger-0"
	change := func(target string) modeltest.ToolCall {
		return modeltest.Call("control", testkit.Args("action", "command", "target", target, "command", deletePod))
	}
	model := modeltest.New(t)
	model.Route(func(r modeltest.Request) modeltest.Step {
		fu := r.FirstUser()
		switch {
		case strings.Contains(fu, "shop shell") && r.Turns() == 0:
			return modeltest.Calls(readCmd("web-1", kubectl), readCmd("web-1", payQuery))
		case strings.Contains(fu, "pay shell") && r.Turns() == 0:
			return modeltest.Calls(readCmd("db-1", kubectl), readCmd("db-1", payQuery))
		case strings.Contains(fu, "shop change") && r.Turns() == 0:
			return modeltest.Calls(change("web-1"))
		case strings.Contains(fu, "pay change") && r.Turns() == 0:
			return modeltest.Calls(modeltest.Call("discover", testkit.Args("resource", "db-1")))
		case strings.Contains(fu, "pay change") && r.Turns() == 1:
			return modeltest.Calls(change("db-1"))
		}
		return modeltest.Text("checked")
	})
	cp := func(ch string) policy.ChannelPolicy {
		return policy.ChannelPolicy{Match: "slack:" + ch, Level: policy.LevelControlled,
			Operators: []string{e2eAliceID}, Approvers: []string{e2eBobID}}
	}
	st := testkit.Start(t, testkit.Options{Adapter: ad, Model: model, Inventory: scopeInventory(t),
		Channels: []policy.ChannelPolicy{cp(shopChan), cp(payChan)},
		Configure: func(c *config.Config) {
			c.Observability.Prometheus = []config.Prometheus{
				{Name: "shop-prom", URL: shopProm.URL, Timeout: time.Second},
				{Name: "pay-prom", URL: payProm.URL, Timeout: time.Second},
			}
			c.Kubernetes.Clusters = []config.KubeCluster{{Name: "prod", Kubeconfig: api.Kubeconfig(t), Context: "vigil"}}
			for i := range c.Channels {
				switch c.Channels[i].Match {
				case "slack:" + shopChan:
					c.Channels[i].Scope = &config.ChannelScope{Hosts: []string{"web-*"}, Kubernetes: []string{"prod/shop"}, Datasources: []string{"shop-prom"}}
				case "slack:" + payChan:
					c.Channels[i].Scope = &config.ChannelScope{Hosts: []string{"label:team=payments"}, Kubernetes: []string{"prod"}, Datasources: []string{"pay-prom"}}
				}
			}
		}})
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
	waitPost := func(ch, want string) {
		t.Helper()
		fake.WaitFor(t, wait, want, func(calls []slackfake.Call) bool {
			for _, c := range calls {
				if c.Method == "chat.postMessage" && c.Param("channel") == ch && strings.Contains(c.Text(), want) {
					return true
				}
			}
			return false
		})
	}
	result := func(r modeltest.Request, cmd string) string {
		t.Helper()
		for _, m := range r.Messages {
			for _, c := range m.ToolCalls {
				if !strings.Contains(c.Arguments, strings.ReplaceAll(cmd, "'", `\u0027`)) && !strings.Contains(c.Arguments, cmd) {
					continue
				}
				for _, res := range r.ToolResults() {
					if res.ToolCallID == c.ID {
						return res.Content
					}
				}
			}
		}
		t.Fatalf("no result of %q in request %d", cmd, r.N)
		return ""
	}

	send("EvShopShell", shopChan, "1700008000.000100", "shop shell: from @web-1, how are the payments pods?")
	waitPost(shopChan, "checked")
	idle(t, st)
	shop := requestsFor(t, model, "shop shell")
	k := result(shop[1], kubectl)
	mustContain(t, k, "STRICT_RESOLUTION", "the shop channel's kubectl")
	mustContain(t, k, "(the API server of cluster prod) from a shell command is not available in this channel (slack:"+shopChan+")", "the shop channel's kubectl")
	mustContain(t, k, "use the kube tool, which honours namespaces", "the shop channel's kubectl")
	c := result(shop[1], payQuery)
	mustContain(t, c, "STRICT_RESOLUTION", "the shop channel's curl to pay-prom")
	mustContain(t, c, "(datasource pay-prom) is not available in this channel (slack:"+shopChan+")", "the shop channel's curl to pay-prom")
	mustContain(t, c, "datasources: shop-prom", "the shop channel's curl to pay-prom")

	send("EvPayShell", payChan, "1700008100.000100", "pay shell: from @db-1, how are the payments pods?")
	waitPost(payChan, "checked")
	idle(t, st)
	pay := requestsFor(t, model, "pay shell")
	for _, cmd := range []string{kubectl, payQuery} {
		res := result(pay[1], cmd)
		if strings.Contains(res, "not available in this channel") || strings.Contains(res, "STRICT_RESOLUTION") || strings.Contains(res, "POLICY_BLOCKED") {
			t.Errorf("the payments channel was refused %q: %s", cmd, res)
		}
	}
	mustContain(t, result(pay[1], payQuery), `\"from\":\"pay-prom\"`, "the payments channel's curl (it ran and reached pay-prom)")

	// A change on the shell path: the shop channel's is refused before
	// any approval card; the payments channel's waits for approval.
	send("EvShopChange", shopChan, "1700008200.000100", "shop change: on @web-1, delete the stuck payments pod")
	waitPost(shopChan, "checked")
	idle(t, st)
	shopChange := requestsFor(t, model, "shop change")
	ch := result(shopChange[1], deletePod)
	mustContain(t, ch, "STRICT_RESOLUTION", "the shop channel's change")
	mustContain(t, ch, "use the kube tool, which honours namespaces", "the shop channel's change")
	send("EvPayChange", payChan, "1700008300.000100", "pay change: on @db-1, delete the stuck payments pod")
	waitPost(payChan, "Approval needed: control on db-1") // the card
	waitPost(payChan, deletePod)
	for _, c := range fake.Posts() {
		if c.Param("channel") == shopChan && strings.Contains(c.Text(), "ledger-0") && !strings.Contains(c.Text(), "· blocked") {
			t.Errorf("the shop channel's out-of-scope change was posted as other than blocked: %q", c.Text())
		}
		if c.Param("channel") == shopChan && strings.Contains(c.Text(), "Approval needed") {
			t.Errorf("the shop channel got an approval card: %q", c.Text())
		}
	}
	if w := api.Writes(); len(w) != 0 {
		t.Fatalf("the cluster was changed: %+v", w)
	}
}

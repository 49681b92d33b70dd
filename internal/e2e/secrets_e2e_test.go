package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigilops/vigil/adapters/slack"
	"github.com/vigilops/vigil/internal/config"
	"github.com/vigilops/vigil/internal/testenv/kubeapi"
	"github.com/vigilops/vigil/internal/testenv/modeltest"
	"github.com/vigilops/vigil/internal/testenv/obsbin"
	"github.com/vigilops/vigil/internal/testenv/slackfake"
	"github.com/vigilops/vigil/internal/testenv/testkit"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools/plugin/plugintest"
)

// Secrets never leave (SPEC R3, issue 23): what a read, a pod's log, a
// plugin and a metrics query print reaches neither the model's requests
// nor Slack. The real bot, agent, policy and tools behind the Slack adapter
// in front of the fake Slack; a real file read by a real shell, the
// stand-in Kubernetes API, a real MCP server process and a real Prometheus
// scraping an exporter, driven by the scripted model.
func TestSecretsReachNeitherModelNorSlack(t *testing.T) {
	const (
		channel = "C0SECRETS"
		alice   = "U0ALICE"
		root    = "1700007000.000100"
	)
	pemKey := "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n-----END RSA PRIVATE KEY-----\n"
	// Each secret, in the shape issue 23 found leaking, as the read prints it.
	readSecrets := map[string]string{
		"mysql-dsn-pw": "DSN=app:mysql-dsn-pw@tcp(db:3306)/app",
		"pgpass pw 99": "db.internal:5432:app:app:pgpass pw 99",
		"SHADOWhashXyZ0123456789abcdefghijklmnopqrstuv./ABCDEFGHIJKLMNOPQRS": "root:$6$saltsalt$SHADOWhashXyZ0123456789abcdefghijklmnopqrstuv./ABCDEFGHIJKLMNOPQRS:19745:0:99999:7:::",
		"Y29va2llc2Vzc2lvbg":                    "Set-Cookie: session=Y29va2llc2Vzc2lvbg; Path=/; HttpOnly",
		"hvs.CAESIReadPathV4ultT0k3n0123456789": "export VAULT_TOKEN=hvs.CAESIReadPathV4ultT0k3n0123456789",
		"SG.readpathSendgridKey1.ReadPathSendGridSecretPartABCDEFGHIJKLMNOPQRS": "SENDGRID=SG.readpathSendgridKey1.ReadPathSendGridSecretPartABCDEFGHIJKLMNOPQRS",
		"Rp9/aB8+cD7eF6gH5iJ4kL3mN2oP1qR0sT9uV8wX":                              "AKIAJ5DZ2EXAMPLEKEY1 Rp9/aB8+cD7eF6gH5iJ4kL3mN2oP1qR0sT9uV8wX",
		"c2VjcmV0LWRhdGE=":   "apiVersion: v1\ndata:\n  config: c2VjcmV0LWRhdGE=\nkind: Secret\nmetadata:\n  name: app",
		"env-entry-pw-1":     "env:\n- name: DB_PASSWORD\n  value: env-entry-pw-1\n- name: LOG_LEVEL\n  value: info",
		"nested-json-pw-2":   `config={"db":{"password":"nested-json-pw-2"}}`,
		"escaped-quote-pw-3": `body="{\"password\":\"escaped-quote-pw-3\"}"`,
		base64.StdEncoding.EncodeToString([]byte(pemKey))[:40]: "tls.key: " + base64.StdEncoding.EncodeToString([]byte(pemKey)),
	}
	var file strings.Builder
	for _, line := range readSecrets {
		file.WriteString(line + "\n")
	}
	file.WriteString("LOG_LEVEL=info\n")
	secretFile := filepath.Join(t.TempDir(), "app.conf")
	if err := os.WriteFile(secretFile, []byte(file.String()), 0o600); err != nil {
		t.Fatal(err)
	}

	// A pod's log: JSON log lines, one after a time stamp.
	logSecrets := []string{"kube-log-api-key-7", "kube-log-bearer-8x", "kube-log-cookie-9"}
	api := kubeapi.Start(t)
	api.SetLog("checkout-7d9f-abcde",
		`{"level":"info","msg":"config loaded","config":{"api_keys":["kube-log-api-key-7"]}}`+"\n"+
			`2026-03-01T12:00:00Z {"level":"debug","req":{"headers":{"Authorization":"Bearer kube-log-bearer-8x","Cookie":"sid=kube-log-cookie-9"}}}`+"\n"+
			"GET /healthz 200\n")

	// A plugin whose tool reports its own environment.
	const pluginToken = "hvs.CAESIPluginEnvT0k3nValue0123456789"
	server := plugintest.BuildEchoServer(t, t.TempDir())

	// Prometheus scrapes series whose label is a password.
	const promSecret = "prom-label-hunter2"
	exporter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprintf(w, "# TYPE legacy_db_up gauge\nlegacy_db_up{password=%q} 1\n", promSecret)
	}))
	t.Cleanup(exporter.Close)
	host, _ := url.Parse(exporter.URL)
	prom := obsbin.Prometheus(t, fmt.Sprintf("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: legacy\n    static_configs:\n      - targets: [%q]\n", host.Host))
	waitUntil(t, "Prometheus to scrape the exporter", func() bool {
		resp, err := http.Get(prom.URL + "/api/v1/label/password/values")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var v struct{ Data []string }
		return json.NewDecoder(resp.Body).Decode(&v) == nil && len(v.Data) == 1
	})

	fake := slackfake.New(t)
	fake.AddUser(slackfake.User{ID: alice, Name: "alice"})
	ad, err := slack.New(slack.Config{Mode: slack.ModeHTTP, BotToken: slackfake.BotToken, SigningSecret: slackfake.SigningSecret,
		Listen: "127.0.0.1:0", APIURL: fake.APIURL(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	model := modeltest.New(t)
	st := testkit.Start(t, testkit.Options{
		Adapter: ad, Model: model,
		Channels: []policy.ChannelPolicy{{Match: "slack:" + channel, Level: policy.LevelControlled, Operators: []string{alice}, Approvers: []string{alice}}},
		Plugins:  []config.Plugin{{Name: "ops", Command: server, Env: []string{"VAULT_TOKEN=" + pluginToken}, ReadOnlyTools: []string{"env"}}},
		Configure: func(c *config.Config) {
			c.Kubernetes.Clusters = []config.KubeCluster{{Name: "prod", Kubeconfig: api.Kubeconfig(t), Context: "vigil", Namespaces: []string{"shop"}}}
			c.Observability.Prometheus = []config.Prometheus{{Name: "main", URL: prom.URL, Timeout: 10 * time.Second}}
		},
	})
	deadline := time.Now().Add(wait)
	for ad.Addr() == "" && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}

	model.Script(
		modeltest.Calls(discoverLocal()),
		modeltest.Calls(readExec("cat "+secretFile)),
		modeltest.Calls(kubeCall("action", "logs", "namespace", "shop", "kind", "pod", "name", "checkout-7d9f-abcde")),
		modeltest.Calls(modeltest.Call("ops_env", testkit.Args("text", "VAULT_TOKEN"))),
		modeltest.Calls(modeltest.Call("metrics", testkit.Args("action", "label_values", "label", "password"))),
		modeltest.Text("looked at everything"),
	)
	body := slackfake.EventCallback("EvSecrets", slackfake.AppMention(channel, alice, "<@U0VIGIL> check the config on @localhost", root, ""))
	resp, err := http.DefaultClient.Do(slackfake.EventsRequest(t, "http://"+ad.Addr()+"/slack/events", body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	fake.WaitFor(t, wait, "the final answer", func(calls []slackfake.Call) bool {
		for _, c := range calls {
			if c.Method == "chat.postMessage" && strings.Contains(c.Text(), "looked at everything") {
				return true
			}
		}
		return false
	})
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := st.Bot.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}

	// Every tool ran and its result reached the model.
	res := resultsOf(t, model.Requests()[len(model.Requests())-1])
	if len(res) != 5 {
		t.Fatalf("%d tool results, want 5", len(res))
	}
	for i, r := range res {
		if !r.OK {
			t.Fatalf("tool %d failed: %+v", i+1, r.Error)
		}
	}
	var sent strings.Builder
	for _, r := range model.Requests() {
		sent.WriteString(r.Body)
	}
	var slackSaw strings.Builder
	for _, c := range fake.Calls() {
		fmt.Fprintln(&slackSaw, c.Params.Encode(), c.Blocks)
		for _, vs := range c.Params {
			for _, v := range vs {
				slackSaw.WriteString(v + "\n") // unescaped too
			}
		}
	}
	for _, u := range fake.Uploads() {
		slackSaw.WriteString(u.Content + "\n")
	}
	all := []string{pluginToken, promSecret}
	all = append(all, logSecrets...)
	for s := range readSecrets {
		all = append(all, s)
	}
	for _, s := range all {
		if strings.Contains(sent.String(), s) || strings.Contains(sent.String(), jsonEscaped(s)) {
			t.Errorf("the model received %q", s)
		}
		if strings.Contains(slackSaw.String(), s) {
			t.Errorf("Slack received %q", s)
		}
	}
	// What is not a secret still gets through.
	mustContain(t, sent.String(), "LOG_LEVEL=info", "the model's view of the read")
	mustContain(t, sent.String(), "GET /healthz 200", "the model's view of the pod log")
	mustContain(t, sent.String(), `VAULT_TOKEN set=true`, "the model's view of the plugin output")
	mustContain(t, sent.String(), `\"label\":\"password\"`, "the model's view of the label values")
	if !strings.Contains(slackSaw.String(), "GET /healthz 200") {
		t.Error("the pod log's trace did not reach Slack")
	}
}

// jsonEscaped is s as it appears inside a JSON string.
func jsonEscaped(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

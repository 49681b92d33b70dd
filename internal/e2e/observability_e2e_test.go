package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigilops/vigil/internal/config"
	"github.com/vigilops/vigil/internal/testenv/kubeapi"
	"github.com/vigilops/vigil/internal/testenv/modeltest"
	"github.com/vigilops/vigil/internal/testenv/obsbin"
	"github.com/vigilops/vigil/internal/testenv/testkit"
	"github.com/vigilops/vigil/policy"
)

// The observability tools end to end through the console: a real
// Prometheus and Alertmanager, the stand-in Kubernetes API server (no real
// one can run here), a real git repository.

func withConfig(fn func(*config.Config)) func(*testkit.Options) {
	return func(o *testkit.Options) { o.Configure = fn }
}

func TestConsoleMetricsSummariseARealPrometheus(t *testing.T) {
	e := obsbin.StartExporter(t)
	prom := obsbin.Prometheus(t, e.ScrapeConfig(""))
	spikeStart, _ := e.WaitPastSpike(t, prom, 40*time.Second)
	h := start(t, policy.LevelControlled, withConfig(func(c *config.Config) {
		c.Observability.Prometheus = []config.Prometheus{{Name: "main", URL: prom.URL, Timeout: 10 * time.Second}}
	}))
	h.model.Script(
		modeltest.Calls(modeltest.Call("metrics", testkit.Args("action", "range", "query", "vigil_test_latency_seconds", "since", "1m", "step", "1s"))),
		modeltest.Text("checkout latency spiked"),
	)
	h.ask("was checkout slow in the last minute?")
	h.con.WaitFor(t, "vigil> checkout latency spiked", wait)
	mustContain(t, h.con.Output(), "[ok] metrics range", "trace")
	res := resultsOf(t, h.lastRequest())
	if len(res) != 1 || !res[0].OK {
		t.Fatalf("results = %+v", res)
	}
	var sum struct {
		Series []struct {
			Series        string
			LargestChange *struct {
				Kind string
				At   time.Time
			} `json:"largest_change"`
		}
	}
	if err := json.Unmarshal(res[0].Data, &sum); err != nil {
		t.Fatal(err)
	}
	c := sum.Series[0].LargestChange
	if !strings.Contains(sum.Series[0].Series, `service="checkout"`) || c == nil || c.Kind != "spike" ||
		c.At.Before(spikeStart.Truncate(time.Second)) || c.At.After(spikeStart.Add(2*time.Second)) {
		t.Fatalf("the model read %s; the spike began at %s", res[0].Data, spikeStart.UTC())
	}
}

// amSilences reads Alertmanager's silences directly.
func amSilences(t *testing.T, url string) []map[string]any {
	t.Helper()
	resp, err := http.Get(url + "/api/v2/silences")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

func startAlertmanager(t *testing.T) *obsbin.Server {
	t.Helper()
	am := obsbin.Alertmanager(t, "route:\n  receiver: none\nreceivers:\n  - name: none\n")
	raw, _ := json.Marshal([]map[string]any{{
		"labels":      map[string]string{"alertname": "HighLatency", "service": "checkout", "severity": "page"},
		"annotations": map[string]string{"summary": "checkout p99 above 2s"},
	}})
	resp, err := http.Post(am.URL+"/api/v2/alerts", "application/json", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return am
}

func silenceCall() modeltest.ToolCall {
	return modeltest.Call("alerts", testkit.Args("action", "silence", "matchers", []string{"alertname=HighLatency", "service=checkout"},
		"duration", "2h", "comment", "deploy of checkout 2.3.1 in progress"))
}

// A silence exists in Alertmanager only after a person approved it, and in
// that person's name.
func TestConsoleSilenceCreatedOnlyAfterApproval(t *testing.T) {
	am := startAlertmanager(t)
	h := start(t, policy.LevelControlled, withConfig(func(c *config.Config) {
		c.Observability.Alertmanager.URL = am.URL
	}))
	h.model.Script(
		modeltest.Calls(modeltest.Call("alerts", testkit.Args("action", "list"))),
		modeltest.Calls(silenceCall()),
		modeltest.Calls(modeltest.Call("alerts", testkit.Args("action", "silences"))),
		modeltest.Text("silenced for the deploy"),
	)
	h.ask("silence the checkout latency alert during the deploy")
	id := h.con.ApprovalID(t, 1, wait)
	out := h.con.Output()
	mustContain(t, out, `matchers: alertname="HighLatency", service="checkout"`, "card shows the matchers")
	mustContain(t, out, "duration: 2h from when it is approved", "card shows the duration")
	mustContain(t, out, "comment: deploy of checkout 2.3.1 in progress", "card shows the comment")
	if got := amSilences(t, am.URL); len(got) != 0 {
		t.Fatalf("a silence exists before approval: %v", got)
	}
	h.con.Send(t, "approve "+id)
	h.idle()
	h.con.WaitFor(t, "vigil> silenced for the deploy", wait)
	got := amSilences(t, am.URL)
	if len(got) != 1 || got[0]["createdBy"] != "alice" || got[0]["comment"] != "deploy of checkout 2.3.1 in progress" ||
		got[0]["status"].(map[string]any)["state"] != "active" {
		t.Fatalf("Alertmanager's silences = %v, want one active silence created by the approver", got)
	}
	res := resultsOf(t, h.lastRequest())
	verify := res[len(res)-1]
	if !verify.OK || !strings.Contains(string(verify.Data), fmt.Sprint(got[0]["id"])) {
		t.Fatalf("the verifying read = %s", verify.Data)
	}
	if s := h.session(); s.Policy.FSM.State != policy.StateReading {
		t.Fatalf("FSM = %s after the verifying read", s.Policy.FSM.State)
	}
}

func kubeCluster(s *kubeapi.Server, t *testing.T) func(*testkit.Options) {
	return withConfig(func(c *config.Config) {
		c.Kubernetes.Clusters = []config.KubeCluster{{Name: "prod", Kubeconfig: s.Kubeconfig(t), Context: "vigil", Namespaces: []string{"shop"}}}
	})
}

func kubeCall(kv ...any) modeltest.ToolCall { return modeltest.Call("kube", testkit.Args(kv...)) }

// @checkout resolves to the deployment through discovery; restarting it
// needs approval, shows the exact change, and sends one patch.
func TestConsoleKubeMentionAndApprovedRestart(t *testing.T) {
	api := kubeapi.Start(t)
	h := start(t, policy.LevelControlled, kubeCluster(api, t))
	h.model.Script(
		modeltest.Calls(kubeCall("action", "describe", "namespace", "shop", "kind", "deployment", "name", "checkout")),
		modeltest.Calls(kubeCall("action", "rollout_restart", "namespace", "shop", "kind", "deployment", "name", "checkout")),
		modeltest.Calls(kubeCall("action", "get", "namespace", "shop", "kind", "deployment", "name", "checkout")),
		modeltest.Text("restarted and checked"),
	)
	h.ask("@checkout is returning 503s, restart it")
	id := h.con.ApprovalID(t, 1, wait)
	if first := h.model.Requests()[0].FirstUser(); !strings.Contains(first, "@checkout is k8s_deployment:prod:shop/checkout") {
		t.Fatalf("the mention was not resolved for the model:\n%s", first)
	}
	out := h.con.Output()
	for _, want := range []string{"cluster: prod", "namespace: shop", "object: deployment/checkout", "change: rolling restart of every pod",
		"target:    k8s_deployment:prod:shop/checkout"} {
		mustContain(t, out, want, "card")
	}
	if w := api.Writes(); len(w) != 0 {
		t.Fatalf("the cluster was changed before approval: %+v", w)
	}
	h.con.Send(t, "approve "+id)
	h.idle()
	h.con.WaitFor(t, "vigil> restarted and checked", wait)
	w := api.Writes()
	if len(w) != 1 || w[0].Method != "PATCH" || !strings.Contains(string(w[0].Body), "kubectl.kubernetes.io/restartedAt") {
		t.Fatalf("writes = %+v", w)
	}
}

// A write must name an object the session has seen: an unresolved one is
// refused before anything is sent.
func TestConsoleKubeWriteNeedsAResolvedObject(t *testing.T) {
	api := kubeapi.Start(t)
	h := start(t, policy.LevelControlled, kubeCluster(api, t))
	h.model.Script(
		modeltest.Calls(kubeCall("action", "list", "kind", "pod", "namespace", "shop")),
		modeltest.Calls(kubeCall("action", "scale", "namespace", "shop", "kind", "deployment", "name", "cart", "replicas", 0)),
		modeltest.Text("refused"),
	)
	h.ask("scale cart down to zero")
	h.con.WaitFor(t, "vigil> refused", wait)
	res := resultsOf(t, h.lastRequest())
	if code(res[1]) != string(policy.CodeStrictResolution) {
		t.Fatalf("scale of an unresolved deployment = %+v", res[1])
	}
	if w := api.Writes(); len(w) != 0 {
		t.Fatalf("writes = %+v", w)
	}
}

func TestConsoleChangesMergesHostAndGit(t *testing.T) {
	repo := t.TempDir()
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"-c", "user.name=Bob Ops", "-c", "user.email=bob@example.org", "commit", "-q", "--allow-empty", "-m", "raise nginx worker_connections"},
	} {
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	h := start(t, policy.LevelControlled, withConfig(func(c *config.Config) {
		c.Changes.GitRepos = []config.GitRepo{{Name: "infra", Path: repo}}
	}))
	h.model.Script(
		modeltest.Calls(modeltest.Call("changes", testkit.Args("target", "localhost", "since", "1h"))),
		modeltest.Text("one commit"),
	)
	h.ask("what changed on @localhost?")
	h.con.WaitFor(t, "vigil> one commit", wait)
	res := resultsOf(t, h.lastRequest())
	if !res[0].OK || !strings.Contains(string(res[0].Data), "by Bob Ops: raise nginx worker_connections") {
		t.Fatalf("changes = %+v %s", res[0].Error, res[0].Data)
	}
	mustContain(t, h.con.Output(), "git:infra", "trace")
	if _, err := os.Stat(filepath.Join(repo, ".git")); err != nil {
		t.Fatal(err)
	}
}

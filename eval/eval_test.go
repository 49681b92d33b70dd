package eval

import (
	"context"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigilops/vigil/agent/openai"
	"github.com/vigilops/vigil/internal/testenv/modeltest"
)

func loadAll(t *testing.T) []*Scenario {
	t.Helper()
	all, err := LoadBuiltin()
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// referenceRuns are the runs of every shipped scenario's reference
// trajectory with the default options, by scenario name, made once per test
// binary: the tests that look at them (whether they pass, what they read
// and how much) share them instead of each running the suite again under
// the race detector. Run is given fresh scenarios and a fresh world each
// time, so a shared run is the run each test would have made; the tests
// only read the results.
var referenceRuns = sync.OnceValues(func() (map[string]Result, error) {
	all, err := LoadBuiltin()
	if err != nil {
		return nil, err
	}
	runs := map[string]Result{}
	for _, sc := range all {
		runs[sc.Name] = Run(context.Background(), sc, NewScript(sc.Reference, "gpt-4o"), Options{}, 1)
	}
	return runs, nil
})

// referenceRun is sc's reference run (referenceRuns).
func referenceRun(t *testing.T, sc *Scenario) Result {
	t.Helper()
	runs, err := referenceRuns()
	if err != nil {
		t.Fatal(err)
	}
	r, ok := runs[sc.Name]
	if !ok {
		t.Fatalf("no reference run of scenario %s", sc.Name)
	}
	return r
}

// TestReferenceTrajectories runs every shipped scenario's reference
// trajectory (it must pass) and every wrong one (it must fail, on the check
// it names) through the real agent, policy and tools.
func TestReferenceTrajectories(t *testing.T) {
	all := loadAll(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for _, sc := range all {
		t.Run(sc.Name, func(t *testing.T) {
			r := referenceRun(t, sc)
			if !r.Grade.Pass {
				t.Errorf("reference failed: %s\nanswer: %s\ncalls: %+v", r.Grade.Reason(), r.Answer, r.Calls)
			}
			for _, w := range sc.Wrong {
				r := Run(ctx, sc, NewScript(w.Turns, "gpt-4o"), Options{}, 1)
				if r.Grade.Pass {
					t.Errorf("wrong trajectory %s passed", w.Name)
				} else if !slices.Contains(r.Grade.Failed, w.Fails) {
					t.Errorf("wrong trajectory %s failed %v, want %s: %s", w.Name, r.Grade.Failed, w.Fails, r.Grade.Reason())
				}
			}
		})
	}
}

// TestReferenceReportUpToDate regenerates eval/REFERENCE.md in memory and
// compares it with the file; VIGIL_UPDATE_REFERENCE=1 (make eval-reference)
// writes it instead.
func TestReferenceReportUpToDate(t *testing.T) {
	var b strings.Builder
	sc, err := WriteReferenceReport(context.Background(), &b, loadAll(t))
	if err != nil {
		t.Fatal(err)
	}
	if sc.Failed() {
		t.Errorf("the reference suite fails: wrong trajectories that passed %v", sc.WrongPassed)
	}
	if os.Getenv("VIGIL_UPDATE_REFERENCE") == "1" {
		if err := os.WriteFile("REFERENCE.md", []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile("REFERENCE.md")
	if err != nil {
		t.Fatalf("%v; run make eval-reference", err)
	}
	if string(have) != b.String() {
		t.Errorf("eval/REFERENCE.md is out of date; run make eval-reference (diff the file to see what changed)")
	}
}

// Every reference trajectory also passes when its turns come through the
// real go-openai client from a scripted OpenAI-compatible server, as a
// configured model's would: tool call arguments, IDs and usage take the
// wire path.
func TestReferenceThroughOpenAIClient(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for _, sc := range loadAll(t) {
		srv := modeltest.New(t)
		for _, turn := range sc.Reference {
			if turn.Answer != "" {
				srv.Script(modeltest.Text(turn.Answer))
				continue
			}
			var calls []modeltest.ToolCall
			for _, c := range turn.Calls {
				calls = append(calls, modeltest.Call(c.Tool, c.JSON()))
			}
			srv.Script(modeltest.Calls(calls...))
		}
		oc := openai.DefaultConfig()
		oc.BaseURL, oc.Model, oc.MaxRetries = srv.URL(), "gpt-4o-mini", -1
		m, err := openai.New(oc)
		if err != nil {
			t.Fatal(err)
		}
		r := Run(ctx, sc, m, Options{}, 1)
		if !r.Grade.Pass {
			t.Errorf("%s through go-openai: %s", sc.Name, r.Grade.Reason())
		}
		if r.Usage.PromptTokens == 0 || srv.Remaining() != 0 {
			t.Errorf("%s: usage %+v, %d scripted turns unused", sc.Name, r.Usage, srv.Remaining())
		}
		srv.Close()
	}
}

// A scenario with Kubernetes objects offers the real kube tool over a
// simulated cluster: an investigation through it gathers the same
// evidence as one through kubectl.
func TestKubeToolScenario(t *testing.T) {
	scs, err := Select(loadAll(t), []string{"k8s-oomkilled"})
	if err != nil {
		t.Fatal(err)
	}
	sc := scs[0]
	r := Run(context.Background(), sc, NewScript([]Turn{
		{Calls: []CallSpec{{Tool: "kube", Args: map[string]any{"action": "describe", "kind": "pod", "namespace": "finance", "name": "ledger-0"}}}},
		// Describe shows the kill, not the limit or the heap: the answer
		// may say only what it shows.
		{Answer: "ledger-0 is OOMKilled (exit 137, 14 restarts): the JVM heap grows past the container's memory limit.\n" +
			"root_cause: {entity: ledger-0, cause: OOMKilled, the heap exceeds the memory limit}"},
	}, "gpt-4o"), Options{}, 1)
	if !r.Grade.Pass {
		t.Fatalf("kube investigation: %s; calls %+v", r.Grade.Reason(), r.Calls)
	}
	if len(r.Calls) != 1 || r.Calls[0].Tool != "kube" || !r.Calls[0].OK || r.Calls[0].Command != "pod finance ledger-0" {
		t.Fatalf("calls: %+v", r.Calls)
	}
	// What the model read is the scenario's cluster.
	kt := kubeTool(sc)
	p, b := kt.Propose([]byte(`{"action":"describe","kind":"pod","namespace":"finance","name":"ledger-0"}`))
	if b != nil {
		t.Fatal(b)
	}
	out := kt.Execute(context.Background(), p).Envelope.JSON()
	for _, want := range []string{"OOMKilled", "exit_code\":137", "Back-off restarting"} {
		if !strings.Contains(out, want) {
			t.Errorf("describe lacks %q: %s", want, out)
		}
	}
}

// An approved kube write changes the simulated cluster, and a later read
// verifies it: the failed rollout rolled back with the kube tool.
func TestKubeToolRollback(t *testing.T) {
	scs, err := Select(loadAll(t), []string{"k8s-failed-rollout"})
	if err != nil {
		t.Fatal(err)
	}
	sc := scs[0]
	dep := map[string]any{"kind": "deployment", "namespace": "shop", "name": "web"}
	with := func(action string) map[string]any {
		m := map[string]any{"action": action}
		for k, v := range dep {
			m[k] = v
		}
		return m
	}
	r := Run(context.Background(), sc, NewScript([]Turn{
		{Calls: []CallSpec{{Tool: "kube", Args: map[string]any{"action": "describe", "kind": "pod", "namespace": "shop", "name": "web-7f1-x"}},
			{Tool: "kube", Args: with("get")}}},
		{Calls: []CallSpec{{Tool: "kube", Args: with("rollout_undo")}}},
		{Calls: []CallSpec{{Tool: "kube", Args: with("get")}}},
		{Answer: sc.Reference[len(sc.Reference)-1].Answer},
	}, "gpt-4o"), Options{}, 1)
	if !r.Grade.Pass {
		t.Fatalf("kube rollback: %s; calls %+v", r.Grade.Reason(), r.Calls)
	}
	undo := r.Calls[2]
	if undo.Action != "rollout_undo" || !undo.Approved || !undo.OK {
		t.Fatalf("undo: %+v", undo)
	}
	// The simulated cluster itself: the undo restores revision 11's image.
	kt := kubeTool(sc)
	exec := func(args string) string {
		p, b := kt.Propose([]byte(args))
		if b != nil {
			t.Fatal(b)
		}
		return kt.Execute(context.Background(), p).Envelope.JSON()
	}
	if out := exec(`{"action":"rollout_undo","kind":"deployment","namespace":"shop","name":"web"}`); !strings.Contains(out, `"to_revision":11`) {
		t.Fatalf("undo: %s", out)
	}
	if out := exec(`{"action":"get","kind":"deployment","namespace":"shop","name":"web"}`); !strings.Contains(out, "shop/web:5.0.0") {
		t.Fatalf("after the undo: %s", out)
	}
}

// The shipped suite keeps its breadth: at least 30 scenarios over every
// category, at least 5 whose fix needs an approval (granted and denied),
// at least 3 red herrings and some started by an alert.
func TestSuiteBreadth(t *testing.T) {
	all := loadAll(t)
	cats := map[string]int{}
	grant, deny, herrings, alerts := 0, 0, 0, 0
	for _, s := range all {
		cats[s.Category]++
		switch s.Expect.Approval {
		case "grant":
			grant++
		case "deny":
			deny++
		}
		if s.RedHerring {
			herrings++
		}
		if s.Alert {
			alerts++
		}
	}
	if len(all) < 50 || grant+deny < 5 || grant == 0 || deny == 0 || herrings < 3 || alerts < 2 {
		t.Errorf("%d scenarios, %d fixes granted, %d denied, %d red herrings, %d alert-started", len(all), grant, deny, herrings, alerts)
	}
	// The harder kinds: no-fault controls, cascades, misleading first
	// evidence, questions that do not name the broken thing, and the
	// observability tools an on-call engineer reaches for.
	kinds := map[string]int{}
	for _, s := range all {
		if s.noFault() {
			kinds["no-fault"]++
		}
		for _, p := range []string{"cascade-", "misleading-", "unnamed-"} {
			if strings.HasPrefix(s.Name, p) {
				kinds[p]++
			}
		}
		if len(s.Metrics) > 0 {
			kinds["metrics"]++
		}
		if len(s.Alerts) > 0 {
			kinds["alerts"]++
		}
		if len(s.Changes) > 0 {
			kinds["changes"]++
		}
	}
	for k, min := range map[string]int{"no-fault": 4, "cascade-": 3, "misleading-": 2, "unnamed-": 2, "metrics": 2, "alerts": 2, "changes": 3} {
		if kinds[k] < min {
			t.Errorf("%d scenarios of kind %s, want at least %d", kinds[k], k, min)
		}
	}
	// Every original scenario is kept.
	for _, n := range []string{"alert-cert-expiring-deny", "alert-disk-almost-full", "alert-service-down", "container-restart-loop", "container-unhealthy",
		"container-volume-full", "db-connection-exhaustion", "db-lock-contention", "db-replication-lag", "herring-backup-load", "herring-deprecation-warnings",
		"herring-pod-restarts", "host-clock-drift", "host-coredump-flood", "host-cpu-saturated", "host-crashloop-config", "host-disk-full-log",
		"host-dns-misconfigured", "host-inode-exhaustion", "host-oom-killed", "host-permissions-deploy", "host-port-in-use", "host-tls-expired",
		"k8s-crashloop-env", "k8s-failed-rollout", "k8s-hpa-max", "k8s-oomkilled", "k8s-pending-unschedulable", "net-firewall-drop", "net-mtu-mismatch",
		"proxmox-lxc-stopped", "proxmox-storage-full"} {
		if _, err := Select(all, []string{n}); err != nil {
			t.Errorf("scenario %s was removed", n)
		}
	}
	for _, c := range Categories {
		if cats[c] == 0 {
			t.Errorf("no scenario in category %s", c)
		}
	}
}

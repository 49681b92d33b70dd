package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools"
)

func newTool(t *testing.T, namespaces ...string) (tools.Tool, *Cluster) {
	t.Helper()
	c, _ := fakeCluster(t, namespaces...)
	return New([]*Cluster{c}, func() time.Time { return now }), c
}

func TestGetAndDescribeDeployment(t *testing.T) {
	tool, _ := newTool(t)
	r := call(t, tool, `{"action":"get","namespace":"shop","kind":"deployment","name":"checkout"}`)
	d := dataOf(t, r)
	obj := d["object"].(map[string]any)
	if obj["desired"].(float64) != 3 || obj["ready"].(float64) != 2 || obj["revision"] != "3" || fmt.Sprint(obj["images"]) != "[app=shop/checkout:v3]" {
		t.Fatalf("deployment = %v", obj)
	}
	if !r.Explicit || len(r.Resolved) != 1 || r.Resolved[0].ID != "k8s_deployment:prod:shop/checkout" || r.Resolved[0].Kind != ResourceDeployment {
		t.Fatalf("resolved = %+v explicit=%v", r.Resolved, r.Explicit)
	}

	desc := dataOf(t, call(t, tool, `{"action":"describe","namespace":"shop","kind":"deployment","name":"checkout"}`))
	pods := desc["pods"].(map[string]any)["items"].([]any)
	first := pods[0].(map[string]any)
	if first["name"] != "checkout-7d9f-abcde" || first["restarts"].(float64) != 5 {
		t.Fatalf("describe pods = %v, want the crash-looping pod first", pods)
	}
	c0 := first["containers"].([]any)[0].(map[string]any)
	if c0["state"] != "waiting: CrashLoopBackOff" || c0["last_termination"].(map[string]any)["reason"] != "OOMKilled" {
		t.Fatalf("container = %v", c0)
	}
	evs := desc["events"].([]any)
	if len(evs) != 1 || evs[0].(map[string]any)["reason"] != "ScalingReplicaSet" {
		t.Fatalf("deployment events = %v", evs)
	}
}

func TestDescribePodShowsWarningsFirst(t *testing.T) {
	tool, _ := newTool(t)
	r := call(t, tool, `{"action":"describe","namespace":"shop","kind":"pod","name":"checkout-7d9f-abcde"}`)
	d := dataOf(t, r)
	evs := d["events"].([]any)
	if len(evs) != 2 || evs[0].(map[string]any)["reason"] != "BackOff" || evs[0].(map[string]any)["count"].(float64) != 14 {
		t.Fatalf("events = %v", evs)
	}
	if r.Resolved[0].Parent != "k8s_node:prod:node-1" {
		t.Fatalf("a pod's parent is its node: %+v", r.Resolved[0])
	}
	if strings.Contains(r.Envelope.JSON(), "env-secret-value") {
		t.Fatal("a container's environment was shown")
	}
}

func TestListPodsNodesAndConfigMaps(t *testing.T) {
	tool, _ := newTool(t)
	r := call(t, tool, `{"action":"list","kind":"pod","namespace":"shop"}`)
	d := dataOf(t, r)
	items := d["items"].([]any)
	if d["total"].(float64) != 2 || items[0].(map[string]any)["name"] != "checkout-7d9f-abcde" || r.Explicit || len(r.Resolved) != 2 {
		t.Fatalf("pods = %v, resolved %d explicit %v", d, len(r.Resolved), r.Explicit)
	}
	n := dataOf(t, call(t, tool, `{"action":"list","kind":"node"}`))
	first := n["items"].([]any)[0].(map[string]any)
	if first["name"] != "node-2" || first["ready"] != "False" || len(first["problems"].([]any)) != 2 {
		t.Fatalf("nodes = %v, want the not-ready node first with its problems", n)
	}
	cm := call(t, tool, `{"action":"list","kind":"configmap","namespace":"shop"}`)
	if js := cm.Envelope.JSON(); strings.Contains(js, "cm-secret-value") || strings.Contains(js, "db_password") || !strings.Contains(js, `"keys":2`) {
		t.Fatalf("configmaps must show names only: %s", js)
	}
	get := call(t, tool, `{"action":"get","kind":"configmap","namespace":"shop","name":"checkout-config"}`)
	if strings.Contains(get.Envelope.JSON(), "cm-secret-value") {
		t.Fatal("a configmap value was shown")
	}
	if _, b := tool.Propose(json.RawMessage(`{"action":"get","kind":"secret","namespace":"shop","name":"checkout-db"}`)); b == nil {
		t.Fatal("secrets are not a kind the tool reads")
	}
}

func TestLogsOfAWorkloadPickTheTroubledPod(t *testing.T) {
	tool, _ := newTool(t)
	d := dataOf(t, call(t, tool, `{"action":"logs","namespace":"shop","kind":"deployment","name":"checkout","tail":50,"previous":true}`))
	if d["pod"] != "checkout-7d9f-abcde" || !strings.Contains(d["note"].(string), "of 2") {
		t.Fatalf("logs = %v", d)
	}
	// client-go's fake answers every log request with "fake logs".
	if d["output"] != "fake logs" {
		t.Fatalf("output = %q", d["output"])
	}
}

func TestEventsAndHistoryAndTop(t *testing.T) {
	tool, _ := newTool(t)
	ev := dataOf(t, call(t, tool, `{"action":"events","namespace":"shop","since":"10m"}`))
	items := ev["items"].([]any)
	if len(items) != 2 || items[0].(map[string]any)["type"] != "Warning" {
		t.Fatalf("events in the last 10m = %v", items)
	}
	h := dataOf(t, call(t, tool, `{"action":"rollout_history","namespace":"shop","name":"checkout"}`))
	revs := h["revisions"].([]any)
	if len(revs) != 3 || revs[0].(map[string]any)["revision"].(float64) != 3 || revs[0].(map[string]any)["current"] != true ||
		revs[1].(map[string]any)["change_cause"] != "deploy v2" {
		t.Fatalf("history = %v", revs)
	}
	top := dataOf(t, call(t, tool, `{"action":"top","kind":"node"}`))
	first := top["items"].([]any)[0].(map[string]any)
	if first["name"] != "node-2" || first["cpu"] != "3000m" || first["cpu_percent"].(float64) != 75 || first["memory_percent"].(float64) != 87 {
		t.Fatalf("top nodes = %v", top)
	}
	pods := dataOf(t, call(t, tool, `{"action":"top","namespace":"shop"}`))
	if p := pods["items"].([]any)[0].(map[string]any); p["name"] != "checkout-7d9f-abcde" || p["memory"] != "512Mi" {
		t.Fatalf("top pods = %v", pods)
	}
}

func TestWritesDeclareKindTargetAndCard(t *testing.T) {
	tool, _ := newTool(t)
	cases := map[string]struct {
		target string
		change string
	}{
		`{"action":"rollout_restart","namespace":"shop","kind":"deployment","name":"checkout"}`:    {"k8s_deployment:prod:shop/checkout", "rolling restart"},
		`{"action":"scale","namespace":"shop","kind":"deployment","name":"checkout","replicas":5}`: {"k8s_deployment:prod:shop/checkout", "set replicas to 5"},
		`{"action":"scale","namespace":"shop","kind":"deployment","name":"checkout","replicas":0}`: {"k8s_deployment:prod:shop/checkout", "set replicas to 0"},
		`{"action":"delete_pod","namespace":"shop","name":"checkout-7d9f-abcde"}`:                  {"k8s_pod:prod:shop/checkout-7d9f-abcde", "delete the pod"},
		`{"action":"cordon","name":"node-1"}`:                                                      {"k8s_node:prod:node-1", "unschedulable"},
		`{"action":"rollout_undo","namespace":"shop","name":"checkout","revision":1}`:              {"k8s_deployment:prod:shop/checkout", "revision 1"},
	}
	for args, want := range cases {
		p, b := tool.Propose(json.RawMessage(args))
		if b != nil {
			t.Fatalf("%s: %+v", args, b)
		}
		if tool.Spec().Kinds.KindOf(p.Name) != policy.KindWrite || p.Target != want.target {
			t.Errorf("%s: kind %s target %q", args, tool.Spec().Kinds.KindOf(p.Name), p.Target)
		}
		var card []string
		for _, d := range p.Details {
			card = append(card, d.Label+"="+d.Value)
		}
		if got := strings.Join(card, "; "); !strings.Contains(got, "cluster=prod") || !strings.Contains(got, want.change) {
			t.Errorf("%s: card = %s", args, got)
		}
	}
}

func TestWritesChangeTheCluster(t *testing.T) {
	tool, c := newTool(t)
	ctx := context.Background()
	apps := c.Client.AppsV1()

	call(t, tool, `{"action":"rollout_restart","namespace":"shop","kind":"deployment","name":"checkout"}`)
	d, _ := apps.Deployments("shop").Get(ctx, "checkout", metav1.GetOptions{})
	if d.Spec.Template.Annotations[restartAnnotation] != now.Format(time.RFC3339) {
		t.Fatalf("restart annotation = %v", d.Spec.Template.Annotations)
	}

	s := dataOf(t, call(t, tool, `{"action":"scale","namespace":"shop","kind":"deployment","name":"checkout","replicas":5}`))
	d, _ = apps.Deployments("shop").Get(ctx, "checkout", metav1.GetOptions{})
	if *d.Spec.Replicas != 5 || s["replicas_before"].(float64) != 3 {
		t.Fatalf("scale: replicas %d, result %v", *d.Spec.Replicas, s)
	}

	u := dataOf(t, call(t, tool, `{"action":"rollout_undo","namespace":"shop","name":"checkout"}`))
	d, _ = apps.Deployments("shop").Get(ctx, "checkout", metav1.GetOptions{})
	if d.Spec.Template.Spec.Containers[0].Image != "shop/checkout:v2" || u["to_revision"].(float64) != 2 {
		t.Fatalf("undo: image %s, result %v", d.Spec.Template.Spec.Containers[0].Image, u)
	}
	if _, ok := d.Spec.Template.Labels[appsv1.DefaultDeploymentUniqueLabelKey]; ok {
		t.Fatal("undo kept the old replica set's pod-template-hash label")
	}

	call(t, tool, `{"action":"cordon","name":"node-1"}`)
	n, _ := c.Client.CoreV1().Nodes().Get(ctx, "node-1", metav1.GetOptions{})
	if !n.Spec.Unschedulable {
		t.Fatal("cordon did not mark the node unschedulable")
	}
	again := dataOf(t, call(t, tool, `{"action":"cordon","name":"node-1"}`))
	if again["note"] == nil {
		t.Fatalf("cordoning a cordoned node = %v", again)
	}
	call(t, tool, `{"action":"uncordon","name":"node-1"}`)
	n, _ = c.Client.CoreV1().Nodes().Get(ctx, "node-1", metav1.GetOptions{})
	if n.Spec.Unschedulable {
		t.Fatal("uncordon did not clear unschedulable")
	}

	call(t, tool, `{"action":"delete_pod","namespace":"shop","name":"checkout-7d9f-abcde"}`)
	if _, err := c.Client.CoreV1().Pods("shop").Get(ctx, "checkout-7d9f-abcde", metav1.GetOptions{}); err == nil {
		t.Fatal("the pod was not deleted")
	}
	gone := call(t, tool, `{"action":"delete_pod","namespace":"shop","name":"checkout-7d9f-abcde"}`)
	if gone.Envelope.OK || gone.Envelope.Error.Code != policy.CodeNotFound {
		t.Fatalf("deleting a missing pod = %s", gone.Envelope.JSON())
	}
	bad := call(t, tool, `{"action":"rollout_undo","namespace":"shop","name":"checkout","revision":9}`)
	if bad.Envelope.OK || !strings.Contains(bad.Envelope.Error.Message, "no revision 9") {
		t.Fatalf("undo to a missing revision = %s", bad.Envelope.JSON())
	}
}

func TestExecuteRefusesAProposalWhoseTargetChanged(t *testing.T) {
	tool, _ := newTool(t)
	p, b := tool.Propose(json.RawMessage(`{"action":"cordon","name":"node-1"}`))
	if b != nil {
		t.Fatal(b)
	}
	p.Target = "k8s_node:prod:node-2"
	if r := tool.Execute(context.Background(), p); r.Envelope.OK {
		t.Fatal("ran a write whose policy target differs from its arguments")
	}
}

func TestNamespaceAllowlist(t *testing.T) {
	tool, _ := newTool(t, "shop")
	_, b := tool.Propose(json.RawMessage(`{"action":"list","kind":"pod","namespace":"kube-system"}`))
	if b == nil || b.Code != policy.CodeActionNotAllowed || !strings.Contains(b.Message, "allowed: shop") {
		t.Fatalf("block = %+v", b)
	}
	// A cluster-wide list covers only the allowed namespaces.
	d := dataOf(t, call(t, tool, `{"action":"list","kind":"pod"}`))
	if d["total"].(float64) != 2 {
		t.Fatalf("pods = %v", d)
	}
}

func TestArguments(t *testing.T) {
	tool, _ := newTool(t)
	bad := map[string]string{
		`{"action":"get","kind":"deployment","name":"checkout"}`:                           `"namespace": required`,
		`{"action":"get","namespace":"shop","kind":"deployment"}`:                          `"name": required`,
		`{"action":"scale","namespace":"shop","name":"checkout"}`:                          `"replicas": required`,
		`{"action":"scale","namespace":"shop","name":"checkout","replicas":-1}`:            `between 0 and 1000`,
		`{"action":"scale","namespace":"shop","kind":"daemonset","name":"x","replicas":1}`: `takes kind`,
		`{"action":"cordon","kind":"pod","namespace":"shop","name":"x"}`:                   `takes kind`,
		`{"action":"get","namespace":"Shop","kind":"pod","name":"x"}`:                      `namespace name`,
		`{"action":"get","namespace":"shop","kind":"pod","name":"x;rm"}`:                   `object name`,
		`{"action":"logs","namespace":"shop","name":"x","tail":5000}`:                      `between 1 and 2000`,
		`{"action":"get","namespace":"shop","kind":"pod","name":"x","tail":5}`:             `not used by action get`,
		`{"action":"list","kind":"pod","name":"x"}`:                                        `not used by action list`,
		`{"action":"get","kind":"node","name":"n","namespace":"shop"}`:                     `no namespace`,
		`{"action":"get","cluster":"staging","kind":"node","name":"n"}`:                    `no cluster named "staging"`,
		`{"action":"events","kind":"pod","namespace":"shop"}`:                              `"name": required with kind pod`,
	}
	for args, want := range bad {
		_, b := tool.Propose(json.RawMessage(args))
		if b == nil || !strings.Contains(b.Message, want) {
			t.Errorf("%s: block = %+v, want %q", args, b, want)
		}
	}
}

func TestTwoClustersNeedAName(t *testing.T) {
	a, _ := fakeCluster(t)
	b, _ := fakeCluster(t)
	b.Name = "staging"
	tool := New([]*Cluster{a, b}, nil)
	if _, blk := tool.Propose(json.RawMessage(`{"action":"list","kind":"node"}`)); blk == nil || !strings.Contains(blk.Message, "several clusters") {
		t.Fatalf("block = %+v", blk)
	}
	if _, blk := tool.Propose(json.RawMessage(`{"action":"list","kind":"node","cluster":"staging"}`)); blk != nil {
		t.Fatal(blk)
	}
}

func TestNotConfigured(t *testing.T) {
	tool := New(nil, nil)
	p, b := tool.Propose(json.RawMessage(`{"action":"list","kind":"node"}`))
	if b != nil {
		t.Fatal(b)
	}
	e := tool.Execute(context.Background(), p).Envelope
	if e.OK || e.Error.Code != policy.CodeNotFound || !strings.Contains(e.Error.Message, "kubernetes.clusters") {
		t.Fatalf("envelope = %s", e.JSON())
	}
	if _, err := tools.NewRegistry(tool); err != nil {
		t.Fatal(err)
	}
}

func TestDiscoveryResolvesMentions(t *testing.T) {
	c, cs := fakeCluster(t)
	d := NewDiscovery([]*Cluster{c}, nil)
	d.Refresh(context.Background())
	chain, ok := d.ResolveMention("checkout")
	if !ok || len(chain) != 1 || chain[0].ID != "k8s_deployment:prod:shop/checkout" || chain[0].Target != "k8s_deployment:prod:shop/checkout" {
		t.Fatalf("@checkout = %+v, %v", chain, ok)
	}
	chain, ok = d.ResolveMention("checkout-7d9f-abcde")
	if !ok || len(chain) != 2 || chain[1].ID != "k8s_node:prod:node-1" || chain[0].Parent != chain[1].ID {
		t.Fatalf("@pod = %+v, %v", chain, ok)
	}
	for _, alias := range []string{"shop.checkout", "prod.shop.checkout", "K8S_DEPLOYMENT:prod:shop/checkout"} {
		if _, ok := d.ResolveMention(alias); !ok {
			t.Errorf("@%s did not resolve", alias)
		}
	}

	// A second deployment of the same name in another namespace makes the
	// bare name ambiguous; the namespaced alias still resolves.
	other := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "checkout", Namespace: "staging"},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{}}}
	if _, err := cs.AppsV1().Deployments("staging").Create(context.Background(), other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	before := cs.Actions()
	gen1, rs1 := d.Resources()
	if _, ok := d.ResolveMention("checkout"); !ok {
		t.Fatal("the cache changed without a refresh")
	}
	if len(cs.Actions()) != len(before) {
		t.Fatal("a mention lookup called the API server")
	}
	d.Refresh(context.Background())
	if _, ok := d.ResolveMention("checkout"); ok {
		t.Fatal("an ambiguous name resolved")
	}
	gen2, rs2 := d.Resources()
	if gen2 == gen1 || len(rs2) != len(rs1)+1 {
		t.Fatalf("Resources after a refresh: generation %d→%d, %d→%d resources; want a new generation and one more", gen1, gen2, len(rs1), len(rs2))
	}
	if r, ok := d.Lookup("staging.checkout"); !ok || r.ID != "k8s_deployment:prod:staging/checkout" {
		t.Fatalf("staging.checkout = %+v, %v", r, ok)
	}
}

func TestDiscoveryKeepsWhatItKnewWhenAClusterFails(t *testing.T) {
	c, cs := fakeCluster(t)
	d := NewDiscovery([]*Cluster{c}, nil)
	d.Refresh(context.Background())
	n := d.Len()
	cs.PrependReactor("list", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, fmt.Errorf("connection refused")
	})
	d.Refresh(context.Background())
	if d.Len() != n || n == 0 {
		t.Fatalf("after a failed refresh: %d resources, had %d", d.Len(), n)
	}
}

func TestParseID(t *testing.T) {
	for _, id := range []string{"k8s_deployment:prod:shop/checkout", "k8s_node:prod:node-1.example", "k8s_pod:eu-1:shop/checkout-7d9f-abcde"} {
		ref, ok := ParseID(id)
		if !ok || string(ref.ID()) != id {
			t.Errorf("ParseID(%s) = %+v, %v", id, ref, ok)
		}
	}
	for _, id := range []string{"node:localhost", "k8s_deployment:prod:checkout", "k8s_service:prod:shop/x", "k8s_pod:prod:shop/", "k8s_node:Prod:n"} {
		if ref, ok := ParseID(id); ok {
			t.Errorf("ParseID(%s) = %+v", id, ref)
		}
	}
}

func TestEveryActionDeclaresItsKind(t *testing.T) {
	k := New(nil, nil).Spec().Kinds
	reads := map[string]bool{"get": true, "list": true, "describe": true, "logs": true, "events": true, "rollout_history": true, "top": true}
	for _, a := range Action("").EnumValues() {
		want := policy.KindWrite
		if reads[a] {
			want = policy.KindRead
		}
		if !k.Declares(a) || k.KindOf(a) != want {
			t.Errorf("action %s: declared %v, kind %s, want %s", a, k.Declares(a), k.KindOf(a), want)
		}
		if _, ok := kindsFor[Action(a)]; !ok {
			t.Errorf("action %s accepts no kind", a)
		}
	}
}

func FuzzArgs(f *testing.F) {
	f.Add(`{"action":"scale","namespace":"shop","kind":"deployment","name":"checkout","replicas":5}`)
	f.Add(`{"action":"logs","namespace":"shop","name":"x","tail":10,"since":"5m","previous":true}`)
	f.Add(`{"action":"events","kind":"node","name":"node-1"}`)
	c := &Cluster{Name: "prod", Namespaces: []string{"shop"}}
	tool := New([]*Cluster{c}, nil)
	f.Fuzz(func(t *testing.T, raw string) {
		p, b := tool.Propose(json.RawMessage(raw))
		if b != nil {
			return
		}
		a := p.Args.(Args)
		if a.Namespace != "" && a.Namespace != "shop" {
			t.Fatalf("accepted namespace %q outside the allowlist", a.Namespace)
		}
		if writes[a.Action] {
			ref, ok := ParseID(p.Target)
			if !ok || ref.Name != a.Name || p.Details == nil {
				t.Fatalf("write %s has target %q, details %v", raw, p.Target, p.Details)
			}
		} else if p.Target != "" {
			t.Fatalf("read %s carries target %q", raw, p.Target)
		}
	})
}

// Kubernetes objects are routed like every resource: with a pod in focus
// (an @mention), cordoning the node it runs on is a routing mismatch that
// names the pod, and a write to an object the session has not seen is a
// strict-resolution refusal.
func TestKubeResourcesAreRouted(t *testing.T) {
	c, _ := fakeCluster(t)
	d := NewDiscovery([]*Cluster{c}, nil)
	d.Refresh(context.Background())
	s := policy.NewSessionState()
	chain, ok := d.ResolveMention("checkout-7d9f-abcde")
	if !ok {
		t.Fatal("pod not found")
	}
	s.Context.AddExplicit(chain[0], now)
	for _, p := range chain[1:] {
		s.Context.Add(p, now)
	}
	s.FSM.OnToolSuccess(policy.KindRead, "kube", "")
	gate := policy.NewGate(policy.Rules{})
	tool := New([]*Cluster{c}, nil)
	decide := func(args string) policy.Decision {
		p, b := tool.Propose(json.RawMessage(args))
		if b != nil {
			t.Fatal(b)
		}
		p.Kind = tool.Spec().Kinds.KindOf(p.Name)
		return gate.Authorize(s, p.Action, policy.LevelControlled, policy.Requester{User: "alice", Operator: true}, now)
	}
	dec := decide(`{"action":"cordon","name":"node-1"}`)
	if dec.Block == nil || dec.Block.Code != policy.CodeRoutingMismatch || !strings.Contains(dec.Block.Message, "checkout-7d9f-abcde") {
		t.Fatalf("cordon the pod's node = %+v", dec.Block)
	}
	if dec := decide(`{"action":"delete_pod","namespace":"shop","name":"checkout-7d9f-abcde"}`); !dec.NeedsApproval {
		t.Fatalf("delete the mentioned pod = %+v", dec)
	}
	dec = decide(`{"action":"rollout_restart","namespace":"shop","name":"cart"}`)
	if dec.Block == nil || dec.Block.Code != policy.CodeStrictResolution {
		t.Fatalf("restart an unseen deployment = %+v", dec.Block)
	}
}

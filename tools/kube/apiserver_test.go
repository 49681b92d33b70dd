package kube

import (
	"context"
	"strings"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/vigilops/vigil/internal/testenv/kubeapi"
)

// TestAgainstRecordedAPIServer runs the real clientset against kubeapi's
// stand-in API server: kubeconfig contexts, TLS, bearer auth, paging,
// patches, the scale subresource and Status errors run as they would
// against a cluster (package kubeapi says why no real API server runs
// here).
func TestAgainstRecordedAPIServer(t *testing.T) {
	s := kubeapi.Start(t)
	path := s.Kubeconfig(t)
	c, err := Connect(ClusterConfig{Name: "prod", Kubeconfig: path, Context: "vigil", Namespaces: []string{"shop", "kube-system"}, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	tool := New([]*Cluster{c}, func() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) })

	t.Run("discovery pages through lists", func(t *testing.T) {
		d := NewDiscovery([]*Cluster{c}, nil)
		// The kube-system namespace is forbidden to vigil's account: the
		// refresh fails and keeps nothing rather than half a cluster.
		d.Refresh(context.Background())
		if d.Len() != 0 {
			t.Fatalf("a failed refresh stored %d resources", d.Len())
		}
		c.Namespaces = []string{"shop"}
		defer func() { c.Namespaces = []string{"shop", "kube-system"} }()
		d.Refresh(context.Background())
		if d.Len() != 6 { // 2 nodes, 1 deployment, 3 pods
			t.Fatalf("discovered %d resources, want 6 (two pages of nodes and of pods)", d.Len())
		}
		if chain, ok := d.ResolveMention("checkout-7d9f-klmno"); !ok || chain[1].ID != "k8s_node:prod:node-2" {
			t.Fatalf("the second page's pod = %+v, %v", chain, ok)
		}
		var pages int
		for _, r := range s.Requests() {
			if r.Path == "/api/v1/namespaces/shop/pods" {
				pages++
				if !strings.Contains(r.Query, "limit=500") {
					t.Errorf("list without a page limit: %s", r.Query)
				}
			}
		}
		if pages < 2 {
			t.Fatalf("pod pages requested: %d", pages)
		}
	})

	t.Run("reads", func(t *testing.T) {
		d := dataOf(t, call(t, tool, `{"action":"list","kind":"node"}`))
		items := d["items"].([]any)
		if d["total"].(float64) != 2 || items[0].(map[string]any)["name"] != "node-2" || items[0].(map[string]any)["unschedulable"] != true {
			t.Fatalf("nodes = %v", d)
		}
		top := dataOf(t, call(t, tool, `{"action":"top","namespace":"shop"}`))
		first := top["items"].([]any)[0].(map[string]any)
		if first["name"] != "checkout-7d9f-klmno" || first["cpu"] != "731m" || first["memory"] != "401Mi" {
			t.Fatalf("top = %v", top)
		}
	})

	t.Run("writes send what kubectl sends", func(t *testing.T) {
		dataOf(t, call(t, tool, `{"action":"rollout_restart","namespace":"shop","kind":"deployment","name":"checkout"}`))
		sc := dataOf(t, call(t, tool, `{"action":"scale","namespace":"shop","kind":"deployment","name":"checkout","replicas":5}`))
		if sc["replicas_before"].(float64) != 3 {
			t.Fatalf("scale = %v", sc)
		}
		var patch, put *kubeapi.Request
		for _, r := range s.Requests() {
			switch {
			case r.Method == "PATCH":
				patch = &r
			case r.Method == "PUT":
				put = &r
			}
		}
		if patch == nil || patch.ContentType != "application/strategic-merge-patch+json" ||
			string(patch.Body) != `{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":"2026-03-01T12:00:00Z"}}}}}` ||
			!strings.Contains(patch.Query, "fieldManager=vigil") {
			t.Fatalf("restart patch = %+v (%s)", patch, patch.Body)
		}
		if put == nil {
			t.Fatal("no scale PUT")
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(put.Body, nil, nil)
		if sc, ok := obj.(*autoscalingv1.Scale); err != nil || !ok || sc.Spec.Replicas != 5 || sc.Name != "checkout" {
			t.Fatalf("scale PUT (%s) = %#v, %v", put.ContentType, obj, err)
		}
	})

	t.Run("errors", func(t *testing.T) {
		e := call(t, tool, `{"action":"list","kind":"pod","namespace":"kube-system"}`).Envelope
		if e.OK || e.Error.Code != "ACTION_NOT_ALLOWED" || !strings.Contains(e.Error.Message, "cannot list resource") {
			t.Fatalf("forbidden = %s", e.JSON())
		}
		e = call(t, tool, `{"action":"get","namespace":"shop","kind":"deployment","name":"cart"}`).Envelope
		if e.OK || e.Error.Code != "NOT_FOUND" || !strings.Contains(e.Error.Message, "deployment shop/cart in cluster prod does not exist") {
			t.Fatalf("not found = %s", e.JSON())
		}
	})

	t.Run("the context decides the credentials", func(t *testing.T) {
		stale, err := Connect(ClusterConfig{Name: "prod", Kubeconfig: path})
		if err != nil {
			t.Fatal(err)
		}
		e := call(t, New([]*Cluster{stale}, nil), `{"action":"list","kind":"node"}`).Envelope
		if e.OK || !strings.Contains(e.Error.Message, "did not accept vigil's credentials") {
			t.Fatalf("current-context stale = %s", e.JSON())
		}
	})
}

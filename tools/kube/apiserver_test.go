package kube

import (
	"context"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/client-go/kubernetes/scheme"
)

// No Kubernetes API server can be built from the Go module proxy here, so
// this test stands one in: an HTTPS server answering the real REST paths
// with API objects in the server's JSON wire format (testdata/*.json,
// including paged lists with continue tokens and Status errors). The real
// client-go clientset, built from a kubeconfig by Connect, talks to it, so
// kubeconfig loading, TLS verification, bearer authentication, paging,
// patches, the scale subresource and error decoding all run for real.

const apiToken = "test-bearer-token"

type request struct {
	Method, Path, Query, ContentType, Body string
}

type apiServer struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []request
}

func (s *apiServer) requests() []request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]request(nil), s.reqs...)
}

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// startAPIServer serves the fixtures at the paths the API server uses.
func startAPIServer(t *testing.T) *apiServer {
	t.Helper()
	s := &apiServer{}
	page := func(q string, first, second string) string {
		if strings.Contains(q, "continue=") {
			return second
		}
		return first
	}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.reqs = append(s.reqs, request{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Content-Type"), string(body)})
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("Authorization") != "Bearer "+apiToken {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write(fixture(t, "unauthorized.json"))
			return
		}
		q := r.URL.RawQuery
		var name string
		switch r.Method + " " + r.URL.Path {
		case "GET /api/v1/nodes":
			name = page(q, "nodes-page1.json", "nodes-page2.json")
		case "GET /apis/apps/v1/namespaces/shop/deployments":
			name = "deployments.json"
		case "GET /apis/apps/v1/namespaces/shop/statefulsets":
			name = "statefulsets.json"
		case "GET /apis/apps/v1/namespaces/shop/daemonsets":
			name = "daemonsets.json"
		case "GET /api/v1/namespaces/shop/pods":
			name = page(q, "pods-page1.json", "pods-page2.json")
		case "GET /apis/apps/v1/namespaces/shop/deployments/checkout", "PATCH /apis/apps/v1/namespaces/shop/deployments/checkout":
			name = "deployment-checkout.json"
		case "GET /apis/apps/v1/namespaces/shop/deployments/checkout/scale":
			name = "scale-checkout.json"
		case "PUT /apis/apps/v1/namespaces/shop/deployments/checkout/scale":
			// Echo the object back in the format it came in (client-go
			// sends built-in kinds as protobuf).
			w.Header().Set("Content-Type", r.Header.Get("Content-Type"))
			w.Write(body)
			return
		case "GET /apis/metrics.k8s.io/v1beta1/namespaces/shop/pods":
			name = "podmetrics-shop.json"
		case "GET /api/v1/namespaces/kube-system/pods":
			w.WriteHeader(http.StatusForbidden)
			name = "forbidden.json"
		default:
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server could not find the requested resource","reason":"NotFound","code":404}`)
			return
		}
		w.Write(fixture(t, name))
	}))
	t.Cleanup(s.Close)
	return s
}

// kubeconfig writes a kubeconfig for s with two contexts: "vigil" with the
// right token and "stale" with a wrong one.
func kubeconfig(t *testing.T, s *apiServer) string {
	t.Helper()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
  - name: test
    cluster:
      server: %s
      certificate-authority-data: %s
users:
  - name: vigil
    user: {token: %s}
  - name: stale
    user: {token: expired-token}
contexts:
  - name: vigil
    context: {cluster: test, user: vigil}
  - name: stale
    context: {cluster: test, user: stale}
current-context: stale
`, s.URL, base64.StdEncoding.EncodeToString(ca), apiToken)
	p := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAgainstRecordedAPIServer(t *testing.T) {
	s := startAPIServer(t)
	path := kubeconfig(t, s)
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
		for _, r := range s.requests() {
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
		var patch, put *request
		for _, r := range s.requests() {
			switch {
			case r.Method == "PATCH":
				patch = &r
			case r.Method == "PUT":
				put = &r
			}
		}
		if patch == nil || patch.ContentType != "application/strategic-merge-patch+json" ||
			patch.Body != `{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":"2026-03-01T12:00:00Z"}}}}}` ||
			!strings.Contains(patch.Query, "fieldManager=vigil") {
			t.Fatalf("restart patch = %+v", patch)
		}
		if put == nil {
			t.Fatal("no scale PUT")
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode([]byte(put.Body), nil, nil)
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

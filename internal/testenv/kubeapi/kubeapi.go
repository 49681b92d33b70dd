// Package kubeapi stands in for a Kubernetes API server in tests. No API
// server can be built from the Go module proxy here, so this HTTPS server
// answers the real REST paths of a small cluster ("shop": the checkout
// deployment, three pods on two nodes, events, replica sets, pod metrics)
// with API objects in the server's JSON wire format, kept in testdata:
// paged lists with continue tokens, Status errors, the scale subresource.
// The real client-go clientset talks to it through a kubeconfig with a CA
// and a bearer token, so kubeconfig loading, TLS, authentication, paging,
// patches and error decoding run for real. It records every request.
//
// It is not a Kubernetes: writes are recorded and answered, not applied.
package kubeapi

import (
	"embed"
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
)

//go:embed testdata/*.json
var fixtures embed.FS

// Token is the bearer token the server accepts.
const Token = "test-bearer-token"

// Request is one request the server received.
type Request struct {
	Method, Path, Query, ContentType string
	Body                             []byte
	// Header is every header the request carried (impersonation
	// headers among them).
	Header http.Header
}

// Server is a running stand-in API server.
type Server struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []Request
	logs map[string]string // pod in namespace shop -> its log
}

// SetLog makes text the log of pod (in namespace shop), as GET
// .../pods/<pod>/log returns it.
func (s *Server) SetLog(pod, text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.logs == nil {
		s.logs = map[string]string{}
	}
	s.logs[pod] = text
}

// Requests returns what the server received, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Writes returns the requests that would change the cluster.
func (s *Server) Writes() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Method != http.MethodGet {
			out = append(out, r)
		}
	}
	return out
}

func fixture(name string) []byte {
	b, err := fixtures.ReadFile("testdata/" + name)
	if err != nil {
		panic("kubeapi: missing fixture " + name)
	}
	return b
}

// routes maps "METHOD path" to a fixture; lists with two pages map to
// "first|second".
var routes = map[string]string{
	"GET /api/v1/nodes":                                            "nodes-page1.json|nodes-page2.json",
	"GET /apis/apps/v1/namespaces/shop/deployments":                "deployments.json",
	"GET /apis/apps/v1/namespaces/shop/statefulsets":               "statefulsets.json",
	"GET /apis/apps/v1/namespaces/shop/daemonsets":                 "daemonsets.json",
	"GET /apis/apps/v1/namespaces/shop/replicasets":                "replicasets-shop.json",
	"GET /api/v1/namespaces/shop/pods":                             "pods-page1.json|pods-page2.json",
	"GET /api/v1/namespaces/shop/events":                           "events-shop.json",
	"GET /apis/apps/v1/namespaces/shop/deployments/checkout":       "deployment-checkout.json",
	"GET /apis/apps/v1/namespaces/shop/deployments/checkout/scale": "scale-checkout.json",
	"PATCH /apis/apps/v1/namespaces/shop/deployments/checkout":     "deployment-checkout.json",
	"GET /apis/metrics.k8s.io/v1beta1/namespaces/shop/pods":        "podmetrics-shop.json",
}

// Start runs the server until the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.reqs = append(s.reqs, Request{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Content-Type"), body, r.Header.Clone()})
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if r.Header.Get("Authorization") != "Bearer "+Token {
		w.WriteHeader(http.StatusUnauthorized)
		w.Write(fixture("unauthorized.json"))
		return
	}
	key := r.Method + " " + r.URL.Path
	switch {
	case key == "PUT /apis/apps/v1/namespaces/shop/deployments/checkout/scale":
		// Echo the object back in the format it came in (client-go sends
		// built-in kinds as protobuf).
		w.Header().Set("Content-Type", r.Header.Get("Content-Type"))
		w.Write(body)
		return
	case key == "GET /api/v1/namespaces/kube-system/pods":
		w.WriteHeader(http.StatusForbidden)
		w.Write(fixture("forbidden.json"))
		return
	}
	if pod, ok := strings.CutPrefix(key, "GET /api/v1/namespaces/shop/pods/"); ok && strings.HasSuffix(pod, "/log") {
		s.mu.Lock()
		text, found := s.logs[strings.TrimSuffix(pod, "/log")]
		s.mu.Unlock()
		if found {
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, text)
			return
		}
	}
	name, ok := routes[key]
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server could not find the requested resource","reason":"NotFound","code":404}`)
		return
	}
	if first, second, paged := strings.Cut(name, "|"); paged {
		name = first
		if r.URL.Query().Get("continue") != "" {
			name = second
		}
	}
	w.Write(fixture(name))
}

// Kubeconfig writes a kubeconfig for the server and returns its path. The
// context "vigil" holds the accepted token; "stale", the current context,
// a rejected one, so a test proves the configured context is used.
func (s *Server) Kubeconfig(t testing.TB) string {
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
`, s.URL, base64.StdEncoding.EncodeToString(ca), Token)
	p := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

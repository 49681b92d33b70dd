package metrics

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigilops/vigil/internal/config"
)

// pki is a CA with a server certificate for 127.0.0.1 and a client
// certificate, written as PEM files.
type pki struct {
	pool                          *x509.CertPool
	server                        tls.Certificate
	caFile, clientCert, clientKey string
}

func newPKI(t *testing.T) pki {
	t.Helper()
	dir := t.TempDir()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "vigil test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	issue := func(serial int64, cn string, usage x509.ExtKeyUsage, ips ...net.IP) ([]byte, *ecdsa.PrivateKey) {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: ips}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return der, key
	}
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	srvDER, srvKey := issue(2, "127.0.0.1", x509.ExtKeyUsageServerAuth, net.IPv4(127, 0, 0, 1))
	cliDER, cliKey := issue(3, "vigil-client", x509.ExtKeyUsageClientAuth)
	cliKeyDER, _ := x509.MarshalECPrivateKey(cliKey)
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return pki{
		pool:       pool,
		server:     tls.Certificate{Certificate: [][]byte{srvDER}, PrivateKey: srvKey},
		caFile:     write("ca.pem", "CERTIFICATE", caDER),
		clientCert: write("client.pem", "CERTIFICATE", cliDER),
		clientKey:  write("client-key.pem", "EC PRIVATE KEY", cliKeyDER),
	}
}

// seen is what a server recorded of the requests it got.
type seen struct {
	mu   sync.Mutex
	reqs []string
}

func (s *seen) add(r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cn := "none"
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		cn = r.TLS.PeerCertificates[0].Subject.CommonName
	}
	s.reqs = append(s.reqs, fmt.Sprintf("host=%s tenant=%s auth=%s cert=%s", r.Host, r.Header.Get("X-Scope-OrgID"), r.Header.Get("Authorization"), cn))
}

func (s *seen) all() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.reqs...)
}

func answerEmptyVector(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, `{"status":"success","data":{"resultType":"vector","result":[]}}`)
}

// From the configuration keys an operator writes to the request a
// Mimir-style server that demands a client certificate receives: the
// tenant header, the bearer token from the environment, the certificate,
// over TLS trusted through tls_ca.
func TestDatasourceHTTPFromConfig(t *testing.T) {
	p := newPKI(t)
	var got seen
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.add(r)
		answerEmptyVector(w)
	}))
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: p.pool, Certificates: []tls.Certificate{p.server}}
	srv.StartTLS()
	defer srv.Close()

	t.Setenv("MIMIR_TOKEN", "s3cret")
	auth := config.HTTPAuth{BearerTokenEnv: "MIMIR_TOKEN", TLSCA: p.caFile,
		DatasourceHTTP: config.DatasourceHTTP{Headers: map[string]string{"x-scope-orgid": "tenant-a"}, TLSCert: p.clientCert, TLSKey: p.clientKey}}
	hcc, err := auth.HTTPClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	ds, err := Connect(Config{Name: "mimir", URL: srv.URL, HTTP: hcc})
	if err != nil {
		t.Fatal(err)
	}
	if env := execute(t, New([]Datasource{ds}, nil), `{"action":"query","query":"up"}`); !env.OK {
		t.Fatalf("envelope = %s", env.JSON())
	}
	want := "tenant=tenant-a auth=Bearer s3cret cert=vigil-client"
	if r := got.all(); len(r) != 1 || !strings.HasSuffix(r[0], want) {
		t.Fatalf("server saw %q, want one request ending %q", r, want)
	}

	// Without the client certificate the server refuses the handshake,
	// and the error reaches the tool's answer.
	auth.TLSCert, auth.TLSKey = "", ""
	hcc, err = auth.HTTPClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	ds, _ = Connect(Config{Name: "mimir", URL: srv.URL, HTTP: hcc})
	if env := execute(t, New([]Datasource{ds}, nil), `{"action":"query","query":"up"}`); env.OK {
		t.Fatalf("a request without the client certificate got through: %s", env.JSON())
	}
	if n := len(got.all()); n != 1 {
		t.Fatalf("server saw %d requests, want still 1", n)
	}
}

// proxy_url sends the requests through the proxy, headers and all.
func TestDatasourceProxyURL(t *testing.T) {
	var got seen
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.add(r)
		answerEmptyVector(w)
	}))
	defer proxy.Close()
	auth := config.HTTPAuth{DatasourceHTTP: config.DatasourceHTTP{ProxyURL: proxy.URL, Headers: map[string]string{"X-Scope-OrgID": "tenant-b"}}}
	hcc, err := auth.HTTPClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	ds, err := Connect(Config{Name: "behind-proxy", URL: "http://prometheus.invalid:9090", HTTP: hcc})
	if err != nil {
		t.Fatal(err)
	}
	if env := execute(t, New([]Datasource{ds}, nil), `{"action":"query","query":"up"}`); !env.OK {
		t.Fatalf("envelope = %s", env.JSON())
	}
	if r := got.all(); len(r) != 1 || !strings.HasPrefix(r[0], "host=prometheus.invalid:9090 tenant=tenant-b") {
		t.Fatalf("proxy saw %q", r)
	}
}

// Headers the library reserves (authentication, the user agent) are
// refused with the key named.
func TestDatasourceReservedHeader(t *testing.T) {
	auth := config.HTTPAuth{DatasourceHTTP: config.DatasourceHTTP{Headers: map[string]string{"authorization": "Bearer x"}}}
	if _, err := auth.HTTPClientConfig(); err == nil || !strings.Contains(err.Error(), "Authorization") {
		t.Fatalf("an Authorization header was accepted: %v", err)
	}
}

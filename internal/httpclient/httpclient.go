// Package httpclient builds the HTTP clients of vigil's datasource tools
// (Prometheus, Alertmanager): bearer or basic authentication, an extra CA
// for TLS, and a bound on every response body.
package httpclient

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// Auth is how a client authenticates. At most one of BearerToken and
// Username is set; secrets arrive already read from the environment.
type Auth struct {
	BearerToken string
	Username    string
	Password    string
	// TLSCA is a PEM file of CA certificates trusted besides the system's.
	TLSCA string
}

// MaxBody bounds a datasource response vigil reads: a summary is made from
// it, and a server that answers with more is cut off rather than exhaust
// memory.
const MaxBody = 32 << 20

// New returns a client that authenticates every request and never reads
// more than MaxBody of a response. It does not follow redirects to another
// host, so credentials stay with the server they were meant for.
func New(a Auth) (*http.Client, error) {
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.ResponseHeaderTimeout = 2 * time.Minute
	if a.TLSCA != "" {
		pem, err := os.ReadFile(a.TLSCA)
		if err != nil {
			return nil, fmt.Errorf("read tls_ca: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls_ca %s holds no PEM certificate", a.TLSCA)
		}
		base.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{
		Transport: &transport{next: base, auth: a},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > 0 && req.URL.Host != via[0].URL.Host {
				return errors.New("redirect to another host refused")
			}
			if len(via) >= 5 {
				return errors.New("too many redirects")
			}
			return nil
		},
	}, nil
}

type transport struct {
	next http.RoundTripper
	auth Auth
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	switch {
	case t.auth.BearerToken != "":
		req.Header.Set("Authorization", "Bearer "+t.auth.BearerToken)
	case t.auth.Username != "":
		req.SetBasicAuth(t.auth.Username, t.auth.Password)
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &limitedBody{r: io.LimitReader(resp.Body, MaxBody+1), c: resp.Body}
	return resp, nil
}

// limitedBody fails a read past MaxBody instead of returning a silently
// cut document.
type limitedBody struct {
	r io.Reader
	c io.Closer
	n int64
}

// ErrTooLarge is returned by a read past MaxBody.
var ErrTooLarge = fmt.Errorf("response larger than %d MiB", MaxBody>>20)

func (b *limitedBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.n += int64(n)
	if b.n > MaxBody {
		return n, ErrTooLarge
	}
	return n, err
}

func (b *limitedBody) Close() error { return b.c.Close() }

package server_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vigilops/vigil/internal/server"
)

// start serves s on a real loopback listener and returns its base URL and
// a function that stops it and returns Serve's result.
func start(t *testing.T, s *server.Server) (string, func() error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(ctx, ln) }()
	stop := sync.OnceValue(func() error {
		cancel()
		select {
		case err := <-errc:
			return err
		case <-time.After(10 * time.Second):
			return errors.New("server did not stop")
		}
	})
	t.Cleanup(func() { _ = stop() })
	return "http://" + ln.Addr().String(), stop
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func TestEndpoints(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "vigil_test_total", Help: "A test counter."})
	reg.MustRegister(c)
	c.Add(3)

	readyErr := errors.New("redis: connection refused")
	var failing atomic.Bool
	ready := func(ctx context.Context) error {
		if failing.Load() {
			return readyErr
		}
		return nil
	}
	base, _ := start(t, server.New("127.0.0.1:0", reg, ready, nil))

	if code, body := get(t, base+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz = %d %q", code, body)
	}
	if code, body := get(t, base+"/readyz"); code != http.StatusOK {
		t.Errorf("/readyz = %d %q, want 200", code, body)
	}
	code, body := get(t, base+"/metrics")
	if code != http.StatusOK || !strings.Contains(body, "vigil_test_total 3") {
		t.Errorf("/metrics = %d, body lacks the registry's counter:\n%s", code, body)
	}
	if strings.Contains(body, "go_goroutines") {
		t.Error("/metrics serves the default registry's collectors; want only the given registry")
	}

	failing.Store(true)
	code, body = get(t, base+"/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "redis: connection refused") {
		t.Errorf("/readyz while failing = %d %q, want 503 naming the error", code, body)
	}
	// Liveness does not depend on readiness.
	if code, _ := get(t, base+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz while not ready = %d, want 200", code)
	}
	if code, _ := get(t, base+"/nope"); code != http.StatusNotFound {
		t.Errorf("/nope = %d, want 404", code)
	}
}

func TestReadyzTimesOut(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	// A check that ignores its context must still not hang the probe.
	ready := func(ctx context.Context) error { <-block; return nil }
	base, _ := start(t, server.New("127.0.0.1:0", prometheus.NewRegistry(), ready, nil))

	began := time.Now()
	code, body := get(t, base+"/readyz")
	took := time.Since(began)
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "deadline exceeded") {
		t.Errorf("/readyz = %d %q, want 503 with deadline exceeded", code, body)
	}
	if took < server.ReadyTimeout || took > server.ReadyTimeout+2*time.Second {
		t.Errorf("/readyz took %v, want about %v", took, server.ReadyTimeout)
	}
}

func TestReadyzNilCheckIsReady(t *testing.T) {
	base, _ := start(t, server.New("127.0.0.1:0", prometheus.NewRegistry(), nil, nil))
	if code, _ := get(t, base+"/readyz"); code != http.StatusOK {
		t.Errorf("/readyz = %d, want 200", code)
	}
}

func TestGracefulShutdown(t *testing.T) {
	inCheck := make(chan struct{})
	release := make(chan struct{})
	ready := func(ctx context.Context) error {
		close(inCheck)
		<-release
		return nil
	}
	base, stop := start(t, server.New("127.0.0.1:0", prometheus.NewRegistry(), ready, nil))

	type result struct {
		code int
		err  error
	}
	resc := make(chan result, 1)
	go func() {
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			resc <- result{err: err}
			return
		}
		resp.Body.Close()
		resc <- result{code: resp.StatusCode}
	}()
	<-inCheck

	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	time.Sleep(100 * time.Millisecond) // shutdown has begun and waits for the request
	close(release)

	if r := <-resc; r.err != nil || r.code != http.StatusOK {
		t.Errorf("in-flight request = %d, %v; want 200 completed during shutdown", r.code, r.err)
	}
	if err := <-stopped; err != nil {
		t.Errorf("Serve returned %v after shutdown, want nil", err)
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Error("server still answers after shutdown")
	}
}

func TestRunListenError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	s := server.New(ln.Addr().String(), prometheus.NewRegistry(), nil, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := s.Run(ctx); err == nil || !strings.Contains(err.Error(), "listen") {
		t.Errorf("Run on a busy port = %v, want a listen error", err)
	}
}

func TestRunStopsOnCancel(t *testing.T) {
	s := server.New("127.0.0.1:0", prometheus.NewRegistry(), nil, nil)
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() { errc <- s.Run(ctx) }()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Errorf("Run = %v, want nil after cancel", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}

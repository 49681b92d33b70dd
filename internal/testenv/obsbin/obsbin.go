// Package obsbin starts real Prometheus and Alertmanager servers for tests.
// Prometheus (with promtool) is Debian's `prometheus` package when it is
// installed, as on CI, or else built once per machine by `make
// observability` (part of `make test`) into ~/.cache/vigil; Alertmanager is
// always built there (the tests rely on answers Debian's older release does
// not give, such as 404 for an unknown silence). A test that finds none
// fails and says how to get them. Each server gets free loopback ports and a temporary
// data directory, and is stopped when the test ends.
package obsbin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Versions the Makefile builds (mk/observability.mk) when Debian's
// Prometheus is not installed.
const (
	PrometheusVersion   = "v0.316.0"
	AlertmanagerVersion = "v0.28.1"
)

// Where Debian's `prometheus` package installs its binaries. Its release
// (2.42 in Debian 12) serves everything the tests use.
const (
	debianPrometheus = "/usr/bin/prometheus"
	debianPromtool   = "/usr/bin/promtool"
)

// Environment variables that point at other binaries.
const (
	EnvPrometheus   = "VIGIL_PROMETHEUS"
	EnvAlertmanager = "VIGIL_ALERTMANAGER"
	EnvPromtool     = "VIGIL_PROMTOOL"
)

// Server is one running server.
type Server struct {
	// URL is the server's base URL, e.g. http://127.0.0.1:41234.
	URL string
	// Dir is the server's temporary directory (config and data).
	Dir string

	cmd  *exec.Cmd
	done chan struct{}
	log  *syncBuffer
}

// Log returns what the server has printed so far.
func (s *Server) Log() string { return s.log.String() }

// Prometheus starts Prometheus with the given configuration file content
// (prometheus.yml) and extra flags, and waits until it is ready.
func Prometheus(t testing.TB, config string, flags ...string) *Server {
	t.Helper()
	bin := prometheusBinary(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := FreeAddr(t)
	args := append([]string{
		"--config.file=" + cfg,
		"--storage.tsdb.path=" + filepath.Join(dir, "data"),
		"--web.listen-address=" + addr,
		"--log.level=warn",
	}, flags...)
	return start(t, bin, dir, addr, args)
}

// Alertmanager starts Alertmanager with the given configuration file
// content (alertmanager.yml), clustering off, and waits until it is ready.
func Alertmanager(t testing.TB, config string, flags ...string) *Server {
	t.Helper()
	bin := binary(t, EnvAlertmanager, "alertmanager", AlertmanagerVersion)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "alertmanager.yml")
	if err := os.WriteFile(cfg, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := FreeAddr(t)
	args := append([]string{
		"--config.file=" + cfg,
		"--storage.path=" + filepath.Join(dir, "data"),
		"--web.listen-address=" + addr,
		"--cluster.listen-address=",
		"--log.level=warn",
	}, flags...)
	return start(t, bin, dir, addr, args)
}

// prometheusBinary finds Prometheus: $VIGIL_PROMETHEUS, then the build in
// the cache, then Debian's package.
func prometheusBinary(t testing.TB) string {
	t.Helper()
	if os.Getenv(EnvPrometheus) == "" {
		if _, err := os.Stat(cachePath("prometheus", PrometheusVersion)); err != nil {
			if _, err := os.Stat(debianPrometheus); err == nil {
				return debianPrometheus
			}
		}
	}
	return binary(t, EnvPrometheus, "prometheus", PrometheusVersion)
}

// Promtool returns the promtool that comes with the tests' Prometheus:
// $VIGIL_PROMTOOL, else the one beside the Prometheus binary.
func Promtool(t testing.TB) string {
	t.Helper()
	if p := os.Getenv(EnvPromtool); p != "" {
		return p
	}
	prom := prometheusBinary(t)
	p := filepath.Join(filepath.Dir(prom), "promtool")
	if prom == debianPrometheus {
		p = debianPromtool
	}
	if _, err := os.Stat(p); err == nil {
		return p
	}
	// A Prometheus built from source (`go install` of cmd/prometheus) comes
	// without promtool; Debian's, which `.ci/run` installs, checks rules as
	// well.
	if _, err := os.Stat(debianPromtool); err == nil {
		return debianPromtool
	}
	t.Fatalf("this test needs promtool: none beside the tests' Prometheus %s nor at %s; "+
		"install Debian's prometheus package (`.ci/run` does), or set %s", prom, debianPromtool, EnvPromtool)
	return ""
}

// cachePath is where `make observability` builds name at version.
func cachePath(name, version string) string {
	base, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(base, "vigil", name+"-"+version, name)
}

// binary finds a server binary: $env, else the Makefile's cache path.
func binary(t testing.TB, env, name, version string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		return p
	}
	p := cachePath(name, version)
	if p == "" {
		t.Fatalf("%s: no cache directory (set %s)", name, env)
	}
	if _, err := os.Stat(p); err != nil {
		hint := ""
		if name == "prometheus" {
			hint = ", or install Debian's package (apt-get install --no-install-recommends prometheus)"
		}
		t.Fatalf("this test needs a real %s %s at %s: run `make %s` (part of `make test`) to build it once%s, "+
			"or set %s to another binary: %v", name, version, p, name, hint, env, err)
	}
	return p
}

func start(t testing.TB, bin, dir, addr string, args []string) *Server {
	t.Helper()
	s := &Server{URL: "http://" + addr, Dir: dir, done: make(chan struct{}), log: &syncBuffer{}}
	s.cmd = exec.Command(bin, args...)
	s.cmd.Dir = dir
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", filepath.Base(bin), err)
	}
	go func() {
		_ = s.cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(func() {
		_ = s.cmd.Process.Signal(os.Interrupt)
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.done
		}
	})
	if err := s.waitReady(30 * time.Second); err != nil {
		t.Fatalf("%s did not become ready: %v\n%s", filepath.Base(bin), err, s.Log())
	}
	return s
}

// waitReady polls /-/ready, which both servers answer once they serve.
func (s *Server) waitReady(within time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	for {
		select {
		case <-s.done:
			return errors.New("it exited")
		default:
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/-/ready", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not ready within %s (last error: %v)", within, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// FreeAddr returns a loopback address with a port free at the time of the
// call.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return "127.0.0.1:" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// syncBuffer collects a process's output for failure messages.
type syncBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.buf) < 1<<20 {
		b.buf = append(b.buf, p...)
	}
	return len(p), nil
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

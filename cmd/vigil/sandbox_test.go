package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigilops/vigil/internal/config"
	"github.com/vigilops/vigil/tools/sandbox"
)

func TestSandboxExecCommand(t *testing.T) {
	if abi := sandbox.ABI(); abi < sandbox.MinABI {
		t.Fatalf("this kernel offers Landlock ABI %d, the read sandbox needs %d (Linux 6.12+ with Landlock enabled)", abi, sandbox.MinABI)
	}
	dir, tmp := t.TempDir(), t.TempDir()
	outside := filepath.Join(dir, "outside")
	out, err := exec.Command(os.Args[0], "sandbox-exec", "--tmp", tmp, "--",
		"touch "+outside+"; echo ok > \"$TMPDIR/f\"; cat \"$TMPDIR/f\"").CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !strings.Contains(string(out), "Permission denied") || !strings.HasSuffix(string(out), "ok\n") {
		t.Errorf("output %q", out)
	}
	if _, err := os.Stat(outside); err == nil {
		t.Error("vigil sandbox-exec let the command write outside its temp dir")
	}
	// Bad usage exits 2 without running anything.
	err = run(context.Background(), []string{"sandbox-exec", "--", "true"})
	var ee exitError
	if !errors.As(err, &ee) || ee.code != 2 {
		t.Errorf("without --tmp: %v, want exit status 2", err)
	}
}

// TestSandboxWarningsRedisPort: a read destination the configuration names
// on vigil's Redis port is said at startup; other ports are not.
func TestSandboxWarningsRedisPort(t *testing.T) {
	load := func(yaml string) *config.Config {
		t.Helper()
		path := filepath.Join(t.TempDir(), "vigil.yaml")
		if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	cfg := load(`
store:
  backend: redis
  redis:
    addr: 127.0.0.1:6379
policy:
  http_read_urls: ["http://cache-exporter:9121/metrics", "http://cache1:6379/"]
observability:
  prometheus:
    - name: main
      url: http://prometheus:9090
`)
	w := sandboxWarnings(redisEndpoints(cfg), readDestinations(cfg))
	if len(w) != 1 || !strings.Contains(w[0], "store.redis.addr 127.0.0.1:6379") || !strings.Contains(w[0], "policy.http_read_urls[1] (cache1:6379)") {
		t.Errorf("warnings = %q, want one naming store.redis.addr and policy.http_read_urls[1]", w)
	}
	sentinels := load(`
store:
  backend: redis
  redis:
    master_name: main
    addrs: [sentinel-0:26379, sentinel-1:26379]
observability:
  alertmanager:
    url: https://am.example:26379
`)
	if w := sandboxWarnings(redisEndpoints(sentinels), readDestinations(sentinels)); len(w) != 2 || !strings.Contains(w[1], "store.redis.addrs[1]") {
		t.Errorf("Sentinels: warnings = %q, want one per Sentinel", w)
	}
	for _, yaml := range []string{
		"store:\n  backend: redis\n  redis:\n    addr: 127.0.0.1:6379\npolicy:\n  http_read_urls: [\"https://grafana.example/api/health\"]\n",
		"store:\n  backend: memory\npolicy:\n  http_read_urls: [\"http://cache1:6379/\"]\n",
	} {
		if cfg := load(yaml); len(sandboxWarnings(redisEndpoints(cfg), readDestinations(cfg))) != 0 {
			t.Errorf("%s: a warning without a shared port", yaml)
		}
	}
}

package config

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/policy/command"
)

func write(t *testing.T, yaml string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "vigil.yaml")
	if err := os.WriteFile(p, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDefaults(t *testing.T) {
	c, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	if c.LLM.ToolMode != "native" || c.LLM.MaxTurns != 20 || c.Store.Backend != "memory" || c.Policy.ApprovalTTL != 10*time.Minute {
		t.Fatalf("defaults: %+v", c)
	}
	cps, err := c.ChannelPolicies()
	if err != nil {
		t.Fatal(err)
	}
	if len(cps) != 1 || cps[0].Match != "console" || cps[0].Level != policy.LevelControlled || !cps[0].AllowSelfApproval {
		t.Fatalf("default channel: %+v, want the console, controlled, self-approval allowed", cps)
	}
}

func TestExampleConfigLoads(t *testing.T) {
	c, err := Load("../../configs/vigil.example.yaml")
	if err != nil {
		t.Fatalf("the example config does not load: %v", err)
	}
	if c.LLM.Configured() {
		t.Fatal("the example config must leave the model unconfigured so `make run` explains how to set one")
	}
}

func TestEnvironmentOverrides(t *testing.T) {
	t.Setenv("VIGIL_LLM_BASE_URL", "http://localhost:11434/v1")
	t.Setenv("VIGIL_LLM_MODEL", "llama3.1")
	t.Setenv("VIGIL_LLM_API_KEY", "sk-secret-value")
	t.Setenv("VIGIL_STORE_REDIS_PASSWORD", "redis-secret")
	t.Setenv("VIGIL_POLICY_APPROVAL_TTL", "2m")
	c, err := Load(write(t, "llm:\n  base_url: http://ignored/v1\n  model: other\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.LLM.BaseURL != "http://localhost:11434/v1" || c.LLM.Model != "llama3.1" || c.LLM.APIKey.Reveal() != "sk-secret-value" {
		t.Fatalf("environment did not override the file: %+v", c.LLM)
	}
	if c.Store.Redis.Password.Reveal() != "redis-secret" || c.Policy.ApprovalTTL != 2*time.Minute {
		t.Fatalf("nested overrides: %+v %v", c.Store.Redis, c.Policy.ApprovalTTL)
	}
}

func TestSecretsNeverPrinted(t *testing.T) {
	t.Setenv("VIGIL_LLM_API_KEY", "sk-secret-value")
	t.Setenv("VIGIL_SLACK_BOT_TOKEN", "xoxb-secret")
	c, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	var logged strings.Builder
	slog.New(slog.NewTextHandler(&logged, nil)).Info("config", "llm", c.LLM, "key", c.LLM.APIKey)
	j, _ := json.Marshal(c)
	for _, out := range []string{fmt.Sprintf("%v %+v %#v %s", c, c, c, c.LLM.APIKey), string(j), logged.String()} {
		if strings.Contains(out, "sk-secret-value") || strings.Contains(out, "xoxb-secret") {
			t.Fatalf("a secret was printed: %s", out)
		}
	}
}

func TestErrorsNameTheKey(t *testing.T) {
	cases := []struct {
		name, yaml, want string
	}{
		{"unknown top-level key", "lmm:\n  model: x\n", "unknown key lmm"},
		{"unknown nested key", "llm:\n  bse_url: http://x/v1\n", "unknown key llm.bse_url"},
		{"bad tool mode", "llm:\n  tool_mode: xml\n", "llm.tool_mode"},
		{"bad url", "llm:\n  base_url: localhost:11434\n  model: m\n", "llm.base_url"},
		{"url without model", "llm:\n  base_url: http://x/v1\n", "llm.model"},
		{"bad store", "store:\n  backend: etcd\n", "store.backend"},
		{"bad duration", "policy:\n  approval_ttl: soon\n", "approval_ttl"},
		{"http_read_urls scheme", "policy:\n  http_read_urls: [ftp://x/metrics]\n", `policy.http_read_urls[0]: malformed URL prefix "ftp://x/metrics": scheme must be http or https (want e.g. http://localhost:9090/metrics or /readyz)`},
		{"http_read_urls query", "policy:\n  http_read_urls: [/readyz, 'http://x/metrics?action=reset']\n", `policy.http_read_urls[1]: malformed URL prefix "http://x/metrics?action=reset"`},
		{"http_read_urls credentials", "policy:\n  http_read_urls: ['http://u:p@x/metrics']\n", "policy.http_read_urls[0]"},
		{"http_read_urls dot segment", "policy:\n  http_read_urls: ['/api/../metrics']\n", "policy.http_read_urls[0]"},
		{"bad level", "channels:\n  - match: console\n    control_level: yolo\n", "channels[0].control_level"},
		{"bad match", "channels:\n  - match: irc:#ops\n", "channels[0].match"},
		{"duplicate match", "channels:\n  - match: console\n  - match: console\n", "channels[1].match"},
		{"controlled without approvers", "channels:\n  - match: slack:C1\n    control_level: controlled\n", "approvers"},
		{"slack without tokens", "slack:\n  enabled: true\n", "slack.app_token"},
		{"matrix without login", "matrix:\n  enabled: true\n  homeserver: https://hs\n  user_id: '@v:hs'\n", "matrix.access_token"},
		{"missing inventory", "inventory:\n  file: /nonexistent/inv.yaml\n", "inventory.file"},
		{"not yaml", "llm: [\n", "not valid YAML"},
		{"bad plugin name", "plugins:\n  - name: Ops-Tools\n    command: /bin/true\n", "plugins[0].name"},
		{"duplicate plugin", "plugins:\n  - name: ops\n    command: /bin/true\n  - name: ops\n    command: /bin/true\n", "plugins[1].name"},
		{"plugin without command", "plugins:\n  - name: ops\n", "plugins[0].command"},
		{"bad plugin env", "plugins:\n  - name: ops\n    command: /bin/true\n    env: [REGION]\n", "plugins[0].env[0]"},
		{"unknown plugin key", "plugins:\n  - name: ops\n    command: /bin/true\n    cmd: x\n", "plugins[0].cmd"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(write(t, tc.yaml))
			if err == nil {
				t.Fatalf("loaded without error; want one naming %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not name %q", err, tc.want)
			}
		})
	}
}

// TestHTTPReadURLs: listed prefixes reach the classifier through the
// gate's rules, from the file and from the environment.
func TestHTTPReadURLs(t *testing.T) {
	c, err := Load(write(t, "policy:\n  http_read_urls: ['http://prom:9090/api/v1/', /readyz]\n"))
	if err != nil {
		t.Fatal(err)
	}
	opts := c.Policy.Rules().Command
	if len(opts.HTTPReadURLs) != 2 {
		t.Fatalf("rules carry %d prefixes, want 2: %v", len(opts.HTTPReadURLs), opts.HTTPReadURLs)
	}
	cmd := "curl -s 'http://prom:9090/api/v1/query_range?query=up&start=1&end=2&step=15'"
	if v := (command.Options{}).Classify(cmd, command.DialectBash); v.ReadOnly() {
		t.Fatalf("without the setting %q is read-only: %v", cmd, v.Reasons)
	}
	if v := opts.Classify(cmd, command.DialectBash); !v.ReadOnly() {
		t.Fatalf("with the setting %q is not read-only: %v", cmd, v.Reasons)
	}
	if v := opts.Classify("kubectl get --raw /readyz", command.DialectBash); !v.ReadOnly() {
		t.Fatalf("kubectl get --raw /readyz is not read-only with /readyz listed: %v", v.Reasons)
	}

	t.Setenv("VIGIL_POLICY_HTTP_READ_URLS", "http://a:8080/health,/livez")
	c, err = Load("")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Policy.HTTPReadURLs; len(got) != 2 || got[0] != "http://a:8080/health" || got[1] != "/livez" {
		t.Fatalf("from the environment: %q", got)
	}
}

func TestPlugins(t *testing.T) {
	c, err := Load(write(t, "plugins:\n  - name: ops\n    command: /usr/local/bin/ops-mcp\n    args: [--stdio]\n    env: [REGION=eu]\n    timeout: 5s\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Plugin{{Name: "ops", Command: "/usr/local/bin/ops-mcp", Args: []string{"--stdio"}, Env: []string{"REGION=eu"}, Timeout: 5 * time.Second}}
	if fmt.Sprint(c.Plugins) != fmt.Sprint(want) {
		t.Errorf("plugins = %+v; want %+v", c.Plugins, want)
	}
}

func TestMissingFile(t *testing.T) {
	_, err := Load("/nonexistent/vigil.yaml")
	if err == nil || !strings.Contains(err.Error(), "--config") {
		t.Fatalf("missing file: %v", err)
	}
}

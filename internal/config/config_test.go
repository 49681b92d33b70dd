package config

import (
	"encoding/json"
	"errors"
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
	if !c.Policy.RedactModelInput {
		t.Fatal("policy.redact_model_input must default to true: a hosted model never sees a secret a tool printed")
	}
}

func TestRedactModelInput(t *testing.T) {
	c, err := Load(write(t, "policy:\n  redact_model_input: false\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Policy.RedactModelInput {
		t.Fatal("policy.redact_model_input: false was not read")
	}
	t.Setenv("VIGIL_POLICY_REDACT_MODEL_INPUT", "true")
	if c, err = Load(write(t, "policy:\n  redact_model_input: false\n")); err != nil || !c.Policy.RedactModelInput {
		t.Fatalf("VIGIL_POLICY_REDACT_MODEL_INPUT=true did not override the file: %v %+v", err, c)
	}
	t.Setenv("VIGIL_POLICY_REDACT_MODEL_INPUT", "sometimes")
	if _, err := Load(""); err == nil || !strings.Contains(err.Error(), "redact_model_input") {
		t.Fatalf("a non-boolean policy.redact_model_input: error %v, want one naming the key", err)
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
	j, err := json.Marshal(c)
	if err != nil {
		t.Fatalf("the configuration does not marshal, so this test would see nothing of it: %v", err)
	}
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
		{"redis addr and addrs", "store:\n  backend: redis\n  redis:\n    addr: r:6379\n    addrs: [a:6379, b:6379]\n", "store.redis.addr = \"r:6379\" (from file"},
		{"redis addrs not host:port", "store:\n  backend: redis\n  redis:\n    addrs: [a:6379, b]\n", "store.redis.addrs[1]"},
		{"sentinel without sentinels", "store:\n  backend: redis\n  redis:\n    master_name: mymaster\n", "store.redis.master_name"},
		{"sentinel password alone", "store:\n  backend: redis\n  redis:\n    addrs: [a:6379, b:6379]\n    sentinel_password: x\n", "store.redis.sentinel_password"},
		{"cluster with db", "store:\n  backend: redis\n  redis:\n    addrs: [a:6379, b:6379]\n    db: 2\n", "store.redis.db"},
		{"bare ack timeout", "store:\n  redis:\n    replica_ack_timeout: 500\n", "store.redis.replica_ack_timeout"},
		{"bad duration", "policy:\n  approval_ttl: soon\n", "approval_ttl"},
		{"http_read_urls scheme", "policy:\n  http_read_urls: [ftp://x/metrics]\n", `policy.http_read_urls[0] = "ftp://x/metrics" (from file`},
		{"http_read_urls query", "policy:\n  http_read_urls: [/readyz, 'http://x/metrics?action=reset']\n", `policy.http_read_urls[1] = "http://x/metrics?action=reset" (from file`},
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
		{"bad read sandbox", "policy:\n  read_sandbox: strict\n", `policy.read_sandbox = "strict" (from file`},
		{"bad read-only command", "policy:\n  read_only_commands:\n    - mytool status\n    - \"rm $(x)\"\n", `policy.read_only_commands[1] = "rm $(x)" (from file`},
		{"read-only command host without network", "policy:\n  read_only_commands:\n    - command: kafka-topics --describe\n      hosts: [kafka-1:9092]\n", "network is false"},
		{"read-only command bad host", "policy:\n  read_only_commands:\n    - command: kafka-topics --describe\n      network: true\n      hosts: ['kafka 1:9092']\n", "policy.read_only_commands[0]"},
		{"read destination bad port", "policy:\n  read_destinations: ['kafka-1:99999']\n", `policy.read_destinations[0] = "kafka-1:99999"`},
		{"read destination unknown service", "policy:\n  read_destinations: ['mongo=db:27017']\n", "is not one of kubernetes, ceph"},
		{"read destination bad host", "policy:\n  read_destinations: ['http://x']\n", "policy.read_destinations[0]"},
		{"empty read-only command", "policy:\n  read_only_commands:\n    - command: \"\"\n      network: true\n", `policy.read_only_commands[0] = (a section) (from file`},
		{"unknown read-only command key", "policy:\n  read_only_commands:\n    - cmd: mytool status\n", "cmd"},
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

// store.redis.addrs alone (addr left at its default) chooses a Cluster
// or, with master_name, Sentinels; the error of both names the fix.
func TestRedisTopologies(t *testing.T) {
	c, err := Load(write(t, "store:\n  backend: redis\n  redis:\n    master_name: m\n    addrs: [s1:26379, s2:26379]\n    sentinel_password: pw\n"))
	if err != nil {
		t.Fatal(err)
	}
	if r := c.Store.Redis; r.MasterName != "m" || len(r.Addrs) != 2 || r.SentinelPassword.Reveal() != "pw" || r.ReplicaAckTimeout != time.Second {
		t.Fatalf("sentinel config: %+v", r)
	}
	if _, err := Load(write(t, "store:\n  backend: redis\n  redis:\n    addrs: [a:6379, b:6379, c:6379]\n")); err != nil {
		t.Fatalf("cluster config: %v", err)
	}
	_, err = Load(write(t, "store:\n  backend: redis\n  redis:\n    addr: r:6379\n    addrs: [a:6379]\n"))
	var ce *Error
	if !errors.As(err, &ce) || ce.Key != "store.redis.addr" || !strings.Contains(err.Error(), "remove the other") {
		t.Fatalf("addr and addrs: %v", err)
	}
}

// Every configuration error shows the key, the bad value as written,
// where it came from (the file or the VIGIL_ variable) and a good value.
func TestErrorsShowValueSourceAndExample(t *testing.T) {
	cases := []struct {
		name string
		yaml string
		env  map[string]string
		// key, value and example as the message must show them;
		// fromEnv: the source is the variable, else the file.
		key, value, example string
		fromEnv             bool
		// source overrides the expected source.
		source string
	}{
		{name: "tool mode in the file", yaml: "llm:\n  tool_mode: xml\n",
			key: "llm.tool_mode", value: `"xml"`, example: "llm.tool_mode: native"},
		{name: "tool mode in the environment", env: map[string]string{"VIGIL_LLM_TOOL_MODE": "xml"},
			key: "llm.tool_mode", value: `"xml"`, example: "VIGIL_LLM_TOOL_MODE=native", fromEnv: true},
		{name: "max turns out of range", yaml: "llm:\n  max_turns: 500\n",
			key: "llm.max_turns", value: "500", example: "llm.max_turns: 20"},
		{name: "max turns not a number", env: map[string]string{"VIGIL_LLM_MAX_TURNS": "many"},
			key: "llm.max_turns", value: `"many"`, example: "VIGIL_LLM_MAX_TURNS=20", fromEnv: true},
		{name: "temperature not a number", yaml: "llm:\n  temperature: hot\n",
			key: "llm.temperature", value: `"hot"`, example: "llm.temperature: 0.2"},
		{name: "boolean", env: map[string]string{"VIGIL_SLACK_ENABLED": "yes please"},
			key: "slack.enabled", value: `"yes please"`, example: "VIGIL_SLACK_ENABLED=true", fromEnv: true},
		{name: "store backend", env: map[string]string{"VIGIL_STORE_BACKEND": "etcd"},
			key: "store.backend", value: `"etcd"`, example: "VIGIL_STORE_BACKEND=memory", fromEnv: true},
		{name: "base url", yaml: "llm:\n  base_url: localhost:11434\n  model: m\n",
			key: "llm.base_url", value: `"localhost:11434"`, example: "llm.base_url: https://"},
		{name: "log level", yaml: "log:\n  level: loud\n",
			key: "log.level", value: `"loud"`, example: "log.level: info"},
		{name: "negative rate limit", yaml: "bot:\n  user_rate_limit: -1\n",
			key: "bot.user_rate_limit", value: "-1", example: "bot.user_rate_limit: 20"},
		{name: "channel level", yaml: "channels:\n  - match: console\n    control_level: yolo\n",
			key: "channels[0].control_level", value: `"yolo"`, example: "channels[0].control_level: controlled"},
		{name: "channel match", yaml: "channels:\n  - match: irc:#ops\n",
			key: "channels[0].match", value: `"irc:#ops"`, example: "channels[0].match: slack:"},
		{name: "plugin name", yaml: "plugins:\n  - name: Ops-Tools\n    command: /bin/true\n",
			key: "plugins[0].name", value: `"Ops-Tools"`, example: "plugins[0].name: tickets"},
		{name: "plugin env", yaml: "plugins:\n  - name: ops\n    command: /bin/true\n    env: [REGION]\n",
			key: "plugins[0].env[0]", value: `"REGION"`, example: "plugins[0].env[0]: "},
		{name: "missing secret", yaml: "slack:\n  enabled: true\n  mode: http\n  bot_token: xoxb-1\n",
			key: "slack.signing_secret", value: `""`, source: "from built-in default",
			example: "set VIGIL_SLACK_SIGNING_SECRET=… in the environment, or slack.signing_secret: … in the file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			path := ""
			if tc.yaml != "" {
				path = write(t, tc.yaml)
			}
			_, err := Load(path)
			if err == nil {
				t.Fatal("loaded without error")
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %q is not a *config.Error", err)
			}
			msg := err.Error()
			source := "from file " + path
			if tc.fromEnv {
				for k := range tc.env {
					source = "from environment variable " + k
				}
			}
			if tc.source != "" {
				source = tc.source
			}
			for what, want := range map[string]string{
				"key and value": tc.key + " = " + tc.value,
				"source":        source,
				"example":       exampleLine(tc.example),
			} {
				if !strings.Contains(msg, want) {
					t.Errorf("the error does not show the %s (%q):\n%s", what, want, msg)
				}
			}
		})
	}
}

// A secret's value never appears in an error, even when it is the bad
// value.
func TestErrorsMaskSecrets(t *testing.T) {
	_, err := Load(write(t, "llm:\n  api_key: [sk-live-0123456789]\n"))
	if err == nil {
		t.Fatal("a list for llm.api_key loaded")
	}
	if !strings.Contains(err.Error(), "llm.api_key = ***") || strings.Contains(err.Error(), "sk-live") {
		t.Fatalf("the error must name llm.api_key and hide its value: %v", err)
	}
}

// Durations must carry a unit: YAML reads 600 as 600ns, which expired
// every approval at once. And each has a minimum below which it can only
// be a mistake. Both for the file and the environment.
func TestDurations(t *testing.T) {
	cases := []struct {
		name string
		yaml string
		env  map[string]string
		// want is "" for a value that loads, else what the error must say.
		want []string
	}{
		{name: "bare number in the file", yaml: "policy:\n  approval_ttl: 600\n",
			want: []string{"policy.approval_ttl = 600", "no unit", "600ns", "600s or 10m", "from file"}},
		{name: "bare number in the environment", env: map[string]string{"VIGIL_POLICY_APPROVAL_TTL": "600"},
			want: []string{"policy.approval_ttl", `"600"`, "no unit", "VIGIL_POLICY_APPROVAL_TTL=600s or 10m"}},
		{name: "bare decimal", yaml: "llm:\n  timeout: 1.5\n", want: []string{"llm.timeout = 1.5", "no unit", "1.5s"}},
		{name: "quoted bare number", yaml: "llm:\n  timeout: \"90\"\n", want: []string{"llm.timeout", "no unit", "90s"}},
		{name: "bare number in a list item", yaml: "plugins:\n  - name: ops\n    command: /bin/true\n    timeout: 5\n",
			want: []string{"plugins[0].timeout = 5", "no unit", "5s"}},
		{name: "approval ttl below 30s", yaml: "policy:\n  approval_ttl: 10s\n",
			want: []string{"policy.approval_ttl", `"10s"`, "minimum, 30s", "for example policy.approval_ttl: 10m"}},
		{name: "approval ttl below 30s from the environment", env: map[string]string{"VIGIL_POLICY_APPROVAL_TTL": "29s"},
			want: []string{"policy.approval_ttl", "VIGIL_POLICY_APPROVAL_TTL", "minimum, 30s"}},
		{name: "approval ttl zero", yaml: "policy:\n  approval_ttl: 0s\n", want: []string{"policy.approval_ttl", "minimum, 30s"}},
		{name: "model timeout below 1s", yaml: "llm:\n  timeout: 500ms\n", want: []string{"llm.timeout", "minimum, 1s"}},
		{name: "negative", env: map[string]string{"VIGIL_LLM_TIMEOUT": "-5s"}, want: []string{"llm.timeout", "negative"}},
		{name: "usergroup ttl below 10s", yaml: "slack:\n  usergroup_ttl: 1s\n", want: []string{"slack.usergroup_ttl", "minimum, 10s"}},
		{name: "plugin timeout below 1s", yaml: "plugins:\n  - name: ops\n    command: /bin/true\n    timeout: 100ms\n",
			want: []string{"plugins[0].timeout", "minimum, 1s", "0 means 30s"}},
		{name: "not a duration", env: map[string]string{"VIGIL_POLICY_APPROVAL_TTL": "ten minutes"},
			want: []string{"policy.approval_ttl", `"ten minutes"`, "not a duration"}},
		{name: "a list", yaml: "llm:\n  timeout: [1s]\n", want: []string{"llm.timeout", "not a duration"}},
		{name: "units load", yaml: "policy:\n  approval_ttl: 30s\nllm:\n  timeout: 1s\nslack:\n  usergroup_ttl: 10s\n"},
		{name: "units load from the environment", env: map[string]string{"VIGIL_POLICY_APPROVAL_TTL": "1h30m"}},
		{name: "zero means the default where it may", yaml: "plugins:\n  - name: ops\n    command: /bin/true\n    timeout: 0\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			path := ""
			if tc.yaml != "" {
				path = write(t, tc.yaml)
			}
			c, err := Load(path)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("did not load: %v", err)
				}
				if c.Policy.ApprovalTTL < 30*time.Second || c.LLM.Timeout < time.Second {
					t.Fatalf("loaded %v / %v", c.Policy.ApprovalTTL, c.LLM.Timeout)
				}
				return
			}
			if err == nil {
				t.Fatalf("loaded (approval ttl %v, timeout %v); want an error", c.Policy.ApprovalTTL, c.LLM.Timeout)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
	c, err := Load(write(t, "policy:\n  approval_ttl: 90s\n"))
	if err != nil || c.Policy.ApprovalTTL != 90*time.Second {
		t.Fatalf("approval_ttl: 90s loaded as %v, %v", c.Policy.ApprovalTTL, err)
	}
}

// Every duration key has a rule (a minimum and an example): a new one
// cannot slip in unchecked.
func TestEveryDurationHasARule(t *testing.T) {
	n := 0
	for _, f := range fields() {
		if f.typ != durationType {
			continue
		}
		n++
		r, ok := durationRuleFor(f.key)
		if !ok {
			t.Errorf("duration key %s has no entry in durationRules", f.key)
			continue
		}
		if r.min <= 0 || r.example == "" || r.why == "" {
			t.Errorf("the rule for %s needs a minimum, an example and a reason: %+v", f.key, r)
		}
		if d, err := time.ParseDuration(r.example); err != nil || d < r.min {
			t.Errorf("the example for %s, %q, is not a valid value", f.key, r.example)
		}
	}
	if n < 4 {
		t.Fatalf("found %d duration keys; the walk over Config is broken", n)
	}
	for _, r := range durationRules {
		found := false
		for _, f := range fields() {
			found = found || f.key == r.key
		}
		if !found {
			t.Errorf("durationRules has %s, which is not a key", r.key)
		}
	}
}

// Every key has an example of a good value for its errors.
func TestEveryKeyHasAnExample(t *testing.T) {
	for _, f := range fields() {
		if exampleFor(f.key) == "" {
			t.Errorf("key %s has no example: add one to examples", f.key)
		}
	}
}

// A VIGIL_ variable that sets nothing is a warning naming the closest
// setting: a typo must not be ignored in silence.
func TestUnknownEnvironmentVariables(t *testing.T) {
	cases := []struct {
		env  string
		want string // "" for no warning
	}{
		{"VIGIL_LLM_MODLE", "did you mean VIGIL_LLM_MODEL (llm.model)?"},
		{"VIGIL_POLICY_APROVAL_TTL", "did you mean VIGIL_POLICY_APPROVAL_TTL (policy.approval_ttl)?"},
		{"VIGIL_SLACK_BOTTOKEN", "did you mean VIGIL_SLACK_BOT_TOKEN (slack.bot_token)?"},
		{"VIGIL_STORE_REDIS_ADR", "did you mean VIGIL_STORE_REDIS_ADDR (store.redis.addr)?"},
		{"VIGIL_MATRIX_ROOMS", "matrix.rooms is a list and can only be set in the config file"},
		{"VIGIL_WHATEVER", "is not a vigil setting"},
		{"VIGIL_LLM_MODEL", ""},
		{"VIGIL_CONFIG", ""},
		{"VIGIL_SHARED_CORPUS", ""},
		{"VIGIL_TEST_DEBUG", ""},
		{"VIGILANT", ""},
	}
	for _, tc := range cases {
		t.Run(tc.env, func(t *testing.T) {
			t.Setenv(tc.env, "x")
			c, err := Load("")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, w := range c.Warnings() {
				if strings.Contains(w, tc.env+" ") {
					got = append(got, w)
				}
			}
			switch {
			case tc.want == "" && len(got) > 0:
				t.Fatalf("unexpected warning: %q", got)
			case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)):
				t.Fatalf("warnings %q; want one saying %q", c.Warnings(), tc.want)
			}
		})
	}
}

// TestHTTPReadURLs: listed prefixes reach the classifier through the
// gate's rules, from the file and from the environment.
func TestHTTPReadURLs(t *testing.T) {
	c, err := Load(write(t, "policy:\n  http_read_urls: ['http://prom:9090/api/v1/', /readyz]\n  read_destinations: [kubernetes=kube-api:6443]\n"))
	if err != nil {
		t.Fatal(err)
	}
	opts := c.CommandOptions()
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

// TestReadDestinations: policy.read_destinations, the hosts of network
// read_only_commands, the datasources and vigil's own Redis store reach
// the classifier's options; a read reaches what they declare and never
// the store.
func TestReadDestinations(t *testing.T) {
	c, err := Load(write(t, `policy:
  read_destinations: ["10.0.0.5", "ceph=mon1:3300", "aws=*.amazonaws.com:443", "kubernetes/prod=kube-prod:6443"]
  read_only_commands:
    - command: kafka-topics --describe
      network: true
      hosts: [kafka-1:9092]
observability:
  prometheus:
    - name: main
      url: http://prom.internal:9090
  alertmanager:
    url: https://am.internal/
store:
  backend: redis
  redis:
    addr: 10.0.0.5:6379
`))
	if err != nil {
		t.Fatal(err)
	}
	opts := c.CommandOptions()
	for _, tc := range []struct {
		cmd  string
		read bool
	}{
		{"nc -z 10.0.0.5 22", true},
		{"nc -z kafka-1 9092", true},
		{"nc -z kafka-1 9093", false},
		{"curl -s http://prom.internal:9090/-/healthy", true},
		{"curl -s https://am.internal/api/v2/status", true},
		{"curl -s http://am.internal/api/v2/status", false},
		{"redis-cli -h 10.0.0.5 -p 6379 INFO", false},
		{"redis-cli -h 10.0.0.5 -p 6380 INFO", true},
		{"ceph -s", true},
		{"aws sts get-caller-identity", true},
		{"kubectl --context prod get pods", true},
		{"kubectl get pods", false},
	} {
		if v := opts.Classify(tc.cmd, command.DialectBash); v.ReadOnly() != tc.read {
			t.Errorf("%q: read=%v %v, want %v", tc.cmd, v.ReadOnly(), v.Reasons, tc.read)
		}
	}
	rules := c.Policy.Rules()
	if len(rules.ReadOnlyCommands) != 1 || len(rules.ReadOnlyCommands[0].Hosts) != 1 || rules.ReadOnlyCommands[0].Hosts[0].String() != "kafka-1:9092" {
		t.Errorf("declared command: %+v", rules.ReadOnlyCommands)
	}

	t.Setenv("VIGIL_POLICY_READ_DESTINATIONS", "web9:8080,ceph=mon2:6789")
	c, err = Load("")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Policy.ReadDestinations; len(got) != 2 || got[1] != "ceph=mon2:6789" {
		t.Fatalf("from the environment: %q", got)
	}
	if v := c.CommandOptions().Classify("nc -z web9 8080", command.DialectBash); !v.ReadOnly() {
		t.Errorf("a destination from the environment is not known: %v", v.Reasons)
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

func TestReadSandboxSettings(t *testing.T) {
	c, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	if r := c.Policy.Rules(); r.ReadSandbox != policy.SandboxBestEffort || len(r.ReadOnlyCommands) != 0 {
		t.Errorf("default rules = %+v, want best effort and no declared commands", r)
	}
	c, err = Load(write(t, `policy:
  read_sandbox: required
  read_only_commands:
    - mytool status
    - command: kafka-topics --describe
      network: true
`))
	if err != nil {
		t.Fatal(err)
	}
	r := c.Policy.Rules()
	got := fmt.Sprintln(r.ReadSandbox, r.ReadOnlyCommands)
	if want := "required [{[mytool status] false []} {[kafka-topics --describe] true []}]\n"; got != want {
		t.Errorf("rules = %s, want %s", got, want)
	}
	t.Setenv("VIGIL_POLICY_READ_ONLY_COMMANDS", "mytool status, other list")
	t.Setenv("VIGIL_POLICY_READ_SANDBOX", "off")
	c, err = Load("")
	if err != nil {
		t.Fatal(err)
	}
	r = c.Policy.Rules()
	if got := fmt.Sprintln(r.ReadSandbox, r.ReadOnlyCommands); got != "off [{[mytool status] false []} {[other list] false []}]\n" {
		t.Errorf("rules from the environment = %s", got)
	}
}

// parseDuration never panics, and never accepts a bare number other than
// zero: whatever it returns without error came with a unit.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"600", "10m", "1h30m", "0", "-5s", "1.5", " 90s ", "ten minutes", "1e3", "0x10", "NaN", "Inf"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseDuration(s)
		if err != nil {
			return
		}
		if d != 0 && strings.IndexFunc(s, func(r rune) bool { return strings.ContainsRune("nsuµmh", r) }) < 0 {
			t.Fatalf("%q parsed as %v without a unit", s, d)
		}
	})
}

// exampleLine is how an error shows an example: a secret's says where to
// set it.
func exampleLine(ex string) string {
	if strings.HasPrefix(ex, "set ") {
		return "; " + ex
	}
	return "for example " + ex
}

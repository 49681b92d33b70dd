package agent

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools"
)

// Tool results are redacted before the model sees them: in command output,
// in structured data (a value read with its key), in error messages, and
// the envelope stays valid JSON.
func TestModelContentRedacts(t *testing.T) {
	a := &Agent{}
	env := tools.OK(map[string]any{
		"stdout": "DB_PASS=Tr0ub4dor\nREDIS_AUTH=foobared-7x\nuptime 3 days\n\"quoted\" \\ backslash",
		"env":    map[string]any{"PGPASSWORD": "pg-s3cret", "HOME": "/root"},
		"list":   []any{"postgres://app:urlpw1@db/app", 42, true},
		"note":   "the admin password is hunter2",
	})
	got := a.modelContent(env)
	for _, secret := range []string{"Tr0ub4dor", "foobared-7x", "pg-s3cret", "urlpw1", "hunter2"} {
		if strings.Contains(got, secret) {
			t.Errorf("the model would receive %q:\n%s", secret, got)
		}
	}
	var back map[string]any
	if err := json.Unmarshal([]byte(got), &back); err != nil {
		t.Fatalf("redacted envelope is not JSON: %v\n%s", err, got)
	}
	data := back["data"].(map[string]any)
	if !strings.Contains(data["stdout"].(string), "uptime 3 days\n\"quoted\" \\ backslash") {
		t.Errorf("ordinary output was damaged: %q", data["stdout"])
	}
	if data["env"].(map[string]any)["HOME"] != "/root" || data["list"].([]any)[1] != 42.0 {
		t.Errorf("non-secret data changed: %+v", data)
	}

	blocked := tools.Failed(policy.CodeExecutionFailed, "mysql -uroot -pSECRETpw failed", false)
	if got := a.modelContent(blocked); strings.Contains(got, "SECRETpw") {
		t.Errorf("an error message leaked the secret: %s", got)
	}

	clean := tools.OK(map[string]any{"stdout": "load average: 0.10, 0.20, 0.30"})
	if got, want := a.modelContent(clean), clean.JSON(); got != want {
		t.Errorf("clean result changed: %s, want %s", got, want)
	}

	a.cfg.UnredactedModelInput = true
	if got := a.modelContent(env); !strings.Contains(got, "Tr0ub4dor") {
		t.Error("with policy.redact_model_input off, the result must reach the model as the tool returned it")
	}
}

// FuzzRedactJSON: whatever a tool returns, the model gets valid JSON when
// it was valid JSON, and redacting twice changes nothing more.
func FuzzRedactJSON(f *testing.F) {
	for _, s := range []string{`{"ok":true,"data":{"stdout":"DB_PASS=x1\n"}}`, `{"password":"a\"b"}`, `["token=abc123", 1, null]`,
		`{"DB_PASSWORD":"hunter2","nested":{"k":"postgres://u:p@h/d"}}`, `"-----BEGIN RSA PRIVATE KEY-----\nabc"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		out := redactJSON(raw)
		if json.Valid([]byte(raw)) && !json.Valid([]byte(out)) {
			t.Fatalf("valid JSON became invalid:\n in %s\nout %s", raw, out)
		}
		if again := redactJSON(out); json.Valid([]byte(raw)) && again != out {
			t.Fatalf("not idempotent:\n in %s\nout %s\nagain %s", raw, out, again)
		}
	})
}

// Structured results are redacted by key path (issue 23): an array under a
// key that names a secret, a label_values result for a label named
// password, a number under password, JSON inside a string, a Kubernetes
// Secret or env entry printed as YAML. The key above a value decides,
// however deep it sits.
func TestModelContentRedactsByKeyPath(t *testing.T) {
	a := &Agent{}
	cases := []struct {
		name    string
		env     tools.Envelope
		secrets []string
		keep    []string
	}{
		{"label_values of a label named password",
			tools.OK(map[string]any{"label": "password", "values": []any{"hunter2", "letmein"}, "total": 2}),
			[]string{"hunter2", "letmein"}, []string{`"total":2`, `"label":"password"`}},
		{"array under a secret's key",
			tools.OK(map[string]any{"config": map[string]any{"api_keys": []any{"ak-live-1", "ak-live-2"}, "region": "eu"}}),
			[]string{"ak-live-1", "ak-live-2"}, []string{`"region":"eu"`}},
		{"nested objects under credentials",
			tools.OK(map[string]any{"credentials": map[string]any{"primary": map[string]any{"value": "cred-deep-1"}}}),
			[]string{"cred-deep-1"}, nil},
		{"a number under password",
			tools.OK(map[string]any{"user": "bob", "password": 12345678}),
			[]string{"12345678"}, []string{`"user":"bob"`}},
		{"JSON in a string",
			tools.OK(map[string]any{"stdout": `{"creds":["in-string-secret"],"ok":true}`}),
			[]string{"in-string-secret"}, []string{`\"ok\":true`}},
		{"kubernetes secret as YAML",
			tools.OK(map[string]any{"stdout": "apiVersion: v1\ndata:\n  url: cG9zdGdyZXM6Ly9kYg==\nkind: Secret\nmetadata:\n  name: db\n"}),
			[]string{"cG9zdGdyZXM6Ly9kYg=="}, []string{"name: db"}},
		{"env entry as YAML",
			tools.OK(map[string]any{"stdout": "env:\n- name: DB_PASSWORD\n  value: env-hunter2\n- name: DB_HOST\n  value: db.local\n"}),
			[]string{"env-hunter2"}, []string{"value: db.local"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := a.modelContent(tc.env)
			for _, s := range tc.secrets {
				if strings.Contains(got, s) {
					t.Errorf("the model would receive %q:\n%s", s, got)
				}
			}
			for _, k := range tc.keep {
				if !strings.Contains(got, k) {
					t.Errorf("non-secret %q lost:\n%s", k, got)
				}
			}
			if !json.Valid([]byte(got)) {
				t.Errorf("not JSON: %s", got)
			}
		})
	}
}

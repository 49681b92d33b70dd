package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/slack-go/slack/slacktest"

	"github.com/vigilops/vigil/internal/testenv/golden"
)

// slackWorkspace is a Slack test server (slack-go's slacktest) with the
// lists check-config looks names up in.
func slackWorkspace(t *testing.T) string {
	t.Helper()
	list := func(method string, body map[string]any) slacktest.Binder {
		return func(c slacktest.Customize) {
			c.Handle("/"+method, func(w http.ResponseWriter, r *http.Request) {
				_ = json.NewEncoder(w).Encode(body)
			})
		}
	}
	s := slacktest.NewTestServer(
		list("conversations.list", map[string]any{"ok": true, "channels": []map[string]any{
			{"id": "C0OPS", "name": "ops"}, {"id": "C0DEV", "name": "dev"}}}),
		list("users.list", map[string]any{"ok": true, "members": []map[string]any{
			{"id": "U0ALICE", "name": "alice"}, {"id": "U0BOB", "name": "bob"}}}),
		list("usergroups.list", map[string]any{"ok": true, "usergroups": []map[string]any{
			{"id": "S0ONCALL", "handle": "oncall"}}}),
	)
	s.Start()
	t.Cleanup(s.Stop)
	return s.GetAPIURL()
}

const checkConfigYAML = `slack:
  bot_token: xoxb-test
  api_url: %API%
matrix:
  homeserver: https://matrix.example.org
  user_id: '@vigil:example.org'
channels:
  - match: console
  - match: 'slack:#ops'
    control_level: controlled
    viewers: ['@bob']
    operators: ['@alice', U0DAVE]
    approvers: ['@oncall']
  - match: 'slack:#dev'
    control_level: autonomous
    operators: ['@bob']
  - match: 'matrix:#sre:example.org'
    control_level: read_only
  - match: default
    control_level: read_only
`

// check-config validates, resolves Slack names on the test server, says
// it skipped Matrix (no access token), and prints each channel's
// effective policy.
func TestCheckConfigGolden(t *testing.T) {
	api := slackWorkspace(t)
	path := writeConfig(t, t.TempDir(), strings.ReplaceAll(checkConfigYAML, "%API%", api))
	out, _, err := runCLI(t, "", "check-config", "--config", path)
	if err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "check-config.txt", []byte(strings.ReplaceAll(out, path, "vigil.yaml")))
}

// A name that does not resolve fails the check, naming the key; without
// a token, names are reported as not looked up.
func TestCheckConfigUnresolvable(t *testing.T) {
	api := slackWorkspace(t)
	yaml := strings.ReplaceAll(checkConfigYAML, "%API%", api)
	yaml = strings.Replace(yaml, "'@oncall'", "'@nobody'", 1)
	_, _, err := runCLI(t, "", "check-config", "--config", writeConfig(t, t.TempDir(), yaml))
	if err == nil || !strings.Contains(err.Error(), `channels[1].approvers[0] = "@nobody"`) ||
		!strings.Contains(err.Error(), "no Slack member or user group is called @nobody") {
		t.Fatalf("error %v", err)
	}

	yaml = strings.Replace(strings.ReplaceAll(checkConfigYAML, "%API%", api), "  bot_token: xoxb-test\n", "", 1)
	out, _, err := runCLI(t, "", "check-config", "--config", writeConfig(t, t.TempDir(), yaml))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "NOT resolved on slack (slack.bot_token is not set): #ops, @bob, @alice, @oncall, #dev") {
		t.Fatalf("output does not say the Slack names were skipped:\n%s", out)
	}
}

// Every problem is in the one report, with the YAML line for a file that
// is not YAML.
func TestCheckConfigErrors(t *testing.T) {
	dir := t.TempDir()
	path := writeConfig(t, dir, "channels:\n  - match: slack:general\n    approvers: [alice]\nlog:\n  level: loud\n")
	_, _, err := runCLI(t, "", "check-config", "--config", path)
	if err == nil {
		t.Fatal("check-config passed")
	}
	for _, want := range []string{`channels[0].match = "slack:general"`, `channels[0].approvers[0] = "alice"`, `log.level = "loud"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	path = writeConfig(t, dir, "llm:\n  model: x\n bad: 1\n")
	if _, _, err := runCLI(t, "", "check-config", "--config", path); err == nil || !strings.HasPrefix(err.Error(), "config: "+path+":2: not valid YAML: ") {
		t.Fatalf("error %v", err)
	}
}

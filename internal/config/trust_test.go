package config

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// Every problem of a configuration comes in one report: an unknown key, a
// value that does not decode, values that fail validation and bad channel
// entries, not one pass at a time.
func TestErrorsAllAtOnce(t *testing.T) {
	path := write(t, `llm:
  modle: gpt-4o
  max_turns: many
  tool_mode: xml
store:
  backend: etcd
log:
  level: loud
channels:
  - match: slack:general
    control_level: controlled
    approvers: [alice]
  - match: console
    control_level: yolo
slack:
  enabled: true
`)
	_, err := Load(path)
	if err == nil {
		t.Fatal("loaded without error")
	}
	msg := err.Error()
	for _, want := range []string{
		"unknown key llm.modle", "did you mean llm.model?",
		"llm.max_turns = \"many\"", "not a whole number",
		"llm.tool_mode = \"xml\"",
		"store.backend = \"etcd\"",
		"log.level = \"loud\"",
		`channels[0].match = "slack:general"`, "slack:#general",
		`channels[0].approvers[0] = "alice"`, "@alice",
		`channels[1].control_level = "yolo"`,
		"slack.app_token", "slack.bot_token",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the report does not say %q:\n%s", want, msg)
		}
	}
	// The value that did not decode is not reported a second time as
	// out of range.
	if strings.Contains(msg, "llm.max_turns = \"many\" (from file "+path+"): out of range") {
		t.Errorf("llm.max_turns reported twice:\n%s", msg)
	}
	var n int
	for _, line := range strings.Split(msg, "\n") {
		if strings.HasPrefix(line, "config: ") {
			n++
		}
	}
	if n != 10 {
		t.Errorf("%d problems reported, want 10:\n%s", n, msg)
	}
}

// A file that is not YAML is reported as FILE:LINE in plain words, not
// with the parser's wording.
func TestYAMLErrorsNameTheLine(t *testing.T) {
	cases := []struct {
		name, yaml string
		line       int
		want       string
	}{
		{"unclosed list", "log:\n  level: info\nllm: [\n", 3, "close every [ with ]"},
		{"colon in a value", "llm:\n  instructions: note: be brief\n", 2, `quote a value that contains ": "`},
		{"tab indentation", "llm:\n\tmodel: x\n", 2, "indent with spaces only"},
		{"value starting with @", "matrix:\n  user_id: @vigil:example.org\n", 2, `quote values that start with @`},
		{"unclosed quote", "llm:\n  model: \"gpt\n", 2, "a quote is not closed"},
		{"duplicate key", "llm:\n  model: a\nllm:\n  model: b\n", 3, "the key llm is written twice (first at line 1)"},
		{"a list", "- llm\n- slack\n", 1, "must be a set of sections"},
		{"mixed list", "channels:\n  - match: console\n  control_level: controlled\n", 1, `make every entry of the list start with "- "`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := write(t, tc.yaml)
			_, err := Load(path)
			if err == nil {
				t.Fatal("loaded without error")
			}
			prefix := fmt.Sprintf("config: %s:%d: not valid YAML: ", path, tc.line)
			if !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q; want it to start %q and say %q", err, prefix, tc.want)
			}
			if strings.Contains(err.Error(), "yaml: ") || strings.Contains(err.Error(), "in this context") {
				t.Fatalf("error %q repeats the parser's wording", err)
			}
		})
	}
}

// A misspelled VIGIL_ variable is reported with the errors too: it is
// often the reason a setting is missing.
func TestEnvTypoShownWithErrors(t *testing.T) {
	t.Setenv("VIGIL_SLACK_APP_TOKN", "xapp-1")
	_, err := Load(write(t, "slack:\n  enabled: true\n  bot_token: xoxb-1\n"))
	if err == nil {
		t.Fatal("loaded without error")
	}
	if !strings.Contains(err.Error(), "slack.app_token") ||
		!strings.Contains(err.Error(), "config: warning: environment variable VIGIL_SLACK_APP_TOKN is not a vigil setting and is ignored; did you mean VIGIL_SLACK_APP_TOKEN (slack.app_token)?") {
		t.Fatalf("error does not carry the warning:\n%s", err)
	}
	var w Warning
	if !errors.As(err, &w) {
		t.Fatalf("no Warning in %v", err)
	}
	// A YAML error too.
	_, err = Load(write(t, "llm: [\n"))
	if err == nil || !strings.Contains(err.Error(), "VIGIL_SLACK_APP_TOKN") {
		t.Fatalf("a YAML error came without the warning: %v", err)
	}
}

// A missing secret says where to set it, without contradicting itself.
func TestMissingSecretSaysWhereToSetIt(t *testing.T) {
	_, err := Load(write(t, "slack:\n  enabled: true\n  bot_token: xoxb-1\n"))
	if err == nil {
		t.Fatal("loaded without error")
	}
	want := `config: slack.app_token = "" (from built-in default): is required in socket mode: the app-level token ` +
		`(xapp-…, with the connections:write scope); set VIGIL_SLACK_APP_TOKEN=xapp-… in the environment, or slack.app_token: xapp-… in the file`
	if err.Error() != want {
		t.Fatalf("error\n%s\nwant\n%s", err, want)
	}
}

// Channel and role entries are IDs or names vigil can resolve; a name
// written as an ID would never match anything.
func TestChannelEntryForms(t *testing.T) {
	ok := []string{
		"channels:\n  - match: slack:C0123ABC\n    approvers: [U0AAA, usergroup:S0BBB, '@alice', W0CCC]\n",
		"channels:\n  - match: 'slack:#general'\n    approvers: ['@alice']\n",
		"channels:\n  - match: 'matrix:!abc:example.org'\n    approvers: ['@alice:example.org']\n",
		"channels:\n  - match: 'matrix:#ops:example.org'\n    control_level: read_only\n",
		"channels:\n  - match: default\n    approvers: [U0AAA, '@alice:example.org', '@bob']\n",
	}
	for _, y := range ok {
		if _, err := Load(write(t, y)); err != nil {
			t.Errorf("%s: %v", y, err)
		}
	}
	bad := []struct{ yaml, want string }{
		{"channels:\n  - match: slack:general\n    approvers: [U0AAA]\n", `channels[0].match = "slack:general"`},
		{"channels:\n  - match: 'slack:#General'\n    approvers: [U0AAA]\n", `channels[0].match = "slack:#General"`},
		{"channels:\n  - match: slack:C0AAA\n    approvers: [alice]\n", `channels[0].approvers[0] = "alice"`},
		{"channels:\n  - match: slack:C0AAA\n    approvers: [U0A]\n    operators: ['@bob:example.org']\n", `channels[0].operators[0] = "@bob:example.org"`},
		{"channels:\n  - match: 'matrix:ops'\n    control_level: read_only\n", `channels[0].match = "matrix:ops"`},
		{"channels:\n  - match: 'matrix:!r:hs'\n    approvers: [U0AAA]\n", `channels[0].approvers[0] = "U0AAA"`},
		{"channels:\n  - match: default\n    approvers: [alice]\n", `channels[0].approvers[0] = "alice"`},
	}
	for _, tc := range bad {
		_, err := Load(write(t, tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v; want one naming %s", tc.yaml, err, tc.want)
		}
	}
}

// directory is a Directory over fixed tables, for ResolveNames' own
// logic; the platforms' directories are tested against their servers.
type directory struct {
	channels, members map[string]string
	calls             int
}

func (d *directory) ChannelID(_ context.Context, name string) (string, error) {
	d.calls++
	if id, ok := d.channels[name]; ok {
		return id, nil
	}
	return "", fmt.Errorf("no channel is named %s", name)
}

func (d *directory) MemberID(_ context.Context, name string) (string, error) {
	d.calls++
	if id, ok := d.members[name]; ok {
		return id, nil
	}
	return "", fmt.Errorf("nobody is named %s", name)
}

func TestResolveNames(t *testing.T) {
	path := write(t, `channels:
  - match: 'slack:#ops'
    operators: ['@alice', U0DAVE]
    approvers: ['@oncall', '@alice']
  - match: 'matrix:#ops:example.org'
    control_level: read_only
matrix:
  rooms: ['#ops:example.org', '!x:example.org']
`)
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	slack := &directory{channels: map[string]string{"#ops": "C0OPS"},
		members: map[string]string{"@alice": "U0ALICE", "@oncall": "usergroup:S0ONCALL"}}
	res, err := c.ResolveNames(context.Background(), map[string]Directory{"slack": slack})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(res.Unresolved); got != "map[matrix:[#ops:example.org]]" {
		t.Errorf("unresolved %s", got)
	}
	if len(res.Resolved) != 4 || slack.calls != 3 {
		t.Errorf("resolved %+v with %d lookups; want 4 names in 3 lookups", res.Resolved, slack.calls)
	}
	ch := c.Channels[0]
	if ch.Match != "slack:C0OPS" || fmt.Sprint(ch.Operators) != "[U0ALICE U0DAVE]" || fmt.Sprint(ch.Approvers) != "[usergroup:S0ONCALL U0ALICE]" {
		t.Errorf("channel after resolution: %+v", ch)
	}
	if _, err := c.ChannelPolicies(); err != nil {
		t.Fatal(err)
	}

	// Names that do not resolve are all reported, and nothing changes.
	c, err = Load(write(t, "channels:\n  - match: 'slack:#nope'\n    approvers: ['@alice', '@ghost']\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.ResolveNames(context.Background(), map[string]Directory{"slack": slack})
	if err == nil {
		t.Fatal("resolved unknown names")
	}
	for _, want := range []string{`channels[0].match = "#nope"`, "no channel is named #nope", `channels[0].approvers[1] = "@ghost"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q:\n%s", want, err)
		}
	}
	if c.Channels[0].Approvers[0] != "@alice" {
		t.Errorf("a failed resolution changed the config: %+v", c.Channels[0])
	}
}

// Whatever the bytes, checkYAML words a problem or accepts the file: it
// never panics, and every problem it reports has a line.
func FuzzCheckYAML(f *testing.F) {
	for _, s := range []string{"llm: [\n", "a: b\n  c: d\n", "- a\n", "a: @x\n", "a: *x\n", "a: \"\\q\"\n", "x: 1\nx: 2\n", "llm:\n  model: m\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, e := range configErrors(checkYAML("f.yaml", data)) {
			if e.Line < 1 || e.File != "f.yaml" || !strings.HasPrefix(e.Problem, "not valid YAML: ") {
				t.Fatalf("problem without a place: %+v", e)
			}
		}
	})
}

// The slack section's rules are the adapter's, so the loader catches at
// load what the adapter would refuse at start.
func TestSlackRulesAreTheAdapters(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"slack:\n  enabled: true\n  bot_token: xoxb-1\n  app_token: xoxb-2\n", `slack.app_token = *** (from file`},
		{"slack:\n  enabled: true\n  bot_token: xoxb-1\n  app_token: xoxb-2\n", "must be an app-level token starting with xapp-"},
		{"slack:\n  enabled: true\n  mode: http\n  bot_token: xoxb-1\n  signing_secret: s\n  listen: ''\n", "slack.listen = \"\" (from file"},
		{"slack:\n  enabled: true\n  bot_token: xapp-1\n  app_token: xapp-2\n", "slack.bot_token = *** (from file"},
		{"slack:\n  enabled: true\n  bot_token: xoxb-1\n  app_token: xapp-2\n  max_answer_chars: 10\n", "slack.max_answer_chars = 10"},
	} {
		_, err := Load(write(t, tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v; want %q", tc.yaml, err, tc.want)
		}
	}
}

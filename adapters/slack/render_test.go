package slack

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/vigilops/vigil/bot"
	goldenfile "github.com/vigilops/vigil/internal/testenv/golden"
)

// golden compares v, marshalled as Slack receives it, with
// testdata/<name>.golden.json.
func golden(t *testing.T, name string, v any) {
	t.Helper()
	goldenfile.Assert(t, name+".golden.json", goldenfile.JSON(t, v))
}

var (
	at      = time.Date(2026, 3, 1, 14, 30, 0, 0, time.UTC)
	longOut = strings.Repeat("Mar 01 14:29:59 web-01 nginx[812]: 10.0.0.7 - GET /healthz 200\n", 60)
)

func sampleTrace() bot.Trace {
	return bot.Trace{
		Tool: "read", Action: "exec", Target: "docker_container:web-01:nginx",
		Command: "docker logs --tail 50 nginx 2>&1 | grep -c ' 502 '",
		Outcome: bot.OutcomeOK, Duration: 420 * time.Millisecond,
		Output: "17\n",
	}
}

func TestRenderGolden(t *testing.T) {
	truncated := sampleTrace()
	truncated.Command = "journalctl -u nginx -n 200 --no-pager"
	truncated.Duration = 2300 * time.Millisecond
	truncated.FullOutput = longOut
	truncated.Output = longOut[:bot.TraceOutputLimit]
	truncated.Truncated = true

	failed := bot.Trace{Tool: "read", Action: "exec", Target: "node:delly", Command: "cat /etc/nginx/nginx.conf",
		Outcome: bot.OutcomeFailed, Code: "EXECUTION_FAILED", Message: "exit status 1: No such file or directory",
		Duration: 95 * time.Millisecond, Output: "cat: /etc/nginx/nginx.conf: No such file or directory"}
	blocked := bot.Trace{Tool: "read", Action: "exec", Target: "lxc:delly:141", Command: "tail -f /var/log/syslog",
		Outcome: bot.OutcomeBlocked, Code: "FSM_BLOCKED", Message: "follow mode never exits; use tail -n 200 /var/log/syslog"}
	approval := bot.Trace{Tool: "control", Action: "service", Target: "lxc:delly:141", Command: "systemctl restart nginx",
		Outcome: bot.OutcomeApproval, Code: "APPROVAL_REQUIRED", Message: "writes in #ops need approval"}
	discover := bot.Trace{Tool: "discover", Target: "lxc:delly:141", Outcome: bot.OutcomeOK, Duration: 1500 * time.Millisecond,
		Output: `{"services":["nginx","php-fpm"],"ports":[80,443]}`}

	card := bot.ApprovalCard{
		ID: "apr_7f3a9c", Token: "tok-SECRET-0123456789abcdef",
		Tool: "control", Target: "lxc:delly:141", Command: "systemctl restart nginx",
		Summary: "Restart nginx in LXC 141 to clear the stuck workers (502s since 14:05).",
		Risk:    "medium", Reasons: []string{"systemctl restart is a known writer", "channel #ops is controlled: every write needs approval"},
		Requester: "U0ALICE", ExpiresAt: at.Add(10 * time.Minute), Status: bot.ApprovalPending,
	}
	approved := card
	approved.Status, approved.DecidedBy, approved.DecidedAt = bot.ApprovalApproved, "U0BOB", at.Add(2*time.Minute)
	denied := card
	denied.Status, denied.DecidedBy, denied.DecidedAt, denied.Reason = bot.ApprovalDenied, "U0BOB", at.Add(3*time.Minute), "not during the <deploy> window & not without a ticket"
	expired := card
	expired.Status = bot.ApprovalExpired

	answer := "# Findings\n\n**nginx** in `lxc:141` returns 502 because *php-fpm* is down.\n\n" +
		"## Evidence\n- `systemctl status php-fpm`: __inactive (dead)__\n- 17 errors in the last 50 lines\n" +
		"1. Restart php-fpm\n2. Watch [the dashboard](https://grafana.example.com/d/abc?var=1&from=now-1h)\n\n" +
		"```bash\nsystemctl restart php-fpm && curl -s localhost/healthz\n```\n\n> Note: <script> & friends are escaped.\n~~maybe~~ definitely."

	render := func(t *testing.T, c bot.ApprovalCard) message {
		m, err := renderApproval(c)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	cases := []struct {
		name string
		msg  message
	}{
		{"trace_ok", renderTraces([]bot.Trace{sampleTrace()})},
		{"trace_failed", renderTraces([]bot.Trace{failed})},
		{"trace_blocked", renderTraces([]bot.Trace{blocked})},
		{"trace_approval_required", renderTraces([]bot.Trace{approval})},
		{"trace_truncated", renderTraces([]bot.Trace{truncated})},
		{"traces_batched", renderTraces([]bot.Trace{discover, sampleTrace(), failed})},
		{"answer_markdown", renderReply(bot.Reply{Kind: bot.ReplyAnswer, Text: answer})},
		{"answer_feedback", renderReply(bot.Reply{Kind: bot.ReplyAnswer, Text: "php-fpm was down; restarted it.", RunID: "run-0a1b2c"})},
		{"notice", renderReply(bot.Reply{Kind: bot.ReplyNotice, Text: "Investigating @web-01 — this thread is now vigil's <session>."})},
		{"error", renderReply(bot.Reply{Kind: bot.ReplyError, Text: "The model did not answer in time; nothing was changed.", ErrorID: "e5a1c0de"})},
		{"ephemeral", renderEphemeral("Not accepted: you are not an approver in slack:C0OPS")},
		{"upload_failed", renderError("The full output of read.exec could not be attached (3900 characters); the trace above shows the first part.", "0badf11e")},
		{"approval_pending", render(t, card)},
		{"approval_approved", render(t, approved)},
		{"approval_denied", render(t, denied)},
		{"approval_expired", render(t, expired)},
		{"approval_silence", render(t, silenceCard(at))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkLimits(t, c.msg)
			golden(t, c.name, c.msg)
		})
	}
	t.Run("deny_modal", func(t *testing.T) {
		meta, _ := json.Marshal(denyMetadata{ID: card.ID, Token: card.Token, Channel: "C0OPS", Thread: "1700000000.000100"})
		golden(t, "deny_modal", renderDenyModal(card.ID, string(meta)))
	})
}

// checkLimits asserts Block Kit's limits and that no token leaks into
// anything people can read.
func checkLimits(t *testing.T, m message) {
	t.Helper()
	if len(m.Blocks) == 0 || len(m.Blocks) > maxBlocks {
		t.Errorf("%d blocks", len(m.Blocks))
	}
	if m.Text == "" {
		t.Error("no fallback text")
	}
	raw, _ := json.Marshal(m.Blocks)
	var blocks []map[string]any
	_ = json.Unmarshal(raw, &blocks)
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if s, ok := v["text"].(string); ok {
				if utf8.RuneCountInString(s) > maxSectionText {
					t.Errorf("text of %d characters", utf8.RuneCountInString(s))
				}
				if strings.Contains(s, "tok-SECRET") {
					t.Errorf("token shown as text: %q", s)
				}
			}
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(blocks)
	if strings.Contains(m.Text, "tok-SECRET") {
		t.Error("token in fallback text")
	}
}

func TestApprovalButtons(t *testing.T) {
	m, err := renderApproval(bot.ApprovalCard{ID: "a1", Token: "t1", Tool: "control", Target: "x", Command: "rm -rf /tmp/x", Status: bot.ApprovalPending})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(m.Blocks)
	var blocks []map[string]any
	_ = json.Unmarshal(raw, &blocks)
	last := blocks[len(blocks)-1]
	if last["type"] != "actions" {
		t.Fatalf("last block %v", last["type"])
	}
	els := last["elements"].([]any)
	approve, deny := els[0].(map[string]any), els[1].(map[string]any)
	if approve["action_id"] != actionApprove || approve["style"] != "primary" || approve["confirm"] == nil {
		t.Errorf("approve button = %v", approve)
	}
	if deny["action_id"] != actionDeny || deny["style"] != "danger" {
		t.Errorf("deny button = %v", deny)
	}
	var v buttonValue
	if err := json.Unmarshal([]byte(approve["value"].(string)), &v); err != nil || v.ID != "a1" || v.Token != "t1" {
		t.Errorf("button value = %v (%v)", approve["value"], err)
	}
	for _, status := range []bot.ApprovalStatus{bot.ApprovalApproved, bot.ApprovalDenied, bot.ApprovalExpired} {
		m, _ := renderApproval(bot.ApprovalCard{ID: "a1", Token: "t1", Tool: "control", Status: status})
		raw, _ := json.Marshal(m)
		if bytes.Contains(raw, []byte(`"actions"`)) || bytes.Contains(raw, []byte("t1\"")) {
			t.Errorf("%s card still has buttons or the token: %s", status, raw)
		}
	}
}

// silenceCard is a write without a shell command: the change is in its
// detail lines, one of which a backtick would alter as inline code.
func silenceCard(at time.Time) bot.ApprovalCard {
	return bot.ApprovalCard{
		ID: "apr_51lenc", Token: "tok-SECRET-silence", Tool: "alerts",
		Summary: "silence alerts matching alertname=\"HighLatency\", service=~\"checkout|cart\" for 2h",
		Risk:    "medium", Requester: "U0ALICE", ExpiresAt: at.Add(10 * time.Minute), Status: bot.ApprovalPending,
		Details: []bot.CardDetail{
			{Label: "matchers", Value: `alertname="HighLatency", service=~"checkout|cart"`},
			{Label: "duration", Value: "2h (from when it is approved)"},
			{Label: "comment", Value: "deploy of `checkout` v2.3 in progress <ticket OPS-12>"},
			{Label: "created by", Value: "the approver"},
		},
	}
}

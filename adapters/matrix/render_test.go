package matrix

import (
	"strings"
	"testing"
	"time"

	"maunium.net/go/mautrix/id"

	"github.com/vigilops/vigil/bot"
	goldenfile "github.com/vigilops/vigil/internal/testenv/golden"
)

// golden compares v, as sorted indented JSON, with testdata/<name>.golden.json.
func golden(t *testing.T, name string, v any) {
	t.Helper()
	goldenfile.Assert(t, name+".golden.json", goldenfile.JSON(t, v))
}

const (
	testRoot = id.EventID("$root:localhost")
	testLast = id.EventID("$latest:localhost")
)

func TestRenderReplyGolden(t *testing.T) {
	trace := bot.Trace{
		Tool: "read", Action: "exec", Target: "web-1", Command: "df -h /",
		Outcome: bot.OutcomeOK, Duration: 1234 * time.Millisecond,
		Output: "Filesystem Size Used Avail Use% Mounted on\n/dev/vda 252G 12G 80G 13% /",
	}
	failed := trace
	failed.Command = "systemctl status nginx <unit>"
	failed.Outcome, failed.Code, failed.Message = bot.OutcomeFailed, "EXECUTION_FAILED", "exit status 3"
	failed.Output = "● nginx.service - A high performance web server\n   Active: failed (Result: exit-code)"
	blocked := bot.Trace{Tool: "control", Action: "service", Target: "web-1", Outcome: bot.OutcomeBlocked,
		Code: "FSM_BLOCKED", Message: "verification required: read or check web-1 before answering"}
	truncated := trace
	truncated.Command = "journalctl -u nginx -n 2000 --no-pager"
	truncated.Output = strings.Repeat("line of log output\n", 5)
	truncated.Truncated = true
	truncated.FullOutput = strings.Repeat("line of log output\n", 50)

	cases := map[string]bot.Reply{
		"trace_ok":        {Kind: bot.ReplyTrace, Trace: &trace},
		"trace_failed":    {Kind: bot.ReplyTrace, Trace: &failed},
		"trace_blocked":   {Kind: bot.ReplyTrace, Trace: &blocked},
		"trace_truncated": {Kind: bot.ReplyTrace, Trace: &truncated},
		"answer": {Kind: bot.ReplyAnswer, Text: "**nginx** on `web-1` is down.\n\n" +
			"- cause: config test failed\n- fix: `nginx -t` then restart\n\n<script>alert(1)</script>"},
		"notice": {Kind: bot.ReplyNotice, Text: "Investigating… (stop with \"stop\")"},
		"error":  {Kind: bot.ReplyError, Text: "The model did not answer in time.", ErrorID: "e-7f3a"},
	}
	for name, r := range cases {
		t.Run(name, func(t *testing.T) {
			c := renderReply(r)
			c.RelatesTo = threadRelation(testRoot, testLast)
			golden(t, name, c)
		})
	}
	// An answer that ends a run carries the run ID, so a 👍/👎 on it can
	// be mapped back to the run after a restart.
	t.Run("answer_feedback", func(t *testing.T) {
		ev := renderReply(bot.Reply{Kind: bot.ReplyAnswer, Text: "**nginx** was down; restarted it.", RunID: "run-0a1b2c"})
		ev.RelatesTo = threadRelation(testRoot, testLast)
		c, err := answerContent(ev, "run-0a1b2c")
		if err != nil {
			t.Fatal(err)
		}
		if c[fieldRunID] != "run-0a1b2c" {
			t.Fatalf("run ID field = %v", c[fieldRunID])
		}
		golden(t, "answer_feedback", c)
	})
}

func testCard(status bot.ApprovalStatus) bot.ApprovalCard {
	c := bot.ApprovalCard{
		ID: "ap-42", Token: "secret-token-never-shown", Tool: "control", Target: "web-1",
		Command: "systemctl restart nginx", Summary: "Restart nginx on web-1 to apply the fixed config.",
		Risk: "medium", Reasons: []string{"known writer: systemctl restart", "channel is controlled"},
		Requester: "@alice:localhost", ExpiresAt: time.Date(2026, 1, 2, 15, 14, 0, 0, time.UTC),
		Status: status,
	}
	switch status {
	case bot.ApprovalApproved:
		c.DecidedBy, c.DecidedAt = "@mod:localhost", time.Date(2026, 1, 2, 15, 6, 0, 0, time.UTC)
	case bot.ApprovalDenied:
		c.DecidedBy, c.DecidedAt = "@mod:localhost", time.Date(2026, 1, 2, 15, 6, 0, 0, time.UTC)
		c.Reason = "not during business hours"
	case bot.ApprovalExpired:
		c.DecidedAt = c.ExpiresAt
	}
	return c
}

func TestRenderCardGolden(t *testing.T) {
	for _, st := range []bot.ApprovalStatus{bot.ApprovalPending, bot.ApprovalApproved, bot.ApprovalDenied, bot.ApprovalExpired} {
		t.Run(string(st), func(t *testing.T) {
			c, err := cardContent(testCard(st), nil, threadRelation(testRoot, testLast))
			if err != nil {
				t.Fatal(err)
			}
			golden(t, "card_"+string(st), c)
			body := c["body"].(string) + c["formatted_body"].(string)
			if strings.Contains(body, "secret-token") {
				t.Fatal("card shows the approval token")
			}
			if c[fieldApprovalID] != "ap-42" {
				t.Fatalf("card lacks %s: %v", fieldApprovalID, c)
			}
			pending := strings.Contains(c["body"].(string), "!approve ap-42")
			if pending != (st == bot.ApprovalPending) {
				t.Fatalf("answer instructions shown=%v for status %s", pending, st)
			}
		})
	}
}

func TestRenderCardDetailsGolden(t *testing.T) {
	c := bot.ApprovalCard{
		ID: "ap-43", Token: "secret-token-never-shown", Tool: "kube", Target: "k8s_deployment:prod:shop/checkout",
		Summary: "scale deployment shop/checkout in cluster prod to 5 replicas", Risk: "medium",
		Requester: "@alice:localhost", ExpiresAt: time.Date(2026, 1, 2, 15, 14, 0, 0, time.UTC), Status: bot.ApprovalPending,
		Details: []bot.CardDetail{
			{Label: "cluster", Value: "prod"}, {Label: "namespace", Value: "shop"},
			{Label: "object", Value: "deployment/checkout"}, {Label: "change", Value: "set replicas to 5 <was read at approval>"},
		},
	}
	got, err := cardContent(c, nil, threadRelation(testRoot, testLast))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "card_details", got)
	for _, want := range []string{"namespace: shop", "set replicas to 5"} {
		if !strings.Contains(got["body"].(string), want) {
			t.Errorf("card body lacks %q", want)
		}
	}
	if !strings.Contains(got["formatted_body"].(string), "&lt;was read at approval&gt;") {
		t.Error("a detail value is not escaped in the HTML body")
	}
}

func TestRenderEditGolden(t *testing.T) {
	c, err := editContent("$card:localhost", testCard(bot.ApprovalApproved))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "card_edit_approved", c)
	rel := c["m.relates_to"].(map[string]any)
	if rel["rel_type"] != "m.replace" || rel["event_id"] != "$card:localhost" {
		t.Fatalf("edit relation = %v", rel)
	}
	nc := c["m.new_content"].(map[string]any)
	if _, ok := nc["m.relates_to"]; ok {
		t.Fatal("m.new_content must not carry a relation")
	}
	if nc[fieldApprovalID] != "ap-42" || nc[fieldApprovalStatus] != "approved" {
		t.Fatalf("m.new_content lacks the approval fields: %v", nc)
	}
}

func TestRenderMiscGolden(t *testing.T) {
	f := fileContent("read-exec-web-1-output.txt", "mxc://localhost/abc", 950, "text/plain")
	f.RelatesTo = threadRelation(testRoot, testLast)
	golden(t, "file", f)
	golden(t, "reason_prompt", reasonPrompt("@mod:localhost", "ap-42"))
}

func TestTraceOutputIsBounded(t *testing.T) {
	tr := bot.Trace{Tool: "read", Outcome: bot.OutcomeOK, Output: strings.Repeat("é", 10000)}
	c := renderTrace(tr)
	if len(c.Body) > maxInlineOutput+200 {
		t.Fatalf("body has %d bytes", len(c.Body))
	}
	if !strings.Contains(c.Body, "Output truncated.") {
		t.Fatal("no truncation note")
	}
}

func TestThreadRelationFallsBackToRoot(t *testing.T) {
	rel := threadRelation(testRoot, "")
	if rel.Type != "m.thread" || rel.EventID != testRoot || !rel.IsFallingBack || rel.InReplyTo.EventID != testRoot {
		t.Fatalf("relation = %+v", rel)
	}
	if threadRelation("", "") != nil {
		t.Fatal("no thread must mean no relation")
	}
}

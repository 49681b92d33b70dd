package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigilops/vigil/bot"
	"github.com/vigilops/vigil/internal/testenv/modeltest"
	"github.com/vigilops/vigil/internal/testenv/testkit"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/policy/audit"
)

// auditRecords returns the newest audit records of a stack.
func auditRecords(t *testing.T, st *testkit.Stack) []audit.Record {
	t.Helper()
	recs, err := st.Stores.Audit.RecentAudit(context.Background(), 200)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// A viewer who is not an operator may investigate, but the change they ask
// for is refused before any approval card exists, in every control level:
// the model is told why, the thread is told which role is needed and who
// holds it, and nothing runs.
func TestRoleGateRefusesNonOperators(t *testing.T) {
	for _, level := range []policy.ControlLevel{policy.LevelControlled, policy.LevelAutonomous, policy.LevelReadOnly} {
		t.Run(string(level), func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "log")
			chat, model, st := chatStack(t, policy.ChannelPolicy{Match: "ops", Level: level,
				Operators: []string{"alice"}, Approvers: []string{"bob"}})
			model.Script(
				modeltest.Calls(discoverLocal()),
				modeltest.Calls(readExec("uptime")),
				modeltest.Calls(controlCmd(testkit.AppendLine(file))),
				modeltest.Text("I cannot make that change; an operator has to ask for it."),
			)
			th := testkit.Thread("ops", "t1")
			chat.Say(t, th, "carol", "append a line on @localhost")
			idle(t, st)
			chat.WaitText(t, th, "[answer] I cannot make that change", wait)
			if n := testkit.LineCount(t, file); n != 0 {
				t.Fatalf("a non-operator's write ran %d times", n)
			}
			for _, p := range chat.Posts(th) {
				if p.Card != nil {
					t.Fatalf("an approval card was posted for a non-operator's change: %+v", p.Card)
				}
			}
			res := resultsOf(t, model.Requests()[3])
			if len(res) != 3 || !res[1].OK || code(res[2]) != "ACTION_NOT_ALLOWED" || res[2].Error.Details["role_required"] != "operator" {
				t.Fatalf("the model's results %+v: want the read to run and the write refused for the role", res)
			}
			transcript := chat.Transcript(th)
			if level != policy.LevelReadOnly {
				// In a read-only channel the role gate speaks too: it comes first.
				mustContain(t, transcript, "[notice] No change was proposed: this change needs the operator role", "role notice")
			}
			mustContain(t, transcript, "carol does not hold it; operators here: alice and bob", "who holds the role")
		})
	}
}

// A requester who loses the operator role while their change waits for
// approval gets nothing run, although an approver approves it: the role is
// decided again when the run resumes.
func TestApprovedChangeRefusedAfterRequesterLostRole(t *testing.T) {
	file := filepath.Join(t.TempDir(), "log")
	chat, model, st := chatStack(t, policy.ChannelPolicy{Match: "ops", Level: policy.LevelControlled, Approvers: []string{"bob"}})
	chat.SetApprovers("ops", "alice") // alice is an approver, hence an operator, by the platform's say
	model.Script(
		modeltest.Calls(discoverLocal()),
		modeltest.Calls(controlCmd(testkit.AppendLine(file))),
		modeltest.Text("Not changed: you are no longer an operator here."),
	)
	th := testkit.Thread("ops", "t1")
	chat.Say(t, th, "alice", "append a line on @localhost")
	card := chat.WaitCard(t, th, wait)
	idle(t, st)
	chat.SetApprovers("ops") // the platform takes alice's role away
	chat.Decide(t, bot.Decision{ApprovalID: card.ID, Token: card.Token, FromButton: true, Approve: true, User: "bob", Thread: th})
	idle(t, st)
	chat.WaitText(t, th, "[answer] Not changed", wait)
	if n := testkit.LineCount(t, file); n != 0 {
		t.Fatalf("the change of a requester who lost the operator role ran %d times", n)
	}
	res := resultsOf(t, model.Requests()[2])
	if e := res[len(res)-1]; e.Error == nil || e.Error.Details["role_required"] != "operator" {
		t.Fatalf("the model was not told of the role: %+v", e)
	}
	a, err := st.Stores.Approvals.GetApproval(context.Background(), card.ID)
	if err != nil || a.Status != policy.ApprovalApproved {
		t.Fatalf("approval %+v (%v): want it approved and never executed", a, err)
	}
}

// Only the requester, an operator or an approver may stop a run. Anyone
// else is told so privately and nothing changes; withdrawing a pending
// approval is a denial, audited as the person who stopped it.
func TestStopNeedsARole(t *testing.T) {
	file := filepath.Join(t.TempDir(), "log")
	chat, model, st := chatStack(t, policy.ChannelPolicy{Match: "ops", Level: policy.LevelControlled,
		Operators: []string{"alice", "dave"}, Approvers: []string{"bob"}})
	th := testkit.Thread("ops", "running")

	// A run in progress: carol may not stop it, and it finishes.
	model.Script(modeltest.Delay(1500*time.Millisecond, modeltest.Text("finished despite carol")))
	chat.Say(t, th, "alice", "think about @localhost")
	waitUntil(t, "the model call to start", func() bool { return model.Count() == 1 })
	chat.Say(t, th, "carol", "stop")
	idle(t, st)
	chat.WaitText(t, th, "[answer] finished despite carol", wait)
	if notes := chat.Notes("carol"); len(notes) != 1 || !strings.Contains(notes[0], "nothing was stopped") {
		t.Fatalf("carol was told %q, want one private refusal", notes)
	}
	mustNotContain(t, chat.Transcript(th), "Stopping.", "a refused stop")

	// A change waiting for approval: carol may not drop it, alice may.
	pending := testkit.Thread("ops", "pending")
	model.Script(modeltest.Calls(discoverLocal()), modeltest.Calls(controlCmd(testkit.AppendLine(file))))
	chat.Say(t, pending, "alice", "append a line on @localhost")
	card := chat.WaitCard(t, pending, wait)
	idle(t, st)
	chat.Say(t, pending, "carol", "stop")
	idle(t, st)
	if got, _ := chat.Card(card.ID); got.Status != bot.ApprovalPending {
		t.Fatalf("carol's stop changed the card: %+v", got)
	}
	if notes := chat.Notes("carol"); len(notes) != 2 {
		t.Fatalf("carol was told %q, want a second private refusal", notes)
	}
	chat.Say(t, pending, "alice", "stop")
	idle(t, st)
	chat.WaitText(t, pending, "Stopped. Nothing more will run for that request.", wait)
	if got, _ := chat.Card(card.ID); got.Status != bot.ApprovalDenied || got.DecidedBy != "alice" || got.Reason != "stopped" {
		t.Fatalf("card after the requester's stop: %+v", got)
	}
	var withdrawn bool
	for _, r := range auditRecords(t, st) {
		if r.ApprovalID == card.ID && r.Action == audit.Denied && r.Actor == "alice" && r.Outcome == "stopped" {
			withdrawn = true
		}
	}
	if !withdrawn {
		t.Fatal("the withdrawn approval is not in the audit as alice's denial")
	}

	// An operator who did not ask may stop someone else's change.
	other := testkit.Thread("ops", "other")
	model.Script(modeltest.Calls(discoverLocal()), modeltest.Calls(controlCmd(testkit.AppendLine(file))))
	chat.Say(t, other, "alice", "append a line on @localhost")
	card2 := chat.WaitCard(t, other, wait)
	idle(t, st)
	chat.Say(t, other, "dave", "stop")
	idle(t, st)
	if got, _ := chat.Card(card2.ID); got.Status != bot.ApprovalDenied || got.DecidedBy != "dave" {
		t.Fatalf("card after an operator's stop: %+v", got)
	}
	chat.Decide(t, bot.Decision{ApprovalID: card.ID, Token: card.Token, FromButton: true, Approve: true, User: "bob", Thread: pending})
	idle(t, st)
	if n := testkit.LineCount(t, file); n != 0 {
		t.Fatalf("a stopped change ran %d times", n)
	}
}

// The approval card shows the gate's verdict on the exact call: a file_edit
// of /etc/passwd and a command appending to /etc/hosts are high risk, with
// the system path as the reason.
func TestApprovalCardShowsTheVerdict(t *testing.T) {
	chat, model, st := chatStack(t, policy.ChannelPolicy{Match: "ops", Level: policy.LevelControlled,
		Operators: []string{"alice"}, Approvers: []string{"bob"}})
	th := testkit.Thread("ops", "t1")
	model.Script(
		modeltest.Calls(discoverLocal()),
		modeltest.Calls(modeltest.Call("file_edit", testkit.Args("action", "write", "target", "localhost", "path", "/etc/passwd", "content", "x"))),
		modeltest.Text("denied"),
		modeltest.Calls(controlCmd("echo '10.0.0.9 db' >> /etc/hosts")),
		modeltest.Text("denied again"),
	)
	chat.Say(t, th, "alice", "fix the accounts on @localhost")
	card := chat.WaitCard(t, th, wait)
	reasons := strings.Join(card.Reasons, "; ")
	if card.Risk != "high" || !strings.Contains(reasons, "/etc/passwd") || strings.Contains(reasons, "unknown command") {
		t.Errorf("file_edit card: risk %q reasons %q, want high for /etc/passwd", card.Risk, card.Reasons)
	}
	chat.Decide(t, bot.Decision{ApprovalID: card.ID, Approve: false, Reason: "test", User: "bob", Thread: th})
	idle(t, st)
	chat.WaitText(t, th, "[answer] denied", wait)

	chat.Say(t, th, "alice", "add the db host")
	idle(t, st)
	var hosts bot.ApprovalCard
	for _, p := range chat.Posts(th) {
		if p.Card != nil && p.Card.ID != card.ID {
			hosts = *p.Card
		}
	}
	if hosts.Risk != "high" || !strings.Contains(strings.Join(hosts.Reasons, "; "), "/etc/hosts") {
		t.Errorf("command card: risk %q reasons %q, want high for /etc/hosts", hosts.Risk, hosts.Reasons)
	}
	chat.Decide(t, bot.Decision{ApprovalID: hosts.ID, Approve: false, Reason: "test", User: "bob", Thread: th})
	idle(t, st)
}

// A decision that claims to come from a button carries the card's token;
// one without is forged: refused, logged and audited, and nothing runs.
func TestTokenlessClickRefused(t *testing.T) {
	file := filepath.Join(t.TempDir(), "log")
	chat, model, st := chatStack(t, policy.ChannelPolicy{Match: "ops", Level: policy.LevelControlled,
		Operators: []string{"alice"}, Approvers: []string{"bob"}})
	writeScript(model, file)
	th := testkit.Thread("ops", "t1")
	chat.Say(t, th, "alice", "append a line on @localhost")
	card := chat.WaitCard(t, th, wait)
	chat.Decide(t, bot.Decision{ApprovalID: card.ID, FromButton: true, Approve: true, User: "bob", Thread: th})
	idle(t, st)
	if n := testkit.LineCount(t, file); n != 0 {
		t.Fatalf("a token-less click ran the write %d times", n)
	}
	if notes := chat.Notes("bob"); len(notes) != 1 || !strings.Contains(notes[0], "carries no token") {
		t.Fatalf("bob was told %q", notes)
	}
	var forged bool
	for _, r := range auditRecords(t, st) {
		forged = forged || r.ApprovalID == card.ID && r.Action == audit.Block && r.Outcome == "forged_click" && r.Actor == "bob"
	}
	if !forged {
		t.Fatal("the forged click is not in the audit")
	}
	// Typed approvals carry no token by design.
	chat.Decide(t, bot.Decision{ApprovalID: card.ID, Approve: true, User: "bob", Thread: th})
	idle(t, st)
	chat.WaitText(t, th, "[answer] done", wait)
	if n := testkit.LineCount(t, file); n != 1 {
		t.Fatalf("the typed approval ran the write %d times, want 1", n)
	}
}

// A final answer that claims a change no write backs goes out with a note
// that no change was made; an answer about the system's own history, and
// one whose change ran, go out as written.
func TestClaimCheckEndToEnd(t *testing.T) {
	file := filepath.Join(t.TempDir(), "log")
	h := start(t, policy.LevelAutonomous)
	h.model.Script(
		modeltest.Calls(discoverLocal()),
		modeltest.Calls(readExec("uptime")),
		modeltest.Text("I restarted nginx and the cache has been cleared; everything is healthy now."),
		modeltest.Calls(readExec("uptime")),
		modeltest.Text("nginx was restarted 3 days ago by systemd; you should restart it if the config changed."),
		modeltest.Calls(controlCmd(testkit.AppendLine(file))),
		modeltest.Calls(readExec("cat "+file)),
		modeltest.Text("Appended the line and checked it."),
	)
	h.ask("restart nginx on @localhost")
	h.con.WaitFor(t, "vigil> I restarted nginx", wait)
	h.con.WaitFor(t, "Note: no change was made in this run", wait)

	h.ask("when was it restarted?")
	h.con.WaitFor(t, "vigil> nginx was restarted 3 days ago", wait)
	h.ask("append a line on @localhost")
	out := h.con.WaitFor(t, "vigil> Appended the line and checked it.", wait)
	if c := strings.Count(out, "no change was made"); c != 1 {
		t.Fatalf("the note appears %d times, want once (only for the first answer):\n%s", c, out)
	}
	if n := testkit.LineCount(t, file); n != 1 {
		t.Fatalf("write ran %d times", n)
	}
}

// Tool output is redacted before it reaches the model: the request bodies
// the model server received hold none of the secrets a read printed. With
// policy.redact_model_input off they do, which is what the setting is for.
func TestModelNeverReceivesSecrets(t *testing.T) {
	secrets := []string{"Tr0ub4dor", "foobared-7x", "pg-s3cret", "urlpw1", "hunter2x", "ghp_" + strings.Repeat("Ab1", 12)}
	// The secrets are in a file only the read prints: the model never
	// wrote them itself.
	env := filepath.Join(t.TempDir(), "app.env")
	content := "DB_PASS=Tr0ub4dor\nREDIS_AUTH=foobared-7x\n{\"pass\": \"pg-s3cret\"}\n" +
		"DATABASE_URL=postgres://app:urlpw1@db/app\n# the admin password is hunter2x\nGITHUB_TOKEN=" + secrets[5] + "\nLOG_LEVEL=info\n"
	if err := os.WriteFile(env, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, redacting := range []bool{true, false} {
		name := "redacted"
		if !redacting {
			name = "unredacted"
		}
		t.Run(name, func(t *testing.T) {
			h := start(t, policy.LevelReadOnly, func(o *testkit.Options) { o.UnredactedModelInput = !redacting })
			h.model.Script(
				modeltest.Calls(discoverLocal()),
				modeltest.Calls(readExec("cat "+env)),
				modeltest.Text("read it"),
			)
			h.ask("show the env on @localhost")
			out := h.con.WaitFor(t, "vigil> read it", wait)
			var bodies strings.Builder
			for _, r := range h.model.Requests() {
				bodies.WriteString(r.Body)
			}
			for _, s := range secrets {
				if got := strings.Contains(bodies.String(), s); got == redacting {
					t.Errorf("secret %q in the model's requests: %v, want %v", s, got, !redacting)
				}
				mustNotContain(t, out, s, "what the user sees")
			}
			mustContain(t, bodies.String(), "LOG_LEVEL=info", "the model's view of the output")
			if redacting {
				mustContain(t, bodies.String(), "[REDACTED:password]", "the model's view of the output")
				mustContain(t, bodies.String(), "postgres://app:***@db/app", "the model's view of the output")
			}
		})
	}
}

package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vigilops/vigil/bot"
	"github.com/vigilops/vigil/internal/metrics"
	"github.com/vigilops/vigil/internal/server"
	"github.com/vigilops/vigil/internal/testenv/modeltest"
	"github.com/vigilops/vigil/internal/testenv/redistest"
	"github.com/vigilops/vigil/internal/testenv/testkit"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/policy/audit"
	redisstore "github.com/vigilops/vigil/store/redis"
)

// opsServer runs vigil's ops endpoint for a replica, wired as `vigil run`
// wires it, and returns its base URL.
func opsServer(t *testing.T, r *replica, reg *prometheus.Registry) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(ln.Addr().String(), reg, r.app.Ready, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ops server: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

// probe GETs an ops endpoint and returns its status and body.
func probe(t *testing.T, url string) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// waitStatus polls an endpoint until it answers with status.
func waitStatus(t *testing.T, url string, status int) string {
	t.Helper()
	var body string
	waitFor(t, replicaWait, url+" answering "+http.StatusText(status), func() bool {
		var got int
		got, body = probe(t, url)
		return got == status
	})
	return body
}

// errorReplies returns the error replies posted in a thread.
func errorReplies(c *testkit.Chat, th bot.ThreadRef) []bot.Reply {
	var out []bot.Reply
	for _, p := range c.Posts(th) {
		if p.Card == nil && p.Reply.Kind == bot.ReplyError {
			out = append(out, p.Reply)
		}
	}
	return out
}

// waitStoreError waits for the bot to tell the thread it cannot reach its
// state store, with an error ID that ties the message to the log.
func waitStoreError(t *testing.T, c *testkit.Chat, th bot.ThreadRef) {
	t.Helper()
	waitFor(t, replicaWait, "a state-store error reply in "+th.Key(), func() bool {
		for _, r := range errorReplies(c, th) {
			if strings.Contains(r.Text, "cannot reach my state store") && r.ErrorID != "" {
				return true
			}
		}
		return false
	})
}

// Redis goes away, first crashed (connection refused) and then hung
// (SIGSTOP: connections accepted, nothing answered). Throughout, vigil does
// not crash, says plainly that it cannot reach its state store, runs
// nothing, and /readyz reports redis as the reason. A pending approval
// created before the outage survives it; when Redis is back, /readyz is 200
// again, new messages are answered, and the approval runs its call once.
func TestOutageRedisRecovers(t *testing.T) {
	rds := redistest.Start(t, redistest.Options{Persist: true})
	file := filepath.Join(t.TempDir(), "log")
	model := modeltest.New(t)
	routeTurns(model, map[string][]modeltest.Step{
		"append a line":   writeSteps(file, "appended"),
		"after the crash": {modeltest.Calls(discoverLocal()), modeltest.Text("back after the crash")},
	})
	reg := prometheus.NewRegistry()
	// The server is this test's own: the default prefix, and its data goes
	// with it.
	r := startReplica(t, "solo", redisstore.Options{Addr: rds.Addr(), KeyPrefix: "vigil:"}, replicaOptions{
		Model: model,
		Channels: []policy.ChannelPolicy{{Match: "testchat:ops", Level: policy.LevelControlled,
			Operators: []string{"alice"}, Approvers: []string{"bob"}}},
		SweepEvery: 200 * time.Millisecond, // the sweeper keeps hitting the outage too
		Observer:   metrics.New(reg),
	})
	ops := opsServer(t, r, reg)
	ctx := context.Background()

	th := testkit.Thread("ops", "t1")
	r.chat.Say(t, th, "alice", "append a line on @localhost")
	card := r.chat.WaitCard(t, th, replicaWait)
	idleAll(t, []*replica{r})
	if code, body := probe(t, ops+"/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz before the outage: %d %s", code, body)
	}

	// Crash: connections are refused.
	rds.Crash()
	body := waitStatus(t, ops+"/readyz", http.StatusServiceUnavailable)
	if !strings.Contains(body, "redis") {
		t.Fatalf("/readyz during the outage says %q; it should name redis", body)
	}
	if code, _ := probe(t, ops+"/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz during the outage: %d; liveness must not depend on redis", code)
	}
	during := testkit.Thread("ops", "t2")
	r.chat.Say(t, during, "alice", "what runs on @localhost?")
	waitStoreError(t, r.chat, during)
	// A click during the outage runs nothing; the person is told why.
	r.chat.Decide(t, bot.Decision{EventID: "click-crash", ApprovalID: card.ID, Token: card.Token, Approve: true, User: "bob", Thread: th})
	waitStoreError(t, r.chat, th)
	idleAll(t, []*replica{r})
	if n := testkit.LineCount(t, file); n != 0 {
		t.Fatalf("the write ran %d times during the outage", n)
	}
	if got := model.Count(); got != 2 {
		t.Fatalf("the model got %d requests, want the 2 of the run before the outage", got)
	}

	rds.Start()
	waitStatus(t, ops+"/readyz", http.StatusOK)
	after := testkit.Thread("ops", "t3")
	r.chat.Say(t, after, "alice", "after the crash, is @localhost there?")
	r.chat.WaitText(t, after, "[answer] back after the crash", replicaWait)

	// Hang: the process is stopped; every call runs into its timeout.
	rds.Freeze()
	thawed := false
	t.Cleanup(func() {
		if !thawed {
			rds.Thaw()
		}
	})
	if body := waitStatus(t, ops+"/readyz", http.StatusServiceUnavailable); !strings.Contains(body, "redis") {
		t.Fatalf("/readyz while redis hangs says %q; it should name redis", body)
	}
	hung := testkit.Thread("ops", "t4")
	r.chat.Say(t, hung, "alice", "anything on @localhost?")
	waitStoreError(t, r.chat, hung)
	rds.Thaw()
	thawed = true
	waitStatus(t, ops+"/readyz", http.StatusOK)

	if !r.running() {
		t.Fatal("the bot stopped during the outage")
	}
	// The approval and its waiting run survived both outages.
	a, err := r.store.GetApproval(ctx, card.ID)
	if err != nil {
		t.Fatalf("the pending approval is gone after the outage: %v", err)
	}
	if a.Status != policy.ApprovalPending {
		t.Fatalf("approval status after the outage: %s, want pending", a.Status)
	}
	s, err := r.store.LoadSession(ctx, th.Key())
	if err != nil || s.Run == nil || s.Run.Pending == nil || s.Run.Pending.ApprovalID != card.ID {
		t.Fatalf("the run waiting on %s did not survive: %+v %v", card.ID, s, err)
	}

	r.chat.Decide(t, bot.Decision{EventID: "click-after", ApprovalID: card.ID, Token: card.Token, Approve: true, User: "bob", Thread: th})
	r.chat.WaitText(t, th, "[answer] appended", replicaWait)
	idleAll(t, []*replica{r})
	if n := testkit.LineCount(t, file); n != 1 {
		t.Fatalf("the approved write ran %d times after the outage, want 1", n)
	}
	if strings.Contains(r.logs.String(), "panic") {
		t.Fatalf("the bot panicked:\n%s", r.logs.String())
	}
	_, metricsBody := probe(t, ops+"/metrics")
	if !strings.Contains(metricsBody, `vigil_chat_events_total{platform="testchat",result="store_error"}`) {
		t.Fatalf("/metrics does not count the events lost to the outage:\n%s", metricsBody)
	}
}

// Redis crashes while an approved call runs: the call finishes, but
// neither its "executed" record nor the approval's new status can be
// saved. vigil writes the record to the audit file at once and keeps it in
// the outbox beside it; when Redis is back the record joins the chain
// after everything already there (the chain verifies from record 1), the
// approval is settled as executed from that record, the run that stopped
// is closed with the call's result, and the call never runs again.
func TestOutageWhileApprovedCallRuns(t *testing.T) {
	rds := redistest.Start(t, redistest.Options{Persist: true})
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	auditFile := filepath.Join(dir, "audit.jsonl")
	slowWrite := modeltest.Call("control", testkit.Args("action", "command", "target", "localhost",
		"command", "sleep 1 && "+testkit.AppendLine(target)))
	model := modeltest.New(t)
	routeTurns(model, map[string][]modeltest.Step{
		"append slowly": {modeltest.Calls(discoverLocal()), modeltest.Calls(slowWrite), modeltest.Calls(readExec("cat " + target))},
		"afterwards":    {modeltest.Calls(discoverLocal()), modeltest.Text("still here")},
	})
	r := startReplica(t, "solo", redisstore.Options{Addr: rds.Addr(), KeyPrefix: "vigil:"}, replicaOptions{
		Model: model,
		Channels: []policy.ChannelPolicy{{Match: "testchat:ops", Level: policy.LevelControlled,
			Operators: []string{"alice"}, Approvers: []string{"bob"}}},
		SweepEvery: 200 * time.Millisecond,
		// Long enough that no renewal falls within the call (losing the
		// lock would cancel it), short enough that the settling, which
		// waits for the stopped run's lock to lapse, comes soon.
		LockTTL:    9 * time.Second,
		AuditFile:  auditFile,
		AuditRetry: 100 * time.Millisecond,
	})
	ctx := context.Background()
	th := testkit.Thread("ops", "t1")
	r.chat.Say(t, th, "alice", "append slowly on @localhost")
	card := r.chat.WaitCard(t, th, replicaWait)
	idleAll(t, []*replica{r})

	r.chat.Decide(t, bot.Decision{EventID: "click-1", ApprovalID: card.ID, Token: card.Token, Approve: true, User: "bob", Thread: th})
	waitFor(t, replicaWait, "the approved call to be claimed", func() bool {
		a, err := r.store.GetApproval(ctx, card.ID)
		return err == nil && a.Status == policy.ApprovalExecuting
	})
	rds.Crash() // the call is sleeping; it finishes with Redis gone
	waitFor(t, replicaWait, "the call to finish", func() bool { return testkit.LineCount(t, target) == 1 })
	waitFor(t, replicaWait, "the run to stop on the outage", func() bool {
		return strings.Contains(r.chat.Transcript(th), "I stopped: I could not save")
	})
	idleAll(t, []*replica{r})
	recs, err := audit.ReadFile(auditFile)
	if err != nil {
		t.Fatal(err)
	}
	if !hasRecord(recs, audit.Executed, card.ID) {
		t.Fatalf("the audit file lacks the executed record while Redis is down:\n%+v", recs)
	}

	rds.Start()
	waitFor(t, replicaWait, "the approval to be settled", func() bool {
		a, err := r.store.GetApproval(ctx, card.ID)
		return err == nil && a.Status != policy.ApprovalExecuting
	})
	r.chat.WaitText(t, th, "ran while my state store was unreachable; its result: ok", replicaWait)
	idleAll(t, []*replica{r})
	if a, _ := r.store.GetApproval(ctx, card.ID); a.Status != policy.ApprovalExecuted {
		t.Fatalf("approval settled as %s, want executed", a.Status)
	}
	chain, err := r.store.RecentAudit(ctx, 100000)
	if err != nil {
		t.Fatal(err)
	}
	if err := audit.VerifyChain(chain); err != nil {
		t.Fatalf("the chain in Redis is broken after the outage: %v", err)
	}
	var actions []audit.Action
	for _, rec := range chain {
		if rec.ApprovalID == card.ID {
			actions = append(actions, rec.Action)
		}
	}
	if fmt.Sprint(actions) != fmt.Sprint([]audit.Action{audit.ApprovalRequested, audit.Approved, audit.Executed, audit.Settled}) {
		t.Fatalf("the approval's records in the chain: %v", actions)
	}
	if n, err := audit.VerifyFile(auditFile); err != nil {
		t.Fatalf("`vigil audit verify` fails on the audit file (%d records): %v", n, err)
	}
	if raw, err := os.ReadFile(auditFile + ".outbox"); err != nil || len(raw) != 0 {
		t.Fatalf("records still wait in the outbox: %q %v", raw, err)
	}
	s, err := r.store.LoadSession(ctx, th.Key())
	if err != nil || s.Run != nil {
		t.Fatalf("the run that stopped was not closed: %+v %v", s, err)
	}

	r.chat.Decide(t, bot.Decision{EventID: "click-2", ApprovalID: card.ID, Token: card.Token, Approve: true, User: "bob", Thread: th})
	after := testkit.Thread("ops", "t2")
	r.chat.Say(t, after, "alice", "afterwards, is @localhost fine?")
	r.chat.WaitText(t, after, "[answer] still here", replicaWait)
	idleAll(t, []*replica{r})
	if n := testkit.LineCount(t, target); n != 1 {
		t.Fatalf("the approved call ran %d times, want 1", n)
	}
}

func hasRecord(recs []audit.Record, action audit.Action, approval string) bool {
	for _, r := range recs {
		if r.Action == action && r.ApprovalID == approval {
			return true
		}
	}
	return false
}

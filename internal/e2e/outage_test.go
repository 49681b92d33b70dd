package e2e

import (
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vigilops/vigil/bot"
	"github.com/vigilops/vigil/internal/metrics"
	"github.com/vigilops/vigil/internal/server"
	"github.com/vigilops/vigil/internal/testenv/modeltest"
	"github.com/vigilops/vigil/internal/testenv/testkit"
	"github.com/vigilops/vigil/policy"
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
	rds := startPrivateRedis(t)
	file := filepath.Join(t.TempDir(), "log")
	model := modeltest.New(t)
	routeTurns(model, map[string][]modeltest.Step{
		"append a line":   writeSteps(file, "appended"),
		"after the crash": {modeltest.Calls(discoverLocal()), modeltest.Text("back after the crash")},
	})
	reg := prometheus.NewRegistry()
	// The server is this test's own: the default prefix, and its data goes
	// with it.
	r := startReplica(t, "solo", rds.Addr(), "vigil:", replicaOptions{
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

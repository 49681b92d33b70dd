package e2e

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/vigilops/vigil/internal/testenv/modeltest"
	"github.com/vigilops/vigil/internal/testenv/testkit"
	"github.com/vigilops/vigil/policy"
)

// Unknown tools and invalid arguments go back to the model as envelopes
// naming the problem; nothing runs and the run continues.
func TestUnknownToolAndInvalidArguments(t *testing.T) {
	h := start(t, policy.LevelControlled)
	h.model.Script(
		modeltest.Calls(
			modeltest.Call("rm_everything", `{"path":"/"}`),
			modeltest.Call("read", `{"action":"exec","target":"localhost","command":"uptime","colour":"red"}`),
			modeltest.Call("read", `{"action":"exec","target":"localhost","command":42}`),
			modeltest.Call("read", `{"action":"dance","target":"localhost"}`),
		),
		modeltest.Text("sorry"),
	)
	h.ask("do things")
	h.con.WaitFor(t, "vigil> sorry", wait)
	res := resultsOf(t, h.lastRequest())
	if len(res) != 4 {
		t.Fatalf("got %d results, want 4", len(res))
	}
	if res[0].OK || !strings.Contains(res[0].Error.Message, "rm_everything") {
		t.Fatalf("unknown tool: %+v", res[0].Error)
	}
	for i, field := range []string{"colour", "command", "action"} {
		e := res[i+1]
		if code(e) != string(policy.CodeInvalidInput) || !strings.Contains(e.Error.Message, field) {
			t.Fatalf("invalid argument %q: got %+v, want INVALID_INPUT naming it", field, e.Error)
		}
	}
}

// Enormous output is capped, with a notice, in what the model and the user
// see.
func TestEnormousOutputCapped(t *testing.T) {
	h := start(t, policy.LevelControlled)
	h.model.Script(
		modeltest.Calls(discoverLocal()),
		modeltest.Calls(readExec("head -c 3000000 /dev/zero | tr '\\0' a")),
		modeltest.Text("big"),
	)
	h.ask("print a lot on @localhost")
	out := h.con.WaitFor(t, "vigil> big", wait)
	mustContain(t, out, "output truncated", "trace notice")
	if len(out) > 100_000 {
		t.Fatalf("console printed %d bytes for a 3 MB output", len(out))
	}
	req := h.lastRequest()
	last := req.ToolResults()[len(req.ToolResults())-1]
	if len(last.Content) > 200_000 {
		t.Fatalf("the model was sent %d bytes of output", len(last.Content))
	}
	mustContain(t, last.Content, "truncated", "model sees the truncation")
}

// The model endpoint down: a clear message, and the conversation is kept.
func TestModelEndpointDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	h := start(t, policy.LevelControlled, func(o *testkit.Options) { o.ModelURL = dead })
	h.ask("hello?")
	h.con.WaitFor(t, "The model is unavailable right now", wait)
	s := h.session()
	if s.Run != nil || len(s.History) == 0 || !strings.Contains(s.History[0].Content, "hello?") {
		t.Fatalf("session after an outage: run %v, history %+v", s.Run, s.History)
	}
}

// 5xx answers are retried; past the retries the user gets a clear message;
// the next message works once the model is back, with the history intact.
func TestModelOutageThenBack(t *testing.T) {
	h := start(t, policy.LevelControlled)
	h.model.Script(modeltest.Status(503), modeltest.Status(503))
	h.ask("hello?")
	h.con.WaitFor(t, "The model is unavailable right now", wait)
	if n := h.model.Count(); n != 2 {
		t.Fatalf("model got %d requests, want 2 (one retry)", n)
	}
	h.model.Script(modeltest.Text("back again"))
	h.ask("still there?")
	h.con.WaitFor(t, "vigil> back again", wait)
	mustContain(t, h.lastRequest().FirstUser(), "hello?", "history kept across the outage")
}

// 429 with Retry-After is honoured and retried; the user sees the answer.
func TestRateLimitedModelRetried(t *testing.T) {
	h := start(t, policy.LevelControlled)
	h.model.Script(modeltest.Status(429).RetryAfter("1"), modeltest.Text("after the wait"))
	begin := time.Now()
	h.ask("hi")
	h.con.WaitFor(t, "vigil> after the wait", wait)
	if took := time.Since(begin); took < 900*time.Millisecond {
		t.Fatalf("retried after %s, before Retry-After: 1", took)
	}
}

// A slow model hits the per-call timeout, is retried, and is reported.
func TestSlowModelTimesOut(t *testing.T) {
	h := start(t, policy.LevelControlled, func(o *testkit.Options) { o.ModelTimeout = 300 * time.Millisecond })
	h.model.Script(
		modeltest.Delay(5*time.Second, modeltest.Text("too late")),
		modeltest.Delay(5*time.Second, modeltest.Text("too late")),
	)
	h.ask("hi")
	out := h.con.WaitFor(t, "The model is unavailable right now", wait)
	mustNotContain(t, out, "too late", "a timed-out answer")
}

// Package e2e holds end-to-end tests: the real bot, agent, policy and tools,
// driven through the console adapter by a scripted model over real HTTP.
// Assertions are on what vigil did (traces, files, FSM state, what the model
// was sent), never on model prose.
package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/internal/testenv/modeltest"
	"github.com/vigilops/vigil/internal/testenv/testkit"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools/inventory"
)

const wait = 15 * time.Second

// consoleThread is the session key of the console's one conversation.
const consoleThread = "console:console:main"

type harness struct {
	t     *testing.T
	model *modeltest.Server
	con   *testkit.Console
	st    *testkit.Stack
}

func start(t *testing.T, level policy.ControlLevel, mutate ...func(*testkit.Options)) *harness {
	t.Helper()
	model := modeltest.New(t)
	con := testkit.NewConsole("alice")
	o := testkit.Options{
		Adapter:  con,
		Model:    model,
		Channels: []policy.ChannelPolicy{{Match: "console", Level: level, AllowSelfApproval: true}},
	}
	for _, m := range mutate {
		m(&o)
	}
	st := testkit.Start(t, o)
	return &harness{t: t, model: model, con: con, st: st}
}

// ask sends a message and waits for the run to finish or stop at an
// approval.
func (h *harness) ask(text string) {
	h.t.Helper()
	h.con.Send(h.t, text)
	h.idle()
}

func (h *harness) idle() {
	h.t.Helper()
	// The console has handed the lines sent so far to the bot.
	h.con.Flush(h.t)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := h.st.Bot.WaitIdle(ctx); err != nil {
		h.t.Fatalf("bot did not become idle: %v\noutput:\n%s", err, h.con.Output())
	}
}

func (h *harness) session() *agent.Session {
	h.t.Helper()
	s, err := h.st.Stores.Sessions.LoadSession(context.Background(), consoleThread)
	if err != nil {
		h.t.Fatalf("load session: %v", err)
	}
	return s
}

// toolResults returns the tool messages of the last request the model got.
func (h *harness) lastRequest() modeltest.Request {
	h.t.Helper()
	reqs := h.model.Requests()
	if len(reqs) == 0 {
		h.t.Fatal("the model received no request")
	}
	return reqs[len(reqs)-1]
}

// envelope decodes a tool message.
type envelope struct {
	OK    bool            `json:"ok"`
	Data  json.RawMessage `json:"data"`
	Error *struct {
		Code    string         `json:"code"`
		Message string         `json:"message"`
		Blocked bool           `json:"blocked"`
		Details map[string]any `json:"details"`
	} `json:"error"`
}

func decodeEnvelope(t *testing.T, content string) envelope {
	t.Helper()
	var e envelope
	if err := json.Unmarshal([]byte(content), &e); err != nil {
		t.Fatalf("tool result is not an envelope: %v\n%s", err, content)
	}
	return e
}

// resultsOf returns the decoded tool results the model saw, in order.
func resultsOf(t *testing.T, req modeltest.Request) []envelope {
	t.Helper()
	var out []envelope
	for _, m := range req.ToolResults() {
		out = append(out, decodeEnvelope(t, m.Content))
	}
	return out
}

func code(e envelope) string {
	if e.Error == nil {
		return ""
	}
	return e.Error.Code
}

func readExec(cmd string) modeltest.ToolCall {
	return modeltest.Call("read", testkit.Args("action", "exec", "target", "localhost", "command", cmd))
}

func controlCmd(cmd string) modeltest.ToolCall {
	return modeltest.Call("control", testkit.Args("action", "command", "target", "localhost", "command", cmd))
}

func discoverLocal() modeltest.ToolCall {
	return modeltest.Call("discover", testkit.Args("resource", "localhost"))
}

func mustContain(t *testing.T, haystack, needle, what string) {
	t.Helper()
	if !strings.Contains(haystack, needle) {
		t.Fatalf("%s: %q not found in:\n%s", what, needle, haystack)
	}
}

func mustNotContain(t *testing.T, haystack, needle, what string) {
	t.Helper()
	if strings.Contains(haystack, needle) {
		t.Fatalf("%s: %q unexpectedly found in:\n%s", what, needle, haystack)
	}
}

// waitUntil polls cond until it holds, failing the test after the usual wait.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// nodeWithContainer is an inventory of this machine as node delly, with an
// LXC container, media, on it.
func nodeWithContainer(t *testing.T) *inventory.Inventory {
	t.Helper()
	inv, err := inventory.New([]inventory.Resource{
		{ID: "node:delly", Name: "delly", Kind: inventory.KindNode, Reach: inventory.Reach{Local: true}},
		{ID: "lxc:delly:141", Name: "media", Kind: inventory.KindLXC, Parent: "node:delly", UID: "141"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

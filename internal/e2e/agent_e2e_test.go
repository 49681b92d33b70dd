package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/internal/testenv/modeltest"
	"github.com/vigilops/vigil/internal/testenv/testkit"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools/inventory"
)

// A logs investigation only reads: the FSM stays in READING and the final
// answer goes through (SPEC Q2).
func TestLogsInvestigationStaysReading(t *testing.T) {
	h := start(t, policy.LevelControlled)
	h.model.Script(
		modeltest.Calls(modeltest.Call("query", testkit.Args("action", "search", "query", "local"))),
		modeltest.Calls(readExec("uname -a")),
		modeltest.Calls(readExec("cat /etc/hostname 2>/dev/null")),
		modeltest.Calls(readExec("ls -la /tmp | head -n 5")),
		modeltest.Text("All quiet."),
	)
	h.ask("check the logs on @localhost")
	out := h.con.WaitFor(t, "vigil> All quiet.", wait)
	mustNotContain(t, out, "[blocked]", "traces")
	if got := h.session().Policy.FSM.State; got != policy.StateReading {
		t.Fatalf("FSM state after a read-only investigation = %s, want READING", got)
	}
	for i, e := range resultsOf(t, h.lastRequest()) {
		if !e.OK {
			t.Fatalf("tool result %d not ok: %+v", i, e.Error)
		}
	}
}

// A stderr redirect is not a write: read runs it (SPEC Q2).
func TestStderrRedirectIsNotAWrite(t *testing.T) {
	h := start(t, policy.LevelReadOnly)
	h.model.Script(
		modeltest.Calls(discoverLocal()),
		modeltest.Calls(readExec("ls /definitely-missing 2>/dev/null; echo listed 2>&1")),
		modeltest.Text("done"),
	)
	h.ask("list it on @localhost")
	h.con.WaitFor(t, "vigil> done", wait)
	res := resultsOf(t, h.lastRequest())
	if len(res) != 2 || !res[1].OK {
		t.Fatalf("read with 2>/dev/null was not run: %+v", res)
	}
	mustContain(t, string(res[1].Data), "listed", "read output")
}

// write → read → write: VERIFYING clears on the first read, the flag does not
// stick, and the next change is allowed (SPEC Q2, A4).
func TestWriteReadWrite(t *testing.T) {
	dir := t.TempDir()
	first, second := filepath.Join(dir, "first"), filepath.Join(dir, "second")
	h := start(t, policy.LevelAutonomous)
	h.model.Script(
		modeltest.Calls(discoverLocal()),
		modeltest.Calls(controlCmd("touch "+first)),
		modeltest.Calls(readExec("ls "+first)),
		modeltest.Text("created first"),
		modeltest.Calls(controlCmd("touch "+second)),
		modeltest.Calls(readExec("ls "+second)),
		modeltest.Text("created second"),
	)
	h.ask("create the first marker on @localhost")
	h.con.WaitFor(t, "vigil> created first", wait)
	fsm := h.session().Policy.FSM
	if fsm.State != policy.StateReading || fsm.ReadAfterWrite {
		t.Fatalf("after write+read: state %s read_after_write %v, want READING and false", fsm.State, fsm.ReadAfterWrite)
	}
	// After the verified write the next turn was text-only.
	reqs := h.model.Requests()
	if n := len(reqs[3].Tools); n != 0 {
		t.Fatalf("turn after a verified write offered %d tools, want none", n)
	}
	h.ask("now the second one")
	h.con.WaitFor(t, "vigil> created second", wait)
	for _, f := range []string{first, second} {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("%s was not created: %v", f, err)
		}
	}
}

// A write before anything is resolved for its target is refused with
// STRICT_RESOLUTION; after discovery it runs.
func TestWriteBeforeDiscoveryIsStrictResolution(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "marker")
	inv, err := inventory.New([]inventory.Resource{
		{ID: "node:localhost", Name: "localhost", Kind: inventory.KindNode, Reach: inventory.Reach{Local: true}},
		{ID: "node:other", Name: "other", Kind: inventory.KindNode, Reach: inventory.Reach{Local: true}},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := start(t, policy.LevelAutonomous, func(o *testkit.Options) { o.Inventory = inv })
	h.model.Script(
		modeltest.Calls(modeltest.Call("query", testkit.Args("action", "get", "resource", "other"))),
		modeltest.Calls(controlCmd("touch "+marker)),
		modeltest.Calls(discoverLocal()),
		modeltest.Calls(controlCmd("touch "+marker)),
		modeltest.Calls(readExec("ls "+marker)),
		modeltest.Text("marker created"),
	)
	h.ask("create the marker")
	h.con.WaitFor(t, "vigil> marker created", wait)
	reqs := h.model.Requests()
	blocked := resultsOf(t, reqs[2])
	if got := code(blocked[len(blocked)-1]); got != string(policy.CodeStrictResolution) {
		t.Fatalf("write before discovery: code %q, want STRICT_RESOLUTION", got)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("marker not created after discovery: %v", err)
	}
}

// A final answer while VERIFYING is refused; verification is injected; the
// model reads, then answers.
func TestFinalAnswerWhileVerifyingIsRefused(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "m")
	h := start(t, policy.LevelAutonomous)
	h.model.Script(
		modeltest.Calls(discoverLocal()),
		modeltest.Calls(controlCmd("touch "+marker)),
		modeltest.Text("Done, the file exists."),
		modeltest.Calls(readExec("ls "+marker)),
		modeltest.Text("Verified: the file exists."),
	)
	h.ask("touch the marker on @localhost")
	out := h.con.WaitFor(t, "vigil> Verified: the file exists.", wait)
	mustNotContain(t, out, "vigil> Done, the file exists.", "refused answer must not be posted")
	reqs := h.model.Requests()
	if got := reqs[3].LastUser(); !strings.HasPrefix(got, "verification required") {
		t.Fatalf("after a refused answer the model got %q, want the verification prompt", got)
	}
}

// A final answer claiming facts when no tool succeeded is replaced.
func TestPhantomAnswerReplaced(t *testing.T) {
	h := start(t, policy.LevelControlled)
	h.model.Script(modeltest.Text("I restarted nginx and the logs show no errors."))
	h.ask("is nginx fine?")
	out := h.con.WaitFor(t, "vigil> "+agent.PhantomReply[:40], wait)
	mustNotContain(t, out, "I restarted nginx", "phantom claim must not reach the user")
}

// The same call four times: the fourth is LOOP_DETECTED.
func TestLoopDetected(t *testing.T) {
	h := start(t, policy.LevelControlled)
	same := readExec("uptime")
	h.model.Script(
		modeltest.Calls(discoverLocal()),
		modeltest.Calls(same), modeltest.Calls(same), modeltest.Calls(same), modeltest.Calls(same),
		modeltest.Text("stopping"),
	)
	h.ask("uptime on @localhost please")
	h.con.WaitFor(t, "vigil> stopping", wait)
	res := resultsOf(t, h.lastRequest())
	for i := 1; i <= 3; i++ {
		if !res[i].OK {
			t.Fatalf("call %d of the same read was refused: %+v", i, res[i].Error)
		}
	}
	if got := code(res[4]); got != string(policy.CodeLoopDetected) {
		t.Fatalf("fourth identical call: %q, want LOOP_DETECTED", got)
	}
}

// json tool mode: malformed output gets a correction quoting it, then the
// model's valid call runs.
func TestJSONModeMalformedCorrected(t *testing.T) {
	h := start(t, policy.LevelControlled, func(o *testkit.Options) { o.ToolMode = "json" })
	h.model.Script(
		modeltest.Raw("let me think... {tool_call: nope"),
		modeltest.JSONCall("discover", `{"resource":"localhost"}`),
		modeltest.JSONFinal("looked at localhost", "high"),
	)
	h.ask("look at @localhost")
	h.con.WaitFor(t, "vigil> looked at localhost", wait)
	reqs := h.model.Requests()
	if len(reqs[0].Tools) != 0 {
		t.Fatalf("json mode offered %d native tools, want none", len(reqs[0].Tools))
	}
	mustContain(t, reqs[0].System(), "tool_call", "json mode system prompt")
	mustContain(t, reqs[1].LastUser(), "{tool_call: nope", "correction quotes the bad output")
	mustContain(t, reqs[2].LastUser(), "Result of discover", "tool result in json mode")
}

// `tail -f` is rewritten once automatically to a bounded form.
func TestFollowRewrittenOnce(t *testing.T) {
	logf := filepath.Join(t.TempDir(), "app.log")
	if err := os.WriteFile(logf, []byte("line1\nline2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := start(t, policy.LevelControlled)
	h.model.Script(
		modeltest.Calls(discoverLocal()),
		modeltest.Calls(readExec("tail -f "+logf)),
		modeltest.Text("read the log"),
	)
	h.ask("follow the log on @localhost")
	out := h.con.WaitFor(t, "vigil> read the log", wait)
	mustContain(t, out, "[blocked] read exec on localhost: tail -f", "the refused original is shown")
	res := resultsOf(t, h.lastRequest())
	last := res[len(res)-1]
	if !last.OK {
		t.Fatalf("rewritten read failed: %+v", last.Error)
	}
	mustContain(t, string(last.Data), "line2", "rewritten read output")
	mustNotContain(t, string(last.Data), "tail -f", "the command that ran")
}

// read refuses `rm -f FILE`, and the file is still there.
func TestReadRefusesRm(t *testing.T) {
	victim := filepath.Join(t.TempDir(), "keep")
	if err := os.WriteFile(victim, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := start(t, policy.LevelAutonomous)
	h.model.Script(
		modeltest.Calls(discoverLocal()),
		modeltest.Calls(readExec("rm -f "+victim)),
		modeltest.Text("refused"),
	)
	h.ask("clean up on @localhost")
	h.con.WaitFor(t, "vigil> refused", wait)
	res := resultsOf(t, h.lastRequest())
	if got := code(res[1]); got != string(policy.CodePolicyBlocked) {
		t.Fatalf("read of rm: %q, want POLICY_BLOCKED", got)
	}
	if _, err := os.Stat(victim); err != nil {
		t.Fatalf("the file read refused to delete is gone: %v", err)
	}
}

// A read_only channel refuses every write and creates no approval.
func TestReadOnlyChannelRefusesWrites(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "m")
	h := start(t, policy.LevelReadOnly)
	h.model.Script(
		modeltest.Calls(discoverLocal()),
		modeltest.Calls(controlCmd("touch "+marker)),
		modeltest.Calls(modeltest.Call("file_edit", testkit.Args("action", "write", "target", "localhost", "path", marker, "content", "x"))),
		modeltest.Text("cannot change anything here"),
	)
	h.ask("touch it on @localhost")
	out := h.con.WaitFor(t, "vigil> cannot change anything here", wait)
	mustNotContain(t, out, "approval needed", "read_only channel")
	for i, e := range resultsOf(t, h.lastRequest())[1:] {
		if code(e) != string(policy.CodeActionNotAllowed) {
			t.Fatalf("write %d in a read_only channel: %q, want ACTION_NOT_ALLOWED", i, code(e))
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a write ran in a read_only channel")
	}
	pending, err := h.st.Stores.Approvals.ListPending(t.Context())
	if err != nil || len(pending) != 0 {
		t.Fatalf("read_only channel created approvals: %v %v", pending, err)
	}
}

// Parallel reads run concurrently and their results come back in call order.
func TestParallelReadsConcurrentInOrder(t *testing.T) {
	h := start(t, policy.LevelControlled)
	h.model.Script(
		modeltest.Calls(discoverLocal()),
		modeltest.Calls(readExec("sleep 1; echo A"), readExec("sleep 1; echo B"), readExec("sleep 1; echo C"), readExec("sleep 1; echo D")),
		modeltest.Text("four reads"),
	)
	begin := time.Now()
	h.ask("four slow reads on @localhost")
	h.con.WaitFor(t, "vigil> four reads", wait)
	if took := time.Since(begin); took > 3500*time.Millisecond {
		t.Fatalf("four 1-second reads took %s: not run concurrently", took)
	}
	res := resultsOf(t, h.lastRequest())[1:]
	for i, want := range []string{"A", "B", "C", "D"} {
		if !res[i].OK || !strings.Contains(string(res[i].Data), want) {
			t.Fatalf("result %d = %s, want output %s (call order)", i, res[i].Data, want)
		}
	}
}

// File edits on a node are refused while a child on it was @mentioned
// (ROUTING_MISMATCH); the automatic retry targets the child, and the change
// still waits for approval (SPEC Q2, P4).
func TestFileEditOnNodeBlockedWhenChildMentioned(t *testing.T) {
	inv := nodeWithContainer(t)
	path := filepath.Join(t.TempDir(), "app.conf")
	h := start(t, policy.LevelControlled, func(o *testkit.Options) { o.Inventory = inv })
	h.model.Script(
		modeltest.Calls(modeltest.Call("query", testkit.Args("action", "search", "query", "delly"))),
		modeltest.Calls(modeltest.Call("file_edit", testkit.Args("action", "write", "target", "delly", "path", path, "content", "x=1\n"))),
	)
	h.ask("set x=1 in the config of @media")
	id := h.con.ApprovalID(t, 1, wait)
	out := h.con.Output()
	mustContain(t, out, "[blocked] file_edit write on delly", "the refused edit on the node")
	mustContain(t, out, "ROUTING_MISMATCH", "the refusal names the rule")
	mustContain(t, out, "target:    media", "the approval targets the child")
	if _, err := os.Stat(path); err == nil {
		t.Fatal("the node's file was written")
	}
	a, err := h.st.Stores.Approvals.GetApproval(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if a.Target != "media" || !strings.Contains(string(a.Args), `"target":"media"`) {
		t.Fatalf("approval binds target %q args %s, want the child", a.Target, a.Args)
	}
}

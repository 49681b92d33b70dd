package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigilops/vigil/internal/config"
	"github.com/vigilops/vigil/internal/testenv/modeltest"
	"github.com/vigilops/vigil/internal/testenv/testkit"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools/plugin/plugintest"
)

// A plugin tool the operator lists in read_only_tools runs at once in a
// controlled channel; its other tools are writes and wait for approval. The
// model sees plugin output only inside the untrusted data block. The MCP
// server is a real process.
func TestPluginToolsReadRunsWriteNeedsApproval(t *testing.T) {
	server := plugintest.BuildEchoServer(t, t.TempDir())
	h := start(t, policy.LevelControlled, func(o *testkit.Options) {
		o.Plugins = []config.Plugin{{Name: "ops", Command: server, ReadOnlyTools: []string{"echo"}}}
	})
	specs := strings.Join(h.st.App.Registry.Names(), " ")
	mustContain(t, specs, "ops_echo", "plugin tools registered")
	mustContain(t, specs, "ops_write_note", "plugin tools registered")

	h.model.Script(
		modeltest.Calls(modeltest.Call("ops_echo", testkit.Args("text", "status green"))),
		modeltest.Calls(modeltest.Call("ops_write_note", testkit.Args("text", "rotated the keys"))),
		// A write is verified by a read before the answer (VERIFYING).
		modeltest.Calls(modeltest.Call("ops_echo", testkit.Args("text", "verified"))),
		modeltest.Text("noted"),
	)
	h.ask("echo the status, then write a note")
	id := h.con.ApprovalID(t, 1, wait)

	// The read ran without a card and came back as a data block.
	res := resultsOf(t, h.lastRequest())
	if len(res) != 1 || !res[0].OK {
		t.Fatalf("echo results = %+v; want one OK result", res)
	}
	mustContain(t, string(res[0].Data), "BEGIN PLUGIN DATA (untrusted output of ops_echo", "echo output wrapped")
	mustContain(t, string(res[0].Data), `status green\nEND PLUGIN DATA`, "echo output")
	mustContain(t, h.con.Output(), "ops_write_note", "approval card names the plugin tool")

	h.con.Send(t, "approve "+id)
	h.idle()
	h.con.WaitFor(t, "vigil> noted", wait)
	res = resultsOf(t, h.lastRequest())
	if len(res) < 2 || !res[len(res)-2].OK || !res[len(res)-1].OK {
		t.Fatalf("results after approval = %+v; want write_note and the verifying echo OK", res)
	}
	mustContain(t, string(res[len(res)-2].Data), "noted: rotated the keys", "write_note ran after approval")
	if h.session().Run != nil {
		t.Fatal("run still open after the final answer")
	}
}

// A plugin tool that claims readOnlyHint and writes a file is a write: in a
// controlled channel it waits for approval and the file is not written,
// unless the operator lists it in read_only_tools (issue 23). The MCP
// server is a real process.
func TestPluginReadOnlyHintNeedsApproval(t *testing.T) {
	server := plugintest.BuildEchoServer(t, t.TempDir())
	target := filepath.Join(t.TempDir(), "written")
	h := start(t, policy.LevelControlled, func(o *testkit.Options) {
		o.Plugins = []config.Plugin{{Name: "ops", Command: server, ReadOnlyTools: []string{"echo"}}}
	})
	h.model.Script(
		modeltest.Calls(modeltest.Call("ops_echo", testkit.Args("text", "hello"))),
		modeltest.Calls(modeltest.Call("ops_write_file", testkit.Args("path", target, "text", "owned"))),
		modeltest.Text("done"),
	)
	h.ask("look at the file")
	h.con.ApprovalID(t, 1, wait)
	h.idle()
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatalf("the hinted tool wrote %s before any approval (stat: %v)", target, err)
	}
	mustContain(t, h.con.Output(), "ops_write_file", "the approval card names the plugin tool")
}

package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/vigilops/vigil/internal/config"
	"github.com/vigilops/vigil/internal/testenv/modeltest"
	"github.com/vigilops/vigil/internal/testenv/testkit"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools/plugin/plugintest"
)

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

package app_test

import (
	"strings"
	"testing"

	"github.com/vigilops/vigil/internal/app"
	"github.com/vigilops/vigil/internal/config"
	"github.com/vigilops/vigil/tools/plugin/plugintest"
)

func loadDefaults(t *testing.T) *config.Config {
	t.Helper()
	cfg, err := config.Load("")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// Plugin tools are registered after the built-ins, and Close ends the
// plugin processes.
func TestPluginToolsRegisteredAfterBuiltins(t *testing.T) {
	cfg := loadDefaults(t)
	cfg.Plugins = []config.Plugin{{Name: "ops", Command: plugintest.BuildEchoServer(t, t.TempDir())}}
	a, err := app.New(t.Context(), app.Options{Config: cfg, Model: noModel{}})
	if err != nil {
		t.Fatal(err)
	}
	names := a.Registry.Names()
	joined := strings.Join(names, " ")
	if names[0] != "query" || !strings.Contains(joined, "knowledge metrics alerts kube changes ops_") ||
		!strings.Contains(joined, " ops_echo ") || !strings.HasSuffix(joined, " ops_write_note") {
		t.Errorf("tools = %v; want the built-ins, then the plugin's", names)
	}
	if err := a.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// A plugin that cannot start stops vigil with an error naming it.
func TestPluginThatFailsToStartIsStartupError(t *testing.T) {
	cfg := loadDefaults(t)
	cfg.Plugins = []config.Plugin{{Name: "broken", Command: "/nonexistent/mcp-server"}}
	_, err := app.New(t.Context(), app.Options{Config: cfg, Model: noModel{}})
	if err == nil || !strings.Contains(err.Error(), "plugin broken did not start") {
		t.Fatalf("New = %v; want an error naming plugin broken", err)
	}
}

// plugins[].read_only_tools is checked at start against the tools the
// plugin offers: a name it does not offer stops vigil, naming the plugin
// and its tools.
func TestPluginReadOnlyToolsCheckedAtStart(t *testing.T) {
	cfg := loadDefaults(t)
	cfg.Plugins = []config.Plugin{{Name: "ops", Command: plugintest.BuildEchoServer(t, t.TempDir()), ReadOnlyTools: []string{"echo", "get_ticket"}}}
	_, err := app.New(t.Context(), app.Options{Config: cfg, Model: noModel{}})
	for _, want := range []string{"plugin ops", `"get_ticket"`, "the plugin offers:", "write_note"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("New = %v; want an error containing %q", err, want)
		}
	}
}

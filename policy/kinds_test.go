package policy

import "testing"

func TestKindOf(t *testing.T) {
	tests := []struct {
		tool, action string
		want         Kind
	}{
		// query and discover resolve whatever the action.
		{"query", "search", KindResolve},
		{"query", "get", KindResolve},
		{"query", "list", KindResolve},
		{"query", "topology", KindResolve},
		{"query", "health", KindResolve},
		{"query", "", KindResolve},
		{"discover", "", KindResolve},
		{"discover", "anything", KindResolve},

		// read is a read for its five actions only.
		{"read", "exec", KindRead},
		{"read", "file", KindRead},
		{"read", "find", KindRead},
		{"read", "tail", KindRead},
		{"read", "logs", KindRead},
		{"read", "", KindWrite},
		{"read", "shell", KindWrite},

		// control is always a write, including the Failure Mode 1 shape
		// (a grep routed through control still writes).
		{"control", "guest", KindWrite},
		{"control", "service", KindWrite},
		{"control", "command", KindWrite},
		{"control", "", KindWrite},

		{"file_edit", "read", KindRead},
		{"file_edit", "write", KindWrite},
		{"file_edit", "append", KindWrite},
		{"file_edit", "delete", KindWrite},
		{"file_edit", "", KindWrite},

		{"metrics", "", KindRead},
		{"metrics", "cpu", KindRead},

		{"alerts", "list", KindRead},
		{"alerts", "get", KindRead},
		{"alerts", "silence", KindWrite},
		{"alerts", "resolve", KindWrite},
		{"alerts", "dismiss", KindWrite},
		{"alerts", "purge", KindWrite},

		{"knowledge", "recall", KindRead},
		{"knowledge", "search", KindRead},
		{"knowledge", "remember", KindWrite},
		{"knowledge", "note", KindWrite},
		{"knowledge", "save", KindWrite},
		{"knowledge", "forget", KindWrite},

		// Unknown tools, plugin tools and case variants are writes.
		{"shell", "exec", KindWrite},
		{"", "", KindWrite},
		{"grafana_query", "search", KindWrite},
		{"homeassistant_read", "", KindWrite},
		{"Read", "exec", KindWrite},
		{"read", "EXEC", KindWrite},
		{"file_edit", "Read", KindWrite},
		{" query", "search", KindWrite},
	}
	for _, tt := range tests {
		if got := KindOf(tt.tool, tt.action); got != tt.want {
			t.Errorf("KindOf(%q, %q) = %q, want %q", tt.tool, tt.action, got, tt.want)
		}
	}
}

// TestKindTableOnlyHoldsKnownKinds guards the table against a typo that would
// produce a kind the FSM does not know.
func TestKindTableOnlyHoldsKnownKinds(t *testing.T) {
	valid := map[Kind]bool{KindResolve: true, KindRead: true, KindWrite: true}
	for tool, tk := range builtinKinds {
		if tk.every != "" && tk.actions != nil {
			t.Errorf("%s: sets both every and actions", tool)
		}
		if tk.every == "" && len(tk.actions) == 0 {
			t.Errorf("%s: classifies nothing", tool)
		}
		if tk.every != "" && !valid[tk.every] {
			t.Errorf("%s: invalid kind %q", tool, tk.every)
		}
		for action, k := range tk.actions {
			if !valid[k] {
				t.Errorf("%s %s: invalid kind %q", tool, action, k)
			}
		}
	}
}

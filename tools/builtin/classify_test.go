package builtin

import (
	"testing"

	"github.com/vigilops/vigil/policy/command"
	"github.com/vigilops/vigil/tools"
)

// TestBuiltCommandsAreReadOnly checks the commands the read tools build
// against policy's classifier: a read the tool builds itself, with quoted
// values from the model, must never be refused as a possible write.
func TestBuiltCommandsAreReadOnly(t *testing.T) {
	inv := loadExample(t)
	read, edit := NewReadTool(inv, nil), NewFileEditTool(inv, nil)
	for _, c := range []struct {
		tool tools.Tool
		args string
	}{
		{read, `{"action":"file","target":"delly","path":"/etc/x'; rm -rf / #"}`},
		{read, `{"action":"tail","target":"delly","path":"/var/log/$(reboot).log","lines":10}`},
		{read, `{"action":"find","target":"delly","path":"/etc","command":"*.conf"}`},
		{read, `{"action":"find","target":"delly","path":"/etc"}`},
		{read, `{"action":"logs","target":"delly","command":"nginx.service","since":"2h"}`},
		{read, `{"action":"logs","target":"delly"}`},
		{read, `{"action":"logs","target":"jellyfin","since":"1d"}`},
		{edit, `{"action":"read","target":"delly","path":"/etc/a b"}`},
	} {
		p := mustPropose(t, c.tool, c.args)
		v := command.Classify(p.Command)
		if !v.ReadOnly() || !v.Bounded {
			t.Errorf("%s: %q classified %s (bounded %v): %v", p.Tool, p.Command, v.Intent, v.Bounded, v.Reasons)
		}
	}
}

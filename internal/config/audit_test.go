package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func keyFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "audit.key")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAuditKeySettings(t *testing.T) {
	good := keyFile(t, strings.Repeat("ab", 32)+"\n")
	old := keyFile(t, strings.Repeat("cd", 32))

	c, err := Load(write(t, "audit:\n  key_file: "+good+"\n  previous_key_files: ["+old+"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	keys, warns, err := c.Audit.Keyring()
	if err != nil || keys.CurrentID() == "" || len(keys.IDs()) != 2 || len(warns) != 0 {
		t.Fatalf("Keyring = %v, %q, %v", keys.IDs(), warns, err)
	}
	if c, err := Load(""); err != nil {
		t.Fatal(err)
	} else if keys, _, err := c.Audit.Keyring(); err != nil || keys != nil {
		t.Fatalf("no key configured: %v, %v; want a nil keyring (an unkeyed chain)", keys, err)
	}

	t.Setenv("VIGIL_AUDIT_KEY", strings.Repeat("ef", 32))
	c, err = Load("")
	if err != nil {
		t.Fatal(err)
	}
	if keys, _, err := c.Audit.Keyring(); err != nil || keys.CurrentID() == "" {
		t.Fatalf("VIGIL_AUDIT_KEY: %v, %v", keys, err)
	}
	if strings.Contains(c.Audit.Key.String(), "ef") {
		t.Error("the audit key prints")
	}

	for _, tc := range []struct{ yaml, key, want string }{
		{"audit:\n  key_file: " + good + "\n", "audit.key_file", "set one"},
		{"audit:\n  previous_key_files: [" + filepath.Join(t.TempDir(), "none") + "]\n", "audit.previous_key_files[0]", "no such file"},
	} {
		_, err := Load(write(t, tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.key) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Load(%q) = %v; want an error naming %s (%s)", tc.yaml, err, tc.key, tc.want)
		}
	}
	t.Setenv("VIGIL_AUDIT_KEY", "too-short")
	if _, err := Load(""); err == nil || !strings.Contains(err.Error(), "audit.key") || !strings.Contains(err.Error(), "at least 32") {
		t.Errorf("a short key: %v", err)
	}
	t.Setenv("VIGIL_AUDIT_KEY", "")
	if _, err := Load(write(t, "audit:\n  key_file: "+good+"\n  previous_key_files: ["+good+"]\n")); err == nil ||
		!strings.Contains(err.Error(), "holds the current key") {
		t.Errorf("the current key listed as previous: %v", err)
	}
}

// vigil audit reads only the audit section: a configuration whose other
// sections would not load here (a Slack token kept in the environment of
// the host vigil runs on) still gives the audit file and keys.
func TestLoadAudit(t *testing.T) {
	key := keyFile(t, strings.Repeat("ab", 32))
	path := write(t, "slack:\n  enabled: true\n  mode: socket\naudit:\n  file: /var/lib/vigil/audit.jsonl\n  key_file: "+key+"\n")
	if _, err := Load(path); err == nil {
		t.Fatal("the whole configuration loaded without Slack tokens; the test needs one that does not")
	}
	a, err := LoadAudit(path)
	if err != nil || a.File != "/var/lib/vigil/audit.jsonl" || a.KeyFile != key {
		t.Fatalf("LoadAudit = %+v, %v", a, err)
	}
	t.Setenv("VIGIL_AUDIT_FILE", "/elsewhere/audit.jsonl")
	if a, err := LoadAudit(path); err != nil || a.File != "/elsewhere/audit.jsonl" {
		t.Fatalf("VIGIL_AUDIT_FILE: %+v, %v", a, err)
	}
	if _, err := LoadAudit(write(t, "audit:\n  fiel: x\n")); err == nil || !strings.Contains(err.Error(), "fiel") {
		t.Errorf("an unknown audit key: %v", err)
	}
	if _, err := LoadAudit(filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Error("a missing config file loaded")
	}
}

func TestPluginReadOnlyToolsSettings(t *testing.T) {
	c, err := Load(write(t, "plugins:\n  - name: ops\n    command: /bin/true\n    read_only_tools: [echo, get_ticket]\n"))
	if err != nil || len(c.Plugins) != 1 || strings.Join(c.Plugins[0].ReadOnlyTools, ",") != "echo,get_ticket" {
		t.Fatalf("read_only_tools: %+v, %v", c, err)
	}
	for yaml, want := range map[string]string{
		"plugins:\n  - name: ops\n    command: /bin/true\n    read_only_tools: [echo, echo]\n": "plugins[0].read_only_tools[1]",
		"plugins:\n  - name: ops\n    command: /bin/true\n    read_only_tools: [\"\"]\n":       "plugins[0].read_only_tools[0]",
	} {
		if _, err := Load(write(t, yaml)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Load(%q) = %v; want an error naming %s", yaml, err, want)
		}
	}
}

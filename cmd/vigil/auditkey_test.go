package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigilops/vigil/policy/audit"
)

// The rewrite that passed verify before the chain had a head and a key:
// edit a record's actor and recompute every later hash. And the cut: drop
// the last records. Both fail now, even unkeyed (the head names the last
// record written); with a key the rewrite fails whatever the attacker does
// to the head.
func TestAuditVerifyCatchesRewriteAndCut(t *testing.T) {
	rehash := func(lines []string) []string {
		var prev *audit.Record
		for i, l := range lines {
			var r audit.Record
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatal(err)
			}
			if i == 4 {
				r.Actor = "U_MALLORY"
			}
			r.Seq, r.PrevHash, r.Hash = 0, "", ""
			r = audit.Chain(prev, r)
			prev = &r
			b, _ := json.Marshal(r)
			lines[i] = string(b)
		}
		return lines
	}
	for _, tc := range []struct {
		name   string
		tamper func([]string) []string
		want   string
	}{
		{"actor edited and hashes recomputed", rehash, "record 20 is not the record the head names — replaced"},
		{"last records cut", func(l []string) []string { return l[:17] }, "records 18 to 20 were cut off (record 20 is the last known to exist)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeAuditFile(t, 20, tc.tamper)
			code, out, errOut := runVigil(t, "audit", "verify", "--file", path)
			if code != 1 || !strings.Contains(errOut, tc.want) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 1 and %q", code, out, errOut, tc.want)
			}
		})
	}
}

// writeKeyFile writes a key and returns its path and ID.
func writeKeyFile(t *testing.T, dir, seed string) (string, string) {
	t.Helper()
	p := filepath.Join(dir, seed+".key")
	if err := os.WriteFile(p, []byte(strings.Repeat(seed, 64)[:64]+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	k, _, err := audit.LoadKeyFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return p, k.ID
}

func writeConfig(t *testing.T, dir, yaml string) string {
	t.Helper()
	p := filepath.Join(dir, "vigil.yaml")
	if err := os.WriteFile(p, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// vigil audit verify and tail read audit.file and the keys from --config;
// a sealed chain rewritten without the key fails, head and all.
func TestAuditVerifyFromConfigWithKey(t *testing.T) {
	dir := t.TempDir()
	keyPath, keyID := writeKeyFile(t, dir, "a")
	logPath := filepath.Join(dir, "audit.jsonl")
	k, _, err := audit.LoadKeyFile(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	keys := audit.NewKeyring(k)
	f, err := audit.OpenFile(logPath, audit.WithKeys(keys))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		f.Write(audit.Record{Time: time.Date(2026, 3, 1, 12, 0, i, 0, time.UTC), Actor: "U_ALICE", Action: audit.Allow, Tool: "read", Command: fmt.Sprint("uptime #", i)})
	}
	f.Close()
	cfg := writeConfig(t, dir, "slack:\n  enabled: true\naudit:\n  file: "+logPath+"\n  key_file: "+keyPath+"\n")

	code, out, errOut := runVigil(t, "audit", "verify", "--config", cfg)
	if code != 0 || !strings.Contains(out, "ok: 5 records, chain intact and sealed (keys "+keyID+"), head at record 5") || strings.Contains(errOut, "UNKEYED") {
		t.Fatalf("verify --config: exit %d %q %q", code, out, errOut)
	}
	code, out, _ = runVigil(t, "audit", "tail", "--config", cfg, "-n", "2")
	if code != 0 || !strings.Contains(out, "uptime #4") || strings.Count(strings.TrimSpace(out), "\n") != 2 {
		t.Fatalf("tail --config: exit %d %q", code, out)
	}
	t.Setenv("VIGIL_AUDIT_FILE", logPath)
	if code, out, errOut := runVigil(t, "audit", "verify", "--key-file", keyPath); code != 0 || !strings.Contains(out, "sealed") {
		t.Fatalf("verify with VIGIL_AUDIT_FILE and --key-file: exit %d %q %q", code, out, errOut)
	}
	if code, _, errOut := runVigil(t, "audit", "verify", "--file", logPath); code != 1 || !strings.Contains(errOut, "sealed with key "+keyID+", which verify was not given") {
		t.Fatalf("verify without the key: exit %d %q", code, errOut)
	}

	// The attacker edits record 2, recomputes every hash without the key
	// and writes a matching head.
	recs, _ := audit.ReadFile(logPath)
	var prev *audit.Record
	var lines []string
	for i, r := range recs {
		if i == 1 {
			r.Actor = "U_MALLORY"
		}
		r.Seq, r.PrevHash, r.KeyID, r.Hash = 0, "", "", ""
		r = audit.Chain(prev, r)
		prev = &r
		b, _ := json.Marshal(r)
		lines = append(lines, string(b))
	}
	os.WriteFile(logPath, []byte(strings.Join(lines, "\n")+"\n"), 0o600)
	head, _ := json.Marshal(audit.Head{Seq: prev.Seq, Hash: prev.Hash})
	os.WriteFile(audit.HeadPath(logPath), head, 0o600)
	code, _, errOut = runVigil(t, "audit", "verify", "--config", cfg)
	if code != 1 || !strings.Contains(errOut, "the chain and its head are not sealed, though verify was given audit keys ("+keyID+")") {
		t.Fatalf("verify of a rewrite: exit %d %q", code, errOut)
	}
}

// After a rotation verify needs the previous key, from the configuration
// or --key-file.
func TestAuditVerifyAfterRotation(t *testing.T) {
	dir := t.TempDir()
	oldPath, oldID := writeKeyFile(t, dir, "o")
	newPath, newID := writeKeyFile(t, dir, "n")
	logPath := filepath.Join(dir, "audit.jsonl")
	load := func(p string) *audit.Key {
		k, _, err := audit.LoadKeyFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	for _, keys := range []*audit.Keyring{audit.NewKeyring(load(oldPath)), audit.NewKeyring(load(newPath), load(oldPath))} {
		f, err := audit.OpenFile(logPath, audit.WithKeys(keys))
		if err != nil {
			t.Fatal(err)
		}
		f.Write(audit.Record{Time: time.Now().UTC(), Actor: "U_ALICE", Action: audit.Allow})
		f.Close()
	}
	only := writeConfig(t, t.TempDir(), "audit:\n  file: "+logPath+"\n  key_file: "+newPath+"\n")
	if code, _, errOut := runVigil(t, "audit", "verify", "--config", only); code != 1 || !strings.Contains(errOut, "sealed with key "+oldID) {
		t.Fatalf("verify without the old key: exit %d %q", code, errOut)
	}
	if code, out, errOut := runVigil(t, "audit", "verify", "--config", only, "--key-file", oldPath); code != 0 ||
		!strings.Contains(out, "keys "+oldID+" then "+newID) {
		t.Fatalf("verify with --key-file: exit %d %q %q", code, out, errOut)
	}
	both := writeConfig(t, t.TempDir(), "audit:\n  file: "+logPath+"\n  key_file: "+newPath+"\n  previous_key_files: ["+oldPath+"]\n")
	if code, out, errOut := runVigil(t, "audit", "verify", "--config", both); code != 0 || !strings.Contains(out, "ok: 3 records") {
		t.Fatalf("verify with previous_key_files: exit %d %q %q", code, out, errOut)
	}
}

func TestAuditVerifyNamesMissingFileSetting(t *testing.T) {
	code, _, errOut := runVigil(t, "audit", "verify", "--config", writeConfig(t, t.TempDir(), "audit:\n  file: \"\"\n"))
	if code != 1 || !strings.Contains(errOut, "no audit file: give --file, or --config with audit.file set") {
		t.Fatalf("exit %d %q", code, errOut)
	}
}

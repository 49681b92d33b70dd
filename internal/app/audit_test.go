package app_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigilops/vigil/internal/app"
	"github.com/vigilops/vigil/policy/audit"
)

// Without an audit key vigil says at start, loudly, that the chain is
// unkeyed (its audit file outlives the process); with one, the store's chain and the audit file are sealed with
// it (an existing unkeyed file gets a key_rotated record).
func TestAuditKeyWiring(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	dir := t.TempDir()
	cfg := loadDefaults(t)
	cfg.Audit.File = filepath.Join(dir, "unkeyed.jsonl")
	a, err := app.New(t.Context(), app.Options{Config: cfg, Model: noModel{}, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	if !strings.Contains(logs.String(), "level=WARN msg=\"AUDIT CHAIN UNKEYED") {
		t.Fatalf("no loud warning about the unkeyed chain:\n%s", logs.String())
	}

	keyPath := filepath.Join(dir, "audit.key")
	os.WriteFile(keyPath, []byte(strings.Repeat("9f", 32)+"\n"), 0o600)
	key, _, err := audit.LoadKeyFile(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "audit.jsonl")
	f, err := audit.OpenFile(file) // written by a vigil without a key
	if err != nil {
		t.Fatal(err)
	}
	f.Write(audit.Record{Time: time.Now().UTC(), Actor: "U1", Action: audit.Allow})
	f.Close()

	logs.Reset()
	cfg = loadDefaults(t)
	cfg.Audit.File, cfg.Audit.KeyFile = file, keyPath
	a, err = app.New(t.Context(), app.Options{Config: cfg, Model: noModel{}, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if strings.Contains(logs.String(), "UNKEYED") || !strings.Contains(logs.String(), "key_id="+key.ID) {
		t.Errorf("start log with a key:\n%s", logs.String())
	}
	r, err := a.Stores.Audit.AppendAudit(t.Context(), audit.Record{Actor: "U1", Action: audit.Allow})
	if err != nil || r.KeyID != key.ID {
		t.Fatalf("store record %+v, %v; want it sealed with %s", r, err, key.ID)
	}
	recs, err := audit.ReadFile(file)
	if err != nil || len(recs) != 2 || recs[1].Action != audit.KeyRotated || recs[1].KeyID != key.ID {
		t.Fatalf("audit file after start: %+v, %v; want a key_rotated record sealed with %s", recs, err, key.ID)
	}
	if _, err := audit.CheckFile(file, audit.NewKeyring(key)); err != nil {
		t.Fatal(err)
	}
}

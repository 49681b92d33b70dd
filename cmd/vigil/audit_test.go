package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigilops/vigil/policy/audit"
)

// writeAuditFile writes n chained records through audit.File, then
// lets tamper rewrite the lines.
func writeAuditFile(t *testing.T, n int, tamper func(lines []string) []string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	f, err := audit.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for i := range n {
		r := audit.Record{
			Time: at.Add(time.Duration(i) * time.Second), Actor: "U_BOSS", Action: audit.Allow,
			Tool: "read", Target: "web1", Command: fmt.Sprintf("uptime # %d", i+1), Channel: "slack:C1", Outcome: "ok",
		}
		if i == n-1 {
			r.Action, r.Tool, r.Command, r.ApprovalID, r.Outcome = audit.Approved, "control",
				"systemctl restart nginx\n--password hunter2", "k3xq7m2a7p", "approved"
		}
		if err := f.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if tamper != nil {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		lines := tamper(strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n"))
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// runVigil runs the CLI in-process and returns its exit code, stdout and
// stderr.
func runVigil(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	root := newRootCmd()
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errb)
	err := root.Execute()
	var ee exitError
	switch {
	case err == nil:
		return 0, out.String(), errb.String()
	case errors.As(err, &ee):
		return ee.code, out.String(), errb.String()
	default:
		return 1, out.String(), errb.String() + err.Error()
	}
}

func TestAuditVerifyCmd(t *testing.T) {
	tests := []struct {
		name     string
		tamper   func([]string) []string
		wantCode int
		want     string
	}{
		{"intact", nil, 0, "ok: 20 records, chain intact"},
		{"edited", func(l []string) []string {
			l[16] = strings.Replace(l[16], "uptime", "reboot", 1)
			return l
		}, 1, "record 17 (line 17): hash mismatch — edited"},
		{"deleted", func(l []string) []string { return append(l[:9], l[10:]...) }, 1,
			"record 11 (line 10): record 10 is missing — deleted"},
		{"reordered", func(l []string) []string { l[4], l[5] = l[5], l[4]; return l }, 1,
			"record 6 (line 5): comes before record 5 — reordered"},
		{"not json", func(l []string) []string { l[2] = "{oops"; return l }, 1, "line 3:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeAuditFile(t, 20, tt.tamper)
			code, out, errOut := runVigil(t, "audit", "verify", "--file", path)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d (stdout %q, stderr %q)", code, tt.wantCode, out, errOut)
			}
			if !strings.Contains(out+errOut, tt.want) {
				t.Errorf("output %q%q, want it to contain %q", out, errOut, tt.want)
			}
		})
	}
}

func TestAuditVerifyCmdNeedsFile(t *testing.T) {
	if code, _, _ := runVigil(t, "audit", "verify"); code == 0 {
		t.Error("verify without --file succeeded")
	}
	code, _, errOut := runVigil(t, "audit", "verify", "--file", filepath.Join(t.TempDir(), "missing.jsonl"))
	if code != 1 || !strings.Contains(errOut, "no such file") {
		t.Errorf("missing file: exit %d, %q", code, errOut)
	}
}

func TestAuditTailCmd(t *testing.T) {
	path := writeAuditFile(t, 30, nil)
	code, out, errOut := runVigil(t, "audit", "tail", "--file", path, "-n", "3")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 {
		t.Fatalf("want a header and 3 records, got:\n%s", out)
	}
	for _, col := range []string{"SEQ", "TIME", "ACTOR", "ACTION", "TOOL", "TARGET", "COMMAND", "OUTCOME", "APPROVAL"} {
		if !strings.Contains(lines[0], col) {
			t.Errorf("header %q lacks %s", lines[0], col)
		}
	}
	if !strings.HasPrefix(lines[1], "28 ") || !strings.HasPrefix(lines[3], "30 ") {
		t.Errorf("want records 28..30, oldest first:\n%s", out)
	}
	last := lines[3]
	for _, want := range []string{"2026-03-01T12:00:29Z", "U_BOSS", "approved", "control", "web1",
		"systemctl restart nginx --password [REDACTED:password]", "k3xq7m2a7p"} {
		if !strings.Contains(last, want) {
			t.Errorf("last row %q lacks %q", last, want)
		}
	}
	if strings.Contains(out, "hunter2") {
		t.Error("tail printed a secret")
	}

	code, out, _ = runVigil(t, "audit", "tail", "--file", path)
	if code != 0 || len(strings.Split(strings.TrimSpace(out), "\n")) != 21 {
		t.Errorf("default -n 20: exit %d,\n%s", code, out)
	}
}

// TestAuditFileFromJSON: a file written by hand in the documented format
// (as another tool might export it) verifies too.
func TestAuditFileFromJSON(t *testing.T) {
	var prev *audit.Record
	var b bytes.Buffer
	for i := range 3 {
		r := audit.Chain(prev, audit.Record{Time: time.Unix(int64(i), 0).UTC(), Actor: "vigil", Action: audit.Expired})
		line, _ := json.Marshal(r)
		b.Write(append(line, '\n'))
		prev = &r
	}
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	os.WriteFile(path, b.Bytes(), 0o600)
	// Without its head the log cannot show it was not cut short.
	if code, _, errOut := runVigil(t, "audit", "verify", "--file", path); code != 1 ||
		!strings.Contains(errOut, "head "+path+".head is missing") || !strings.Contains(errOut, "record 3 is the last known to exist") {
		t.Errorf("verify without a head: exit %d %q", code, errOut)
	}
	head, _ := json.Marshal(audit.Head{Seq: prev.Seq, Hash: prev.Hash})
	os.WriteFile(audit.HeadPath(path), head, 0o600)
	if code, out, errOut := runVigil(t, "audit", "verify", "--file", path); code != 0 || !strings.Contains(out, "ok: 3 records") ||
		!strings.Contains(errOut, "UNKEYED") {
		t.Errorf("exit %d %q %q", code, out, errOut)
	}
}

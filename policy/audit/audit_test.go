package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

var aT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func auditRecords(n int) []Record {
	var recs []Record
	var prev *Record
	for i := range n {
		r := Chain(prev, Record{
			Time:    aT0.Add(time.Duration(i) * time.Second),
			Actor:   "U_BOSS",
			Action:  Allow,
			Tool:    "read",
			Target:  "web1",
			Command: fmt.Sprintf("uptime # %d", i+1),
			Channel: "slack:C1",
			Thread:  "slack:C1:1.2",
			Outcome: "ok",
		})
		recs = append(recs, r)
		prev = &recs[len(recs)-1]
	}
	return recs
}

func TestAuditChain(t *testing.T) {
	recs := auditRecords(3)
	for i, r := range recs {
		if r.Seq != int64(i+1) || r.Hash != r.ComputeHash() || len(r.Hash) != 64 {
			t.Errorf("record %d: %+v", i, r)
		}
		if i > 0 && r.PrevHash != recs[i-1].Hash {
			t.Errorf("record %d does not link", i)
		}
	}
	if recs[0].PrevHash != "" {
		t.Error("first record has a previous hash")
	}
	if err := VerifyChain(recs); err != nil {
		t.Fatal(err)
	}
	if err := VerifyChain(nil); err != nil {
		t.Errorf("empty chain: %v", err)
	}

	r := Chain(nil, Record{Action: Denied, Command: "curl -u admin:hunter2 x", Reason: "password=hunter2",
		Outcome: "token=abc123", Target: "postgres://a:b@c"})
	if s := fmt.Sprint(r); strings.Contains(s, "hunter2") || strings.Contains(s, "abc123") || strings.Contains(s, ":b@") {
		t.Errorf("secret in the chain: %+v", r)
	}
}

// TestAuditHashCoversEveryField changes each field in turn; every change
// but one to Hash itself must change the hash.
func TestAuditHashCoversEveryField(t *testing.T) {
	base := auditRecords(2)[1]
	v := reflect.ValueOf(&base).Elem()
	for i := range v.NumField() {
		name := v.Type().Field(i).Name
		if name == "Hash" {
			continue
		}
		r := base
		f := reflect.ValueOf(&r).Elem().Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString(f.String() + "x")
		case reflect.Int64:
			f.SetInt(f.Int() + 1)
		default:
			r.Time = r.Time.Add(time.Nanosecond)
		}
		if r.ComputeHash() == base.Hash {
			t.Errorf("field %s is not covered by the hash", name)
		}
	}
	// The same instant in another zone is the same record.
	r := base
	r.Time = r.Time.In(time.FixedZone("X", 3600))
	if r.ComputeHash() != base.Hash {
		t.Error("hash depends on the time zone")
	}
	// Boundaries are unambiguous.
	a, b := base, base
	a.Actor, a.Tool = "ab", "c"
	b.Actor, b.Tool = "a", "bc"
	if a.ComputeHash() == b.ComputeHash() {
		t.Error("field boundaries are ambiguous")
	}
}

func TestAuditJSONRoundTrip(t *testing.T) {
	r := Chain(nil, Record{Time: time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.FixedZone("CET", 3600)), Actor: "a", Action: Executed})
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back Record
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if back.ComputeHash() != r.Hash {
		t.Errorf("hash changed over JSON: %s", raw)
	}
}

func TestAuditVerifyDetectsTampering(t *testing.T) {
	tests := []struct {
		name      string
		tamper    func([]Record) []Record
		wantIndex int
		wantSeq   int64
		wantWord  string
	}{
		{"edited", func(r []Record) []Record { r[4].Command = "rm -rf /"; return r }, 4, 5, "hash mismatch — edited"},
		{"edited and rehashed", func(r []Record) []Record {
			r[4].Command = "rm -rf /"
			r[4].Hash = r[4].ComputeHash()
			return r
		}, 5, 6, "does not link to record 5"},
		{"deleted", func(r []Record) []Record { return append(r[:4], r[5:]...) }, 4, 6, "record 5 is missing — deleted"},
		{"several deleted", func(r []Record) []Record { return append(r[:2], r[6:]...) }, 2, 7, "records 3 to 6 are missing — deleted"},
		{"first deleted", func(r []Record) []Record { return r[1:] }, 0, 2, "deleted from the start"},
		{"reordered", func(r []Record) []Record { r[3], r[4] = r[4], r[3]; return r }, 3, 5, "reordered"},
		{"moved to the end", func(r []Record) []Record {
			moved := r[2]
			return append(append(r[:2:2], r[3:]...), moved)
		}, 2, 4, "reordered"},
		{"duplicated", func(r []Record) []Record { return append(r[:5:5], r[4:]...) }, 5, 5, "reordered"},
		{"renumbered after a delete", func(r []Record) []Record {
			out := append(r[:4:4], r[5:]...)
			for i := 4; i < len(out); i++ {
				out[i].Seq--
				out[i].Hash = out[i].ComputeHash()
			}
			return out
		}, 4, 5, "does not link"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs := tt.tamper(auditRecords(10))
			err := VerifyChain(recs)
			var ce *ChainError
			if !errors.As(err, &ce) || !errors.Is(err, ErrChain) {
				t.Fatalf("VerifyChain = %v, want a *ChainError", err)
			}
			if ce.Index != tt.wantIndex || ce.Seq != tt.wantSeq || !strings.Contains(ce.Reason, tt.wantWord) {
				t.Errorf("got %+v (%v), want index %d seq %d reason with %q", ce, err, tt.wantIndex, tt.wantSeq, tt.wantWord)
			}
		})
	}
}

func TestAuditVerifySegment(t *testing.T) {
	recs := auditRecords(10)
	if err := VerifySegment(recs[4:]); err != nil {
		t.Errorf("segment: %v", err)
	}
	if err := VerifyChain(recs[4:]); err == nil {
		t.Error("VerifyChain accepted a chain that does not start at 1")
	}
	seg := append([]Record(nil), recs[4:]...)
	seg[2].Outcome = "failed"
	if err := VerifySegment(seg); err == nil {
		t.Error("edited segment accepted")
	}
}

func TestAuditFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	f, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			for j := range 5 {
				if err := f.Write(Record{Time: aT0, Actor: fmt.Sprintf("U%d", i), Action: Allow, Tool: "read", Outcome: fmt.Sprint(j)}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Write(Record{Action: Allow}); err == nil {
		t.Error("write after Close succeeded")
	}

	// Reopening continues the chain.
	f, err = OpenFile(path, WithSync())
	if err != nil {
		t.Fatal(err)
	}
	r, err := f.Append(Record{Time: aT0, Actor: "vigil", Action: Expired, ApprovalID: "abcdefghij"})
	if err != nil || r.Seq != 101 {
		t.Fatalf("append after reopen: %+v, %v", r, err)
	}
	f.Close()

	n, err := VerifyFile(path)
	if err != nil || n != 101 {
		t.Fatalf("VerifyFile = %d, %v", n, err)
	}
	recs, err := ReadFile(path)
	if err != nil || len(recs) != 101 || recs[100] != r {
		t.Fatalf("ReadFile: %d records, %v", len(recs), err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
}

// writeAuditLines writes recs as an audit file, after tamper has had its way
// with the lines.
func writeAuditLines(t *testing.T, recs []Record, tamper func([]string) []string) string {
	t.Helper()
	var lines []string
	for _, r := range recs {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	if tamper != nil {
		lines = tamper(lines)
	}
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The head vigil wrote before the lines were tampered with.
	if len(recs) > 0 {
		writeHeadFile(t, path, (*Keyring)(nil).HeadOf(recs[len(recs)-1]))
	}
	return path
}

func writeHeadFile(t *testing.T, path string, h Head) {
	t.Helper()
	b, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(HeadPath(path), append(b, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestAuditFileTampering(t *testing.T) {
	tests := []struct {
		name   string
		tamper func([]string) []string
		want   string
	}{
		{"intact", nil, ""},
		{"edited", func(l []string) []string {
			l[16] = strings.Replace(l[16], "uptime", "reboot", 1)
			return l
		}, "record 17 (line 17): hash mismatch — edited"},
		{"deleted", func(l []string) []string { return append(l[:9], l[10:]...) }, "record 11 (line 10): record 10 is missing — deleted"},
		{"reordered", func(l []string) []string { l[4], l[5] = l[5], l[4]; return l }, "record 6 (line 5): comes before record 5 — reordered"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeAuditLines(t, auditRecords(20), tt.tamper)
			n, err := VerifyFile(path)
			if tt.want == "" {
				if err != nil || n != 20 {
					t.Fatalf("VerifyFile = %d, %v", n, err)
				}
				return
			}
			if err == nil || err.Error() != tt.want {
				t.Fatalf("VerifyFile error %v, want %q", err, tt.want)
			}
		})
	}
}

func TestAuditFileDamage(t *testing.T) {
	recs := auditRecords(3)
	good := writeAuditLines(t, recs, nil)
	raw, _ := os.ReadFile(good)

	torn := filepath.Join(t.TempDir(), "torn.jsonl")
	os.WriteFile(torn, raw[:len(raw)-10], 0o600)
	if _, err := OpenFile(torn); err == nil || !strings.Contains(err.Error(), "incomplete") {
		t.Errorf("open torn file: %v", err)
	}
	if _, err := ReadFile(torn); err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("read torn file: %v", err)
	}

	for name, tamper := range map[string]func([]string) []string{
		"unknown field": func(l []string) []string { l[1] = strings.Replace(l[1], `{"seq"`, `{"extra":1,"seq"`, 1); return l },
		"not json":      func(l []string) []string { l[1] = "garbage"; return l },
		"empty line":    func(l []string) []string { l[1] = ""; return l },
	} {
		path := writeAuditLines(t, recs, tamper)
		if _, err := ReadFile(path); err == nil || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("%s: %v, want an error naming line 2", name, err)
		}
	}

	// A long last line is found by reading backwards in blocks.
	big := Chain(&recs[2], Record{Action: Allow, Command: strings.Repeat("x", 10000)})
	path := writeAuditLines(t, append(recs, big), nil)
	f, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := f.Append(Record{Action: Allow}); err != nil || r.Seq != 5 || r.PrevHash != big.Hash {
		t.Errorf("after a long line: %+v %v", r, err)
	}
	f.Close()
	if _, err := VerifyFile(path); err != nil {
		t.Error(err)
	}
}

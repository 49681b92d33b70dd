package audit

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func rec(i int) Record {
	return Record{Time: time.Date(2026, 1, 2, 3, 4, 5, i, time.UTC), Actor: "alice", Action: Executed,
		Tool: "control", Target: "web1", Command: "systemctl restart nginx", ApprovalID: "a1", Outcome: "ok"}
}

// A spool file keeps waiting records across a restart, in order, and
// Drop takes the oldest off the file as well.
func TestSpoolSurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit-outbox.jsonl")
	s, err := OpenSpool(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if err := s.Push(rec(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Drop(2); err != nil {
		t.Fatal(err)
	}
	if err := s.Push(rec(5)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = OpenSpool(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := s.Peek(100)
	if len(got) != 4 || s.Len() != 4 {
		t.Fatalf("reopened spool holds %d records, want 4", len(got))
	}
	for i, r := range got {
		if !SameRecord(r, rec(i+2)) {
			t.Fatalf("record %d after restart is %+v, want %+v", i, r, rec(i+2))
		}
		if r.Seq != 0 || r.Hash != "" || r.PrevHash != "" {
			t.Fatalf("a spooled record carries chain fields: %+v", r)
		}
	}
	if err := s.Drop(4); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Size() != 0 {
		t.Fatalf("an emptied spool file should be empty: %v %v", st, err)
	}
}

// A spool never writes a secret to disk: records are redacted (Prepare)
// before they wait, as the chain would redact them.
func TestSpoolHoldsPreparedRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "outbox")
	s, err := OpenSpool(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := rec(1)
	r.Command = "mysql -u root -pHunter2Secret99 -e 'select 1'"
	if err := s.Push(Prepare(r)); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "Hunter2Secret99") {
		t.Fatalf("the spool file holds the secret:\n%s", raw)
	}
}

// A file whose last line was cut off is refused, naming the line and what
// to do, rather than silently losing or mangling that record.
func TestSpoolRefusesIncompleteLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "outbox")
	if err := os.WriteFile(path, []byte(`{"seq":0,"time":"2026-01-02T03:04:05Z","actor":"a","action":"allow","prev_hash":"","hash":""}`+"\n"+`{"seq":0,"ti`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := OpenSpool(path)
	if err == nil || !strings.Contains(err.Error(), "line 2 is incomplete") {
		t.Fatalf("OpenSpool = %v; want a refusal naming line 2", err)
	}
	if err := os.WriteFile(path, []byte(`{"bogus":1}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenSpool(path); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("OpenSpool of an unknown field = %v; want an error naming line 1", err)
	}
}

// Pushes from many goroutines all land, each exactly once.
func TestSpoolConcurrentPush(t *testing.T) {
	s, err := OpenSpool(filepath.Join(t.TempDir(), "outbox"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.Push(rec(i)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if err := s.Drop(10); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(raw), "\n"); n != 40 || s.Len() != 40 {
		t.Fatalf("file has %d lines, memory %d records; want 40", n, s.Len())
	}
}

// SameRecord ignores the chain fields and nothing else.
func TestSameRecord(t *testing.T) {
	a := rec(1)
	chained := Chain(&Record{Seq: 7, Hash: "abc"}, a)
	if !SameRecord(a, chained) {
		t.Fatal("a record and its chained form differ")
	}
	b := rec(1)
	b.Time = b.Time.Add(time.Nanosecond)
	if SameRecord(a, b) {
		t.Fatal("records a nanosecond apart are the same")
	}
	c := rec(1)
	c.Outcome = "failed"
	if SameRecord(a, c) {
		t.Fatal("records with different outcomes are the same")
	}
}

// Whatever a spool file holds, opening it never panics; what it accepts
// survives being written back and read again unchanged.
func FuzzOpenSpool(f *testing.F) {
	f.Add([]byte(`{"seq":0,"time":"2026-01-02T03:04:05Z","actor":"a","action":"allow","prev_hash":"","hash":""}` + "\n"))
	f.Add([]byte("{}\n{}\n"))
	f.Add([]byte(`{"seq":0,"ti`))
	f.Add([]byte("\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "outbox")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := OpenSpool(path)
		if err != nil {
			return
		}
		recs := s.Peek(1 << 20)
		if err := s.Drop(0); err != nil { // rewrites the file from memory
			t.Fatal(err)
		}
		s.Close()
		again, err := OpenSpool(path)
		if err != nil {
			t.Fatalf("a spool vigil wrote does not open: %v", err)
		}
		defer again.Close()
		back := again.Peek(1 << 20)
		if len(back) != len(recs) {
			t.Fatalf("%d records became %d", len(recs), len(back))
		}
		for i := range recs {
			if !SameRecord(recs[i], back[i]) {
				t.Fatalf("record %d changed: %+v -> %+v", i, recs[i], back[i])
			}
		}
	})
}

// BenchmarkSpoolPush is the cost of keeping one record while the store is
// away: in memory, and in a file (one write and one fsync per record).
func BenchmarkSpoolPush(b *testing.B) {
	b.Run("memory", func(b *testing.B) {
		s := NewSpool()
		for i := 0; b.Loop(); i++ {
			_ = s.Push(rec(i))
		}
	})
	b.Run("file", func(b *testing.B) {
		s, err := OpenSpool(filepath.Join(b.TempDir(), "outbox"))
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		for i := 0; b.Loop(); i++ {
			if err := s.Push(rec(i)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func testKey(t *testing.T, seed string) *Key {
	t.Helper()
	k, err := ParseKey([]byte(strings.Repeat(seed, 64/len(seed)+1)[:64]))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// writeKeyed writes n records through File sealed with keys and returns the
// file's path.
func writeKeyed(t *testing.T, keys *Keyring, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	f, err := OpenFile(path, WithKeys(keys))
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := f.Write(Record{Time: aT0.Add(time.Duration(i) * time.Second), Actor: "U_ALICE", Action: Allow,
			Tool: "read", Target: "web1", Command: fmt.Sprintf("uptime # %d", i+1), Outcome: "ok"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func readLines(t *testing.T, path string) []Record {
	t.Helper()
	recs, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func rewrite(t *testing.T, path string, recs []Record) {
	t.Helper()
	var b strings.Builder
	for _, r := range recs {
		line, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestParseKey(t *testing.T) {
	if _, err := ParseKey([]byte("short")); err == nil || !strings.Contains(err.Error(), "at least 32") {
		t.Errorf("short key: %v", err)
	}
	a, b := testKey(t, "a"), testKey(t, "a")
	if a.ID != b.ID || !strings.HasPrefix(a.ID, "k") || len(a.ID) != 13 {
		t.Errorf("key IDs %q, %q: want the same 13-character ID for the same key", a.ID, b.ID)
	}
	if c := testKey(t, "c"); c.ID == a.ID {
		t.Error("two keys share an ID")
	}
	if strings.Contains(fmt.Sprint(a), "aaaa") || strings.Contains(fmt.Sprintf("%+v", *a), "aaaa") && !strings.Contains(a.String(), "audit key") {
		t.Errorf("a key prints its secret: %v", a)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "key")
	os.WriteFile(path, []byte(strings.Repeat("z", 64)+"\n"), 0o644)
	k, warn, err := LoadKeyFile(path)
	if err != nil || k.ID != testKey(t, "z").ID || !strings.Contains(warn, "readable by others") {
		t.Errorf("LoadKeyFile = %v, %q, %v", k, warn, err)
	}
	if _, _, err := LoadKeyFile(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing key file loaded")
	}
}

// The attack that passed an unkeyed chain: edit a record's actor and
// recompute every later hash. With a key, the rewrite is found at the
// edited record whichever way the attacker seals it.
func TestKeyedChainRefusesRewrite(t *testing.T) {
	key := testKey(t, "k")
	keys := NewKeyring(key)
	path := writeKeyed(t, keys, 10)
	if rep, err := CheckFile(path, keys); err != nil || rep.Records != 10 || !rep.Keyed() || rep.Unkeyed != 0 {
		t.Fatalf("intact keyed file: %+v, %v", rep, err)
	}
	if _, err := CheckFile(path, nil); err == nil || !strings.Contains(err.Error(), "sealed with key "+key.ID+", which verify was not given") {
		t.Fatalf("verify without the key: %v", err)
	}

	forged := testKey(t, "f") // the attacker's own key
	for name, reseal := range map[string]*Keyring{"unkeyed": nil, "another key": NewKeyring(forged)} {
		t.Run(name, func(t *testing.T) {
			recs := readLines(t, path)
			recs[4].Actor = "U_MALLORY"
			var prev *Record
			if name == "another key" {
				recs[4].KeyID = forged.ID
			}
			for i := 4; i < len(recs); i++ {
				prev = &recs[i-1]
				recs[i].PrevHash = prev.Hash
				if reseal == nil {
					recs[i].KeyID = ""
				} else {
					recs[i].KeyID = forged.ID
				}
				recs[i].Hash = recs[i].mac(reseal.Current())
			}
			p := filepath.Join(t.TempDir(), "audit.jsonl")
			rewrite(t, p, recs)
			writeHeadFile(t, p, reseal.HeadOf(recs[len(recs)-1]))
			_, err := CheckFile(p, keys)
			var ce *ChainError
			if !errors.As(err, &ce) || ce.Seq != 5 || ce.Line != 5 {
				t.Fatalf("CheckFile after the rewrite = %v; want record 5 named", err)
			}
			// The same rewrite of an unkeyed chain passes the chain check:
			// what the key is for.
			if name == "unkeyed" {
				u := make([]Record, len(recs))
				var up *Record
				for i, r := range recs {
					r.KeyID, r.Seq, r.PrevHash, r.Hash = "", 0, "", ""
					u[i] = Chain(up, r)
					up = &u[i]
				}
				if err := VerifyChain(u); err != nil {
					t.Fatalf("unkeyed rewrite: %v", err)
				}
			}
		})
	}
}

// Cutting records off the end: the head says how far the log reaches.
func TestTruncationIsDetected(t *testing.T) {
	keys := NewKeyring(testKey(t, "k"))
	for _, tc := range []struct {
		name   string
		cut    func(t *testing.T, path string)
		reason string
		last   int64
	}{
		{"last three records cut", func(t *testing.T, path string) {
			rewrite(t, path, readLines(t, path)[:7])
		}, "the log ends at record 7 but its head says record 10 exists: records 8 to 10 were cut off", 10},
		{"every record cut", func(t *testing.T, path string) {
			os.WriteFile(path, nil, 0o600)
		}, "the log is empty but its head says record 10 exists", 10},
		{"head removed", func(t *testing.T, path string) {
			rewrite(t, path, readLines(t, path)[:7])
			os.Remove(HeadPath(path))
		}, "is missing, so records cut off the end cannot be told from a log that ends there; record 7 is the last in the file", 7},
		{"head rewritten unsealed", func(t *testing.T, path string) {
			recs := readLines(t, path)[:7]
			rewrite(t, path, recs)
			writeHeadFile(t, path, Head{Seq: 7, Hash: recs[6].Hash})
		}, "the head is not sealed though the records are", 7},
		{"head rewritten with a copied MAC", func(t *testing.T, path string) {
			recs := readLines(t, path)[:7]
			rewrite(t, path, recs)
			writeHeadFile(t, path, Head{Seq: 7, Hash: recs[6].Hash, KeyID: recs[6].KeyID, MAC: recs[6].Hash})
		}, "the head's MAC does not match", 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeKeyed(t, keys, 10)
			tc.cut(t, path)
			_, err := CheckFile(path, keys)
			var he *HeadError
			if !errors.As(err, &he) || !strings.Contains(he.Error(), tc.reason) || he.LastKnown != tc.last || !errors.Is(err, ErrChain) {
				t.Fatalf("CheckFile = %v; want a head error containing %q, last known record %d", err, tc.reason, tc.last)
			}
			// vigil refuses to append to a log cut short of its head.
			if tc.name == "last three records cut" || tc.name == "head removed" {
				if _, err := OpenFile(path, WithKeys(keys)); err == nil {
					t.Fatal("OpenFile continued a log cut short")
				}
			}
		})
	}
}

// Rotation: a new key starts with a key_rotated record; verify needs every
// key, and refuses the old key after the chain moved on.
func TestKeyRotation(t *testing.T) {
	oldKey, newKey := testKey(t, "o"), testKey(t, "n")
	path := writeKeyed(t, NewKeyring(oldKey), 3)

	var notices []string
	f, err := OpenFile(path, WithKeys(NewKeyring(newKey, oldKey)), WithNotice(func(s string) { notices = append(notices, s) }))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Write(Record{Time: aT0, Actor: "U_BOB", Action: Allow, Tool: "read"}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	recs := readLines(t, path)
	if len(recs) != 5 || recs[3].Action != KeyRotated || recs[3].KeyID != newKey.ID ||
		recs[3].Reason != "audit key changed from "+oldKey.ID+" to "+newKey.ID || len(notices) != 1 {
		t.Fatalf("after rotation: %+v, notices %q", recs, notices)
	}
	rep, err := CheckFile(path, NewKeyring(newKey, oldKey))
	if err != nil || fmt.Sprint(rep.KeyIDs) != fmt.Sprint([]string{oldKey.ID, newKey.ID}) {
		t.Fatalf("CheckFile with both keys: %+v, %v", rep, err)
	}
	if _, err := CheckFile(path, NewKeyring(newKey)); err == nil || !strings.Contains(err.Error(), "record 1 (line 1): sealed with key "+oldKey.ID) {
		t.Fatalf("CheckFile without the old key: %v", err)
	}

	// Someone holding only the old (retired, perhaps leaked) key appends
	// a record sealed with it.
	forged := Record{Time: aT0, Actor: "U_MALLORY", Action: Approved}
	forged = NewKeyring(oldKey).seal(&recs[4], forged)
	rewrite(t, path, append(recs, forged))
	writeHeadFile(t, path, NewKeyring(oldKey).HeadOf(forged))
	if _, err := CheckFile(path, NewKeyring(newKey, oldKey)); err == nil || !strings.Contains(err.Error(), "which the chain left at record 4 — written with an old key") {
		t.Fatalf("a record under the retired key: %v", err)
	}

	// A key change with no key_rotated record is an insertion.
	recs2 := readLines(t, writeKeyed(t, NewKeyring(oldKey), 2))
	sneaky := NewKeyring(newKey).seal(&recs2[1], Record{Time: aT0, Actor: "x", Action: Allow})
	if _, err := Verify(append(recs2, sneaky), VerifyOptions{Keys: NewKeyring(newKey, oldKey), FromStart: true}); err == nil ||
		!strings.Contains(err.Error(), "without a key_rotated record") {
		t.Fatalf("key change without rotation record: %v", err)
	}
}

// A log written before keys (and heads) existed takes a key: its head is
// started, a key_rotated record from none follows, and verify reports the
// unkeyed records.
func TestUnkeyedLogTakesAKey(t *testing.T) {
	path := writeAuditLines(t, auditRecords(4), nil)
	os.Remove(HeadPath(path)) // written before heads existed
	key := testKey(t, "k")
	var notices []string
	f, err := OpenFile(path, WithKeys(NewKeyring(key)), WithNotice(func(s string) { notices = append(notices, s) }))
	if err != nil {
		t.Fatal(err)
	}
	f.Write(Record{Time: aT0, Actor: "U_BOB", Action: Allow})
	f.Close()
	rep, err := CheckFile(path, NewKeyring(key))
	if err != nil || rep.Unkeyed != 4 || rep.Records != 6 || !rep.Keyed() || len(notices) != 2 {
		t.Fatalf("CheckFile: %+v, %v; notices %q", rep, err, notices)
	}
	recs := readLines(t, path)
	if recs[4].Reason != "audit key changed from none to "+key.ID {
		t.Errorf("rotation record: %+v", recs[4])
	}
	// An unkeyed record after keyed ones is a rewrite without the key.
	tail := Chain(&recs[5], Record{Time: aT0, Actor: "U_MALLORY", Action: Approved})
	if _, err := Verify(append(recs, tail), VerifyOptions{Keys: NewKeyring(key), FromStart: true}); err == nil ||
		!strings.Contains(err.Error(), "sealed without a key after records sealed with one") {
		t.Fatalf("unkeyed after keyed: %v", err)
	}
	// A keyed log whose head is lost is not continued.
	os.Remove(HeadPath(path))
	if _, err := OpenFile(path, WithKeys(NewKeyring(key))); err == nil || !strings.Contains(err.Error(), "head") {
		t.Fatalf("keyed log without head opened: %v", err)
	}
}

// A key change inside one running replica's chain (the store) also
// rotates, and the head follows the last record.
func TestKeyringChainRotatesAndSealsHead(t *testing.T) {
	a, b := testKey(t, "a"), testKey(t, "b")
	ka, kb := NewKeyring(a), NewKeyring(b, a)
	var recs []Record
	add := func(k *Keyring, r Record) {
		var prev *Record
		if n := len(recs); n > 0 {
			prev = &recs[n-1]
		}
		recs = append(recs, k.Chain(prev, r)...)
	}
	add(nil, Record{Time: aT0, Actor: "u", Action: Allow})
	add(ka, Record{Time: aT0, Actor: "u", Action: Allow})
	add(ka, Record{Time: aT0, Actor: "u", Action: Allow})
	add(kb, Record{Time: aT0, Actor: "u", Action: Allow})
	if len(recs) != 6 || recs[1].Action != KeyRotated || recs[4].Action != KeyRotated {
		t.Fatalf("chain: %+v", recs)
	}
	h := kb.HeadOf(recs[5])
	rep, err := Verify(recs, VerifyOptions{Keys: kb, FromStart: true, Head: &h, RequireHead: true})
	if err != nil || rep.AfterHead != 0 || rep.Unkeyed != 1 {
		t.Fatalf("Verify: %+v, %v", rep, err)
	}
	// A segment from the middle (a store's recent records) against the
	// store's head.
	if _, err := Verify(recs[3:], VerifyOptions{Keys: kb, Head: &h, RequireHead: true}); err != nil {
		t.Fatalf("segment: %v", err)
	}
	if _, err := Verify(recs[3:5], VerifyOptions{Keys: kb, Head: &h, RequireHead: true}); err == nil ||
		!strings.Contains(err.Error(), "the log ends at record 5 but its head says record 6 exists") {
		t.Fatalf("cut segment: %v", err)
	}
	if _, err := Verify(recs, VerifyOptions{Keys: kb, FromStart: true, RequireHead: true}); err == nil || !strings.Contains(err.Error(), "head is missing") {
		t.Fatalf("no head: %v", err)
	}
}

// A log sealed with a key this vigil does not hold is not continued: the
// old key missing from audit.previous_key_files, or a newer key.
func TestUnknownKeyIsNotContinued(t *testing.T) {
	a, b := testKey(t, "a"), testKey(t, "b")
	path := writeKeyed(t, NewKeyring(a), 2)
	if _, err := OpenFile(path, WithKeys(NewKeyring(b))); !errors.Is(err, ErrUnknownKey) || !strings.Contains(err.Error(), a.ID) {
		t.Fatalf("OpenFile with a keyring lacking %s: %v", a.ID, err)
	}
	if _, err := OpenFile(path); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("OpenFile without keys on a keyed log: %v", err)
	}
}

// The whole log rewritten without the key, head included: with the key
// given, verify does not take it for a log that never had one.
func TestUnsealedRewriteWithKeyGiven(t *testing.T) {
	key := testKey(t, "k")
	path := writeKeyed(t, NewKeyring(key), 4)
	recs := readLines(t, path)
	var prev *Record
	for i := range recs {
		r := recs[i]
		r.Seq, r.PrevHash, r.KeyID, r.Hash = 0, "", "", ""
		recs[i] = Chain(prev, r)
		prev = &recs[i]
	}
	rewrite(t, path, recs)
	writeHeadFile(t, path, (*Keyring)(nil).HeadOf(recs[3]))
	if _, err := CheckFile(path, NewKeyring(key)); err == nil || !strings.Contains(err.Error(), "not sealed, though verify was given audit keys") {
		t.Fatalf("CheckFile = %v", err)
	}
	if _, err := CheckFile(path, nil); err != nil {
		t.Fatalf("without keys the unkeyed chain verifies (and the CLI warns): %v", err)
	}
}

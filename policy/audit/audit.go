// Package audit keeps vigil's audit trail (SPEC P8, R4). It records
// decisions; it makes none. Every decision — allow, block, approval requested,
// approved, denied, expired, executed — becomes a record of who, what, where
// and when. Records form a chain: each carries the hash of the one before
// it, so editing, deleting or reordering a record breaks the chain at that
// record. With a key (keys.go) each hash is an HMAC, so nobody without the
// key can rewrite the chain after an edit either, and the head kept beside
// the log shows when records were cut off its end. Without a key the chain
// only proves the log is internally consistent.
//
// Records are redacted before they are hashed, so the chain never holds a
// secret a command printed.
package audit

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/vigilops/vigil/policy/redact"
)

// ErrChain is what every *ChainError matches with errors.Is.
var ErrChain = errors.New("audit chain broken")

// Action is what an audit record records.
type Action string

const (
	Allow             Action = "allow"
	Block             Action = "block"
	ApprovalRequested Action = "approval_requested"
	Approved          Action = "approved"
	Denied            Action = "denied"
	Expired           Action = "expired"
	Executed          Action = "executed"
	// Settled records how vigil closed an approval left "executing" by a
	// store outage or a crash: Outcome is "executed" (the call ran; its
	// result is known) or "failed" (vigil cannot tell whether it ran).
	Settled Action = "settled"
)

// Record is one decision. The JSON form is one line of an audit file;
// its field names are part of the file format.
type Record struct {
	// Seq numbers records from 1, without gaps.
	Seq  int64     `json:"seq"`
	Time time.Time `json:"time"`
	// Actor is who: the user who asked or decided, or "vigil" for the bot's
	// own decisions (expiry).
	Actor  string `json:"actor"`
	Action Action `json:"action"`
	// Tool, Target and Command are what, redacted.
	Tool    string `json:"tool,omitempty"`
	Target  string `json:"target,omitempty"`
	Command string `json:"command,omitempty"`
	// Channel (policy key) and Thread (thread key) are where.
	Channel    string `json:"channel,omitempty"`
	Thread     string `json:"thread,omitempty"`
	Outcome    string `json:"outcome,omitempty"`
	ApprovalID string `json:"approval_id,omitempty"`
	Reason     string `json:"reason,omitempty"`
	// Sandbox is how an executed command was confined ("landlock (ABI 7,
	// no network), bash", "none (why), bash"); "" when none ran.
	Sandbox string `json:"sandbox,omitempty"`
	// ActedAs is the identity an executed call used on its target when it
	// was not vigil's own ("k8s user alice, groups sre", "ssh user
	// alice"), and Identity the chat identity it was mapped from (the
	// person who asked, or who approved the change); "" otherwise.
	ActedAs  string `json:"acted_as,omitempty"`
	Identity string `json:"identity,omitempty"`
	// PrevHash is the previous record's Hash, "" for the first record.
	PrevHash string `json:"prev_hash"`
	// KeyID names the key whose HMAC Hash is; "" when the record is only
	// hashed (ComputeHash).
	KeyID string `json:"key_id,omitempty"`
	// Hash is the record's HMAC under key KeyID, or ComputeHash() when
	// there is no key.
	Hash string `json:"hash"`
}

// hashVersion and macVersion name the encodings ComputeHash and the HMAC
// use, so a future change of encoding cannot be confused with tampering.
const (
	hashVersion = "vigil-audit-v1"
	macVersion  = "vigil-audit-v2-hmac-sha256"
)

// ComputeHash is the hex SHA-256 of every field but Hash, each written as
// its length, a colon and its bytes, in a fixed order. Length prefixes keep
// field boundaries unambiguous; the time is in UTC with nanoseconds, which
// is exactly what survives a JSON round trip. It is the hash of a record
// sealed without a key.
func (r Record) ComputeHash() string {
	h := sha256.New()
	r.encode(h, hashVersion)
	return hex.EncodeToString(h.Sum(nil))
}

// mac is the record's hash under key k: HMAC-SHA256 of the same encoding
// under its own version label, key ID included; ComputeHash when k is nil.
func (r Record) mac(k *Key) string {
	if k == nil {
		return r.ComputeHash()
	}
	h := hmac.New(sha256.New, k.secret)
	r.encode(h, macVersion)
	return hex.EncodeToString(h.Sum(nil))
}

// encode writes the record's fields but Hash to h.
func (r Record) encode(h hash.Hash, version string) {
	put := func(s string) {
		h.Write(strconv.AppendInt(nil, int64(len(s)), 10))
		h.Write([]byte{':'})
		h.Write([]byte(s))
	}
	put(version)
	put(strconv.FormatInt(r.Seq, 10))
	put(r.Time.UTC().Format(time.RFC3339Nano))
	for _, s := range []string{r.Actor, string(r.Action), r.Tool, r.Target, r.Command,
		r.Channel, r.Thread, r.Outcome, r.ApprovalID, r.Reason, r.PrevHash} {
		put(s)
	}
	if r.Sandbox != "" {
		// Only when set, so records written before the field existed keep
		// their hashes.
		put("sandbox")
		put(r.Sandbox)
	}
	if r.ActedAs != "" || r.Identity != "" {
		// Likewise only when set.
		put("acted_as")
		put(r.ActedAs)
		put("identity")
		put(r.Identity)
	}
	if r.KeyID != "" {
		put("key_id")
		put(r.KeyID)
	}
}

// Chain makes r the record after prev (nil for the first record) in a
// chain without a key: it sets Seq and PrevHash, and Hash to ComputeHash.
// It redacts the free-text fields first (Prepare), so whatever a caller
// passes, no secret enters the chain. Keyring.Chain is the same with a key
// (and a rotation record when the key changed); every audit sink goes
// through one of them.
func Chain(prev *Record, r Record) Record {
	return (*Keyring)(nil).seal(prev, Prepare(r))
}

// Prepare redacts r's free-text fields (Target, Command, Outcome, Reason).
// Chain does it anyway; a record that waits to be chained (Spool) is
// prepared first, so it is stored redacted and compares equal to the
// record the chain holds.
func Prepare(r Record) Record {
	r.Target = redact.String(r.Target)
	r.Command = redact.String(r.Command)
	r.Outcome = redact.String(r.Outcome)
	r.Reason = redact.String(r.Reason)
	return r
}

// ChainError names the first record where a chain breaks, and how.
type ChainError struct {
	// Index is the record's position in the checked slice, from 0.
	Index int
	// Seq is the sequence number the record claims.
	Seq int64
	// Line is the record's line in an audit file; 0 when not from a file.
	Line int
	// Reason says what is wrong and what that means ("hash mismatch —
	// edited").
	Reason string
}

func (e *ChainError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("record %d (line %d): %s", e.Seq, e.Line, e.Reason)
	}
	return fmt.Sprintf("record %d (position %d): %s", e.Seq, e.Index+1, e.Reason)
}

func (e *ChainError) Unwrap() error { return ErrChain }

// HeadError is a log that does not reach its head: records cut off its
// end, a head that was replaced, or no head at all. LastKnown is the last
// record known to exist.
type HeadError struct {
	LastKnown int64
	Reason    string
}

func (e *HeadError) Error() string { return e.Reason }

func (e *HeadError) Unwrap() error { return ErrChain }

// VerifyOptions says what Verify checks beyond the links of the chain.
type VerifyOptions struct {
	// Keys verifies records sealed with a key; nil verifies only records
	// sealed without one.
	Keys *Keyring
	// FromStart: the records are a whole log, from record 1, rather than
	// consecutive records from its middle (a store's recent records).
	FromStart bool
	// Head, when set, is the head the log must reach. RequireHead makes a
	// missing head an error.
	Head        *Head
	RequireHead bool
}

// Report is what Verify found.
type Report struct {
	Records int
	// Last is the last record's sequence number.
	Last int64
	// KeyIDs are the keys that sealed records, in the order the chain
	// took them up; empty for a chain without a key.
	KeyIDs []string
	// Unkeyed counts records sealed without a key (older records of a
	// chain that has a key since).
	Unkeyed int
	// Head is the head checked, nil for none; AfterHead counts records
	// after it (vigil stopped between writing a record and its head).
	Head      *Head
	AfterHead int64
}

// Keyed reports whether the newest records are sealed with a key.
func (r Report) Keyed() bool { return len(r.KeyIDs) > 0 }

// VerifyChain checks a whole chain sealed without a key, from its first
// record: every hash matches its record, sequence numbers run 1, 2, 3… and
// every record links to the one before it. The error is a *ChainError for
// the first bad record.
func VerifyChain(recs []Record) error {
	_, err := Verify(recs, VerifyOptions{FromStart: true})
	return err
}

// VerifySegment checks consecutive records taken from the middle of a chain
// sealed without a key (such as RecentAudit's): the same checks, except
// that the first record need not be record 1.
func VerifySegment(recs []Record) error {
	_, err := Verify(recs, VerifyOptions{})
	return err
}

// Verify checks records as opt says. A broken chain is a *ChainError
// naming the first bad record; a log that does not reach its head is a
// *HeadError naming the last record known to exist.
func Verify(recs []Record, opt VerifyOptions) (Report, error) {
	rep := Report{Records: len(recs), Head: opt.Head}
	keyed := false
	retired := map[string]int64{} // key ID -> the record where the chain left it
	for i, r := range recs {
		bad := func(format string, args ...any) (Report, error) {
			return rep, &ChainError{Index: i, Seq: r.Seq, Reason: fmt.Sprintf(format, args...)}
		}
		if r.KeyID == "" {
			if keyed {
				return bad("sealed without a key after records sealed with one — rewritten without the key")
			}
			if r.Hash != r.ComputeHash() {
				return bad("hash mismatch — edited")
			}
			rep.Unkeyed++
		} else {
			k := opt.Keys.key(r.KeyID)
			if k == nil {
				return bad("sealed with key %s, which verify was not given (it has: %s); give every key the log was "+
					"sealed with: audit.key_file or VIGIL_AUDIT_KEY, and audit.previous_key_files", r.KeyID, keyNames(opt.Keys.IDs()))
			}
			if !hmac.Equal([]byte(r.Hash), []byte(r.mac(k))) {
				return bad("MAC mismatch — edited")
			}
			if at, ok := retired[r.KeyID]; ok {
				return bad("sealed with key %s, which the chain left at record %d — written with an old key", r.KeyID, at)
			}
			keyed = true
			if n := len(rep.KeyIDs); n == 0 || rep.KeyIDs[n-1] != r.KeyID {
				rep.KeyIDs = append(rep.KeyIDs, r.KeyID)
			}
		}
		if i == 0 {
			if opt.FromStart && (r.Seq != 1 || r.PrevHash != "") {
				return bad("the chain starts at record %d, not 1 — records deleted from the start", r.Seq)
			}
			continue
		}
		prev := recs[i-1]
		want := prev.Seq + 1
		switch {
		case r.Seq <= prev.Seq:
			return bad("comes after record %d — reordered", prev.Seq)
		case r.Seq > want:
			for _, later := range recs[i+1:] {
				if later.Seq >= want && later.Seq < r.Seq {
					return bad("comes before record %d — reordered", later.Seq)
				}
			}
			if r.Seq-1 == want {
				return bad("record %d is missing — deleted", want)
			}
			return bad("records %d to %d are missing — deleted", want, r.Seq-1)
		case r.PrevHash != prev.Hash:
			return bad("does not link to record %d — a record before it was replaced or deleted", prev.Seq)
		}
		if r.KeyID != prev.KeyID {
			if r.Action != KeyRotated {
				return bad("moves from key %s to key %s without a key_rotated record — inserted", orNone(prev.KeyID), orNone(r.KeyID))
			}
			if prev.KeyID != "" {
				retired[prev.KeyID] = r.Seq
			}
		}
	}
	if n := len(recs); n > 0 {
		rep.Last = recs[n-1].Seq
	}
	return rep, checkHead(recs, opt, &rep)
}

func orNone(id string) string {
	if id == "" {
		return "none"
	}
	return id
}

// checkHead checks that recs reach opt.Head.
func checkHead(recs []Record, opt VerifyOptions, rep *Report) error {
	last := rep.Last
	lastKnown := func() string {
		if len(recs) == 0 {
			return "the log is empty"
		}
		return fmt.Sprintf("record %d is the last in the log", last)
	}
	h := opt.Head
	if h == nil {
		if opt.RequireHead {
			return &HeadError{LastKnown: last, Reason: "the head is missing, so records cut off the end cannot be told " +
				"from a log that ends there; " + lastKnown()}
		}
		return nil
	}
	if err := opt.Keys.checkHead(*h); err != nil {
		return &HeadError{LastKnown: last, Reason: err.Error() + "; " + lastKnown()}
	}
	switch {
	case rep.Keyed() && h.KeyID == "":
		return &HeadError{LastKnown: last, Reason: "the head is not sealed though the records are — replaced; " + lastKnown()}
	case h.KeyID == "" && len(opt.Keys.IDs()) > 0:
		// A log rewritten whole without the key, head included, would
		// otherwise pass for one that never had a key.
		return &HeadError{LastKnown: last, Reason: "the chain and its head are not sealed, though verify was given audit keys (" +
			keyNames(opt.Keys.IDs()) + "): rewritten without the key, or no vigil has run with a key on this log yet; " + lastKnown()}
	}
	if h.Seq > last {
		if len(recs) == 0 {
			return &HeadError{LastKnown: h.Seq, Reason: fmt.Sprintf("the log is empty but its head says record %d exists: "+
				"records 1 to %d were cut off", h.Seq, h.Seq)}
		}
		return &HeadError{LastKnown: h.Seq, Reason: fmt.Sprintf("the log ends at record %d but its head says record %d exists: "+
			"records %d to %d were cut off", last, h.Seq, last+1, h.Seq)}
	}
	if len(recs) > 0 && h.Seq >= recs[0].Seq {
		if r := recs[h.Seq-recs[0].Seq]; r.Hash != h.Hash {
			return &HeadError{LastKnown: h.Seq, Reason: fmt.Sprintf("record %d is not the record the head names — replaced", h.Seq)}
		}
	}
	rep.AfterHead = last - h.Seq
	return nil
}

// File appends audit records to a file as JSON lines. Each record is one
// write(2) on a file opened O_APPEND, so a record is never interleaved with
// another; a mutex keeps the chain in order within the process. One process
// should write a given file: two writers would each continue their own
// chain.
//
// After each record the file's head (HeadPath: the last record's sequence
// number and hash, sealed with the key) is replaced, so verify can tell a
// log cut short from one that ends there.
type File struct {
	mu       sync.Mutex
	f        *os.File
	path     string
	last     *Record
	sync     bool
	keys     *Keyring
	noticeFn func(string)
	// broken is set after a failed write, which may have left part of a
	// record in the file; nothing more is appended after that.
	broken error
}

// FileOption configures OpenFile.
type FileOption func(*File)

// WithSync makes every Write fsync the file (and its head) before
// returning: a record survives a power cut, at the price of disk flushes
// per decision.
func WithSync() FileOption { return func(f *File) { f.sync = true } }

// WithKeys seals records with the keyring's current key (nil: records are
// only hashed).
func WithKeys(k *Keyring) FileOption { return func(f *File) { f.keys = k } }

// WithNotice receives what OpenFile did that an operator should hear of: a
// head started for a log written before heads existed, a key rotation.
func WithNotice(fn func(string)) FileOption { return func(f *File) { f.noticeFn = fn } }

// OpenFile opens (creating it, mode 0600) the audit file at path for
// appending. It reads the last record so new records continue the chain,
// and checks it against the head: a file cut short of its head, a file
// whose last line is incomplete, or a sealed log without a head is refused
// rather than repaired: an audit log is evidence, not something to fix up
// silently. When the key changed since the last record, a key_rotated
// record is appended at once.
func OpenFile(path string, opts ...FileOption) (*File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open audit file: %w", err)
	}
	af := &File{f: f, path: path}
	for _, o := range opts {
		o(af)
	}
	if err := af.open(); err != nil {
		f.Close()
		return nil, fmt.Errorf("audit file %s: %w", path, err)
	}
	return af, nil
}

func (f *File) notice(msg string) {
	if f.noticeFn != nil {
		f.noticeFn(msg)
	}
}

// open reads the last record, checks it against the head and rotates the
// key if needed.
func (f *File) open() error {
	last, err := readLastRecord(f.f)
	if err != nil {
		return err
	}
	f.last = last
	head, err := readHead(HeadPath(f.path))
	switch {
	case errors.Is(err, ErrNoHead) && last == nil:
		// A new log: its head is written with its first record.
	case errors.Is(err, ErrNoHead) && last.KeyID == "":
		// Written before heads existed (or its head was lost): start one.
		f.notice(fmt.Sprintf("audit file %s had no head; starting one at record %d", f.path, last.Seq))
		if err := f.writeHead(*last); err != nil {
			return err
		}
	case errors.Is(err, ErrNoHead):
		return fmt.Errorf("its head %s is missing, so records cut off its end cannot be ruled out (record %d is the last "+
			"in the file); run `vigil audit verify`, keep the file as evidence and move it aside to start a new one",
			HeadPath(f.path), last.Seq)
	case err != nil:
		return err
	default:
		if err := f.keys.checkHead(*head); err != nil && head.KeyID != "" && f.keys.key(head.KeyID) != nil {
			return fmt.Errorf("head %s: %w", HeadPath(f.path), err)
		}
		lastSeq := int64(0)
		if last != nil {
			lastSeq = last.Seq
		}
		switch {
		case head.Seq > lastSeq:
			return fmt.Errorf("the file ends at record %d but its head says record %d exists: records were cut off; "+
				"run `vigil audit verify`, keep the file as evidence and move it aside (with %s) to start a new one",
				lastSeq, head.Seq, HeadPath(f.path))
		case head.Seq == lastSeq && last != nil && head.Hash != last.Hash:
			return fmt.Errorf("its last record %d is not the one its head names: replaced; run `vigil audit verify`", lastSeq)
		}
	}
	if last != nil {
		if err := f.keys.CanFollow(last.KeyID); err != nil {
			return err
		}
	}
	if last != nil && last.KeyID != f.keys.CurrentID() {
		f.notice(fmt.Sprintf("audit key changed from %s to %s; recording the rotation in %s", orNone(last.KeyID),
			orNone(f.keys.CurrentID()), f.path))
		rot := f.keys.seal(last, rotationRecord(last.KeyID, f.keys.CurrentID(), Record{Time: time.Now().UTC()}))
		if err := f.appendLocked([]Record{rot}); err != nil {
			return err
		}
	}
	return nil
}

// readLastRecord reads the file's final line, walking back from the end in
// blocks so a large file costs no more than a small one.
func readLastRecord(f *os.File) (*Record, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	if size == 0 {
		return nil, nil
	}
	var tail []byte
	const block = 4096
	for off := size; ; {
		n := int64(block)
		if off < n {
			n = off
		}
		off -= n
		buf := make([]byte, n)
		if _, err := f.ReadAt(buf, off); err != nil && err != io.EOF {
			return nil, err
		}
		tail = append(buf, tail...)
		if len(tail) > 0 && tail[len(tail)-1] != '\n' {
			return nil, errors.New("the last record is incomplete (no final newline); " +
				"run `vigil audit verify` and move the damaged file aside")
		}
		if i := bytes.LastIndexByte(tail[:len(tail)-1], '\n'); i >= 0 {
			tail = tail[i+1:]
			break
		}
		if off == 0 {
			break
		}
	}
	r, err := decodeRecord(bytes.TrimSuffix(tail, []byte("\n")))
	if err != nil {
		return nil, fmt.Errorf("last record: %w", err)
	}
	return &r, nil
}

// Write chains r after the last record and appends it.
func (f *File) Write(r Record) error {
	_, err := f.Append(r)
	return err
}

// Append chains r after the last record, appends it (after a key_rotated
// record when the key changed under a running File's chain: never, as
// OpenFile rotates), and returns it as written.
func (f *File) Append(r Record) (Record, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.broken != nil {
		return Record{}, f.broken
	}
	recs := f.keys.Chain(f.last, r)
	if err := f.appendLocked(recs); err != nil {
		return Record{}, err
	}
	return recs[len(recs)-1], nil
}

// appendLocked writes recs in one write, then the head.
func (f *File) appendLocked(recs []Record) error {
	var buf bytes.Buffer
	for _, rec := range recs {
		line, err := json.Marshal(rec)
		if err != nil {
			return fmt.Errorf("encode audit record: %w", err)
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	if _, err := f.f.Write(buf.Bytes()); err != nil {
		f.broken = fmt.Errorf("audit file unusable after a failed write: %w", err)
		return f.broken
	}
	if f.sync {
		if err := f.f.Sync(); err != nil {
			return fmt.Errorf("sync audit file: %w", err)
		}
	}
	last := recs[len(recs)-1]
	f.last = &last
	return f.writeHead(last)
}

// writeHead replaces the head file: a new file renamed over the old one,
// so a reader sees one head or the other.
func (f *File) writeHead(last Record) error {
	h := f.keys.HeadOf(last)
	b, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("encode audit head: %w", err)
	}
	path := HeadPath(f.path)
	tmp := path + ".tmp"
	if f.sync {
		err = writeSynced(tmp, append(b, '\n'))
	} else {
		err = os.WriteFile(tmp, append(b, '\n'), 0o600)
	}
	if err != nil {
		return fmt.Errorf("write audit head: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write audit head: %w", err)
	}
	return nil
}

// Close closes the file.
func (f *File) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.broken == nil {
		f.broken = errors.New("audit file closed")
	}
	return f.f.Close()
}

// decodeRecord parses one line strictly: a field the format does not know
// is not covered by the hash, so it is an error, not something to ignore.
func decodeRecord(line []byte) (Record, error) {
	var r Record
	err := decodeStrict(line, &r)
	return r, err
}

// decodeStrict decodes one JSON value, refusing unknown fields and
// anything after it.
func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more than one value on the line")
	}
	return nil
}

// ReadFile reads every record of an audit file. Parse errors name the
// line.
func ReadFile(path string) ([]Record, error) {
	recs, _, err := readFile(path)
	return recs, err
}

// VerifyFile reads and verifies an audit file sealed without a key,
// against its head, returning the number of records. A broken chain is a
// *ChainError whose Line is set.
func VerifyFile(path string) (int, error) {
	rep, err := CheckFile(path, nil)
	return rep.Records, err
}

// CheckFile reads an audit file and its head and verifies them with keys
// (nil for a log sealed without a key): the chain from record 1, every
// record's hash or MAC, and that the log reaches its head. A broken chain
// is a *ChainError whose Line is set; a log that does not reach its head
// (or has none) is a *HeadError.
func CheckFile(path string, keys *Keyring) (Report, error) {
	recs, lines, err := readFile(path)
	if err != nil {
		return Report{}, err
	}
	head, err := readHead(HeadPath(path))
	if err != nil && !errors.Is(err, ErrNoHead) {
		return Report{Records: len(recs)}, err
	}
	rep, err := Verify(recs, VerifyOptions{Keys: keys, FromStart: true, Head: head})
	if ce := (*ChainError)(nil); errors.As(err, &ce) {
		ce.Line = lines[ce.Index]
	}
	if err == nil && head == nil {
		last := "the file is empty"
		if rep.Records > 0 {
			last = fmt.Sprintf("record %d is the last in the file", rep.Last)
		}
		err = &HeadError{LastKnown: rep.Last, Reason: "its head " + HeadPath(path) + " is missing, so records cut off " +
			"the end cannot be told from a log that ends there; " + last}
	}
	return rep, err
}

// readFile returns the records and the line number of each.
func readFile(path string) ([]Record, []int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("open audit file: %w", err)
	}
	defer f.Close()
	var (
		recs  []Record
		lines []int
	)
	br := bufio.NewReader(f)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if err == io.EOF {
			if len(line) > 0 {
				return nil, nil, fmt.Errorf("%s line %d: incomplete record (no final newline)", path, n)
			}
			return recs, lines, nil
		}
		if err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", path, err)
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		if len(bytes.TrimSpace(line)) == 0 {
			return nil, nil, fmt.Errorf("%s line %d: empty line", path, n)
		}
		r, err := decodeRecord(line)
		if err != nil {
			return nil, nil, fmt.Errorf("%s line %d: %w", path, n, err)
		}
		recs = append(recs, r)
		lines = append(lines, n)
	}
}

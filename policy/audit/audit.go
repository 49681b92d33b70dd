// Package audit keeps vigil's audit trail (SPEC P8). It records
// decisions; it makes none. Every decision — allow, block, approval requested,
// approved, denied, expired, executed — becomes a record of who, what, where
// and when. Records form a hash chain: each carries the hash of the one
// before it, so editing, deleting or reordering a record breaks the chain at
// that record. The chain proves the log is internally consistent; it cannot
// by itself show that the newest records were cut off, or that someone
// rewrote every record after an edit. For that, keep the head hash somewhere
// else too (a log line, a ticket, a second store).
//
// Records are redacted before they are hashed, so the chain never holds a
// secret a command printed.
package audit

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
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
	// PrevHash is the previous record's Hash, "" for the first record.
	PrevHash string `json:"prev_hash"`
	// Hash is ComputeHash() of this record.
	Hash string `json:"hash"`
}

// hashVersion names the encoding ComputeHash uses, so a future change
// of encoding cannot be confused with tampering.
const hashVersion = "vigil-audit-v1"

// ComputeHash is the hex SHA-256 of every field but Hash, each written as
// its length, a colon and its bytes, in a fixed order. Length prefixes keep
// field boundaries unambiguous; the time is in UTC with nanoseconds, which
// is exactly what survives a JSON round trip.
func (r Record) ComputeHash() string {
	h := sha256.New()
	put := func(s string) {
		h.Write(strconv.AppendInt(nil, int64(len(s)), 10))
		h.Write([]byte{':'})
		h.Write([]byte(s))
	}
	put(hashVersion)
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
	return hex.EncodeToString(h.Sum(nil))
}

// Chain makes r the record after prev (nil for the first record): it sets
// Seq, PrevHash and Hash. It redacts the free-text fields first (Prepare),
// so whatever a caller passes, no secret enters the chain; every audit sink
// goes through here.
func Chain(prev *Record, r Record) Record {
	r = Prepare(r)
	r.Seq, r.PrevHash = 1, ""
	if prev != nil {
		r.Seq, r.PrevHash = prev.Seq+1, prev.Hash
	}
	r.Hash = r.ComputeHash()
	return r
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

// VerifyChain checks a whole chain, from its first record: every hash
// matches its record, sequence numbers run 1, 2, 3… and every record links
// to the one before it. The error is a *ChainError for the first bad
// record.
func VerifyChain(recs []Record) error { return verifyChain(recs, true) }

// VerifySegment checks consecutive records taken from the middle of a chain
// (such as RecentAudit's): the same checks, except that the first record
// need not be record 1.
func VerifySegment(recs []Record) error { return verifyChain(recs, false) }

func verifyChain(recs []Record, fromStart bool) error {
	for i, r := range recs {
		bad := func(format string, args ...any) error {
			return &ChainError{Index: i, Seq: r.Seq, Reason: fmt.Sprintf(format, args...)}
		}
		if r.Hash != r.ComputeHash() {
			return bad("hash mismatch — edited")
		}
		if i == 0 {
			if fromStart && (r.Seq != 1 || r.PrevHash != "") {
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
	}
	return nil
}

// File appends audit records to a file as JSON lines. Each record is one
// write(2) on a file opened O_APPEND, so a record is never interleaved with
// another; a mutex keeps the chain in order within the process. One process
// should write a given file: two writers would each continue their own
// chain.
type File struct {
	mu   sync.Mutex
	f    *os.File
	last *Record
	sync bool
	// broken is set after a failed write, which may have left part of a
	// record in the file; nothing more is appended after that.
	broken error
}

// FileOption configures OpenFile.
type FileOption func(*File)

// WithSync makes every Write fsync the file before returning: a record
// survives a power cut, at the price of a disk flush per decision.
func WithSync() FileOption { return func(f *File) { f.sync = true } }

// OpenFile opens (creating it, mode 0600) the audit file at path for
// appending. It reads the last record so new records continue the chain. A
// file whose last line is incomplete is refused rather than repaired: an
// audit log is not something to truncate silently.
func OpenFile(path string, opts ...FileOption) (*File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open audit file: %w", err)
	}
	last, err := readLastRecord(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("audit file %s: %w", path, err)
	}
	af := &File{f: f, last: last}
	for _, o := range opts {
		o(af)
	}
	return af, nil
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

// Append chains r after the last record, appends it, and returns it as
// written.
func (f *File) Append(r Record) (Record, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.broken != nil {
		return Record{}, f.broken
	}
	rec := Chain(f.last, r)
	line, err := json.Marshal(rec)
	if err != nil {
		return Record{}, fmt.Errorf("encode audit record: %w", err)
	}
	line = append(line, '\n')
	if _, err := f.f.Write(line); err != nil {
		f.broken = fmt.Errorf("audit file unusable after a failed write: %w", err)
		return Record{}, f.broken
	}
	if f.sync {
		if err := f.f.Sync(); err != nil {
			return Record{}, fmt.Errorf("sync audit file: %w", err)
		}
	}
	f.last = &rec
	return rec, nil
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
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return Record{}, err
	}
	if dec.More() {
		return Record{}, errors.New("more than one record on the line")
	}
	return r, nil
}

// ReadFile reads every record of an audit file. Parse errors name the
// line.
func ReadFile(path string) ([]Record, error) {
	recs, _, err := readFile(path)
	return recs, err
}

// VerifyFile reads and verifies an audit file, returning the number of
// records. A broken chain is a *ChainError whose Line is set.
func VerifyFile(path string) (int, error) {
	recs, lines, err := readFile(path)
	if err != nil {
		return 0, err
	}
	if err := VerifyChain(recs); err != nil {
		var ce *ChainError
		if errors.As(err, &ce) {
			ce.Line = lines[ce.Index]
		}
		return len(recs), err
	}
	return len(recs), nil
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

package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
)

// Spool is a first-in, first-out queue of records that have not reached
// the audit chain yet: the store that chains them was unreachable. Records
// wait unchained (no Seq, PrevHash or Hash): the store chains each one
// when it finally takes it, after whatever it holds by then, so the chain
// stays whole however long they waited.
//
// A spool opened with a path keeps its records in a file as well, so they
// survive a restart. The file holds one record per line as JSON, oldest
// first, in the audit file's format with the chain fields empty. A record
// is appended with one write(2) and fsynced before Push returns; taking
// records off rewrites the file (a new file renamed over the old one).
// Records are redacted (Prepare) before they are spooled, so the file
// holds no secret. One process should use a given file.
type Spool struct {
	mu   sync.Mutex
	path string
	f    *os.File
	recs []Record
	// broken is set when a write to the file failed and may have left part
	// of a line; records are then kept in memory only until the next Drop
	// rewrites the file whole.
	broken error
}

// NewSpool returns a spool kept in memory only.
func NewSpool() *Spool { return &Spool{} }

// OpenSpool opens (creating it, mode 0600) the spool file at path and
// loads the records waiting in it. A file whose last line is incomplete is
// refused rather than repaired: vigil stopped while writing that record.
func OpenSpool(path string) (*Spool, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open audit outbox: %w", err)
	}
	recs, err := readSpool(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("audit outbox %s: %w", path, err)
	}
	return &Spool{path: path, f: f, recs: recs}, nil
}

func readSpool(f *os.File) ([]Record, error) {
	var recs []Record
	br := bufio.NewReader(f)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if err == io.EOF {
			if len(line) > 0 {
				return nil, fmt.Errorf("line %d is incomplete (vigil stopped while writing it); "+
					"that record is in the audit file if one is configured; remove the line to start", n)
			}
			return recs, nil
		}
		if err != nil {
			return nil, err
		}
		r, err := decodeRecord(bytes.TrimSuffix(line, []byte("\n")))
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		recs = append(recs, r)
	}
}

// Path is the spool's file, "" for a spool in memory only.
func (s *Spool) Path() string { return s.path }

// Len is how many records wait.
func (s *Spool) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.recs)
}

// Push adds r at the end. The record is always kept in memory; an error
// means it could not be made durable in the file.
func (s *Spool) Push(r Record) error {
	r.Seq, r.PrevHash, r.KeyID, r.Hash = 0, "", "", ""
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recs = append(s.recs, r)
	if s.path == "" {
		return nil
	}
	if s.broken != nil {
		return s.broken
	}
	line, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode audit record: %w", err)
	}
	if _, err := s.f.Write(append(line, '\n')); err != nil {
		s.broken = fmt.Errorf("audit outbox %s: write: %w (records are kept in memory)", s.path, err)
		return s.broken
	}
	if err := s.f.Sync(); err != nil {
		return fmt.Errorf("audit outbox %s: sync: %w", s.path, err)
	}
	return nil
}

// Peek returns up to n of the oldest records, oldest first.
func (s *Spool) Peek(n int) []Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.recs[:min(n, len(s.recs))])
}

// Drop removes the n oldest records (those Peek returned and the store
// took) and rewrites the file to match.
func (s *Spool) Drop(n int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	n = min(n, len(s.recs))
	s.recs = slices.Delete(s.recs, 0, n)
	if s.path == "" {
		return nil
	}
	if s.f == nil {
		return ErrSpoolClosed
	}
	return s.rewriteLocked()
}

// rewriteLocked replaces the file with the records in memory: written to a
// temporary file, synced, renamed over the spool, and the directory
// synced, so a crash leaves either the old file or the new one.
func (s *Spool) rewriteLocked() error {
	if len(s.recs) == 0 && s.broken == nil {
		if err := s.f.Truncate(0); err != nil {
			return fmt.Errorf("audit outbox %s: truncate: %w", s.path, err)
		}
		return s.f.Sync()
	}
	var buf bytes.Buffer
	for _, r := range s.recs {
		line, err := json.Marshal(r)
		if err != nil {
			return fmt.Errorf("encode audit record: %w", err)
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	tmp := s.path + ".tmp"
	if err := writeSynced(tmp, buf.Bytes()); err != nil {
		return fmt.Errorf("audit outbox %s: %w", s.path, err)
	}
	if err := os.Rename(tmp, s.path); err != nil {
		return fmt.Errorf("audit outbox %s: %w", s.path, err)
	}
	if d, err := os.Open(filepath.Dir(s.path)); err == nil {
		_ = d.Sync()
		d.Close()
	}
	f, err := os.OpenFile(s.path, os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("audit outbox %s: reopen: %w", s.path, err)
	}
	s.f.Close()
	s.f, s.broken = f, nil
	return nil
}

func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Close closes the file; the records stay in it for the next OpenSpool.
// Records pushed after Close are kept in memory only.
func (s *Spool) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f, s.broken = nil, ErrSpoolClosed
	return err
}

// SameRecord reports whether a and b are the same record apart from the
// chain fields (Seq, PrevHash, KeyID, Hash): whether a record taken from a spool
// already reached the chain (a store that took it but answered too late).
// Records carry their time to the nanosecond, so two distinct decisions
// are never the same.
func SameRecord(a, b Record) bool {
	a.Seq, a.PrevHash, a.KeyID, a.Hash = 0, "", "", ""
	b.Seq, b.PrevHash, b.KeyID, b.Hash = 0, "", "", ""
	if !a.Time.Equal(b.Time) {
		return false
	}
	a.Time = b.Time
	return a == b
}

// ErrSpoolClosed is returned by a closed spool's file operations.
var ErrSpoolClosed = errors.New("audit outbox closed; records are kept in memory only")

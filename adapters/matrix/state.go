package matrix

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/id"
)

// stateDir keeps small JSON files in Config.StateDir. With an empty dir it
// keeps everything in memory.
type stateDir struct {
	dir string
}

const (
	sessionFile = "session.json"
	syncFile    = "sync.json"
)

// session is what a restart needs to reuse the same device.
type session struct {
	UserID   id.UserID   `json:"user_id"`
	DeviceID id.DeviceID `json:"device_id"`
}

func (s stateDir) ensure() error {
	if s.dir == "" {
		return nil
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("matrix.state_dir %s: %w", s.dir, err)
	}
	return nil
}

func (s stateDir) path(name string) string { return filepath.Join(s.dir, name) }

// load reads name into v; a missing file leaves v untouched.
func (s stateDir) load(name string, v any) error {
	if s.dir == "" {
		return nil
	}
	b, err := os.ReadFile(s.path(name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", s.path(name), err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("parse %s: %w", s.path(name), err)
	}
	return nil
}

// save writes v atomically (temp file and rename) with owner-only access.
func (s stateDir) save(name string, v any) error {
	if s.dir == "" {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(s.dir, "."+name+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", s.path(name), err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("write %s: %w", s.path(name), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", s.path(name), err)
	}
	if err := os.Rename(tmp.Name(), s.path(name)); err != nil {
		return fmt.Errorf("write %s: %w", s.path(name), err)
	}
	return nil
}

// syncStore is a mautrix.SyncStore that persists the sync position in the
// state dir, so a restart continues where the last run stopped instead of
// replaying history. Filter IDs are kept in memory: the filter is created
// afresh at every start so a changed filter never goes stale.
type syncStore struct {
	state stateDir

	mu        sync.Mutex
	filters   map[id.UserID]string
	nextBatch map[id.UserID]string
	loaded    bool
}

var _ mautrix.SyncStore = (*syncStore)(nil)

type syncFileData struct {
	UserID    id.UserID `json:"user_id"`
	NextBatch string    `json:"next_batch"`
}

func newSyncStore(state stateDir) *syncStore {
	return &syncStore{state: state, filters: map[id.UserID]string{}, nextBatch: map[id.UserID]string{}}
}

func (s *syncStore) SaveFilterID(_ context.Context, userID id.UserID, filterID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.filters[userID] = filterID
	return nil
}

func (s *syncStore) LoadFilterID(_ context.Context, userID id.UserID) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.filters[userID], nil
}

func (s *syncStore) SaveNextBatch(_ context.Context, userID id.UserID, token string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextBatch[userID] = token
	return s.state.save(syncFile, syncFileData{UserID: userID, NextBatch: token})
}

func (s *syncStore) LoadNextBatch(_ context.Context, userID id.UserID) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.loaded {
		s.loaded = true
		var d syncFileData
		if err := s.state.load(syncFile, &d); err != nil {
			return "", err
		}
		if d.UserID != "" && d.NextBatch != "" {
			s.nextBatch[d.UserID] = d.NextBatch
		}
	}
	return s.nextBatch[userID], nil
}

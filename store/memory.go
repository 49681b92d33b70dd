// Package store holds the implementations of the bot's store interfaces
// (bot.SessionStore, bot.ApprovalStore, bot.AuditStore, bot.Deduper,
// bot.Locker). Memory is the embedded default: one process, nothing
// survives a restart. Every implementation passes the conformance suite in
// store/storetest.
package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/bot"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/policy/audit"
)

// Interface guards: Memory is every store the bot needs.
var (
	_ bot.SessionStore  = (*Memory)(nil)
	_ bot.ApprovalStore = (*Memory)(nil)
	_ bot.AuditStore    = (*Memory)(nil)
	_ bot.Deduper       = (*Memory)(nil)
	_ bot.SessionLocker = (*Memory)(nil)
	_ bot.FencedLock    = (*memoryLock)(nil)
)

const (
	// DefaultAuditLimit is how many audit records Memory keeps; older ones
	// are dropped. The chain continues across the drop (the newest record
	// is always kept), so RecentAudit segments still verify.
	DefaultAuditLimit = 10000
	// approvalRetention is how long a decided approval is kept past its
	// expiry, so late clicks still hear who decided it.
	approvalRetention = 24 * time.Hour
	// gcEvery is how many dedup writes pass between sweeps of expired keys.
	gcEvery = 256
)

// Memory keeps every store in process memory. Values are stored as JSON,
// as Redis stores them: that copies them deeply (callers can never alias
// stored state) and exercises the same encoding the Redis store depends on.
// It is safe for concurrent use.
type Memory struct {
	runs       runIndex
	limits     rateLimits
	alerts     alertGroups
	now        func() time.Time
	auditLimit int
	auditKeys  *audit.Keyring

	mu        sync.Mutex
	sessions  map[string][]byte
	approvals map[string]storedApproval
	audit     []audit.Record
	auditHead *audit.Head
	dedup     map[string]time.Time // key → expiry
	dedupPuts int
	locks     map[string]lockState
}

// storedApproval is an approval's JSON plus the two fields the store
// filters on, so listing and pruning need not decode every record.
type storedApproval struct {
	raw     []byte
	status  policy.ApprovalStatus
	expires time.Time
}

type lockState struct {
	token   string
	expires time.Time
}

// Option configures NewMemory.
type Option func(*Memory)

// WithClock replaces time.Now, for tests that move time by hand.
func WithClock(now func() time.Time) Option { return func(m *Memory) { m.now = now } }

// WithAuditLimit sets how many audit records are kept (default
// DefaultAuditLimit).
func WithAuditLimit(n int) Option { return func(m *Memory) { m.auditLimit = n } }

// WithAuditKeys seals the audit chain with the keyring's current key
// (default: none, records are only hashed).
func WithAuditKeys(k *audit.Keyring) Option { return func(m *Memory) { m.auditKeys = k } }

// NewMemory returns empty in-memory stores.
func NewMemory(opts ...Option) *Memory {
	m := &Memory{
		now:        time.Now,
		auditLimit: DefaultAuditLimit,
		sessions:   make(map[string][]byte),
		approvals:  make(map[string]storedApproval),
		dedup:      make(map[string]time.Time),
		locks:      make(map[string]lockState),
	}
	for _, o := range opts {
		o(m)
	}
	if m.auditLimit < 1 {
		m.auditLimit = 1
	}
	m.limits.now = m.now
	m.alerts.now = m.now
	return m
}

// Stores returns m as every store of the bundle.
func (m *Memory) Stores() bot.Stores {
	return bot.Stores{Sessions: m, Approvals: m, Audit: m, Dedup: m, Locks: m, Runs: &m.runs, Limits: &m.limits, Alerts: &m.alerts}
}

// LoadSession implements bot.SessionStore.
func (m *Memory) LoadSession(ctx context.Context, key string) (*agent.Session, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return m.loadSession(key)
}

// loadSession decodes the session saved under key.
func (m *Memory) loadSession(key string) (*agent.Session, error) {
	m.mu.Lock()
	raw, ok := m.sessions[key]
	m.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("session %q: %w", key, bot.ErrNotFound)
	}
	var s agent.Session
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("decode session %q: %w", key, err)
	}
	return &s, nil
}

// SaveSession implements bot.SessionStore.
func (m *Memory) SessionExists(ctx context.Context, key string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	m.mu.Lock()
	_, ok := m.sessions[key]
	m.mu.Unlock()
	return ok, nil
}

// encodeSession is what the memory store keeps of a session.
func encodeSession(s *agent.Session) ([]byte, error) {
	if s == nil || s.Key == "" {
		return nil, errors.New("save session: no session key")
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encode session %q: %w", s.Key, err)
	}
	return raw, nil
}

func (m *Memory) SaveSession(ctx context.Context, s *agent.Session) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	raw, err := encodeSession(s)
	if err != nil {
		return err
	}
	m.mu.Lock()
	m.sessions[s.Key] = raw
	m.mu.Unlock()
	return nil
}

// CreateApproval implements bot.ApprovalStore.
func (m *Memory) CreateApproval(ctx context.Context, a *policy.Approval) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if a == nil || a.ID == "" {
		return errors.New("create approval: no ID")
	}
	raw, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("encode approval %s: %w", a.ID, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.approvals[a.ID]; ok {
		return fmt.Errorf("approval %s: %w", a.ID, bot.ErrExists)
	}
	m.pruneApprovalsLocked()
	m.approvals[a.ID] = storedApproval{raw: raw, status: a.Status, expires: a.ExpiresAt}
	return nil
}

// pruneApprovalsLocked drops decided approvals long past their expiry.
// Pending and executing ones are kept whatever their age: the sweeper must
// see the first, and the second are evidence of an interrupted execution.
func (m *Memory) pruneApprovalsLocked() {
	cutoff := m.now().Add(-approvalRetention)
	for id, sa := range m.approvals {
		if sa.status != policy.ApprovalPending && sa.status != policy.ApprovalExecuting && sa.expires.Before(cutoff) {
			delete(m.approvals, id)
		}
	}
}

// GetApproval implements bot.ApprovalStore.
func (m *Memory) GetApproval(ctx context.Context, id string) (*policy.Approval, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.approvalLocked(id)
}

func (m *Memory) approvalLocked(id string) (*policy.Approval, error) {
	sa, ok := m.approvals[id]
	if !ok {
		return nil, fmt.Errorf("approval %q: %w", id, bot.ErrNotFound)
	}
	var a policy.Approval
	if err := json.Unmarshal(sa.raw, &a); err != nil {
		return nil, fmt.Errorf("decode approval %s: %w", id, err)
	}
	return &a, nil
}

// UpdateApproval implements bot.ApprovalStore: the shared compare-and-set
// (UpdateApproval in this package) under the store's lock, so the swap
// always finds the record it read.
func (m *Memory) UpdateApproval(ctx context.Context, id string, step policy.Transition) (*policy.Approval, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	load := func(context.Context) (*policy.Approval, []byte, error) {
		a, err := m.approvalLocked(id)
		if err != nil {
			return nil, nil, err
		}
		return a, m.approvals[id].raw, nil
	}
	swap := func(_ context.Context, _ []byte, next *policy.Approval, encoded []byte) (bool, error) {
		m.approvals[id] = storedApproval{raw: encoded, status: next.Status, expires: next.ExpiresAt}
		return true, nil
	}
	return UpdateApproval(ctx, id, step, load, swap)
}

// ListPending implements bot.ApprovalStore.
func (m *Memory) ListPending(ctx context.Context) ([]*policy.Approval, error) {
	out, err := m.listByStatus(ctx, policy.ApprovalPending)
	SortByExpiry(out)
	return out, err
}

// ListExecuting implements bot.ApprovalStore.
func (m *Memory) ListExecuting(ctx context.Context) ([]*policy.Approval, error) {
	return m.listByStatus(ctx, policy.ApprovalExecuting)
}

// listByStatus returns every approval in status, in no order.
func (m *Memory) listByStatus(ctx context.Context, status policy.ApprovalStatus) ([]*policy.Approval, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*policy.Approval
	for id, sa := range m.approvals {
		if sa.status != status {
			continue
		}
		a, err := m.approvalLocked(id)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// SortByExpiry orders approvals oldest expiry first, then by ID: the order
// every store's ListPending promises.
func SortByExpiry(as []*policy.Approval) {
	slices.SortFunc(as, func(a, b *policy.Approval) int {
		if c := a.ExpiresAt.Compare(b.ExpiresAt); c != 0 {
			return c
		}
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
}

// AppendAudit implements bot.AuditStore. A record without a time gets the
// store's clock.
func (m *Memory) AppendAudit(ctx context.Context, r audit.Record) (audit.Record, error) {
	if err := ctx.Err(); err != nil {
		return audit.Record{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if r.Time.IsZero() {
		r.Time = m.now()
	}
	var prev *audit.Record
	if n := len(m.audit); n > 0 {
		prev = &m.audit[n-1]
	}
	recs := m.auditKeys.Chain(prev, r)
	m.audit = append(m.audit, recs...)
	if over := len(m.audit) - m.auditLimit; over > 0 {
		m.audit = slices.Delete(m.audit, 0, over)
	}
	rec := recs[len(recs)-1]
	h := m.auditKeys.HeadOf(rec)
	m.auditHead = &h
	return rec, nil
}

// AuditHead returns the head of the audit chain: the newest record's
// sequence number and hash, sealed with the audit key; ok is false while
// the chain is empty.
func (m *Memory) AuditHead(ctx context.Context) (audit.Head, bool, error) {
	if err := ctx.Err(); err != nil {
		return audit.Head{}, false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.auditHead == nil {
		return audit.Head{}, false, nil
	}
	return *m.auditHead, true, nil
}

// RecentAudit implements bot.AuditStore.
func (m *Memory) RecentAudit(ctx context.Context, n int) ([]audit.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if n <= 0 {
		return nil, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	start := max(len(m.audit)-n, 0)
	return slices.Clone(m.audit[start:]), nil
}

// FirstSeen implements bot.Deduper.
func (m *Memory) FirstSeen(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if ttl <= 0 {
		return false, fmt.Errorf("dedup %q: ttl must be positive, got %s", key, ttl)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if exp, ok := m.dedup[key]; ok && now.Before(exp) {
		return false, nil
	}
	m.dedup[key] = now.Add(ttl)
	if m.dedupPuts++; m.dedupPuts%gcEvery == 0 {
		for k, exp := range m.dedup {
			if !now.Before(exp) {
				delete(m.dedup, k)
			}
		}
	}
	return true, nil
}

// Lock implements bot.Locker.
func (m *Memory) Lock(ctx context.Context, key string, ttl time.Duration) (bot.Lock, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if ttl <= 0 {
		return nil, fmt.Errorf("lock %q: ttl must be positive, got %s", key, ttl)
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("lock token: %w", err)
	}
	token := hex.EncodeToString(b[:])
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if st, ok := m.locks[key]; ok && now.Before(st.expires) {
		return nil, fmt.Errorf("lock %q: %w", key, bot.ErrLocked)
	}
	m.locks[key] = lockState{token: token, expires: now.Add(ttl)}
	return &memoryLock{m: m, key: key, token: token, ttl: ttl}, nil
}

// LockAndLoad implements bot.SessionLocker: Lock, then the session. Once
// the lock is taken the load goes through whatever ctx says: giving the
// lock back because ctx ran out meanwhile would only waste it.
func (m *Memory) LockAndLoad(ctx context.Context, key string, ttl time.Duration, sessionKey string) (bot.Lock, *agent.Session, error) {
	l, err := m.Lock(ctx, key, ttl)
	if err != nil {
		return nil, nil, err
	}
	s, err := m.loadSession(sessionKey)
	switch {
	case err == nil:
		return l, s, nil
	case errors.Is(err, bot.ErrNotFound):
		return l, nil, nil
	}
	_ = l.Unlock(context.WithoutCancel(ctx))
	return nil, nil, err
}

// memoryLock is one holder's lock. The token tells this holder from a
// later one that took the lock after it expired.
type memoryLock struct {
	m     *Memory
	key   string
	token string
	ttl   time.Duration
}

// heldLocked reports whether this holder still has the lock, dropping it
// if it has expired.
func (l *memoryLock) heldLocked(now time.Time) bool {
	st, ok := l.m.locks[l.key]
	if !ok || st.token != l.token {
		return false
	}
	if !now.Before(st.expires) {
		delete(l.m.locks, l.key)
		return false
	}
	return true
}

// Renew implements bot.Lock.
func (l *memoryLock) Renew(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l.m.mu.Lock()
	defer l.m.mu.Unlock()
	now := l.m.now()
	if !l.heldLocked(now) {
		return fmt.Errorf("renew lock %q: %w", l.key, bot.ErrLocked)
	}
	l.m.locks[l.key] = lockState{token: l.token, expires: now.Add(l.ttl)}
	return nil
}

// RenewAndSave implements bot.FencedLock: the lock check, its renewal and
// the save happen under the store's mutex, so no other holder can come in
// between.
func (l *memoryLock) RenewAndSave(ctx context.Context, s *agent.Session) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	raw, err := encodeSession(s)
	if err != nil {
		return err
	}
	l.m.mu.Lock()
	defer l.m.mu.Unlock()
	now := l.m.now()
	if !l.heldLocked(now) {
		return fmt.Errorf("save session %q under lock %q: %w", s.Key, l.key, bot.ErrLocked)
	}
	l.m.locks[l.key] = lockState{token: l.token, expires: now.Add(l.ttl)}
	l.m.sessions[s.Key] = raw
	return nil
}

// Unlock implements bot.Lock.
func (l *memoryLock) Unlock(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l.m.mu.Lock()
	defer l.m.mu.Unlock()
	if !l.heldLocked(l.m.now()) {
		return fmt.Errorf("unlock %q: %w", l.key, bot.ErrLocked)
	}
	delete(l.m.locks, l.key)
	return nil
}

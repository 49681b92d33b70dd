package bot

import (
	"context"
	"time"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/policy/audit"
)

// The stores the bot keeps its state in (SPEC D1, D2). Each is small and
// declared here, where it is used; the memory and Redis implementations live
// in package store and pass the same conformance suite (store/storetest).
// Stored values are copies: changing a value after saving it, or a loaded
// value, never changes what is stored.

// SessionStore keeps conversations, so any replica can continue one.
type SessionStore interface {
	// LoadSession returns the session saved under key, or ErrNotFound.
	LoadSession(ctx context.Context, key string) (*agent.Session, error)
	// SaveSession stores s under s.Key, replacing what was there.
	SaveSession(ctx context.Context, s *agent.Session) error
	// SessionExists reports whether a session is saved under key, without
	// loading it.
	SessionExists(ctx context.Context, key string) (bool, error)
}

// ApprovalStore keeps approvals. The compare-and-set in UpdateApproval is
// what makes an approval single-use across replicas: of two decisions, or
// two replicas claiming the execution, exactly one moves it on.
type ApprovalStore interface {
	// CreateApproval stores a new approval; ErrExists if the ID is taken.
	CreateApproval(ctx context.Context, a *policy.Approval) error
	// GetApproval returns the approval with id, or ErrNotFound.
	GetApproval(ctx context.Context, id string) (*policy.Approval, error)
	// UpdateApproval atomically moves the approval on by step, one of
	// the lifecycle's transitions (policy.Decide, policy.ClaimExecution,
	// …), saves and returns the result. If step does not apply to the
	// approval as it now stands, nothing changes and it returns the
	// current record with an error matching ErrStatusConflict and the
	// step's *policy.TransitionError.
	UpdateApproval(ctx context.Context, id string, step policy.Transition) (*policy.Approval, error)
	// ListPending returns every pending approval, expired or not, oldest
	// expiry first: the sweeper's work list.
	ListPending(ctx context.Context) ([]*policy.Approval, error)
	// ListExecuting returns every approval claimed for execution and not
	// yet settled, in no particular order: after a store outage or a crash,
	// the ones whose outcome was never recorded.
	ListExecuting(ctx context.Context) ([]*policy.Approval, error)
}

// AuditStore keeps the audit chain (SPEC P8).
type AuditStore interface {
	// AppendAudit chains r after the newest record (audit.Chain: Seq,
	// PrevHash, Hash) and stores it, atomically even with concurrent
	// writers on several replicas, and returns it as stored.
	AppendAudit(ctx context.Context, r audit.Record) (audit.Record, error)
	// RecentAudit returns the newest n records, oldest first.
	RecentAudit(ctx context.Context, n int) ([]audit.Record, error)
}

// Deduper drops redelivered events (Slack retries, a click delivered
// twice).
type Deduper interface {
	// FirstSeen reports whether key is new, and remembers it for ttl.
	FirstSeen(ctx context.Context, key string, ttl time.Duration) (bool, error)
}

// Locker hands out exclusive, expiring locks (one run per thread across
// replicas).
type Locker interface {
	// Lock takes the lock on key for ttl, or returns ErrLocked if another
	// holder has it.
	Lock(ctx context.Context, key string, ttl time.Duration) (Lock, error)
}

// Lock is a held lock. It expires ttl after it was taken or last renewed;
// after that another holder may take it.
type Lock interface {
	// Renew extends the lock by its ttl; ErrLocked if it was lost.
	Renew(ctx context.Context) error
	// Unlock releases the lock; ErrLocked if it was already lost, in which
	// case whoever holds it now keeps it.
	Unlock(ctx context.Context) error
}

// FencedLock is a Lock that can also save a session in the same atomic
// step as its renewal: the session is stored only while this holder still
// has the lock, so a replica that lost a thread can never overwrite the
// new holder's session. Stores whose locks implement it save a run's
// checkpoints this way (on Redis, one round trip instead of two or three);
// the bot falls back to Renew then SaveSession for locks that do not.
type FencedLock interface {
	Lock
	// RenewAndSave renews the lock by its ttl and saves s, replacing what
	// was stored under s.Key, atomically. If the lock was lost nothing is
	// saved and the error matches ErrLocked.
	RenewAndSave(ctx context.Context, s *agent.Session) error
}

// SessionLocker is a Locker that can load a thread's session in the same
// step as it takes the thread's lock (on Redis, one round trip instead of
// two). The bot uses it for the jobs that begin with the session.
type SessionLocker interface {
	Locker
	// LockAndLoad takes the lock on key for ttl, as Lock does, and returns
	// the session saved under sessionKey as it is once the lock is held:
	// nil when none is saved. On any error no lock is held.
	LockAndLoad(ctx context.Context, key string, ttl time.Duration, sessionKey string) (Lock, *agent.Session, error)
}

// Stores bundles the stores the bot needs; one backend usually provides
// them all.
type Stores struct {
	Sessions  SessionStore
	Approvals ApprovalStore
	Audit     AuditStore
	Dedup     Deduper
	Locks     Locker
	// Runs indexes runs in progress; nil means a run whose replica dies
	// mid-run is not picked up elsewhere (it resumes on the thread's next
	// message instead).
	Runs RunIndex
	// Limits counts events for rate limits shared by every replica; nil
	// means no rate limiting.
	Limits RateLimiter
	// Alerts keeps alert groups and their threads; nil means alert
	// intake refuses notifications.
	Alerts AlertGroupStore
}

// AlertGroupStore keeps one record per alert group: the thread it opened
// and the state of its alerts, shared by every replica. The bot reads and
// writes a group only while holding the group's lock (Locker), so two
// replicas receiving the same notification open one thread.
type AlertGroupStore interface {
	// LoadAlertGroup returns the group saved under key, or ErrNotFound.
	LoadAlertGroup(ctx context.Context, key string) (*AlertGroup, error)
	// SaveAlertGroup stores g under g.Key for ttl, replacing what was
	// there. It keeps the index DueAlertGroups reads: a group whose
	// investigation is pending (AlertGroup.Pending) is indexed at its
	// DueAt, any other group leaves the index.
	SaveAlertGroup(ctx context.Context, g *AlertGroup, ttl time.Duration) error
	// DueAlertGroups returns the keys of up to limit groups whose
	// investigation is pending and due at now (DueAt not after now),
	// earliest first. It is how a replica finds groups whose scheduling
	// replica died before the debounce ended. Index entries whose group
	// expired or is no longer pending are dropped, not returned.
	DueAlertGroups(ctx context.Context, now time.Time, limit int) ([]string, error)

	// AdmitOpenAlertGroup counts key among route's open groups, shared by
	// every replica, if fewer than limit are open, and reports whether it
	// is counted; a key already counted is admitted again (its time
	// refreshed). A group stops counting when it is closed or idle has
	// passed since it was last admitted or marked open.
	AdmitOpenAlertGroup(ctx context.Context, route, key string, limit int, idle time.Duration) (bool, error)
	// SetAlertGroupOpen counts key among route's open groups whatever
	// the limit (a known group firing again), refreshing its time, or,
	// with open false, stops counting it (the group resolved).
	SetAlertGroupOpen(ctx context.Context, route, key string, open bool, idle time.Duration) error
	// ClaimAlertEvent records a source's event ID for ttl and reports
	// whether it is new: of two deliveries of one event, on any replicas,
	// exactly one claims it.
	ClaimAlertEvent(ctx context.Context, id string, ttl time.Duration) (bool, error)
	// ReleaseAlertEvent forgets a claimed event ID (its delivery failed,
	// so the source's retry must get through).
	ReleaseAlertEvent(ctx context.Context, id string) error
}

// RateLimiter is a sliding-window rate limit (GCRA): Allow reports whether
// one more event under key fits within limit events per window, a burst of
// limit at once with capacity coming back one event every window/limit,
// and counts it when it does.
type RateLimiter interface {
	Allow(ctx context.Context, key string, limit int, window time.Duration) (bool, error)
}

// RunIndex lists the threads that have a run in progress, so that another
// replica can finish a run whose replica died (DESIGN "Runs and
// approvals"). Entries are added when a run starts and removed when it ends
// or stops at an approval.
type RunIndex interface {
	MarkActive(ctx context.Context, t ThreadRef) error
	MarkIdle(ctx context.Context, key string) error
	ActiveRuns(ctx context.Context) ([]ThreadRef, error)
}

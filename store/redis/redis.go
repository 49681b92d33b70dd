// Package redis implements vigil's stores on Redis (SPEC D1, D2): sessions,
// approvals, the audit chain, event dedup, per-thread locks, rate limits and
// the daily token budget, long-term memory and plugin key-value namespaces.
// Several replicas share one Redis: every multi-step change is a Lua script
// or a transaction, so each chat event is handled once and an approval
// moves on exactly once, whichever replica asks.
//
// Every key is built in keys.go, which also documents the layout and TTLs.
package redis

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/vigilops/vigil/bot"
	"github.com/vigilops/vigil/tools"
)

// Interface guards: Store is every store the bot and the tools need.
var (
	_ bot.SessionStore  = (*Store)(nil)
	_ bot.ApprovalStore = (*Store)(nil)
	_ bot.AuditStore    = (*Store)(nil)
	_ bot.Deduper       = (*Store)(nil)
	_ bot.Locker        = (*Store)(nil)
	_ bot.Lock          = (*lock)(nil)
	_ tools.MemoryStore = (*Store)(nil)
)

// Defaults for Options.
const (
	DefaultKeyPrefix = "vigil:"
	// DefaultSessionTTL is how long an idle conversation is kept: a thread
	// picked up again within two weeks continues where it stopped.
	DefaultSessionTTL = 14 * 24 * time.Hour
	// DefaultApprovalRetention is how long an approval is kept past its
	// expiry, so late clicks still hear who decided it (as the memory
	// store does).
	DefaultApprovalRetention = 24 * time.Hour
	// DefaultAuditLimit is how many audit records the log keeps; the chain
	// head survives trimming, so the chain continues.
	DefaultAuditLimit = 10000
	// DefaultOpTimeout bounds one store operation when the caller's context
	// has no earlier deadline (STYLE 10).
	DefaultOpTimeout = 5 * time.Second

	dialTimeout = 2 * time.Second
	ioTimeout   = 3 * time.Second
)

// Options configures New. Addr is required; zero values take defaults.
type Options struct {
	// Addr is host:port.
	Addr     string
	Password string
	DB       int
	// TLS connects with TLS 1.2 or later, verifying the server's
	// certificate against the system roots.
	TLS bool
	// KeyPrefix starts every key (default "vigil:"). Several deployments
	// may share one Redis with different prefixes.
	KeyPrefix string
	Logger    *slog.Logger

	SessionTTL        time.Duration
	ApprovalRetention time.Duration
	AuditLimit        int
	OpTimeout         time.Duration
	// PoolSize is the most connections kept to Redis; 0 means go-redis's
	// default (10 per CPU). Many concurrent runs per replica want more.
	PoolSize int
}

// Store is the Redis implementation of the stores. It is safe for
// concurrent use; Close releases its connections.
type Store struct {
	rdb  *goredis.Client
	keys keys
	opt  Options
	log  *slog.Logger
	now  func() time.Time
	// audit batches this replica's audit appends (see AppendAudit).
	audit auditQueue
}

// New validates opts and connects lazily: a Redis that is down at start
// makes New log a warning, not fail, so /readyz can report it (via Ping)
// while the process waits for it.
func New(ctx context.Context, opts Options) (*Store, error) {
	if opts.Addr == "" {
		return nil, errors.New("redis: store.redis.addr is empty")
	}
	host, _, err := net.SplitHostPort(opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("redis: store.redis.addr %q: %w", opts.Addr, err)
	}
	if opts.KeyPrefix == "" {
		opts.KeyPrefix = DefaultKeyPrefix
	}
	if err := validPrefix(opts.KeyPrefix); err != nil {
		return nil, fmt.Errorf("redis: store.redis.key_prefix: %w", err)
	}
	if opts.DB < 0 {
		return nil, fmt.Errorf("redis: store.redis.db %d is negative", opts.DB)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.SessionTTL <= 0 {
		opts.SessionTTL = DefaultSessionTTL
	}
	if opts.ApprovalRetention <= 0 {
		opts.ApprovalRetention = DefaultApprovalRetention
	}
	if opts.AuditLimit <= 0 {
		opts.AuditLimit = DefaultAuditLimit
	}
	if opts.OpTimeout <= 0 {
		opts.OpTimeout = DefaultOpTimeout
	}

	ro := &goredis.Options{
		Addr:     opts.Addr,
		Password: opts.Password,
		DB:       opts.DB,
		PoolSize: opts.PoolSize,
		// Fail fast when Redis is away: a short dial, bounded reads and
		// writes, one retry, and no long wait for a pooled connection.
		DialTimeout:           dialTimeout,
		DialerRetries:         2,
		DialerRetryTimeout:    50 * time.Millisecond,
		ReadTimeout:           ioTimeout,
		WriteTimeout:          ioTimeout,
		PoolTimeout:           ioTimeout + time.Second,
		MaxRetries:            1,
		ContextTimeoutEnabled: true,
		DisableIdentity:       true,
	}
	if opts.TLS {
		ro.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, ServerName: host}
	}
	s := &Store{
		rdb:  goredis.NewClient(ro),
		keys: keys{prefix: opts.KeyPrefix},
		opt:  opts,
		log:  opts.Logger,
		now:  time.Now,
	}
	if err := s.Ping(ctx); err != nil {
		s.log.Warn(Unreachable(opts.Addr, err))
		s.log.Debug("redis ping failed", slog.Any("err", err))
	}
	return s, nil
}

// Ping checks that Redis answers, for readiness probes.
func (s *Store) Ping(ctx context.Context) error {
	ctx, cancel := s.opctx(ctx)
	defer cancel()
	if err := s.rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redis: ping %s: %w", s.opt.Addr, err)
	}
	return nil
}

// Close releases the connections.
func (s *Store) Close() error { return s.rdb.Close() }

// Stores returns s as every store of the bot's bundle.
func (s *Store) Stores() bot.Stores {
	return bot.Stores{Sessions: s, Approvals: s, Audit: s, Dedup: s, Locks: s, Runs: runIndex{s}, Limits: s, Alerts: s}
}

// opctx bounds one operation by OpTimeout unless ctx ends sooner.
func (s *Store) opctx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.opt.OpTimeout)
}

// isNil reports Redis's "no such key" reply.
func isNil(err error) bool { return errors.Is(err, goredis.Nil) }

// ttlMillis is d in whole milliseconds, at least 1 (PX rejects 0).
func ttlMillis(d time.Duration) int64 { return max(d.Milliseconds(), 1) }

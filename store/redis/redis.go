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
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/vigilops/vigil/policy/audit"

	"github.com/vigilops/vigil/bot"
	"github.com/vigilops/vigil/tools/builtin"
)

// Interface guards: Store is every store the bot and the tools need.
var (
	_ bot.SessionStore    = (*Store)(nil)
	_ bot.ApprovalStore   = (*Store)(nil)
	_ bot.AuditStore      = (*Store)(nil)
	_ bot.Deduper         = (*Store)(nil)
	_ bot.SessionLocker   = (*Store)(nil)
	_ bot.FencedLock      = (*lock)(nil)
	_ builtin.MemoryStore = (*Store)(nil)
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

	// DefaultReplicaAckTimeout is how long a write that must survive a
	// failover waits for a replica to acknowledge it (see durable).
	DefaultReplicaAckTimeout = time.Second

	// replicaCountTTL is how long a master's replica count is trusted.
	replicaCountTTL = time.Second
)

// Options configures New. Addr or Addrs is required; zero values take
// defaults. The topology follows go-redis's UniversalClient rule: with
// MasterName, Addrs are Sentinels; else more than one address is a Redis
// Cluster; else one address is a single server.
type Options struct {
	// Addr is host:port of a single server.
	Addr string
	// Addrs are Sentinels (with MasterName) or Cluster seed nodes. Only
	// one of Addr and Addrs may be set.
	Addrs []string
	// MasterName is the master's name in Sentinel; it turns on failover.
	MasterName string
	// SentinelPassword authenticates to the Sentinels (Password is the
	// data nodes').
	SentinelPassword string
	Password         string
	DB               int
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
	// AuditKeys seals the audit chain with the keyring's current key
	// (nil: records are only hashed).
	AuditKeys *audit.Keyring
	OpTimeout time.Duration
	// PoolSize is the most connections kept to Redis; 0 means go-redis's
	// default (10 per CPU). Many concurrent runs per replica want more.
	PoolSize int
	// ReplicaAckTimeout bounds the wait for a replica's acknowledgement of
	// a durable write (default DefaultReplicaAckTimeout).
	ReplicaAckTimeout time.Duration
}

// Topology names what Options connect to.
func (o Options) Topology() string {
	switch {
	case o.MasterName != "":
		return "sentinel"
	case len(o.Addrs) > 1:
		return "cluster"
	}
	return "single"
}

// where names the servers for messages.
func (o Options) where() string {
	switch o.Topology() {
	case "sentinel":
		return fmt.Sprintf("master %q via Sentinels %s", o.MasterName, strings.Join(o.Addrs, ","))
	case "cluster":
		return "Cluster " + strings.Join(o.Addrs, ",")
	}
	if len(o.Addrs) == 1 {
		return o.Addrs[0]
	}
	return o.Addr
}

// Store is the Redis implementation of the stores. It is safe for
// concurrent use; Close releases its connections.
type Store struct {
	// rdb is the client of every command; cluster is set when it is a
	// Cluster client, single otherwise (a plain or a Sentinel-failover
	// client), for durable writes, which need one node's connection.
	rdb     goredis.UniversalClient
	cluster *goredis.ClusterClient
	single  *goredis.Client
	// replicas caches each master's connected replica count.
	replicas replicaCache
	keys     keys
	opt      Options
	log      *slog.Logger
	now      func() time.Time
	// audit batches this replica's audit appends (see AppendAudit).
	audit auditQueue
	// cmds group-commits small writes of many runs (see batched).
	cmds cmdQueue
	// durables group-commits dedup marks per master (see durableBatched).
	durables durableQueues
	// hints spare a session save the read of the stored history's length.
	hints historyHints
}

// New validates opts and connects lazily: a Redis that is down at start
// makes New log a warning, not fail, so /readyz can report it (via Ping)
// while the process waits for it.
func New(ctx context.Context, opts Options) (*Store, error) {
	if opts.Addr != "" && len(opts.Addrs) > 0 {
		return nil, errors.New("redis: set store.redis.addr or store.redis.addrs, not both")
	}
	addrs := opts.Addrs
	if len(addrs) == 0 {
		if opts.Addr == "" {
			return nil, errors.New("redis: store.redis.addr is empty")
		}
		addrs = []string{opts.Addr}
	}
	var host string
	for _, a := range addrs {
		h, _, err := net.SplitHostPort(a)
		if err != nil {
			return nil, fmt.Errorf("redis: store.redis address %q: %w", a, err)
		}
		if host == "" {
			host = h
		}
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
	if opts.DB != 0 && opts.Topology() == "cluster" {
		return nil, fmt.Errorf("redis: store.redis.db %d: Redis Cluster has only database 0", opts.DB)
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
	if opts.ReplicaAckTimeout <= 0 {
		opts.ReplicaAckTimeout = DefaultReplicaAckTimeout
	}

	uo := &goredis.UniversalOptions{
		Addrs:            addrs,
		MasterName:       opts.MasterName,
		SentinelPassword: opts.SentinelPassword,
		Password:         opts.Password,
		DB:               opts.DB,
		PoolSize:         opts.PoolSize,
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
		uo.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, ServerName: host}
	}
	s := &Store{
		keys: keys{prefix: opts.KeyPrefix},
		opt:  opts,
		log:  opts.Logger,
		now:  time.Now,
	}
	// The same choice as goredis.NewUniversalClient, made here to keep
	// the concrete client for durable writes.
	switch opts.Topology() {
	case "sentinel":
		s.single = goredis.NewFailoverClient(uo.Failover())
		s.rdb = s.single
	case "cluster":
		s.cluster = goredis.NewClusterClient(uo.Cluster())
		s.rdb = s.cluster
	default:
		s.single = goredis.NewClient(uo.Simple())
		s.rdb = s.single
	}
	if err := s.Ping(ctx); err != nil {
		s.log.Warn(unreachable(opts.where(), opts.addrFix(), err))
		s.log.Debug("redis ping failed", slog.Any("err", err))
	}
	return s, nil
}

// Ping checks that Redis answers, for readiness probes.
func (s *Store) Ping(ctx context.Context) error {
	ctx, cancel := s.opctx(ctx)
	defer cancel()
	if s.cluster != nil {
		// Every master must answer: a Cluster with a master down cannot
		// serve the keys of its slots.
		err := s.cluster.ForEachMaster(ctx, func(ctx context.Context, c *goredis.Client) error {
			return c.Ping(ctx).Err()
		})
		if err == nil {
			var info string
			info, err = s.cluster.ClusterInfo(ctx).Result()
			if err == nil && !strings.Contains(info, "cluster_state:ok") {
				err = errors.New("cluster_state is not ok (a master is down or slots are unassigned)")
			}
		}
		if err != nil {
			return fmt.Errorf("redis: ping %s: %w", s.opt.where(), err)
		}
		return nil
	}
	if err := s.rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redis: ping %s: %w", s.opt.where(), err)
	}
	return nil
}

// Close sends the deferred writes still waiting (see batchedLater) and
// releases the connections.
func (s *Store) Close() error {
	s.cmds.mu.Lock()
	pending := len(s.cmds.waiting) > 0
	s.cmds.mu.Unlock()
	if pending {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = s.batched(ctx, goredis.NewStatusCmd(ctx, "ping"))
		cancel()
	}
	return s.rdb.Close()
}

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

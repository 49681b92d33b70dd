package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/vigilops/vigil/bot"
	"github.com/vigilops/vigil/internal/app"
	"github.com/vigilops/vigil/internal/testenv/modeltest"
	"github.com/vigilops/vigil/internal/testenv/testkit"
	"github.com/vigilops/vigil/policy"
	redisstore "github.com/vigilops/vigil/store/redis"
)

// Helpers for end-to-end tests on a real Redis: the shared one at
// $REDIS_ADDR (default 127.0.0.1:6379), or private servers (one, a
// Cluster, Sentinels) from redistest.

// uniquePrefix is a key prefix no other test (or run) uses. Every key under
// it is deleted when the test ends.
func uniquePrefix(t testing.TB, addr string) string {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := strings.NewReplacer("/", ".", " ", "_", "{", "(", "}", ")").Replace(t.Name())
	prefix := "vigile2e:" + name + ":" + hex.EncodeToString(b[:]) + ":"
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := deleteKeys(ctx, addr, prefix); err != nil {
			t.Errorf("delete keys under %s: %v", prefix, err)
		}
	})
	return prefix
}

// deleteKeys removes every key under prefix (SCAN + DEL).
func deleteKeys(ctx context.Context, addr, prefix string) error {
	c := goredis.NewClient(&goredis.Options{Addr: addr})
	defer c.Close()
	iter := c.Scan(ctx, 0, globQuote(prefix)+"*", 500).Iterator()
	var batch []string
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := c.Del(ctx, batch...).Err()
		batch = batch[:0]
		return err
	}
	for iter.Next(ctx) {
		batch = append(batch, iter.Val())
		if len(batch) == 500 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := iter.Err(); err != nil {
		return err
	}
	return flush()
}

func globQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// openRedisStore is one replica's own Redis client; at says where Redis
// is (Addr, or Addrs and MasterName) and the shared key prefix.
func openRedisStore(t testing.TB, at redisstore.Options) *redisstore.Store {
	t.Helper()
	s, err := redisstore.New(context.Background(), at)
	if err != nil {
		t.Fatalf("redis store: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// replica is one vigil process: its own Redis client, its own chat
// connection, the app wired exactly as `vigil run` wires it.
type replica struct {
	name  string
	chat  *testkit.Chat
	app   *app.App
	store *redisstore.Store
	logs  *testkit.SyncBuffer

	cancel context.CancelFunc
	done   chan error
	once   sync.Once
}

// replicaOptions tune one replica.
type replicaOptions struct {
	Model    *modeltest.Server
	Channels []policy.ChannelPolicy
	// SweepEvery and LockTTL: how soon this replica adopts a dead
	// replica's run (defaults: a quiet 10s sweep, 2m lock).
	SweepEvery time.Duration
	LockTTL    time.Duration
	// Observer receives the replica's metrics events (nil: none).
	Observer bot.Observer
	// AuditFile is configured as audit.file (its outbox beside it).
	AuditFile string
	// AuditRetry is how soon waiting audit records are sent again
	// (default: the bot's, 1s).
	AuditRetry time.Duration
	// WrapStores, when set, may wrap the replica's stores (to time a
	// failure to one store call).
	WrapStores func(*bot.Stores)
}

// startReplica builds and runs a replica on the Redis at names (with the
// shared key prefix); the test's cleanup stops it.
func startReplica(t testing.TB, name string, at redisstore.Options, o replicaOptions) *replica {
	t.Helper()
	if o.SweepEvery == 0 {
		o.SweepEvery = 10 * time.Second
	}
	r := &replica{name: name, chat: testkit.NewChat(), logs: &testkit.SyncBuffer{}, done: make(chan error, 1)}
	r.store = openRedisStore(t, at)
	stores := r.store.Stores()
	if o.WrapStores != nil {
		o.WrapStores(&stores)
	}
	level := slog.LevelWarn
	if os.Getenv("VIGIL_TEST_DEBUG") != "" {
		level = slog.LevelDebug
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	a, err := app.New(ctx, app.Options{
		Config:     testkit.Config(testkit.Options{Model: o.Model, Channels: o.Channels, AuditFile: o.AuditFile}),
		Stores:     &stores,
		Adapters:   []bot.Adapter{r.chat},
		Logger:     slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: level})).With("replica", name),
		SweepEvery: o.SweepEvery,
		LockTTL:    o.LockTTL,
		Observer:   o.Observer,
		AuditRetry: o.AuditRetry,
	})
	if err != nil {
		cancel()
		t.Fatalf("replica %s: %v", name, err)
	}
	r.app = a
	go func() { r.done <- a.Bot.Run(ctx) }()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("replica %s log:\n%s", name, r.logs.String())
		}
	})
	t.Cleanup(func() {
		if err := r.kill(10 * time.Second); err != nil {
			t.Errorf("replica %s: %v", name, err)
		}
		_ = a.Close()
	})
	return r
}

// kill cancels the replica's Run context, as a SIGTERM'd or dying process
// would, and waits for Run to return.
func (r *replica) kill(within time.Duration) error {
	var err error
	r.once.Do(func() {
		r.cancel()
		select {
		case e := <-r.done:
			if e != nil && !errors.Is(e, context.Canceled) {
				err = fmt.Errorf("bot stopped with: %w", e)
			}
		case <-time.After(within):
			err = fmt.Errorf("bot did not stop within %s of cancellation", within)
		}
	})
	return err
}

// running reports whether Run is still going (no crash).
func (r *replica) running() bool {
	select {
	case e := <-r.done:
		r.done <- e
		return false
	default:
		return true
	}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
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
// $REDIS_ADDR (default 127.0.0.1:6379), or a private redis-server a test
// starts, stops and restarts itself.

var quietRedis sync.Once

// silenceGoRedis mutes go-redis's own logger, a process global, which
// otherwise prints every failed dial of the outage tests; the tests check
// what vigil did about the failures instead.
func silenceGoRedis() {
	quietRedis.Do(func() { goredis.SetLogger(discardRedisLog{}) })
}

type discardRedisLog struct{}

func (discardRedisLog) Printf(context.Context, string, ...any) {}

// sharedRedisAddr is the Redis the replica tests use.
func sharedRedisAddr() string {
	if a := os.Getenv("REDIS_ADDR"); a != "" {
		return a
	}
	return "127.0.0.1:6379"
}

// requireSharedRedis fails the test (never skips: Redis is part of
// `make test`) when no Redis answers, saying how to start one.
func requireSharedRedis(t testing.TB) string {
	t.Helper()
	silenceGoRedis()
	addr := sharedRedisAddr()
	c := goredis.NewClient(&goredis.Options{Addr: addr, DialTimeout: time.Second, MaxRetries: -1})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("this test needs a real Redis at %s (set REDIS_ADDR to use another): %v\n"+
			"start one with:  redis-server --daemonize yes --save '' --appendonly no\n"+
			"or run .ci/run, which installs and starts it", addr, err)
	}
	return addr
}

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

// openRedisStore is one replica's own Redis client on a shared prefix.
func openRedisStore(t testing.TB, addr, prefix string) *redisstore.Store {
	t.Helper()
	s, err := redisstore.New(context.Background(), redisstore.Options{Addr: addr, KeyPrefix: prefix})
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
}

// startReplica builds and runs a replica on Redis addr under prefix; the
// test's cleanup stops it.
func startReplica(t testing.TB, name, addr, prefix string, o replicaOptions) *replica {
	t.Helper()
	if o.SweepEvery == 0 {
		o.SweepEvery = 10 * time.Second
	}
	r := &replica{name: name, chat: testkit.NewChat(), logs: &testkit.SyncBuffer{}, done: make(chan error, 1)}
	r.store = openRedisStore(t, addr, prefix)
	stores := r.store.Stores()
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

// privateRedis is a redis-server this test owns, on a free port, with
// append-only persistence in a temp dir so its data survives a crash and
// restart (as a production Redis with persistence does).
type privateRedis struct {
	t    testing.TB
	bin  string
	dir  string
	port int

	mu  sync.Mutex
	cmd *exec.Cmd
}

// startPrivateRedis starts a redis-server on a free port.
func startPrivateRedis(t testing.TB) *privateRedis {
	t.Helper()
	silenceGoRedis()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("this test starts its own redis-server, which is not installed: %v\n"+
			"install it with:  apt-get install redis-server   (or run .ci/run)", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	r := &privateRedis{t: t, bin: bin, dir: t.TempDir(), port: port}
	r.Start()
	t.Cleanup(r.Crash)
	return r
}

// Addr is host:port.
func (r *privateRedis) Addr() string { return "127.0.0.1:" + strconv.Itoa(r.port) }

// Start runs redis-server (again) on the same port and data dir and waits
// until it answers.
func (r *privateRedis) Start() {
	r.t.Helper()
	cmd := exec.Command(r.bin,
		"--bind", "127.0.0.1", "--port", strconv.Itoa(r.port),
		"--dir", r.dir, "--save", "", "--appendonly", "yes", "--appendfsync", "always",
		"--logfile", filepath.Join(r.dir, "redis.log"))
	if err := cmd.Start(); err != nil {
		r.t.Fatalf("start redis-server: %v", err)
	}
	r.mu.Lock()
	r.cmd = cmd
	r.mu.Unlock()
	c := goredis.NewClient(&goredis.Options{Addr: r.Addr(), MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(r.dir, "redis.log"))
			r.t.Fatalf("redis-server on %s did not answer within 10s: %v\n%s", r.Addr(), err, log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Crash kills redis-server with SIGKILL (no shutdown, no save) and waits
// for it to exit. What was acknowledged is in the append-only file.
func (r *privateRedis) Crash() {
	r.mu.Lock()
	cmd := r.cmd
	r.cmd = nil
	r.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
}

// Freeze stops the process (SIGSTOP): connections are accepted by the
// kernel but nothing answers, as with a hung or overloaded Redis. Thaw
// continues it with its data intact.
func (r *privateRedis) Freeze() { r.signal(syscall.SIGSTOP) }

// Thaw continues a frozen redis-server.
func (r *privateRedis) Thaw() { r.signal(syscall.SIGCONT) }

func (r *privateRedis) signal(sig syscall.Signal) {
	r.t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd == nil {
		r.t.Fatalf("redis-server is not running")
	}
	if err := r.cmd.Process.Signal(sig); err != nil {
		r.t.Fatalf("signal redis-server: %v", err)
	}
}

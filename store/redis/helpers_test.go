package redis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// TestMain silences go-redis's own logger, a process global: the outage
// tests would fill the output with its dial failures, which the tests
// check as returned errors instead.
func TestMain(m *testing.M) {
	goredis.SetLogger(discardLogger{})
	os.Exit(m.Run())
}

type discardLogger struct{}

func (discardLogger) Printf(context.Context, string, ...any) {}

// redisAddr is the Redis the tests use: $REDIS_ADDR or the local default.
func redisAddr() string {
	if a := os.Getenv("REDIS_ADDR"); a != "" {
		return a
	}
	return "127.0.0.1:6379"
}

// requireRedis fails the test (never skips: Redis is part of `make test`)
// when no Redis answers, saying how to start one.
func requireRedis(t testing.TB) {
	t.Helper()
	c := goredis.NewClient(&goredis.Options{Addr: redisAddr(), DialTimeout: time.Second, MaxRetries: -1})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("these tests need a real Redis at %s (set REDIS_ADDR to use another): %v\n"+
			"start one with:  redis-server --port 6379 --save '' --appendonly no --daemonize yes\n"+
			"(on Debian: apt-get install redis-server; .ci/run does both)", redisAddr(), err)
	}
}

// testPrefix is a key prefix no other test uses.
func testPrefix(t testing.TB) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := strings.NewReplacer("/", ".", " ", "_", "{", "(", "}", ")").Replace(t.Name())
	return "vigiltest:" + name + ":" + hex.EncodeToString(b[:]) + ":"
}

// newTestStore opens a Store on the test Redis under a fresh prefix and
// deletes every key of that prefix when the test ends.
func newTestStore(t testing.TB) *Store {
	t.Helper()
	requireRedis(t)
	return openStore(t, testPrefix(t))
}

// openStore opens another Store (another replica) on an existing prefix.
func openStore(t testing.TB, prefix string) *Store {
	t.Helper()
	s, err := New(context.Background(), Options{Addr: redisAddr(), KeyPrefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := deletePrefix(ctx, s.rdb, s.keys); err != nil {
			t.Errorf("cleanup of %s: %v", prefix, err)
		}
		_ = s.Close()
	})
	return s
}

// deletePrefix removes every key under k's prefix.
func deletePrefix(ctx context.Context, rdb *goredis.Client, k keys) error {
	iter := rdb.Scan(ctx, 0, k.all(), 500).Iterator()
	var batch []string
	for iter.Next(ctx) {
		batch = append(batch, iter.Val())
		if len(batch) == 500 {
			if err := rdb.Unlink(ctx, batch...).Err(); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	if err := iter.Err(); err != nil {
		return err
	}
	if len(batch) > 0 {
		return rdb.Unlink(ctx, batch...).Err()
	}
	return nil
}

// prefixKeys lists the keys under s's prefix, without the prefix.
func prefixKeys(t testing.TB, s *Store) []string {
	t.Helper()
	var out []string
	iter := s.rdb.Scan(context.Background(), 0, s.keys.all(), 500).Iterator()
	for iter.Next(context.Background()) {
		out = append(out, strings.TrimPrefix(iter.Val(), s.keys.prefix))
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

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

	"github.com/vigilops/vigil/internal/testenv/redistest"
)

// TestMain silences go-redis's own logger, a process global: the outage
// tests would fill the output with its dial failures, which the tests
// check as returned errors instead.
func TestMain(m *testing.M) {
	redistest.Silence()
	os.Exit(m.Run())
}

// redisAddr is the Redis the tests use: $REDIS_ADDR or the local default.
func redisAddr() string { return redistest.SharedAddr() }

// requireRedis fails the test (never skips: Redis is part of `make test`)
// when no Redis answers, saying how to start one.
func requireRedis(t testing.TB) { t.Helper(); redistest.RequireShared(t) }

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
	return openStoreWith(t, Options{Addr: redisAddr(), KeyPrefix: prefix})
}

// openStoreWith opens a Store with opts. On the shared Redis it deletes
// its prefix's keys at cleanup.
func openStoreWith(t testing.TB, opts Options) *Store {
	t.Helper()
	s, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if len(opts.Addrs) > 0 {
			// A Cluster or Sentinel set started by the test: its servers
			// go with it, and one may have been killed on purpose, so
			// there is nothing to clean and nothing reliable to ask.
			_ = s.Close()
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := deletePrefix(ctx, s); err != nil {
			t.Errorf("cleanup of %s: %v", opts.KeyPrefix, err)
		}
		_ = s.Close()
	})
	return s
}

// eachNode runs fn on every node that holds data: the one server, or each
// Cluster master.
func eachNode(ctx context.Context, s *Store, fn func(c *goredis.Client) error) error {
	if s.cluster != nil {
		return s.cluster.ForEachMaster(ctx, func(ctx context.Context, c *goredis.Client) error { return fn(c) })
	}
	return fn(s.single)
}

// deletePrefix removes every key under s's prefix. Keys go one UNLINK
// each (pipelined): on a Cluster, one UNLINK may not span slots.
func deletePrefix(ctx context.Context, s *Store) error {
	return eachNode(ctx, s, func(c *goredis.Client) error {
		var found []string
		iter := c.Scan(ctx, 0, s.keys.all(), 500).Iterator()
		for iter.Next(ctx) {
			found = append(found, iter.Val())
		}
		if err := iter.Err(); err != nil || len(found) == 0 {
			return err
		}
		_, err := c.Pipelined(ctx, func(p goredis.Pipeliner) error {
			for _, k := range found {
				p.Unlink(ctx, k)
			}
			return nil
		})
		return err
	})
}

// prefixKeys lists the keys under s's prefix, without the prefix.
func prefixKeys(t testing.TB, s *Store) []string {
	t.Helper()
	var out []string
	err := eachNode(context.Background(), s, func(c *goredis.Client) error {
		iter := c.Scan(context.Background(), 0, s.keys.all(), 500).Iterator()
		for iter.Next(context.Background()) {
			out = append(out, strings.TrimPrefix(iter.Val(), s.keys.prefix))
		}
		return iter.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

package redis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/vigilops/vigil/bot"
)

// FirstSeen implements bot.Deduper with SET NX and an expiry: of several
// replicas receiving the same event, exactly one sees true. Marks are
// group-committed per master (see durableBatched): a crowd of events
// costs a few round trips, not one connection each.
func (s *Store) FirstSeen(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	if ttl <= 0 {
		return false, fmt.Errorf("redis: dedup %q: ttl must be positive, got %s", key, ttl)
	}
	k := s.keys.dedup(key)
	set := goredis.NewStatusCmd(ctx, "set", k, "1", "px", ttlMillis(ttl), "nx")
	w, err := s.durableBatched(ctx, k, set)
	if err != nil {
		return false, fmt.Errorf("redis: dedup %q: %w", key, err)
	}
	octx, cancel := s.opctx(ctx)
	defer cancel()
	select {
	case <-w.done:
	case <-octx.Done():
		// The mark may still be set with its batch: take it back then,
		// so that a redelivery of the event is handled.
		go func() {
			<-w.done
			if set.Err() == nil {
				s.dropMark(ctx, key, k)
			}
		}()
		return false, fmt.Errorf("redis: dedup %q: %w", key, context.Cause(octx))
	}
	err = set.Err()
	if err == nil {
		err = w.err
	}
	if set.Err() == nil && errors.Is(err, ErrNotReplicated) {
		// The event is not handled now; forget the mark so a redelivery
		// of it is handled.
		s.dropMark(ctx, key, k)
	}
	switch {
	case err == nil:
		return true, nil
	case isNil(err):
		return false, nil
	default:
		return false, fmt.Errorf("redis: dedup %q: %w", key, err)
	}
}

// dropMark deletes the dedup mark k of an event that is not handled.
func (s *Store) dropMark(ctx context.Context, key, k string) {
	dctx, cancel := s.opctx(context.WithoutCancel(ctx))
	defer cancel()
	if err := s.rdb.Del(dctx, k).Err(); err != nil {
		s.log.Warn("redis: drop a dedup mark of an event not handled", "key", key, "err", err)
	}
}

// renewLock and releaseLock act only for the holder whose token is stored.
// KEYS: lock. ARGV: token (, ttl ms). Return 1 if done, 0 if lost.
var (
	renewLock = goredis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`)
	releaseLock = goredis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
`)
)

// Lock implements bot.Locker: SET NX PX with a random token, so only the
// holder can renew or release it.
func (s *Store) Lock(ctx context.Context, key string, ttl time.Duration) (bot.Lock, error) {
	l, err := s.newLock(key, ttl)
	if err != nil {
		return nil, err
	}
	ctx, cancel := s.opctx(ctx)
	defer cancel()
	err = s.rdb.SetArgs(ctx, l.key, l.token, goredis.SetArgs{Mode: "NX", TTL: time.Duration(ttlMillis(ttl)) * time.Millisecond}).Err()
	switch {
	case err == nil:
		return l, nil
	case isNil(err):
		return nil, fmt.Errorf("lock %q: %w", key, bot.ErrLocked)
	default:
		return nil, fmt.Errorf("redis: lock %q: %w", key, err)
	}
}

// newLock is a holder's lock on key, not taken yet: a fresh random token.
func (s *Store) newLock(key string, ttl time.Duration) (*lock, error) {
	if ttl <= 0 {
		return nil, fmt.Errorf("redis: lock %q: ttl must be positive, got %s", key, ttl)
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("redis: lock token: %w", err)
	}
	return &lock{s: s, key: s.keys.lock(key), name: key, token: hex.EncodeToString(b[:]), ttl: ttl}, nil
}

// lock is one holder's lock.
type lock struct {
	s     *Store
	key   string // the Redis key
	name  string // the caller's key, for messages
	token string
	ttl   time.Duration
}

// Renew implements bot.Lock.
func (l *lock) Renew(ctx context.Context) error {
	return l.run(ctx, "renew", renewLock, l.token, ttlMillis(l.ttl))
}

// Unlock implements bot.Lock. Releases are group-committed (see batched):
// runs end in crowds.
func (l *lock) Unlock(ctx context.Context) error {
	ctx, cancel := l.s.opctx(ctx)
	defer cancel()
	done, err := l.s.batchedScript(ctx, releaseLock, []string{l.key}, l.token).Int()
	if err != nil {
		return fmt.Errorf("redis: unlock lock %q: %w", l.name, err)
	}
	if done != 1 {
		return fmt.Errorf("unlock lock %q: %w", l.name, bot.ErrLocked)
	}
	return nil
}

func (l *lock) run(ctx context.Context, op string, script *goredis.Script, args ...any) error {
	ctx, cancel := l.s.opctx(ctx)
	defer cancel()
	done, err := script.Run(ctx, l.s.rdb, []string{l.key}, args...).Int()
	if err != nil {
		return fmt.Errorf("redis: %s lock %q: %w", op, l.name, err)
	}
	if done != 1 {
		return fmt.Errorf("%s lock %q: %w", op, l.name, bot.ErrLocked)
	}
	return nil
}

package redis

import (
	"context"
	"errors"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// The part of bot.AlertGroupStore that bounds alert intake across
// replicas: each route's open groups in one sorted set scored by when each
// stops counting, and the event IDs sources sent, each a key that expires.

// admitOpen drops a route's groups that stopped counting, then counts key
// if it is counted already or fewer than the limit are. KEYS: the route's
// set. ARGV: key, limit, now (ms), until (ms), idle (ms); a limit of -1
// admits whatever the count. Returns 1 when counted.
var admitOpen = goredis.NewScript(`
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3])
local limit = tonumber(ARGV[2])
if limit >= 0 and not redis.call('ZSCORE', KEYS[1], ARGV[1]) and redis.call('ZCARD', KEYS[1]) >= limit then
  return 0
end
redis.call('ZADD', KEYS[1], ARGV[4], ARGV[1])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[5]) then
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
end
return 1
`)

func checkOpenArgs(route, key string, idle time.Duration) error {
	switch {
	case route == "" || key == "":
		return errors.New("redis: open alert groups: route and key are required")
	case idle <= 0:
		return fmt.Errorf("redis: open alert groups of %s: idle must be positive, got %s", route, idle)
	}
	return nil
}

func (s *Store) admit(ctx context.Context, route, key string, limit int, idle time.Duration) (bool, error) {
	if err := checkOpenArgs(route, key, idle); err != nil {
		return false, err
	}
	now := s.now()
	ctx, cancel := s.opctx(ctx)
	defer cancel()
	n, err := admitOpen.Run(ctx, s.rdb, []string{s.keys.alertOpen(route)}, key, limit, now.UnixMilli(),
		now.Add(idle).UnixMilli(), ttlMillis(idle)).Int()
	if err != nil {
		return false, fmt.Errorf("redis: open alert groups of %s: %w", route, err)
	}
	return n == 1, nil
}

// AdmitOpenAlertGroup implements bot.AlertGroupStore.
func (s *Store) AdmitOpenAlertGroup(ctx context.Context, route, key string, limit int, idle time.Duration) (bool, error) {
	return s.admit(ctx, route, key, max(limit, 0), idle)
}

// SetAlertGroupOpen implements bot.AlertGroupStore.
func (s *Store) SetAlertGroupOpen(ctx context.Context, route, key string, open bool, idle time.Duration) error {
	if open {
		_, err := s.admit(ctx, route, key, -1, idle)
		return err
	}
	if err := checkOpenArgs(route, key, idle); err != nil {
		return err
	}
	ctx, cancel := s.opctx(ctx)
	defer cancel()
	if err := s.rdb.ZRem(ctx, s.keys.alertOpen(route), key).Err(); err != nil {
		return fmt.Errorf("redis: close alert group %s of %s: %w", key, route, err)
	}
	return nil
}

// ClaimAlertEvent implements bot.AlertGroupStore.
func (s *Store) ClaimAlertEvent(ctx context.Context, id string, ttl time.Duration) (bool, error) {
	if id == "" || ttl <= 0 {
		return false, fmt.Errorf("redis: claim alert event %q: an ID and a positive ttl are required, got ttl %s", id, ttl)
	}
	ctx, cancel := s.opctx(ctx)
	defer cancel()
	ok, err := s.rdb.SetNX(ctx, s.keys.alertEvent(id), "1", time.Duration(ttlMillis(ttl))*time.Millisecond).Result()
	if err != nil {
		return false, fmt.Errorf("redis: claim alert event %q: %w", id, err)
	}
	return ok, nil
}

// ReleaseAlertEvent implements bot.AlertGroupStore.
func (s *Store) ReleaseAlertEvent(ctx context.Context, id string) error {
	ctx, cancel := s.opctx(ctx)
	defer cancel()
	if err := s.rdb.Del(ctx, s.keys.alertEvent(id)).Err(); err != nil {
		return fmt.Errorf("redis: release alert event %q: %w", id, err)
	}
	return nil
}

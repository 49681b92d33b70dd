package redis

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	goredis "github.com/redis/go-redis/v9"

	"github.com/vigilops/vigil/tools/builtin"
)

// Long-term memories (SPEC A13) are a hash of JSON by memory key and a
// sorted set of keys by time. The set bounds the store: past
// builtin.DefaultMemoryLimit the oldest memories go, as in the in-memory
// store.

// remember stores a memory and evicts the oldest beyond the limit. KEYS:
// items, recent. ARGV: key, JSON, time score (ms), limit.
var remember = goredis.NewScript(`
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
local over = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[4])
if over > 0 then
  local old = redis.call('ZPOPMIN', KEYS[2], over)
  for i = 1, #old, 2 do redis.call('HDEL', KEYS[1], old[i]) end
end
return 1
`)

// Remember implements builtin.MemoryStore; a memory with the same key is
// replaced.
func (s *Store) Remember(ctx context.Context, m builtin.Memory) error {
	if m.At.IsZero() {
		m.At = s.now()
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("redis: encode memory %q: %w", m.Key, err)
	}
	ctx, cancel := s.opctx(ctx)
	defer cancel()
	err = remember.Run(ctx, s.rdb, []string{s.keys.memoryItems(), s.keys.memoryRecent()},
		m.Key, raw, m.At.UnixMilli(), builtin.DefaultMemoryLimit).Err()
	if err != nil {
		return fmt.Errorf("redis: remember %q: %w", m.Key, err)
	}
	return nil
}

// Search implements builtin.MemoryStore. It ranks exactly as the in-memory
// store does, by handing the memories to one: the set is bounded, and
// searching happens once per run, not per message.
func (s *Store) Search(ctx context.Context, query string, limit int) ([]builtin.Memory, error) {
	ctx, cancel := s.opctx(ctx)
	defer cancel()
	all, err := s.rdb.HVals(ctx, s.keys.memoryItems()).Result()
	if err != nil {
		return nil, fmt.Errorf("redis: search memories: %w", err)
	}
	rank := builtin.NewMemoryStore()
	for _, raw := range all {
		var m builtin.Memory
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			return nil, fmt.Errorf("redis: decode memory: %w", err)
		}
		if err := rank.Remember(ctx, m); err != nil {
			return nil, err
		}
	}
	found, err := rank.Search(ctx, query, limit)
	if err != nil {
		return nil, err
	}
	return slices.Clip(found), nil
}

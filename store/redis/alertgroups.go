package redis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/vigilops/vigil/bot"
)

var _ bot.AlertGroupStore = (*Store)(nil)

// LoadAlertGroup implements bot.AlertGroupStore.
func (s *Store) LoadAlertGroup(ctx context.Context, key string) (*bot.AlertGroup, error) {
	ctx, cancel := s.opctx(ctx)
	defer cancel()
	raw, err := s.rdb.Get(ctx, s.keys.alertGroup(key)).Bytes()
	if isNil(err) {
		return nil, fmt.Errorf("alert group %q: %w", key, bot.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("redis: load alert group %q: %w", key, err)
	}
	var g bot.AlertGroup
	if err := json.Unmarshal(raw, &g); err != nil {
		return nil, fmt.Errorf("redis: decode alert group %q: %w", key, err)
	}
	return &g, nil
}

// SaveAlertGroup implements bot.AlertGroupStore.
func (s *Store) SaveAlertGroup(ctx context.Context, g *bot.AlertGroup, ttl time.Duration) error {
	if g == nil || g.Key == "" {
		return errors.New("redis: save alert group: no key")
	}
	if ttl <= 0 {
		return fmt.Errorf("redis: save alert group %q: ttl must be positive, got %s", g.Key, ttl)
	}
	raw, err := json.Marshal(g)
	if err != nil {
		return fmt.Errorf("redis: encode alert group %q: %w", g.Key, err)
	}
	ctx, cancel := s.opctx(ctx)
	defer cancel()
	if err := s.rdb.Set(ctx, s.keys.alertGroup(g.Key), raw, time.Duration(ttlMillis(ttl))*time.Millisecond).Err(); err != nil {
		return fmt.Errorf("redis: save alert group %q: %w", g.Key, err)
	}
	// The index is another hash slot than the record: a second command.
	// Written after the record, so an index entry never points at a
	// record older than it; DueAlertGroups prunes what a failure here
	// leaves behind.
	if g.Pending() {
		err = s.rdb.ZAdd(ctx, s.keys.alertDue(), goredis.Z{Score: float64(g.DueAt.UnixMilli()), Member: g.Key}).Err()
	} else {
		err = s.rdb.ZRem(ctx, s.keys.alertDue(), g.Key).Err()
	}
	if err != nil {
		return fmt.Errorf("redis: index alert group %q: %w", g.Key, err)
	}
	return nil
}

// dropDueIfScore removes a member of the due index only if its score is
// still the one read: a replica that re-indexed the group meanwhile (a
// new notification moves DueAt) keeps its entry.
var dropDueIfScore = goredis.NewScript(`
local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
if s and tonumber(s) == tonumber(ARGV[2]) then
  return redis.call('ZREM', KEYS[1], ARGV[1])
end
return 0
`)

// DueAlertGroups implements bot.AlertGroupStore. Each candidate's record
// is read back: an entry whose group expired or is no longer pending is
// removed, one whose score disagrees with the record's DueAt is
// re-scored, and neither is returned.
func (s *Store) DueAlertGroups(ctx context.Context, now time.Time, limit int) ([]string, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("redis: due alert groups: limit must be positive, got %d", limit)
	}
	ctx, cancel := s.opctx(ctx)
	defer cancel()
	idx := s.keys.alertDue()
	zs, err := s.rdb.ZRangeByScoreWithScores(ctx, idx, &goredis.ZRangeBy{
		Min: "-inf", Max: strconv.FormatInt(now.UnixMilli(), 10), Count: int64(limit),
	}).Result()
	if err != nil {
		return nil, fmt.Errorf("redis: list due alert groups: %w", err)
	}
	var keys []string
	for _, z := range zs {
		key, _ := z.Member.(string)
		g, err := s.LoadAlertGroup(ctx, key)
		switch {
		case errors.Is(err, bot.ErrNotFound):
		case err != nil:
			return nil, err
		case !g.Pending():
		case g.DueAt.UnixMilli() != int64(z.Score):
			if err := s.rdb.ZAddXX(ctx, idx, goredis.Z{Score: float64(g.DueAt.UnixMilli()), Member: key}).Err(); err != nil {
				return nil, fmt.Errorf("redis: re-index alert group %q: %w", key, err)
			}
			if !g.DueAt.After(now) {
				keys = append(keys, key)
			}
			continue
		default:
			keys = append(keys, key)
			continue
		}
		if err := dropDueIfScore.Run(ctx, s.rdb, []string{idx}, key, int64(z.Score)).Err(); err != nil {
			return nil, fmt.Errorf("redis: prune alert group %q from the due index: %w", key, err)
		}
	}
	return keys, nil
}

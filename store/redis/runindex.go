package redis

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	goredis "github.com/redis/go-redis/v9"

	"github.com/vigilops/vigil/bot"
)

// runIndex is the Redis bot.RunIndex: one hash of thread key → thread ref.
// Marking is group-committed (see batched): runs start and end in crowds.
type runIndex struct{ s *Store }

var _ bot.RunIndex = runIndex{}

func (r runIndex) MarkActive(ctx context.Context, t bot.ThreadRef) error {
	raw, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("redis: encode thread ref: %w", err)
	}
	ctx, cancel := r.s.opctx(ctx)
	defer cancel()
	cmd := goredis.NewIntCmd(ctx, "hset", r.s.keys.runsActive(), t.Key(), raw)
	if err := r.s.batched(ctx, cmd); err != nil {
		return fmt.Errorf("redis: mark run active: %w", err)
	}
	if err := cmd.Err(); err != nil {
		return fmt.Errorf("redis: mark run active: %w", err)
	}
	return nil
}

func (r runIndex) MarkIdle(ctx context.Context, key string) error {
	ctx, cancel := r.s.opctx(ctx)
	defer cancel()
	cmd := goredis.NewIntCmd(ctx, "hdel", r.s.keys.runsActive(), key)
	if err := r.s.batched(ctx, cmd); err != nil {
		return fmt.Errorf("redis: mark run idle: %w", err)
	}
	if err := cmd.Err(); err != nil {
		return fmt.Errorf("redis: mark run idle: %w", err)
	}
	return nil
}

func (r runIndex) ActiveRuns(ctx context.Context) ([]bot.ThreadRef, error) {
	ctx, cancel := r.s.opctx(ctx)
	defer cancel()
	all, err := r.s.rdb.HGetAll(ctx, r.s.keys.runsActive()).Result()
	if err != nil {
		return nil, fmt.Errorf("redis: list active runs: %w", err)
	}
	out := make([]bot.ThreadRef, 0, len(all))
	for key, raw := range all {
		var t bot.ThreadRef
		if err := json.Unmarshal([]byte(raw), &t); err != nil {
			r.s.log.Warn("dropping unreadable run index entry", "key", key, "err", err)
			continue
		}
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key() < out[j].Key() })
	return out, nil
}

package redis

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/vigilops/vigil/bot"
)

// runIndex is the Redis bot.RunIndex: one hash of thread key → thread ref.
type runIndex struct{ s *Store }

var _ bot.RunIndex = runIndex{}

func (r runIndex) MarkActive(ctx context.Context, t bot.ThreadRef) error {
	raw, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("redis: encode thread ref: %w", err)
	}
	ctx, cancel := r.s.opctx(ctx)
	defer cancel()
	if err := r.s.rdb.HSet(ctx, r.s.keys.runsActive(), t.Key(), raw).Err(); err != nil {
		return fmt.Errorf("redis: mark run active: %w", err)
	}
	return nil
}

func (r runIndex) MarkIdle(ctx context.Context, key string) error {
	ctx, cancel := r.s.opctx(ctx)
	defer cancel()
	if err := r.s.rdb.HDel(ctx, r.s.keys.runsActive(), key).Err(); err != nil {
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

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
// Marks are deferred and group-committed (see batchedLater): runs start
// and end in crowds, and each mark goes out with the run's next write.
type runIndex struct{ s *Store }

var _ bot.RunIndex = runIndex{}

// MarkActive defers its write (see batchedLater): the run's first
// checkpoint, which the bot saves next under the same key, sends it in
// its own pipeline, before the save. A failure is logged, as the bot
// would log it.
func (r runIndex) MarkActive(ctx context.Context, t bot.ThreadRef) error {
	raw, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("redis: encode thread ref: %w", err)
	}
	r.s.batchedLater(ctx, goredis.NewIntCmd(ctx, "hset", r.s.keys.runsActive(), t.Key(), raw), t.Key(), "mark run active "+t.Key())
	return nil
}

// MarkIdle defers its write too: the release of the thread's lock, which
// follows, takes it along.
func (r runIndex) MarkIdle(ctx context.Context, key string) error {
	r.s.batchedLater(ctx, goredis.NewIntCmd(ctx, "hdel", r.s.keys.runsActive(), key), "", "mark run idle "+key)
	return nil
}

func (r runIndex) ActiveRuns(ctx context.Context) ([]bot.ThreadRef, error) {
	ctx, cancel := r.s.opctx(ctx)
	defer cancel()
	// Queued behind this replica's deferred marks, so it sees them.
	cmd := goredis.NewMapStringStringCmd(ctx, "hgetall", r.s.keys.runsActive())
	if err := r.s.batched(ctx, cmd); err != nil {
		return nil, fmt.Errorf("redis: list active runs: %w", err)
	}
	all, err := cmd.Result()
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

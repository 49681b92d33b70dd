package redis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

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
	return nil
}

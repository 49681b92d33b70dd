package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/vigilops/vigil/bot"
)

var _ bot.AlertGroupStore = (*alertGroups)(nil)

// alertGroups is the in-memory bot.AlertGroupStore: JSON copies that
// expire.
type alertGroups struct {
	now func() time.Time

	mu     sync.Mutex
	groups map[string]storedGroup

	// intake bounds alert intake (alertlimits.go).
	intake alertIntake
}

type storedGroup struct {
	raw     []byte
	expires time.Time
	// pending and due index the group for DueAlertGroups.
	pending bool
	due     time.Time
}

func (a *alertGroups) LoadAlertGroup(ctx context.Context, key string) (*bot.AlertGroup, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	a.mu.Lock()
	sg, ok := a.groups[key]
	if ok && !a.now().Before(sg.expires) {
		delete(a.groups, key)
		ok = false
	}
	a.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("alert group %q: %w", key, bot.ErrNotFound)
	}
	var g bot.AlertGroup
	if err := json.Unmarshal(sg.raw, &g); err != nil {
		return nil, fmt.Errorf("decode alert group %q: %w", key, err)
	}
	return &g, nil
}

func (a *alertGroups) SaveAlertGroup(ctx context.Context, g *bot.AlertGroup, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if g == nil || g.Key == "" {
		return errors.New("save alert group: no key")
	}
	if ttl <= 0 {
		return fmt.Errorf("save alert group %q: ttl must be positive, got %s", g.Key, ttl)
	}
	raw, err := json.Marshal(g)
	if err != nil {
		return fmt.Errorf("encode alert group %q: %w", g.Key, err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.groups == nil {
		a.groups = map[string]storedGroup{}
	}
	now := a.now()
	if len(a.groups) > 1024 {
		for k, v := range a.groups {
			if !now.Before(v.expires) {
				delete(a.groups, k)
			}
		}
	}
	a.groups[g.Key] = storedGroup{raw: raw, expires: now.Add(ttl), pending: g.Pending(), due: g.DueAt}
	return nil
}

func (a *alertGroups) DueAlertGroups(ctx context.Context, now time.Time, limit int) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if limit <= 0 {
		return nil, fmt.Errorf("due alert groups: limit must be positive, got %d", limit)
	}
	a.mu.Lock()
	type due struct {
		key string
		at  time.Time
	}
	var found []due
	clock := a.now()
	for k, sg := range a.groups {
		if !clock.Before(sg.expires) {
			delete(a.groups, k)
			continue
		}
		if sg.pending && !sg.due.After(now) {
			found = append(found, due{k, sg.due})
		}
	}
	a.mu.Unlock()
	sort.Slice(found, func(i, j int) bool {
		if !found[i].at.Equal(found[j].at) {
			return found[i].at.Before(found[j].at)
		}
		return found[i].key < found[j].key
	})
	keys := make([]string, 0, min(limit, len(found)))
	for _, d := range found[:min(limit, len(found))] {
		keys = append(keys, d.key)
	}
	return keys, nil
}

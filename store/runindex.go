package store

import (
	"context"
	"sort"
	"sync"

	"github.com/vigilops/vigil/bot"
)

// runIndex is the in-memory bot.RunIndex.
type runIndex struct {
	mu     sync.Mutex
	active map[string]bot.ThreadRef
}

var _ bot.RunIndex = (*runIndex)(nil)

func (r *runIndex) MarkActive(_ context.Context, t bot.ThreadRef) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.active == nil {
		r.active = map[string]bot.ThreadRef{}
	}
	r.active[t.Key()] = t
	return nil
}

func (r *runIndex) MarkIdle(_ context.Context, key string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.active, key)
	return nil
}

func (r *runIndex) ActiveRuns(context.Context) ([]bot.ThreadRef, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]bot.ThreadRef, 0, len(r.active))
	for _, t := range r.active {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key() < out[j].Key() })
	return out, nil
}

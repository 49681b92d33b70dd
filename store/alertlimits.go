package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// alertIntake is the in-memory part of bot.AlertGroupStore that bounds
// alert intake: each route's open groups, and the event IDs sources sent.
type alertIntake struct {
	mu sync.Mutex
	// open maps a route to its open groups' keys and when each stops
	// counting.
	open map[string]map[string]time.Time
	// events maps a claimed event ID to when it is forgotten.
	events map[string]time.Time
}

// maxEvents bounds the event IDs remembered; past it, expired ones are
// swept at each claim.
const maxEvents = 4096

func checkOpenArgs(route, key string, idle time.Duration) error {
	switch {
	case route == "" || key == "":
		return errors.New("open alert groups: route and key are required")
	case idle <= 0:
		return fmt.Errorf("open alert groups of %s: idle must be positive, got %s", route, idle)
	}
	return nil
}

// openOf returns route's open groups with the expired ones dropped.
func (in *alertIntake) openOf(route string, now time.Time) map[string]time.Time {
	if in.open == nil {
		in.open = map[string]map[string]time.Time{}
	}
	m := in.open[route]
	if m == nil {
		m = map[string]time.Time{}
		in.open[route] = m
	}
	for k, until := range m {
		if !now.Before(until) {
			delete(m, k)
		}
	}
	return m
}

// AdmitOpenAlertGroup implements bot.AlertGroupStore.
func (a *alertGroups) AdmitOpenAlertGroup(ctx context.Context, route, key string, limit int, idle time.Duration) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if err := checkOpenArgs(route, key, idle); err != nil {
		return false, err
	}
	now := a.now()
	in := &a.intake
	in.mu.Lock()
	defer in.mu.Unlock()
	m := in.openOf(route, now)
	if _, ok := m[key]; !ok && len(m) >= limit {
		return false, nil
	}
	m[key] = now.Add(idle)
	return true, nil
}

// SetAlertGroupOpen implements bot.AlertGroupStore.
func (a *alertGroups) SetAlertGroupOpen(ctx context.Context, route, key string, open bool, idle time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkOpenArgs(route, key, idle); err != nil {
		return err
	}
	now := a.now()
	in := &a.intake
	in.mu.Lock()
	defer in.mu.Unlock()
	m := in.openOf(route, now)
	if open {
		m[key] = now.Add(idle)
	} else {
		delete(m, key)
	}
	return nil
}

// ClaimAlertEvent implements bot.AlertGroupStore.
func (a *alertGroups) ClaimAlertEvent(ctx context.Context, id string, ttl time.Duration) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if id == "" || ttl <= 0 {
		return false, fmt.Errorf("claim alert event %q: an ID and a positive ttl are required, got ttl %s", id, ttl)
	}
	now := a.now()
	in := &a.intake
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.events == nil {
		in.events = map[string]time.Time{}
	}
	if len(in.events) >= maxEvents {
		for k, until := range in.events {
			if !now.Before(until) {
				delete(in.events, k)
			}
		}
	}
	if until, ok := in.events[id]; ok && now.Before(until) {
		return false, nil
	}
	in.events[id] = now.Add(ttl)
	return true, nil
}

// ReleaseAlertEvent implements bot.AlertGroupStore.
func (a *alertGroups) ReleaseAlertEvent(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	in := &a.intake
	in.mu.Lock()
	delete(in.events, id)
	in.mu.Unlock()
	return nil
}

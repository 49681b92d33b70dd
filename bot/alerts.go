package bot

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/policy"
)

// Alert-driven investigations (SPEC N1). A routed notification
// (from an inbound adapter such as adapters/alertwebhook) becomes one thread per alert group: the first
// replica to take the group's lock and find no record opens the thread and
// saves the record; every later notification of the group, on any
// replica, compares itself with the record and posts only what changed
// (alerts joining, alerts resolving), editing the thread's first message
// to the group's current state. After the group settles (Debounce) the
// replica that opened the thread starts an investigation: a normal run in
// that thread whose requester is the alert source, never a person
// (policy.SystemRequester), so every change it proposes waits for an
// approver whatever the channel's level.

// AlertGroup is one alert group's record in the store.
type AlertGroup struct {
	Key      string `json:"key"`
	Source   string `json:"source"`
	GroupKey string `json:"group_key"`
	Route    string `json:"route"`
	Prompt   string `json:"prompt,omitempty"`
	// Thread is the group's conversation; Root its first message.
	Thread ThreadRef  `json:"thread"`
	Root   MessageRef `json:"root"`
	// Alerts are the group's alerts as last notified, by first appearance.
	Alerts       []Alert           `json:"alerts"`
	CommonLabels map[string]string `json:"common_labels,omitempty"`
	CreatedAt    time.Time         `json:"created_at"`
	UpdatedAt    time.Time         `json:"updated_at"`
	// Untracked counts alerts the group had past maxGroupAlerts: counted,
	// not kept.
	Untracked int `json:"untracked,omitempty"`
	// Investigate is set when the route asks for an investigation;
	// Investigated once it started.
	Investigate  bool `json:"investigate,omitempty"`
	Investigated bool `json:"investigated,omitempty"`
	Resolved     bool `json:"resolved,omitempty"`
	// DueAt is when the investigation is due: when the group will have
	// settled (see settleAt). The store indexes pending groups by it.
	DueAt time.Time `json:"due_at,omitempty"`
}

// Pending reports whether the group's investigation is wanted and not yet
// claimed: the groups a store's DueAlertGroups index holds.
func (g *AlertGroup) Pending() bool {
	return g.Investigate && !g.Investigated && !g.Resolved
}

// settleAt is when the group has settled for debounce d: quiet for d since
// its last change, but no later than maxSettle debounces after it opened.
func settleAt(g *AlertGroup, d time.Duration) time.Time {
	if d <= 0 {
		return g.UpdatedAt
	}
	at := g.UpdatedAt.Add(d)
	if latest := g.CreatedAt.Add(maxSettle * d); at.After(latest) {
		at = latest
	}
	return at
}

// counts returns how many alerts fire and how many resolved.
func (g *AlertGroup) counts() (firing, resolved int) {
	for _, a := range g.Alerts {
		if a.Status == AlertFiring {
			firing++
		} else {
			resolved++
		}
	}
	return firing, resolved
}

// merge applies a notification: it returns the alerts that joined (new or
// firing again) and those that resolved since the record.
func (g *AlertGroup) merge(n AlertNotification) (joined, resolved []Alert) {
	idx := map[string]int{}
	for i, a := range g.Alerts {
		idx[a.ID] = i
	}
	for _, a := range n.Alerts {
		a = a.Bounded()
		i, ok := idx[a.ID]
		switch {
		case !ok:
			if len(g.Alerts) >= maxGroupAlerts && !g.evictResolved(idx) {
				g.Untracked++
				continue
			}
			idx[a.ID] = len(g.Alerts)
			g.Alerts = append(g.Alerts, a)
			if a.Status == AlertFiring {
				joined = append(joined, a)
			} else {
				resolved = append(resolved, a)
			}
		case g.Alerts[i].Status != a.Status:
			g.Alerts[i] = a
			if a.Status == AlertFiring {
				joined = append(joined, a)
			} else {
				resolved = append(resolved, a)
			}
		default:
			g.Alerts[i] = a
		}
	}
	if len(n.CommonLabels) > 0 {
		g.CommonLabels = n.CommonLabels
	}
	return joined, resolved
}

// evictResolved drops the group's oldest resolved alert to make room,
// reindexing idx; false when every alert fires.
func (g *AlertGroup) evictResolved(idx map[string]int) bool {
	i := slices.IndexFunc(g.Alerts, func(a Alert) bool { return a.Status != AlertFiring })
	if i < 0 {
		return false
	}
	g.Alerts = slices.Delete(g.Alerts, i, i+1)
	clear(idx)
	for j, a := range g.Alerts {
		idx[a.ID] = j
	}
	return true
}

// AlertRunbooks is the optional part of Runbooks that selects runbooks
// for an alert (runbook.Library.ForAlert): the block to add to the
// investigation's context, "" when none applies.
type AlertRunbooks interface {
	OfferForAlert(labels map[string]string, runbookURL string) (string, error)
}

// AlertObserver is the optional part of an Observer that counts alert
// groups: result is routed, deduplicated, updated, investigated or
// failed.
type AlertObserver interface {
	AlertGroup(source, route, result string)
	// AlertFirstMessage is the time from a group's first notification to
	// its investigation's first message.
	AlertFirstMessage(source string, d time.Duration)
}

// Alert group results for AlertObserver.AlertGroup.
const (
	AlertRouted       = "routed"
	AlertDeduplicated = "deduplicated"
	AlertUpdated      = "updated"
	AlertInvestigated = "investigated"
	AlertFailed       = "failed"
	// AlertLimited is a new group refused over its route's limits.
	AlertLimited = "limited"
)

// Bounds of a group's record and thread, whatever its sources send over
// its life: the alerts it keeps (the oldest resolved give way first; past
// the bound new alerts are only counted) and the replies one notification
// posts (the rest are summed up in one line).
const (
	maxGroupAlerts       = 200
	maxRepliesPerNotice  = 10
	limitNoticeEvery     = 10 * time.Minute
	openGroupsRetryAfter = time.Minute
)

// alertGroupTTL is how long a group's record outlives its last
// notification: a group that fires again within it continues its thread.
const alertGroupTTL = 7 * 24 * time.Hour

// deliverTimeout bounds the handling of one notification.
const deliverTimeout = 45 * time.Second

// claimTimeout bounds claiming a group's investigation (a load and a save).
const claimTimeout = 10 * time.Second

// alertLockTTL outlives the longest holder of a group's lock (a delivery
// is bounded by deliverTimeout, a claim by claimTimeout), so the lock never
// lapses while it is held and two replicas never work on one group at once;
// a replica that dies holding it delays the group's next notification by
// at most this long.
const alertLockTTL = deliverTimeout + 15*time.Second

// alertJob is an investigation queued on a group's thread.
type alertJob struct {
	h        *alerts
	groupKey string
	release  func()
}

var _ AlertIntake = (*Bot)(nil)

// DeliverAlert implements AlertIntake: it opens or updates the
// group's thread. It returns an error only when the notification could
// not be taken (store or chat unavailable), so the source sends it again.
func (b *alerts) DeliverAlert(ctx context.Context, n AlertNotification, r AlertRoute) error {
	if b.opt.Stores.Alerts == nil {
		return errors.New("alert intake: no alert group store")
	}
	a, ok := b.adapter(Platform(r.Platform))
	if !ok {
		b.alertCount(n.Source, r.Name, AlertFailed)
		return fmt.Errorf("alert intake: route %s sends to %s, which is not enabled", r.Name, r.Platform)
	}
	opener, ok := a.(ThreadOpener)
	if !ok {
		b.alertCount(n.Source, r.Name, AlertFailed)
		return fmt.Errorf("alert intake: the %s adapter cannot open threads", r.Platform)
	}
	// The sender hanging up must not leave a thread opened but not
	// recorded (its retry would open another): the work is bounded, not
	// tied to the request.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), deliverTimeout)
	defer cancel()
	key := n.Key()
	lock, err := b.lock(ctx, "alertgroup:"+key, alertLockTTL, 30*time.Second)
	if err != nil {
		b.alertCount(n.Source, r.Name, AlertFailed)
		return fmt.Errorf("alert intake: lock group: %w", err)
	}
	g, err := b.deliverLocked(ctx, opener, n, r)
	uctx, ucancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	_ = lock.Unlock(uctx)
	ucancel()
	if g != nil {
		// Scheduled once the lock is given back, so an investigation
		// due at once does not find the group still locked.
		b.maybeInvestigate(ctx, g)
	}
	return err
}

// deliverLocked opens or updates the group's thread with the group's
// lock held: the delivery's one load of the group. It returns the group
// as saved, for its investigation to be scheduled.
func (b *alerts) deliverLocked(ctx context.Context, opener ThreadOpener, n AlertNotification, r AlertRoute) (*AlertGroup, error) {
	g, err := b.opt.Stores.Alerts.LoadAlertGroup(ctx, n.Key())
	switch {
	case errors.Is(err, ErrNotFound):
		return b.openAlertThread(ctx, opener, n, r)
	case err != nil:
		b.alertCount(n.Source, r.Name, AlertFailed)
		return nil, fmt.Errorf("alert intake: load group: %w", err)
	}
	return b.updateAlertThread(ctx, opener, g, n, r)
}

// admitAlertGroup applies the route's limits to a new group, counted
// across replicas: a firing group must find a place among the route's
// open groups, and every new thread must fit in the route's threads a
// minute. It returns a *AlertLimitError (the source hears 429) when
// the group is over a limit, and a release func that gives back the
// group's place if its thread is not opened after all.
func (b *alerts) admitAlertGroup(ctx context.Context, opener ThreadOpener, n AlertNotification, r AlertRoute) (func(), error) {
	lim := r.Limits.WithDefaults()
	key := n.Key()
	release := func() {}
	if n.Status == AlertFiring {
		ok, err := b.opt.Stores.Alerts.AdmitOpenAlertGroup(ctx, r.Name, key, lim.OpenGroups, lim.OpenIdle)
		if err != nil {
			return nil, fmt.Errorf("alert intake: count open groups: %w", err)
		}
		if !ok {
			return nil, b.alertLimited(ctx, opener, n, r, &AlertLimitError{RetryAfter: openGroupsRetryAfter,
				Limit: fmt.Sprintf("%d open alert groups on route %s (alerts.limits.open_groups)", lim.OpenGroups, r.Name)})
		}
		release = func() {
			uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if err := b.opt.Stores.Alerts.SetAlertGroupOpen(uctx, r.Name, key, false, lim.OpenIdle); err != nil {
				b.log.Warn("give back an alert group's place", "group", key, "route", r.Name, "err", err)
			}
		}
	}
	if b.opt.Stores.Limits == nil {
		return release, nil
	}
	ok, err := b.opt.Stores.Limits.Allow(ctx, "alertthreads:"+r.Name, lim.ThreadsPerMinute, time.Minute)
	if err != nil {
		release()
		return nil, fmt.Errorf("alert intake: count new threads: %w", err)
	}
	if !ok {
		release()
		now := b.now()
		return nil, b.alertLimited(ctx, opener, n, r, &AlertLimitError{RetryAfter: now.Truncate(time.Minute).Add(time.Minute).Sub(now),
			Limit: fmt.Sprintf("%d new alert threads a minute on route %s (alerts.limits.new_threads_per_minute)", lim.ThreadsPerMinute, r.Name)})
	}
	return release, nil
}

// alertLimited counts and logs a group refused over its route's limits
// and, at most once per route every limitNoticeEvery across replicas, says
// so in the route's channel, so people learn that alerts are being
// refused from where they read them.
func (b *alerts) alertLimited(ctx context.Context, opener ThreadOpener, n AlertNotification, r AlertRoute, le *AlertLimitError) error {
	b.alertCount(n.Source, r.Name, AlertLimited)
	b.log.Warn("alert group refused: over its route's limit", "group", n.Key(), "source", n.Source, "route", r.Name,
		"alert", firstAlertName(n), "limit", le.Limit)
	if b.opt.Stores.Limits == nil {
		return le
	}
	if ok, err := b.opt.Stores.Limits.Allow(ctx, "alertlimitnotice:"+r.Name, 1, limitNoticeEvery); err != nil || !ok {
		return le
	}
	text := fmt.Sprintf("⚠️ Alert intake is over a limit for this channel's route %s: %s. New alert groups (such as %s from %s) "+
		"are refused with HTTP 429 until it clears; their sources send them again. Each refusal is logged and counted "+
		"(vigil_alerts_received_total{result=\"limited\"}). I say this at most once every %s.",
		r.Name, le.Limit, firstAlertName(n), n.Source, limitNoticeEvery)
	if _, err := opener.OpenThread(ctx, r.Channel, Reply{Kind: ReplyNotice, Text: text}); err != nil {
		b.log.Warn("post the alert limit notice", "route", r.Name, "err", err)
	}
	return le
}

func firstAlertName(n AlertNotification) string {
	if len(n.Alerts) > 0 {
		return n.Alerts[0].Name()
	}
	return "an alert"
}

// openAlertThread opens the thread of a new group and returns its record.
func (b *alerts) openAlertThread(ctx context.Context, opener ThreadOpener, n AlertNotification, r AlertRoute) (*AlertGroup, error) {
	release, err := b.admitAlertGroup(ctx, opener, n, r)
	if err != nil {
		return nil, err
	}
	now := b.now()
	g := &AlertGroup{Key: n.Key(), Source: n.Source, GroupKey: n.GroupKey, Route: r.Name, Prompt: r.Prompt,
		CreatedAt: now, UpdatedAt: now, Investigate: r.Investigate}
	g.merge(n)
	g.Resolved = n.Status == AlertResolved
	ref, err := opener.OpenThread(ctx, r.Channel, alertRoot(g))
	if err != nil {
		release()
		b.alertCount(n.Source, r.Name, AlertFailed)
		return nil, fmt.Errorf("alert intake: open thread in %s: %w", r.ChannelKey(), err)
	}
	g.Thread, g.Root = ref.ThreadRef, ref
	g.DueAt = settleAt(g, b.opt.AlertDebounce)
	if err := b.opt.Stores.Alerts.SaveAlertGroup(ctx, g, alertGroupTTL); err != nil {
		b.alertCount(n.Source, r.Name, AlertFailed)
		return nil, fmt.Errorf("alert intake: save group: %w", err)
	}
	b.noteAlertGroup(g.Key, !g.Resolved, r.Limits.WithDefaults().OpenIdle)
	b.log.Info("alert group opened a thread", "group", g.Key, "source", g.Source, "route", r.Name, "thread", g.Thread.Key())
	b.alertCount(n.Source, r.Name, AlertRouted)
	return g, nil
}

// markOpen keeps the route's count of open groups in step with a known
// group: counted while it fires, whatever the limit (its thread exists),
// and no more once it resolved.
func (b *alerts) markOpen(ctx context.Context, g *AlertGroup, r AlertRoute) {
	b.noteAlertGroup(g.Key, !g.Resolved, r.Limits.WithDefaults().OpenIdle)
	if err := b.opt.Stores.Alerts.SetAlertGroupOpen(ctx, g.Route, g.Key, !g.Resolved, r.Limits.WithDefaults().OpenIdle); err != nil {
		b.log.Warn("count an alert group's state", "group", g.Key, "route", g.Route, "err", err)
	}
}

// updateAlertThread posts what changed in a known group.
func (b *alerts) updateAlertThread(ctx context.Context, opener ThreadOpener, g *AlertGroup, n AlertNotification, r AlertRoute) (*AlertGroup, error) {
	wasResolved := g.Resolved
	joined, resolved := g.merge(n)
	if len(joined) == 0 && len(resolved) == 0 {
		b.markOpen(ctx, g, r)
		b.alertCount(n.Source, g.Route, AlertDeduplicated)
		if g.Resolved {
			// Another replica recorded the resolution first; a run of the
			// group's in progress here stops too.
			b.tellInvestigationResolved(g)
		}
		return g, nil
	}
	g.UpdatedAt = b.now()
	firing, _ := g.counts()
	g.Resolved = firing == 0
	posted := 0
	for _, a := range joined {
		if posted < maxRepliesPerNotice {
			b.say(ctx, g.Thread, Reply{Kind: ReplyNotice, Text: "🔥 Firing: " + alertLine(a), Links: a.Links})
		}
		posted++
	}
	for _, a := range resolved {
		if posted < maxRepliesPerNotice {
			b.say(ctx, g.Thread, Reply{Kind: ReplyNotice, Text: "✅ Resolved: " + alertLine(a)})
		}
		posted++
	}
	if more := posted - maxRepliesPerNotice; more > 0 {
		b.say(ctx, g.Thread, Reply{Kind: ReplyNotice, Text: fmt.Sprintf("…and %d more alerts changed (%d joined or fire again, %d resolved in all); "+
			"the first message shows the group's state.", more, len(joined), len(resolved))})
	}
	if err := opener.EditMessage(ctx, g.Root, alertRoot(g)); err != nil {
		b.log.Warn("edit alert thread's first message", "group", g.Key, "thread", g.Thread.Key(), "err", err)
	}
	if g.Resolved && !wasResolved {
		text := fmt.Sprintf("All %d alerts of this group have resolved.", len(g.Alerts))
		if g.Investigated {
			text += " The investigation is told so: a run still in progress is stopped, and a change waiting " +
				"for approval stays open for an approver to decide whether it is still wanted."
		}
		b.say(ctx, g.Thread, Reply{Kind: ReplyNotice, Text: text})
	}
	g.DueAt = settleAt(g, b.opt.AlertDebounce)
	if err := b.opt.Stores.Alerts.SaveAlertGroup(ctx, g, alertGroupTTL); err != nil {
		b.alertCount(n.Source, g.Route, AlertFailed)
		return nil, fmt.Errorf("alert intake: save group: %w", err)
	}
	b.markOpen(ctx, g, r)
	b.alertCount(n.Source, g.Route, AlertUpdated)
	if g.Resolved {
		b.tellInvestigationResolved(g)
	}
	return g, nil
}

// tellInvestigationResolved lets a run in progress in the group's thread
// know the alert resolved: it is cancelled at its next step boundary and
// the thread is told. A run waiting on an approval keeps waiting: the
// approver decides whether the change is still wanted.
func (b *alerts) tellInvestigationResolved(g *AlertGroup) {
	b.mu.Lock()
	th, ok := b.threads[g.Thread.Key()]
	running := ok && th.cancel != nil && strings.HasPrefix(th.requester, "alert:")
	b.mu.Unlock()
	if running {
		b.log.Info("alert resolved while its investigation runs; stopping it", "group", g.Key, "thread", g.Thread.Key())
		b.cancelThread(g.Thread)
	}
}

// maybeInvestigate schedules the group's investigation on this replica if
// it is due and not yet scheduled here. Every replica that sees the group
// schedules it, and claimInvestigation lets exactly one of them run it:
// if the replica that opened the thread dies before, another one that
// receives the group's notifications still investigates. A notification
// of a group already scheduled here only moves its due time (no store
// load when the timer fires: the claim, which loads the group under its
// lock anyway, checks that it settled). The investigation outlives ctx's
// cancellation, not its values.
func (b *alerts) maybeInvestigate(ctx context.Context, g *AlertGroup) {
	if !g.Pending() {
		return
	}
	if !b.schedule(g.Key, g.DueAt) {
		return
	}
	b.armInvestigation(context.WithoutCancel(ctx), g.Key, g.Thread, b.opt.AlertDebounce)
}

// schedule records the group as scheduled here, due at due, and reports
// whether it was not already; if it was, a later due time replaces the
// one known.
func (b *alerts) schedule(key string, due time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.scheduled == nil {
		b.scheduled = map[string]time.Time{}
	}
	if known, ok := b.scheduled[key]; ok {
		if due.After(known) {
			b.scheduled[key] = due
		}
		return false
	}
	b.scheduled[key] = due
	return true
}

// armInvestigation queues the group's investigation after wait, or later
// if a notification moved its due time meanwhile (Alertmanager sends a
// new group's alerts over a few group_intervals). It waits on the bot's
// clock.
func (b *alerts) armInvestigation(ctx context.Context, key string, t ThreadRef, wait time.Duration) {
	b.clock.AfterFunc(wait, func() {
		if b.stopping() {
			return
		}
		b.mu.Lock()
		due := b.scheduled[key]
		b.mu.Unlock()
		if left := due.Sub(b.now()); left > 0 {
			b.armInvestigation(ctx, key, t, left)
			return
		}
		b.queueInvestigation(ctx, key, t)
	})
}

// queueInvestigation starts the group's investigation in the background
// (startInvestigation may wait for a slot). From now until it is queued on
// its thread it counts as work in progress, so WaitIdle does not return
// in between.
func (b *alerts) queueInvestigation(ctx context.Context, key string, t ThreadRef) {
	b.mu.Lock()
	b.active++
	b.reportLoad()
	b.mu.Unlock()
	go func() {
		defer func() {
			b.mu.Lock()
			b.active--
			b.reportLoad()
			b.idle.Broadcast()
			b.mu.Unlock()
		}()
		b.startInvestigation(ctx, key, t)
	}()
}

// startInvestigation queues the group's investigation on its thread once
// a slot is free. The group counts as scheduled here until the job gives
// its slot back, so neither a sweep nor a notification queues it twice
// while it waits behind other work in its thread.
func (b *alerts) startInvestigation(ctx context.Context, key string, t ThreadRef) {
	b.sem <- struct{}{}
	var once sync.Once
	release := func() {
		once.Do(func() {
			b.mu.Lock()
			delete(b.scheduled, key)
			b.mu.Unlock()
			<-b.sem
		})
	}
	if b.stopping() {
		release()
		return
	}
	b.enqueue(ctx, t, &alertJob{h: b, groupKey: key, release: release})
}

// alertSweepEvery is how often a replica looks for due investigations
// that no replica scheduled (see sweepAlerts): the debounce, between 1s
// and 30s.
func alertSweepEvery(debounce time.Duration) time.Duration {
	return min(max(debounce, time.Second), 30*time.Second)
}

// alertSweepBatch bounds the groups one sweep starts.
const alertSweepBatch = 100

// sweepAlerts starts, until ctx ends, the investigations that are due and
// unclaimed but scheduled on no live replica: the replica that received
// the group's notification died before its debounce ended, and the next
// notification may be a repeat interval (hours) away. It runs once at
// start and then every alertSweepEvery. claimInvestigation still lets
// exactly one replica investigate.
func (b *alerts) sweepAlerts(ctx context.Context, every time.Duration) {
	if b.opt.Stores.Alerts == nil {
		return
	}
	for {
		b.SweepAlertsOnce(ctx)
		due := make(chan struct{})
		stop := b.clock.AfterFunc(every, func() { close(due) })
		select {
		case <-ctx.Done():
			stop()
			return
		case <-due:
		}
	}
}

// SweepAlertsOnce starts every due, unclaimed investigation not already
// scheduled on this replica. Exported so tests and tooling can drive it
// without waiting for the ticker.
func (b *alerts) SweepAlertsOnce(ctx context.Context) {
	if b.opt.Stores.Alerts == nil || b.stopping() {
		return
	}
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	keys, err := b.opt.Stores.Alerts.DueAlertGroups(lctx, b.now(), alertSweepBatch)
	if err != nil {
		if ctx.Err() == nil { // not merely shutting down
			b.log.Warn("list due alert investigations", "err", err)
		}
		return
	}
	for _, key := range keys {
		g, err := b.opt.Stores.Alerts.LoadAlertGroup(lctx, key)
		if err != nil {
			if !errors.Is(err, ErrNotFound) {
				b.log.Warn("load due alert group", "group", key, "err", err)
			}
			continue
		}
		if !g.Pending() {
			continue
		}
		b.mu.Lock()
		closed := b.closed
		b.mu.Unlock()
		if closed || !b.schedule(key, g.DueAt) {
			continue
		}
		b.log.Info("starting an alert investigation no replica scheduled", "group", key, "thread", g.Thread.Key())
		b.queueInvestigation(context.WithoutCancel(ctx), key, g.Thread)
	}
}

// claimInvestigation marks the group investigated, under the group's lock
// so that no notification's update is overwritten, and reports whether
// this job is the one to investigate (not resolved, not already started,
// settled). It is the investigation's one load of the group: a group that
// another replica's notification changed since this one was scheduled has
// not settled yet, and is returned unclaimed with its new due time.
func (b *alerts) claimInvestigation(ctx context.Context, key string) (*AlertGroup, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, claimTimeout)
	defer cancel()
	lock, err := b.lock(ctx, "alertgroup:"+key, alertLockTTL, 30*time.Second)
	if err != nil {
		return nil, false, fmt.Errorf("lock alert group: %w", err)
	}
	defer func() {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = lock.Unlock(uctx)
	}()
	g, err := b.opt.Stores.Alerts.LoadAlertGroup(ctx, key)
	if err != nil {
		return nil, false, fmt.Errorf("load alert group: %w", err)
	}
	if g.Resolved || g.Investigated || b.unsettled(g) {
		return g, false, nil
	}
	g.Investigated = true
	g.DueAt = time.Time{}
	if err := b.opt.Stores.Alerts.SaveAlertGroup(ctx, g, alertGroupTTL); err != nil {
		return nil, false, fmt.Errorf("save alert group: %w", err)
	}
	return g, true, nil
}

// unsettled reports whether the group changed within the debounce: its
// investigation waits until settleAt.
func (b *alerts) unsettled(g *AlertGroup) bool {
	return b.opt.AlertDebounce > 0 && settleAt(g, b.opt.AlertDebounce).After(b.now())
}

// maxSettle bounds how long a busy group is waited for, in debounces.
const maxSettle = 4

// alertRequester is the requester of a group's investigation: the source
// and the alert's name, which approval cards show.
func alertRequester(g *AlertGroup) string {
	name := "alert"
	if len(g.Alerts) > 0 {
		name = g.Alerts[0].Name()
	}
	return "alert:" + g.Source + "/" + name
}

// investigate runs a group's investigation.
func (b *alerts) investigate(ctx context.Context, t ThreadRef, held *heldLock, j *alertJob) {
	s, err := b.loadSession(ctx, t)
	if err != nil {
		b.storeFailure(ctx, t, err)
		return
	}
	if s.Run != nil {
		if s.Run.Pending != nil {
			return
		}
		b.opt.Agent.Abandon(s, "the previous run was interrupted")
	}
	g, start, err := b.claimInvestigation(ctx, j.groupKey)
	if err != nil {
		b.storeFailure(ctx, t, err)
		return
	}
	if !start {
		if g.Pending() {
			// Changed on another replica since it was scheduled here:
			// scheduled again, for when it settles.
			j.release()
			due := settleAt(g, b.opt.AlertDebounce)
			if b.schedule(g.Key, due) {
				b.armInvestigation(context.WithoutCancel(ctx), g.Key, g.Thread, due.Sub(b.now()))
			}
		}
		return
	}
	// Checked after the claim, so a channel vigil is not set up in is
	// reported once, not at every sweep.
	cp, ok := b.opt.Channels.Lookup(t.ChannelKey())
	if !ok {
		b.say(ctx, t, Reply{Kind: ReplyNotice, Text: "I am not set up to work in this channel, so I did not investigate. " +
			"Ask an administrator to add it to vigil's channels."})
		return
	}
	who := alertRequester(g)
	b.mu.Lock()
	if th, ok := b.threads[t.Key()]; ok {
		th.requester = who
	}
	b.mu.Unlock()
	labels := alertLabels(g)
	var parts []string
	// The thread's channel decides the scope: an alert routed here stays
	// within it.
	if block, _ := b.mentionContextIn(s, b.alertMentions(labels), cp.Scope); block != "" {
		parts = append(parts, block)
	}
	if ar, ok := b.opt.Runbooks.(AlertRunbooks); ok && b.opt.Runbooks != nil {
		url := ""
		for _, a := range g.Alerts {
			if u := a.RunbookURL(); u != "" {
				url = u
				break
			}
		}
		offer, err := ar.OfferForAlert(labels, url)
		if err != nil {
			b.log.Warn("runbooks unavailable; investigating without them", "thread", t.Key(), "err", err)
		} else if offer != "" {
			parts = append(parts, offer)
		}
	}
	in := agent.Input{
		RunID:     newRunID(),
		Requester: who,
		Role:      cp.SystemRequesterIn(who),
		Actor:     b.opt.Identities.Resolve(policy.Subject{User: who}, t.ChannelKey()), // only an alert:<source> rule or the fallback maps it
		Channel:   cp.Match,
		Level:     cp.Level,
		Text:      alertQuestion(g),
		Context:   strings.Join(parts, "\n\n"),
	}
	b.alertCount(g.Source, g.Route, AlertInvestigated)
	var firstPost func()
	if ao, ok := b.opt.Observer.(AlertObserver); ok && b.opt.Observer != nil {
		created, source := g.CreatedAt, g.Source
		firstPost = func() { ao.AlertFirstMessage(source, b.now().Sub(created)) }
	}
	b.startRun(ctx, t, held, s, in, firstPost)
}

// mentionLabels are the labels whose values may name inventory resources.
var mentionLabels = []string{"instance", "node", "host", "hostname", "pod", "namespace", "container", "job", "service"}

// alertMentions turns label values that name inventory resources into
// mentions; values that name nothing are left out rather than reported
// as unknown.
func (b *alerts) alertMentions(labels map[string]string) []Mention {
	if b.opt.Resolver == nil {
		return nil
	}
	var out []Mention
	seen := map[string]bool{}
	for _, k := range mentionLabels {
		v := strings.TrimSpace(labels[k])
		if k == "instance" {
			if h, _, err := net.SplitHostPort(v); err == nil {
				v = h
			}
		}
		if v == "" || seen[v] {
			continue
		}
		seen[v] = true
		if _, ok := b.opt.Resolver.ResolveMention(v); ok {
			out = append(out, Mention{Name: v})
		}
	}
	return out
}

// alertLabels are the labels of the group's first firing alert (all of its
// alerts share the group's labels), else the common labels.
func alertLabels(g *AlertGroup) map[string]string {
	for _, a := range g.Alerts {
		if a.Status == AlertFiring {
			return a.Labels
		}
	}
	if len(g.Alerts) > 0 {
		return g.Alerts[0].Labels
	}
	return g.CommonLabels
}

// alertQuestion is the investigation's question, from the alerts and the
// route's prompt.
func alertQuestion(g *AlertGroup) string {
	var sb strings.Builder
	firing, resolved := g.counts()
	fmt.Fprintf(&sb, "An alert from %s opened this thread (%d firing, %d resolved). Investigate it: find the likely cause "+
		"with read-only checks, say what you found and what you would do. Any change you propose waits for a person's approval.\n",
		g.Source, firing, resolved)
	n := 0
	for _, a := range g.Alerts {
		if a.Status != AlertFiring {
			continue
		}
		if n == 5 {
			fmt.Fprintf(&sb, "(and %d more firing)\n", firing-n)
			break
		}
		n++
		fmt.Fprintf(&sb, "\nAlert %s, firing since %s\n", a.Name(), a.StartsAt.UTC().Format(time.RFC3339))
		fmt.Fprintf(&sb, "Labels: %s\n", labelList(a.Labels, nil))
		for _, k := range sortedKeys(a.Annotations) {
			fmt.Fprintf(&sb, "%s: %s\n", k, a.Annotations[k])
		}
	}
	if g.Prompt != "" {
		fmt.Fprintf(&sb, "\nInstructions for alerts of this kind: %s\n", g.Prompt)
	}
	return strings.TrimRight(sb.String(), "\n")
}

// alertRoot is the thread's first message: the group's current state.
func alertRoot(g *AlertGroup) Reply {
	c := alertCard(g)
	return Reply{Kind: ReplyNotice, Text: c.Text(), Links: c.Links, Alert: &c}
}

func alertLine(a Alert) string {
	s := a.Name()
	if l := labelList(a.Labels, map[string]bool{"alertname": true}); l != "" {
		s += " (" + l + ")"
	}
	if sum := a.Annotations["summary"]; sum != "" {
		s += ": " + sum
	}
	return s
}

// labelList renders labels as k=v, sorted, skipping internal ones.
func labelList(m map[string]string, skip map[string]bool) string {
	return strings.Join(labelPairs(m, skip), ", ")
}

// labelPairs are the labels as k=v, sorted, skipping internal ones.
func labelPairs(m map[string]string, skip map[string]bool) []string {
	var parts []string
	for _, k := range sortedKeys(m) {
		if skip[k] || strings.HasPrefix(k, "__") {
			continue
		}
		parts = append(parts, k+"="+m[k])
	}
	return parts
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func (b *alerts) alertCount(source, route, result string) {
	if ao, ok := b.opt.Observer.(AlertObserver); ok && b.opt.Observer != nil {
		ao.AlertGroup(source, route, result)
	}
}

package bot

import "time"

// Load is what this replica has in hand, for gauges: jobs running and
// queued on its threads, approvals waiting for a decision (across
// replicas, as of this replica's last approval sweep), and alert groups
// firing as this replica's intake last heard of them.
type Load struct {
	RunsInFlight     int
	RunsQueued       int
	PendingApprovals int
	OpenAlertGroups  int
}

// LoadObserver is the optional part of an Observer that keeps gauges of
// the bot's Load; it is called on every change, so it must be cheap.
type LoadObserver interface {
	Load(l Load)
}

// load keeps the parts of Load not derived from the thread queues.
type load struct {
	pendingApprovals int
	// openGroups are the alert groups heard of as firing, with when a
	// notification last said so and how long the route counts a quiet
	// group as open.
	openGroups map[string]openGroup
}

type openGroup struct {
	seen time.Time
	idle time.Duration
}

// reportLoad sends the current Load to the observer. Called with b.mu
// held, after any change of the queues or of b.load.
func (b *runtime) reportLoad() {
	lo, ok := b.opt.Observer.(LoadObserver)
	if !ok || b.opt.Observer == nil {
		return
	}
	now := b.now()
	open := 0
	for key, g := range b.load.openGroups {
		if now.Sub(g.seen) > g.idle {
			delete(b.load.openGroups, key) // quiet past its idle time: no longer counted
			continue
		}
		open++
	}
	lo.Load(Load{RunsInFlight: b.running, RunsQueued: b.active - b.running,
		PendingApprovals: b.load.pendingApprovals, OpenAlertGroups: open})
}

// noteAlertGroup records whether a group fires, as a notification says.
func (b *runtime) noteAlertGroup(key string, open bool, idle time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.load.openGroups == nil {
		b.load.openGroups = map[string]openGroup{}
	}
	if open {
		b.load.openGroups[key] = openGroup{seen: b.now(), idle: idle}
	} else {
		delete(b.load.openGroups, key)
	}
	b.reportLoad()
}

// notePendingApprovals records the approvals a sweep found waiting.
func (b *runtime) notePendingApprovals(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.load.pendingApprovals = n
	b.reportLoad()
}

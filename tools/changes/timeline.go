package changes

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Event is one change on a timeline.
type Event struct {
	At time.Time `json:"at"`
	// Source is where it was read: kubernetes, journal, packages, boot,
	// or git:<repository>.
	Source string `json:"source"`
	// Kind says what happened: rollout, revision, restart, warning,
	// event, condition, unit_started, unit_stopped, unit_failed,
	// unit_reloaded, unit_restart_scheduled, oom_kill, boot, shutdown,
	// package_install, package_upgrade, package_remove, commit.
	Kind string `json:"kind"`
	// Subject is what changed: a unit, a package, an object, a repository.
	Subject string `json:"subject"`
	Detail  string `json:"detail,omitempty"`
	// Count is how many identical events were merged into this one (the
	// same source, kind, subject and detail); Until is the latest of them,
	// At the earliest.
	Count int       `json:"count,omitempty"`
	Until time.Time `json:"until,omitzero"`
}

// maxDetail bounds one event's detail.
const maxDetail = 240

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// Merge builds one timeline from several sources: events outside
// [start, end] are dropped, identical ones (same source, kind, subject and
// detail) merged with a count, the rest ordered newest first and cut to
// limit. It returns the events kept and how many older ones were left out.
func Merge(start, end time.Time, limit int, sources ...[]Event) ([]Event, int) {
	type key struct{ source, kind, subject, detail string }
	merged := map[key]*Event{}
	var order []key
	for _, src := range sources {
		for _, e := range src {
			if e.At.Before(start) || e.At.After(end) {
				continue
			}
			e.At = e.At.UTC()
			e.Detail = clip(e.Detail, maxDetail)
			k := key{e.Source, e.Kind, e.Subject, e.Detail}
			m, ok := merged[k]
			if !ok {
				e := e
				e.Count = 0
				merged[k] = &e
				order = append(order, k)
				continue
			}
			if m.Count == 0 {
				m.Count, m.Until = 1, m.At
			}
			m.Count++
			if e.At.Before(m.At) {
				m.At = e.At
			}
			if e.At.After(m.Until) {
				m.Until = e.At
			}
		}
	}
	out := make([]Event, 0, len(order))
	for _, k := range order {
		out = append(out, *merged[k])
	}
	slices.SortStableFunc(out, func(a, b Event) int {
		// Newest first by the latest occurrence.
		la, lb := a.At, b.At
		if !a.Until.IsZero() {
			la = a.Until
		}
		if !b.Until.IsZero() {
			lb = b.Until
		}
		if c := lb.Compare(la); c != 0 {
			return c
		}
		return cmp.Compare(a.Source+a.Kind+a.Subject, b.Source+b.Kind+b.Subject)
	})
	if len(out) > limit {
		return out[:limit], len(out) - limit
	}
	return out, 0
}

// SourceStatus says how reading one source went.
type SourceStatus struct {
	Source string `json:"source"`
	// Status is ok, partial (some of it could not be read), failed or
	// skipped.
	Status string `json:"status"`
	Events int    `json:"events"`
	Note   string `json:"note,omitempty"`
}

func (s SourceStatus) String() string {
	out := fmt.Sprintf("%s: %s", s.Source, s.Status)
	if s.Note != "" {
		out += " (" + s.Note + ")"
	}
	return out
}

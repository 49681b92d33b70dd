package bot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// The alert intake port (SPEC N1). An inbound adapter (adapters/alertwebhook)
// parses a source's webhook into an AlertNotification, picks its AlertRoute
// and hands both to an AlertIntake (the Bot); the bot owns these types so
// the core depends on no adapter.

// AlertIntake takes a routed notification. DeliverAlert should return
// quickly; an *AlertLimitError means the source should retry after it,
// any other error that the notification was not taken and should be sent
// again.
type AlertIntake interface {
	DeliverAlert(ctx context.Context, n AlertNotification, r AlertRoute) error
}

// Alert statuses.
const (
	AlertFiring   = "firing"
	AlertResolved = "resolved"
)

// Alert is one alert of a group, whatever its source.
type Alert struct {
	// ID identifies the alert within its group: Alertmanager's and
	// Grafana's fingerprint, or a hash of its labels; the incident ID on
	// PagerDuty.
	ID          string            `json:"id"`
	Status      string            `json:"status"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	StartsAt    time.Time         `json:"starts_at"`
	EndsAt      time.Time         `json:"ends_at,omitempty"`
	Links       []Link            `json:"links,omitempty"`
}

// Name is the alert's name (its alertname label).
func (a Alert) Name() string {
	if n := a.Labels["alertname"]; n != "" {
		return n
	}
	return "unnamed alert"
}

// RunbookURL is the alert's runbook_url annotation (or label).
func (a Alert) RunbookURL() string {
	if u := a.Annotations["runbook_url"]; u != "" {
		return u
	}
	return a.Labels["runbook_url"]
}

// AlertNotification is one webhook delivery: the current state of one
// group.
type AlertNotification struct {
	Source string `json:"source"`
	// GroupKey identifies the group: Alertmanager's and Grafana's
	// groupKey, PagerDuty's incident ID.
	GroupKey string `json:"group_key"`
	// Status is the group's: firing while any alert fires.
	Status   string `json:"status"`
	Receiver string `json:"receiver,omitempty"`
	// CommonLabels are the labels every alert of the group shares; routes
	// match on them.
	CommonLabels map[string]string `json:"common_labels,omitempty"`
	ExternalURL  string            `json:"external_url,omitempty"`
	Alerts       []Alert           `json:"alerts"`
	// At is when the source says the notification was made (PagerDuty's
	// occurred_at); zero when it does not say.
	At time.Time `json:"at,omitempty"`
	// EventID is the source's ID of this delivery's event (PagerDuty's
	// event.id), unique per event: seen twice, it is a replay. Empty when
	// the source gives none.
	EventID string `json:"event_id,omitempty"`
}

// Key is the group's key in vigil's store: the source and a hash of the
// group key (which can be long and carry any characters).
func (n AlertNotification) Key() string {
	sum := sha256.Sum256([]byte(n.GroupKey))
	return n.Source + ":" + hex.EncodeToString(sum[:12])
}

// RouteLabels are the labels routes match on: the common labels, or the
// first alert's when the source gives none.
func (n AlertNotification) RouteLabels() map[string]string {
	if len(n.CommonLabels) > 0 {
		return n.CommonLabels
	}
	if len(n.Alerts) > 0 {
		return n.Alerts[0].Labels
	}
	return map[string]string{}
}

// AlertRoute is where a notification goes: a chat channel, whether to
// investigate, and the limits of what the route's alerts may open.
type AlertRoute struct {
	// Name identifies the route in metrics and logs ("routes[0]").
	Name string
	// Platform and Channel are the chat channel: "slack" and "C0123", or
	// "matrix" and "!room:server".
	Platform    string
	Channel     string
	Investigate bool
	Prompt      string
	// Limits are the route's, defaults filled in.
	Limits AlertLimits
}

// ChannelKey is the channel as configured ("slack:C0123").
func (r AlertRoute) ChannelKey() string { return r.Platform + ":" + r.Channel }

// AlertLimits bound what one route's alerts may open, counted across
// replicas: a flood of distinct groups (a storm, a misconfigured sender, a
// leaked token) opens at most OpenGroups threads and investigations at
// once, and at most ThreadsPerMinute new ones a minute. A zero field takes
// its default.
type AlertLimits struct {
	// OpenGroups bounds the route's groups that fire (unresolved) at once.
	OpenGroups int
	// ThreadsPerMinute bounds the new threads the route opens a minute.
	ThreadsPerMinute int
	// OpenIdle is how long a firing group counts as open without a
	// notification: a group whose resolution never comes stops counting.
	OpenIdle time.Duration
}

// Defaults of AlertLimits.
const (
	DefaultAlertOpenGroups       = 25
	DefaultAlertThreadsPerMinute = 10
	DefaultAlertOpenIdle         = 24 * time.Hour
)

// WithDefaults fills the zero fields of l.
func (l AlertLimits) WithDefaults() AlertLimits {
	if l.OpenGroups <= 0 {
		l.OpenGroups = DefaultAlertOpenGroups
	}
	if l.ThreadsPerMinute <= 0 {
		l.ThreadsPerMinute = DefaultAlertThreadsPerMinute
	}
	if l.OpenIdle <= 0 {
		l.OpenIdle = DefaultAlertOpenIdle
	}
	return l
}

// AlertLimitError is the intake's refusal of a notification that would
// pass one of its route's limits (AlertLimits): the webhook answers 429.
type AlertLimitError struct {
	// Limit names the limit and its configuration key.
	Limit string
	// RetryAfter is when the source may try again.
	RetryAfter time.Duration
}

func (e *AlertLimitError) Error() string {
	return fmt.Sprintf("over the limit of %s; retry after %s", e.Limit, e.RetryAfter.Round(time.Second))
}

// Bounds of one alert as vigil keeps it in a group's record (Bounded): a
// notification may carry many long labels and annotations, which the
// record need not keep whole.
const (
	maxKeptLabel       = 512
	maxKeptAnnotation  = 2048
	maxKeptAnnotations = 16
	maxKeptLinks       = 5
)

// OmittedAnnotations is the annotation Bounded adds to name the ones it
// left out.
const OmittedAnnotations = "vigil_omitted_annotations"

// keptFirst are the annotations kept before any other.
var keptFirst = []string{"summary", "description", "runbook_url", "message"}

// Bounded is the alert as a group's record keeps it: label values cut to
// 512 bytes, at most 16 annotations (summary, description, runbook_url
// and message first, then by name) of at most 2 KB each, at most 5 links.
// A cut value ends in "…". Its ID is kept as parsed, so a cut never
// changes which alert it is.
func (a Alert) Bounded() Alert {
	if len(a.Labels) > 0 {
		ls := make(map[string]string, len(a.Labels))
		for k, v := range a.Labels {
			ls[k] = clipValue(v, maxKeptLabel)
		}
		a.Labels = ls
	}
	if len(a.Annotations) > 0 {
		keys := make([]string, 0, len(a.Annotations))
		for k := range a.Annotations {
			keys = append(keys, k)
		}
		rank := func(k string) int {
			for i, f := range keptFirst {
				if k == f {
					return i
				}
			}
			return len(keptFirst)
		}
		sort.Slice(keys, func(i, j int) bool {
			if ri, rj := rank(keys[i]), rank(keys[j]); ri != rj {
				return ri < rj
			}
			return keys[i] < keys[j]
		})
		as := make(map[string]string, min(len(keys), maxKeptAnnotations))
		for _, k := range keys[:min(len(keys), maxKeptAnnotations)] {
			as[k] = clipValue(a.Annotations[k], maxKeptAnnotation)
		}
		if rest := keys[min(len(keys), maxKeptAnnotations):]; len(rest) > 0 {
			as[OmittedAnnotations] = clipValue(fmt.Sprintf("%d more not kept: %s", len(rest), strings.Join(rest, ", ")), maxKeptAnnotation)
		}
		a.Annotations = as
	}
	if len(a.Links) > maxKeptLinks {
		a.Links = a.Links[:maxKeptLinks:maxKeptLinks]
	}
	return a
}

// clipValue cuts s to at most n bytes on a character boundary, marking
// the cut with "…".
func clipValue(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

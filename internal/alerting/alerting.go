// Package alerting is vigil's alert intake (SPEC N1): it parses the
// webhook payloads of Alertmanager, Grafana and PagerDuty into one
// Notification, authenticates them, and routes them to a chat channel.
// It knows nothing of chat platforms: the bot (bot/alerts.go) turns a
// routed notification into a thread and an investigation.
package alerting

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// Sources of notifications.
const (
	SourceAlertmanager = "alertmanager"
	SourceGrafana      = "grafana"
	SourcePagerDuty    = "pagerduty"
)

// Alert statuses.
const (
	StatusFiring   = "firing"
	StatusResolved = "resolved"
)

// Link is a labelled URL shown with an alert (generator, runbook,
// dashboard, panel, incident).
type Link struct {
	Text string `json:"text"`
	URL  string `json:"url"`
}

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

// Notification is one webhook delivery: the current state of one group.
type Notification struct {
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
func (n Notification) Key() string {
	sum := sha256.Sum256([]byte(n.GroupKey))
	return n.Source + ":" + hex.EncodeToString(sum[:12])
}

// RouteLabels are the labels routes match on: the common labels, or the
// first alert's when the source gives none.
func (n Notification) RouteLabels() map[string]string {
	if len(n.CommonLabels) > 0 {
		return n.CommonLabels
	}
	if len(n.Alerts) > 0 {
		return n.Alerts[0].Labels
	}
	return map[string]string{}
}

// labelsID is a stable ID for an alert that has no fingerprint.
func labelsID(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		h.Write([]byte(k))
		h.Write([]byte{0})
		h.Write([]byte(labels[k]))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// normStatus maps a source's status word to firing or resolved; anything
// else is "".
func normStatus(s string) string {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "firing", "alerting", "triggered", "acknowledged":
		return StatusFiring
	case "resolved", "ok", "normal":
		return StatusResolved
	}
	return ""
}

// Bounds of one alert as vigil keeps it in a group's record (Bounded): a
// notification may carry up to maxLabels entries of maxValueLen bytes
// each, which the record need not keep whole.
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
// the cut.
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

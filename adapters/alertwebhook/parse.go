package alertwebhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Bounds on what one notification may carry; anything larger is refused
// as malformed rather than truncated.
const (
	MaxBodyBytes = 1 << 20
	maxAlerts    = 1000
	maxLabels    = 128
	maxValueLen  = 8 << 10
)

// ErrMalformed wraps every parse error.
var ErrMalformed = errors.New("malformed notification")

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

// amPayload is the Alertmanager webhook payload, version 4; Grafana's
// contact point sends the same shape with a few extra fields.
type amPayload struct {
	Version           string            `json:"version"`
	GroupKey          string            `json:"groupKey"`
	TruncatedAlerts   int               `json:"truncatedAlerts"`
	Status            string            `json:"status"`
	Receiver          string            `json:"receiver"`
	GroupLabels       map[string]string `json:"groupLabels"`
	CommonLabels      map[string]string `json:"commonLabels"`
	CommonAnnotations map[string]string `json:"commonAnnotations"`
	ExternalURL       string            `json:"externalURL"`
	Alerts            []amAlert         `json:"alerts"`
	// Grafana only.
	OrgID int    `json:"orgId"`
	Title string `json:"title"`
	State string `json:"state"`
}

type amAlert struct {
	Status       string            `json:"status"`
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	StartsAt     time.Time         `json:"startsAt"`
	EndsAt       time.Time         `json:"endsAt"`
	GeneratorURL string            `json:"generatorURL"`
	Fingerprint  string            `json:"fingerprint"`
	// Grafana only.
	DashboardURL string `json:"dashboardURL"`
	PanelURL     string `json:"panelURL"`
	SilenceURL   string `json:"silenceURL"`
}

func decodeStrict(body []byte, into any) error {
	if len(body) > MaxBodyBytes {
		return malformed("body is larger than %d bytes", MaxBodyBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(into); err != nil {
		return malformed("not JSON of the expected shape: %v", err)
	}
	if dec.More() {
		return malformed("trailing data after the JSON object")
	}
	return nil
}

// ParseAlertmanager parses an Alertmanager webhook (version 4).
func ParseAlertmanager(body []byte) (Notification, error) {
	var p amPayload
	if err := decodeStrict(body, &p); err != nil {
		return Notification{}, err
	}
	if p.Version != "4" {
		return Notification{}, malformed("version %q; vigil reads Alertmanager webhook version 4", p.Version)
	}
	return p.notification(SourceAlertmanager)
}

// ParseGrafana parses a Grafana alerting webhook contact point payload.
func ParseGrafana(body []byte) (Notification, error) {
	var p amPayload
	if err := decodeStrict(body, &p); err != nil {
		return Notification{}, err
	}
	if p.Version != "1" && p.Version != "" {
		return Notification{}, malformed("version %q; vigil reads Grafana webhook version 1", p.Version)
	}
	return p.notification(SourceGrafana)
}

func (p amPayload) notification(source string) (Notification, error) {
	if strings.TrimSpace(p.GroupKey) == "" {
		return Notification{}, malformed("groupKey is empty")
	}
	status := normStatus(p.Status)
	if status == "" {
		return Notification{}, malformed("status %q is neither firing nor resolved", p.Status)
	}
	if len(p.Alerts) == 0 {
		return Notification{}, malformed("no alerts")
	}
	if len(p.Alerts) > maxAlerts {
		return Notification{}, malformed("%d alerts; at most %d", len(p.Alerts), maxAlerts)
	}
	n := Notification{Source: source, GroupKey: p.GroupKey, Status: status, Receiver: p.Receiver,
		CommonLabels: p.CommonLabels, ExternalURL: p.ExternalURL}
	if err := checkMap("commonLabels", p.CommonLabels); err != nil {
		return Notification{}, err
	}
	for i, a := range p.Alerts {
		st := normStatus(a.Status)
		if st == "" {
			return Notification{}, malformed("alerts[%d].status %q is neither firing nor resolved", i, a.Status)
		}
		if len(a.Labels) == 0 {
			return Notification{}, malformed("alerts[%d] has no labels", i)
		}
		if err := checkMap(fmt.Sprintf("alerts[%d].labels", i), a.Labels); err != nil {
			return Notification{}, err
		}
		if err := checkMap(fmt.Sprintf("alerts[%d].annotations", i), a.Annotations); err != nil {
			return Notification{}, err
		}
		id := a.Fingerprint
		if id == "" {
			id = labelsID(a.Labels)
		}
		al := Alert{ID: id, Status: st, Labels: a.Labels, Annotations: a.Annotations, StartsAt: a.StartsAt}
		if !a.EndsAt.IsZero() && a.EndsAt.Year() > 1 {
			al.EndsAt = a.EndsAt
		}
		addLink(&al.Links, "Source", a.GeneratorURL)
		addLink(&al.Links, "Runbook", al.RunbookURL())
		addLink(&al.Links, "Dashboard", a.DashboardURL)
		addLink(&al.Links, "Panel", a.PanelURL)
		for _, k := range []string{"dashboard_url", "dashboard"} {
			addLink(&al.Links, "Dashboard", a.Annotations[k])
		}
		n.Alerts = append(n.Alerts, al)
	}
	return n, nil
}

func checkMap(what string, m map[string]string) error {
	if len(m) > maxLabels {
		return malformed("%s has %d entries; at most %d", what, len(m), maxLabels)
	}
	for k, v := range m {
		if k == "" {
			return malformed("%s has an empty name", what)
		}
		if len(k) > 256 || len(v) > maxValueLen {
			return malformed("%s.%s is too long", what, k)
		}
	}
	return nil
}

// addLink appends an http(s) URL once; anything else is not a link.
func addLink(links *[]Link, text, raw string) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return
	}
	for _, l := range *links {
		if l.URL == raw {
			return
		}
	}
	*links = append(*links, Link{Text: text, URL: raw})
}

// pdPayload is a PagerDuty V3 webhook.
type pdPayload struct {
	Event struct {
		ID           string    `json:"id"`
		EventType    string    `json:"event_type"`
		ResourceType string    `json:"resource_type"`
		OccurredAt   time.Time `json:"occurred_at"`
		Data         struct {
			ID          string    `json:"id"`
			Type        string    `json:"type"`
			HTMLURL     string    `json:"html_url"`
			Number      int       `json:"number"`
			Status      string    `json:"status"`
			Title       string    `json:"title"`
			IncidentKey string    `json:"incident_key"`
			CreatedAt   time.Time `json:"created_at"`
			Urgency     string    `json:"urgency"`
			Service     struct {
				ID      string `json:"id"`
				Summary string `json:"summary"`
				HTMLURL string `json:"html_url"`
			} `json:"service"`
			Priority *struct {
				Summary string `json:"summary"`
			} `json:"priority"`
		} `json:"data"`
	} `json:"event"`
}

// PagerDuty event types vigil acts on.
const (
	PDTriggered = "incident.triggered"
	PDResolved  = "incident.resolved"
)

// ErrIgnored means a well-formed notification vigil does not act on (a
// PagerDuty event other than triggered or resolved).
var ErrIgnored = errors.New("notification ignored")

// ParsePagerDuty parses a PagerDuty V3 webhook. Events other than
// incident.triggered and incident.resolved give ErrIgnored.
func ParsePagerDuty(body []byte) (Notification, error) {
	var p pdPayload
	if err := decodeStrict(body, &p); err != nil {
		return Notification{}, err
	}
	e := p.Event
	if e.EventType == "" {
		return Notification{}, malformed("event.event_type is empty")
	}
	var status string
	switch e.EventType {
	case PDTriggered:
		status = StatusFiring
	case PDResolved:
		status = StatusResolved
	default:
		return Notification{}, fmt.Errorf("%w: PagerDuty event %q (vigil acts on %s and %s)", ErrIgnored, e.EventType, PDTriggered, PDResolved)
	}
	if e.ResourceType != "incident" || e.Data.ID == "" {
		return Notification{}, malformed("event.data is not an incident with an id")
	}
	if e.OccurredAt.IsZero() {
		return Notification{}, malformed("event.occurred_at is missing")
	}
	if strings.TrimSpace(e.ID) == "" {
		return Notification{}, malformed("event.id is missing: vigil needs it to tell a replayed event from a new one")
	}
	if len(e.ID) > 256 {
		return Notification{}, malformed("event.id is longer than 256 characters")
	}
	d := e.Data
	labels := map[string]string{"alertname": d.Title, "incident": d.ID}
	if d.Title == "" {
		labels["alertname"] = "PagerDuty incident " + d.ID
	}
	if d.Service.Summary != "" {
		labels["service"] = d.Service.Summary
	}
	if d.Urgency != "" {
		labels["severity"] = d.Urgency
	}
	if d.Priority != nil && d.Priority.Summary != "" {
		labels["priority"] = d.Priority.Summary
	}
	if err := checkMap("labels", labels); err != nil {
		return Notification{}, err
	}
	a := Alert{ID: d.ID, Status: status, Labels: labels, StartsAt: d.CreatedAt,
		Annotations: map[string]string{"summary": d.Title}}
	if status == StatusResolved {
		a.EndsAt = e.OccurredAt
	}
	addLink(&a.Links, "Incident", d.HTMLURL)
	addLink(&a.Links, "Service", d.Service.HTMLURL)
	return Notification{Source: SourcePagerDuty, GroupKey: d.ID, Status: status,
		CommonLabels: labels, Alerts: []Alert{a}, At: e.OccurredAt, EventID: e.ID}, nil
}

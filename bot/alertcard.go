package bot

import (
	"fmt"
	"strings"
	"time"
)

// AlertCard is an alert group's current state, the first message of its
// thread (edited as the group changes). Adapters render it natively
// (Reply.Alert); Text is the same in plain text.
type AlertCard struct {
	// Name is the alert the card leads with: the first firing one, else
	// the first.
	Name     string
	Firing   int
	Resolved int
	// Untracked counts alerts past the MaxTracked a group keeps.
	Untracked  int
	MaxTracked int
	Severity   string
	Source     string
	Started    time.Time
	// Labels are the group's labels as k=v, sorted, without alertname
	// and severity.
	Labels      []string
	Summary     string
	Description string
	Links       []Link
}

// AllResolved reports whether no alert of the group fires.
func (c AlertCard) AllResolved() bool { return c.Firing == 0 }

// Status is the card's headline word with its sign.
func (c AlertCard) Status() string {
	if c.AllResolved() {
		return "✅ RESOLVED"
	}
	return "🔥 FIRING"
}

// StartedText is when the lead alert started, as cards show it.
func (c AlertCard) StartedText() string { return c.Started.UTC().Format("2006-01-02 15:04 MST") }

// UntrackedText says how many alerts the group counted but did not keep;
// "" when none.
func (c AlertCard) UntrackedText() string {
	if c.Untracked == 0 {
		return ""
	}
	return fmt.Sprintf("(%d more alerts joined past the %d a group keeps: counted, not tracked)", c.Untracked, c.MaxTracked)
}

// Text is the card in plain text.
func (c AlertCard) Text() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s: %s (firing %d / resolved %d)\n", c.Status(), c.Name, c.Firing, c.Resolved)
	if u := c.UntrackedText(); u != "" {
		sb.WriteString(u + "\n")
	}
	fmt.Fprintf(&sb, "Severity: %s · Source: %s · Started: %s\n", c.Severity, c.Source, c.StartedText())
	if len(c.Labels) > 0 {
		fmt.Fprintf(&sb, "Labels: %s\n", strings.Join(c.Labels, ", "))
	}
	if c.Summary != "" {
		fmt.Fprintf(&sb, "Summary: %s\n", c.Summary)
	}
	if c.Description != "" {
		fmt.Fprintf(&sb, "Description: %s\n", c.Description)
	}
	return strings.TrimRight(sb.String(), "\n")
}

// alertCard is the group's card.
func alertCard(g *AlertGroup) AlertCard {
	firing, resolved := g.counts()
	first := g.Alerts[0]
	for _, a := range g.Alerts {
		if a.Status == AlertFiring {
			first = a
			break
		}
	}
	c := AlertCard{Name: first.Name(), Firing: firing, Resolved: resolved, Untracked: g.Untracked, MaxTracked: maxGroupAlerts,
		Severity: first.Labels["severity"], Source: g.Source, Started: first.StartsAt,
		Summary: first.Annotations["summary"], Description: first.Annotations["description"]}
	if c.Severity == "" {
		c.Severity = "unknown"
	}
	shown := g.CommonLabels
	if len(shown) == 0 {
		shown = first.Labels
	}
	c.Labels = labelPairs(shown, map[string]bool{"alertname": true, "severity": true})
	seen := map[string]bool{}
	for _, a := range g.Alerts {
		for _, l := range a.Links {
			if !seen[l.URL] && len(c.Links) < 5 {
				seen[l.URL] = true
				c.Links = append(c.Links, l)
			}
		}
	}
	return c
}

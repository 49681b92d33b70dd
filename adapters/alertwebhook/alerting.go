// Package alertwebhook is vigil's inbound adapter for alerts (SPEC N1): it
// parses the webhook payloads of Alertmanager, Grafana and PagerDuty into
// one bot.AlertNotification, authenticates them, routes them to a chat
// channel and hands them to the bot's bot.AlertIntake port. It knows
// nothing of chat platforms: the bot (bot/alerts.go) turns a routed
// notification into a thread and an investigation.
package alertwebhook

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/vigilops/vigil/bot"
)

// Sources of notifications.
const (
	SourceAlertmanager = "alertmanager"
	SourceGrafana      = "grafana"
	SourcePagerDuty    = "pagerduty"
)

// The notification types are the bot's (bot/alertintake.go), named here
// as the webhooks speak of them.
type (
	Notification = bot.AlertNotification
	Alert        = bot.Alert
	Link         = bot.Link
)

// Alert statuses.
const (
	StatusFiring   = bot.AlertFiring
	StatusResolved = bot.AlertResolved
)

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

package alertwebhook

import (
	"errors"
	"testing"
)

// The parsers take bytes from the network: they must never panic, and
// anything they accept must be usable (a group key, a known status, alerts
// with IDs and labels).
func checkParsed(t *testing.T, n Notification, err error) {
	if err != nil {
		if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrIgnored) {
			t.Fatalf("error of unknown kind: %v", err)
		}
		return
	}
	if n.GroupKey == "" || (n.Status != StatusFiring && n.Status != StatusResolved) || len(n.Alerts) == 0 {
		t.Fatalf("accepted an unusable notification: %+v", n)
	}
	for _, a := range n.Alerts {
		if a.ID == "" || len(a.Labels) == 0 || (a.Status != StatusFiring && a.Status != StatusResolved) {
			t.Fatalf("accepted an unusable alert: %+v", a)
		}
		for _, l := range a.Links {
			if l.URL == "" || l.Text == "" {
				t.Fatalf("empty link: %+v", a.Links)
			}
		}
	}
	_ = n.Key()
}

func FuzzParseAlertmanager(f *testing.F) {
	f.Add(fixture(f, "alertmanager_firing.json"))
	f.Add([]byte(`{"version":"4","groupKey":"g","status":"firing","alerts":[{"status":"firing","labels":{"a":"b"}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := ParseAlertmanager(b)
		checkParsed(t, n, err)
	})
}

func FuzzParseGrafana(f *testing.F) {
	f.Add(fixture(f, "grafana_firing.json"))
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := ParseGrafana(b)
		checkParsed(t, n, err)
	})
}

func FuzzParsePagerDuty(f *testing.F) {
	f.Add(fixture(f, "pagerduty_triggered.json"))
	f.Add(fixture(f, "pagerduty_resolved.json"))
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := ParsePagerDuty(b)
		checkParsed(t, n, err)
		_ = VerifyPagerDuty(b, string(b), "s")
	})
}

package alertwebhook

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigilops/vigil/bot"
)

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseAlertmanagerFixture(t *testing.T) {
	n, err := ParseAlertmanager(fixture(t, "alertmanager_firing.json"))
	if err != nil {
		t.Fatal(err)
	}
	if n.Source != SourceAlertmanager || n.Status != StatusFiring || !strings.Contains(n.GroupKey, "HighLatency") {
		t.Fatalf("notification = %+v", n)
	}
	if len(n.Alerts) != 2 || n.Alerts[0].Status != StatusFiring || n.Alerts[1].Status != StatusResolved {
		t.Fatalf("alerts = %+v", n.Alerts)
	}
	a := n.Alerts[0]
	if a.ID != "a1b2c3d4e5f60718" || a.Name() != "HighLatency" || a.RunbookURL() != "https://runbooks.example.org/high-latency" {
		t.Fatalf("alert = %+v", a)
	}
	if !a.EndsAt.IsZero() {
		t.Errorf("a firing alert's zero endsAt should stay zero, got %s", a.EndsAt)
	}
	if len(a.Links) != 2 || a.Links[0].Text != "Source" || a.Links[1].Text != "Runbook" {
		t.Errorf("links = %+v", a.Links)
	}
	if n.RouteLabels()["job"] != "checkout" {
		t.Errorf("route labels = %v", n.RouteLabels())
	}
}

func TestParseGrafanaFixture(t *testing.T) {
	n, err := ParseGrafana(fixture(t, "grafana_firing.json"))
	if err != nil {
		t.Fatal(err)
	}
	if n.Source != SourceGrafana || n.Status != StatusFiring || n.GroupKey != `{}:{alertname="DiskFull"}` {
		t.Fatalf("notification = %+v", n)
	}
	var texts []string
	for _, l := range n.Alerts[0].Links {
		texts = append(texts, l.Text)
	}
	if got := strings.Join(texts, ","); got != "Source,Runbook,Dashboard,Panel" {
		t.Errorf("links = %s", got)
	}
}

func TestParsePagerDutyFixtures(t *testing.T) {
	n, err := ParsePagerDuty(fixture(t, "pagerduty_triggered.json"))
	if err != nil {
		t.Fatal(err)
	}
	if n.GroupKey != "PGR0VU2" || n.Status != StatusFiring || n.Alerts[0].Labels["service"] != "payments-api" ||
		n.Alerts[0].Labels["severity"] != "high" || n.Alerts[0].Name() != "Payments API error rate above 5%" {
		t.Fatalf("triggered = %+v", n)
	}
	r, err := ParsePagerDuty(fixture(t, "pagerduty_resolved.json"))
	if err != nil {
		t.Fatal(err)
	}
	if r.GroupKey != n.GroupKey || r.Key() != n.Key() || r.Status != StatusResolved || r.Alerts[0].EndsAt.IsZero() {
		t.Fatalf("resolved = %+v", r)
	}
	if _, err := ParsePagerDuty(fixture(t, "pagerduty_acknowledged.json")); !errors.Is(err, ErrIgnored) {
		t.Fatalf("acknowledged: err = %v, want ErrIgnored", err)
	}
}

func TestParseRefusesMalformed(t *testing.T) {
	cases := map[string]string{
		"not json":       `{`,
		"wrong version":  `{"version":"3","groupKey":"g","status":"firing","alerts":[{"status":"firing","labels":{"a":"b"}}]}`,
		"no group key":   `{"version":"4","status":"firing","alerts":[{"status":"firing","labels":{"a":"b"}}]}`,
		"bad status":     `{"version":"4","groupKey":"g","status":"burning","alerts":[{"status":"firing","labels":{"a":"b"}}]}`,
		"no alerts":      `{"version":"4","groupKey":"g","status":"firing","alerts":[]}`,
		"no labels":      `{"version":"4","groupKey":"g","status":"firing","alerts":[{"status":"firing"}]}`,
		"trailing":       `{"version":"4","groupKey":"g","status":"firing","alerts":[{"status":"firing","labels":{"a":"b"}}]} {}`,
		"alert status":   `{"version":"4","groupKey":"g","status":"firing","alerts":[{"status":"meh","labels":{"a":"b"}}]}`,
		"wrong type":     `{"version":4,"groupKey":"g","status":"firing","alerts":[{"status":"firing","labels":{"a":"b"}}]}`,
		"empty label":    `{"version":"4","groupKey":"g","status":"firing","alerts":[{"status":"firing","labels":{"":"b"}}]}`,
		"not an object":  `[]`,
		"label not text": `{"version":"4","groupKey":"g","status":"firing","alerts":[{"status":"firing","labels":{"a":1}}]}`,
	}
	for name, body := range cases {
		if _, err := ParseAlertmanager([]byte(body)); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: err = %v, want ErrMalformed", name, err)
		}
	}
	for name, body := range map[string]string{
		"no type":      `{"event":{"resource_type":"incident","occurred_at":"2026-01-01T00:00:00Z","data":{"id":"P1"}}}`,
		"no id":        `{"event":{"event_type":"incident.triggered","resource_type":"incident","occurred_at":"2026-01-01T00:00:00Z","data":{}}}`,
		"no time":      `{"event":{"event_type":"incident.triggered","resource_type":"incident","data":{"id":"P1"}}}`,
		"not incident": `{"event":{"event_type":"incident.triggered","resource_type":"service","occurred_at":"2026-01-01T00:00:00Z","data":{"id":"P1"}}}`,
	} {
		if _, err := ParsePagerDuty([]byte(body)); !errors.Is(err, ErrMalformed) {
			t.Errorf("pagerduty %s: err = %v, want ErrMalformed", name, err)
		}
	}
}

func TestVerifyPagerDutySignatures(t *testing.T) {
	body := fixture(t, "pagerduty_triggered.json")
	const secret = "pd-secret"
	good := SignPagerDuty(body, secret)
	other := SignPagerDuty(body, "old-secret")
	cases := []struct {
		name, header, secret string
		ok                   bool
	}{
		{"good", good, secret, true},
		{"several, good last", other + "," + good, secret, true},
		{"several with spaces", other + ", " + good, secret, true},
		{"bad", other, secret, false},
		{"missing", "", secret, false},
		{"not hex", "v1=zz", secret, false},
		{"wrong version", strings.Replace(good, "v1=", "v2=", 1), secret, false},
		{"no secret configured", good, "", false},
	}
	for _, c := range cases {
		err := VerifyPagerDuty(body, c.header, c.secret)
		if (err == nil) != c.ok {
			t.Errorf("%s: err = %v, want ok=%v", c.name, err, c.ok)
		}
	}
	if err := VerifyPagerDuty(append(body, ' '), good, secret); err == nil {
		t.Error("a changed body verified")
	}
}

func TestRoutesFirstMatchWinsAndAnchored(t *testing.T) {
	rt, err := NewRouter([]RouteSpec{
		{Match: map[string]string{"team": "db"}, Channel: "slack:CDB", Investigate: true, Prompt: "Check replication first."},
		{MatchRE: map[string]string{"service": "check.*"}, Channel: "matrix:!shop:example.org"},
		{Match: map[string]string{"team": "db"}, Channel: "slack:CNEVER"},
	}, "slack:CDEFAULT", true)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		labels map[string]string
		want   string
		name   string
	}{
		{map[string]string{"team": "db", "service": "checkout"}, "slack:CDB", "routes[0]"},
		{map[string]string{"service": "checkout"}, "matrix:!shop:example.org", "routes[1]"},
		{map[string]string{"service": "precheckout"}, "slack:CDEFAULT", "default"},
		{map[string]string{}, "slack:CDEFAULT", "default"},
	} {
		r, ok := rt.Route(c.labels)
		if !ok || r.ChannelKey() != c.want || r.Name != c.name {
			t.Errorf("%v routed to %s (%s), want %s (%s)", c.labels, r.ChannelKey(), r.Name, c.want, c.name)
		}
	}
	none, _ := NewRouter([]RouteSpec{{Match: map[string]string{"a": "b"}, Channel: "slack:C1"}}, "", false)
	if _, ok := none.Route(map[string]string{"a": "c"}); ok {
		t.Error("routed without a matching route or default")
	}
}

func TestRouterRefusesBadChannelsAndRegexps(t *testing.T) {
	for _, c := range []struct {
		spec RouteSpec
		want string
	}{
		{RouteSpec{Channel: "#ops"}, "not a channel"},
		{RouteSpec{Channel: "slack:#ops"}, "not its name"},
		{RouteSpec{Channel: "matrix:#ops:example.org"}, "not an alias"},
		{RouteSpec{Channel: "irc:ops"}, "unknown platform"},
		{RouteSpec{Channel: "slack:C1", MatchRE: map[string]string{"x": "("}}, "not a regular expression"},
	} {
		_, err := NewRouter([]RouteSpec{c.spec}, "", false)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err = %v, want %q", c.spec, err, c.want)
		}
	}
}

type recordIntake struct {
	mu  sync.Mutex
	got []Notification
	err error
}

func (r *recordIntake) DeliverAlert(_ context.Context, n Notification, _ bot.AlertRoute) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, n)
	return r.err
}

type countObserver struct {
	mu sync.Mutex
	n  map[string]int
}

func (o *countObserver) AlertReceived(source, result string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.n[source+"/"+result]++
}

func TestHandlerAuthAndRefusals(t *testing.T) {
	rt, _ := NewRouter(nil, "slack:C1", true)
	in := &recordIntake{}
	obs := &countObserver{n: map[string]int{}}
	now := time.Date(2026, 11, 24, 22, 0, 0, 0, time.UTC)
	h, err := NewHandler(Config{Token: "tok", PagerDutySecret: "pds", Router: rt, Intake: in, Observer: obs,
		Clock: func() time.Time { return now }, Events: newEventLog()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	post := func(path, body string, hdr map[string]string) int {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	am := string(fixture(t, "alertmanager_firing.json"))
	pd := fixture(t, "pagerduty_triggered.json")
	auth := map[string]string{"Authorization": "Bearer tok"}
	checks := []struct {
		name, path, body string
		hdr              map[string]string
		want             int
	}{
		{"no auth", "/alerts/alertmanager", am, nil, 401},
		{"wrong token", "/alerts/alertmanager", am, map[string]string{"Authorization": "Bearer nope"}, 401},
		{"basic auth", "/alerts/grafana", am, map[string]string{"Authorization": "Basic dG9rOg=="}, 401},
		{"malformed", "/alerts/alertmanager", "{", auth, 400},
		{"oversized", "/alerts/alertmanager", strings.Repeat(" ", MaxBodyBytes+1), auth, 413},
		{"oversized without auth", "/alerts/grafana", strings.Repeat(" ", MaxBodyBytes+1), nil, 401},
		{"pd unsigned", "/alerts/pagerduty", string(pd), nil, 401},
		{"pd bad sig", "/alerts/pagerduty", string(pd), map[string]string{"X-PagerDuty-Signature": SignPagerDuty(pd, "x")}, 401},
		{"pd stale", "/alerts/pagerduty", string(pd), map[string]string{"X-PagerDuty-Signature": SignPagerDuty(pd, "pds")}, 400},
		{"good am", "/alerts/alertmanager", am, auth, 200},
		{"good grafana", "/alerts/grafana", string(fixture(t, "grafana_firing.json")), auth, 200},
	}
	for _, c := range checks {
		if got := post(c.path, c.body, c.hdr); got != c.want {
			t.Errorf("%s: status %d, want %d", c.name, got, c.want)
		}
	}
	if len(in.got) != 2 {
		t.Fatalf("delivered %d notifications, want only the 2 good ones", len(in.got))
	}
	// A fresh PagerDuty event with a good signature among several goes through.
	now = time.Date(2026, 11, 24, 21, 21, 0, 0, time.UTC)
	if got := post("/alerts/pagerduty", string(pd), map[string]string{"X-PagerDuty-Signature": SignPagerDuty(pd, "old") + "," + SignPagerDuty(pd, "pds")}); got != 200 {
		t.Errorf("pd good: status %d", got)
	}
	if len(in.got) != 3 || in.got[2].Source != SourcePagerDuty {
		t.Fatalf("pagerduty not delivered: %+v", in.got)
	}
	in.err = errors.New("store down")
	if got := post("/alerts/alertmanager", am, auth); got != 503 {
		t.Errorf("intake failure: status %d, want 503", got)
	}
	want := map[string]int{"alertmanager/unauthorized": 2, "grafana/unauthorized": 2, "alertmanager/malformed": 1,
		"alertmanager/too_large": 1, "pagerduty/unauthorized": 2, "pagerduty/stale": 1, "alertmanager/accepted": 1,
		"grafana/accepted": 1, "pagerduty/accepted": 1, "alertmanager/failed": 1}
	for k, v := range want {
		if obs.n[k] != v {
			t.Errorf("count %s = %d, want %d (all: %v)", k, obs.n[k], v, obs.n)
		}
	}
}

package alertwebhook

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigilops/vigil/bot"
)

// eventLog is an in-process EventLog for the handler's tests; the store's
// (memory and Redis) pass the conformance suite in store/storetest, and
// internal/e2e drives the Redis one through the app.
type eventLog struct {
	mu   sync.Mutex
	seen map[string]time.Duration
}

func newEventLog() *eventLog { return &eventLog{seen: map[string]time.Duration{}} }

func (l *eventLog) ClaimAlertEvent(_ context.Context, id string, ttl time.Duration) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.seen[id]; ok {
		return false, nil
	}
	l.seen[id] = ttl
	return true, nil
}

func (l *eventLog) ReleaseAlertEvent(_ context.Context, id string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.seen, id)
	return nil
}

// funcIntake answers deliveries with fn.
type funcIntake func(ctx context.Context, n Notification, r bot.AlertRoute) error

func (f funcIntake) DeliverAlert(ctx context.Context, n Notification, r bot.AlertRoute) error {
	return f(ctx, n, r)
}

type answer struct {
	status     int
	retryAfter string
	body       string
}

func post(t *testing.T, url, path string, body []byte, hdr map[string]string) answer {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+path, strings.NewReader(string(body)))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v (a dropped connection instead of an answer)", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("POST %s: reading the answer: %v", path, err)
	}
	return answer{resp.StatusCode, resp.Header.Get("Retry-After"), string(b)}
}

// A captured, correctly signed PagerDuty event replayed within its
// freshness window is refused (409), so it cannot fire a resolved group
// again; an event vigil could not deliver stays claimable, so PagerDuty's
// retry gets through.
func TestPagerDutyReplayRefused(t *testing.T) {
	rt, _ := NewRouter(nil, "slack:C1", true)
	var mu sync.Mutex
	var got []string
	fail := false
	in := funcIntake(func(_ context.Context, n Notification, _ bot.AlertRoute) error {
		mu.Lock()
		defer mu.Unlock()
		if fail {
			return errors.New("store down")
		}
		got = append(got, n.Status)
		return nil
	})
	obs := &countObserver{n: map[string]int{}}
	now := time.Date(2026, 11, 24, 21, 41, 0, 0, time.UTC)
	h, err := NewHandler(Config{Token: "tok", PagerDutySecret: "pds", Router: rt, Intake: in, Observer: obs, Events: newEventLog(),
		Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	signed := func(name string) ([]byte, map[string]string) {
		b := fixture(t, name)
		return b, map[string]string{"X-PagerDuty-Signature": SignPagerDuty(b, "pds")}
	}
	trig, trigSig := signed("pagerduty_triggered.json")
	res, resSig := signed("pagerduty_resolved.json")

	now = time.Date(2026, 11, 24, 21, 21, 0, 0, time.UTC)
	if a := post(t, srv.URL, "/alerts/pagerduty", trig, trigSig); a.status != 200 {
		t.Fatalf("triggered: %+v", a)
	}
	now = time.Date(2026, 11, 24, 21, 41, 0, 0, time.UTC)
	if a := post(t, srv.URL, "/alerts/pagerduty", res, resSig); a.status != 200 {
		t.Fatalf("resolved: %+v", a)
	}
	// The attacker replays the triggered event while its occurred_at is
	// still within the window (10m): refused, nothing delivered.
	now = time.Date(2026, 11, 24, 21, 29, 0, 0, time.UTC)
	a := post(t, srv.URL, "/alerts/pagerduty", trig, trigSig)
	if a.status != http.StatusConflict || !strings.Contains(a.body, "01DEN1GR9LZ8QZFDTYNJ8NPRQB was already received") {
		t.Fatalf("replayed triggered event: %+v, want 409 naming the event", a)
	}
	if strings.Join(got, ",") != "firing,resolved" {
		t.Fatalf("delivered %v, want the group fired then resolved, not fired again", got)
	}
	if obs.n["pagerduty/duplicate"] != 1 {
		t.Errorf("counts = %v", obs.n)
	}

	// An event dated far in the future would stretch the window: refused.
	future := []byte(strings.Replace(string(trig), "2026-11-24T21:20:00.000Z", "2026-11-24T23:20:00.000Z", 1))
	future = []byte(strings.Replace(string(future), "NPRQB", "NPRQF", 1))
	if a := post(t, srv.URL, "/alerts/pagerduty", future, map[string]string{"X-PagerDuty-Signature": SignPagerDuty(future, "pds")}); a.status != 400 ||
		!strings.Contains(a.body, "in the future") {
		t.Fatalf("future event: %+v", a)
	}

	// A delivery that fails is not remembered: the retry goes through.
	fresh := []byte(strings.Replace(string(trig), "NPRQB", "NPRQE", 1))
	sig := map[string]string{"X-PagerDuty-Signature": SignPagerDuty(fresh, "pds")}
	mu.Lock()
	fail = true
	mu.Unlock()
	if a := post(t, srv.URL, "/alerts/pagerduty", fresh, sig); a.status != 503 || a.retryAfter == "" {
		t.Fatalf("failed delivery: %+v, want 503 with Retry-After", a)
	}
	mu.Lock()
	fail = false
	mu.Unlock()
	if a := post(t, srv.URL, "/alerts/pagerduty", fresh, sig); a.status != 200 {
		t.Fatalf("PagerDuty's retry of an undelivered event: %+v, want 200", a)
	}
	// An event without an ID cannot be told from its replay: refused.
	noID := []byte(strings.Replace(string(trig), `"id": "01DEN1GR9LZ8QZFDTYNJ8NPRQB",`, "", 1))
	if a := post(t, srv.URL, "/alerts/pagerduty", noID, map[string]string{"X-PagerDuty-Signature": SignPagerDuty(noID, "pds")}); a.status != 400 ||
		!strings.Contains(a.body, "event.id is missing") {
		t.Fatalf("event without id: %+v", a)
	}
	if _, err := NewHandler(Config{Token: "tok", PagerDutySecret: "pds", Router: rt, Intake: in}); err == nil {
		t.Fatal("a PagerDuty handler without an event log was built: replays would go through")
	}
}

// An intake's LimitError is answered 429 with Retry-After in whole
// seconds; other errors 503, also with Retry-After.
func TestLimitedDeliveryIs429(t *testing.T) {
	rt, _ := NewRouter(nil, "slack:C1", true)
	obs := &countObserver{n: map[string]int{}}
	var err error
	h, _ := NewHandler(Config{Token: "tok", Router: rt, Observer: obs,
		Intake: funcIntake(func(context.Context, Notification, bot.AlertRoute) error { return err })})
	srv := httptest.NewServer(h)
	defer srv.Close()
	auth := map[string]string{"Authorization": "Bearer tok"}
	err = &LimitError{Limit: "25 open alert groups on route default (alerts.limits.open_groups)", RetryAfter: 1500 * time.Millisecond}
	a := post(t, srv.URL, "/alerts/alertmanager", fixture(t, "alertmanager_firing.json"), auth)
	if a.status != http.StatusTooManyRequests || a.retryAfter != "2" || !strings.Contains(a.body, "alerts.limits.open_groups") {
		t.Fatalf("limited: %+v, want 429, Retry-After 2 and the limit named", a)
	}
	err = errors.New("down")
	if a := post(t, srv.URL, "/alerts/alertmanager", fixture(t, "alertmanager_firing.json"), auth); a.status != 503 || a.retryAfter != "10" {
		t.Fatalf("failed: %+v", a)
	}
	if obs.n["alertmanager/limited"] != 1 || obs.n["alertmanager/failed"] != 1 {
		t.Errorf("counts = %v", obs.n)
	}
}

// A delivery slower than the budget is answered 503 with Retry-After by
// the budget, and finishes in the background.
func TestSlowDeliveryAnsweredByTheBudget(t *testing.T) {
	rt, _ := NewRouter(nil, "slack:C1", true)
	release := make(chan struct{})
	finished := make(chan error, 1)
	h, _ := NewHandler(Config{Token: "tok", Router: rt, Budget: 200 * time.Millisecond,
		Intake: funcIntake(func(ctx context.Context, _ Notification, _ bot.AlertRoute) error {
			<-release
			finished <- ctx.Err()
			return nil
		})})
	srv := httptest.NewServer(h)
	defer srv.Close()
	start := time.Now()
	a := post(t, srv.URL, "/alerts/alertmanager", fixture(t, "alertmanager_firing.json"), map[string]string{"Authorization": "Bearer tok"})
	if a.status != 503 || a.retryAfter == "" || !strings.Contains(a.body, "still taking the notification") {
		t.Fatalf("slow delivery: %+v", a)
	}
	if waited := time.Since(start); waited > 5*time.Second {
		t.Fatalf("answered after %s, want about the 200ms budget", waited)
	}
	close(release)
	select {
	case <-finished:
	case <-time.After(5 * time.Second):
		t.Fatal("the delivery did not finish after the answer")
	}
	if h.Budget() != 200*time.Millisecond {
		t.Fatalf("Budget() = %s", h.Budget())
	}
}

func TestRouteLimitsDefaults(t *testing.T) {
	rt, err := NewRouter([]RouteSpec{{Match: map[string]string{"a": "b"}, Channel: "slack:C1", Limits: RouteLimits{OpenGroups: 3}}},
		"slack:C2", true, RouteLimits{ThreadsPerMinute: 4})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := rt.Route(map[string]string{"a": "b"})
	if r.Limits != (RouteLimits{OpenGroups: 3, ThreadsPerMinute: DefaultThreadsPerMinute, OpenIdle: DefaultOpenIdle}) {
		t.Errorf("route limits = %+v", r.Limits)
	}
	d, _ := rt.Route(nil)
	if d.Limits != (RouteLimits{OpenGroups: DefaultOpenGroups, ThreadsPerMinute: 4, OpenIdle: DefaultOpenIdle}) {
		t.Errorf("default route limits = %+v", d.Limits)
	}
}

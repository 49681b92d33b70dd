package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigilops/vigil/adapters/alertwebhook"
	"github.com/vigilops/vigil/internal/config"
	"github.com/vigilops/vigil/internal/testenv/modeltest"
	"github.com/vigilops/vigil/internal/testenv/redistest"
	"github.com/vigilops/vigil/internal/testenv/slackfake"
)

// Alert intake under abuse, end to end: two replicas sharing a real Redis,
// the Slack adapter against slackfake, webhooks over real HTTP.

// postWebhook posts body to url+path and returns the status and
// Retry-After.
func postWebhook(t *testing.T, url, path string, body []byte, hdr map[string]string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+path, strings.NewReader(string(body)))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("POST %s: reading the answer: %v", path, err)
	}
	return resp.StatusCode, resp.Header.Get("Retry-After"), string(b)
}

// threadRoots are the thread-opening messages in the alert channel.
func threadRoots(fake *slackfake.Server) (threads, notices []slackfake.Call) {
	for _, c := range fake.Posts() {
		if c.Param("channel") != alertChan || c.Param("thread_ts") != "" {
			continue
		}
		if strings.Contains(c.Text(), "over a limit") {
			notices = append(notices, c)
		} else {
			threads = append(threads, c)
		}
	}
	return threads, notices
}

// A flood of distinct groups sent to both replicas opens only the route's
// open groups; the rest are answered 429 with Retry-After, and the channel
// is told once.
func TestAlertFloodIs429AcrossReplicas(t *testing.T) {
	redisAddr := redistest.RequireShared(t)
	prefix := uniquePrefix(t, redisAddr)
	fake := slackfake.New(t)
	model := modeltest.New(t)
	model.Default(modeltest.Text("Checked; nothing to change."))
	limits := func(c *config.Config) {
		c.Alerts.Limits.OpenGroups = 4
		c.Alerts.Limits.NewThreadsPerMinute = 1000
	}
	reps := []*alertReplica{
		startAlertReplica(t, "r0", redisAddr, prefix, fake, model, limits),
		startAlertReplica(t, "r1", redisAddr, prefix, fake, model, limits),
	}
	auth := map[string]string{"Authorization": "Bearer " + alertToken}
	var (
		wg             sync.WaitGroup
		mu             sync.Mutex
		ok, limited    int
		retry, answers []string
	)
	for i := range 30 {
		body, _ := json.Marshal(map[string]any{
			"version": "4", "groupKey": fmt.Sprintf(`{}:{alertname="Flood%d"}`, i), "status": "firing", "receiver": "vigil",
			"alerts": []map[string]any{{"status": "firing", "labels": map[string]string{"alertname": fmt.Sprintf("Flood%d", i), "severity": "page"},
				"startsAt": time.Now().UTC().Format(time.RFC3339)}},
		})
		wg.Go(func() {
			status, ra, msg := postWebhook(t, reps[i%2].url, "/alerts/alertmanager", body, auth)
			mu.Lock()
			defer mu.Unlock()
			switch status {
			case http.StatusOK:
				ok++
			case http.StatusTooManyRequests:
				limited++
				retry = append(retry, ra)
				answers = append(answers, msg)
			default:
				t.Errorf("group %d: %d %s", i, status, msg)
			}
		})
	}
	wg.Wait()
	if ok != 4 || limited != 26 {
		t.Fatalf("%d accepted, %d answered 429; want 4 and 26", ok, limited)
	}
	for i, ra := range retry {
		if ra == "" || !strings.Contains(answers[i], "alerts.limits.open_groups") {
			t.Fatalf("429 without Retry-After or without naming the limit: %q %q", ra, answers[i])
		}
	}
	threads, notices := threadRoots(fake)
	if len(threads) != 4 || len(notices) != 1 {
		t.Fatalf("%d threads and %d notices in the channel, want 4 and 1", len(threads), len(notices))
	}
}

// pdEvent is a PagerDuty V3 incident event at when.
func pdEvent(id, typ string, when time.Time) []byte {
	body, _ := json.Marshal(map[string]any{"event": map[string]any{
		"id": id, "event_type": typ, "resource_type": "incident", "occurred_at": when.UTC().Format(time.RFC3339Nano),
		"data": map[string]any{"id": "PREPLAY1", "type": "incident", "title": "Payments API error rate above 5%", "status": "triggered",
			"html_url": "https://acme.pagerduty.com/incidents/PREPLAY1", "created_at": when.UTC().Format(time.RFC3339),
			"service": map[string]any{"id": "PSVC", "summary": "payments-api"}, "urgency": "high"},
	}})
	return body
}

// A captured, correctly signed incident.triggered event replayed after
// the incident resolved, to either replica, is refused (409) and does not
// fire the group again.
func TestPagerDutyReplayRefusedAcrossReplicas(t *testing.T) {
	redisAddr := redistest.RequireShared(t)
	prefix := uniquePrefix(t, redisAddr)
	fake := slackfake.New(t)
	model := modeltest.New(t)
	model.Default(modeltest.Text("Checked; nothing to change."))
	const secret = "pd-e2e-secret-0123456789"
	pd := func(c *config.Config) { c.Alerts.PagerDuty.Secret = secret }
	reps := []*alertReplica{
		startAlertReplica(t, "r0", redisAddr, prefix, fake, model, pd),
		startAlertReplica(t, "r1", redisAddr, prefix, fake, model, pd),
	}
	sign := func(b []byte) map[string]string {
		return map[string]string{"X-PagerDuty-Signature": alertwebhook.SignPagerDuty(b, secret)}
	}
	now := time.Now()
	triggered := pdEvent("01REPLAYTRIGGERED", "incident.triggered", now.Add(-2*time.Minute))
	resolved := pdEvent("01REPLAYRESOLVED", "incident.resolved", now.Add(-time.Minute))
	if status, _, msg := postWebhook(t, reps[0].url, "/alerts/pagerduty", triggered, sign(triggered)); status != 200 {
		t.Fatalf("triggered: %d %s", status, msg)
	}
	waitFor(t, alertWait, "the incident's thread", func() bool { th, _ := threadRoots(fake); return len(th) == 1 })
	th, _ := threadRoots(fake)
	thread := th[0].TS
	if status, _, msg := postWebhook(t, reps[1].url, "/alerts/pagerduty", resolved, sign(resolved)); status != 200 {
		t.Fatalf("resolved: %d %s", status, msg)
	}
	inThread := func(want string) int {
		n := 0
		for _, c := range fake.Posts() {
			if c.Param("thread_ts") == thread && strings.Contains(c.Text(), want) {
				n++
			}
		}
		return n
	}
	waitFor(t, alertWait, "the resolution", func() bool { return inThread("have resolved") == 1 })

	for _, r := range reps {
		status, _, msg := postWebhook(t, r.url, "/alerts/pagerduty", triggered, sign(triggered))
		if status != http.StatusConflict || !strings.Contains(msg, "01REPLAYTRIGGERED was already received") {
			t.Fatalf("replay to %s: %d %q, want 409 naming the event", r.name, status, msg)
		}
	}
	time.Sleep(time.Second) // let anything a replay started land
	if n := inThread("Firing:"); n != 0 {
		t.Fatalf("the replay fired the resolved group again (%d firing replies)", n)
	}
	for _, c := range fake.Calls("chat.update") {
		if c.Param("ts") == thread && strings.Contains(c.Text(), "FIRING") {
			t.Fatalf("the replay edited the thread back to firing: %s", c.Text())
		}
	}
}

package server_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vigilops/vigil/adapters/alertwebhook"
	"github.com/vigilops/vigil/internal/server"

	"github.com/vigilops/vigil/bot"
)

// slowIntake takes longer than any budget of these tests.
type slowIntake struct{ release chan struct{} }

func (s slowIntake) DeliverAlert(context.Context, alertwebhook.Notification, bot.AlertRoute) error {
	<-s.release
	return nil
}

func alertHandler(t *testing.T, budget time.Duration) *alertwebhook.Handler {
	t.Helper()
	rt, err := alertwebhook.NewRouter(nil, "slack:C1", true)
	if err != nil {
		t.Fatal(err)
	}
	in := slowIntake{release: make(chan struct{})}
	t.Cleanup(func() { close(in.release) })
	h, err := alertwebhook.NewHandler(alertwebhook.Config{Token: "tok", Router: rt, Intake: in, Budget: budget})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// The server's write timeout covers the webhooks' processing budget, as
// built for production: the defaults would otherwise drop the connection.
func TestWriteTimeoutCoversTheWebhookBudget(t *testing.T) {
	s := server.New("127.0.0.1:0", prometheus.NewRegistry(), nil, nil)
	h := alertHandler(t, 0) // the default budget
	s.Handle("/alerts/", h)
	if got := server.WriteTimeout(s); got <= h.Budget() {
		t.Fatalf("write timeout %s is not longer than the webhook budget %s", got, h.Budget())
	}
}

// A webhook whose processing outlasts its budget gets a proper 503 with
// Retry-After, not a dropped connection, even on a server whose write
// timeout was shorter than the budget.
func TestSlowWebhookGets503(t *testing.T) {
	s := server.New("127.0.0.1:0", prometheus.NewRegistry(), nil, nil)
	server.SetWriteTimeout(s, 300*time.Millisecond)
	s.Handle("/alerts/", alertHandler(t, 1500*time.Millisecond))
	url, stop := start(t, s)
	defer stop()
	body, err := os.ReadFile("../../adapters/alertwebhook/testdata/alertmanager_firing.json")
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, url+"/alerts/alertmanager", strings.NewReader(string(body)))
	req.Header.Set("Authorization", "Bearer tok")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("the sender got no answer (%v): the connection was dropped", err)
	}
	defer resp.Body.Close()
	msg, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("the answer was cut off: %v", err)
	}
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("slow webhook: %s %q, Retry-After %q; want 503 with Retry-After", resp.Status, msg, resp.Header.Get("Retry-After"))
	}
}

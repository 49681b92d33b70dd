package app_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vigilops/vigil/internal/app"
	"github.com/vigilops/vigil/internal/config"
	"github.com/vigilops/vigil/internal/server"
)

func alertsConfig(t *testing.T) *config.Config {
	t.Helper()
	cfg, err := config.Load("")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Server.Listen = "127.0.0.1:0"
	cfg.Alerts.Enabled = true
	cfg.Alerts.Token = "app-test-token-0123456789"
	cfg.Alerts.Default = "matrix:!ops:example.org"
	return cfg
}

// A route to a platform that is not enabled is a start-up error naming
// it, not alerts lost later.
func TestAlertRouteToDisabledPlatformFailsAtStart(t *testing.T) {
	_, err := app.New(context.Background(), app.Options{Config: alertsConfig(t), Model: noModel{}})
	if err == nil || !strings.Contains(err.Error(), "matrix.enabled is false") {
		t.Fatalf("err = %v, want one naming matrix.enabled", err)
	}
}

// The ops server serves the alert webhooks beside /metrics once mounted,
// authenticated; with alerts off there is no handler.
func TestAlertWebhooksOnTheOpsServer(t *testing.T) {
	cfg := alertsConfig(t)
	cfg.Alerts.Enabled = false
	a, err := app.New(context.Background(), app.Options{Config: cfg, Model: noModel{}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if a.AlertHandler != nil {
		t.Fatal("alerts.enabled is false but the app built an alert handler")
	}

	cfg = alertsConfig(t)
	cfg.Alerts.Default = "slack:C0ALERTS"
	cfg.Slack.Enabled = true
	b, err := app.New(context.Background(), app.Options{Config: cfg, Model: noModel{}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	srv := server.New(cfg.Server.Listen, prometheus.NewRegistry(), nil, nil)
	srv.Handle("/alerts/", b.AlertHandler)
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	resp, err := http.Post(ts.URL+"/alerts/alertmanager", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("unauthenticated POST: %s, want 401", resp.Status)
	}
	resp, err = http.Get(ts.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz: %s", resp.Status)
	}
}

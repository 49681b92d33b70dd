package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigilops/vigil/internal/testenv/modeltest"
	"github.com/vigilops/vigil/internal/testenv/slackfake"
)

// `vigil run` wires the configured adapter, the model and the ops
// endpoints: a mention over Socket Mode gets an answer in its thread, and
// /healthz, /readyz and /metrics answer.
func TestRunServesSlackAndEndpoints(t *testing.T) {
	model := modeltest.New(t)
	model.Script(modeltest.Text("all good"))
	slack := slackfake.New(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	listen := ln.Addr().String()
	ln.Close()
	cfg := filepath.Join(t.TempDir(), "vigil.yaml")
	yaml := fmt.Sprintf(`llm:
  base_url: %s
  model: scripted
server:
  listen: %s
channels:
  - match: slack:C1
    control_level: read_only
slack:
  enabled: true
  mode: socket
  api_url: %s
`, model.URL(), listen, slack.APIURL())
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("VIGIL_SLACK_BOT_TOKEN", slackfake.BotToken)
	t.Setenv("VIGIL_SLACK_APP_TOKEN", slackfake.AppToken)
	t.Setenv("VIGIL_LOG_LEVEL", "warn")

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"run", "--config", cfg}) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("vigil run returned %v on shutdown", err)
			}
		case <-time.After(15 * time.Second):
			t.Error("vigil run did not stop within 15s")
		}
	})

	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + listen + path)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		if code, _ := get("/readyz"); code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("/readyz never answered 200")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code, _ := get("/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz = %d", code)
	}

	slack.PushEventsAPI(slackfake.EventCallback("Ev1", slackfake.AppMention("C1", "U1", "<@"+slackfake.BotUserID+"> is @localhost fine?", "1700000000.000100", "")))
	slack.WaitFor(t, 15*time.Second, "the answer in the thread", func(calls []slackfake.Call) bool {
		for _, c := range calls {
			if c.Method == "chat.postMessage" && c.Param("thread_ts") == "1700000000.000100" && strings.Contains(c.Text(), "all good") {
				return true
			}
		}
		return false
	})
	code, body := get("/metrics")
	if code != http.StatusOK || !strings.Contains(body, `vigil_chat_events_total{platform="slack",result="handled"} 1`) {
		t.Fatalf("/metrics = %d, want the handled Slack event counted:\n%.2000s", code, body)
	}
}

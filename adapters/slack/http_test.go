package slack

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/vigilops/vigil/internal/testenv/slackfake"
)

// TestSignedRequests mounts Handler on httptest and checks every way a
// request can be good or bad.
func TestSignedRequests(t *testing.T) {
	h := startAdapter(t, ModeHTTP)
	srv := httptest.NewServer(h.a.Handler())
	t.Cleanup(srv.Close)
	events := srv.URL + "/slack/events"
	mention := func(id, ts string) []byte {
		return slackfake.EventCallback(id, slackfake.AppMention(chOps, alice, "<@U0VIGIL> look at @web-01", ts, ""))
	}
	post := func(t *testing.T, req *http.Request) (int, string) {
		t.Helper()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}

	t.Run("url_verification", func(t *testing.T) {
		code, body := post(t, slackfake.EventsRequest(t, events, slackfake.URLVerification("3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P")))
		if code != http.StatusOK || body != "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" {
			t.Errorf("challenge answer = %d %q", code, body)
		}
	})
	t.Run("good", func(t *testing.T) {
		if code, _ := post(t, slackfake.EventsRequest(t, events, mention("EvGood", "1700002000.000100"))); code != http.StatusOK {
			t.Fatalf("status %d", code)
		}
		if m := h.rec.waitMessages(t, 1)[0]; m.EventID != "EvGood" || m.Mentions[0].Name != "web-01" {
			t.Errorf("delivered %+v", m)
		}
	})
	// Slack's retries reach the bot with the same event ID, the key of
	// its one dedup (TestAckDoesNotWaitForTheRun shows it drops them).
	t.Run("replayed", func(t *testing.T) {
		for i := 0; i < 3; i++ {
			req := slackfake.EventsRequest(t, events, mention("EvGood", "1700002000.000100"))
			req.Header.Set("X-Slack-Retry-Num", "1")
			req.Header.Set("X-Slack-Retry-Reason", "http_timeout")
			if code, _ := post(t, req); code != http.StatusOK {
				t.Fatalf("retry answered %d, want 200 so Slack stops retrying", code)
			}
		}
	})
	bad := []struct {
		name string
		req  func(t *testing.T) *http.Request
		want int
	}{
		{"bad signature", func(t *testing.T) *http.Request {
			return slackfake.SignedRequest(t, events, "not-the-secret", "application/json", mention("EvBadSig", "1.1"), time.Now())
		}, http.StatusUnauthorized},
		{"tampered body", func(t *testing.T) *http.Request {
			req := slackfake.EventsRequest(t, events, mention("EvTamper", "1.1"))
			req.Body = io.NopCloser(bytes.NewReader(mention("EvTamper", "2.2")))
			return req
		}, http.StatusUnauthorized},
		{"stale timestamp", func(t *testing.T) *http.Request {
			return slackfake.SignedRequest(t, events, slackfake.SigningSecret, "application/json", mention("EvStale", "1.1"), time.Now().Add(-6*time.Minute))
		}, http.StatusUnauthorized},
		{"future timestamp", func(t *testing.T) *http.Request {
			return slackfake.SignedRequest(t, events, slackfake.SigningSecret, "application/json", mention("EvFuture", "1.1"), time.Now().Add(6*time.Minute))
		}, http.StatusUnauthorized},
		{"unsigned", func(t *testing.T) *http.Request {
			req, _ := http.NewRequest(http.MethodPost, events, bytes.NewReader(mention("EvUnsigned", "1.1")))
			return req
		}, http.StatusUnauthorized},
		{"malformed json", func(t *testing.T) *http.Request {
			return slackfake.EventsRequest(t, events, []byte(`{"type":"event_callback","event_id":"EvMal","event":{`))
		}, http.StatusBadRequest},
		{"inner event not an object", func(t *testing.T) *http.Request {
			return slackfake.EventsRequest(t, events, []byte(`{"type":"event_callback","event_id":"EvMal2","event":42}`))
		}, http.StatusBadRequest},
		{"no type", func(t *testing.T) *http.Request {
			return slackfake.EventsRequest(t, events, []byte(`{"event_id":"EvMal3"}`))
		}, http.StatusBadRequest},
		{"oversized body", func(t *testing.T) *http.Request {
			big := append([]byte(`{"type":"event_callback","pad":"`), bytes.Repeat([]byte("x"), maxBody+1)...)
			return slackfake.EventsRequest(t, events, append(big, `"}`...))
		}, http.StatusRequestEntityTooLarge},
		{"wrong method", func(t *testing.T) *http.Request {
			req, _ := http.NewRequest(http.MethodGet, events, nil)
			return req
		}, http.StatusMethodNotAllowed},
		{"interactive without payload", func(t *testing.T) *http.Request {
			return slackfake.SignedRequest(t, srv.URL+"/slack/interactive", slackfake.SigningSecret,
				"application/x-www-form-urlencoded", []byte("foo=bar"), time.Now())
		}, http.StatusBadRequest},
		{"interactive malformed payload", func(t *testing.T) *http.Request {
			return slackfake.InteractiveRequest(t, srv.URL+"/slack/interactive", []byte(`{"type":"block_actions",`))
		}, http.StatusBadRequest},
		{"interactive bad button value", func(t *testing.T) *http.Request {
			return slackfake.InteractiveRequest(t, srv.URL+"/slack/interactive", slackfake.BlockActions(slackfake.BlockAction{
				User: bob, Channel: chOps, MessageTS: "1.1", ActionID: actionApprove, Value: "tok-in-the-clear", ActionTS: "2.2"}))
		}, http.StatusBadRequest},
		{"interactive bad signature", func(t *testing.T) *http.Request {
			return slackfake.SignedRequest(t, srv.URL+"/slack/interactive", "wrong", "application/x-www-form-urlencoded",
				slackfake.InteractiveBody(slackfake.BlockActions(slackfake.BlockAction{User: bob, Channel: chOps, MessageTS: "1.1",
					ActionID: actionApprove, Value: `{"id":"a","token":"t"}`, ActionTS: "3.3"})), time.Now())
		}, http.StatusUnauthorized},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			if code, _ := post(t, c.req(t)); code != c.want {
				t.Errorf("status %d, want %d", code, c.want)
			}
		})
	}
	// Messages reach the bot before HTTP answers; clicks are queued in
	// order per approval. Good requests on the bad ones' threads and
	// approval, sent after them, are delivered after anything the bad
	// ones could have queued: once they arrive, nothing else can.
	for _, ts := range []string{"1.1", "2.2"} {
		if code, _ := post(t, slackfake.EventsRequest(t, events, mention("EvAfter"+ts, ts))); code != http.StatusOK {
			t.Fatalf("sentinel message: status %d", code)
		}
	}
	if code, _ := post(t, slackfake.InteractiveRequest(t, srv.URL+"/slack/interactive", slackfake.BlockActions(slackfake.BlockAction{
		User: bob, Channel: chOps, MessageTS: "1.1", ActionID: actionApprove, Value: `{"id":"a","token":"t"}`, ActionTS: "9.9"}))); code != http.StatusOK {
		t.Fatalf("sentinel click: status %d", code)
	}
	var ids []string
	for _, m := range h.rec.waitMessages(t, 6) {
		ids = append(ids, m.EventID)
	}
	if got := strings.Join(ids, " "); got != "EvGood EvGood EvGood EvGood EvAfter1.1 EvAfter2.2" {
		t.Errorf("delivered messages %s, want only the good one (and its three retries) and the two sent after the bad ones", got)
	}
	if got := h.rec.waitDecisions(t, 1); len(got) != 1 || got[0].EventID != "action:9.9:"+bob {
		t.Errorf("decisions %+v, want only the one sent after the bad ones", got)
	}
	if strings.Contains(h.logs.String(), "tok-in-the-clear") {
		t.Error("a button value was logged")
	}
}

// TestNotReadyBeforeStart: before auth.test, events get 503 so Slack
// retries; url_verification works at once.
func TestNotReadyBeforeStart(t *testing.T) {
	a, err := New(Config{Mode: ModeHTTP, BotToken: "xoxb-1", SigningSecret: slackfake.SigningSecret, Listen: ":0"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(srv.Close)
	body := slackfake.EventCallback("Ev1", slackfake.AppMention(chOps, alice, "hi", "1.1", ""))
	resp, err := http.DefaultClient.Do(slackfake.EventsRequest(t, srv.URL+"/slack/events", body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("status %d before Start, want 503", resp.StatusCode)
	}
	resp, err = http.DefaultClient.Do(slackfake.EventsRequest(t, srv.URL+"/slack/events", slackfake.URLVerification("c")))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("url_verification status %d before Start", resp.StatusCode)
	}
}

// The HTTP answer does not wait for the run: the adapter hands the message
// to the bot, whose HandleMessage only deduplicates and queues it
// (TestAckDoesNotWaitForTheRun, with the real bot and a blocked model).

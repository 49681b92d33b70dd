package matrix

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
)

// limitedServer answers M_LIMIT_EXCEEDED (with retry_after_ms) to the first
// `limited` requests and then accepts the event.
func limitedServer(t *testing.T, limited int32, retryAfterMS int) (*httptest.Server, *atomic.Int32) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		if !strings.Contains(r.URL.Path, "/send/m.room.message/vigil-") {
			t.Errorf("unexpected request %s %s", r.Method, r.URL.Path)
		}
		if n <= limited {
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"errcode":"M_LIMIT_EXCEEDED","error":"slow down","retry_after_ms":` + itoa(retryAfterMS) + `}`))
			return
		}
		_, _ = w.Write([]byte(`{"event_id":"$sent:localhost"}`))
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func itoa(n int) string { return strconv.Itoa(n) }

func newTestAdapter(t *testing.T, hs string) *Adapter {
	t.Helper()
	a, err := New(Config{Homeserver: hs, UserID: "@vigil:localhost", AccessToken: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestSendRetriesRateLimitWithServerDelay(t *testing.T) {
	srv, calls := limitedServer(t, 2, 120)
	a := newTestAdapter(t, srv.URL)
	start := time.Now()
	evtID, err := a.send(context.Background(), "!r:localhost", event.EventMessage, notice(event.MsgNotice, "hi"))
	if err != nil {
		t.Fatal(err)
	}
	if evtID != "$sent:localhost" || calls.Load() != 3 {
		t.Fatalf("event %q after %d calls", evtID, calls.Load())
	}
	if el := time.Since(start); el < 240*time.Millisecond {
		t.Fatalf("retried after %s; the server asked for 2×120ms", el)
	}
}

func TestSendGivesUpAfterBoundedAttempts(t *testing.T) {
	srv, calls := limitedServer(t, 1000, 1)
	a := newTestAdapter(t, srv.URL)
	_, err := a.send(context.Background(), "!r:localhost", event.EventMessage, notice(event.MsgNotice, "hi"))
	if !errors.Is(err, mautrix.MLimitExceeded) {
		t.Fatalf("err = %v, want M_LIMIT_EXCEEDED", err)
	}
	if calls.Load() != rateLimitAttempts {
		t.Fatalf("%d calls, want %d", calls.Load(), rateLimitAttempts)
	}
}

func TestSendStopsAtDeadline(t *testing.T) {
	srv, calls := limitedServer(t, 1000, 5000)
	a := newTestAdapter(t, srv.URL)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	_, err := a.send(ctx, "!r:localhost", event.EventMessage, notice(event.MsgNotice, "hi"))
	if err == nil || time.Since(start) > 900*time.Millisecond || calls.Load() != 1 {
		t.Fatalf("err=%v after %s and %d calls; a wait past the deadline must fail at once", err, time.Since(start), calls.Load())
	}
}

func TestRateLimitDelay(t *testing.T) {
	if _, ok := rateLimitDelay(errors.New("boom")); ok {
		t.Fatal("plain error is not a rate limit")
	}
	err := mautrix.HTTPError{RespError: &mautrix.RespError{ErrCode: "M_LIMIT_EXCEEDED", ExtraData: map[string]any{"retry_after_ms": float64(1500)}}}
	if d, ok := rateLimitDelay(err); !ok || d != 1500*time.Millisecond {
		t.Fatalf("delay = %s, %v", d, ok)
	}
	hdr := mautrix.HTTPError{Response: &http.Response{StatusCode: 429, Header: http.Header{"Retry-After": {"2"}}}}
	if d, ok := rateLimitDelay(hdr); !ok || d != 2*time.Second {
		t.Fatalf("header delay = %s, %v", d, ok)
	}
}

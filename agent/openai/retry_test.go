package openai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	sdk "github.com/sashabaranov/go-openai"
	"github.com/vigilops/vigil/agent"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name   string
		info   responseInfo
		want   time.Duration
		wantOK bool
	}{
		{"none", responseInfo{}, 0, false},
		{"seconds", responseInfo{retryAfter: "7"}, 7 * time.Second, true},
		{"fraction", responseInfo{retryAfter: " 1.5 "}, 1500 * time.Millisecond, true},
		{"zero", responseInfo{retryAfter: "0"}, 0, true},
		{"negative", responseInfo{retryAfter: "-3"}, 0, false},
		{"garbage", responseInfo{retryAfter: "soon"}, 0, false},
		{"http date", responseInfo{retryAfter: now.Add(12 * time.Second).Format(http.TimeFormat)}, 12 * time.Second, true},
		{"past date", responseInfo{retryAfter: now.Add(-time.Hour).Format(http.TimeFormat)}, 0, true},
		{"ms header wins", responseInfo{retryAfter: "9", retryAfterMS: "250"}, 250 * time.Millisecond, true},
		{"bad ms header falls back", responseInfo{retryAfter: "2", retryAfterMS: "x"}, 2 * time.Second, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseRetryAfter(&tt.info, now)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("parseRetryAfter(%+v) = %v, %v; want %v, %v", tt.info, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestRetryDelay(t *testing.T) {
	r := &retrier{base: 100 * time.Millisecond, max: time.Second, maxRetryAfter: 5 * time.Second, now: time.Now}
	for n := 1; n <= 8; n++ {
		full := min(100*time.Millisecond<<(n-1), time.Second)
		for range 50 {
			d, fromServer := r.delay(n, &responseInfo{})
			if fromServer || d < full/2 || d > full {
				t.Fatalf("retry %d: delay %v outside [%v, %v]", n, d, full/2, full)
			}
		}
	}
	if d, ok := r.delay(1, &responseInfo{retryAfter: "2"}); d != 2*time.Second || !ok {
		t.Errorf("Retry-After 2: %v %v", d, ok)
	}
	if d, _ := r.delay(1, &responseInfo{retryAfter: "600"}); d != 5*time.Second {
		t.Errorf("Retry-After 600 not capped: %v", d)
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestClassify(t *testing.T) {
	tests := []struct {
		name                string
		err                 error
		timedOut            bool
		retryable, rejected bool
	}{
		{"429", &sdk.APIError{HTTPStatusCode: 429}, false, true, false},
		{"500", &sdk.APIError{HTTPStatusCode: 500}, false, true, false},
		{"503 request error", &sdk.RequestError{HTTPStatusCode: 503}, false, true, false},
		{"400", &sdk.APIError{HTTPStatusCode: 400}, false, false, true},
		{"401 request error", &sdk.RequestError{HTTPStatusCode: 401}, false, false, true},
		{"404", fmt.Errorf("wrapped: %w", &sdk.APIError{HTTPStatusCode: 404}), false, false, true},
		{"stream error event", fmt.Errorf("error, %w", &sdk.APIError{Message: "overloaded"}), false, true, false},
		{"timeout", context.DeadlineExceeded, true, true, false},
		{"net error", &net.OpError{Op: "dial", Err: timeoutErr{}}, false, true, false},
		{"unexpected eof", io.ErrUnexpectedEOF, false, true, false},
		{"empty answer", errEmptyAnswer, false, true, false},
		{"too many empty messages", sdk.ErrTooManyEmptyStreamMessages, false, true, false},
		{"sdk validation", sdk.ErrReasoningModelMaxTokensDeprecated, false, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			retryable, rejected := classify(tt.err, tt.timedOut)
			if retryable != tt.retryable || rejected != tt.rejected {
				t.Errorf("classify(%v) = %v, %v; want %v, %v", tt.err, retryable, rejected, tt.retryable, tt.rejected)
			}
		})
	}
}

func TestRetrierCountsAttempts(t *testing.T) {
	r := &retrier{maxRetries: 3, timeout: time.Second, base: time.Millisecond, max: time.Millisecond,
		maxRetryAfter: time.Second, log: slog.New(slog.DiscardHandler), now: time.Now}
	calls := 0
	_, err := r.do(t.Context(), func(ctx context.Context) (agent.ModelResponse, bool, error) {
		calls++
		if _, ok := ctx.Deadline(); !ok {
			t.Error("attempt without a deadline")
		}
		return agent.ModelResponse{}, false, &sdk.APIError{HTTPStatusCode: 500, Message: "boom"}
	})
	var me *ModelError
	if !errors.As(err, &me) || me.Attempts != 4 || calls != 4 || !errors.Is(err, ErrModelUnavailable) {
		t.Errorf("err %v, calls %d", err, calls)
	}
	var apiErr *sdk.APIError
	if !errors.As(err, &apiErr) {
		t.Error("cause not reachable with errors.As")
	}

	calls = 0
	resp, err := r.do(t.Context(), func(context.Context) (agent.ModelResponse, bool, error) {
		calls++
		if calls < 3 {
			return agent.ModelResponse{}, false, io.ErrUnexpectedEOF
		}
		return agent.ModelResponse{Content: "ok"}, false, nil
	})
	if err != nil || resp.Content != "ok" || calls != 3 {
		t.Errorf("resp %+v err %v calls %d", resp, err, calls)
	}
}

func TestTruncate(t *testing.T) {
	if got := truncate("héllo", 3); got != "hél…" {
		t.Errorf("truncate = %q", got)
	}
	if got := truncate("hé", 3); got != "hé" {
		t.Errorf("truncate = %q", got)
	}
}

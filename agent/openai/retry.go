package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	sdk "github.com/sashabaranov/go-openai"
	"github.com/vigilops/vigil/agent"
)

// ErrModelUnavailable wraps the error of a model call that failed for a
// reason that may pass (rate limits, 5xx, timeouts, connection errors, a
// broken stream) and kept failing until the retries ran out.
var ErrModelUnavailable = errors.New("model unavailable")

// ErrModelRejected wraps the error of a model call the endpoint refused for
// a reason retrying cannot fix: HTTP 4xx other than 429 (bad API key, unknown
// model, invalid request). It is not retried.
var ErrModelRejected = errors.New("model rejected the request")

// maxErrorText bounds the server text quoted in an error.
const maxErrorText = 300

// ModelError is the error a model call returns after retries: a short
// message safe to log (the API key is redacted), the HTTP status if there
// was one, and the last underlying error. It matches ErrModelUnavailable or
// ErrModelRejected with errors.Is, and the SDK's error types with errors.As.
type ModelError struct {
	// Kind is ErrModelUnavailable or ErrModelRejected.
	Kind error
	// Attempts is the number of calls made.
	Attempts int
	// Status is the HTTP status of the last attempt, 0 if none.
	Status int
	msg    string
	cause  error
}

func (e *ModelError) Error() string { return e.msg }

// Unwrap exposes the kind and the cause for errors.Is and errors.As. The
// cause's own text is not redacted; print the ModelError, not the cause.
func (e *ModelError) Unwrap() []error { return []error{e.Kind, e.cause} }

// responseInfo is what the recording HTTP doer saw of the last response of
// one attempt. It travels in the attempt's context.
type responseInfo struct {
	status       int
	retryAfter   string
	retryAfterMS string
}

type responseInfoKey struct{}

// recordingDoer wraps the HTTP client given to go-openai and copies the
// status and Retry-After headers of each response into the responseInfo of
// the request's context, since the SDK's errors drop the headers.
type recordingDoer struct{ next sdk.HTTPDoer }

func (d recordingDoer) Do(req *http.Request) (*http.Response, error) {
	resp, err := d.next.Do(req)
	if info, ok := req.Context().Value(responseInfoKey{}).(*responseInfo); ok && resp != nil {
		info.status = resp.StatusCode
		info.retryAfter = resp.Header.Get("Retry-After")
		info.retryAfterMS = resp.Header.Get("Retry-After-Ms")
	}
	return resp, err
}

// bodyKey carries, in an attempt's context, a function that marshals the
// attempt's request again (releasingDoer).
type bodyKey struct{}

// withBody returns ctx carrying how to marshal creq again: the body
// go-openai sends for it, byte for byte (both are json.Marshal of the
// same request).
func withBody(ctx context.Context, creq sdk.ChatCompletionRequest) context.Context {
	return context.WithValue(ctx, bodyKey{}, func() ([]byte, error) { return json.Marshal(creq) })
}

// releasingDoer lets go of a request's body once it is sent. go-openai
// marshals the request into a buffer that the http.Request keeps, as its
// Body and for GetBody (the transport's rewinds), until the answer has
// been read: the conversation and the tool schemas again, for every call
// in flight, while the model thinks. Here the body goes out through a
// reader that drops the buffer once it is read to the end (or closed),
// and a rewind (a retry on a connection the server closed, or refused on
// HTTP/2) marshals the request again, only then.
type releasingDoer struct{ next sdk.HTTPDoer }

func (d releasingDoer) Do(req *http.Request) (*http.Response, error) {
	remarshal, ok := req.Context().Value(bodyKey{}).(func() ([]byte, error))
	if !ok || req.Body == nil || req.Body == http.NoBody || req.ContentLength <= 0 {
		return d.next.Do(req)
	}
	req.Body = &onceBody{r: req.Body}
	req.GetBody = func() (io.ReadCloser, error) {
		b, err := remarshal()
		if err != nil {
			return nil, err
		}
		return &onceBody{r: io.NopCloser(bytes.NewReader(b))}, nil
	}
	return d.next.Do(req)
}

// onceBody is a request body that is read once: it closes and drops its
// reader (and with it the bytes behind it) at the end of them, or when it
// is closed. The transport may close it from another goroutine than the
// one reading.
type onceBody struct {
	mu sync.Mutex
	r  io.ReadCloser // nil once read to the end or closed
}

func (o *onceBody) Read(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.r == nil {
		return 0, io.EOF
	}
	n, err := o.r.Read(p)
	if err != nil {
		_ = o.r.Close()
		o.r = nil
	}
	return n, err
}

func (o *onceBody) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.r == nil {
		return nil
	}
	err := o.r.Close()
	o.r = nil
	return err
}

// headerDoer adds the configured headers to every request.
type headerDoer struct {
	next    sdk.HTTPDoer
	headers map[string]string
}

func (d headerDoer) Do(req *http.Request) (*http.Response, error) {
	for k, v := range d.headers {
		req.Header.Set(k, v)
	}
	return d.next.Do(req)
}

// retrier runs attempts with a per-attempt timeout and exponential backoff
// with jitter, honouring Retry-After.
type retrier struct {
	maxRetries    int
	timeout       time.Duration
	base, max     time.Duration
	maxRetryAfter time.Duration
	secret        string // redacted from error text
	log           *slog.Logger
	now           func() time.Time
}

// attemptFunc is one model call. partial reports that output was already
// handed to the caller (streamed text), so the attempt must not be
// repeated.
type attemptFunc func(ctx context.Context) (resp agent.ModelResponse, partial bool, err error)

func (r *retrier) do(ctx context.Context, attempt attemptFunc) (agent.ModelResponse, error) {
	for n := 1; ; n++ {
		info := &responseInfo{}
		actx, cancel := context.WithTimeout(context.WithValue(ctx, responseInfoKey{}, info), r.timeout)
		start := r.now()
		resp, partial, err := attempt(actx)
		timedOut := actx.Err() != nil
		cancel()
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			// The caller gave up (cancel or its own deadline): not the
			// model's fault, and nothing to retry.
			return agent.ModelResponse{}, fmt.Errorf("model call: %w", ctx.Err())
		}
		if timedOut {
			err = fmt.Errorf("no complete answer within %s: %w", r.timeout, context.DeadlineExceeded)
		}
		retryable, rejected := classify(err, timedOut)
		status := statusOf(err, info)
		switch {
		case rejected:
			return agent.ModelResponse{}, r.fail(ErrModelRejected, n, status, err)
		case partial:
			return agent.ModelResponse{}, r.fail(ErrModelUnavailable, n, status,
				fmt.Errorf("answer broke off after part of it was streamed: %w", err))
		case !retryable || n > r.maxRetries:
			return agent.ModelResponse{}, r.fail(ErrModelUnavailable, n, status, err)
		}
		delay, fromServer := r.delay(n, info)
		r.log.Warn("model call failed, retrying",
			"attempt", n, "max_attempts", r.maxRetries+1, "status", status,
			"elapsed", r.now().Sub(start).Round(time.Millisecond), "retry_in", delay.Round(time.Millisecond),
			"retry_after", fromServer, "err", r.redact(err.Error()))
		if err := sleep(ctx, delay); err != nil {
			return agent.ModelResponse{}, fmt.Errorf("model call: %w", err)
		}
	}
}

// fail builds the final error: short, redacted, wrapping kind and cause.
func (r *retrier) fail(kind error, attempts, status int, cause error) error {
	var b strings.Builder
	b.WriteString(kind.Error())
	if kind == ErrModelUnavailable {
		fmt.Fprintf(&b, " after %d attempt", attempts)
		if attempts != 1 {
			b.WriteByte('s')
		}
	}
	if status != 0 {
		fmt.Fprintf(&b, ": HTTP %d", status)
	}
	b.WriteString(": ")
	b.WriteString(truncate(r.redact(describeErr(cause)), maxErrorText))
	e := &ModelError{Kind: kind, Attempts: attempts, Status: status, msg: b.String(), cause: cause}
	r.log.Warn("model call failed", "kind", kind.Error(), "attempts", attempts, "status", status, "err", e.msg)
	return e
}

// redact removes the API key from text.
func (r *retrier) redact(s string) string {
	if len(r.secret) < 4 {
		return s
	}
	return strings.ReplaceAll(s, r.secret, "***")
}

// delay is how long to wait before retry n (1-based): the server's
// Retry-After when it sent one (capped), otherwise exponential backoff with
// jitter.
func (r *retrier) delay(n int, info *responseInfo) (time.Duration, bool) {
	if d, ok := parseRetryAfter(info, r.now()); ok {
		return min(d, r.maxRetryAfter), true
	}
	d := r.base
	for i := 1; i < n && d < r.max; i++ {
		d *= 2
	}
	d = min(d, r.max)
	// Equal jitter: half fixed, half random, so concurrent clients spread.
	half := d / 2
	return half + rand.N(half+1), false
}

// parseRetryAfter reads retry-after-ms (OpenAI, Azure) or Retry-After as
// seconds or an HTTP date.
func parseRetryAfter(info *responseInfo, now time.Time) (time.Duration, bool) {
	if v := strings.TrimSpace(info.retryAfterMS); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(info.retryAfter)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		return time.Duration(secs * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// classify says whether err may pass with a retry, or is a refusal that
// will not.
func classify(err error, timedOut bool) (retryable, rejected bool) {
	if timedOut {
		return true, false
	}
	if status := httpStatus(err); status != 0 {
		if status == http.StatusTooManyRequests || status >= 500 {
			return true, false
		}
		return false, status >= 400
	}
	var apiErr *sdk.APIError
	if errors.As(err, &apiErr) {
		// An error event inside a stream (no HTTP status): a server-side
		// failure after the answer started.
		return true, false
	}
	var netErr net.Error
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.Is(err, errEmptyAnswer),
		errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, io.EOF),
		errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, sdk.ErrTooManyEmptyStreamMessages),
		errors.As(err, &netErr):
		return true, false
	case errors.As(err, &syntaxErr), errors.As(err, &typeErr):
		// The endpoint answered 200 with something that is not a chat
		// completion (wrong base URL?). Retrying will not change that.
		return false, false
	}
	// Anything else the SDK refused before sending (e.g. parameters the
	// model does not support) is the request's fault.
	return false, true
}

// httpStatus is the HTTP status carried by the SDK's error types.
func httpStatus(err error) int {
	var apiErr *sdk.APIError
	if errors.As(err, &apiErr) && apiErr.HTTPStatusCode != 0 {
		return apiErr.HTTPStatusCode
	}
	var reqErr *sdk.RequestError
	if errors.As(err, &reqErr) {
		return reqErr.HTTPStatusCode
	}
	return 0
}

func statusOf(err error, info *responseInfo) int {
	if s := httpStatus(err); s != 0 {
		return s
	}
	if info.status >= 400 {
		return info.status
	}
	return 0
}

// describeErr is err's text without the SDK's verbose framing: for API
// errors, the server's message.
func describeErr(err error) string {
	var apiErr *sdk.APIError
	if errors.As(err, &apiErr) && apiErr.Message != "" {
		return apiErr.Message
	}
	var reqErr *sdk.RequestError
	if errors.As(err, &reqErr) {
		body := strings.TrimSpace(string(reqErr.Body))
		if body == "" && reqErr.Err != nil {
			body = reqErr.Err.Error()
		}
		if body == "" {
			body = reqErr.HTTPStatus
		}
		return body
	}
	return err.Error()
}

// truncate cuts s to at most n runes, marking the cut.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

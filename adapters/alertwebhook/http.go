package alertwebhook

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/vigilops/vigil/bot"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Intake is the bot's port: DeliverAlert should return quickly; a
// *LimitError is answered 429 with Retry-After, any other error 503 so the
// source retries.
type Intake = bot.AlertIntake

// LimitError is the bot's refusal of a notification over one of its
// route's limits (RouteLimits).
type LimitError = bot.AlertLimitError

// EventLog remembers the event IDs a source sent, shared by every replica
// (the alert group store): a signed event replayed within its freshness
// window is refused instead of acted on again.
type EventLog interface {
	// ClaimAlertEvent records id for ttl and reports whether it was new.
	ClaimAlertEvent(ctx context.Context, id string, ttl time.Duration) (bool, error)
	// ReleaseAlertEvent forgets id, so the source's retry of an event
	// that could not be delivered gets through.
	ReleaseAlertEvent(ctx context.Context, id string) error
}

// Observer counts what the intake does; methods must be cheap.
type Observer interface {
	AlertReceived(source, result string)
}

// Config builds a Handler.
type Config struct {
	// Token is the bearer token Alertmanager and Grafana must send.
	Token string
	// PagerDutySecret verifies X-PagerDuty-Signature; empty refuses every
	// PagerDuty request.
	PagerDutySecret string
	Router          *Router
	Intake          Intake
	Observer        Observer
	Logger          *slog.Logger
	Clock           func() time.Time
	// MaxAge is how old a notification that carries its time (PagerDuty)
	// may be before it is refused as stale (default 10m).
	MaxAge time.Duration
	// Events remembers the IDs of events that carry one (PagerDuty) for
	// MaxAge, so a replay is refused; required with PagerDutySecret.
	Events EventLog
	// Budget bounds how long a request waits for the intake (default
	// DefaultBudget): past it the source is answered 503 and retries,
	// while the delivery finishes in the background. The HTTP server's
	// write timeout must be longer (see Budget).
	Budget time.Duration
}

// DefaultBudget is the default Config.Budget: below the 30s timeout
// Alertmanager's and Grafana's webhook senders use by default, so they read
// an answer rather than time out.
const DefaultBudget = 25 * time.Second

// maxFutureSkew is how far in the future an event's own time may be (the
// sender's clock ahead of vigil's); further is refused, as it would stretch
// the window in which a replay is accepted.
const maxFutureSkew = time.Minute

// retryAfterBusy is the Retry-After of a 503: soon, as the delivery may be
// done by then and the retry then changes nothing.
const retryAfterBusy = 10 * time.Second

// Handler serves POST /alerts/alertmanager, /alerts/grafana and
// /alerts/pagerduty.
type Handler struct {
	c   Config
	mux *http.ServeMux
}

// Results counted by Observer.AlertReceived.
const (
	ResultAccepted     = "accepted"
	ResultUnauthorized = "unauthorized"
	ResultMalformed    = "malformed"
	ResultTooLarge     = "too_large"
	ResultStale        = "stale"
	ResultIgnored      = "ignored"
	ResultUnrouted     = "unrouted"
	ResultFailed       = "failed"
	// ResultLimited is a notification over its route's limits (429).
	ResultLimited = "limited"
	// ResultDuplicate is an event already received (a replay, 409).
	ResultDuplicate = "duplicate"
	// ResultSlow is a delivery still running when the budget ran out (503).
	ResultSlow = "slow"
)

// NewHandler builds the intake handler.
func NewHandler(c Config) (*Handler, error) {
	if c.Router == nil || c.Intake == nil {
		return nil, errors.New("alerting: Config.Router and Config.Intake are required")
	}
	if c.Token == "" {
		return nil, errors.New("alerting: Config.Token is required (alerts.token)")
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if c.MaxAge <= 0 {
		c.MaxAge = 10 * time.Minute
	}
	if c.Budget <= 0 {
		c.Budget = DefaultBudget
	}
	if c.PagerDutySecret != "" && c.Events == nil {
		return nil, errors.New("alerting: Config.Events is required with a PagerDuty secret, to refuse replayed events")
	}
	h := &Handler{c: c, mux: http.NewServeMux()}
	h.mux.HandleFunc("POST /alerts/alertmanager", h.serve(SourceAlertmanager, h.bearer, false, ParseAlertmanager))
	h.mux.HandleFunc("POST /alerts/grafana", h.serve(SourceGrafana, h.bearer, false, ParseGrafana))
	h.mux.HandleFunc("POST /alerts/pagerduty", h.serve(SourcePagerDuty, h.pagerDuty, true, ParsePagerDuty))
	return h, nil
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// Budget is how long a request may take, reading the body included: an
// HTTP server serving h must not time its writes out sooner, or the
// source gets a dropped connection instead of an answer.
func (h *Handler) Budget() time.Duration { return h.c.Budget }

type authFunc func(r *http.Request, body []byte) error

func (h *Handler) serve(source string, auth authFunc, needsBody bool, parse func([]byte) (Notification, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		refuse := func(code int, result, msg string, err error) {
			h.c.Logger.Warn("alert notification refused", "source", source, "result", result, "remote", r.RemoteAddr, "err", err)
			h.count(source, result)
			http.Error(w, msg, code)
		}
		// A bearer token is in the headers: a request without it is
		// refused before its body is read. A PagerDuty signature covers
		// the body, so that check waits for it.
		if !needsBody {
			if err := auth(r, nil); err != nil {
				refuse(http.StatusUnauthorized, ResultUnauthorized, err.Error(), err)
				return
			}
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				refuse(http.StatusRequestEntityTooLarge, ResultTooLarge, fmt.Sprintf("notification larger than %d bytes", MaxBodyBytes), err)
				return
			}
			refuse(http.StatusBadRequest, ResultMalformed, "could not read the body", err)
			return
		}
		if needsBody {
			if err := auth(r, body); err != nil {
				refuse(http.StatusUnauthorized, ResultUnauthorized, err.Error(), err)
				return
			}
		}
		n, err := parse(body)
		if errors.Is(err, ErrIgnored) {
			h.c.Logger.Info("alert notification ignored", "source", source, "why", err)
			h.count(source, ResultIgnored)
			w.WriteHeader(http.StatusAccepted)
			return
		}
		if err != nil {
			refuse(http.StatusBadRequest, ResultMalformed, err.Error(), err)
			return
		}
		if !n.At.IsZero() {
			switch age := h.c.Clock().Sub(n.At); {
			case age > h.c.MaxAge:
				refuse(http.StatusBadRequest, ResultStale, fmt.Sprintf("notification from %s is older than %s", n.At.Format(time.RFC3339), h.c.MaxAge),
					fmt.Errorf("occurred at %s", n.At))
				return
			case -age > maxFutureSkew:
				refuse(http.StatusBadRequest, ResultStale, fmt.Sprintf("notification from %s is more than %s in the future; check the sender's clock",
					n.At.Format(time.RFC3339), maxFutureSkew), fmt.Errorf("occurred at %s", n.At))
				return
			}
		}
		route, ok := h.c.Router.Route(n.RouteLabels())
		if !ok {
			refuse(http.StatusUnprocessableEntity, ResultUnrouted, "no alerts route matches and alerts.default is not set", nil)
			return
		}
		event := ""
		if n.EventID != "" {
			event = eventKey(n)
			fresh, err := h.c.Events.ClaimAlertEvent(r.Context(), event, h.c.MaxAge+maxFutureSkew)
			if err != nil {
				h.c.Logger.Error("alert event not checked for replay", "source", source, "event", n.EventID, "err", err)
				h.count(source, ResultFailed)
				w.Header().Set("Retry-After", seconds(retryAfterBusy))
				http.Error(w, "vigil could not take the notification now; retry", http.StatusServiceUnavailable)
				return
			}
			if !fresh {
				refuse(http.StatusConflict, ResultDuplicate, fmt.Sprintf("event %s was already received; a replay or a repeated delivery is not acted on again",
					clipValue(n.EventID, 64)), fmt.Errorf("event %s", n.EventID))
				return
			}
		}
		h.deliver(w, r, n, route, event)
	}
}

// deliver hands n to the intake and answers by the budget: a delivery
// still running then goes on, and the source is told to retry (its retry
// finds the group as the delivery left it).
func (h *Handler) deliver(w http.ResponseWriter, r *http.Request, n Notification, route Route, event string) {
	done := make(chan error, 1)
	go func() {
		err := h.c.Intake.DeliverAlert(r.Context(), n, route.AlertRoute)
		if err != nil && event != "" {
			// Not delivered: the source's retry of this event must not
			// be taken for a replay.
			ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 5*time.Second)
			if rerr := h.c.Events.ReleaseAlertEvent(ctx, event); rerr != nil {
				h.c.Logger.Warn("alert event not released after a failed delivery", "event", n.EventID, "err", rerr)
			}
			cancel()
		}
		done <- err
	}()
	timer := time.NewTimer(h.c.Budget)
	defer timer.Stop()
	var err error
	select {
	case err = <-done:
	case <-timer.C:
		h.c.Logger.Warn("alert notification still being delivered when its budget ran out; asking the source to retry",
			"source", n.Source, "group", n.Key(), "budget", h.c.Budget)
		h.count(n.Source, ResultSlow)
		w.Header().Set("Retry-After", seconds(retryAfterBusy))
		http.Error(w, fmt.Sprintf("vigil is still taking the notification after %s; retry", h.c.Budget), http.StatusServiceUnavailable)
		return
	}
	var le *LimitError
	switch {
	case errors.As(err, &le):
		h.c.Logger.Warn("alert notification refused: over its route's limit", "source", n.Source, "group", n.Key(), "route", route.Name, "err", err)
		h.count(n.Source, ResultLimited)
		w.Header().Set("Retry-After", seconds(le.RetryAfter))
		http.Error(w, "too many alert groups: "+le.Error(), http.StatusTooManyRequests)
	case err != nil:
		h.c.Logger.Error("alert notification not delivered", "source", n.Source, "group", n.Key(), "err", err)
		h.count(n.Source, ResultFailed)
		w.Header().Set("Retry-After", seconds(retryAfterBusy))
		http.Error(w, "vigil could not take the notification now; retry", http.StatusServiceUnavailable)
	default:
		h.count(n.Source, ResultAccepted)
		w.WriteHeader(http.StatusOK)
	}
}

// seconds is a Retry-After value: whole seconds, at least 1.
func seconds(d time.Duration) string {
	return strconv.Itoa(max(1, int((d+time.Second-1)/time.Second)))
}

// eventKey is the store's key of n's event: the source and a hash of the
// ID, which the sender chose.
func eventKey(n Notification) string {
	sum := sha256.Sum256([]byte(n.EventID))
	return n.Source + ":" + hex.EncodeToString(sum[:16])
}

func (h *Handler) count(source, result string) {
	if h.c.Observer != nil {
		h.c.Observer.AlertReceived(source, result)
	}
}

// bearer checks Authorization: Bearer <alerts.token> in constant time.
func (h *Handler) bearer(r *http.Request, _ []byte) error {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return errors.New("missing Authorization: Bearer <alerts.token>")
	}
	if subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(h.c.Token)) != 1 {
		return errors.New("wrong bearer token")
	}
	return nil
}

func (h *Handler) pagerDuty(r *http.Request, body []byte) error {
	return VerifyPagerDuty(body, r.Header.Get("X-PagerDuty-Signature"), h.c.PagerDutySecret)
}

// VerifyPagerDuty checks a PagerDuty V3 signature header: one or more
// comma-separated v1=<hex HMAC-SHA256 of the body>; one matching
// signature is enough (PagerDuty sends several while a secret rotates).
func VerifyPagerDuty(body []byte, header, secret string) error {
	if secret == "" {
		return errors.New("PagerDuty webhooks are not enabled: alerts.pagerduty.secret is not set")
	}
	if strings.TrimSpace(header) == "" {
		return errors.New("missing X-PagerDuty-Signature")
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	want := mac.Sum(nil)
	for _, s := range strings.Split(header, ",") {
		hexSig, ok := strings.CutPrefix(strings.TrimSpace(s), "v1=")
		if !ok {
			continue
		}
		got, err := hex.DecodeString(hexSig)
		if err != nil {
			continue
		}
		if hmac.Equal(got, want) {
			return nil
		}
	}
	return errors.New("no X-PagerDuty-Signature matches alerts.pagerduty.secret")
}

// SignPagerDuty returns the v1 signature of body under secret, as
// PagerDuty computes it (for tests and tools).
func SignPagerDuty(body []byte, secret string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "v1=" + hex.EncodeToString(mac.Sum(nil))
}

package alerting

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// Intake takes a routed notification (the bot). Deliver should return
// quickly; an error is answered 503 so the source retries.
type Intake interface {
	DeliverAlert(ctx context.Context, n Notification, r Route) error
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
}

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
	h := &Handler{c: c, mux: http.NewServeMux()}
	h.mux.HandleFunc("POST /alerts/alertmanager", h.serve(SourceAlertmanager, h.bearer, false, ParseAlertmanager))
	h.mux.HandleFunc("POST /alerts/grafana", h.serve(SourceGrafana, h.bearer, false, ParseGrafana))
	h.mux.HandleFunc("POST /alerts/pagerduty", h.serve(SourcePagerDuty, h.pagerDuty, true, ParsePagerDuty))
	return h, nil
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

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
		if !n.At.IsZero() && h.c.Clock().Sub(n.At) > h.c.MaxAge {
			refuse(http.StatusBadRequest, ResultStale, fmt.Sprintf("notification from %s is older than %s", n.At.Format(time.RFC3339), h.c.MaxAge),
				fmt.Errorf("occurred at %s", n.At))
			return
		}
		route, ok := h.c.Router.Route(n.RouteLabels())
		if !ok {
			refuse(http.StatusUnprocessableEntity, ResultUnrouted, "no alerts route matches and alerts.default is not set", nil)
			return
		}
		if err := h.c.Intake.DeliverAlert(r.Context(), n, route); err != nil {
			h.c.Logger.Error("alert notification not delivered", "source", source, "group", n.Key(), "err", err)
			h.count(source, ResultFailed)
			http.Error(w, "vigil could not take the notification now; retry", http.StatusServiceUnavailable)
			return
		}
		h.count(source, ResultAccepted)
		w.WriteHeader(http.StatusOK)
	}
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

package slack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
)

// Handler serves the Events API at POST /slack/events and interactivity at
// POST /slack/interactive. Every request must carry a valid v0 signature
// made within the last five minutes. Events are acknowledged with 200 as
// soon as the bot has taken them (deduplicated and queued, no run); the
// bot works after. Until Start has
// authenticated, events get 503 so Slack retries later (url_verification
// is answered at once).
func (a *Adapter) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /slack/events", a.serveEvents)
	mux.HandleFunc("POST /slack/interactive", a.serveInteractive)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				id := newErrorID()
				a.log.Error("slack: panic in http handler", "error_id", id, "path", r.URL.Path, "panic", p, "stack", string(debug.Stack()))
				http.Error(w, "internal error "+id, http.StatusInternalServerError)
			}
		}()
		mux.ServeHTTP(w, r)
	})
}

// readSigned reads the body within the size limit and checks Slack's
// signature; it writes the error response itself when it returns false.
func (a *Adapter) readSigned(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			a.log.Warn("slack: request body too large", "path", r.URL.Path, "limit", maxBody)
			http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
			return nil, false
		}
		http.Error(w, "could not read body", http.StatusBadRequest)
		return nil, false
	}
	sv, err := slack.NewSecretsVerifier(r.Header, a.cfg.SigningSecret.Reveal())
	if err == nil {
		_, _ = sv.Write(body)
		err = sv.Ensure()
	}
	if err != nil {
		a.log.Warn("slack: request signature rejected", "path", r.URL.Path, "remote", r.RemoteAddr, "err", err)
		http.Error(w, "invalid signature", http.StatusUnauthorized)
		return nil, false
	}
	return body, true
}

func (a *Adapter) badRequest(w http.ResponseWriter, r *http.Request, err error) {
	id := newErrorID()
	a.log.Error("slack: malformed request", "error_id", id, "path", r.URL.Path, "err", err)
	http.Error(w, "malformed payload (error ID "+id+")", http.StatusBadRequest)
}

func (a *Adapter) serveEvents(w http.ResponseWriter, r *http.Request) {
	body, ok := a.readSigned(w, r)
	if !ok {
		return
	}
	p, err := parseEvent(body)
	if err != nil {
		a.badRequest(w, r, err)
		return
	}
	switch p.Type {
	case slackevents.URLVerification:
		if p.Challenge == "" {
			a.badRequest(w, r, fmt.Errorf("%w: url_verification without challenge", ErrBadPayload))
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, p.Challenge)
		return
	case slackevents.CallbackEvent:
	default:
		a.log.Info("slack events payload ignored", "type", p.Type)
		w.WriteHeader(http.StatusOK)
		return
	}
	if !a.isReady() {
		w.Header().Set("Retry-After", "1")
		http.Error(w, "not ready", http.StatusServiceUnavailable)
		return
	}
	if n := r.Header.Get("X-Slack-Retry-Num"); n != "" {
		a.log.Debug("slack event redelivered", "event_id", p.EventID, "retry", n, "reason", r.Header.Get("X-Slack-Retry-Reason"))
	}
	a.acceptEvent(context.WithoutCancel(r.Context()), p)
	w.WriteHeader(http.StatusOK)
}

func (a *Adapter) serveInteractive(w http.ResponseWriter, r *http.Request) {
	body, ok := a.readSigned(w, r)
	if !ok {
		return
	}
	form, err := url.ParseQuery(string(body))
	if err != nil || form.Get("payload") == "" {
		a.badRequest(w, r, fmt.Errorf("%w: interactivity request without a payload field", ErrBadPayload))
		return
	}
	in, err := parseInteraction([]byte(form.Get("payload")))
	if err != nil {
		a.badRequest(w, r, err)
		return
	}
	if !a.isReady() {
		http.Error(w, "not ready", http.StatusServiceUnavailable)
		return
	}
	queued, err := a.acceptInteraction(context.WithoutCancel(r.Context()), in, false)
	if err != nil {
		a.badRequest(w, r, err)
		return
	}
	if !queued {
		http.Error(w, "busy", http.StatusServiceUnavailable)
		return
	}
	// An empty 200 also closes the deny dialog after a view_submission.
	w.WriteHeader(http.StatusOK)
}

// runHTTP serves Handler on Config.Listen until ctx ends.
func (a *Adapter) runHTTP(ctx context.Context) error {
	ln, err := net.Listen("tcp", a.cfg.Listen)
	if err != nil {
		return fmt.Errorf("slack: listen on slack.listen %q: %w", a.cfg.Listen, err)
	}
	a.addr.Store(ln.Addr().String())
	srv := &http.Server{
		Handler:           a.Handler(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      15 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(a.log.Handler(), slog.LevelWarn),
	}
	a.log.Info("slack events API listening", "addr", ln.Addr().String())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			a.log.Warn("slack: http shutdown", "err", err)
		}
		<-errc
		return nil
	case err := <-errc:
		return fmt.Errorf("slack: http server: %w", err)
	}
}

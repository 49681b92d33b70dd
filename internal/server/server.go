// Package server is vigil's operations HTTP endpoint: Prometheus metrics
// and the liveness and readiness probes (SPEC D3), and the alert webhooks
// when alert intake is on (Handle). It serves no chat traffic.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

const (
	// ReadyTimeout bounds one readiness check; a check that takes longer
	// counts as not ready.
	ReadyTimeout = 2 * time.Second
	// shutdownTimeout bounds how long Run waits for in-flight requests
	// after its context ends.
	shutdownTimeout = 5 * time.Second
)

// ReadyFunc reports whether vigil can serve: nil when ready, otherwise an
// error whose text is shown to the prober (e.g. "redis: connection refused").
// It must honour ctx.
type ReadyFunc func(ctx context.Context) error

// Server serves /metrics, /healthz and /readyz.
type Server struct {
	srv    *http.Server
	mux    *http.ServeMux
	ready  ReadyFunc
	logger *slog.Logger
}

// New builds a server for addr (host:port) exposing the metrics of reg.
// ready may be nil (always ready); logger may be nil (discard).
func New(addr string, reg *prometheus.Registry, ready func(ctx context.Context) error, logger *slog.Logger) *Server {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	mux := http.NewServeMux()
	s := &Server{ready: ready, logger: logger, mux: mux}
	mux.Handle("GET /metrics", promhttp.InstrumentMetricHandler(reg, promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		Registry:            reg,
		ErrorLog:            slog.NewLogLogger(logger.Handler(), slog.LevelError),
		Timeout:             10 * time.Second,
		MaxRequestsInFlight: 4,
	})))
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /readyz", s.readyz)
	s.srv = &http.Server{
		Addr:              addr,
		Handler:           mux,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      15 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	return s
}

// Budgeted is a handler that says how long it may take to answer once
// the request is read (alertwebhook.Handler answers by its budget).
type Budgeted interface {
	Budget() time.Duration
}

// writeMargin is what a budgeted handler's answer has to be written after
// its budget ran out.
const writeMargin = 5 * time.Second

// Handle adds routes under pattern (the alert webhooks, "/alerts/"), before
// Run. A Budgeted handler raises the server's write timeout to cover
// reading the request, the budget and writing the answer: a write timeout
// shorter than the time a handler may take drops the connection under the
// sender, which then cannot tell an overload (503, retry) from a network
// failure.
func (s *Server) Handle(pattern string, h http.Handler) {
	s.mux.Handle(pattern, h)
	if b, ok := h.(Budgeted); ok {
		s.srv.WriteTimeout = max(s.srv.WriteTimeout, s.srv.ReadTimeout+b.Budget()+writeMargin)
	}
}

// Handler returns the server's routes, for tests and embedding.
func (s *Server) Handler() http.Handler { return s.srv.Handler }

// Run listens and serves until ctx ends, then shuts down gracefully,
// waiting a bounded time for in-flight requests. It returns nil after a
// clean shutdown.
func (s *Server) Run(ctx context.Context) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", s.srv.Addr)
	if err != nil {
		return fmt.Errorf("server: listen on %s: %w", s.srv.Addr, err)
	}
	return s.Serve(ctx, ln)
}

// Serve is Run on a listener the caller opened (a test's 127.0.0.1:0, a
// socket handed over by systemd). It closes ln.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	s.logger.Info("ops server listening", slog.String("addr", ln.Addr().String()))
	errc := make(chan error, 1)
	go func() { errc <- s.srv.Serve(ln) }()

	select {
	case err := <-errc:
		return fmt.Errorf("server: serve: %w", err)
	case <-ctx.Done():
	}
	// ctx is already done; shutdown gets its own bounded deadline.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	if err := s.srv.Shutdown(sctx); err != nil {
		_ = s.srv.Close()
		return fmt.Errorf("server: shutdown: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("server: serve: %w", err)
	}
	s.logger.Info("ops server stopped")
	return nil
}

// healthz answers 200 as long as the process serves HTTP: liveness says
// nothing about dependencies, so a Redis outage never restarts pods.
func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	writeText(w, http.StatusOK, "ok")
}

// readyz answers 200 when the ready check passes within ReadyTimeout and
// 503 with the check's error otherwise.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	if s.ready == nil {
		writeText(w, http.StatusOK, "ready")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), ReadyTimeout)
	defer cancel()
	err := s.check(ctx)
	if err != nil {
		s.logger.Warn("not ready", slog.Any("err", err))
		writeText(w, http.StatusServiceUnavailable, "not ready: "+err.Error())
		return
	}
	writeText(w, http.StatusOK, "ready")
}

// check runs the ready func but returns by the deadline even if the func
// ignores ctx, so a stuck dependency cannot hang the probe.
func (s *Server) check(ctx context.Context) error {
	done := make(chan error, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- fmt.Errorf("ready check panicked: %v", p)
			}
		}()
		done <- s.ready(ctx)
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	// The check was told to stop. Its own error names what hung (the
	// state store, say), which is what an operator needs; on a loaded
	// machine it may come a moment after the deadline, so wait briefly
	// for it before falling back to the bare timeout.
	select {
	case err := <-done:
		return err
	case <-time.After(readyGrace):
		return fmt.Errorf("ready check: %w", context.Cause(ctx))
	}
}

// readyGrace is how long a ready check that overran its deadline has to
// report why.
const readyGrace = 500 * time.Millisecond

func writeText(w http.ResponseWriter, code int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = fmt.Fprintln(w, body)
}

package app_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/internal/app"
	"github.com/vigilops/vigil/internal/config"
	"github.com/vigilops/vigil/internal/server"
	redisstore "github.com/vigilops/vigil/store/redis"
)

type noModel struct{}

func (noModel) Complete(context.Context, agent.ModelRequest, func(string)) (agent.ModelResponse, error) {
	return agent.ModelResponse{}, errors.New("not used")
}

// hungServer accepts connections and never answers, like a Redis that is
// stopped or stuck.
func hungServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return ln.Addr().String()
}

// A state store that hangs makes /readyz answer 503 naming the store, not
// just "the check timed out": the operator must see what to look at.
func TestReadyzNamesAHungStore(t *testing.T) {
	addr := hungServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	st, err := redisstore.New(ctx, redisstore.Options{Addr: addr})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	stores := st.Stores()
	cfg, err := config.Load("")
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.New(context.Background(), app.Options{Config: cfg, Model: noModel{}, Stores: &stores})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()

	h := server.New("127.0.0.1:0", prometheus.NewRegistry(), a.Ready, nil).Handler()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	if rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("/readyz with a hung store: %d, want 503", rec.Code)
	}
	if body := rec.Body.String(); !strings.Contains(body, "redis") {
		t.Fatalf("/readyz with a hung store says %q; it should name redis", body)
	}
}

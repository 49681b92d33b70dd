package redistest

import (
	"context"
	"testing"
	"time"
)

// A private server keeps its data across Crash and Start (append-only,
// fsync always), answers nothing while frozen, and everything after Thaw.
func TestServerCrashFreezeThaw(t *testing.T) {
	s := Start(t, Options{Persist: true})
	if _, err := s.Do("SET", "k", "v"); err != nil {
		t.Fatal(err)
	}
	s.Crash()
	if _, err := s.Do("PING"); err == nil {
		t.Fatal("a crashed server answered")
	}
	s.Start()
	if v, err := s.Do("GET", "k"); err != nil || v != "v" {
		t.Fatalf("after restart: %v %v, want the acknowledged write", v, err)
	}
	s.Freeze()
	c := s.Client()
	start := time.Now()
	if err := c.Do(ctxTimeout(t, 300*time.Millisecond), "PING").Err(); err == nil {
		t.Fatal("a frozen server answered")
	}
	if time.Since(start) < 250*time.Millisecond {
		t.Fatal("a frozen server refused at once; it should hang")
	}
	s.Thaw()
	if err := c.Ping(t.Context()).Err(); err != nil {
		t.Fatalf("after thaw: %v", err)
	}
}

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

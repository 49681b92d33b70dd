package obsbin

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"
)

// Exporter serves known series for a real Prometheus to scrape:
// vigil_test_queue_depth climbs 10 per second from the exporter's start;
// vigil_test_latency_seconds{service="checkout"} is 0.1 but 5 for
// SpikeFor, starting SpikeAfter after the first scrape;
// vigil_test_latency_seconds{service="cart"} stays at 0.2.
type Exporter struct {
	*httptest.Server
	start time.Time

	mu         sync.Mutex
	spikeStart time.Time
	spikeEnd   time.Time
}

// The exporter's spike.
const (
	SpikeAfter = 7 * time.Second
	SpikeFor   = 2500 * time.Millisecond
)

// StartExporter runs the exporter until the test ends.
func StartExporter(t testing.TB) *Exporter {
	t.Helper()
	e := &Exporter{start: time.Now()}
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		e.mu.Lock()
		if e.spikeStart.IsZero() {
			e.spikeStart = now.Add(SpikeAfter)
			e.spikeEnd = e.spikeStart.Add(SpikeFor)
		}
		latency := 0.1
		if !now.Before(e.spikeStart) && now.Before(e.spikeEnd) {
			latency = 5
		}
		e.mu.Unlock()
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprintf(w, "# TYPE vigil_test_queue_depth gauge\nvigil_test_queue_depth %g\n", 10*now.Sub(e.start).Seconds())
		fmt.Fprintf(w, "# TYPE vigil_test_latency_seconds gauge\n")
		fmt.Fprintf(w, "vigil_test_latency_seconds{service=\"checkout\"} %g\n", latency)
		fmt.Fprintf(w, "vigil_test_latency_seconds{service=\"cart\"} 0.2\n")
	}))
	t.Cleanup(e.Close)
	return e
}

// Spike returns when the spike starts and ends; zero before the first
// scrape.
func (e *Exporter) Spike() (start, end time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.spikeStart, e.spikeEnd
}

// Host is the exporter's host:port, which Prometheus labels instance.
func (e *Exporter) Host() string {
	u, _ := url.Parse(e.URL)
	return u.Host
}

// ScrapeConfig is a Prometheus configuration that scrapes e every second
// as job "exporter", plus extra (rule_files and the like).
func (e *Exporter) ScrapeConfig(extra string) string {
	return fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
%s
scrape_configs:
  - job_name: exporter
    static_configs:
      - targets: [%q]
`, extra, e.Host())
}

// WaitPastSpike waits until the spike is over and a few scrapes after it
// are in, failing the test after timeout.
func (e *Exporter) WaitPastSpike(t testing.TB, p *Server, timeout time.Duration) (start, end time.Time) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if s, end := e.Spike(); !end.IsZero() && time.Now().After(end.Add(4*time.Second)) {
			return s, end
		}
		if time.Now().After(deadline) {
			t.Fatalf("Prometheus did not scrape the exporter in time:\n%s", p.Log())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

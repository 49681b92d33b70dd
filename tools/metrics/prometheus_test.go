package metrics

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	promconfig "github.com/prometheus/common/config"

	"github.com/vigilops/vigil/internal/testenv/obsbin"
	"github.com/vigilops/vigil/tools"
)

// promWithExporter starts a real Prometheus scraping e every second, with
// an alerting and a recording rule on the queue.
func promWithExporter(t *testing.T, e *obsbin.Exporter) *obsbin.Server {
	t.Helper()
	rules := filepath.Join(t.TempDir(), "rules.yml")
	if err := os.WriteFile(rules, []byte(`groups:
  - name: queue
    rules:
      - alert: QueueDeep
        expr: vigil_test_queue_depth > 30
        labels: {severity: page}
        annotations: {summary: the queue is deep}
      - record: job:queue_depth:max
        expr: max(vigil_test_queue_depth)
`), 0o600); err != nil {
		t.Fatal(err)
	}
	return obsbin.Prometheus(t, e.ScrapeConfig(fmt.Sprintf("rule_files: [%q]", rules)))
}

func execute(t *testing.T, tool tools.Tool, args string) tools.Envelope {
	t.Helper()
	p, b := tool.Propose(json.RawMessage(args))
	if b != nil {
		t.Fatalf("propose %s: %+v", args, b)
	}
	return tool.Execute(context.Background(), p).Envelope
}

func decode[T any](t *testing.T, e tools.Envelope) T {
	t.Helper()
	if !e.OK {
		t.Fatalf("not ok: %s", e.JSON())
	}
	raw, err := json.Marshal(e.Data)
	if err != nil {
		t.Fatal(err)
	}
	var out T
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	return out
}

// TestAgainstRealPrometheus proves the summaries against a real
// Prometheus: it scrapes the test's exporter for about 15 seconds, then
// the range summary must name the checkout spike's time and the climb.
func TestAgainstRealPrometheus(t *testing.T) {
	e := obsbin.StartExporter(t)
	prom := promWithExporter(t, e)
	ds, err := Connect(Config{Name: "main", URL: prom.URL})
	if err != nil {
		t.Fatal(err)
	}
	tool := New([]Datasource{ds}, nil)

	spikeStart, spikeEnd := e.WaitPastSpike(t, prom, 40*time.Second)

	t.Run("range names the spike and the climb", func(t *testing.T) {
		r := decode[RangeSummary](t, execute(t, tool, `{"action":"range","query":"vigil_test_latency_seconds","since":"1m","step":"1s"}`))
		if r.SeriesTotal != 2 || r.Series[0].Series != `vigil_test_latency_seconds{instance="`+e.Host()+`", job="exporter", service="checkout"}` {
			t.Fatalf("range = %+v", r)
		}
		c := r.Series[0].LargestChange
		if c == nil || c.Kind != "spike" || c.To != 5 {
			t.Fatalf("checkout's largest change = %+v, want a spike to 5", c)
		}
		// An evaluation at time T sees the last sample scraped at or
		// before T; scrapes are a second apart.
		if c.At.Before(spikeStart.Truncate(time.Second)) || c.At.After(spikeStart.Add(2*time.Second)) {
			t.Errorf("spike at %s; the exporter spiked from %s", c.At, spikeStart.UTC())
		}
		if c.Until.Before(spikeEnd.Truncate(time.Second)) || c.Until.After(spikeEnd.Add(2*time.Second)) {
			t.Errorf("spike until %s; the exporter stopped at %s", c.Until, spikeEnd.UTC())
		}
		if cart := r.Series[1]; cart.LargestChange != nil || cart.Trend.Direction != "flat" || cart.Max != 0.2 {
			t.Errorf("cart = %+v, want flat at 0.2", cart)
		}

		q := decode[RangeSummary](t, execute(t, tool, `{"action":"range","query":"vigil_test_queue_depth","since":"1m"}`))
		if len(q.Series) != 1 {
			t.Fatalf("queue = %+v", q)
		}
		tr := q.Series[0].Trend
		if tr.Direction != "rising" || !tr.Steady || float64(tr.PerMinute) < 400 || float64(tr.PerMinute) > 800 {
			t.Errorf("queue trend = %+v, want rising steadily at about 600 a minute", tr)
		}
		if q.Series[0].LargestChange != nil {
			t.Errorf("a steady climb reported a sudden change: %+v", q.Series[0].LargestChange)
		}
		if q.Step != "1s" {
			t.Errorf("automatic step over 1m = %s, want 1s (about 240 points at most)", q.Step)
		}
	})

	t.Run("instant query keeps the top series", func(t *testing.T) {
		r := decode[InstantSummary](t, execute(t, tool, `{"action":"query","query":"vigil_test_latency_seconds","limit":1}`))
		if r.SeriesTotal != 2 || r.Shown != 1 || r.Omitted != 1 || !strings.Contains(r.Note, "1 more") {
			t.Fatalf("instant = %+v", r)
		}
	})

	t.Run("syntax error comes back with the position", func(t *testing.T) {
		env := execute(t, tool, `{"action":"query","query":"rate(vigil_test_queue_depth[1m]"}`)
		if env.OK || env.Error.Code != "INVALID_INPUT" || env.Error.Details["position"] == nil {
			t.Fatalf("envelope = %s", env.JSON())
		}
		if !strings.Contains(env.Error.Message, "parse error") || !strings.Contains(fmt.Sprint(env.Error.Details["at"]), "^") {
			t.Errorf("envelope = %s", env.JSON())
		}
	})

	t.Run("series, labels and values", func(t *testing.T) {
		s := decode[map[string]any](t, execute(t, tool, `{"action":"series","query":"vigil_test_latency_seconds","since":"5m"}`))
		if s["total"].(float64) != 2 {
			t.Fatalf("series = %v", s)
		}
		l := decode[map[string]any](t, execute(t, tool, `{"action":"labels","query":"vigil_test_latency_seconds"}`))
		if !strings.Contains(fmt.Sprint(l["labels"]), "service") {
			t.Fatalf("labels = %v", l)
		}
		v := decode[map[string]any](t, execute(t, tool, `{"action":"label_values","label":"service","limit":1}`))
		if fmt.Sprint(v["values"]) != "[cart]" || v["omitted"].(float64) != 1 {
			t.Fatalf("values = %v", v)
		}
	})

	t.Run("targets and rules", func(t *testing.T) {
		tg := decode[map[string]any](t, execute(t, tool, `{"action":"targets"}`))
		if fmt.Sprint(tg["by_health"]) != "map[up:1]" {
			t.Fatalf("targets = %v", tg)
		}
		rs := decode[map[string]any](t, execute(t, tool, `{"action":"rules"}`))
		rules := rs["rules"].([]any)
		first := rules[0].(map[string]any)
		if first["name"] != "QueueDeep" || first["state"] != "firing" || first["summary"] != "the queue is deep" || len(rules) != 2 {
			t.Fatalf("rules = %v", rs)
		}
	})
}

func TestPrometheusDown(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	ds, err := Connect(Config{Name: "gone", URL: srv.URL, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	env := execute(t, New([]Datasource{ds}, nil), `{"action":"query","query":"up"}`)
	if env.OK || env.Error.Code != "EXECUTION_FAILED" || !env.Error.Retryable || !strings.Contains(env.Error.Message, "gone") {
		t.Fatalf("envelope = %s", env.JSON())
	}
}

func TestAuthHeadersReachPrometheus(t *testing.T) {
	var got []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"status":"success","data":{"resultType":"vector","result":[]}}`)
	}))
	defer srv.Close()
	for _, auth := range []promconfig.HTTPClientConfig{
		{Authorization: &promconfig.Authorization{Type: "Bearer", Credentials: "tok"}},
		{BasicAuth: &promconfig.BasicAuth{Username: "vigil", Password: "pw"}},
	} {
		ds, err := Connect(Config{Name: "main", URL: srv.URL, HTTP: auth})
		if err != nil {
			t.Fatal(err)
		}
		if env := execute(t, New([]Datasource{ds}, nil), `{"action":"query","query":"up"}`); !env.OK {
			t.Fatalf("envelope = %s", env.JSON())
		}
	}
	if len(got) != 2 || got[0] != "Bearer tok" || got[1] != "Basic dmlnaWw6cHc=" {
		t.Fatalf("Authorization headers = %q", got)
	}
}

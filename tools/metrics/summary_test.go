package metrics

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// series builds a series sampled every 15s from t0.
func series(name string, vs ...float64) Series {
	s := Series{Labels: map[string]string{"__name__": name, "job": "api"}}
	for i, v := range vs {
		s.Points = append(s.Points, Point{T: t0.Add(time.Duration(i) * 15 * time.Second), V: v})
	}
	return s
}

func at(i int) time.Time { return t0.Add(time.Duration(i) * 15 * time.Second) }

func TestSummarizeSteadyClimb(t *testing.T) {
	vs := make([]float64, 40)
	for i := range vs {
		vs[i] = 100 + 10*float64(i) + float64(i%3) // a climb with a little jitter
	}
	s := Summarize(series("queue_depth", vs...))
	if s.Trend.Direction != "rising" || !s.Trend.Steady {
		t.Fatalf("trend = %+v, want rising steadily", s.Trend)
	}
	if pm := float64(s.Trend.PerMinute); math.Abs(pm-40) > 2 {
		t.Errorf("per minute = %v, want about 40 (10 per 15s)", pm)
	}
	if s.LargestChange != nil {
		t.Errorf("a steady climb has no sudden change, got %+v", s.LargestChange)
	}
	if s.Min != 100 || s.MinAt != at(0) || float64(s.Last) != vs[39] || s.LastAt != at(39) || s.Samples != 40 {
		t.Errorf("stats = %+v", s)
	}
}

func TestSummarizeSpike(t *testing.T) {
	vs := []float64{0.1, 0.12, 0.11, 0.1, 0.12, 0.1, 4.8, 5.2, 0.11, 0.1, 0.12, 0.1, 0.11, 0.1}
	s := Summarize(series("latency_seconds", vs...))
	c := s.LargestChange
	if c == nil || c.Kind != "spike" || c.At != at(6) || c.Until != at(8) || c.To != 5.2 || c.PeakAt != at(7) || c.From != 0.1 {
		t.Fatalf("largest change = %+v, want a spike at %s peaking at 5.2 at %s, back at %s", c, at(6), at(7), at(8))
	}
	if s.Trend.Direction != "flat" {
		t.Errorf("trend = %+v, want flat: the spike is not a trend", s.Trend)
	}
	if s.Max != 5.2 || s.MaxAt != at(7) {
		t.Errorf("max = %v at %s", s.Max, s.MaxAt)
	}
}

// The biggest jump is the way back down: the rise took two samples.
func TestSummarizeSpikeFoundFromItsEnd(t *testing.T) {
	vs := []float64{1, 1, 1, 1, 3, 9, 1, 1, 1, 1, 1, 1}
	c := Summarize(series("x", vs...)).LargestChange
	if c == nil || c.Kind != "spike" || c.At != at(4) || c.Until != at(6) || c.To != 9 || c.PeakAt != at(5) {
		t.Fatalf("largest change = %+v, want a spike from %s to %s peaking at 9", c, at(4), at(6))
	}
}

func TestSummarizeDipAndStep(t *testing.T) {
	dip := Summarize(series("up_ratio", 1, 1, 1, 1, 0, 0, 1, 1, 1, 1)).LargestChange
	if dip == nil || dip.Kind != "dip" || dip.At != at(4) || dip.Until != at(6) || dip.To != 0 {
		t.Fatalf("dip = %+v", dip)
	}
	step := Summarize(series("replicas", 3, 3, 3, 3, 3, 6, 6, 6, 6, 6, 6, 6, 6, 6))
	c := step.LargestChange
	if c == nil || c.Kind != "step_up" || c.At != at(5) || c.From != 3 || c.To != 6 {
		t.Fatalf("step = %+v", c)
	}
	if step.Trend.Direction != "rising" {
		t.Errorf("a step up rises: %+v", step.Trend)
	}
	down := Summarize(series("free_bytes", 9, 9, 9, 9, 2, 2, 2, 2, 2, 2, 2)).LargestChange
	if down == nil || down.Kind != "step_down" || down.At != at(4) {
		t.Fatalf("step down = %+v", down)
	}
}

func TestSummarizeFlatAndNoise(t *testing.T) {
	flat := Summarize(series("constant", 5, 5, 5, 5, 5))
	if flat.Trend.Direction != "flat" || flat.LargestChange != nil || flat.Avg != 5 {
		t.Fatalf("constant = %+v", flat)
	}
	noise := Summarize(series("noise", 10, 11, 9, 10, 11, 10, 9, 11, 10, 10, 9, 11))
	if noise.Trend.Direction != "flat" || noise.LargestChange != nil {
		t.Fatalf("noise = %+v, want flat with no sudden change", noise)
	}
	short := Summarize(series("two", 1, 2))
	if short.LargestChange != nil || short.Samples != 2 {
		t.Fatalf("two samples = %+v", short)
	}
}

func TestSummarizeNonFinite(t *testing.T) {
	s := Summarize(series("ratio", math.NaN(), 1, math.Inf(1), 2, 3))
	if s.NonFinite != 2 || s.Min != 1 || s.Max != 3 || s.Samples != 5 {
		t.Fatalf("summary = %+v", s)
	}
	all := Summarize(series("nan", math.NaN(), math.NaN()))
	raw, err := json.Marshal(all)
	if err != nil {
		t.Fatalf("a NaN series does not encode: %v", err)
	}
	if !strings.Contains(string(raw), `"max":"NaN"`) {
		t.Fatalf("NaN encoding: %s", raw)
	}
}

func TestSummarizeRangeOrderAndOmission(t *testing.T) {
	var ss []Series
	for i := range 12 {
		s := series("cpu", float64(i), float64(i)+1, float64(i))
		s.Labels["pod"] = fmt.Sprintf("web-%02d", i)
		ss = append(ss, s)
	}
	ss = append(ss, series("cpu", math.NaN()))
	r := SummarizeRange("cpu", t0, at(2), 15*time.Second, ss, 5)
	if r.SeriesTotal != 13 || r.Shown != 5 || r.Omitted != 8 || r.OrderedBy != OrderByPeak {
		t.Fatalf("range = %+v", r)
	}
	if !strings.Contains(r.Note, "8 more series not shown") {
		t.Errorf("note = %q", r.Note)
	}
	for i, want := range []string{"web-11", "web-10", "web-09", "web-08", "web-07"} {
		if !strings.Contains(r.Series[i].Series, want) {
			t.Errorf("series[%d] = %s, want %s (highest peak first)", i, r.Series[i].Series, want)
		}
	}
	if _, err := json.Marshal(r); err != nil {
		t.Fatal(err)
	}
	empty := SummarizeRange("nothing", t0, at(2), 15*time.Second, nil, 5)
	if empty.Shown != 0 || !strings.Contains(empty.Note, "no series") || empty.Series == nil {
		t.Fatalf("empty = %+v", empty)
	}
}

func TestSummarizeInstant(t *testing.T) {
	var samples []Sample
	for i := range 7 {
		samples = append(samples, Sample{Series: fmt.Sprintf("up{i=\"%d\"}", i), Value: Num(i), At: t0})
	}
	r := SummarizeInstant("up", t0, samples, 3)
	if r.Shown != 3 || r.Omitted != 4 || r.Samples[0].Value != 6 || !strings.Contains(r.Note, "4 more") {
		t.Fatalf("instant = %+v", r)
	}
}

func TestFormatLabels(t *testing.T) {
	got := FormatLabels(map[string]string{"__name__": "http_requests_total", "code": "500", "a": `x"y`})
	if want := `http_requests_total{a="x\"y", code="500"}`; got != want {
		t.Fatalf("FormatLabels = %s, want %s", got, want)
	}
}

func BenchmarkSummarizeRange(b *testing.B) {
	// 200 series of 240 points: a day at 6-minute steps, the most an
	// automatic step asks for.
	var ss []Series
	for i := range 200 {
		vs := make([]float64, 240)
		for j := range vs {
			vs[j] = float64(i) + math.Sin(float64(j)/10)
		}
		ss = append(ss, series("x", vs...))
	}
	b.ReportAllocs()
	for b.Loop() {
		SummarizeRange("x", t0, at(240), 15*time.Second, ss, 10)
	}
}

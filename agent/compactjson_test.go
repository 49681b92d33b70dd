package agent

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/vigilops/vigil/tools"
	"github.com/vigilops/vigil/tools/builtin"
	"github.com/vigilops/vigil/tools/inventory"
	"github.com/vigilops/vigil/tools/metrics"
)

// randomJSON builds a random value of about size bytes: nested objects
// and arrays, strings with newlines, quotes, backslashes, multi-byte and
// control characters, numbers, booleans and nulls.
func randomJSON(r *rand.Rand, size, depth int) any {
	pieces := []string{"line\n", `"quoted"`, `back\slash`, "tab\t", "é", "日本", "\x01", "</script>", "ERROR timed out ", "\u2028", " "}
	str := func(n int) string {
		var b strings.Builder
		for b.Len() < n {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		return b.String()
	}
	switch k := r.IntN(10); {
	case depth > 3 || size < 40 || k < 3:
		switch r.IntN(5) {
		case 0:
			return r.Float64() * 1000
		case 1:
			return r.IntN(2) == 0
		case 2:
			return nil
		}
		return str(max(1, size))
	case k < 6:
		n := 1 + r.IntN(8)
		arr := make([]any, n)
		for i := range arr {
			arr[i] = randomJSON(r, size/n, depth+1)
		}
		return arr
	default:
		n := 1 + r.IntN(6)
		obj := map[string]any{}
		for i := range n {
			obj[fmt.Sprintf("%s_%d", []string{"status", "output", "series", "last", "at", "note", "name", "message"}[r.IntN(8)], i)] =
				randomJSON(r, size/n, depth+1)
		}
		return obj
	}
}

// Property: whatever compaction does to JSON tool results (short forms,
// cuts to fit a tight budget), every tool message it sends is valid JSON.
func TestCompactionKeepsToolResultsValidJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := range 150 {
		var h []Message
		h = append(h, Message{Role: RoleUser, Content: "what is wrong?"})
		turns := 1 + r.IntN(6)
		for tn := range turns {
			id := fmt.Sprintf("c%d", tn)
			var content string
			switch r.IntN(3) {
			case 0:
				content = tools.OK(randomJSON(r, 100+r.IntN(30000), 0)).JSON()
			case 1:
				out, _ := randomJSON(r, 100+r.IntN(30000), 3).(string)
				content = cmdResult("localhost", "journalctl -n 500", r.IntN(2), out, "")
			default:
				raw, _ := json.Marshal(randomJSON(r, 100+r.IntN(20000), 0))
				content = string(raw)
			}
			h = append(h,
				Message{Role: RoleAssistant, ToolCalls: []ToolCall{execCall(id, "localhost", fmt.Sprintf("cat /var/log/x%d", tn))}},
				Message{Role: RoleTool, ToolCallID: id, Name: "read", Content: content})
		}
		budget := []int{600, 1500, 4000, 24000}[r.IntN(4)]
		a := newTestAgent(t, Config{ContextBudgetTokens: budget})
		for _, m := range a.compactHistory(h, 200) {
			if m.Role == RoleTool && !json.Valid([]byte(m.Content)) {
				t.Fatalf("iteration %d (budget %d): compaction sent an invalid JSON tool result: %.300s", iter, budget, m.Content)
			}
		}
	}
}

// FuzzCutContent: a cut of valid JSON is valid JSON, whatever the size.
func FuzzCutContent(f *testing.F) {
	f.Add(`{"ok":true,"data":{"output":"a\nb\nc"}}`, 10)
	f.Add(`["x","y",{"z":"`+strings.Repeat("w\\n", 300)+`"}]`, 50)
	f.Add(`"just a string with \"quotes\" and \\ backslashes"`, 5)
	f.Add(`{"a":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20]}`, 8)
	f.Fuzz(func(t *testing.T, s string, keep int) {
		if !json.Valid([]byte(s)) {
			return
		}
		if got := cutContent(s, keep); !json.Valid([]byte(got)) {
			t.Fatalf("cutContent(%q, %d) = %q: not JSON", s, keep, got)
		}
	})
}

// The short form of a result cut in the middle keeps its structure, key
// order, start and end, with the cut marked inside the string.
func TestCutContentKeepsStructure(t *testing.T) {
	out := bigLog(50000) + "LAST LINE"
	content := cmdResult("localhost", "journalctl", 0, out, "")
	got := cutContent(content, 4000)
	if !json.Valid([]byte(got)) || len(got) > 4200 || !strings.HasPrefix(got, `{"ok":true,"data":{`) ||
		!strings.Contains(got, `LAST LINE"`) || !strings.Contains(got, "[vigil cut ") {
		t.Fatalf("cut = %d bytes: %.300s … %.200s", len(got), got, got[max(0, len(got)-200):])
	}
	var env struct {
		Data builtin.CommandData `json:"data"`
	}
	if err := json.Unmarshal([]byte(got), &env); err != nil || env.Data.Command != "journalctl" || env.Data.Target != "localhost" {
		t.Fatalf("cut envelope = %+v, %v", env.Data, err)
	}
	// A long array loses middle elements, marked, first and last kept.
	var items []int
	for i := range 2000 {
		items = append(items, i)
	}
	arr := tools.OK(map[string]any{"items": items}).JSON()
	got = cutContent(arr, 500)
	if !json.Valid([]byte(got)) || len(got) > 600 || !strings.Contains(got, "elements here") || !strings.Contains(got, "[0,1,") || !strings.Contains(got, ",1999]") {
		t.Fatalf("array cut = %s", got)
	}
}

// metricsRange is a real metrics range summary of one series that rises
// from about 0.2 to 0.93 over an hour with a spike, as the metrics tool
// returns it.
func metricsRange(t *testing.T, series int) (ToolCall, string) {
	t.Helper()
	start := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	var ss []metrics.Series
	for s := range series {
		var pts []metrics.Point
		for i := range 61 {
			v := 0.2 + 0.012*float64(i) + 0.001*float64(s)
			if i == 40 {
				v = 0.97
			}
			pts = append(pts, metrics.Point{T: start.Add(time.Duration(i) * time.Minute), V: math.Round(v*1000) / 1000})
		}
		ss = append(ss, metrics.Series{Labels: map[string]string{"__name__": "cpu_busy", "instance": fmt.Sprintf("web%d:9100", s+1)}, Points: pts})
	}
	sum := metrics.SummarizeRange(`avg by (instance) (rate(node_cpu_seconds_total{mode!="idle"}[5m]))`, start, start.Add(time.Hour), time.Minute, ss, 20)
	args, _ := json.Marshal(map[string]string{"action": "range", "query": sum.Query, "start": "-1h", "step": "1m"})
	return ToolCall{ID: "m1", Name: "metrics", Arguments: string(args)}, tools.OK(sum).JSON()
}

// metricsAgent is an agent whose registry knows the metrics tool (a read).
func metricsAgent(t *testing.T, budget int) *Agent {
	t.Helper()
	all := append(builtin.Tools(inventory.Default(), nil, builtin.NewMemoryStore()), metrics.New(nil, nil))
	reg, err := tools.NewRegistry(all...)
	if err != nil {
		t.Fatal(err)
	}
	return New(nil, reg, Config{ContextBudgetTokens: budget})
}

// withOldResult is a history where call's result is three turns old.
func withOldResult(call ToolCall, content string) []Message {
	h := []Message{{Role: RoleUser, Content: "why is web1 slow?"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{call}},
		{Role: RoleTool, ToolCallID: call.ID, Name: call.Name, Content: content}}
	for i := range 3 {
		id := fmt.Sprintf("r%d", i)
		h = append(h, Message{Role: RoleAssistant, ToolCalls: []ToolCall{execCall(id, "localhost", fmt.Sprintf("uptime %d", i))}},
			Message{Role: RoleTool, ToolCallID: id, Name: "read", Content: cmdResult("localhost", "uptime", 0, "up 3 days, load average: 0.5, 0.4, 0.3", "")})
	}
	return h
}

// A small result (a one-series metrics summary of about 700 bytes) is not
// compacted while the prompt is within the budget: its evidence stays.
func TestSmallResultsStayWhole(t *testing.T) {
	call, content := metricsRange(t, 1)
	if len(content) < 500 || len(content) > 1200 {
		t.Fatalf("the summary is %d bytes; the test wants a small one, over SPEC A10's 300", len(content))
	}
	out := metricsAgent(t, DefaultContextBudget).compactHistory(withOldResult(call, content), 3000)
	if got := mustContent(t, out, "m1"); got != content {
		t.Fatalf("a %d-byte result three turns old was shortened within the budget:\n%s", len(content), got)
	}
}

// The short form of a structured result keeps the values: a metrics range
// summary keeps every shown series' last, min, max, avg and trend, and
// drops the window and notes first.
func TestShortFormKeepsTheEvidence(t *testing.T) {
	for _, n := range []int{1, 4} {
		call, content := metricsRange(t, n)
		short := compactResult(call, content)
		var env struct {
			Data metrics.RangeSummary `json:"data"`
			Meta map[string]any       `json:"meta"`
		}
		if err := json.Unmarshal([]byte(short), &env); err != nil {
			t.Fatalf("short form is not an envelope: %v\n%s", err, short)
		}
		var full struct {
			Data metrics.RangeSummary `json:"data"`
		}
		_ = json.Unmarshal([]byte(content), &full)
		if len(env.Data.Series) != n || env.Meta[compactedKey] == nil {
			t.Fatalf("%d series: short form %s", n, short)
		}
		for i, s := range env.Data.Series {
			f := full.Data.Series[i]
			if s.Series != f.Series || s.Last != f.Last || s.Min != f.Min || s.Max != f.Max || s.Avg != f.Avg ||
				s.Trend.Direction != f.Trend.Direction || s.Trend.Direction == "" || s.LargestChange == nil || s.LargestChange.Kind != f.LargestChange.Kind {
				t.Errorf("%d series: series %d kept %+v, want the values of %+v\n%s", n, i, s, f, short)
			}
		}
		if strings.Contains(short, `"start"`) || strings.Contains(short, `"ordered_by"`) {
			t.Errorf("%d series: the short form keeps the window or the ordering before values: %s", n, short)
		}
		if n == 1 {
			// Its short form is no shorter than it (the note and the
			// call cost as much as the window and notes it drops).
			continue
		}
		// Under budget pressure the result is shortened to it.
		h := withOldResult(call, content)
		a := metricsAgent(t, 0)
		a.cfg.ContextBudgetTokens = historyTokens(a.counter, h) + 200 - 40 // just over: stage 2
		out := a.compactHistory(h, 200)
		if got := mustContent(t, out, "m1"); !strings.Contains(got, `"last":`) || !strings.Contains(got, `"direction":"rising"`) {
			t.Errorf("%d series under pressure: %s", n, got)
		}
	}
}

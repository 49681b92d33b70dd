package loadtest

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	rtrace "runtime/trace"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/exp/trace"

	"github.com/vigilops/vigil/agent"
)

// BenchmarkTurnTrace runs the burst of BenchmarkConcurrentThreads (default
// bound) under runtime/trace and says what the slowest turns wait on. Each
// run's goroutine marks its turns in the trace (traceEvent, traceAnswer);
// vigil's own work of a turn is the same window the load benchmark times
// (from the end of the previous model call to the start of this one, and
// for the last turn to the posted answer), and the trace says, for every
// nanosecond of it, what the run's goroutine was doing: running, runnable
// (waiting for a CPU), in a system call, or blocked, and where (the
// innermost vigil or go-redis frame of the blocking call). The slowest 1%
// of turns is compared with the median band. Wall-clock figures vary with
// the machine's load; the split of the slow turns' time is what to read:
//
//	go test -run '^$' -bench TurnTrace -benchtime 1x ./internal/loadtest/
//
// $LOADTEST_TRACE keeps the trace in that file (for go tool trace).
// $LOADTEST_TRACE_STORES limits the stores (comma-separated; default
// memory,redis,redis-cluster).
func BenchmarkTurnTrace(b *testing.B) {
	stores := []string{"memory", "redis", "redis-cluster"}
	if v := os.Getenv("LOADTEST_TRACE_STORES"); v != "" {
		stores = strings.Split(v, ",")
	}
	for _, backend := range stores {
		b.Run("store="+backend+"/max_runs=default", func(b *testing.B) {
			path := os.Getenv("LOADTEST_TRACE")
			if path == "" {
				path = filepath.Join(b.TempDir(), "trace.out")
			} else {
				path = strings.TrimSuffix(path, ".out") + "-" + backend + ".out"
			}
			f, err := os.Create(path)
			if err != nil {
				b.Fatal(err)
			}
			w := bufio.NewWriterSize(f, 1<<20)
			if err := rtrace.Start(w); err != nil {
				b.Fatal(err)
			}
			func() {
				defer func() {
					rtrace.Stop()
					if err := errors.Join(w.Flush(), f.Close()); err != nil {
						b.Fatal(err)
					}
				}()
				benchThreads(b, backend, 0, modelHTTP1)
			}()
			r, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			a, err := attribute(bufio.NewReaderSize(r, 1<<20))
			if err != nil {
				b.Fatalf("read the trace: %v", err)
			}
			a.report(b)
		})
	}
}

// traceCategory marks the load's own trace log events.
const traceCategory = "loadtest"

// traceEvent marks a run's start and the end of each model call (with
// its duration) in the execution trace, on the run's goroutine. Observe
// calls it; it costs nothing while no trace is being taken.
func traceEvent(e agent.Event) {
	if !rtrace.IsEnabled() {
		return
	}
	switch e.Type {
	case agent.EventRunStarted:
		rtrace.Log(context.Background(), traceCategory, "start "+strings.TrimPrefix(e.Session, string(platform)+":"+channel+":t"))
	case agent.EventModelCall:
		rtrace.Log(context.Background(), traceCategory, fmt.Sprintf("call %s %d %d",
			strings.TrimPrefix(e.Session, string(platform)+":"+channel+":t"), e.Turn, int64(e.Duration)))
	}
}

// traceAnswer marks thread g's answer being posted.
func traceAnswer(g int) {
	if rtrace.IsEnabled() {
		rtrace.Log(context.Background(), traceCategory, "answer "+strconv.Itoa(g))
	}
}

// span is a stretch of one goroutine's time in one state.
type span struct {
	from, to trace.Time
	what     string
}

// runMarks are one run's marks: its goroutine, start, each model call's
// end and duration, and its answer.
type runMarks struct {
	g       trace.GoID
	start   trace.Time
	callEnd [turns]trace.Time
	callDur [turns]time.Duration
	answer  trace.Time
}

// turnSplit is one turn's own work, split by what the run's goroutine did.
type turnSplit struct {
	run, turn int
	total     time.Duration
	// since is the turn's start, from the burst's first run start.
	since time.Duration
	by    map[string]time.Duration
	// gcMark is the part of the turn during a GC mark phase, stw during
	// a stop-the-world; assist the goroutine's own mark assists.
	gcMark, stw, assist time.Duration
}

// attribution is the split of every turn of a traced burst.
type attribution struct {
	turns []turnSplit
}

// goTrack follows one goroutine's state while it runs a run.
type goTrack struct {
	state trace.GoState
	what  string
	since trace.Time
	spans []span
	// assists are its GC mark assists.
	assists  []span
	assistAt trace.Time
}

// attribute reads a trace and splits each marked run's own work.
func attribute(r io.Reader) (*attribution, error) {
	tr, err := trace.NewReader(r)
	if err != nil {
		return nil, err
	}
	tracks := map[trace.GoID]*goTrack{}
	runs := map[int]*runMarks{}
	var gcMarks, stws []span
	var gcAt, stwAt trace.Time
	var first trace.Time
	for {
		ev, err := tr.ReadEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch ev.Kind() {
		case trace.EventLog:
			l := ev.Log()
			if l.Category != traceCategory {
				continue
			}
			f := strings.Fields(l.Message)
			if len(f) < 2 {
				continue
			}
			g, _ := strconv.Atoi(f[1])
			rm := runs[g]
			if rm == nil {
				rm = &runMarks{g: ev.Goroutine()}
				runs[g] = rm
			}
			switch f[0] {
			case "start":
				rm.start = ev.Time()
				if first == 0 || ev.Time() < first {
					first = ev.Time()
				}
				tracks[ev.Goroutine()] = &goTrack{state: trace.GoRunning, what: "running", since: ev.Time()}
			case "call":
				if len(f) != 4 {
					continue
				}
				k, _ := strconv.Atoi(f[2])
				d, _ := strconv.ParseInt(f[3], 10, 64)
				if k >= 1 && k <= turns {
					rm.callEnd[k-1], rm.callDur[k-1] = ev.Time(), time.Duration(d)
				}
			case "answer":
				rm.answer = ev.Time()
				if t := tracks[ev.Goroutine()]; t != nil {
					t.spans = append(t.spans, span{t.since, ev.Time(), t.what})
					t.since = ev.Time()
				}
			}
		case trace.EventStateTransition:
			st := ev.StateTransition()
			if st.Resource.Kind != trace.ResourceGoroutine {
				continue
			}
			t := tracks[st.Resource.Goroutine()]
			if t == nil {
				continue
			}
			from, to := st.Goroutine()
			if from == to {
				continue // a new generation restating the state
			}
			t.spans = append(t.spans, span{t.since, ev.Time(), t.what})
			t.state, t.since, t.what = to, ev.Time(), stateLabel(to, st)
		case trace.EventRangeBegin, trace.EventRangeEnd:
			rg := ev.Range()
			switch {
			case rg.Name == "GC concurrent mark phase":
				if ev.Kind() == trace.EventRangeBegin {
					gcAt = ev.Time()
				} else if gcAt != 0 {
					gcMarks = append(gcMarks, span{gcAt, ev.Time(), "gc"})
					gcAt = 0
				}
			case strings.HasPrefix(rg.Name, "stop-the-world"):
				if ev.Kind() == trace.EventRangeBegin {
					stwAt = ev.Time()
				} else if stwAt != 0 {
					stws = append(stws, span{stwAt, ev.Time(), "stw"})
					stwAt = 0
				}
			case rg.Name == "GC mark assist" && rg.Scope.Kind == trace.ResourceGoroutine:
				t := tracks[rg.Scope.Goroutine()]
				if t == nil {
					continue
				}
				if ev.Kind() == trace.EventRangeBegin {
					t.assistAt = ev.Time()
				} else if t.assistAt != 0 {
					t.assists = append(t.assists, span{t.assistAt, ev.Time(), "assist"})
					t.assistAt = 0
				}
			}
		}
	}
	a := &attribution{}
	for g, rm := range runs {
		t := tracks[rm.g]
		if t == nil || rm.start == 0 || rm.answer == 0 {
			continue
		}
		begin := rm.start
		for k := range turns {
			if rm.callEnd[k] == 0 {
				break
			}
			callStart := rm.callEnd[k] - trace.Time(rm.callDur[k])
			segs := []span{{from: begin, to: callStart}}
			if k == turns-1 {
				segs = append(segs, span{from: rm.callEnd[k], to: rm.answer})
			}
			ts := turnSplit{run: g, turn: k + 1, since: begin.Sub(first), by: map[string]time.Duration{}}
			for _, seg := range segs {
				ts.total += seg.to.Sub(seg.from)
				for _, s := range t.spans {
					if d := overlap(s, seg); d > 0 {
						ts.by[s.what] += d
					}
				}
				for _, s := range t.assists {
					ts.assist += overlap(s, seg)
				}
				for _, s := range gcMarks {
					ts.gcMark += overlap(s, seg)
				}
				for _, s := range stws {
					ts.stw += overlap(s, seg)
				}
			}
			a.turns = append(a.turns, ts)
			begin = rm.callEnd[k]
		}
	}
	if len(a.turns) == 0 {
		return nil, errors.New("no marked turn in the trace")
	}
	return a, nil
}

func overlap(s, seg span) time.Duration {
	from, to := max(s.from, seg.from), min(s.to, seg.to)
	if to <= from {
		return 0
	}
	return to.Sub(from)
}

// stateLabel names what a goroutine entering state to is doing: waiting
// ones by the runtime's reason and the innermost frame of vigil's (or,
// failing that, any non-runtime frame) in the blocking stack.
func stateLabel(to trace.GoState, st trace.StateTransition) string {
	switch to {
	case trace.GoRunning:
		return "running"
	case trace.GoRunnable:
		return "runnable (waiting for a CPU)"
	case trace.GoSyscall:
		return "syscall"
	case trace.GoWaiting:
	default:
		return to.String()
	}
	where, lib := "", ""
	for f := range st.Stack.Frames() {
		fn := f.Func
		switch {
		case strings.HasPrefix(fn, "github.com/vigilops/vigil/"):
			where = strings.TrimPrefix(fn, "github.com/vigilops/vigil/")
		case lib == "" && strings.HasPrefix(fn, "github.com/redis/go-redis/"):
			lib = strings.TrimPrefix(fn, "github.com/redis/go-redis/v9/")
		case lib == "" && where == "" && !strings.HasPrefix(fn, "runtime.") && !strings.HasPrefix(fn, "internal/") &&
			!strings.HasPrefix(fn, "sync.") && !strings.HasPrefix(fn, "net.") && !strings.HasPrefix(fn, "context."):
			lib = fn
		}
		if where != "" {
			break
		}
	}
	label := "blocked: " + st.Reason
	if where != "" {
		label += " in " + where
	}
	if lib != "" {
		label += " (" + lib + ")"
	}
	return label
}

// report logs the split of the slowest 1% of turns against the median
// band, and reports the trace's own p50/p99 and the slow turns' main parts.
func (a *attribution) report(b *testing.B) {
	ts := slices.Clone(a.turns)
	slices.SortFunc(ts, func(x, y turnSplit) int { return cmp.Compare(x.total, y.total) })
	n := len(ts)
	slow := ts[n*99/100:]
	mid := ts[n*45/100 : n*55/100]
	b.ReportMetric(ms(ts[n/2].total), "own_p50_ms")
	b.ReportMetric(ms(ts[min(n-1, n*99/100)].total), "own_p99_ms")
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d turns; own work p50 %.2f ms, p99 %.2f ms (traced)\n", n, ms(ts[n/2].total), ms(ts[min(n-1, n*99/100)].total))
	for _, band := range []struct {
		name  string
		turns []turnSplit
	}{{"slowest 1%", slow}, {"median band (p45-p55)", mid}, {"all turns", ts}} {
		sum := map[string]time.Duration{}
		var total, gc, stw, assist time.Duration
		byTurn := map[int]int{}
		var since []time.Duration
		for _, t := range band.turns {
			total += t.total
			gc += t.gcMark
			stw += t.stw
			assist += t.assist
			byTurn[t.turn]++
			since = append(since, t.since)
			for k, v := range t.by {
				sum[k] += v
			}
		}
		m := float64(len(band.turns))
		fmt.Fprintf(&sb, "%s: %d turns, mean %.2f ms; turn 1/2/3: %d/%d/%d; in a GC mark phase %.2f ms, stopped the world %.2f ms, own mark assists %.2f ms\n",
			band.name, len(band.turns), ms(total)/m, byTurn[1], byTurn[2], byTurn[3], ms(gc)/m, ms(stw)/m, ms(assist)/m)
		slices.Sort(since)
		fmt.Fprintf(&sb, "  started after the burst's first run: min %s, median %s, max %s\n",
			since[0].Round(time.Millisecond), since[len(since)/2].Round(time.Millisecond), since[len(since)-1].Round(time.Millisecond))
		keys := make([]string, 0, len(sum))
		for k := range sum {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(x, y string) int { return cmp.Compare(sum[y], sum[x]) })
		for i, k := range keys {
			if i == 14 {
				break
			}
			fmt.Fprintf(&sb, "  %7.3f ms  %4.1f%%  %s\n", ms(sum[k])/m, 100*float64(sum[k])/float64(total), k)
		}
		if band.name == "slowest 1%" {
			b.ReportMetric(ms(sum["runnable (waiting for a CPU)"])/m, "slow_runnable_ms")
			b.ReportMetric(ms(sum["running"])/m, "slow_running_ms")
		}
	}
	// Printed, not logged: a benchmark's log is cut to a few lines.
	fmt.Printf("--- %s\n%s", b.Name(), sb.String())
}

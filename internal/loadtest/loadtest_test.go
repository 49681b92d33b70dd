package loadtest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/bot"
	"github.com/vigilops/vigil/internal/app"
	"github.com/vigilops/vigil/internal/testenv/testkit"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/store"
	redisstore "github.com/vigilops/vigil/store/redis"
	"github.com/vigilops/vigil/tools/inventory"
)

const (
	// threads is how many conversations run at once.
	threads = 1000
	// modelLatency is the scripted model's time to answer each call.
	modelLatency = 200 * time.Millisecond
	// turns is the model calls of one run: discover, query, final answer.
	turns = 3
	// platform is the load adapter's platform name.
	platform bot.Platform = "loadtest"
	// channel is the one channel every thread is in.
	channel = "c"
)

// BenchmarkConcurrentThreads starts 1,000 conversations at once, each one
// run of three model turns (discover → query → final answer) on a machine
// reached over SSH that neither tool contacts, so no process is spawned and
// the figures are vigil's own work, against a scripted model that takes
// 200 ms per call. It runs on the memory and the Redis store, each with
// the default bound of 32 runs in progress per replica and with the bound
// raised to 1,000, each with the model served over plain HTTP/1.1 (a
// local vLLM or Ollama: model=http1) and over TLS with HTTP/2 (hosted
// APIs: model=h2). The scripted model runs in a process of its own
// (modelproc_test.go), so what this process measures is vigil. It
// reports:
//
//   - runs/s, turns/s: throughput of the whole burst, until the bot is idle;
//   - turn_p50_ms, turn_p99_ms: what vigil adds to a turn: the turn's wall
//     time minus the model's 200 ms. A turn runs from the end of the
//     previous model call (the run's start) to the end of its own (the
//     posted answer);
//   - call_p50_ms, call_p99_ms: the part of that spent in the model call
//     beyond the 200 ms, as vigil timed it: request encoding, HTTP and the
//     streamed answer, and the scripted model's own work (its process
//     shares the two cores);
//   - own_p50_ms, own_p99_ms: the rest: tools, policy, checkpoints, events,
//     replies, and waiting for a CPU;
//   - wait_p50_ms, wait_p99_ms: from the message's delivery to its run
//     starting (dedup, the run bound, thread lock, session load);
//   - run_p99_ms: delivery to the answer being posted;
//   - cpu_ms/turn: this process's CPU time (user and system) per turn,
//     the Redis proxy and the load driver included; model_cpu_ms/turn:
//     the scripted model's process; redis_cpu_ms/turn: redis-server's;
//   - heap_KB/session, stack_KB/session, goroutines/session: heap and
//     stacks in use (after two collections, see collect) and goroutines
//     with 1,000 runs held at their second model call, less the idle
//     baseline, per run (with the raised bound only: with the default,
//     only 32 runs are ever in progress);
//   - redis_trips/turn, redis_cmds/turn: round trips to Redis, and commands
//     Redis executed (those inside Lua scripts and transactions included),
//     per turn.
//
// It also fails if any run did not answer, made an unscripted model call,
// or lost an audit record. With $LOADTEST_HEAP_PROFILE and
// $LOADTEST_GOROUTINE_PROFILE set it writes those profiles of the held
// runs, to see what a session's memory is made of.
func BenchmarkConcurrentThreads(b *testing.B) {
	for _, backend := range []string{"memory", "redis", "redis-cluster"} {
		for _, limit := range []int{0, threads} {
			for _, model := range []string{modelHTTP1, modelH2} {
				name := fmt.Sprintf("store=%s/max_runs=%d/model=%s", backend, limit, model)
				if limit == 0 {
					name = fmt.Sprintf("store=%s/max_runs=default/model=%s", backend, model)
				}
				b.Run(name, func(b *testing.B) { benchThreads(b, backend, limit, model) })
			}
		}
	}
}

func benchThreads(b *testing.B, backend string, limit int, model string) {
	ld := newLoad(b, model)
	var stores bot.Stores
	var rds *benchRedis
	var cl *benchCluster
	switch backend {
	case "memory":
		stores = store.NewMemory().Stores()
	case "redis":
		rds = startRedis(b)
		st, err := redisstore.New(context.Background(), redisstore.Options{Addr: rds.proxy.Addr(), KeyPrefix: "vigil:"})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = st.Close() })
		stores = st.Stores()
	case "redis-cluster":
		cl = startCluster(b)
		st, err := redisstore.New(context.Background(), redisstore.Options{Addrs: cl.addrs, KeyPrefix: "vigil:"})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = st.Close() })
		stores = st.Stores()
	}
	a, err := app.New(context.Background(), app.Options{
		Inventory: remoteInventory(b),
		Config: testkit.Config(testkit.Options{ModelURL: ld.model.url, Channels: []policy.ChannelPolicy{
			{Match: string(platform) + ":" + channel, Level: policy.LevelReadOnly},
		}}),
		Stores:            &stores,
		Adapters:          []bot.Adapter{ld.chat},
		Logger:            slog.New(slog.NewTextHandler(&errLog, &slog.HandlerOptions{Level: slog.LevelError})),
		Observer:          ld,
		MaxConcurrentRuns: limit,
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Bot.Run(ctx) }()
	b.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			b.Errorf("bot: %v", err)
		}
		_ = a.Close()
	})
	ld.chat.waitStarted(b)

	var all []*phase
	var trips, cmds int64
	var cpu, modelCPU, redisCPU time.Duration
	b.ResetTimer()
	for i := range b.N {
		var trips0, cmds0 int64
		var redisCPU0 time.Duration
		if rds != nil {
			trips0, cmds0, redisCPU0 = rds.proxy.Trips(), rds.commandsProcessed(b), rds.cpuTime(b)
		}
		if cl != nil {
			cmds0, redisCPU0 = cl.commandsProcessed(b), cl.cpuTime(b)
		}
		cpu0, model0 := cpuTime(b), ld.model.stats(b).CPU
		p := ld.run(b, a.Bot, i*threads)
		cpu += cpuTime(b) - cpu0
		modelCPU += ld.model.stats(b).CPU - model0
		if rds != nil {
			trips += rds.proxy.Trips() - trips0
			cmds += rds.commandsProcessed(b) - cmds0 - 1 // less the INFO itself
			redisCPU += rds.cpuTime(b) - redisCPU0
		}
		if cl != nil {
			cmds += cl.commandsProcessed(b) - cmds0 - int64(len(cl.masters)) // less the INFOs
			redisCPU += cl.cpuTime(b) - redisCPU0
		}
		all = append(all, p)
	}
	b.StopTimer()
	checkAudit(b, stores.Audit, b.N*threads)

	var elapsed time.Duration
	var tt turnTimes
	var wait, runs []time.Duration
	for _, p := range all {
		elapsed += p.elapsed
		t, w, r := p.latencies(b)
		tt.overhead, tt.call, tt.own = append(tt.overhead, t.overhead...), append(tt.call, t.call...), append(tt.own, t.own...)
		wait, runs = append(wait, w...), append(runs, r...)
	}
	n := float64(len(all) * threads)
	b.ReportMetric(n/elapsed.Seconds(), "runs/s")
	b.ReportMetric(n*turns/elapsed.Seconds(), "turns/s")
	b.ReportMetric(ms(percentile(tt.overhead, 50)), "turn_p50_ms")
	b.ReportMetric(ms(percentile(tt.overhead, 99)), "turn_p99_ms")
	b.ReportMetric(ms(percentile(tt.call, 50)), "call_p50_ms")
	b.ReportMetric(ms(percentile(tt.call, 99)), "call_p99_ms")
	b.ReportMetric(ms(percentile(tt.own, 50)), "own_p50_ms")
	b.ReportMetric(ms(percentile(tt.own, 99)), "own_p99_ms")
	b.ReportMetric(ms(percentile(wait, 50)), "wait_p50_ms")
	b.ReportMetric(ms(percentile(wait, 99)), "wait_p99_ms")
	b.ReportMetric(ms(percentile(runs, 99)), "run_p99_ms")
	b.ReportMetric(ms(cpu)/(n*turns), "cpu_ms/turn")
	b.ReportMetric(ms(modelCPU)/(n*turns), "model_cpu_ms/turn")
	if rds != nil {
		b.ReportMetric(float64(trips)/(n*turns), "redis_trips/turn")
		b.ReportMetric(float64(cmds)/(n*turns), "redis_cmds/turn")
		b.ReportMetric(ms(redisCPU)/(n*turns), "redis_cpu_ms/turn")
	}
	if cl != nil {
		b.ReportMetric(float64(cmds)/(n*turns), "redis_cmds/turn")
		b.ReportMetric(ms(redisCPU)/(n*turns), "redis_cpu_ms/turn")
	}
	if limit >= threads {
		m := ld.memory(b, a.Bot, b.N*threads)
		b.ReportMetric(m.heap/1024, "heap_KB/session")
		b.ReportMetric(m.stack/1024, "stack_KB/session")
		b.ReportMetric(m.goroutines, "goroutines/session")
		checkAudit(b, stores.Audit, (b.N+1)*threads)
	}
}

// checkAudit fails the benchmark unless every tool call of every run is in
// the audit chain (two per run): load must not cost the audit trail.
func checkAudit(b *testing.B, st bot.AuditStore, runs int) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	last, err := st.RecentAudit(ctx, 1)
	if err != nil {
		b.Fatalf("read the audit chain: %v", err)
	}
	if want := int64(2 * runs); len(last) != 1 || last[0].Seq != want {
		b.Fatalf("the audit chain ends at %+v, want seq %d: records were lost under load", last, want)
	}
}

// cpuTime is the CPU time this process used so far, user and system. The
// scripted model's is not in it: it runs in a process of its own.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// remoteInventory is one machine reached over SSH. Neither discover nor
// query connects to it (discover probes only locally reachable machines),
// so a run spawns no process and opens no SSH connection: what is measured
// is vigil. (Discovering "localhost" would run ss and systemctl for every
// thread: 2,000 processes per burst.)
func remoteInventory(b *testing.B) *inventory.Inventory {
	inv, err := inventory.New([]inventory.Resource{{
		ID: "node:web1", Name: "web1", Kind: inventory.KindNode, Node: "web1", UID: "web1",
		Reach: inventory.Reach{SSH: &inventory.SSHConfig{Host: "192.0.2.10", Port: 22, User: "vigil",
			KeyFile: "/nonexistent/id_ed25519", KnownHosts: "/nonexistent/known_hosts"}},
		Facts: inventory.Facts{Ports: []string{"22", "80", "443"}, Services: []string{"nginx", "sshd"},
			ConfigPaths: []string{"/etc/nginx/nginx.conf"}, LogPaths: []string{"/var/log/nginx/error.log"}},
	}})
	if err != nil {
		b.Fatal(err)
	}
	return inv
}

// load drives one bot: it is the chat platform (the adapter) and the bot's
// observer, steers the scripted model's process, and keeps the timestamps
// of the phase in progress.
type load struct {
	model *modelProc
	chat  *loadChat
	cur   atomic.Pointer[phase]
}

func newLoad(b *testing.B, model string) *load {
	ld := &load{model: startModel(b, model), chat: newLoadChat()}
	ld.chat.answered = func(g int, at time.Time) {
		if p := ld.cur.Load(); p != nil {
			p.answer(g, at)
		}
	}
	ld.chat.failed = func(g int) {
		if p := ld.cur.Load(); p != nil {
			p.fail(g)
		}
	}
	return ld
}

// phase is one burst of threads [base, base+threads).
type phase struct {
	base      int
	delivered []atomic.Int64 // unix ns
	started   []atomic.Int64
	callEnd   [][turns]atomic.Int64 // when each model call returned to vigil
	callDur   [][turns]atomic.Int64 // each model call as vigil timed it, ns
	answered  []atomic.Int64
	errors    atomic.Int64
	left      sync.WaitGroup
	elapsed   time.Duration
}

func newPhase(base int) *phase {
	p := &phase{
		base:      base,
		delivered: make([]atomic.Int64, threads),
		started:   make([]atomic.Int64, threads),
		callEnd:   make([][turns]atomic.Int64, threads),
		callDur:   make([][turns]atomic.Int64, threads),
		answered:  make([]atomic.Int64, threads),
	}
	p.left.Add(threads)
	return p
}

func (p *phase) index(g int) (int, bool) {
	i := g - p.base
	return i, i >= 0 && i < threads
}

func (p *phase) answer(g int, at time.Time) {
	if i, ok := p.index(g); ok && p.answered[i].CompareAndSwap(0, at.UnixNano()) {
		p.left.Done()
	}
}

// fail records a run that ended with an error reply instead of an answer.
func (p *phase) fail(g int) {
	p.errors.Add(1)
	if i, ok := p.index(g); ok && p.answered[i].CompareAndSwap(0, -1) {
		p.left.Done()
	}
}

// wait waits until every run of the phase answered or failed.
func (p *phase) wait(b *testing.B, within time.Duration) {
	finished := make(chan struct{})
	go func() { p.left.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(within):
		b.Fatalf("only %d of %d runs answered within %s (%d errors)", threads-countLeft(p), threads, within, p.errors.Load())
	}
}

// run delivers threads messages at once and waits until every run has
// answered and the bot is idle.
func (ld *load) run(b *testing.B, bt *bot.Bot, base int) *phase {
	p := newPhase(base)
	ld.cur.Store(p)
	ld.model.phase(b, base, false)
	before := ld.model.stats(b)
	runtime.GC()
	start := time.Now()
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for i := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			g := base + i
			p.delivered[i].Store(time.Now().UnixNano())
			ld.chat.deliver(g)
		}()
	}
	close(gate)
	wg.Wait()

	p.wait(b, 3*time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := bt.WaitIdle(ctx); err != nil {
		b.Fatalf("bot not idle after the burst: %v", err)
	}
	p.elapsed = time.Since(start)
	after := ld.model.stats(b)
	if e, x, v := p.errors.Load(), after.Extra-before.Extra, after.Invalid-before.Invalid; e > 0 || x > 0 || v > 0 {
		b.Fatalf("%d runs posted errors, %d model calls were unscripted and %d refused as invalid; first errors logged:\n%s",
			e, x, v, errLog.String())
	}
	return p
}

// errLog keeps the first few KB of what the bot logs at error level, to
// say why runs failed.
var errLog capWriter

type capWriter struct {
	mu  sync.Mutex
	buf []byte
}

func (w *capWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if room := 4096 - len(w.buf); room > 0 {
		w.buf = append(w.buf, p[:min(len(p), room)]...)
	}
	return len(p), nil
}

func (w *capWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.buf)
}

func countLeft(p *phase) int {
	n := 0
	for i := range p.answered {
		if p.answered[i].Load() == 0 {
			n++
		}
	}
	return n
}

// turnTimes are the per-turn samples of a phase.
type turnTimes struct {
	// overhead is the turn's wall time minus the model's latency; call is
	// the model call as vigil timed it minus the model's latency (request
	// encoding, HTTP, the scripted server's decoding and streaming); own is
	// the rest: vigil's work between model calls.
	overhead, call, own []time.Duration
}

// latencies returns, per turn, what vigil added; per run, the wait before
// the run started and the whole run.
func (p *phase) latencies(b *testing.B) (tt turnTimes, wait, run []time.Duration) {
	at := func(v *atomic.Int64) time.Time { return time.Unix(0, v.Load()) }
	for i := range threads {
		d, s, f := at(&p.delivered[i]), at(&p.started[i]), at(&p.answered[i])
		// Turn k runs from the end of the previous model call (the run's
		// start for the first) to the end of its own model call (the
		// posted answer for the last): the tools and checkpoints of the
		// previous answer, the request, the call, and for the last turn
		// the answer.
		begin := s
		for k := range turns {
			if p.callEnd[i][k].Load() == 0 {
				b.Fatalf("thread %d: model call %d never returned", p.base+i, k+1)
			}
			end := at(&p.callEnd[i][k])
			if k == turns-1 {
				end = f
			}
			over := end.Sub(begin) - modelLatency
			call := time.Duration(p.callDur[i][k].Load()) - modelLatency
			tt.overhead = append(tt.overhead, over)
			tt.call = append(tt.call, call)
			tt.own = append(tt.own, over-call)
			begin = end
		}
		wait = append(wait, s.Sub(d))
		run = append(run, f.Sub(d))
	}
	return tt, wait, run
}

// perSession is memory per run in progress.
type perSession struct {
	heap, stack float64 // bytes
	goroutines  float64
}

// memory holds a burst of runs at their second model call and measures
// heap and stacks in use (after collect) and goroutines, against the idle
// baseline.
func (ld *load) memory(b *testing.B, bt *bot.Bot, base int) perSession {
	collect()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	g0 := runtime.NumGoroutine()
	p := newPhase(base)
	ld.model.phase(b, base, true)
	ld.cur.Store(p)
	var wg sync.WaitGroup
	for i := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.delivered[i].Store(time.Now().UnixNano())
			ld.chat.deliver(base + i)
		}()
	}
	held := ld.model.waitHeld(b, 8*time.Second)
	collect()
	var at runtime.MemStats
	runtime.ReadMemStats(&at)
	g := runtime.NumGoroutine()
	writeProfiles()
	ld.model.release(b)
	wg.Wait()
	if held < threads {
		b.Logf("memory measured with %d of %d runs in progress", held, threads)
	}
	n := float64(max(held, 1))
	r := perSession{
		heap:       float64(int64(at.HeapInuse)-int64(before.HeapInuse)) / n,
		stack:      float64(int64(at.StackInuse)-int64(before.StackInuse)) / n,
		goroutines: float64(g-g0) / n,
	}
	p.wait(b, time.Minute)
	if e := p.errors.Load(); e > 0 {
		b.Fatalf("%d runs of the memory burst posted errors", e)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := bt.WaitIdle(ctx); err != nil {
		b.Fatalf("bot not idle after the memory burst: %v", err)
	}
	return r
}

// collect collects garbage twice: the first collection moves what
// sync.Pools cache (e.g. HTTP/2's buffers for writing request bodies, put
// back once a body is sent) to their victim caches, the second frees it,
// so what remains is what the runs hold. A stack shrinks by half at most
// once per collection, when less than a quarter of it is used; a bot
// under load collects many times while its runs wait on the model.
func collect() {
	runtime.GC()
	runtime.GC()
}

// writeProfiles writes the heap and goroutine profiles of the runs held
// for the memory measurement to the files $LOADTEST_HEAP_PROFILE and
// $LOADTEST_GOROUTINE_PROFILE name, when set: what a session's memory is.
func writeProfiles() {
	for env, name := range map[string]string{"LOADTEST_HEAP_PROFILE": "heap", "LOADTEST_GOROUTINE_PROFILE": "goroutine"} {
		path := os.Getenv(env)
		if path == "" {
			continue
		}
		f, err := os.Create(path)
		if err != nil {
			panic(err)
		}
		_ = pprof.Lookup(name).WriteTo(f, 0)
		_ = f.Close()
	}
}

// Observe implements bot.Observer: it timestamps each run's start and
// keeps each model call's duration as vigil measured it.
func (ld *load) Observe(e agent.Event) {
	if e.Type != agent.EventRunStarted && e.Type != agent.EventModelCall {
		return
	}
	traceEvent(e)
	g, err := strconv.Atoi(strings.TrimPrefix(e.Session, string(platform)+":"+channel+":t"))
	p := ld.cur.Load()
	if err != nil || p == nil {
		return
	}
	i, ok := p.index(g)
	switch {
	case !ok:
	case e.Type == agent.EventRunStarted:
		p.started[i].CompareAndSwap(0, e.At.UnixNano())
	case e.Turn >= 1 && e.Turn <= turns:
		p.callEnd[i][e.Turn-1].CompareAndSwap(0, e.At.UnixNano())
		p.callDur[i][e.Turn-1].CompareAndSwap(0, int64(e.Duration))
	}
}

func (ld *load) ApprovalOutcome(string)   {}
func (ld *load) ChatEvent(string, string) {}

// threadOf finds the number after prefix, up to end.
func threadOf(s, prefix string, end byte) (int, bool) {
	i := strings.Index(s, prefix)
	if i < 0 {
		return 0, false
	}
	s = s[i+len(prefix):]
	j := strings.IndexByte(s, end)
	if j < 0 {
		return 0, false
	}
	n, err := strconv.Atoi(s[:j])
	return n, err == nil
}

func percentile(ds []time.Duration, q int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*q/100)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// loadChat is a minimal chat platform: it delivers messages and keeps
// nothing of what the bot posts but the time each answer arrived, so the
// memory measured is vigil's, not a transcript's.
type loadChat struct {
	mu       sync.Mutex
	h        bot.Handler
	started  chan struct{}
	once     sync.Once
	answered func(g int, at time.Time)
	failed   func(g int)
}

var _ bot.Adapter = (*loadChat)(nil)

func newLoadChat() *loadChat { return &loadChat{started: make(chan struct{})} }

func (c *loadChat) Platform() bot.Platform { return platform }

func (c *loadChat) Start(ctx context.Context, h bot.Handler) error {
	c.mu.Lock()
	c.h = h
	c.mu.Unlock()
	c.once.Do(func() { close(c.started) })
	<-ctx.Done()
	return nil
}

func (c *loadChat) waitStarted(b *testing.B) {
	select {
	case <-c.started:
	case <-time.After(10 * time.Second):
		b.Fatal("the bot did not start the load adapter")
	}
}

// deliver sends thread g's one message, addressed to the bot, as a fresh
// event in its own thread.
func (c *loadChat) deliver(g int) {
	c.mu.Lock()
	h := c.h
	c.mu.Unlock()
	id := "t" + strconv.Itoa(g)
	text := "thread " + strconv.Itoa(g) + ": how is @web1?"
	h.HandleMessage(context.Background(), bot.Message{
		EventID: "ev-" + id, ID: id, User: "u", UserName: "u", Text: text, Addressed: true, At: time.Now(),
		Thread:   bot.ThreadRef{Platform: platform, Channel: channel, Thread: id},
		Mentions: []bot.Mention{{Name: "web1"}},
	})
}

func (c *loadChat) Post(_ context.Context, t bot.ThreadRef, r bot.Reply) (bot.MessageRef, error) {
	g, err := strconv.Atoi(strings.TrimPrefix(t.Thread, "t"))
	switch {
	case err != nil:
	case r.Kind == bot.ReplyAnswer:
		traceAnswer(g)
		c.answered(g, time.Now())
	case r.Kind == bot.ReplyError:
		c.failed(g)
	}
	return bot.MessageRef{ThreadRef: t, ID: "m"}, nil
}

func (c *loadChat) PostApproval(context.Context, bot.ThreadRef, bot.ApprovalCard) (bot.MessageRef, error) {
	return bot.MessageRef{}, errors.New("loadtest: no approvals expected")
}

func (c *loadChat) UpdateApproval(context.Context, bot.MessageRef, bot.ApprovalCard) error {
	return errors.New("loadtest: no approvals expected")
}

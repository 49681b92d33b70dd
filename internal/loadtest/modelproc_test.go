package loadtest

import (
	"bufio"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/vigilops/vigil/internal/testenv/modeltest"
)

// The scripted model runs in a process of its own: the test binary
// started again with $LOADTEST_MODEL_PROCESS set to how it serves. So
// the heap, goroutines and CPU this process measures are vigil's (and the
// load driver's), not the model server's: its handlers, its side of each
// connection and its JSON work are in the other process, as a real
// endpoint's are on another machine.
const modelProcessEnv = "LOADTEST_MODEL_PROCESS"

// The model's transports.
const (
	// modelHTTP1 is plain HTTP/1.1, as a local vLLM or Ollama serves:
	// one connection per call in flight.
	modelHTTP1 = "http1"
	// modelH2 is TLS with HTTP/2, as hosted APIs (OpenAI, Azure) serve:
	// calls share a few connections.
	modelH2 = "h2"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(modelProcessEnv); mode != "" {
		os.Exit(serveModel(mode))
	}
	if os.Getenv("LOADTEST_HEAP_PROFILE") != "" {
		// A finer sample than the default one per 512 KiB: a session's
		// memory is a few kilobytes.
		runtime.MemProfileRate = 4096
	}
	dir, err := trustModelCertificate()
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(2)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// trustModelCertificate makes httptest's built-in certificate, which the
// HTTPS model process serves, a root of this process through
// $SSL_CERT_FILE, so that vigil's model client is the one `vigil run`
// builds (agent/openai's own transport, system roots), not a test client.
// It must run before anything in this process verifies a certificate:
// the system roots are read once.
func trustModelCertificate() (string, error) {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	der := srv.Certificate().Raw
	srv.Close()
	dir, err := os.MkdirTemp("", "loadtest-roots-")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "roots.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return dir, err
	}
	return dir, os.Setenv("SSL_CERT_FILE", path)
}

// modelProc is the scripted model's process, seen from the benchmark.
type modelProc struct {
	url     string // llm.base_url
	control string // the script's control endpoint
	stdin   io.Closer
	cmd     *exec.Cmd
}

// startModel starts the scripted model's process serving as mode says;
// b.Cleanup stops it.
func startModel(b *testing.B, mode string) *modelProc {
	b.Helper()
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), modelProcessEnv+"="+mode)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatalf("start the scripted model's process: %v", err)
	}
	mp := &modelProc{stdin: stdin, cmd: cmd}
	b.Cleanup(func() {
		_ = stdin.Close() // the process exits when its stdin closes
		_ = cmd.Wait()
	})
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- s
	}()
	select {
	case s := <-line:
		f := strings.Fields(s)
		if len(f) != 2 {
			b.Fatalf("the scripted model's process said %q, want its URL and control URL", s)
		}
		mp.url, mp.control = f[0], f[1]
	case <-time.After(30 * time.Second):
		b.Fatal("the scripted model's process did not start within 30s")
	}
	return mp
}

// call is one request to the script's control endpoint.
func (mp *modelProc) call(b *testing.B, method, path string, q url.Values) []byte {
	b.Helper()
	req, err := http.NewRequest(method, mp.control+path+"?"+q.Encode(), nil)
	if err != nil {
		b.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatalf("scripted model %s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("scripted model %s %s: HTTP %d %s %v", method, path, resp.StatusCode, body, err)
	}
	return body
}

// phase starts answering the threads [base, base+threads); with hold,
// every run's second call waits until release.
func (mp *modelProc) phase(b *testing.B, base int, hold bool) {
	mp.call(b, http.MethodPost, "/phase", url.Values{"base": {strconv.Itoa(base)}, "hold": {strconv.FormatBool(hold)}})
}

// waitHeld waits until every run of a holding phase is held, or within
// has passed, and says how many are.
func (mp *modelProc) waitHeld(b *testing.B, within time.Duration) int64 {
	n, err := strconv.ParseInt(string(mp.call(b, http.MethodGet, "/held", url.Values{"within": {within.String()}})), 10, 64)
	if err != nil {
		b.Fatal(err)
	}
	return n
}

func (mp *modelProc) release(b *testing.B) { mp.call(b, http.MethodPost, "/release", nil) }

// modelStats is what the script counted since it started.
type modelStats struct {
	// Extra counts calls beyond the script (must stay 0); Invalid, calls a
	// strict server refuses (must stay 0).
	Extra, Invalid int64
	// CPU is the model process's CPU time, user and system.
	CPU time.Duration
}

func (mp *modelProc) stats(b *testing.B) modelStats {
	var st modelStats
	if err := json.Unmarshal(mp.call(b, http.MethodGet, "/stats", nil), &st); err != nil {
		b.Fatal(err)
	}
	return st
}

// serveModel is the scripted model's process: it prints its URL and its
// control URL on one line, then serves until its stdin closes.
func serveModel(mode string) int {
	if mode != modelHTTP1 && mode != modelH2 {
		fmt.Fprintf(os.Stderr, "%s=%q: want %q or %q\n", modelProcessEnv, mode, modelHTTP1, modelH2)
		return 2
	}
	sc := &script{}
	srv := modeltest.Start(sc, modeltest.Options{HTTPS: mode == modelH2})
	srv.Record(false)
	srv.Route(sc.route)
	ctl := httptest.NewServer(sc.control())
	fmt.Printf("%s %s\n", srv.URL(), ctl.URL)
	_, _ = io.Copy(io.Discard, os.Stdin)
	// Held calls may still be waiting: nothing to finish, just go.
	return 0
}

// script is the scripted model: thread g's conversation is discover, then
// a query, then the answer, each after modelLatency.
type script struct {
	cur     atomic.Pointer[scriptPhase]
	extra   atomic.Int64
	invalid atomic.Int64
	logged  atomic.Int64
}

// scriptPhase is one burst of threads [base, base+threads).
type scriptPhase struct {
	base int
	// hold, when set, parks every run at its second model call until
	// release is closed; held counts the parked runs.
	hold    bool
	held    atomic.Int64
	allHeld chan struct{}
	release chan struct{}
	once    sync.Once
}

// Errorf is modeltest's report of a call it refused (an invalid request,
// one nothing was scripted for): counted for the benchmark, the first few
// logged.
func (sc *script) Errorf(format string, args ...any) {
	sc.invalid.Add(1)
	if sc.logged.Add(1) <= 5 {
		fmt.Fprintf(os.Stderr, "scripted model: "+format+"\n", args...)
	}
}

func (sc *script) route(r modeltest.Request) modeltest.Step {
	g, ok := threadOf(r.FirstUser(), "thread ", ':')
	p := sc.cur.Load()
	if !ok || p == nil {
		return modeltest.Step{}
	}
	k := r.Turns()
	if i := g - p.base; i < 0 || i >= threads || k >= turns {
		sc.extra.Add(1)
		return modeltest.Step{}
	}
	if k == 1 && p.hold {
		if p.held.Add(1) == threads {
			close(p.allHeld)
		}
		<-p.release
	}
	var s modeltest.Step
	switch k {
	case 0:
		s = modeltest.Calls(modeltest.Call("discover", `{"resource":"web1"}`))
	case 1:
		s = modeltest.Calls(modeltest.Call("query", `{"action":"get","resource":"web1"}`))
	default:
		s = modeltest.Text("thread " + strconv.Itoa(g) + " looks fine")
	}
	return modeltest.Delay(modelLatency, s)
}

// control serves the benchmark's requests: POST /phase?base=&hold=,
// GET /held?within=, POST /release, GET /stats.
func (sc *script) control() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /phase", func(w http.ResponseWriter, r *http.Request) {
		base, err := strconv.Atoi(r.FormValue("base"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		sc.cur.Store(&scriptPhase{base: base, hold: r.FormValue("hold") == "true",
			allHeld: make(chan struct{}), release: make(chan struct{})})
	})
	mux.HandleFunc("GET /held", func(w http.ResponseWriter, r *http.Request) {
		within, err := time.ParseDuration(r.FormValue("within"))
		p := sc.cur.Load()
		if err != nil || p == nil || !p.hold {
			http.Error(w, "no holding phase, or a bad ?within", http.StatusBadRequest)
			return
		}
		select {
		case <-p.allHeld:
		case <-time.After(within):
		}
		fmt.Fprint(w, p.held.Load())
	})
	mux.HandleFunc("POST /release", func(w http.ResponseWriter, _ *http.Request) {
		if p := sc.cur.Load(); p != nil {
			p.once.Do(func() { close(p.release) })
		}
	})
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) {
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		_ = json.NewEncoder(w).Encode(modelStats{
			Extra: sc.extra.Load(), Invalid: sc.invalid.Load(),
			CPU: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()),
		})
	})
	return mux
}

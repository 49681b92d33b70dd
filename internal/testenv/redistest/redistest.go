// Package redistest gives tests real Redis servers: the shared one at
// $REDIS_ADDR (default 127.0.0.1:6379), a private redis-server a test
// starts, crashes, freezes and thaws itself, a Redis Cluster and a
// Sentinel-managed master with a replica. Every private server runs
// Debian's /usr/bin/redis-server on a free loopback port in a temp dir and
// is killed when the test ends.
package redistest

import (
	"context"

	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

var quiet sync.Once

// Silence mutes go-redis's own logger, a process global, which otherwise
// prints every failed dial of the outage tests; the tests check what vigil
// did about the failures instead.
func Silence() {
	quiet.Do(func() { goredis.SetLogger(discardLog{}) })
}

type discardLog struct{}

func (discardLog) Printf(context.Context, string, ...any) {}

// SharedAddr is the shared Redis: $REDIS_ADDR or the local default.
func SharedAddr() string {
	if a := os.Getenv("REDIS_ADDR"); a != "" {
		return a
	}
	return "127.0.0.1:6379"
}

// RequireShared returns the shared Redis's address, or fails the test
// (never skips: Redis is part of `make test`) saying how to start one.
func RequireShared(t testing.TB) string {
	t.Helper()
	Silence()
	addr := SharedAddr()
	c := goredis.NewClient(&goredis.Options{Addr: addr, DialTimeout: time.Second, MaxRetries: -1})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("this test needs a real Redis at %s (set REDIS_ADDR to use another): %v\n"+
			"start one with:  redis-server --port 6379 --save '' --appendonly no --daemonize yes\n"+
			"(on Debian: apt-get install redis-server; .ci/run does both)", addr, err)
	}
	return addr
}

// serverBin finds redis-server or fails saying how to install it.
func serverBin(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("this test starts its own redis-server, which is not installed: %v\n"+
			"install it with:  apt-get install redis-server   (or run .ci/run)", err)
	}
	return bin
}

// FreePort is a loopback TCP port nothing listens on. With bus set, port
// + 10000 (a Cluster node's bus port) is free too.
func FreePort(t testing.TB, bus bool) int {
	t.Helper()
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		if !bus {
			_ = l.Close()
			return port
		}
		if port+10000 > 65535 {
			_ = l.Close()
			continue
		}
		l2, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port+10000))
		_ = l.Close()
		if err != nil {
			continue
		}
		_ = l2.Close()
		return port
	}
	t.Fatal("no free port pair for a Redis Cluster node")
	return 0
}

// Options tune a private server.
type Options struct {
	// Persist turns on append-only persistence with fsync always, so what
	// was acknowledged survives Crash and Start (as in production).
	Persist bool
	// Bus reserves port+10000 too (Cluster nodes).
	Bus bool
	// Args are more redis-server arguments ("--replicaof", "h p", ...).
	Args []string
	// Sentinel runs the server as a Sentinel from a config file written
	// with these lines (port, dir and logfile are added).
	Sentinel []string
}

// Server is a redis-server (or Sentinel) this test owns, on a free port,
// with its data in a temp dir.
type Server struct {
	t    testing.TB
	bin  string
	dir  string
	port int
	opt  Options

	mu  sync.Mutex
	cmd *exec.Cmd
}

// Start starts a private redis-server and waits until it answers; the
// test's cleanup kills it.
func Start(t testing.TB, opt Options) *Server {
	t.Helper()
	Silence()
	s := &Server{t: t, bin: serverBin(t), dir: t.TempDir(), port: FreePort(t, opt.Bus), opt: opt}
	s.Start()
	t.Cleanup(s.Crash)
	return s
}

// Addr is host:port.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// Port is the server's port.
func (s *Server) Port() int { return s.port }

// Dir is the server's data directory.
func (s *Server) Dir() string { return s.dir }

// Pid is the running process's ID (0 when stopped).
func (s *Server) Pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Log is the server's log so far, for failure messages.
func (s *Server) Log() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
	return string(b)
}

// Start runs the server (again) on the same port and data dir and waits
// until it answers.
func (s *Server) Start() {
	s.t.Helper()
	logfile := filepath.Join(s.dir, "redis.log")
	var cmd *exec.Cmd
	if s.opt.Sentinel != nil {
		conf := filepath.Join(s.dir, "sentinel.conf")
		lines := append([]string{
			"bind 127.0.0.1",
			"port " + strconv.Itoa(s.port),
			"dir " + s.dir,
			"logfile " + logfile,
		}, s.opt.Sentinel...)
		if _, err := os.Stat(conf); err != nil { // a restart keeps what Sentinel learnt
			if err := os.WriteFile(conf, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
				s.t.Fatal(err)
			}
		}
		cmd = exec.Command(s.bin, conf, "--sentinel")
	} else {
		args := []string{"--bind", "127.0.0.1", "--port", strconv.Itoa(s.port),
			"--dir", s.dir, "--save", "", "--logfile", logfile}
		if s.opt.Persist {
			args = append(args, "--appendonly", "yes", "--appendfsync", "always")
		} else {
			args = append(args, "--appendonly", "no")
		}
		cmd = exec.Command(s.bin, append(args, s.opt.Args...)...)
	}
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("start redis-server: %v", err)
	}
	s.mu.Lock()
	s.cmd = cmd
	s.mu.Unlock()
	c := goredis.NewClient(&goredis.Options{Addr: s.Addr(), MaxRetries: -1, DialTimeout: 200 * time.Millisecond, DisableIdentity: true})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("redis-server on %s did not answer within 10s: %v\n%s", s.Addr(), err, s.Log())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Crash kills the server with SIGKILL (no shutdown, no save) and waits for
// it to exit. With Persist, what was acknowledged is in the append-only
// file. Crashing a stopped server does nothing.
func (s *Server) Crash() {
	s.mu.Lock()
	cmd := s.cmd
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGCONT) // a frozen one too
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
}

// Freeze stops the process (SIGSTOP): connections are accepted by the
// kernel but nothing answers, as with a hung or overloaded Redis. Thaw
// continues it with its data intact.
func (s *Server) Freeze() { s.signal(syscall.SIGSTOP) }

// Thaw continues a frozen server.
func (s *Server) Thaw() { s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		s.t.Fatalf("redis-server on %s is not running", s.Addr())
	}
	if err := s.cmd.Process.Signal(sig); err != nil {
		s.t.Fatalf("signal redis-server: %v", err)
	}
}

// Client is a plain go-redis client of this server, closed at cleanup.
func (s *Server) Client() *goredis.Client {
	c := goredis.NewClient(&goredis.Options{Addr: s.Addr(), DisableIdentity: true, MaxRetries: -1})
	s.t.Cleanup(func() { _ = c.Close() })
	return c
}

// Do runs one command on the server and returns its reply.
func (s *Server) Do(args ...any) (any, error) {
	c := goredis.NewClient(&goredis.Options{Addr: s.Addr(), DisableIdentity: true, MaxRetries: -1})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return c.Do(ctx, args...).Result()
}

// Info is one field of INFO section ("" when absent).
func (s *Server) Info(section, field string) (string, error) {
	v, err := s.Do("INFO", section)
	if err != nil {
		return "", err
	}
	text, _ := v.(string)
	for line := range strings.SplitSeq(text, "\n") {
		if val, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return val, nil
		}
	}
	return "", nil
}

// waitUntil polls cond until it holds or timeout passes.
func waitUntil(t testing.TB, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for {
		ok, state := cond()
		if ok {
			return
		}
		last = state
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s (last: %s)", timeout, what, last)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

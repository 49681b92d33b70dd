package loadtest

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigilops/vigil/internal/testenv/redistest"
)

// benchRedis is a redis-server of the benchmark's own, so that its command
// counters see only vigil's traffic, behind a proxy that counts round trips.
type benchRedis struct {
	addr  string // redis-server itself
	pid   int
	proxy *tripCounter
}

// startRedis starts a private redis-server (no persistence) on a free port
// and a round-trip counting proxy in front of it.
func startRedis(b testing.TB) *benchRedis {
	b.Helper()
	srv := redistest.Start(b, redistest.Options{})
	r := &benchRedis{addr: srv.Addr(), pid: srv.Pid()}
	r.proxy = newTripCounter(b, r.addr)
	return r
}

// benchCluster is a Redis Cluster of the benchmark's own: three masters,
// each with a replica, so that writes that must survive a failover wait
// for the replica (WAIT) as in production. Commands are counted on the
// masters, CPU on every node. No proxy: Cluster clients connect to the
// addresses the nodes announce.
type benchCluster struct {
	addrs   []string
	masters []*benchRedis
	nodes   []*benchRedis
}

func startCluster(b testing.TB) *benchCluster {
	b.Helper()
	c := redistest.StartCluster(b, 3, 1)
	bc := &benchCluster{addrs: c.Addrs()}
	for _, s := range c.Nodes {
		bc.nodes = append(bc.nodes, &benchRedis{addr: s.Addr(), pid: s.Pid()})
	}
	for _, s := range c.Masters() {
		bc.masters = append(bc.masters, &benchRedis{addr: s.Addr(), pid: s.Pid()})
	}
	return bc
}

func (c *benchCluster) commandsProcessed(b testing.TB) int64 {
	var n int64
	for _, m := range c.masters {
		n += m.commandsProcessed(b)
	}
	return n
}

func (c *benchCluster) cpuTime(b testing.TB) time.Duration {
	var d time.Duration
	for _, s := range c.nodes {
		d += s.cpuTime(b)
	}
	return d
}

// command sends one inline command straight to redis-server (not through
// the proxy) and returns the reply's text.
func (r *benchRedis) command(cmd string) (string, error) {
	c, err := net.DialTimeout("tcp", r.addr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, cmd+"\r\n"); err != nil {
		return "", err
	}
	br := bufio.NewReader(c)
	head, err := br.ReadString('\n')
	if err != nil {
		return "", err
	}
	switch head[0] {
	case '+':
		return strings.TrimSpace(head[1:]), nil
	case '-':
		return "", errors.New(strings.TrimSpace(head[1:]))
	case '$':
		n, err := strconv.Atoi(strings.TrimSpace(head[1:]))
		if err != nil || n < 0 {
			return "", err
		}
		body := make([]byte, n+2)
		if _, err := io.ReadFull(br, body); err != nil {
			return "", err
		}
		return string(body[:n]), nil
	}
	return "", errors.New("unexpected reply " + head)
}

// commandsProcessed is INFO's total_commands_processed: every command,
// including those a Lua script or a transaction runs.
func (r *benchRedis) commandsProcessed(b testing.TB) int64 {
	b.Helper()
	info, err := r.command("INFO stats")
	if err != nil {
		b.Fatalf("INFO stats: %v", err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "total_commands_processed:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return n
		}
	}
	b.Fatal("INFO stats has no total_commands_processed")
	return 0
}

// cpuTime is the CPU time redis-server used so far, user and system, from
// /proc (in clock ticks of 10 ms).
func (r *benchRedis) cpuTime(b testing.TB) time.Duration {
	b.Helper()
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(r.pid) + "/stat")
	if err != nil {
		b.Fatalf("redis-server CPU time: %v", err)
	}
	// The command name may hold spaces; the fields after it do not.
	_, after, ok := strings.Cut(string(raw), ") ")
	fields := strings.Fields(after)
	if !ok || len(fields) < 13 {
		b.Fatalf("redis-server CPU time: unreadable /proc stat %q", raw)
	}
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// tripCounter is a TCP proxy that counts request/reply round trips: a
// client's request, however many segments or pipelined commands it spans,
// counts once when its first bytes arrive after the previous reply. It
// adds one loopback hop to every Redis call, as a Redis on another host
// would add a network hop.
type tripCounter struct {
	ln     net.Listener
	target string
	trips  atomic.Int64
}

func newTripCounter(b testing.TB, target string) *tripCounter {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	p := &tripCounter{ln: ln, target: target}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.serve(ctx)
	}()
	b.Cleanup(func() {
		cancel()
		_ = ln.Close()
		<-done
	})
	return p
}

// Addr is where clients connect.
func (p *tripCounter) Addr() string { return p.ln.Addr().String() }

// Trips is the number of round trips so far.
func (p *tripCounter) Trips() int64 { return p.trips.Load() }

func (p *tripCounter) serve(ctx context.Context) {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.pipe(ctx, c)
	}
}

func (p *tripCounter) pipe(ctx context.Context, client net.Conn) {
	defer client.Close()
	var d net.Dialer
	server, err := d.DialContext(ctx, "tcp", p.target)
	if err != nil {
		return
	}
	defer server.Close()
	stop := context.AfterFunc(ctx, func() { _ = client.Close(); _ = server.Close() })
	defer stop()
	// awaiting is set while a request waits for its reply.
	var awaiting atomic.Bool
	go func() {
		buf := make([]byte, 64<<10)
		for {
			n, err := client.Read(buf)
			if n > 0 {
				if awaiting.CompareAndSwap(false, true) {
					p.trips.Add(1)
				}
				if _, werr := server.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				_ = server.Close()
				return
			}
		}
	}()
	buf := make([]byte, 64<<10)
	for {
		n, err := server.Read(buf)
		if n > 0 {
			// Cleared before the client can see the reply, so its next
			// request always counts.
			awaiting.Store(false)
			if _, werr := client.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

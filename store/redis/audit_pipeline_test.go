package redis

import (
	"bytes"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigilops/vigil/policy/audit"
)

// gateProxy is a TCP proxy in front of a Redis that counts the audit
// append scripts sent through it and can hold back Redis's replies on the
// connections that sent one while the gate is closed (others, such as a
// new connection's handshake, go through).
type gateProxy struct {
	ln     net.Listener
	target string
	// scripts counts the appendAudit EVALSHAs the proxy forwarded.
	scripts atomic.Int64
	mu      sync.Mutex
	held    chan struct{} // non-nil while replies are held; closed to let them go
	conns   []net.Conn
}

func startGateProxy(t *testing.T, target string) *gateProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &gateProxy{ln: ln, target: target}
	go p.serve()
	t.Cleanup(func() {
		p.release()
		_ = ln.Close()
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, c := range p.conns {
			_ = c.Close()
		}
	})
	return p
}

func (p *gateProxy) addr() string { return p.ln.Addr().String() }

func (p *gateProxy) serve() {
	hash := []byte(appendAudit.Hash())
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = client.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, client, server)
		p.mu.Unlock()
		var gate chan struct{} // guarded by p.mu
		go func() {            // client -> Redis, counting the append scripts
			var tail []byte
			buf := make([]byte, 64<<10)
			for {
				n, err := client.Read(buf)
				if n > 0 {
					// Keep the end of the last read: a hash may be split.
					data := append(tail, buf[:n]...)
					if found := bytes.Count(data, hash); found > 0 {
						p.mu.Lock()
						if p.held != nil {
							gate = p.held
						}
						p.mu.Unlock()
						p.scripts.Add(int64(found))
					}
					tail = append(tail[:0], data[max(0, len(data)-len(hash)+1):]...)
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
		go func() { // Redis -> client, held while this connection's gate is closed
			buf := make([]byte, 64<<10)
			for {
				n, err := server.Read(buf)
				if n > 0 {
					p.mu.Lock()
					h := gate
					p.mu.Unlock()
					if h != nil {
						<-h
					}
					if _, werr := client.Write(buf[:n]); werr != nil {
						return
					}
				}
				if err != nil {
					_ = client.Close()
					return
				}
			}
		}()
	}
}

// hold keeps back Redis's replies to the connections that send an append
// script from now on, until release.
func (p *gateProxy) hold() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.held == nil {
		p.held = make(chan struct{})
	}
}

func (p *gateProxy) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.held != nil {
		close(p.held)
		p.held = nil
	}
}

// waitScripts waits until n append scripts went through, at most d.
func (p *gateProxy) waitScripts(n int64, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for p.scripts.Load() < n {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}

// A record that arrives while a batch is in flight goes to Redis at once,
// behind that batch, not after its reply: one round trip, not two. The
// replies are held at the proxy, so the second batch can only have left
// before the first one's reply. On the old committer it never leaves.
func TestAuditBatchBehindOneInFlight(t *testing.T) {
	requireRedis(t)
	p := startGateProxy(t, redisAddr())
	s := openStoreWith(t, Options{Addr: p.addr(), KeyPrefix: testPrefix(t)})
	ctx := t.Context()
	rec := func(outcome string) audit.Record {
		return audit.Record{Actor: "U1", Action: audit.Allow, Outcome: outcome}
	}
	// Redis knows the script and the replica count is cached after this.
	if _, err := s.AppendAudit(ctx, rec("warm")); err != nil {
		t.Fatal(err)
	}
	base := p.scripts.Load()
	p.hold()
	type result struct {
		rec audit.Record
		err error
	}
	first, second := make(chan result, 1), make(chan result, 1)
	go func() { r, err := s.AppendAudit(ctx, rec("first")); first <- result{r, err} }()
	if !p.waitScripts(base+1, 10*time.Second) {
		p.release()
		t.Fatal("the first batch never reached Redis")
	}
	go func() { r, err := s.AppendAudit(ctx, rec("second")); second <- result{r, err} }()
	// (Within 2 s: the held connection's read times out at 3.)
	behind := p.waitScripts(base+2, 2*time.Second)
	p.release()
	if !behind {
		t.Error("a record appended while a batch was in flight was not sent before that batch's reply: it waits two round trips")
	}
	r1, r2 := <-first, <-second
	if r1.err != nil || r2.err != nil {
		t.Fatalf("appends: %v, %v", r1.err, r2.err)
	}
	if r1.rec.Seq != 2 || r2.rec.Seq != 3 {
		t.Errorf("seqs %d and %d, want 2 and 3 (commit order)", r1.rec.Seq, r2.rec.Seq)
	}
	recs, err := s.RecentAudit(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || recs[1].Outcome != "first" || recs[2].Outcome != "second" {
		t.Fatalf("chain %+v; want warm, first, second", recs)
	}
	if err := audit.VerifyChain(recs); err != nil {
		t.Fatal(err)
	}
	if recs[1].Hash != r1.rec.Hash || recs[2].Hash != r2.rec.Hash {
		t.Error("records returned differ from the records stored")
	}
}

// When the batch ahead is not appended as chained, the batch chained on
// its head fails its head check too and is chained again on the head read
// anew: nothing lost, nothing twice, in commit order. The batch ahead
// fails because another replica appended after the head this one
// remembers.
func TestAuditBatchBehindAFailedOne(t *testing.T) {
	requireRedis(t)
	p := startGateProxy(t, redisAddr())
	prefix := testPrefix(t)
	s := openStoreWith(t, Options{Addr: p.addr(), KeyPrefix: prefix})
	other := openStore(t, prefix)
	ctx := t.Context()
	if _, err := s.AppendAudit(ctx, audit.Record{Actor: "U1", Action: audit.Allow, Outcome: "warm"}); err != nil {
		t.Fatal(err)
	}
	// Another replica appends: s's remembered head is stale, so its next
	// batch fails its head check, and the one behind it fails too.
	if _, err := other.AppendAudit(ctx, audit.Record{Actor: "U2", Action: audit.Allow, Outcome: "other"}); err != nil {
		t.Fatal(err)
	}
	base := p.scripts.Load()
	p.hold()
	errs := make(chan error, 2)
	go func() {
		_, err := s.AppendAudit(ctx, audit.Record{Actor: "U1", Action: audit.Allow, Outcome: "first"})
		errs <- err
	}()
	if !p.waitScripts(base+1, 10*time.Second) {
		p.release()
		t.Fatal("the first batch never reached Redis")
	}
	go func() {
		_, err := s.AppendAudit(ctx, audit.Record{Actor: "U1", Action: audit.Allow, Outcome: "second"})
		errs <- err
	}()
	p.waitScripts(base+2, 2*time.Second)
	p.release()
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	recs, err := s.RecentAudit(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, r.Outcome)
	}
	if fmt.Sprint(got) != "[warm other first second]" {
		t.Fatalf("chain %v; want [warm other first second]", got)
	}
	if err := audit.VerifyChain(recs); err != nil {
		t.Fatal(err)
	}
}

// testAuditCrowd: two replicas append a crowd of records at once, each
// with batches in flight behind one another. Every record is in the chain
// once, the chain verifies, and each caller got the record stored at its
// place.
func testAuditCrowd(t *testing.T, open func(prefix string) *Store) {
	prefix := testPrefix(t)
	stores := []*Store{open(prefix), open(prefix)}
	ctx := t.Context()
	const each = 300
	var wg sync.WaitGroup
	start := make(chan struct{})
	var mu sync.Mutex
	returned := map[string]audit.Record{}
	var failed []error
	for i := range 2 * each {
		st := stores[i%2]
		wg.Go(func() {
			<-start
			id := fmt.Sprintf("r%d-%d", i%2, i)
			r, err := st.AppendAudit(ctx, audit.Record{Actor: "U1", Action: audit.Allow, Outcome: id})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed = append(failed, err)
				return
			}
			returned[id] = r
		})
	}
	close(start)
	wg.Wait()
	if len(failed) > 0 {
		t.Fatalf("%d of %d appends failed (first: %v)", len(failed), 2*each, failed[0])
	}
	recs, err := stores[0].RecentAudit(ctx, 4*each)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2*each {
		t.Fatalf("%d records in the chain, want %d", len(recs), 2*each)
	}
	if err := audit.VerifyChain(recs); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i, r := range recs {
		if seen[r.Outcome] {
			t.Fatalf("record %s is in the chain twice", r.Outcome)
		}
		seen[r.Outcome] = true
		got, ok := returned[r.Outcome]
		if !ok {
			t.Fatalf("record %d (%s) was appended by no caller", i+1, r.Outcome)
		}
		if got.Seq != r.Seq || got.Hash != r.Hash {
			t.Fatalf("caller of %s got record %d (%s), the chain has %d (%s)", r.Outcome, got.Seq, got.Hash, r.Seq, r.Hash)
		}
	}
}

func TestAuditCrowdTwoReplicas(t *testing.T) {
	requireRedis(t)
	testAuditCrowd(t, func(prefix string) *Store { return openStore(t, prefix) })
}

package redis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// Redis replicates asynchronously: a write the master acknowledged can be
// lost when a replica is promoted before it arrived. The writes that decide
// whether something runs, or that prove what ran, must survive a failover:
//
//   - every approval write (creation and each status change, above all
//     approved -> executing, the claim that lets exactly one replica run
//     the call),
//   - the dedup of chat events (a lost mark lets a redelivered event be
//     handled twice),
//   - the audit chain (the log and its head).
//
// Such a write runs on one connection to the master that owns its key
// and, when that master has replicas, is followed on the same connection
// by WAIT 1 <ReplicaAckTimeout>: WAIT counts the replicas that have every
// write this connection sent. No acknowledgement in time makes the write
// fail with ErrNotReplicated, and the caller treats it as any store error:
// nothing runs. A master without replicas (connected_slaves:0) cannot lose
// a write to a promotion, so WAIT is skipped there. (WAITAOF would also
// wait for the local fsync, but needs Redis 7.2; Debian's is 7.0.)
//
// Everything else (sessions, locks, limits, memory, plugin data) is
// replicated as usual: a failover may lose its last writes, which costs
// a repeated answer or a retried run, never a second execution (the
// claim above is what prevents that).

// ErrNotReplicated is returned when no replica acknowledged a write that
// must survive a failover within ReplicaAckTimeout. The write may be on
// the master; it is treated as failed.
var ErrNotReplicated = errors.New("no replica acknowledged the write in time")

// replicaCache remembers each master's connected replica count briefly, so
// a durable write costs one more round trip (WAIT) and not two.
type replicaCache struct {
	mu   sync.Mutex
	byID map[string]replicaCount
}

type replicaCount struct {
	n  int
	at time.Time
}

func (c *replicaCache) get(id string, now time.Time) (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	rc, ok := c.byID[id]
	if !ok || now.Sub(rc.at) > replicaCountTTL {
		return 0, false
	}
	return rc.n, true
}

func (c *replicaCache) put(id string, n int, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byID == nil {
		c.byID = map[string]replicaCount{}
	}
	c.byID[id] = replicaCount{n: n, at: now}
}

func (c *replicaCache) forget(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.byID, id)
}

// masterFor returns the client of the master owning key, and a name for
// its replica count.
func (s *Store) masterFor(ctx context.Context, key string) (*goredis.Client, string, error) {
	if s.cluster != nil {
		c, err := s.cluster.MasterForKey(ctx, key)
		if err != nil {
			return nil, "", err
		}
		return c, c.Options().Addr, nil
	}
	return s.single, "", nil
}

// durable runs write on one connection to the master owning key, then
// makes sure a replica has it (see the comment at the top of the file).
// write's own error is returned as it is; a missing acknowledgement is
// ErrNotReplicated.
func (s *Store) durable(ctx context.Context, key string, write func(c *goredis.Conn) error) error {
	client, id, err := s.masterFor(ctx, key)
	if err != nil {
		return err
	}
	conn := client.Conn()
	defer conn.Close()
	if err := write(conn); err != nil {
		s.afterError(ctx, id, err)
		return err
	}
	n, known := s.replicas.get(id, s.now())
	return s.awaitReplica(ctx, conn, id, n, known, nil)
}

// awaitReplica makes sure a replica has every write conn sent to master
// id, whose replica count is n when known (counted here otherwise): with
// no replica there is nothing to wait for; wait is a WAIT already sent in
// the writes' pipeline, or nil to send one now.
func (s *Store) awaitReplica(ctx context.Context, conn *goredis.Conn, id string, n int, known bool, wait *goredis.IntCmd) error {
	if !known {
		var err error
		if n, err = connectedReplicas(ctx, conn); err != nil {
			s.afterError(ctx, id, err)
			return fmt.Errorf("count replicas: %w", err)
		}
		s.replicas.put(id, n, s.now())
	}
	if n == 0 {
		return nil
	}
	if wait == nil {
		wait = conn.Wait(ctx, 1, s.opt.ReplicaAckTimeout)
	}
	acked, err := wait.Result()
	if err != nil {
		s.afterError(ctx, id, err)
		return fmt.Errorf("wait for a replica: %w", err)
	}
	if acked < 1 {
		// The replica may be gone for good: count again next time.
		s.replicas.forget(id)
		return fmt.Errorf("%w (%s, %d replica(s) connected)", ErrNotReplicated, s.opt.ReplicaAckTimeout, n)
	}
	return nil
}

// durableCmd is durable for a write that is one plain command (no
// script). When the master's replica count is known and not zero, the
// command and its WAIT go out in one pipeline on one connection: one round
// trip, and WAIT still counts the replicas that have the command.
func (s *Store) durableCmd(ctx context.Context, key string, cmd goredis.Cmder) error {
	client, id, err := s.masterFor(ctx, key)
	if err != nil {
		return err
	}
	err = s.durableCmds(ctx, client, id, []goredis.Cmder{cmd})
	if cerr := cmd.Err(); cerr != nil {
		return cerr
	}
	return err
}

// durableCmds sends cmds, plain commands whose keys all live on client's
// master, in one pipeline on one connection, then makes sure a replica
// has them: a WAIT on the same connection counts the replicas that have
// every write the connection sent, so one WAIT covers them all. Each
// command keeps its own reply or error; the error returned is the
// batch's own (a broken connection, no acknowledgement: ErrNotReplicated)
// and applies to every command that succeeded. When no command succeeded
// there is nothing to wait for. When the replica count is known and not
// zero, the WAIT goes in the same pipeline (one round trip).
func (s *Store) durableCmds(ctx context.Context, client *goredis.Client, id string, cmds []goredis.Cmder) error {
	n, known := s.replicas.get(id, s.now())
	// A pipeline reads WAIT's reply with the connection's read timeout
	// (Conn.Wait stretches it): longer acknowledgement timeouts wait in
	// a call of their own.
	together := known && n > 0 && s.opt.ReplicaAckTimeout <= ioTimeout-time.Second
	conn := client.Conn()
	defer conn.Close()
	var wait *goredis.IntCmd
	_, _ = conn.Pipelined(ctx, func(p goredis.Pipeliner) error {
		for _, c := range cmds {
			_ = p.Process(ctx, c)
		}
		if together {
			wait = goredis.NewIntCmd(ctx, "wait", 1, s.opt.ReplicaAckTimeout.Milliseconds())
			_ = p.Process(ctx, wait)
		}
		return nil
	})
	wrote, failed := false, false
	for _, c := range cmds {
		switch err := c.Err(); {
		case err == nil:
			wrote = true
		case !isNil(err) && !failed && !goredis.HasErrorPrefix(err, "NOSCRIPT"):
			// (A script Redis does not know yet says nothing about
			// the topology.)
			failed = true
			s.afterError(ctx, id, err)
		}
	}
	if !wrote {
		return nil
	}
	return s.awaitReplica(ctx, conn, id, n, known, wait)
}

// Dedup marks arrive in crowds: a burst of chat events, each claimed
// before it is queued. Each with its own connection and its own WAIT, a
// thousand marks at once took every connection of the pool, and a run's
// checkpoint waited behind all of them. They are group-committed per
// master instead, as audit appends are: one committer at a time sends
// every mark waiting for that master in one pipeline on one connection,
// followed by one WAIT, so each mark is as durable as with a WAIT of its
// own. A caller still waits for its own reply and the acknowledgement;
// with nothing else waiting, a mark goes out at once, alone.

// durableQueues are the group-committed durable writes waiting, per
// master.
type durableQueues struct {
	mu   sync.Mutex
	byID map[string]*durableQueue
}

// durableQueue is one master's: writes waiting, and whether a committer
// runs.
type durableQueue struct {
	waiting []*durableWrite
	busy    bool
}

// durableWrite is one write waiting for its batch.
type durableWrite struct {
	ctx context.Context
	cmd goredis.Cmder
	// err is the batch's error (see durableCmds), set before done is
	// closed.
	err  error
	done chan struct{}
}

// durableBatched queues cmd, a plain command on key, for the next batch
// of key's master and returns it; the caller waits on its done.
func (s *Store) durableBatched(ctx context.Context, key string, cmd goredis.Cmder) (*durableWrite, error) {
	client, id, err := s.masterFor(ctx, key)
	if err != nil {
		return nil, err
	}
	w := &durableWrite{ctx: ctx, cmd: cmd, done: make(chan struct{})}
	d := &s.durables
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.byID == nil {
		d.byID = map[string]*durableQueue{}
	}
	q := d.byID[id]
	if q == nil {
		q = &durableQueue{}
		d.byID[id] = q
	}
	q.waiting = append(q.waiting, w)
	if !q.busy {
		q.busy = true
		go s.commitDurable(context.WithoutCancel(ctx), client, id, q)
	}
	return w, nil
}

// commitDurable sends id's batches until none waits; at most one runs per
// master. A write whose caller gave up before its batch left is not sent.
func (s *Store) commitDurable(ctx context.Context, client *goredis.Client, id string, q *durableQueue) {
	d := &s.durables
	for {
		d.mu.Lock()
		n := min(len(q.waiting), maxCmdBatch)
		if n == 0 {
			q.busy = false
			delete(d.byID, id)
			d.mu.Unlock()
			return
		}
		batch := q.waiting[:n:n]
		q.waiting = q.waiting[n:]
		d.mu.Unlock()
		cmds := make([]goredis.Cmder, 0, len(batch))
		for _, w := range batch {
			if err := w.ctx.Err(); err != nil {
				w.cmd.SetErr(err)
				continue
			}
			cmds = append(cmds, w.cmd)
		}
		var err error
		if len(cmds) > 0 {
			bctx, cancel := context.WithTimeout(ctx, s.opt.OpTimeout)
			err = s.durableCmds(bctx, client, id, cmds)
			cancel()
		}
		for _, w := range batch {
			w.err = err
			close(w.done)
		}
	}
}

// afterError forgets what a failure may have made stale: the replica count
// and, on a Cluster, the slot map (a failover moves slots to a new master).
func (s *Store) afterError(ctx context.Context, id string, err error) {
	if isNil(err) {
		return
	}
	s.replicas.forget(id)
	if s.cluster != nil {
		s.cluster.ReloadState(context.WithoutCancel(ctx))
	}
}

// connectedReplicas reads connected_slaves from INFO replication.
func connectedReplicas(ctx context.Context, conn *goredis.Conn) (int, error) {
	info, err := conn.Info(ctx, "replication").Result()
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "connected_slaves:"); ok {
			return strconv.Atoi(v)
		}
	}
	return 0, errors.New("INFO replication has no connected_slaves")
}

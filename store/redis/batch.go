package redis

import (
	"context"
	"fmt"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// Small writes that many runs make at about the same time (the run index,
// releasing a thread's lock) are group-committed, as audit appends are:
// a write waits in a queue, and one committer at a time sends everything
// waiting in one pipeline, so a thousand runs ending together cost a few
// round trips rather than a thousand, and take a few of the pool's
// connections rather than all. A caller still waits for its own command's
// reply: nothing becomes fire-and-forget. With nothing else in flight a
// write goes out at once, alone.

//
// A few writes are deferred (batchedLater): they return at once and go out
// with the next pipeline, which every other queued write of the Store
// starts, or after lazyDelay at the latest. A run's index entry goes this
// way, filed under its thread key, and the run's first checkpoint (a save
// of the session with that key) takes it out of the queue and sends it in
// its own pipeline, before the save: nothing of the run is stored before
// its entry, and the entry costs no round trip of its own. Marking a run
// idle is deferred too; the release of the thread's lock, queued after it,
// sends it.

// maxCmdBatch bounds the commands of one pipeline.
const maxCmdBatch = 512

// lazyDelay is how long a deferred write may wait for company.
const lazyDelay = 20 * time.Millisecond

// cmdQueue holds the commands waiting for the next pipeline.
type cmdQueue struct {
	mu      sync.Mutex
	waiting []*queuedCmd
	busy    bool
	// timer flushes deferred writes no other write took along.
	timer *time.Timer
	// deferred are the deferred writes still waiting, by key, for
	// takeDeferred.
	deferred map[string]*queuedCmd
}

// queuedCmd is one command and, when it is a script's EVALSHA, the script
// (run on its own if Redis does not know it yet).
type queuedCmd struct {
	cmd    goredis.Cmder
	script *goredis.Script
	keys   []string
	args   []any
	done   chan struct{} // closed when cmd has its reply; nil when deferred
	what   string        // a deferred write, for the log
	// key files a deferred write for takeDeferred; taken is set once a
	// save took it out of the queue.
	key   string
	taken bool
}

// takeDeferred takes the deferred write filed under key out of the queue,
// if it is still waiting: the caller sends it.
func (s *Store) takeDeferred(key string) *queuedCmd {
	q := &s.cmds
	q.mu.Lock()
	defer q.mu.Unlock()
	c := q.deferred[key]
	if c == nil {
		return nil
	}
	delete(q.deferred, key)
	c.taken = true
	return c
}

// logDeferred logs a deferred write's failure.
func (s *Store) logDeferred(c *queuedCmd) {
	if err := c.cmd.Err(); err != nil && !isNil(err) {
		s.log.Warn("redis: deferred write failed", "write", c.what, "err", err)
	}
}

// batchedLater queues cmd for the next pipeline and returns at once. Its
// error, if any, is logged.
func (s *Store) batchedLater(ctx context.Context, cmd goredis.Cmder, key, what string) {
	q := &s.cmds
	q.mu.Lock()
	defer q.mu.Unlock()
	c := &queuedCmd{cmd: cmd, what: what, key: key}
	q.waiting = append(q.waiting, c)
	if key != "" {
		if q.deferred == nil {
			q.deferred = make(map[string]*queuedCmd)
		}
		// A later write under the same key goes after the earlier one:
		// only the newest is taken by a save, the earlier stays queued.
		q.deferred[key] = c
	}
	if q.busy || q.timer != nil {
		return
	}
	wctx := context.WithoutCancel(ctx)
	q.timer = time.AfterFunc(lazyDelay, func() {
		q.mu.Lock()
		defer q.mu.Unlock()
		q.timer = nil
		if !q.busy && len(q.waiting) > 0 {
			q.busy = true
			go s.commitCmds(wctx)
		}
	})
}

// batched sends cmd with the next pipeline and waits for its reply. If ctx
// ends first batched returns its error, but cmd may still be sent.
func (s *Store) batched(ctx context.Context, cmd goredis.Cmder) error {
	return s.enqueue(ctx, &queuedCmd{cmd: cmd, done: make(chan struct{})})
}

// batchedScript runs script with the next pipeline and returns its reply.
func (s *Store) batchedScript(ctx context.Context, script *goredis.Script, keys []string, args ...any) *goredis.Cmd {
	q := &queuedCmd{cmd: evalShaCmd(ctx, script, keys, args), script: script, keys: keys, args: args, done: make(chan struct{})}
	if err := s.enqueue(ctx, q); err != nil {
		// The committer may still hold q.cmd: answer with a new one.
		cmd := goredis.NewCmd(ctx)
		cmd.SetErr(err)
		return cmd
	}
	return q.cmd.(*goredis.Cmd)
}

// evalShaCmd is script's EVALSHA with keys and args.
func evalShaCmd(ctx context.Context, script *goredis.Script, keys []string, args []any) *goredis.Cmd {
	cmdArgs := make([]any, 0, 3+len(keys)+len(args))
	cmdArgs = append(cmdArgs, "evalsha", script.Hash(), len(keys))
	for _, k := range keys {
		cmdArgs = append(cmdArgs, k)
	}
	cmdArgs = append(cmdArgs, args...)
	cmd := goredis.NewCmd(ctx, cmdArgs...)
	if len(keys) > 0 {
		// The Cluster client routes a command by its first key.
		cmd.SetFirstKeyPos(3)
	}
	return cmd
}

func (s *Store) enqueue(ctx context.Context, c *queuedCmd) error {
	q := &s.cmds
	q.mu.Lock()
	q.waiting = append(q.waiting, c)
	if !q.busy {
		q.busy = true
		if q.timer != nil {
			q.timer.Stop()
			q.timer = nil
		}
		go s.commitCmds(context.WithoutCancel(ctx))
	}
	q.mu.Unlock()
	ctx, cancel := s.opctx(ctx)
	defer cancel()
	select {
	case <-c.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("redis: %s: %w", c.cmd.Name(), context.Cause(ctx))
	}
}

// commitCmds sends pipelines until nothing waits; at most one runs per
// Store. Each pipeline is bounded by OpTimeout on its own.
func (s *Store) commitCmds(ctx context.Context) {
	q := &s.cmds
	for {
		q.mu.Lock()
		n := min(len(q.waiting), maxCmdBatch)
		if n == 0 {
			q.busy = false
			q.mu.Unlock()
			return
		}
		batch := make([]*queuedCmd, 0, n)
		for _, c := range q.waiting[:n] {
			if c.taken {
				continue // a save sent it
			}
			if c.key != "" && q.deferred[c.key] == c {
				delete(q.deferred, c.key)
			}
			batch = append(batch, c)
		}
		q.waiting = q.waiting[n:]
		q.mu.Unlock()
		if len(batch) == 0 {
			continue
		}
		bctx, cancel := context.WithTimeout(ctx, s.opt.OpTimeout)
		s.pipeline(bctx, batch)
		// Scripts Redis does not know yet (first use, or it restarted):
		// load each once and send those commands again.
		var again []*queuedCmd
		loaded := map[*goredis.Script]error{}
		for _, c := range batch {
			if c.script == nil || !goredis.HasErrorPrefix(c.cmd.Err(), "NOSCRIPT") {
				continue
			}
			err, ok := loaded[c.script]
			if !ok {
				err = c.script.Load(bctx, s.rdb).Err()
				loaded[c.script] = err
			}
			if err == nil {
				c.cmd = evalShaCmd(bctx, c.script, c.keys, c.args)
				again = append(again, c)
			}
		}
		if len(again) > 0 {
			s.pipeline(bctx, again)
		}
		cancel()
		for _, c := range batch {
			if c.done != nil {
				close(c.done)
			} else {
				s.logDeferred(c)
			}
		}
	}
}

// pipeline sends the batch's commands in one pipeline. Each command keeps
// its own reply or error; Pipelined's error is the first of them and says
// nothing more.
func (s *Store) pipeline(ctx context.Context, batch []*queuedCmd) {
	_, _ = s.rdb.Pipelined(ctx, func(p goredis.Pipeliner) error {
		for _, c := range batch {
			_ = p.Process(ctx, c.cmd)
		}
		return nil
	})
}

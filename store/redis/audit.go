package redis

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/vigilops/vigil/policy/audit"
)

// The audit chain is a list of record JSON plus a head hash (seq, hash of
// the newest record). Records are chained in Go (audit.Chain computes a
// SHA-256 Lua cannot) against the head read from Redis, then appended by a
// script only if the head is still that one; a writer that lost the race
// reads the new head and chains again. The head is never trimmed, so the
// chain continues when old records are.
//
// A replica's appends are group-committed: one committer chains every
// record waiting at that moment and appends them in one script call, while
// the appenders wait for its result. Racing each other instead, they
// would only make each other retry: under load (hundreds of runs at once)
// most ran out of attempts and their records were lost. The compare-and-set
// settles races between replicas.

// maxAuditAttempts bounds the retries of one batch. Each round lets at
// least one writer through, so this allows for that many replicas writing
// at once.
const maxAuditAttempts = 64

// maxAuditBatch bounds the records of one script call.
const maxAuditBatch = 256

// appendAudit appends chained records if the head is still the expected
// one. KEYS: log, head. ARGV: expected head seq ("0" for none), new seq,
// new hash, log limit, record JSON... Returns 1 if appended, 0 if the head
// moved.
var appendAudit = goredis.NewScript(`
local seq = redis.call('HGET', KEYS[2], 'seq') or '0'
if seq ~= ARGV[1] then return 0 end
for i = 5, #ARGV do redis.call('RPUSH', KEYS[1], ARGV[i]) end
redis.call('HSET', KEYS[2], 'seq', ARGV[2], 'hash', ARGV[3])
redis.call('LTRIM', KEYS[1], -tonumber(ARGV[4]), -1)
return 1
`)

// auditQueue holds a replica's appends waiting for the next batch.
type auditQueue struct {
	mu      sync.Mutex
	waiting []*auditAppend
	// busy is set while a committer runs.
	busy bool
}

// auditAppend is one record waiting to be chained and its outcome.
type auditAppend struct {
	rec  audit.Record
	done chan auditResult // buffered: the committer never blocks
}

type auditResult struct {
	rec audit.Record
	err error
}

// AppendAudit implements bot.AuditStore. A record without a time gets the
// store's clock. If ctx ends first AppendAudit returns its error, but the
// record may still be appended with its batch.
func (s *Store) AppendAudit(ctx context.Context, r audit.Record) (audit.Record, error) {
	if r.Time.IsZero() {
		r.Time = s.now()
	}
	a := &auditAppend{rec: r, done: make(chan auditResult, 1)}
	q := &s.audit
	q.mu.Lock()
	q.waiting = append(q.waiting, a)
	if !q.busy {
		q.busy = true
		go s.commitAudit(context.WithoutCancel(ctx))
	}
	q.mu.Unlock()
	ctx, cancel := s.opctx(ctx)
	defer cancel()
	select {
	case res := <-a.done:
		return res.rec, res.err
	case <-ctx.Done():
		return audit.Record{}, fmt.Errorf("redis: append audit: %w", context.Cause(ctx))
	}
}

// commitAudit appends batches until none is waiting; at most one runs per
// Store. Each batch is bounded by OpTimeout on its own: it serves every
// waiting caller, not the one that started it.
func (s *Store) commitAudit(ctx context.Context) {
	q := &s.audit
	for {
		q.mu.Lock()
		n := min(len(q.waiting), maxAuditBatch)
		if n == 0 {
			q.busy = false
			q.mu.Unlock()
			return
		}
		batch := q.waiting[:n:n]
		q.waiting = q.waiting[n:]
		q.mu.Unlock()
		bctx, cancel := context.WithTimeout(ctx, s.opt.OpTimeout)
		recs, err := s.appendBatch(bctx, batch)
		cancel()
		for i, a := range batch {
			if err != nil {
				a.done <- auditResult{err: err}
			} else {
				a.done <- auditResult{rec: recs[i]}
			}
		}
	}
}

// appendBatch chains the batch's records after the head and appends them,
// retrying when another replica moved the head first.
func (s *Store) appendBatch(ctx context.Context, batch []*auditAppend) ([]audit.Record, error) {
	keys := []string{s.keys.auditLog(), s.keys.auditHead()}
	recs := make([]audit.Record, len(batch))
	for attempt := range maxAuditAttempts {
		head, err := s.rdb.HMGet(ctx, keys[1], "seq", "hash").Result()
		if err != nil {
			return nil, fmt.Errorf("redis: append audit: read head: %w", err)
		}
		var prev *audit.Record
		expect := "0"
		if seqStr, ok := head[0].(string); ok {
			seq, err := strconv.ParseInt(seqStr, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("redis: append audit: bad head seq %q", seqStr)
			}
			hash, _ := head[1].(string)
			prev = &audit.Record{Seq: seq, Hash: hash}
			expect = seqStr
		}
		args := make([]any, 4, 4+len(batch))
		for i, a := range batch {
			recs[i] = audit.Chain(prev, a.rec)
			prev = &recs[i]
			raw, err := json.Marshal(recs[i])
			if err != nil {
				return nil, fmt.Errorf("redis: encode audit record: %w", err)
			}
			args = append(args, raw)
		}
		last := recs[len(recs)-1]
		args[0], args[1], args[2], args[3] = expect, last.Seq, last.Hash, s.opt.AuditLimit
		var ok int
		err = s.durable(ctx, keys[0], func(c *goredis.Conn) (err error) {
			ok, err = appendAudit.Run(ctx, c, keys, args...).Int()
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("redis: append audit: %w", err)
		}
		if ok == 1 {
			return recs, nil
		}
		// Another replica appended first. Back off a little, with jitter,
		// so a crowd of writers spreads out.
		backoff := time.Duration(rand.Int64N(int64(time.Millisecond) << min(attempt, 5)))
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return nil, fmt.Errorf("redis: append audit: %w", context.Cause(ctx))
		}
	}
	return nil, fmt.Errorf("redis: append audit: %w", ErrContention)
}

// RecentAudit implements bot.AuditStore.
func (s *Store) RecentAudit(ctx context.Context, n int) ([]audit.Record, error) {
	if n <= 0 {
		return nil, nil
	}
	ctx, cancel := s.opctx(ctx)
	defer cancel()
	raws, err := s.rdb.LRange(ctx, s.keys.auditLog(), -int64(n), -1).Result()
	if err != nil {
		return nil, fmt.Errorf("redis: recent audit: %w", err)
	}
	out := make([]audit.Record, 0, len(raws))
	for _, raw := range raws {
		var r audit.Record
		if err := json.Unmarshal([]byte(raw), &r); err != nil {
			return nil, fmt.Errorf("redis: decode audit record: %w", err)
		}
		out = append(out, r)
	}
	return out, nil
}

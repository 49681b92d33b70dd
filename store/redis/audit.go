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

// The audit chain is a list of record JSON plus a head hash (seq, hash and
// key ID of the newest record, and the head's MAC under the audit key).
// Records are chained in Go (Keyring.Chain computes an HMAC Lua cannot)
// against the head read from Redis, then appended by a script only if the
// head is still that one; a writer that lost the race reads the new head
// and chains again. The head is never trimmed, so the chain continues when
// old records are, and a log cut short of it is detected (AuditHead,
// audit.Verify).
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
// new hash, log limit, new key ID, new head MAC, expected head hash ("" for
// none), record JSON... Returns 1 if appended, 0 if the head moved.
var appendAudit = goredis.NewScript(`
local cur = redis.call('HMGET', KEYS[2], 'seq', 'hash')
if (cur[1] or '0') ~= ARGV[1] or (cur[2] or '') ~= ARGV[7] then return 0 end
for i = 8, #ARGV do redis.call('RPUSH', KEYS[1], ARGV[i]) end
redis.call('HSET', KEYS[2], 'seq', ARGV[2], 'hash', ARGV[3], 'key_id', ARGV[5], 'mac', ARGV[6])
redis.call('LTRIM', KEYS[1], -tonumber(ARGV[4]), -1)
return 1
`)

// auditQueue holds a replica's appends waiting for the next batch.
type auditQueue struct {
	mu      sync.Mutex
	waiting []*auditAppend
	// busy is set while a committer runs.
	busy bool
	// head is the chain head this replica last appended (nil: the
	// chain was empty), valid when headKnown; only the committer uses
	// them.
	head      *audit.Head
	headKnown bool
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
		// The head this replica last wrote is usually still the head:
		// start from it without reading (the script checks it).
		head, known := s.audit.head, s.audit.headKnown
		if !known || attempt > 0 {
			var err error
			if head, err = s.readAuditHead(ctx); err != nil {
				return nil, fmt.Errorf("redis: append audit: %w", err)
			}
		}
		var prev *audit.Record
		expect, expectHash := "0", ""
		if head != nil {
			expectHash = head.Hash
			if err := s.opt.AuditKeys.CanFollow(head.KeyID); err != nil {
				return nil, fmt.Errorf("redis: append audit: %w", err)
			}
			prev = &audit.Record{Seq: head.Seq, Hash: head.Hash, KeyID: head.KeyID}
			expect = strconv.FormatInt(head.Seq, 10)
		}
		args := make([]any, 7, 7+len(batch)+1)
		for i, a := range batch {
			// A key rotation puts a key_rotated record before the
			// first record: each batch entry gets the last of its records.
			chained := s.opt.AuditKeys.Chain(prev, a.rec)
			for _, rec := range chained {
				raw, err := json.Marshal(rec)
				if err != nil {
					return nil, fmt.Errorf("redis: encode audit record: %w", err)
				}
				args = append(args, raw)
			}
			recs[i] = chained[len(chained)-1]
			prev = &recs[i]
		}
		last := recs[len(recs)-1]
		h := s.opt.AuditKeys.HeadOf(last)
		args[0], args[1], args[2], args[3], args[4], args[5], args[6] = expect, last.Seq, last.Hash, s.opt.AuditLimit, h.KeyID, h.MAC, expectHash
		ok, err := s.appendDurable(ctx, keys, args)
		if err != nil {
			s.audit.headKnown = false
			return nil, fmt.Errorf("redis: append audit: %w", err)
		}
		if ok == 1 {
			s.audit.head, s.audit.headKnown = &h, true
			return recs, nil
		}
		s.audit.headKnown = false
		if known && attempt == 0 {
			continue // the remembered head was stale: read it, no pause
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

// appendDurable runs the append script and waits for a replica: as
// EVALSHA with its WAIT in one pipeline (one round trip) when Redis knows
// the script, else loading it the way Script.Run does, then WAIT.
func (s *Store) appendDurable(ctx context.Context, keys []string, args []any) (int, error) {
	cmd := evalShaCmd(ctx, appendAudit, keys, args)
	err := s.durableCmd(ctx, keys[0], cmd)
	if !goredis.HasErrorPrefix(err, "NOSCRIPT") {
		if err != nil {
			return 0, err
		}
		return cmd.Int()
	}
	var ok int
	err = s.durable(ctx, keys[0], func(c *goredis.Conn) (err error) {
		ok, err = appendAudit.Run(ctx, c, keys, args...).Int()
		return err
	})
	return ok, err
}

// readAuditHead reads the head; nil when the chain is empty.
func (s *Store) readAuditHead(ctx context.Context) (*audit.Head, error) {
	v, err := s.rdb.HMGet(ctx, s.keys.auditHead(), "seq", "hash", "key_id", "mac").Result()
	if err != nil {
		return nil, fmt.Errorf("read head: %w", err)
	}
	seqStr, ok := v[0].(string)
	if !ok {
		return nil, nil
	}
	seq, err := strconv.ParseInt(seqStr, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("bad head seq %q", seqStr)
	}
	h := &audit.Head{Seq: seq}
	h.Hash, _ = v[1].(string)
	h.KeyID, _ = v[2].(string)
	h.MAC, _ = v[3].(string)
	return h, nil
}

// AuditHead returns the head of the audit chain: the newest record's
// sequence number and hash, sealed with the audit key; ok is false while
// the chain is empty. audit.Verify checks RecentAudit's records reach it.
func (s *Store) AuditHead(ctx context.Context) (audit.Head, bool, error) {
	ctx, cancel := s.opctx(ctx)
	defer cancel()
	h, err := s.readAuditHead(ctx)
	if err != nil || h == nil {
		return audit.Head{}, false, errWrap("redis: audit head", err)
	}
	return *h, true, nil
}

func errWrap(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
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

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
// the appenders wait for its result. A batch does not wait for the reply
// to the one in flight: it is chained on the head that one will leave and
// sent behind it (commitAudit), so a record waits for one round trip, not
// two. Racing each other instead, they
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

// maxAuditInflight bounds the batches of one Store in flight at once: a
// batch is chained on the head the one ahead of it will leave and sent
// without waiting for that one's reply, so a record that arrives while a
// batch is in flight goes out at once instead of after that batch's round
// trip.
const maxAuditInflight = 2

// auditQueue holds a replica's appends waiting for the next batch.
type auditQueue struct {
	mu      sync.Mutex
	waiting []*auditAppend
	// committers counts the committers running (at most
	// maxAuditInflight), collecting those about to take the waiting
	// records (not sending a batch).
	committers, collecting int
	// chain is held while a committer takes a batch and chains it, so
	// that the next one chains on its head.
	chain sync.Mutex
	// last is the newest batch sent; while it is in flight the next one
	// is chained on the head it will leave.
	last *auditBatch
	// head is the chain head this replica last appended (nil: the
	// chain was empty), valid when headKnown.
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

// auditBatch is one batch of records on its way to Redis.
type auditBatch struct {
	items []*auditAppend
	// prev is the batch that was in flight when this one was chained on
	// the head it will leave (nil: none was).
	prev *auditBatch
	// head is the head this batch leaves if it is appended as chained
	// (nil until then); finished is set once its outcome is known. Both
	// are guarded by auditQueue.mu.
	head     *audit.Head
	finished bool
	// sent is closed when the batch's first attempt goes to Redis: the
	// batch behind it goes after, so that Redis gets them in order.
	sent chan struct{}
	// ok is whether the batch was appended, set before done is closed.
	ok   bool
	done chan struct{} // closed when finished
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
	if q.collecting == 0 && q.committers < maxAuditInflight {
		// Every committer is sending a batch: another one takes this
		// record now, rather than after a reply.
		q.committers++
		q.collecting++
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

// commitAudit chains and sends batches until none is waiting; at most
// maxAuditInflight run per Store, a second one only while the first sends
// a batch. It chains each batch on the head the batch in flight will
// leave, if there is one, and sends it once that one has gone out (on
// another connection: go-redis answers one pipeline at a time on a
// connection). Redis then runs the first script before the second and the
// second finds its expected head. If the first is not appended, or Redis
// got the second first, the second fails its head check, waits for the
// first's outcome and goes again (sendAudit). Each batch is bounded by
// OpTimeout on its own: it serves every waiting caller, not the one that
// started it. Every batch has its own WAIT: a caller returns once a
// replica has its record.
func (s *Store) commitAudit(ctx context.Context) {
	q := &s.audit
	for {
		q.chain.Lock()
		q.mu.Lock()
		n := min(len(q.waiting), maxAuditBatch)
		if n == 0 {
			q.committers--
			q.collecting--
			q.mu.Unlock()
			q.chain.Unlock()
			return
		}
		q.collecting--
		b := &auditBatch{items: q.waiting[:n:n], sent: make(chan struct{}), done: make(chan struct{})}
		q.waiting = q.waiting[n:]
		head, known := q.head, q.headKnown
		if p := q.last; p != nil && !p.finished && p.head != nil {
			b.prev, head, known = p, p.head, true
		}
		q.mu.Unlock()
		bctx, cancel := context.WithTimeout(ctx, s.opt.OpTimeout)
		var args []any
		var recs []audit.Record
		var err error
		if !known {
			head, err = s.readAuditHead(bctx)
			err = errWrap("redis: append audit", err)
		}
		if err == nil {
			args, recs, err = s.chainBatch(b.items, head)
		}
		q.mu.Lock()
		if err == nil {
			b.head = s.headOf(recs)
		}
		q.last = b
		q.mu.Unlock()
		q.chain.Unlock()
		if err == nil {
			recs, err = s.sendAudit(bctx, b, args, recs)
		}
		cancel()
		s.finishAudit(b, recs, err)
		q.mu.Lock()
		q.collecting++
		q.mu.Unlock()
	}
}

// headOf is the head recs (a chained batch) leave.
func (s *Store) headOf(recs []audit.Record) *audit.Head {
	h := s.opt.AuditKeys.HeadOf(recs[len(recs)-1])
	return &h
}

// finishAudit answers b's callers and remembers the head it left (or
// forgets the head if it failed).
func (s *Store) finishAudit(b *auditBatch, recs []audit.Record, err error) {
	q := &s.audit
	q.mu.Lock()
	b.finished, b.ok = true, err == nil
	if err != nil {
		q.headKnown = false
	} else if h := s.headOf(recs); !q.headKnown || q.head == nil || h.Seq >= q.head.Seq {
		// (Replies of batches in flight together may come back in
		// either order: keep the newest head.)
		q.head, q.headKnown = h, true
	}
	q.mu.Unlock()
	select {
	case <-b.sent:
	default:
		close(b.sent) // failed before it was sent
	}
	close(b.done)
	for i, a := range b.items {
		if err != nil {
			a.done <- auditResult{err: err}
		} else {
			a.done <- auditResult{rec: recs[i]}
		}
	}
}

// chainBatch chains the batch's records after head and returns the append
// script's arguments and the chained records (one per caller).
func (s *Store) chainBatch(batch []*auditAppend, head *audit.Head) ([]any, []audit.Record, error) {
	recs := make([]audit.Record, len(batch))
	var prev *audit.Record
	expect, expectHash := "0", ""
	if head != nil {
		expectHash = head.Hash
		if err := s.opt.AuditKeys.CanFollow(head.KeyID); err != nil {
			return nil, nil, fmt.Errorf("redis: append audit: %w", err)
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
				return nil, nil, fmt.Errorf("redis: encode audit record: %w", err)
			}
			args = append(args, raw)
		}
		recs[i] = chained[len(chained)-1]
		prev = &recs[i]
	}
	last := recs[len(recs)-1]
	h := s.opt.AuditKeys.HeadOf(last)
	args[0], args[1], args[2], args[3], args[4], args[5], args[6] = expect, last.Seq, last.Hash, s.opt.AuditLimit, h.KeyID, h.MAC, expectHash
	return args, recs, nil
}

// sendAudit appends b, chained as args and recs, and returns its records
// as appended. When the head moved it chains b again on the head read
// anew, backing off when other replicas keep winning. A batch chained on
// the head of the batch ahead waits for that one's outcome first: if it
// was appended, b failed only because Redis got b first, and goes again
// as it is.
func (s *Store) sendAudit(ctx context.Context, b *auditBatch, args []any, recs []audit.Record) ([]audit.Record, error) {
	keys := []string{s.keys.auditLog(), s.keys.auditHead()}
	if b.prev != nil {
		select {
		case <-b.prev.sent:
		case <-ctx.Done():
			close(b.sent)
			return nil, fmt.Errorf("redis: append audit: %w", context.Cause(ctx))
		}
	}
	for attempt := range maxAuditAttempts {
		if attempt == 0 {
			close(b.sent)
		}
		if attempt == 1 && b.prev != nil {
			select {
			case <-b.prev.done:
			case <-ctx.Done():
				return nil, fmt.Errorf("redis: append audit: %w", context.Cause(ctx))
			}
			if b.prev.ok {
				// The head b was chained on is in Redis now, unless
				// another replica appended after it: go again as it is.
				ok, err := s.appendDurable(ctx, keys, args)
				if err != nil {
					return nil, fmt.Errorf("redis: append audit: %w", err)
				}
				if ok == 1 {
					return recs, nil
				}
			}
		}
		if attempt > 0 {
			head, err := s.readAuditHead(ctx)
			if err != nil {
				return nil, fmt.Errorf("redis: append audit: %w", err)
			}
			if args, recs, err = s.chainBatch(b.items, head); err != nil {
				return nil, err
			}
		}
		ok, err := s.appendDurable(ctx, keys, args)
		if err != nil {
			return nil, fmt.Errorf("redis: append audit: %w", err)
		}
		if ok == 1 {
			return recs, nil
		}
		if attempt == 0 {
			continue // the head b was chained on was stale: read it, no pause
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

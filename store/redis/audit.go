package redis

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/vigilops/vigil/policy"
)

// The audit chain is a list of record JSON plus a head hash (seq, hash of
// the newest record). A record is chained in Go (policy.Chain computes a
// SHA-256 Lua cannot) against the head it read, then appended by a script
// only if the head is still that one; a writer that lost the race reads the
// new head and chains again. The head is never trimmed, so the chain
// continues when old records are. A replica's own appenders take turns:
// racing each other they would only make each other retry, and under load
// (hundreds of runs at once) most would run out of attempts and their
// records would be lost. The compare-and-set is left to settle races
// between replicas.

// maxAuditAttempts bounds the retries of one append. Each round lets at
// least one writer through, so this allows for that many replicas writing
// at once.
const maxAuditAttempts = 64

// appendAudit appends a chained record if the head is still the expected
// one. KEYS: log, head. ARGV: expected head seq ("0" for none), new seq,
// new hash, record JSON, log limit. Returns 1 if appended, 0 if the head
// moved.
var appendAudit = goredis.NewScript(`
local seq = redis.call('HGET', KEYS[2], 'seq') or '0'
if seq ~= ARGV[1] then return 0 end
redis.call('RPUSH', KEYS[1], ARGV[4])
redis.call('HSET', KEYS[2], 'seq', ARGV[2], 'hash', ARGV[3])
redis.call('LTRIM', KEYS[1], -tonumber(ARGV[5]), -1)
return 1
`)

// AppendAudit implements bot.AuditStore. A record without a time gets the
// store's clock.
func (s *Store) AppendAudit(ctx context.Context, r policy.AuditRecord) (policy.AuditRecord, error) {
	ctx, cancel := s.opctx(ctx)
	defer cancel()
	if r.Time.IsZero() {
		r.Time = s.now()
	}
	select {
	case s.auditTurn <- struct{}{}:
		defer func() { <-s.auditTurn }()
	case <-ctx.Done():
		return policy.AuditRecord{}, fmt.Errorf("redis: append audit: %w", context.Cause(ctx))
	}
	keys := []string{s.keys.auditLog(), s.keys.auditHead()}
	for attempt := range maxAuditAttempts {
		head, err := s.rdb.HMGet(ctx, keys[1], "seq", "hash").Result()
		if err != nil {
			return policy.AuditRecord{}, fmt.Errorf("redis: append audit: read head: %w", err)
		}
		var prev *policy.AuditRecord
		expect := "0"
		if seqStr, ok := head[0].(string); ok {
			seq, err := strconv.ParseInt(seqStr, 10, 64)
			if err != nil {
				return policy.AuditRecord{}, fmt.Errorf("redis: append audit: bad head seq %q", seqStr)
			}
			hash, _ := head[1].(string)
			prev = &policy.AuditRecord{Seq: seq, Hash: hash}
			expect = seqStr
		}
		rec := policy.Chain(prev, r)
		raw, err := json.Marshal(rec)
		if err != nil {
			return policy.AuditRecord{}, fmt.Errorf("redis: encode audit record: %w", err)
		}
		ok, err := appendAudit.Run(ctx, s.rdb, keys, expect, rec.Seq, rec.Hash, raw, s.opt.AuditLimit).Int()
		if err != nil {
			return policy.AuditRecord{}, fmt.Errorf("redis: append audit: %w", err)
		}
		if ok == 1 {
			return rec, nil
		}
		// Another writer appended first. Back off a little, with jitter,
		// so a crowd of writers spreads out.
		backoff := time.Duration(rand.Int64N(int64(time.Millisecond) << min(attempt, 5)))
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return policy.AuditRecord{}, fmt.Errorf("redis: append audit: %w", context.Cause(ctx))
		}
	}
	return policy.AuditRecord{}, fmt.Errorf("redis: append audit: %w", ErrContention)
}

// RecentAudit implements bot.AuditStore.
func (s *Store) RecentAudit(ctx context.Context, n int) ([]policy.AuditRecord, error) {
	if n <= 0 {
		return nil, nil
	}
	ctx, cancel := s.opctx(ctx)
	defer cancel()
	raws, err := s.rdb.LRange(ctx, s.keys.auditLog(), -int64(n), -1).Result()
	if err != nil {
		return nil, fmt.Errorf("redis: recent audit: %w", err)
	}
	out := make([]policy.AuditRecord, 0, len(raws))
	for _, raw := range raws {
		var r policy.AuditRecord
		if err := json.Unmarshal([]byte(raw), &r); err != nil {
			return nil, fmt.Errorf("redis: decode audit record: %w", err)
		}
		out = append(out, r)
	}
	return out, nil
}

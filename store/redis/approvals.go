package redis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	goredis "github.com/redis/go-redis/v9"

	"github.com/vigilops/vigil/bot"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/store"
)

// An approval is one JSON string with a TTL of its remaining life plus
// ApprovalRetention; pending approvals are also in a sorted set by expiry,
// the sweeper's work list. Creation and every status change update both
// in one script.

// createApproval stores a new approval unless the ID exists. KEYS: record,
// pending index. ARGV: JSON, ttl ms, status, expiry score, ID. Returns 1 if
// created, 0 if the ID was taken.
var createApproval = goredis.NewScript(`
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 0 end
if ARGV[3] == 'pending' then redis.call('ZADD', KEYS[2], ARGV[4], ARGV[5]) end
return 1
`)

// swapApproval replaces an approval only if it is still exactly what the
// caller read (compare-and-set on the whole record, status included).
// KEYS: record, pending index, executing index. ARGV: old JSON, new JSON,
// ttl ms, new status, expiry score, ID. Returns 1 if swapped, 0 if the
// record changed, -1 if it is gone.
var swapApproval = goredis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if not cur then return -1 end
if cur ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
if ARGV[4] == 'pending' then
  redis.call('ZADD', KEYS[2], ARGV[5], ARGV[6])
else
  redis.call('ZREM', KEYS[2], ARGV[6])
end
if ARGV[4] == 'executing' then
  redis.call('SADD', KEYS[3], ARGV[6])
else
  redis.call('SREM', KEYS[3], ARGV[6])
end
return 1
`)

// approvalTTL keeps a record until its expiry plus the retention, and at
// least the retention from now (a record written after its expiry, such
// as an expiry decision, still stays long enough to be read).
func (s *Store) approvalTTL(a *policy.Approval) int64 {
	remaining := max(a.ExpiresAt.Sub(s.now()), 0)
	return ttlMillis(remaining + s.opt.ApprovalRetention)
}

func expiryScore(a *policy.Approval) int64 { return a.ExpiresAt.UnixMilli() }

// CreateApproval implements bot.ApprovalStore.
func (s *Store) CreateApproval(ctx context.Context, a *policy.Approval) error {
	if a == nil || a.ID == "" {
		return errors.New("redis: create approval: no ID")
	}
	raw, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("redis: encode approval %s: %w", a.ID, err)
	}
	ctx, cancel := s.opctx(ctx)
	defer cancel()
	var created int
	keys := []string{s.keys.approval(a.ID), s.keys.approvalsPending()}
	err = s.durable(ctx, keys[0], func(c *goredis.Conn) (err error) {
		created, err = createApproval.Run(ctx, c, keys,
			raw, s.approvalTTL(a), string(a.Status), expiryScore(a), a.ID).Int()
		return err
	})
	if errors.Is(err, ErrNotReplicated) && created == 1 {
		// Take it back (expire it at once, out of both indexes), so the
		// master does not keep an approval its creator was told failed.
		if _, uerr := swapApproval.Run(context.WithoutCancel(ctx), s.rdb,
			[]string{keys[0], keys[1], s.keys.approvalsExecuting()},
			raw, raw, 1, "gone", 0, a.ID).Result(); uerr != nil {
			s.log.Warn("redis: withdraw unreplicated approval", "approval", a.ID, "err", uerr)
		}
	}
	if err != nil {
		return fmt.Errorf("redis: create approval %s: %w", a.ID, err)
	}
	if created == 0 {
		return fmt.Errorf("approval %s: %w", a.ID, bot.ErrExists)
	}
	return nil
}

// GetApproval implements bot.ApprovalStore.
func (s *Store) GetApproval(ctx context.Context, id string) (*policy.Approval, error) {
	ctx, cancel := s.opctx(ctx)
	defer cancel()
	a, _, err := s.getApproval(ctx, id)
	return a, err
}

// getApproval returns the decoded approval and its stored JSON.
func (s *Store) getApproval(ctx context.Context, id string) (*policy.Approval, string, error) {
	raw, err := s.rdb.Get(ctx, s.keys.approval(id)).Result()
	if isNil(err) {
		return nil, "", fmt.Errorf("approval %q: %w", id, bot.ErrNotFound)
	}
	if err != nil {
		return nil, "", fmt.Errorf("redis: get approval %q: %w", id, err)
	}
	var a policy.Approval
	if err := json.Unmarshal([]byte(raw), &a); err != nil {
		return nil, "", fmt.Errorf("redis: decode approval %q: %w", id, err)
	}
	return &a, raw, nil
}

// UpdateApproval implements bot.ApprovalStore with the shared
// compare-and-set (store.UpdateApproval): the swap is swapApproval, which
// replaces the record only if it is still byte for byte what was read, and
// fixes the indexes in the same script. A swap that the replicas did not
// acknowledge is taken back and reported as failed.
func (s *Store) UpdateApproval(ctx context.Context, id string, step policy.Transition) (*policy.Approval, error) {
	ctx, cancel := s.opctx(ctx)
	defer cancel()
	load := func(ctx context.Context) (*policy.Approval, []byte, error) {
		a, raw, err := s.getApproval(ctx, id)
		return a, []byte(raw), err
	}
	keys := []string{s.keys.approval(id), s.keys.approvalsPending(), s.keys.approvalsExecuting()}
	swap := func(ctx context.Context, old []byte, next *policy.Approval, encoded []byte) (bool, error) {
		var res int
		err := s.durable(ctx, keys[0], func(c *goredis.Conn) (err error) {
			res, err = swapApproval.Run(ctx, c, keys,
				old, encoded, s.approvalTTL(next), string(next.Status), expiryScore(next), id).Int()
			return err
		})
		if errors.Is(err, ErrNotReplicated) && res == 1 {
			s.undoUpdate(ctx, id, keys, string(old), string(encoded))
		}
		if err != nil {
			return false, fmt.Errorf("redis: update approval %s: %w", id, err)
		}
		if res == -1 {
			return false, fmt.Errorf("approval %q: %w", id, bot.ErrNotFound)
		}
		return res == 1, nil
	}
	a, err := store.UpdateApproval(ctx, id, step, load, swap)
	if errors.Is(err, store.ErrContention) {
		return nil, fmt.Errorf("redis: %w", err)
	}
	return a, err
}

// undoUpdate puts back the record an unreplicated update replaced, if it
// is still the update's: the caller was told the update failed, so the
// master should not keep it either (an unacknowledged claim left in place
// would block the approval until the settle sweep). Best effort.
func (s *Store) undoUpdate(ctx context.Context, id string, keys []string, old, next string) {
	var prev policy.Approval
	if err := json.Unmarshal([]byte(old), &prev); err != nil {
		return
	}
	ctx = context.WithoutCancel(ctx)
	if _, err := swapApproval.Run(ctx, s.rdb, keys,
		next, old, s.approvalTTL(&prev), string(prev.Status), expiryScore(&prev), id).Result(); err != nil {
		s.log.Warn("redis: undo unreplicated approval update", "approval", id, "err", err)
	}
}

// ListPending implements bot.ApprovalStore. Index entries whose record is
// gone (expired out of Redis) or no longer pending are pruned on the way.
func (s *Store) ListPending(ctx context.Context) ([]*policy.Approval, error) {
	ctx, cancel := s.opctx(ctx)
	defer cancel()
	idx := s.keys.approvalsPending()
	ids, err := s.rdb.ZRange(ctx, idx, 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("redis: list pending approvals: %w", err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	cmds := make([]*goredis.StringCmd, len(ids))
	_, err = s.rdb.Pipelined(ctx, func(p goredis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.Get(ctx, s.keys.approval(id))
		}
		return nil
	})
	if err != nil && !isNil(err) {
		return nil, fmt.Errorf("redis: list pending approvals: %w", err)
	}
	var out []*policy.Approval
	var stale []any
	for i, c := range cmds {
		raw, err := c.Result()
		if isNil(err) {
			stale = append(stale, ids[i])
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("redis: list pending approvals: %w", err)
		}
		var a policy.Approval
		if err := json.Unmarshal([]byte(raw), &a); err != nil {
			return nil, fmt.Errorf("redis: decode approval %q: %w", ids[i], err)
		}
		if a.Status != policy.ApprovalPending {
			// Only a script that also fixes the index changes a status,
			// so this is a leftover; drop it.
			stale = append(stale, ids[i])
			continue
		}
		out = append(out, &a)
	}
	if len(stale) > 0 {
		if err := s.rdb.ZRem(ctx, idx, stale...).Err(); err != nil {
			s.log.Warn("redis: prune pending approval index", "err", err)
		}
	}
	// The index scores are milliseconds; this restores the exact order.
	store.SortByExpiry(out)
	return out, nil
}

// ListExecuting implements bot.ApprovalStore. Index entries whose record is
// gone or no longer executing are pruned on the way.
func (s *Store) ListExecuting(ctx context.Context) ([]*policy.Approval, error) {
	ctx, cancel := s.opctx(ctx)
	defer cancel()
	idx := s.keys.approvalsExecuting()
	ids, err := s.rdb.SMembers(ctx, idx).Result()
	if err != nil {
		return nil, fmt.Errorf("redis: list executing approvals: %w", err)
	}
	var out []*policy.Approval
	var stale []any
	for _, id := range ids {
		a, _, err := s.getApproval(ctx, id)
		if errors.Is(err, bot.ErrNotFound) {
			stale = append(stale, id)
			continue
		}
		if err != nil {
			return nil, err
		}
		if a.Status != policy.ApprovalExecuting {
			stale = append(stale, id)
			continue
		}
		out = append(out, a)
	}
	if len(stale) > 0 {
		if err := s.rdb.SRem(ctx, idx, stale...).Err(); err != nil {
			s.log.Warn("redis: prune executing approval index", "err", err)
		}
	}
	return out, nil
}

package redis

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	goredis "github.com/redis/go-redis/v9"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/bot"
)

// A session is two keys: a hash with the session minus its history (field
// "session"), the history's length ("hlen") and a digest of the history
// ("hdigest"); and a list with one JSON message per entry. Saving a session
// whose stored history is a prefix of the new one only appends the new
// messages; anything else (compaction, a shorter history) rewrites the list.
// The digest is what tells the two apart without reading the stored
// messages back.

const (
	fieldSession = "session"
	fieldHLen    = "hlen"
	fieldHDigest = "hdigest"
)

// appendHistory appends messages when the stored history is still the
// prefix the caller saw. KEYS: meta, history. ARGV: expected hlen,
// expected digest, new hlen, new digest, session JSON, ttl ms, messages...
// Returns 1 when it appended, 0 when the prefix changed.
var appendHistory = goredis.NewScript(`
local cur = redis.call('HMGET', KEYS[1], 'hlen', 'hdigest')
if cur[1] ~= ARGV[1] or cur[2] ~= ARGV[2] then return 0 end
if redis.call('LLEN', KEYS[2]) ~= tonumber(ARGV[1]) then return 0 end
for i = 7, #ARGV do redis.call('RPUSH', KEYS[2], ARGV[i]) end
redis.call('HSET', KEYS[1], 'session', ARGV[5], 'hlen', ARGV[3], 'hdigest', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[6])
redis.call('PEXPIRE', KEYS[2], ARGV[6])
return 1
`)

// historyDigests returns the chained digest after each message: digest[i]
// covers messages[:i]. Chaining makes any prefix's digest cheap to compare.
func historyDigests(msgs [][]byte) []string {
	out := make([]string, len(msgs)+1)
	prev := ""
	out[0] = prev
	for i, m := range msgs {
		h := sha256.New()
		h.Write([]byte(prev))
		h.Write([]byte{'\n'})
		h.Write(m)
		prev = hex.EncodeToString(h.Sum(nil))
		out[i+1] = prev
	}
	return out
}

// LoadSession implements bot.SessionStore.
// SessionExists asks for the session hash's session field only: one
// round trip, no history read.
func (s *Store) SessionExists(ctx context.Context, key string) (bool, error) {
	ctx, cancel := s.opctx(ctx)
	defer cancel()
	n, err := s.rdb.HExists(ctx, s.keys.sessionMeta(key), fieldSession).Result()
	if err != nil {
		return false, fmt.Errorf("redis: session %q exists: %w", key, err)
	}
	return n, nil
}

func (s *Store) LoadSession(ctx context.Context, key string) (*agent.Session, error) {
	ctx, cancel := s.opctx(ctx)
	defer cancel()
	var meta *goredis.MapStringStringCmd
	var hist *goredis.StringSliceCmd
	_, err := s.rdb.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		meta = p.HGetAll(ctx, s.keys.sessionMeta(key))
		hist = p.LRange(ctx, s.keys.sessionHistory(key), 0, -1)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("redis: load session %q: %w", key, err)
	}
	fields := meta.Val()
	raw, ok := fields[fieldSession]
	if !ok {
		return nil, fmt.Errorf("session %q: %w", key, bot.ErrNotFound)
	}
	var sess agent.Session
	if err := json.Unmarshal([]byte(raw), &sess); err != nil {
		return nil, fmt.Errorf("redis: decode session %q: %w", key, err)
	}
	msgs := hist.Val()
	if n, err := strconv.Atoi(fields[fieldHLen]); err != nil || n != len(msgs) {
		return nil, fmt.Errorf("redis: session %q: history has %d messages, metadata says %q", key, len(msgs), fields[fieldHLen])
	}
	for i, m := range msgs {
		var msg agent.Message
		if err := json.Unmarshal([]byte(m), &msg); err != nil {
			return nil, fmt.Errorf("redis: decode session %q message %d: %w", key, i, err)
		}
		sess.History = append(sess.History, msg)
	}
	return &sess, nil
}

// SaveSession implements bot.SessionStore. It refreshes the session's TTL.
func (s *Store) SaveSession(ctx context.Context, sess *agent.Session) error {
	if sess == nil || sess.Key == "" {
		return errors.New("redis: save session: no session key")
	}
	key := sess.Key
	// The hash holds everything but the messages. An empty history is
	// kept as [] and a missing one as null, so a load returns what was
	// saved.
	head := *sess
	if sess.History != nil {
		head.History = []agent.Message{}
	}
	rawHead, err := json.Marshal(&head)
	if err != nil {
		return fmt.Errorf("redis: encode session %q: %w", key, err)
	}
	msgs := make([][]byte, len(sess.History))
	for i := range sess.History {
		if msgs[i], err = json.Marshal(&sess.History[i]); err != nil {
			return fmt.Errorf("redis: encode session %q message %d: %w", key, i, err)
		}
	}
	digests := historyDigests(msgs)
	ttl := ttlMillis(s.opt.SessionTTL)

	ctx, cancel := s.opctx(ctx)
	defer cancel()
	metaKey, histKey := s.keys.sessionMeta(key), s.keys.sessionHistory(key)

	stored, err := s.rdb.HMGet(ctx, metaKey, fieldHLen, fieldHDigest).Result()
	if err != nil {
		return fmt.Errorf("redis: save session %q: %w", key, err)
	}
	if n, ok := storedPrefix(stored, digests); ok {
		args := make([]any, 0, 6+len(msgs)-n)
		args = append(args, n, digests[n], len(msgs), digests[len(msgs)], rawHead, ttl)
		for _, m := range msgs[n:] {
			args = append(args, m)
		}
		done, err := appendHistory.Run(ctx, s.rdb, []string{metaKey, histKey}, args...).Int()
		if err != nil {
			return fmt.Errorf("redis: save session %q: %w", key, err)
		}
		if done == 1 {
			return nil
		}
		// Someone else saved in between: fall through to a full rewrite,
		// last writer wins as with any save.
	}

	_, err = s.rdb.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		p.Del(ctx, histKey)
		if len(msgs) > 0 {
			vals := make([]any, len(msgs))
			for i, m := range msgs {
				vals[i] = m
			}
			p.RPush(ctx, histKey, vals...)
			p.PExpire(ctx, histKey, s.opt.SessionTTL)
		}
		p.Del(ctx, metaKey)
		p.HSet(ctx, metaKey, fieldSession, rawHead, fieldHLen, len(msgs), fieldHDigest, digests[len(msgs)])
		p.PExpire(ctx, metaKey, s.opt.SessionTTL)
		return nil
	})
	if err != nil {
		return fmt.Errorf("redis: save session %q: %w", key, err)
	}
	return nil
}

// storedPrefix reports whether the stored history (hlen and digest from
// HMGET) is a prefix of the new one, and its length.
func storedPrefix(stored []any, digests []string) (int, bool) {
	if len(stored) != 2 {
		return 0, false
	}
	hlen, _ := stored[0].(string)
	digest, _ := stored[1].(string)
	n, err := strconv.Atoi(hlen)
	if err != nil || n < 0 || n >= len(digests) {
		return 0, false
	}
	return n, digests[n] == digest
}

package redis

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

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

// saveSessionScript stores a session. KEYS: meta, history[, lock]. ARGV:
// session JSON, new hlen, new digest, ttl ms, expected hlen ("" to
// rewrite), expected digest, lock token, lock ttl ms, messages... With an
// expected hlen it appends the messages if the stored history is still
// that prefix, and returns 0 without writing if it is not; without one it
// replaces the whole history. With a lock key it first checks that the
// token still holds the lock and renews it, and returns -1 without writing
// if it does not (the save is fenced by the lock). Returns 1 when saved.
var saveSessionScript = goredis.NewScript(`
if KEYS[3] then
  if redis.call('GET', KEYS[3]) ~= ARGV[7] then return -1 end
  redis.call('PEXPIRE', KEYS[3], ARGV[8])
end
if ARGV[5] ~= '' then
  local cur = redis.call('HMGET', KEYS[1], 'hlen', 'hdigest')
  if cur[1] ~= ARGV[5] or cur[2] ~= ARGV[6] then return 0 end
  if redis.call('LLEN', KEYS[2]) ~= tonumber(ARGV[5]) then return 0 end
else
  redis.call('DEL', KEYS[1], KEYS[2])
end
for i = 9, #ARGV, 512 do
  redis.call('RPUSH', KEYS[2], unpack(ARGV, i, math.min(i + 511, #ARGV)))
end
redis.call('HSET', KEYS[1], 'session', ARGV[1], 'hlen', ARGV[2], 'hdigest', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return 1
`)

// historyHints remembers, per session key, the history length and digest
// this replica last loaded or saved, so that a save can append without
// first reading them back (one round trip instead of two). A hint is only
// a guess: the save script checks it against what is stored, and a wrong
// one (another replica saved since) costs a rewrite, never a wrong
// history. It is bounded; a missing hint costs the read.
type historyHints struct {
	mu sync.Mutex
	m  map[string]historyHint
}

type historyHint struct {
	n      int // noHistory: no session was stored
	digest string
}

// noHistory is the hint of a session that was not stored when this
// replica last looked: its save rewrites, as after reading nothing.
const noHistory = -1

// maxHistoryHints bounds the hints kept (about 150 bytes each).
const maxHistoryHints = 16384

func (h *historyHints) get(key string) (historyHint, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	v, ok := h.m[key]
	return v, ok
}

func (h *historyHints) put(key string, v historyHint) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = make(map[string]historyHint)
	}
	if _, ok := h.m[key]; !ok && len(h.m) >= maxHistoryHints {
		for k := range h.m { // drop any one: a missing hint costs a read
			delete(h.m, k)
			break
		}
	}
	h.m[key] = v
}

func (h *historyHints) forget(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.m, key)
}

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
	return s.decodeSession(key, meta.Val(), hist.Val())
}

// decodeSession rebuilds the session from its hash and its history list;
// ErrNotFound when the hash has no session.
func (s *Store) decodeSession(key string, fields map[string]string, msgs []string) (*agent.Session, error) {
	raw, ok := fields[fieldSession]
	if !ok {
		// Nothing stored: the first save writes the whole history
		// without reading what is stored first.
		s.hints.put(key, historyHint{n: noHistory})
		return nil, fmt.Errorf("session %q: %w", key, bot.ErrNotFound)
	}
	var sess agent.Session
	if err := json.Unmarshal([]byte(raw), &sess); err != nil {
		return nil, fmt.Errorf("redis: decode session %q: %w", key, err)
	}
	if n, err := strconv.Atoi(fields[fieldHLen]); err != nil || n != len(msgs) {
		return nil, fmt.Errorf("redis: session %q: history has %d messages, metadata says %q", key, len(msgs), fields[fieldHLen])
	}
	s.hints.put(key, historyHint{n: len(msgs), digest: fields[fieldHDigest]})
	for i, m := range msgs {
		var msg agent.Message
		if err := json.Unmarshal([]byte(m), &msg); err != nil {
			return nil, fmt.Errorf("redis: decode session %q message %d: %w", key, i, err)
		}
		sess.History = append(sess.History, msg)
	}
	return &sess, nil
}

// LockAndLoad implements bot.SessionLocker. On a single Redis (or
// Sentinel) one transaction takes the lock and reads the session, so the
// read sees the session as the lock found it; on a Cluster the lock and
// the session live in different hash slots: Lock, then LoadSession.
func (s *Store) LockAndLoad(ctx context.Context, key string, ttl time.Duration, sessionKey string) (bot.Lock, *agent.Session, error) {
	if s.cluster != nil {
		l, err := s.Lock(ctx, key, ttl)
		if err != nil {
			return nil, nil, err
		}
		sess, err := s.LoadSession(ctx, sessionKey)
		return s.loaded(ctx, l, sess, err)
	}
	l, err := s.newLock(key, ttl)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := s.opctx(ctx)
	defer cancel()
	var set *goredis.StatusCmd
	var meta *goredis.MapStringStringCmd
	var hist *goredis.StringSliceCmd
	_, err = s.rdb.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		set = p.SetArgs(ctx, l.key, l.token, goredis.SetArgs{Mode: "NX", TTL: time.Duration(ttlMillis(ttl)) * time.Millisecond})
		meta = p.HGetAll(ctx, s.keys.sessionMeta(sessionKey))
		hist = p.LRange(ctx, s.keys.sessionHistory(sessionKey), 0, -1)
		return nil
	})
	switch {
	case isNil(set.Err()):
		return nil, nil, fmt.Errorf("lock %q: %w", key, bot.ErrLocked)
	case err != nil:
		// The transaction may have run: release what may be ours.
		_ = l.Unlock(context.WithoutCancel(ctx))
		return nil, nil, fmt.Errorf("redis: lock %q and load session %q: %w", key, sessionKey, err)
	}
	sess, err := s.decodeSession(sessionKey, meta.Val(), hist.Val())
	return s.loaded(ctx, l, sess, err)
}

// loaded finishes LockAndLoad: a session that is not there is nil, and a
// session that cannot be read gives the lock back.
func (s *Store) loaded(ctx context.Context, l bot.Lock, sess *agent.Session, err error) (bot.Lock, *agent.Session, error) {
	switch {
	case err == nil:
		return l, sess, nil
	case errors.Is(err, bot.ErrNotFound):
		return l, nil, nil
	}
	if uerr := l.Unlock(context.WithoutCancel(ctx)); uerr != nil {
		s.log.Warn("redis: release a lock after a failed session load", "err", uerr)
	}
	return nil, nil, err
}

// SaveSession implements bot.SessionStore. It refreshes the session's TTL.
func (s *Store) SaveSession(ctx context.Context, sess *agent.Session) error {
	return s.saveSession(ctx, sess, nil)
}

// RenewAndSave implements bot.FencedLock. On a single Redis (or Sentinel)
// one script checks the lock, renews it and saves; on a Cluster the lock
// and the session live in different hash slots, so the lock is renewed
// first and the session saved after (two round trips, as Renew then
// SaveSession).
func (l *lock) RenewAndSave(ctx context.Context, sess *agent.Session) error {
	return l.s.saveSession(ctx, sess, l)
}

// saveSession saves sess, fenced by l when l is not nil. A history whose
// stored version is a prefix of the new one is appended to; anything else
// (compaction, a shorter history, another replica's save) is rewritten.
func (s *Store) saveSession(ctx context.Context, sess *agent.Session, l *lock) error {
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
	keys := []string{s.keys.sessionMeta(key), s.keys.sessionHistory(key)}
	var token string
	var lockTTL int64
	if l != nil {
		if s.cluster != nil {
			// Another hash slot: renew on its own, then save.
			if err := l.Renew(ctx); err != nil {
				return fmt.Errorf("save session %q: %w", key, err)
			}
		} else {
			keys = append(keys, l.key)
			token, lockTTL = l.token, ttlMillis(l.ttl)
		}
	}
	hint, ok := s.hints.get(key)
	if !ok {
		// Nothing known here: read what is stored (one more round trip).
		stored, err := s.rdb.HMGet(ctx, keys[0], fieldHLen, fieldHDigest).Result()
		if err != nil {
			return fmt.Errorf("redis: save session %q: %w", key, err)
		}
		hint, ok = storedHint(stored)
	}
	run := func(appendFrom int) (int, error) {
		expect, expectDigest, from := "", "", 0
		if appendFrom >= 0 {
			expect, expectDigest, from = strconv.Itoa(appendFrom), digests[appendFrom], appendFrom
		}
		args := make([]any, 0, 8+len(msgs)-from)
		args = append(args, rawHead, len(msgs), digests[len(msgs)], ttl, expect, expectDigest, token, lockTTL)
		for _, m := range msgs[from:] {
			args = append(args, m)
		}
		// A deferred write of this session's run (its index entry) goes
		// first, in the same round trip (see batchedLater).
		if d := s.takeDeferred(key); d != nil {
			var save *goredis.Cmd
			_, _ = s.rdb.Pipelined(ctx, func(p goredis.Pipeliner) error {
				_ = p.Process(ctx, d.cmd)
				save = saveSessionScript.EvalSha(ctx, p, keys, args...)
				return nil
			})
			s.logDeferred(d)
			if !goredis.HasErrorPrefix(save.Err(), "NOSCRIPT") {
				return save.Int()
			}
		}
		return saveSessionScript.Run(ctx, s.rdb, keys, args...).Int()
	}
	res := 0
	if ok && hint.n >= 0 && hint.n <= len(msgs) && digests[hint.n] == hint.digest {
		res, err = run(hint.n)
	}
	if err == nil && res == 0 {
		// No known prefix, or someone else saved in between: rewrite,
		// last writer wins as with any save.
		res, err = run(-1)
	}
	switch {
	case err != nil:
		s.hints.forget(key)
		return fmt.Errorf("redis: save session %q: %w", key, err)
	case res == -1:
		s.hints.forget(key)
		return fmt.Errorf("save session %q under lock %q: %w", key, l.name, bot.ErrLocked)
	}
	s.hints.put(key, historyHint{n: len(msgs), digest: digests[len(msgs)]})
	return nil
}

// storedHint reads the hlen and digest HMGET returned.
func storedHint(stored []any) (historyHint, bool) {
	if len(stored) != 2 {
		return historyHint{}, false
	}
	hlen, _ := stored[0].(string)
	digest, _ := stored[1].(string)
	n, err := strconv.Atoi(hlen)
	if err != nil || n < 0 {
		return historyHint{}, false
	}
	return historyHint{n: n, digest: digest}, true
}

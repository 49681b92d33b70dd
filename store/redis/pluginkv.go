package redis

import (
	"context"
	"fmt"
	"regexp"
	"slices"

	goredis "github.com/redis/go-redis/v9"

	"github.com/vigilops/vigil/bot"
)

// Limits of one plugin's namespace (SPEC T5). A plugin is an untrusted
// process; these keep it from filling Redis.
const (
	PluginMaxEntries  = 1000
	PluginMaxKeyLen   = 256
	PluginMaxValueLen = 64 << 10
)

// pluginName is what a plugin may be called: its name becomes part of a
// key and of a hash tag.
var pluginName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// PluginKV is one plugin's key-value namespace: a hash of its own. The
// plugin sees only its own keys; nothing here names another plugin.
type PluginKV struct {
	s      *Store
	plugin string
	key    string
}

// PluginKV returns the namespace of plugin.
func (s *Store) PluginKV(plugin string) (*PluginKV, error) {
	if !pluginName.MatchString(plugin) {
		return nil, fmt.Errorf("redis: plugin namespace: invalid plugin name %q", plugin)
	}
	return &PluginKV{s: s, plugin: plugin, key: s.keys.pluginKV(plugin)}, nil
}

// setPluginKey sets a field unless that would add one past the limit.
// KEYS: hash. ARGV: field, value, max entries. Returns 1 if set, 0 if full.
var setPluginKey = goredis.NewScript(`
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 and redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[3]) then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
`)

// Get returns the value under key, or an error matching bot.ErrNotFound.
func (p *PluginKV) Get(ctx context.Context, key string) ([]byte, error) {
	ctx, cancel := p.s.opctx(ctx)
	defer cancel()
	v, err := p.s.rdb.HGet(ctx, p.key, key).Bytes()
	if isNil(err) {
		return nil, fmt.Errorf("plugin %s key %q: %w", p.plugin, key, bot.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("redis: plugin %s get %q: %w", p.plugin, key, err)
	}
	return v, nil
}

// Set stores value under key. It fails with ErrQuota for an empty or
// oversized key, an oversized value, or a namespace already holding
// PluginMaxEntries other keys.
func (p *PluginKV) Set(ctx context.Context, key string, value []byte) error {
	switch {
	case key == "" || len(key) > PluginMaxKeyLen:
		return fmt.Errorf("plugin %s key of %d bytes (1 to %d allowed): %w", p.plugin, len(key), PluginMaxKeyLen, ErrQuota)
	case len(value) > PluginMaxValueLen:
		return fmt.Errorf("plugin %s value of %d bytes (%d allowed): %w", p.plugin, len(value), PluginMaxValueLen, ErrQuota)
	}
	ctx, cancel := p.s.opctx(ctx)
	defer cancel()
	ok, err := setPluginKey.Run(ctx, p.s.rdb, []string{p.key}, key, value, PluginMaxEntries).Int()
	if err != nil {
		return fmt.Errorf("redis: plugin %s set %q: %w", p.plugin, key, err)
	}
	if ok != 1 {
		return fmt.Errorf("plugin %s holds %d keys: %w", p.plugin, PluginMaxEntries, ErrQuota)
	}
	return nil
}

// Delete removes key; deleting a missing key is not an error.
func (p *PluginKV) Delete(ctx context.Context, key string) error {
	ctx, cancel := p.s.opctx(ctx)
	defer cancel()
	if err := p.s.rdb.HDel(ctx, p.key, key).Err(); err != nil {
		return fmt.Errorf("redis: plugin %s delete %q: %w", p.plugin, key, err)
	}
	return nil
}

// Keys lists the namespace's keys in order.
func (p *PluginKV) Keys(ctx context.Context) ([]string, error) {
	ctx, cancel := p.s.opctx(ctx)
	defer cancel()
	ks, err := p.s.rdb.HKeys(ctx, p.key).Result()
	if err != nil {
		return nil, fmt.Errorf("redis: plugin %s keys: %w", p.plugin, err)
	}
	slices.Sort(ks)
	return ks, nil
}

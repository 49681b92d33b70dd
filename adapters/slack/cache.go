package slack

import (
	"container/list"
	"sync"
	"time"
)

// ttlCache is a bounded map whose entries expire. When full, the oldest
// entry goes first. It is safe for concurrent use.
type ttlCache[V any] struct {
	mu    sync.Mutex
	ttl   time.Duration
	max   int
	now   func() time.Time
	items map[string]*list.Element
	order *list.List // front = oldest
}

type ttlEntry[V any] struct {
	key     string
	value   V
	expires time.Time
}

func newTTLCache[V any](ttl time.Duration, max int) *ttlCache[V] {
	return &ttlCache[V]{ttl: ttl, max: max, now: time.Now, items: map[string]*list.Element{}, order: list.New()}
}

// get returns a live entry.
func (c *ttlCache[V]) get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var zero V
	el, ok := c.items[key]
	if !ok {
		return zero, false
	}
	e := el.Value.(*ttlEntry[V])
	if c.now().After(e.expires) {
		c.order.Remove(el)
		delete(c.items, key)
		return zero, false
	}
	return e.value, true
}

// put stores or refreshes an entry.
func (c *ttlCache[V]) put(key string, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.putLocked(key, v)
}

func (c *ttlCache[V]) putLocked(key string, v V) {
	if el, ok := c.items[key]; ok {
		c.order.Remove(el)
	}
	c.items[key] = c.order.PushBack(&ttlEntry[V]{key: key, value: v, expires: c.now().Add(c.ttl)})
	for c.order.Len() > c.max {
		oldest := c.order.Front()
		c.order.Remove(oldest)
		delete(c.items, oldest.Value.(*ttlEntry[V]).key)
	}
}

// add stores key unless a live entry exists; it reports whether it did.
func (c *ttlCache[V]) add(key string, v V) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok && !c.now().After(el.Value.(*ttlEntry[V]).expires) {
		return false
	}
	c.putLocked(key, v)
	return true
}

// remove forgets key.
func (c *ttlCache[V]) remove(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		c.order.Remove(el)
		delete(c.items, key)
	}
}

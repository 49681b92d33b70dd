package matrix

import "sync"

// bounded is a small concurrency-safe map that forgets its oldest entries
// beyond a fixed size, for caches that must not grow with traffic.
type bounded[K comparable, V any] struct {
	mu    sync.Mutex
	max   int
	items map[K]V
	order []K // insertion order; ring of at most max keys
	head  int
}

func newBounded[K comparable, V any](max int) *bounded[K, V] {
	return &bounded[K, V]{max: max, items: make(map[K]V, max)}
}

func (b *bounded[K, V]) get(k K) (V, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	v, ok := b.items[k]
	return v, ok
}

func (b *bounded[K, V]) put(k K, v V) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.items[k]; ok {
		b.items[k] = v
		return
	}
	if len(b.order) < b.max {
		b.order = append(b.order, k)
	} else {
		delete(b.items, b.order[b.head])
		b.order[b.head] = k
		b.head = (b.head + 1) % b.max
	}
	b.items[k] = v
}

package expr

import (
	"sync"
	"sync/atomic"
)

// cache is a bounded map from expression text to what it compiled into, shared by every goroutine.
// When it is full, adding an entry evicts the least recently used one.
//
// Reads are the hot path (every evaluation looks its path or program up) and take only a read
// lock; recency is an atomic tick per entry rather than a list that every read would have to
// reorder under a write lock. Eviction scans the entries for the oldest tick: it runs only when a
// new text arrives while the cache is full, which in a cluster means templates are churning.
type cache[V any] struct {
	max   int
	clock atomic.Uint64

	mu      sync.RWMutex
	entries map[string]*cacheEntry[V]
}

type cacheEntry[V any] struct {
	value V
	used  atomic.Uint64
}

func newCache[V any](max int) *cache[V] {
	return &cache[V]{max: max, entries: make(map[string]*cacheEntry[V])}
}

// get returns the value cached for key.
func (c *cache[V]) get(key string) (V, bool) {
	c.mu.RLock()
	e, ok := c.entries[key]
	c.mu.RUnlock()
	if !ok {
		var zero V
		return zero, false
	}
	e.used.Store(c.clock.Add(1))
	return e.value, true
}

// add caches value for key unless key is cached already, and returns the cached value, so that
// two goroutines that compiled the same text at once end up sharing one.
func (c *cache[V]) add(key string, value V) V {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[key]; ok {
		return e.value
	}
	if len(c.entries) >= c.max {
		c.evictOldest()
	}
	e := &cacheEntry[V]{value: value}
	e.used.Store(c.clock.Add(1))
	c.entries[key] = e
	return value
}

// evictOldest removes the least recently used entry. The caller holds the write lock.
func (c *cache[V]) evictOldest() {
	var oldest string
	first := true
	var least uint64
	for k, e := range c.entries {
		if u := e.used.Load(); first || u < least {
			oldest, least, first = k, u, false
		}
	}
	delete(c.entries, oldest)
}

// len returns the number of cached entries.
func (c *cache[V]) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.entries)
}

package service

import (
	"sync"
	"time"
)

// ttlCache is a small map whose entries are trusted for ttl of real time.
// When it holds max entries it starts afresh rather than track recency: the
// working set of keys and stores is small.
type ttlCache[V any] struct {
	mu   sync.Mutex
	ttl  time.Duration
	max  int
	now  func() time.Time
	data map[string]cacheEntry[V]
}

type cacheEntry[V any] struct {
	v       V
	expires time.Time
}

func newTTLCache[V any](ttl time.Duration, max int, now func() time.Time) *ttlCache[V] {
	return &ttlCache[V]{ttl: ttl, max: max, now: now, data: map[string]cacheEntry[V]{}}
}

func (c *ttlCache[V]) get(k string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.data[k]
	if !ok || !c.now().Before(e.expires) {
		var zero V
		return zero, false
	}
	return e.v, true
}

func (c *ttlCache[V]) put(k string, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.data) >= c.max {
		c.data = map[string]cacheEntry[V]{}
	}
	c.data[k] = cacheEntry[V]{v: v, expires: c.now().Add(c.ttl)}
}

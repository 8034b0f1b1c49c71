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

// start returns the time to pass to put for a value about to be read.
func (c *ttlCache[V]) start() time.Time { return c.now() }

// put caches v, read from the database at or after readStart, until
// readStart+ttl. Counting from when the read began, not from when it
// returned, keeps a slow read from stretching how stale an entry can be: a
// key revoked while the read that cached it was under way still stops
// working within ttl of the read's start.
func (c *ttlCache[V]) put(k string, v V, readStart time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.data) >= c.max {
		c.data = map[string]cacheEntry[V]{}
	}
	c.data[k] = cacheEntry[V]{v: v, expires: readStart.Add(c.ttl)}
}

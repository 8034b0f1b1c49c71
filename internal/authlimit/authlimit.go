// Package authlimit limits failed authentications: of the API's keys per
// client address, of the dashboard's sign-ins per account and per client.
package authlimit

import (
	"sync"
	"time"

	"github.com/checkoutd/checkoutd/internal/clock"
)

// Limiter limits failures per key (a client, an account): Limit failures
// per Window, refilled evenly (a token bucket of Limit tokens, one back every
// Window/Limit). A key over it is refused before anything is checked, so
// a flood of guesses does not reach the database. Each node counts on
// its own, in memory.
type Limiter[K comparable] struct {
	limit    int
	interval time.Duration // Window / Limit: how often a token comes back
	now      clock.Func
	max      int // keys tracked at most

	mu        sync.Mutex
	full      map[K]time.Time // when each key's bucket is full again
	lastPrune time.Time
}

// New returns a limiter of limit failures per window; limit <= 0 turns it
// off.
func New[K comparable](limit int, window time.Duration, now clock.Func) *Limiter[K] {
	if now == nil {
		now = time.Now
	}
	l := &Limiter[K]{limit: limit, now: now, max: 100000, full: map[K]time.Time{}}
	if limit > 0 {
		l.interval = window / time.Duration(limit)
	}
	return l
}

// Blocked reports whether key has no failure left to spend, and if so
// how long until it has one.
func (l *Limiter[K]) Blocked(key K) (bool, time.Duration) {
	if l == nil || l.limit <= 0 {
		return false, 0
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	// The bucket holds limit - (full-now)/interval tokens; the key is
	// blocked while that is less than one.
	full, ok := l.full[key]
	if !ok {
		return false, 0
	}
	wait := full.Sub(now) - time.Duration(l.limit-1)*l.interval
	if wait > 0 {
		return true, wait
	}
	return false, 0
}

// Fail spends one of key's failures.
func (l *Limiter[K]) Fail(key K) {
	if l == nil || l.limit <= 0 {
		return
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	full, ok := l.full[key]
	if !ok && len(l.full) >= l.max {
		l.prune(now)
		if len(l.full) >= l.max {
			// More keys failing at once than the limiter tracks: let
			// this one go uncounted rather than forget the others, who
			// may be the ones to hold back.
			return
		}
	}
	l.full[key] = later(full, now).Add(l.interval)
}

// prune forgets the keys whose buckets are full again, at most once a
// second so that a full map does not cost a scan on every failure.
func (l *Limiter[K]) prune(now time.Time) {
	if now.Sub(l.lastPrune) < time.Second {
		return
	}
	l.lastPrune = now
	for k, full := range l.full {
		if !full.After(now) {
			delete(l.full, k)
		}
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

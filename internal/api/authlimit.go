package api

import (
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/checkoutd/checkoutd/internal/clock"
)

// FailureLimiter limits failed authentications per client: Limit failures
// per Window, refilled evenly (a token bucket of Limit tokens, one back every
// Window/Limit). A client over it is refused before its key is looked up, so
// a flood of made-up keys does not reach the database. Each node counts on
// its own.
//
// The client is the address of the TCP peer (an IPv6 address by its /64, the
// block one host is usually given). Headers such as X-Forwarded-For are not
// read: any client can write them. Behind a proxy, every client of the proxy
// is one client here.
type FailureLimiter struct {
	limit    int
	interval time.Duration // Window / Limit: how often a token comes back
	now      clock.Func
	max      int // clients tracked at most

	mu        sync.Mutex
	full      map[netip.Prefix]time.Time // when each client's bucket is full again
	lastPrune time.Time
}

// NewFailureLimiter returns a limiter of limit failures per window; limit
// <= 0 turns it off.
func NewFailureLimiter(limit int, window time.Duration, now clock.Func) *FailureLimiter {
	if now == nil {
		now = time.Now
	}
	l := &FailureLimiter{limit: limit, now: now, max: 100000, full: map[netip.Prefix]time.Time{}}
	if limit > 0 {
		l.interval = window / time.Duration(limit)
	}
	return l
}

// Blocked reports whether client has no failure left to spend, and if so
// how long until it has one.
func (l *FailureLimiter) Blocked(client netip.Prefix) (bool, time.Duration) {
	if l == nil || l.limit <= 0 {
		return false, 0
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	// The bucket holds limit - (full-now)/interval tokens; the client is
	// blocked while that is less than one.
	full, ok := l.full[client]
	if !ok {
		return false, 0
	}
	wait := full.Sub(now) - time.Duration(l.limit-1)*l.interval
	if wait > 0 {
		return true, wait
	}
	return false, 0
}

// Fail spends one of client's failures.
func (l *FailureLimiter) Fail(client netip.Prefix) {
	if l == nil || l.limit <= 0 {
		return
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	full, ok := l.full[client]
	if !ok && len(l.full) >= l.max {
		l.prune(now)
		if len(l.full) >= l.max {
			// More clients failing at once than the limiter tracks: let
			// this one go uncounted rather than forget the others, who
			// may be the ones to hold back.
			return
		}
	}
	l.full[client] = later(full, now).Add(l.interval)
}

// prune forgets the clients whose buckets are full again, at most once a
// second so that a full map does not cost a scan on every failure.
func (l *FailureLimiter) prune(now time.Time) {
	if now.Sub(l.lastPrune) < time.Second {
		return
	}
	l.lastPrune = now
	for c, full := range l.full {
		if !full.After(now) {
			delete(l.full, c)
		}
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// clientOf returns the client a request comes from: the peer's address, an
// IPv6 one by its /64.
func clientOf(remoteAddr string) netip.Prefix {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Prefix{} // all unparsable peers are one client
	}
	addr = addr.Unmap().WithZone("")
	bits := 32
	if addr.Is6() {
		bits = 64
	}
	p, _ := addr.Prefix(bits)
	return p
}

package api

import (
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/authlimit"
	"github.com/checkoutd/checkoutd/internal/clock"
	"github.com/checkoutd/checkoutd/internal/web"
)

// FailureLimiter limits failed authentications per client (web.ClientOf).
// A client over it is answered 429 for every credential that cannot be
// valid, decided without a read of the key (a secret of the wrong shape, a
// key this node knows to be unknown or revoked, or one its index of keys
// does not hold: service.BearerKeyMayExist), so that a flood of made-up
// keys does not reach the database; a valid key is never refused by it.
// A nil FailureLimiter limits nothing.
type FailureLimiter struct {
	fails    *authlimit.Limiter[netip.Prefix]
	refused  atomic.Int64
	admitted atomic.Int64
}

// NewFailureLimiter returns a limiter of limit failures per window; limit
// <= 0 turns it off.
func NewFailureLimiter(limit int, window time.Duration, now clock.Func) *FailureLimiter {
	return &FailureLimiter{fails: authlimit.New[netip.Prefix](limit, window, now)}
}

// FailureStats are what a FailureLimiter did since it was made: requests
// refused over the limit, and requests admitted over it (a valid key from
// an address whose other requests spent the limit).
type FailureStats struct{ Refused, Admitted int64 }

// Stats returns the limiter's counts.
func (l *FailureLimiter) Stats() FailureStats {
	if l == nil {
		return FailureStats{}
	}
	return FailureStats{Refused: l.refused.Load(), Admitted: l.admitted.Load()}
}

func (l *FailureLimiter) blocked(client netip.Prefix) (bool, time.Duration) {
	if l == nil {
		return false, 0
	}
	return l.fails.Blocked(client)
}

func (l *FailureLimiter) fail(client netip.Prefix) {
	if l != nil {
		l.fails.Fail(client)
	}
}

// refuse counts a refusal over the limit and returns its answer: 429
// rate_limited, with Retry-After for the time until the client has a
// failure to spend again.
func (l *FailureLimiter) refuse(wait time.Duration) error {
	if l != nil {
		l.refused.Add(1)
	}
	secs := max(1, int((wait+time.Second-1)/time.Second))
	err := checkout.Errorf(checkout.ERateLimited,
		"Too many requests with invalid API keys from this address; retry after %d seconds.", secs)
	err.RetryAfter = time.Duration(secs) * time.Second
	return err
}

func (l *FailureLimiter) admit() {
	if l != nil {
		l.admitted.Add(1)
	}
}

func clientOf(remoteAddr string) netip.Prefix { return web.ClientOf(remoteAddr) }

package api

import (
	"net/netip"
	"time"

	"github.com/checkoutd/checkoutd/internal/authlimit"
	"github.com/checkoutd/checkoutd/internal/clock"
	"github.com/checkoutd/checkoutd/internal/web"
)

// FailureLimiter limits failed authentications per client (web.ClientOf): a
// client over it is refused before its key is looked up, so a flood of
// made-up keys does not reach the database.
type FailureLimiter = authlimit.Limiter[netip.Prefix]

// NewFailureLimiter returns a limiter of limit failures per window; limit
// <= 0 turns it off.
func NewFailureLimiter(limit int, window time.Duration, now clock.Func) *FailureLimiter {
	return authlimit.New[netip.Prefix](limit, window, now)
}

func clientOf(remoteAddr string) netip.Prefix { return web.ClientOf(remoteAddr) }

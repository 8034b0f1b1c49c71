package api

import (
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/clock"
	"github.com/checkoutd/checkoutd/internal/web"
)

// RateLimiter is a token bucket per API key: Rate requests per second on
// average, bursts of up to Burst. Each node counts on its own, so N nodes
// admit up to N times the rate (docs/operations.md).
type RateLimiter struct {
	rate  float64
	burst float64
	now   clock.Func

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

// NewRateLimiter returns a limiter; rate <= 0 turns limiting off.
func NewRateLimiter(rate float64, burst int, now clock.Func) *RateLimiter {
	if now == nil {
		now = time.Now
	}
	return &RateLimiter{rate: rate, burst: float64(max(burst, 1)), now: now, buckets: map[string]*bucket{}}
}

// Allow takes a token from key's bucket. When there is none it returns false
// and how long until there is one.
func (l *RateLimiter) Allow(key string) (bool, time.Duration) {
	if l == nil || l.rate <= 0 {
		return true, 0
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[key]
	if !ok {
		b = &bucket{tokens: l.burst, last: now}
		l.buckets[key] = b
	}
	if elapsed := now.Sub(b.last).Seconds(); elapsed > 0 {
		b.tokens = math.Min(l.burst, b.tokens+elapsed*l.rate)
		b.last = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	wait := time.Duration((1 - b.tokens) / l.rate * float64(time.Second))
	return false, wait
}

// Limit answers 429 rate_limited, with Retry-After in whole seconds, when
// the request's key is over its rate.
func Limit(l *RateLimiter, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := KeyFrom(r.Context())
		if ok, wait := l.Allow(key.ID); !ok {
			secs := max(1, int(math.Ceil(wait.Seconds())))
			err := checkout.Errorf(checkout.ERateLimited, "Too many requests with this API key; retry after %d seconds.", secs)
			err.RetryAfter = time.Duration(secs) * time.Second
			web.WriteError(w, r, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

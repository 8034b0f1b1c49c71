package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/clock"
	"github.com/checkoutd/checkoutd/internal/web"
)

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// allowN calls Allow n times and returns how many were allowed.
func allowN(l *RateLimiter, key string, n int) int {
	ok := 0
	for range n {
		if allowed, _ := l.Allow(key); allowed {
			ok++
		}
	}
	return ok
}

func TestRateLimiterBurstAndRefill(t *testing.T) {
	clk := clock.NewFake(t0)
	l := NewRateLimiter(10, 3, clk.Now) // a token every 100 ms
	if got := allowN(l, "k", 3); got != 3 {
		t.Fatalf("a fresh bucket allowed %d of 3; want the whole burst", got)
	}
	steps := []struct {
		advance time.Duration
		ok      bool
		wait    time.Duration
	}{
		{0, false, 100 * time.Millisecond},
		{40 * time.Millisecond, false, 60 * time.Millisecond},
		{60 * time.Millisecond, true, 0}, // a whole token now
		{0, false, 100 * time.Millisecond},
		{250 * time.Millisecond, true, 0}, // 2.5 tokens
		{0, true, 0},
		{0, false, 50 * time.Millisecond},
	}
	for i, s := range steps {
		clk.Advance(s.advance)
		ok, wait := l.Allow("k")
		if ok != s.ok || !near(wait, s.wait) {
			t.Errorf("step %d (+%v): Allow = %v, %v; want %v, %v", i, s.advance, ok, wait, s.ok, s.wait)
		}
	}
	// A long pause refills to the burst, not beyond.
	clk.Advance(time.Hour)
	if got := allowN(l, "k", 10); got != 3 {
		t.Errorf("after an hour's pause, %d of 10 allowed; want the burst of 3", got)
	}
}

// near allows for float rounding in a wait.
func near(a, b time.Duration) bool {
	d := a - b
	return d > -time.Microsecond && d < time.Microsecond
}

func TestRateLimiterPerKey(t *testing.T) {
	clk := clock.NewFake(t0)
	l := NewRateLimiter(1, 2, clk.Now)
	if got := allowN(l, "a", 5); got != 2 {
		t.Errorf("key a: %d of 5 allowed; want 2", got)
	}
	if got := allowN(l, "b", 5); got != 2 {
		t.Errorf("key b after a ran dry: %d of 5 allowed; want its own 2", got)
	}
	clk.Advance(time.Second)
	if got := allowN(l, "a", 5); got != 1 {
		t.Errorf("key a a second later: %d allowed; want 1", got)
	}
}

func TestRateLimiterOff(t *testing.T) {
	for _, rate := range []float64{0, -1} {
		l := NewRateLimiter(rate, 1, clock.NewFake(t0).Now)
		for range 1000 {
			if ok, wait := l.Allow("k"); !ok || wait != 0 {
				t.Fatalf("rate %v: Allow = %v, %v; want always allowed", rate, ok, wait)
			}
		}
	}
	var nilLimiter *RateLimiter
	if ok, _ := nilLimiter.Allow("k"); !ok {
		t.Errorf("a nil limiter refused a request")
	}
}

func TestRateLimiterBurstAtLeastOne(t *testing.T) {
	l := NewRateLimiter(1, 0, clock.NewFake(t0).Now)
	if got := allowN(l, "k", 3); got != 1 {
		t.Errorf("burst 0: %d of 3 allowed; want 1 (a burst is at least one)", got)
	}
}

// A clock that steps back neither refills nor breaks the bucket.
func TestRateLimiterClockStepsBack(t *testing.T) {
	clk := clock.NewFake(t0)
	l := NewRateLimiter(1, 1, clk.Now)
	allowN(l, "k", 1)
	clk.Advance(-time.Hour)
	if ok, wait := l.Allow("k"); ok || wait != time.Second {
		t.Errorf("after the clock stepped back: Allow = %v, %v; want false, 1s", ok, wait)
	}
	clk.Advance(time.Hour + time.Second)
	if ok, _ := l.Allow("k"); !ok {
		t.Errorf("a second after the last refill: refused")
	}
}

// Concurrent requests of one key never take more than the bucket holds.
func TestRateLimiterConcurrent(t *testing.T) {
	l := NewRateLimiter(1, 100, clock.NewFake(t0).Now)
	var allowed atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			allowed.Add(int32(allowN(l, "k", 50)))
		}()
	}
	wg.Wait()
	if got := allowed.Load(); got != 100 {
		t.Errorf("400 concurrent requests: %d allowed; want the burst of 100", got)
	}
}

func TestLimitRetryAfter(t *testing.T) {
	tests := []struct {
		rate       float64
		retryAfter string
	}{
		{100, "1"}, // 10 ms, rounded up to a whole second
		{1, "1"},
		{0.5, "2"},
		{0.3, "4"}, // 3.33 s
	}
	for _, tt := range tests {
		clk := clock.NewFake(t0)
		l := NewRateLimiter(tt.rate, 1, clk.Now)
		calls := 0
		h := Limit(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			calls++
			w.WriteHeader(http.StatusNoContent)
		}))
		key := &checkout.APIKey{ID: "key_1"}
		do := func() *httptest.ResponseRecorder {
			r := httptest.NewRequest("GET", "/v1/x", nil)
			r = r.WithContext(web.WithID(context.WithValue(r.Context(), keyCtx{}, key), "req_1"))
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			return w
		}
		if w := do(); w.Code != http.StatusNoContent {
			t.Fatalf("rate %v: first request = %d; want it through", tt.rate, w.Code)
		}
		w := do()
		if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != tt.retryAfter {
			t.Errorf("rate %v: second request = %d, Retry-After %q; want 429, %q", tt.rate, w.Code, w.Header().Get("Retry-After"), tt.retryAfter)
		}
		var env struct {
			OK    bool `json:"ok"`
			Error struct {
				Code      string `json:"code"`
				Message   string `json:"message"`
				RequestID string `json:"request_id"`
			} `json:"error"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &env); err != nil || env.OK || env.Error.Code != checkout.ERateLimited ||
			env.Error.RequestID != "req_1" || env.Error.Message == "" {
			t.Errorf("rate %v: 429 body = %s; want the rate_limited envelope", tt.rate, w.Body)
		}
		if calls != 1 {
			t.Errorf("rate %v: the handler ran %d times; want once", tt.rate, calls)
		}
	}
}

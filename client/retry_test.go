package client

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/internal/app"
	"github.com/checkoutd/checkoutd/internal/clock"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// proxy stands between the client and the real server: it records the
// requests and lets fault decide, per request, what happens to it.
type proxy struct {
	mu   sync.Mutex
	reqs []*http.Request
	// fault is called with the request's number (1 for the first); it
	// returns a response or an error to answer instead of the server, or
	// neither to pass the request on.
	fault func(n int, r *http.Request) (*http.Response, error)
	// dropAnswer, when it returns true for a request's number, passes the
	// request on, reads the server's whole answer (so the server has
	// committed and answered) and then fails as a connection reset would:
	// the answer is lost on the way back. lost holds the lost bodies.
	dropAnswer func(n int) bool
	lost       [][]byte
}

func (p *proxy) RoundTrip(r *http.Request) (*http.Response, error) {
	p.mu.Lock()
	p.reqs = append(p.reqs, r)
	n := len(p.reqs)
	p.mu.Unlock()
	if p.fault != nil {
		if resp, err := p.fault(n, r); resp != nil || err != nil {
			return resp, err
		}
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil || p.dropAnswer == nil || !p.dropAnswer(n) {
		return resp, err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	p.mu.Lock()
	p.lost = append(p.lost, body)
	p.mu.Unlock()
	return nil, errors.New("read: connection reset by peer (injected after the server answered)")
}

func (p *proxy) keys() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var ks []string
	for _, r := range p.reqs {
		ks = append(ks, r.Header.Get("Idempotency-Key"))
	}
	return ks
}

// unavailable answers like checkoutd's 503 (or 429) envelope.
func unavailable(status int, retryAfter string) *http.Response {
	h := http.Header{"Content-Type": {"application/json"}, "Request-Id": {"req_00000000000000000000000000000000"}}
	if retryAfter != "" {
		h.Set("Retry-After", retryAfter)
	}
	code := map[int]string{503: "service_unavailable", 429: "rate_limited"}[status]
	return &http.Response{StatusCode: status, Header: h,
		Body: io.NopCloser(strings.NewReader(`{"ok":false,"error":{"code":"` + code + `","message":"try again","request_id":"req_00000000000000000000000000000000"}}`))}
}

var keyRE = regexp.MustCompile(`^[0-9a-f]{32}$`)

// The server commits the session, its answer is lost, the client retries
// with the same Idempotency-Key and gets the same session: exactly one
// exists.
func TestRetryAfterLostAnswerCreatesOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		for _, key := range []string{"", "order-42"} {
			p := &proxy{dropAnswer: func(n int) bool { return n == 1 }}
			var waits []int64
			c := h.client(&waits, WithHTTPClient(&http.Client{Transport: p}))
			before := h.created()
			params := sword()
			params.IdempotencyKey = key
			s, err := c.Create(context.Background(), params)
			if err != nil {
				t.Fatalf("Create (key %q) = %v", key, err)
			}
			ks := p.keys()
			if len(ks) != 2 || ks[0] != ks[1] || (key == "" && !keyRE.MatchString(ks[0])) || (key != "" && ks[0] != key) {
				t.Errorf("Idempotency-Keys sent = %q; want one key twice", ks)
			}
			var lost struct{ Data Session }
			json.Unmarshal(p.lost[0], &lost)
			if lost.Data.ID != s.ID {
				t.Errorf("the retry returned %s; the lost answer had %s", s.ID, lost.Data.ID)
			}
			if n := h.created() - before; n != 1 {
				t.Errorf("%d sessions created; want 1", n)
			}
			if len(waits) != 1 || waits[0] <= 0 {
				t.Errorf("waits = %v; want one backoff", waits)
			}
		}
	})
}

// Two calls of Create without a key are two sessions: the key is per call.
func TestIdempotencyKeyPerCall(t *testing.T) {
	p := &proxy{fault: func(int, *http.Request) (*http.Response, error) { return unavailable(400, ""), nil }}
	c := New("http://api.example.test", "s", WithHTTPClient(&http.Client{Transport: p}))
	c.Create(context.Background(), sword())
	c.Create(context.Background(), sword())
	if ks := p.keys(); len(ks) != 2 || ks[0] == ks[1] || !keyRE.MatchString(ks[0]) || !keyRE.MatchString(ks[1]) {
		t.Errorf("keys = %q; want two different 128-bit keys", ks)
	}
}

// 503 with Retry-After is retried after at least Retry-After, with the same
// key, and the session is created once.
func TestRetry503(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		p := &proxy{fault: func(n int, _ *http.Request) (*http.Response, error) {
			if n <= 2 {
				return unavailable(503, "2"), nil
			}
			return nil, nil
		}}
		var waits []int64
		s, err := h.client(&waits, WithHTTPClient(&http.Client{Transport: p})).Create(context.Background(), sword())
		if err != nil || s.Status != StatusOpen {
			t.Fatalf("Create = %v, %v", s, err)
		}
		if ks := p.keys(); len(ks) != 3 || ks[0] != ks[2] || ks[1] != ks[2] {
			t.Errorf("keys = %q; want one key three times", ks)
		}
		if len(waits) != 2 || waits[0] < int64(2*time.Second) || waits[1] < int64(2*time.Second) {
			t.Errorf("waits = %v; want two of at least Retry-After", waits)
		}
		if n := h.created(); n != 1 {
			t.Errorf("%d sessions created; want 1", n)
		}
		// Get retries a lost answer too.
		p = &proxy{dropAnswer: func(n int) bool { return n == 1 }}
		g, err := h.client(nil, WithHTTPClient(&http.Client{Transport: p})).Get(context.Background(), s.ID)
		if err != nil || g.ID != s.ID || len(p.keys()) != 2 || p.keys()[0] != "" {
			t.Errorf("Get = %v, %v after %d requests", g, err, len(p.keys()))
		}
	})
}

// The server's own 429 (its rate limiter, on the application's clock): the
// client waits Retry-After, on the same clock, and the retry gets in.
func TestRetry429FromServer(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clk := clock.NewFake(time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC))
		h := newHarness(t, db, func(c *app.Config) { c.Now, c.RateLimit, c.RateBurst = clk.Now, 0.5, 1 })
		var waits []time.Duration
		c := New(h.url, h.merchant.ID, WithBearer(h.write))
		c.now = clk.Now
		c.sleep = func(_ context.Context, d time.Duration) error {
			waits = append(waits, d)
			clk.Advance(d)
			return nil
		}
		ctx := context.Background()
		for i := range 2 {
			if _, err := c.Create(ctx, sword()); err != nil {
				t.Fatalf("Create %d = %v", i, err)
			}
		}
		if len(waits) != 1 || waits[0] < 2*time.Second {
			t.Errorf("waits = %v; want one of at least the server's Retry-After (2s)", waits)
		}
		if n := h.created(); n != 2 {
			t.Errorf("%d sessions created; want 2", n)
		}
	})
}

// Retries are bounded by attempts and by time; refusals a retry cannot
// change are not retried; cancelling the context stops them.
func TestRetryBounds(t *testing.T) {
	var p *proxy
	client := func(opts ...Option) *Client {
		c := New("http://api.example.test", "s", append([]Option{WithHTTPClient(&http.Client{Transport: p})}, opts...)...)
		c.sleep = func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
		return c
	}
	for _, tt := range []struct {
		name     string
		answer   func() (*http.Response, error)
		opts     []Option
		attempts int
	}{
		{"503 forever", func() (*http.Response, error) { return unavailable(503, "1"), nil }, nil, DefaultMaxAttempts},
		{"WithMaxAttempts", func() (*http.Response, error) { return unavailable(503, ""), nil }, []Option{WithMaxAttempts(2)}, 2},
		{"Retry-After beyond the retry time", func() (*http.Response, error) { return unavailable(429, "60"), nil }, nil, 1},
		{"WithMaxRetryTime", func() (*http.Response, error) { return unavailable(429, "5"), nil }, []Option{WithMaxRetryTime(12 * time.Second)}, 3},
		{"network error", func() (*http.Response, error) { return nil, errors.New("dial: connection refused") }, []Option{WithMaxAttempts(3)}, 3},
		{"400", func() (*http.Response, error) { return unavailable(400, ""), nil }, nil, 1},
		{"500", func() (*http.Response, error) { return unavailable(500, ""), nil }, nil, 1},
	} {
		p = &proxy{fault: func(int, *http.Request) (*http.Response, error) { return tt.answer() }}
		c := client(tt.opts...)
		// The client's clock advances by each wait, so WithMaxRetryTime is
		// measured as if the waits happened.
		now := time.Now()
		c.now = func() time.Time { return now }
		c.sleep = func(_ context.Context, d time.Duration) error { now = now.Add(d); return nil }
		_, err := c.Create(context.Background(), sword())
		if err == nil || len(p.reqs) != tt.attempts {
			t.Errorf("%s: %d attempts, err %v; want %d and an error", tt.name, len(p.reqs), err, tt.attempts)
		}
	}

	// Cancelled while waiting to retry: no further attempt, and the error
	// says why.
	p = &proxy{fault: func(int, *http.Request) (*http.Response, error) { return unavailable(503, ""), nil }}
	ctx, cancel := context.WithCancel(context.Background())
	c := client()
	c.sleep = func(ctx context.Context, _ time.Duration) error { cancel(); return ctx.Err() }
	_, err := c.Create(ctx, sword())
	var e *Error
	if !errors.Is(err, context.Canceled) || !errors.As(err, &e) || e.StatusCode != 503 || len(p.reqs) != 1 {
		t.Errorf("cancelled: err %v after %d attempts; want context.Canceled and the 503, 1 attempt", err, len(p.reqs))
	}
	// Cancelled before: not even the first attempt reaches the server.
	p = &proxy{}
	_, err = client().Get(ctx, "cs_x")
	if !errors.Is(err, context.Canceled) || len(p.reqs) > 1 {
		t.Errorf("cancelled context: err %v after %d requests", err, len(p.reqs))
	}
}

// The per-attempt timeout ends an attempt that hangs; the next attempt
// gets through.
func TestTimeoutPerAttempt(t *testing.T) {
	p := &proxy{fault: func(n int, r *http.Request) (*http.Response, error) {
		if n == 1 {
			<-r.Context().Done()
			return nil, r.Context().Err()
		}
		return unavailable(400, ""), nil
	}}
	c := New("http://api.example.test", "s", WithTimeout(10*time.Millisecond), WithHTTPClient(&http.Client{Transport: p}))
	c.sleep = func(context.Context, time.Duration) error { return nil }
	_, err := c.Get(context.Background(), "cs_x")
	var e *Error
	if !errors.As(err, &e) || e.StatusCode != 400 || len(p.reqs) != 2 {
		t.Errorf("Get = %v after %d attempts; want the second attempt's 400", err, len(p.reqs))
	}
}

// A retry that would start after the context's deadline is not waited
// for: the error comes at once.
func TestRetryNotPastDeadline(t *testing.T) {
	p := &proxy{fault: func(int, *http.Request) (*http.Response, error) { return unavailable(503, "10"), nil }}
	c := New("http://api.example.test", "s", WithHTTPClient(&http.Client{Transport: p}))
	c.sleep = func(context.Context, time.Duration) error { t.Error("waited past the deadline"); return nil }
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := c.Get(ctx, "cs_x")
	var e *Error
	if !errors.As(err, &e) || e.StatusCode != 503 || len(p.reqs) != 1 {
		t.Errorf("Get = %v after %d attempts; want the 503 at once", err, len(p.reqs))
	}
}

// Concurrent creates with one Idempotency-Key (a retry that overtakes an
// attempt still in flight, or two processes creating for one order) get one
// session.
func TestConcurrentCreatesOneKey(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		c := h.client(nil)
		p := sword()
		p.IdempotencyKey = "order-7"
		ids := make([]string, 4)
		var wg sync.WaitGroup
		for i := range ids {
			wg.Go(func() {
				s, err := c.Create(context.Background(), p)
				if err != nil {
					t.Errorf("Create = %v", err)
					return
				}
				ids[i] = s.ID
			})
		}
		wg.Wait()
		for _, id := range ids {
			if id != ids[0] {
				t.Errorf("sessions %q; want one", ids)
				break
			}
		}
		if n := h.created(); n != 1 {
			t.Errorf("%d sessions created; want 1", n)
		}
	})
}

func TestRetryAfterSeconds(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		v    string
		want int
	}{
		{"", 0}, {"5", 5}, {"0", 0}, {"-3", 0}, {"soon", 0},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0},
	} {
		if got := retryAfterSeconds(tt.v, now); got != tt.want {
			t.Errorf("retryAfterSeconds(%q) = %d; want %d", tt.v, got, tt.want)
		}
	}
}

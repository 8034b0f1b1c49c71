package clienttest_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/client"
	"github.com/checkoutd/checkoutd/internal/app"
	"github.com/checkoutd/checkoutd/internal/clock"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// The client's waits between attempts (backoff, Retry-After) are checked
// by its own tests, against answers made up in its module
// (client/retry_test.go). These check what the server makes of the retries:
// one key, one session, the lost answer's session returned. The client
// waits for real here, as a merchant's does: the faults say Retry-After: 0,
// so each retry waits only the client's first backoffs (at most 250 ms,
// then 500 ms).

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
			c := h.client(client.WithHTTPClient(&http.Client{Transport: p}))
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
			var lost struct{ Data client.Session }
			json.Unmarshal(p.lost[0], &lost)
			if lost.Data.ID != s.ID {
				t.Errorf("the retry returned %s; the lost answer had %s", s.ID, lost.Data.ID)
			}
			if n := h.created() - before; n != 1 {
				t.Errorf("%d sessions created; want 1", n)
			}
		}
	})
}

// A 503 is retried with the same key, and the session is created once; a
// Get whose answer is lost is retried too, without a key.
func TestRetry503(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		p := &proxy{fault: func(n int, _ *http.Request) (*http.Response, error) {
			if n == 1 {
				return unavailable(503, "0"), nil
			}
			return nil, nil
		}}
		s, err := h.client(client.WithHTTPClient(&http.Client{Transport: p})).Create(context.Background(), sword())
		if err != nil || s.Status != client.StatusOpen {
			t.Fatalf("Create = %v, %v", s, err)
		}
		if ks := p.keys(); len(ks) != 2 || ks[0] != ks[1] || !keyRE.MatchString(ks[0]) {
			t.Errorf("keys = %q; want one key twice", ks)
		}
		if n := h.created(); n != 1 {
			t.Errorf("%d sessions created; want 1", n)
		}
		p = &proxy{dropAnswer: func(n int) bool { return n == 1 }}
		g, err := h.client(client.WithHTTPClient(&http.Client{Transport: p})).Get(context.Background(), s.ID)
		if ks := p.keys(); err != nil || g.ID != s.ID || len(ks) != 2 || ks[0] != "" || ks[1] != "" {
			t.Errorf("Get = %v, %v after requests with keys %q", g, err, ks)
		}
	})
}

// The server's own 429 (its rate limiter, on the application's clock) is
// retried with the same key, and the retry gets in once the limiter allows
// it. The proxy stands in for the wait: it moves the server's clock on by
// the Retry-After the server sent and passes the 429 on with Retry-After:
// 0, so that the client waits its backoff only. That the client waits at
// least Retry-After is TestRetry429Waits's, in the client's module.
func TestRetry429FromServer(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clk := clock.NewFake(time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC))
		h := newHarness(t, db, func(c *app.Config) { c.Now, c.RateLimit, c.RateBurst = clk.Now, 0.5, 1 })
		var limited []string // the Idempotency-Keys of the requests the server refused with 429
		var retryAfter []int
		p := &proxy{}
		p.fault = func(_ int, r *http.Request) (*http.Response, error) {
			resp, err := http.DefaultTransport.RoundTrip(r)
			if err != nil || resp.StatusCode != http.StatusTooManyRequests {
				return resp, err
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var env struct{ Error struct{ Code string } }
			json.Unmarshal(body, &env)
			secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
			if env.Error.Code != "rate_limited" {
				t.Errorf("429 with code %q; want rate_limited", env.Error.Code)
			}
			limited, retryAfter = append(limited, r.Header.Get("Idempotency-Key")), append(retryAfter, secs)
			clk.Advance(time.Duration(secs) * time.Second)
			resp.Header.Set("Retry-After", "0")
			resp.Body = io.NopCloser(strings.NewReader(string(body)))
			return resp, nil
		}
		c := h.client(client.WithHTTPClient(&http.Client{Transport: p}))
		ctx := context.Background()
		for i := range 2 {
			if _, err := c.Create(ctx, sword()); err != nil {
				t.Fatalf("Create %d = %v", i, err)
			}
		}
		ks := p.keys()
		if len(limited) != 1 || retryAfter[0] < 2 || len(ks) != 3 || ks[1] != limited[0] || ks[2] != limited[0] {
			t.Errorf("429s with Retry-After %v for keys %q, requests with keys %q; want one 429 of at least 2 s, retried with its key", retryAfter, limited, ks)
		}
		if n := h.created(); n != 2 {
			t.Errorf("%d sessions created; want 2", n)
		}
	})
}

// Concurrent creates with one Idempotency-Key (a retry that overtakes an
// attempt still in flight, or two processes creating for one order) get one
// session.
func TestConcurrentCreatesOneKey(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		c := h.client()
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

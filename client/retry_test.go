package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// proxy stands between the client and a server (when there is one): it
// records the requests and lets fault decide, per request, what happens to
// it. The server-side outcomes of retries (one session, the lost answer's
// session returned) are tested against a real checkoutd in
// internal/clienttest; these tests check what the client sends and waits.
type proxy struct {
	mu   sync.Mutex
	reqs []*http.Request
	// fault is called with the request's number (1 for the first); it
	// returns a response or an error to answer instead of the server, or
	// neither to pass the request on.
	fault func(n int, r *http.Request) (*http.Response, error)
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
	return http.DefaultTransport.RoundTrip(r)
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

// created answers like checkoutd's 201 to a create (or 200 to a get): the
// session id in the success envelope.
func created(id string) *http.Response {
	return &http.Response{StatusCode: http.StatusCreated, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(`{"ok":true,"data":{"id":"` + id + `","object":"checkout_session","status":"open"}}`))}
}

// waitsOf makes c record its waits instead of waiting, on a clock of its own
// that each wait moves on (so that WithMaxRetryTime counts them), and
// returns the record.
func waitsOf(c *Client) *[]time.Duration {
	var waits []time.Duration
	now := time.Now()
	c.now = func() time.Time { return now }
	c.sleep = func(ctx context.Context, d time.Duration) error {
		waits = append(waits, d)
		now = now.Add(d)
		return ctx.Err()
	}
	return &waits
}

// An answer lost on the way back (the connection reset after the server
// committed) is retried after one backoff with the same Idempotency-Key:
// the call's own (128 random bits) or the caller's.
func TestRetryAfterLostAnswerSameKey(t *testing.T) {
	for _, key := range []string{"", "order-42"} {
		p := &proxy{fault: func(n int, _ *http.Request) (*http.Response, error) {
			if n == 1 {
				return nil, errors.New("read: connection reset by peer (injected after the server answered)")
			}
			return created("cs_1"), nil
		}}
		c := New("http://api.example.test", "s", WithHTTPClient(&http.Client{Transport: p}))
		waits := waitsOf(c)
		params := sword()
		params.IdempotencyKey = key
		s, err := c.Create(context.Background(), params)
		if err != nil || s.ID != "cs_1" {
			t.Fatalf("Create (key %q) = %v, %v", key, s, err)
		}
		ks := p.keys()
		if len(ks) != 2 || ks[0] != ks[1] || (key == "" && !keyRE.MatchString(ks[0])) || (key != "" && ks[0] != key) {
			t.Errorf("Idempotency-Keys sent = %q; want one key twice", ks)
		}
		if len(*waits) != 1 || (*waits)[0] < backoffBase/2 || (*waits)[0] > backoffBase {
			t.Errorf("waits = %v; want one backoff, %v to %v", *waits, backoffBase/2, backoffBase)
		}
	}
}

// 503 with Retry-After is retried after at least Retry-After, with the same
// key; a Get whose answer is lost is retried too, without a key.
func TestRetry503Waits(t *testing.T) {
	p := &proxy{fault: func(n int, _ *http.Request) (*http.Response, error) {
		if n <= 2 {
			return unavailable(503, "2"), nil
		}
		return created("cs_1"), nil
	}}
	c := New("http://api.example.test", "s", WithHTTPClient(&http.Client{Transport: p}))
	waits := waitsOf(c)
	if s, err := c.Create(context.Background(), sword()); err != nil || s.ID != "cs_1" {
		t.Fatalf("Create = %v, %v", s, err)
	}
	if ks := p.keys(); len(ks) != 3 || ks[0] != ks[2] || ks[1] != ks[2] {
		t.Errorf("keys = %q; want one key three times", ks)
	}
	if len(*waits) != 2 || (*waits)[0] < 2*time.Second || (*waits)[1] < 2*time.Second {
		t.Errorf("waits = %v; want two of at least Retry-After", *waits)
	}

	p = &proxy{fault: func(n int, _ *http.Request) (*http.Response, error) {
		if n == 1 {
			return nil, errors.New("read: connection reset by peer (injected)")
		}
		return created("cs_1"), nil
	}}
	c = New("http://api.example.test", "s", WithHTTPClient(&http.Client{Transport: p}))
	waitsOf(c)
	g, err := c.Get(context.Background(), "cs_1")
	if ks := p.keys(); err != nil || g.ID != "cs_1" || len(ks) != 2 || ks[0] != "" || ks[1] != "" {
		t.Errorf("Get = %v, %v after requests with keys %q; want the retry's answer, no key", g, err, ks)
	}
}

// A rate limiter like checkoutd's (a token every 2 s, bursts of 1, on the
// client's clock here): the second create is refused with 429 and
// Retry-After: 2, the client waits at least that, and the retry gets in.
func TestRetry429Waits(t *testing.T) {
	var c *Client
	var next time.Time // when the limiter has a token again
	p := &proxy{fault: func(int, *http.Request) (*http.Response, error) {
		now := c.now()
		if now.Before(next) {
			return unavailable(429, strconv.Itoa(int((next.Sub(now)+time.Second-1)/time.Second))), nil
		}
		next = now.Add(2 * time.Second)
		return created("cs_1"), nil
	}}
	c = New("http://api.example.test", "s", WithHTTPClient(&http.Client{Transport: p}))
	waits := waitsOf(c)
	for i := range 2 {
		if _, err := c.Create(context.Background(), sword()); err != nil {
			t.Fatalf("Create %d = %v", i, err)
		}
	}
	if len(*waits) != 1 || (*waits)[0] < 2*time.Second || len(p.reqs) != 3 {
		t.Errorf("waits = %v in %d requests; want one of at least Retry-After (2s), 3 requests", *waits, len(p.reqs))
	}
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

// answered answers with the success envelope of data, as checkoutd does.
func answered(status int, data string) *http.Response {
	return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(`{"ok":true,"data":` + data + `}`))}
}

// A refund whose answer is lost is retried with the same Idempotency-Key, as
// a create is: the server answers the retry with the refund the first made.
func TestRefundRetriedWithOneKey(t *testing.T) {
	p := &proxy{fault: func(n int, r *http.Request) (*http.Response, error) {
		if n == 1 {
			return nil, errors.New("read: connection reset by peer (injected after the server answered)")
		}
		return answered(http.StatusCreated, `{"id":"re_1","object":"refund","status":"succeeded","amount":500}`), nil
	}}
	c := New("http://api.example.test", "s", WithHTTPClient(&http.Client{Transport: p}))
	waitsOf(c)
	amount := int64(500)
	r, err := c.Refund(context.Background(), "pay_1", RefundParams{Amount: &amount, Reason: "duplicate"})
	if err != nil || r.ID != "re_1" {
		t.Fatalf("Refund = %+v, %v", r, err)
	}
	ks := p.keys()
	if len(ks) != 2 || ks[0] != ks[1] || !keyRE.MatchString(ks[0]) {
		t.Errorf("Idempotency-Keys sent = %q; want one key twice", ks)
	}
	if got := p.reqs[0].URL.Path; got != "/v1/stores/s/payments/pay_1/refunds" {
		t.Errorf("path = %s", got)
	}
}

// Dispute evidence is sent once and no key makes it safe to repeat: after a
// network error, which may have lost the server's answer, it is not sent
// again (the error says so); after a 503, which says the server did
// nothing, it is.
func TestDisputeEvidenceRetriedOnlyWhenNothingHappened(t *testing.T) {
	p := &proxy{fault: func(int, *http.Request) (*http.Response, error) {
		return nil, errors.New("read: connection reset by peer")
	}}
	c := New("http://api.example.test", "s", WithHTTPClient(&http.Client{Transport: p}))
	waitsOf(c)
	if _, err := c.SubmitDisputeEvidence(context.Background(), "dp_1", DisputeEvidence{UncategorizedText: "x"}); err == nil || len(p.reqs) != 1 {
		t.Errorf("evidence after a network error = %v, sent %d times; want the error, sent once", err, len(p.reqs))
	}
	p = &proxy{fault: func(n int, _ *http.Request) (*http.Response, error) {
		if n == 1 {
			return unavailable(503, "1"), nil
		}
		return answered(http.StatusOK, `{"id":"dp_1","object":"dispute","status":"under_review"}`), nil
	}}
	c = New("http://api.example.test", "s", WithHTTPClient(&http.Client{Transport: p}))
	waits := waitsOf(c)
	d, err := c.SubmitDisputeEvidence(context.Background(), "dp_1", DisputeEvidence{UncategorizedText: "x"})
	if err != nil || d.Status != "under_review" || len(p.reqs) != 2 || len(*waits) != 1 || (*waits)[0] < time.Second || p.reqs[0].Header.Get("Idempotency-Key") != "" {
		t.Errorf("evidence after a 503 = %+v, %v, sent %d times, waits %v; want it sent again after Retry-After, without a key", d, err, len(p.reqs), *waits)
	}
}

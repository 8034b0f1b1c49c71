package client

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Defaults of the options.
const (
	DefaultTimeout      = 30 * time.Second
	DefaultMaxAttempts  = 4
	DefaultMaxRetryTime = 30 * time.Second
)

// The backoff between attempts: the first retry waits about backoffBase,
// each next one twice as long, at most backoffMax, each with jitter.
const (
	backoffBase = 250 * time.Millisecond
	backoffMax  = 8 * time.Second
)

// maxResponse bounds what is read of an answer: a session is a few KiB.
const maxResponse = 1 << 20

// Client calls checkoutd's API for one store. It is safe for concurrent use.
type Client struct {
	baseURL      string
	storeID      string
	bearer       string
	hmacKeyID    string
	hmacSecret   string
	http         *http.Client
	timeout      time.Duration
	maxAttempts  int
	maxRetryTime time.Duration
	userAgent    string

	// now and sleep are the clock and the wait between attempts, replaced
	// by the tests so that no test waits for a backoff.
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error
	// nonce makes a signature's nonce; fixed by the test of docs/signing.md's
	// worked example.
	nonce func() string
}

// Option configures a Client.
type Option func(*Client)

// WithBearer authenticates every request with an API key's secret
// (ck_test_sk_... or ck_live_sk_...), which chooses the mode.
func WithBearer(secret string) Option { return func(c *Client) { c.bearer = secret } }

// WithHTTPClient sends the requests through hc (its Transport, proxy and
// TLS settings) instead of http.DefaultClient's transport.
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.http = hc } }

// WithTimeout bounds each attempt, the answer's body read included
// (DefaultTimeout; 0 for none).
func WithTimeout(d time.Duration) Option { return func(c *Client) { c.timeout = d } }

// WithMaxAttempts bounds the attempts of one call, the first included
// (DefaultMaxAttempts; 1 turns retries off).
func WithMaxAttempts(n int) Option {
	return func(c *Client) { c.maxAttempts = max(n, 1) }
}

// WithMaxRetryTime bounds the time one call spends retrying: a retry that
// would start later than d after the first attempt is not made
// (DefaultMaxRetryTime).
func WithMaxRetryTime(d time.Duration) Option { return func(c *Client) { c.maxRetryTime = d } }

// WithUserAgent sets the User-Agent header, for the request logs.
func WithUserAgent(ua string) Option { return func(c *Client) { c.userAgent = ua } }

// New returns a client of the API at baseURL (https://api.example.com, with
// or without the /v1 of the paths) for the store storeID, the uuid shown on
// the dashboard's API keys page.
func New(baseURL, storeID string, opts ...Option) *Client {
	c := &Client{
		baseURL:      strings.TrimSuffix(strings.TrimSuffix(baseURL, "/"), "/v1"),
		storeID:      storeID,
		http:         &http.Client{},
		timeout:      DefaultTimeout,
		maxAttempts:  DefaultMaxAttempts,
		maxRetryTime: DefaultMaxRetryTime,
		userAgent:    "checkoutd-go",
		now:          time.Now,
		sleep:        sleepCtx,
		nonce:        NewIdempotencyKey,
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Create creates a checkout session. Retries reuse one Idempotency-Key, so
// at most one session is created per call.
func (c *Client) Create(ctx context.Context, p CreateParams) (*Session, error) {
	body, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("checkoutd: encode create: %w", err)
	}
	key := p.IdempotencyKey
	if key == "" {
		key = NewIdempotencyKey()
	}
	var s Session
	if err := c.do(ctx, http.MethodPost, c.checkoutsPath(), body, key, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// Get retrieves a checkout session by its id (cs_...).
func (c *Client) Get(ctx context.Context, id string) (*Session, error) {
	var s Session
	if err := c.do(ctx, http.MethodGet, c.checkoutsPath()+"/"+url.PathEscape(id), nil, "", &s); err != nil {
		return nil, err
	}
	return &s, nil
}

func (c *Client) checkoutsPath() string {
	return "/v1/stores/" + url.PathEscape(c.storeID) + "/checkouts"
}

// NewIdempotencyKey returns a fresh Idempotency-Key: 128 random bits in hex.
func NewIdempotencyKey() string {
	var b [16]byte
	crand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// do sends the request, retrying what is safe to retry, and decodes the
// envelope's data into out.
func (c *Client) do(ctx context.Context, method, path string, body []byte, idemKey string, out any) error {
	return c.send(ctx, method, path, body, idemKey, out, true)
}

// doOnce is do for a request that no Idempotency-Key makes safe to repeat:
// it is retried only when the server answered that it did nothing (429,
// 503), never after a network error, which may have lost an answer.
func (c *Client) doOnce(ctx context.Context, method, path string, body []byte, out any) error {
	return c.send(ctx, method, path, body, "", out, false)
}

func (c *Client) send(ctx context.Context, method, path string, body []byte, idemKey string, out any, afterNetworkErrors bool) error {
	start := c.now()
	for attempt := 1; ; attempt++ {
		err := c.attempt(ctx, method, path, body, idemKey, out)
		if err == nil {
			return nil
		}
		wait, retry := c.retryAfter(ctx, err, attempt)
		var ne *networkError
		if errors.As(err, &ne) && !afterNetworkErrors {
			retry = false
		}
		if !retry || attempt >= c.maxAttempts || c.now().Add(wait).Sub(start) > c.maxRetryTime || pastDeadline(ctx, wait) {
			if attempt > 1 {
				return fmt.Errorf("%w (after %d attempts)", err, attempt)
			}
			return err
		}
		if serr := c.sleep(ctx, wait); serr != nil {
			return fmt.Errorf("%w (retry stopped: %w)", err, serr)
		}
	}
}

// retryAfter says whether err is worth another attempt and how long to
// wait before it: a jittered exponential backoff, and at least Retry-After.
func (c *Client) retryAfter(ctx context.Context, err error, attempt int) (time.Duration, bool) {
	if ctx.Err() != nil {
		return 0, false
	}
	wait := backoff(attempt)
	var e *Error
	if errors.As(err, &e) {
		if !e.Temporary() {
			return 0, false
		}
		return max(wait, time.Duration(e.RetryAfter)*time.Second), true
	}
	var ne *networkError
	return wait, errors.As(err, &ne)
}

// backoff is the wait after the attempt-th attempt: base·2^(attempt-1),
// capped, with "equal jitter" (half fixed, half random), so that clients
// refused together do not come back together.
func backoff(attempt int) time.Duration {
	d := backoffBase << min(attempt-1, 10)
	d = min(d, backoffMax)
	return d/2 + rand.N(d/2+1)
}

// pastDeadline reports whether ctx ends before a wait of d would: the
// retry could not be made, so the caller gets the error now rather than
// the context's later.
func pastDeadline(ctx context.Context, d time.Duration) bool {
	deadline, ok := ctx.Deadline()
	return ok && time.Until(deadline) < d
}

func retryableStatus(code int) bool {
	return code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable
}

// networkError is a request that got no answer (or an answer cut short):
// the transport's error, kept for errors.Is and errors.As.
type networkError struct {
	op  string
	err error
}

func (e *networkError) Error() string {
	if e.op == "" {
		return "checkoutd: " + e.err.Error() // a *url.Error names the method and URL itself
	}
	return "checkoutd: " + e.op + ": " + e.err.Error()
}
func (e *networkError) Unwrap() error { return e.err }

// attempt sends the request once.
func (c *Client) attempt(ctx context.Context, method, path string, body []byte, idemKey string, out any) error {
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, method, c.baseURL+path, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("checkoutd: %w", err)
	}
	if body == nil {
		req.Body = nil
	} else {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	switch {
	case c.hmacSecret != "":
		if err := c.sign(req, body); err != nil {
			return err
		}
	case c.bearer != "":
		req.Header.Set("Authorization", "Bearer "+c.bearer)
	}
	op := method + " " + path
	resp, err := c.http.Do(req)
	if err != nil {
		return &networkError{err: err}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return &networkError{op: op + ": reading the answer", err: err}
	}
	if resp.StatusCode/100 != 2 {
		return decodeError(resp, raw)
	}
	var env struct {
		OK   bool            `json:"ok"`
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(raw, &env); err != nil || !env.OK {
		return fmt.Errorf("checkoutd: %s: %d answer is not a success envelope", op, resp.StatusCode)
	}
	if err := json.Unmarshal(env.Data, out); err != nil {
		return fmt.Errorf("checkoutd: %s: decode: %w", op, err)
	}
	return nil
}

// decodeError makes an *Error of a refusal, from the envelope when there
// is one, from the status and the start of the body otherwise.
func decodeError(resp *http.Response, raw []byte) *Error {
	e := &Error{StatusCode: resp.StatusCode, RequestID: resp.Header.Get("Request-Id")}
	e.RetryAfter = retryAfterSeconds(resp.Header.Get("Retry-After"), time.Now())
	var env struct {
		Error *struct {
			Code      string        `json:"code"`
			Message   string        `json:"message"`
			Param     string        `json:"param"`
			RequestID string        `json:"request_id"`
			Details   []ErrorDetail `json:"details"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &env) != nil || env.Error == nil {
		e.Message = strings.TrimSpace(string(raw[:min(len(raw), 200)]))
		if e.Message == "" {
			e.Message = http.StatusText(resp.StatusCode)
		}
		return e
	}
	e.Code, e.Message, e.Param, e.Details = env.Error.Code, env.Error.Message, env.Error.Param, env.Error.Details
	if env.Error.RequestID != "" {
		e.RequestID = env.Error.RequestID
	}
	return e
}

// retryAfterSeconds reads Retry-After: seconds, as checkoutd sends it, or
// an HTTP date, as a proxy in front of it may; 0 when absent or past.
func retryAfterSeconds(v string, now time.Time) int {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil {
		return max(s, 0)
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return int((t.Sub(now) + time.Second - 1) / time.Second)
	}
	return 0
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

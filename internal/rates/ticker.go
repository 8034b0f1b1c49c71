package rates

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/checkoutd/checkoutd/internal/clock"
)

// The Ticker's defaults (TickerConfig).
const (
	DefaultTickerURL   = "https://api.coinbase.com"
	DefaultTTL         = 60 * time.Second
	DefaultMaxAge      = 5 * time.Minute
	DefaultTimeout     = 10 * time.Second
	DefaultRetryDelay  = 5 * time.Second
	maxRetryAfter      = time.Hour
	maxTickerBodyBytes = 64 << 10
)

// TickerConfig configures a Ticker. Zero fields take the defaults.
type TickerConfig struct {
	// BaseURL is where Coinbase's API is: DefaultTickerURL, or a mirror
	// or test server that answers GET {BaseURL}/v2/prices/LTC-USD/spot
	// the same way.
	BaseURL string
	// Client makes the requests; a plain http.Client by default.
	Client *http.Client
	// TTL is how long a rate is served from the cache before it is asked
	// for again (DefaultTTL).
	TTL time.Duration
	// MaxAge is the oldest a rate may be when the upstream cannot renew it
	// (DefaultMaxAge): between TTL and MaxAge a failed renewal serves the
	// cached rate; past MaxAge the Ticker returns ErrStale, never the old
	// rate. It must be at least TTL.
	MaxAge time.Duration
	// Timeout bounds each upstream request (DefaultTimeout).
	Timeout time.Duration
	// RetryDelay is the least wait after a failed request before the next
	// one for the same pair (DefaultRetryDelay); a 429's Retry-After, when
	// longer, is waited instead (at most an hour). Meanwhile the pair is
	// answered from the cache, or with the failure.
	RetryDelay time.Duration
	// Now is the clock: time.Now by default.
	Now clock.Func
}

// Ticker is a Source of Coinbase's public spot prices
// (GET /v2/prices/{COIN}-{CURRENCY}/spot, no authentication). It caches
// each pair for TTL; concurrent requests for a pair that is not cached
// share one upstream request, so at most one is in flight per pair at any
// time. A rate's At is when it was asked for.
type Ticker struct {
	cfg   TickerConfig
	base  *url.URL
	mu    sync.Mutex
	pairs map[pair]*tickerEntry
}

type tickerEntry struct {
	rate      Rate // the last rate observed; valid when has
	has       bool
	call      *tickerCall // the request in flight, if any
	notBefore time.Time   // no request before then, after a failure
	lastErr   error       // the last failure, until a success
}

// tickerCall is one upstream request that several callers may wait for.
type tickerCall struct {
	done    chan struct{}
	rate    Rate
	err     error
	waiters int // callers waiting for it, for tests
}

// NewTicker returns a Ticker with cfg's zero fields set to the defaults,
// or an error for a configuration that cannot work.
func NewTicker(cfg TickerConfig) (*Ticker, error) {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultTickerURL
	}
	base, err := url.Parse(cfg.BaseURL)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("crypto rates URL %q: want an http or https URL such as %s", cfg.BaseURL, DefaultTickerURL)
	}
	if base.User != nil || base.RawQuery != "" || base.Fragment != "" {
		return nil, fmt.Errorf("crypto rates URL %q: want no credentials, query or fragment, only the API's base such as %s", base.Redacted(), DefaultTickerURL)
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{}
	}
	if cfg.TTL == 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.MaxAge == 0 {
		cfg.MaxAge = max(DefaultMaxAge, cfg.TTL)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.RetryDelay == 0 {
		cfg.RetryDelay = DefaultRetryDelay
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	switch {
	case cfg.TTL < 0 || cfg.MaxAge < 0 || cfg.Timeout < 0 || cfg.RetryDelay < 0:
		return nil, errors.New("crypto rates: TTL, MaxAge, Timeout and RetryDelay must not be negative")
	case cfg.MaxAge < cfg.TTL:
		return nil, fmt.Errorf("crypto rates: MaxAge %s is below TTL %s: a cached rate would be too old before it is renewed; raise MaxAge", cfg.MaxAge, cfg.TTL)
	}
	return &Ticker{cfg: cfg, base: base, pairs: map[pair]*tickerEntry{}}, nil
}

// Rate returns the pair's rate: from the cache while younger than TTL,
// otherwise from Coinbase. When Coinbase fails, the cached rate is
// returned while younger than MaxAge, and after that an error wrapping
// ErrUnavailable and ErrStale. Errors for a pair Coinbase does not price
// wrap ErrUnknownPair; others wrap ErrUnavailable (a 429 is a
// *RateLimitedError). ctx bounds the wait of this caller only: the
// request it shares with others runs to its own Timeout.
func (t *Ticker) Rate(ctx context.Context, coin, currency string) (Rate, error) {
	c, cur, err := knownPair(coin, currency)
	if err != nil {
		return Rate{}, err
	}
	p := pair{c, cur}
	t.mu.Lock()
	e := t.pairs[p]
	if e == nil {
		e = &tickerEntry{}
		t.pairs[p] = e
	}
	now := t.cfg.Now()
	call := e.call
	switch {
	case e.has && now.Sub(e.rate.At) < t.cfg.TTL:
		r := e.rate
		t.mu.Unlock()
		return r, nil
	case call == nil && now.Before(e.notBefore):
		r, err := t.fallback(e, now)
		t.mu.Unlock()
		return r, err
	case call == nil:
		call = &tickerCall{done: make(chan struct{})}
		e.call = call
		go t.fetch(p, e, call)
	}
	call.waiters++
	t.mu.Unlock()
	select {
	case <-call.done:
		return call.rate, call.err
	case <-ctx.Done():
		return Rate{}, fmt.Errorf("%s: %w: gave up waiting for %s/%s: %w", SourceCoinbase, ErrUnavailable, c, cur, ctx.Err())
	}
}

// fallback answers for e at now after a failure: its rate while younger
// than MaxAge, otherwise the failure. t.mu must be held.
func (t *Ticker) fallback(e *tickerEntry, now time.Time) (Rate, error) {
	if e.has && now.Sub(e.rate.At) < t.cfg.MaxAge {
		return e.rate, nil
	}
	if e.has {
		return Rate{}, fmt.Errorf("%s: %w (%w): %s/%s last observed %s ago, more than the %s allowed; the last request failed: %w",
			SourceCoinbase, ErrUnavailable, ErrStale, e.rate.Coin, e.rate.Currency, now.Sub(e.rate.At), t.cfg.MaxAge, e.lastErr)
	}
	return Rate{}, e.lastErr
}

// fetch makes call's request for p and records its outcome in e.
func (t *Ticker) fetch(p pair, e *tickerEntry, call *tickerCall) {
	at := t.cfg.Now()
	ctx, cancel := context.WithTimeout(context.Background(), t.cfg.Timeout)
	r, err := t.spot(ctx, p, at)
	cancel()
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.cfg.Now()
	if err == nil {
		e.rate, e.has, e.lastErr, e.notBefore = r, true, nil, time.Time{}
		call.rate = r
	} else {
		e.lastErr = err
		wait := t.cfg.RetryDelay
		if rl, ok := errors.AsType[*RateLimitedError](err); ok {
			wait = max(wait, rl.RetryAfter)
		}
		e.notBefore = now.Add(wait)
		call.rate, call.err = t.fallback(e, now)
	}
	e.call = nil
	close(call.done)
}

// spotAnswer is the body of Coinbase's answer, a price or errors.
type spotAnswer struct {
	Data struct {
		Amount   json.Number `json:"amount"`
		Base     string      `json:"base"`
		Currency string      `json:"currency"`
	} `json:"data"`
	Errors []struct {
		ID      string `json:"id"`
		Message string `json:"message"`
	} `json:"errors"`
}

// spot asks Coinbase for p's spot price.
func (t *Ticker) spot(ctx context.Context, p pair, at time.Time) (Rate, error) {
	name := p.coin + "-" + p.currency
	u := t.base.JoinPath("v2", "prices", name, "spot")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Rate{}, fmt.Errorf("%s: %w: %s: %w", SourceCoinbase, ErrUnavailable, name, err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "checkoutd")
	res, err := t.cfg.Client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return Rate{}, fmt.Errorf("%s: %w: %s: no answer from %s within %s", SourceCoinbase, ErrUnavailable, name, t.base.Host, t.cfg.Timeout)
		}
		return Rate{}, fmt.Errorf("%s: %w: %s: %s unreachable: %w", SourceCoinbase, ErrUnavailable, name, t.base.Host, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, maxTickerBodyBytes+1))
	if err != nil {
		return Rate{}, fmt.Errorf("%s: %w: %s: reading the answer: %w", SourceCoinbase, ErrUnavailable, name, err)
	}
	if len(body) > maxTickerBodyBytes {
		return Rate{}, fmt.Errorf("%s: %w: %s: answer larger than %d bytes", SourceCoinbase, ErrUnavailable, name, maxTickerBodyBytes)
	}
	var a spotAnswer
	jsonErr := json.Unmarshal(body, &a)
	switch {
	case res.StatusCode == http.StatusTooManyRequests:
		return Rate{}, &RateLimitedError{Source: SourceCoinbase, RetryAfter: retryAfter(res.Header.Get("Retry-After"), t.cfg.Now())}
	case res.StatusCode == http.StatusNotFound || res.StatusCode == http.StatusBadRequest:
		return Rate{}, fmt.Errorf("%s: %w: %s: Coinbase has no spot price for it (%s%s)", SourceCoinbase, ErrUnknownPair, name, res.Status, upstreamMessage(a))
	case res.StatusCode != http.StatusOK:
		return Rate{}, fmt.Errorf("%s: %w: %s: %s answered %s%s", SourceCoinbase, ErrUnavailable, name, t.base.Host, res.Status, upstreamMessage(a))
	case jsonErr != nil:
		return Rate{}, fmt.Errorf("%s: %w: %s: the answer is not the JSON of a spot price: %w", SourceCoinbase, ErrUnavailable, name, jsonErr)
	case !strings.EqualFold(a.Data.Base, p.coin) || !strings.EqualFold(a.Data.Currency, p.currency):
		return Rate{}, fmt.Errorf("%s: %w: %s: the answer prices %q in %q", SourceCoinbase, ErrUnavailable, name, a.Data.Base, a.Data.Currency)
	}
	price, err := ParsePrice(a.Data.Amount.String(), p.currency)
	if err != nil {
		return Rate{}, fmt.Errorf("%s: %w: %s: the answer's amount: %w", SourceCoinbase, ErrUnavailable, name, err)
	}
	return Rate{Coin: p.coin, Currency: p.currency, Price: price, At: at, Source: SourceCoinbase}, nil
}

// upstreamMessage quotes the first of Coinbase's error messages, short.
func upstreamMessage(a spotAnswer) string {
	if len(a.Errors) == 0 || a.Errors[0].Message == "" {
		return ""
	}
	m := a.Errors[0].Message
	if len(m) > 200 {
		m = m[:200] + "…"
	}
	return ": " + strconv.Quote(m)
}

// retryAfter reads a Retry-After header, seconds or an HTTP date, as a
// wait from now, at most an hour; zero when absent or unreadable.
func retryAfter(h string, now time.Time) time.Duration {
	if h == "" {
		return 0
	}
	var d time.Duration
	if n, err := strconv.ParseInt(strings.TrimSpace(h), 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		d = time.Duration(min(n, int64(maxRetryAfter/time.Second))) * time.Second
	} else if when, err := http.ParseTime(h); err == nil {
		d = when.Sub(now)
	}
	return min(max(d, 0), maxRetryAfter)
}

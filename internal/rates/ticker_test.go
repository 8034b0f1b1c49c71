package rates_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/internal/clock"
	"github.com/checkoutd/checkoutd/internal/rates"
)

var start = time.Date(2026, 11, 24, 18, 0, 0, 0, time.UTC)

// upstream is a stand-in for Coinbase's spot price endpoint: it answers
// GET /v2/prices/{COIN}-{CURRENCY}/spot with the exact shape of Coinbase's
// answers, or with the fault a test sets.
type upstream struct {
	*httptest.Server
	requests atomic.Int64

	mu     sync.Mutex
	prices map[string]string // "LTC-USD": "85.12"
	fault  func(w http.ResponseWriter) bool
	gate   chan struct{} // when set, each request waits for it to close
}

func newUpstream(t *testing.T, prefix string) *upstream {
	t.Helper()
	u := &upstream{prices: map[string]string{"LTC-USD": "85.12", "BTC-USD": "97000.00", "ETH-EUR": "3100.5", "SOL-JPY": "21000", "SOL-USD": "0.000123"}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+prefix+"/v2/prices/{pair}/spot", func(w http.ResponseWriter, r *http.Request) {
		u.requests.Add(1)
		u.mu.Lock()
		gate, fault := u.gate, u.fault
		price, ok := u.prices[r.PathValue("pair")]
		u.mu.Unlock()
		if gate != nil {
			select {
			case <-gate:
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		if fault != nil && fault(w) {
			return
		}
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"errors":[{"id":"not_found","message":"Invalid currency"}]}`)
			return
		}
		base, currency, _ := strings.Cut(r.PathValue("pair"), "-")
		fmt.Fprintf(w, `{"data":{"amount":%q,"base":%q,"currency":%q}}`, price, base, currency)
	})
	u.Server = httptest.NewServer(mux)
	t.Cleanup(u.Close)
	return u
}

func (u *upstream) set(f func(u *upstream)) {
	u.mu.Lock()
	defer u.mu.Unlock()
	f(u)
}

func (u *upstream) failWith(status int, body string, header ...string) {
	u.set(func(u *upstream) {
		u.fault = func(w http.ResponseWriter) bool {
			for i := 0; i+1 < len(header); i += 2 {
				w.Header().Set(header[i], header[i+1])
			}
			w.WriteHeader(status)
			fmt.Fprint(w, body)
			return true
		}
	})
}

func (u *upstream) heal() { u.set(func(u *upstream) { u.fault = nil }) }

func newTicker(t *testing.T, u *upstream, clk *clock.Fake, cfg rates.TickerConfig) *rates.Ticker {
	t.Helper()
	if cfg.BaseURL == "" {
		cfg.BaseURL = u.URL
	}
	cfg.Client = u.Client()
	cfg.Now = clk.Now
	tk, err := rates.NewTicker(cfg)
	if err != nil {
		t.Fatalf("NewTicker = %v", err)
	}
	return tk
}

func TestTickerRate(t *testing.T) {
	u := newUpstream(t, "/mirror")
	clk := clock.NewFake(start)
	tk := newTicker(t, u, clk, rates.TickerConfig{BaseURL: u.URL + "/mirror/"})
	tests := []struct {
		coin, currency string
		minor          string
	}{
		{"LTC", "USD", "8512"},
		{"btc", "usd", "9700000"},
		{"ETH", "EUR", "310050"},
		{"SOL", "JPY", "21000"},
		{"SOL", "USD", "0.0123"},
	}
	for _, tt := range tests {
		r, err := tk.Rate(context.Background(), tt.coin, tt.currency)
		if err != nil {
			t.Errorf("Rate(%s, %s) = %v", tt.coin, tt.currency, err)
			continue
		}
		if r.Price.String() != tt.minor || r.Coin != strings.ToUpper(tt.coin) || r.Currency != strings.ToUpper(tt.currency) ||
			!r.At.Equal(start) || r.Source != rates.SourceCoinbase {
			t.Errorf("Rate(%s, %s) = %+v (price %s); want %s minor units at %v from coinbase", tt.coin, tt.currency, r, r.Price, tt.minor, start)
		}
	}
	if got := u.requests.Load(); got != int64(len(tests)) {
		t.Errorf("upstream requests = %d; want %d", got, len(tests))
	}
}

func TestTickerUnknownPair(t *testing.T) {
	u := newUpstream(t, "")
	tk := newTicker(t, u, clock.NewFake(start), rates.TickerConfig{})
	for _, p := range [][2]string{{"DOGE", "USD"}, {"LTC", "XYZ"}} {
		if _, err := tk.Rate(context.Background(), p[0], p[1]); !errors.Is(err, rates.ErrUnknownPair) {
			t.Errorf("Rate(%s, %s) = %v; want ErrUnknownPair", p[0], p[1], err)
		}
	}
	if got := u.requests.Load(); got != 0 {
		t.Errorf("upstream requests = %d for unknown codes; want 0", got)
	}
	// A pair the upstream does not price (404 with Coinbase's errors).
	_, err := tk.Rate(context.Background(), "LTC", "KWD")
	if !errors.Is(err, rates.ErrUnknownPair) || !strings.Contains(err.Error(), `"Invalid currency"`) {
		t.Errorf("Rate(LTC, KWD) = %v; want ErrUnknownPair quoting the upstream's message", err)
	}
}

func TestTickerCachesForTTL(t *testing.T) {
	u := newUpstream(t, "")
	clk := clock.NewFake(start)
	tk := newTicker(t, u, clk, rates.TickerConfig{TTL: time.Minute})
	ctx := context.Background()
	tests := []struct {
		at       time.Duration // since start
		price    string        // the upstream's price from then on
		want     string        // the price served, minor units
		requests int64
	}{
		{0, "85.12", "8512", 1},
		{30 * time.Second, "86", "8512", 1},
		{time.Minute - time.Nanosecond, "86", "8512", 1},
		{time.Minute, "86", "8600", 2}, // exactly TTL: asked again
		{2*time.Minute - time.Nanosecond, "87", "8600", 2},
		{2 * time.Minute, "87", "8700", 3},
	}
	for _, tt := range tests {
		clk.Set(start.Add(tt.at))
		u.set(func(u *upstream) { u.prices["LTC-USD"] = tt.price })
		r, err := tk.Rate(ctx, "LTC", "USD")
		if err != nil || r.Price.String() != tt.want || u.requests.Load() != tt.requests {
			t.Errorf("at +%s: Rate = %s, %v after %d requests; want %s after %d", tt.at, r.Price, err, u.requests.Load(), tt.want, tt.requests)
		}
	}
}

func TestTickerMaxAge(t *testing.T) {
	u := newUpstream(t, "")
	clk := clock.NewFake(start)
	tk := newTicker(t, u, clk, rates.TickerConfig{TTL: time.Minute, MaxAge: 5 * time.Minute, RetryDelay: time.Second})
	ctx := context.Background()
	if _, err := tk.Rate(ctx, "LTC", "USD"); err != nil {
		t.Fatal(err)
	}
	u.failWith(http.StatusServiceUnavailable, `{"errors":[{"id":"internal_server_error","message":"down for maintenance"}]}`)
	for _, at := range []time.Duration{time.Minute, 3 * time.Minute, 5*time.Minute - time.Nanosecond} {
		clk.Set(start.Add(at))
		before := u.requests.Load()
		r, err := tk.Rate(ctx, "LTC", "USD")
		if err != nil || !r.At.Equal(start) || r.Price.String() != "8512" {
			t.Errorf("at +%s with the upstream down: Rate = %+v, %v; want the cached rate of %v", at, r, err, start)
		}
		if u.requests.Load() != before+1 {
			t.Errorf("at +%s: %d upstream requests; want one more than %d", at, u.requests.Load(), before)
		}
	}
	// At MaxAge, the rate is too old: an error, never the old rate.
	clk.Set(start.Add(5 * time.Minute))
	r, err := tk.Rate(ctx, "LTC", "USD")
	if !errors.Is(err, rates.ErrStale) || !errors.Is(err, rates.ErrUnavailable) || !strings.Contains(err.Error(), "503") ||
		!strings.Contains(err.Error(), "down for maintenance") || !r.Price.IsZero() {
		t.Errorf("at MaxAge: Rate = %+v, %v; want ErrStale and ErrUnavailable saying 503 and the upstream's message", r, err)
	}
	// Within RetryDelay of the last failure (at MaxAge less 1ns), no
	// request: the same error.
	before := u.requests.Load()
	clk.Set(start.Add(5*time.Minute - time.Nanosecond + time.Second - time.Nanosecond))
	if _, err := tk.Rate(ctx, "LTC", "USD"); !errors.Is(err, rates.ErrStale) || u.requests.Load() != before {
		t.Errorf("within RetryDelay: Rate = %v after %d requests; want ErrStale after %d", err, u.requests.Load(), before)
	}
	// The upstream back: a fresh rate.
	u.heal()
	clk.Advance(time.Nanosecond)
	r, err = tk.Rate(ctx, "LTC", "USD")
	if err != nil || !r.At.Equal(clk.Now()) || u.requests.Load() != before+1 {
		t.Errorf("upstream back: Rate = %+v, %v after %d requests; want a rate at %v after %d", r, err, u.requests.Load(), clk.Now(), before+1)
	}
}

func TestTickerRetryDelay(t *testing.T) {
	u := newUpstream(t, "")
	clk := clock.NewFake(start)
	tk := newTicker(t, u, clk, rates.TickerConfig{RetryDelay: 5 * time.Second})
	ctx := context.Background()
	u.failWith(http.StatusBadGateway, "<html>bad gateway</html>")
	tests := []struct {
		at       time.Duration
		requests int64
	}{
		{0, 1},
		{5*time.Second - time.Nanosecond, 1},
		{5 * time.Second, 2},
		{10*time.Second - time.Nanosecond, 2},
		{10 * time.Second, 3},
	}
	for _, tt := range tests {
		clk.Set(start.Add(tt.at))
		_, err := tk.Rate(ctx, "LTC", "USD")
		if !errors.Is(err, rates.ErrUnavailable) || errors.Is(err, rates.ErrStale) || !strings.Contains(err.Error(), "502 Bad Gateway") {
			t.Errorf("at +%s: Rate = %v; want ErrUnavailable saying 502 Bad Gateway", tt.at, err)
		}
		if got := u.requests.Load(); got != tt.requests {
			t.Errorf("at +%s: %d upstream requests; want %d", tt.at, got, tt.requests)
		}
	}
}

func TestTickerTooManyRequests(t *testing.T) {
	tests := []struct {
		retryAfter string
		want       time.Duration // RateLimitedError.RetryAfter
		wait       time.Duration // until the next request: max(want, RetryDelay)
	}{
		{"120", 2 * time.Minute, 2 * time.Minute},
		{start.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, 90 * time.Second},
		{start.Add(-time.Minute).Format(http.TimeFormat), 0, 5 * time.Second},
		{"", 0, 5 * time.Second},
		{"soon", 0, 5 * time.Second},
		{"-3", 0, 5 * time.Second},
		{"1", time.Second, 5 * time.Second},
		{"86400", time.Hour, time.Hour},
	}
	for _, tt := range tests {
		u := newUpstream(t, "")
		clk := clock.NewFake(start)
		tk := newTicker(t, u, clk, rates.TickerConfig{RetryDelay: 5 * time.Second})
		u.failWith(http.StatusTooManyRequests, `{"errors":[{"id":"rate_limit_exceeded","message":"Too many requests"}]}`, "Retry-After", tt.retryAfter)
		_, err := tk.Rate(context.Background(), "LTC", "USD")
		rl, ok := errors.AsType[*rates.RateLimitedError](err)
		if !ok || rl.RetryAfter != tt.want || !errors.Is(err, rates.ErrUnavailable) {
			t.Errorf("Retry-After %q: Rate = %v; want a RateLimitedError retrying after %s", tt.retryAfter, err, tt.want)
			continue
		}
		clk.Set(start.Add(tt.wait - time.Nanosecond))
		tk.Rate(context.Background(), "LTC", "USD")
		if got := u.requests.Load(); got != 1 {
			t.Errorf("Retry-After %q: %d requests before %s; want 1", tt.retryAfter, got, tt.wait)
		}
		clk.Set(start.Add(tt.wait))
		tk.Rate(context.Background(), "LTC", "USD")
		if got := u.requests.Load(); got != 2 {
			t.Errorf("Retry-After %q: %d requests at %s; want 2", tt.retryAfter, got, tt.wait)
		}
	}
}

func TestTickerBadAnswers(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		want   string // the error contains this
	}{
		{"not JSON", 200, "<html>hello</html>", "not the JSON of a spot price"},
		{"truncated", 200, `{"data":{"amount":"85.12"`, "not the JSON of a spot price"},
		{"no data", 200, `{}`, `prices "" in ""`},
		{"other pair", 200, `{"data":{"amount":"85.12","base":"BTC","currency":"USD"}}`, `prices "BTC" in "USD"`},
		{"other currency", 200, `{"data":{"amount":"85.12","base":"LTC","currency":"EUR"}}`, `prices "LTC" in "EUR"`},
		{"exponent", 200, `{"data":{"amount":"8.512e1","base":"LTC","currency":"USD"}}`, "not a plain decimal"},
		{"negative", 200, `{"data":{"amount":"-85.12","base":"LTC","currency":"USD"}}`, "not a plain decimal"},
		{"zero", 200, `{"data":{"amount":"0.00","base":"LTC","currency":"USD"}}`, "is zero"},
		{"empty amount", 200, `{"data":{"amount":"","base":"LTC","currency":"USD"}}`, "not the JSON of a spot price"},
		{"not a number", 200, `{"data":{"amount":"lots","base":"LTC","currency":"USD"}}`, "not the JSON of a spot price"},
		{"too precise", 200, `{"data":{"amount":"85.1234567890123456789","base":"LTC","currency":"USD"}}`, "more than 18 digits after"},
		{"too big", 200, `{"data":{"amount":"85.12","base":"LTC","currency":"USD","pad":"` + strings.Repeat("x", 70<<10) + `"}}`, "answer larger than"},
		{"server error", 500, `{"errors":[{"id":"internal_server_error","message":"oops"}]}`, `answered 500 Internal Server Error: "oops"`},
		{"server error, no JSON", 503, `<html></html>`, "answered 503 Service Unavailable"},
	}
	for _, tt := range tests {
		u := newUpstream(t, "")
		tk := newTicker(t, u, clock.NewFake(start), rates.TickerConfig{})
		u.failWith(tt.status, tt.body)
		r, err := tk.Rate(context.Background(), "LTC", "USD")
		if !errors.Is(err, rates.ErrUnavailable) || !strings.Contains(err.Error(), tt.want) || !r.Price.IsZero() {
			t.Errorf("%s: Rate = %+v, %v; want ErrUnavailable containing %q", tt.name, r, err, tt.want)
		}
	}
}

// TestTickerTakesAJSONNumber: an amount sent as a JSON number is read from
// its digits, never through a float.
func TestTickerTakesAJSONNumber(t *testing.T) {
	u := newUpstream(t, "")
	tk := newTicker(t, u, clock.NewFake(start), rates.TickerConfig{})
	u.failWith(200, `{"data":{"amount":0.100000000000000001,"base":"LTC","currency":"USD"}}`)
	r, err := tk.Rate(context.Background(), "LTC", "USD")
	if err != nil || r.Price.String() != "10.0000000000000001" {
		t.Errorf("Rate = %s, %v; want 10.0000000000000001 cents exactly", r.Price, err)
	}
}

func TestTickerUpstreamDown(t *testing.T) {
	u := newUpstream(t, "")
	tk := newTicker(t, u, clock.NewFake(start), rates.TickerConfig{})
	u.Close()
	_, err := tk.Rate(context.Background(), "LTC", "USD")
	if !errors.Is(err, rates.ErrUnavailable) || !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("Rate with the upstream down = %v; want ErrUnavailable saying unreachable", err)
	}
}

func TestTickerTimeout(t *testing.T) {
	u := newUpstream(t, "")
	gate := make(chan struct{})
	defer close(gate)
	u.set(func(u *upstream) { u.gate = gate })
	tk := newTicker(t, u, clock.NewFake(start), rates.TickerConfig{Timeout: 50 * time.Millisecond})
	_, err := tk.Rate(context.Background(), "LTC", "USD")
	if !errors.Is(err, rates.ErrUnavailable) || !strings.Contains(err.Error(), "no answer from") || !strings.Contains(err.Error(), "within 50ms") {
		t.Errorf("Rate with a silent upstream = %v; want ErrUnavailable saying no answer within 50ms", err)
	}
}

// waitFor polls cond until it holds, failing the test after 10 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestTickerSingleFlight(t *testing.T) {
	const n = 32
	u := newUpstream(t, "")
	gate := make(chan struct{})
	u.set(func(u *upstream) { u.gate = gate })
	clk := clock.NewFake(start)
	tk := newTicker(t, u, clk, rates.TickerConfig{})

	type result struct {
		r   rates.Rate
		err error
	}
	results := make(chan result, 2*n)
	for i := range 2 * n {
		coin := []string{"LTC", "BTC"}[i%2]
		go func() {
			r, err := tk.Rate(context.Background(), coin, "USD")
			results <- result{r, err}
		}()
	}
	// Every caller waits on its pair's one request, which the gate holds.
	waitFor(t, "all callers to wait", func() bool { return tk.Waiting("LTC", "USD") == n && tk.Waiting("BTC", "USD") == n })
	close(gate)
	for range 2 * n {
		res := <-results
		want := map[string]string{"LTC": "8512", "BTC": "9700000"}[res.r.Coin]
		if res.err != nil || res.r.Price.String() != want {
			t.Errorf("Rate = %+v, %v; want %s", res.r, res.err, want)
		}
	}
	if got := u.requests.Load(); got != 2 {
		t.Errorf("upstream requests = %d for %d concurrent misses on two pairs; want 2", got, 2*n)
	}
	if tk.Waiting("LTC", "USD") != 0 {
		t.Errorf("Waiting after the request = %d; want 0", tk.Waiting("LTC", "USD"))
	}
}

func TestTickerCallerGivesUp(t *testing.T) {
	u := newUpstream(t, "")
	gate := make(chan struct{})
	u.set(func(u *upstream) { u.gate = gate })
	tk := newTicker(t, u, clock.NewFake(start), rates.TickerConfig{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := tk.Rate(ctx, "LTC", "USD")
		done <- err
	}()
	waitFor(t, "the caller to wait", func() bool { return tk.Waiting("LTC", "USD") == 1 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) || !errors.Is(err, rates.ErrUnavailable) {
		t.Errorf("Rate with its context canceled = %v; want context.Canceled and ErrUnavailable", err)
	}
	// The request goes on for the others, and its answer is cached.
	close(gate)
	waitFor(t, "the request to end", func() bool { return tk.Waiting("LTC", "USD") == 0 })
	r, err := tk.Rate(context.Background(), "LTC", "USD")
	if err != nil || r.Price.String() != "8512" || u.requests.Load() != 1 {
		t.Errorf("Rate after = %s, %v after %d requests; want 8512 after 1", r.Price, err, u.requests.Load())
	}
}

func TestNewTickerRejects(t *testing.T) {
	tests := []struct {
		cfg  rates.TickerConfig
		want string
	}{
		{rates.TickerConfig{BaseURL: "api.coinbase.com"}, "want an http or https URL"},
		{rates.TickerConfig{BaseURL: "ftp://api.coinbase.com"}, "want an http or https URL"},
		{rates.TickerConfig{BaseURL: "https://user:secret@api.coinbase.com"}, "want no credentials"},
		{rates.TickerConfig{BaseURL: "https://api.coinbase.com?x=1"}, "want no credentials, query"},
		{rates.TickerConfig{TTL: time.Minute, MaxAge: time.Minute - 1}, "MaxAge 59.999999999s is below TTL 1m0s"},
		{rates.TickerConfig{TTL: -time.Second}, "must not be negative"},
		{rates.TickerConfig{Timeout: -time.Second}, "must not be negative"},
	}
	for _, tt := range tests {
		tk, err := rates.NewTicker(tt.cfg)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("NewTicker(%+v) = %v, %v; want an error containing %q", tt.cfg, tk, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("NewTicker error %q shows the URL's password", err)
		}
	}
	// A TTL above the default MaxAge raises MaxAge to it.
	if _, err := rates.NewTicker(rates.TickerConfig{TTL: 10 * time.Minute}); err != nil {
		t.Errorf("NewTicker(TTL 10m) = %v; want MaxAge raised to the TTL", err)
	}
}

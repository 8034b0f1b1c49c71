package rates_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/internal/clock"
	"github.com/checkoutd/checkoutd/internal/rates"
)

func TestQuoteValid(t *testing.T) {
	made := time.Date(2026, 11, 24, 18, 0, 0, 0, time.UTC)
	tests := []struct {
		validity time.Duration
		at       time.Duration // since made
		valid    bool
		expires  time.Duration // since made
	}{
		{0, 0, true, 15 * time.Minute},
		{0, -time.Minute, true, 15 * time.Minute}, // a clock behind the quote's
		{0, 15*time.Minute - time.Nanosecond, true, 15 * time.Minute},
		{0, 15 * time.Minute, false, 15 * time.Minute},
		{0, 15*time.Minute + time.Nanosecond, false, 15 * time.Minute},
		{-time.Second, 15*time.Minute - time.Nanosecond, true, 15 * time.Minute},
		{5 * time.Minute, 5*time.Minute - time.Nanosecond, true, 5 * time.Minute},
		{5 * time.Minute, 5 * time.Minute, false, 5 * time.Minute},
		{time.Hour, 59 * time.Minute, true, time.Hour},
	}
	for _, tt := range tests {
		valid, expires := rates.QuoteValid(made, made.Add(tt.at), tt.validity)
		if valid != tt.valid || !expires.Equal(made.Add(tt.expires)) {
			t.Errorf("QuoteValid(made, made%+v, %s) = %v, made+%s; want %v, made+%s", tt.at, tt.validity, valid, expires.Sub(made), tt.valid, tt.expires)
		}
		if e := rates.QuoteExpiry(made, tt.validity); !e.Equal(expires) {
			t.Errorf("QuoteExpiry(made, %s) = %v; want %v", tt.validity, e, expires)
		}
	}
}

func TestChain(t *testing.T) {
	fixed, err := rates.ParseFixed("LTC/USD=80", configured)
	if err != nil {
		t.Fatal(err)
	}
	u := newUpstream(t, "")
	tk := newTicker(t, u, clock.NewFake(start), rates.TickerConfig{})
	chain := rates.Chain{fixed, tk}
	ctx := context.Background()

	// The operator's rate wins where configured; the ticker answers elsewhere.
	if r, err := chain.Rate(ctx, "LTC", "USD"); err != nil || r.Source != rates.SourceFixed || r.Price.String() != "8000" {
		t.Errorf("Chain.Rate(LTC, USD) = %+v, %v; want the fixed 8000", r, err)
	}
	if r, err := chain.Rate(ctx, "BTC", "USD"); err != nil || r.Source != rates.SourceCoinbase || r.Price.String() != "9700000" {
		t.Errorf("Chain.Rate(BTC, USD) = %+v, %v; want coinbase's 9700000", r, err)
	}
	// Neither knows it: the last source's ErrUnknownPair.
	if _, err := chain.Rate(ctx, "LTC", "KWD"); !errors.Is(err, rates.ErrUnknownPair) {
		t.Errorf("Chain.Rate(LTC, KWD) = %v; want ErrUnknownPair", err)
	}
	// An outage is not hidden behind another source.
	u.failWith(503, "")
	if _, err := (rates.Chain{tk, fixed}).Rate(ctx, "ETH", "EUR"); !errors.Is(err, rates.ErrUnavailable) {
		t.Errorf("Chain.Rate with the ticker down = %v; want ErrUnavailable", err)
	}
	if _, err := (rates.Chain{}).Rate(ctx, "LTC", "USD"); !errors.Is(err, rates.ErrUnknownPair) || !strings.Contains(err.Error(), "no rate source configured") {
		t.Errorf("empty Chain.Rate = %v; want ErrUnknownPair saying no source is configured", err)
	}
}

// sourceFunc is a Source of a function, to inject a Source's faults.
type sourceFunc func(ctx context.Context, coin, currency string) (rates.Rate, error)

func (f sourceFunc) Rate(ctx context.Context, coin, currency string) (rates.Rate, error) {
	return f(ctx, coin, currency)
}

func TestQuote(t *testing.T) {
	fixed, err := rates.ParseFixed("LTC/USD=85.12", configured)
	if err != nil {
		t.Fatal(err)
	}
	ltc := coin(t, "LTC")
	amount, r, err := rates.Quote(context.Background(), fixed, 1000, "usd", ltc)
	if err != nil || amount.String() != "11748121" || r.Price.String() != "8512" || r.Source != rates.SourceFixed {
		t.Errorf("Quote($10 in LTC) = %s, %+v, %v; want 11748121 at the fixed 8512", amount, r, err)
	}
	if _, _, err := rates.Quote(context.Background(), fixed, 1000, "EUR", ltc); !errors.Is(err, rates.ErrUnknownPair) {
		t.Errorf("Quote in EUR = %v; want ErrUnknownPair", err)
	}
	// A Source answering for another pair, or with no price, is refused
	// rather than quoted.
	for name, bad := range map[string]rates.Rate{
		"other coin":     rate(t, "BTC", "USD", "97000"),
		"other currency": rate(t, "LTC", "EUR", "80"),
		"no price":       {Coin: "LTC", Currency: "USD"},
	} {
		src := sourceFunc(func(context.Context, string, string) (rates.Rate, error) { return bad, nil })
		if amount, _, err := rates.Quote(context.Background(), src, 1000, "USD", ltc); !errors.Is(err, rates.ErrUnavailable) {
			t.Errorf("Quote from a source answering with the %s = %v, %v; want ErrUnavailable", name, amount, err)
		}
	}
}

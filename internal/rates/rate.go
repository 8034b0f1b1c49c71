package rates

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

// Rate is the price of one whole coin in a currency, as a Source observed
// it.
type Rate struct {
	Coin     string // upper-case code: BTC
	Currency string // upper-case ISO 4217 code: USD
	// Price is one whole coin in minor units of Currency.
	Price Price
	// At is when the price was observed: when a Ticker asked for it, or
	// when Fixed rates were configured.
	At time.Time
	// Source names where the rate comes from: SourceFixed, SourceCoinbase.
	Source string
}

// The names of the sources, in Rate.Source.
const (
	SourceFixed    = "fixed"
	SourceCoinbase = "coinbase"
)

// Source gives the rate of a coin in a currency. coin and currency are
// codes in any case. A Source applies its own staleness rule: a rate it
// returns may be quoted as is, and when it has no rate fresh enough it
// returns an error. Implementations are safe for concurrent use.
type Source interface {
	Rate(ctx context.Context, coin, currency string) (Rate, error)
}

// ErrUnknownPair is wrapped by the errors of a Source that has no rate at
// all for a pair: a coin or currency it does not know, or a pair it was
// not configured with. Asking again will not help; another Source may.
var ErrUnknownPair = errors.New("no rate for this pair")

// ErrUnavailable is wrapped by the errors of a Source that has a rate for
// the pair but cannot give a fresh enough one now: its upstream is down,
// slow, limiting requests (RateLimitedError) or answering nonsense. The
// session cannot be quoted in that coin for now; asking later may work.
var ErrUnavailable = errors.New("rate unavailable")

// ErrStale is wrapped, with ErrUnavailable, when the last rate a Source
// had is older than its maximum age and could not be renewed.
var ErrStale = errors.New("rate too old")

// RateLimitedError is the error of an upstream that answered 429 Too Many
// Requests. It wraps ErrUnavailable.
type RateLimitedError struct {
	Source string
	// RetryAfter is how long the upstream asked to be left alone (its
	// Retry-After header); zero when it did not say.
	RetryAfter time.Duration
}

// Error says the upstream is limiting requests, and for how long.
func (e *RateLimitedError) Error() string {
	if e.RetryAfter > 0 {
		return fmt.Sprintf("%s: rate unavailable: too many requests, retry after %s", e.Source, e.RetryAfter)
	}
	return fmt.Sprintf("%s: rate unavailable: too many requests", e.Source)
}

// Unwrap makes a RateLimitedError match ErrUnavailable.
func (e *RateLimitedError) Unwrap() error { return ErrUnavailable }

// normalizePair returns the upper-case codes of a coin of checkout.Coins
// and a payable currency, or an error saying which is unknown.
func normalizePair(coin, currency string) (string, string, error) {
	c, ok := checkout.CoinByCode(coin)
	if !ok {
		return "", "", fmt.Errorf("unknown coin %q: the coins are BTC, LTC, ETH and SOL", coin)
	}
	cur, ok := checkout.NormalizeCurrency(currency)
	if !ok {
		return "", "", fmt.Errorf("unknown currency %q: use an ISO 4217 code such as USD", currency)
	}
	return c.Code, cur, nil
}

// knownPair is normalizePair for a Source: its error wraps ErrUnknownPair.
func knownPair(coin, currency string) (string, string, error) {
	c, cur, err := normalizePair(coin, currency)
	if err != nil {
		return "", "", fmt.Errorf("%w: %w", ErrUnknownPair, err)
	}
	return c, cur, nil
}

// Chain is a Source that asks its sources in turn, and returns the first
// rate, or the first error that is not ErrUnknownPair: Chain{fixed, ticker}
// takes the operator's rates where configured and the ticker's elsewhere.
// A source that is unavailable is not skipped, so an outage is never
// hidden behind a rate of another source.
type Chain []Source

// Rate returns the rate of the first source that knows the pair.
func (c Chain) Rate(ctx context.Context, coin, currency string) (Rate, error) {
	err := fmt.Errorf("%w: %s/%s: no rate source configured", ErrUnknownPair, coin, currency)
	for _, s := range c {
		r, serr := s.Rate(ctx, coin, currency)
		if serr == nil || !errors.Is(serr, ErrUnknownPair) {
			return r, serr
		}
		err = serr
	}
	return Rate{}, err
}

// Quote fetches the rate of coin in currency from s and converts
// amountMinor at it (CoinAmount): the amount to quote, and the rate it was
// quoted at, to record with the quote.
func Quote(ctx context.Context, s Source, amountMinor int64, currency string, coin checkout.Coin) (*big.Int, Rate, error) {
	r, err := s.Rate(ctx, coin.Code, currency)
	if err != nil {
		return nil, Rate{}, err
	}
	if r.Price.IsZero() || !strings.EqualFold(r.Coin, coin.Code) || !strings.EqualFold(r.Currency, currency) {
		return nil, Rate{}, fmt.Errorf("%w: %s answered %s/%s at %s for %s/%s", ErrUnavailable, r.Source, r.Coin, r.Currency, r.Price, coin.Code, currency)
	}
	return CoinAmount(amountMinor, coin, r), r, nil
}

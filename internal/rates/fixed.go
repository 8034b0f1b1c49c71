package rates

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Fixed is a Source of the operator's rates, set once from configuration
// (ParseFixed). Its rates never go stale: they hold, and keep the At they
// were configured at, until the operator configures others. It has no
// rate for a pair it was not given (ErrUnknownPair).
type Fixed struct {
	rates map[pair]Rate
	order []pair
}

type pair struct{ coin, currency string }

// ParseFixed parses the operator's rates: comma-separated entries
// COIN/CURRENCY=PRICE, such as "LTC/USD=85.12,BTC/USD=97000,SOL/JPY=21000",
// where PRICE is one whole coin in major units of the currency, a plain
// decimal (ParsePrice). Codes may be in any case; spaces around entries
// are ignored. Each coin must be one of checkout.Coins, each currency a
// payable ISO 4217 code, and each pair appear once. at is when the rates
// were configured, the At of every rate. An error names the entry at fault
// by number and text, and says why.
func ParseFixed(s string, at time.Time) (*Fixed, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("crypto rates: none given: write COIN/CURRENCY=PRICE entries separated by commas, such as LTC/USD=85.12,BTC/USD=97000")
	}
	f := &Fixed{rates: map[pair]Rate{}}
	seen := map[pair]int{}
	for i, entry := range strings.Split(s, ",") {
		n := i + 1
		entry = strings.TrimSpace(entry)
		r, err := parseEntry(entry, at)
		if err != nil {
			return nil, fmt.Errorf("crypto rates: entry %d %q: %w", n, entry, err)
		}
		p := pair{r.Coin, r.Currency}
		if first, dup := seen[p]; dup {
			return nil, fmt.Errorf("crypto rates: entry %d %q: %s/%s is already priced by entry %d: give each pair once", n, entry, p.coin, p.currency, first)
		}
		seen[p] = n
		f.rates[p] = r
		f.order = append(f.order, p)
	}
	return f, nil
}

func parseEntry(entry string, at time.Time) (Rate, error) {
	if entry == "" {
		return Rate{}, errors.New("empty: remove the extra comma, or write COIN/CURRENCY=PRICE")
	}
	codes, price, ok := strings.Cut(entry, "=")
	if !ok {
		return Rate{}, errors.New("no '=': write COIN/CURRENCY=PRICE, such as LTC/USD=85.12")
	}
	coin, currency, ok := strings.Cut(strings.TrimSpace(codes), "/")
	if !ok {
		return Rate{}, errors.New("no '/' between coin and currency: write COIN/CURRENCY=PRICE, such as LTC/USD=85.12")
	}
	coin, currency, err := normalizePair(strings.TrimSpace(coin), strings.TrimSpace(currency))
	if err != nil {
		return Rate{}, err
	}
	p, err := ParsePrice(strings.TrimSpace(price), currency)
	if err != nil {
		return Rate{}, err
	}
	return Rate{Coin: coin, Currency: currency, Price: p, At: at, Source: SourceFixed}, nil
}

// Rate returns the configured rate of the pair, or an error wrapping
// ErrUnknownPair when it was not configured.
func (f *Fixed) Rate(ctx context.Context, coin, currency string) (Rate, error) {
	c, cur, err := knownPair(coin, currency)
	if err != nil {
		return Rate{}, err
	}
	r, ok := f.rates[pair{c, cur}]
	if !ok {
		return Rate{}, fmt.Errorf("%w: %s/%s is not among the configured crypto rates", ErrUnknownPair, c, cur)
	}
	return r, nil
}

// Rates returns the configured rates in the order given, for a log line at
// start or a status page.
func (f *Fixed) Rates() []Rate {
	out := make([]Rate, 0, len(f.order))
	for _, p := range f.order {
		out = append(out, f.rates[p])
	}
	return slices.Clip(out)
}

// String renders the rates in the syntax ParseFixed reads, canonically:
// upper-case codes and prices without trailing zeros.
func (f *Fixed) String() string {
	parts := make([]string, 0, len(f.order))
	for _, r := range f.Rates() {
		parts = append(parts, r.Coin+"/"+r.Currency+"="+r.Price.Major(r.Currency))
	}
	return strings.Join(parts, ",")
}

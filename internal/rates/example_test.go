package rates_test

import (
	"context"
	"fmt"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/rates"
)

// The operator's fixed rates first, then (in a real configuration) a
// Ticker for the pairs they do not name; a quote of $10.00 in LTC, rounded
// up to the litoshi, and how long it holds.
func Example() {
	now := time.Date(2026, 11, 24, 18, 0, 0, 0, time.UTC)
	fixed, err := rates.ParseFixed("LTC/USD=85.12,SOL/USD=0.000123", now)
	if err != nil {
		fmt.Println(err)
		return
	}
	src := rates.Chain{fixed} // and a *rates.Ticker from rates.NewTicker
	ltc, _ := checkout.CoinByCode("LTC")
	amount, r, err := rates.Quote(context.Background(), src, 1000, "USD", ltc)
	if err != nil {
		fmt.Println(err)
		return
	}
	valid, expires := rates.QuoteValid(now, now.Add(20*time.Minute), rates.QuoteValidity)
	fmt.Printf("%s LTC (%s litoshi) at $%s from %s\n", checkout.FormatCoin(amount.String(), ltc), amount, r.Price.Major("USD"), r.Source)
	fmt.Printf("expires %s; valid 20 minutes later: %v\n", expires.Format(time.Kitchen), valid)
	// Output:
	// 0.11748121 LTC (11748121 litoshi) at $85.12 from fixed
	// expires 6:15PM; valid 20 minutes later: false
}

func ExampleParseFixed_error() {
	_, err := rates.ParseFixed("LTC/USD=85.12,ETH/EUR=-3100", time.Now())
	fmt.Println(err)
	// Output:
	// crypto rates: entry 2 "ETH/EUR=-3100": price "-3100" is not a plain decimal: write digits with at most one point, such as 85.12 (no sign, exponent, spaces or separators)
}

package rates_test

import (
	"math"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/rates"
)

func coin(t testing.TB, code string) checkout.Coin {
	t.Helper()
	c, ok := checkout.CoinByCode(code)
	if !ok {
		t.Fatalf("CoinByCode(%q) found nothing", code)
	}
	return c
}

func mustPrice(t testing.TB, s, currency string) rates.Price {
	t.Helper()
	p, err := rates.ParsePrice(s, currency)
	if err != nil {
		t.Fatalf("ParsePrice(%q, %s) = %v", s, currency, err)
	}
	return p
}

func rate(t testing.TB, code, currency, price string) rates.Rate {
	t.Helper()
	return rates.Rate{Coin: code, Currency: currency, Price: mustPrice(t, price, currency), At: time.Unix(0, 0), Source: "test"}
}

func TestParsePrice(t *testing.T) {
	tests := []struct {
		s, currency string
		minor       string // Price.String(), in minor units
		major       string // Price.Major(currency)
	}{
		{"85.12", "USD", "8512", "85.12"},
		{"85.1", "USD", "8510", "85.1"},
		{"85.120", "USD", "8512", "85.12"},
		{"97000", "USD", "9700000", "97000"},
		{"3100.5", "EUR", "310050", "3100.5"},
		{"21000", "JPY", "21000", "21000"},
		{"21000.5", "JPY", "21000.5", "21000.5"},
		{"0.000123", "USD", "0.0123", "0.000123"},
		{"0.01", "USD", "1", "0.01"},
		{"0.001", "USD", "0.1", "0.001"},
		{"15000000", "JPY", "15000000", "15000000"},
		{"3.5", "KWD", "3500", "3.5"},
		{"1", "CLF", "10000", "1"},
		{"0085.12", "usd", "8512", "85.12"},
		{"999999999999999999", "USD", "99999999999999999900", "999999999999999999"},   // MaxIntegerDigits
		{"0.000000000000000001", "USD", "0.0000000000000001", "0.000000000000000001"}, // MaxFractionDigits
		{"0.000000000000000001", "JPY", "0.000000000000000001", "0.000000000000000001"},
	}
	for _, tt := range tests {
		p, err := rates.ParsePrice(tt.s, tt.currency)
		if err != nil {
			t.Errorf("ParsePrice(%q, %s) = %v; want %s", tt.s, tt.currency, err, tt.minor)
			continue
		}
		if got := p.String(); got != tt.minor {
			t.Errorf("ParsePrice(%q, %s).String() = %s; want %s", tt.s, tt.currency, got, tt.minor)
		}
		if got := p.Major(tt.currency); got != tt.major {
			t.Errorf("ParsePrice(%q, %s).Major() = %s; want %s", tt.s, tt.currency, got, tt.major)
		}
		if back, err := rates.ParseMinorPrice(p.String()); err != nil || back.Cmp(p) != 0 || back.String() != p.String() {
			t.Errorf("ParseMinorPrice(%q) = %v, %v; want the price parsed from %q", p.String(), back, err, tt.s)
		}
	}
}

func TestParsePriceRejects(t *testing.T) {
	tests := []struct {
		s, currency, why string
	}{
		{"", "USD", "empty"},
		{"0", "USD", "zero"},
		{"0.000", "USD", "zero"},
		{"-1", "USD", "not a plain decimal"},
		{"+1", "USD", "not a plain decimal"},
		{"1e3", "USD", "not a plain decimal"},
		{"1_000", "USD", "not a plain decimal"},
		{"1,000", "USD", "not a plain decimal"},
		{" 1", "USD", "not a plain decimal"},
		{".5", "USD", "not a plain decimal"},
		{"1.", "USD", "not a plain decimal"},
		{"1.2.3", "USD", "not a plain decimal"},
		{".", "USD", "not a plain decimal"},
		{"NaN", "USD", "not a plain decimal"},
		{"Inf", "USD", "not a plain decimal"},
		{"１", "USD", "not a plain decimal"}, // a full-width digit
		{"1000000000000000000", "USD", "more than 18 digits before"},
		{"0.0000000000000000001", "USD", "more than 18 digits after"},
		{"1.0000000000000000000", "USD", "more than 18 digits after"},
		{"85.12", "XYZ", "unknown currency"},
		{"85.12", "", "unknown currency"},
	}
	for _, tt := range tests {
		p, err := rates.ParsePrice(tt.s, tt.currency)
		if err == nil || !strings.Contains(err.Error(), tt.why) {
			t.Errorf("ParsePrice(%q, %q) = %v, %v; want an error saying %q", tt.s, tt.currency, p, err, tt.why)
		}
	}
}

func TestParseMinorPrice(t *testing.T) {
	tests := []struct{ s, want, err string }{
		{"8512", "8512", ""},
		{"0.0123", "0.0123", ""},
		{"85.1200", "85.12", ""},
		{"9999999999999999999999", "9999999999999999999999", ""},
		{"0.000000000000000001", "0.000000000000000001", ""},
		{"99999999999999999999999", "", "more than 22 digits before"},
		{"0.0000000000000000001", "", "more than 18 digits after"},
		{"0", "", "is zero"},
		{"-1", "", "not a plain decimal"},
		{"", "", "empty"},
	}
	for _, tt := range tests {
		p, err := rates.ParseMinorPrice(tt.s)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseMinorPrice(%q) = %v, %v; want an error containing %q", tt.s, p, err, tt.err)
			}
			continue
		}
		if err != nil || p.String() != tt.want {
			t.Errorf("ParseMinorPrice(%q) = %v, %v; want %s", tt.s, p, err, tt.want)
		}
	}
}

func TestPriceFromMinor(t *testing.T) {
	p, err := rates.PriceFromMinor(6_000_000)
	if err != nil || p.String() != "6000000" || p.Cmp(mustPrice(t, "60000", "USD")) != 0 {
		t.Errorf("PriceFromMinor(6000000) = %v, %v; want 6000000, equal to $60000", p, err)
	}
	for _, n := range []int64{0, -1, math.MinInt64} {
		if p, err := rates.PriceFromMinor(n); err == nil {
			t.Errorf("PriceFromMinor(%d) = %v; want an error", n, p)
		}
	}
	if !(rates.Price{}).IsZero() || p.IsZero() {
		t.Errorf("IsZero: the zero Price must be zero and a parsed one not")
	}
}

func TestPriceRatIsACopy(t *testing.T) {
	p := mustPrice(t, "85.12", "USD")
	p.Rat().SetInt64(1)
	if got := p.String(); got != "8512" {
		t.Errorf("after changing Rat(), String() = %s; want 8512", got)
	}
	if got, want := p.Rat(), big.NewRat(8512, 1); got.Cmp(want) != 0 {
		t.Errorf("Rat() = %v; want %v", got, want)
	}
}

func TestCoinAmount(t *testing.T) {
	tests := []struct {
		amount      int64
		currency    string
		coin, price string
		want        string
	}{
		// $10.00 at $85.12 per LTC: 1000e8/8512 = 11748120.30… litoshi, up.
		{1000, "USD", "LTC", "85.12", "11748121"},
		// Exactly divisible: no rounding. $97.00 at $97,000 = 0.001 BTC.
		{9700, "USD", "BTC", "97000", "100000"},
		// One minor unit over the exact boundary rounds up by one base unit.
		{9701, "USD", "BTC", "97000", "100011"}, // 9701e8/9700000 = 100010.3…
		// One below the boundary, up to the boundary's neighbour.
		{9699, "USD", "BTC", "97000", "99990"}, // 9699e8/9700000 = 99989.69…
		// Sub-minor-unit price: $1.00 at $0.000123 per SOL = 8130.08… SOL.
		{100, "USD", "SOL", "0.000123", "8130081300814"},
		// A tiny price with 18 decimals: $0.01 buys 10^16 ETH.
		{1, "USD", "ETH", "0.000000000000000001", "10000000000000000000000000000000000"},
		// A huge price in a zero-exponent currency: ¥15,000,000 per BTC.
		{1500, "JPY", "BTC", "15000000", "10000"},
		{1501, "JPY", "BTC", "15000000", "10007"}, // 1501e8/15e6 = 10006.67
		// The largest amount at the largest price: no overflow.
		{math.MaxInt64, "USD", "ETH", "999999999999999999.999999999999999999", "92233720368547759"},
		// ETH in wei at a fractional euro price.
		{12345, "EUR", "ETH", "3100.5", "39816158684083213"}, // 123.45/3100.5 ETH
		// KWD has three decimals: 1.000 KWD at 3.5 KWD per LTC.
		{1000, "KWD", "LTC", "3.5", "28571429"},
		{0, "USD", "BTC", "97000", "0"},
	}
	for _, tt := range tests {
		got := rates.CoinAmount(tt.amount, coin(t, tt.coin), rate(t, tt.coin, tt.currency, tt.price))
		if got.String() != tt.want {
			t.Errorf("CoinAmount(%d %s, %s at %s) = %s; want %s", tt.amount, tt.currency, tt.coin, tt.price, got, tt.want)
		}
	}
}

// TestCoinAmountRoundsUpExactly checks both sides of every boundary: the
// amount never pays the merchant less than amountMinor, and one base unit
// less would.
func TestCoinAmountRoundsUpExactly(t *testing.T) {
	for _, tt := range []struct{ coin, currency, price string }{
		{"BTC", "USD", "97000"}, {"LTC", "USD", "85.12"}, {"ETH", "EUR", "3100.5"},
		{"SOL", "JPY", "21000"}, {"SOL", "USD", "0.000123"}, {"BTC", "JPY", "15000000"},
		{"LTC", "KWD", "26.123"},
	} {
		c, r := coin(t, tt.coin), rate(t, tt.coin, tt.currency, tt.price)
		price := r.Price.Rat()
		unit := new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(c.Decimals)), nil))
		for _, amount := range []int64{1, 2, 99, 100, 101, 999_999, 1_000_000, 123_456_789} {
			got := rates.CoinAmount(amount, c, r)
			// value in minor units of got base units: got × unit × price
			value := new(big.Rat).Mul(new(big.Rat).Mul(new(big.Rat).SetInt(got), unit), price)
			less := new(big.Rat).Mul(new(big.Rat).Mul(new(big.Rat).SetInt(new(big.Int).Sub(got, big.NewInt(1))), unit), price)
			want := new(big.Rat).SetInt64(amount)
			if value.Cmp(want) < 0 || less.Cmp(want) >= 0 {
				t.Errorf("CoinAmount(%d %s, %s at %s) = %s: worth %s, one less %s; want the least amount worth at least %d",
					amount, tt.currency, tt.coin, tt.price, got, value.FloatString(6), less.FloatString(6), amount)
			}
		}
	}
}

// TestCoinAmountMatchesCheckout keeps checkout.CoinAmount's behaviour for
// integer prices.
func TestCoinAmountMatchesCheckout(t *testing.T) {
	for _, c := range checkout.Coins {
		for _, price := range []int64{1, 7, 100, 8512, 6_000_000, 15_000_000, 999_999_999_999} {
			p, err := rates.PriceFromMinor(price)
			if err != nil {
				t.Fatal(err)
			}
			r := rates.Rate{Coin: c.Code, Currency: "USD", Price: p}
			for _, amount := range []int64{-100, 0, 1, 99, 100, 12345, math.MaxInt64} {
				got, want := rates.CoinAmount(amount, c, r), checkout.CoinAmount(amount, c, price)
				if got.Cmp(want) != 0 {
					t.Errorf("CoinAmount(%d, %s, %d) = %s; checkout.CoinAmount = %s", amount, c.Code, price, got, want)
				}
			}
		}
	}
}

func TestCoinAmountPanicsOnAWrongRate(t *testing.T) {
	for name, r := range map[string]rates.Rate{
		"zero rate":  {},
		"other coin": rate(t, "LTC", "USD", "85.12"),
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("CoinAmount with the %s did not panic", name)
				}
			}()
			rates.CoinAmount(100, coin(t, "BTC"), r)
		}()
	}
}

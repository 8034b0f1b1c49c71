package checkout_test

import (
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

func coin(t *testing.T, code string) checkout.Coin {
	t.Helper()
	c, ok := checkout.CoinByCode(code)
	if !ok {
		t.Fatalf("CoinByCode(%q) found nothing", code)
	}
	return c
}

// TestCoinTimescales checks the confirmation times against SPEC.md: Solana
// and Ethereum under a minute, Bitcoin and Litecoin 10 to 30 minutes.
func TestCoinTimescales(t *testing.T) {
	for code, bounds := range map[string][2]time.Duration{
		"SOL": {0, time.Minute}, "ETH": {0, time.Minute},
		"BTC": {10 * time.Minute, 30 * time.Minute}, "LTC": {10 * time.Minute, 30 * time.Minute},
	} {
		d := coin(t, code).ConfirmationTime()
		if d <= bounds[0] || d >= bounds[1] {
			t.Errorf("%s confirms in %v; want between %v and %v", code, d, bounds[0], bounds[1])
		}
	}
	if _, ok := checkout.CoinByCode("btc"); !ok {
		t.Errorf("CoinByCode is case-sensitive")
	}
	if _, ok := checkout.CoinByCode("DOGE"); ok {
		t.Errorf("CoinByCode(DOGE) found a coin")
	}
}

func TestConfirmationsAt(t *testing.T) {
	for _, c := range checkout.Coins {
		b := t0
		for k := 1; k <= c.Confirmations; k++ {
			at := b.Add(time.Duration(k) * c.BlockTime)
			if got := c.ConfirmationsAt(b, at.Add(-time.Nanosecond)); got != k-1 {
				t.Errorf("%s just before block %d: %d confirmations; want %d", c.Code, k, got, k-1)
			}
			if got := c.ConfirmationsAt(b, at); got != k {
				t.Errorf("%s at block %d: %d confirmations; want %d", c.Code, k, got, k)
			}
		}
		if got := c.ConfirmationsAt(b, b.Add(24*time.Hour)); got != c.Confirmations {
			t.Errorf("%s a day later: %d; want the %d needed, no more", c.Code, got, c.Confirmations)
		}
		if got := c.ConfirmationsAt(b, b.Add(-time.Hour)); got != 0 {
			t.Errorf("%s before its broadcast: %d; want 0", c.Code, got)
		}
	}
}

// TestConfirmationDeadline: each coin's deadline is docs/payments.md's, far
// beyond its usual confirmation time.
func TestConfirmationDeadline(t *testing.T) {
	for code, want := range map[string]time.Duration{"BTC": 24 * time.Hour, "LTC": 24 * time.Hour, "ETH": 3 * time.Hour, "SOL": 10 * time.Minute} {
		c := coin(t, code)
		if c.ConfirmationDeadline != want || c.ConfirmationDeadline < 10*c.ConfirmationTime() {
			t.Errorf("%s deadline = %v; want %v, at least ten times its %v", code, c.ConfirmationDeadline, want, c.ConfirmationTime())
		}
		if got := c.Deadline(t0); !got.Equal(t0.Add(want)) {
			t.Errorf("%s Deadline(t0) = %v; want %v", code, got, t0.Add(want))
		}
	}
}

// TestNextLook: an unconfirmed payment is looked at again when its missing
// confirmations could be in, later the longer it is overdue (a quarter of
// the time past its usual confirmation time, at most an hour), at least a
// second on, and never after its deadline.
func TestNextLook(t *testing.T) {
	btc := coin(t, "BTC")
	for _, tt := range []struct {
		confs   int
		elapsed time.Duration
		want    time.Duration // after now
	}{
		{0, 20 * time.Minute, 20 * time.Minute},              // two blocks missing
		{1, 20 * time.Minute, 10 * time.Minute},              // one block missing
		{1, 2 * time.Hour, 25 * time.Minute},                 // a quarter of 100 minutes overdue
		{1, 10 * time.Hour, time.Hour},                       // at most an hour
		{1, 23*time.Hour + 30*time.Minute, 30 * time.Minute}, // the deadline
	} {
		now := t0.Add(tt.elapsed)
		if got := btc.NextLook(tt.confs, t0, now); !got.Equal(now.Add(tt.want)) {
			t.Errorf("NextLook(%d confirmations, %v after the broadcast) = %v after; want %v", tt.confs, tt.elapsed, got.Sub(now), tt.want)
		}
	}
	sol := coin(t, "SOL")
	if got := sol.NextLook(31, t0, t0.Add(13*time.Second)); got.Sub(t0.Add(13*time.Second)) != time.Second {
		t.Errorf("SOL one block short: next look %v later; want a second (the job's floor)", got.Sub(t0.Add(13*time.Second)))
	}
}

func TestCoinAmount(t *testing.T) {
	tests := []struct {
		amount int64
		coin   string
		price  int64 // minor units of the currency per coin
		want   string
	}{
		{3999, "BTC", 6_000_000, "66650"},                      // $39.99 at $60,000: exact
		{1, "BTC", 6_000_000, "17"},                            // 16.67 satoshi, rounded up
		{3999, "ETH", 300_000, "13330000000000000"},            // wei
		{100_000_000, "ETH", 1, "100000000000000000000000000"}, // 10^26 wei: beyond 64 bits
		{3999, "SOL", 15_000, "266600000"},                     // lamports
		{3999, "LTC", 8_000, "49987500"},                       // litoshi
		{1500, "BTC", 60_000, "2500000"},                       // ¥1,500 at ¥60,000 (no minor unit)
		{1, "SOL", 3, "333333334"},                             // a third, rounded up
	}
	for _, tt := range tests {
		if got := checkout.CoinAmount(tt.amount, coin(t, tt.coin), tt.price).String(); got != tt.want {
			t.Errorf("CoinAmount(%d, %s, %d) = %s; want %s", tt.amount, tt.coin, tt.price, got, tt.want)
		}
	}
}

func TestFormatCoin(t *testing.T) {
	tests := []struct{ base, coin, want string }{
		{"66650", "BTC", "0.0006665"},
		{"100000000", "BTC", "1"},
		{"123456789", "BTC", "1.23456789"},
		{"1", "BTC", "0.00000001"},
		{"0", "BTC", "0"},
		{"13330000000000000", "ETH", "0.01333"},
		{"1000000000000000000000000000", "ETH", "1000000000"},
		{"266600000", "SOL", "0.2666"},
		{"not a number", "BTC", "not a number"},
		{"-5", "BTC", "-5"},
	}
	for _, tt := range tests {
		if got := checkout.FormatCoin(tt.base, coin(t, tt.coin)); got != tt.want {
			t.Errorf("FormatCoin(%s, %s) = %q; want %q", tt.base, tt.coin, got, tt.want)
		}
	}
}

func TestPaymentURI(t *testing.T) {
	tests := []struct{ coin, address, base, want string }{
		{"BTC", "tb1qabc", "66650", "bitcoin:tb1qabc?amount=0.0006665"},
		{"LTC", "tltc1qabc", "49987500", "litecoin:tltc1qabc?amount=0.499875"},
		{"ETH", "0xabc", "13330000000000000", "ethereum:0xabc?value=13330000000000000"},
		{"SOL", "So1abc", "266600000", "solana:So1abc?amount=0.2666"},
	}
	for _, tt := range tests {
		q := &checkout.CryptoQuote{Coin: tt.coin, Address: tt.address, AmountBase: tt.base}
		if got := q.PaymentURI(); got != tt.want {
			t.Errorf("PaymentURI(%s) = %q; want %q", tt.coin, got, tt.want)
		}
	}
}

func TestFormatAmount(t *testing.T) {
	tests := []struct {
		amount   int64
		currency string
		want     string
	}{
		{3999, "USD", "$39.99"},
		{123456, "USD", "$1,234.56"},
		{99, "USD", "$0.99"},
		{5, "EUR", "€0.05"},
		{1500, "JPY", "¥1,500"},
		{1234567, "KWD", "1,234.567 KWD"},
		{100_000_000, "USD", "$1,000,000.00"},
		{-250, "GBP", "-£2.50"},
		{0, "CHF", "0.00 CHF"},
	}
	for _, tt := range tests {
		if got := checkout.FormatAmount(tt.amount, tt.currency); got != tt.want {
			t.Errorf("FormatAmount(%d, %s) = %q; want %q", tt.amount, tt.currency, got, tt.want)
		}
	}
}

func TestAmountDecimal(t *testing.T) {
	tests := []struct {
		amount   int64
		currency string
		want     string
	}{
		{123456, "USD", "1234.56"},
		{1, "USD", "0.01"},
		{0, "USD", "0.00"},
		{1500, "JPY", "1500"},
		{1234567, "KWD", "1234.567"},
		{5, "CLF", "0.0005"},
		{-250, "GBP", "-2.50"},
		{checkout.MaxTotal, "USD", "1000000.00"},
	}
	for _, tt := range tests {
		if got := checkout.AmountDecimal(tt.amount, tt.currency); got != tt.want {
			t.Errorf("AmountDecimal(%d, %s) = %q; want %q", tt.amount, tt.currency, got, tt.want)
		}
	}
}

// ParseAmount reads what a merchant types exactly, within the currency's
// decimals, from the smallest unit to MaxTotal, and refuses the rest with
// a sentence that says what to type.
func TestParseAmount(t *testing.T) {
	tests := []struct {
		in, currency string
		want         int64
	}{
		{"12.34", "USD", 1234},
		{"0.01", "USD", 1},     // the smallest unit
		{"30.00", "USD", 3000}, // all of a $30.00 payment
		{"29.99", "USD", 2999},
		{"12.3", "USD", 1230},
		{"12", "USD", 1200},
		{"12.", "USD", 1200},
		{".5", "USD", 50},
		{"0", "USD", 0},
		{"  7.25\t", "USD", 725},
		{"007.10", "USD", 710},
		{"1000000.00", "USD", checkout.MaxTotal},
		{"1500", "JPY", 1500},
		{"0.5", "KWD", 500},
		{"1.234", "KWD", 1234},
		{"0.0001", "CLF", 1},
		{"19.99", "usd", 1999}, // an unknown code: two decimals
	}
	for _, tt := range tests {
		got, err := checkout.ParseAmount(tt.in, tt.currency)
		if err != nil || got != tt.want {
			t.Errorf("ParseAmount(%q, %s) = %d, %v; want %d", tt.in, tt.currency, got, err, tt.want)
		}
	}
	// Every amount written by AmountDecimal reads back as itself.
	for _, cur := range []string{"USD", "JPY", "KWD", "CLF"} {
		for _, n := range []int64{0, 1, 9, 10, 99, 100, 101, 1234, 99999, 100000, 123456789 % checkout.MaxTotal, checkout.MaxTotal} {
			if got, err := checkout.ParseAmount(checkout.AmountDecimal(n, cur), cur); err != nil || got != n {
				t.Errorf("ParseAmount(AmountDecimal(%d, %s)) = %d, %v", n, cur, got, err)
			}
		}
	}

	refused := []struct {
		in, currency string
		want         string // in the message
	}{
		{"", "USD", "Enter an amount in USD, such as 1234.56."},
		{"   ", "USD", "Enter an amount"},
		{"12.345", "USD", "USD has 2 decimals: write at most 2 digits after the point, such as 1234.56."},
		{"0.001", "USD", "at most 2 digits"},
		{"12.340", "USD", "at most 2 digits"}, // exact as typed: no zeros dropped
		{"1500.5", "JPY", "JPY has no decimals: write a whole number, such as 1234."},
		{"1.2345", "KWD", "KWD has 3 decimals"},
		{"-1", "USD", "An amount cannot be negative."},
		{"-0.01", "USD", "cannot be negative"},
		{"-", "USD", "Write the amount in digits"},
		{"abc", "USD", "Write the amount in digits, with a point before the decimals and no thousands separators, such as 1234.56."},
		{"abc", "JPY", "Write the amount as a whole number of JPY, in digits only, such as 1234."},
		{"1,234.56", "USD", "no thousands separators"},
		{"12,34", "EUR", "no thousands separators"},
		{"$12.34", "USD", "Write the amount in digits"},
		{"12.34 USD", "USD", "Write the amount in digits"},
		{"+5", "USD", "Write the amount in digits"},
		{"1e3", "USD", "Write the amount in digits"},
		{"0x10", "USD", "Write the amount in digits"},
		{"12.3.4", "USD", "Write the amount in digits"},
		{".", "USD", "Write the amount in digits"},
		{"1 000", "USD", "Write the amount in digits"},
		{"١٢", "USD", "Write the amount in digits"}, // digits of another script
		{"NaN", "USD", "Write the amount in digits"},
		{"1000000.01", "USD", "An amount is at most $1,000,000.00."},
		{"99999999999999999999999", "USD", "at most"},
	}
	for _, tt := range refused {
		got, err := checkout.ParseAmount(tt.in, tt.currency)
		ce, ok := err.(*checkout.Error)
		if !ok || ce.Code != checkout.EValidationFailed || ce.Param != "amount" || !strings.Contains(ce.Message, tt.want) || got != 0 {
			t.Errorf("ParseAmount(%q, %s) = %d, %v; want validation_failed on amount saying %q", tt.in, tt.currency, got, err, tt.want)
		}
	}
}

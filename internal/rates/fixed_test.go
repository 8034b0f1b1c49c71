package rates_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/internal/rates"
)

var configured = time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)

func TestParseFixed(t *testing.T) {
	f, err := rates.ParseFixed("LTC/USD=85.12,BTC/USD=97000, eth/eur = 3100.5 ,SOL/JPY=21000", configured)
	if err != nil {
		t.Fatalf("ParseFixed = %v", err)
	}
	tests := []struct {
		coin, currency string
		minor          string
	}{
		{"LTC", "USD", "8512"},
		{"ltc", "usd", "8512"},
		{"BTC", "USD", "9700000"},
		{"ETH", "EUR", "310050"},
		{"SOL", "JPY", "21000"},
	}
	for _, tt := range tests {
		r, err := f.Rate(context.Background(), tt.coin, tt.currency)
		if err != nil {
			t.Errorf("Rate(%s, %s) = %v", tt.coin, tt.currency, err)
			continue
		}
		if r.Price.String() != tt.minor || r.Coin != strings.ToUpper(tt.coin) || r.Currency != strings.ToUpper(tt.currency) ||
			!r.At.Equal(configured) || r.Source != rates.SourceFixed {
			t.Errorf("Rate(%s, %s) = %+v (price %s); want %s minor units at %v from %q", tt.coin, tt.currency, r, r.Price, tt.minor, configured, rates.SourceFixed)
		}
	}
	if got, want := f.String(), "LTC/USD=85.12,BTC/USD=97000,ETH/EUR=3100.5,SOL/JPY=21000"; got != want {
		t.Errorf("String() = %q; want %q", got, want)
	}
	if got := len(f.Rates()); got != 4 {
		t.Errorf("len(Rates()) = %d; want 4", got)
	}
}

func TestFixedNeverGoesStaleAndKnowsOnlyItsPairs(t *testing.T) {
	f, err := rates.ParseFixed("LTC/USD=85.12", configured)
	if err != nil {
		t.Fatal(err)
	}
	// Nothing in Fixed reads a clock: the rate of years ago is the rate.
	r, err := f.Rate(context.Background(), "LTC", "USD")
	if err != nil || !r.At.Equal(configured) {
		t.Errorf("Rate(LTC, USD) = %+v, %v; want the configured rate", r, err)
	}
	for _, p := range [][2]string{{"LTC", "EUR"}, {"BTC", "USD"}, {"DOGE", "USD"}, {"LTC", "XYZ"}} {
		if _, err := f.Rate(context.Background(), p[0], p[1]); !errors.Is(err, rates.ErrUnknownPair) {
			t.Errorf("Rate(%s, %s) = %v; want ErrUnknownPair", p[0], p[1], err)
		}
	}
}

func TestParseFixedRejects(t *testing.T) {
	tests := []struct {
		s    string
		want string // the error contains this
	}{
		{"", "none given"},
		{"   ", "none given"},
		{"LTC/USD=85.12,", `entry 2 "": empty`},
		{",LTC/USD=85.12", `entry 1 "": empty`},
		{"LTC/USD=85.12,,BTC/USD=1", `entry 2 "": empty`},
		{"LTC/USD", `entry 1 "LTC/USD": no '='`},
		{"LTCUSD=85", `entry 1 "LTCUSD=85": no '/'`},
		{"DOGE/USD=0.1", `entry 1 "DOGE/USD=0.1": unknown coin "DOGE"`},
		{"LTC/XYZ=85", `entry 1 "LTC/XYZ=85": unknown currency "XYZ"`},
		{"LTC/US=85", `unknown currency "US"`},
		{"/USD=85", `unknown coin ""`},
		{"LTC/USD=", `entry 1 "LTC/USD=": empty price`},
		{"LTC/USD=0", `price "0" is zero`},
		{"LTC/USD=0.00", `price "0.00" is zero`},
		{"LTC/USD=-85.12", `price "-85.12" is not a plain decimal`},
		{"LTC/USD=85,12", `entry 2 "12": no '='`},
		{"LTC/USD=8.5e1", `not a plain decimal`},
		{"LTC/USD=85.12=1", `price "85.12=1" is not a plain decimal`},
		{"LTC/USD=1000000000000000000", "more than 18 digits before"},
		{"LTC/USD=0.0000000000000000001", "more than 18 digits after"},
		{"LTC/USD=85.12,BTC/USD=97000,ltc/usd=86", `entry 3 "ltc/usd=86": LTC/USD is already priced by entry 1`},
		{"LTC/USD/EUR=85", `unknown currency "USD/EUR"`},
	}
	for _, tt := range tests {
		f, err := rates.ParseFixed(tt.s, configured)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseFixed(%q) = %v, %v; want an error containing %q", tt.s, f, err, tt.want)
		}
	}
}

// FuzzParseFixed checks that the parser never panics, and that what it
// accepts it renders back into the same rates.
func FuzzParseFixed(f *testing.F) {
	for _, s := range []string{
		"LTC/USD=85.12,BTC/USD=97000,ETH/EUR=3100.5,SOL/JPY=21000",
		"sol/usd=0.000123", "BTC/JPY=15000000", "LTC/KWD=26.123", "LTC/USD=", "=", ",", "/=.",
		"LTC/USD=999999999999999999.999999999999999999",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fx, err := rates.ParseFixed(s, configured)
		if err != nil {
			if fx != nil {
				t.Fatalf("ParseFixed(%q) = %v, %v; want nil with an error", s, fx, err)
			}
			return
		}
		again, err := rates.ParseFixed(fx.String(), configured)
		if err != nil {
			t.Fatalf("ParseFixed(%q) accepted, but its String() %q is rejected: %v", s, fx.String(), err)
		}
		a, b := fx.Rates(), again.Rates()
		if len(a) != len(b) {
			t.Fatalf("ParseFixed(%q): %d rates, after a round trip %d", s, len(a), len(b))
		}
		for i := range a {
			if a[i].Coin != b[i].Coin || a[i].Currency != b[i].Currency || a[i].Price.Cmp(b[i].Price) != 0 || a[i].Price.String() != b[i].Price.String() {
				t.Fatalf("ParseFixed(%q) rate %d = %+v, after a round trip %+v", s, i, a[i], b[i])
			}
			if back, err := rates.ParseMinorPrice(a[i].Price.String()); err != nil || back.Cmp(a[i].Price) != 0 || back.String() != a[i].Price.String() {
				t.Fatalf("ParseFixed(%q) rate %d: ParseMinorPrice(%q) = %v, %v; want the same price", s, i, a[i].Price.String(), back, err)
			}
			if a[i].Price.Rat().Sign() <= 0 {
				t.Fatalf("ParseFixed(%q) rate %d is not above zero: %s", s, i, a[i].Price)
			}
		}
	})
}

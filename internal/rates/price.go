package rates

import (
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/checkoutd/checkoutd/checkout"
)

// The limits of a decimal price string (ParsePrice): at most
// MaxIntegerDigits digits before the point and MaxFractionDigits after it.
// No coin costs 10^18 of any currency's major unit (a bitcoin is about
// 10^13 Iranian rials), and no ticker quotes finer than 10^-18, the wei;
// the bounds keep a malformed configuration or answer from making numbers
// of unbounded size.
const (
	MaxIntegerDigits  = 18
	MaxFractionDigits = 18
)

// Price is an exact, positive amount of minor units of a currency, which
// may hold fractions of a minor unit: a coin worth $0.000123 costs 0.0123
// cents. It is units × 10^-scale, held in a big integer, so neither a tiny
// price nor a huge one (a bitcoin in yen) loses a digit. The zero Price is
// invalid; a Price is immutable and safe to share.
type Price struct {
	units *big.Int // > 0
	scale int      // ≥ 0; no trailing zero in units while scale > 0
}

// ParsePrice parses s, a price in major units of currency ("85.12" US
// dollars, "21000" yen, "0.000123"), into minor units. s is digits with an
// optional point and more digits: no sign, exponent, spaces or separators,
// at most MaxIntegerDigits before the point and MaxFractionDigits after.
// The price must be above zero, and currency a payable ISO 4217 code.
func ParsePrice(s, currency string) (Price, error) {
	cur, ok := checkout.NormalizeCurrency(currency)
	if !ok {
		return Price{}, fmt.Errorf("unknown currency %q: use an ISO 4217 code such as USD", currency)
	}
	units, scale, err := parseDecimal(s, MaxIntegerDigits)
	if err != nil {
		return Price{}, err
	}
	// units × 10^-scale major units is units × 10^(exp-scale) minor.
	return newPrice(units, scale-checkout.CurrencyExponent(cur)), nil
}

// ParseMinorPrice parses s, a price in minor units as Price.String()
// renders it ("8512", "0.0123"): to read back a price that was stored.
// The syntax is ParsePrice's, with up to four more digits before the point
// (the largest exponent of a currency).
func ParseMinorPrice(s string) (Price, error) {
	units, scale, err := parseDecimal(s, MaxIntegerDigits+4)
	if err != nil {
		return Price{}, err
	}
	return newPrice(units, scale), nil
}

// parseDecimal parses a plain positive decimal into units × 10^-scale.
func parseDecimal(s string, maxInteger int) (*big.Int, int, error) {
	whole, frac, hasPoint := strings.Cut(s, ".")
	switch {
	case s == "":
		return nil, 0, errors.New("empty price: write a decimal such as 85.12")
	case !isDigits(whole) || (hasPoint && !isDigits(frac)):
		return nil, 0, fmt.Errorf("price %q is not a plain decimal: write digits with at most one point, such as 85.12 (no sign, exponent, spaces or separators)", s)
	case len(whole) > maxInteger:
		return nil, 0, fmt.Errorf("price %q has more than %d digits before the point", s, maxInteger)
	case len(frac) > MaxFractionDigits:
		return nil, 0, fmt.Errorf("price %q has more than %d digits after the point", s, MaxFractionDigits)
	}
	units, _ := new(big.Int).SetString(whole+frac, 10)
	if units.Sign() == 0 {
		return nil, 0, fmt.Errorf("price %q is zero: a coin's price must be above zero", s)
	}
	return units, len(frac), nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// PriceFromMinor returns the price of minor whole minor units (6000000 for
// $60,000): the prices checkout.CoinAmount takes.
func PriceFromMinor(minor int64) (Price, error) {
	if minor <= 0 {
		return Price{}, fmt.Errorf("price %d is not above zero", minor)
	}
	return newPrice(big.NewInt(minor), 0), nil
}

// newPrice returns units × 10^-scale minor units in canonical form: scale
// ≥ 0 and no trailing zero in units while scale > 0, so that equal prices
// have the same units and scale (compare them with Cmp, not ==). units
// must be positive.
func newPrice(units *big.Int, scale int) Price {
	u := new(big.Int).Set(units)
	if scale < 0 {
		u.Mul(u, pow10(-scale))
		scale = 0
	}
	ten, r := big.NewInt(10), new(big.Int)
	for scale > 0 {
		q, m := new(big.Int).QuoRem(u, ten, r)
		if m.Sign() != 0 {
			break
		}
		u, scale = q, scale-1
	}
	return Price{units: u, scale: scale}
}

// IsZero reports whether p is the zero Price, which is not a valid price.
func (p Price) IsZero() bool { return p.units == nil }

// Rat returns p in minor units as a new big.Rat, which the caller may
// change.
func (p Price) Rat() *big.Rat {
	if p.IsZero() {
		return new(big.Rat)
	}
	return new(big.Rat).SetFrac(p.units, pow10(p.scale))
}

// Cmp compares p and q: -1, 0 or +1 as p is less than, equal to or more
// than q.
func (p Price) Cmp(q Price) int { return p.Rat().Cmp(q.Rat()) }

// String renders p in minor units, exactly: "8512", "0.0123".
func (p Price) String() string {
	if p.IsZero() {
		return "0"
	}
	return decimalString(p.units, p.scale)
}

// Major renders p in major units of currency, exactly and without trailing
// zeros: "85.12" for 8512 US cents, "21000" yen.
func (p Price) Major(currency string) string {
	if p.IsZero() {
		return "0"
	}
	cur, _ := checkout.NormalizeCurrency(currency)
	return decimalString(p.units, p.scale+checkout.CurrencyExponent(cur))
}

// decimalString renders n × 10^-scale without trailing zeros.
func decimalString(n *big.Int, scale int) string {
	s := n.String()
	if scale == 0 {
		return s
	}
	if len(s) <= scale {
		s = strings.Repeat("0", scale-len(s)+1) + s
	}
	whole, frac := s[:len(s)-scale], strings.TrimRight(s[len(s)-scale:], "0")
	if frac == "" {
		return whole
	}
	return whole + "." + frac
}

// CoinAmount converts amountMinor minor units of r's currency into base
// units of coin at r: amountMinor × 10^coin.Decimals ÷ price, rounded up
// to the next base unit so the merchant is never paid short. The
// arithmetic is exact, on big integers, for any price a Source returns.
// For a price of whole minor units it equals checkout.CoinAmount.
//
// r must be a rate of coin from a Source: CoinAmount panics on the zero
// Rate or a rate of another coin, which would quote a wrong amount.
func CoinAmount(amountMinor int64, coin checkout.Coin, r Rate) *big.Int {
	if r.Price.IsZero() {
		panic("rates: CoinAmount with the zero Rate")
	}
	if !strings.EqualFold(r.Coin, coin.Code) {
		panic("rates: CoinAmount of " + coin.Code + " at a rate of " + r.Coin)
	}
	// amount ÷ (units × 10^-scale) × 10^decimals
	num := new(big.Int).Mul(big.NewInt(amountMinor), pow10(coin.Decimals+r.Price.scale))
	return ceilDiv(num, r.Price.units)
}

// ceilDiv returns ⌈num ÷ den⌉ for den > 0.
func ceilDiv(num, den *big.Int) *big.Int {
	q, m := new(big.Int).QuoRem(num, den, new(big.Int))
	if m.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	return q
}

func pow10(n int) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}

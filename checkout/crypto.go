package checkout

import (
	"fmt"
	"math/big"
	"strings"
	"time"
)

// Coin is a cryptocurrency the page takes.
type Coin struct {
	Code string // BTC
	Name string // Bitcoin
	// Decimals is how many base units make one coin, as a power of ten:
	// 8 for satoshi, 18 for wei, 9 for lamports.
	Decimals int
	// BaseUnit names the base unit (satoshi).
	BaseUnit string
	// Confirmations is how many the service waits for before a payment
	// counts, and BlockTime how long one takes: together SPEC.md's
	// timescale (Solana and Ethereum under a minute, Bitcoin and Litecoin 10
	// to 30 minutes).
	Confirmations int
	BlockTime     time.Duration
	// ConfirmationDeadline is how long after its broadcast a transaction
	// may take to confirm: past it, the payment fails with
	// FailConfirmationTimeout and frees its session. Far beyond the usual
	// confirmation time, near the point where the network itself gives up
	// on a transaction (docs/payments.md gives the reasons per coin).
	ConfirmationDeadline time.Duration
	// URIScheme starts the payment URI of the QR code (BIP 21 and its
	// equivalents).
	URIScheme string
}

// Coins lists the coins in the order the page offers them.
var Coins = []Coin{
	{Code: "BTC", Name: "Bitcoin", Decimals: 8, BaseUnit: "satoshi", Confirmations: 2, BlockTime: 10 * time.Minute, ConfirmationDeadline: 24 * time.Hour, URIScheme: "bitcoin"},
	{Code: "LTC", Name: "Litecoin", Decimals: 8, BaseUnit: "litoshi", Confirmations: 6, BlockTime: 150 * time.Second, ConfirmationDeadline: 24 * time.Hour, URIScheme: "litecoin"},
	{Code: "ETH", Name: "Ethereum", Decimals: 18, BaseUnit: "wei", Confirmations: 4, BlockTime: 12 * time.Second, ConfirmationDeadline: 3 * time.Hour, URIScheme: "ethereum"},
	{Code: "SOL", Name: "Solana", Decimals: 9, BaseUnit: "lamport", Confirmations: 32, BlockTime: 400 * time.Millisecond, ConfirmationDeadline: 10 * time.Minute, URIScheme: "solana"},
}

// CoinByCode returns the coin of an upper- or lower-case code.
func CoinByCode(code string) (Coin, bool) {
	code = strings.ToUpper(code)
	for _, c := range Coins {
		if c.Code == code {
			return c, true
		}
	}
	return Coin{}, false
}

// ConfirmationTime is how long after its broadcast a payment in c counts.
func (c Coin) ConfirmationTime() time.Duration {
	return time.Duration(c.Confirmations) * c.BlockTime
}

// Deadline returns when a transaction of c broadcast at broadcast must
// have confirmed.
func (c Coin) Deadline(broadcast time.Time) time.Time {
	return broadcast.Add(c.ConfirmationDeadline)
}

// NextLook returns when to ask again about a transaction broadcast at
// broadcast that had confs confirmations at now, fewer than needed: when
// the missing ones could be in at the coin's block time, or, once it is
// overdue, after a quarter of the time it is overdue (at most an hour),
// so a stuck transaction is asked about a few dozen times rather than at
// every block; at least a second on, and never after the deadline.
func (c Coin) NextLook(confs int, broadcast, now time.Time) time.Time {
	wait := time.Duration(max(c.Confirmations-confs, 1)) * c.BlockTime
	overdue := now.Sub(broadcast) - c.ConfirmationTime()
	wait = max(wait, min(overdue/4, time.Hour), time.Second)
	next := now.Add(wait)
	if d := c.Deadline(broadcast); next.After(d) {
		return d
	}
	return next
}

// ConfirmationsAt returns how many confirmations a transaction broadcast at
// broadcast has at now, at most the number needed.
func (c Coin) ConfirmationsAt(broadcast, now time.Time) int {
	if now.Before(broadcast) {
		return 0
	}
	n := int(now.Sub(broadcast) / c.BlockTime)
	return min(n, c.Confirmations)
}

// CoinAmount converts amount minor units of currency into base units of c
// at price: the price of one coin in minor units of the currency. It rounds
// up, so the merchant is never paid short. Exact integer arithmetic
// throughout.
func CoinAmount(amount int64, c Coin, price int64) *big.Int {
	num := new(big.Int).Mul(big.NewInt(amount), pow10(c.Decimals))
	den := big.NewInt(price)
	q, r := new(big.Int).QuoRem(num, den, new(big.Int))
	if r.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	return q
}

// FormatCoin renders base units of c as coins, without trailing zeros:
// "0.00051234" BTC for 51234 satoshi. base is a decimal integer string.
func FormatCoin(base string, c Coin) string {
	n, ok := new(big.Int).SetString(base, 10)
	if !ok || n.Sign() < 0 {
		return base
	}
	s := n.String()
	if len(s) <= c.Decimals {
		s = strings.Repeat("0", c.Decimals-len(s)+1) + s
	}
	whole, frac := s[:len(s)-c.Decimals], strings.TrimRight(s[len(s)-c.Decimals:], "0")
	if frac == "" {
		return whole
	}
	return whole + "." + frac
}

func pow10(n int) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}

// CryptoQuote is the address and amount a session was offered for a coin.
type CryptoQuote struct {
	SessionID  string
	Coin       string
	Address    string
	AmountBase string // decimal integer of base units
	CreatedAt  time.Time
	// KeyID and KeyIndex say which store key (CryptoKey) and index a live
	// quote's address was derived at; "" and 0 for test mode's simulated
	// addresses.
	KeyID    string
	KeyIndex int64
	// ExpiresAt is when a live quote's amount stops holding (its rate is
	// then stale); zero when it holds as long as the session (test mode).
	ExpiresAt time.Time
}

// PaymentURI is what the QR code holds: the coin's URI scheme, the address
// and the amount in coins.
func (q *CryptoQuote) PaymentURI() string {
	c, _ := CoinByCode(q.Coin)
	amount := FormatCoin(q.AmountBase, c)
	switch c.Code {
	case "ETH":
		// EIP-681 takes the value in wei.
		return c.URIScheme + ":" + q.Address + "?value=" + q.AmountBase
	default:
		return c.URIScheme + ":" + q.Address + "?amount=" + amount
	}
}

// FormatAmount renders minor units of an ISO 4217 currency for people:
// "$1,234.56", "¥1,500", "1,234.567 KWD". Integers only: the exponent of
// the currency places the decimal point.
func FormatAmount(amount int64, currency string) string {
	exp := CurrencyExponent(currency)
	neg := amount < 0
	if neg {
		amount = -amount
	}
	digits := big.NewInt(amount).String()
	if len(digits) <= exp {
		digits = strings.Repeat("0", exp-len(digits)+1) + digits
	}
	whole, frac := digits[:len(digits)-exp], digits[len(digits)-exp:]
	var b strings.Builder
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	num := b.String()
	if frac != "" {
		num += "." + frac
	}
	sign := ""
	if neg {
		sign = "-"
	}
	if sym, ok := currencySymbols[currency]; ok {
		return sign + sym + num
	}
	return sign + num + " " + currency
}

// AmountDecimal writes minor units of an ISO 4217 currency as a plain
// number of major units, as a person types it into a form: "1234.56" for
// 123456 USD, "1500" for 1500 JPY; no symbol, no thousands separators.
// ParseAmount reads it back exactly.
func AmountDecimal(amount int64, currency string) string {
	exp := CurrencyExponent(currency)
	sign := ""
	if amount < 0 {
		sign = "-"
	}
	digits := new(big.Int).Abs(big.NewInt(amount)).String()
	if exp == 0 {
		return sign + digits
	}
	if len(digits) <= exp {
		digits = strings.Repeat("0", exp-len(digits)+1) + digits
	}
	return sign + digits[:len(digits)-exp] + "." + digits[len(digits)-exp:]
}

// ParseAmount reads an amount of an ISO 4217 currency written in major
// units, as a merchant types it into a form, into exact minor units: "12.34"
// is 1234 for USD, "1500" is 1500 for JPY, "0.5" is 500 for KWD. It takes
// digits with at most the currency's decimals after a point, surrounding
// spaces ignored, and nothing else: no sign, symbol or thousands separator,
// since a comma is a decimal point in half the world and money is never
// guessed at. The amount is 0 to MaxTotal; what is too little for a use is
// the use's to say. A refusal is validation_failed on param "amount", its
// message a sentence for the person who typed it.
func ParseAmount(s, currency string) (int64, error) {
	exp := CurrencyExponent(currency)
	example := "1234"
	if exp > 0 {
		example += "." + "5678"[:min(exp, 4)]
	}
	refuse := func(format string, args ...any) (int64, error) {
		return 0, &Error{Code: EValidationFailed, Param: "amount", Message: fmt.Sprintf(format, args...)}
	}
	s = strings.TrimSpace(s)
	whole, frac, number := decimal(s)
	// A number after a minus sign; without one, the same as number.
	_, _, signed := decimal(strings.TrimPrefix(s, "-"))
	switch {
	case s == "":
		return refuse("Enter an amount in %s, such as %s.", currency, example)
	case !number && signed:
		return refuse("An amount cannot be negative.")
	case !number:
		if exp == 0 {
			return refuse("Write the amount as a whole number of %s, in digits only, such as %s.", currency, example)
		}
		return refuse("Write the amount in digits, with a point before the decimals and no thousands separators, such as %s.", example)
	case len(frac) > exp && exp == 0:
		return refuse("%s has no decimals: write a whole number, such as %s.", currency, example)
	case len(frac) > exp:
		return refuse("%s has %d decimals: write at most %d digits after the point, such as %s.", currency, exp, exp, example)
	}
	whole = strings.TrimLeft(whole, "0")
	frac += strings.Repeat("0", exp-len(frac))
	n, ok := new(big.Int).SetString("0"+whole+frac, 10)
	if !ok || n.Cmp(big.NewInt(MaxTotal)) > 0 {
		return refuse("An amount is at most %s.", FormatAmount(MaxTotal, currency))
	}
	return n.Int64(), nil
}

// decimal splits s at its point, if any, and reports whether it is a
// number: digits, with digits before or after the point or both.
func decimal(s string) (whole, frac string, ok bool) {
	whole, frac, _ = strings.Cut(s, ".")
	return whole, frac, decimalDigits(whole) && decimalDigits(frac) && whole+frac != ""
}

// decimalDigits reports whether s is ASCII digits only ("" is).
func decimalDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// currencySymbols are the symbols that name one currency unambiguously
// enough for a payment page; every other currency is shown by its code.
var currencySymbols = map[string]string{
	"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥", "INR": "₹", "KRW": "₩",
	"ILS": "₪", "NGN": "₦", "PHP": "₱", "UAH": "₴", "VND": "₫", "TRY": "₺",
}

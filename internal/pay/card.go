package pay

import (
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/checkoutd/checkoutd/checkout"
)

// CardForm is the card form as the buyer filled it in.
type CardForm struct {
	Number string
	Expiry string // MM/YY, MM / YY or MM/YYYY
	CVC    string
	Name   string
	// Email is where the receipt goes; "" keeps the session's.
	Email string
}

// Card form limits.
const (
	MinCardDigits  = 12
	MaxCardDigits  = 19
	MaxCardNameLen = 200
	// maxExpiryYears is how far ahead an expiry date may lie.
	maxExpiryYears = 20
)

// ParseCard validates the form at now and returns the card, or the
// violations found, one per field at most (params: number, expiry, cvc,
// name). The messages speak to the buyer. Nothing of the number reaches a
// message.
func ParseCard(f CardForm, now time.Time) (Card, []checkout.Violation) {
	var vs []checkout.Violation
	add := func(param, code, msg string) {
		vs = append(vs, checkout.Violation{Code: code, Param: param, Message: msg})
	}
	var c Card

	digits := strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' {
			return -1
		}
		return r
	}, f.Number)
	switch {
	case digits == "":
		add("number", "required", "Enter your card number.")
	case !allDigits(digits):
		add("number", "invalid_number", "Your card number must be digits only.")
	case len(digits) < MinCardDigits:
		add("number", "incomplete_number", "Your card number is incomplete.")
	case len(digits) > MaxCardDigits || !Luhn(digits):
		add("number", "invalid_number", "Your card number is invalid.")
	default:
		c.Number = digits
	}

	if m, y, ok := parseExpiry(f.Expiry); !ok {
		if strings.TrimSpace(f.Expiry) == "" {
			add("expiry", "required", "Enter your card's expiry date.")
		} else {
			add("expiry", "invalid_expiry", "Enter the expiry date as MM/YY.")
		}
	} else if y < now.Year() || y == now.Year() && m < int(now.Month()) {
		add("expiry", "expired_card", "Your card's expiry date is in the past.")
	} else if y > now.Year()+maxExpiryYears {
		add("expiry", "invalid_expiry", "Your card's expiry year is too far in the future.")
	} else {
		c.ExpMonth, c.ExpYear = m, y
	}

	cvc := strings.TrimSpace(f.CVC)
	switch {
	case cvc == "":
		add("cvc", "required", "Enter your card's security code (CVC).")
	case !allDigits(cvc) || len(cvc) < 3 || len(cvc) > 4:
		add("cvc", "invalid_cvc", "Your card's security code (CVC) is 3 or 4 digits.")
	default:
		c.CVC = cvc
	}

	name := strings.TrimSpace(f.Name)
	switch n := utf8.RuneCountInString(name); {
	case n == 0:
		add("name", "required", "Enter the name on your card.")
	case n > MaxCardNameLen:
		add("name", "too_long", "The name on your card must be at most 200 characters.")
	case strings.ContainsFunc(name, unicode.IsControl) || !utf8.ValidString(name):
		add("name", "invalid_name", "The name on your card contains characters that are not allowed.")
	default:
		c.Name = name
	}
	if len(vs) > 0 {
		return Card{}, vs
	}
	return c, nil
}

// parseExpiry reads MM/YY, MM/YYYY and MMYY, with spaces around the slash.
func parseExpiry(s string) (month, year int, ok bool) {
	s = strings.ReplaceAll(s, " ", "")
	mm, yy, found := strings.Cut(s, "/")
	if !found {
		if len(s) != 4 {
			return 0, 0, false
		}
		mm, yy = s[:2], s[2:]
	}
	if len(mm) < 1 || len(mm) > 2 || !allDigits(mm) || !allDigits(yy) {
		return 0, 0, false
	}
	month, _ = strconv.Atoi(mm)
	year, _ = strconv.Atoi(yy)
	switch len(yy) {
	case 2:
		year += 2000
	case 4:
	default:
		return 0, 0, false
	}
	if month < 1 || month > 12 {
		return 0, 0, false
	}
	return month, year, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// Luhn reports whether a string of digits passes the Luhn check.
func Luhn(digits string) bool {
	sum := 0
	double := false
	for i := len(digits) - 1; i >= 0; i-- {
		d := int(digits[i] - '0')
		if double {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0
}

// CardBrand names the network of a card number from its leading digits;
// "unknown" when none matches.
func CardBrand(digits string) string {
	prefix := func(n int) int {
		if len(digits) < n {
			return -1
		}
		v, _ := strconv.Atoi(digits[:n])
		return v
	}
	switch p2, p4 := prefix(2), prefix(4); {
	case strings.HasPrefix(digits, "4"):
		return "visa"
	case p2 >= 51 && p2 <= 55, p4 >= 2221 && p4 <= 2720:
		return "mastercard"
	case p2 == 34, p2 == 37:
		return "amex"
	case p4 == 6011, p2 == 65:
		return "discover"
	case p4 >= 3528 && p4 <= 3589:
		return "jcb"
	case p2 == 36, p2 == 38, p2 == 30:
		return "diners"
	case p2 == 62:
		return "unionpay"
	}
	return "unknown"
}

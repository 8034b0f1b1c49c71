package pay_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/internal/pay"
)

// now is mid-November 2026: cards expiring this month still work.
var now = time.Date(2026, 11, 15, 12, 0, 0, 0, time.UTC)

// luhnNumber returns a number of n digits that passes the Luhn check.
func luhnNumber(n int) string {
	body := "4" + strings.Repeat("0", n-2)
	for d := '0'; d <= '9'; d++ {
		if pay.Luhn(body + string(d)) {
			return body + string(d)
		}
	}
	panic("unreachable")
}

func validForm() pay.CardForm {
	return pay.CardForm{Number: "4242 4242 4242 4242", Expiry: "12/30", CVC: "123", Name: "Jo Buyer"}
}

func TestParseCardAccepts(t *testing.T) {
	tests := []struct {
		name string
		edit func(f *pay.CardForm)
		want pay.Card
	}{
		{"spaces", nil, pay.Card{Number: "4242424242424242", ExpMonth: 12, ExpYear: 2030, CVC: "123", Name: "Jo Buyer"}},
		{"dashes", func(f *pay.CardForm) { f.Number = "4242-4242-4242-4242" }, pay.Card{Number: "4242424242424242", ExpMonth: 12, ExpYear: 2030, CVC: "123", Name: "Jo Buyer"}},
		{"12 digits", func(f *pay.CardForm) { f.Number = luhnNumber(12) }, pay.Card{Number: luhnNumber(12), ExpMonth: 12, ExpYear: 2030, CVC: "123", Name: "Jo Buyer"}},
		{"19 digits", func(f *pay.CardForm) { f.Number = luhnNumber(19) }, pay.Card{Number: luhnNumber(19), ExpMonth: 12, ExpYear: 2030, CVC: "123", Name: "Jo Buyer"}},
		{"expires this month", func(f *pay.CardForm) { f.Expiry = "11/26" }, pay.Card{Number: "4242424242424242", ExpMonth: 11, ExpYear: 2026, CVC: "123", Name: "Jo Buyer"}},
		{"20 years ahead", func(f *pay.CardForm) { f.Expiry = "12/2046" }, pay.Card{Number: "4242424242424242", ExpMonth: 12, ExpYear: 2046, CVC: "123", Name: "Jo Buyer"}},
		{"MMYY", func(f *pay.CardForm) { f.Expiry = "0128" }, pay.Card{Number: "4242424242424242", ExpMonth: 1, ExpYear: 2028, CVC: "123", Name: "Jo Buyer"}},
		{"M / YY", func(f *pay.CardForm) { f.Expiry = " 1 / 28 " }, pay.Card{Number: "4242424242424242", ExpMonth: 1, ExpYear: 2028, CVC: "123", Name: "Jo Buyer"}},
		{"4-digit CVC", func(f *pay.CardForm) { f.CVC = "1234" }, pay.Card{Number: "4242424242424242", ExpMonth: 12, ExpYear: 2030, CVC: "1234", Name: "Jo Buyer"}},
		{"name of 200", func(f *pay.CardForm) { f.Name = strings.Repeat("é", 200) }, pay.Card{Number: "4242424242424242", ExpMonth: 12, ExpYear: 2030, CVC: "123", Name: strings.Repeat("é", 200)}},
		{"name trimmed", func(f *pay.CardForm) { f.Name = "  Jo Buyer " }, pay.Card{Number: "4242424242424242", ExpMonth: 12, ExpYear: 2030, CVC: "123", Name: "Jo Buyer"}},
	}
	for _, tt := range tests {
		f := validForm()
		if tt.edit != nil {
			tt.edit(&f)
		}
		got, vs := pay.ParseCard(f, now)
		if vs != nil || got != tt.want {
			t.Errorf("%s: ParseCard = %+v, %v; want %+v", tt.name, got, vs, tt.want)
		}
	}
}

func TestParseCardRefuses(t *testing.T) {
	tests := []struct {
		name        string
		edit        func(f *pay.CardForm)
		param, code string
	}{
		{"no number", func(f *pay.CardForm) { f.Number = "" }, "number", "required"},
		{"letters", func(f *pay.CardForm) { f.Number = "4242 4242 4242 424a" }, "number", "invalid_number"},
		{"11 digits", func(f *pay.CardForm) { f.Number = luhnNumber(11) }, "number", "incomplete_number"},
		{"20 digits", func(f *pay.CardForm) { f.Number = luhnNumber(20) }, "number", "invalid_number"},
		{"Luhn fails", func(f *pay.CardForm) { f.Number = "4242424242424241" }, "number", "invalid_number"},
		{"no expiry", func(f *pay.CardForm) { f.Expiry = " " }, "expiry", "required"},
		{"expired last month", func(f *pay.CardForm) { f.Expiry = "10/26" }, "expiry", "expired_card"},
		{"expired last year", func(f *pay.CardForm) { f.Expiry = "12/25" }, "expiry", "expired_card"},
		{"21 years ahead", func(f *pay.CardForm) { f.Expiry = "01/2047" }, "expiry", "invalid_expiry"},
		{"month 0", func(f *pay.CardForm) { f.Expiry = "00/30" }, "expiry", "invalid_expiry"},
		{"month 13", func(f *pay.CardForm) { f.Expiry = "13/30" }, "expiry", "invalid_expiry"},
		{"3-digit year", func(f *pay.CardForm) { f.Expiry = "12/030" }, "expiry", "invalid_expiry"},
		{"no year", func(f *pay.CardForm) { f.Expiry = "12/" }, "expiry", "invalid_expiry"},
		{"words", func(f *pay.CardForm) { f.Expiry = "next year" }, "expiry", "invalid_expiry"},
		{"no CVC", func(f *pay.CardForm) { f.CVC = "" }, "cvc", "required"},
		{"2-digit CVC", func(f *pay.CardForm) { f.CVC = "12" }, "cvc", "invalid_cvc"},
		{"5-digit CVC", func(f *pay.CardForm) { f.CVC = "12345" }, "cvc", "invalid_cvc"},
		{"CVC letters", func(f *pay.CardForm) { f.CVC = "12a" }, "cvc", "invalid_cvc"},
		{"no name", func(f *pay.CardForm) { f.Name = "  " }, "name", "required"},
		{"name of 201", func(f *pay.CardForm) { f.Name = strings.Repeat("é", 201) }, "name", "too_long"},
		{"control character", func(f *pay.CardForm) { f.Name = "Jo\x00Buyer" }, "name", "invalid_name"},
		{"invalid UTF-8", func(f *pay.CardForm) { f.Name = "Jo \xff" }, "name", "invalid_name"},
	}
	for _, tt := range tests {
		f := validForm()
		tt.edit(&f)
		got, vs := pay.ParseCard(f, now)
		if len(vs) != 1 || vs[0].Param != tt.param || vs[0].Code != tt.code || vs[0].Message == "" {
			t.Errorf("%s: ParseCard = %+v; want one violation %s of %s", tt.name, vs, tt.code, tt.param)
		}
		if got != (pay.Card{}) {
			t.Errorf("%s: ParseCard returned a card %+v with its violations", tt.name, got)
		}
	}
}

func TestParseCardReportsEveryField(t *testing.T) {
	_, vs := pay.ParseCard(pay.CardForm{Number: "4242424242424241", Expiry: "13/30", CVC: "1", Name: ""}, now)
	var params []string
	for _, v := range vs {
		params = append(params, v.Param)
		if strings.Contains(v.Message, "4242") || strings.Contains(v.Message, "4241") {
			t.Errorf("a message quotes the card number: %q", v.Message)
		}
	}
	if got := strings.Join(params, ","); got != "number,expiry,cvc,name" {
		t.Errorf("violations of %s; want number,expiry,cvc,name", got)
	}
}

func TestLuhn(t *testing.T) {
	for number, want := range map[string]bool{
		"4242424242424242": true, "5555555555554444": true, "4000000000000002": true, "4000000000000259": true,
		"4242424242424241": false, "1234567812345678": false, "0": true, "18": true, "17": false,
	} {
		if got := pay.Luhn(number); got != want {
			t.Errorf("Luhn(%s) = %v; want %v", number, got, want)
		}
	}
}

func TestCardBrand(t *testing.T) {
	for number, want := range map[string]string{
		"4242424242424242": "visa", "5555555555554444": "mastercard", "2221000000000009": "mastercard",
		"2720990000000007": "mastercard", "2721000000000000": "unknown", "5600000000000000": "unknown",
		"378282246310005": "amex", "6011111111111117": "discover", "6500000000000002": "discover",
		"3530111333300000": "jcb", "36227206271667": "diners", "6200000000000005": "unionpay", "9": "unknown",
	} {
		if got := pay.CardBrand(number); got != want {
			t.Errorf("CardBrand(%s) = %s; want %s", number, got, want)
		}
	}
}

// TestCardNeverPrinted: a card printed by mistake shows its last four
// digits only.
func TestCardNeverPrinted(t *testing.T) {
	c := pay.Card{Number: "4242424242424242", ExpMonth: 12, ExpYear: 2030, CVC: "987", Name: "Jo"}
	for _, s := range []string{fmt.Sprint(c), fmt.Sprintf("%v %+v %#v %s", c, c, c, c), fmt.Sprint(pay.CardCharge{Card: c})} {
		if strings.Contains(s, "424242424242") || strings.Contains(s, "987") {
			t.Errorf("a printed card shows its number or CVC: %s", s)
		}
	}
	if got := c.Last4(); got != "4242" {
		t.Errorf("Last4 = %q", got)
	}
}

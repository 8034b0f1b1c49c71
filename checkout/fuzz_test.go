package checkout_test

import (
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/checkoutd/checkoutd/checkout"
)

// FuzzParseCreateRequest feeds arbitrary bodies to ParseCreateRequest. The
// seed corpus is in testdata/fuzz/FuzzParseCreateRequest; run it longer with
//
//	go test -fuzz=FuzzParseCreateRequest -fuzztime=2m ./checkout
//
// Properties: it never panics; it returns params or an *checkout.Error with
// one of its three codes, never both; a validation error lists its
// violations, the first one matching Param; and accepted params keep every
// rule of SPEC.md and DESIGN.md section 4, so that NewSession gives a session
// whose total is its amount.
func FuzzParseCreateRequest(f *testing.F) {
	f.Add([]byte(`{"items":[{"name":"Sword","amount":1500,"quantity":2}],"currency":"eur","amount":3000}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := checkout.ParseCreateRequest(body)
		if err != nil {
			if p != nil {
				t.Fatalf("ParseCreateRequest(%q) returned params and error %v", body, err)
			}
			checkFuzzError(t, body, err)
			return
		}
		if p == nil {
			t.Fatalf("ParseCreateRequest(%q) = nil, nil", body)
		}
		checkFuzzParams(t, body, p)
	})
}

func checkFuzzError(t *testing.T, body []byte, err error) {
	t.Helper()
	var ce *checkout.Error
	if !errors.As(err, &ce) {
		t.Fatalf("ParseCreateRequest(%q) = %T %v; want *checkout.Error", body, err, err)
	}
	if ce.Message == "" || !utf8.ValidString(ce.Message) {
		t.Fatalf("ParseCreateRequest(%q): message %q empty or not UTF-8", body, ce.Message)
	}
	switch ce.Code {
	case checkout.EInvalidJSON:
		if len(ce.Details) != 0 || ce.Param != "" {
			t.Fatalf("ParseCreateRequest(%q): invalid_json with details %v, param %q", body, ce.Details, ce.Param)
		}
		// Whatever the standard decoder accepts as one object is not
		// invalid_json here, unless it is nested too deeply or is not
		// Unicode text (bytes that are not UTF-8, an escaped lone
		// surrogate), which the standard decoder replaces by U+FFFD.
		var v map[string]any
		notText := !utf8.Valid(body) || strings.Contains(ce.Message, "surrogate") && strings.Contains(string(body), `\u`)
		if json.Unmarshal(body, &v) == nil && v != nil && !strings.Contains(ce.Message, "nested too deeply") && !notText {
			t.Fatalf("ParseCreateRequest(%q) = invalid_json (%s); encoding/json reads an object", body, ce.Message)
		}
	case checkout.EValidationFailed, checkout.EAmountMismatch:
		if len(ce.Details) == 0 {
			t.Fatalf("ParseCreateRequest(%q): %s without details", body, ce.Code)
		}
		if ce.Details[0].Param != ce.Param {
			t.Fatalf("ParseCreateRequest(%q): param %q; first detail's %q", body, ce.Param, ce.Details[0].Param)
		}
		mismatches := 0
		for _, d := range ce.Details {
			if d.Code == "" || d.Message == "" || d.Param == "" {
				t.Fatalf("ParseCreateRequest(%q): incomplete detail %+v", body, d)
			}
			if d.Code == checkout.EAmountMismatch {
				mismatches++
			}
		}
		if mismatches > 1 {
			t.Fatalf("ParseCreateRequest(%q): %d amount mismatches", body, mismatches)
		}
		if (ce.Code == checkout.EAmountMismatch) != (mismatches == len(ce.Details)) {
			t.Fatalf("ParseCreateRequest(%q): code %s with details %v; amount_mismatch is for that problem alone", body, ce.Code, ce.Details)
		}
	default:
		t.Fatalf("ParseCreateRequest(%q): unknown code %q", body, ce.Code)
	}
}

func checkFuzzParams(t *testing.T, body []byte, p *checkout.CreateParams) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("ParseCreateRequest(%q) accepted %s: "+format, append([]any{body, dump(p)}, args...)...)
	}
	if n := len(p.Items); n < checkout.MinItems || n > checkout.MaxItems {
		fail("%d items", n)
	}
	for _, it := range p.Items {
		if it.Quantity < checkout.MinQuantity || it.Quantity > checkout.MaxQuantity {
			fail("quantity %d", it.Quantity)
		}
		if it.Amount < 0 || it.Amount > checkout.MaxTotal {
			fail("unit amount %d", it.Amount)
		}
		checkText(fail, "item name", it.Name, 1, checkout.MaxItemNameLen, false)
		if it.Image != nil {
			checkURL(fail, "image", *it.Image)
		}
	}
	total := checkout.ItemsTotal(p.Items)
	if total < checkout.MinTotal || total > checkout.MaxTotal {
		fail("total %d", total)
	}
	if p.Amount != nil && *p.Amount != total {
		fail("amount %d, total %d", *p.Amount, total)
	}
	if p.Title != nil {
		checkText(fail, "title", *p.Title, 1, checkout.MaxTitleLen, false)
	}
	if p.Description != nil {
		checkText(fail, "description", *p.Description, 1, checkout.MaxDescriptionLen, true)
	}
	if p.Currency != nil {
		if code, ok := checkout.NormalizeCurrency(*p.Currency); !ok || code != *p.Currency {
			fail("currency %q", *p.Currency)
		}
	}
	if c := p.Customer; c.Email != nil || c.Name != nil {
		if c.Email != nil && (len(*c.Email) > checkout.MaxEmailLen || !strings.Contains(*c.Email, "@") || !utf8.ValidString(*c.Email) ||
			strings.ContainsFunc(*c.Email, func(r rune) bool { return r < 0x20 || r == 0x7f })) {
			fail("email %q", *c.Email)
		}
		if c.Name != nil {
			checkText(fail, "customer name", *c.Name, 1, checkout.MaxCustomerName, false)
		}
	}
	if p.Metadata == nil || len(p.Metadata) > checkout.MaxMetadataKeys {
		fail("metadata %v", p.Metadata)
	}
	for k, v := range p.Metadata {
		if n := utf8.RuneCountInString(k); n < 1 || n > checkout.MaxMetadataKeyLen || !utf8.ValidString(k) {
			fail("metadata key %q", k)
		}
		if utf8.RuneCountInString(v) > checkout.MaxMetadataValLen || !utf8.ValidString(v) {
			fail("metadata value %q", v)
		}
	}
	for _, u := range []*string{p.ReturnURL, p.CancelURL} {
		if u != nil {
			checkURL(fail, "url", *u)
		}
	}

	m := &checkout.Merchant{ID: "3f1c9a2e-8b7d-4c1e-9f0a-1b2c3d4e5f60", Name: "Acme", Currency: "USD"}
	now := time.Unix(1_790_000_000, 0)
	s := checkout.NewSession(p, m, checkout.ModeTest, now)
	if s.Amount != total || s.TotalAmount != s.Amount || s.Status != checkout.StatusOpen || !s.ExpiresAt.Equal(now.Add(time.Hour)) {
		fail("NewSession = amount %d, total %d, status %s, expires %v", s.Amount, s.TotalAmount, s.Status, s.ExpiresAt)
	}
	if p.Amount != nil && s.TotalAmount != *p.Amount {
		fail("NewSession total %d; amount sent %d", s.TotalAmount, *p.Amount)
	}
	if _, err := json.Marshal(s.View(m, "https://pay.example")); err != nil {
		fail("the session does not encode: %v", err)
	}
}

// checkText checks a validated text: valid UTF-8, trimmed, min to max
// characters, no control characters but newlines and tabs when multiline.
// Nothing here can hold a NUL, which PostgreSQL text refuses.
func checkText(fail func(string, ...any), what, s string, min, max int, multiline bool) {
	if !utf8.ValidString(s) || strings.TrimSpace(s) != s {
		fail("%s %q not trimmed UTF-8", what, s)
	}
	if n := utf8.RuneCountInString(s); n < min || n > max {
		fail("%s of %d characters", what, n)
	}
	for _, r := range s {
		if unicode.IsControl(r) && !(multiline && (r == '\n' || r == '\r' || r == '\t')) {
			fail("%s with control character %U", what, r)
		}
	}
}

func checkURL(fail func(string, ...any), what, s string) {
	u, err := url.Parse(s)
	if err != nil || !strings.EqualFold(u.Scheme, "https") || u.Hostname() == "" || u.User != nil || len(s) > 2048 ||
		strings.ContainsFunc(s, func(r rune) bool { return r <= 0x20 || r == 0x7f }) {
		fail("%s %q", what, s)
	}
}

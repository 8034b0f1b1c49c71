package checkout

import (
	"fmt"
	"math"
	"net/mail"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// Status is the state of a checkout session.
type Status string

// Session statuses. complete and expired are final.
const (
	StatusOpen     Status = "open"
	StatusComplete Status = "complete"
	StatusExpired  Status = "expired"
)

// SessionLifetime is how long a new session stays open unpaid.
const SessionLifetime = time.Hour

// Limits of a create request (SPEC.md "Limits" and DESIGN.md section 4).
const (
	MinItems          = 1
	MaxItems          = 10
	MinQuantity       = 1
	MaxQuantity       = 100
	MinTotal          = 99
	MaxTotal          = 100_000_000
	MaxItemNameLen    = 250
	MaxTitleLen       = 128
	MaxDescriptionLen = 500
	MaxMetadataKeys   = 20
	MaxMetadataKeyLen = 40
	MaxMetadataValLen = 500
	MaxEmailLen       = 254
	MaxCustomerName   = 200
)

// Session is a checkout session: one attempt to collect a payment.
type Session struct {
	ID             string
	MerchantID     string
	Mode           Mode
	Status         Status
	Title          string
	Description    *string
	Currency       string
	Amount         int64
	DiscountAmount int64
	TaxAmount      int64
	TotalAmount    int64
	Items          []Item
	Customer       Customer
	Metadata       map[string]string
	ReturnURL      *string
	CancelURL      *string
	PaymentID      *string
	CreatedAt      time.Time
	ExpiresAt      time.Time
	CompletedAt    *time.Time
	// ActivePaymentID is the payment that holds the session while it is on
	// its way: a card charge in flight, a crypto payment awaiting its
	// confirmations, a skins trade in its hold. While one holds it, no other
	// payment can begin, and the session stays open past ExpiresAt.
	ActivePaymentID *string
}

// PaymentInProgress reports whether a payment holds s (ActivePaymentID).
func (s *Session) PaymentInProgress() bool { return s.ActivePaymentID != nil }

// Item is one line of a session.
type Item struct {
	Name     string  `json:"name"`
	Amount   int64   `json:"amount"`
	Quantity int64   `json:"quantity"`
	Image    *string `json:"image"`
}

// Customer prefills the payment page; the receipt goes to Email.
type Customer struct {
	Email *string `json:"email"`
	Name  *string `json:"name"`
}

// CreateParams is a validated create request. Pointers are nil for fields
// that were not sent.
type CreateParams struct {
	Items       []Item
	Title       *string
	Description *string
	Currency    *string // upper case
	Amount      *int64
	Customer    Customer
	Metadata    map[string]string
	ReturnURL   *string
	CancelURL   *string
}

var createFields = []string{"items", "title", "description", "currency", "amount", "customer", "metadata", "return_url", "cancel_url"}

// ParseCreateRequest decodes and validates the body of a create request. It
// returns an *Error: invalid_json when body is not one JSON object, and
// otherwise validation_failed (or amount_mismatch when that is the only
// problem) listing every violation in Details.
func ParseCreateRequest(body []byte) (*CreateParams, error) {
	obj, dups, err := parseObject(body)
	if err != nil {
		return nil, err
	}
	v := dups
	p := &CreateParams{Metadata: map[string]string{}}
	v.rejectUnknown("", obj, createFields...)

	itemsOK := false
	if val, ok := field(obj, "items"); !ok {
		v.add("required", "items", "items is required: a list of 1 to 10 items.")
	} else {
		p.Items, itemsOK = v.items(val)
	}
	if val, ok := field(obj, "title"); ok {
		if s, ok := v.wantString("title", val); ok {
			s = strings.TrimSpace(s)
			if v.checkText("title", s, 1, MaxTitleLen, false) {
				p.Title = &s
			}
		}
	}
	if val, ok := field(obj, "description"); ok {
		if s, ok := v.wantString("description", val); ok {
			s = strings.TrimSpace(s)
			if v.checkText("description", s, 1, MaxDescriptionLen, true) {
				p.Description = &s
			}
		}
	}
	if val, ok := field(obj, "currency"); ok {
		if s, ok := v.wantString("currency", val); ok {
			if code, ok := NormalizeCurrency(s); ok && isASCIILetters(s) {
				p.Currency = &code
			} else {
				v.add("invalid_currency", "currency", fmt.Sprintf("currency must be a three-letter ISO 4217 code such as USD; got %s.", quote(s)))
			}
		}
	}
	amountOK := true
	if val, ok := field(obj, "amount"); ok {
		var n int64
		// Any amount but the items total is a mismatch (SPEC.md), however
		// far off; only a negative one, or one beyond 64 bits, is malformed.
		if n, amountOK = v.wantInt("amount", val, 0, math.MaxInt64); amountOK {
			p.Amount = &n
		}
	}
	if val, ok := field(obj, "customer"); ok {
		p.Customer = v.customer(val)
	}
	if val, ok := field(obj, "metadata"); ok {
		p.Metadata = v.metadata(val)
	}
	for _, f := range []struct {
		name string
		dst  **string
	}{{"return_url", &p.ReturnURL}, {"cancel_url", &p.CancelURL}} {
		if val, ok := field(obj, f.name); ok {
			if s, ok := v.wantString(f.name, val); ok {
				if msg := checkHTTPSURL(s); msg != "" {
					v.add("invalid_url", f.name, f.name+" "+msg)
				} else {
					*f.dst = &s
				}
			}
		}
	}

	if itemsOK {
		total := ItemsTotal(p.Items)
		if total < MinTotal || total > MaxTotal {
			v.add("out_of_range", "items", fmt.Sprintf("The items total (unit amount times quantity over all items) must be between %d and %d minor units; it is %d.", MinTotal, MaxTotal, total))
		}
		if p.Amount != nil && amountOK && *p.Amount != total {
			v.add(EAmountMismatch, "amount", fmt.Sprintf("amount is %d but the items total is %d.", *p.Amount, total))
		}
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	return p, nil
}

func (v *violations) items(val any) ([]Item, bool) {
	arr, ok := val.([]any)
	if !ok {
		v.add("invalid_type", "items", fmt.Sprintf("items must be an array, not %s.", typeName(val)))
		return nil, false
	}
	if len(arr) < MinItems || len(arr) > MaxItems {
		v.add("out_of_range", "items", fmt.Sprintf("items must hold 1 to 10 items; it holds %d.", len(arr)))
		return nil, false
	}
	before := len(*v)
	items := make([]Item, 0, len(arr))
	for i, raw := range arr {
		path := fmt.Sprintf("items[%d]", i)
		obj, ok := v.wantObject(path, raw)
		if !ok {
			continue
		}
		v.rejectUnknown(path, obj, "name", "amount", "quantity", "image")
		it := Item{Quantity: 1}
		if val, ok := field(obj, "name"); !ok {
			v.add("required", path+".name", path+".name is required.")
		} else if s, ok := v.wantString(path+".name", val); ok {
			it.Name = strings.TrimSpace(s)
			v.checkText(path+".name", it.Name, 1, MaxItemNameLen, false)
		}
		if val, ok := field(obj, "amount"); !ok {
			v.add("required", path+".amount", path+".amount is required: the unit amount in minor units.")
		} else {
			it.Amount, _ = v.wantInt(path+".amount", val, 0, MaxTotal)
		}
		if val, ok := field(obj, "quantity"); ok {
			it.Quantity, _ = v.wantInt(path+".quantity", val, MinQuantity, MaxQuantity)
		}
		if val, ok := field(obj, "image"); ok {
			if s, ok := v.wantString(path+".image", val); ok {
				if msg := checkHTTPSURL(s); msg != "" {
					v.add("invalid_url", path+".image", path+".image "+msg)
				} else {
					it.Image = &s
				}
			}
		}
		items = append(items, it)
	}
	return items, len(*v) == before
}

func (v *violations) customer(val any) Customer {
	var c Customer
	obj, ok := v.wantObject("customer", val)
	if !ok {
		return c
	}
	v.rejectUnknown("customer", obj, "email", "name")
	emailVal, hasEmail := field(obj, "email")
	nameVal, hasName := field(obj, "name")
	if !hasEmail && !hasName {
		v.add("required", "customer", "customer must hold an email, a name or both.")
		return c
	}
	if hasEmail {
		if s, ok := v.wantString("customer.email", emailVal); ok {
			if msg := checkEmail(s); msg != "" {
				v.add("invalid_email", "customer.email", "customer.email "+msg)
			} else {
				c.Email = &s
			}
		}
	}
	if hasName {
		if s, ok := v.wantString("customer.name", nameVal); ok {
			s = strings.TrimSpace(s)
			if v.checkText("customer.name", s, 1, MaxCustomerName, false) {
				c.Name = &s
			}
		}
	}
	return c
}

// CheckEmail returns why s is not one email address of at most 254
// characters, or "" when it is.
func CheckEmail(s string) string { return checkEmail(s) }

func checkEmail(s string) string {
	if utf8.RuneCountInString(s) > MaxEmailLen {
		return "must be at most 254 characters."
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Name != "" || a.Address != s {
		return "must be one email address such as buyer@example.com."
	}
	at := strings.LastIndexByte(s, '@')
	if domain := s[at+1:]; !strings.Contains(domain, ".") || strings.HasPrefix(domain, "[") {
		return "must have a domain name such as example.com."
	}
	return ""
}

func (v *violations) metadata(val any) map[string]string {
	md := map[string]string{}
	obj, ok := v.wantObject("metadata", val)
	if !ok {
		return md
	}
	if len(obj.keys) > MaxMetadataKeys {
		v.add("too_many", "metadata", fmt.Sprintf("metadata must have at most %d keys; it has %d.", MaxMetadataKeys, len(obj.keys)))
		return md
	}
	for _, k := range obj.keys {
		path := join("metadata", k)
		if n := utf8.RuneCountInString(k); n < 1 || n > MaxMetadataKeyLen {
			v.add("invalid_key", path, fmt.Sprintf("metadata keys must be 1 to %d characters; %s has %d.", MaxMetadataKeyLen, quote(k), n))
			continue
		}
		s, ok := obj.vals[k].(string)
		if !ok {
			v.add("invalid_type", path, fmt.Sprintf("%s must be a string, not %s.", path, typeName(obj.vals[k])))
			continue
		}
		if n := utf8.RuneCountInString(s); n > MaxMetadataValLen {
			v.add("too_long", path, fmt.Sprintf("%s must be at most %d characters; it has %d.", path, MaxMetadataValLen, n))
			continue
		}
		md[k] = s
	}
	return md
}

func isASCIILetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// ItemsTotal is the sum of unit amount times quantity. Validated items keep
// it far from overflow (10 × 100 × 100,000,000).
func ItemsTotal(items []Item) int64 {
	var t int64
	for _, it := range items {
		t += it.Amount * it.Quantity
	}
	return t
}

// NewSession returns a new open session for merchant m in mode, created at
// now, from validated params.
func NewSession(p *CreateParams, m *Merchant, mode Mode, now time.Time) *Session {
	now = now.Truncate(time.Second)
	s := &Session{
		ID:          NewSessionID(),
		MerchantID:  m.ID,
		Mode:        mode,
		Status:      StatusOpen,
		Title:       m.Name,
		Description: p.Description,
		Currency:    m.Currency,
		Items:       p.Items,
		Customer:    p.Customer,
		Metadata:    p.Metadata,
		ReturnURL:   p.ReturnURL,
		CancelURL:   p.CancelURL,
		CreatedAt:   now,
		ExpiresAt:   now.Add(SessionLifetime),
	}
	if p.Title != nil {
		s.Title = *p.Title
	}
	if p.Currency != nil {
		s.Currency = *p.Currency
	}
	if s.Metadata == nil {
		s.Metadata = map[string]string{}
	}
	s.Amount = ItemsTotal(s.Items)
	// v1 has no discounts or taxes (DESIGN.md 4.3); the formula stands for
	// when it does.
	s.TotalAmount = s.Amount - s.DiscountAmount + s.TaxAmount
	return s
}

// ReturnURLWithID returns where the buyer goes after paying: return_url
// with checkout_id=<id> added to its query. The other parameters keep their
// order and encoding, the fragment stays, and a checkout_id the URL already
// held is replaced, so the merchant never reads a stale one. "" when the
// session has no return_url.
func (s *Session) ReturnURLWithID() string {
	if s.ReturnURL == nil {
		return ""
	}
	u, err := url.Parse(*s.ReturnURL)
	if err != nil {
		return "" // validated at creation; cannot happen
	}
	var kept []string
	if u.RawQuery != "" {
		for _, part := range strings.Split(u.RawQuery, "&") {
			k, _, _ := strings.Cut(part, "=")
			if key, err := url.QueryUnescape(k); err == nil && key == "checkout_id" {
				continue
			}
			kept = append(kept, part)
		}
	}
	u.RawQuery = strings.Join(append(kept, "checkout_id="+url.QueryEscape(s.ID)), "&")
	u.ForceQuery = false
	return u.String()
}

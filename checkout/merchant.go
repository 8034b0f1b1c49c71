package checkout

import (
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// Merchant is a store: the seller a checkout session collects money for. Its
// ID is the {storeId} of the API paths and the merchant.id of a session.
type Merchant struct {
	ID                  string
	Name                string
	Currency            string // default currency of its sessions, upper case
	Website             string // "" when not set
	StatementDescriptor string
	// Pricing is what the service charges the store per payment.
	Pricing   Pricing
	CreatedAt time.Time
}

// MerchantParams are the inputs to NewMerchant.
type MerchantParams struct {
	Name                string
	Currency            string
	Website             string
	StatementDescriptor string
	// Pricing defaults to DefaultPricing when nil.
	Pricing *Pricing
}

// Limits of a merchant's fields.
const (
	MaxMerchantNameLen         = 128
	MaxStatementDescriptorLen  = 22
	MinStatementDescriptorLen  = 5
	maxURLLen                  = 2048
	statementDescriptorSpecial = `<>\'"*`
)

// NewMerchant validates p and returns a new merchant with a fresh id. The
// statement descriptor defaults to the name, upper-cased and cut to 22
// characters, the limit card networks impose.
func NewMerchant(p MerchantParams, now time.Time) (*Merchant, error) {
	var v violations
	name := strings.TrimSpace(p.Name)
	v.checkText("name", name, 1, MaxMerchantNameLen, false)
	cur, ok := NormalizeCurrency(p.Currency)
	if !ok {
		v.add("invalid_currency", "currency", "currency must be an ISO 4217 code such as USD.")
	}
	if p.Website != "" {
		if msg := checkHTTPSURL(p.Website); msg != "" {
			v.add("invalid_url", "website", "website "+msg)
		}
	}
	sd := strings.TrimSpace(p.StatementDescriptor)
	if sd == "" {
		sd = defaultStatementDescriptor(name)
	}
	switch n := utf8.RuneCountInString(sd); {
	case n < MinStatementDescriptorLen || n > MaxStatementDescriptorLen:
		v.add("out_of_range", "statement_descriptor", "statement_descriptor must be 5 to 22 characters.")
	case strings.ContainsAny(sd, statementDescriptorSpecial) || !isPrintableASCII(sd):
		v.add("invalid_format", "statement_descriptor", `statement_descriptor must be printable ASCII without < > \ ' " *.`)
	}
	pricing := DefaultPricing
	if p.Pricing != nil {
		pricing = *p.Pricing
		if err := pricing.Validate(); err != nil {
			v.add("out_of_range", "pricing", ErrorMessage(err))
		}
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	return &Merchant{
		Pricing:             pricing,
		ID:                  NewStoreID(),
		Name:                name,
		Currency:            cur,
		Website:             p.Website,
		StatementDescriptor: sd,
		CreatedAt:           now.Truncate(time.Second),
	}, nil
}

// Updated validates p as NewMerchant does and returns a copy of m with its
// name, currency, website and statement descriptor from p; its id, creation
// time and pricing stay (a nil p.Pricing keeps m's).
func (m *Merchant) Updated(p MerchantParams) (*Merchant, error) {
	if p.Pricing == nil {
		p.Pricing = &m.Pricing
	}
	n, err := NewMerchant(p, m.CreatedAt)
	if err != nil {
		return nil, err
	}
	n.ID, n.CreatedAt = m.ID, m.CreatedAt
	return n, nil
}

func defaultStatementDescriptor(name string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(name) {
		if r > 0x20 && r < 0x7f && !strings.ContainsRune(statementDescriptorSpecial, r) || r == ' ' {
			b.WriteRune(r)
		}
	}
	sd := strings.TrimSpace(b.String())
	if len(sd) > MaxStatementDescriptorLen {
		sd = strings.TrimSpace(sd[:MaxStatementDescriptorLen])
	}
	for len(sd) < MinStatementDescriptorLen {
		sd += "."
	}
	return sd
}

func isPrintableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// checkHTTPSURL returns "" when s is an absolute https URL of at most 2048
// characters (code points, as every length of the API) with a host and no
// user info, and otherwise the reason it is not.
func checkHTTPSURL(s string) string {
	if utf8.RuneCountInString(s) > maxURLLen {
		return "must be at most 2048 characters."
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= 0x20 || s[i] == 0x7f {
			return "must not contain spaces or control characters."
		}
	}
	u, err := url.Parse(s)
	if err != nil || !u.IsAbs() || u.Opaque != "" {
		return "must be an absolute URL."
	}
	if u.Scheme != "https" {
		return "must use https."
	}
	if u.Hostname() == "" {
		return "must have a host."
	}
	if u.User != nil {
		return "must not contain user information."
	}
	return ""
}

package checkout

import (
	"strings"
	"time"
)

// PrefixAccount begins every dashboard account id: acct_ and 32 hex.
const PrefixAccount = "acct_"

// NewAccountID returns a new account id: acct_ and 32 hex characters.
func NewAccountID() string { return NewID(PrefixAccount, 16) }

// Account is a person who signs in to the dashboard. Email is normalised
// (NormalizeEmail) and unique; PasswordHash is an argon2id PHC string
// (internal/password), never the password.
type Account struct {
	ID           string
	Email        string
	PasswordHash string
	CreatedAt    time.Time
}

// Membership gives an account access to a store, with a role that says
// what it may do there (role.go). A store may have several accounts and an
// account several stores.
type Membership struct {
	AccountID  string
	MerchantID string
	Role       Role
	CreatedAt  time.Time
	// Email is the account's, filled by the lists of a store's members.
	Email string
}

// NormalizeEmail returns an email address as accounts store and look it
// up: trimmed and lower-cased, so that "Ann@Example.com " signs in as
// ann@example.com.
func NormalizeEmail(s string) string {
	return strings.ToLower(strings.TrimSpace(s))
}

// DashboardSession is a signed-in browser of the dashboard. ID is the
// SHA-256 (hex) of the token in the browser's cookie: the token itself is
// never stored, so a copy of the database signs no one in.
type DashboardSession struct {
	ID         string
	AccountID  string
	CreatedAt  time.Time
	LastSeenAt time.Time
	ExpiresAt  time.Time // the absolute end, whatever the activity
}

// SetupToken is a one-time link that creates the first account. Hash is the
// SHA-256 (hex) of the token in the link; UsedAt is nil until it is used.
type SetupToken struct {
	Hash      string
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    *time.Time
}

package checkout

import "time"

// PrefixInvitation begins every invitation id: inv_ and 32 hex.
const PrefixInvitation = "inv_"

// NewInvitationID returns a new invitation id: inv_ and 32 hex characters.
func NewInvitationID() string { return NewID(PrefixInvitation, 16) }

// InvitationTTL is how long an invitation's link works.
const InvitationTTL = 7 * 24 * time.Hour

// Invitation asks the person with an email to join a store with a role.
// Its link carries a token; TokenHash is the token's SHA-256 (hex), as a
// dashboard session's id, so a copy of the database joins no one. It is
// used once: AcceptedAt is set when someone joins through it, RevokedAt
// when an administrator takes it back.
type Invitation struct {
	ID         string
	MerchantID string
	Email      string
	Role       Role
	TokenHash  string
	// InvitedBy is who invited: an account's id, or "cli" for the
	// operator.
	InvitedBy  string
	CreatedAt  time.Time
	ExpiresAt  time.Time
	AcceptedAt *time.Time
	AcceptedBy string // the account that joined
	RevokedAt  *time.Time
}

// Pending reports whether the invitation's link still works at now.
func (i *Invitation) Pending(now time.Time) bool {
	return i.AcceptedAt == nil && i.RevokedAt == nil && now.Before(i.ExpiresAt)
}

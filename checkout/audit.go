package checkout

import (
	"strings"
	"time"
	"unicode/utf8"
)

// The audit trail (docs/dashboard.md, Security): every change made through
// the dashboard, the CLI or the API to a store's keys, webhooks, money,
// team and settings, and every sign-in, is recorded with who made it, from
// where and when, in the transaction of the change itself. Entries are
// never edited; they are deleted AuditRetention after they were made.

// PrefixAudit is the prefix of an audit entry's id.
const PrefixAudit = "au_"

// NewAuditID returns a new audit entry id: au_ and 32 hex characters, in
// the order they are made (NewOrderedID).
func NewAuditID() string { return NewOrderedID(PrefixAudit, 16) }

// AuditRetention is how long audit entries are kept.
const AuditRetention = 365 * 24 * time.Hour

// AuditAction is what an audit entry records, as object.verb.
type AuditAction string

// The actions recorded. Each names its object id's kind.
const (
	// Accounts and sign-in (account-level: no store). Object: the account.
	AuditSignIn        AuditAction = "account.sign_in"
	AuditSignInFailed  AuditAction = "account.sign_in_failed" // object: none; the actor's name is the email tried
	AuditAccountCreate AuditAction = "account.create"

	// Stores. Object: the store.
	AuditStoreCreate     AuditAction = "store.create"
	AuditStoreUpdate     AuditAction = "store.update"
	AuditStoreDisputeFee AuditAction = "store.dispute_fee"

	// The team. Object: the member's account (an invitation's id for
	// the invitation actions).
	AuditMemberAdd        AuditAction = "member.add"
	AuditMemberRemove     AuditAction = "member.remove"
	AuditMemberRole       AuditAction = "member.role_change"
	AuditInvitationCreate AuditAction = "invitation.create"
	AuditInvitationAccept AuditAction = "invitation.accept"
	AuditInvitationRevoke AuditAction = "invitation.revoke"

	// API keys. Object: the key.
	AuditAPIKeyCreate AuditAction = "api_key.create"
	AuditAPIKeyRevoke AuditAction = "api_key.revoke"

	// Webhook endpoints. Object: the endpoint (the delivery resent for
	// resend).
	AuditEndpointCreate       AuditAction = "webhook_endpoint.create"
	AuditEndpointUpdate       AuditAction = "webhook_endpoint.update"
	AuditEndpointDisable      AuditAction = "webhook_endpoint.disable"
	AuditEndpointEnable       AuditAction = "webhook_endpoint.enable"
	AuditEndpointDelete       AuditAction = "webhook_endpoint.delete"
	AuditEndpointSecretRoll   AuditAction = "webhook_endpoint.secret_roll"
	AuditEndpointSecretReveal AuditAction = "webhook_endpoint.secret_reveal"
	AuditEndpointTest         AuditAction = "webhook_endpoint.test"
	AuditEndpointRetryFailed  AuditAction = "webhook_endpoint.retry_failed"
	AuditDeliveryResend       AuditAction = "webhook_delivery.resend"

	// Money. Object: the refund, or the dispute.
	AuditRefundCreate         AuditAction = "refund.create"
	AuditRefundCancel         AuditAction = "refund.cancel"
	AuditRefundSimulatePayout AuditAction = "refund.simulate_payout"
	AuditDisputeAnswer        AuditAction = "dispute.answer"

	// Crypto keys. Object: the coin (BTC, LTC...).
	AuditCryptoKeySet    AuditAction = "crypto_key.set"
	AuditCryptoKeyRemove AuditAction = "crypto_key.remove"

	// The store's account at a card acquirer. Object: the acquirer
	// (stripe); never a secret.
	AuditAcquirerSet    AuditAction = "acquirer_account.set"
	AuditAcquirerRemove AuditAction = "acquirer_account.remove"

	// The operator's secrets key (no store). Object: none.
	AuditSecretsRotate AuditAction = "secrets.rotate"
)

// AuditActions lists every action, in the order of the list above: the
// Security page's filter offers them.
var AuditActions = []AuditAction{
	AuditSignIn, AuditSignInFailed, AuditAccountCreate,
	AuditStoreCreate, AuditStoreUpdate, AuditStoreDisputeFee,
	AuditMemberAdd, AuditMemberRemove, AuditMemberRole, AuditInvitationCreate, AuditInvitationAccept, AuditInvitationRevoke,
	AuditAPIKeyCreate, AuditAPIKeyRevoke,
	AuditEndpointCreate, AuditEndpointUpdate, AuditEndpointDisable, AuditEndpointEnable, AuditEndpointDelete,
	AuditEndpointSecretRoll, AuditEndpointSecretReveal, AuditEndpointTest, AuditEndpointRetryFailed, AuditDeliveryResend,
	AuditRefundCreate, AuditRefundCancel, AuditRefundSimulatePayout, AuditDisputeAnswer,
	AuditCryptoKeySet, AuditCryptoKeyRemove,
	AuditAcquirerSet, AuditAcquirerRemove,
	AuditSecretsRotate,
}

// Valid reports whether a is an action of AuditActions.
func (a AuditAction) Valid() bool {
	for _, b := range AuditActions {
		if a == b {
			return true
		}
	}
	return false
}

// The lengths an audit entry keeps of what a request says of itself.
const (
	maxAuditName      = 254 // an email's most
	maxAuditUserAgent = 500
)

// AuditEntry is one record of the audit trail.
type AuditEntry struct {
	ID string
	// MerchantID is the store changed; "" for an account-level action
	// (sign-in, the secrets key).
	MerchantID string
	Actor      Actor
	Action     AuditAction
	// ObjectID is the id of what changed ("" when nothing has one).
	ObjectID string
	// ClientAddress and UserAgent are the dashboard's request's (the TCP
	// peer's address, the User-Agent header); "" at the CLI.
	ClientAddress string
	UserAgent     string
	CreatedAt     time.Time
}

// NewAuditEntry returns an entry of action made now. What came with a
// request (the actor's name, an attempted email, the user agent) is kept
// as valid UTF-8, bounded, with any secret-shaped string in it redacted: a
// secret pasted into the email field of the sign-in form never lands in
// the trail.
func NewAuditEntry(merchantID string, by Actor, action AuditAction, objectID, address, userAgent string, now time.Time) *AuditEntry {
	by.Name = auditText(by.Name, maxAuditName)
	return &AuditEntry{
		ID: NewAuditID(), MerchantID: merchantID, Actor: by, Action: action, ObjectID: auditText(objectID, 100),
		ClientAddress: auditText(address, 100), UserAgent: auditText(userAgent, maxAuditUserAgent),
		CreatedAt: now.Truncate(time.Millisecond),
	}
}

// auditText is s redacted, storable, on one line and at most n bytes.
func auditText(s string, n int) string {
	s = StorableText(RedactSecrets(s))
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

// Key is how the audit trail's actor filter names an actor: an account or
// an API key by its id, the operator at the CLI as cli:USER, and a failed
// sign-in's (which has no account) as email:ADDRESS.
func (a Actor) Key() string {
	switch {
	case a.ID != "":
		return a.ID
	case a.Kind == ActorAccount:
		return "email:" + a.Name
	}
	return string(a.Kind) + ":" + a.Name
}

// AuditListParams selects a page of the audit trail, newest first.
type AuditListParams struct {
	// MerchantID is the store ("" lists the account-level entries).
	MerchantID string
	// ActorKey, when set, is one actor's (Actor.Key).
	ActorKey string
	// Action, when set, is one action.
	Action AuditAction
	// Since and Until, when not zero, bound CreatedAt: Since <= t < Until.
	Since, Until time.Time
	After        Cursor
	Limit        int
}

// AuditEntryJSON is an entry as the CLI's --json prints it.
type AuditEntryJSON struct {
	Object        string      `json:"object"`
	ID            string      `json:"id"`
	StoreID       *string     `json:"store_id"`
	Actor         ActorJSON   `json:"actor"`
	Action        AuditAction `json:"action"`
	ObjectID      *string     `json:"object_id"`
	ClientAddress *string     `json:"client_address"`
	UserAgent     *string     `json:"user_agent"`
	Created       int64       `json:"created"`
}

// View is e as JSON: "" fields are null.
func (e *AuditEntry) View() AuditEntryJSON {
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	return AuditEntryJSON{Object: "audit_entry", ID: e.ID, StoreID: opt(e.MerchantID), Actor: e.Actor.view(), Action: e.Action,
		ObjectID: opt(e.ObjectID), ClientAddress: opt(e.ClientAddress), UserAgent: opt(e.UserAgent), Created: e.CreatedAt.Unix()}
}

package checkout

import "time"

// AcquirerAccount is a store's account at a card acquirer in one mode, as
// an Administrator entered it (docs/payments.md, Stripe). The secret key
// and the webhook signing secret are kept sealed with the operator's
// secrets key, never in the clear, and never shown again: their hints are
// how people recognise them.
type AcquirerAccount struct {
	MerchantID string
	Mode       Mode
	// Acquirer is the connector's name: "stripe".
	Acquirer string
	// AccountID is the acquirer's id of the account (acct_...), as the
	// check on entry learned it.
	AccountID string
	// PublishableKey is not a secret: the buyer's browser gets it.
	PublishableKey string
	// SealedSecretKey and SealedWebhookSecret are sealed with the secrets
	// key for this account (AcquirerSealOwner); SecretKeyHint and
	// WebhookSecretHint are their last four characters.
	SealedSecretKey     string
	SecretKeyHint       string
	SealedWebhookSecret string
	WebhookSecretHint   string
	// Warnings are what the check on entry found wrong without refusing
	// the keys, in words for the Administrator.
	Warnings []string
	// SetBy and SetAt are who entered the account, and when.
	SetBy Actor
	SetAt time.Time
}

// The secrets of an acquirer account, as AcquirerSealOwner names them.
const (
	AcquirerSecretKey     = "secret_key"
	AcquirerWebhookSecret = "webhook_secret"
)

// AcquirerSealOwner names the owner a secret of a store's acquirer account
// is sealed for (seal's additional data): the store, mode, acquirer and
// which secret, so that a sealed value copied onto another row or column
// does not open.
func AcquirerSealOwner(merchantID string, mode Mode, acquirer, secret string) string {
	return "acquirer:" + merchantID + ":" + string(mode) + ":" + acquirer + ":" + secret
}

// SecretHint is what a page may show of a secret to recognise it by: its
// last four characters, as API keys' hints; "" for a secret too short to
// give four away.
func SecretHint(secret string) string {
	if len(secret) < 12 {
		return ""
	}
	return secret[len(secret)-4:]
}

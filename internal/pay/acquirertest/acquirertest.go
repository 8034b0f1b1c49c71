// Package acquirertest is a stand-in card acquirer for the tests of what
// a store sets up (its keys, checked on entry, sealed at rest): its Check
// follows a few rules on the keys' shapes, with no network. The payment
// flows are tested against the acquirers' own fakes (stripefake).
package acquirertest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/pay"
)

// Keys that Check accepts: a live secret key, its publishable key and a
// webhook secret. A test-mode key is TestSecretKey; a webhook secret with
// "oldversion" in it checks with a warning.
const (
	LiveSecretKey  = "sk_live_0123456789abcdefLIVE"
	TestSecretKey  = "sk_test_0123456789abcdefTEST"
	PublishableKey = "pk_live_0123456789abcdefPUBL"
	WebhookSecret  = "whsec_0123456789abcdefWHSEC"
	OldWebhook     = "whsec_oldversion0123456789OLD"
	// Warning is the warning of OldWebhook.
	Warning = "The webhook endpoint sends events of API version 2020-08-27; checkoutd reads 2025-01-27. Make a new endpoint of the current version."
)

// Connector is a stand-in pay.AcquirerConnector. Its zero value is named
// "stripe", as the CLI and the dashboard's tests expect.
type Connector struct {
	// Label is its Name; "stripe" when "".
	Label string
	// AllowTestKeys accepts test-mode keys (Live false), as an operator
	// may let Stripe's connector do; they are refused otherwise.
	AllowTestKeys bool
	mu            sync.Mutex
	// unreachable makes Check fail as if the acquirer did not answer.
	unreachable bool
	checks      []pay.AcquirerCredentials
}

var _ pay.AcquirerConnector = (*Connector)(nil)

// Name implements pay.AcquirerConnector.
func (c *Connector) Name() string {
	if c.Label == "" {
		return "stripe"
	}
	return c.Label
}

// SetUnreachable makes Check fail with pay.ErrAcquirerUnavailable, or
// answer again.
func (c *Connector) SetUnreachable(v bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.unreachable = v
}

// Checks returns the credentials Check was called with, in order.
func (c *Connector) Checks() []pay.AcquirerCredentials {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]pay.AcquirerCredentials(nil), c.checks...)
}

// AccountID is the account id Check gives a secret key.
func AccountID(secretKey string) string {
	h := sha256.Sum256([]byte(secretKey))
	return "acct_" + hex.EncodeToString(h[:8])
}

// Check implements pay.AcquirerConnector: a secret key of sk_live_ (or
// sk_test_, with AllowTestKeys) and more than 16 characters, a publishable key of pk_ and a
// webhook secret of whsec_ pass. A refused secret key is repeated in the
// message, as an acquirer may do: the service must not pass it on.
func (c *Connector) Check(_ context.Context, cr pay.AcquirerCredentials) (pay.AcquirerAccount, error) {
	c.mu.Lock()
	c.checks = append(c.checks, cr)
	unreachable := c.unreachable
	c.mu.Unlock()
	if unreachable {
		return pay.AcquirerAccount{}, fmt.Errorf("%w: connection refused", pay.ErrAcquirerUnavailable)
	}
	refuse := func(param, msg string) (pay.AcquirerAccount, error) {
		return pay.AcquirerAccount{}, &checkout.Error{Code: checkout.EValidationFailed, Message: msg, Param: param,
			Details: []checkout.Violation{{Code: "invalid_value", Param: param, Message: msg}}}
	}
	live := strings.HasPrefix(cr.SecretKey, "sk_live_")
	switch {
	case !live && !strings.HasPrefix(cr.SecretKey, "sk_test_") || len(cr.SecretKey) < 16:
		return refuse("secret_key", "Invalid API Key provided: "+cr.SecretKey)
	case !live && !c.AllowTestKeys:
		return refuse("secret_key", "This is a test-mode key: live mode takes the account's live secret key.")
	case !strings.HasPrefix(cr.PublishableKey, "pk_"):
		return refuse("publishable_key", "The publishable key starts with pk_live_ or pk_test_.")
	case !strings.HasPrefix(cr.WebhookSecret, "whsec_"):
		return refuse("webhook_secret", "The webhook signing secret starts with whsec_.")
	}
	a := pay.AcquirerAccount{ID: AccountID(cr.SecretKey), Live: live}
	if strings.Contains(cr.WebhookSecret, "oldversion") {
		a.Warnings = []string{Warning}
	}
	return a, nil
}

// Connect implements pay.AcquirerConnector: an Acquirer that keeps the
// credentials it was made with, and does nothing.
func (c *Connector) Connect(cr pay.AcquirerCredentials) pay.Acquirer {
	return &Acquirer{Credentials: cr}
}

// Page implements pay.AcquirerConnector.
func (c *Connector) Page() pay.AcquirerPage {
	return pay.AcquirerPage{Script: "https://acquirer.example/v1.js", Origins: pay.AcquirerOrigins{Script: []string{"https://acquirer.example"}}}
}

// Acquirer is what Connect returns: it keeps its credentials, for tests to
// see what a store's sealed secrets opened to; every call fails.
type Acquirer struct{ Credentials pay.AcquirerCredentials }

var errNothing = fmt.Errorf("acquirertest: %w", pay.ErrAcquirerUnavailable)

// Capabilities implements pay.Acquirer.
func (a *Acquirer) Capabilities() pay.AcquirerCapabilities { return pay.AcquirerCapabilities{} }

// CreatePayment implements pay.Acquirer: it fails.
func (a *Acquirer) CreatePayment(context.Context, pay.AcquirerPaymentRequest) (pay.AcquirerPayment, error) {
	return pay.AcquirerPayment{}, errNothing
}

// LookupPayment implements pay.Acquirer: it fails.
func (a *Acquirer) LookupPayment(context.Context, string) (pay.AcquirerPayment, error) {
	return pay.AcquirerPayment{}, errNothing
}

// CancelPayment implements pay.Acquirer: it fails.
func (a *Acquirer) CancelPayment(context.Context, string, string) (pay.AcquirerPayment, error) {
	return pay.AcquirerPayment{}, errNothing
}

// Refund implements pay.Acquirer: it fails.
func (a *Acquirer) Refund(context.Context, pay.AcquirerRefundRequest) (pay.AcquirerRefund, error) {
	return pay.AcquirerRefund{}, errNothing
}

// LookupRefund implements pay.Acquirer: it fails.
func (a *Acquirer) LookupRefund(context.Context, string) (pay.AcquirerRefund, error) {
	return pay.AcquirerRefund{}, errNothing
}

// LookupDispute implements pay.Acquirer: it fails.
func (a *Acquirer) LookupDispute(context.Context, string) (pay.AcquirerDispute, error) {
	return pay.AcquirerDispute{}, errNothing
}

// ParseWebhook implements pay.Acquirer: it fails.
func (a *Acquirer) ParseWebhook([]byte, http.Header, time.Time) (pay.AcquirerEvent, error) {
	return pay.AcquirerEvent{}, errNothing
}

package service

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/seal"
)

// A store's account at a card acquirer (issue 29; docs/payments.md,
// Stripe): live card payments go through the merchant's own account there.
// An Administrator enters its keys once; the service checks them with a
// call to the acquirer before it keeps anything, seals the secret key and
// the webhook signing secret with the operator's secrets key, and never
// shows them again. The payment flows get the store's Acquirer from
// storeAcquirer.

// AcquirerAccountParams are a store's credentials at an acquirer, as an
// Administrator enters them.
type AcquirerAccountParams struct {
	MerchantID string
	// Mode is live: test mode's cards are the simulator's.
	Mode checkout.Mode
	// Acquirer is the connector's name ("stripe").
	Acquirer       string
	SecretKey      string
	PublishableKey string
	WebhookSecret  string
}

// AcquirerAccountInfo is what may be shown of a store's acquirer account:
// never a secret.
type AcquirerAccountInfo struct {
	Acquirer string
	Mode     checkout.Mode
	// AccountID is the acquirer's id of the account (acct_...).
	AccountID      string
	PublishableKey string
	// SecretKeyHint and WebhookSecretHint are the secrets' last four
	// characters: "" for a member whose role may not set up the acquirer.
	SecretKeyHint     string
	WebhookSecretHint string
	// Warnings are what the check found wrong when the keys were entered,
	// without refusing them (a webhook endpoint of another API version).
	Warnings []string
	SetBy    checkout.Actor
	SetAt    time.Time
	// WebhookURL is where the merchant points the acquirer's webhook.
	WebhookURL string
}

// Acquirers returns the names of the acquirers this server connects to,
// in the configuration's order: the stores' settings offer them.
func (s *Service) Acquirers() []string {
	conns := s.acquirerConnectors()
	names := make([]string, len(conns))
	for i, c := range conns {
		names[i] = c.Name()
	}
	return names
}

// AcquirerTitle is an acquirer's name as pages and messages show it:
// "Stripe".
func AcquirerTitle(name string) string {
	if name == "" {
		return ""
	}
	return strings.ToUpper(name[:1]) + name[1:]
}

// AcquirerWebhookURL is the address the merchant gives the acquirer for
// its webhook to a store: under the API's public address.
func (s *Service) AcquirerWebhookURL(merchantID, acquirer string) string {
	base := s.baseURL
	if base == "" {
		base = s.checkoutBaseURL
	}
	return strings.TrimRight(base, "/") + "/webhooks/" + acquirer + "/" + merchantID
}

// connector returns the connector of the acquirer named, or a refusal that
// says which there are.
func (s *Service) connector(name string) (pay.AcquirerConnector, error) {
	name = strings.ToLower(strings.TrimSpace(name))
	conns := s.acquirerConnectors()
	for _, c := range conns {
		if c.Name() == name {
			return c, nil
		}
	}
	msg := "Card payments through an acquirer are not configured on this server."
	if len(conns) > 0 {
		msg = fmt.Sprintf("This server connects to %s, not %q.", strings.Join(s.Acquirers(), ", "), name)
	}
	return nil, &checkout.Error{Code: checkout.EValidationFailed, Message: msg, Param: "acquirer",
		Details: []checkout.Violation{{Code: "invalid_value", Param: "acquirer", Message: msg}}}
}

// SetAcquirerAccount checks a store's credentials at an acquirer with a
// call to it and, when they work, keeps them in place of the store's
// account there: the secrets sealed, their hints, the account's id, and
// the warnings the check gave. A refusal names its field
// (validation_failed, with a violation per field), and then nothing is
// kept. Administrators only; recorded in the audit trail, never a secret.
func (s *Service) SetAcquirerAccount(ctx context.Context, p AcquirerAccountParams) (*AcquirerAccountInfo, error) {
	if err := s.authorize(ctx, p.MerchantID, checkout.ActionManageAcquirer); err != nil {
		return nil, err
	}
	conn, err := s.connector(p.Acquirer)
	if err != nil {
		return nil, err
	}
	title := AcquirerTitle(conn.Name())
	if p.Mode != checkout.ModeLive {
		return nil, fieldError("mode", "invalid_value", fmt.Sprintf("A %s account is set up for live mode; test mode's card payments are simulated.", title))
	}
	c := pay.AcquirerCredentials{
		SecretKey: strings.TrimSpace(p.SecretKey), PublishableKey: strings.TrimSpace(p.PublishableKey), WebhookSecret: strings.TrimSpace(p.WebhookSecret),
	}
	var missing []checkout.Violation
	for _, f := range []struct{ param, value, what string }{
		{"secret_key", c.SecretKey, "the account's secret key"},
		{"publishable_key", c.PublishableKey, "the account's publishable key"},
		{"webhook_secret", c.WebhookSecret, "the signing secret of the webhook endpoint"},
	} {
		if f.value == "" {
			missing = append(missing, checkout.Violation{Code: "required", Param: f.param, Message: fmt.Sprintf("Enter %s.", f.what)})
		}
	}
	if len(missing) > 0 {
		return nil, &checkout.Error{Code: checkout.EValidationFailed, Message: missing[0].Message, Param: missing[0].Param, Details: missing}
	}
	if s.secrets == nil {
		return nil, noSecretsKeyFor("secret_key", title)
	}
	if _, err := s.store.MerchantGet(ctx, p.MerchantID); err != nil {
		return nil, err
	}
	acct, err := conn.Check(ctx, c)
	if err != nil {
		return nil, checkRefusal(err, title, c)
	}
	// Whether test-mode keys may stand in for live ones is the connector's
	// to say (an operator's switch, for a merchant's run of the manual
	// checklist); when it accepts them, its warnings say so.
	by := s.origin(ctx).Actor
	a := &checkout.AcquirerAccount{
		MerchantID: p.MerchantID, Mode: p.Mode, Acquirer: conn.Name(), AccountID: acct.ID, PublishableKey: c.PublishableKey,
		SecretKeyHint: checkout.SecretHint(c.SecretKey), WebhookSecretHint: checkout.SecretHint(c.WebhookSecret),
		Warnings: acct.Warnings, SetBy: by, SetAt: s.now(),
	}
	sealAcquirer(s.secrets, a, c)
	err = s.inTx(ctx, func(tx *txn) error {
		if err := tx.AcquirerAccountPut(ctx, a); err != nil {
			return err
		}
		return s.Record(ctx, tx, p.MerchantID, checkout.AuditAcquirerSet, a.Acquirer)
	})
	if err != nil {
		return nil, err
	}
	return s.acquirerInfo(a, true), nil
}

// sealAcquirer seals c's secrets into a with k, each for its row and
// column.
func sealAcquirer(k *seal.Key, a *checkout.AcquirerAccount, c pay.AcquirerCredentials) {
	a.SealedSecretKey = k.Seal(c.SecretKey, checkout.AcquirerSealOwner(a.MerchantID, a.Mode, a.Acquirer, checkout.AcquirerSecretKey))
	a.SealedWebhookSecret = k.Seal(c.WebhookSecret, checkout.AcquirerSealOwner(a.MerchantID, a.Mode, a.Acquirer, checkout.AcquirerWebhookSecret))
}

// openAcquirer opens a's secrets with the service's secrets key. The error
// names the store and the acquirer, never a secret.
func (s *Service) openAcquirer(a *checkout.AcquirerAccount) (pay.AcquirerCredentials, error) {
	if s.secrets == nil {
		return pay.AcquirerCredentials{}, errors.New("this server has no secrets key (--secrets-key or CHECKOUTD_SECRETS_KEY) to open them with")
	}
	sk, err := s.secrets.Open(a.SealedSecretKey, checkout.AcquirerSealOwner(a.MerchantID, a.Mode, a.Acquirer, checkout.AcquirerSecretKey))
	if err != nil {
		return pay.AcquirerCredentials{}, fmt.Errorf("the secret key: %w", err)
	}
	wh, err := s.secrets.Open(a.SealedWebhookSecret, checkout.AcquirerSealOwner(a.MerchantID, a.Mode, a.Acquirer, checkout.AcquirerWebhookSecret))
	if err != nil {
		return pay.AcquirerCredentials{}, fmt.Errorf("the webhook secret: %w", err)
	}
	// AccountID stays "": the secret key is the account's own (Stripe
	// Connect's platform keys would set it; see migration 0030).
	return pay.AcquirerCredentials{SecretKey: sk, PublishableKey: a.PublishableKey, WebhookSecret: wh}, nil
}

// checkRefusal is what SetAcquirerAccount answers when the check failed:
// the connector's refusal as it is (it names the field), the acquirer out
// of reach as service_unavailable, anything else an internal error. No
// secret is repeated, whatever the acquirer said.
func checkRefusal(err error, title string, c pay.AcquirerCredentials) error {
	if pay.Unavailable(err) {
		return &checkout.Error{Code: checkout.EUnavailable, Err: err,
			Message: fmt.Sprintf("%s could not be reached to check the keys, so nothing was saved. Try again in a moment.", title)}
	}
	var ce *checkout.Error
	if !errors.As(err, &ce) || ce.Code == checkout.EInternal {
		return checkout.Internal(fmt.Errorf("check the %s keys: %w", title, err))
	}
	redact := strings.NewReplacer(c.SecretKey, "(the secret key)", c.WebhookSecret, "(the webhook secret)").Replace
	out := &checkout.Error{Code: ce.Code, Message: redact(ce.Message), Param: ce.Param, RetryAfter: ce.RetryAfter}
	for _, v := range ce.Details {
		v.Message = redact(v.Message)
		out.Details = append(out.Details, v)
	}
	if len(out.Details) == 0 && out.Param != "" {
		out.Details = []checkout.Violation{{Code: "invalid_value", Param: out.Param, Message: out.Message}}
	}
	return out
}

// fieldError is a validation_failed refusal of one field.
func fieldError(param, code, msg string) error {
	return &checkout.Error{Code: checkout.EValidationFailed, Message: msg, Param: param,
		Details: []checkout.Violation{{Code: code, Param: param, Message: msg}}}
}

// noSecretsKeyFor refuses an acquirer's keys on a server without a secrets
// key, as noSecretsKey refuses an HMAC key: beside the field, with what
// the operator must do.
func noSecretsKeyFor(param, title string) error {
	return &checkout.Error{
		Code:    checkout.EValidationFailed,
		Message: fmt.Sprintf("%s accounts are not available: this server has no secrets key to keep their secret keys encrypted. The operator sets one with --secrets-key or CHECKOUTD_SECRETS_KEY (docs/operations.md).", title),
		Param:   param,
		Details: []checkout.Violation{{Code: "invalid_value", Param: param,
			Message: fmt.Sprintf("%s keys need the server's secrets key (--secrets-key or CHECKOUTD_SECRETS_KEY), and none is set.", title)}},
	}
}

// AcquirerAccountOf returns what may be shown of a store's account at an
// acquirer in a mode (not_found when it has none): the secrets' hints only
// to those who may set it up.
func (s *Service) AcquirerAccountOf(ctx context.Context, merchantID string, mode checkout.Mode, acquirer string) (*AcquirerAccountInfo, error) {
	role, err := s.roleFor(ctx, merchantID, checkout.ActionViewSettings)
	if err != nil {
		return nil, err
	}
	if _, err := s.store.MerchantGet(ctx, merchantID); err != nil {
		return nil, err
	}
	a, err := s.store.AcquirerAccountGet(ctx, merchantID, mode, strings.ToLower(strings.TrimSpace(acquirer)))
	if err != nil {
		return nil, err
	}
	return s.acquirerInfo(a, may(role, checkout.ActionManageAcquirer)), nil
}

func (s *Service) acquirerInfo(a *checkout.AcquirerAccount, hints bool) *AcquirerAccountInfo {
	info := &AcquirerAccountInfo{
		Acquirer: a.Acquirer, Mode: a.Mode, AccountID: a.AccountID, PublishableKey: a.PublishableKey, Warnings: a.Warnings,
		SetBy: a.SetBy, SetAt: a.SetAt, WebhookURL: s.AcquirerWebhookURL(a.MerchantID, a.Acquirer),
	}
	if hints {
		info.SecretKeyHint, info.WebhookSecretHint = a.SecretKeyHint, a.WebhookSecretHint
	}
	return info
}

// RemoveAcquirerAccount deletes a store's account at an acquirer in a mode
// (not_found when it has none): its sessions stop offering cards through
// it. Administrators only; recorded in the audit trail.
func (s *Service) RemoveAcquirerAccount(ctx context.Context, merchantID string, mode checkout.Mode, acquirer string) error {
	if err := s.authorize(ctx, merchantID, checkout.ActionManageAcquirer); err != nil {
		return err
	}
	acquirer = strings.ToLower(strings.TrimSpace(acquirer))
	return s.inTx(ctx, func(tx *txn) error {
		if err := tx.AcquirerAccountDelete(ctx, merchantID, mode, acquirer); err != nil {
			return err
		}
		return s.Record(ctx, tx, merchantID, checkout.AuditAcquirerRemove, acquirer)
	})
}

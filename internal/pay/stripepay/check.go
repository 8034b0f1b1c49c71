package stripepay

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/stripe/stripe-go/v85"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/pay"
)

// WebhookPath is the path of checkoutd's route for a store's Stripe
// webhook, less the store's id (/webhooks/stripe/{storeId}).
const WebhookPath = "/webhooks/" + Name + "/"

// WebhookEvents are the events a Stripe webhook endpoint for checkoutd
// must send, and Check warns when one is missing: a payment's outcome, a
// refund given or failed (a card refund may fail after it succeeded), a
// dispute opened or closed. ParseWebhook reads a few more (eventKinds),
// which an endpoint may send too.
var WebhookEvents = []string{
	"payment_intent.succeeded",
	"payment_intent.payment_failed",
	"charge.refunded",
	"charge.refund.updated",
	"charge.dispute.created",
	"charge.dispute.closed",
}

// webhookSecretShape is the shape of a Stripe signing secret: whsec_ and
// its base64 (32 bytes, 44 characters, in Stripe's; any 16 or more here).
var webhookSecretShape = regexp.MustCompile(`^whsec_[A-Za-z0-9+/=]{16,}$`)

// keyKind returns the kind of a key ("live", "test") and whether it has
// the prefix of one of kinds' (sk_, rk_, pk_).
func keyKind(key string, prefixes ...string) (string, bool) {
	for _, p := range prefixes {
		for _, mode := range []string{"live", "test"} {
			if strings.HasPrefix(key, p+"_"+mode+"_") && len(key) > len(p)+len(mode)+2 {
				return mode, true
			}
		}
	}
	return "", false
}

func refused(param, msg string) *checkout.Error {
	return &checkout.Error{Code: checkout.EValidationFailed, Param: param, Message: msg}
}

// checkShapes checks each credential looks like what it should be, before
// anything is sent to Stripe. Its errors name the field and never repeat
// a key.
func (c *Connector) checkShapes(cr pay.AcquirerCredentials) (live bool, err error) {
	mode, ok := keyKind(cr.SecretKey, "sk", "rk")
	switch {
	case cr.SecretKey == "":
		return false, refused("secret_key", "The Stripe secret key is missing.")
	case !ok && strings.HasPrefix(cr.SecretKey, "pk_"):
		return false, refused("secret_key", "This is a publishable key (pk_): the secret key is the one that starts with sk_live_ (or a restricted key, rk_live_).")
	case !ok:
		return false, refused("secret_key", "This is not a Stripe secret key: it starts with sk_live_ (or a restricted key, rk_live_).")
	case mode == "test" && !c.testKeys:
		return false, refused("secret_key", "This is a test-mode key: live payments need the live secret key (sk_live_ or rk_live_, in Stripe's dashboard with Test mode off).")
	}
	pmode, ok := keyKind(cr.PublishableKey, "pk")
	switch {
	case cr.PublishableKey == "":
		return false, refused("publishable_key", "The Stripe publishable key is missing.")
	case !ok:
		return false, refused("publishable_key", "This is not a Stripe publishable key: it starts with pk_live_.")
	case pmode != mode:
		return false, refused("publishable_key", fmt.Sprintf("The publishable key is a %s-mode key and the secret key a %s-mode one: both come from the same mode of the same account.", pmode, mode))
	}
	switch {
	case cr.WebhookSecret == "":
		return false, refused("webhook_secret", "The webhook signing secret is missing: it is shown on the webhook endpoint's page in Stripe's dashboard.")
	case !webhookSecretShape.MatchString(cr.WebhookSecret):
		return false, refused("webhook_secret", "This is not a Stripe webhook signing secret: it starts with whsec_.")
	}
	return mode == "live", nil
}

// Check implements pay.AcquirerConnector. It checks the credentials'
// shapes, proves the secret key with Stripe (the account, GET
// /v1/account), and reads the account's webhook endpoints (GET
// /v1/webhook_endpoints) to warn when none sends checkoutd's events, or
// when one sends them in another API version than stripe-go's.
func (c *Connector) Check(ctx context.Context, cr pay.AcquirerCredentials) (pay.AcquirerAccount, error) {
	live, err := c.checkShapes(cr)
	if err != nil {
		return pay.AcquirerAccount{}, err
	}
	acc, err := c.account(ctx, cr)
	if err != nil {
		return pay.AcquirerAccount{}, err
	}
	acc.Live = live
	if !live {
		acc.Warnings = append(acc.Warnings, "These are Stripe test-mode keys: Stripe takes no real money with them.")
	}
	warnings, err := c.endpointWarnings(ctx, cr)
	if err != nil {
		return pay.AcquirerAccount{}, err
	}
	acc.Warnings = append(acc.Warnings, warnings...)
	return acc, nil
}

// account reads the account the key acts for.
func (c *Connector) account(ctx context.Context, cr pay.AcquirerCredentials) (pay.AcquirerAccount, error) {
	client := c.client(cr.SecretKey)
	p := &stripe.AccountRetrieveParams{}
	var a *stripe.Account
	var err error
	if cr.AccountID != "" {
		a, err = client.V1Accounts.GetByID(ctx, cr.AccountID, p)
	} else {
		a, err = client.V1Accounts.Retrieve(ctx, p)
	}
	if err != nil {
		return pay.AcquirerAccount{}, callError("read the account", err)
	}
	return pay.AcquirerAccount{ID: a.ID}, nil
}

// endpointWarnings reads the account's webhook endpoints and says what is
// missing for checkoutd, and how to fix it. A restricted key that may not
// read them gets a warning, not an error.
func (c *Connector) endpointWarnings(ctx context.Context, cr pay.AcquirerCredentials) ([]string, error) {
	p := &stripe.WebhookEndpointListParams{}
	p.Limit = stripe.Int64(100)
	if cr.AccountID != "" {
		p.SetStripeAccount(cr.AccountID)
	}
	var ours []*stripe.WebhookEndpoint
	for e, err := range c.client(cr.SecretKey).V1WebhookEndpoints.List(ctx, p).All(ctx) {
		if err != nil {
			err = callError("list the webhook endpoints", err)
			if pay.Unavailable(err) {
				return nil, err
			}
			return []string{"checkoutd could not read the account's webhook endpoints with this key (" + checkout.ErrorMessage(err) +
				"): check in Stripe's dashboard that one points at " + WebhookPath + "{storeId} with API version " + stripe.APIVersion + "."}, nil
		}
		if u, err := url.Parse(e.URL); err == nil && strings.HasPrefix(u.Path, WebhookPath) {
			ours = append(ours, e)
		}
	}
	fix := "create it in Stripe's dashboard (Developers, Webhooks, Add endpoint) or with `stripe webhook_endpoints create --api-version " +
		stripe.APIVersion + " --url https://CHECKOUTD" + WebhookPath + "STORE_ID` with API version " + stripe.APIVersion +
		" and the events " + strings.Join(WebhookEvents, ", ") + ", then enter its signing secret here"
	if len(ours) == 0 {
		return []string{"No webhook endpoint of this Stripe account points at checkoutd's " + WebhookPath + "{storeId}: " + fix +
			". Without it checkoutd still learns each payment's outcome, later, by looking it up."}, nil
	}
	var warnings []string
	for _, e := range ours {
		if e.Status != "" && e.Status != "enabled" {
			warnings = append(warnings, fmt.Sprintf("The webhook endpoint %s (%s) is %s in Stripe: enable it.", e.ID, e.URL, e.Status))
		}
		if e.APIVersion != "" && e.APIVersion != stripe.APIVersion {
			warnings = append(warnings, fmt.Sprintf("The webhook endpoint %s (%s) sends events in API version %s, and checkoutd's Stripe library uses %s: "+
				"checkoutd reads only the ids it needs from them, but Stripe cannot change an endpoint's version: "+
				"%s, and delete the old endpoint.", e.ID, e.URL, e.APIVersion, stripe.APIVersion, fix))
		}
		if missing := missingEvents(e.EnabledEvents); len(missing) > 0 {
			warnings = append(warnings, fmt.Sprintf("The webhook endpoint %s (%s) does not send %s: add them to it in Stripe's dashboard.",
				e.ID, e.URL, strings.Join(missing, ", ")))
		}
	}
	return warnings, nil
}

// missingEvents returns the events checkoutd acts on that enabled does not
// send ("*" sends every one).
func missingEvents(enabled []string) []string {
	if slices.Contains(enabled, "*") {
		return nil
	}
	var missing []string
	for _, e := range WebhookEvents {
		if !slices.Contains(enabled, e) {
			missing = append(missing, e)
		}
	}
	return missing
}

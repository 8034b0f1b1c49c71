package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/app"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/pay/acquirertest"
	"github.com/checkoutd/checkoutd/internal/seal"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// withAcquirer gives the application a secrets key and a stand-in card
// acquirer named stripe.
func withAcquirer(conn pay.AcquirerConnector) func(*app.Config) {
	return func(c *app.Config) {
		c.SecretsKey, _ = seal.Generate()
		c.Acquirers = []pay.AcquirerConnector{conn}
	}
}

// noAcquirerSecret fails if the page shows one of the secrets entered.
func noAcquirerSecret(t *testing.T, what string, p *page) {
	t.Helper()
	for _, secret := range []string{acquirertest.LiveSecretKey, acquirertest.WebhookSecret, acquirertest.OldWebhook, "sk_live_wrong"} {
		if strings.Contains(p.body, secret) {
			t.Errorf("%s shows the secret %q", what, secret)
		}
	}
}

// An Administrator sets up the store's Stripe account in live mode's
// settings: the keys are checked (a refusal beside its field, the form
// keeping the publishable key and never a secret, nothing kept), then the
// page shows the account with the secrets' hints and the check's
// warnings, and the webhook URL to give Stripe; the account is removed
// after a confirmation. Test mode says cards are simulated there.
func TestCardsSettings(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		conn := &acquirertest.Connector{}
		e := newEnvWith(t, db, "http://dash.example.test", withAcquirer(conn))
		m, ann := e.signedInStore("ann@example.com")
		ctx := context.Background()
		page := "/dashboard/stores/" + m.ID + "/live/settings/cards"
		hook := "http://dash.example.test/webhooks/stripe/" + m.ID

		p := e.get(page, ann)
		for _, want := range []string{`aria-current="page">Cards</a>`, "<h2 id=\"acquirer-stripe-title\">Stripe</h2>", "Not set up",
			`<code id="webhook-url-stripe">` + hook + `</code>`, "charge.dispute.closed", `name="secret_key"`, `type="password"`, "Check and set up"} {
			if !strings.Contains(p.body, want) {
				t.Errorf("the live cards page has no %s", want)
			}
		}
		if p.status != http.StatusOK {
			t.Fatalf("the live cards page = %d: %s", p.status, p.body)
		}

		test := "/dashboard/stores/" + m.ID + "/test/settings/cards"
		p = e.get(test, ann)
		if p.status != http.StatusOK || !strings.Contains(p.body, "card payments are simulated") || !strings.Contains(p.body, `href="`+page+`"`) || strings.Contains(p.body, `name="secret_key"`) {
			t.Errorf("the test cards page = %d: %s", p.status, p.body)
		}
		if p := e.post(test, url.Values{"form_token": {p.formToken(t)}, "acquirer": {"stripe"}, "secret_key": {acquirertest.LiveSecretKey}}, ann); p.status != http.StatusNotFound {
			t.Errorf("POST the test cards page = %d; want 404", p.status)
		}

		// Refusals: beside the field, the publishable key kept, no secret
		// shown, nothing kept.
		good := func() url.Values {
			return url.Values{"acquirer": {"stripe"}, "secret_key": {acquirertest.LiveSecretKey}, "publishable_key": {acquirertest.PublishableKey},
				"webhook_secret": {acquirertest.WebhookSecret}}
		}
		for _, tt := range []struct {
			name, field, value, errID, want string
		}{
			{"a wrong secret key", "secret_key", "sk_live_wrong", "secret-key-stripe-error", "Invalid API Key provided: (the secret key)"},
			{"a test-mode key", "secret_key", acquirertest.TestSecretKey, "secret-key-stripe-error", "test-mode key"},
			{"a wrong publishable key", "publishable_key", `<b>pk</b>`, "publishable-key-stripe-error", "starts with pk_live_"},
			{"no webhook secret", "webhook_secret", " ", "webhook-secret-stripe-error", "Enter the signing secret of the webhook endpoint."},
		} {
			form := good()
			form.Set(tt.field, tt.value)
			p := e.formPost(page, page, form, ann)
			if p.status != http.StatusBadRequest || !strings.Contains(p.body, `id="`+tt.errID+`"`) || !strings.Contains(p.body, htmlEscape(tt.want)) ||
				!strings.Contains(p.body, `aria-invalid="true"`) || strings.Contains(p.body, "<b>pk") {
				t.Errorf("%s: set = %d: %s", tt.name, p.status, p.body)
			}
			if tt.field != "publishable_key" && !strings.Contains(p.body, `value="`+acquirertest.PublishableKey+`"`) {
				t.Errorf("%s: the form lost the publishable key", tt.name)
			}
			noAcquirerSecret(t, tt.name, p)
			if p.header.Get("Cache-Control") != "no-store" {
				t.Errorf("%s: Cache-Control = %q; want no-store", tt.name, p.header.Get("Cache-Control"))
			}
		}
		conn.SetUnreachable(true)
		p = e.formPost(page, page, good(), ann)
		if p.status != http.StatusBadRequest || !strings.Contains(p.body, "Stripe could not be reached to check the keys, so nothing was saved.") {
			t.Errorf("set with Stripe out of reach = %d: %s", p.status, p.body)
		}
		conn.SetUnreachable(false)
		// No form token: refused, nothing checked.
		n := len(conn.Checks())
		if p := e.post(page, good(), ann); p.status == http.StatusSeeOther || len(conn.Checks()) != n {
			t.Errorf("set without a form token = %d, checked %d times; want refused", p.status, len(conn.Checks())-n)
		}
		if _, err := db.AcquirerAccountGet(ctx, m.ID, checkout.ModeLive, "stripe"); !checkout.IsCode(err, checkout.ENotFound) {
			t.Fatalf("after refusals, the account = %v; want none", err)
		}

		// Set, with an endpoint of an old API version: the warning shows.
		form := good()
		form.Set("webhook_secret", acquirertest.OldWebhook)
		p = e.formPost(page, page, form, ann)
		if p.status != http.StatusSeeOther || p.header.Get("Location") != page+"?set=stripe#acquirer-set" {
			t.Fatalf("set = %d %q: %s", p.status, p.header.Get("Location"), p.body)
		}
		p = e.get(page+"?set=stripe", ann)
		for _, want := range []string{"The Stripe keys work, and are set", "<code>" + acquirertest.AccountID(acquirertest.LiveSecretKey) + "</code>",
			"<code>" + acquirertest.PublishableKey + "</code>", "<code>…LIVE</code>", "<code>…9OLD</code>", "by ann@example.com",
			htmlEscape(acquirertest.Warning), "Remove the Stripe account", "Check and replace"} {
			if !strings.Contains(p.body, want) {
				t.Errorf("the page after setting has no %s", want)
			}
		}
		noAcquirerSecret(t, "the page after setting", p)

		// A Viewer sees the account, without hints or forms.
		viewer := e.account("vic@example.com")
		if _, _, err := e.svc.AddMember(ctx, m.ID, viewer.Email, checkout.RoleViewer); err != nil {
			t.Fatal(err)
		}
		vic := e.signIn(viewer.Email)
		p = e.get(page, vic)
		if p.status != http.StatusOK || !strings.Contains(p.body, acquirertest.AccountID(acquirertest.LiveSecretKey)) || strings.Contains(p.body, "…LIVE") ||
			strings.Contains(p.body, `name="secret_key"`) || strings.Contains(p.body, "/remove") || !strings.Contains(p.body, hook) {
			t.Errorf("the viewer's cards page = %d: %s", p.status, p.body)
		}
		if p := e.post(page, url.Values{"form_token": {p.formToken(t)}, "acquirer": {"stripe"}}, vic); p.status != http.StatusForbidden {
			t.Errorf("a viewer's set = %d; want 403", p.status)
		}

		// Remove, after a confirmation.
		remove := "/dashboard/stores/" + m.ID + "/live/settings/cards/stripe/remove"
		p = e.get(remove, ann)
		if p.status != http.StatusOK || !strings.Contains(p.body, "Remove the Stripe account?") || !strings.Contains(p.body, "…LIVE") {
			t.Fatalf("the remove page = %d: %s", p.status, p.body)
		}
		p = e.formPost(remove, remove, url.Values{}, ann)
		if p.status != http.StatusSeeOther || p.header.Get("Location") != page+"?removed=stripe" {
			t.Fatalf("remove = %d %q: %s", p.status, p.header.Get("Location"), p.body)
		}
		if p := e.get(page+"?removed=stripe", ann); !strings.Contains(p.body, "The Stripe account is removed") || !strings.Contains(p.body, "Not set up") {
			t.Errorf("the page after removing: %s", p.body)
		}
		if p := e.get(remove, ann); p.status != http.StatusNotFound {
			t.Errorf("the remove page with no account = %d; want 404", p.status)
		}
		// The trail has both, by ann, never a secret.
		es, err := db.AuditList(ctx, checkout.AuditListParams{MerchantID: m.ID})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, en := range es {
			if en.ObjectID == "stripe" && en.Actor.Name == "ann@example.com" {
				got = append(got, string(en.Action))
			}
		}
		if strings.Join(got, " ") != "acquirer_account.remove acquirer_account.set" {
			t.Errorf("the audit trail has %v; want the set and the remove by ann", got)
		}
	})
}

// Without a secrets key (PostgreSQL with none given), the form says what
// the operator must do, as for HMAC keys.
func TestCardsSettingsWithoutSecretsKey(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		conn := &acquirertest.Connector{}
		e := newEnvWith(t, db, "http://dash.example.test", func(c *app.Config) { c.Acquirers = []pay.AcquirerConnector{conn} })
		m, ann := e.signedInStore("ann@example.com")
		page := "/dashboard/stores/" + m.ID + "/live/settings/cards"
		p := e.formPost(page, page, url.Values{"acquirer": {"stripe"}, "secret_key": {acquirertest.LiveSecretKey}, "publishable_key": {acquirertest.PublishableKey},
			"webhook_secret": {acquirertest.WebhookSecret}}, ann)
		if p.status != http.StatusBadRequest || !strings.Contains(p.body, `id="secret-key-stripe-error"`) || !strings.Contains(p.body, "--secrets-key or CHECKOUTD_SECRETS_KEY") {
			t.Errorf("set without a secrets key = %d: %s", p.status, p.body)
		}
		if len(conn.Checks()) != 0 {
			t.Error("the keys were sent to the acquirer with no secrets key to keep them")
		}
	})
}

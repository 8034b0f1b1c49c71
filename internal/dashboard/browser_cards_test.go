package dashboard_test

import (
	"strings"
	"testing"

	"github.com/checkoutd/checkoutd/internal/browsertest"
	"github.com/checkoutd/checkoutd/internal/pay/acquirertest"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// An Administrator sets up the store's Stripe account in live mode's
// settings: a wrong secret key is refused beside its field, which has the
// focus, empty, the publishable key kept; the right keys are kept and the
// page shows their hints and the webhook URL, never a secret.
func TestBrowserCardsSettings(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newBrowserEnv(t, db, withAcquirer(&acquirertest.Connector{}))
		m, _ := e.account("ann@example.com")
		e.signIn("ann@example.com")
		live := "/dashboard/stores/" + m.ID + "/live/"
		e.open(live)
		e.at(live)
		e.follow("nav.side", "Cards")
		e.at(live + "settings/cards")
		if got := e.textOf("#acquirer-stripe"); !strings.Contains(got, "/webhooks/stripe/"+m.ID) || !strings.Contains(got, "Not set up") {
			t.Errorf("the Stripe section reads %q; want the webhook URL, not set up", got)
		}

		e.ExpectConsole("status of 400") // the refused form comes back as 400 Bad Request
		e.fill("Secret key", "sk_live_wrong")
		e.fill("Publishable key", acquirertest.PublishableKey)
		e.fill("Webhook signing secret", acquirertest.WebhookSecret)
		e.press("Check and set up")
		e.WaitFor(`document.getElementById("secret-key-stripe-error") !== null`)
		if got := e.textOf("#secret-key-stripe-error"); !strings.Contains(got, "Invalid API Key provided") {
			t.Errorf("the refusal reads %q", got)
		}
		if got := browsertest.Eval[string](e.Page, focused); got != "secret-key-stripe" {
			t.Errorf("after the refusal the focus is on %q; want the secret key's field", got)
		}
		if got := e.ValueIs("#publishable-key-stripe", acquirertest.PublishableKey); got != acquirertest.PublishableKey {
			t.Errorf("the publishable key's field holds %q; want it kept", got)
		}
		for _, sel := range []string{"#secret-key-stripe", "#webhook-secret-stripe"} {
			if got := e.ValueIs(sel, ""); got != "" {
				t.Errorf("%s holds %q after a refusal; want it empty", sel, got)
			}
		}

		e.fill("Secret key", acquirertest.LiveSecretKey)
		e.fill("Webhook signing secret", acquirertest.WebhookSecret)
		e.press("Check and set up")
		e.at(live + "settings/cards?set=stripe")
		if got := e.textOf("#acquirer-set"); !strings.Contains(got, "The Stripe keys work") {
			t.Errorf("the notice reads %q", got)
		}
		if got := e.textOf("#acquirer-stripe"); !strings.Contains(got, "…LIVE") || !strings.Contains(got, acquirertest.AccountID(acquirertest.LiveSecretKey)) {
			t.Errorf("the Stripe section reads %q; want the account and the hints", got)
		}
		if browsertest.Eval[bool](e.Page, `document.documentElement.outerHTML.includes(`+browsertest.JSString(acquirertest.LiveSecretKey)+`)`) {
			t.Error("the page shows the secret key")
		}
		e.screenshot("cards")
	})
}

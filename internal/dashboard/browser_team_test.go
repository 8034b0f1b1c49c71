package dashboard_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/browsertest"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
	"github.com/checkoutd/checkoutd/internal/webhook/webhooktest"
)

// An administrator invites a Support member from the Team page; the new
// member opens the link, creates the account, refunds a payment, and finds
// no API keys: no entry in the navigation, and the address refused.
func TestBrowserTeamSupportRefunds(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newBrowserEnv(t, db)
		m, secret := e.account("ann@example.com")
		ctx := context.Background()
		// A paid payment to refund.
		res := e.createCheckout(m.ID, secret).body
		sessionID := res[strings.Index(res, `"id":"`)+6:]
		sessionID = sessionID[:strings.Index(sessionID, `"`)]
		out, err := e.svc.PayByCard(ctx, sessionID, pay.CardForm{Number: "4242424242424242", Expiry: "12/30", CVC: "123", Name: "Jo Buyer"})
		if err != nil {
			t.Fatal(err)
		}
		payID := out.Payment.ID

		e.signIn("ann@example.com")
		test := "/dashboard/stores/" + m.ID + "/test/"
		e.open(test)
		e.at(test)
		e.follow("nav.side", "Team")
		e.at(test + "team")
		e.fill("Email", "sue@example.com")
		e.Do(chromedp.SetValue(e.labelled("Role"), "support"))
		e.press("Create invitation link")
		link := e.TextHas("#invitation-url", "/dashboard/invitation?token=")
		if !strings.Contains(link, "/dashboard/invitation?token=") {
			t.Fatalf("the invitation link reads %q", link)
		}
		if got := e.textOf("#invitations-h + .table-wrap tbody tr td"); got != "sue@example.com" {
			t.Errorf("the pending invitation reads %q", got)
		}
		e.screenshot("team")

		// Sue, in the same tab once ann signed out.
		e.Do(chromedp.Click(chromedp.CSS("details.account summary")))
		e.press("Sign out")
		e.at("/dashboard/signin")
		e.Do(chromedp.Navigate(link))
		e.WaitFor(`document.querySelector("main h1")?.textContent === "Join Acme Games"`)
		e.fill("Password", password)
		e.press("Create account and join")
		e.at(test)
		if browsertest.Eval[bool](e.Page, `[...document.querySelectorAll("nav.side a")].some(a => a.innerText.trim() === "API keys")`) {
			t.Error("a Support member's navigation has API keys")
		}
		if !browsertest.Eval[bool](e.Page, `[...document.querySelectorAll("nav.side a")].some(a => a.innerText.trim() === "Payments")`) {
			t.Error("a Support member's navigation has no Payments")
		}

		// The refund, as a person does it.
		e.follow("nav.side", "Payments")
		e.at(test + "payments")
		e.follow("tbody", payID)
		e.at(test + "payments/" + payID)
		e.fill("Amount", "5.00")
		e.press("Review refund")
		e.at(test + "payments/" + payID + "/refund?amount=5.00&reason=")
		e.press("Confirm refund")
		e.WaitFor(`location.search.startsWith("?refund=re_")`)
		if got := e.TextHas(".notice", "Refunded $5.00"); !strings.HasPrefix(got, "Refunded $5.00") {
			t.Errorf("after the refund the page says %q", got)
		}
		if p, err := db.PaymentGet(ctx, payID); err != nil || p.AmountRefunded != 500 {
			t.Errorf("the payment after Sue's refund = %+v, %v", p, err)
		}

		// API keys, by address: refused, naming the role.
		e.ExpectConsole("status of 403")
		e.open(test + "developers/keys")
		if got := e.TextHas("main", "does not allow"); !strings.Contains(got, "Your role in this store (Support) does not allow you to see API keys.") {
			t.Errorf("API keys to a Support member reads %q", got)
		}
	})
}

// A Viewer reads an endpoint's page and its webhooks, but never its
// signing secret: no Reveal button, and the secret nowhere in the page.
func TestBrowserViewerNoSigningSecret(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		n := webhooktest.NewNetwork(t)
		e := newBrowserEnv(t, db, fakeInternet(n))
		n.Receiver(t, "hooks.example.com")
		m, _ := e.account("ann@example.com")
		ctx := context.Background()
		ep, err := e.svc.CreateEndpoint(ctx, checkout.EndpointParams{MerchantID: m.ID, Mode: checkout.ModeTest, URL: "https://hooks.example.com/in",
			Events: []string{checkout.AllEvents}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.CreateAccount(ctx, "vic@example.com", password); err != nil {
			t.Fatal(err)
		}
		if _, _, err := e.svc.AddMember(ctx, m.ID, "vic@example.com", checkout.RoleViewer); err != nil {
			t.Fatal(err)
		}
		e.signIn("vic@example.com")
		test := "/dashboard/stores/" + m.ID + "/test/"
		e.open(test)
		e.at(test)
		e.follow("nav.side", "Webhooks")
		e.at(test + "developers/webhooks")
		if e.has(`a[href$="/developers/webhooks/new"]`) {
			t.Error("a Viewer's webhooks page offers Add an endpoint")
		}
		e.follow("tbody", "https://hooks.example.com/in")
		e.at(test + "developers/webhooks/" + ep.ID)
		if got := e.TextHas("#secret-h + p + p", "role"); got != "Your role does not show signing secrets." {
			t.Errorf("the signing secret's section reads %q", got)
		}
		html := browsertest.Eval[string](e.Page, `document.documentElement.outerHTML`)
		if strings.Contains(html, ep.Secret) || strings.Contains(html, "whsec_") || strings.Contains(html, "Reveal secret") || strings.Contains(html, "Roll secret") {
			t.Error("a Viewer's endpoint page shows the secret, or a way to it")
		}
		e.follow("nav.side", "API keys")
		e.at(test + "developers/keys")
		if html := browsertest.Eval[string](e.Page, `document.documentElement.outerHTML`); strings.Contains(html, "Create key") || strings.Contains(html, ">Revoke<") {
			t.Error("a Viewer's API keys page offers to create or revoke")
		}
	})
}

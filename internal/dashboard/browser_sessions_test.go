package dashboard_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/browsertest"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
	"github.com/checkoutd/checkoutd/internal/webhook/webhooktest"
)

// A buyer pays $30.00 by the test card for a session created with
// metadata order_id=A-1001; the merchant finds it in Sessions by
// order_id=A-1001 among others (Enter in the search box), opens its page (what the API returns, its
// payment page's address, its attempt, its events), goes to its payment
// and refunds part of it, then the rest, through the refund form; a real
// HTTPS receiver gets two payment.refunded events, signed, with
// amount_refunded 1000 then 3000, and the session's page lists them with
// their deliveries. On a phone's screen the list and the page fit.
func TestBrowserSessions(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		n := webhooktest.NewNetwork(t)
		e := newBrowserEnv(t, db, fakeInternet(n))
		m, secret := e.account("ann@example.com")
		r := n.Receiver(t, "hooks.example.com")
		ep, err := e.svc.CreateEndpoint(ctx, checkout.EndpointParams{MerchantID: m.ID, Mode: checkout.ModeTest, URL: r.URL,
			Events: []string{checkout.EventPaymentRefunded}, Description: "Refunds"})
		if err != nil {
			t.Fatal(err)
		}
		create := func(body string) *checkout.SessionJSON {
			t.Helper()
			e.clk.Advance(1e9)
			return createSession(t, e.srv.URL, m.ID, secret, body)
		}
		create(`{"items":[{"name":"Shield","amount":2500}],"customer":{"email":"kim@example.com"},"metadata":{"order_id":"A-1000"}}`)
		s := create(`{"items":[{"name":"Sword","amount":1500,"quantity":2}],"title":"Order A-1001","customer":{"email":"jo@example.com","name":"Jo Buyer"},
			"metadata":{"order_id":"A-1001","channel":"web"}}`)
		create(`{"items":[{"name":"Bow","amount":990}],"metadata":{"order_id":"A-1002"}}`)

		// The buyer pays on the payment page.
		e.Do(chromedp.Navigate(s.CheckoutURL),
			chromedp.WaitVisible(chromedp.ID("number")),
			chromedp.SendKeys(chromedp.ID("number"), "4242424242424242"),
			chromedp.SendKeys(chromedp.ID("expiry"), "1230"),
			chromedp.SendKeys(chromedp.ID("cvc"), "123"),
			chromedp.SendKeys(chromedp.ID("name"), "Jo Buyer"),
			chromedp.Click(chromedp.CSS("button.pay-button")))
		if got := e.TextIs(".receipt h2", "Payment received"); got != "Payment received" {
			t.Fatalf("after paying the page shows %q", got)
		}
		paid, err := db.SessionGet(ctx, s.ID)
		if err != nil || paid.PaymentID == nil {
			t.Fatalf("the session paid = %+v, %v", paid, err)
		}
		payID := *paid.PaymentID

		// The merchant: Sessions, searched by the order's id.
		e.signIn("ann@example.com")
		test := "/dashboard/stores/" + m.ID + "/test/"
		e.open(test)
		e.at(test)
		e.follow("nav.side", "Sessions")
		e.at(test + "sessions")
		rows := `document.querySelectorAll("tbody tr").length`
		if got := browsertest.Eval[int](e.Page, rows); got != 3 {
			t.Errorf("Sessions lists %d rows; want 3", got)
		}
		e.screenshot("sessions")
		e.fill("Search", "order_id=A-1001")
		e.Do(chromedp.SendKeys("#f-q", kb.Enter)) // from the keyboard: Enter in the box sends the form
		e.WaitFor(`new URLSearchParams(location.search).get("q") === "order_id=A-1001"`)
		if got := browsertest.Eval[int](e.Page, rows); got != 1 {
			t.Errorf("the search lists %d rows; want 1", got)
		}
		if got := e.textOf("tbody tr"); !strings.Contains(got, s.ID) || !strings.Contains(got, "$30.00") || !strings.Contains(got, "complete") ||
			!strings.Contains(got, "jo@example.com") || !strings.Contains(got, payID) {
			t.Errorf("the session's row reads %q", got)
		}
		if got := e.ValueIs("#f-q", "order_id=A-1001"); got != "order_id=A-1001" {
			t.Errorf("the search box keeps %q", got)
		}

		// Its page.
		e.follow("tbody", s.ID)
		session := test + "sessions/" + s.ID
		e.at(session)
		for term, want := range map[string]string{"Status": "complete", "Total": "$30.00", "Payment": payID, "Customer": "jo@example.com · Jo Buyer"} {
			if got := e.field(term); got != want {
				t.Errorf("%s reads %q; want %q", term, got, want)
			}
		}
		if got := e.field("Payment page"); !strings.HasPrefix(got, s.CheckoutURL) {
			t.Errorf("Payment page reads %q; want %s", got, s.CheckoutURL)
		}
		if got := e.textOf("section[aria-labelledby=session-payments] tbody"); !strings.Contains(got, payID) || !strings.Contains(got, "succeeded") {
			t.Errorf("the payment attempts read %q", got)
		}
		var api checkout.SessionJSON
		if err := json.Unmarshal([]byte(browsertest.Eval[string](e.Page, `document.getElementById("session-json-body").textContent`)), &api); err != nil ||
			api.ID != s.ID || api.Status != checkout.StatusComplete || api.Metadata["order_id"] != "A-1001" || api.PaymentID == nil || *api.PaymentID != payID {
			t.Errorf("the JSON shown = %+v, %v; want the session as the API returns it", api, err)
		}

		// Its payment: part refunded, then the rest.
		e.follow("dl.fields", payID)
		payment := test + "payments/" + payID
		e.at(payment)
		e.fill("Amount", "10")
		e.press("Review refund")
		e.at(payment + "/refund?amount=10&reason=")
		e.press("Confirm refund")
		e.WaitFor(`location.pathname === ` + browsertest.JSString(payment) + ` && location.search.startsWith("?refund=re_")`)
		if got := e.field("Left to refund"); got != "$20.00" {
			t.Errorf("Left to refund reads %q; want $20.00", got)
		}
		e.deliveredOnce()
		e.press("Review refund")
		e.at(payment + "/refund?amount=20.00&reason=")
		e.press("Confirm refund")
		e.WaitFor(`location.search.startsWith("?refund=re_") && document.querySelectorAll("#refunds tbody tr").length === 2`)
		if got := e.field("Status"); got != "refunded" {
			t.Errorf("Status reads %q; want refunded", got)
		}
		e.deliveredOnce()

		// The receiver got payment.refunded twice, signed, partial then full.
		reqs := r.Requests()
		if len(reqs) != 2 {
			t.Fatalf("the receiver got %d requests; want 2", len(reqs))
		}
		for i, want := range []int64{1000, 3000} {
			var ev struct {
				Type string
				Data struct{ Object checkout.PaymentJSON }
			}
			if err := json.Unmarshal(reqs[i].Body, &ev); err != nil {
				t.Fatal(err)
			}
			o := ev.Data.Object
			if ev.Type != checkout.EventPaymentRefunded || o.ID != payID || o.AmountRefunded != want || o.CheckoutID != s.ID {
				t.Errorf("request %d: %s of %s, amount_refunded %d; want payment.refunded of %s with %d", i+1, ev.Type, o.ID, o.AmountRefunded, payID, want)
			}
			if !webhooktest.Verify(reqs[i].Header.Get("Service-Webhook-Signature"), reqs[i].Body, ep.Secret, e.clk.Now()) {
				t.Errorf("request %d is not signed with the endpoint's secret", i+1)
			}
		}

		// Back on the session's page: its events, the refunds' delivered.
		e.follow("dl.fields", s.ID)
		e.at(session)
		events := `section[aria-labelledby=session-events] tbody`
		got := e.textOf(events)
		for _, want := range []string{"checkout.created", "payment.succeeded", "checkout.completed", "payment.refunded"} {
			if !strings.Contains(got, want) {
				t.Errorf("the session's events read %q; want %s", got, want)
			}
		}
		if n := strings.Count(got, "payment.refunded"); n != 2 || strings.Count(got, "succeeded") < 3 || !strings.Contains(got, r.URL) {
			t.Errorf("the session's events read %q; want two payment.refunded delivered to %s", got, r.URL)
		}
		e.screenshot("session")
		e.Do(chromedp.Click(chromedp.CSS(events + ` a[href*="/developers/deliveries/whd_"]`)))
		e.WaitFor(`location.pathname.startsWith(` + browsertest.JSString(test+"developers/deliveries/whd_") + `)`)

		e.Do(chromedp.EmulateViewport(375, 740, chromedp.EmulateMobile, chromedp.EmulateScale(2)))
		for _, path := range []string{test + "sessions", session} {
			e.open(path)
			e.at(path)
			if w := browsertest.Eval[int](e.Page, `document.documentElement.scrollWidth`); w > 375 {
				t.Errorf("%s is %dpx wide on a 375px screen: it scrolls sideways", path, w)
			}
		}
	})
}

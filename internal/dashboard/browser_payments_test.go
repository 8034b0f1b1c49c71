package dashboard_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/browsertest"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// A merchant finds the live payments to refund: through the navigation to
// Payments, the count above the list and the marked row, the To refund
// filter, then the payment's page with what arrived; on a phone's screen
// nothing scrolls sideways.
func TestBrowserPayments(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newBrowserEnv(t, db)
		m, _ := e.account("ann@example.com")
		at := e.clk.Now()
		insertLivePayment(t, db, m, at.Add(time.Millisecond), func(p *checkout.Payment) {
			p.Crypto.ReceivedBase = "20012345"
			succeeded := at.Truncate(time.Second)
			p.Status, p.SucceededAt = checkout.PaymentSucceeded, &succeeded
		})
		due := insertLivePayment(t, db, m, at.Add(2*time.Millisecond), func(p *checkout.Payment) {
			p.Crypto.ReceivedBase = "12000000"
			fail(checkout.FailUnderpaid)(p)
		})
		insertLivePayment(t, db, m, at.Add(3*time.Millisecond), fail(checkout.FailReplaced))
		e.signIn("ann@example.com")

		live := "/dashboard/stores/" + m.ID + "/live/"
		e.open(live)
		e.at(live)
		e.follow("nav.side", "Payments")
		e.at(live + "payments")
		if got := e.textOf(".warning"); !strings.Contains(got, "1 payment is to refund.") {
			t.Errorf("the notice reads %q; want it to count 1 payment to refund", got)
		}
		count := `document.querySelectorAll("tbody tr").length`
		if n := browsertest.Eval[int](e.Page, count); n != 3 {
			t.Errorf("the list has %d rows; want 3", n)
		}
		if got := e.textOf("tr.to-refund"); !strings.Contains(got, due.ID) || !strings.Contains(got, "To refund") || !strings.Contains(got, "Received 0.12 LTC of 0.2 LTC") {
			t.Errorf("the marked row reads %q; want the underpaid payment", got)
		}
		if got := e.textOf("tbody"); !strings.Contains(got, "Overpaid by 0.00012345 LTC") {
			t.Errorf("the list reads %q; want the overpayment's excess", got)
		}

		e.screenshot("payments")

		e.Do(chromedp.SetValue(e.labelled("Show"), "to_refund"))
		e.press("Filter")
		e.at(live + "payments?show=to_refund")
		if n := browsertest.Eval[int](e.Page, count); n != 1 || !strings.Contains(e.textOf("tbody"), due.ID) {
			t.Errorf("To refund lists %d rows: %q; want the underpaid payment alone", n, e.textOf("tbody"))
		}

		e.follow("tbody", due.ID)
		e.at(live + "payments/" + due.ID)
		if got := e.field("Failure"); !strings.HasPrefix(got, "underpaid:") {
			t.Errorf("Failure reads %q", got)
		}
		if got := e.field("Received"); got != "0.12 LTC" {
			t.Errorf("Received reads %q; want 0.12 LTC", got)
		}
		if got := e.textOf(".warning"); !strings.Contains(got, "return the 0.12 LTC received to the buyer") {
			t.Errorf("the notice reads %q", got)
		}
		e.screenshot("payment")

		e.Do(chromedp.EmulateViewport(375, 740, chromedp.EmulateMobile, chromedp.EmulateScale(2)))
		for _, path := range []string{live + "payments", live + "payments/" + due.ID} {
			e.open(path)
			e.at(path)
			if w := browsertest.Eval[int](e.Page, `document.documentElement.scrollWidth`); w > 375 {
				t.Errorf("%s is %dpx wide on a 375px screen: it scrolls sideways", path, w)
			}
		}
	})
}

// A buyer pays $30.00 on the payment page with the test card 4242; the
// merchant opens the payment from Payments and refunds part of it through
// the form (an amount beyond what is left is refused beside the field
// first) and its confirmation (Back keeps what was typed), then the rest
// from the keyboard; the page lists both refunds and the payment is
// refunded. On a phone's screen the form, the confirmation and the refunds
// fit, nothing scrolling sideways.
func TestBrowserRefunds(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newBrowserEnv(t, db)
		m, secret := e.account("ann@example.com")

		// The buyer, on the payment page.
		res := e.createCheckout(m.ID, secret)
		var created struct {
			Data struct {
				ID          string
				CheckoutURL string `json:"checkout_url"`
			}
		}
		if err := json.Unmarshal([]byte(res.body), &created); err != nil || created.Data.CheckoutURL == "" {
			t.Fatalf("the session created: %s (%v)", res.body, err)
		}
		e.Do(chromedp.Navigate(created.Data.CheckoutURL),
			chromedp.WaitVisible(chromedp.ID("number")),
			chromedp.SendKeys(chromedp.ID("number"), "4242424242424242"),
			chromedp.SendKeys(chromedp.ID("expiry"), "1230"),
			chromedp.SendKeys(chromedp.ID("cvc"), "123"),
			chromedp.SendKeys(chromedp.ID("name"), "Jo Buyer"),
			chromedp.Click(chromedp.CSS("button.pay-button")))
		if got := e.TextIs(".receipt h2", "Payment received"); got != "Payment received" {
			t.Fatalf("after paying the page shows %q", got)
		}
		s, err := db.SessionGet(context.Background(), created.Data.ID)
		if err != nil || s.PaymentID == nil {
			t.Fatalf("the session paid = %+v, %v", s, err)
		}
		payID := *s.PaymentID

		// The merchant, from Payments to the payment.
		e.signIn("ann@example.com")
		test := "/dashboard/stores/" + m.ID + "/test/"
		payment := test + "payments/" + payID
		e.open(test)
		e.at(test)
		e.follow("nav.side", "Payments")
		e.at(test + "payments")
		e.follow("tbody", payID)
		e.at(payment)
		if got := e.field("Left to refund"); got != "$30.00" {
			t.Errorf("Left to refund reads %q; want $30.00", got)
		}
		if got := e.ValueIs("#refund-amount", "30.00"); got != "30.00" {
			t.Errorf("the amount is prefilled with %q; want 30.00, all that is left", got)
		}

		// More than is left: refused beside the amount, which has the
		// focus and keeps what was typed.
		e.ExpectConsole("status of 409") // the refused form comes back as 409 Conflict
		e.fill("Amount", "40")
		e.press("Review refund")
		e.WaitFor(`document.getElementById("refund-amount-error") !== null`)
		if got := e.textOf("#refund-amount-error"); got != "That is more than the $30.00 left to refund." {
			t.Errorf("the refusal reads %q", got)
		}
		if got := browsertest.Eval[string](e.Page, focused); got != "refund-amount" {
			t.Errorf("after the refusal the focus is on %q; want the amount", got)
		}
		if got := e.ValueIs("#refund-amount", "40"); got != "40" {
			t.Errorf("the amount after the refusal = %q; want 40 kept", got)
		}

		// Part of it, with a reason: the confirmation, Back, and again.
		e.fill("Amount", "12.34")
		e.Do(chromedp.SetValue(e.labelled("Reason"), "requested_by_customer"))
		e.press("Review refund")
		confirm := payment + "/refund?amount=12.34&reason=requested_by_customer"
		e.at(confirm)
		if got := e.TextIs("main h1", "Refund $12.34?"); got != "Refund $12.34?" {
			t.Errorf("the confirmation asks %q", got)
		}
		if got := e.textOf("main p"); got != "Refund $12.34 of payment "+payID+" ($30.00) to the card ending 4242? This cannot be undone." {
			t.Errorf("the confirmation reads %q", got)
		}
		if got := e.field("Left to refund after"); got != "$17.66" {
			t.Errorf("Left to refund after reads %q; want $17.66", got)
		}
		e.screenshot("refund-confirm")
		e.follow("main", "Back")
		e.at(payment + "?amount=12.34&reason=requested_by_customer")
		if got := e.ValueIs("#refund-amount", "12.34"); got != "12.34" {
			t.Errorf("Back leaves the amount at %q; want 12.34", got)
		}
		if got := e.ValueIs("#refund-reason", "requested_by_customer"); got != "requested_by_customer" {
			t.Errorf("Back leaves the reason at %q", got)
		}
		e.press("Review refund")
		e.at(confirm)
		e.press("Confirm refund")
		e.WaitFor(`location.pathname === ` + browsertest.JSString(payment) + ` && location.search.startsWith("?refund=re_")`)
		if got := e.TextHas(".notice", "Refunded $12.34"); got != "Refunded $12.34 to the card ending 4242." {
			t.Errorf("after the refund the page says %q", got)
		}
		if got := e.field("Status"); got != "partially_refunded" {
			t.Errorf("Status reads %q; want partially_refunded", got)
		}
		if got := e.field("Left to refund"); got != "$17.66" {
			t.Errorf("Left to refund reads %q; want $17.66", got)
		}
		if got := e.ValueIs("#refund-amount", "17.66"); got != "17.66" {
			t.Errorf("the amount is prefilled with %q; want 17.66", got)
		}
		if got := e.textOf("#refunds tbody"); !strings.Contains(got, "$12.34") || !strings.Contains(got, "Requested by the customer") || !strings.Contains(got, "ann@example.com") {
			t.Errorf("the refunds read %q", got)
		}
		e.screenshot("refund")

		// On a phone, the page with its form and the confirmation fit.
		e.Do(chromedp.EmulateViewport(375, 740, chromedp.EmulateMobile, chromedp.EmulateScale(2)))
		for _, path := range []string{payment, payment + "/refund?amount=17.66&reason="} {
			e.open(path)
			e.at(path)
			if w := browsertest.Eval[int](e.Page, `document.documentElement.scrollWidth`); w > 375 {
				t.Errorf("%s is %dpx wide on a 375px screen: it scrolls sideways", path, w)
			}
		}
		e.Do(chromedp.EmulateReset())
		e.open(payment)
		e.at(payment)

		// The rest, from the keyboard: Enter on the form's button, Tab to
		// Confirm, Enter.
		e.Do(chromedp.Focus(chromedp.ID("refund-amount")))
		e.tabTo("refund-reason", 1)
		e.tabTo("Review refund", 1)
		e.Do(chromedp.KeyEvent("\r"))
		e.at(payment + "/refund?amount=17.66&reason=")
		e.tabTo("Confirm refund", 20)
		e.Do(chromedp.KeyEvent("\r"))
		e.WaitFor(`location.search.startsWith("?refund=re_") && document.querySelectorAll("#refunds tbody tr").length === 2`)
		if got := e.field("Status"); got != "refunded" {
			t.Errorf("Status reads %q; want refunded", got)
		}
		if got := e.field("Refunded"); got != "$30.00" {
			t.Errorf("Refunded reads %q; want $30.00", got)
		}
		if got := e.textOf("#refunds tbody"); !strings.Contains(got, "$12.34") || !strings.Contains(got, "$17.66") || strings.Count(got, "succeeded") != 2 {
			t.Errorf("the refunds read %q; want both, succeeded", got)
		}
		if e.has("#refund-amount") || !strings.Contains(e.textOf("#refund-block"), "refunded in full already") {
			t.Errorf("the payment refunded in full still offers a refund, or does not say why not")
		}

		e.Do(chromedp.EmulateViewport(375, 740, chromedp.EmulateMobile, chromedp.EmulateScale(2)))
		e.open(payment)
		e.at(payment)
		if w := browsertest.Eval[int](e.Page, `document.documentElement.scrollWidth`); w > 375 {
			t.Errorf("the refunded payment's page is %dpx wide on a 375px screen: it scrolls sideways", w)
		}
	})
}

// A buyer pays $30.00 in BTC on test mode's simulated network; the
// merchant refunds part of it at the rate when the buyer gives an address:
// the page shows the buyer's link, then, the address given, the coins to
// send and where; Simulate payout pays them, and once confirmed the
// refund succeeded, with what was sent. A second refund is canceled with
// its button. On a phone's screen the refund's details fit.
func TestBrowserRefundsCrypto(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newBrowserEnv(t, db)
		m, secret := e.account("ann@example.com")
		ctx := context.Background()
		var created struct{ Data struct{ ID string } }
		if res := e.createCheckout(m.ID, secret); json.Unmarshal([]byte(res.body), &created) != nil || created.Data.ID == "" {
			t.Fatalf("the session created: %s", res.body)
		}
		if _, err := e.svc.CryptoQuote(ctx, created.Data.ID, "BTC"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.SimulateCryptoPayment(ctx, created.Data.ID, "BTC"); err != nil {
			t.Fatal(err)
		}
		e.clk.Advance(time.Hour)
		if _, err := e.svc.ProcessAllDuePayments(ctx); err != nil {
			t.Fatal(err)
		}
		s, err := db.SessionGet(ctx, created.Data.ID)
		if err != nil || s.PaymentID == nil {
			t.Fatalf("the session paid = %+v, %v", s, err)
		}
		payment := "/dashboard/stores/" + m.ID + "/test/payments/" + *s.PaymentID

		e.signIn("ann@example.com")
		e.open(payment)
		e.at(payment)
		e.fill("Amount", "12.34")
		e.tick("At the rate when the buyer gives their address", true)
		e.press("Review refund")
		e.at(payment + "/refund?amount=12.34&rate=current&reason=")
		if got := e.field("Rate"); got != "At the rate when the buyer gives their address" {
			t.Errorf("the confirmation's Rate reads %q", got)
		}
		e.press("Confirm refund")
		e.WaitFor(`location.pathname === ` + browsertest.JSString(payment) + ` && location.search.startsWith("?refund=re_")`)
		if got := e.TextHas(".notice", "waits for the buyer"); got != "The refund of $12.34 waits for the buyer's address: send them its link, below." {
			t.Errorf("after the refund the page says %q", got)
		}
		rs, err := e.svc.Refunds(ctx, *s.PaymentID)
		if err != nil || len(rs) != 1 || rs[0].Crypto == nil {
			t.Fatalf("the refunds = %v, %v; want one crypto refund", rs, err)
		}
		r := rs[0]
		if got := e.ValueIs("#refund-link-"+r.ID, e.srv.URL+"/refund/"+r.LinkToken); got != e.srv.URL+"/refund/"+r.LinkToken {
			t.Errorf("the buyer's link reads %q", got)
		}
		if got := e.textOf("#refund-" + r.ID); !strings.Contains(got, "Waiting for the buyer's address") {
			t.Errorf("the refund's row reads %q", got)
		}

		// The buyer gives an address through the link.
		if _, err := e.svc.GiveRefundAddress(ctx, r.LinkToken, "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx"); err != nil {
			t.Fatal(err)
		}
		e.open(payment)
		e.at(payment)
		if got := e.textOf(".payout"); !regexp.MustCompile(`^Send 0\.000205\d+ BTC to tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx from your wallet\.$`).MatchString(got) {
			t.Errorf("the payout reads %q", got)
		}
		e.screenshot("crypto-refund")
		e.Do(chromedp.EmulateViewport(375, 740, chromedp.EmulateMobile, chromedp.EmulateScale(2)))
		e.open(payment)
		e.at(payment)
		if w := browsertest.Eval[int](e.Page, `document.documentElement.scrollWidth`); w > 375 {
			t.Errorf("the payment's page with a crypto refund is %dpx wide on a 375px screen: it scrolls sideways", w)
		}
		e.Do(chromedp.EmulateReset())
		e.open(payment)
		e.at(payment)

		e.press("Simulate payout (test mode)")
		e.WaitFor(`location.search.startsWith("?refund=re_") && document.querySelector("#refund-` + r.ID + `-crypto").innerText.includes("transaction")`)
		if got := e.textOf("#refunds .notice"); !strings.HasPrefix(got, "The payout of the refund of $12.34 was simulated: the refund succeeds once it has 2 confirmations.") {
			t.Errorf("after Simulate payout the page says %q", got)
		}
		e.clk.Advance(20 * time.Minute)
		if _, err := e.svc.ProcessAllDuePayments(ctx); err != nil {
			t.Fatal(err)
		}
		e.open(payment)
		e.at(payment)
		if got := e.textOf("#refund-" + r.ID + "-crypto"); !strings.HasPrefix(got, "Sent 0.000205") || !strings.Contains(got, "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx, transaction ") {
			t.Errorf("the refund succeeded reads %q", got)
		}
		if got := e.field("Refunded"); got != "$12.34" {
			t.Errorf("Refunded reads %q; want $12.34", got)
		}

		// A second refund, at the payment's rate (the default), canceled.
		e.press("Review refund")
		e.at(payment + "/refund?amount=17.66&rate=payment&reason=")
		e.press("Confirm refund")
		e.WaitFor(`location.search.startsWith("?refund=re_") && document.querySelectorAll("#refunds tr.refund-crypto").length === 2`)
		e.press("Cancel refund")
		e.WaitFor(`document.querySelector("#refunds .warning")?.innerText.includes("was canceled")`)
		if got := e.textOf("#refunds .warning"); got != "The refund of $17.66 was canceled. Nothing was sent, and its amount can be refunded again." {
			t.Errorf("after Cancel refund the page says %q", got)
		}
		if got := e.field("Left to refund"); got != "$17.66" {
			t.Errorf("Left to refund reads %q; want $17.66", got)
		}
	})
}

package dashboard_test

import (
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

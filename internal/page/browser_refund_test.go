package page_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// A buyer of a crypto payment opens the refund link in a browser, pastes
// a wrong address and is told why beside the field, then the right one;
// the page then says what the merchant will send, where, and follows the
// payout to its confirmation. No script or style breaks the page's
// Content-Security-Policy.
func TestBrowserRefundPage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newBrowserEnv(t, db)
		ctx := context.Background()
		s := e.create(orderBody)
		if _, err := e.svc.CryptoQuote(ctx, s.ID, "BTC"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.SimulateCryptoPayment(ctx, s.ID, "BTC"); err != nil {
			t.Fatal(err)
		}
		e.clk.Advance(time.Hour)
		e.runJobs()
		paid := e.retrieve(s.ID)
		amount := int64(1500)
		out, err := e.svc.RefundPayment(ctx, service.RefundRequest{
			Scope:     checkout.Scope{MerchantID: e.store.ID, Mode: checkout.ModeTest},
			PaymentID: *paid.PaymentID, Params: checkout.RefundParams{Amount: &amount},
			By: checkout.Actor{Kind: checkout.ActorCLI, Name: "ops"},
		})
		if err != nil {
			t.Fatal(err)
		}
		link := out.Refund.View(e.srv.URL).Crypto.LinkURL

		e.ExpectConsole("status of 400") // the wrong address comes back as 400 Bad Request
		e.Do(chromedp.Navigate(link))
		e.TextHas("h1", "A refund of $15.00")
		e.Fill("#address", "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4")
		e.Do(chromedp.Click(chromedp.CSS("button.pay-button")))
		if got := e.TextHas("#address-error", "another network"); !strings.Contains(got, "another network") {
			t.Errorf("a mainnet address in test mode: %q", got)
		}
		if shoot(t) {
			e.screenshot("refund-address-error")
		}
		e.Fill("#address", "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx")
		e.Do(chromedp.Click(chromedp.CSS("button.pay-button")))
		e.WaitFor(`document.body.dataset.state === "awaiting_payout"`)
		if got := e.TextHas("main", "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx", "BTC"); !strings.Contains(got, "will send") {
			t.Errorf("after the address: %q", got)
		}
		if shoot(t) {
			e.screenshot("refund-awaiting-payout")
		}
		if _, err := e.svc.SimulateRefundPayout(ctx, checkout.Scope{MerchantID: e.store.ID, Mode: checkout.ModeTest}, out.Refund.ID); err != nil {
			t.Fatal(err)
		}
		e.clk.Advance(time.Hour)
		e.runJobs()
		e.Do(chromedp.Reload())
		e.WaitFor(`document.body.dataset.state === "succeeded"`)
		e.TextHas("h1", "Refund sent")
	})
}

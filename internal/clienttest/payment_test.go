package clienttest_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/client"
	"github.com/checkoutd/checkoutd/internal/app"
	"github.com/checkoutd/checkoutd/internal/clock"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// paid creates a session with the write key and pays it with the test
// card number on the service, as a buyer on the page would; it returns the
// payment's id.
func (h *harness) paid(number string) string {
	h.t.Helper()
	c := client.New(h.url, h.merchant.ID, client.WithBearer(h.write))
	s, err := c.Create(context.Background(), client.CreateParams{Items: []client.ItemParams{{Name: "Sword", Amount: 1500}}})
	if err != nil {
		h.t.Fatal(err)
	}
	out, err := h.app.Service.PayByCard(context.Background(), s.ID, pay.CardForm{Number: number, Expiry: "12/30", CVC: "123", Name: "Jo Buyer"})
	if err != nil || out.Payment.Status != checkout.PaymentSucceeded {
		h.t.Fatalf("PayByCard = %+v, %v", out, err)
	}
	return out.Payment.ID
}

// A merchant's server refunds part of a payment, then the rest, through the
// client with a refunds:write key, and reads the payment with its refunds;
// a refund whose answer is lost on the way back is retried with the same
// Idempotency-Key and makes one refund; a refund beyond what is left is a
// typed error.
func TestRefundThroughTheClient(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		ctx := context.Background()
		c := client.New(h.url, h.merchant.ID, client.WithBearer(h.key(checkout.ModeTest, checkout.PermRefundsWrite)))
		id := h.paid("4242424242424242")
		amount := int64(500)
		r, err := c.Refund(ctx, id, client.RefundParams{Amount: &amount, Reason: "requested_by_customer"})
		if err != nil || r.Status != "succeeded" || r.Amount != 500 || r.PaymentID != id || r.Reason == nil || r.RequestedBy.Type != "api_key" {
			t.Fatalf("Refund = %+v, %v", r, err)
		}
		if got, err := c.GetRefund(ctx, r.ID); err != nil || got.ID != r.ID || got.Status != "succeeded" {
			t.Errorf("GetRefund = %+v, %v", got, err)
		}

		p := &proxy{dropAnswer: func(n int) bool { return n == 1 }}
		lossy := client.New(h.url, h.merchant.ID, client.WithBearer(h.key(checkout.ModeTest, checkout.PermRefundsWrite)), client.WithHTTPClient(&http.Client{Transport: p}))
		rest, err := lossy.Refund(ctx, id, client.RefundParams{})
		if ks := p.keys(); err != nil || rest.Amount != 1000 || len(ks) != 2 || ks[0] != ks[1] || ks[0] == "" {
			t.Errorf("a refund whose answer was lost = %+v, %v, keys %q; want the rest refunded once, one key sent twice", rest, err, ks)
		}
		pd, err := c.GetPayment(ctx, id)
		if err != nil || pd.Status != "refunded" || pd.AmountRefunded != 1500 || len(pd.Refunds) != 2 || pd.Dispute != nil || pd.ID != id {
			t.Errorf("GetPayment = %+v, %v; want refunded, two refunds, no dispute", pd, err)
		}
		_, err = c.Refund(ctx, id, client.RefundParams{Amount: &amount})
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Code != "payment_not_refundable" || ce.StatusCode != 409 {
			t.Errorf("a refund of a refunded payment = %v; want payment_not_refundable, 409", err)
		}
	})
}

// A dispute found on its payment, answered with winning evidence through
// the client with a disputes:write key, is decided won.
func TestDisputeThroughTheClient(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clk := clock.NewFake(time.Now())
		h := newHarness(t, db, func(c *app.Config) { c.Now = clk.Now })
		ctx := context.Background()
		c := client.New(h.url, h.merchant.ID, client.WithBearer(h.key(checkout.ModeTest, checkout.PermDisputesWrite)))
		id := h.paid("4000000000000259")
		clk.Advance(checkout.DisputeDelay)
		if _, err := h.app.Service.ProcessAllDuePayments(ctx); err != nil {
			t.Fatal(err)
		}
		pd, err := c.GetPayment(ctx, id)
		if err != nil || pd.Status != "disputed" || pd.Dispute == nil || pd.Dispute.Status != "needs_response" {
			t.Fatalf("GetPayment = %+v, %v; want disputed, its dispute needing a response", pd, err)
		}
		d, err := c.SubmitDisputeEvidence(ctx, pd.Dispute.ID, client.DisputeEvidence{UncategorizedText: "winning_evidence", Note: "ours"})
		if err != nil || d.Status != "under_review" || d.Evidence == nil || d.Evidence.Note != "ours" || d.SubmittedBy == nil {
			t.Fatalf("SubmitDisputeEvidence = %+v, %v", d, err)
		}
		_, err = c.SubmitDisputeEvidence(ctx, d.ID, client.DisputeEvidence{UncategorizedText: "again"})
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Code != "dispute_not_open" {
			t.Errorf("evidence twice = %v; want dispute_not_open", err)
		}
		clk.Advance(checkout.DisputeDecisionDelay)
		if _, err := h.app.Service.ProcessAllDuePayments(ctx); err != nil {
			t.Fatal(err)
		}
		if d, err := c.GetDispute(ctx, d.ID); err != nil || d.Status != "won" || d.ClosedAt == nil {
			t.Errorf("GetDispute after the decision = %+v, %v; want won", d, err)
		}
	})
}

// A crypto payment refunded through the client: the refund comes back
// pending with the buyer's link, priced at the rate asked; the buyer gives
// an address; CancelRefund cancels it before the payout, and again
// harmlessly; a card refund is not cancelable.
func TestCryptoRefundThroughTheClient(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clk := clock.NewFake(time.Now())
		h := newHarness(t, db, func(c *app.Config) { c.Now = clk.Now })
		ctx := context.Background()
		svc := h.app.Service
		c := client.New(h.url, h.merchant.ID, client.WithBearer(h.key(checkout.ModeTest, checkout.PermRefundsWrite)))
		writer := client.New(h.url, h.merchant.ID, client.WithBearer(h.write))
		s, err := writer.Create(ctx, client.CreateParams{Items: []client.ItemParams{{Name: "Sword", Amount: 1500}}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.CryptoQuote(ctx, s.ID, "ETH"); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.SimulateCryptoPayment(ctx, s.ID, "ETH"); err != nil {
			t.Fatal(err)
		}
		clk.Advance(time.Hour)
		if _, err := svc.ProcessAllDuePayments(ctx); err != nil {
			t.Fatal(err)
		}
		got, err := writer.Get(ctx, s.ID)
		if err != nil || got.PaymentID == nil {
			t.Fatalf("the session paid in ETH = %+v, %v", got, err)
		}

		r, err := c.Refund(ctx, *got.PaymentID, client.RefundParams{Rate: "current"})
		if err != nil || r.Status != "pending" || r.Crypto == nil || r.Crypto.Coin != "ETH" || r.Crypto.Rate != "current" || r.Crypto.Stage != "awaiting_address" || r.Crypto.LinkURL == "" {
			t.Fatalf("Refund = %+v, %v", r, err)
		}
		token := r.Crypto.LinkURL[strings.LastIndex(r.Crypto.LinkURL, "/")+1:]
		if _, err := svc.GiveRefundAddress(ctx, token, "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"); err != nil {
			t.Fatal(err)
		}
		r, err = c.GetRefund(ctx, r.ID)
		if err != nil || r.Crypto.Stage != "awaiting_payout" || r.Crypto.Address == nil || r.Crypto.AmountCoin == nil || r.Crypto.AmountBase == nil {
			t.Fatalf("GetRefund after the address = %+v, %v", r.Crypto, err)
		}
		for range 2 {
			if r, err := c.CancelRefund(ctx, r.ID); err != nil || r.Status != "canceled" || r.Crypto.Stage != "done" {
				t.Errorf("CancelRefund = %+v, %v; want canceled", r, err)
			}
		}
		cardRefund, err := c.Refund(ctx, h.paid("4242424242424242"), client.RefundParams{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.CancelRefund(ctx, cardRefund.ID)
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Code != "refund_not_cancelable" || ce.StatusCode != 409 {
			t.Errorf("CancelRefund of a card refund = %v; want refund_not_cancelable, 409", err)
		}
	})
}

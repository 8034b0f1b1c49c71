package livecrypto_test

import (
	"context"
	"testing"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/chaintest"
	"github.com/checkoutd/checkoutd/internal/service"
)

// A live LTC payment refunded on a real node: the refund's link takes the
// buyer's regtest address (a mainnet one is refused), priced at the
// payment's rate; the node watches it; a payout short of the price does
// not count; across a restart, the merchant's full payout from their wallet is seen by the
// scan, and at the configured depth the refund succeeds with
// payment.refunded, once.
func TestLiveLitecoinRefund(t *testing.T) {
	eachLive(t, func(t *testing.T, l *live, ltc *chaintest.Litecoin) {
		ctx := context.Background()
		sess, q := l.session(1500) // 17622181 litoshi
		l.pay(q.Address, mustInt(t, q.AmountBase))
		l.step()
		ltc.Mine(depth)
		l.step()
		l.step()
		if l.status(sess.ID) != checkout.StatusComplete {
			t.Fatalf("the session = %s; want complete", l.status(sess.ID))
		}
		got, err := l.db.SessionGet(ctx, sess.ID)
		if err != nil {
			t.Fatal(err)
		}
		scope := checkout.Scope{MerchantID: l.store.ID, Mode: checkout.ModeLive}
		amount := int64(600)
		out, err := l.svc.RefundPayment(ctx, service.RefundRequest{Scope: scope, PaymentID: *got.PaymentID,
			Params: checkout.RefundParams{Amount: &amount}, By: checkout.Actor{Kind: checkout.ActorCLI, Name: "ops"}})
		if err != nil {
			t.Fatal(err)
		}
		r := out.Refund
		if r.Status != checkout.RefundPending || r.Crypto == nil || r.Crypto.Network != "regtest" || r.Crypto.Coin != "LTC" {
			t.Fatalf("the live crypto refund = %+v", r)
		}
		if _, err := l.svc.GiveRefundAddress(ctx, r.LinkToken, "ltc1qw508d6qejxtdg4y5r3zarvary0c5xw7kgmn4n9"); !checkout.IsCode(err, checkout.EValidationFailed) {
			t.Errorf("a mainnet address for a regtest refund = %v; want validation_failed", err)
		}
		buyer := ltc.NewAddress()
		link, err := l.svc.GiveRefundAddress(ctx, r.LinkToken, buyer)
		if err != nil {
			t.Fatal(err)
		}
		// 600/1500 of the 17622181 litoshi received, rounded down.
		if link.Refund.Crypto.AmountBase != "7048872" || link.Refund.Crypto.Address != buyer {
			t.Fatalf("the refund priced at the payment's rate = %+v; want 7048872 litoshi to %s", link.Refund.Crypto, buyer)
		}

		// checkoutd started again: the new process watches the refund's
		// address before its first scan, as it does open quotes'.
		l.restartWatcher()
		short := l.pay(buyer, 7048871)
		l.step()
		if cur, _ := l.db.RefundGet(ctx, r.ID); cur.Crypto.TxHash != "" {
			t.Fatalf("a payout a litoshi short was taken: %+v", cur.Crypto)
		}
		payout := l.pay(buyer, 7048872)
		l.step()
		cur, err := l.db.RefundGet(ctx, r.ID)
		if err != nil || cur.Crypto.TxHash != payout || cur.Crypto.Stage() != checkout.StageConfirming || cur.Crypto.Confirmations != depth {
			t.Fatalf("after the payout, the refund = %+v, %v; want confirming %s (not %s) to depth %d", cur.Crypto, err, payout, short, depth)
		}
		ltc.Mine(depth - 1)
		l.step()
		l.step()
		if cur, _ := l.db.RefundGet(ctx, r.ID); cur.Status != checkout.RefundPending {
			t.Fatalf("the refund at %d confirmations = %s; want pending until %d", depth-1, cur.Status, depth)
		}
		ltc.Mine(1)
		l.step()
		l.step()
		cur, _ = l.db.RefundGet(ctx, r.ID)
		p, _ := l.db.PaymentGet(ctx, r.PaymentID)
		if cur.Status != checkout.RefundSucceeded || p.AmountRefunded != 600 || p.Status != checkout.PaymentPartiallyRefunded {
			t.Errorf("at depth: refund %s, payment %s refunded %d; want succeeded, partially_refunded 600", cur.Status, p.Status, p.AmountRefunded)
		}
		es, err := l.db.EventList(ctx, checkout.EventListParams{MerchantID: l.store.ID, Mode: checkout.ModeLive, Type: checkout.EventPaymentRefunded, Limit: 10})
		if err != nil || len(es) != 1 {
			t.Errorf("payment.refunded events = %d, %v; want 1", len(es), err)
		}
	})
}

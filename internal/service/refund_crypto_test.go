package service_test

import (
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// Test-network addresses a buyer may give (the simulated network takes
// the coins' test networks').
const (
	buyerBTC = "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx"
	buyerETH = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
)

// paidByCrypto pays a new session in coin on the simulated network and
// waits out its confirmations; it returns the payment.
func (f *payFixture) paidByCrypto(t *testing.T, coin string) *checkout.Payment {
	t.Helper()
	s := f.session(t)
	f.quote(t, s.ID, coin)
	if _, err := f.svc.SimulateCryptoPayment(ctx, s.ID, coin); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Hour)
	f.processDue(t)
	return f.paidOnce(t, s.ID)
}

// A crypto refund, end to end in test mode: made with a link for the
// buyer's address (nothing asked of a processor); the address checked for
// the coin's test network, taken once, and the refund priced at the
// payment's rate; the payout simulated and confirmed on the coin's
// timescale; then the refund succeeds with payment.refunded.
func TestCryptoRefund(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPayFixture(t, db)
		p := f.paidByCrypto(t, "BTC") // 25000 satoshi for 1500
		scope := checkout.Scope{MerchantID: f.m.ID, Mode: checkout.ModeTest}
		out, err := f.svc.RefundPayment(ctx, service.RefundRequest{Scope: scope, PaymentID: p.ID, Params: checkout.RefundParams{Amount: amount(600)}, By: operator})
		if err != nil {
			t.Fatal(err)
		}
		r := out.Refund
		if r.Status != checkout.RefundPending || r.Crypto == nil || r.Crypto.Stage() != checkout.StageAwaitingAddress || r.Crypto.Rate != checkout.RateOfPayment ||
			r.Crypto.Network != "test" || len(r.LinkToken) != 64 || r.DueAt == nil || !r.DueAt.Equal(f.clock.Now().Truncate(time.Millisecond).Add(checkout.RefundLinkTTL)) {
			t.Fatalf("crypto refund = %+v", r)
		}
		if out.Payment.AmountRefunding != 600 {
			t.Errorf("the payment holds %d; want 600", out.Payment.AmountRefunding)
		}
		v := r.View("https://pay.example")
		if v.Crypto == nil || v.Crypto.LinkURL != "https://pay.example/refund/"+r.LinkToken || v.Crypto.Address != nil || v.Crypto.Stage != checkout.StageAwaitingAddress {
			t.Errorf("the refund as the API shows it = %+v", v.Crypto)
		}

		for _, tt := range []struct{ addr, want string }{
			{"", "Enter the address"},
			{"bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", "another network"},
			{buyerETH, "Bitcoin"},
			{buyerBTC[:len(buyerBTC)-1] + "y", "checksum"},
		} {
			_, err := f.svc.GiveRefundAddress(ctx, r.LinkToken, tt.addr)
			if !checkout.IsCode(err, checkout.EValidationFailed) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("address %q = %v; want validation_failed saying %q", tt.addr, err, tt.want)
			}
		}
		if _, err := f.svc.GiveRefundAddress(ctx, strings.Repeat("0", 64), buyerBTC); !checkout.IsCode(err, checkout.ENotFound) {
			t.Errorf("an unknown link = %v; want not_found", err)
		}
		link, err := f.svc.GiveRefundAddress(ctx, r.LinkToken, " "+buyerBTC+" ")
		if err != nil {
			t.Fatal(err)
		}
		// 600 of 1500 of 25000 satoshi.
		if c := link.Refund.Crypto; c.Address != buyerBTC || c.AmountBase != "10000" || c.Stage() != checkout.StageAwaitingPayout || link.Refund.DueAt != nil {
			t.Errorf("after the address: %+v, due %v; want 10000 satoshi awaited at %s", c, link.Refund.DueAt, buyerBTC)
		}
		if _, err := f.svc.GiveRefundAddress(ctx, r.LinkToken, buyerBTC); !checkout.IsCode(err, checkout.ERefundLinkClosed) {
			t.Errorf("the link again = %v; want refund_link_closed", err)
		}

		if _, err := f.svc.SimulateRefundPayout(ctx, checkout.Scope{MerchantID: f.m.ID, Mode: checkout.ModeLive}, r.ID); !checkout.IsCode(err, checkout.ERefundNotFound) {
			t.Errorf("a payout from another scope = %v; want refund_not_found", err)
		}
		paid, err := f.svc.SimulateRefundPayout(ctx, scope, r.ID)
		if err != nil || paid.Crypto.Stage() != checkout.StageConfirming || paid.Crypto.Confirmations != 2 || paid.Crypto.TxHash == "" {
			t.Fatalf("SimulateRefundPayout = %+v, %v", paid, err)
		}
		if _, err := f.svc.SimulateRefundPayout(ctx, scope, r.ID); !checkout.IsCode(err, checkout.ERefundLinkClosed) {
			t.Errorf("a second payout = %v; want refund_link_closed", err)
		}
		if _, err := f.svc.CancelRefund(ctx, scope, r.ID); !checkout.IsCode(err, checkout.ERefundNotCancelable) {
			t.Errorf("canceling a refund paid out = %v; want refund_not_cancelable", err)
		}
		f.clock.Advance(20*time.Minute - time.Second) // BTC: two 10-minute blocks
		if n := f.processDue(t); n != 0 {
			t.Errorf("the job changed %d a second before the second confirmation", n)
		}
		f.clock.Advance(time.Second)
		f.processDue(t)
		got, _ := db.RefundGet(ctx, r.ID)
		pay, _ := db.PaymentGet(ctx, p.ID)
		if got.Status != checkout.RefundSucceeded || pay.Status != checkout.PaymentPartiallyRefunded || pay.AmountRefunded != 600 || pay.AmountRefunding != 0 {
			t.Errorf("after the confirmations: refund %s; payment %s, refunded %d, held %d", got.Status, pay.Status, pay.AmountRefunded, pay.AmountRefunding)
		}
		if ev := f.refundedEvents(t, p.ID); len(ev) != 1 || ev[0] != 600 {
			t.Errorf("payment.refunded events = %v; want [600]", ev)
		}
	})
}

// A link unanswered for its 7 days cancels the refund, not a second
// before; what it held is free again. The merchant may cancel one awaiting
// its address or its payout. A refund priced at the rate of the moment is
// priced when the address comes, at test mode's rates.
func TestCryptoRefundLinkAndRate(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPayFixture(t, db)
		p := f.paidByCrypto(t, "ETH")
		scope := checkout.Scope{MerchantID: f.m.ID, Mode: checkout.ModeTest}
		refund := func(params checkout.RefundParams) *checkout.Refund {
			t.Helper()
			out, err := f.svc.RefundPayment(ctx, service.RefundRequest{Scope: scope, PaymentID: p.ID, Params: params, By: operator})
			if err != nil {
				t.Fatal(err)
			}
			return out.Refund
		}
		r := refund(checkout.RefundParams{Amount: amount(100)})
		f.clock.Advance(checkout.RefundLinkTTL - time.Second)
		f.processDue(t)
		if got, _ := db.RefundGet(ctx, r.ID); got.Status != checkout.RefundPending {
			t.Errorf("a second before the link expires: %s", got.Status)
		}
		f.clock.Advance(time.Second)
		if _, err := f.svc.GiveRefundAddress(ctx, r.LinkToken, buyerETH); !checkout.IsCode(err, checkout.ERefundLinkClosed) {
			t.Errorf("the expired link = %v; want refund_link_closed", err)
		}
		f.processDue(t)
		if got, _ := db.RefundGet(ctx, r.ID); got.Status != checkout.RefundCanceled {
			t.Errorf("the link expired: %s; want canceled", got.Status)
		}
		if got, _ := db.PaymentGet(ctx, p.ID); got.AmountRefunding != 0 || got.Refundable() != 1500 {
			t.Errorf("after the cancel, the payment holds %d", got.AmountRefunding)
		}

		r = refund(checkout.RefundParams{Rate: checkout.RateCurrent})
		link, err := f.svc.GiveRefundAddress(ctx, r.LinkToken, buyerETH)
		if err != nil {
			t.Fatal(err)
		}
		// 15.00 at 3000.00 a coin: 0.005 ether.
		if want := new(big.Int).Exp(big.NewInt(10), big.NewInt(15), nil); link.Refund.Crypto.AmountBase != new(big.Int).Mul(want, big.NewInt(5)).String() {
			t.Errorf("a refund of 15.00 at 3000.00 = %s wei; want 0.005 ether", link.Refund.Crypto.AmountBase)
		}
		out, err := f.svc.CancelRefund(ctx, scope, r.ID)
		if err != nil || out.Refund.Status != checkout.RefundCanceled || out.Payment.AmountRefunding != 0 {
			t.Errorf("CancelRefund = %+v, %v", out, err)
		}
		if again, err := f.svc.CancelRefund(ctx, scope, r.ID); err != nil || again.Refund.Status != checkout.RefundCanceled || !again.Refund.UpdatedAt.Equal(out.Refund.UpdatedAt) {
			t.Errorf("CancelRefund again = %+v, %v; want the canceled refund as it was", again, err)
		}
		if _, err := f.svc.RefundPayment(ctx, service.RefundRequest{Scope: scope, PaymentID: p.ID, Params: checkout.RefundParams{Rate: "yesterday"}, By: operator}); !checkout.IsCode(err, checkout.EValidationFailed) {
			t.Errorf("an unknown rate = %v; want validation_failed", err)
		}
		card := f.paidByCard(t, "4242424242424242")
		if _, err := f.svc.RefundPayment(ctx, service.RefundRequest{PaymentID: card.ID, Params: checkout.RefundParams{Rate: checkout.RateCurrent}, By: operator}); !checkout.IsCode(err, checkout.EValidationFailed) {
			t.Errorf("a rate for a card refund = %v; want validation_failed", err)
		}

		// An Idempotency-Key names one request: the same with another rate
		// is another request.
		keyed := service.RefundRequest{Scope: scope, PaymentID: p.ID, Params: checkout.RefundParams{Amount: amount(100)}, By: operator, IdempotencyKey: "rate-key"}
		if _, err := f.svc.RefundPayment(ctx, keyed); err != nil {
			t.Fatal(err)
		}
		keyed.Params.Rate = checkout.RateCurrent
		if _, err := f.svc.RefundPayment(ctx, keyed); !checkout.IsCode(err, checkout.EIdempotencyConflict) {
			t.Errorf("the key again with another rate = %v; want idempotency_conflict", err)
		}
	})
}

// A test-mode Solana payment is refunded like the others: its link takes
// a Solana address (a 32-byte key in base58), and refuses others.
func TestCryptoRefundSolana(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPayFixture(t, db)
		p := f.paidByCrypto(t, "SOL")
		out, err := f.svc.RefundPayment(ctx, service.RefundRequest{Scope: checkout.Scope{MerchantID: f.m.ID, Mode: checkout.ModeTest}, PaymentID: p.ID, By: operator})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.GiveRefundAddress(ctx, out.Refund.LinkToken, buyerETH); !checkout.IsCode(err, checkout.EValidationFailed) || !strings.Contains(err.Error(), "Solana") {
			t.Errorf("an Ethereum address for a Solana refund = %v; want validation_failed naming Solana", err)
		}
		link, err := f.svc.GiveRefundAddress(ctx, out.Refund.LinkToken, "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")
		if err != nil || link.Refund.Crypto.AmountBase != p.Crypto.AmountBase {
			t.Errorf("a Solana address = %+v, %v; want the refund of all, %s lamports", link, err, p.Crypto.AmountBase)
		}
	})
}

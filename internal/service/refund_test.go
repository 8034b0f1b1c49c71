package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

var operator = checkout.Actor{Kind: checkout.ActorCLI, Name: "root"}

func amount(n int64) *int64 { return &n }

// paidByCard pays a new session with the card number and returns its
// payment.
func (f *payFixture) paidByCard(t *testing.T, number string) *checkout.Payment {
	t.Helper()
	s := f.session(t)
	if _, err := f.svc.PayByCard(ctx, s.ID, card(number)); err != nil {
		t.Fatal(err)
	}
	return f.paidOnce(t, s.ID)
}

// refundedEvents returns the amount_refunded of each payment.refunded
// event of payment id, in the order they were made.
func (f *payFixture) refundedEvents(t *testing.T, id string) []int64 {
	t.Helper()
	var out []int64
	es := f.events(t, checkout.EventPaymentRefunded)
	for i := len(es) - 1; i >= 0; i-- { // the list is newest first
		var p checkout.PaymentJSON
		if err := json.Unmarshal(es[i].Object, &p); err != nil {
			t.Fatal(err)
		}
		if p.ID == id {
			out = append(out, p.AmountRefunded)
		}
	}
	return out
}

// A card payment refunded in part, then the rest: each refund succeeds at
// once, the payment follows (partially_refunded, then refunded, its net
// less each refund), each success emits payment.refunded with the payment
// as it is then, and nothing more can be refunded.
func TestRefundCard(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPayFixture(t, db)
		p := f.paidByCard(t, "4242424242424242")
		f.clock.Advance(time.Hour)
		out, err := f.svc.RefundPayment(ctx, service.RefundRequest{PaymentID: p.ID, Params: checkout.RefundParams{Amount: amount(500), Reason: checkout.ReasonRequestedByCustomer}, By: operator})
		if err != nil {
			t.Fatal(err)
		}
		r := out.Refund
		if r.Status != checkout.RefundSucceeded || r.Amount != 500 || r.DueAt != nil || out.Payment.Status != checkout.PaymentPartiallyRefunded ||
			out.Payment.AmountRefunded != 500 || out.Payment.AmountRefunding != 0 || out.Payment.Net() != 1500-74-500 {
			t.Fatalf("after refunding 500: refund %+v; payment %s, refunded %d, held %d, net %d", r, out.Payment.Status, out.Payment.AmountRefunded, out.Payment.AmountRefunding, out.Payment.Net())
		}
		if got, err := db.PaymentGet(ctx, p.ID); err != nil || got.AmountRefunded != 500 || got.Status != checkout.PaymentPartiallyRefunded {
			t.Errorf("the stored payment = %+v, %v", got, err)
		}
		if got := f.refundedEvents(t, p.ID); len(got) != 1 || got[0] != 500 {
			t.Errorf("payment.refunded events' amount_refunded = %v; want [500]", got)
		}

		f.clock.Advance(time.Second)
		out, err = f.svc.RefundPayment(ctx, service.RefundRequest{PaymentID: p.ID, Params: checkout.RefundParams{}, By: operator})
		if err != nil {
			t.Fatal(err)
		}
		if out.Refund.Amount != 1000 || out.Payment.Status != checkout.PaymentRefunded || out.Payment.AmountRefunded != 1500 {
			t.Errorf("refunding the rest: refund of %d; payment %s, refunded %d; want 1000, refunded, 1500", out.Refund.Amount, out.Payment.Status, out.Payment.AmountRefunded)
		}
		if got := f.refundedEvents(t, p.ID); len(got) != 2 || got[1] != 1500 {
			t.Errorf("payment.refunded events' amount_refunded = %v; want [500 1500]", got)
		}
		_, err = f.svc.RefundPayment(ctx, service.RefundRequest{PaymentID: p.ID, Params: checkout.RefundParams{Amount: amount(1)}, By: operator})
		if !checkout.IsCode(err, checkout.EPaymentNotRefundable) {
			t.Errorf("refunding a refunded payment = %v; want payment_not_refundable", err)
		}
		rs, err := f.svc.Refunds(ctx, p.ID)
		if err != nil || len(rs) != 2 || rs[0].Amount != 500 || rs[1].Amount != 1000 || rs[0].RequestedBy != operator {
			t.Errorf("Refunds = %v, %v; want both, oldest first, by the operator", rs, err)
		}
		// In scope only: another mode's scope does not find the payment.
		for _, scope := range []checkout.Scope{{MerchantID: f.m.ID, Mode: checkout.ModeLive}, {MerchantID: checkout.NewStoreID(), Mode: checkout.ModeTest}} {
			_, err = f.svc.RefundPayment(ctx, service.RefundRequest{Scope: scope, PaymentID: p.ID, By: operator})
			if !checkout.IsCode(err, checkout.EPaymentNotFound) {
				t.Errorf("a refund from the scope %+v = %v; want payment_not_found", scope, err)
			}
		}
		for _, id := range []string{"pay_" + strings.Repeat("0", 32), "re_" + p.ID[4:], "", p.ID + "0"} {
			if _, err := f.svc.RefundPayment(ctx, service.RefundRequest{PaymentID: id, By: operator}); !checkout.IsCode(err, checkout.EPaymentNotFound) {
				t.Errorf("RefundPayment(%q) = %v; want payment_not_found", id, err)
			}
		}
	})
}

// Two refunds of one payment at once, each of more than half of it, on two
// nodes: exactly one succeeds, the other is refused with
// refund_amount_too_large, and the payment is refunded no more than it
// collected; again and again.
func TestRefundsAtOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPayFixture(t, db)
		nodes := []*service.Service{f.svc, f.node(db)}
		for round := range 10 {
			p := f.paidByCard(t, "4242424242424242")
			var wg sync.WaitGroup
			errs := make([]error, 2)
			start := make(chan struct{})
			for i, node := range nodes {
				wg.Go(func() {
					<-start
					_, errs[i] = node.RefundPayment(ctx, service.RefundRequest{PaymentID: p.ID, Params: checkout.RefundParams{Amount: amount(800)}, By: operator})
				})
			}
			close(start)
			wg.Wait()
			ok, refused := 0, 0
			for _, err := range errs {
				switch {
				case err == nil:
					ok++
				case checkout.IsCode(err, checkout.ERefundTooLarge):
					refused++
				default:
					t.Errorf("round %d: a refund = %v", round, err)
				}
			}
			got, err := db.PaymentGet(ctx, p.ID)
			if err != nil {
				t.Fatal(err)
			}
			if ok != 1 || refused != 1 || got.AmountRefunded != 800 || got.AmountRefunding != 0 || got.Status != checkout.PaymentPartiallyRefunded {
				t.Errorf("round %d: %d refunds succeeded, %d refused; payment refunded %d, held %d, %s; want 1, 1, 800, 0",
					round, ok, refused, got.AmountRefunded, got.AmountRefunding, got.Status)
			}
		}
	})
}

// The test card 4000 0000 0000 5126 is charged, and its refunds fail:
// the refund is failed with expired_or_canceled_card, the payment as it was
// (nothing refunded, nothing held, no payment.refunded), and the merchant
// may try again.
func TestRefundFails(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPayFixture(t, db)
		p := f.paidByCard(t, "4000000000005126")
		out, err := f.svc.RefundPayment(ctx, service.RefundRequest{PaymentID: p.ID, Params: checkout.RefundParams{}, By: operator})
		if err != nil {
			t.Fatal(err)
		}
		r := out.Refund
		if r.Status != checkout.RefundFailed || r.FailureCode == nil || *r.FailureCode != checkout.RefundFailExpiredOrCanceledCard {
			t.Errorf("refund = %+v; want failed with %s", r, checkout.RefundFailExpiredOrCanceledCard)
		}
		got, _ := db.PaymentGet(ctx, p.ID)
		if got.Status != checkout.PaymentSucceeded || got.AmountRefunded != 0 || got.AmountRefunding != 0 || got.Refundable() != 1500 {
			t.Errorf("payment after a failed refund = %s, refunded %d, held %d; want succeeded, nothing", got.Status, got.AmountRefunded, got.AmountRefunding)
		}
		if n := len(f.refundedEvents(t, p.ID)); n != 0 {
			t.Errorf("%d payment.refunded events after a failed refund; want none", n)
		}
		if out, err := f.svc.RefundPayment(ctx, service.RefundRequest{PaymentID: p.ID, Params: checkout.RefundParams{}, By: operator}); err != nil || out.Refund.Status != checkout.RefundFailed {
			t.Errorf("trying again = %v, %v; want another failed refund", out, err)
		}
	})
}

// A disputed payment is not refunded: the refund is refused, saying why,
// and nothing is held or asked of the processor.
func TestRefundDisputed(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPayFixture(t, db)
		p := f.paidByCard(t, "4000000000000259")
		f.clock.Advance(checkout.DisputeDelay)
		f.processDue(t)
		if got, _ := db.PaymentGet(ctx, p.ID); got.Status != checkout.PaymentDisputed {
			t.Fatalf("payment = %s; want disputed", got.Status)
		}
		_, err := f.svc.RefundPayment(ctx, service.RefundRequest{PaymentID: p.ID, Params: checkout.RefundParams{}, By: operator})
		if !checkout.IsCode(err, checkout.EPaymentNotRefundable) {
			t.Errorf("refunding a disputed payment = %v; want payment_not_refundable", err)
		}
		if rs, _ := f.svc.Refunds(ctx, p.ID); len(rs) != 0 {
			t.Errorf("refunds after the refusal = %v; want none", rs)
		}
	})
}

// answerlessRefunds makes the card processor's refunds lose their answers
// (the refund is made, the answer lost on the way back) while lose is set,
// and counts the refunds that reach it.
type answerlessRefunds struct {
	*cards
	lose  atomic.Bool
	asked atomic.Int64
}

func (c *answerlessRefunds) Refund(ctx context.Context, r pay.RefundRequest) (pay.RefundResult, error) {
	c.asked.Add(1)
	res, err := c.cards.Refund(ctx, r)
	if c.lose.Load() {
		return pay.RefundResult{}, errors.New("processor did not answer")
	}
	return res, err
}

// A refund whose answer is lost stays pending, holding its amount, so that
// it cannot be refunded twice; the payments job asks the processor again
// with the same refund id when it is due, every ProcessorRetry while the
// processor does not answer, and writes the answer: one refund, one
// payment.refunded.
func TestRefundOutcomeLost(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPayFixture(t, db)
		c := &answerlessRefunds{cards: f.cards}
		svc := service.New(service.Config{Store: db, Now: f.clock.Now, CacheNow: f.cache.Now, Logger: f.log,
			Processors: pay.Registry{Test: pay.Processors{Card: c, Crypto: pay.TestNetwork{}, Skins: f.skins}}})
		f.svc = svc
		p := f.paidByCard(t, "4242424242424242")
		c.lose.Store(true)
		out, err := svc.RefundPayment(ctx, service.RefundRequest{PaymentID: p.ID, Params: checkout.RefundParams{Amount: amount(1000)}, By: operator})
		if err != nil {
			t.Fatal(err)
		}
		if out.Refund.Status != checkout.RefundPending || out.Refund.DueAt == nil {
			t.Fatalf("refund without an answer = %+v; want pending, due", out.Refund)
		}
		if _, err := svc.RefundPayment(ctx, service.RefundRequest{PaymentID: p.ID, Params: checkout.RefundParams{Amount: amount(501)}, By: operator}); !checkout.IsCode(err, checkout.ERefundTooLarge) {
			t.Errorf("a refund of 501 with 1000 pending of 1500 = %v; want refund_amount_too_large", err)
		}
		f.clock.Advance(checkout.RefundTimeout - time.Second)
		if n, _ := svc.ProcessAllDuePayments(ctx); n != 0 {
			t.Errorf("the job changed %d before the refund was due", n)
		}
		f.clock.Advance(time.Second)
		if _, err := svc.ProcessAllDuePayments(ctx); err == nil {
			t.Errorf("the job with the processor silent = nil; want the refund's failure")
		}
		r, _ := db.RefundGet(ctx, out.Refund.ID)
		if r.Status != checkout.RefundPending || !r.DueAt.Equal(f.clock.Now().Add(service.ProcessorRetry)) {
			t.Errorf("refund after an unanswered ask = %s, due %v; want pending, due in %v", r.Status, r.DueAt, service.ProcessorRetry)
		}
		c.lose.Store(false)
		f.clock.Advance(service.ProcessorRetry)
		if n, err := svc.ProcessAllDuePayments(ctx); n != 1 || err != nil {
			t.Errorf("the job once the processor answers = %d, %v; want 1 refund settled", n, err)
		}
		r, _ = db.RefundGet(ctx, out.Refund.ID)
		got, _ := db.PaymentGet(ctx, p.ID)
		if r.Status != checkout.RefundSucceeded || r.DueAt != nil || got.AmountRefunded != 1000 || got.AmountRefunding != 0 {
			t.Errorf("after the job: refund %s, due %v; payment refunded %d, held %d; want succeeded, 1000, 0", r.Status, r.DueAt, got.AmountRefunded, got.AmountRefunding)
		}
		if events := f.refundedEvents(t, p.ID); len(events) != 1 || c.asked.Load() != 3 {
			t.Errorf("%d payment.refunded, the processor asked %d times; want 1 event, 3 asks of one refund id", len(events), c.asked.Load())
		}
	})
}

// A skins payment is refunded whole, its items going back: in part it is
// refused before the platform is asked.
func TestRefundSkins(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPayFixture(t, db)
		s := f.session(t)
		inv, err := f.svc.SkinsInventory(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.PayBySkins(ctx, s.ID, []string{inv[7].ID}); err != nil {
			t.Fatal(err)
		}
		f.clock.Advance(checkout.SkinsTradeHold)
		f.processDue(t)
		p := f.paidOnce(t, s.ID)
		if _, err := f.svc.RefundPayment(ctx, service.RefundRequest{PaymentID: p.ID, Params: checkout.RefundParams{Amount: amount(100)}, By: operator}); !checkout.IsCode(err, checkout.EValidationFailed) {
			t.Errorf("a skins refund in part = %v; want validation_failed", err)
		}
		out, err := f.svc.RefundPayment(ctx, service.RefundRequest{PaymentID: p.ID, Params: checkout.RefundParams{}, By: operator})
		if err != nil || out.Refund.Status != checkout.RefundSucceeded || out.Payment.Status != checkout.PaymentRefunded {
			t.Errorf("a skins refund whole = %+v, %v; want succeeded, the payment refunded", out, err)
		}
	})
}

// A failed payment whose money was taken (a charge approved after the
// payment failed) is refunded as any: the money goes back, the payment
// stays failed and leaves the payments to refund.
func TestRefundOfAPaymentToRefund(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPayFixture(t, db)
		s := f.session(t)
		inside, release := f.cards.hold()
		done := make(chan struct{})
		go func() {
			defer close(done)
			f.svc.PayByCard(ctx, s.ID, card("4242424242424242"))
		}()
		id := <-inside
		f.clock.Advance(checkout.CardChargeTimeout)
		f.processDue(t)
		release()
		<-done
		if n, _ := f.svc.RefundDueCount(ctx, checkout.Scope{MerchantID: f.m.ID, Mode: checkout.ModeTest}); n != 1 {
			t.Fatalf("payments to refund = %d; want the one approved after it failed", n)
		}
		out, err := f.svc.RefundPayment(ctx, service.RefundRequest{PaymentID: id, Params: checkout.RefundParams{}, By: operator})
		if err != nil || out.Refund.Status != checkout.RefundSucceeded || out.Refund.Amount != 1500 {
			t.Fatalf("refund = %+v, %v; want 1500 succeeded", out, err)
		}
		got, _ := db.PaymentGet(ctx, id)
		if got.Status != checkout.PaymentFailed || got.RefundDue() || got.AmountRefunded != 1500 {
			t.Errorf("payment = %s, due %v, refunded %d; want failed, no longer due, 1500", got.Status, got.RefundDue(), got.AmountRefunded)
		}
		if n, _ := f.svc.RefundDueCount(ctx, checkout.Scope{MerchantID: f.m.ID, Mode: checkout.ModeTest}); n != 0 {
			t.Errorf("payments to refund after the refund = %d; want 0", n)
		}
	})
}

// A refund asked with an Idempotency-Key, again and again, on two nodes at
// once: one refund is made, and every answer is that refund (replayed but
// for the one that made it); the key with another request is
// idempotency_conflict; once the key's window is over it makes a new one.
func TestRefundIdempotencyKey(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPayFixture(t, db)
		nodes := []*service.Service{f.svc, f.node(db)}
		p := f.paidByCard(t, "4242424242424242")
		req := service.RefundRequest{PaymentID: p.ID, Params: checkout.RefundParams{Amount: amount(400)}, By: operator, IdempotencyKey: "refund-order-42"}
		outs := make([]*service.RefundOutcome, 8)
		errs := make([]error, len(outs))
		var wg sync.WaitGroup
		for i := range outs {
			wg.Go(func() { outs[i], errs[i] = nodes[i%2].RefundPayment(ctx, req) })
		}
		wg.Wait()
		made := 0
		for i, out := range outs {
			if errs[i] != nil {
				t.Fatalf("request %d = %v", i, errs[i])
			}
			if out.Refund.ID != outs[0].Refund.ID || out.Refund.Amount != 400 {
				t.Errorf("request %d answered refund %s of %d; want %s of 400", i, out.Refund.ID, out.Refund.Amount, outs[0].Refund.ID)
			}
			if !out.Replayed {
				made++
			}
		}
		got, _ := db.PaymentGet(ctx, p.ID)
		if rs, _ := f.svc.Refunds(ctx, p.ID); made != 1 || len(rs) != 1 || got.AmountRefunded != 400 || len(f.refundedEvents(t, p.ID)) != 1 {
			t.Errorf("%d answers not replayed, %d refunds, %d refunded, %d events; want 1, 1, 400, 1", made, len(rs), got.AmountRefunded, len(f.refundedEvents(t, p.ID)))
		}
		if out, err := f.svc.RefundPayment(ctx, req); err != nil || !out.Replayed || out.Refund.Status != checkout.RefundSucceeded {
			t.Errorf("a replay = %+v, %v; want the succeeded refund, replayed", out, err)
		}
		other := req
		other.Params.Amount = amount(401)
		if _, err := f.svc.RefundPayment(ctx, other); !checkout.IsCode(err, checkout.EIdempotencyConflict) {
			t.Errorf("the key with another amount = %v; want idempotency_conflict", err)
		}
		f.clock.Advance(checkout.IdempotencyWindow)
		if out, err := f.svc.RefundPayment(ctx, req); err != nil || out.Replayed || out.Refund.ID == outs[0].Refund.ID {
			t.Errorf("the key after its window = %+v, %v; want a new refund", out, err)
		}
	})
}

// RefundBlock answers, before anything is asked, what RefundPayment would
// refuse whatever the amount: the payment's own reasons, and a method or
// mode with no processor that refunds (live cards here; live crypto on a
// server with no node to watch the payout).
func TestRefundBlock(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPayFixture(t, db)
		p := f.paidByCard(t, "4242424242424242")
		if err := f.svc.RefundBlock(p); err != nil {
			t.Errorf("RefundBlock of a card payment = %v; want nil", err)
		}
		change := func(c func(q *checkout.Payment)) *checkout.Payment {
			q := *p
			c(&q)
			return &q
		}
		cryptoOf := func(q *checkout.Payment) {
			q.Method, q.CardLast4, q.CardBrand = checkout.MethodCrypto, nil, nil
			q.Crypto = &checkout.CryptoDetails{Coin: "LTC", Address: "tltc1qtest", AmountBase: "12000000"}
		}
		if err := f.svc.RefundBlock(change(cryptoOf)); err != nil {
			t.Errorf("RefundBlock of a test crypto payment = %v; want nil (refunded through a link)", err)
		}
		for what, q := range map[string]*checkout.Payment{
			"disputed":             change(func(q *checkout.Payment) { q.Status = checkout.PaymentDisputed }),
			"refunded in full":     change(func(q *checkout.Payment) { q.AmountRefunded, q.Status = q.Amount, checkout.PaymentRefunded }),
			"live crypto, no node": change(func(q *checkout.Payment) { cryptoOf(q); q.Mode = checkout.ModeLive }),
			"a live card":          change(func(q *checkout.Payment) { q.Mode = checkout.ModeLive }),
			"not collected yet":    change(func(q *checkout.Payment) { q.Status = checkout.PaymentProcessing }),
		} {
			if err := f.svc.RefundBlock(q); !checkout.IsCode(err, checkout.EPaymentNotRefundable) {
				t.Errorf("RefundBlock of a payment %s = %v; want payment_not_refundable", what, err)
			}
		}
	})
}

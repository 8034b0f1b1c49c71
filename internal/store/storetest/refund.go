package storetest

import (
	"context"
	"math/big"
	"reflect"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
)

// refundTests are the conformance tests of refunds.
var refundTests = []struct {
	name string
	fn   func(t *testing.T, db *store.DB)
}{
	{"Refund/RoundTrip", testRefundRoundTrip},
	{"Refund/NotFound", testRefundNotFound},
	{"Refund/ListDue", testRefundListDue},
	{"Refund/Crypto", testRefundCrypto},
}

// capturedPayment stores a card payment of s that succeeded at created.
func capturedPayment(t *testing.T, db *store.DB, s *checkout.Session, created time.Time) *checkout.Payment {
	t.Helper()
	p := newPayment(s, checkout.MethodCard, created, nil)
	if err := p.Succeed(checkout.DefaultPricing, created); err != nil {
		t.Fatal(err)
	}
	insertPayments(t, db, p)
	return p
}

// newRefund returns a pending refund of p, asked by by at created, with
// p's hold for it; neither is stored.
func newRefund(t *testing.T, p *checkout.Payment, amount int64, by checkout.Actor, created time.Time) *checkout.Refund {
	t.Helper()
	r, err := checkout.NewRefund(p, checkout.RefundParams{Amount: &amount, Reason: checkout.ReasonRequestedByCustomer}, by, created)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A refund is stored as it is made and read back alike, by id and with its
// payment's others (oldest first); its settlement is written; the payment
// keeps what its refunds under way hold.
func testRefundRoundTrip(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	s := insertSession(t, db, newSession(m, nil))
	p := capturedPayment(t, db, s, base)
	due := time.UnixMilli(base.Add(time.Minute).UnixMilli())
	first := newRefund(t, p, 100, checkout.Actor{Kind: checkout.ActorAccount, ID: "acct_1", Name: "Jo Ünïcode <jo@acme.example>"}, base.Add(time.Second))
	first.DueAt = &due
	second := newRefund(t, p, 200, checkout.Actor{Kind: checkout.ActorCLI, Name: "root"}, base.Add(2*time.Second))
	second.Reason = ""
	third := newRefund(t, p, 300, checkout.Actor{Kind: checkout.ActorAPIKey, ID: "key_1"}, base.Add(2*time.Second))
	third.Acquirer = &checkout.AcquirerRef{Name: "stripe", ID: "re_1", Status: "pending"}
	inTx(t, db, func(tx checkout.Tx) error {
		for _, r := range []*checkout.Refund{third, first, second} {
			if err := tx.RefundInsert(ctx, r); err != nil {
				return err
			}
		}
		return tx.PaymentUpdate(ctx, p)
	})
	for _, want := range []*checkout.Refund{first, second, third} {
		if got, err := db.RefundGet(ctx, want.ID); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("RefundGet(%s) =\n%+v, %v\nwant\n%+v", want.ID, got, err, want)
		}
	}
	if got, err := db.PaymentGet(ctx, p.ID); err != nil || got.AmountRefunding != 600 || !reflect.DeepEqual(got, p) {
		t.Errorf("the payment with three refunds under way = %+v, %v; want %d held", got, err, 600)
	}
	list, err := db.RefundListByPayment(ctx, p.ID)
	byTime := []*checkout.Refund{first, second, third}
	if second.ID > third.ID {
		byTime[1], byTime[2] = third, second
	}
	if err != nil || !reflect.DeepEqual(list, byTime) {
		t.Errorf("RefundListByPayment = %v, %v; want oldest first, ties by id: %v", list, err, byTime)
	}

	// Settled: the first succeeds, the second fails.
	inTx(t, db, func(tx checkout.Tx) error {
		pay, err := tx.PaymentGetForUpdate(ctx, p.ID)
		if err != nil {
			return err
		}
		r1, err := tx.RefundGetForUpdate(ctx, first.ID)
		if err != nil {
			return err
		}
		r2, err := tx.RefundGetForUpdate(ctx, second.ID)
		if err != nil {
			return err
		}
		if err := r1.Succeed(pay, base.Add(time.Minute)); err != nil {
			return err
		}
		if err := r2.Fail(pay, checkout.RefundFailExpiredOrCanceledCard, base.Add(time.Minute)); err != nil {
			return err
		}
		for _, r := range []*checkout.Refund{r1, r2} {
			if err := tx.RefundUpdate(ctx, r); err != nil {
				return err
			}
		}
		first, second, p = r1, r2, pay
		return tx.PaymentUpdate(ctx, pay)
	})
	for _, want := range []*checkout.Refund{first, second} {
		if got, err := db.RefundGet(ctx, want.ID); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("after settling, RefundGet(%s) =\n%+v, %v\nwant\n%+v", want.ID, got, err, want)
		}
	}
	got, err := db.PaymentGet(ctx, p.ID)
	if err != nil || got.AmountRefunded != 100 || got.AmountRefunding != 300 || got.Status != checkout.PaymentPartiallyRefunded {
		t.Errorf("the payment after settling = %+v, %v; want 100 refunded, 300 held, partially_refunded", got, err)
	}
}

func testRefundNotFound(t *testing.T, db *store.DB) {
	ctx := context.Background()
	if _, err := db.RefundGet(ctx, "re_nope"); !checkout.IsCode(err, checkout.ENotFound) {
		t.Errorf("RefundGet of an unknown id = %v; want not_found", err)
	}
	if list, err := db.RefundListByPayment(ctx, "pay_nope"); err != nil || len(list) != 0 {
		t.Errorf("RefundListByPayment of an unknown payment = %v, %v; want none", list, err)
	}
	err := db.InTx(ctx, func(tx checkout.Tx) error {
		if _, err := tx.RefundGetForUpdate(ctx, "re_nope"); !checkout.IsCode(err, checkout.ENotFound) {
			t.Errorf("RefundGetForUpdate of an unknown id = %v; want not_found", err)
		}
		if err := tx.RefundUpdate(ctx, &checkout.Refund{ID: "re_nope", Status: checkout.RefundFailed}); !checkout.IsCode(err, checkout.ENotFound) {
			t.Errorf("RefundUpdate of an unknown refund = %v; want not_found", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A refund must be of a payment that exists.
	m := newMerchant(t, db, "Acme", base)
	s := insertSession(t, db, newSession(m, nil))
	p := newPayment(s, checkout.MethodCard, base, nil)
	p.Succeed(checkout.DefaultPricing, base)
	r := newRefund(t, p, 100, checkout.Actor{Kind: checkout.ActorCLI, Name: "root"}, base)
	if err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.RefundInsert(ctx, r) }); err == nil {
		t.Errorf("RefundInsert of an unstored payment's refund = nil; want an error")
	}
}

// RefundListDue lists the refunds due at a time, the longest due first, up
// to the limit; not those due later, nor those with nothing scheduled.
func testRefundListDue(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	s := insertSession(t, db, newSession(m, nil))
	p := capturedPayment(t, db, s, base)
	at := func(d time.Duration) *time.Time { t := time.UnixMilli(base.Add(d).UnixMilli()); return &t }
	by := checkout.Actor{Kind: checkout.ActorCLI, Name: "root"}
	late, early, later, none := newRefund(t, p, 10, by, base), newRefund(t, p, 20, by, base), newRefund(t, p, 30, by, base), newRefund(t, p, 40, by, base)
	late.DueAt, early.DueAt, later.DueAt = at(2*time.Minute), at(time.Minute), at(time.Hour)
	inTx(t, db, func(tx checkout.Tx) error {
		for _, r := range []*checkout.Refund{late, early, later, none} {
			if err := tx.RefundInsert(ctx, r); err != nil {
				return err
			}
		}
		return tx.PaymentUpdate(ctx, p)
	})
	ids := func(rs []*checkout.Refund) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return out
	}
	for _, tt := range []struct {
		now   time.Duration
		limit int
		want  []string
	}{
		{time.Minute - time.Millisecond, 10, nil},
		{time.Minute, 10, []string{early.ID}},
		{10 * time.Minute, 10, []string{early.ID, late.ID}},
		{10 * time.Minute, 1, []string{early.ID}},
		{2 * time.Hour, 10, []string{early.ID, late.ID, later.ID}},
	} {
		got, err := db.RefundListDue(ctx, base.Add(tt.now), tt.limit)
		if err != nil || !reflect.DeepEqual(ids(got), tt.want) {
			t.Errorf("RefundListDue(+%v, %d) = %v, %v; want %v", tt.now, tt.limit, ids(got), err, tt.want)
		}
	}
}

// A crypto refund keeps its details (coin, network, rate, link, the
// buyer's address and amount, the payout); it is found by its link token,
// and, once it has an address, among the pending refunds paying it. Two
// refunds cannot share a link token.
func testRefundCrypto(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	s := insertSession(t, db, newSession(m, nil))
	p := cryptoPayment(s, "0xtx", base)
	p.Succeed(checkout.DefaultPricing, base)
	insertPayments(t, db, p)
	by := checkout.Actor{Kind: checkout.ActorAPIKey, ID: "key_1"}
	r, err := checkout.NewCryptoRefund(p, checkout.RefundParams{Rate: checkout.RateCurrent}, "test", by, base)
	if err != nil {
		t.Fatal(err)
	}
	inTx(t, db, func(tx checkout.Tx) error {
		if err := tx.RefundInsert(ctx, r); err != nil {
			return err
		}
		return tx.PaymentUpdate(ctx, p)
	})
	if got, err := db.RefundGetByLink(ctx, r.LinkToken); err != nil || !reflect.DeepEqual(got, r) {
		t.Errorf("RefundGetByLink =\n%+v, %v\nwant\n%+v", got, err, r)
	}
	if got, err := db.RefundListByPayout(ctx, "ETH", "0xbuyer"); err != nil || len(got) != 0 {
		t.Errorf("RefundListByPayout before the address = %v, %v; want none", got, err)
	}
	inTx(t, db, func(tx checkout.Tx) error {
		cur, err := tx.RefundGetForUpdate(ctx, r.ID)
		if err != nil {
			return err
		}
		if err := cur.SetAddress("0xbuyer", big.NewInt(12345), base.Add(time.Hour)); err != nil {
			return err
		}
		if err := cur.PayoutSeen("0xpayout", 4, base.Add(2*time.Hour), base.Add(time.Hour)); err != nil {
			return err
		}
		r = cur
		return tx.RefundUpdate(ctx, cur)
	})
	if got, err := db.RefundGet(ctx, r.ID); err != nil || !reflect.DeepEqual(got, r) || got.Crypto.AmountBase != "12345" || got.Crypto.TxHash != "0xpayout" {
		t.Errorf("after the address and payout, RefundGet =\n%+v, %v\nwant\n%+v", got, err, r)
	}
	if got, err := db.RefundListByPayout(ctx, "ETH", "0xbuyer"); err != nil || len(got) != 1 || got[0].ID != r.ID {
		t.Errorf("RefundListByPayout = %v, %v; want the refund", got, err)
	}
	for _, other := range [][2]string{{"BTC", "0xbuyer"}, {"ETH", "0xother"}} {
		if got, _ := db.RefundListByPayout(ctx, other[0], other[1]); len(got) != 0 {
			t.Errorf("RefundListByPayout(%v) = %v; want none", other, got)
		}
	}
	if _, err := db.RefundGetByLink(ctx, "nope"); !checkout.IsCode(err, checkout.ENotFound) {
		t.Errorf("RefundGetByLink of an unknown token = %v; want not_found", err)
	}
	p.AmountRefunding = 0 // as if the first had failed: another refund of it
	again, err := checkout.NewCryptoRefund(p, checkout.RefundParams{Amount: ptr[int64](1)}, "test", by, base)
	if err == nil {
		again.LinkToken = r.LinkToken
		err = db.InTx(ctx, func(tx checkout.Tx) error { return tx.RefundInsert(ctx, again) })
	}
	wantCode(t, "RefundInsert(a taken link token)", err, checkout.EConflict)
}

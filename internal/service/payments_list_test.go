package service_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// storePayment stores a failed payment of a new session of m in mode with
// code, as the live crypto scan records a late or second payment.
func storePayment(t *testing.T, db *store.DB, m *checkout.Merchant, mode checkout.Mode, at time.Time, code string) *checkout.Payment {
	t.Helper()
	ctx := context.Background()
	s := &checkout.Session{ID: checkout.NewSessionID(), MerchantID: m.ID, Mode: mode, Status: checkout.StatusOpen, Title: "Order",
		Currency: "USD", Amount: 1500, TotalAmount: 1500, Items: []checkout.Item{{Name: "Sword", Amount: 1500, Quantity: 1}},
		Metadata: map[string]string{}, CreatedAt: at, ExpiresAt: at.Add(time.Hour)}
	p := checkout.NewPayment(s, checkout.MethodCrypto, at)
	p.Crypto = &checkout.CryptoDetails{Coin: "LTC", Address: "ltc1qexample", AmountBase: "5000000", TxHash: "tx" + p.ID,
		ReceivedBase: "5000000", RequiredBase: "5000000", Confirmations: 6}
	if err := p.Fail(code, at); err != nil {
		t.Fatal(err)
	}
	err := db.InTx(ctx, func(tx checkout.Tx) error {
		if err := tx.SessionInsert(ctx, s); err != nil {
			return err
		}
		return tx.PaymentInsert(ctx, p)
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func paymentIDs(ps []*checkout.Payment) []string {
	out := []string{}
	for _, p := range ps {
		out = append(out, p.ID)
	}
	return out
}

// ListPayments pages the scope's payments newest first, by status or only
// those to refund, and never shows the other mode's or another store's;
// PaymentIn finds a payment of the scope only.
func TestListPayments(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPayFixture(t, db)
		ctx := context.Background()
		scope := checkout.Scope{MerchantID: f.m.ID, Mode: checkout.ModeTest}
		var all []string // newest first
		pay := func(sessionID, number string) *checkout.Payment {
			t.Helper()
			f.clock.Advance(time.Second)
			out, err := f.svc.PayByCard(ctx, sessionID, card(number))
			if err != nil {
				t.Fatalf("PayByCard(%s) = %v", number, err)
			}
			all = append([]string{out.Payment.ID}, all...)
			return out.Payment
		}
		s := f.session(t)
		declined := pay(s.ID, "4000000000000002")
		pay(s.ID, "4000000000009995")
		paid := pay(s.ID, "4242424242424242")
		f.clock.Advance(time.Second)
		due := storePayment(t, db, f.m, checkout.ModeTest, f.clock.Now(), checkout.FailSessionCompleted)
		all = append([]string{due.ID}, all...)
		live := storePayment(t, db, f.m, checkout.ModeLive, f.clock.Now(), checkout.FailSessionExpired)
		other, err := f.svc.CreateMerchant(ctx, checkout.MerchantParams{Name: "Other", Currency: "USD"})
		if err != nil {
			t.Fatal(err)
		}
		stranger := storePayment(t, db, other, checkout.ModeTest, f.clock.Now(), checkout.FailSessionCompleted)

		for _, tt := range []struct {
			filter service.PaymentFilter
			size   int
			want   []string
		}{
			{service.PaymentFilter{}, 0, all},
			{service.PaymentFilter{}, 3, all},
			{service.PaymentFilter{}, 4, all},
			{service.PaymentFilter{ToRefund: true}, 1, []string{due.ID}},
			{service.PaymentFilter{ToRefund: true, Status: checkout.PaymentFailed}, 2, []string{due.ID}},
			{service.PaymentFilter{Status: checkout.PaymentFailed}, 2, []string{due.ID, all[2], declined.ID}},
			{service.PaymentFilter{Status: checkout.PaymentSucceeded}, 2, []string{paid.ID}},
			{service.PaymentFilter{Status: checkout.PaymentRefunded}, 2, []string{}},
		} {
			got := []string{}
			cursor := ""
			for range 10 {
				page, err := f.svc.ListPayments(ctx, scope, tt.filter, cursor, tt.size)
				if err != nil {
					t.Fatalf("ListPayments(%+v) = %v", tt.filter, err)
				}
				got = append(got, paymentIDs(page.Items)...)
				if cursor = page.Next; cursor == "" {
					break
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ListPayments(%+v) by pages of %d = %v; want %v", tt.filter, tt.size, got, tt.want)
			}
		}
		// A last page that is full says no page follows.
		if page, err := f.svc.ListPayments(ctx, scope, service.PaymentFilter{}, "", len(all)); err != nil || page.Next != "" {
			t.Errorf("ListPayments of all in one page: next %q, %v; want none", page.Next, err)
		}

		for _, tt := range []struct {
			filter service.PaymentFilter
			cursor string
		}{
			{service.PaymentFilter{Status: "paid"}, ""},
			{service.PaymentFilter{ToRefund: true, Status: checkout.PaymentSucceeded}, ""},
			{service.PaymentFilter{}, "not-a-cursor"},
		} {
			if _, err := f.svc.ListPayments(ctx, scope, tt.filter, tt.cursor, 0); !checkout.IsCode(err, checkout.EValidationFailed) {
				t.Errorf("ListPayments(%+v, cursor %q) = %v; want validation_failed", tt.filter, tt.cursor, err)
			}
		}

		if n, err := f.svc.RefundDueCount(ctx, scope); err != nil || n != 1 {
			t.Errorf("RefundDueCount = %d, %v; want 1", n, err)
		}
		if p, err := f.svc.PaymentIn(ctx, scope, paid.ID); err != nil || p.ID != paid.ID {
			t.Errorf("PaymentIn(%s) = %v, %v; want it", paid.ID, p, err)
		}
		for _, id := range []string{live.ID, stranger.ID, checkout.NewPaymentID(), "pay_nope", "cs_" + paid.ID[4:]} {
			if _, err := f.svc.PaymentIn(ctx, scope, id); !checkout.IsCode(err, checkout.EPaymentNotFound) {
				t.Errorf("PaymentIn(%s) = %v; want payment_not_found", id, err)
			}
		}
	})
}

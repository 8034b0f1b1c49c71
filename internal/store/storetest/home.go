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

// homeTests are the conformance tests of the store's home figures.
var homeTests = []struct {
	name string
	fn   func(t *testing.T, db *store.DB)
}{
	{"Home/Days", testHomeDays},
	{"Home/Kept", testHomeKept},
	{"Home/Hours", testHomeHours},
	{"Home/Attention", testHomeAttention},
}

// homeDay0 is the first day of the home tests: base's UTC day.
var homeDay0 = checkout.DayOf(base)

// homeAt is an instant of day n of the home tests.
func homeAt(n int, d time.Duration) time.Time { return homeDay0.Add(time.Duration(n)*checkout.Day + d) }

// homePaid stores a session of m in mode and currency created at created,
// its card payment of amount that succeeded at paid, and the session paid
// then.
func homePaid(t *testing.T, db *store.DB, m *checkout.Merchant, mode checkout.Mode, currency string, amount int64, created, paid time.Time) *checkout.Payment {
	t.Helper()
	s := newSession(m, func(s *checkout.Session) {
		s.Mode, s.Currency, s.Amount, s.TotalAmount, s.CreatedAt, s.ExpiresAt = mode, currency, amount, amount, created, created.Add(time.Hour)
		s.Items[0].Amount = amount
	})
	insertSession(t, db, s)
	p := newPayment(s, checkout.MethodCard, created, nil)
	if err := p.Succeed(checkout.DefaultPricing, paid); err != nil {
		t.Fatal(err)
	}
	at := paid.Truncate(time.Second)
	p.SucceededAt = &at
	insertPayments(t, db, p)
	s.Status, s.PaymentID, s.CompletedAt = checkout.StatusComplete, &p.ID, &at
	inTx(t, db, func(tx checkout.Tx) error { return tx.SessionUpdate(context.Background(), s) })
	return p
}

// homeRefund stores a refund of p of amount, in status, last changed at.
func homeRefund(t *testing.T, db *store.DB, p *checkout.Payment, amount int64, status checkout.RefundStatus, at time.Time) {
	t.Helper()
	r := newRefund(t, p, amount, checkout.Actor{Kind: checkout.ActorCLI, Name: "root"}, at)
	r.Status, r.UpdatedAt = status, time.UnixMilli(at.UnixMilli())
	inTx(t, db, func(tx checkout.Tx) error { return tx.RefundInsert(context.Background(), r) })
}

// homeDispute stores a dispute of p of fee, in status, closed at closed
// when it is won or lost.
func homeDispute(t *testing.T, db *store.DB, p *checkout.Payment, fee int64, status checkout.DisputeStatus, closed time.Time) {
	t.Helper()
	d, err := p.OpenDispute(checkout.DefaultDisputePlan, fee, *p.SucceededAt)
	if err != nil {
		t.Fatal(err)
	}
	d.Status = status
	if status.Closed() {
		at := time.UnixMilli(closed.UnixMilli())
		d.ClosedAt, d.DueAt = &at, nil
	}
	inTx(t, db, func(tx checkout.Tx) error {
		if err := tx.PaymentUpdate(context.Background(), p); err != nil {
			return err
		}
		return tx.DisputeInsert(context.Background(), d)
	})
}

func homeDays(t *testing.T, db *store.DB, m *checkout.Merchant, from, to, settled time.Time) []checkout.HomeDay {
	t.Helper()
	days, err := db.HomeDays(context.Background(), checkout.HomeDaysParams{MerchantID: m.ID, Mode: checkout.ModeTest, Currency: "USD",
		From: from, To: to, Settled: settled})
	if err != nil {
		t.Fatalf("HomeDays = %v", err)
	}
	return days
}

// Each day counts what happened in it, to the millisecond at both ends:
// payments by when they succeeded, refunds (succeeded, of payments that
// had) by when they succeeded, lost disputes (amount and fee) by when they
// closed, sessions by when they were created and paid; another store's, the
// other mode's, another currency's and failed payments are not counted;
// days with nothing have zeros. Days kept and days counted agree.
func testHomeDays(t *testing.T, db *store.DB) {
	m := newMerchant(t, db, "Acme", base)
	other := newMerchant(t, db, "Other", base)
	ms := time.Millisecond
	// Day 0: a payment at its first instant (from a session of the day
	// before), refunded in part on day 1; a payment disputed on day 2 and
	// lost on day 2; a session left unpaid.
	a := homePaid(t, db, m, checkout.ModeTest, "USD", 3000, homeAt(-1, checkout.Day-ms), homeAt(0, 0))
	homeRefund(t, db, a, 1000, checkout.RefundSucceeded, homeAt(1, 0))
	homeRefund(t, db, a, 700, checkout.RefundPending, homeAt(1, time.Hour))
	homeRefund(t, db, a, 300, checkout.RefundFailed, homeAt(1, time.Hour))
	lost := homePaid(t, db, m, checkout.ModeTest, "USD", 2500, homeAt(0, time.Hour), homeAt(0, time.Hour+time.Minute))
	homeDispute(t, db, lost, 1500, checkout.DisputeLost, homeAt(2, checkout.Day-ms))
	won := homePaid(t, db, m, checkout.ModeTest, "USD", 4000, homeAt(0, 2*time.Hour), homeAt(0, 2*time.Hour))
	homeDispute(t, db, won, 1500, checkout.DisputeWon, homeAt(2, time.Hour))
	open := homePaid(t, db, m, checkout.ModeTest, "USD", 100, homeAt(0, 3*time.Hour), homeAt(0, 3*time.Hour))
	homeDispute(t, db, open, 1500, checkout.DisputeNeedsResponse, time.Time{})
	insertSession(t, db, newSession(m, func(s *checkout.Session) { s.CreatedAt = homeAt(0, 4*time.Hour) }))
	// Day 1: a payment at its last second; a failed payment; a failed
	// payment whose money came, refunded; a session at its last second.
	homePaid(t, db, m, checkout.ModeTest, "USD", 1200, homeAt(1, 0), homeAt(1, checkout.Day-time.Second))
	s := insertSession(t, db, newSession(m, func(s *checkout.Session) { s.CreatedAt = homeAt(1, checkout.Day-time.Second) }))
	failed := newPayment(s, checkout.MethodCard, homeAt(1, time.Hour), func(p *checkout.Payment) {
		code := checkout.FailCardDeclined
		p.Status, p.FailureCode = checkout.PaymentFailed, &code
	})
	late := newPayment(s, checkout.MethodCrypto, homeAt(1, time.Hour), func(p *checkout.Payment) {
		code := checkout.FailSessionExpired
		p.Status, p.FailureCode = checkout.PaymentFailed, &code
	})
	insertPayments(t, db, failed, late)
	homeRefund(t, db, late, 1500, checkout.RefundSucceeded, homeAt(1, 2*time.Hour))
	// Not counted: day 3's first instant, the day before day 0, another
	// store, live mode, another currency.
	homePaid(t, db, m, checkout.ModeTest, "USD", 9, homeAt(3, 0), homeAt(3, 0))
	homePaid(t, db, m, checkout.ModeTest, "USD", 8, homeAt(-1, 0), homeAt(-1, checkout.Day-time.Second))
	homePaid(t, db, other, checkout.ModeTest, "USD", 7, homeAt(1, 0), homeAt(1, 0))
	homePaid(t, db, m, checkout.ModeLive, "USD", 6, homeAt(1, 0), homeAt(1, 0))
	homePaid(t, db, m, checkout.ModeTest, "EUR", 5, homeAt(1, 0), homeAt(1, 0))

	want := []checkout.HomeDay{
		{Day: homeAt(0, 0), Gross: 3000 + 2500 + 4000 + 100, Payments: 4, SessionsCreated: 4, SessionsPaid: 4},
		{Day: homeAt(1, 0), Gross: 1200, Payments: 1, Refunded: 1000, SessionsCreated: 1 + 1 + 1, SessionsPaid: 1 + 1},
		{Day: homeAt(2, 0), DisputesLost: 2500 + 1500},
	}
	// The EUR session of day 1 counts (sessions are counted in any
	// currency); the live one and the other store's do not.
	for _, settled := range []time.Time{homeAt(0, 0), homeAt(2, 0), homeAt(3, time.Hour), homeAt(10, 0)} {
		got := homeDays(t, db, m, homeAt(0, 0), homeAt(3, 0), settled)
		for i := range got {
			got[i].Day = got[i].Day.UTC()
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("HomeDays(days 0 to 2, settled %v) =\n%+v\nwant\n%+v", settled, got, want)
		}
	}
	if got := homeDays(t, db, m, homeAt(1, 0), homeAt(1, 0), homeAt(10, 0)); len(got) != 0 {
		t.Errorf("HomeDays(no day) = %+v; want none", got)
	}
	if got := homeDays(t, db, m, homeAt(3, 0), homeAt(2, 0), homeAt(10, 0)); len(got) != 0 {
		t.Errorf("HomeDays(backwards) = %+v; want none", got)
	}
}

// A day that ended before the settled time is counted once and kept: what
// is written dated in it afterwards is not counted (it cannot be, as the
// service's clock goes); a day after the settled time is counted at each
// read.
func testHomeKept(t *testing.T, db *store.DB) {
	m := newMerchant(t, db, "Acme", base)
	homePaid(t, db, m, checkout.ModeTest, "USD", 1000, homeAt(0, 0), homeAt(0, time.Minute))
	homePaid(t, db, m, checkout.ModeTest, "USD", 2000, homeAt(1, 0), homeAt(1, time.Minute))
	settled := homeAt(1, time.Hour)
	if got := homeDays(t, db, m, homeAt(0, 0), homeAt(2, 0), settled); got[0].Gross != 1000 || got[1].Gross != 2000 {
		t.Fatalf("HomeDays = %+v; want 1000 then 2000", got)
	}
	homePaid(t, db, m, checkout.ModeTest, "USD", 10, homeAt(0, 0), homeAt(0, time.Hour))
	homePaid(t, db, m, checkout.ModeTest, "USD", 20, homeAt(1, 0), homeAt(1, time.Hour))
	if got := homeDays(t, db, m, homeAt(0, 0), homeAt(2, 0), settled); got[0].Gross != 1000 || got[1].Gross != 2020 {
		t.Errorf("HomeDays after more payments = %+v; want day 0 as kept (1000), day 1 counted again (2020)", got)
	}
	// A range that starts earlier keeps the days before, and reads day 0
	// as kept.
	if got := homeDays(t, db, m, homeAt(-2, 0), homeAt(2, 0), settled); len(got) != 4 || got[0].Gross != 0 || got[2].Gross != 1000 || got[3].Gross != 2020 {
		t.Errorf("HomeDays(from day -2) = %+v; want 0, 0, 1000, 2020", got)
	}
}

// The day under way is kept in hours: an hour that ended before the
// settled time is counted once and kept, the later ones counted at each
// read; HomeKeep keeps the ended days and hours as a read would, and a day
// is then kept from its hours.
func testHomeHours(t *testing.T, db *store.DB) {
	m := newMerchant(t, db, "Acme", base)
	hour := func(n int, m time.Duration) time.Time { return homeAt(0, time.Duration(n)*time.Hour+m) }
	homePaid(t, db, m, checkout.ModeTest, "USD", 1000, hour(0, 0), hour(0, time.Minute))
	homePaid(t, db, m, checkout.ModeTest, "USD", 2000, hour(1, 0), hour(1, 59*time.Minute+59*time.Second))
	homePaid(t, db, m, checkout.ModeTest, "USD", 4000, hour(2, 0), hour(2, 0))
	settled := hour(2, 30*time.Minute) // hours 0 and 1 ended
	if got := homeDays(t, db, m, homeAt(0, 0), homeAt(1, 0), settled); got[0].Gross != 7000 || got[0].Payments != 3 {
		t.Fatalf("HomeDays = %+v; want 7000 in 3 payments", got)
	}
	// Written afterwards: into hour 1, kept (not counted, as the service's
	// clock cannot date a write there once it is settled); into hour 2, open.
	homePaid(t, db, m, checkout.ModeTest, "USD", 10, hour(1, 0), hour(1, time.Minute))
	homePaid(t, db, m, checkout.ModeTest, "USD", 20, hour(2, 0), hour(2, time.Minute))
	if got := homeDays(t, db, m, homeAt(0, 0), homeAt(1, 0), settled); got[0].Gross != 7020 {
		t.Errorf("HomeDays after more payments = %+v; want 7020: hours 0 and 1 as kept, hour 2 counted again", got)
	}
	// HomeKeep keeps hour 2 once it ended, and counts nothing open: a
	// payment of hour 3 written before it is counted by the next read.
	homePaid(t, db, m, checkout.ModeTest, "USD", 300, hour(3, 0), hour(3, 0))
	ctx := context.Background()
	keep := func(settled time.Time) {
		t.Helper()
		if err := db.HomeKeep(ctx, checkout.HomeDaysParams{MerchantID: m.ID, Mode: checkout.ModeTest, Currency: "USD",
			From: homeAt(-1, 0), To: homeAt(1, 0), Settled: settled}); err != nil {
			t.Fatalf("HomeKeep = %v", err)
		}
	}
	keep(hour(3, 30*time.Minute))
	homePaid(t, db, m, checkout.ModeTest, "USD", 40, hour(2, 0), hour(2, 2*time.Minute))
	homePaid(t, db, m, checkout.ModeTest, "USD", 600, hour(3, 0), hour(3, time.Minute))
	if got := homeDays(t, db, m, homeAt(0, 0), homeAt(1, 0), hour(3, 30*time.Minute)); got[0].Gross != 7020+300+600 {
		t.Errorf("HomeDays after HomeKeep = %+v; want %d: hour 2 as kept, hour 3 counted", got, 7020+300+600)
	}
	// The day ends: it is kept from its hours, as they were kept.
	homePaid(t, db, m, checkout.ModeTest, "USD", 5000, hour(23, 0), hour(23, 59*time.Minute))
	keep(homeAt(1, time.Hour))
	homePaid(t, db, m, checkout.ModeTest, "USD", 1, hour(23, 0), hour(23, 59*time.Minute))
	want := int64(7020 + 300 + 600 + 5000)
	for _, settled := range []time.Time{homeAt(1, time.Hour), homeAt(5, 0)} {
		if got := homeDays(t, db, m, homeAt(0, 0), homeAt(1, 0), settled); got[0].Gross != want || got[0].Payments != 7 {
			t.Errorf("HomeDays(settled %v) = %+v; want %d in 7 payments, as kept", settled, got, want)
		}
	}
	// Nothing to keep: a range in the future, or none.
	if err := db.HomeKeep(ctx, checkout.HomeDaysParams{MerchantID: m.ID, Mode: checkout.ModeTest, Currency: "USD",
		From: homeAt(3, 0), To: homeAt(3, 0), Settled: homeAt(1, 0)}); err != nil {
		t.Errorf("HomeKeep(no day) = %v", err)
	}
}

// What needs attention: the failed deliveries since a time, counted up to a
// limit, of the store and mode alone; the pending refunds with a payout
// address (not those awaiting one, nor those done), oldest first, of the
// store and mode alone.
func testHomeAttention(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	other := newMerchant(t, db, "Other", base)
	ep := newEndpoint(t, db, m, checkout.ModeTest)
	liveEP := newEndpoint(t, db, m, checkout.ModeLive)
	otherEP := newEndpoint(t, db, other, checkout.ModeTest)
	since := base.Add(time.Hour)
	for _, d := range []*checkout.Delivery{
		historyDelivery(ep, checkout.EventCheckoutCompleted, checkout.DeliveryFailed, since, since),
		historyDelivery(ep, checkout.EventCheckoutCompleted, checkout.DeliveryFailed, since.Add(time.Minute), since),
		historyDelivery(ep, checkout.EventCheckoutCompleted, checkout.DeliveryFailed, since.Add(-time.Millisecond), since),
		historyDelivery(ep, checkout.EventCheckoutCompleted, checkout.DeliverySucceeded, since, since),
		historyDelivery(ep, checkout.EventCheckoutCompleted, checkout.DeliveryPending, since, since),
		historyDelivery(liveEP, checkout.EventCheckoutCompleted, checkout.DeliveryFailed, since, since),
		historyDelivery(otherEP, checkout.EventCheckoutCompleted, checkout.DeliveryFailed, since, since),
	} {
		putDelivery(t, db, d)
	}
	for limit, want := range map[int]int{100: 2, 2: 2, 1: 1} {
		if n, err := db.DeliveryCountFailed(ctx, m.ID, checkout.ModeTest, since, limit); err != nil || n != want {
			t.Errorf("DeliveryCountFailed(limit %d) = %d, %v; want %d", limit, n, err, want)
		}
	}

	by := checkout.Actor{Kind: checkout.ActorCLI, Name: "root"}
	refund := func(m *checkout.Merchant, mode checkout.Mode, at time.Time, address, tx string, status checkout.RefundStatus) *checkout.Refund {
		t.Helper()
		s := insertSession(t, db, newSession(m, func(s *checkout.Session) { s.Mode = mode }))
		p := cryptoPayment(s, "0x"+s.ID[3:20], at)
		p.Succeed(checkout.DefaultPricing, at)
		insertPayments(t, db, p)
		r, err := checkout.NewCryptoRefund(p, checkout.RefundParams{}, "test", by, at)
		if err != nil {
			t.Fatal(err)
		}
		if address != "" {
			if err := r.SetAddress(address, big.NewInt(12345), at); err != nil {
				t.Fatal(err)
			}
		}
		if tx != "" {
			if err := r.PayoutSeen(tx, 4, at, at); err != nil {
				t.Fatal(err)
			}
		}
		r.Status = status
		inTx(t, db, func(tx checkout.Tx) error { return tx.RefundInsert(ctx, r) })
		return r
	}
	second := refund(m, checkout.ModeTest, base.Add(2*time.Second), "0xb", "", checkout.RefundPending)
	first := refund(m, checkout.ModeTest, base.Add(time.Second), "0xa", "", checkout.RefundPending)
	confirming := refund(m, checkout.ModeTest, base.Add(3*time.Second), "0xc", "0xpaid", checkout.RefundPending)
	refund(m, checkout.ModeTest, base, "", "", checkout.RefundPending)
	refund(m, checkout.ModeTest, base, "0xd", "0xdone", checkout.RefundSucceeded)
	refund(m, checkout.ModeLive, base, "0xe", "", checkout.RefundPending)
	refund(other, checkout.ModeTest, base, "0xf", "", checkout.RefundPending)
	got, err := db.RefundListPayoutPending(ctx, m.ID, checkout.ModeTest, 10)
	var ids []string
	for _, r := range got {
		ids = append(ids, r.ID)
	}
	if want := []string{first.ID, second.ID, confirming.ID}; err != nil || !reflect.DeepEqual(ids, want) {
		t.Errorf("RefundListPayoutPending = %v, %v; want %v", ids, err, want)
	}
	if got, _ := db.RefundListPayoutPending(ctx, m.ID, checkout.ModeTest, 1); len(got) != 1 || got[0].ID != first.ID {
		t.Errorf("RefundListPayoutPending(limit 1) = %v; want the oldest", got)
	}
}

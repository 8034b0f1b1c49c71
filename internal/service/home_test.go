package service_test

import (
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// homeDay0 is the first day of the home's test range (UTC).
var homeDay0 = checkout.DayOf(t0).AddDate(0, 0, 1)

// homeFigures returns the fixture's test-mode home over r.
func (f *fixture) homeFigures(t *testing.T, r service.HomeRange) *service.Home {
	t.Helper()
	h, err := f.svc.HomeFigures(ctx, checkout.Scope{MerchantID: f.m.ID, Mode: checkout.ModeTest}, r)
	if err != nil {
		t.Fatalf("HomeFigures(%v) = %v", r, err)
	}
	return h
}

// homeScenario pays, refunds and disputes through the service over the
// eight days from homeDay0 (and around them), and returns the figures
// they make: card payments of 15.00 at the range's first and last seconds
// and between, one refunded in part (5.00), one disputed and lost
// unanswered (15.00 and the 15.00 fee), two sessions left unpaid; a
// payment a second before the range and one a second after it, another
// store's payment and a live-mode session and payment, none counted.
func homeScenario(t *testing.T, db *store.DB) (*payFixture, checkout.HomeDay) {
	t.Helper()
	f := newPayFixture(t, db)
	day := func(n int, d time.Duration) time.Time { return homeDay0.AddDate(0, 0, n).Add(d) }
	f.clock.Set(day(0, -time.Second))
	f.paidByCard(t, "4242424242424242")
	f.clock.Set(day(0, 0))
	f.paidByCard(t, "4242424242424242")
	f.clock.Set(day(0, time.Hour))
	b := f.paidByCard(t, "5555555555554444")
	f.clock.Advance(time.Minute)
	if _, err := f.svc.RefundPayment(ctx, service.RefundRequest{PaymentID: b.ID, Params: checkout.RefundParams{Amount: amount(500)}, By: operator}); err != nil {
		t.Fatal(err)
	}
	f.create(t)
	f.clock.Set(day(0, 2*time.Hour))
	_, d := f.disputedByCard(t, "4000000000002685")
	f.clock.Set(d.EvidenceDueBy)
	f.processDue(t)
	if got, _ := f.svc.DisputeOfPayment(ctx, d.PaymentID); got.Status != checkout.DisputeLost || checkout.DayOf(*got.ClosedAt) != day(7, 0) {
		t.Fatalf("the dispute is %s, closed %v; want lost on day 7", got.Status, got.ClosedAt)
	}
	f.create(t)
	live, _ := f.newKey(t, checkout.ModeLive, checkout.KeyBearer)
	ls := f.createWith(t, live, `{"items":[{"name":"Sword","amount":1500}]}`)
	lp := checkout.NewPayment(&checkout.Session{ID: ls.ID, MerchantID: f.m.ID, Mode: checkout.ModeLive, Currency: "USD", TotalAmount: 1500},
		checkout.MethodCard, f.clock.Now())
	if err := lp.Succeed(checkout.DefaultPricing, f.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.PaymentInsert(ctx, lp) }); err != nil {
		t.Fatal(err)
	}
	f.clock.Set(day(7, checkout.Day-time.Second))
	f.paidByCard(t, "4242424242424242")
	f.clock.Set(day(8, 0))
	f.paidByCard(t, "4242424242424242")

	other := newPayFixture(t, db)
	other.clock.Set(day(3, 0))
	other.paidByCard(t, "4242424242424242")

	return f, checkout.HomeDay{Gross: 4 * 1500, Payments: 4, Refunded: 500, DisputesLost: 1500 + 1500, SessionsCreated: 6, SessionsPaid: 4}
}

// The home's figures are the payments made, counted on both sides of the
// range to the second, whether its days are counted as they are read
// (just after the range) or kept (a day later), and day by day.
func TestHomeFigures(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f, want := homeScenario(t, db)
		r := service.HomeRange{From: homeDay0, To: homeDay0.AddDate(0, 0, 7).Add(time.Hour)}
		for _, now := range []time.Time{homeDay0.AddDate(0, 0, 8).Add(time.Second), homeDay0.AddDate(0, 0, 9), homeDay0.AddDate(0, 0, 9)} {
			f.clock.Set(now)
			h := f.homeFigures(t, r)
			h.Total.Day = time.Time{}
			if h.Total != want || !h.From.Equal(homeDay0) || !h.To.Equal(homeDay0.AddDate(0, 0, 7)) || h.Currency != "USD" || len(h.Days) != 8 {
				t.Errorf("at %v: HomeFigures = %v to %v in %s, %d days, total %+v; want %+v over 8 days", now, h.From, h.To, h.Currency, len(h.Days), h.Total, want)
			}
			if got := h.Total.Net(); got != 6000-500-3000 {
				t.Errorf("net = %d; want 2500", got)
			}
			if c, ok := h.Conversion(); !ok || c != 4.0/6 {
				t.Errorf("conversion = %v, %v; want 4/6", c, ok)
			}
			if d0, d7 := h.Days[0], h.Days[7]; d0.Gross != 3*1500 || d0.Refunded != 500 || d7.Gross != 1500 || d7.DisputesLost != 3000 {
				t.Errorf("day 0 = %+v, day 7 = %+v", d0, d7)
			}
		}
		// One day at each end: the payments at its first and last second.
		if h := f.homeFigures(t, service.HomeRange{From: homeDay0, To: homeDay0}); h.Total.Payments != 3 || len(h.Days) != 1 {
			t.Errorf("day 0 alone = %+v", h.Total)
		}
		if h := f.homeFigures(t, service.HomeRange{From: homeDay0.AddDate(0, 0, 8), To: homeDay0.AddDate(0, 0, 8)}); h.Total.Payments != 1 {
			t.Errorf("the day after = %+v; want the payment at its first second", h.Total)
		}
	})
}

// Without a range the home shows the last 30 days, today included; a
// range runs forwards and spans at most HomeMaxDays, and says which end is
// wrong.
func TestHomeRange(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		scope := checkout.Scope{MerchantID: f.m.ID, Mode: checkout.ModeTest}
		h := f.homeFigures(t, service.HomeRange{})
		today := checkout.DayOf(t0)
		if !h.To.Equal(today) || !h.From.Equal(today.AddDate(0, 0, -29)) || len(h.Days) != 30 || h.Total != (checkout.HomeDay{}) {
			t.Errorf("default range = %v to %v, %d days, %+v; want the 30 days to today, empty", h.From, h.To, len(h.Days), h.Total)
		}
		if _, ok := h.Conversion(); ok {
			t.Error("conversion without sessions is known")
		}
		h = f.homeFigures(t, service.HomeRange{To: today.AddDate(0, 0, -5)})
		if !h.From.Equal(today.AddDate(0, 0, -34)) {
			t.Errorf("range to 5 days ago starts %v; want 30 days before its end", h.From)
		}
		if h = f.homeFigures(t, service.HomeRange{From: today.AddDate(0, 0, -365), To: today}); len(h.Days) != service.HomeMaxDays {
			t.Errorf("a range of %d days has %d", service.HomeMaxDays, len(h.Days))
		}
		for _, c := range []struct {
			r     service.HomeRange
			param string
		}{
			{service.HomeRange{From: today, To: today.AddDate(0, 0, -1)}, "to"},
			{service.HomeRange{From: today.AddDate(0, 0, -366), To: today}, "from"},
		} {
			_, err := f.svc.HomeFigures(ctx, scope, c.r)
			if ce, ok := err.(*checkout.Error); !ok || ce.Code != checkout.EValidationFailed || ce.Param != c.param {
				t.Errorf("HomeFigures(%v) = %v; want validation_failed on %s", c.r, err, c.param)
			}
		}
	})
}

// A crypto refund needs the merchant's attention from the buyer's address
// until its payout is seen; failed deliveries are counted over the last 7
// days (the store's count: internal/store's Home/Attention).
func TestHomeAttention(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPayFixture(t, db)
		scope := checkout.Scope{MerchantID: f.m.ID, Mode: checkout.ModeTest}
		attention := func() *service.Attention {
			t.Helper()
			a, err := f.svc.HomeAttention(ctx, scope)
			if err != nil {
				t.Fatal(err)
			}
			return a
		}
		p := f.paidByCrypto(t, "BTC")
		out, err := f.svc.RefundPayment(ctx, service.RefundRequest{Scope: scope, PaymentID: p.ID, Params: checkout.RefundParams{Amount: amount(600)}, By: operator})
		if err != nil {
			t.Fatal(err)
		}
		a := attention()
		if len(a.Payouts) != 0 || a.FailedDeliveries != 0 || !a.FailedSince.Equal(checkout.DayOf(f.clock.Now()).AddDate(0, 0, -6)) {
			t.Errorf("before the buyer's address: %+v; want no payout, no failure, since 6 days ago", a)
		}
		if _, err := f.svc.GiveRefundAddress(ctx, out.Refund.LinkToken, buyerBTC); err != nil {
			t.Fatal(err)
		}
		if a := attention(); len(a.Payouts) != 1 || a.Payouts[0].ID != out.Refund.ID || a.PayoutsMore {
			t.Errorf("awaiting the payout: %+v; want the refund", a.Payouts)
		}
		if other, _ := f.svc.HomeAttention(ctx, checkout.Scope{MerchantID: f.m.ID, Mode: checkout.ModeLive}); len(other.Payouts) != 0 {
			t.Errorf("live mode lists %v", other.Payouts)
		}
		if _, err := f.svc.SimulateRefundPayout(ctx, scope, out.Refund.ID); err != nil {
			t.Fatal(err)
		}
		if a := attention(); len(a.Payouts) != 0 {
			t.Errorf("once the payout is seen: %v; want none", a.Payouts)
		}
	})
}

// The home job keeps every store's hours as they settle, in both modes,
// and yesterday whole once it has ended; a view then reads them as kept (a
// payment written afterwards dated in a kept hour, which the service's
// clock never does, is not counted) and counts the hours after. The purge
// deletes the kept hours two days old.
func TestKeepHome(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPayFixture(t, db)
		hour := func(d int, h time.Duration) time.Time { return homeDay0.AddDate(0, 0, d).Add(h) }
		f.clock.Set(hour(0, 30*time.Minute))
		f.paidByCard(t, "4242424242424242")
		f.clock.Set(hour(0, 2*time.Hour+30*time.Minute))
		f.paidByCard(t, "4242424242424242")
		merchants, err := db.MerchantList(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := f.svc.KeepHome(ctx); err != nil || n != len(merchants) {
			t.Fatalf("KeepHome = %d, %v; want %d stores", n, err, len(merchants))
		}
		// Written behind the service's back into hour 0, which the job kept
		// (settled at 1:30), and into hour 2, which it did not.
		late := func(at time.Time) {
			t.Helper()
			s := f.create(t)
			p := checkout.NewPayment(&checkout.Session{ID: s.ID, MerchantID: f.m.ID, Mode: checkout.ModeTest, Currency: "USD", TotalAmount: 100},
				checkout.MethodCard, at)
			if err := p.Succeed(checkout.DefaultPricing, at); err != nil {
				t.Fatal(err)
			}
			if err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.PaymentInsert(ctx, p) }); err != nil {
				t.Fatal(err)
			}
		}
		late(hour(0, 40*time.Minute))
		late(hour(0, 2*time.Hour+40*time.Minute))
		r := service.HomeRange{From: homeDay0, To: homeDay0}
		if h := f.homeFigures(t, r); h.Total.Gross != 1500+1500+100 || h.Total.Payments != 3 {
			t.Errorf("HomeFigures after KeepHome = %+v; want hour 0 as kept (1500) and hours 1 on counted (1500 + 100)", h.Total)
		}
		// The next day, an hour and a half in: the job keeps day 0 whole.
		f.clock.Set(hour(1, 90*time.Minute))
		if _, err := f.svc.KeepHome(ctx); err != nil {
			t.Fatal(err)
		}
		late(hour(0, 3*time.Hour))
		for _, now := range []time.Time{hour(1, 90*time.Minute), hour(5, 0)} {
			f.clock.Set(now)
			if h := f.homeFigures(t, r); h.Total.Gross != 3100 || h.Total.Payments != 3 {
				t.Errorf("at %v: HomeFigures of day 0 = %+v; want it as kept: 3100 in 3 payments", now, h.Total)
			}
		}
		// The hours of day -1 (which the first round kept as yesterday) and
		// of day 0, 24 a mode, of every store, are purged once two days old.
		for d := 2; d <= 3; d++ {
			f.clock.Set(hour(d, 0))
			if res, err := f.svc.Purge(ctx); err != nil || res.HomeHours != int64(2*24*len(merchants)) {
				t.Errorf("Purge on day %d = %+v, %v; want %d hours", d, res, err, 2*24*len(merchants))
			}
		}
		if h := f.homeFigures(t, r); h.Total.Gross != 3100 {
			t.Errorf("HomeFigures of day 0 after the purge = %+v; want 3100, as kept", h.Total)
		}
	})
}

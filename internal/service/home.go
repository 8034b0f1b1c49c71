package service

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

// The store's home (docs/dashboard.md, Home): a range of UTC days' gross
// volume, refunds, lost disputes, net volume, successful payments and the
// sessions created and paid, in the store's currency and the scope's mode,
// from the stored payments, refunds, disputes and sessions
// (checkout.HomeDay says how each is dated).

const (
	// HomeDefaultDays is the range the home shows unless asked: the last
	// 30 days, today included.
	HomeDefaultDays = 30
	// HomeMaxDays is the longest range the home shows: a year, leap or not.
	HomeMaxDays = 366
	// homeSettle is how long after a day ends its figures are kept as
	// final: longer than any transaction that writes a time of the day
	// takes to commit.
	homeSettle = time.Hour
)

// HomeHoursKept is how long the home's kept hours stay after their day
// began: two days, by when the home job has kept the day whole.
const HomeHoursKept = 2 * checkout.Day

// KeepHome keeps, for every store and mode, the home's figures of
// yesterday and today that have settled and are not kept yet: the hours as
// they end, and yesterday whole once it has. A store's view then counts at
// most the hours not settled yet, however many payments the store takes;
// a view keeps what this has not (the job had not run, or a range reaches
// further back). It returns how many stores' figures it looked at.
func (s *Service) KeepHome(ctx context.Context) (int, error) {
	merchants, err := s.store.MerchantList(ctx)
	if err != nil {
		return 0, err
	}
	settled := s.now().Add(-homeSettle)
	today := checkout.DayOf(settled)
	var errs []error
	for _, m := range merchants {
		for _, mode := range []checkout.Mode{checkout.ModeTest, checkout.ModeLive} {
			if err := s.store.HomeKeep(ctx, checkout.HomeDaysParams{MerchantID: m.ID, Mode: mode, Currency: m.Currency,
				From: today.Add(-checkout.Day), To: today.Add(checkout.Day), Settled: settled}); err != nil {
				if ctx.Err() != nil {
					return 0, err
				}
				errs = append(errs, fmt.Errorf("store %s, %s mode: %w", m.ID, mode, err))
			}
		}
	}
	return len(merchants), errors.Join(errs...)
}

// HomeRange asks for the home's days From to To, both included (UTC days;
// any instant of the day will do). A zero From is HomeDefaultDays before
// To; a zero To is today.
type HomeRange struct{ From, To time.Time }

// Home is a store's figures over a range of days.
type Home struct {
	// From and To are the first and last days (UTC), both included.
	From, To time.Time
	// Currency is the store's: the figures count its payments in it alone.
	Currency string
	// Days are the range's days, in order; Total adds them up.
	Days  []checkout.HomeDay
	Total checkout.HomeDay
}

// Conversion is the share of the sessions created in the range that were
// paid in it, between 0 and 1 (a session created before the range and paid
// in it counts as paid, so a short range may exceed 1); false when no
// session was created.
func (h *Home) Conversion() (float64, bool) {
	if h.Total.SessionsCreated == 0 {
		return 0, false
	}
	return float64(h.Total.SessionsPaid) / float64(h.Total.SessionsCreated), true
}

// dayRange returns r's first and last days (UTC), the defaults filled in
// at now; a validation error names from or to when r runs backwards or
// spans more than maxDays (0: any number).
func dayRange(now time.Time, r HomeRange, maxDays int) (from, to time.Time, err error) {
	to = checkout.DayOf(r.To)
	if r.To.IsZero() {
		to = checkout.DayOf(now)
	}
	from = checkout.DayOf(r.From)
	if r.From.IsZero() {
		from = to.AddDate(0, 0, 1-HomeDefaultDays)
	}
	switch {
	case to.Before(from):
		return from, to, violationsError([]checkout.Violation{{Code: "invalid_value", Param: "to",
			Message: "The end of the date range is before its start."}})
	case maxDays > 0 && to.Sub(from) >= time.Duration(maxDays)*checkout.Day:
		return from, to, violationsError([]checkout.Violation{{Code: "invalid_value", Param: "from",
			Message: fmt.Sprintf("The date range can be at most %d days long; it has %d.", maxDays, int(to.Sub(from)/checkout.Day)+1)}})
	}
	return from, to, nil
}

// HomeFigures returns the scope's figures over r: a validation error names
// from or to when the range runs backwards or is longer than HomeMaxDays.
func (s *Service) HomeFigures(ctx context.Context, scope checkout.Scope, r HomeRange) (*Home, error) {
	if err := s.authorize(ctx, scope.MerchantID, checkout.ActionViewPayments); err != nil {
		return nil, err
	}
	m, err := s.store.MerchantGet(ctx, scope.MerchantID)
	if err != nil {
		return nil, err
	}
	now := s.now()
	from, to, err := dayRange(now, r, HomeMaxDays)
	if err != nil {
		return nil, err
	}
	days, err := s.store.HomeDays(ctx, checkout.HomeDaysParams{MerchantID: scope.MerchantID, Mode: scope.Mode, Currency: m.Currency,
		From: from, To: to.Add(checkout.Day), Settled: now.Add(-homeSettle)})
	if err != nil {
		return nil, err
	}
	h := &Home{From: from, To: to, Currency: m.Currency, Days: days}
	for _, d := range days {
		h.Total.Add(d)
	}
	return h, nil
}

const (
	// AttentionFailedDays is how far back the home counts failed
	// deliveries: the last 7 days, today included.
	AttentionFailedDays = 7
	// MaxAttentionFailed is where the count of failed deliveries stops
	// ("1,000 or more").
	MaxAttentionFailed = 1000
	// MaxAttentionPayouts bounds the crypto refunds the home lists.
	MaxAttentionPayouts = 20
)

// Attention is what needs a merchant's attention on the store's home, but
// for the open disputes (OpenDisputes).
type Attention struct {
	// FailedDeliveries counts the deliveries that failed, created since
	// FailedSince (a UTC day's start), up to MaxAttentionFailed.
	FailedDeliveries int
	FailedSince      time.Time
	// Payouts are the crypto refunds waiting for the merchant's payout to
	// the buyer's address, oldest first, at most MaxAttentionPayouts;
	// PayoutsMore says there may be more.
	Payouts     []*checkout.Refund
	PayoutsMore bool
}

// HomeAttention returns what needs attention in the scope: its failed
// webhook deliveries of the last AttentionFailedDays, and its crypto
// refunds waiting for the merchant's payout.
func (s *Service) HomeAttention(ctx context.Context, scope checkout.Scope) (*Attention, error) {
	if err := s.authorize(ctx, scope.MerchantID, checkout.ActionViewPayments); err != nil {
		return nil, err
	}
	a := &Attention{FailedSince: checkout.DayOf(s.now()).AddDate(0, 0, 1-AttentionFailedDays)}
	var err error
	a.FailedDeliveries, err = s.store.DeliveryCountFailed(ctx, scope.MerchantID, scope.Mode, a.FailedSince, MaxAttentionFailed)
	if err != nil {
		return nil, err
	}
	// The pending refunds with an address are those awaiting the payout and
	// those whose payout is confirming; both are few, and the second kind
	// needs nothing of the merchant.
	pending, err := s.store.RefundListPayoutPending(ctx, scope.MerchantID, scope.Mode, 5*MaxAttentionPayouts)
	if err != nil {
		return nil, err
	}
	for _, r := range pending {
		if r.Crypto == nil || r.Crypto.Stage() != checkout.StageAwaitingPayout {
			continue
		}
		if len(a.Payouts) == MaxAttentionPayouts {
			a.PayoutsMore = true
			break
		}
		a.Payouts = append(a.Payouts, r)
	}
	return a, nil
}

package checkout

import "time"

// The store's home (docs/dashboard.md, Home): what a range of days took in,
// in one currency and mode. Every figure is dated by when its money moved:
// a payment's amount on the day it succeeded, a refund on the day it
// succeeded, a lost dispute on the day it closed, a session on the day it
// was created or paid. An ended day's figures never change again.

// HomeDay is one UTC day's figures of a store in one mode and currency.
type HomeDay struct {
	// Day is the day's first instant, in UTC.
	Day time.Time
	// Gross is the amount of the payments that succeeded that day (what
	// followed them included: a payment refunded later still counts on the
	// day it was paid); Payments how many they were.
	Gross    int64
	Payments int64
	// Refunded is the amount of the refunds that succeeded that day, of
	// payments that had succeeded (a failed payment whose money came all
	// the same is refunded without having counted in Gross).
	Refunded int64
	// DisputesLost is what the disputes lost that day took: each one's
	// amount and the card network's fee.
	DisputesLost int64
	// SessionsCreated counts the sessions created that day, SessionsPaid
	// those paid (completed) that day, in any currency.
	SessionsCreated int64
	SessionsPaid    int64
}

// Net is the day's gross volume less its refunds and lost disputes.
func (d HomeDay) Net() int64 { return d.Gross - d.Refunded - d.DisputesLost }

// Add adds o's figures to d's.
func (d *HomeDay) Add(o HomeDay) {
	d.Gross += o.Gross
	d.Payments += o.Payments
	d.Refunded += o.Refunded
	d.DisputesLost += o.DisputesLost
	d.SessionsCreated += o.SessionsCreated
	d.SessionsPaid += o.SessionsPaid
}

// HomeDaysParams asks for a store's days From to To (UTC days' first
// instants; To excluded) in one mode and currency. The days that ended
// before Settled are kept once counted: every write dated in them has
// committed by then.
type HomeDaysParams struct {
	MerchantID string
	Mode       Mode
	Currency   string
	From, To   time.Time
	Settled    time.Time
}

// Day is 24 hours: the home counts UTC days, which have no daylight saving.
const Day = 24 * time.Hour

// DayOf returns the first instant of t's UTC day.
func DayOf(t time.Time) time.Time { return t.UTC().Truncate(Day) }

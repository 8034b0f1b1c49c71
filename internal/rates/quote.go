package rates

import "time"

// QuoteValidity is how long a live quote's coin amount holds by default:
// long enough for a buyer to open a wallet and pay, short enough that the
// rate cannot move far. The page shows the quote's expiry.
const QuoteValidity = 15 * time.Minute

// QuoteExpiry returns when a quote made at createdAt stops holding:
// validity after it, or QuoteValidity after it when validity is zero or
// less.
func QuoteExpiry(createdAt time.Time, validity time.Duration) time.Time {
	if validity <= 0 {
		validity = QuoteValidity
	}
	return createdAt.Add(validity)
}

// QuoteValid reports whether a quote made at createdAt still holds at now,
// and when it expires (QuoteExpiry): it holds while now is before the
// expiry, and not at the expiry itself.
//
// The rule built on it: a quote that no longer holds is never honoured at
// its rate. Before a buyer is shown or pays an expired quote, the session
// is quoted again at a fresh rate from the Source (same address or a new
// one, as the caller decides). A payment first seen after its quote
// expired is judged against a fresh quote made at that moment: it pays
// the session if it is at least that fresh amount, and is an underpayment
// otherwise, whatever the expired quote said.
func QuoteValid(createdAt, now time.Time, validity time.Duration) (valid bool, expiresAt time.Time) {
	expiresAt = QuoteExpiry(createdAt, validity)
	return now.Before(expiresAt), expiresAt
}

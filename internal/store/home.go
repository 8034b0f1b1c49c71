package store

import (
	"context"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

// The store's home figures (checkout.HomeDay, migration 0024): the days
// that ended before the caller's settled time are read from home_days, and
// those missing there are counted once and kept; the days after are counted
// at each read. A count reads, for each figure, the index entries of its
// scope and days (payments_succeeded, refunds_succeeded, disputes_lost,
// sessions_list, sessions_completed), grouped by day.

const (
	daySeconds = 86400
	dayMillis  = daySeconds * 1000
)

// homeQueries are the counts of a range of days: $1 the store, $2 the mode,
// $3 and $4 the first and the excluded last instant (seconds or
// milliseconds, as the column is), $5 the currency. Each returns the day
// number and its figures.
var homeQueries = struct{ gross, refunded, disputes, created, paid string }{
	gross: `SELECT succeeded_at / 86400, CAST(SUM(amount) AS BIGINT), COUNT(*) FROM payments
		WHERE store_id = $1 AND mode = $2 AND captured = 1 AND succeeded_at >= $3 AND succeeded_at < $4 AND currency = $5 GROUP BY 1`,
	refunded: `SELECT r.updated_at_ms / 86400000, CAST(SUM(r.amount) AS BIGINT) FROM refunds r JOIN payments p ON p.id = r.payment_id
		WHERE r.store_id = $1 AND r.mode = $2 AND r.status = 'succeeded' AND r.updated_at_ms >= $3 AND r.updated_at_ms < $4 AND r.currency = $5
		AND p.captured = 1 GROUP BY 1`,
	disputes: `SELECT closed_at_ms / 86400000, CAST(SUM(amount + fee) AS BIGINT) FROM disputes
		WHERE store_id = $1 AND mode = $2 AND status = 'lost' AND closed_at_ms >= $3 AND closed_at_ms < $4 AND currency = $5 GROUP BY 1`,
	created: `SELECT created_at / 86400, COUNT(*) FROM sessions
		WHERE store_id = $1 AND mode = $2 AND created_at >= $3 AND created_at < $4 GROUP BY 1`,
	paid: `SELECT completed_at / 86400, COUNT(*) FROM sessions
		WHERE store_id = $1 AND mode = $2 AND completed_at IS NOT NULL AND completed_at >= $3 AND completed_at < $4 GROUP BY 1`,
}

// dayNumber is t's UTC day as home_days numbers it.
func dayNumber(t time.Time) int64 { return t.Unix() / daySeconds }

func dayTime(n int64) time.Time { return time.Unix(n*daySeconds, 0).UTC() }

// HomeDays returns a store's figures for each day of p.From to p.To.
func (db *DB) HomeDays(ctx context.Context, p checkout.HomeDaysParams) ([]checkout.HomeDay, error) {
	from, to := dayNumber(checkout.DayOf(p.From)), dayNumber(checkout.DayOf(p.To))
	if from >= to {
		return []checkout.HomeDay{}, nil
	}
	days := map[int64]checkout.HomeDay{}
	settled := min(to, dayNumber(checkout.DayOf(p.Settled)))
	if from < settled {
		kept, err := db.homeDaysKept(ctx, p, from, settled)
		if err != nil {
			return nil, err
		}
		first, last := int64(-1), int64(-1)
		for d := from; d < settled; d++ {
			if _, ok := kept[d]; !ok {
				if first < 0 {
					first = d
				}
				last = d
			}
		}
		if first >= 0 {
			counted, err := db.homeDaysCount(ctx, p, first, last+1)
			if err != nil {
				return nil, err
			}
			if err := db.homeDaysKeep(ctx, p, first, last+1, kept, counted); err != nil {
				return nil, err
			}
			for d := first; d <= last; d++ {
				if _, ok := kept[d]; !ok {
					kept[d] = counted[d]
				}
			}
		}
		days = kept
	}
	if settled < to {
		counted, err := db.homeDaysCount(ctx, p, max(from, settled), to)
		if err != nil {
			return nil, err
		}
		for d, f := range counted {
			days[d] = f
		}
	}
	out := make([]checkout.HomeDay, 0, to-from)
	for d := from; d < to; d++ {
		f := days[d]
		f.Day = dayTime(d)
		out = append(out, f)
	}
	return out, nil
}

// homeDaysKept returns the kept days from to to (excluded), by number.
func (db *DB) homeDaysKept(ctx context.Context, p checkout.HomeDaysParams, from, to int64) (map[int64]checkout.HomeDay, error) {
	rows, err := db.readRows(ctx, `SELECT day, gross, payments, refunded, disputes_lost, sessions_created, sessions_paid FROM home_days
		WHERE store_id = $1 AND mode = $2 AND currency = $3 AND day >= $4 AND day < $5`, p.MerchantID, string(p.Mode), p.Currency, from, to)
	if err != nil {
		return nil, db.translate(err)
	}
	defer rows.Close()
	kept := map[int64]checkout.HomeDay{}
	for rows.Next() {
		var d int64
		var f checkout.HomeDay
		if err := rows.Scan(&d, &f.Gross, &f.Payments, &f.Refunded, &f.DisputesLost, &f.SessionsCreated, &f.SessionsPaid); err != nil {
			return nil, db.translate(err)
		}
		kept[d] = f
	}
	return kept, db.translate(rows.Err())
}

// homeDaysKeep keeps the counted days from to to (excluded) that were not
// kept yet. Another node may keep them at the same time, with the same
// figures: the first one stays.
func (db *DB) homeDaysKeep(ctx context.Context, p checkout.HomeDaysParams, from, to int64, kept, counted map[int64]checkout.HomeDay) error {
	return db.InTx(ctx, func(t checkout.Tx) error {
		tx := t.(*Tx)
		for d := from; d < to; d++ {
			if _, ok := kept[d]; ok {
				continue
			}
			f := counted[d]
			if _, err := tx.exec(ctx, `INSERT INTO home_days (store_id, mode, currency, day, gross, payments, refunded, disputes_lost,
				sessions_created, sessions_paid) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
				ON CONFLICT (store_id, mode, currency, day) DO NOTHING`,
				p.MerchantID, string(p.Mode), p.Currency, d, f.Gross, f.Payments, f.Refunded, f.DisputesLost, f.SessionsCreated, f.SessionsPaid); err != nil {
				return tx.db.translate(err)
			}
		}
		return nil
	})
}

// homeDaysCount counts the days from to to (excluded) off the indexes,
// by number; a day with nothing in it is missing.
func (db *DB) homeDaysCount(ctx context.Context, p checkout.HomeDaysParams, from, to int64) (map[int64]checkout.HomeDay, error) {
	days := map[int64]checkout.HomeDay{}
	q := homeQueries
	sec := []any{p.MerchantID, string(p.Mode), from * daySeconds, to * daySeconds, p.Currency}
	ms := []any{p.MerchantID, string(p.Mode), from * dayMillis, to * dayMillis, p.Currency}
	count := func(query string, args []any, n int, set func(f *checkout.HomeDay, v []int64)) error {
		rows, err := db.readRows(ctx, query, args...)
		if err != nil {
			return db.translate(err)
		}
		defer rows.Close()
		for rows.Next() {
			var d int64
			v := make([]int64, n)
			dest := []any{&d}
			for i := range v {
				dest = append(dest, &v[i])
			}
			if err := rows.Scan(dest...); err != nil {
				return db.translate(err)
			}
			f := days[d]
			set(&f, v)
			days[d] = f
		}
		return db.translate(rows.Err())
	}
	if err := count(q.gross, sec, 2, func(f *checkout.HomeDay, v []int64) { f.Gross, f.Payments = v[0], v[1] }); err != nil {
		return nil, err
	}
	if err := count(q.refunded, ms, 1, func(f *checkout.HomeDay, v []int64) { f.Refunded = v[0] }); err != nil {
		return nil, err
	}
	if err := count(q.disputes, ms, 1, func(f *checkout.HomeDay, v []int64) { f.DisputesLost = v[0] }); err != nil {
		return nil, err
	}
	if err := count(q.created, sec[:4], 1, func(f *checkout.HomeDay, v []int64) { f.SessionsCreated = v[0] }); err != nil {
		return nil, err
	}
	if err := count(q.paid, sec[:4], 1, func(f *checkout.HomeDay, v []int64) { f.SessionsPaid = v[0] }); err != nil {
		return nil, err
	}
	return days, nil
}

// DeliveryCountFailed counts a store's deliveries of one mode that failed
// and were created at or after since, up to limit (the count stops there),
// from deliveries_scope_status.
func (db *DB) DeliveryCountFailed(ctx context.Context, merchantID string, mode checkout.Mode, since time.Time, limit int) (int, error) {
	var n int
	err := db.readRow(ctx, deliveryCountFailedQuery, merchantID, string(mode), since.UnixMilli(), limit).Scan(&n)
	return n, db.translate(err)
}

const deliveryCountFailedQuery = `SELECT COUNT(*) FROM
	(SELECT 1 FROM deliveries WHERE store_id = $1 AND mode = $2 AND status = 'failed' AND created_at_ms >= $3 ORDER BY created_at_ms, id LIMIT $4) failed`

// RefundListPayoutPending returns at most limit of a store's pending
// refunds of one mode that have a payout address (crypto refunds waiting
// for the merchant's payout, or confirming it), oldest first, from
// refunds_payout_pending.
func (db *DB) RefundListPayoutPending(ctx context.Context, merchantID string, mode checkout.Mode, limit int) ([]*checkout.Refund, error) {
	rows, err := db.readRows(ctx, refundListPayoutPendingQuery, merchantID, string(mode), limit)
	if err != nil {
		return nil, db.translate(err)
	}
	return collectSkipping(db, rows, "refunds", scanRefund)
}

const refundListPayoutPendingQuery = `SELECT ` + refundColumns + ` FROM refunds
	WHERE store_id = $1 AND mode = $2 AND status = 'pending' AND payout_address IS NOT NULL ORDER BY created_at_ms, id LIMIT $3`

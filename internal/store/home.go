package store

import (
	"context"
	"strconv"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

// The store's home figures (checkout.HomeDay, migrations 0024 and 0029)
// are kept at two levels: home_days keeps each ended day, home_hours each
// ended hour. A day missing from home_days is built from its hours; an hour
// missing from home_hours is counted off the indexes of each figure's scope
// and time (payments_succeeded, refunds_succeeded, disputes_lost,
// sessions_list, sessions_completed), grouped by hour. A day or hour is
// kept once it ended before the caller's settled time; the rest of the
// range, at most the hours since then, is counted at each read.

const (
	daySeconds  = 86400
	hourSeconds = 3600
)

// homeLevel is one level of the kept figures: its table, the column that
// numbers its buckets, and a bucket's length. A bucket of a level with a
// finer one is built from the finer buckets; of the finest, counted.
type homeLevel struct {
	table, column string
	seconds       int64
	finer         *homeLevel
	count         homeQuerySet
}

var (
	homeHours     = &homeLevel{table: "home_hours", column: "hour", seconds: hourSeconds, count: homeQueries(hourSeconds)}
	homeDaysLevel = &homeLevel{table: "home_days", column: "day", seconds: daySeconds, finer: homeHours}
)

// homeQuerySet are the counts of a range of buckets: $1 the store, $2 the
// mode, $3 and $4 the first and the excluded last instant (seconds or
// milliseconds, as the column is), $5 the currency. Each returns the bucket
// number and its figures.
type homeQuerySet struct{ gross, refunded, disputes, created, paid string }

func homeQueries(seconds int64) homeQuerySet {
	s, ms := strconv.FormatInt(seconds, 10), strconv.FormatInt(seconds*1000, 10)
	return homeQuerySet{
		gross: `SELECT succeeded_at / ` + s + `, CAST(SUM(amount) AS BIGINT), COUNT(*) FROM payments
		WHERE store_id = $1 AND mode = $2 AND captured = 1 AND succeeded_at >= $3 AND succeeded_at < $4 AND currency = $5 GROUP BY 1`,
		refunded: `SELECT r.updated_at_ms / ` + ms + `, CAST(SUM(r.amount) AS BIGINT) FROM refunds r JOIN payments p ON p.id = r.payment_id
		WHERE r.store_id = $1 AND r.mode = $2 AND r.status = 'succeeded' AND r.updated_at_ms >= $3 AND r.updated_at_ms < $4 AND r.currency = $5
		AND p.captured = 1 GROUP BY 1`,
		disputes: `SELECT closed_at_ms / ` + ms + `, CAST(SUM(amount + fee) AS BIGINT) FROM disputes
		WHERE store_id = $1 AND mode = $2 AND status = 'lost' AND closed_at_ms >= $3 AND closed_at_ms < $4 AND currency = $5 GROUP BY 1`,
		created: `SELECT created_at / ` + s + `, COUNT(*) FROM sessions
		WHERE store_id = $1 AND mode = $2 AND created_at >= $3 AND created_at < $4 GROUP BY 1`,
		paid: `SELECT completed_at / ` + s + `, COUNT(*) FROM sessions
		WHERE store_id = $1 AND mode = $2 AND completed_at IS NOT NULL AND completed_at >= $3 AND completed_at < $4 GROUP BY 1`,
	}
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
	days, err := db.homeFigures(ctx, p, homeDaysLevel, from, to, p.Settled.Unix(), true)
	if err != nil {
		return nil, err
	}
	out := make([]checkout.HomeDay, 0, to-from)
	for d := from; d < to; d++ {
		f := days[d]
		f.Day = dayTime(d)
		out = append(out, f)
	}
	return out, nil
}

// HomeKeep keeps the days and hours of p.From to p.To that ended before
// p.Settled and are not kept yet, and counts nothing after.
func (db *DB) HomeKeep(ctx context.Context, p checkout.HomeDaysParams) error {
	from, to := dayNumber(checkout.DayOf(p.From)), dayNumber(checkout.DayOf(p.To))
	if from >= to {
		return nil
	}
	_, err := db.homeFigures(ctx, p, homeDaysLevel, from, to, p.Settled.Unix(), false)
	return err
}

// HomeHoursPurge deletes the kept hours that began before t, in batches:
// the home job keeps each ended day, which is then read from home_days.
func (db *DB) HomeHoursPurge(ctx context.Context, before time.Time) (int64, error) {
	return db.purgeWhere(ctx, "home_hours", "store_id, mode, currency, hour", "hour < $1", before.Unix()/hourSeconds)
}

// homeFigures returns l's buckets from to to (excluded), by number, those
// with nothing in them missing. The buckets that ended by settled (an
// instant, in Unix seconds) are read kept, or built and kept; the others
// are built at each read, down to the finest level, where they are counted
// when open is set and left out when it is not.
func (db *DB) homeFigures(ctx context.Context, p checkout.HomeDaysParams, l *homeLevel, from, to, settled int64, open bool) (map[int64]checkout.HomeDay, error) {
	out := map[int64]checkout.HomeDay{}
	if end := min(to, settled/l.seconds); from < end {
		kept, err := db.homeKept(ctx, p, l, from, end)
		if err != nil {
			return nil, err
		}
		first, last := int64(-1), int64(-1)
		for n := from; n < end; n++ {
			if _, ok := kept[n]; !ok {
				if first < 0 {
					first = n
				}
				last = n
			}
		}
		if first >= 0 {
			built, err := db.homeBuild(ctx, p, l, first, last+1, (last+1)*l.seconds, true)
			if err != nil {
				return nil, err
			}
			if err := db.homeKeep(ctx, p, l, first, last+1, kept, built); err != nil {
				return nil, err
			}
			for n := first; n <= last; n++ {
				if _, ok := kept[n]; !ok {
					kept[n] = built[n]
				}
			}
		}
		out = kept
	}
	if start := max(from, settled/l.seconds); start < to && (open || l.finer != nil) {
		built, err := db.homeBuild(ctx, p, l, start, to, settled, open)
		if err != nil {
			return nil, err
		}
		for n, f := range built {
			out[n] = f
		}
	}
	return out, nil
}

// homeBuild returns l's buckets from to to (excluded), by number: the sums
// of the finer level's buckets (settled and open passed on), or counted off
// the indexes at the finest.
func (db *DB) homeBuild(ctx context.Context, p checkout.HomeDaysParams, l *homeLevel, from, to, settled int64, open bool) (map[int64]checkout.HomeDay, error) {
	if l.finer == nil {
		return db.homeCount(ctx, p, l, from, to)
	}
	r := l.seconds / l.finer.seconds
	fine, err := db.homeFigures(ctx, p, l.finer, from*r, to*r, settled, open)
	if err != nil {
		return nil, err
	}
	out := map[int64]checkout.HomeDay{}
	for n, f := range fine {
		sum := out[n/r]
		sum.Add(f)
		out[n/r] = sum
	}
	return out, nil
}

// keptQuery reads l's kept buckets: $1 the store, $2 the mode, $3 the
// currency, $4 and $5 the first and the excluded last bucket.
func (l *homeLevel) keptQuery() string {
	return `SELECT ` + l.column + `, gross, payments, refunded, disputes_lost, sessions_created, sessions_paid FROM ` + l.table + `
		WHERE store_id = $1 AND mode = $2 AND currency = $3 AND ` + l.column + ` >= $4 AND ` + l.column + ` < $5`
}

// homeKept returns l's kept buckets from to to (excluded), by number.
func (db *DB) homeKept(ctx context.Context, p checkout.HomeDaysParams, l *homeLevel, from, to int64) (map[int64]checkout.HomeDay, error) {
	rows, err := db.readRows(ctx, l.keptQuery(), p.MerchantID, string(p.Mode), p.Currency, from, to)
	if err != nil {
		return nil, db.translate(err)
	}
	defer rows.Close()
	kept := map[int64]checkout.HomeDay{}
	for rows.Next() {
		var n int64
		var f checkout.HomeDay
		if err := rows.Scan(&n, &f.Gross, &f.Payments, &f.Refunded, &f.DisputesLost, &f.SessionsCreated, &f.SessionsPaid); err != nil {
			return nil, db.translate(err)
		}
		kept[n] = f
	}
	return kept, db.translate(rows.Err())
}

// homeKeep keeps l's built buckets from to to (excluded) that were not
// kept yet, zeros included. Another node may keep them at the same time,
// with the same figures: the first one stays.
func (db *DB) homeKeep(ctx context.Context, p checkout.HomeDaysParams, l *homeLevel, from, to int64, kept, built map[int64]checkout.HomeDay) error {
	return db.InTx(ctx, func(t checkout.Tx) error {
		tx := t.(*Tx)
		for n := from; n < to; n++ {
			if _, ok := kept[n]; ok {
				continue
			}
			f := built[n]
			if _, err := tx.exec(ctx, `INSERT INTO `+l.table+` (store_id, mode, currency, `+l.column+`, gross, payments, refunded, disputes_lost,
				sessions_created, sessions_paid) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
				ON CONFLICT (store_id, mode, currency, `+l.column+`) DO NOTHING`,
				p.MerchantID, string(p.Mode), p.Currency, n, f.Gross, f.Payments, f.Refunded, f.DisputesLost, f.SessionsCreated, f.SessionsPaid); err != nil {
				return tx.db.translate(err)
			}
		}
		return nil
	})
}

// homeCount counts l's buckets from to to (excluded) off the indexes, by
// number; a bucket with nothing in it is missing.
func (db *DB) homeCount(ctx context.Context, p checkout.HomeDaysParams, l *homeLevel, from, to int64) (map[int64]checkout.HomeDay, error) {
	days := map[int64]checkout.HomeDay{}
	q := l.count
	sec := []any{p.MerchantID, string(p.Mode), from * l.seconds, to * l.seconds, p.Currency}
	ms := []any{p.MerchantID, string(p.Mode), from * l.seconds * 1000, to * l.seconds * 1000, p.Currency}
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

package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

// The dashboard's reads of deliveries: the list, an endpoint's health, and
// Retry all failed. Each reads one index bounded by its store and mode or
// its endpoint (migration 0010), never every delivery kept.

// deliveryListIndex names the index that serves a filter: one that holds
// its equality columns followed by (created_at_ms, id), so that it filters
// and orders at once and a page reads only its own rows. An event id
// selects a delivery per endpoint at most, so its index, which does not
// order, costs a sort of a handful of rows.
func deliveryListIndex(f *checkout.DeliveryFilter) string {
	switch {
	case f.EventID != "":
		return "deliveries_event"
	case f.EndpointID != "" && f.Status != "":
		return "deliveries_endpoint_status"
	case f.EndpointID != "" && f.EventType != "":
		return "deliveries_endpoint_type"
	case f.EndpointID != "":
		return "deliveries_endpoint_created"
	case f.Status != "":
		return "deliveries_scope_status"
	case f.EventType != "":
		return "deliveries_scope_type"
	}
	return "deliveries_scope_created"
}

// deliveryListQuery builds the query of a page of f, and its arguments. The
// query's text depends only on which filters are set, so there are few of
// them and each is prepared once (stmtCache).
func (db *DB) deliveryListQuery(f *checkout.DeliveryFilter) (string, []any) {
	var where []string
	var args []any
	cond := func(sql string, arg any) {
		args = append(args, arg)
		where = append(where, strings.ReplaceAll(sql, "?", "$"+strconv.Itoa(len(args))))
	}
	// Store and mode always: the scope of the list, whatever else is asked.
	cond("store_id = ?", f.MerchantID)
	cond("mode = ?", string(f.Mode))
	if f.EndpointID != "" {
		cond("endpoint_id = ?", f.EndpointID)
	}
	if f.Status != "" {
		cond("status = ?", string(f.Status))
	}
	if f.EventType != "" {
		cond("event_type = ?", f.EventType)
	}
	if f.EventID != "" {
		cond("event_id = ?", f.EventID)
	}
	if !f.From.IsZero() {
		cond("created_at_ms >= ?", f.From.UnixMilli())
	}
	// One upper bound only, the tighter: given two, SQLite's index range
	// takes one and checks the other on every row in between (a page deep
	// in a day's range read the day's rows down to its cursor).
	after := !f.After.IsZero()
	if !f.To.IsZero() && (!after || !f.To.After(f.After.At)) {
		// (An end at or before the cursor's time is tighter: created
		// before it is also before the cursor.)
		cond("created_at_ms < ?", f.To.UnixMilli())
		after = false
	}
	if after {
		// (created_at_ms, id) < (cursor): written so that the index's range
		// starts at the cursor's time on both databases.
		cond("created_at_ms <= ?", f.After.At.UnixMilli())
		n := len(args)
		args = append(args, f.After.ID)
		where = append(where, "(created_at_ms < $"+strconv.Itoa(n)+" OR id < $"+strconv.Itoa(n+1)+")")
	}
	args = append(args, f.Limit+1)
	q := `SELECT ` + deliveryColumns + ` FROM deliveries` + db.dialect.IndexedBy(deliveryListIndex(f)) +
		` WHERE ` + strings.Join(where, " AND ") +
		` ORDER BY created_at_ms DESC, id DESC LIMIT $` + strconv.Itoa(len(args))
	return q, args
}

// DeliveryListPage returns a page of deliveries selected by f, newest
// first, with the cursor of the next page when there is one.
func (db *DB) DeliveryListPage(ctx context.Context, f checkout.DeliveryFilter) (checkout.Page[*checkout.Delivery], error) {
	if f.Limit <= 0 {
		f.Limit = checkout.DefaultDeliveryPageSize
	}
	q, args := db.deliveryListQuery(&f)
	rows, err := db.readRows(ctx, q, args...)
	if err != nil {
		return checkout.Page[*checkout.Delivery]{}, db.translate(err)
	}
	ds, err := collect(db, rows, scanDelivery)
	if err != nil {
		return checkout.Page[*checkout.Delivery]{}, err
	}
	page := checkout.Page[*checkout.Delivery]{Items: ds}
	if len(ds) > f.Limit {
		page.Items = ds[:f.Limit]
		page.Next = checkout.DeliveryCursor(page.Items[f.Limit-1]).String()
	}
	return page, nil
}

// The queries of an endpoint's health and of Retry all failed. The
// conditions on status and error are those of the partial indexes they
// read (migration 0010), written as the indexes are so that both databases
// see they may use them.
const (
	// healthCountsQuery counts the deliveries that finished in the week
	// ($2 to $4) and the day ($3 to $4) by outcome, from
	// deliveries_endpoint_finished.
	healthCountsQuery = `SELECT status, COUNT(*), COALESCE(SUM(CASE WHEN updated_at_ms >= $3 THEN 1 ELSE 0 END), 0)
		FROM deliveries WHERE endpoint_id = $1 AND status IN ('succeeded', 'failed') AND updated_at_ms >= $2 AND updated_at_ms <= $4
		GROUP BY status`
	// healthQueuedQuery counts the pending deliveries, from
	// deliveries_pending_endpoint or deliveries_endpoint_status.
	healthQueuedQuery = `SELECT COUNT(*) FROM deliveries WHERE endpoint_id = $1 AND status = 'pending'`
	// healthLastSuccessQuery, healthLastFailureQuery and
	// healthFailingSinceQuery read one entry of
	// delivery_attempts_endpoint_ok or _failed each.
	healthLastSuccessQuery = `SELECT MAX(started_at_ms) FROM delivery_attempts WHERE endpoint_id = $1 AND error = ''`
	healthLastFailureQuery = `SELECT ` + attemptColumns + ` FROM delivery_attempts
		WHERE endpoint_id = $1 AND error <> '' ORDER BY started_at_ms DESC LIMIT 1`
	healthFailingSinceQuery = `SELECT MIN(started_at_ms) FROM delivery_attempts WHERE endpoint_id = $1 AND error <> '' AND started_at_ms > $2`
	// retryableQuery reads deliveries_endpoint_retryable (%s is the
	// dialect's IndexedBy: SQLite would take deliveries_endpoint_status and
	// read past every delivery resent before).
	retryableQuery = `SELECT ` + deliveryColumns + ` FROM deliveries%s
		WHERE endpoint_id = $1 AND status = 'failed' AND resent_as = '' AND created_at_ms >= $2
		ORDER BY created_at_ms, id LIMIT $3`
)

// EndpointHealthGet reads an endpoint's health as of now: counts of
// finished deliveries through deliveries_endpoint_finished (the week's
// finished deliveries of one endpoint), the queue through
// deliveries_pending_endpoint, and the last success, last failure and start
// of the current run of failures each one probe of the partial indexes of
// attempts by endpoint. The figures are read one after another, not in one
// snapshot: an attempt recorded meanwhile may show in one and not another,
// which a glance at health can bear.
func (db *DB) EndpointHealthGet(ctx context.Context, endpointID string, now time.Time) (*checkout.EndpointHealth, error) {
	h := &checkout.EndpointHealth{EndpointID: endpointID, At: now}
	if err := db.endpointCounts(ctx, h); err != nil {
		return nil, db.translate(err)
	}
	err := db.readRow(ctx, healthQueuedQuery, endpointID).Scan(&h.Queued)
	if err != nil {
		return nil, db.translate(err)
	}
	var lastOK sql.NullInt64
	err = db.readRow(ctx, healthLastSuccessQuery, endpointID).Scan(&lastOK)
	if err != nil {
		return nil, db.translate(err)
	}
	if lastOK.Valid {
		h.LastSuccessAt = time.UnixMilli(lastOK.Int64)
	}
	a, err := scanAttempt(db.readRow(ctx, healthLastFailureQuery, endpointID))
	if errors.Is(err, sql.ErrNoRows) {
		return h, nil
	}
	if err != nil {
		return nil, db.translate(err)
	}
	h.LastFailure = a
	var since sql.NullInt64
	err = db.readRow(ctx, healthFailingSinceQuery, endpointID, lastOK.Int64).Scan(&since)
	if err != nil {
		return nil, db.translate(err)
	}
	if since.Valid {
		h.FailingSince = time.UnixMilli(since.Int64)
	}
	return h, nil
}

// endpointCounts counts the deliveries of h's endpoint that finished in
// the week and the day before h.At. The conditions on status are those of
// the partial index deliveries_endpoint_finished, written as it is so that
// both databases use it.
func (db *DB) endpointCounts(ctx context.Context, h *checkout.EndpointHealth) error {
	rows, err := db.readRows(ctx, healthCountsQuery,
		h.EndpointID, h.At.Add(-7*24*time.Hour).UnixMilli(), h.At.Add(-24*time.Hour).UnixMilli(), h.At.UnixMilli())
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var status string
		var week, day int64
		if err := rows.Scan(&status, &week, &day); err != nil {
			return err
		}
		switch checkout.DeliveryStatus(status) {
		case checkout.DeliverySucceeded:
			h.Week.Succeeded, h.Day.Succeeded = week, day
		case checkout.DeliveryFailed:
			h.Week.Failed, h.Day.Failed = week, day
		}
	}
	return rows.Err()
}

// DeliveryListRetryable returns an endpoint's failed deliveries created at
// or after since and never resent, oldest first, at most limit, locked.
// The conditions are those of the partial index
// deliveries_endpoint_retryable, written as it is so that both databases
// use it.
func (tx *Tx) DeliveryListRetryable(ctx context.Context, endpointID string, since time.Time, limit int) ([]*checkout.Delivery, error) {
	rows, err := tx.rows(ctx, fmt.Sprintf(retryableQuery, tx.db.dialect.IndexedBy("deliveries_endpoint_retryable"))+tx.db.dialect.ForUpdate, endpointID, since.UnixMilli(), limit)
	if err != nil {
		return nil, tx.db.translate(err)
	}
	return collect(tx.db, rows, scanDelivery)
}

// DeliveryMarkResent records a delivery's newest resend.
func (tx *Tx) DeliveryMarkResent(ctx context.Context, id, resentAs string) error {
	res, err := tx.exec(ctx, `UPDATE deliveries SET resent_as = $2 WHERE id = $1`, id, resentAs)
	if err != nil {
		return tx.db.translate(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return checkout.DeliveryNotFound(id)
	}
	return nil
}

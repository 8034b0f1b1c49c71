package store

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

// The CSV exports (service.ExportSessions, service.ExportPayments) read a
// store's sessions or payments of a date range a page at a time, oldest
// first, each page after the last row of the one before (keyset): off
// sessions_list and payments_list, a page costs its rows wherever it is in
// the range, and no page holds more than its limit.

// exportStart is where a page of an export starts: at the cursor when it
// is in the range, else at the range's start; id is the cursor's, "" at
// the range's start (every id is greater).
func exportStart(p checkout.ExportParams, unit func(time.Time) int64) (at int64, id string) {
	if p.After.IsZero() || p.After.At.Before(p.From) {
		return unit(p.From), ""
	}
	return unit(p.After.At), p.After.ID
}

const sessionExportQuery = `SELECT ` + sessionColumns + ` FROM sessions
	WHERE store_id = $1 AND mode = $2 AND created_at >= $3 AND created_at < $4 AND (created_at > $3 OR id > $5)
	ORDER BY created_at, id LIMIT $6`

// SessionExportPage returns a page of a store's sessions of one mode
// created in a range, oldest first.
func (db *DB) SessionExportPage(ctx context.Context, p checkout.ExportParams) ([]*checkout.Session, error) {
	at, id := exportStart(p, func(t time.Time) int64 { return t.Unix() })
	rows, err := db.readRows(ctx, sessionExportQuery, p.MerchantID, string(p.Mode), at, p.To.Unix(), id, p.Limit)
	if err != nil {
		return nil, db.translate(err)
	}
	return collect(db, rows, scanSession)
}

// qualified is a column list with each column prefixed by table alias t.
func qualified(t, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = t + "." + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}

var paymentExportQuery = `SELECT ` + qualified("p", paymentColumns) + `, d.status FROM payments p
	LEFT JOIN disputes d ON d.payment_id = p.id
	WHERE p.store_id = $1 AND p.mode = $2 AND p.created_at_ms >= $3 AND p.created_at_ms < $4 AND (p.created_at_ms > $3 OR p.id > $5)
	ORDER BY p.created_at_ms, p.id LIMIT $6`

// scanWith is a row whose Scan also scans into extra, after the row's
// own destinations.
type scanWith struct {
	row   scanner
	extra []any
}

func (s scanWith) Scan(dest ...any) error { return s.row.Scan(append(dest, s.extra...)...) }

// PaymentExportPage returns a page of a store's payments of one mode
// created in a range, oldest first, each with its dispute's status.
func (db *DB) PaymentExportPage(ctx context.Context, p checkout.ExportParams) ([]*checkout.ExportPayment, error) {
	at, id := exportStart(p, func(t time.Time) int64 { return t.UnixMilli() })
	rows, err := db.readRows(ctx, paymentExportQuery, p.MerchantID, string(p.Mode), at, p.To.UnixMilli(), id, p.Limit)
	if err != nil {
		return nil, db.translate(err)
	}
	return collect(db, rows, func(row scanner) (*checkout.ExportPayment, error) {
		var status sql.NullString
		pay, err := scanPayment(scanWith{row, []any{&status}})
		if err != nil {
			return nil, err
		}
		return &checkout.ExportPayment{Payment: pay, DisputeStatus: checkout.DisputeStatus(status.String)}, nil
	})
}

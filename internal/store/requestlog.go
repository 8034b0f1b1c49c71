package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

const requestLogColumns = `request_id, store_id, mode, api_key_id, method, path, status, duration_us, request_body, response_body, created_at`

func scanRequestLog(row scanner) (*checkout.RequestLog, error) {
	var l checkout.RequestLog
	var durUS, createdMS int64
	if err := row.Scan(&l.RequestID, &l.MerchantID, &l.Mode, &l.APIKeyID, &l.Method, &l.Path, &l.Status, &durUS,
		&l.RequestBody, &l.ResponseBody, &createdMS); err != nil {
		return nil, err
	}
	l.Duration = time.Duration(durUS) * time.Microsecond
	l.CreatedAt = time.UnixMilli(createdMS)
	return &l, nil
}

// RequestLogInsert writes a batch of logs in one transaction.
func (db *DB) RequestLogInsert(ctx context.Context, logs []*checkout.RequestLog) error {
	if len(logs) == 0 {
		return nil
	}
	return db.InTx(ctx, func(t checkout.Tx) error {
		tx := t.(*Tx)
		for _, l := range logs {
			_, err := tx.tx.ExecContext(ctx, `INSERT INTO request_logs (`+requestLogColumns+`)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
				l.RequestID, l.MerchantID, string(l.Mode), l.APIKeyID, l.Method, l.Path, l.Status, l.Duration.Microseconds(),
				l.RequestBody, l.ResponseBody, l.CreatedAt.UnixMilli())
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// RequestLogGet returns one log by request id.
func (db *DB) RequestLogGet(ctx context.Context, requestID string) (*checkout.RequestLog, error) {
	l, err := scanRequestLog(db.read.QueryRowContext(ctx, `SELECT `+requestLogColumns+` FROM request_logs WHERE request_id = $1`, requestID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, checkout.Errorf(checkout.ENotFound, "No such request log: %s.", requestID)
	}
	return l, db.translate(err)
}

// RequestLogList returns a store's logs of one mode, newest first.
func (db *DB) RequestLogList(ctx context.Context, p checkout.RequestLogListParams) ([]*checkout.RequestLog, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = 50
	}
	before := int64(1<<62 - 1)
	if !p.Before.IsZero() {
		before = p.Before.UnixMilli()
	}
	rows, err := db.read.QueryContext(ctx, `SELECT `+requestLogColumns+` FROM request_logs
		WHERE store_id = $1 AND mode = $2 AND created_at < $3
		ORDER BY created_at DESC, request_id DESC LIMIT $4`, p.MerchantID, string(p.Mode), before, limit)
	if err != nil {
		return nil, db.translate(err)
	}
	return collect(db, rows, scanRequestLog)
}

// RequestLogPurge deletes logs created before t.
func (db *DB) RequestLogPurge(ctx context.Context, before time.Time) (int64, error) {
	return db.purge(ctx, `DELETE FROM request_logs WHERE created_at < $1`, before.UnixMilli())
}

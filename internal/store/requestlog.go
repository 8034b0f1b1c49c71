package store

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

const requestLogColumns = `request_id, store_id, mode, api_key_id, method, path, status, duration_us, request_body, response_body, created_at_ms`

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

// requestLogChunk is how many logs one INSERT statement writes: 11
// parameters each, far under the limit of either database.
const requestLogChunk = 100

// RequestLogInsert writes a batch of logs in one transaction, up to
// requestLogChunk rows per statement: the writer of request logs keeps up
// with the API only if a log costs much less than a round trip to the
// database.
func (db *DB) RequestLogInsert(ctx context.Context, logs []*checkout.RequestLog) error {
	if len(logs) == 0 {
		return nil
	}
	return db.InTx(ctx, func(t checkout.Tx) error {
		tx := t.(*Tx)
		for chunk := range slices.Chunk(logs, requestLogChunk) {
			var q strings.Builder
			q.WriteString(`INSERT INTO request_logs (` + requestLogColumns + `) VALUES `)
			args := make([]any, 0, len(chunk)*11)
			for i, l := range chunk {
				if i > 0 {
					q.WriteString(", ")
				}
				q.WriteString("(")
				for j := range 11 {
					if j > 0 {
						q.WriteString(", ")
					}
					q.WriteString(tx.db.dialect.Param(len(args) + j + 1))
				}
				q.WriteString(")")
				args = append(args, l.RequestID, l.MerchantID, string(l.Mode), l.APIKeyID, l.Method, l.Path, l.Status,
					l.Duration.Microseconds(), l.RequestBody, l.ResponseBody, l.CreatedAt.UnixMilli())
			}
			if _, err := tx.tx.ExecContext(ctx, q.String(), args...); err != nil {
				return err
			}
		}
		return nil
	})
}

// RequestLogGet returns one log by request id.
func (db *DB) RequestLogGet(ctx context.Context, requestID string) (*checkout.RequestLog, error) {
	l, err := scanRequestLog(db.readRow(ctx, `SELECT `+requestLogColumns+` FROM request_logs WHERE request_id = $1`, requestID))
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
	rows, err := db.readRows(ctx, `SELECT `+requestLogColumns+` FROM request_logs
		WHERE store_id = $1 AND mode = $2 AND created_at_ms < $3
		ORDER BY created_at_ms DESC, request_id DESC LIMIT $4`, p.MerchantID, string(p.Mode), before, limit)
	if err != nil {
		return nil, db.translate(err)
	}
	return collect(db, rows, scanRequestLog)
}

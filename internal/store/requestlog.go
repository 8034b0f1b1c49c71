package store

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

const requestLogColumns = `request_id, store_id, mode, api_key_id, method, path, route, status, duration_us, request_body, response_body, created_at_ms`

func scanRequestLog(row scanner) (*checkout.RequestLog, error) {
	var l checkout.RequestLog
	var durUS, createdMS int64
	if err := row.Scan(&l.RequestID, &l.MerchantID, &l.Mode, &l.APIKeyID, &l.Method, &l.Path, &l.Route, &l.Status, &durUS,
		&l.RequestBody, &l.ResponseBody, &createdMS); err != nil {
		return nil, err
	}
	l.Duration = time.Duration(durUS) * time.Microsecond
	l.CreatedAt = time.UnixMilli(createdMS)
	return &l, nil
}

// requestLogChunk is how many logs one INSERT statement writes: 12
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
			args := make([]any, 0, len(chunk)*12)
			for i, l := range chunk {
				if i > 0 {
					q.WriteString(", ")
				}
				q.WriteString("(")
				for j := range 12 {
					if j > 0 {
						q.WriteString(", ")
					}
					q.WriteString(tx.db.dialect.Param(len(args) + j + 1))
				}
				q.WriteString(")")
				args = append(args, l.RequestID, l.MerchantID, string(l.Mode), l.APIKeyID, l.Method, l.Path, l.Route, l.Status,
					l.Duration.Microseconds(), l.RequestBody, l.ResponseBody, l.CreatedAt.UnixMilli())
			}
			if _, err := tx.execRaw(ctx, q.String(), args...); err != nil {
				return err
			}
		}
		return tx.apiKeysUsed(ctx, logs)
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

// There is no index, so no filter, on the path itself: it holds a
// session's id, and an index of random keys cost the request log writer
// on SQLite nearly two thirds of its speed (26,000 logs a second without,
// 10,000 with, at 250,000 rows), enough to drop logs under the bench's
// load. The route, one of a few values, is appended to in order, as the
// other indexes are.
//
// RequestLogList returns a page of a store's logs of one mode, newest
// first, with p's filters. Each filter is served by an index of migration
// 0011 that starts with the scope and the filter's column and ends with
// the order (created_at_ms, request_id), so the page is read off it in
// order and the query stops at the limit:
//
//	no filter, dates only   request_logs_list   (store_id, mode, created_at_ms, request_id)
//	StatusClass             request_logs_class  (store_id, mode, status / 100, ...)
//	Method                  request_logs_method (store_id, mode, method, ...)
//	Route                   request_logs_route  (store_id, mode, route, ...)
//	APIKeyID                request_logs_key    (store_id, mode, api_key_id, ...)
//
// With several filters the database picks one of their indexes and checks
// the others on the rows it reads. EXPLAIN QUERY PLAN (SQLite) shows a
// SEARCH of the index above for each, with no sort step; EXPLAIN
// (PostgreSQL) an index scan of it, except that where one store holds
// nearly every row PostgreSQL may walk request_logs_created instead,
// filtering on the store (every row it reads matches, so it stops as
// soon). bench -lists prints the plans and times every case at a million
// rows: at most about 5 ms at p99 on both databases (bench/README.md). PostgreSQL
// plans each run with its values (Dialect.PlanEach): how rare a filter's
// value is decides the plan.
func (db *DB) RequestLogList(ctx context.Context, p checkout.RequestLogListParams) ([]*checkout.RequestLog, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = 50
	}
	var w where
	w.add("store_id = ?", p.MerchantID)
	w.add("mode = ?", string(p.Mode))
	if p.StatusClass != 0 {
		// Written as in the index request_logs_class, which SQLite matches
		// by the expression's form.
		w.add("status / 100 = ?", p.StatusClass)
	}
	if p.Method != "" {
		w.add("method = ?", p.Method)
	}
	if p.Route != "" {
		w.add("route = ?", p.Route)
	}
	if p.APIKeyID != "" {
		w.add("api_key_id = ?", p.APIKeyID)
	}
	if !p.From.IsZero() {
		w.add("created_at_ms >= ?", p.From.UnixMilli())
	}
	if !p.To.IsZero() {
		w.add("created_at_ms < ?", p.To.UnixMilli())
	}
	if !p.After.IsZero() {
		// The keyset: (created_at_ms, request_id) < (At, ID), written so
		// that its first part bounds the index range on either database.
		at := p.After.At.UnixMilli()
		w.add("created_at_ms <= ?", at)
		w.add("(created_at_ms < ? OR request_id < ?)", at, p.After.ID)
	}
	rows, err := db.readRows(ctx, `SELECT `+requestLogColumns+` FROM request_logs WHERE `+w.sql(db.dialect)+
		` ORDER BY created_at_ms DESC, request_id DESC LIMIT `+strconv.Itoa(limit), w.argsFor(db.dialect)...)
	if err != nil {
		return nil, db.translate(err)
	}
	return collect(db, rows, scanRequestLog)
}

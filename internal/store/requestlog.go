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

// requestLogColumnList is requestLogColumns, one by one.
var requestLogColumnList = strings.Split(strings.ReplaceAll(requestLogColumns, " ", ""), ",")

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

// SetRequestLogs has db keep its request logs in logs instead of its own
// tables, and close logs when it closes. SQLite does (sqlite.Open): the
// logs of every request, retrieves included, are most of what is written,
// and in the file of the sessions they took the one writer's turns from the
// creates and, with each commit, emptied the page cache of every reader
// (SQLite drops a connection's cache when another has changed the file).
// In a file of their own they are written beside the sessions, not between
// them. PostgreSQL keeps them with the rest.
func (db *DB) SetRequestLogs(logs *DB) {
	db.logs = logs
	db.OnClose(logs.Close)
}

// requestLogs returns the DB that keeps the request logs.
func (db *DB) requestLogs() *DB {
	if db.logs != nil {
		return db.logs
	}
	return db
}

// RequestLogInsert writes a batch of logs, atomically: with the dialect's
// Copy where it has one (PostgreSQL), else in one transaction of up to
// requestLogChunk rows per statement. The writer of request logs keeps up
// with the API only if a log costs much less than a round trip to the
// database. Then it notes the keys' last use (keysUsedApart).
func (db *DB) RequestLogInsert(ctx context.Context, logs []*checkout.RequestLog) error {
	if len(logs) == 0 {
		return nil
	}
	var err error
	if l := db.requestLogs(); l.dialect.Copy != nil {
		err = l.copyRequestLogs(ctx, logs)
		if l.lost(err) {
			// A COPY lost with its connection (a failover) may have
			// committed or not: the logs it did not write go through the
			// write path, which waits out the failover (failover.go).
			err = l.InTx(ctx, func(t checkout.Tx) error { return t.(*Tx).requestLogInsertMissing(ctx, logs) })
		}
	} else {
		err = l.InTx(ctx, func(t checkout.Tx) error { return t.(*Tx).requestLogInsert(ctx, logs) })
	}
	if err != nil {
		return err
	}
	return db.keysUsedApart(ctx, logs)
}

// copyRequestLogs writes logs with the dialect's Copy, in one statement.
func (db *DB) copyRequestLogs(ctx context.Context, logs []*checkout.RequestLog) error {
	rows := make([][]any, len(logs))
	for i, l := range logs {
		rows[i] = requestLogRow(l)
	}
	conn, err := db.write.Conn(ctx)
	if err != nil {
		return db.translate(err)
	}
	defer conn.Close()
	run := func() error { return db.dialect.Copy(ctx, conn, "request_logs", requestLogColumnList, rows) }
	if db.copyFault != nil {
		return db.translate(db.copyFault(run))
	}
	return db.translate(run())
}

// requestLogInsertMissing inserts those of logs that are not stored.
func (tx *Tx) requestLogInsertMissing(ctx context.Context, logs []*checkout.RequestLog) error {
	ids := make([]string, len(logs))
	for i, l := range logs {
		ids[i] = l.RequestID
	}
	var args []any
	stored, err := collectEach(ctx, tx, `SELECT request_id FROM request_logs WHERE request_id IN (`+idMarks(tx.db.dialect.Param, &args, ids)+`)`, args, scanID)
	if err != nil {
		return err
	}
	missing := slices.DeleteFunc(slices.Clone(logs), func(l *checkout.RequestLog) bool { return slices.Contains(stored, l.RequestID) })
	if len(missing) == 0 {
		return nil
	}
	return tx.requestLogInsert(ctx, missing)
}

// requestLogInsert inserts logs, requestLogChunk rows a statement.
func (tx *Tx) requestLogInsert(ctx context.Context, logs []*checkout.RequestLog) error {
	for chunk := range slices.Chunk(logs, requestLogChunk) {
		args := make([]any, 0, len(chunk)*12)
		for _, l := range chunk {
			args = append(args, requestLogRow(l)...)
		}
		q := tx.db.insertQuery(`INSERT INTO request_logs (`+requestLogColumns+`) VALUES `, 12, len(chunk))
		if _, err := tx.exec(ctx, q, args...); err != nil { // prepared once per number of rows
			return err
		}
	}
	return nil
}

// requestLogRow is l's values in the order of requestLogColumns.
func requestLogRow(l *checkout.RequestLog) []any {
	return []any{l.RequestID, l.MerchantID, string(l.Mode), l.APIKeyID, l.Method, l.Path, l.Route, l.Status,
		l.Duration.Microseconds(), l.RequestBody, l.ResponseBody, l.CreatedAt.UnixMilli()}
}

// RequestLogGet returns one log by request id.
func (db *DB) RequestLogGet(ctx context.Context, requestID string) (*checkout.RequestLog, error) {
	l, err := scanRequestLog(db.requestLogs().readRow(ctx, `SELECT `+requestLogColumns+` FROM request_logs WHERE request_id = $1`, requestID))
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
// first, with p's filters. Each filter is served by an index that starts
// with the scope and ends with the order (created_at_ms, request_id), so
// the page is read off it in order and the query stops at the limit:
//
//	no filter, dates only    request_logs_list  (store_id, mode, created_at_ms, request_id)
//	APIKeyID (and others)    request_logs_key   (store_id, mode, api_key_id, ...)
//	StatusClass, Method,     request_logs_facet (store_id, mode, facet, ...)
//	Route, together or not
//
// A log's facet (RequestLogFacet) is its method, status class and route in
// one text, "POST 2 /v1/stores/{storeId}/checkouts": one index where the
// three filters had an index each (migration 0019), as every index costs
// each log written (three fewer entries a log: about 30% of a log's cost
// on PostgreSQL). A store's logs have a few facets, one per endpoint and
// outcome it used; the list reads them off the index (RequestLogFacets),
// keeps those that match the filters, reads a page from each and merges
// them (requestLogsByFacet). With the key filter the database uses the
// key's index and checks the other filters on the rows it reads.
//
// EXPLAIN QUERY PLAN (SQLite) shows a SEARCH of the index above for each
// query, with no sort step; EXPLAIN (PostgreSQL) an index scan of it,
// except that where one store holds nearly every row PostgreSQL may walk
// request_logs_created instead, filtering on the store (every row it reads
// matches, so it stops as soon). bench -lists prints the plans and times
// every case at a million rows (bench/README.md). PostgreSQL plans each run
// with its values (Dialect.PlanEach): how rare a filter's value is decides
// the plan.
func (db *DB) RequestLogList(ctx context.Context, p checkout.RequestLogListParams) ([]*checkout.RequestLog, error) {
	db = db.requestLogs()
	if p.Limit <= 0 {
		p.Limit = 50
	}
	var w where
	w.add("store_id = ?", p.MerchantID)
	w.add("mode = ?", string(p.Mode))
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
	if p.APIKeyID == "" && (p.StatusClass != 0 || p.Method != "" || p.Route != "") {
		if logs, ok, err := db.requestLogsByFacet(ctx, p, w); ok || err != nil {
			return logs, err
		}
	}
	if p.APIKeyID != "" {
		w.add("api_key_id = ?", p.APIKeyID)
	}
	if p.StatusClass != 0 {
		w.add("status / 100 = ?", p.StatusClass)
	}
	if p.Method != "" {
		w.add("method = ?", p.Method)
	}
	if p.Route != "" {
		w.add("route = ?", p.Route)
	}
	return db.requestLogPage(ctx, w, p.Limit)
}

// requestLogPage returns the logs that match w, newest first, at most
// limit.
func (db *DB) requestLogPage(ctx context.Context, w where, limit int) ([]*checkout.RequestLog, error) {
	rows, err := db.readRows(ctx, `SELECT `+requestLogColumns+` FROM request_logs WHERE `+w.sql(db.dialect)+
		` ORDER BY created_at_ms DESC, request_id DESC LIMIT `+strconv.Itoa(limit), w.argsFor(db.dialect)...)
	if err != nil {
		return nil, db.translate(err)
	}
	return collect(db, rows, scanRequestLog)
}

// RequestLogFacet is a log's method, status class and route in one text,
// as the index request_logs_facet has it (the same expression, which
// SQLite matches by its form): "GET 2 /v1/stores/{storeId}/checkouts/{checkoutId}".
// Neither a method nor a class holds a space.
const RequestLogFacet = `method || ' ' || CAST(status / 100 AS TEXT) || ' ' || route`

// maxFacets bounds the facets a list reads of one store and mode. A store
// has a few dozen at most (its endpoints and their outcomes); only a client
// inventing methods makes more, and then the list checks the filters on
// the rows of the unfiltered list instead.
const maxFacets = 256

// requestLogsByFacet returns the page of p's status class, method and
// route filters (RequestLogList), within w: a page of each facet that
// matches, merged. It reports false, and reads no page, when the store has
// more than maxFacets facets.
func (db *DB) requestLogsByFacet(ctx context.Context, p checkout.RequestLogListParams, w where) ([]*checkout.RequestLog, bool, error) {
	facets, err := db.requestLogFacets(ctx, p.MerchantID, p.Mode)
	if err != nil || len(facets) > maxFacets {
		return nil, false, err
	}
	var out []*checkout.RequestLog
	for _, f := range facets {
		method, rest, _ := strings.Cut(f, " ")
		class, route, _ := strings.Cut(rest, " ")
		if p.Method != "" && method != p.Method || p.Route != "" && route != p.Route ||
			p.StatusClass != 0 && class != strconv.Itoa(p.StatusClass) {
			continue
		}
		fw := w
		fw.conds = append(slices.Clip(w.conds), RequestLogFacet+" = ?")
		fw.args = append(slices.Clip(w.args), f)
		page, err := db.requestLogPage(ctx, fw, p.Limit)
		if err != nil {
			return nil, false, err
		}
		out = append(out, page...)
	}
	slices.SortFunc(out, func(a, b *checkout.RequestLog) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.RequestID, a.RequestID)
	})
	return out[:min(len(out), p.Limit)], true, nil
}

// requestLogFacets returns the facets of a store's logs of one mode, in
// order, each found by a seek of the index past the one before: as many
// reads as facets, whatever the number of logs. It stops after
// maxFacets+1.
func (db *DB) requestLogFacets(ctx context.Context, storeID string, mode checkout.Mode) ([]string, error) {
	query := `SELECT ` + RequestLogFacet + ` FROM request_logs WHERE store_id = $1 AND mode = $2 AND ` +
		RequestLogFacet + ` > $3 ORDER BY ` + RequestLogFacet + ` LIMIT 1`
	var facets []string
	last := ""
	for len(facets) <= maxFacets {
		err := db.readRow(ctx, query, storeID, string(mode), last).Scan(&last)
		if errors.Is(err, sql.ErrNoRows) {
			break
		}
		if err != nil {
			return nil, db.translate(err)
		}
		facets = append(facets, last)
	}
	return facets, nil
}

// MoveRequestLogs moves the logs in db's own table to the logs file at uri
// (SQLite, whose main file kept them before SetRequestLogs), attached to
// the write connection, and returns how many it moved. The table stays in
// the main file's schema, empty: its migrations are those of PostgreSQL,
// which keeps it. A crash between the copy and the delete leaves logs in
// both files; the next start copies what is missing (none) and deletes
// them.
func (db *DB) MoveRequestLogs(ctx context.Context, uri string) (int64, error) {
	var some bool
	if err := db.read.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM request_logs)`).Scan(&some); err != nil || !some {
		return 0, db.translate(err)
	}
	conn, err := db.write.Conn(ctx)
	if err != nil {
		return 0, db.translate(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `ATTACH DATABASE $1 AS logs`, uri); err != nil {
		return 0, db.translate(err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `DETACH DATABASE logs`)
	res, err := conn.ExecContext(ctx, `INSERT OR IGNORE INTO logs.request_logs (`+requestLogColumns+`) SELECT `+requestLogColumns+` FROM main.request_logs`)
	if err != nil {
		return 0, db.translate(err)
	}
	moved, err := res.RowsAffected()
	if err != nil {
		return 0, db.translate(err)
	}
	if _, err := conn.ExecContext(ctx, `DELETE FROM main.request_logs`); err != nil {
		return 0, db.translate(err)
	}
	return moved, nil
}

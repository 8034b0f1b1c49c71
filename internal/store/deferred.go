package store

import (
	"context"
	"slices"
	"strings"
	"sync"
)

// Combined inserts: in a batch that runs without savepoints (groupcommit.go),
// the inserts of sessions, events and deliveries are not run one at a time.
// Each is kept on the transaction, and they run as one INSERT of many rows
// per table when the transaction next runs a statement of any other kind,
// and before it commits. A batch of 16 creates then writes its sessions in
// one statement and its events in another, instead of 32: on PostgreSQL a
// round trip each, and the server's work of a statement each; on SQLite the
// work of a statement each on the one write connection.
//
// Nothing a function sees changes: every other statement of the transaction
// runs after the rows kept so far are written, so a read finds what was
// inserted before it. The rows are written table by table in the order of
// deferredTables, sessions first and deliveries last, so that a row is
// written after the rows it refers to (deliveries refer to events); within a
// table they keep the order of their inserts, so events keep theirs (seq).
//
// What changes is when an insert's error is seen: at the combined statement,
// which holds other functions' rows, and which may run inside another
// function's statement. So an error there never reaches a function as its
// own: the transaction notes it, every statement after it fails, and the
// batch runs again from the start with a savepoint per function and no
// combining (the path of a batch with a failing write), where each insert
// fails alone, in its own function, as it would have.
//
// A write alone combines its inserts too (a create's deliveries, one per
// endpoint, are one statement); there a combined statement's error is the
// write's. A batch with savepoints runs every insert when it is called.

// deferredTable is the rank of a table whose inserts are combined.
type deferredTable int

const (
	deferSessions        deferredTable = iota
	deferSessionMetadata               // refers to sessions
	deferEvents
	deferDeliveries
	numDeferred
)

// deferredChunk bounds the rows of one combined statement: 64 deliveries
// are 896 parameters, far below SQLite's limit of 32,766 (and PostgreSQL's
// 65,535), and the statements' texts, prepared and cached, are at most 64
// per table.
const deferredChunk = 64

// deferred holds the rows kept for one table.
type deferred struct {
	head  string // "INSERT INTO t (columns) VALUES "
	ncols int
	args  []any
}

// deferredInserts is a transaction's rows kept, by table.
type deferredInserts struct {
	tables [numDeferred]deferred
	// later holds, with a dialect that pipelines, the statements of
	// execLater and before each the rows kept until it, in their order.
	later []PipeStmt
	rows  int   // rows and statements kept
	err   error // the first combined statement's failure
}

// insert runs an INSERT of one row into the table of rank t, whose text up
// to VALUES is head, or keeps it for a combined statement (above).
func (tx *Tx) insert(ctx context.Context, t deferredTable, head string, args ...any) error {
	if tx.deferred == nil {
		_, err := tx.exec(ctx, tx.db.insertQuery(head, len(args), 1), args...)
		return err
	}
	if err := tx.deferred.err; err != nil {
		return err
	}
	d := &tx.deferred.tables[t]
	d.head, d.ncols = head, len(args)
	d.args = append(d.args, args...)
	tx.deferred.rows++
	return nil
}

// flush writes the rows kept, if any. Its error stays with the transaction
// (deferredInserts.err): the batch runs again with savepoints.
func (tx *Tx) flush(ctx context.Context) error {
	p := tx.deferred
	if p == nil {
		return nil
	}
	if p.rows == 0 || p.err != nil {
		return p.err
	}
	kept := tx.kept()      // before exec, which flushes first: nothing then
	if tx.tx.conn != nil { // pipelined: all in one round trip (pipetx.go)
		if _, _, err := tx.tx.pipeline(tx.context(ctx), kept...); err != nil {
			p.err = err
			return err
		}
		return nil
	}
	for _, s := range kept {
		if _, err := tx.exec(ctx, s.Query, s.Args...); err != nil {
			p.err = err
			return err
		}
	}
	return nil
}

// kept returns the statements kept (execLater) and the rows kept as
// combined statements, table by table, in their order, and forgets them.
func (tx *Tx) kept() []PipeStmt {
	p := tx.deferred
	if p == nil || p.rows == 0 {
		return nil
	}
	p.rows = 0
	stmts := tx.keptRows(p.later)
	p.later = nil
	return stmts
}

// keptRows appends to stmts the rows kept as combined statements, table
// by table, and forgets them.
func (tx *Tx) keptRows(stmts []PipeStmt) []PipeStmt {
	p := tx.deferred
	for i := range p.tables {
		d := &p.tables[i]
		if len(d.args) == 0 {
			continue
		}
		for chunk := range slices.Chunk(d.args, deferredChunk*d.ncols) {
			stmts = append(stmts, PipeStmt{Query: tx.db.insertQuery(d.head, d.ncols, len(chunk)/d.ncols), Args: chunk})
			tx.db.combined.Add(1)
		}
		d.args = nil // the values go with the statements
	}
	return stmts
}

// execLater runs a statement whose result only its error tells, or, in a
// transaction that combines inserts on a dialect that pipelines, keeps it
// to send in the round trip of the transaction's next statement or commit,
// after the rows kept before it. Its error is then a combined statement's
// (above): the batch runs again with savepoints, where it runs at once.
//
// check, when not nil, is given the rows the statement affected, and its
// error is the statement's.
func (tx *Tx) execLater(ctx context.Context, check func(affected int64) error, query string, args ...any) error {
	p := tx.deferred
	if p == nil || tx.tx.conn == nil || !tx.tx.pipelinable(args) {
		res, err := tx.exec(ctx, query, args...)
		if err != nil || check == nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		return check(n)
	}
	if p.err != nil {
		return p.err
	}
	p.later = append(tx.keptRows(p.later), PipeStmt{Query: query, Args: args, Check: check})
	p.rows++
	return nil
}

// withKept sends s with the statements and rows kept, in one round trip,
// and returns the rows s affected. ok is false when tx does not pipeline
// or keeps nothing; then nothing was sent.
func (tx *Tx) withKept(ctx context.Context, s PipeStmt) (n int64, ok bool, err error) {
	p := tx.deferred
	if p == nil || p.rows == 0 || p.err != nil || tx.tx.conn == nil || !tx.tx.pipelinable(s.Args) {
		return 0, false, nil
	}
	stmts := append(tx.kept(), s)
	affected, failed, err := tx.tx.pipeline(tx.context(ctx), stmts...)
	if err != nil {
		if failed < len(stmts)-1 {
			p.err = err // a statement kept failed, as in flush
		}
		return 0, true, err
	}
	return affected[len(stmts)-1], true, nil
}

// each runs a query in the transaction and calls scan for each of its
// rows. On a dialect that pipelines, the statements and rows kept go in the
// same round trip, and so does the transaction's BEGIN if not sent yet.
func (tx *Tx) each(ctx context.Context, query string, args []any, scan func(scanner) error) error {
	s := PipeStmt{Query: query, Args: args, Scan: scan}
	if _, ok, err := tx.withKept(ctx, s); ok {
		return err
	}
	if tx.tx.carriesBegin(args) && !tx.flushFailed() {
		_, _, err := tx.tx.pipeline(tx.context(ctx), s)
		return err
	}
	rows, err := tx.rows(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// eachLater is each for a statement whose rows decide nothing of the
// transaction (a write's RETURNING): with a transaction that combines
// inserts on a dialect that pipelines, it is kept and sent in the round trip
// of the transaction's next statement or of its COMMIT, and scan runs then.
// Its error is then a combined statement's.
func (tx *Tx) eachLater(ctx context.Context, query string, args []any, scan func(scanner) error) error {
	p := tx.deferred
	if p == nil || tx.tx.conn == nil || !tx.tx.pipelinable(args) {
		return tx.db.translate(tx.each(ctx, query, args, scan))
	}
	if p.err != nil {
		return p.err
	}
	p.later = append(tx.keptRows(p.later), PipeStmt{Query: query, Args: args, Scan: scan})
	p.rows++
	return nil
}

// collectEach is collect for a query run by tx.each.
func collectEach[T any](ctx context.Context, tx *Tx, query string, args []any, scan func(scanner) (T, error)) ([]T, error) {
	var out []T
	err := tx.each(ctx, query, args, func(row scanner) error {
		v, err := scan(row)
		out = append(out, v)
		return err
	})
	if err != nil {
		return nil, tx.db.translate(err)
	}
	return out, nil
}

// commit writes the rows and statements kept and commits: on a dialect
// that pipelines, in one round trip, or two when a statement kept has its
// rows affected checked (pipetx.go). flushFailed tells that a statement
// kept failed, as flush would have: then nothing was written.
func (tx *Tx) commit(ctx context.Context) (flushFailed bool, err error) {
	if tx.tx.sqlTx != nil || tx.flushFailed() {
		if err := tx.flush(ctx); err != nil { // prepared statements, cached (stmt.go)
			return true, err
		}
		_, err := tx.tx.commit(ctx, nil)
		return false, err
	}
	flushFailed, err = tx.tx.commit(tx.context(ctx), tx.kept())
	if flushFailed {
		tx.deferred.err = err
	}
	return flushFailed, err
}

// flushFailed tells whether a combined statement of tx failed.
func (tx *Tx) flushFailed() bool { return tx.deferred != nil && tx.deferred.err != nil }

// insertKey names a text kept in insertQueries: its head and its number
// of rows (or ids).
type insertKey struct {
	head string
	rows int
}

// insertQueries keeps the statement texts built for a number of rows (or
// ids), by dialect: the combined inserts' (insertQuery) and the batched
// reads' (readbatch.go).
type insertQueries struct {
	mu sync.Mutex
	m  map[insertKey]string
}

// get returns the text of k, built once by build.
func (q *insertQueries) get(k insertKey, build func() string) string {
	q.mu.Lock()
	defer q.mu.Unlock()
	if text, ok := q.m[k]; ok {
		return text
	}
	if q.m == nil {
		q.m = map[insertKey]string{}
	}
	q.m[k] = build()
	return q.m[k]
}

// insertQuery returns head followed by rows tuples of ncols parameters.
func (db *DB) insertQuery(head string, ncols, rows int) string {
	return db.inserts.get(insertKey{head, rows}, func() string {
		var b strings.Builder
		b.WriteString(head)
		for r := range rows {
			if r > 0 {
				b.WriteString(", ")
			}
			b.WriteByte('(')
			for c := range ncols {
				if c > 0 {
					b.WriteString(", ")
				}
				b.WriteString(db.dialect.Param(r*ncols + c + 1))
			}
			b.WriteByte(')')
		}
		return b.String()
	})
}

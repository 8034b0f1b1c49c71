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
	deferSessions deferredTable = iota
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
	rows   int
	err    error // the first combined statement's failure
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

// kept returns the rows kept as combined statements, table by table, and
// forgets them.
func (tx *Tx) kept() []PipeStmt {
	p := tx.deferred
	if p == nil || p.rows == 0 {
		return nil
	}
	p.rows = 0
	var stmts []PipeStmt
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

// commit writes the rows kept and commits: on a dialect that pipelines, in
// one round trip (pipetx.go). flushFailed tells that a combined statement
// failed, as flush would have: then nothing was written.
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

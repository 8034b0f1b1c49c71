package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"slices"
	"time"
)

// Pipelined transactions (PostgreSQL, Dialect.Pipeline): a write
// transaction does not spend round trips of its own on BEGIN and COMMIT.
// On a server that shares the machine, each round trip costs both processes
// a write to a socket and a wake-up, more than the statements themselves
// in a batch of creates: the server's sends were a third of its CPU in the
// create row. So the transaction's BEGIN goes in one round trip with its
// first statement, and its COMMIT with the rows it kept for combined
// inserts (deferred.go): a batch of creates, which reads the endpoints and
// then writes its sessions and events, is two round trips instead of five.
//
// What the server runs is unchanged: BEGIN, the statements in their order,
// COMMIT, on one connection. Statements in one round trip run one after the
// other, each only if those before it succeeded; after a failure the
// transaction is rolled back. A transaction that ran nothing ends without a
// round trip. A connection handed back with a transaction still open (a
// ROLLBACK that could not be sent) is dropped by the pool (pgx's
// ResetSession) rather than used again.
//
// The first statement goes with BEGIN when it is an Exec, a one-row read
// (Tx.row: the query is sent when its row is scanned, which its callers
// do at once) or the read of enabled endpoints that a create's event
// makes; another read (a *sql.Rows) sends BEGIN alone first.

// PipeStmt is one statement of Dialect.Pipeline.
type PipeStmt struct {
	Query string
	Args  []any
	// Scan, when set, is called for each row the statement returns.
	Scan func(scanner) error
	// Check, when set, is given the rows the statement affected; its error
	// fails the statement. The server has by then run what follows in the
	// round trip, so a checked statement never goes with COMMIT.
	Check func(affected int64) error
}

// pipeBegin and pipeCommit are the transaction's ends.
var (
	pipeBegin  = PipeStmt{Query: "BEGIN"}
	pipeCommit = PipeStmt{Query: "COMMIT"}
)

// wtx is a write transaction's connection: a *sql.Tx, or with pipelining
// a *sql.Conn on which the store begins and ends the transaction itself.
type wtx struct {
	db    *DB
	sqlTx *sql.Tx
	conn  *sql.Conn
	begun bool // BEGIN was sent (pipelined)
	ended bool // committed, rolled back or given up (pipelined)
	// mark, when set, is inserted into commit_marks beside the COMMIT, to
	// resolve a COMMIT whose connection is lost (failover.go).
	mark string
	// drop has close drop the connection rather than hand it back: it
	// was lost, or reached a node that does not take writes.
	drop bool
}

// beginWrite starts a write transaction on the write pool, which inserts
// mark beside its COMMIT when mark is set (failover.go).
func (db *DB) beginWrite(ctx context.Context, mark string) (*wtx, error) {
	if db.dialect.Pipeline == nil {
		t, err := db.write.BeginTx(ctx, nil)
		if err != nil {
			return nil, err
		}
		return &wtx{db: db, sqlTx: t, mark: mark}, nil
	}
	c, err := db.write.Conn(ctx)
	if err != nil {
		return nil, err
	}
	return &wtx{db: db, conn: c, mark: mark}, nil
}

// saw notes err, an error of the transaction's: a lost connection's has
// close drop the connection. It returns err.
func (w *wtx) saw(err error) error {
	if w.db.lost(err) {
		w.drop = true
	}
	return err
}

// pipeline runs stmts in one round trip, preceded by BEGIN when the
// transaction has not begun. It returns each statement's rows affected and
// the index in stmts of the one that failed (len(stmts) when none did).
func (w *wtx) pipeline(ctx context.Context, stmts ...PipeStmt) ([]int64, int, error) {
	if w.begun {
		return w.send(ctx, stmts)
	}
	w.begun = true // sent, whatever comes of it: a ROLLBACK ends it
	n, failed, err := w.send(ctx, append([]PipeStmt{pipeBegin}, stmts...))
	if len(n) > 0 {
		n = n[1:]
	}
	return n, max(failed-1, 0), err
}

// send is Dialect.Pipeline on the transaction's connection.
func (w *wtx) send(ctx context.Context, stmts []PipeStmt) ([]int64, int, error) {
	var queries []string
	if w.db.roundTripHook != nil || w.db.roundTripFault != nil || w.db.roundTripLoss != nil {
		queries = make([]string, len(stmts))
		for i, s := range stmts {
			queries[i] = s.Query
		}
		if w.db.roundTripHook != nil {
			w.db.roundTripHook(queries)
		}
		if w.db.roundTripFault != nil {
			if err := w.db.roundTripFault(queries); err != nil {
				return make([]int64, len(stmts)), 0, err
			}
		}
	}
	affected, failed, err := w.db.dialect.Pipeline(ctx, w.conn, stmts)
	if w.db.roundTripLoss != nil {
		if lost := w.db.roundTripLoss(queries, err); lost != nil {
			return affected, 0, lost
		}
	}
	return affected, failed, err
}

// alone notes a statement sent in a round trip of its own, for the tests.
func (w *wtx) alone(query string) {
	if w.db.roundTripHook != nil {
		w.db.roundTripHook([]string{query})
	}
}

// pipelinable tells whether a statement with args can join a round trip:
// not one planned with its values (Dialect.PlanEach), which names its mode
// in its first argument, and not after the transaction ended.
func (w *wtx) pipelinable(args []any) bool {
	return !w.ended && (len(args) == 0 || !slices.Contains(w.db.dialect.PlanEach, args[0]))
}

// begin sends BEGIN alone, before a statement that cannot carry it.
func (w *wtx) begin(ctx context.Context) error {
	if w.begun {
		return nil
	}
	w.begun = true
	w.alone(pipeBegin.Query)
	_, err := w.conn.ExecContext(ctx, pipeBegin.Query)
	return err
}

// ExecContext runs a statement that returns no rows.
func (w *wtx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if w.sqlTx != nil {
		return w.sqlTx.ExecContext(ctx, query, args...)
	}
	if !w.begun && w.pipelinable(args) {
		n, _, err := w.pipeline(ctx, PipeStmt{Query: query, Args: args})
		if err != nil {
			return nil, err
		}
		return driver.RowsAffected(n[0]), nil
	}
	if err := w.begin(ctx); err != nil {
		return nil, err
	}
	w.alone(query)
	return w.conn.ExecContext(ctx, query, args...)
}

// QueryContext runs a query.
func (w *wtx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if w.sqlTx != nil {
		return w.sqlTx.QueryContext(ctx, query, args...)
	}
	if err := w.begin(ctx); err != nil {
		return nil, err
	}
	w.alone(query)
	return w.conn.QueryContext(ctx, query, args...)
}

// QueryRowContext runs a one-row query. Before BEGIN was sent, the query
// is sent with it when the row is scanned.
func (w *wtx) QueryRowContext(ctx context.Context, query string, args ...any) scanner {
	if w.sqlTx != nil {
		return w.sqlTx.QueryRowContext(ctx, query, args...)
	}
	if !w.begun && w.pipelinable(args) {
		return &pipeRow{w: w, ctx: ctx, query: query, args: args}
	}
	if err := w.begin(ctx); err != nil {
		return errRow{err}
	}
	w.alone(query)
	return w.conn.QueryRowContext(ctx, query, args...)
}

// carriesBegin tells whether a statement with args would go with the
// transaction's BEGIN.
func (w *wtx) carriesBegin(args []any) bool {
	return w.sqlTx == nil && !w.begun && w.pipelinable(args)
}

// StmtContext returns st on the transaction (without pipelining: the
// dialects that pipeline cache no statements).
func (w *wtx) StmtContext(ctx context.Context, st *sql.Stmt) *sql.Stmt {
	return w.sqlTx.StmtContext(ctx, st)
}

// commit runs kept, the statements of the rows kept (none without
// pipelining), and commits, with pipelining in one round trip, and with
// the transaction's mark when it has one. flushFailed tells that one of
// kept failed (then nothing was written). A COMMIT whose connection was
// lost is a *lostCommit: it may have committed or not.
func (w *wtx) commit(ctx context.Context, kept []PipeStmt) (flushFailed bool, err error) {
	if w.sqlTx != nil {
		if w.mark != "" {
			if _, err := w.sqlTx.ExecContext(ctx, markInsert, w.mark, w.db.failover.clock().UnixMilli()); err != nil {
				return false, w.saw(err)
			}
		}
		err := w.sqlTx.Commit() // kept is empty: Tx.commit flushed
		if w.saw(err); w.drop {
			return false, &lostCommit{err}
		}
		return false, err
	}
	if !w.begun && len(kept) == 0 {
		w.ended = true // nothing was sent: nothing to commit
		return false, nil
	}
	if slices.ContainsFunc(kept, func(s PipeStmt) bool { return s.Check != nil }) {
		if _, _, err := w.pipeline(ctx, kept...); err != nil {
			w.saw(err)
			return !w.drop, err // lost: nothing committed, the write runs again
		}
		kept = nil
	}
	last := append(kept, pipeCommit)
	if w.mark != "" {
		last = append(kept, PipeStmt{Query: markInsert, Args: []any{w.mark, w.db.failover.clock().UnixMilli()}}, pipeCommit)
	}
	_, failed, err := w.pipeline(ctx, last...)
	if err == nil {
		w.ended = true
		return false, nil
	}
	if w.saw(err); w.drop {
		// Sent with the COMMIT: what the server did of it is not known.
		return false, &lostCommit{err}
	}
	return failed < len(kept), err
}

// close rolls back what was not committed and hands the connection back.
func (w *wtx) close() {
	if w.sqlTx != nil {
		w.sqlTx.Rollback() // after Commit it does nothing
		return
	}
	if w.drop {
		w.conn.Raw(func(any) error { return driver.ErrBadConn }) // the pool drops it
		w.ended = true
		w.conn.Close()
		return
	}
	if w.begun && !w.ended {
		// Not the caller's context, which may have ended: its ROLLBACK
		// still has to reach the server before the connection is reused.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		w.alone("ROLLBACK")
		if _, err := w.conn.ExecContext(ctx, "ROLLBACK"); err != nil {
			// Dropped rather than reused with a transaction open.
			w.conn.Raw(func(any) error { return driver.ErrBadConn })
		}
		cancel()
	}
	w.ended = true
	w.conn.Close()
}

// pipeRow is a one-row query to send with BEGIN when it is scanned.
type pipeRow struct {
	w     *wtx
	ctx   context.Context
	query string
	args  []any
}

// Scan runs the query and scans its first row into dest, or returns
// sql.ErrNoRows, as a *sql.Row's Scan.
func (r *pipeRow) Scan(dest ...any) error {
	found := false
	_, _, err := r.w.pipeline(r.ctx, PipeStmt{Query: r.query, Args: r.args, Scan: func(row scanner) error {
		if found {
			return nil
		}
		found = true
		return row.Scan(dest...)
	}})
	if err != nil {
		return err
	}
	if !found {
		return sql.ErrNoRows
	}
	return nil
}

// errRow is a row whose query could not be sent.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

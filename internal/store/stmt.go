package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"strings"
	"sync"
)

// stmtCache keeps one prepared statement per query and pool. SQLite's
// driver parses a query's text at every call otherwise, which was over a
// third of a retrieve's CPU. PostgreSQL does without it: pgx already keeps
// each connection's statements prepared (Dialect.CacheStatements). Queries
// are the constant strings of this package, so the cache stays small.
//
// A transaction never prepares on the pool: on SQLite the pool's only write
// connection is the transaction's own, so preparing would wait for itself.
// It uses what is cached, runs the rest unprepared and has them prepared
// once it has ended (Tx.missed).
type stmtCache struct {
	off bool
	mu  sync.Mutex
	m   map[stmtKey]*sql.Stmt
}

type stmtKey struct {
	pool  *sql.DB
	query string
}

// get returns the statement for query on pool, preparing it the first time.
// When preparing fails it returns nil and the caller runs the query
// unprepared, which reports the error in context.
func (c *stmtCache) get(ctx context.Context, pool *sql.DB, query string) *sql.Stmt {
	if c.off {
		return nil
	}
	if st := c.lookup(pool, query); st != nil {
		return st
	}
	k := stmtKey{pool, query}
	st, err := pool.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[k]; ok {
		st.Close()
		return old
	}
	if c.m == nil {
		c.m = map[stmtKey]*sql.Stmt{}
	}
	c.m[k] = st
	return st
}

// lookup returns the cached statement for query on pool, or nil.
func (c *stmtCache) lookup(pool *sql.DB, query string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[stmtKey{pool, query}]
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.m {
		st.Close()
	}
	c.m = nil
}

// readRow runs a one-row query on the read pool.
func (db *DB) readRow(ctx context.Context, query string, args ...any) *sql.Row {
	if st := db.stmts.get(ctx, db.read, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return db.read.QueryRowContext(ctx, query, args...)
}

// readRows runs a query on the read pool.
func (db *DB) readRows(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := db.stmts.get(ctx, db.read, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return db.read.QueryContext(ctx, query, args...)
}

// stmt returns query prepared on the transaction's connection, or nil when
// it is not cached yet; then it notes the query, for InTx to prepare after
// the transaction.
func (tx *Tx) stmt(ctx context.Context, query string) *sql.Stmt {
	ctx = tx.context(ctx)
	if tx.db.stmts.off {
		return nil
	}
	if st := tx.db.stmts.lookup(tx.db.write, query); st != nil {
		return tx.tx.StmtContext(ctx, st)
	}
	tx.missed = append(tx.missed, query)
	return nil
}

// prepareMissed prepares the queries a finished transaction ran unprepared.
func (db *DB) prepareMissed(ctx context.Context, queries []string) {
	for _, q := range queries {
		db.stmts.get(ctx, db.write, q)
	}
}

// exec runs a statement in the transaction.
func (tx *Tx) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	tx.writes(query)
	if n, ok, err := tx.withKept(ctx, PipeStmt{Query: query, Args: args}); ok { // pipetx.go
		if err != nil {
			return nil, err
		}
		return driver.RowsAffected(n), nil
	}
	if err := tx.flush(ctx); err != nil {
		return nil, err
	}
	if st := tx.stmt(ctx, query); st != nil {
		return st.ExecContext(tx.context(ctx), args...)
	}
	return tx.tx.ExecContext(tx.context(ctx), query, args...)
}

// writes notes a statement that writes: one that writes to the endpoints
// drops the lists EndpointListEnabled kept.
func (tx *Tx) writes(query string) {
	if tx.enabled != nil && strings.Contains(query, "endpoints") {
		tx.enabled = nil
	}
}

// row runs a one-row query in the transaction.
func (tx *Tx) row(ctx context.Context, query string, args ...any) scanner {
	// A failed flush fails the batch whatever the row holds (runBatch).
	tx.flush(ctx)
	if st := tx.stmt(ctx, query); st != nil {
		return st.QueryRowContext(tx.context(ctx), args...)
	}
	return tx.tx.QueryRowContext(tx.context(ctx), query, args...)
}

// rows runs a query in the transaction.
func (tx *Tx) rows(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if err := tx.flush(ctx); err != nil {
		return nil, err
	}
	return tx.rowsUnrelated(ctx, query, args...)
}

// rowsUnrelated is rows for a query that reads none of the tables whose
// inserts are combined (deferred.go): it runs without writing the rows
// kept first.
func (tx *Tx) rowsUnrelated(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := tx.stmt(ctx, query); st != nil {
		return st.QueryContext(tx.context(ctx), args...)
	}
	return tx.tx.QueryContext(tx.context(ctx), query, args...)
}

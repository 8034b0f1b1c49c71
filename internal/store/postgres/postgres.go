// Package postgres opens checkoutd's store on PostgreSQL through pgx v5, the
// scale-out deployment: several checkoutd processes share one database.
package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
)

//go:embed migrations/*.sql
var migrations embed.FS

// MaxConns bounds the connections one process opens.
const MaxConns = 20

// Open connects to the database at url (postgres://...) and applies pending
// migrations. A search_path parameter in the URL selects a schema.
func Open(ctx context.Context, url string) (*store.DB, error) {
	cfg, err := pgconnConfig(url)
	if err != nil {
		return nil, err
	}
	pool := stdlib.OpenDB(*cfg, stdlib.OptionResetSession(writable))
	pool.SetMaxOpenConns(MaxConns)
	db := store.New(Dialect, pool, pool)
	db.SetMaxIdleConns(MaxConns)
	if _, err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("migrate: %w", err)
	}
	return db, nil
}

// Dialect is PostgreSQL's.
var Dialect = store.Dialect{
	Name:       "postgres",
	SkipLocked: " FOR UPDATE OF d SKIP LOCKED",
	ForUpdate:  " FOR UPDATE",
	ForShare:   " FOR SHARE",
	// Nodes that start together migrate one at a time.
	MigrationLock: `SELECT pg_advisory_xact_lock(7348219011)`,
	// Claims take turns, per schema: the key is the first 64 bits of the
	// MD5 of the schema's name, so that stores in other schemas of the
	// database (tests, benchmarks) do not wait for each other.
	ClaimLock:  `SELECT pg_advisory_xact_lock(('x' || substr(md5('checkoutd claim ' || current_schema()), 1, 16))::bit(64)::bigint)`,
	Param:      func(i int) string { return "$" + strconv.Itoa(i) },
	IndexedBy:  func(string) string { return "" },
	Translate:  translate,
	Migrations: store.SubFS(migrations, "migrations"),
	// Planned with their values: see store.Dialect.PlanEach.
	PlanEach: []any{pgx.QueryExecModeExec},
	// Batches run side by side on their own connections of the pool; two
	// made bigger batches than four, and creates 2-21% faster (docs/operations.md).
	Committers: 2,
	// Reads of sessions by id share statements (store/readbatch.go).
	Readers:   2,
	Retryable: retryable,
	Lost:      lost,
	Copy:      copyRows,
	// BEGIN and COMMIT go with other statements (store/pipetx.go).
	Pipeline: pipeline,
}

// pipeline is Dialect.Pipeline: the statements as one pgx batch, sent in
// one write and answered in one read; after a failure the server skips
// the rest.
func pipeline(ctx context.Context, conn *sql.Conn, stmts []store.PipeStmt) (affected []int64, failed int, err error) {
	affected = make([]int64, len(stmts))
	err = conn.Raw(func(dc any) error {
		var b pgx.Batch
		for _, s := range stmts {
			b.Queue(s.Query, s.Args...)
		}
		br := dc.(*stdlib.Conn).Conn().SendBatch(ctx, &b)
		for failed = range stmts {
			if err := result(br, stmts[failed], &affected[failed]); err != nil {
				br.Close()
				return err
			}
		}
		failed = len(stmts)
		return br.Close()
	})
	return affected, failed, err
}

// result reads the answer to s from br: its rows, through s.Scan, and the
// rows it affected.
func result(br pgx.BatchResults, s store.PipeStmt, affected *int64) error {
	if s.Scan == nil {
		tag, err := br.Exec()
		*affected = tag.RowsAffected()
		if err == nil && s.Check != nil {
			err = s.Check(*affected)
		}
		return err
	}
	rows, err := br.Query()
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := s.Scan(rows); err != nil {
			return err
		}
	}
	rows.Close()
	*affected = rows.CommandTag().RowsAffected()
	if err := rows.Err(); err != nil || s.Check == nil {
		return err
	}
	return s.Check(*affected)
}

// copyRows is Dialect.Copy: COPY FROM STDIN, binary, through pgx.
func copyRows(ctx context.Context, conn *sql.Conn, table string, columns []string, rows [][]any) error {
	return conn.Raw(func(dc any) error {
		_, err := dc.(*stdlib.Conn).Conn().CopyFrom(ctx, pgx.Identifier{table}, columns, pgx.CopyFromRows(rows))
		return err
	})
}

// retryable reports a transaction that lost a race: a deadlock or a
// serialization failure, which the same write run again alone survives.
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001")
}

// lost is Dialect.Lost: the connection is gone (refused, reset, closed by
// a server shutting down) or reached a node that does not take writes (a
// primary being demoted, a standby being promoted). A failover: on a new
// connection, to the new primary, the same write succeeds
// (store/failover.go). A context that ended is not a lost connection.
func lost(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "25006", // read_only_sql_transaction
			"57P01", "57P02", "57P03": // admin_shutdown, crash_shutdown, cannot_connect_now
			return true
		}
		return pe.Code[:2] == "08" // connection_exception
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) || pgconn.SafeToRetry(err)
}

// writable is the pool's check of a connection it hands out again: one to
// a node that went into recovery (a demoted primary, now a standby) is
// dropped, so that the pool never stays on it. PostgreSQL reports
// in_hot_standby and default_transaction_read_only to the client as they
// change (version 14 on).
func writable(_ context.Context, c *pgx.Conn) error {
	p := c.PgConn()
	if p.ParameterStatus("in_hot_standby") == "on" || p.ParameterStatus("default_transaction_read_only") == "on" {
		return driver.ErrBadConn
	}
	return nil
}

func translate(err error) error {
	if lost(err) {
		return unavailable(err)
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "23505": // unique_violation
			return &checkout.Error{Code: checkout.EConflict, Message: "The record exists already.", Err: err}
		case pe.Code == "40P01", pe.Code == "40001": // deadlock_detected, serialization_failure
			// The transaction lost a race with another and was rolled
			// back whole; the same request tried again a moment later
			// succeeds. Not retried here: InTx cannot know that what its
			// function did outside the database may be done twice.
			return &checkout.Error{Code: checkout.EUnavailable, Message: "The request collided with another one changing the same data; try again.",
				Err: err, RetryAfter: time.Second}
		case pe.Code[:2] == "08", pe.Code[:2] == "53", pe.Code[:2] == "57": // connection, resources, operator intervention
			return unavailable(err)
		case pe.Code == "25006": // read_only_sql_transaction
			// A write reached a node that no longer (or not yet) takes
			// writes: a primary being demoted, or a standby being promoted
			// (docs/operations.md, PostgreSQL with automatic failover). Not
			// the request's fault: the same write succeeds on the primary
			// once the failover is over.
			return unavailable(err)
		}
		return err
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	if errors.As(err, &ce) || errors.As(err, &ne) || errors.Is(err, sql.ErrConnDone) || pgconn.SafeToRetry(err) {
		return unavailable(err)
	}
	return err
}

func unavailable(err error) error {
	return &checkout.Error{Code: checkout.EUnavailable, Message: "The database is unavailable; try again shortly.", Err: err}
}

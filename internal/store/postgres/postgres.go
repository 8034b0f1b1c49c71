// Package postgres opens checkoutd's store on PostgreSQL through pgx v5, the
// scale-out deployment: several checkoutd processes share one database.
package postgres

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
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
	pool := stdlib.OpenDB(*cfg)
	pool.SetMaxOpenConns(MaxConns)
	pool.SetMaxIdleConns(MaxConns)
	db := store.New(Dialect, pool, pool)
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

func translate(err error) error {
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

package postgres_test

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/checkoutd/checkoutd/internal/store/postgres"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// lost tells a failover (a connection gone, a node not taking writes),
// after which the same write succeeds on a new connection, from the
// errors that a new connection would meet again.
func TestLost(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&pgconn.PgError{Code: "25006"}, true}, // read_only_sql_transaction
		{&pgconn.PgError{Code: "57P01"}, true}, // admin_shutdown
		{&pgconn.PgError{Code: "57P02"}, true}, // crash_shutdown
		{&pgconn.PgError{Code: "57P03"}, true}, // cannot_connect_now
		{&pgconn.PgError{Code: "08006"}, true}, // connection_failure
		{fmt.Errorf("commit: %w", io.ErrUnexpectedEOF), true},
		{io.EOF, true},
		{&net.OpError{Op: "dial", Err: errors.New("connection refused")}, true},
		{driver.ErrBadConn, true},
		{&pgconn.PgError{Code: "23505"}, false}, // unique_violation
		{&pgconn.PgError{Code: "40P01"}, false}, // deadlock: retried by group commit, not a failover
		{&pgconn.PgError{Code: "57014"}, false}, // query_canceled
		{context.Canceled, false},
		{fmt.Errorf("read: %w", context.DeadlineExceeded), false},
		{errors.New("boom"), false},
	} {
		if got := postgres.Dialect.Lost(c.err); got != c.want {
			t.Errorf("lost(%v) = %v; want %v", c.err, got, c.want)
		}
	}
}

// The pool drops a connection to a node that does not take writes (a
// demoted primary, now a standby; here a session set read-only) when it
// would hand it out again, and makes a new one.
func TestPoolDropsReadOnlyConnection(t *testing.T) {
	ctx := context.Background()
	cfg, err := pgx.ParseConfig(storetest.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	pool := stdlib.OpenDB(*cfg, stdlib.OptionResetSession(postgres.Writable))
	defer pool.Close()
	pool.SetMaxOpenConns(1)
	pid := func() (pid int) {
		if err := pool.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
			t.Fatal(err)
		}
		return pid
	}
	first := pid()
	if again := pid(); again != first {
		t.Fatalf("a writable connection was not used again: backends %d then %d", first, again)
	}
	if _, err := pool.ExecContext(ctx, `SET default_transaction_read_only = on`); err != nil {
		t.Fatal(err)
	}
	if next := pid(); next == first {
		t.Errorf("the read-only connection (backend %d) was handed out again", first)
	}
}

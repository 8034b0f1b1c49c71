package store_test

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/clock"
	"github.com/checkoutd/checkoutd/internal/store"
)

// A failover, as the store meets it (store/failover.go): the faults below
// stand for a connection lost to a primary that died (admin_shutdown, as
// a server shutting down sends it) and a node that stopped taking writes
// (read_only_sql_transaction). The real thing, a pg_auto_failover cluster
// whose primary is killed under two checkoutd processes, is
// cmd/checkoutd's TestFailoverStorm.

var (
	errShutdown = &pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"}
	errReadOnly = &pgconn.PgError{Code: "25006", Message: "cannot execute INSERT in a read-only transaction"}
)

// failoverDB opens a PostgreSQL store whose retries wait on a fake clock:
// a wait moves it on at once.
func failoverDB(t *testing.T) (*store.DB, *clock.Fake) {
	t.Helper()
	db, _ := openRaw(t, "postgres")
	clk := clock.NewFake(time.Unix(1700000000, 0))
	db.SetFailoverClock(clk.Now, func(ctx context.Context, d time.Duration) error {
		clk.Advance(d)
		return ctx.Err()
	})
	return db, clk
}

// hasCommit tells whether a round trip carries COMMIT.
func hasCommit(queries []string) bool { return slices.Contains(queries, "COMMIT") }

// once returns a fault that fails the first n round trips match accepts
// with err, and counts the faults.
func once(n int, match func([]string) bool, err error) (fault func([]string) error, hits *atomic.Int64) {
	hits = &atomic.Int64{}
	var seen atomic.Int64
	return func(queries []string) error {
		if match(queries) && seen.Add(1) <= int64(n) {
			hits.Add(1)
			return err
		}
		return nil
	}, hits
}

// A write whose COMMIT was carried out but whose answer was lost is
// resolved by its mark as committed: its caller hears nil, and it is not
// run again (a second run of the insert would conflict).
func TestLostCommitThatCommitted(t *testing.T) {
	ctx := context.Background()
	db, _ := failoverDB(t)
	fault, hits := once(1, hasCommit, errShutdown)
	store.SetRoundTripLoss(db, func(queries []string, err error) error { return fault(queries) })
	m, _ := newMerchantEndpoint(t, time.Unix(1700000000, 0))
	runs := 0
	err := db.InTx(ctx, func(tx checkout.Tx) error { runs++; return tx.MerchantInsert(ctx, m) })
	if err != nil {
		t.Fatalf("a write whose COMMIT's answer was lost = %v; want nil (it committed)", err)
	}
	if hits.Load() != 1 || runs != 1 {
		t.Errorf("the fault hit %d times, the write ran %d times; want 1 and 1", hits.Load(), runs)
	}
	if _, err := db.MerchantGet(ctx, m.ID); err != nil {
		t.Errorf("the store written: %v", err)
	}
	if f := db.Stats().Failover; f != (store.FailoverStats{Committed: 1}) {
		t.Errorf("failover stats = %+v; want one commit resolved as committed", f)
	}
}

// A write whose connection was lost as its COMMIT went out, before the
// server had it, is resolved by its mark as not committed, and runs again
// on a new connection: written once.
func TestLostCommitThatDidNot(t *testing.T) {
	ctx := context.Background()
	db, _ := failoverDB(t)
	fault, hits := once(1, hasCommit, errShutdown)
	store.SetRoundTripFault(db, fault)
	m, _ := newMerchantEndpoint(t, time.Unix(1700000000, 0))
	runs := 0
	if err := db.InTx(ctx, func(tx checkout.Tx) error { runs++; return tx.MerchantInsert(ctx, m) }); err != nil {
		t.Fatalf("a write whose COMMIT was lost before the server had it = %v; want nil (run again)", err)
	}
	if hits.Load() != 1 || runs != 2 {
		t.Errorf("the fault hit %d times, the write ran %d times; want 1 and 2", hits.Load(), runs)
	}
	if _, err := db.MerchantGet(ctx, m.ID); err != nil {
		t.Errorf("the store written: %v", err)
	}
	if f := db.Stats().Failover; f != (store.FailoverStats{RolledBack: 1, Retries: 1}) {
		t.Errorf("failover stats = %+v; want one commit resolved as not committed, and one retry", f)
	}
}

// A write that meets a lost connection before its COMMIT, or a node that
// does not take writes, runs again on a new connection, with backoff.
func TestLostWriteRunsAgain(t *testing.T) {
	ctx := context.Background()
	db, clk := failoverDB(t)
	start := clk.Now()
	first := func(queries []string) bool { return slices.Contains(queries, "BEGIN") }
	fault, hits := once(2, first, errShutdown)
	store.SetRoundTripFault(db, fault)
	m, _ := newMerchantEndpoint(t, time.Unix(1700000000, 0))
	runs := 0
	if err := db.InTx(ctx, func(tx checkout.Tx) error { runs++; return tx.MerchantInsert(ctx, m) }); err != nil {
		t.Fatalf("a write that met a lost connection twice = %v; want nil", err)
	}
	if runs != 3 || hits.Load() != 2 {
		t.Errorf("the write ran %d times, the fault hit %d; want 3 and 2", runs, hits.Load())
	}
	if waited := clk.Now().Sub(start); waited != 150*time.Millisecond {
		t.Errorf("the retries waited %v; want 50 ms then 100 ms", waited)
	}

	// The function itself meets a node that does not take writes.
	m2, _ := newMerchantEndpoint(t, time.Unix(1700000000, 0))
	runs = 0
	if err := db.InTx(ctx, func(tx checkout.Tx) error {
		if runs++; runs == 1 {
			return errReadOnly
		}
		return tx.MerchantInsert(ctx, m2)
	}); err != nil {
		t.Fatalf("a write that met a read-only node = %v; want nil", err)
	}
	if runs != 2 {
		t.Errorf("the write ran %d times; want 2", runs)
	}
	if f := db.Stats().Failover; f.Retries != 3 || f.Committed+f.RolledBack+f.Unresolved != 0 {
		t.Errorf("failover stats = %+v; want 3 retries, no commit resolved", f)
	}
}

// A write that keeps meeting lost connections gives up when its budget is
// spent: service_unavailable with Retry-After, nothing written. An
// ambiguous COMMIT that cannot be resolved within it says so.
func TestFailoverBudget(t *testing.T) {
	ctx := context.Background()
	db, clk := failoverDB(t)
	db.SetFailoverBudget(10 * time.Second)
	store.SetRoundTripFault(db, func([]string) error { return errShutdown })
	m, _ := newMerchantEndpoint(t, time.Unix(1700000000, 0))
	start := clk.Now()
	err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.MerchantInsert(ctx, m) })
	var ce *checkout.Error
	if !errors.As(err, &ce) || ce.Code != checkout.EUnavailable || ce.RetryAfter <= 0 {
		t.Fatalf("a write lost for longer than its budget = %v; want service_unavailable with Retry-After", err)
	}
	if waited := clk.Now().Sub(start); waited > 10*time.Second || waited < 9*time.Second {
		t.Errorf("it waited %v; want about the budget, 10 s", waited)
	}
	store.SetRoundTripFault(db, nil)
	if _, err := db.MerchantGet(ctx, m.ID); !checkout.IsCode(err, checkout.EStoreNotFound) {
		t.Errorf("the write given up: %v; want nothing written", err)
	}
}

// Group commit: a batch whose COMMIT's answer was lost is resolved whole,
// and each of its callers answered once, with its own result; a batch
// that lost its connection before its COMMIT runs again whole.
func TestLostBatch(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name      string
		afterSent bool
		want      store.FailoverStats
	}{
		{"answer lost", true, store.FailoverStats{Committed: 1}},
		{"commit lost", false, store.FailoverStats{RolledBack: 1, Retries: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			db, _ := failoverDB(t)
			// The first COMMIT of a batch of several writes is lost.
			fault, hits := once(1, hasCommit, errShutdown)
			if c.afterSent {
				store.SetRoundTripLoss(db, func(q []string, err error) error { return fault(q) })
			} else {
				store.SetRoundTripFault(db, fault)
			}
			const n = 8
			ms := make([]*checkout.Merchant, n)
			writes := make([]func(checkout.Tx) error, n)
			for i := range n {
				ms[i], _ = newMerchantEndpoint(t, time.Unix(1700000000, 0))
				writes[i] = func(tx checkout.Tx) error { return tx.MerchantInsert(ctx, ms[i]) }
			}
			errs, _ := batched(t, db, writes, nil)
			if hits.Load() != 1 || db.Stats().Batches != 1 {
				t.Fatalf("the fault hit %d commits, in %d batches; want one batch", hits.Load(), db.Stats().Batches)
			}
			for i, m := range ms {
				if errs[i] != nil {
					t.Errorf("write %d = %v; want nil", i, errs[i])
				}
				if _, err := db.MerchantGet(ctx, m.ID); err != nil {
					t.Errorf("write %d's store: %v", i, err)
				}
			}
			if f := db.Stats().Failover; f != c.want {
				t.Errorf("failover stats = %+v; want %+v", f, c.want)
			}
		})
	}
}

// The resolution of a lost COMMIT waits for the transaction when it still
// runs (a node that lives on, the connection to it lost): it hears what
// became of it, and a transaction it resolved as not committed can no
// longer commit.
func TestResolveWaitsForTheTransaction(t *testing.T) {
	ctx := context.Background()
	for _, commit := range []bool{true, false} {
		db, raw := openRaw(t, "postgres")
		tx, err := raw.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		mark := "mark-" + time.Now().Format(time.RFC3339Nano)
		if _, err := tx.ExecContext(ctx, `INSERT INTO commit_marks (token, created_at_ms) VALUES ($1, 0)`, mark); err != nil {
			t.Fatal(err)
		}
		type answer struct {
			committed bool
			err       error
		}
		resolved := make(chan answer, 1)
		go func() {
			c, err := store.Resolve(ctx, db, mark)
			resolved <- answer{c, err}
		}()
		// The resolution waits on the transaction's lock of the mark.
		deadline := time.Now().Add(10 * time.Second)
		for {
			var waiting int
			if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'INSERT INTO commit_marks%'`).Scan(&waiting); err != nil {
				t.Fatal(err)
			}
			if waiting > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the resolution did not wait for the transaction")
			}
			time.Sleep(5 * time.Millisecond)
		}
		if commit {
			err = tx.Commit()
		} else {
			err = tx.Rollback()
		}
		if err != nil {
			t.Fatal(err)
		}
		a := <-resolved
		if a.err != nil || a.committed != commit {
			t.Errorf("a transaction that ended with commit=%v resolved as committed=%v (%v)", commit, a.committed, a.err)
		}
	}
}

// On SQLite nothing is lost to a failover: its writes carry no mark.
func TestSQLiteWritesNoMark(t *testing.T) {
	ctx := context.Background()
	db, raw := openRaw(t, "sqlite")
	m, _ := newMerchantEndpoint(t, time.Unix(1700000000, 0))
	if err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.MerchantInsert(ctx, m) }); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM commit_marks`).Scan(&n); err != nil || n != 0 {
		t.Errorf("SQLite's marks: %d (%v); want none", n, err)
	}
}

// The purge deletes the marks older than it is given.
func TestCommitMarkPurge(t *testing.T) {
	ctx := context.Background()
	db, raw := openRaw(t, "postgres")
	m, _ := newMerchantEndpoint(t, time.Unix(1700000000, 0))
	if err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.MerchantInsert(ctx, m) }); err != nil {
		t.Fatal(err)
	}
	count := func() (n int) {
		if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM commit_marks`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n != 1 {
		t.Fatalf("marks after a write: %d; want 1", n)
	}
	if n, err := db.CommitMarkPurge(ctx, time.Now().Add(-time.Minute)); err != nil || n != 0 || count() != 1 {
		t.Errorf("a purge of the marks before a minute ago deleted %d (%v); want none", n, err)
	}
	if n, err := db.CommitMarkPurge(ctx, time.Now().Add(time.Minute)); err != nil || n != 1 || count() != 0 {
		t.Errorf("a purge of the marks before a minute from now deleted %d (%v); want 1", n, err)
	}
}

// Request logs go in by COPY on PostgreSQL, outside a write transaction: a
// COPY lost with its connection writes, through the write path, the logs
// it did not write, once each.
func TestLostRequestLogCopy(t *testing.T) {
	ctx := context.Background()
	for _, ran := range []bool{true, false} {
		db, raw := openRaw(t, "postgres")
		m, _ := newMerchantEndpoint(t, time.Unix(1700000000, 0))
		if err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.MerchantInsert(ctx, m) }); err != nil {
			t.Fatal(err)
		}
		faults := 0
		store.SetCopyFault(db, func(run func() error) error {
			if faults++; faults > 1 {
				return run()
			}
			if ran {
				if err := run(); err != nil {
					return err
				}
			}
			return errShutdown
		})
		var logs []*checkout.RequestLog
		for range 3 {
			logs = append(logs, &checkout.RequestLog{RequestID: checkout.NewRequestID(), MerchantID: m.ID, Mode: checkout.ModeTest,
				Method: "GET", Path: "/", Status: 200, CreatedAt: time.Now()})
		}
		if err := db.RequestLogInsert(ctx, logs); err != nil {
			t.Fatalf("request logs whose COPY was lost (the COPY ran: %v) = %v; want nil", ran, err)
		}
		var n int
		if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM request_logs`).Scan(&n); err != nil || n != len(logs) {
			t.Errorf("the COPY ran: %v: %d request logs stored (%v); want %d", ran, n, err, len(logs))
		}
	}
}

// A store closed while a write waits out a failover stops waiting: the
// write is answered service_unavailable and Close returns, rather than
// hold a shutdown for the whole budget.
func TestCloseStopsFailoverWait(t *testing.T) {
	ctx := context.Background()
	db, _ := openRaw(t, "postgres")
	waiting := make(chan struct{}, 1)
	db.SetFailoverClock(time.Now, func(ctx context.Context, d time.Duration) error {
		select {
		case waiting <- struct{}{}:
		default:
		}
		<-ctx.Done() // a failover that does not end
		return ctx.Err()
	})
	store.SetRoundTripFault(db, func([]string) error { return errShutdown })
	m, _ := newMerchantEndpoint(t, time.Unix(1700000000, 0))
	written := make(chan error, 1)
	go func() { written <- db.InTx(ctx, func(tx checkout.Tx) error { return tx.MerchantInsert(ctx, m) }) }()
	<-waiting
	closed := make(chan error, 1)
	go func() { closed <- db.Close() }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second): // a bound on a hang, not a wait for a condition
		t.Fatal("Close did not return while a write waited out a failover")
	}
	if err := <-written; !checkout.IsCode(err, checkout.EUnavailable) {
		t.Errorf("the write cut by Close = %v; want service_unavailable", err)
	}
}

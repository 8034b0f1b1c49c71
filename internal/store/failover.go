package store

import (
	"context"
	"crypto/rand"
	"errors"
	"sync/atomic"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

// Failover (PostgreSQL, docs/operations.md "PostgreSQL with automatic
// failover"): the primary of a cluster dies or is switched over, and for
// some seconds no node takes writes; then another node does, and the pool's
// new connections reach it (the URL's target_session_attrs=read-write).
//
// A write transaction (InTx) that meets a lost connection, or a node that
// no longer takes writes (Dialect.Lost), is run again on a new connection,
// with backoff, until it commits or the failover budget is spent (then its
// caller hears service_unavailable). Its function runs again from the
// start, as group commit already runs functions again (groupcommit.go).
//
// A connection lost during COMMIT leaves the write ambiguous: the server
// may have committed it, and replicated it to the node now primary, or
// not. It is never answered on a guess. Every write transaction inserts a
// mark, a random token of its own, into commit_marks beside its COMMIT (in
// the same round trip: no extra cost in round trips). After a lost COMMIT
// the store inserts the same token itself, on a new connection, ON
// CONFLICT DO NOTHING: a conflict means the transaction committed (its
// callers are answered with what their functions returned); an insert
// means it did not, and now never can, since its own insert of the token
// would conflict (a transaction still running on a node that lives on
// makes the store's insert wait for its end): the work is run again. The
// marks are purged after checkout.CommitMarksKept.
//
// A batch of group commit is one transaction and has one mark: a lost
// batch is resolved, or run again, whole, and each of its callers answered
// once.
//
// Reads are not run again: a read that meets a lost connection answers
// service_unavailable at once (with Retry-After), which a client may retry
// without risk; /readyz says the database does not answer.

// DefaultFailoverBudget is how long a write keeps trying through a
// failover before its caller hears service_unavailable: pg_auto_failover
// with the settings of docs/operations.md promotes a standby in about 20
// seconds, with its defaults in about 55.
const DefaultFailoverBudget = 60 * time.Second

// failover is a DB's state for surviving a failover.
type failover struct {
	budget atomic.Int64 // time.Duration; 0: DefaultFailoverBudget
	// now and wait are the clock of the retries' backoff: time.Now and a
	// timer, or a test's fake clock.
	now  func() time.Time
	wait func(ctx context.Context, d time.Duration) error
	// maxIdle is the pool's idle connections: after a lost connection,
	// the others, likely to the same node, are dropped (dropIdle).
	maxIdle int
	// closing is canceled when the store closes: writes waiting out a
	// failover stop waiting, rather than hold a shutdown for the budget.
	closing     context.Context
	stopWaiting context.CancelFunc

	// retries counts the write transactions run again after a lost
	// connection; committed and rolledBack the lost COMMITs resolved each
	// way; unresolved those whose outcome was not known within the budget.
	retries, committed, rolledBack, unresolved atomic.Int64
}

// FailoverStats are a DB's counts of its failovers, for metrics.
type FailoverStats struct {
	// Retries counts the write transactions run again on a new connection
	// after theirs was lost.
	Retries int64
	// Committed and RolledBack count the writes whose connection was lost
	// during COMMIT, resolved (by their mark) as committed or not;
	// Unresolved those the budget ran out on before either could be
	// known (their callers heard service_unavailable).
	Committed, RolledBack, Unresolved int64
}

// SetFailoverBudget sets how long a write keeps trying through a failover
// (DefaultFailoverBudget until it is set).
func (db *DB) SetFailoverBudget(d time.Duration) { db.failover.budget.Store(int64(d)) }

// SetMaxIdleConns sets the write pool's idle connections, which a lost
// connection drops (see failover).
func (db *DB) SetMaxIdleConns(n int) {
	db.failover.maxIdle = n
	db.write.SetMaxIdleConns(n)
}

// SetFailoverClock replaces the clock of the retries' backoff (tests).
func (db *DB) SetFailoverClock(now func() time.Time, wait func(ctx context.Context, d time.Duration) error) {
	db.failover.now, db.failover.wait = now, wait
}

func (f *failover) budgetOrDefault() time.Duration {
	if d := time.Duration(f.budget.Load()); d > 0 {
		return d
	}
	return DefaultFailoverBudget
}

func (f *failover) clock() time.Time {
	if f.now != nil {
		return f.now()
	}
	return time.Now()
}

func (f *failover) sleep(ctx context.Context, d time.Duration) error {
	if f.wait != nil {
		return f.wait(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// lost reports an error of a lost connection, or of a node that does not
// take writes (Dialect.Lost): on another connection, perhaps to another
// node, the same work may succeed.
func (db *DB) lost(err error) bool {
	return err != nil && db.dialect.Lost != nil && db.dialect.Lost(err)
}

// lostCommit is the error of a COMMIT whose connection was lost before its
// answer came: the transaction may have committed or not.
type lostCommit struct{ err error }

func (e *lostCommit) Error() string { return "connection lost during COMMIT: " + e.err.Error() }
func (e *lostCommit) Unwrap() error { return e.err }

// newMark returns a write transaction's mark (see failover): 128 random
// bits, when the dialect can lose connections; "" otherwise.
func (db *DB) newMark() string {
	if db.dialect.Lost == nil {
		return ""
	}
	return rand.Text()
}

// markInsert is the statement of a transaction's mark; the store's own
// after a lost COMMIT adds ON CONFLICT DO NOTHING (resolve).
const markInsert = `INSERT INTO commit_marks (token, created_at_ms) VALUES ($1, $2)`

// durably runs attempt, a write transaction with the mark it is given,
// again on a new connection while its connection is lost, until the
// budget is spent (see failover). A lost COMMIT is resolved by the mark
// first: committed, it is answered nil. The error it returns is attempt's
// (translated), or service_unavailable when the budget ran out.
func (db *DB) durably(ctx context.Context, attempt func(mark string) error) error {
	if db.dialect.Lost == nil {
		return attempt("")
	}
	f := &db.failover
	deadline := f.clock().Add(f.budgetOrDefault())
	caller := ctx
	for try := 0; ; try++ {
		mark := db.newMark()
		err := attempt(mark)
		if !db.lost(err) {
			return err
		}
		db.dropIdle()
		if try == 0 {
			// From the first loss on, the waits end when the store closes
			// too (made here, not for every write).
			var cancel context.CancelFunc
			ctx, cancel = context.WithCancel(ctx)
			defer cancel()
			defer context.AfterFunc(f.closing, cancel)()
		}
		if lc := (*lostCommit)(nil); errors.As(err, &lc) {
			committed, rerr := db.resolve(ctx, mark, deadline)
			switch {
			case rerr != nil:
				f.unresolved.Add(1)
				return &checkout.Error{Code: checkout.EUnavailable, RetryAfter: time.Second, Err: err,
					Message: "The database failed over while this write was committing, and whether it was is not known yet; try the request again (with the same Idempotency-Key)."}
			case committed:
				f.committed.Add(1)
				return nil
			}
			f.rolledBack.Add(1) // and so run again, below
		}
		if berr := db.backoff(ctx, try, deadline); berr != nil {
			if caller.Err() != nil {
				return db.translate(caller.Err())
			}
			// The budget is spent, or the store closes.
			return &checkout.Error{Code: checkout.EUnavailable, RetryAfter: time.Second, Err: err,
				Message: "The database is unavailable (failing over); try again shortly."}
		}
		f.retries.Add(1)
	}
}

// backoff waits before the next try of a lost write: 50 ms doubling up to
// a second, within the deadline. It returns an error when the deadline or
// ctx does not leave time for another try.
func (db *DB) backoff(ctx context.Context, try int, deadline time.Time) error {
	f := &db.failover
	d := min(50*time.Millisecond<<min(try, 5), time.Second)
	if err := ctx.Err(); err != nil {
		return err
	}
	if f.clock().Add(d).After(deadline) {
		return errFailoverBudget
	}
	return f.sleep(ctx, d)
}

// errFailoverBudget is backoff's error when the budget leaves no time for
// another try.
var errFailoverBudget = errors.New("failover budget spent")

// resolve learns whether the transaction of mark committed, by inserting
// the mark itself (see failover), again on new connections while they are
// lost, until deadline.
func (db *DB) resolve(ctx context.Context, mark string, deadline time.Time) (committed bool, err error) {
	// Bounded in real time too: the insert waits for the transaction of
	// mark when it still runs on a node that lives on.
	ctx, cancel := context.WithTimeout(ctx, db.failover.budgetOrDefault())
	defer cancel()
	for try := 0; ; try++ {
		res, err := db.write.ExecContext(ctx, markInsert+` ON CONFLICT (token) DO NOTHING`, mark, db.failover.clock().UnixMilli())
		if err == nil {
			n, err := res.RowsAffected()
			return n == 0, err
		}
		if !db.lost(err) {
			return false, err
		}
		db.dropIdle()
		if err := db.backoff(ctx, try, deadline); err != nil {
			return false, err
		}
	}
}

// dropIdle closes the write pool's idle connections, likely to the node
// that was lost, so that the next ones are made afresh (to the new
// primary) rather than each failing once.
func (db *DB) dropIdle() {
	if n := db.failover.maxIdle; n > 0 {
		db.write.SetMaxIdleConns(0)
		db.write.SetMaxIdleConns(n)
	}
}

// CommitMarkPurge deletes the write transactions' marks made before t, in
// batches.
func (db *DB) CommitMarkPurge(ctx context.Context, before time.Time) (int64, error) {
	return db.purgeWhere(ctx, "commit_marks", "token", "created_at_ms < $1", before.UnixMilli())
}

package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/checkoutd/checkoutd/checkout"
)

// SetSessionReadHook makes SessionGet call fn between reading a session
// the cache did not hold and caching it, so that a test can write the
// session in between.
func SetSessionReadHook(db *DB, fn func(*checkout.Session)) { db.sessionReadHook = fn }

// SetCommitHook makes each write transaction of db call fn once it has
// committed, before its end (the session cache's second drop) and before
// its callers are answered.
func SetCommitHook(db *DB, fn func()) { db.commitHook = fn }

// SetSessionCacheBytes bounds db's session cache to n bytes of sessions.
func SetSessionCacheBytes(db *DB, n int) { db.sessions.max = n }

// SessionSize is the memory the session cache counts for s.
func SessionSize(s *checkout.Session) int { return sessionSize(s) }

// StartReaders has n readers batch db's reads of sessions (readbatch.go),
// as PostgreSQL's store does, on a store that does not; it returns db's
// number of readers.
func StartReaders(db *DB, n int) int {
	if db.reads == nil {
		db.startReaders(n)
	}
	return db.reads.n
}

// SetReadHook makes each batched read of db call fn with the reads it
// holds before it runs.
func SetReadHook(db *DB, fn func(reads int)) { db.readHook = fn }

// QueuedReads is the number of reads of sessions waiting for a reader.
func QueuedReads(db *DB) int { return len(db.reads.queue) }

// SetClaimHook makes DeliveryClaim call fn between reading its candidates
// and leasing them, so that a test can change the rows in between, as
// another node would.
func SetClaimHook(db *DB, fn func()) { db.claimHook = fn }

// SetPurgeBatch makes the purges of db delete at most n rows per batch and
// call hook after each batch, with no transaction open.
func SetPurgeBatch(db *DB, n int, hook func(table string, deleted int64)) {
	db.purgeBatch, db.purgeHook = n, hook
	if db.logs != nil {
		SetPurgeBatch(db.logs, n, hook)
	}
}

// DeliveryListQuery is the query DeliveryListPage runs for f.
func DeliveryListQuery(db *DB, f checkout.DeliveryFilter) (string, []any) {
	if f.Limit <= 0 {
		f.Limit = checkout.DefaultDeliveryPageSize
	}
	return db.deliveryListQuery(&f)
}

// Explain returns the plan of query: SQLite's EXPLAIN QUERY PLAN, or
// PostgreSQL's EXPLAIN with sequential scans and sorts priced out of reach,
// so that the plan shows the index the planner can use rather than what a
// table of a few rows makes cheapest.
func Explain(ctx context.Context, db *DB, query string, args ...any) (string, error) {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return "", err
	}
	defer tx.Rollback()
	prefix := "EXPLAIN QUERY PLAN "
	if db.dialect.Name == "postgres" {
		prefix = "EXPLAIN "
		for _, q := range []string{`SET LOCAL enable_seqscan = off`, `SET LOCAL enable_bitmapscan = off`, `SET LOCAL plan_cache_mode = force_generic_plan`} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return "", err
			}
		}
	}
	rows, err := tx.QueryContext(ctx, prefix+query, args...)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		dest := make([]any, len(cols))
		for i := range dest {
			dest[i] = new(any)
		}
		if err := rows.Scan(dest...); err != nil {
			return "", err
		}
		out = append(out, fmt.Sprint(*(dest[len(dest)-1].(*any))))
	}
	return strings.Join(out, "\n"), rows.Err()
}

// EndpointQueries are the queries of an endpoint's health and of Retry all
// failed, each with the indexes it may read ("a|b") and arguments to
// explain it with.
func EndpointQueries(db *DB) []struct {
	Index, Query string
	Args         []any
} {
	return []struct {
		Index, Query string
		Args         []any
	}{
		{"deliveries_endpoint_finished", healthCountsQuery, []any{"we_x", int64(1), int64(2), int64(3)}},
		{"deliveries_pending_endpoint|deliveries_endpoint_status", healthQueuedQuery, []any{"we_x"}},
		{"delivery_attempts_endpoint_ok", healthLastSuccessQuery, []any{"we_x"}},
		{"delivery_attempts_endpoint_failed", healthLastFailureQuery, []any{"we_x"}},
		{"delivery_attempts_endpoint_failed", healthFailingSinceQuery, []any{"we_x", int64(1)}},
		{"deliveries_endpoint_retryable", fmt.Sprintf(retryableQuery, db.dialect.IndexedBy("deliveries_endpoint_retryable")), []any{"we_x", int64(1), 10}},
	}
}

// Committers returns how many committers run db's batches (0: group
// commit is off), and QueuedWrites how many writes wait for one.
func Committers(db *DB) int { return db.dialect.Committers }

func QueuedWrites(db *DB) int { return len(db.group.queue) }

// PaymentListQuery is the query PaymentList runs for p, with its arguments
// less the dialect's PlanEach options (Explain plans it generically).
func PaymentListQuery(db *DB, p checkout.PaymentListParams) (string, []any) {
	q, args := db.paymentListQuery(p)
	return q, args[len(db.dialect.PlanEach):]
}

// PaymentCountRefundDueQuery is PaymentCountRefundDue's query.
const PaymentCountRefundDueQuery = paymentCountRefundDueQuery

// ClaimQueries are the queries of a claim, each with the indexes it must
// read, an index it must not read ("" for none), and arguments to explain
// it with. The lease's write (leaseQuery) is an INSERT, whose conflicts
// are found by the primary key: it has no read to explain.
func ClaimQueries(db *DB) []struct {
	Indexes []string
	Avoid   string
	Query   string
	Args    []any
} {
	param := db.dialect.Param
	lock := fmt.Sprintf(lockCandidatesQuery, param(1)+", "+param(2), db.dialect.SkipLocked)
	// A record batch's update of the deliveries (deliveryUpdateAll).
	var updateArgs []any
	var records []AttemptRecord
	for _, id := range []string{"whd_x", "whd_y", "whd_z"} {
		records = append(records, AttemptRecord{Delivery: &checkout.Delivery{ID: id, Status: checkout.DeliverySucceeded}})
	}
	update := deliveryUpdateQuery(param, &updateArgs, records)
	return []struct {
		Indexes []string
		Avoid   string
		Query   string
		Args    []any
	}{
		{[]string{"deliveries_pending_endpoint", "delivery_leases_endpoint", "delivery_leases_pkey|sqlite_autoindex_delivery_leases_1"}, "", db.claimCandidatesQuery(), []any{int64(1), 4, 32}},
		{[]string{"deliveries_id_key|sqlite_autoindex_deliveries_1"}, "deliveries_pending_endpoint", lock, []any{"whd_x", "whd_y"}},
		{[]string{"deliveries_id_key|sqlite_autoindex_deliveries_1"}, "deliveries_pending_endpoint", update, updateArgs},
	}
}

// InTxUrgent is the claim's way into a transaction, for tests of its
// order; QueuedUrgent counts the urgent writes waiting.
func InTxUrgent(db *DB, ctx context.Context, fn func(checkout.Tx) error) error {
	return db.inTxUrgent(ctx, fn)
}

func QueuedUrgent(db *DB) int { return len(db.group.urgent) }

// MaxFacets is maxFacets, for the tests of the request logs' list.
const MaxFacets = maxFacets

// EndpointsKept reports whether tx keeps a list of enabled endpoints
// (EndpointListEnabled).
func EndpointsKept(tx checkout.Tx) bool { return tx.(*Tx).enabled != nil }

// CombinedStatements counts the combined inserts db ran (deferred.go).
func CombinedStatements(db *DB) int64 { return db.combined.Load() }

// SetHandoverHook has each claim in create fail with fn's error, when not
// nil (handover.go).
func SetHandoverHook(db *DB, fn func() error) { db.handoverHook = fn }

// SetRoundTripHook has fn given the statements of each round trip of a
// pipelined transaction (pipetx.go).
func SetRoundTripHook(db *DB, fn func(queries []string)) { db.roundTripHook = fn }

// SetMaxConns bounds db's write pool (on PostgreSQL, its one pool).
func SetMaxConns(db *DB, n int) { db.write.SetMaxOpenConns(n) }

// BackendPID returns the process id of the PostgreSQL backend that runs a
// write transaction.
func BackendPID(ctx context.Context, db *DB) (pid int, err error) {
	err = db.InTx(ctx, func(tx checkout.Tx) error { return tx.(*Tx).row(ctx, "SELECT pg_backend_pid()").Scan(&pid) })
	return pid, err
}

// ExecLater is Tx.execLater: a statement sent with the next, whose rows
// affected check is given.
func ExecLater(ctx context.Context, tx checkout.Tx, check func(int64) error, query string, args ...any) error {
	return tx.(*Tx).execLater(ctx, check, query, args...)
}

// SetRoundTripFault fails each round trip of a pipelined transaction for
// which fn returns an error, before it is sent.
func SetRoundTripFault(db *DB, fn func(queries []string) error) { db.roundTripFault = fn }

// APIKeyEachActiveQuery is the query of APIKeyEachActive, for its plan.
const APIKeyEachActiveQuery = apiKeyEachActiveQuery

// HomeQuery is a count of the store's home, the arguments to explain it
// with, and the index it must read.
type HomeQuery struct {
	Name, Query, Index string
	Args               []any
}

// HomeQueries are the counts HomeDays runs for the hours not kept, and its
// reads of the days and hours kept.
func HomeQueries() []HomeQuery {
	q := homeHours.count
	args := []any{"store", "test", int64(1_790_000_000), int64(1_790_003_600), "USD"}
	kept := []any{"store", "test", "USD", int64(1), int64(30)}
	return []HomeQuery{
		{"gross", q.gross, "payments_succeeded", args},
		{"refunded", q.refunded, "refunds_succeeded", args},
		{"disputes", q.disputes, "disputes_lost", args},
		{"created", q.created, "sessions_list", args[:4]},
		{"paid", q.paid, "sessions_completed", args[:4]},
		{"kept days", homeDaysLevel.keptQuery(), "home_days", kept},
		{"kept hours", homeHours.keptQuery(), "home_hours", kept},
	}
}

// AttentionQueries are the home's reads of what needs attention, with the
// index each must read.
func AttentionQueries() []HomeQuery {
	return []HomeQuery{
		{"failed deliveries", deliveryCountFailedQuery, "deliveries_scope_status", []any{"store", "test", int64(1), 100}},
		{"payouts", refundListPayoutPendingQuery, "refunds_payout_pending", []any{"store", "test", 20}},
	}
}

// AuditListQuery is the query AuditList runs for p, with its arguments
// less the dialect's PlanEach options (Explain plans it generically).
func AuditListQuery(db *DB, p checkout.AuditListParams) (string, []any) {
	q, args := db.auditListQuery(p)
	return q, args[len(db.dialect.PlanEach):]
}

// ExportQueries are the exports' page reads, with the index each must read
// in its order.
func ExportQueries() []HomeQuery {
	return []HomeQuery{
		{"sessions export", sessionExportQuery, "sessions_list", []any{"store", "test", int64(1), int64(2), "cs_x", 500}},
		{"payments export", paymentExportQuery, "payments_list", []any{"store", "test", int64(1), int64(2), "pay_x", 500}},
	}
}

// SessionListQuery is the query SessionList runs for p, with its arguments
// less the dialect's PlanEach options (Explain plans it generically).
func SessionListQuery(db *DB, p checkout.SessionListParams) (string, []any) {
	q, args := db.sessionListQuery(p)
	return q, args[len(db.dialect.PlanEach):]
}

// EventListByObjectQuery is the query EventListByObject runs for ids.
func EventListByObjectQuery(db *DB, ids []string) (string, []any) {
	return db.eventListByObjectQuery(ids)
}

// SetRoundTripLoss replaces the error of each round trip of a pipelined
// transaction, sent and answered, for which fn returns an error: its
// answer lost on the way back.
func SetRoundTripLoss(db *DB, fn func(queries []string, err error) error) { db.roundTripLoss = fn }

// Resolve is the resolution of a lost COMMIT by its mark (failover.go).
func Resolve(ctx context.Context, db *DB, mark string) (committed bool, err error) {
	return db.resolve(ctx, mark, db.failover.clock().Add(db.failover.budgetOrDefault()))
}

// SetCopyFault has fn run each COPY of request logs in place of the
// store: it may run it or not, and answer what it likes.
func SetCopyFault(db *DB, fn func(run func() error) error) { db.copyFault = fn }

package store_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// roundTrips records the round trips of a store's pipelined transactions,
// each as the first words of its statements ("INSERT INTO sessions").
type roundTrips struct {
	mu    sync.Mutex
	trips [][]string
}

func recordRoundTrips(db *store.DB) *roundTrips {
	r := &roundTrips{}
	store.SetRoundTripHook(db, func(queries []string) {
		trip := make([]string, len(queries))
		for i, q := range queries {
			f := strings.Fields(q)
			switch {
			case f[0] == "INSERT":
				trip[i] = strings.Join(f[:3], " ")
			case f[0] == "SELECT" && strings.HasPrefix(f[1], "pg_advisory_xact_lock"):
				trip[i] = "SELECT pg_advisory_xact_lock"
			case f[0] == "SELECT":
				trip[i] = "SELECT FROM " + f[slices.Index(f, "FROM")+1]
			case f[0] == "WITH":
				trip[i] = strings.Join(f[:2], " ")
			default:
				trip[i] = f[0]
			}
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		r.trips = append(r.trips, trip)
	})
	return r
}

// take returns the round trips recorded since the last take.
func (r *roundTrips) take() [][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.trips
	r.trips = nil
	return t
}

// On PostgreSQL a write transaction sends its BEGIN with its first
// statement and its COMMIT with its combined inserts: a create (its
// session, its event, the endpoints' read and a delivery) is two round
// trips, and a transaction that ran nothing sends nothing.
func TestPipelinedWriteRoundTrips(t *testing.T) {
	ctx := context.Background()
	db, _ := openRaw(t, "postgres")
	f := newCombinedFixture(t, db, 2)
	r := recordRoundTrips(db)

	if err := db.InTx(ctx, func(tx checkout.Tx) error { return f.create(ctx, tx, 0) }); err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"BEGIN", "SELECT FROM endpoints"},
		{"INSERT INTO sessions", "INSERT INTO events", "INSERT INTO deliveries", "INSERT INTO commit_marks", "COMMIT"},
	}
	if got := r.take(); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("a create's round trips = %q; want %q", got, want)
	}
	if !f.committed(t, db, 0) {
		t.Error("the create was not committed")
	}

	if err := db.InTx(ctx, func(tx checkout.Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if got := r.take(); len(got) != 0 {
		t.Errorf("a write that ran nothing sent %q; want nothing", got)
	}

	// A first statement that is not an insert kept carries BEGIN too.
	m, _ := newMerchantEndpoint(t, time.Unix(1700000000, 0))
	if err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.MerchantInsert(ctx, m) }); err != nil {
		t.Fatal(err)
	}
	want = [][]string{{"BEGIN", "INSERT INTO stores"}, {"INSERT INTO commit_marks", "COMMIT"}}
	if got := r.take(); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("a store's insert's round trips = %q; want %q", got, want)
	}
	if _, err := db.MerchantGet(ctx, m.ID); err != nil {
		t.Errorf("the store inserted: %v", err)
	}
}

// A pipelined transaction that fails, at its first statement, at its
// commit or in the function that runs it, writes nothing and ends on the
// server: its connection is used again rather than dropped by the pool
// with a transaction open.
func TestPipelinedFailureEndsItsTransaction(t *testing.T) {
	ctx := context.Background()
	db, _ := openRaw(t, "postgres")
	store.SetMaxConns(db, 1) // every transaction on one connection
	f := newCombinedFixture(t, db, 1)
	if err := db.InTx(ctx, func(tx checkout.Tx) error { return f.create(ctx, tx, 0) }); err != nil {
		t.Fatal(err)
	}
	pid, err := store.BackendPID(ctx, db)
	if err != nil {
		t.Fatal(err)
	}

	// Its first statement, which carried BEGIN, fails.
	if err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.MerchantInsert(ctx, f.m) }); !checkout.IsCode(err, checkout.EConflict) {
		t.Errorf("a store inserted twice = %v; want a conflict", err)
	}
	// Its commit fails: a combined insert of a session stored already.
	dup := f.add(t)
	f.sessions[dup] = f.sessions[0]
	if err := db.InTx(ctx, func(tx checkout.Tx) error { return f.create(ctx, tx, dup) }); !checkout.IsCode(err, checkout.EConflict) {
		t.Errorf("a session inserted twice = %v; want a conflict", err)
	}
	// Its function fails after a statement.
	m, _ := newMerchantEndpoint(t, time.Unix(1700000000, 0))
	errNo := errors.New("no")
	if err := db.InTx(ctx, func(tx checkout.Tx) error {
		if err := tx.MerchantInsert(ctx, m); err != nil {
			return err
		}
		return errNo
	}); !errors.Is(err, errNo) {
		t.Errorf("a failing write = %v; want its error", err)
	}
	if _, err := db.MerchantGet(ctx, m.ID); !checkout.IsCode(err, checkout.EStoreNotFound) {
		t.Errorf("the failing write's store: %v; want not found", err)
	}

	if got, err := store.BackendPID(ctx, db); err != nil || got != pid {
		t.Errorf("after the failures the write ran on backend %d (%v); want %d, the same connection", got, err, pid)
	}
}

// The dispatcher's transactions on PostgreSQL: a claim sends its lock with
// its query of candidates and its leases with COMMIT (three round trips),
// and a record of attempts with its claim of the
// next deliveries sends the attempts' insert with the next statement and
// the deliveries' update and the claims' lock with the candidates, and
// the leases with COMMIT: five round trips, not ten.
func TestPipelinedDispatcherRoundTrips(t *testing.T) {
	ctx := context.Background()
	now := time.Now().Truncate(time.Millisecond)
	a, _, ds := claimNodesURL(t, storetest.PostgresURL(t), now, 4)
	r := recordRoundTrips(a)

	cs, err := a.DeliveryClaim(ctx, store.ClaimParams{Owner: "a", Now: now, LeaseUntil: now.Add(time.Minute), Limit: 2, PerEndpoint: 4})
	if err != nil || len(cs) != 2 {
		t.Fatalf("claim = %d, %v; want 2 deliveries", len(cs), err)
	}
	want := [][]string{
		{"BEGIN", "SELECT pg_advisory_xact_lock", "WITH RECURSIVE"},           // the lock, the candidates
		{"SELECT FROM deliveries"},                                            // their rows locked
		{"INSERT INTO delivery_leases", "INSERT INTO commit_marks", "COMMIT"}, // the leases
	}
	if got := r.take(); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("a claim's round trips = %q; want %q", got, want)
	}

	var rs []store.AttemptRecord
	for _, c := range cs {
		att := &checkout.Attempt{DeliveryID: c.Delivery.ID, Number: 1, StartedAt: now, StatusCode: 200}
		next := *c.Delivery
		next.Record(att, now)
		rs = append(rs, store.AttemptRecord{Owner: "a", Attempt: att, Delivery: &next})
	}
	updated, next, err := a.DeliveryRecordAll(ctx, rs, store.ClaimParams{Owner: "a", Now: now, LeaseUntil: now.Add(time.Minute), Limit: 2, PerEndpoint: 4})
	if err != nil || !slices.Equal(updated, []bool{true, true}) || len(next) != 2 {
		t.Fatalf("record = %v, %d claimed, %v; want both recorded and the other 2 claimed", updated, len(next), err)
	}
	want = [][]string{
		{"BEGIN", "SELECT FROM deliveries"},                                   // the recorded deliveries locked
		{"INSERT INTO delivery_attempts", "DELETE"},                           // the attempts, the leases ended
		{"UPDATE", "SELECT pg_advisory_xact_lock", "WITH RECURSIVE"},          // the deliveries, the claim
		{"SELECT FROM deliveries"},                                            // its rows locked
		{"INSERT INTO delivery_leases", "INSERT INTO commit_marks", "COMMIT"}, // leased
	}
	if got := r.take(); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("a record and claim's round trips = %q; want %q", got, want)
	}

	// A record without a claim: the update, whose rows affected are
	// checked, does not go with COMMIT, which would run whatever the check
	// found.
	c := next[0]
	att := &checkout.Attempt{DeliveryID: c.Delivery.ID, Number: 1, StartedAt: now, StatusCode: 200}
	d := *c.Delivery
	d.Record(att, now)
	if ok, err := a.DeliveryRecord(ctx, "a", att, &d); !ok || err != nil {
		t.Fatalf("record = %t, %v", ok, err)
	}
	want = [][]string{
		{"BEGIN", "SELECT FROM deliveries"},
		{"INSERT INTO delivery_attempts", "DELETE"},
		{"UPDATE"},
		{"INSERT INTO commit_marks", "COMMIT"},
	}
	if got := r.take(); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("a record's round trips = %q; want %q", got, want)
	}
	var attempts int
	for _, d := range ds {
		got, err := a.AttemptList(ctx, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		attempts += len(got)
	}
	if attempts != 3 {
		t.Errorf("%d attempts stored; want 3", attempts)
	}
}

// A statement sent later whose check of the rows it affected fails fails
// its write, which writes nothing, whether the statement went alone
// (SQLite) or in the round trip of the commit (PostgreSQL).
func TestExecLaterCheckFails(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		m, _ := newMerchantEndpoint(t, time.Unix(1700000000, 0))
		errCheck := errors.New("not what was expected")
		var affected int64 = -1
		err := db.InTx(ctx, func(tx checkout.Tx) error {
			if err := tx.MerchantInsert(ctx, m); err != nil {
				return err
			}
			return store.ExecLater(ctx, tx, func(n int64) error {
				affected = n
				return errCheck
			}, `UPDATE stores SET name = 'Renamed' WHERE id = $1`, m.ID)
		})
		if !errors.Is(err, errCheck) {
			t.Errorf("write = %v; want the check's error", err)
		}
		if affected != 1 {
			t.Errorf("the check was given %d rows affected; want 1", affected)
		}
		if _, err := db.MerchantGet(ctx, m.ID); !checkout.IsCode(err, checkout.EStoreNotFound) {
			t.Errorf("the failed write's store: %v; want not found", err)
		}
	})
}

// On PostgreSQL a claim in create sends its leases with the transaction's
// COMMIT. When that round trip fails, the write runs again without the
// claim, as when the claim itself fails: the write commits, nothing is
// handed over, the workers are freed and the delivery is left due.
func TestPipelinedLeaseFailsWithCommit(t *testing.T) {
	ctx := context.Background()
	db, _ := openRaw(t, "postgres")
	f := newCombinedFixture(t, db, 0)
	now := time.Unix(1700000000, 0) // the fixture's events' time
	c := &fakeClaimer{t: t, free: 8, perEndpoint: 4, at: now.Add(time.Second), reserved: map[string]int{}}
	db.SetClaimer(c)
	defer db.SetClaimer(nil)
	var faults atomic.Int32
	store.SetRoundTripFault(db, func(queries []string) error {
		if slices.Contains(queries, "COMMIT") && strings.HasPrefix(queries[0], "INSERT INTO delivery_leases") && faults.Add(1) == 1 {
			return errors.New("connection lost")
		}
		return nil
	})
	i := f.add(t)
	if err := db.InTx(ctx, func(tx checkout.Tx) error { return f.create(ctx, tx, i) }); err != nil {
		t.Fatalf("write whose commit with the leases failed = %v; want it committed", err)
	}
	if faults.Load() != 1 {
		t.Fatalf("%d round trips of leases and COMMIT; want 1, failed", faults.Load())
	}
	if !f.committed(t, db, i) {
		t.Error("the write was not committed")
	}
	c.waitTakes(t, 1)
	if !c.lastNil() {
		t.Errorf("handed over %v; want nothing", c.last())
	}
	cs, err := db.DeliveryClaim(ctx, store.ClaimParams{Owner: "other", Now: c.at, LeaseUntil: c.at.Add(time.Minute), Limit: 100, PerEndpoint: 100})
	if err != nil || len(cs) != 1 {
		t.Errorf("another claim = %d, %v; want the delivery left due", len(cs), err)
	}
}

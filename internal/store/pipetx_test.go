package store_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
)

// roundTrips records the round trips of a store's pipelined transactions,
// each as the first words of its statements ("INSERT INTO sessions").
type roundTrips struct {
	mu    sync.Mutex
	trips [][]string
}

func recordRoundTrips(db *store.DB) *roundTrips {
	r := &roundTrips{}
	store.SetPipelineHook(db, func(queries []string) {
		trip := make([]string, len(queries))
		for i, q := range queries {
			f := strings.Fields(q)
			switch {
			case f[0] == "INSERT":
				trip[i] = strings.Join(f[:3], " ")
			case f[0] == "SELECT":
				trip[i] = "SELECT FROM " + f[slices.Index(f, "FROM")+1]
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
		{"INSERT INTO sessions", "INSERT INTO events", "INSERT INTO deliveries", "COMMIT"},
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
	want = [][]string{{"BEGIN", "INSERT INTO stores"}, {"COMMIT"}}
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

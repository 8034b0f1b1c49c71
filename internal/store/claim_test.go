package store_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/postgres"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// claimNodes opens two stores on one PostgreSQL database, as two nodes, and
// stores a delivery due at now.
func claimNodes(t *testing.T, now time.Time) (a, b *store.DB, d *checkout.Delivery) {
	t.Helper()
	a, b, ds := claimNodesURL(t, storetest.PostgresURL(t), now, 1)
	return a, b, ds[0]
}

// claimNodesURL opens two stores on the PostgreSQL database at url, as two
// nodes, and stores n deliveries to one endpoint, due at now.
func claimNodesURL(t *testing.T, url string, now time.Time, n int) (a, b *store.DB, ds []*checkout.Delivery) {
	t.Helper()
	ctx := context.Background()
	var nodes [2]*store.DB
	for i := range nodes {
		db, err := postgres.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		nodes[i] = db
	}
	a, b = nodes[0], nodes[1]

	m, ep := newMerchantEndpoint(t, now)
	ev, err := checkout.NewEvent(checkout.EventCheckoutCreated, m.ID, checkout.ModeTest, map[string]string{"object": "checkout_session"}, now)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		ds = append(ds, checkout.NewDelivery(ev, ep, now.Add(time.Duration(i-n)*time.Millisecond)))
	}
	err = a.InTx(ctx, func(tx checkout.Tx) error {
		if err := tx.MerchantInsert(ctx, m); err != nil {
			return err
		}
		if err := tx.EndpointInsert(ctx, ep); err != nil {
			return err
		}
		if err := tx.EventInsert(ctx, ev); err != nil {
			return err
		}
		for _, d := range ds {
			if err := tx.DeliveryInsert(ctx, d); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return a, b, ds
}

// TestClaimRechecksDueTime forces the interleaving that sent a delivery
// twice on PostgreSQL: node A claimed a delivery and its lease ran out
// before A recorded its attempt (a slow attempt, or a clock behind). Node B
// reads it as a candidate; before B locks it, A records a failure (the
// lease ended, the next attempt a minute ahead). B must not lease it: it
// is pending and unleased, but no longer due. (Another node's claim cannot
// come between B's read and B's lock: claims take turns, TestClaimsTakeTurns.)
//
// PostgreSQL only: on SQLite the claim is one write transaction, and no
// other node can write between its two steps.
func TestClaimRechecksDueTime(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_790_000_000, 0)
	a, b, d := claimNodes(t, now)

	cs, err := a.DeliveryClaim(ctx, store.ClaimParams{Owner: "a", Now: now, LeaseUntil: now.Add(time.Second), Limit: 10, PerEndpoint: 4})
	if err != nil || len(cs) != 1 {
		t.Fatalf("node A's claim = %d, %v; want the delivery", len(cs), err)
	}
	at := now.Add(2 * time.Second) // A's lease has run out
	params := func(owner string) store.ClaimParams {
		return store.ClaimParams{Owner: owner, Now: at, LeaseUntil: at.Add(time.Minute), Limit: 10, PerEndpoint: 4}
	}
	interleaved := false
	store.SetClaimHook(b, func() {
		if interleaved {
			return
		}
		interleaved = true
		att := &checkout.Attempt{DeliveryID: d.ID, Number: 1, StartedAt: at, StatusCode: 500, Error: "receiver answered 500"}
		next := *cs[0].Delivery
		next.Record(att, at)
		// Not t.Fatal: this runs on B's committer goroutine.
		if ok, err := a.DeliveryRecord(ctx, "a", att, &next); !ok || err != nil {
			t.Errorf("node A's record = %t, %v", ok, err)
		}
	})
	got, err := b.DeliveryClaim(ctx, params("b"))
	if err != nil {
		t.Fatal(err)
	}
	if !interleaved {
		t.Fatal("node B's claim found no candidate: the interleaving did not happen")
	}
	if len(got) != 0 {
		t.Errorf("node B claimed %d deliveries after node A recorded a failure; want none until the retry time", len(got))
	}
	d2, err := b.DeliveryGet(ctx, d.ID)
	if err != nil || d2.Attempts != 1 || !d2.NextAttemptAt.Equal(at.Add(time.Minute)) {
		t.Errorf("delivery = %+v, %v; want 1 attempt, the next in a minute", d2, err)
	}
	// At the retry time it is due again, for either node.
	later := params("b")
	later.Now, later.LeaseUntil = at.Add(time.Minute), at.Add(2*time.Minute)
	if cs, err := b.DeliveryClaim(ctx, later); err != nil || len(cs) != 1 {
		t.Errorf("claim at the retry time = %d, %v; want 1", len(cs), err)
	}
}

// TestClaimsTakeTurns: two nodes claim at once, with an endpoint's cap of 4
// and 10 of its deliveries due. Node B's claim starts while node A's is
// between its read of the candidates and its commit; B waits for A's claim
// lock (Dialect.ClaimLock), then counts A's 4 leases and takes none. Without
// the lock each would count no lease and take 4: 8 attempts at once to an
// endpoint capped at 4.
func TestClaimsTakeTurns(t *testing.T) {
	ctx := context.Background()
	url := storetest.PostgresURL(t)
	now := time.Unix(1_790_000_000, 0)
	a, b, ds := claimNodesURL(t, url, now, 10)
	raw, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	params := func(owner string) store.ClaimParams {
		return store.ClaimParams{Owner: owner, Now: now, LeaseUntil: now.Add(time.Minute), Limit: 10, PerEndpoint: 4}
	}
	type result struct {
		n   int
		err error
	}
	fromB := make(chan result, 1)
	store.SetClaimHook(a, func() {
		store.SetClaimHook(a, nil)
		go func() {
			cs, err := b.DeliveryClaim(ctx, params("b"))
			fromB <- result{len(cs), err}
		}()
		// Wait until B waits for the lock A holds (or, without one,
		// has claimed).
		for {
			var waiting bool
			err := raw.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted)`).Scan(&waiting)
			if err != nil {
				t.Error(err)
				return
			}
			if waiting || len(fromB) > 0 {
				return
			}
		}
	})
	cs, err := a.DeliveryClaim(ctx, params("a"))
	if err != nil || len(cs) != 4 {
		t.Fatalf("node A's claim = %d, %v; want 4, the cap", len(cs), err)
	}
	if got := <-fromB; got.err != nil || got.n != 0 {
		t.Errorf("node B's claim, begun during A's = %d, %v; want none: A holds the endpoint's 4", got.n, got.err)
	}
	if len(ds) != 10 {
		t.Fatalf("%d deliveries", len(ds))
	}
}

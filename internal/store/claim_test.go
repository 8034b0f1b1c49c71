package store_test

import (
	"context"
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
	ctx := context.Background()
	url := storetest.PostgresURL(t)
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

	m, err := checkout.NewMerchant(checkout.MerchantParams{Name: "Acme", Currency: "USD"}, now)
	if err != nil {
		t.Fatal(err)
	}
	ep, err := checkout.NewEndpoint(checkout.EndpointParams{MerchantID: m.ID, Mode: checkout.ModeTest,
		URL: "https://hooks.example.com/", Events: []string{checkout.AllEvents}}, now)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := checkout.NewEvent(checkout.EventCheckoutCreated, m.ID, checkout.ModeTest, map[string]string{"object": "checkout_session"}, now)
	if err != nil {
		t.Fatal(err)
	}
	d = checkout.NewDelivery(ev, ep, now)
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
		return tx.DeliveryInsert(ctx, d)
	})
	if err != nil {
		t.Fatal(err)
	}
	return a, b, d
}

// TestClaimRechecksDueTime forces the interleaving that sent a delivery
// twice on PostgreSQL: node B reads a due delivery as a candidate; before B
// locks it, node A claims it, attempts it, and records a failure (the lease
// cleared, the next attempt a minute ahead). B must not lease it: it is
// pending and unleased, but no longer due.
//
// PostgreSQL only: on SQLite the claim is one write transaction, and no
// other node can write between its two steps.
func TestClaimRechecksDueTime(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_790_000_000, 0)
	a, b, d := claimNodes(t, now)

	params := func(owner string) store.ClaimParams {
		return store.ClaimParams{Owner: owner, Now: now, LeaseUntil: now.Add(time.Minute), Limit: 10, PerEndpoint: 4}
	}
	interleaved := false
	store.SetClaimHook(b, func() {
		if interleaved {
			return
		}
		interleaved = true
		cs, err := a.DeliveryClaim(ctx, params("a"))
		if err != nil || len(cs) != 1 {
			t.Fatalf("node A's claim = %d, %v; want the delivery", len(cs), err)
		}
		att := &checkout.Attempt{DeliveryID: d.ID, Number: 1, StartedAt: now, StatusCode: 500, Error: "receiver answered 500"}
		next := *cs[0].Delivery
		next.Record(att, now)
		if ok, err := a.DeliveryRecord(ctx, "a", att, &next); !ok || err != nil {
			t.Fatalf("node A's record = %t, %v", ok, err)
		}
	})
	cs, err := b.DeliveryClaim(ctx, params("b"))
	if err != nil {
		t.Fatal(err)
	}
	if !interleaved {
		t.Fatal("node B's claim found no candidate: the interleaving did not happen")
	}
	if len(cs) != 0 {
		t.Errorf("node B claimed %d deliveries after node A recorded a failure; want none until the retry time", len(cs))
	}
	got, err := b.DeliveryGet(ctx, d.ID)
	if err != nil || got.Attempts != 1 || !got.NextAttemptAt.Equal(now.Add(time.Minute)) {
		t.Errorf("delivery = %+v, %v; want 1 attempt, the next in a minute", got, err)
	}
	// At the retry time it is due again, for either node.
	later := params("b")
	later.Now, later.LeaseUntil = now.Add(time.Minute), now.Add(2*time.Minute)
	if cs, err := b.DeliveryClaim(ctx, later); err != nil || len(cs) != 1 {
		t.Errorf("claim at the retry time = %d, %v; want 1", len(cs), err)
	}
}

// TestClaimRechecksLease forces an interleaving that a lease in a table of
// its own makes possible on PostgreSQL: node B reads a due delivery as a
// candidate; before B locks it, node A claims it and commits, which writes
// A's lease and leaves the delivery's row as it was, so B's lock finds the
// row free. B must not lease it: A's lease is running. (B's lock reads the
// lease as it is when that statement starts, after A's commit here; when
// A commits while the statement runs, the lease's write, which checks the
// lease's newest row, is what refuses it.)
func TestClaimRechecksLease(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_790_000_000, 0)
	a, b, d := claimNodes(t, now)
	params := func(owner string) store.ClaimParams {
		return store.ClaimParams{Owner: owner, Now: now, LeaseUntil: now.Add(time.Minute), Limit: 10, PerEndpoint: 4}
	}
	interleaved := false
	store.SetClaimHook(b, func() {
		if interleaved {
			return
		}
		interleaved = true
		// Not t.Fatal: this runs on B's committer goroutine.
		if cs, err := a.DeliveryClaim(ctx, params("a")); err != nil || len(cs) != 1 {
			t.Errorf("node A's claim = %d, %v; want the delivery", len(cs), err)
		}
	})
	cs, err := b.DeliveryClaim(ctx, params("b"))
	if err != nil {
		t.Fatal(err)
	}
	if !interleaved {
		t.Fatal("node B's claim found no candidate: the interleaving did not happen")
	}
	if len(cs) != 0 {
		t.Errorf("node B claimed %d deliveries that node A had leased; want none", len(cs))
	}
	// A's record is still A's: it ends A's lease and updates the delivery.
	att := &checkout.Attempt{DeliveryID: d.ID, Number: 1, StartedAt: now, StatusCode: 200}
	next := *d
	next.Record(att, now)
	if ok, err := a.DeliveryRecord(ctx, "a", att, &next); !ok || err != nil {
		t.Errorf("node A's record = %t, %v; want it stored", ok, err)
	}
}

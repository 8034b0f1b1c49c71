package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/postgres"
	"github.com/checkoutd/checkoutd/internal/store/sqlite"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// TestEndpointChangeRacingFanOut races an event's fan-out (the transaction
// that lists a store's enabled endpoints and inserts a delivery for each)
// against disabling or deleting one of those endpoints, on two nodes, in
// both orders. Whatever the order, no pending delivery may be left for an
// endpoint that is disabled (it would be delivered although disabling
// cancels queued deliveries) or deleted (it would stay pending for ever).
//
// Each case holds the first transaction open until the second one is
// blocked behind it: on PostgreSQL, until pg_stat_activity shows the second
// node waiting on a lock; on SQLite, the second cannot even begin while the
// first holds the write lock. If the second does not wait at all, it
// finishes first and the outcome shows it.
func TestEndpointChangeRacingFanOut(t *testing.T) {
	ctx := context.Background()
	changes := map[string]func(tx checkout.Tx, id string) error{
		"disable": func(tx checkout.Tx, id string) error {
			ep, err := tx.EndpointGetForUpdate(ctx, id)
			if err != nil {
				return err
			}
			ep.Enabled = false
			if err := tx.EndpointUpdate(ctx, ep); err != nil {
				return err
			}
			_, err = tx.DeliveryCancelPending(ctx, id, time.Now())
			return err
		},
		"delete": func(tx checkout.Tx, id string) error { return tx.EndpointDelete(ctx, id) },
	}
	for _, name := range storetest.Databases {
		for change, fn := range changes {
			for _, fanOutFirst := range []bool{true, false} {
				order := "change first"
				if fanOutFirst {
					order = "fan-out first"
				}
				t.Run(fmt.Sprintf("%s/%s/%s", name, change, order), func(t *testing.T) {
					first, second, blocked := twoNodes(t, name)
					m, err := checkout.NewMerchant(checkout.MerchantParams{Name: "Acme", Currency: "USD"}, time.Now())
					if err != nil {
						t.Fatal(err)
					}
					ep, err := checkout.NewEndpoint(checkout.EndpointParams{MerchantID: m.ID, Mode: checkout.ModeTest,
						URL: "https://hooks.example.com/", Events: []string{checkout.AllEvents}}, time.Now())
					if err != nil {
						t.Fatal(err)
					}
					if err := first.InTx(ctx, func(tx checkout.Tx) error {
						if err := tx.MerchantInsert(ctx, m); err != nil {
							return err
						}
						return tx.EndpointInsert(ctx, ep)
					}); err != nil {
						t.Fatal(err)
					}
					e, err := checkout.NewEvent(checkout.EventCheckoutCreated, m.ID, checkout.ModeTest, map[string]string{}, time.Now())
					if err != nil {
						t.Fatal(err)
					}
					var d *checkout.Delivery
					fanOut := func(tx checkout.Tx) error {
						if err := tx.EventInsert(ctx, e); err != nil {
							return err
						}
						eps, err := tx.EndpointListEnabled(ctx, m.ID, checkout.ModeTest)
						if err != nil {
							return err
						}
						for _, ep := range eps {
							d = checkout.NewDelivery(e, ep, time.Now())
							if err := tx.DeliveryInsert(ctx, d); err != nil {
								return err
							}
						}
						return nil
					}
					changeTx := func(tx checkout.Tx) error { return fn(tx, ep.ID) }

					holdFirst, runFirst := fanOut, changeTx
					if !fanOutFirst {
						holdFirst, runFirst = changeTx, fanOut
					}
					held := make(chan struct{})
					release := make(chan struct{})
					firstDone := make(chan error, 1)
					go func() {
						firstDone <- first.InTx(ctx, func(tx checkout.Tx) error {
							if err := holdFirst(tx); err != nil {
								return err
							}
							close(held)
							<-release
							return nil
						})
					}()
					select {
					case <-held:
					case err := <-firstDone:
						t.Fatalf("first transaction: %v", err)
					}
					secondDone := make(chan error, 1)
					go func() { secondDone <- second.InTx(ctx, runFirst) }()
					finishedEarly := blocked(secondDone)
					close(release)
					if err := <-firstDone; err != nil {
						t.Fatalf("first transaction: %v", err)
					}
					if !finishedEarly {
						if err := <-secondDone; err != nil {
							t.Fatalf("second transaction: %v", err)
						}
					}

					if d == nil {
						return // the fan-out ran second and found no endpoint: nothing queued
					}
					got, err := first.DeliveryGet(ctx, d.ID)
					switch {
					case change == "delete" && !checkout.IsCode(err, checkout.ENotFound):
						t.Errorf("delivery of the deleted endpoint: %+v, %v; want it gone", got, err)
					case change == "disable" && (err != nil || got.Status != checkout.DeliveryCanceled):
						t.Errorf("delivery of the disabled endpoint: %+v, %v; want canceled", got, err)
					}
				})
			}
		}
	}
}

// twoNodes opens two handles on one fresh database, and returns with them
// a function that waits until a transaction of the second handle, which
// reports on done, is blocked behind a lock of the first. It returns true
// if that transaction finished instead (it did not wait).
func twoNodes(t *testing.T, name string) (first, second *store.DB, blocked func(done chan error) bool) {
	t.Helper()
	ctx := context.Background()
	open := func(db *store.DB, err error) *store.DB {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	switch name {
	case "sqlite":
		path := storetest.SQLitePath(t)
		first = open(sqlite.Open(ctx, path))
		second = open(sqlite.Open(ctx, path))
		// The first transaction holds SQLite's write lock (BEGIN
		// IMMEDIATE): the second cannot begin until it ends.
		return first, second, func(chan error) bool { return false }
	case "postgres":
		url := storetest.PostgresURL(t)
		app := "checkoutd_test_" + checkout.NewID("", 8)
		first = open(postgres.Open(ctx, url))
		second = open(postgres.Open(ctx, url+"&application_name="+app))
		admin, err := sql.Open("pgx", url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { admin.Close() })
		return first, second, func(done chan error) bool {
			deadline := time.Now().Add(30 * time.Second)
			for {
				select {
				case err := <-done:
					if err != nil {
						t.Fatalf("second transaction: %v", err)
					}
					return true
				default:
				}
				var n int
				err := admin.QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`, app).Scan(&n)
				if err != nil {
					t.Fatal(err)
				}
				if n > 0 {
					return false
				}
				if time.Now().After(deadline) {
					t.Fatal("the second transaction neither finished nor waited on a lock")
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
	}
	t.Fatalf("unknown database %q", name)
	return nil, nil, nil
}

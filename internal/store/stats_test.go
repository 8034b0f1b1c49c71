package store_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/postgres"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// Stats counts database errors by kind, and only errors: a row not found or
// a key taken is an answer.
func TestStatsCountErrors(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		if _, err := db.MerchantGet(ctx, checkout.NewStoreID()); !checkout.IsCode(err, checkout.EStoreNotFound) {
			t.Fatalf("MerchantGet(unknown) = %v", err)
		}
		m, err := checkout.NewMerchant(checkout.MerchantParams{Name: "Acme", Currency: "USD"}, time.Unix(1_790_000_000, 0))
		if err != nil {
			t.Fatal(err)
		}
		insert := func() error { return db.InTx(ctx, func(tx checkout.Tx) error { return tx.MerchantInsert(ctx, m) }) }
		if err := insert(); err != nil {
			t.Fatal(err)
		}
		if err := insert(); !checkout.IsCode(err, checkout.EConflict) {
			t.Fatalf("second MerchantInsert = %v; want conflict", err)
		}
		if s := db.Stats(); s.Unavailable != 0 || s.Canceled != 0 || s.Other != 0 {
			t.Errorf("Stats after answers = %+v; want no errors", s)
		}

		canceled, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := db.MerchantList(canceled); err == nil {
			t.Fatal("MerchantList(canceled context) = nil")
		}
		// A delivery in a status the schema refuses: a failure of no
		// particular kind.
		err = db.InTx(ctx, func(tx checkout.Tx) error {
			return tx.DeliveryInsert(ctx, &checkout.Delivery{ID: "whd_x", Status: "bogus"})
		})
		if !checkout.IsCode(err, checkout.EInternal) {
			t.Fatalf("DeliveryInsert(bogus status) = %v; want internal_error", err)
		}
		s := db.Stats()
		if s.Unavailable != 0 || s.Canceled != 1 || s.Other != 1 {
			t.Errorf("Stats = %+v; want 1 canceled, 1 other (each error counted once)", s)
		}
		if len(s.Pools) == 0 || s.Pools[0].MaxOpenConnections == 0 {
			t.Errorf("Stats.Pools = %+v; want the pools", s.Pools)
		}
	})
}

// A PostgreSQL that does not answer counts as unavailable. No server is
// needed: nothing listens on port 1.
func TestStatsCountUnavailable(t *testing.T) {
	pool, err := sql.Open("pgx", "postgres://postgres@127.0.0.1:1/none?connect_timeout=5")
	if err != nil {
		t.Fatal(err)
	}
	db := store.New(postgres.Dialect, pool, pool)
	defer db.Close()
	if err := db.Ping(context.Background()); !checkout.IsCode(err, checkout.EUnavailable) {
		t.Fatalf("Ping(nothing listening) = %v; want service_unavailable", err)
	}
	if s := db.Stats(); s.Unavailable != 1 || s.Other != 0 || len(s.Pools) != 1 || s.Pools[0].Name != "main" {
		t.Errorf("Stats = %+v; want 1 unavailable, one pool", s)
	}
}

package store_test

import (
	"context"
	"testing"

	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/postgres"
	"github.com/checkoutd/checkoutd/internal/store/sqlite"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// TestConformance runs the conformance suite on every database.
func TestConformance(t *testing.T) {
	for _, name := range storetest.Databases {
		t.Run(name, func(t *testing.T) {
			storetest.Exercise(t, func(t *testing.T) *store.DB { return storetest.Open(t, name) })
		})
	}
}

// TestConcurrentCompleteTwoNodes races transactions from two handles on one
// database, as two nodes would: on SQLite two write connections (each
// transaction BEGIN IMMEDIATE), on PostgreSQL two pools (SELECT ... FOR
// UPDATE).
func TestConcurrentCompleteTwoNodes(t *testing.T) {
	ctx := context.Background()
	for _, name := range storetest.Databases {
		t.Run(name, func(t *testing.T) {
			var open func() (*store.DB, error)
			switch name {
			case "sqlite":
				path := storetest.SQLitePath(t)
				open = func() (*store.DB, error) { return sqlite.Open(ctx, path) }
			case "postgres":
				url := storetest.PostgresURL(t)
				open = func() (*store.DB, error) { return postgres.Open(ctx, url) }
			}
			var dbs []*store.DB
			for range 2 {
				db, err := open()
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { db.Close() })
				dbs = append(dbs, db)
			}
			storetest.ConcurrentComplete(t, dbs...)
		})
	}
}

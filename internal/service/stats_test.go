package service_test

import (
	"context"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// Stats counts sessions created (an Idempotency-Key replay is not a new
// session) and expired (by the job or on read, each once), by mode.
func TestStats(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		want := func(created, expired map[checkout.Mode]int64) {
			t.Helper()
			got := f.svc.Stats()
			for _, m := range []checkout.Mode{checkout.ModeTest, checkout.ModeLive} {
				if got.SessionsCreated[m] != created[m] || got.SessionsExpired[m] != expired[m] {
					t.Errorf("Stats = %+v; want created %v, expired %v", got, created, expired)
					return
				}
			}
		}
		want(nil, nil)

		a := f.create(t)
		f.create(t)
		p, _ := checkout.ParseCreateRequest([]byte(`{"items":[{"name":"Sword","amount":1500}]}`))
		live, _ := f.newKey(t, checkout.ModeLive, checkout.KeyBearer)
		for range 2 { // the second is a replay
			if _, err := f.svc.CreateSession(ctx, service.CreateSessionParams{Key: live, StoreID: f.m.ID, Params: p, IdempotencyKey: "k"}); err != nil {
				t.Fatal(err)
			}
		}
		// A request that fails creates nothing.
		if _, err := f.svc.CreateSession(ctx, service.CreateSessionParams{Key: f.key, StoreID: checkout.NewStoreID(), Params: p}); err == nil {
			t.Fatal("CreateSession(another store) = nil")
		}
		want(map[checkout.Mode]int64{checkout.ModeTest: 2, checkout.ModeLive: 1}, nil)

		f.clock.Advance(time.Hour)
		if _, err := f.svc.GetSession(ctx, f.key, f.m.ID, a.ID); err != nil { // expires a on read
			t.Fatal(err)
		}
		if n, err := f.svc.ExpireAll(ctx); n != 2 || err != nil {
			t.Fatalf("ExpireAll = %d, %v; want the other two", n, err)
		}
		if _, err := f.svc.GetSession(ctx, f.key, f.m.ID, a.ID); err != nil { // expired already
			t.Fatal(err)
		}
		want(map[checkout.Mode]int64{checkout.ModeTest: 2, checkout.ModeLive: 1}, map[checkout.Mode]int64{checkout.ModeTest: 2, checkout.ModeLive: 1})
	})
}

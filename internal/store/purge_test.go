package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// Purges delete in bounded batches, each in a transaction of its own, until
// a batch comes back short; between batches the writer is free, so other
// writes go through while a large purge runs.
func TestPurgeInBatches(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		old := time.Unix(1_790_000_000, 0)
		cut := old.Add(time.Hour)
		m, ep := newMerchantEndpoint(t, old)
		const (
			deliveries = 10 // finished, each with an event and an attempt
			loneEvents = 2
			logs       = 7
			keys       = 6
		)
		var ds []*checkout.Delivery
		err := db.InTx(ctx, func(tx checkout.Tx) error {
			if err := tx.MerchantInsert(ctx, m); err != nil {
				return err
			}
			if err := tx.EndpointInsert(ctx, ep); err != nil {
				return err
			}
			for i := range deliveries + loneEvents + 1 {
				created := old
				if i == deliveries+loneEvents {
					created = cut // recent: kept
				}
				ev, err := checkout.NewEvent(checkout.EventCheckoutCreated, m.ID, checkout.ModeTest, map[string]string{"object": "checkout_session"}, created)
				if err != nil {
					return err
				}
				if err := tx.EventInsert(ctx, ev); err != nil {
					return err
				}
				if i >= deliveries {
					continue
				}
				d := checkout.NewDelivery(ev, ep, created)
				d.Status = checkout.DeliverySucceeded
				if err := tx.DeliveryInsert(ctx, d); err != nil {
					return err
				}
				ds = append(ds, d)
			}
			for i := range keys {
				r := &checkout.IdempotencyRecord{MerchantID: m.ID, Mode: checkout.ModeTest, Key: fmt.Sprint("key-", i),
					RequestHash: "h", Body: []byte(`{}`), CreatedAt: old}
				if err := tx.IdempotencyInsert(ctx, r); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			a := &checkout.Attempt{DeliveryID: d.ID, Number: 1, StartedAt: old, StatusCode: 200}
			if _, err := db.DeliveryRecord(ctx, "x", a, d); err != nil {
				t.Fatal(err)
			}
		}
		var rl []*checkout.RequestLog
		for range logs {
			rl = append(rl, &checkout.RequestLog{RequestID: checkout.NewRequestID(), MerchantID: m.ID, Mode: checkout.ModeTest,
				APIKeyID: checkout.NewAPIKeyID(), Method: "GET", Path: "/v1", Status: 200, CreatedAt: old})
		}
		if err := db.RequestLogInsert(ctx, rl); err != nil {
			t.Fatal(err)
		}

		const batch = 3
		batches := map[string][]int64{}
		store.SetPurgeBatch(db, batch, func(table string, n int64) {
			batches[table] = append(batches[table], n)
			// Another writer gets through between batches.
			wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			other, err := checkout.NewMerchant(checkout.MerchantParams{Name: "Other", Currency: "USD"}, old)
			if err != nil {
				t.Fatal(err)
			}
			if err := db.InTx(wctx, func(tx checkout.Tx) error { return tx.MerchantInsert(wctx, other) }); err != nil {
				t.Errorf("a write between %s batches = %v; want it to go through", table, err)
			}
		})
		for _, c := range []struct {
			name  string
			purge func(context.Context, time.Time) (int64, error)
			want  int64
		}{
			{"RequestLogPurge", db.RequestLogPurge, logs},
			{"IdempotencyPurge", db.IdempotencyPurge, keys},
			{"EventPurge", db.EventPurge, deliveries + loneEvents},
		} {
			if n, err := c.purge(ctx, cut); n != c.want || err != nil {
				t.Errorf("%s = %d, %v; want %d", c.name, n, err, c.want)
			}
		}
		for table, rows := range map[string]int64{"request_logs": logs, "idempotency_keys": keys, "deliveries": deliveries, "events": deliveries + loneEvents} {
			got := batches[table]
			var sum int64
			for _, n := range got {
				if n > batch {
					t.Errorf("%s: a batch deleted %d rows; want at most %d", table, n, batch)
				}
				sum += n
			}
			// Full batches, then a short one (empty when the rows divide).
			if want := int(rows/batch + 1); len(got) != want || sum != rows {
				t.Errorf("%s batches = %v; want %d batches deleting %d rows", table, got, want, rows)
			}
		}
		for _, d := range ds {
			if as, err := db.AttemptList(ctx, d.ID); err != nil || len(as) != 0 {
				t.Errorf("attempts of purged delivery %s = %d, %v; want none", d.ID, len(as), err)
			}
		}
		if n, err := db.EventPurge(ctx, cut.Add(time.Second)); n != 1 || err != nil {
			t.Errorf("EventPurge of the recent event = %d, %v; want 1", n, err)
		}
	})
}

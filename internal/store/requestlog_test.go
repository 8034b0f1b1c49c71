package store_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// TestRequestLogInsert writes batches that fill several statements, and one
// that does not fill one, and reads every log back.
func TestRequestLogInsert(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		t0 := time.UnixMilli(1_800_000_000_123)
		var all []*checkout.RequestLog
		for _, size := range []int{1, 250, 100} {
			var batch []*checkout.RequestLog
			for range size {
				i := len(all) + len(batch)
				batch = append(batch, &checkout.RequestLog{
					RequestID:    checkout.NewRequestID(),
					MerchantID:   "3f1c9a2e-8b7d-4c1e-9f0a-1b2c3d4e5f60",
					Mode:         checkout.ModeTest,
					APIKeyID:     "key_0123456789abcdef0123456789abcdef",
					Method:       "POST",
					Path:         fmt.Sprintf("/v1/stores/x/checkouts/%d", i),
					Status:       201,
					Duration:     time.Duration(i) * time.Microsecond,
					RequestBody:  fmt.Sprintf(`{"n":%d}`, i),
					ResponseBody: `{"ok":true}`,
					CreatedAt:    t0.Add(time.Duration(i) * time.Millisecond),
				})
			}
			if err := db.RequestLogInsert(ctx, batch); err != nil {
				t.Fatalf("RequestLogInsert(%d logs) = %v", size, err)
			}
			all = append(all, batch...)
		}
		for _, want := range all {
			got, err := db.RequestLogGet(ctx, want.RequestID)
			if err != nil {
				t.Fatalf("RequestLogGet(%s) = %v", want.RequestID, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("RequestLogGet(%s) = %+v; want %+v", want.RequestID, got, want)
			}
		}
		list, err := db.RequestLogList(ctx, checkout.RequestLogListParams{MerchantID: all[0].MerchantID, Mode: checkout.ModeTest, Limit: 1000})
		if err != nil || len(list) != len(all) {
			t.Fatalf("RequestLogList = %d logs, %v; want %d", len(list), err, len(all))
		}
	})
}

// A batch of logs notes each key's last use, at most once per
// checkout.APIKeyUseGranularity: a use less than that after the one stored
// leaves it, one at least that long after replaces it, key by key.
func TestRequestLogsNoteKeysLastUse(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		t0 := time.Unix(1_800_000_000, 0)
		m := &checkout.Merchant{ID: checkout.NewStoreID(), Name: "Acme", Currency: "USD", StatementDescriptor: "ACME GAMES", CreatedAt: t0}
		var keys []*checkout.APIKey
		for i := range 2 {
			keys = append(keys, &checkout.APIKey{ID: checkout.NewAPIKeyID(), MerchantID: m.ID, Mode: checkout.ModeTest, Type: checkout.KeyBearer,
				Permissions: []checkout.Permission{checkout.PermCheckoutsRead}, SecretHash: checkout.HashSecret(fmt.Sprint("s", i)), SecretHint: "abcd", CreatedAt: t0})
		}
		if err := db.InTx(ctx, func(tx checkout.Tx) error {
			if err := tx.MerchantInsert(ctx, m); err != nil {
				return err
			}
			for _, k := range keys {
				if err := tx.APIKeyInsert(ctx, k); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		use := func(k *checkout.APIKey, at time.Time) *checkout.RequestLog {
			return &checkout.RequestLog{RequestID: checkout.NewRequestID(), MerchantID: m.ID, Mode: checkout.ModeTest, APIKeyID: k.ID,
				Method: "GET", Path: "/v1", Route: "/v1", Status: 200, CreatedAt: at}
		}
		grain := checkout.APIKeyUseGranularity
		for _, step := range []struct {
			logs []*checkout.RequestLog
			want []time.Time // each key's last use after the batch; zero: none
		}{
			{[]*checkout.RequestLog{use(keys[0], t0)}, []time.Time{t0, {}}},
			{[]*checkout.RequestLog{use(keys[0], t0.Add(grain-time.Second)), use(keys[1], t0.Add(time.Second))}, []time.Time{t0, t0.Add(time.Second)}},
			{[]*checkout.RequestLog{use(keys[0], t0.Add(grain)), use(keys[1], t0.Add(grain))}, []time.Time{t0.Add(grain), t0.Add(time.Second)}},
			{[]*checkout.RequestLog{use(keys[1], t0.Add(grain+time.Second)), use(keys[0], t0.Add(grain+time.Second))}, []time.Time{t0.Add(grain), t0.Add(grain + time.Second)}},
		} {
			if err := db.RequestLogInsert(ctx, step.logs); err != nil {
				t.Fatal(err)
			}
			for i, k := range keys {
				got, err := db.APIKeyGet(ctx, k.ID)
				if err != nil {
					t.Fatal(err)
				}
				switch w := step.want[i]; {
				case w.IsZero() && got.LastUsedAt != nil:
					t.Errorf("key %d last used %v; want never", i, got.LastUsedAt)
				case !w.IsZero() && (got.LastUsedAt == nil || !got.LastUsedAt.Equal(w)):
					t.Errorf("key %d last used %v; want %v", i, got.LastUsedAt, w)
				}
			}
		}
	})
}

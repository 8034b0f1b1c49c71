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

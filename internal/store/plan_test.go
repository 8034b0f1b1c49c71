package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// TestDeliveryListPlans explains the delivery list's query for every
// combination of filters, and the queries of an endpoint's health and of
// Retry all failed, on both databases: each reads an index (no table scan)
// that also orders the list (no sort, but of the few deliveries of one
// event), so a page costs the same with a million deliveries kept. The
// bench measures the time (bench/README.md); this keeps the plans from
// regressing.
func TestDeliveryListPlans(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		for mask := range 1 << 6 {
			f := checkout.DeliveryFilter{MerchantID: checkout.NewStoreID(), Mode: checkout.ModeTest}
			var name []string
			set := func(bit int, what string, fn func()) {
				if mask&(1<<bit) != 0 {
					fn()
					name = append(name, what)
				}
			}
			set(0, "endpoint", func() { f.EndpointID = "we_x" })
			set(1, "status", func() { f.Status = checkout.DeliveryFailed })
			set(2, "type", func() { f.EventType = checkout.EventCheckoutCompleted })
			set(3, "event", func() { f.EventID = "evt_x" })
			set(4, "range", func() { f.From, f.To = time.Unix(1, 0), time.Unix(2, 0) })
			set(5, "cursor", func() { f.After = checkout.Cursor{At: time.Unix(2, 0), ID: "whd_x"} })
			q, args := store.DeliveryListQuery(db, f)
			plan, err := store.Explain(ctx, db, q, args...)
			if err != nil {
				t.Fatalf("explain %v: %v", name, err)
			}
			checkPlan(t, fmt.Sprint(name), plan, f.EventID == "")
		}
		for _, c := range store.EndpointQueries(db) {
			plan, err := store.Explain(ctx, db, c.Query, c.Args...)
			if err != nil {
				t.Fatalf("explain %s: %v", c.Query, err)
			}
			if !slices.ContainsFunc(strings.Split(c.Index, "|"), func(index string) bool { return strings.Contains(plan, index) }) {
				t.Errorf("%s\nplan:\n%s\nwant it to read %s", c.Query, plan, c.Index)
			}
			checkPlan(t, c.Index, plan, false)
		}
	})
}

// checkPlan fails when plan scans a table, or sorts where ordered says the
// index must give the order.
func checkPlan(t *testing.T, what, plan string, ordered bool) {
	t.Helper()
	for _, bad := range []string{"SCAN deliveries", "SCAN delivery_attempts", "Seq Scan"} {
		if strings.Contains(plan, bad) {
			t.Errorf("%s: the plan scans a table:\n%s", what, plan)
		}
	}
	if ordered && (strings.Contains(plan, "TEMP B-TREE") || strings.Contains(plan, "Sort")) {
		t.Errorf("%s: the plan sorts; want the index's order:\n%s", what, plan)
	}
}

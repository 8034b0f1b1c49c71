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

// TestClaimPlans explains the claim's queries on both databases: the
// candidates are read through the partial index of pending deliveries by
// endpoint, a few entries per endpoint, and the running leases through the
// leases' own index; the read of what was leased, by id; never by a scan
// of the due deliveries or of the table, so a claim costs the same with a
// backlog of a million or 30 days of finished deliveries kept (the bench's
// -claim-history row measures it).
func TestClaimPlans(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		for _, c := range store.ClaimQueries(db) {
			plan, err := store.Explain(context.Background(), db, c.Query, c.Args...)
			if err != nil {
				t.Fatalf("explain %s: %v", c.Query, err)
			}
			for _, want := range c.Indexes {
				if !slices.ContainsFunc(strings.Split(want, "|"), func(index string) bool { return strings.Contains(plan, index) }) {
					t.Errorf("%s\nplan:\n%s\nwant it to read %s", c.Query, plan, want)
				}
			}
			if c.Avoid != "" && strings.Contains(plan, c.Avoid) {
				t.Errorf("%s\nplan:\n%s\nwant it not to read %s", c.Query, plan, c.Avoid)
			}
			checkPlan(t, c.Indexes[0], plan, false)
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

// TestPaymentListPlans explains the Payments list's query for every
// combination of filters, with and without a cursor, and the count of the
// payments to refund, on both databases: each reads the index of migration
// 0016 that serves it, in the list's order (no table scan, no sort), so a
// page costs the same with a million payments kept.
func TestPaymentListPlans(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		for _, c := range []struct {
			p     checkout.PaymentListParams
			index string // "a|b": either
		}{
			{checkout.PaymentListParams{}, "payments_list"},
			{checkout.PaymentListParams{Status: checkout.PaymentFailed}, "payments_status"},
			{checkout.PaymentListParams{RefundDue: true}, "payments_refund_due"},
			{checkout.PaymentListParams{RefundDue: true, Status: checkout.PaymentFailed}, "payments_refund_due|payments_status"},
		} {
			for _, after := range []checkout.Cursor{{}, {At: time.Unix(2, 0), ID: "pay_x"}} {
				p := c.p
				p.MerchantID, p.Mode, p.After = checkout.NewStoreID(), checkout.ModeLive, after
				q, args := store.PaymentListQuery(db, p)
				plan, err := store.Explain(ctx, db, q, args...)
				if err != nil {
					t.Fatalf("explain %+v: %v", p, err)
				}
				if !slices.ContainsFunc(strings.Split(c.index, "|"), func(index string) bool { return strings.Contains(plan, index) }) {
					t.Errorf("PaymentList(%+v)\nplan:\n%s\nwant it to read %s", p, plan, c.index)
				}
				checkPaymentPlan(t, fmt.Sprintf("%+v", p), plan, true)
			}
		}
		plan, err := store.Explain(ctx, db, store.PaymentCountRefundDueQuery, checkout.NewStoreID(), "live", 100)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(plan, "payments_refund_due") {
			t.Errorf("PaymentCountRefundDue plan:\n%s\nwant it to read payments_refund_due", plan)
		}
		checkPaymentPlan(t, "PaymentCountRefundDue", plan, false)
	})
}

// checkPaymentPlan fails when plan scans the payments table, or sorts where
// ordered says the index must give the order.
func checkPaymentPlan(t *testing.T, what, plan string, ordered bool) {
	t.Helper()
	if strings.Contains(plan, "SCAN payments") || strings.Contains(plan, "Seq Scan") {
		t.Errorf("%s: the plan scans the table:\n%s", what, plan)
	}
	if ordered && (strings.Contains(plan, "TEMP B-TREE") || strings.Contains(plan, "Sort")) {
		t.Errorf("%s: the plan sorts; want the index's order:\n%s", what, plan)
	}
}

// TestAPIKeyEachActivePlan explains the read of the keys created since a
// time, which a node's index of keys runs again and again under a flood of
// made-up keys (service.keyIndex): it reads the index of keys by creation,
// so it costs the few keys of the last minutes, not a scan of every key.
func TestAPIKeyEachActivePlan(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		plan, err := store.Explain(context.Background(), db, store.APIKeyEachActiveQuery, time.Now().Unix())
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(plan, "api_keys_created") || strings.Contains(plan, "SCAN api_keys") || strings.Contains(plan, "Seq Scan") {
			t.Errorf("plan:\n%s\nwant it to read api_keys_created, not scan api_keys", plan)
		}
	})
}

// TestHomePlans explains the counts of the store's home on both databases:
// each reads the index of migration 0024 that holds its scope and time
// first (no scan of the table), so counting an hour costs that hour's
// entries, whatever the table holds; the days and hours kept are read by
// their key.
// The bench measures the time (bench/README.md, lists).
func TestHomePlans(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		for _, c := range append(store.HomeQueries(), store.AttentionQueries()...) {
			plan, err := store.Explain(context.Background(), db, c.Query, c.Args...)
			if err != nil {
				t.Fatalf("explain %s: %v", c.Name, err)
			}
			// On an empty table PostgreSQL prices every index that starts
			// with (store_id, mode) and holds created_at alike, and may pick
			// the Sessions list's email or status index for the sessions
			// created; with a table's statistics it reads sessions_list (the
			// bench's home rows at a million sessions).
			if !slices.ContainsFunc(strings.Split(c.Index, "|"), func(index string) bool { return strings.Contains(plan, index) }) &&
				!(c.Name == "created" && (strings.Contains(plan, "sessions_email") || strings.Contains(plan, "sessions_status"))) {
				t.Errorf("%s\nplan:\n%s\nwant it to read %s", c.Name, plan, c.Index)
			}
			for _, table := range []string{"payments", "refunds", "disputes", "sessions", "home_days", "home_hours", "deliveries"} {
				if strings.Contains(plan, "SCAN "+table+" ") || strings.HasSuffix(plan, "SCAN "+table) || strings.Contains(plan, "Seq Scan on "+table) {
					t.Errorf("%s: the plan scans %s:\n%s", c.Name, table, plan)
				}
			}
		}
	})
}

// TestAuditListPlans explains the Security page's query for every
// combination of filters, with and without a date range and a cursor, on
// both databases: each reads the index of migration 0025 that serves it, in
// the list's order (no table scan, no sort), so a page costs the same with
// a million entries kept; and the purge reads the index by age.
func TestAuditListPlans(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		for _, c := range []struct {
			p     checkout.AuditListParams
			index string
		}{
			{checkout.AuditListParams{}, "audit_entries_list"},
			{checkout.AuditListParams{Action: checkout.AuditAPIKeyCreate}, "audit_entries_action"},
			{checkout.AuditListParams{ActorKey: "acct_x"}, "audit_entries_actor"},
			{checkout.AuditListParams{ActorKey: "acct_x", Action: checkout.AuditAPIKeyCreate}, "audit_entries_actor"},
		} {
			for _, bounds := range [][2]time.Time{{}, {time.Unix(1, 0), time.Unix(5, 0)}} {
				for _, after := range []checkout.Cursor{{}, {At: time.Unix(2, 0), ID: "au_x"}} {
					p := c.p
					p.MerchantID, p.Since, p.Until, p.After = checkout.NewStoreID(), bounds[0], bounds[1], after
					q, args := store.AuditListQuery(db, p)
					plan, err := store.Explain(ctx, db, q, args...)
					if err != nil {
						t.Fatalf("explain %+v: %v", p, err)
					}
					if !strings.Contains(plan, c.index) {
						t.Errorf("AuditList(%+v)\nplan:\n%s\nwant it to read %s", p, plan, c.index)
					}
					if strings.Contains(plan, "SCAN audit_entries ") || strings.HasSuffix(strings.TrimSpace(plan), "SCAN audit_entries") ||
						strings.Contains(plan, "Seq Scan") || strings.Contains(plan, "TEMP B-TREE") || strings.Contains(plan, "Sort") {
						t.Errorf("AuditList(%+v): the plan scans or sorts:\n%s", p, plan)
					}
				}
			}
		}
		plan, err := store.Explain(ctx, db, `SELECT id FROM audit_entries WHERE created_at_ms < $1 LIMIT $2`, int64(1000), 1000)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(plan, "audit_entries_created") {
			t.Errorf("the purge's plan:\n%s\nwant it to read audit_entries_created", plan)
		}
	})
}

// TestExportPlans explains the exports' page reads on both databases: each
// reads its list's index in the export's order (no table scan, no sort),
// from the page's start, so a page costs its rows wherever it is.
func TestExportPlans(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		for _, c := range store.ExportQueries() {
			plan, err := store.Explain(context.Background(), db, c.Query, c.Args...)
			if err != nil {
				t.Fatalf("explain %s: %v", c.Name, err)
			}
			if !strings.Contains(plan, c.Index) {
				t.Errorf("%s\nplan:\n%s\nwant it to read %s", c.Name, plan, c.Index)
			}
			checkPaymentPlan(t, c.Name, plan, true)
			if strings.Contains(plan, "SCAN sessions") {
				t.Errorf("%s: the plan scans sessions:\n%s", c.Name, plan)
			}
		}
	})
}

// TestSessionListPlans explains the Sessions list's query for each search
// and filter, alone and together, with and without a cursor, and the read
// of a session's events, on both databases: each reads the index of
// migration 0026 that serves it, in the
// list's order (no table scan, no sort), so a page costs the same with a
// million sessions kept. (A metadata search reads session_metadata's primary
// key: session_metadata_pkey on PostgreSQL; on SQLite the table itself,
// WITHOUT ROWID.)
func TestSessionListPlans(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Unix(1_790_000_000, 0)
		days := func(p *checkout.SessionListParams) { p.From, p.To = now.AddDate(0, 0, -7), now }
		for _, c := range []struct {
			name    string
			p       checkout.SessionListParams
			index   string // "a|b": either
			ordered bool
		}{
			{"all", checkout.SessionListParams{}, "sessions_list", true},
			{"dates", checkout.SessionListParams{From: now.AddDate(0, 0, -7), To: now}, "sessions_list", true},
			{"status", checkout.SessionListParams{Status: checkout.StatusComplete}, "sessions_status", true},
			{"open", checkout.SessionListParams{Status: checkout.StatusOpen, Now: now}, "sessions_status", true},
			{"email", checkout.SessionListParams{Email: "ann@example.com"}, "sessions_email", true},
			{"email and status", checkout.SessionListParams{Email: "ann@example.com", Status: checkout.StatusExpired}, "sessions_email|sessions_status", false},
			{"metadata", checkout.SessionListParams{MetadataKey: "order_id", MetadataValue: "A-1001"}, "session_metadata_pkey|USING PRIMARY KEY", true},
			{"metadata and status", checkout.SessionListParams{MetadataKey: "order_id", MetadataValue: "A-1001", Status: checkout.StatusOpen, Now: now}, "session_metadata_pkey|USING PRIMARY KEY", true},
		} {
			for _, after := range []checkout.Cursor{{}, {At: now, ID: "cs_x"}} {
				p := c.p
				p.MerchantID, p.Mode, p.After = checkout.NewStoreID(), checkout.ModeLive, after
				if c.name == "metadata and status" {
					days(&p)
				}
				q, args := store.SessionListQuery(db, p)
				plan, err := store.Explain(ctx, db, q, args...)
				if err != nil {
					t.Fatalf("explain %s: %v", c.name, err)
				}
				if !slices.ContainsFunc(strings.Split(c.index, "|"), func(index string) bool { return strings.Contains(plan, index) }) {
					t.Errorf("SessionList(%s, %+v)\nplan:\n%s\nwant it to read %s", c.name, p, plan, c.index)
				}
				checkSessionPlan(t, c.name, plan, c.ordered)
			}
		}
		q, args := store.EventListByObjectQuery(db, []string{"cs_x", "pay_x", "pay_y"})
		plan, err := store.Explain(ctx, db, q, args...)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(plan, "events_object") {
			t.Errorf("EventListByObject plan:\n%s\nwant it to read events_object", plan)
		}
		checkSessionPlan(t, "EventListByObject", plan, false)
	})
}

// checkSessionPlan fails when plan scans a table, or sorts where ordered
// says the index must give the order.
func checkSessionPlan(t *testing.T, what, plan string, ordered bool) {
	t.Helper()
	for _, bad := range []string{"SCAN sessions", "SCAN session_metadata", "SCAN m", "SCAN events", "SCAN payments", "Seq Scan"} {
		if strings.Contains(plan, bad+"\n") || strings.HasSuffix(plan, bad) || strings.Contains(plan, bad+" ") {
			t.Errorf("%s: the plan scans a table:\n%s", what, plan)
		}
	}
	if ordered && (strings.Contains(plan, "TEMP B-TREE") || strings.Contains(plan, "Sort")) {
		t.Errorf("%s: the plan sorts; want the index's order:\n%s", what, plan)
	}
}

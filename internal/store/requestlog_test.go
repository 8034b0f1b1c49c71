package store_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
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

// Every combination of the list's filters, with dates and pages by cursor,
// gives what checking each log against them gives: the facets' pages
// merged (RequestLogList), across facets that share a millisecond, and the
// filters checked on the rows when a store has more facets than the list
// reads.
func TestRequestLogListFilters(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		storeID := checkout.NewStoreID()
		t0 := time.UnixMilli(1_800_000_000_000)
		routes := []string{"/v1/stores/{storeId}/checkouts", "/v1/stores/{storeId}/checkouts/{checkoutId}", ""}
		methods := []string{"GET", "POST", "DELETE"}
		statuses := []int{200, 201, 400, 404, 500}
		keys := []string{checkout.NewAPIKeyID(), checkout.NewAPIKeyID()}
		var all []*checkout.RequestLog
		for i := range 240 {
			all = append(all, &checkout.RequestLog{RequestID: checkout.NewRequestID(), MerchantID: storeID, Mode: checkout.ModeTest,
				APIKeyID: keys[i%7%2], Method: methods[i%3], Path: "/v1/x", Route: routes[i%5%3], Status: statuses[i%11%5],
				CreatedAt: t0.Add(time.Duration(i/3) * time.Millisecond)}) // three logs a millisecond
		}
		// Another mode's and another store's logs, which no list shows.
		noise := []*checkout.RequestLog{
			{RequestID: checkout.NewRequestID(), MerchantID: storeID, Mode: checkout.ModeLive, APIKeyID: keys[0], Method: "GET", Route: routes[0], Status: 200, CreatedAt: t0},
			{RequestID: checkout.NewRequestID(), MerchantID: checkout.NewStoreID(), Mode: checkout.ModeTest, APIKeyID: keys[0], Method: "GET", Route: routes[0], Status: 200, CreatedAt: t0},
		}
		if err := db.RequestLogInsert(ctx, append(slices.Clone(all), noise...)); err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(all, func(a, b *checkout.RequestLog) int {
			if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
				return c
			}
			return strings.Compare(b.RequestID, a.RequestID)
		})
		type filter struct {
			class         int
			method, route string
			key           string
			from, to      time.Time
		}
		matches := func(f filter, l *checkout.RequestLog) bool {
			return (f.class == 0 || l.Status/100 == f.class) && (f.method == "" || l.Method == f.method) &&
				(f.route == "" || l.Route == f.route) && (f.key == "" || l.APIKeyID == f.key) &&
				(f.from.IsZero() || !l.CreatedAt.Before(f.from)) && (f.to.IsZero() || l.CreatedAt.Before(f.to))
		}
		check := func(f filter) {
			t.Helper()
			var want []string
			for _, l := range all {
				if matches(f, l) {
					want = append(want, l.RequestID)
				}
			}
			p := checkout.RequestLogListParams{MerchantID: storeID, Mode: checkout.ModeTest, StatusClass: f.class, Method: f.method,
				Route: f.route, APIKeyID: f.key, From: f.from, To: f.to, Limit: 7}
			var got []string
			for range 100 {
				page, err := db.RequestLogList(ctx, p)
				if err != nil {
					t.Fatalf("RequestLogList(%+v) = %v", f, err)
				}
				if len(page) > p.Limit {
					t.Fatalf("RequestLogList(%+v) = a page of %d; want at most %d", f, len(page), p.Limit)
				}
				for _, l := range page {
					got = append(got, l.RequestID)
				}
				if len(page) < p.Limit {
					break
				}
				last := page[len(page)-1]
				p.After = checkout.Cursor{At: last.CreatedAt, ID: last.RequestID}
			}
			if !slices.Equal(got, want) {
				t.Errorf("RequestLogList(%+v), pages of 7: %d logs, %v; want %d, %v", f, len(got), got, len(want), want)
			}
		}
		from, to := t0.Add(20*time.Millisecond), t0.Add(61*time.Millisecond)
		for _, class := range []int{0, 2, 4, 5, 3} {
			for _, method := range []string{"", "GET", "POST", "PATCH"} {
				for _, route := range []string{"", routes[1], routes[2]} {
					check(filter{class: class, method: method, route: route})
					check(filter{class: class, method: method, route: route, from: from, to: to})
					check(filter{class: class, method: method, route: route, key: keys[1]})
				}
			}
		}

		// More facets than the list reads: a client inventing methods.
		var odd []*checkout.RequestLog
		for i := range store.MaxFacets + 1 {
			odd = append(odd, &checkout.RequestLog{RequestID: checkout.NewRequestID(), MerchantID: storeID, Mode: checkout.ModeTest,
				APIKeyID: keys[0], Method: fmt.Sprintf("M%03d", i), Route: "", Status: 405, CreatedAt: t0.Add(time.Duration(i) * time.Millisecond)})
		}
		if err := db.RequestLogInsert(ctx, odd); err != nil {
			t.Fatal(err)
		}
		all = append(all, odd...)
		slices.SortFunc(all, func(a, b *checkout.RequestLog) int {
			if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
				return c
			}
			return strings.Compare(b.RequestID, a.RequestID)
		})
		check(filter{class: 4})
		check(filter{class: 2, route: routes[0]})
		check(filter{method: "M007"})
	})
}

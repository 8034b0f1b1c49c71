package storetest

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
)

// dashboardWebhookTests are the conformance tests of what the dashboard's
// Webhooks section reads and writes: endpoint edits and rolled secrets, the
// delivery list, an endpoint's health and Retry all failed.
var dashboardWebhookTests = []struct {
	name string
	fn   func(t *testing.T, db *store.DB)
}{
	{"Endpoint/UpdateEveryField", testEndpointUpdateEveryField},
	{"Delivery/ListPage", testDeliveryListPage},
	{"Delivery/ListPageCursor", testDeliveryListPageCursor},
	{"Endpoint/Health", testEndpointHealth},
	{"Delivery/Retryable", testDeliveryRetryable},
}

// EndpointUpdate writes URL, events, description, enabled, both secrets and
// the previous one's expiry; all read back as written, and clearing the
// previous secret reads back as none.
func testEndpointUpdateEveryField(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	ep := newEndpoint(t, db, m, checkout.ModeTest, checkout.AllEvents)
	ep.URL, ep.Events, ep.Description = "https://new.example.com/hook?x=1", []string{checkout.EventCheckoutCompleted, checkout.EventPaymentRefunded}, "Orders ✓"
	ep.Enabled, ep.PreviousSecret, ep.Secret = false, ep.Secret, checkout.NewWebhookSecret()
	ep.PreviousSecretExpiresAt, ep.UpdatedAt = base.Add(24*time.Hour), base.Add(time.Minute)
	inTx(t, db, func(tx checkout.Tx) error { return tx.EndpointUpdate(ctx, ep) })
	if got, err := db.EndpointGet(ctx, ep.ID); err != nil || !reflect.DeepEqual(got, ep) {
		t.Errorf("after EndpointUpdate: %+v, %v; want %+v", got, err, ep)
	}
	inTx(t, db, func(tx checkout.Tx) error {
		got, err := tx.EndpointGetForUpdate(ctx, ep.ID)
		if err != nil || !reflect.DeepEqual(got, ep) {
			t.Errorf("EndpointGetForUpdate = %+v, %v; want %+v", got, err, ep)
		}
		return err
	})
	ep.PreviousSecret, ep.PreviousSecretExpiresAt = "", time.Time{}
	inTx(t, db, func(tx checkout.Tx) error { return tx.EndpointUpdate(ctx, ep) })
	if got, err := db.EndpointGet(ctx, ep.ID); err != nil || !reflect.DeepEqual(got, ep) {
		t.Errorf("after clearing the previous secret: %+v, %v; want %+v", got, err, ep)
	}
}

// putDelivery stores d as it is (status, times and all) with an event of
// its type; the test's way to lay out a history.
func putDelivery(t *testing.T, db *store.DB, d *checkout.Delivery) {
	t.Helper()
	e := newEvent(&checkout.Merchant{ID: d.MerchantID}, d.Mode, d.EventType, d.CreatedAt)
	e.ID = d.EventID
	inTx(t, db, func(tx checkout.Tx) error {
		if err := tx.EventInsert(context.Background(), e); err != nil {
			return err
		}
		return tx.DeliveryInsert(context.Background(), d)
	})
}

// historyDelivery returns a delivery of a new event of typ to ep, created
// at created, in status, finished (or last changed) at updated.
func historyDelivery(ep *checkout.Endpoint, typ string, status checkout.DeliveryStatus, created, updated time.Time) *checkout.Delivery {
	e := &checkout.Event{ID: checkout.NewEventID(), Type: typ}
	d := checkout.NewDelivery(e, ep, created)
	d.Status, d.UpdatedAt = status, updated
	if status != checkout.DeliveryPending {
		d.Attempts = 1
	}
	return d
}

// newestFirst sorts deliveries as the list orders them.
func newestFirst(ds []*checkout.Delivery) []string {
	ds = slices.Clone(ds)
	slices.SortFunc(ds, func(a, b *checkout.Delivery) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
	ids := make([]string, len(ds))
	for i, d := range ds {
		ids[i] = d.ID
	}
	return ids
}

func deliveryIDs(ds []*checkout.Delivery) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.ID
	}
	return out
}

// readAll reads every page of f, limit rows a page, and fails the test on
// an error or a page that does not say what follows.
func readAll(t *testing.T, db *store.DB, f checkout.DeliveryFilter, limit int) []*checkout.Delivery {
	t.Helper()
	var all []*checkout.Delivery
	f.Limit = limit
	for range 1000 {
		page, err := db.DeliveryListPage(context.Background(), f)
		if err != nil {
			t.Fatalf("DeliveryListPage(%+v) = %v", f, err)
		}
		if len(page.Items) > limit || (page.Next != "" && len(page.Items) != limit) {
			t.Fatalf("page of %d rows (limit %d), next %q", len(page.Items), limit, page.Next)
		}
		all = append(all, page.Items...)
		if page.Next == "" {
			return all
		}
		if f.After, err = checkout.ParseCursor(page.Next); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("more than 1000 pages")
	return nil
}

// The list holds a store and mode's deliveries, newest first, and each
// filter (endpoint, status, event type, event id, date range, and
// together) selects exactly the matching ones, never another store's or
// mode's; pages of any size add up to the whole list.
func testDeliveryListPage(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	other := newMerchant(t, db, "Other", base)
	a := newEndpoint(t, db, m, checkout.ModeTest, checkout.AllEvents)
	b := newEndpoint(t, db, m, checkout.ModeTest, checkout.AllEvents)
	live := newEndpoint(t, db, m, checkout.ModeLive, checkout.AllEvents)
	foreign := newEndpoint(t, db, other, checkout.ModeTest, checkout.AllEvents)
	types := []string{checkout.EventCheckoutCreated, checkout.EventCheckoutCompleted, checkout.EventPaymentSucceeded}
	var mine []*checkout.Delivery
	for i := range 40 {
		ep := []*checkout.Endpoint{a, b}[i%2]
		// Every third shares its time with the one before (as the
		// deliveries of one event do): the id orders them.
		created := base.Add(time.Duration(i-i%3) * time.Minute)
		d := historyDelivery(ep, types[i%3], checkout.DeliveryStatuses[i%4], created, created.Add(time.Second))
		putDelivery(t, db, d)
		mine = append(mine, d)
	}
	// One event delivered to both endpoints.
	shared := historyDelivery(a, checkout.EventPaymentRefunded, checkout.DeliverySucceeded, base.Add(time.Hour), base.Add(time.Hour))
	putDelivery(t, db, shared)
	twin := *shared
	twin.ID, twin.EndpointID = checkout.NewID(checkout.PrefixDelivery, 16), b.ID
	inTx(t, db, func(tx checkout.Tx) error { return tx.DeliveryInsert(ctx, &twin) })
	mine = append(mine, shared, &twin)
	// Another mode's and another store's, matching every other filter.
	for _, ep := range []*checkout.Endpoint{live, foreign} {
		for i := range 5 {
			putDelivery(t, db, historyDelivery(ep, types[i%3], checkout.DeliveryStatuses[i%4], base.Add(time.Duration(i)*time.Minute), base))
		}
	}

	scope := checkout.DeliveryFilter{MerchantID: m.ID, Mode: checkout.ModeTest}
	where := func(keep func(d *checkout.Delivery) bool) []string {
		return newestFirst(slices.DeleteFunc(slices.Clone(mine), func(d *checkout.Delivery) bool { return !keep(d) }))
	}
	from, to := base.Add(9*time.Minute), base.Add(21*time.Minute)
	cases := []struct {
		name string
		f    func(f *checkout.DeliveryFilter)
		want []string
	}{
		{"all", func(*checkout.DeliveryFilter) {}, where(func(*checkout.Delivery) bool { return true })},
		{"endpoint", func(f *checkout.DeliveryFilter) { f.EndpointID = b.ID }, where(func(d *checkout.Delivery) bool { return d.EndpointID == b.ID })},
		{"status", func(f *checkout.DeliveryFilter) { f.Status = checkout.DeliveryFailed }, where(func(d *checkout.Delivery) bool { return d.Status == checkout.DeliveryFailed })},
		{"type", func(f *checkout.DeliveryFilter) { f.EventType = checkout.EventCheckoutCompleted }, where(func(d *checkout.Delivery) bool { return d.EventType == checkout.EventCheckoutCompleted })},
		{"event", func(f *checkout.DeliveryFilter) { f.EventID = shared.EventID }, where(func(d *checkout.Delivery) bool { return d.EventID == shared.EventID })},
		{"range", func(f *checkout.DeliveryFilter) { f.From, f.To = from, to }, where(func(d *checkout.Delivery) bool { return !d.CreatedAt.Before(from) && d.CreatedAt.Before(to) })},
		{"endpoint and status", func(f *checkout.DeliveryFilter) { f.EndpointID, f.Status = a.ID, checkout.DeliveryPending },
			where(func(d *checkout.Delivery) bool { return d.EndpointID == a.ID && d.Status == checkout.DeliveryPending })},
		{"endpoint and type", func(f *checkout.DeliveryFilter) { f.EndpointID, f.EventType = a.ID, checkout.EventPaymentSucceeded },
			where(func(d *checkout.Delivery) bool {
				return d.EndpointID == a.ID && d.EventType == checkout.EventPaymentSucceeded
			})},
		{"status, type and range", func(f *checkout.DeliveryFilter) {
			f.Status, f.EventType, f.From, f.To = checkout.DeliverySucceeded, checkout.EventCheckoutCreated, from, to
		}, where(func(d *checkout.Delivery) bool {
			return d.Status == checkout.DeliverySucceeded && d.EventType == checkout.EventCheckoutCreated && !d.CreatedAt.Before(from) && d.CreatedAt.Before(to)
		})},
		{"another store's endpoint", func(f *checkout.DeliveryFilter) { f.EndpointID = foreign.ID }, nil},
		{"another mode's endpoint", func(f *checkout.DeliveryFilter) { f.EndpointID = live.ID }, nil},
		{"nothing matches", func(f *checkout.DeliveryFilter) { f.EventType = checkout.EventPaymentDisputed }, nil},
	}
	for _, c := range cases {
		f := scope
		c.f(&f)
		for _, limit := range []int{1, 3, 100} {
			if got := deliveryIDs(readAll(t, db, f, limit)); !slices.Equal(got, c.want) {
				t.Errorf("%s, %d a page: got %d deliveries %v; want %d %v", c.name, limit, len(got), got, len(c.want), c.want)
			}
		}
	}
	// A row reads back whole.
	page, err := db.DeliveryListPage(ctx, checkout.DeliveryFilter{MerchantID: m.ID, Mode: checkout.ModeTest, EventID: shared.EventID, EndpointID: a.ID})
	if err != nil || len(page.Items) != 1 || !reflect.DeepEqual(page.Items[0], shared) {
		t.Errorf("the shared event's delivery to a = %+v, %v; want %+v", page.Items, err, shared)
	}
	if got, err := db.DeliveryGet(ctx, shared.ID); err != nil || !reflect.DeepEqual(got, shared) {
		t.Errorf("DeliveryGet = %+v, %v; want %+v", got, err, shared)
	}
}

// A page starts strictly after its cursor, in (time, id) order: deliveries
// made meanwhile (newer) do not shift the pages that follow, and a cursor
// between two deliveries of the same millisecond splits them by id.
func testDeliveryListPageCursor(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	ep := newEndpoint(t, db, m, checkout.ModeTest, checkout.AllEvents)
	var ds []*checkout.Delivery
	for range 6 {
		d := historyDelivery(ep, checkout.EventCheckoutCreated, checkout.DeliverySucceeded, base, base)
		putDelivery(t, db, d)
		ds = append(ds, d)
	}
	want := newestFirst(ds)
	f := checkout.DeliveryFilter{MerchantID: m.ID, Mode: checkout.ModeTest, Limit: 2}
	first, err := db.DeliveryListPage(ctx, f)
	if err != nil || !slices.Equal(deliveryIDs(first.Items), want[:2]) || first.Next == "" {
		t.Fatalf("first page = %v, %q, %v; want %v and a next page", deliveryIDs(first.Items), first.Next, err, want[:2])
	}
	putDelivery(t, db, historyDelivery(ep, checkout.EventCheckoutCreated, checkout.DeliverySucceeded, base.Add(time.Hour), base.Add(time.Hour)))
	f.After, _ = checkout.ParseCursor(first.Next)
	f.Limit = 10
	rest, err := db.DeliveryListPage(ctx, f)
	if err != nil || !slices.Equal(deliveryIDs(rest.Items), want[2:]) || rest.Next != "" {
		t.Errorf("after the cursor = %v, %q, %v; want %v and no next page", deliveryIDs(rest.Items), rest.Next, err, want[2:])
	}
	// With a date range too: an end after the cursor leaves the cursor to
	// bound the page; an end at or before it bounds it alone.
	for _, c := range []struct {
		to   time.Time
		want []string
	}{
		{base.Add(time.Millisecond), want[2:]},
		{base.Add(time.Hour), want[2:]},
		{base, nil},
		{base.Add(-time.Hour), nil},
	} {
		f.To = c.to
		got, err := db.DeliveryListPage(ctx, f)
		if err != nil || !slices.Equal(deliveryIDs(got.Items), c.want) {
			t.Errorf("after the cursor, to %v = %v, %v; want %v", c.to.Sub(base), deliveryIDs(got.Items), err, c.want)
		}
	}
}

// recordAttempt stores an attempt of carrier (a pending delivery of ep) at
// at, as the dispatcher records one, without changing the delivery.
func recordAttempt(t *testing.T, db *store.DB, carrier *checkout.Delivery, n int, at time.Time, status int) {
	t.Helper()
	a := &checkout.Attempt{DeliveryID: carrier.ID, Number: n, StartedAt: at, Duration: time.Millisecond, StatusCode: status}
	if status < 200 || status > 299 {
		a.Error = fmt.Sprintf("receiver answered %d", status)
	}
	if _, err := db.DeliveryRecord(context.Background(), "not-the-owner", a, carrier); err != nil {
		t.Fatal(err)
	}
}

// Health counts the deliveries that finished in the last day and week by
// outcome (canceled and pending ones not), the queue, the newest success
// and failure, and the start of the current run of failures: one
// endpoint's alone.
func testEndpointHealth(t *testing.T, db *store.DB) {
	ctx := context.Background()
	now := base.Add(30 * 24 * time.Hour)
	m := newMerchant(t, db, "Acme", base)
	ep := newEndpoint(t, db, m, checkout.ModeTest, checkout.AllEvents)
	other := newEndpoint(t, db, m, checkout.ModeTest, checkout.AllEvents)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	for _, c := range []struct {
		status  checkout.DeliveryStatus
		updated time.Duration
	}{
		{checkout.DeliverySucceeded, time.Hour},
		{checkout.DeliverySucceeded, 23 * time.Hour},
		{checkout.DeliverySucceeded, 3 * 24 * time.Hour},
		{checkout.DeliverySucceeded, 8 * 24 * time.Hour}, // too old for the week
		{checkout.DeliveryFailed, 2 * time.Hour},
		{checkout.DeliveryFailed, 6 * 24 * time.Hour},
		{checkout.DeliveryCanceled, time.Hour},
		{checkout.DeliveryPending, time.Hour},
	} {
		putDelivery(t, db, historyDelivery(ep, checkout.EventCheckoutCreated, c.status, ago(c.updated+48*time.Hour), ago(c.updated)))
		putDelivery(t, db, historyDelivery(other, checkout.EventCheckoutCreated, c.status, ago(c.updated+48*time.Hour), ago(c.updated)))
	}
	carrier := historyDelivery(ep, checkout.EventCheckoutCreated, checkout.DeliveryPending, ago(40*time.Hour), ago(40*time.Hour))
	putDelivery(t, db, carrier)
	health := func(ep *checkout.Endpoint) *checkout.EndpointHealth {
		t.Helper()
		h, err := db.EndpointHealthGet(ctx, ep.ID, now)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}

	h := health(ep)
	if h.EndpointID != ep.ID || !h.At.Equal(now) || h.Day != (checkout.DeliveryCounts{Succeeded: 2, Failed: 1}) ||
		h.Week != (checkout.DeliveryCounts{Succeeded: 3, Failed: 2}) || h.Queued != 2 {
		t.Errorf("health counts = day %+v, week %+v, queued %d; want day 2/1, week 3/2, 2 queued", h.Day, h.Week, h.Queued)
	}
	if h.LastFailure != nil || !h.LastSuccessAt.IsZero() || !h.FailingSince.IsZero() || h.FailingForADay() {
		t.Errorf("health with no attempts = %+v; want no success, failure or run of failures", h)
	}

	// A success 30 hours ago, then failures from 26 hours ago to an hour ago.
	recordAttempt(t, db, carrier, 1, ago(30*time.Hour), 200)
	recordAttempt(t, db, carrier, 2, ago(26*time.Hour), 500)
	recordAttempt(t, db, carrier, 3, ago(20*time.Hour), 0)
	recordAttempt(t, db, carrier, 4, ago(time.Hour), 503)
	h = health(ep)
	if h.LastFailure == nil || h.LastFailure.Number != 4 || h.LastFailure.StatusCode != 503 || h.LastFailure.Error == "" ||
		!h.LastFailure.StartedAt.Equal(ago(time.Hour)) || h.LastFailure.DeliveryID != carrier.ID {
		t.Errorf("last failure = %+v; want attempt 4, 503, an hour ago", h.LastFailure)
	}
	if !h.LastSuccessAt.Equal(ago(30*time.Hour)) || !h.FailingSince.Equal(ago(26*time.Hour)) || !h.FailingForADay() {
		t.Errorf("health = last success %v, failing since %v, failing for a day %t; want 30 h ago, 26 h ago, true",
			now.Sub(h.LastSuccessAt), now.Sub(h.FailingSince), h.FailingForADay())
	}
	if h := health(other); h.LastFailure != nil || !h.LastSuccessAt.IsZero() || h.Queued != 1 {
		t.Errorf("the other endpoint's health = %+v; want none of ep's attempts, its own queue", h)
	}
	// A success now ends the run.
	recordAttempt(t, db, carrier, 5, now, 204)
	if h := health(ep); !h.LastSuccessAt.Equal(now) || !h.FailingSince.IsZero() || h.FailingForADay() || h.LastFailure.Number != 4 {
		t.Errorf("after a success: %+v; want the run of failures over, the last failure kept", h)
	}
}

// Retryable lists an endpoint's failed deliveries since a time that were
// never resent, oldest first, up to the limit; marking one resent takes it
// off the list.
func testDeliveryRetryable(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	ep := newEndpoint(t, db, m, checkout.ModeTest, checkout.AllEvents)
	other := newEndpoint(t, db, m, checkout.ModeTest, checkout.AllEvents)
	var failed []*checkout.Delivery
	for i := range 5 {
		d := historyDelivery(ep, checkout.EventCheckoutCreated, checkout.DeliveryFailed, base.Add(time.Duration(i)*time.Hour), base.Add(50*time.Hour))
		putDelivery(t, db, d)
		failed = append(failed, d)
	}
	putDelivery(t, db, historyDelivery(ep, checkout.EventCheckoutCreated, checkout.DeliverySucceeded, base.Add(2*time.Hour), base))
	putDelivery(t, db, historyDelivery(ep, checkout.EventCheckoutCreated, checkout.DeliveryCanceled, base.Add(2*time.Hour), base))
	putDelivery(t, db, historyDelivery(other, checkout.EventCheckoutCreated, checkout.DeliveryFailed, base.Add(2*time.Hour), base))
	list := func(since time.Time, limit int) []string {
		t.Helper()
		var got []string
		inTx(t, db, func(tx checkout.Tx) error {
			ds, err := tx.DeliveryListRetryable(ctx, ep.ID, since, limit)
			got = deliveryIDs(ds)
			return err
		})
		return got
	}
	if got, want := list(base.Add(time.Hour), 10), deliveryIDs(failed[1:]); !slices.Equal(got, want) {
		t.Errorf("retryable since 1 h = %v; want %v", got, want)
	}
	if got, want := list(base, 2), deliveryIDs(failed[:2]); !slices.Equal(got, want) {
		t.Errorf("retryable, 2 at most = %v; want the oldest %v", got, want)
	}
	inTx(t, db, func(tx checkout.Tx) error { return tx.DeliveryMarkResent(ctx, failed[0].ID, "whd_new") })
	if got, want := list(base, 10), deliveryIDs(failed[1:]); !slices.Equal(got, want) {
		t.Errorf("retryable after one was resent = %v; want %v", got, want)
	}
	got, err := db.DeliveryGet(ctx, failed[0].ID)
	if err != nil || got.ResentAs != "whd_new" || !got.UpdatedAt.Equal(failed[0].UpdatedAt) || got.Status != checkout.DeliveryFailed {
		t.Errorf("the resent delivery = %+v, %v; want resent_as set, status and update time kept", got, err)
	}
	err = db.InTx(ctx, func(tx checkout.Tx) error {
		return tx.DeliveryMarkResent(ctx, checkout.NewID(checkout.PrefixDelivery, 16), "whd_new")
	})
	wantCode(t, "DeliveryMarkResent(unknown)", err, checkout.ENotFound)
}

package storetest

import (
	"context"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
)

// listTests are the conformance tests of the dashboard's lists: request
// logs and events by page and filter, the latest deliveries of a page of
// events, and the last use of API keys.
var listTests = []struct {
	name string
	fn   func(t *testing.T, db *store.DB)
}{
	{"RequestLog/ListFilters", testRequestLogListFilters},
	{"RequestLog/ListPagesFiltered", testRequestLogListPagesFiltered},
	{"Event/ListPages", testEventListPages},
	{"Event/ListDates", testEventListDates},
	{"Delivery/ListLatest", testDeliveryListLatest},
	{"APIKey/LastUsed", testAPIKeyLastUsed},
	{"APIKey/NameRoundTrip", testAPIKeyNameRoundTrip},
}

// The API's two routes, as request logs record them.
const (
	createRoute   = "/v1/stores/{storeId}/checkouts"
	retrieveRoute = "/v1/stores/{storeId}/checkouts/{checkoutId}"
)

// logsFixture is a store's test-mode logs of every kind the filters tell
// apart, a millisecond apart, and logs of its live mode and of another
// store that no list of its test mode may show.
type logsFixture struct {
	m          *checkout.Merchant
	key, other string // two API keys' ids
	logs       []*checkout.RequestLog
}

func newLogsFixture(t *testing.T, db *store.DB) *logsFixture {
	t.Helper()
	f := &logsFixture{m: newMerchant(t, db, "Acme", base), key: checkout.NewAPIKeyID(), other: checkout.NewAPIKeyID()}
	stranger := newMerchant(t, db, "Other", base)
	create := "/v1/stores/" + f.m.ID + "/checkouts"
	kinds := []struct {
		key, method, path, route string
		status                   int
	}{
		{f.key, "POST", create, createRoute, 201},
		{f.key, "GET", create + "/cs_1", retrieveRoute, 200},
		{f.other, "GET", create + "/cs_2", retrieveRoute, 404},
		{f.key, "POST", create, createRoute, 400},
		{f.other, "POST", create, createRoute, 500},
		{f.key, "GET", create + "/cs_1", retrieveRoute, 200},
		{f.key, "HEAD", create + "/cs_1", retrieveRoute, 200},
		{f.other, "POST", create, createRoute, 503},
		{f.key, "GET", create + "/cs_2", retrieveRoute, 429},
		{f.key, "POST", create, createRoute, 201},
	}
	var noise []*checkout.RequestLog
	for i, k := range kinds {
		l := newRequestLog(f.m, checkout.ModeTest, base.Add(time.Duration(i)*time.Millisecond))
		l.APIKeyID, l.Method, l.Path, l.Route, l.Status = k.key, k.method, k.path, k.route, k.status
		f.logs = append(f.logs, l)
		for _, n := range []*checkout.RequestLog{newRequestLog(f.m, checkout.ModeLive, l.CreatedAt), newRequestLog(stranger, checkout.ModeTest, l.CreatedAt)} {
			n.APIKeyID, n.Method, n.Path, n.Route, n.Status = k.key, k.method, k.path, k.route, k.status
			noise = append(noise, n)
		}
	}
	if err := db.RequestLogInsert(context.Background(), append(slices.Clone(f.logs), noise...)); err != nil {
		t.Fatal(err)
	}
	return f
}

// want returns the fixture's logs that match, newest first.
func (f *logsFixture) want(match func(l *checkout.RequestLog) bool) []string {
	out := []string{}
	for _, l := range slices.Backward(f.logs) {
		if match(l) {
			out = append(out, l.RequestID)
		}
	}
	return out
}

// Every filter alone and together with others, each against the logs it
// should keep; none shows the live mode's logs or another store's.
func testRequestLogListFilters(t *testing.T, db *store.DB) {
	ctx := context.Background()
	f := newLogsFixture(t, db)
	at := func(i int) time.Time { return base.Add(time.Duration(i) * time.Millisecond) }
	tests := []struct {
		name  string
		p     checkout.RequestLogListParams
		match func(l *checkout.RequestLog) bool
	}{
		{"all", checkout.RequestLogListParams{}, func(*checkout.RequestLog) bool { return true }},
		{"2xx", checkout.RequestLogListParams{StatusClass: 2}, func(l *checkout.RequestLog) bool { return l.Status/100 == 2 }},
		{"4xx", checkout.RequestLogListParams{StatusClass: 4}, func(l *checkout.RequestLog) bool { return l.Status/100 == 4 }},
		{"5xx", checkout.RequestLogListParams{StatusClass: 5}, func(l *checkout.RequestLog) bool { return l.Status/100 == 5 }},
		{"3xx: none", checkout.RequestLogListParams{StatusClass: 3}, func(*checkout.RequestLog) bool { return false }},
		{"GET", checkout.RequestLogListParams{Method: "GET"}, func(l *checkout.RequestLog) bool { return l.Method == "GET" }},
		{"HEAD", checkout.RequestLogListParams{Method: "HEAD"}, func(l *checkout.RequestLog) bool { return l.Method == "HEAD" }},
		{"retrieve route", checkout.RequestLogListParams{Route: retrieveRoute}, func(l *checkout.RequestLog) bool { return l.Route == retrieveRoute }},
		{"create route", checkout.RequestLogListParams{Route: createRoute}, func(l *checkout.RequestLog) bool { return l.Route == createRoute }},
		{"a route's prefix: none", checkout.RequestLogListParams{Route: "/v1/stores/"}, func(*checkout.RequestLog) bool { return false }},
		{"key", checkout.RequestLogListParams{APIKeyID: f.other}, func(l *checkout.RequestLog) bool { return l.APIKeyID == f.other }},
		{"from", checkout.RequestLogListParams{From: at(7)}, func(l *checkout.RequestLog) bool { return !l.CreatedAt.Before(at(7)) }},
		{"to", checkout.RequestLogListParams{To: at(2)}, func(l *checkout.RequestLog) bool { return l.CreatedAt.Before(at(2)) }},
		{"from and to", checkout.RequestLogListParams{From: at(3), To: at(6)},
			func(l *checkout.RequestLog) bool { return !l.CreatedAt.Before(at(3)) && l.CreatedAt.Before(at(6)) }},
		{"empty range", checkout.RequestLogListParams{From: at(3), To: at(3)}, func(*checkout.RequestLog) bool { return false }},
		{"POST 5xx of a key", checkout.RequestLogListParams{StatusClass: 5, Method: "POST", APIKeyID: f.other},
			func(l *checkout.RequestLog) bool {
				return l.Status >= 500 && l.Method == "POST" && l.APIKeyID == f.other
			}},
		{"2xx GET of a route since", checkout.RequestLogListParams{StatusClass: 2, Method: "GET", Route: retrieveRoute, From: at(2)},
			func(l *checkout.RequestLog) bool {
				return l.Status < 300 && l.Method == "GET" && l.Route == retrieveRoute && !l.CreatedAt.Before(at(2))
			}},
	}
	for _, tt := range tests {
		p := tt.p
		p.MerchantID, p.Mode = f.m.ID, checkout.ModeTest
		got, err := db.RequestLogList(ctx, p)
		if err != nil {
			t.Errorf("%s: RequestLogList(%+v) = %v", tt.name, p, err)
			continue
		}
		if want := f.want(tt.match); !reflect.DeepEqual(logIDs(got), want) {
			t.Errorf("%s: RequestLogList(%+v) = %v; want %v", tt.name, p, logIDs(got), want)
		}
	}
}

// Paging with a filter visits every matching log once, in order, through
// logs of one millisecond; the cursor carries no filter of its own.
func testRequestLogListPagesFiltered(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	var logs []*checkout.RequestLog
	for i := range 30 {
		l := newRequestLog(m, checkout.ModeTest, base.Add(time.Duration(i/3)*time.Millisecond)) // three per millisecond
		if i%2 == 0 {
			l.Status = 500
		}
		logs = append(logs, l)
	}
	if err := db.RequestLogInsert(ctx, logs); err != nil {
		t.Fatal(err)
	}
	var want []string
	slices.SortFunc(logs, func(a, b *checkout.RequestLog) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return compareStrings(b.RequestID, a.RequestID)
	})
	for _, l := range logs {
		if l.Status == 500 {
			want = append(want, l.RequestID)
		}
	}
	for _, size := range []int{1, 2, 4, 15, 16} {
		p := checkout.RequestLogListParams{MerchantID: m.ID, Mode: checkout.ModeTest, StatusClass: 5, Limit: size}
		var got []string
		for range 20 {
			page, err := db.RequestLogList(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, logIDs(page)...)
			if len(page) < size {
				break
			}
			last := page[len(page)-1]
			p.After = checkout.Cursor{At: last.CreatedAt, ID: last.RequestID}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("5xx by pages of %d = %v; want %v", size, got, want)
		}
	}
}

// Events page newest first by time, and within one second in the order
// they were stored; a page's cursor is its last event's time and id. A
// cursor whose event was purged carries on with the older seconds.
func testEventListPages(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	var stored []*checkout.Event
	for i := range 12 {
		typ := checkout.EventCheckoutCreated
		if i%3 == 2 {
			typ = checkout.EventPaymentSucceeded
		}
		// Four per second; every fourth stored a second back (a clock step).
		at := base.Add(time.Duration(i/4) * time.Second)
		if i%4 == 3 {
			at = at.Add(-time.Second)
		}
		e := newEvent(m, checkout.ModeTest, typ, at)
		insertEvents(t, db, e)
		stored = append(stored, e)
	}
	insertEvents(t, db, newEvent(m, checkout.ModeLive, checkout.EventCheckoutCreated, base))
	// Newest first by second, and by storing order within a second.
	want := slices.Clone(stored)
	slices.Reverse(want)
	slices.SortStableFunc(want, func(a, b *checkout.Event) int { return b.CreatedAt.Compare(a.CreatedAt) })
	for _, typ := range []string{"", checkout.EventPaymentSucceeded} {
		var wantIDs []string
		for _, e := range want {
			if typ == "" || e.Type == typ {
				wantIDs = append(wantIDs, e.ID)
			}
		}
		for _, size := range []int{1, 3, 5} {
			p := checkout.EventListParams{MerchantID: m.ID, Mode: checkout.ModeTest, Type: typ, Limit: size}
			var got []string
			for range 20 {
				page, err := db.EventList(ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, eventIDs(page)...)
				if len(page) < size {
					break
				}
				last := page[len(page)-1]
				p.After = checkout.Cursor{At: last.CreatedAt, ID: last.ID}
			}
			if !reflect.DeepEqual(got, wantIDs) {
				t.Errorf("EventList(type %q) by pages of %d = %v; want %v", typ, size, got, wantIDs)
			}
		}
	}

	// A cursor naming an event that is not there (purged, or made up).
	p := checkout.EventListParams{MerchantID: m.ID, Mode: checkout.ModeTest,
		After: checkout.Cursor{At: base.Add(time.Second), ID: checkout.NewEventID()}}
	got, err := db.EventList(ctx, p)
	var wantIDs []string
	for _, e := range want {
		if e.CreatedAt.Before(base.Add(time.Second)) {
			wantIDs = append(wantIDs, e.ID)
		}
	}
	if err != nil || !reflect.DeepEqual(eventIDs(got), wantIDs) {
		t.Errorf("EventList(after a missing event) = %v, %v; want the older seconds %v", eventIDs(got), err, wantIDs)
	}
}

// Dates bound events to [From, To) in whole seconds: a bound with a
// fraction counts from the next second.
func testEventListDates(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	var es []*checkout.Event
	for i := range 5 {
		es = append(es, newEvent(m, checkout.ModeTest, checkout.EventCheckoutCreated, base.Add(time.Duration(i)*time.Second)))
	}
	insertEvents(t, db, es...)
	sec := func(s float64) time.Time { return base.Add(time.Duration(s * float64(time.Second))) }
	tests := []struct {
		from, to time.Time
		want     []*checkout.Event
	}{
		{sec(1), sec(3), []*checkout.Event{es[2], es[1]}},
		{sec(0.5), sec(2.5), []*checkout.Event{es[2], es[1]}},
		{sec(3), time.Time{}, []*checkout.Event{es[4], es[3]}},
		{time.Time{}, sec(1), []*checkout.Event{es[0]}},
		{sec(2), sec(2), nil},
	}
	for _, tt := range tests {
		p := checkout.EventListParams{MerchantID: m.ID, Mode: checkout.ModeTest, From: tt.from, To: tt.to}
		got, err := db.EventList(ctx, p)
		if err != nil || !reflect.DeepEqual(eventIDs(got), eventIDs(tt.want)) {
			t.Errorf("EventList(from %v, to %v) = %v, %v; want %v", tt.from.Sub(base), tt.to.Sub(base), eventIDs(got), err, eventIDs(tt.want))
		}
	}
}

// For each event, the latest delivery to each endpoint: a resend replaces
// the delivery it resent; events without deliveries have none.
func testDeliveryListLatest(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	a := newEndpoint(t, db, m, checkout.ModeTest, checkout.AllEvents)
	b := newEndpoint(t, db, m, checkout.ModeTest, checkout.AllEvents)
	e1 := newEvent(m, checkout.ModeTest, checkout.EventCheckoutCreated, base)
	e2 := newEvent(m, checkout.ModeTest, checkout.EventCheckoutCreated, base)
	quiet := newEvent(m, checkout.ModeTest, checkout.EventCheckoutCreated, base)
	other := newEvent(m, checkout.ModeTest, checkout.EventCheckoutCreated, base)
	deliver := func(e *checkout.Event, ep *checkout.Endpoint, status checkout.DeliveryStatus) *checkout.Delivery {
		d := checkout.NewDelivery(e, ep, base)
		d.Status = status
		return d
	}
	failed := deliver(e1, a, checkout.DeliveryFailed)
	resent := deliver(e1, a, checkout.DeliveryPending)
	e1b := deliver(e1, b, checkout.DeliverySucceeded)
	e2a := deliver(e2, a, checkout.DeliveryCanceled)
	otherA := deliver(other, a, checkout.DeliverySucceeded)
	insertEvents(t, db, e1, e2, quiet, other)
	inTx(t, db, func(tx checkout.Tx) error {
		for _, d := range []*checkout.Delivery{failed, e1b, e2a, resent, otherA} {
			if err := tx.DeliveryInsert(ctx, d); err != nil {
				return err
			}
		}
		return nil
	})
	got, err := db.DeliveryListLatest(ctx, []string{e1.ID, e2.ID, quiet.ID})
	if err != nil {
		t.Fatal(err)
	}
	gotIDs := map[string]string{}
	for _, d := range got {
		gotIDs[d.EventID+" "+d.EndpointID] = d.ID + " " + string(d.Status)
	}
	want := map[string]string{
		e1.ID + " " + a.ID: resent.ID + " pending",
		e1.ID + " " + b.ID: e1b.ID + " succeeded",
		e2.ID + " " + a.ID: e2a.ID + " canceled",
	}
	if !reflect.DeepEqual(gotIDs, want) {
		t.Errorf("DeliveryListLatest = %v; want %v", gotIDs, want)
	}
	if got, err := db.DeliveryListLatest(ctx, nil); err != nil || len(got) != 0 {
		t.Errorf("DeliveryListLatest(no events) = %v, %v; want none", got, err)
	}
}

// A batch of request logs sets each key's last use to its latest log's
// time (whole seconds), at most once a minute: a log less than a minute
// after the stored time writes nothing, an older one never moves it back,
// and a key of no log is left alone.
func testAPIKeyLastUsed(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	k1 := newKey(t, db, m.ID, checkout.ModeTest, base)
	k2 := newKey(t, db, m.ID, checkout.ModeLive, base)
	idle := newKey(t, db, m.ID, checkout.ModeTest, base)
	logOf := func(k *checkout.APIKey, at time.Time) *checkout.RequestLog {
		l := newRequestLog(m, k.Mode, at)
		l.APIKeyID = k.ID
		return l
	}
	lastUsed := func(k *checkout.APIKey) *time.Time {
		t.Helper()
		got, err := db.APIKeyGet(ctx, k.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got.LastUsedAt
	}
	check := func(step string, k *checkout.APIKey, want time.Time) {
		t.Helper()
		got := lastUsed(k)
		if want.IsZero() && got != nil || !want.IsZero() && (got == nil || !got.Equal(want)) {
			t.Errorf("%s: LastUsedAt of %s = %v; want %v", step, k.ID, got, want)
		}
	}
	insert := func(logs ...*checkout.RequestLog) {
		t.Helper()
		if err := db.RequestLogInsert(ctx, logs); err != nil {
			t.Fatal(err)
		}
	}
	check("new", k1, time.Time{})

	t1 := base.Add(10*time.Second + 300*time.Millisecond)
	insert(logOf(k1, t1.Add(-5*time.Second)), logOf(k1, t1), logOf(k2, t1.Add(-time.Second)),
		logOf(&checkout.APIKey{ID: checkout.NewAPIKeyID()}, t1)) // a key not stored: nothing to update
	check("first batch", k1, base.Add(10*time.Second))
	check("first batch", k2, base.Add(9*time.Second))
	check("first batch", idle, time.Time{})

	insert(logOf(k1, t1.Add(59*time.Second)))
	check("59 s later", k1, base.Add(10*time.Second))
	insert(logOf(k1, t1.Add(-time.Hour)))
	check("an older log", k1, base.Add(10*time.Second))
	insert(logOf(k1, t1.Add(60*time.Second)), logOf(k2, t1.Add(30*time.Second)))
	check("a minute later", k1, base.Add(70*time.Second))
	check("30 s later", k2, base.Add(9*time.Second))
}

func testAPIKeyNameRoundTrip(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	for _, name := range []string{"", "Production server", "Ünïcode 😀 <b>&"} {
		k := &checkout.APIKey{ID: checkout.NewAPIKeyID(), Name: name, MerchantID: m.ID, Mode: checkout.ModeTest, Type: checkout.KeyBearer,
			Permissions: []checkout.Permission{checkout.PermCheckoutsRead}, SecretHash: checkout.HashSecret(name + "x"), SecretHint: "wxyz", CreatedAt: base}
		inTx(t, db, func(tx checkout.Tx) error { return tx.APIKeyInsert(ctx, k) })
		got, err := db.APIKeyGet(ctx, k.ID)
		if err != nil || !reflect.DeepEqual(got, k) {
			t.Errorf("APIKeyGet = %+v, %v; want %+v", got, err, k)
		}
	}
	ks, err := db.APIKeyList(ctx, m.ID)
	if err != nil || len(ks) != 3 {
		t.Errorf("APIKeyList = %d keys, %v; want 3", len(ks), err)
	}
}

package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/logtest"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// recordLogs writes logs of the fixture's key through a request log writer,
// as the API does, and waits until they are stored.
func (f *fixture) recordLogs(t *testing.T, logs ...*checkout.RequestLog) {
	t.Helper()
	log, _ := logtest.Capture()
	w := service.NewRequestLogWriter(f.db, log)
	for _, l := range logs {
		w.Record(l)
	}
	w.Close()
}

func (f *fixture) logAt(at time.Time, method string, status int) *checkout.RequestLog {
	return &checkout.RequestLog{RequestID: checkout.NewRequestID(), MerchantID: f.m.ID, Mode: f.key.Mode, APIKeyID: f.key.ID,
		Method: method, Path: "/v1/stores/" + f.m.ID + "/checkouts", Route: service.LogRoutes[0], Status: status, CreatedAt: at}
}

func requestIDs(ls []*checkout.RequestLog) []string {
	out := []string{}
	for _, l := range ls {
		out = append(out, l.RequestID)
	}
	return out
}

// ListRequestLogs pages newest first with a cursor that carries on where
// the page ended, under a filter, and says when no page follows.
func TestListRequestLogs(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		scope := checkout.Scope{MerchantID: f.m.ID, Mode: checkout.ModeTest}
		var all, failed []string
		var logs []*checkout.RequestLog
		for i := range 7 {
			status := 200
			if i%3 == 0 {
				status = 500
			}
			l := f.logAt(t0.Add(time.Duration(i)*time.Second), "POST", status)
			logs = append(logs, l)
		}
		for i := len(logs) - 1; i >= 0; i-- {
			all = append(all, logs[i].RequestID)
			if logs[i].Status == 500 {
				failed = append(failed, logs[i].RequestID)
			}
		}
		f.recordLogs(t, logs...)
		for _, tt := range []struct {
			filter service.RequestLogFilter
			size   int
			want   []string
		}{
			{service.RequestLogFilter{}, 3, all},
			{service.RequestLogFilter{}, 7, all},
			{service.RequestLogFilter{}, 0, all},
			{service.RequestLogFilter{StatusClass: "5xx"}, 2, failed},
			{service.RequestLogFilter{StatusClass: "5xx", Method: "post"}, 1, failed},
			{service.RequestLogFilter{StatusClass: "4xx"}, 2, nil},
			{service.RequestLogFilter{APIKeyID: f.key.ID, From: t0.Add(2 * time.Second), To: t0.Add(5 * time.Second)}, 2, all[2:5]},
			{service.RequestLogFilter{Route: service.LogRoutes[0]}, 3, all},
			{service.RequestLogFilter{Route: service.LogRoutes[1]}, 3, nil},
		} {
			var got []string
			cursor, pages := "", 0
			for {
				page, err := f.svc.ListRequestLogs(ctx, scope, tt.filter, cursor, tt.size)
				if err != nil {
					t.Fatalf("ListRequestLogs(%+v) = %v", tt.filter, err)
				}
				pages++
				got = append(got, requestIDs(page.Items)...)
				if page.Next == "" {
					break
				}
				if len(page.Items) != tt.size {
					t.Errorf("ListRequestLogs(%+v, %d): a page of %d with a next page", tt.filter, tt.size, len(page.Items))
				}
				cursor = page.Next
			}
			if tt.want == nil {
				tt.want = []string{}
			}
			if got == nil {
				got = []string{}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ListRequestLogs(%+v) by %d = %v; want %v", tt.filter, tt.size, got, tt.want)
			}
			if size := max(tt.size, 1); tt.size > 0 && pages != max(1, (len(tt.want)+size-1)/size) {
				t.Errorf("ListRequestLogs(%+v) by %d took %d pages; want no empty page at the end", tt.filter, tt.size, pages)
			}
		}
		// Another mode and another store see none of them.
		for _, other := range []checkout.Scope{{MerchantID: f.m.ID, Mode: checkout.ModeLive}, {MerchantID: checkout.NewStoreID(), Mode: checkout.ModeTest}} {
			page, err := f.svc.ListRequestLogs(ctx, other, service.RequestLogFilter{}, "", 0)
			if err != nil || len(page.Items) != 0 || page.Next != "" {
				t.Errorf("ListRequestLogs(%+v) = %v, %v; want an empty page", other, requestIDs(page.Items), err)
			}
		}
	})
}

// A filter the list does not know is validation_failed naming it; so is a
// cursor that the list did not make.
func TestListRequestLogsInvalid(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		scope := checkout.Scope{MerchantID: f.m.ID, Mode: checkout.ModeTest}
		for _, tt := range []struct {
			filter service.RequestLogFilter
			cursor string
			param  string
		}{
			{service.RequestLogFilter{StatusClass: "3xx"}, "", "status"},
			{service.RequestLogFilter{StatusClass: "500"}, "", "status"},
			{service.RequestLogFilter{Method: "BREW"}, "", "method"},
			{service.RequestLogFilter{Route: "/v1/stores"}, "", "route"},
			{service.RequestLogFilter{Route: "/v1/stores/{storeId}/checkouts/cs_1"}, "", "route"},
			{service.RequestLogFilter{APIKeyID: "key_1"}, "", "key"},
			{service.RequestLogFilter{From: t0, To: t0.Add(-time.Second)}, "", "to"},
			{service.RequestLogFilter{}, "not-a-cursor", ""},
		} {
			_, err := f.svc.ListRequestLogs(context.Background(), scope, tt.filter, tt.cursor, 0)
			var ce *checkout.Error
			if !checkout.IsCode(err, checkout.EValidationFailed) || !asError(err, &ce) || ce.Param != tt.param {
				t.Errorf("ListRequestLogs(%+v, %q) = %v; want validation_failed on %q", tt.filter, tt.cursor, err, tt.param)
			}
		}
	})
}

// RequestLogIn finds a request by its id in the scope; an id of another
// store or mode answers exactly as one that does not exist.
func TestRequestLogIn(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		mine := f.logAt(t0, "GET", 200)
		other := newFixture(t, db)
		theirs := other.logAt(t0, "GET", 200)
		live := f.logAt(t0, "GET", 200)
		live.Mode = checkout.ModeLive
		f.recordLogs(t, mine, theirs, live)
		scope := checkout.Scope{MerchantID: f.m.ID, Mode: checkout.ModeTest}
		got, err := f.svc.RequestLogIn(ctx, scope, mine.RequestID)
		if err != nil || got.RequestID != mine.RequestID {
			t.Fatalf("RequestLogIn(its own) = %v, %v", got, err)
		}
		missing := checkout.NewRequestID()
		_, want := f.svc.RequestLogIn(ctx, scope, missing)
		for _, id := range []string{theirs.RequestID, live.RequestID, "req_x", ""} {
			_, err := f.svc.RequestLogIn(ctx, scope, id)
			wantNotFoundLike(t, "RequestLogIn("+id+")", err, want, missing, id)
		}
	})
}

// wantNotFoundLike fails unless err is not_found with want's message, the
// id asked for in place of missing.
func wantNotFoundLike(t *testing.T, what string, err, want error, missing, id string) {
	t.Helper()
	ce, ok := err.(*checkout.Error)
	we := want.(*checkout.Error)
	if !ok || ce.Code != checkout.ENotFound || ce.Message != replaceID(we.Message, missing, id) {
		t.Errorf("%s = %v; want not_found as for a missing id (%v)", what, err, want)
	}
}

func replaceID(msg, from, to string) string {
	return string(bytes.ReplaceAll([]byte(msg), []byte(from), []byte(to)))
}

// ListEvents pages the scope's events newest first, each with the latest
// delivery to each of its endpoints; EventIn shows one event with the
// payload its deliveries carried.
func TestListEvents(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		a := newEndpoint(t, f, "https://a.example/hook")
		b := newEndpoint(t, f, "https://b.example/hook")
		var sessions []*checkout.SessionJSON
		for range 5 {
			sessions = append(sessions, f.create(t))
			f.clock.Advance(time.Second)
		}
		if _, _, err := f.svc.SetEndpointEnabled(ctx, b.ID, false); err != nil {
			t.Fatal(err)
		}
		scope := checkout.Scope{MerchantID: f.m.ID, Mode: checkout.ModeTest}
		var got []*service.EventItem
		cursor := ""
		for {
			page, err := f.svc.ListEvents(ctx, scope, service.EventFilter{Type: checkout.EventCheckoutCreated}, cursor, 2)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, page.Items...)
			if cursor = page.Next; cursor == "" {
				break
			}
		}
		if len(got) != len(sessions) {
			t.Fatalf("ListEvents = %d events; want %d", len(got), len(sessions))
		}
		for i, it := range got {
			s := sessions[len(sessions)-1-i]
			if it.Event.ObjectID() != s.ID {
				t.Errorf("event %d is about %s; want %s (newest first)", i, it.Event.ObjectID(), s.ID)
			}
			if len(it.Deliveries) != 2 {
				t.Errorf("event %d has %d deliveries; want one per endpoint", i, len(it.Deliveries))
				continue
			}
			want := map[string]checkout.DeliveryStatus{a.ID: checkout.DeliveryPending, b.ID: checkout.DeliveryCanceled}
			for _, d := range it.Deliveries {
				if d.EventID != it.Event.ID || d.Status != want[d.EndpointID] {
					t.Errorf("event %d: delivery to %s = %s of %s; want %s", i, d.EndpointID, d.Status, d.EventID, want[d.EndpointID])
				}
			}
		}

		e, err := f.svc.EventIn(ctx, scope, got[0].Event.ID)
		if err != nil {
			t.Fatal(err)
		}
		payload, err := e.Payload()
		if err != nil {
			t.Fatal(err)
		}
		sent, _ := json.Marshal(e) // what the dispatcher sends
		var env struct {
			Data struct{ Object json.RawMessage } `json:"data"`
		}
		if !bytes.Equal(payload, sent) || json.Unmarshal(payload, &env) != nil || !bytes.Equal(env.Data.Object, e.Object) {
			t.Errorf("Payload = %s; want the body sent, with data.object the stored bytes %s", payload, e.Object)
		}

		missing := checkout.NewEventID()
		_, want := f.svc.EventIn(ctx, scope, missing)
		other := newFixture(t, db)
		other.create(t)
		theirEvents := other.events(t, checkout.EventCheckoutCreated)
		for _, tt := range []struct {
			scope checkout.Scope
			id    string
		}{
			{scope, theirEvents[0].ID},
			{checkout.Scope{MerchantID: f.m.ID, Mode: checkout.ModeLive}, got[0].Event.ID},
			{scope, "evt_1"},
		} {
			_, err := f.svc.EventIn(ctx, tt.scope, tt.id)
			w := want
			if tt.scope.Mode != scope.Mode {
				_, w = f.svc.EventIn(ctx, tt.scope, missing)
			}
			wantNotFoundLike(t, "EventIn("+tt.id+")", err, w, missing, tt.id)
		}

		for _, tt := range []struct {
			f     service.EventFilter
			param string
		}{
			{service.EventFilter{Type: "checkout.updated"}, "type"},
			{service.EventFilter{From: t0, To: t0.Add(-time.Second)}, "to"},
		} {
			_, err := f.svc.ListEvents(ctx, scope, tt.f, "", 0)
			var ce *checkout.Error
			if !asError(err, &ce) || ce.Code != checkout.EValidationFailed || ce.Param != tt.param {
				t.Errorf("ListEvents(%+v) = %v; want validation_failed on %s", tt.f, err, tt.param)
			}
		}
	})
}

// ListAPIKeys shows the scope's keys with their last use, written by the
// request logs at most once a minute; RevokeAPIKeyIn revokes only a key of
// the scope.
func TestListAPIKeys(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		f.clock.Advance(time.Second) // after the fixture's key, in the list's order
		named, _, err := f.svc.CreateAPIKey(ctx, checkout.APIKeyParams{Name: " Shop server ", MerchantID: f.m.ID, Mode: checkout.ModeTest,
			Type: checkout.KeyBearer, Permissions: []checkout.Permission{checkout.PermCheckoutsRead}})
		if err != nil {
			t.Fatal(err)
		}
		live, _ := f.newKey(t, checkout.ModeLive, checkout.KeyBearer)
		scope := checkout.Scope{MerchantID: f.m.ID, Mode: checkout.ModeTest}

		used := t0.Add(90 * time.Second)
		f.recordLogs(t, f.logAt(t0.Add(30*time.Second), "GET", 200), f.logAt(used, "POST", 201))
		f.recordLogs(t, f.logAt(used.Add(59*time.Second), "GET", 200)) // within the minute: not written
		ks, err := f.svc.ListAPIKeys(ctx, scope)
		if err != nil || len(ks) != 2 {
			t.Fatalf("ListAPIKeys = %v, %v; want the two test-mode keys", ks, err)
		}
		if ks[0].ID != f.key.ID || ks[0].LastUsedAt == nil || !ks[0].LastUsedAt.Equal(used) {
			t.Errorf("ListAPIKeys()[0] = %s last used %v; want %s last used %v", ks[0].ID, ks[0].LastUsedAt, f.key.ID, used)
		}
		if ks[1].ID != named.ID || ks[1].Name != "Shop server" || ks[1].LastUsedAt != nil || ks[1].SecretHint == "" {
			t.Errorf("ListAPIKeys()[1] = %+v; want %s named Shop server, never used", ks[1], named.ID)
		}

		missing := checkout.NewAPIKeyID()
		_, want := f.svc.RevokeAPIKeyIn(ctx, scope, missing)
		other := newFixture(t, db)
		for _, id := range []string{live.ID, other.key.ID, "key_1"} {
			_, err := f.svc.RevokeAPIKeyIn(ctx, scope, id)
			wantNotFoundLike(t, "RevokeAPIKeyIn("+id+")", err, want, missing, id)
		}
		for _, k := range []*checkout.APIKey{live, other.key} {
			if got, _ := db.APIKeyGet(ctx, k.ID); got.Revoked() {
				t.Errorf("RevokeAPIKeyIn of another scope revoked %s", k.ID)
			}
		}
		k, err := f.svc.RevokeAPIKeyIn(ctx, scope, named.ID)
		if err != nil || !k.Revoked() {
			t.Errorf("RevokeAPIKeyIn(its own) = %v, %v; want it revoked", k, err)
		}
	})
}

// A key revoked from the dashboard on one node stops working on every
// node: at once on a node that has not cached it, and within the cache's
// 2 s on one that has (DESIGN.md 2 allows 5 s), each node on its own
// connection to the database.
func TestRevokeAPIKeyInEveryNode(t *testing.T) {
	for _, name := range storetest.Databases {
		t.Run(name, func(t *testing.T) {
			db1, db2 := openTwice(t, name)
			f := newFixture(t, db1)
			ctx := context.Background()
			cached := f.newService(db2)
			if _, err := cached.Authenticate(ctx, f.secret); err != nil {
				t.Fatal(err)
			}
			scope := checkout.Scope{MerchantID: f.m.ID, Mode: checkout.ModeTest}
			if _, err := f.svc.RevokeAPIKeyIn(ctx, scope, f.key.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := f.newService(db2).Authenticate(ctx, f.secret); !checkout.IsCode(err, checkout.EInvalidAPIKey) {
				t.Errorf("a node without the key cached: Authenticate = %v; want invalid_api_key", err)
			}
			f.cache.Advance(service.DefaultKeyCacheTTL - time.Millisecond)
			if _, err := cached.Authenticate(ctx, f.secret); err != nil {
				t.Logf("the cached node refused the key before its cache ran out: %v (allowed)", err)
			}
			f.cache.Advance(time.Millisecond)
			if _, err := cached.Authenticate(ctx, f.secret); !checkout.IsCode(err, checkout.EInvalidAPIKey) {
				t.Errorf("%v after revoking, a node that had the key cached: Authenticate = %v; want invalid_api_key", service.DefaultKeyCacheTTL, err)
			}
		})
	}
}

// newEndpoint stores an enabled test-mode endpoint of the fixture's store
// for every event (the service's CreateEndpoint would check its URL
// through DNS).
func newEndpoint(t *testing.T, f *fixture, url string) *checkout.Endpoint {
	t.Helper()
	ep, err := checkout.NewEndpoint(checkout.EndpointParams{MerchantID: f.m.ID, Mode: checkout.ModeTest, URL: url,
		Events: []string{checkout.AllEvents}}, f.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := f.db.InTx(context.Background(), func(tx checkout.Tx) error { return tx.EndpointInsert(context.Background(), ep) }); err != nil {
		t.Fatal(err)
	}
	return ep
}

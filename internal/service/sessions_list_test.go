package service_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// createWith makes a session through the service from a request body, at
// the fake clock's time, with key.
func (f *fixture) createWith(t *testing.T, key *checkout.APIKey, body string) *checkout.SessionJSON {
	t.Helper()
	p, err := checkout.ParseCreateRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.svc.CreateSession(ctx, service.CreateSessionParams{Key: key, StoreID: key.MerchantID, Params: p})
	if err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	var s checkout.SessionJSON
	if err := json.Unmarshal(res.Data, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

func listedIDs(ss []*checkout.Session) []string {
	out := []string{}
	for _, s := range ss {
		out = append(out, s.ID)
	}
	return out
}

// ListSessions pages the scope's sessions newest first, finds them by
// session id, payment id, email (whatever the case) and key=value of
// metadata, by status (as the API answers it) and by date, and never shows
// the other mode's or another store's; bad filters are validation_failed
// naming the field; SessionIn shows a session of the scope only, with its
// payments and events.
func TestListSessions(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPayFixture(t, db)
		scope := checkout.Scope{MerchantID: f.m.ID, Mode: checkout.ModeTest}
		live, _ := f.newKey(t, checkout.ModeLive, checkout.KeyBearer)
		other := newPayFixture(t, db) // another store: the same emails and metadata

		var all []string // newest first
		for i := range 5 {
			f.clock.Advance(time.Second)
			body := `{"items":[{"name":"Sword","amount":1500}],"customer":{"email":"Buyer` + string(rune('0'+i%2)) + `@Example.com"},
				"metadata":{"order_id":"A-100` + string(rune('0'+i)) + `","batch":"b` + string(rune('0'+i%2)) + `"}}`
			s := f.createWith(t, f.key, body)
			all = append([]string{s.ID}, all...)
			f.createWith(t, live, body)
			other.createWith(t, other.key, body)
		}
		list := func(fl service.SessionFilter, cursor string, limit int) (checkout.Page[*checkout.Session], error) {
			return f.svc.ListSessions(ctx, scope, fl, cursor, limit)
		}
		// Pages of 2 across the boundary: 2, 2, 1.
		var got []string
		cursor := ""
		for range 3 {
			page, err := list(service.SessionFilter{}, cursor, 2)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, listedIDs(page.Items)...)
			cursor = page.Next
			if cursor == "" {
				break
			}
		}
		if !slices.Equal(got, all) || cursor != "" {
			t.Errorf("pages of 2 = %v (next %q); want %v", got, cursor, all)
		}

		s0 := all[4] // the oldest: order_id A-1000, buyer0
		f.clock.Advance(time.Second)
		paid := f.session(t)
		out, err := f.svc.PayByCard(ctx, paid.ID, card("4000000000000002"))
		if err != nil {
			t.Fatal(err)
		}
		declined := out.Payment
		f.clock.Advance(time.Millisecond)
		if out, err = f.svc.PayByCard(ctx, paid.ID, card("4242424242424242")); err != nil {
			t.Fatal(err)
		}
		succeeded := out.Payment
		all = append([]string{paid.ID}, all...)

		for _, c := range []struct {
			search string
			status checkout.Status
			want   []string
		}{
			{"", "", all},
			{s0, "", []string{s0}},
			{"  " + s0 + " ", "", []string{s0}},
			{s0, checkout.StatusComplete, []string{}},
			{declined.ID, "", []string{paid.ID}},
			{succeeded.ID, checkout.StatusComplete, []string{paid.ID}},
			{"buyer0@example.com", "", []string{all[1], all[3], all[5]}},
			{"BUYER1@EXAMPLE.COM", "", []string{all[2], all[4]}},
			{"nobody@example.com", "", []string{}},
			{"order_id=A-1000", "", []string{s0}},
			{"order_id = A-1003", "", []string{all[2]}},
			{"order_id=a-1000", "", []string{}},
			{"batch=b1", checkout.StatusOpen, []string{all[2], all[4]}},
			{"", checkout.StatusComplete, []string{paid.ID}},
			{"", checkout.StatusExpired, []string{}},
			{"cs_" + strings.Repeat("0", 64), "", []string{}},
			{"pay_" + strings.Repeat("0", 32), "", []string{}},
		} {
			page, err := list(service.SessionFilter{Search: c.search, Status: c.status}, "", 0)
			if got := listedIDs(page.Items); err != nil || !slices.Equal(got, c.want) {
				t.Errorf("ListSessions(%q, %q) = %v, %v; want %v", c.search, c.status, got, err, c.want)
			}
		}
		// Another store's and the live sessions are never found by id.
		otherPage, _ := other.svc.ListSessions(ctx, checkout.Scope{MerchantID: other.m.ID, Mode: checkout.ModeTest}, service.SessionFilter{}, "", 0)
		for _, id := range []string{otherPage.Items[0].ID} {
			if page, err := list(service.SessionFilter{Search: id}, "", 0); err != nil || len(page.Items) != 0 {
				t.Errorf("ListSessions(another store's %s) = %v, %v; want none", id, listedIDs(page.Items), err)
			}
			if _, err := f.svc.SessionIn(ctx, scope, id); !checkout.IsCode(err, checkout.ECheckoutNotFound) {
				t.Errorf("SessionIn(another store's session) = %v; want checkout_not_found", err)
			}
		}
		livePage, _ := f.svc.ListSessions(ctx, checkout.Scope{MerchantID: f.m.ID, Mode: checkout.ModeLive}, service.SessionFilter{}, "", 0)
		if len(livePage.Items) != 5 {
			t.Errorf("live sessions = %d; want 5", len(livePage.Items))
		}
		if _, err := f.svc.SessionIn(ctx, scope, livePage.Items[0].ID); !checkout.IsCode(err, checkout.ECheckoutNotFound) {
			t.Errorf("SessionIn(a live session in test mode) = %v; want checkout_not_found", err)
		}

		// Dates: [From, To), whole seconds.
		day := t0.Truncate(24 * time.Hour)
		if page, err := list(service.SessionFilter{From: day, To: day.AddDate(0, 0, 1)}, "", 0); err != nil || len(page.Items) != len(all) {
			t.Errorf("ListSessions(today) = %d, %v; want %d", len(page.Items), err, len(all))
		}
		if page, err := list(service.SessionFilter{From: day.AddDate(0, 0, 1)}, "", 0); err != nil || len(page.Items) != 0 {
			t.Errorf("ListSessions(from tomorrow) = %d, %v; want none", len(page.Items), err)
		}

		// An open session whose hour is over is listed as expired, as the
		// API answers it, and is not open.
		f.clock.Advance(2 * time.Hour)
		if page, err := list(service.SessionFilter{Status: checkout.StatusOpen}, "", 0); err != nil || len(page.Items) != 0 {
			t.Errorf("open sessions past their hour = %v, %v; want none", listedIDs(page.Items), err)
		}
		if page, err := list(service.SessionFilter{}, "", 0); err != nil || page.Items[1].Status != checkout.StatusExpired {
			t.Errorf("a session past its hour is listed %v, %v; want expired", page.Items[1].Status, err)
		}

		// Bad input: validation_failed, naming the field.
		for _, c := range []struct {
			f     service.SessionFilter
			param string
		}{
			{service.SessionFilter{Status: "paid"}, "status"},
			{service.SessionFilter{From: day, To: day.AddDate(0, 0, -1)}, "to"},
			{service.SessionFilter{Search: "cs_123"}, "q"},
			{service.SessionFilter{Search: "cs_" + strings.Repeat("A", 64)}, "q"},
			{service.SessionFilter{Search: "pay_xyz"}, "q"},
			{service.SessionFilter{Search: "buyer@"}, "q"},
			{service.SessionFilter{Search: "hello"}, "q"},
			{service.SessionFilter{Search: "=A-1"}, "q"},
			{service.SessionFilter{Search: strings.Repeat("k", 41) + "=v"}, "q"},
			{service.SessionFilter{Search: "k=" + strings.Repeat("v", 501)}, "q"},
		} {
			_, err := list(c.f, "", 0)
			var ce *checkout.Error
			if !checkout.IsCode(err, checkout.EValidationFailed) || !errors.As(err, &ce) || ce.Param != c.param {
				t.Errorf("ListSessions(%+v) = %v; want validation_failed on %s", c.f, err, c.param)
			}
		}
		// The limits themselves are taken.
		for _, q := range []string{strings.Repeat("k", 40) + "=v", "k=" + strings.Repeat("v", 500), "k="} {
			if _, err := list(service.SessionFilter{Search: q}, "", 0); err != nil {
				t.Errorf("ListSessions(%.20q...) = %v; want it taken", q, err)
			}
		}
		if _, err := list(service.SessionFilter{}, "not-a-cursor", 0); !checkout.IsCode(err, checkout.EValidationFailed) {
			t.Errorf("ListSessions(bad cursor) = %v; want validation_failed", err)
		}

		// A session's page: as the API returns it, its payments, its
		// events and its payments'.
		d, err := f.svc.SessionIn(ctx, scope, paid.ID)
		if err != nil {
			t.Fatal(err)
		}
		if d.Session.Status != checkout.StatusComplete || d.Session.PaymentID == nil || *d.Session.PaymentID != succeeded.ID ||
			d.Session.CheckoutURL != "https://pay.example/invoice/"+paid.ID {
			t.Errorf("SessionIn = %+v; want complete, paid by %s, with its checkout_url", d.Session, succeeded.ID)
		}
		if got := []string{d.Payments[0].ID, d.Payments[1].ID}; len(d.Payments) != 2 || !slices.Equal(got, []string{declined.ID, succeeded.ID}) {
			t.Errorf("SessionIn payments = %v; want the declined then the succeeded one", got)
		}
		var types []string
		for _, it := range d.Events {
			types = append(types, it.Event.Type)
		}
		want := []string{checkout.EventCheckoutCreated, checkout.EventPaymentFailed, checkout.EventPaymentSucceeded, checkout.EventCheckoutCompleted}
		slices.Sort(types)
		slices.Sort(want)
		if !slices.Equal(types, want) {
			t.Errorf("SessionIn events = %v; want %v", types, want)
		}
		for _, id := range []string{"cs_nope", "", "cs_" + strings.Repeat("0", 64)} {
			if _, err := f.svc.SessionIn(ctx, scope, id); !checkout.IsCode(err, checkout.ECheckoutNotFound) {
				t.Errorf("SessionIn(%q) = %v; want checkout_not_found", id, err)
			}
		}
		// A session whose hour is over turns expired on its page, as on
		// the API's retrieve, with its event.
		d, err = f.svc.SessionIn(ctx, scope, s0)
		if err != nil || d.Session.Status != checkout.StatusExpired || d.Events[len(d.Events)-1].Event.Type != checkout.EventCheckoutExpired {
			t.Errorf("SessionIn(past its hour) = %+v, %v; want expired with checkout.expired", d, err)
		}
	})
}

package storetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
)

// sessionListTests are the conformance tests of the dashboard's Sessions
// list and of a session's events: pages, each filter and search, and the
// scope.
var sessionListTests = []struct {
	name string
	fn   func(t *testing.T, db *store.DB)
}{
	{"Session/ListPages", testSessionListPages},
	{"Session/ListInBatch", testSessionListInBatch},
	{"Event/ListByObject", testEventListByObject},
}

func sessionIDs(ss []*checkout.Session) []string {
	ids := []string{}
	for _, s := range ss {
		ids = append(ids, s.ID)
	}
	return ids
}

// listSessions reads every page of p, of size p.Limit, each after the last
// session of the one before.
func listSessions(t *testing.T, db *store.DB, p checkout.SessionListParams) []string {
	t.Helper()
	got := []string{}
	for range 100 {
		page, err := db.SessionList(context.Background(), p)
		if err != nil {
			t.Fatalf("SessionList(%+v) = %v", p, err)
		}
		got = append(got, sessionIDs(page)...)
		if len(page) < p.Limit {
			return got
		}
		last := page[len(page)-1]
		p.After = checkout.Cursor{At: last.CreatedAt, ID: last.ID}
	}
	t.Fatalf("SessionList(%+v): more than 100 pages", p)
	return nil
}

// Pages of every size visit each of the scope's sessions that match once,
// newest first and by id within a second, whether a page ends inside a
// second or between two, with each filter and search alone and together;
// the store's other mode and another store's sessions, made at the same
// times with the same emails and metadata, never show.
func testSessionListPages(t *testing.T, db *store.DB) {
	m := newMerchant(t, db, "Acme", base)
	stranger := newMerchant(t, db, "Other", base)
	now := base.Add(time.Hour)
	statuses := []checkout.Status{checkout.StatusOpen, checkout.StatusComplete, checkout.StatusExpired, checkout.StatusOpen}
	emails := []string{"Ann@Example.com", "bob@example.com", ""}
	var stored []*checkout.Session
	for i := range 14 {
		at := base.Add(time.Duration(i/3) * time.Second) // three per second
		make := func(m *checkout.Merchant, mode checkout.Mode) *checkout.Session {
			return insertSession(t, db, newSession(m, func(s *checkout.Session) {
				s.Mode, s.Status, s.CreatedAt = mode, statuses[i%len(statuses)], at
				s.ExpiresAt = at.Add(time.Hour)
				if i == 13 {
					s.ExpiresAt = now.Add(time.Hour) // open at now
				}
				if i == 12 {
					s.ActivePaymentID = ptr("pay_" + strings.Repeat("0", 32)) // open past its hour: paying
				}
				if e := emails[i%len(emails)]; e != "" {
					s.Customer.Email = &e
				}
				s.Metadata = map[string]string{"order_id": fmt.Sprintf("A-%d", i%2), "n": fmt.Sprint(i)}
				if i%5 == 0 {
					s.Metadata = nil
				}
			}))
		}
		stored = append(stored, make(m, checkout.ModeTest))
		make(m, checkout.ModeLive)
		make(stranger, checkout.ModeTest)
	}
	want := slices.Clone(stored)
	slices.SortFunc(want, func(a, b *checkout.Session) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	sec := func(n float64) time.Time { return base.Add(time.Duration(n * float64(time.Second))) }
	filters := []struct {
		name  string
		p     checkout.SessionListParams
		match func(s *checkout.Session) bool
	}{
		{"all", checkout.SessionListParams{}, func(*checkout.Session) bool { return true }},
		{"complete", checkout.SessionListParams{Status: checkout.StatusComplete}, func(s *checkout.Session) bool { return s.Status == checkout.StatusComplete }},
		{"expired", checkout.SessionListParams{Status: checkout.StatusExpired}, func(s *checkout.Session) bool { return s.Status == checkout.StatusExpired }},
		{"open", checkout.SessionListParams{Status: checkout.StatusOpen}, func(s *checkout.Session) bool { return s.Status == checkout.StatusOpen }},
		{"open now", checkout.SessionListParams{Status: checkout.StatusOpen, Now: now}, func(s *checkout.Session) bool {
			return s.Status == checkout.StatusOpen && !s.ExpiryDue(now)
		}},
		{"email", checkout.SessionListParams{Email: "ann@example.com"}, func(s *checkout.Session) bool {
			return s.Customer.Email != nil && *s.Customer.Email == "Ann@Example.com"
		}},
		{"email none", checkout.SessionListParams{Email: "carol@example.com"}, func(*checkout.Session) bool { return false }},
		{"metadata", checkout.SessionListParams{MetadataKey: "order_id", MetadataValue: "A-1"}, func(s *checkout.Session) bool { return s.Metadata["order_id"] == "A-1" }},
		{"metadata one", checkout.SessionListParams{MetadataKey: "n", MetadataValue: "7"}, func(s *checkout.Session) bool { return s.Metadata["n"] == "7" }},
		{"metadata case", checkout.SessionListParams{MetadataKey: "order_id", MetadataValue: "a-1"}, func(*checkout.Session) bool { return false }},
		{"metadata and status", checkout.SessionListParams{MetadataKey: "order_id", MetadataValue: "A-0", Status: checkout.StatusOpen}, func(s *checkout.Session) bool {
			return s.Metadata["order_id"] == "A-0" && s.Status == checkout.StatusOpen
		}},
		{"dates", checkout.SessionListParams{From: sec(1), To: sec(3)}, func(s *checkout.Session) bool { return !s.CreatedAt.Before(sec(1)) && s.CreatedAt.Before(sec(3)) }},
		{"dates with fractions", checkout.SessionListParams{From: sec(0.5), To: sec(2.5)}, func(s *checkout.Session) bool { return !s.CreatedAt.Before(sec(1)) && s.CreatedAt.Before(sec(3)) }},
		{"metadata and dates", checkout.SessionListParams{MetadataKey: "order_id", MetadataValue: "A-1", From: sec(2)}, func(s *checkout.Session) bool {
			return s.Metadata["order_id"] == "A-1" && !s.CreatedAt.Before(sec(2))
		}},
		{"email and dates", checkout.SessionListParams{Email: "bob@example.com", To: sec(2)}, func(s *checkout.Session) bool {
			return s.Customer.Email != nil && *s.Customer.Email == "bob@example.com" && s.CreatedAt.Before(sec(2))
		}},
	}
	for _, f := range filters {
		wantIDs := []string{}
		for _, s := range want {
			if f.match(s) {
				wantIDs = append(wantIDs, s.ID)
			}
		}
		for _, limit := range []int{1, 2, 3, 4, 50} {
			p := f.p
			p.MerchantID, p.Mode, p.Limit = m.ID, checkout.ModeTest, limit
			if got := listSessions(t, db, p); !slices.Equal(got, wantIDs) {
				t.Errorf("%s, pages of %d = %v; want %v", f.name, limit, got, wantIDs)
			}
		}
	}
	// Emails match whatever the case of their ASCII letters, and only of
	// those, on either database: the search lower-cases ASCII letters alone.
	e := "Émile@Example.com"
	emile := insertSession(t, db, newSession(m, func(s *checkout.Session) { s.Customer.Email = &e; s.CreatedAt = base.Add(time.Hour) }))
	for q, want := range map[string][]string{"Émile@example.com": {emile.ID}, "émile@example.com": {}} {
		got, err := db.SessionList(context.Background(), checkout.SessionListParams{MerchantID: m.ID, Mode: checkout.ModeTest, Email: q})
		if err != nil || !slices.Equal(sessionIDs(got), want) {
			t.Errorf("SessionList(email %s) = %v, %v; want %v", q, sessionIDs(got), err, want)
		}
	}
	// A page reads the sessions whole.
	got, err := db.SessionList(context.Background(), checkout.SessionListParams{MerchantID: m.ID, Mode: checkout.ModeTest, MetadataKey: "n", MetadataValue: "7"})
	if err != nil || len(got) != 1 || got[0].ID != stored[7].ID || got[0].Metadata["order_id"] != "A-1" || got[0].Title != "Order" {
		t.Errorf("SessionList by n=7 = %+v, %v; want session 7 whole", got, err)
	}
}

// Sessions created in one batch of writes (combined inserts) are found by
// their metadata as those created alone.
func testSessionListInBatch(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	var ss []*checkout.Session
	inTx(t, db, func(tx checkout.Tx) error {
		ss = nil
		for i := range 5 {
			s := newSession(m, func(s *checkout.Session) {
				s.CreatedAt = base.Add(time.Duration(i) * time.Second)
				s.Metadata = map[string]string{"order_id": fmt.Sprint("B-", i), "batch": "1"}
			})
			if err := tx.SessionInsert(ctx, s); err != nil {
				return err
			}
			ss = append(ss, s)
		}
		return nil
	})
	got, err := db.SessionList(ctx, checkout.SessionListParams{MerchantID: m.ID, Mode: checkout.ModeTest, MetadataKey: "batch", MetadataValue: "1"})
	if want := []string{ss[4].ID, ss[3].ID, ss[2].ID, ss[1].ID, ss[0].ID}; err != nil || !slices.Equal(sessionIDs(got), want) {
		t.Errorf("SessionList(batch=1) = %v, %v; want %v", sessionIDs(got), err, want)
	}
}

// A session's events and its payments' are found by their objects' ids,
// oldest first; another session's are not.
func testEventListByObject(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	s := insertSession(t, db, newSession(m, nil))
	other := insertSession(t, db, newSession(m, nil))
	p := newPayment(s, checkout.MethodCard, base.Add(time.Second), nil)
	insertPayments(t, db, p)
	mk := func(typ string, object any, at time.Time) *checkout.Event {
		e, err := checkout.NewEvent(typ, m.ID, checkout.ModeTest, object, at)
		if err != nil {
			t.Fatal(err)
		}
		inTx(t, db, func(tx checkout.Tx) error { return tx.EventInsert(ctx, e) })
		return e
	}
	created := mk(checkout.EventCheckoutCreated, s.View(m, "https://pay.example"), base)
	mk(checkout.EventCheckoutCreated, other.View(m, "https://pay.example"), base)
	succeeded := mk(checkout.EventPaymentSucceeded, p, base.Add(2*time.Second))
	completed := mk(checkout.EventCheckoutCompleted, s.View(m, "https://pay.example"), base.Add(2*time.Second))
	mk(checkout.EventWebhookTest, map[string]string{"object": "webhook_test", "endpoint_id": "we_x"}, base)
	got, err := db.EventListByObject(ctx, []string{s.ID, p.ID})
	var ids []string
	for _, e := range got {
		ids = append(ids, e.ID)
	}
	if want := []string{created.ID, succeeded.ID, completed.ID}; err != nil || !slices.Equal(ids, want) {
		t.Errorf("EventListByObject(session, payment) = %v, %v; want %v", ids, err, want)
	}
	if got, err := db.EventListByObject(ctx, nil); err != nil || len(got) != 0 {
		t.Errorf("EventListByObject(none) = %v, %v; want none", got, err)
	}
}

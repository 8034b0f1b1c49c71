package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

func ptr[T any](v T) *T { return &v }

var newSessionID = regexp.MustCompile(`^cs_[0-9a-f]{64}$`)

// sessionFields is SPEC.md's field table of a checkout session, in order.
var sessionFields = []string{
	"id", "object", "livemode", "status", "title", "description", "checkout_url", "merchant", "currency",
	"amount", "discount_amount", "tax_amount", "total_amount", "items", "customer", "metadata",
	"return_url", "cancel_url", "payment_id", "created_at", "expires_at", "completed_at",
}

// objectKeys returns the keys of a JSON object in the order written.
func objectKeys(t *testing.T, raw []byte) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not a JSON object: %s", raw)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// events returns the store's events of one mode and type.
func (h *harness) events(storeID string, mode checkout.Mode, typ string) []*checkout.Event {
	h.t.Helper()
	es, err := h.db.EventList(context.Background(), checkout.EventListParams{MerchantID: storeID, Mode: mode, Type: typ, Limit: 100000})
	if err != nil {
		h.t.Fatal(err)
	}
	return es
}

// sessionOf decodes the session of a success envelope.
func sessionOf(t *testing.T, r *response) checkout.SessionJSON {
	t.Helper()
	var s checkout.SessionJSON
	if err := json.Unmarshal(r.envelope(t).Data, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// A new session is SPEC.md's object, every field as the request and the
// store make it, and retrieving it answers the same; checkout.created
// carries it too.
func TestSessionObject(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		h.clock.Advance(1500 * time.Millisecond) // created_at is whole seconds
		body := `{
			"items": [
				{"name": "Sword", "amount": 1500, "quantity": 2, "image": "https://cdn.example/sword.png"},
				{"name": "Shield", "amount": 250}
			],
			"title": "Order 42",
			"description": "Two swords and a shield",
			"currency": "eur",
			"amount": 3250,
			"customer": {"email": "buyer@example.com", "name": "Ada"},
			"metadata": {"order_id": "42", "note": "gift"},
			"return_url": "https://shop.example/thanks?x=1",
			"cancel_url": "https://shop.example/cart"
		}`
		r := h.post(body)
		if r.Status != http.StatusCreated {
			t.Fatalf("Create = %d %s; want 201", r.Status, r.Body)
		}
		got := sessionOf(t, r)
		if !newSessionID.MatchString(got.ID) {
			t.Errorf("id = %q; want cs_ and 64 lower-case hex", got.ID)
		}
		created := t0.Unix() + 1
		want := checkout.SessionJSON{
			ID:          got.ID,
			Object:      "checkout_session",
			Livemode:    false,
			Status:      checkout.StatusOpen,
			Title:       "Order 42",
			Description: ptr("Two swords and a shield"),
			CheckoutURL: checkoutBase + "/invoice/" + got.ID,
			Merchant: checkout.MerchantJSON{
				ID: h.store.ID, Name: "Acme Games", StatementDescriptor: "ACME GAMES", Website: "https://acme.example",
			},
			Currency: "EUR", Amount: 3250, DiscountAmount: 0, TaxAmount: 0, TotalAmount: 3250,
			Items: []checkout.Item{
				{Name: "Sword", Amount: 1500, Quantity: 2, Image: ptr("https://cdn.example/sword.png")},
				{Name: "Shield", Amount: 250, Quantity: 1, Image: nil},
			},
			Customer:    checkout.Customer{Email: ptr("buyer@example.com"), Name: ptr("Ada")},
			Metadata:    map[string]string{"order_id": "42", "note": "gift"},
			ReturnURL:   ptr("https://shop.example/thanks?x=1"),
			CancelURL:   ptr("https://shop.example/cart"),
			PaymentID:   nil,
			CreatedAt:   created,
			ExpiresAt:   created + 3600,
			CompletedAt: nil,
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Create = %+v\nwant %+v", got, want)
		}
		data := r.envelope(t).Data
		if keys := objectKeys(t, data); !slices.Equal(keys, sessionFields) {
			t.Errorf("Create fields = %q; want SPEC.md's, in its order: %q", keys, sessionFields)
		}

		g := h.get(got.ID)
		if g.Status != http.StatusOK {
			t.Fatalf("Retrieve = %d %s; want 200", g.Status, g.Body)
		}
		if s := sessionOf(t, g); !reflect.DeepEqual(s, want) {
			t.Errorf("Retrieve = %+v\nwant %+v", s, want)
		}

		es := h.events(h.store.ID, checkout.ModeTest, checkout.EventCheckoutCreated)
		if len(es) != 1 {
			t.Fatalf("%d checkout.created events; want 1", len(es))
		}
		var ev checkout.SessionJSON
		if err := json.Unmarshal(es[0].Object, &ev); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(ev, want) {
			t.Errorf("checkout.created carries %+v\nwant %+v", ev, want)
		}
	})
}

// A minimal request takes every default: the store's name and currency,
// nulls for what was not sent, quantity 1, empty metadata. A live key makes
// a live session.
func TestSessionDefaults(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		// A store without a website, in another currency.
		m, err := h.svc.CreateMerchant(context.Background(), checkout.MerchantParams{Name: "Épée & Co", Currency: "JPY"})
		if err != nil {
			t.Fatal(err)
		}
		_, live := h.newKey(m.ID, checkout.ModeLive, checkout.PermCheckoutsWrite)
		r := h.do(request{method: "POST", path: "/v1/stores/" + m.ID + "/checkouts", secret: live, body: `{"items":[{"name":"Sword","amount":1500}]}`})
		if r.Status != http.StatusCreated {
			t.Fatalf("Create = %d %s; want 201", r.Status, r.Body)
		}
		got := sessionOf(t, r)
		want := checkout.SessionJSON{
			ID: got.ID, Object: "checkout_session", Livemode: true, Status: checkout.StatusOpen,
			Title: "Épée & Co", CheckoutURL: checkoutBase + "/invoice/" + got.ID,
			Merchant: checkout.MerchantJSON{ID: m.ID, Name: "Épée & Co", StatementDescriptor: m.StatementDescriptor, Website: ""},
			Currency: "JPY", Amount: 1500, TotalAmount: 1500,
			Items:     []checkout.Item{{Name: "Sword", Amount: 1500, Quantity: 1}},
			Metadata:  map[string]string{},
			CreatedAt: t0.Unix(), ExpiresAt: t0.Unix() + 3600,
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Create = %+v\nwant %+v", got, want)
		}
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(r.envelope(t).Data, &raw); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"description", "return_url", "cancel_url", "payment_id", "completed_at"} {
			if string(raw[f]) != "null" {
				t.Errorf("%s = %s; want null", f, raw[f])
			}
		}
		if string(raw["customer"]) != `{"email":null,"name":null}` || string(raw["metadata"]) != "{}" {
			t.Errorf("customer = %s, metadata = %s; want nulls and {}", raw["customer"], raw["metadata"])
		}
		if len(h.events(m.ID, checkout.ModeLive, checkout.EventCheckoutCreated)) != 1 || len(h.events(m.ID, checkout.ModeTest, "")) != 0 {
			t.Errorf("a live create's checkout.created is not one live event")
		}
	})
}

// Retrieve finds a session only in the key's store and mode; every other
// case answers as if there were none, and malformed path parameters answer
// 400 naming each.
func TestRetrieve(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		_, live := h.newKey(h.store.ID, checkout.ModeLive, checkout.PermCheckoutsWrite)
		_, readOnly := h.newKey(h.store.ID, checkout.ModeTest, checkout.PermCheckoutsRead)
		other := h.newStore("Other Shop", "EUR")
		_, otherSecret := h.newKey(other.ID, checkout.ModeTest, checkout.PermCheckoutsWrite)

		s := h.mustCreate(`{"items":[{"name":"Sword","amount":1500}]}`)
		createIn := func(storeID, secret string) string {
			r := h.do(request{method: "POST", path: "/v1/stores/" + storeID + "/checkouts", secret: secret, body: `{"items":[{"name":"Sword","amount":1500}]}`})
			if r.Status != http.StatusCreated {
				t.Fatalf("Create = %d %s; want 201", r.Status, r.Body)
			}
			return sessionOf(t, r).ID
		}
		liveID := createIn(h.store.ID, live)
		otherID := createIn(other.ID, otherSecret)
		hex64 := rep("0123456789abcdef", 4)

		tests := []struct {
			name      string
			storeID   string
			id        string
			secret    string
			status    int
			code      string
			params    []string // the params of the details, for validation_failed
			wantLive  bool
			wantFound string
		}{
			{"own session", h.store.ID, s.ID, h.secret, 200, "", nil, false, s.ID},
			{"with a read-only key", h.store.ID, s.ID, readOnly, 200, "", nil, false, s.ID},
			{"store id in upper case", strings.ToUpper(h.store.ID), s.ID, h.secret, 200, "", nil, false, s.ID},
			{"live session with a live key", h.store.ID, liveID, live, 200, "", nil, true, liveID},
			{"unknown session", h.store.ID, "cs_" + hex64, h.secret, 404, "checkout_not_found", nil, false, ""},
			{"unknown legacy session id", h.store.ID, "cs_" + hex64[:32], h.secret, 404, "checkout_not_found", nil, false, ""},
			{"live session with a test key", h.store.ID, liveID, h.secret, 404, "checkout_not_found", nil, false, ""},
			{"test session with a live key", h.store.ID, s.ID, live, 404, "checkout_not_found", nil, false, ""},
			{"another store's session on own store", h.store.ID, otherID, h.secret, 404, "checkout_not_found", nil, false, ""},
			{"another store's session on its store", other.ID, otherID, h.secret, 404, "store_not_found", nil, false, ""},
			{"own session on another store", other.ID, s.ID, h.secret, 404, "store_not_found", nil, false, ""},
			{"unknown store", checkout.NewStoreID(), s.ID, h.secret, 404, "store_not_found", nil, false, ""},
			{"unknown store and unknown session", checkout.NewStoreID(), "cs_" + hex64, h.secret, 404, "store_not_found", nil, false, ""},
			{"id of 63 hex", h.store.ID, "cs_" + hex64[:63], h.secret, 400, "validation_failed", []string{"checkoutId"}, false, ""},
			{"id of 65 hex", h.store.ID, "cs_" + hex64 + "0", h.secret, 400, "validation_failed", []string{"checkoutId"}, false, ""},
			{"id of 48 hex", h.store.ID, "cs_" + hex64[:48], h.secret, 400, "validation_failed", []string{"checkoutId"}, false, ""},
			{"id of 31 hex", h.store.ID, "cs_" + hex64[:31], h.secret, 400, "validation_failed", []string{"checkoutId"}, false, ""},
			{"id in upper case", h.store.ID, "cs_" + strings.ToUpper(hex64), h.secret, 400, "validation_failed", []string{"checkoutId"}, false, ""},
			{"id with another prefix", h.store.ID, "pay_" + hex64, h.secret, 400, "validation_failed", []string{"checkoutId"}, false, ""},
			{"id without a prefix", h.store.ID, hex64, h.secret, 400, "validation_failed", []string{"checkoutId"}, false, ""},
			{"id not hex", h.store.ID, "cs_" + rep("g", 64), h.secret, 400, "validation_failed", []string{"checkoutId"}, false, ""},
			{"store not a uuid", "acme", s.ID, h.secret, 400, "validation_failed", []string{"storeId"}, false, ""},
			{"store a uuid without dashes", strings.ReplaceAll(h.store.ID, "-", ""), s.ID, h.secret, 400, "validation_failed", []string{"storeId"}, false, ""},
			{"store and id malformed", "acme", "cs_1", h.secret, 400, "validation_failed", []string{"storeId", "checkoutId"}, false, ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := h.with(t).do(request{method: "GET", path: "/v1/stores/" + tt.storeID + "/checkouts/" + tt.id, secret: tt.secret})
				if tt.status == http.StatusOK {
					if r.Status != http.StatusOK {
						t.Fatalf("Retrieve(%s, %s) = %d %s; want 200", tt.storeID, tt.id, r.Status, r.Body)
					}
					if got := sessionOf(t, r); got.ID != tt.wantFound || got.Livemode != tt.wantLive {
						t.Errorf("Retrieve(%s, %s) = %s livemode %v; want %s livemode %v", tt.storeID, tt.id, got.ID, got.Livemode, tt.wantFound, tt.wantLive)
					}
					return
				}
				e := r.envelope(t)
				if r.Status != tt.status || e.Error == nil || e.Error.Code != tt.code {
					t.Fatalf("Retrieve(%s, %s) = %d %s; want %d %s", tt.storeID, tt.id, r.Status, r.Body, tt.status, tt.code)
				}
				var params []string
				for _, d := range e.Error.Details {
					params = append(params, d.Param)
				}
				if !slices.Equal(params, tt.params) {
					t.Errorf("Retrieve(%s, %s) details name %q; want %q", tt.storeID, tt.id, params, tt.params)
				}
				if len(tt.params) > 0 && e.Error.Param != tt.params[0] {
					t.Errorf("Retrieve(%s, %s) param = %q; want %q", tt.storeID, tt.id, e.Error.Param, tt.params[0])
				}
			})
		}

		// No leak: another store's answer reads as an unknown store's, and
		// another store's or mode's session as an unknown session's.
		unknownStore := checkout.NewStoreID()
		msg := func(storeID, id, secret string) string {
			e := h.do(request{method: "GET", path: "/v1/stores/" + storeID + "/checkouts/" + id, secret: secret}).envelope(t)
			return strings.NewReplacer(storeID, "STORE", id, "ID").Replace(e.Error.Code + ": " + e.Error.Message)
		}
		if a, b := msg(other.ID, otherID, h.secret), msg(unknownStore, otherID, h.secret); a != b {
			t.Errorf("another store answers %q, an unknown store %q; want the same", a, b)
		}
		unknownID := "cs_" + hex64
		for _, id := range []string{otherID, liveID} {
			if a, b := msg(h.store.ID, id, h.secret), msg(h.store.ID, unknownID, h.secret); a != b {
				t.Errorf("a session of another store or mode answers %q, an unknown session %q; want the same", a, b)
			}
		}
	})
}

// A session turns expired at expires_at, on the first read after it (no
// background job runs here), once: one checkout.expired event however many
// reads.
func TestRetrieveExpires(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		s := h.mustCreate(`{"items":[{"name":"Sword","amount":1500}]}`)
		expiresAt := time.Unix(s.ExpiresAt, 0)
		expired := func() int { return len(h.events(h.store.ID, checkout.ModeTest, checkout.EventCheckoutExpired)) }

		steps := []struct {
			at          time.Time
			status      checkout.Status
			wantExpired int // checkout.expired events after the read
		}{
			{t0, checkout.StatusOpen, 0},
			{expiresAt.Add(-time.Second), checkout.StatusOpen, 0},
			{expiresAt, checkout.StatusExpired, 1},
			{expiresAt.Add(time.Second), checkout.StatusExpired, 1},
			{expiresAt.Add(48 * time.Hour), checkout.StatusExpired, 1},
		}
		for _, st := range steps {
			h.clock.Set(st.at)
			if st.at.Equal(expiresAt) && expired() != 0 {
				t.Errorf("at expires_at before any read: %d checkout.expired events; want 0 (expiry on read)", expired())
			}
			got := sessionOf(t, h.get(s.ID))
			if got.Status != st.status {
				t.Errorf("Retrieve at expires_at%+v = %s; want %s", st.at.Sub(expiresAt), got.Status, st.status)
			}
			if n := expired(); n != st.wantExpired {
				t.Errorf("after Retrieve at expires_at%+v: %d checkout.expired events; want %d", st.at.Sub(expiresAt), n, st.wantExpired)
			}
			// Nothing else changes.
			want := s
			want.Status = st.status
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Retrieve at expires_at%+v = %+v\nwant %+v", st.at.Sub(expiresAt), got, want)
			}
		}
		var ev checkout.SessionJSON
		if err := json.Unmarshal(h.events(h.store.ID, checkout.ModeTest, checkout.EventCheckoutExpired)[0].Object, &ev); err != nil {
			t.Fatal(err)
		}
		if ev.ID != s.ID || ev.Status != checkout.StatusExpired {
			t.Errorf("checkout.expired carries %s %s; want %s expired", ev.ID, ev.Status, s.ID)
		}
	})
}

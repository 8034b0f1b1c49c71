package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// createWithKey sends a create to storeID with secret and an
// Idempotency-Key.
func (h *harness) createWithKey(storeID, secret, key, body string) *response {
	h.t.Helper()
	return h.do(request{method: "POST", path: "/v1/stores/" + storeID + "/checkouts", secret: secret, body: body,
		headers: map[string]string{"Idempotency-Key": key}})
}

// outcome describes a create's answer for a failure message and a
// comparison: "fresh <id>", "replay <id>" or "<status> <code>".
func outcome(t *testing.T, r *response) string {
	t.Helper()
	switch {
	case r.Status == http.StatusCreated && r.Header.Get("Idempotent-Replayed") == "true":
		return "replay " + sessionOf(t, r).ID
	case r.Status == http.StatusCreated && r.Header.Get("Idempotent-Replayed") == "":
		return "fresh " + sessionOf(t, r).ID
	case r.Status == http.StatusCreated:
		t.Fatalf("Idempotent-Replayed = %q; want true or none", r.Header.Get("Idempotent-Replayed"))
	}
	e := r.envelope(t)
	if e.Error == nil {
		t.Fatalf("%d without an error: %s", r.Status, r.Body)
	}
	return http.StatusText(r.Status) + " " + e.Error.Code
}

// The same Idempotency-Key with the same request answers the first
// response again, marked as a replay, and creates nothing; with another
// request it answers 409. Keys belong to a store and a mode, not to an API
// key; "the same request" is the same fields, however the JSON is written.
func TestIdempotency(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		_, otherWriteKey := h.newKey(h.store.ID, checkout.ModeTest, checkout.PermCheckoutsWrite)
		_, live := h.newKey(h.store.ID, checkout.ModeLive, checkout.PermCheckoutsWrite)
		other := h.newStore("Other Shop", "USD")
		_, otherStore := h.newKey(other.ID, checkout.ModeTest, checkout.PermCheckoutsWrite)
		a := swordBody
		aRewritten := "{ \"items\" : [ { \"amount\" : 1500 ,\n\"name\" : \"Sword\", \"quantity\": 1 } ], \"metadata\": null }"
		b := `{"items":[{"name":"Sword","amount":1500,"quantity":2}]}`

		first := h.createWithKey(h.store.ID, h.secret, "order-1", a)
		firstOutcome := outcome(t, first)
		id := strings.TrimPrefix(firstOutcome, "fresh ")
		if id == firstOutcome {
			t.Fatalf("first create = %s; want a fresh session", firstOutcome)
		}
		steps := []struct {
			name          string
			storeID       string
			secret        string
			key, body     string
			want          string // "replay", "fresh", or status text and code
			sameAsFirstID bool
		}{
			{"same key, same body", h.store.ID, h.secret, "order-1", a, "replay", true},
			{"same key, same body again", h.store.ID, h.secret, "order-1", a, "replay", true},
			{"same key, same fields written otherwise", h.store.ID, h.secret, "order-1", aRewritten, "replay", true},
			{"same key, same body, another key of the store and mode", h.store.ID, otherWriteKey, "order-1", a, "replay", true},
			{"same key, another body", h.store.ID, h.secret, "order-1", b, "Conflict idempotency_conflict", false},
			{"key in another case", h.store.ID, h.secret, "ORDER-1", a, "fresh", false},
			{"another key", h.store.ID, h.secret, "order-2", a, "fresh", false},
			{"same key in live mode", h.store.ID, live, "order-1", b, "fresh", false},
			{"same key in another store", other.ID, otherStore, "order-1", b, "fresh", false},
			{"no key", h.store.ID, h.secret, "", a, "fresh", false},
			{"a request that fails validation", h.store.ID, h.secret, "order-3", `{"items":[]}`, "Bad Request validation_failed", false},
			{"the corrected request, same key", h.store.ID, h.secret, "order-3", b, "fresh", false},
			{"a request that fails validation, used key", h.store.ID, h.secret, "order-3", `{"items":[]}`, "Bad Request validation_failed", false},
		}
		fresh := 1
		for _, st := range steps {
			r := h.createWithKey(st.storeID, st.secret, st.key, st.body)
			got := outcome(t, r)
			kind, gotID, _ := strings.Cut(got, " ")
			switch {
			case st.want == "replay" || st.want == "fresh":
				if kind != st.want || (gotID == id) != st.sameAsFirstID {
					t.Errorf("%s: Create(%q, %s) = %s; want %s (first: %s)", st.name, st.key, short(st.body), got, st.want, firstOutcome)
				}
				if kind == "replay" && string(r.envelope(t).Data) != string(first.envelope(t).Data) {
					t.Errorf("%s: replayed %s; want the first response's data %s", st.name, r.envelope(t).Data, first.envelope(t).Data)
				}
				if kind == "fresh" {
					fresh++
				}
			case got != st.want:
				t.Errorf("%s: Create(%q, %s) = %s; want %s", st.name, st.key, short(st.body), got, st.want)
			case strings.HasPrefix(got, "Conflict"):
				if e := r.envelope(t); e.Error.Param != "Idempotency-Key" {
					t.Errorf("%s: param = %q; want Idempotency-Key", st.name, e.Error.Param)
				}
			}
		}
		// Exactly one checkout.created per fresh session.
		created := len(h.events(h.store.ID, checkout.ModeTest, checkout.EventCheckoutCreated)) +
			len(h.events(h.store.ID, checkout.ModeLive, checkout.EventCheckoutCreated)) +
			len(h.events(other.ID, checkout.ModeTest, checkout.EventCheckoutCreated))
		if created != fresh {
			t.Errorf("%d checkout.created events; want one per fresh session, %d", created, fresh)
		}
	})
}

// A key is remembered for 24 hours: until then it replays or conflicts, and
// from then on it is free for a new request.
func TestIdempotencyWindow(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		a := swordBody
		b := `{"items":[{"name":"Sword","amount":1500,"quantity":2}]}`
		first := outcome(t, h.createWithKey(h.store.ID, h.secret, "k", a))
		firstID, ok := strings.CutPrefix(first, "fresh ")
		if !ok {
			t.Fatalf("first create = %s; want fresh", first)
		}
		steps := []struct {
			advance time.Duration
			body    string
			want    string // "replay <id of the first>", "fresh", or "Conflict idempotency_conflict"
		}{
			{24*time.Hour - time.Second, a, "replay " + firstID},
			{0, b, "Conflict idempotency_conflict"},
			{time.Second, b, "fresh"}, // 24 h after the first: free
			{0, b, "replay"},          // and bound to the new request
			{0, a, "Conflict idempotency_conflict"},
			{24 * time.Hour, a, "fresh"},
		}
		var lastFresh string
		for i, st := range steps {
			h.clock.Advance(st.advance)
			got := outcome(t, h.createWithKey(h.store.ID, h.secret, "k", st.body))
			switch st.want {
			case "fresh":
				id, ok := strings.CutPrefix(got, "fresh ")
				if !ok || id == firstID {
					t.Errorf("step %d at %v: Create = %s; want a fresh session", i, h.clock.Now().Sub(t0), got)
				}
				lastFresh = id
			case "replay":
				if got != "replay "+lastFresh {
					t.Errorf("step %d at %v: Create = %s; want replay %s", i, h.clock.Now().Sub(t0), got, lastFresh)
				}
			default:
				if got != st.want {
					t.Errorf("step %d at %v: Create = %s; want %s", i, h.clock.Now().Sub(t0), got, st.want)
				}
			}
		}
	})
}

// Idempotency-Key is 1 to 255 printable ASCII characters, sent once.
func TestIdempotencyKeyHeader(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		var printable strings.Builder
		for c := byte(0x21); c <= 0x7e; c++ {
			printable.WriteByte(c)
		}
		tests := []struct {
			name   string
			values []string
			ok     bool
		}{
			{"1 character", []string{"k"}, true},
			{"a uuid", []string{checkout.NewStoreID()}, true},
			{"255 characters", []string{rep("k", 255)}, true},
			{"every printable character", []string{printable.String()}, true},
			{"256 characters", []string{rep("k", 256)}, false},
			{"empty", []string{""}, false},
			{"with a space", []string{"order 1"}, false},
			{"with a tab", []string{"order\t1"}, false},
			{"not ASCII", []string{"заказ-1"}, false},
			{"sent twice, the same", []string{"k2", "k2"}, false},
			{"sent twice, different", []string{"k3", "k4"}, false},
		}
		for _, tt := range tests {
			r := h.do(request{method: "POST", path: "/v1/stores/" + h.store.ID + "/checkouts", secret: h.secret, body: swordBody,
				header: http.Header{"Idempotency-Key": tt.values}})
			if tt.ok {
				if r.Status != http.StatusCreated {
					t.Errorf("Create with Idempotency-Key %s = %d %s; want 201", tt.name, r.Status, r.Body)
				}
				continue
			}
			e := wantError(t, r, http.StatusBadRequest, "validation_failed")
			if e.Error.Param != "Idempotency-Key" || len(e.Error.Details) != 1 || e.Error.Details[0].Param != "Idempotency-Key" {
				t.Errorf("Create with Idempotency-Key %s: param %q, details %v; want Idempotency-Key", tt.name, e.Error.Param, e.Error.Details)
			}
		}
		// Retrieve takes no Idempotency-Key and ignores one.
		s := h.mustCreate(swordBody)
		r := h.do(request{method: "GET", path: "/v1/stores/" + h.store.ID + "/checkouts/" + s.ID, secret: h.secret, headers: map[string]string{"Idempotency-Key": "a b"}})
		if r.Status != http.StatusOK || r.Header.Get("Idempotent-Replayed") != "" {
			t.Errorf("Retrieve with an Idempotency-Key = %d %v; want 200, not a replay", r.Status, r.Header)
		}
	})
}

// Many requests at once with one key make one session: with one body, every
// caller gets it and all but one as a replay; with two bodies, one body
// wins and the other's requests answer 409. So too when they race to take
// over a key whose 24 hours are over.
func TestIdempotencyConcurrent(t *testing.T) {
	const n = 20
	a := swordBody
	b := `{"items":[{"name":"Shield","amount":250}]}`
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		keys := []string{checkout.NewStoreID(), checkout.NewStoreID()}
		for round, bodies := range [][]string{{a}, {a, b}, {b}, {b, a}} {
			key := keys[round%2]
			if round == 2 {
				h.clock.Advance(24 * time.Hour) // both keys are free again
			}
			reqs := make([]request, n)
			for i := range reqs {
				reqs[i] = request{method: "POST", path: "/v1/stores/" + h.store.ID + "/checkouts", secret: h.secret,
					body: bodies[i%len(bodies)], headers: map[string]string{"Idempotency-Key": key}}
			}
			before := len(h.events(h.store.ID, checkout.ModeTest, checkout.EventCheckoutCreated))
			rs := h.doAll(reqs)
			fresh, replays, conflicts := 0, 0, 0
			var winner, winnerID string
			for i, r := range rs {
				got := outcome(t, r)
				kind, id, _ := strings.Cut(got, " ")
				switch kind {
				case "fresh":
					fresh++
					winner, winnerID = reqs[i].body, id
				case "replay":
					replays++
				default:
					if got != "Conflict idempotency_conflict" {
						t.Errorf("%d bodies: Create = %s; want 201 or 409", len(bodies), got)
					}
					conflicts++
				}
			}
			if fresh != 1 {
				t.Fatalf("%d bodies: %d fresh sessions; want 1", len(bodies), fresh)
			}
			for i, r := range rs {
				got := outcome(t, r)
				switch {
				case reqs[i].body == winner && got != "fresh "+winnerID && got != "replay "+winnerID:
					t.Errorf("%d bodies: a request with the winning body = %s; want session %s", len(bodies), got, winnerID)
				case reqs[i].body != winner && got != "Conflict idempotency_conflict":
					t.Errorf("%d bodies: a request with the losing body = %s; want 409", len(bodies), got)
				}
			}
			if after := len(h.events(h.store.ID, checkout.ModeTest, checkout.EventCheckoutCreated)); after-before != 1 {
				t.Errorf("%d bodies: %d checkout.created events; want 1", len(bodies), after-before)
			}
			if want := n / len(bodies); fresh+replays != want || conflicts != n-want {
				t.Errorf("%d bodies: %d fresh, %d replays, %d conflicts; want %d sessions answered and %d conflicts", len(bodies), fresh, replays, conflicts, want, n-want)
			}
		}
	})
}

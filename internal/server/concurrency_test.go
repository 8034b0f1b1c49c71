package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// Many creates at once, in two modes, each make exactly one session and one
// checkout.created, none lost or doubled, every one retrievable as created.
func TestConcurrentCreates(t *testing.T) {
	const n = 50
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		_, live := h.newKey(h.store.ID, checkout.ModeLive, checkout.PermCheckoutsWrite)
		secrets := []string{h.secret, live}
		reqs := make([]request, n)
		for i := range reqs {
			reqs[i] = request{method: "POST", path: "/v1/stores/" + h.store.ID + "/checkouts", secret: secrets[i%2],
				body: fmt.Sprintf(`{"items":[{"name":"Sword","amount":%d}],"metadata":{"i":"%d"}}`, 1000+i, i)}
		}
		created := map[string]checkout.SessionJSON{}
		for i, r := range h.doAll(reqs) {
			if r.Status != http.StatusCreated {
				t.Fatalf("Create #%d = %d %s; want 201", i, r.Status, r.Body)
			}
			s := sessionOf(t, r)
			if s.Metadata["i"] != fmt.Sprint(i) || s.Amount != int64(1000+i) || s.Livemode != (i%2 == 1) {
				t.Errorf("Create #%d = %+v; not the session it asked for", i, s)
			}
			if _, dup := created[s.ID]; dup {
				t.Errorf("Create #%d answered id %s twice", i, s.ID)
			}
			created[s.ID] = s
		}

		// Every one retrievable at once, in its mode.
		var gets []request
		var want []checkout.SessionJSON
		for id, s := range created {
			secret := h.secret
			if s.Livemode {
				secret = live
			}
			gets = append(gets, request{method: "GET", path: "/v1/stores/" + h.store.ID + "/checkouts/" + id, secret: secret})
			want = append(want, s)
		}
		for i, r := range h.doAll(gets) {
			if r.Status != http.StatusOK {
				t.Errorf("Retrieve(%s) = %d %s; want 200", want[i].ID, r.Status, r.Body)
				continue
			}
			if got := sessionOf(t, r); !reflect.DeepEqual(got, want[i]) {
				t.Errorf("Retrieve(%s) = %+v; want %+v", want[i].ID, got, want[i])
			}
		}

		// Exactly n rows: the open sessions due at the end of time are all
		// of them.
		due, err := db.SessionListDue(context.Background(), t0.Add(100*365*24*time.Hour), 10*n)
		if err != nil {
			t.Fatal(err)
		}
		rows := map[string]int{}
		for _, s := range due {
			rows[s.ID]++
		}
		events := map[string]int{}
		for _, mode := range []checkout.Mode{checkout.ModeTest, checkout.ModeLive} {
			es := h.events(h.store.ID, mode, checkout.EventCheckoutCreated)
			if len(es) != n/2 {
				t.Errorf("%d %s checkout.created events; want %d", len(es), mode, n/2)
			}
			for _, e := range es {
				events[eventSessionID(t, e)]++
			}
		}
		if len(due) != n || len(events) != n {
			t.Errorf("%d session rows and %d checkout.created events for %d creates; want %d of each", len(due), len(events), n, n)
		}
		for id := range created {
			if rows[id] != 1 || events[id] != 1 {
				t.Errorf("session %s: %d rows, %d checkout.created events; want 1 of each", id, rows[id], events[id])
			}
		}
	})
}

// eventSessionID returns the id of the session an event carries.
func eventSessionID(t *testing.T, e *checkout.Event) string {
	t.Helper()
	var s struct{ ID string }
	if err := json.Unmarshal(e.Object, &s); err != nil {
		t.Fatal(err)
	}
	return s.ID
}

// Many reads at once of a session that is due all see it expired, and it
// expires once: one checkout.expired event.
func TestConcurrentExpiringReads(t *testing.T) {
	const n = 20
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		s := h.mustCreate(swordBody)
		h.clock.Set(time.Unix(s.ExpiresAt, 0))
		reqs := make([]request, n)
		for i := range reqs {
			reqs[i] = request{method: "GET", path: "/v1/stores/" + h.store.ID + "/checkouts/" + s.ID, secret: h.secret}
		}
		for i, r := range h.doAll(reqs) {
			if r.Status != http.StatusOK {
				t.Fatalf("Retrieve #%d = %d %s; want 200", i, r.Status, r.Body)
			}
			if got := sessionOf(t, r).Status; got != checkout.StatusExpired {
				t.Errorf("Retrieve #%d = %s; want expired", i, got)
			}
		}
		if es := h.events(h.store.ID, checkout.ModeTest, checkout.EventCheckoutExpired); len(es) != 1 {
			t.Errorf("%d checkout.expired events after %d reads at once; want 1", len(es), n)
		}
	})
}

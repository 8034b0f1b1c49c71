package server_test

import (
	"net/http"
	"testing"

	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

func TestCreateAndRetrieve(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		s := h.mustCreate(`{"items":[{"name":"Sword","amount":1500,"quantity":2}],"currency":"eur"}`)
		if s.Currency != "EUR" || s.Amount != 3000 || s.TotalAmount != 3000 || s.Status != "open" {
			t.Errorf("created %+v", s)
		}
		r := h.get(s.ID)
		if r.Status != http.StatusOK {
			t.Fatalf("get = %d %s", r.Status, r.Body)
		}
		r = h.do(request{method: "GET", path: "/nope"})
		wantError(t, r, 404, "not_found")
		r = h.do(request{method: "DELETE", path: "/v1/stores/" + h.store.ID + "/checkouts", secret: h.secret})
		wantError(t, r, 405, "method_not_allowed")
		r = h.post(`{"items":[]}`)
		wantError(t, r, 400, "validation_failed")
	})
}

package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/api"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// A merchant's back office finds a payment's dispute on the payment,
// retrieves it, and answers it with evidence with a disputes:write key;
// evidence is sent once. Every answer is checked against the OpenAPI
// document.
func TestDisputeAPI(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		_, answerer := h.newKey(h.store.ID, checkout.ModeTest, checkout.PermDisputesWrite)
		_, reader := h.newKey(h.store.ID, checkout.ModeTest, checkout.PermCheckoutsRead)
		_, refunder := h.newKey(h.store.ID, checkout.ModeTest, checkout.PermRefundsWrite)
		_, live := h.newKey(h.store.ID, checkout.ModeLive, checkout.PermDisputesWrite)
		id := h.paid("4000000000000259")
		base := "/v1/stores/" + h.store.ID

		var p struct{ Data api.PaymentJSON }
		json.Unmarshal(h.do(request{method: "GET", path: base + "/payments/" + id, secret: reader}).Body, &p)
		if p.Data.Dispute != nil {
			t.Fatalf("a payment not yet disputed shows a dispute: %+v", p.Data.Dispute)
		}
		h.clock.Advance(checkout.DisputeDelay)
		if _, err := h.svc.ProcessAllDuePayments(context.Background()); err != nil {
			t.Fatal(err)
		}
		r := h.do(request{method: "GET", path: base + "/payments/" + id, secret: answerer})
		json.Unmarshal(r.Body, &p)
		if r.Status != 200 || p.Data.Status != checkout.PaymentDisputed || p.Data.Dispute == nil || p.Data.Dispute.Status != checkout.DisputeNeedsResponse {
			t.Fatalf("GET the disputed payment = %d %s", r.Status, r.Body)
		}
		dispute := base + "/disputes/" + p.Data.Dispute.ID
		if r := h.do(request{method: "GET", path: dispute, secret: refunder}); r.Status != 200 {
			t.Errorf("GET the dispute with refunds:write = %d %s", r.Status, r.Body)
		}

		evidence := dispute + "/evidence"
		for _, tt := range []struct {
			name   string
			req    request
			status int
			code   string
		}{
			{"checkouts:read answers", request{method: "POST", path: evidence, secret: reader, body: `{"uncategorized_text":"x"}`}, 403, checkout.EPermissionDenied},
			{"refunds:write answers", request{method: "POST", path: evidence, secret: refunder, body: `{"uncategorized_text":"x"}`}, 403, checkout.EPermissionDenied},
			{"another mode's key", request{method: "POST", path: evidence, secret: live, body: `{"uncategorized_text":"x"}`}, 404, checkout.EDisputeNotFound},
			{"an unknown dispute", request{method: "GET", path: base + "/disputes/dp_" + strings.Repeat("0", 32), secret: reader}, 404, checkout.EDisputeNotFound},
			{"a malformed id", request{method: "GET", path: base + "/disputes/" + id, secret: reader}, 400, checkout.EValidationFailed},
			{"nothing", request{method: "POST", path: evidence, secret: answerer, body: `{}`}, 400, checkout.EValidationFailed},
			{"only a note", request{method: "POST", path: evidence, secret: answerer, body: `{"note":"ours"}`}, 400, checkout.EValidationFailed},
			{"an unknown field", request{method: "POST", path: evidence, secret: answerer, body: `{"uncategorized_text":"x","verdict":"won"}`}, 400, checkout.EValidationFailed},
			{"a number", request{method: "POST", path: evidence, secret: answerer, body: `{"uncategorized_text":7}`}, 400, checkout.EValidationFailed},
			{"too long", request{method: "POST", path: evidence, secret: answerer, body: `{"refund_policy":"` + strings.Repeat("x", checkout.MaxEvidenceLen+1) + `"}`}, 400, checkout.EValidationFailed},
			{"no body", request{method: "POST", path: evidence, secret: answerer}, 415, checkout.EUnsupportedMediaType},
		} {
			r := h.do(tt.req)
			e := r.envelope(t)
			if r.Status != tt.status || e.Error == nil || e.Error.Code != tt.code {
				t.Errorf("%s: %d %s; want %d %s", tt.name, r.Status, r.Body, tt.status, tt.code)
			}
		}
		r = h.do(request{method: "POST", path: evidence, secret: answerer, body: `{"product_description":"A sword.","uncategorized_text":"winning_evidence","note":"ours","refund_policy":null}`})
		var got struct{ Data checkout.DisputeJSON }
		json.Unmarshal(r.Body, &got)
		if r.Status != 200 || got.Data.Status != checkout.DisputeUnderReview || got.Data.Evidence == nil || got.Data.Evidence.Note != "ours" ||
			got.Data.SubmittedBy == nil || got.Data.SubmittedBy.Type != checkout.ActorAPIKey {
			t.Errorf("POST evidence = %d %s", r.Status, r.Body)
		}
		wantError(t, h.do(request{method: "POST", path: evidence, secret: answerer, body: `{"uncategorized_text":"again"}`}), http.StatusConflict, checkout.EDisputeClosed)
	})
}

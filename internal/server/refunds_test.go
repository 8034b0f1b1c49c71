package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/api"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// paid creates a session with the harness key and pays it with the test
// card number, as a buyer would on the page, and returns the payment's id.
func (h *harness) paid(number string) string {
	h.t.Helper()
	s := h.mustCreate(swordBody)
	out, err := h.svc.PayByCard(context.Background(), s.ID, pay.CardForm{Number: number, Expiry: "12/30", CVC: "123", Name: "Jo Buyer"})
	if err != nil || out.Payment.Status != checkout.PaymentSucceeded {
		h.t.Fatalf("PayByCard = %+v, %v", out, err)
	}
	return out.Payment.ID
}

func refundOf(t *testing.T, r *response) checkout.RefundJSON {
	t.Helper()
	var e struct{ Data checkout.RefundJSON }
	if err := json.Unmarshal(r.Body, &e); err != nil {
		t.Fatal(err)
	}
	return e.Data
}

// A merchant's back office refunds part of a payment, then the rest, with
// a refunds:write key; retrieves the payment with its refunds and each
// refund; and cannot refund more. Every answer is checked against the
// OpenAPI document.
func TestRefundAPI(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		_, refunder := h.newKey(h.store.ID, checkout.ModeTest, checkout.PermRefundsWrite)
		id := h.paid("4242424242424242")
		refunds := "/v1/stores/" + h.store.ID + "/payments/" + id + "/refunds"

		r := h.do(request{method: "POST", path: refunds, secret: refunder, body: `{"amount":500,"reason":"requested_by_customer"}`})
		if r.Status != http.StatusCreated {
			t.Fatalf("POST refunds = %d %s", r.Status, r.Body)
		}
		first := refundOf(t, r)
		if first.Status != checkout.RefundSucceeded || first.Amount != 500 || first.PaymentID != id || first.RequestedBy.Type != checkout.ActorAPIKey ||
			first.RequestedBy.ID == nil || first.Currency != "USD" || first.Livemode {
			t.Errorf("the refund = %+v", first)
		}
		// No body at all: the rest.
		h.clock.Advance(time.Second)
		r = h.do(request{method: "POST", path: refunds, secret: refunder})
		if r.Status != http.StatusCreated || refundOf(t, r).Amount != 1000 {
			t.Errorf("POST refunds without a body = %d %s; want 201, the 1000 left", r.Status, r.Body)
		}
		wantError(t, h.do(request{method: "POST", path: refunds, secret: refunder, body: `{}`}), http.StatusConflict, checkout.EPaymentNotRefundable)

		for _, secret := range []string{refunder, h.secret} { // refunds:write, checkouts:write
			r = h.do(request{method: "GET", path: "/v1/stores/" + h.store.ID + "/payments/" + id, secret: secret})
			var p struct{ Data api.PaymentJSON }
			json.Unmarshal(r.Body, &p)
			if r.Status != http.StatusOK || p.Data.Status != checkout.PaymentRefunded || p.Data.AmountRefunded != 1500 || len(p.Data.Refunds) != 2 ||
				p.Data.Refunds[0].ID != first.ID || p.Data.Net != -74 {
				t.Errorf("GET payment = %d %s", r.Status, r.Body)
			}
		}
		r = h.do(request{method: "GET", path: "/v1/stores/" + h.store.ID + "/refunds/" + first.ID, secret: refunder})
		if got := refundOf(t, r); r.Status != http.StatusOK || got.ID != first.ID || got.Amount != 500 {
			t.Errorf("GET refund = %d %s", r.Status, r.Body)
		}
	})
}

// Who may do what: refunding takes refunds:write, which checkouts:write
// does not include; reading takes checkouts:read or refunds:write. Another
// store's key, another mode's, and ids that name nothing answer 404 with
// the same message as for none; malformed ids and bodies answer 400, a
// body that is not JSON 415, an amount beyond what is left 409. Nothing is
// refunded by any of them.
func TestRefundAPIRefusals(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		_, refunder := h.newKey(h.store.ID, checkout.ModeTest, checkout.PermRefundsWrite)
		_, reader := h.newKey(h.store.ID, checkout.ModeTest, checkout.PermCheckoutsRead)
		_, live := h.newKey(h.store.ID, checkout.ModeLive, checkout.PermRefundsWrite)
		other := h.newStore("Other", "USD")
		_, otherKey := h.newKey(other.ID, checkout.ModeTest, checkout.PermRefundsWrite)
		id := h.paid("4242424242424242")
		base := "/v1/stores/" + h.store.ID
		refunds := base + "/payments/" + id + "/refunds"
		unknown := "pay_" + strings.Repeat("0", 32)

		for _, tt := range []struct {
			name   string
			req    request
			status int
			code   string
		}{
			{"checkouts:write refunds", request{method: "POST", path: refunds, secret: h.secret}, 403, checkout.EPermissionDenied},
			{"checkouts:read refunds", request{method: "POST", path: refunds, secret: reader}, 403, checkout.EPermissionDenied},
			{"another mode's key", request{method: "POST", path: refunds, secret: live}, 404, checkout.EPaymentNotFound},
			{"another store's key", request{method: "POST", path: refunds, secret: otherKey}, 404, checkout.EStoreNotFound},
			{"another store's key in its own store", request{method: "POST", path: "/v1/stores/" + other.ID + "/payments/" + id + "/refunds", secret: otherKey}, 404, checkout.EPaymentNotFound},
			{"an unknown payment", request{method: "POST", path: base + "/payments/" + unknown + "/refunds", secret: refunder}, 404, checkout.EPaymentNotFound},
			{"a malformed payment id", request{method: "POST", path: base + "/payments/pay_XYZ/refunds", secret: refunder}, 400, checkout.EValidationFailed},
			{"a malformed store id", request{method: "POST", path: "/v1/stores/nope/payments/" + id + "/refunds", secret: refunder}, 400, checkout.EValidationFailed},
			{"an unknown field", request{method: "POST", path: refunds, secret: refunder, body: `{"amount":5,"currency":"USD"}`}, 400, checkout.EValidationFailed},
			{"a fractional amount", request{method: "POST", path: refunds, secret: refunder, body: `{"amount":5.5}`}, 400, checkout.EValidationFailed},
			{"amount 0", request{method: "POST", path: refunds, secret: refunder, body: `{"amount":0}`}, 400, checkout.EValidationFailed},
			{"an unknown reason", request{method: "POST", path: refunds, secret: refunder, body: `{"reason":"regret"}`}, 400, checkout.EValidationFailed},
			{"not JSON", request{method: "POST", path: refunds, secret: refunder, body: `amount=5`, headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}, 415, checkout.EUnsupportedMediaType},
			{"broken JSON", request{method: "POST", path: refunds, secret: refunder, body: `{"amount":`}, 400, checkout.EInvalidJSON},
			{"more than was paid", request{method: "POST", path: refunds, secret: refunder, body: `{"amount":1501}`}, 409, checkout.ERefundTooLarge},
			{"a payment read without a payments permission", request{method: "GET", path: base + "/payments/" + id, secret: ""}, 401, checkout.EAuthenticationRequired},
			{"an unknown payment read", request{method: "GET", path: base + "/payments/" + unknown, secret: reader}, 404, checkout.EPaymentNotFound},
			{"an unknown refund", request{method: "GET", path: base + "/refunds/re_" + strings.Repeat("0", 32), secret: reader}, 404, checkout.ERefundNotFound},
			{"a malformed refund id", request{method: "GET", path: base + "/refunds/" + id, secret: reader}, 400, checkout.EValidationFailed},
			{"a refund listed by POST on its path", request{method: "DELETE", path: refunds, secret: refunder}, 405, checkout.EMethodNotAllowed},
		} {
			r := h.do(tt.req)
			e := r.envelope(t)
			if r.Status != tt.status || e.Error == nil || e.Error.Code != tt.code {
				t.Errorf("%s: %d %s; want %d %s", tt.name, r.Status, r.Body, tt.status, tt.code)
			}
		}
		p, err := db.PaymentGet(context.Background(), id)
		if err != nil || p.AmountRefunded != 0 || p.AmountRefunding != 0 {
			t.Errorf("after the refusals, the payment = %+v, %v; want nothing refunded", p, err)
		}
		// The same message for another mode's payment and an unknown one.
		a := h.do(request{method: "GET", path: base + "/payments/" + id, secret: live}).envelope(t)
		b := h.do(request{method: "GET", path: base + "/payments/" + unknown, secret: live}).envelope(t)
		if strings.ReplaceAll(a.Error.Message, id, "ID") != strings.ReplaceAll(b.Error.Message, unknown, "ID") {
			t.Errorf("another mode's payment says %q, an unknown one %q; want the same", a.Error.Message, b.Error.Message)
		}
	})
}

// An Idempotency-Key makes a refund safe to retry: the same request again
// answers with the same refund and Idempotent-Replayed, refunding nothing
// more; another request with the key is 409 idempotency_conflict; a key of
// a create cannot be reused for a refund.
func TestRefundAPIIdempotencyKey(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		_, refunder := h.newKey(h.store.ID, checkout.ModeTest, checkout.PermRefundsWrite)
		id := h.paid("4242424242424242")
		refunds := "/v1/stores/" + h.store.ID + "/payments/" + id + "/refunds"
		req := request{method: "POST", path: refunds, secret: refunder, body: `{"amount":300}`, headers: map[string]string{"Idempotency-Key": "order-7-refund"}}
		first := h.do(req)
		again := h.do(req)
		if first.Status != 201 || again.Status != 201 || refundOf(t, first).ID != refundOf(t, again).ID ||
			first.Header.Get("Idempotent-Replayed") != "" || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("a refund and its replay = %d %s %q, %d %s %q", first.Status, first.Body, first.Header.Get("Idempotent-Replayed"),
				again.Status, again.Body, again.Header.Get("Idempotent-Replayed"))
		}
		other := req
		other.body = `{"amount":301}`
		wantError(t, h.do(other), http.StatusConflict, checkout.EIdempotencyConflict)
		create := request{method: "POST", path: "/v1/stores/" + h.store.ID + "/checkouts", secret: h.secret, body: swordBody, headers: map[string]string{"Idempotency-Key": "shared-key"}}
		if r := h.do(create); r.Status != 201 {
			t.Fatalf("create = %d %s", r.Status, r.Body)
		}
		reuse := req
		reuse.headers = map[string]string{"Idempotency-Key": "shared-key"}
		wantError(t, h.do(reuse), http.StatusConflict, checkout.EIdempotencyConflict)
		if p, _ := db.PaymentGet(context.Background(), id); p.AmountRefunded != 300 {
			t.Errorf("refunded %d; want 300, once", p.AmountRefunded)
		}
	})
}

// paidByCrypto creates a session with the harness key, pays it in coin on
// the simulated network and waits out its confirmations; it returns the
// payment's id.
func (h *harness) paidByCrypto(coin string) string {
	h.t.Helper()
	ctx := context.Background()
	s := h.mustCreate(swordBody)
	if _, err := h.svc.CryptoQuote(ctx, s.ID, coin); err != nil {
		h.t.Fatal(err)
	}
	if _, err := h.svc.SimulateCryptoPayment(ctx, s.ID, coin); err != nil {
		h.t.Fatal(err)
	}
	h.clock.Advance(time.Hour)
	if _, err := h.svc.ProcessAllDuePayments(ctx); err != nil {
		h.t.Fatal(err)
	}
	got, err := h.db.SessionGet(ctx, s.ID)
	if err != nil || got.PaymentID == nil {
		h.t.Fatalf("the session paid in %s = %+v, %v", coin, got, err)
	}
	return *got.PaymentID
}

// A crypto refund through the API: created pending with a link for the
// buyer (rate chosen, or the payment's by default), shown so by GET, and
// canceled by its cancel door, again harmlessly; a rate is refused for a
// card payment, and a card refund cannot be canceled. Every answer is
// checked against the OpenAPI document.
func TestCryptoRefundAPI(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		_, refunder := h.newKey(h.store.ID, checkout.ModeTest, checkout.PermRefundsWrite)
		_, reader := h.newKey(h.store.ID, checkout.ModeTest, checkout.PermCheckoutsRead)
		id := h.paidByCrypto("LTC")
		base := "/v1/stores/" + h.store.ID

		r := h.do(request{method: "POST", path: base + "/payments/" + id + "/refunds", secret: refunder, body: `{"amount":700,"rate":"current"}`})
		if r.Status != http.StatusCreated {
			t.Fatalf("POST refunds = %d %s", r.Status, r.Body)
		}
		ref := refundOf(t, r)
		c := ref.Crypto
		if ref.Status != checkout.RefundPending || c == nil || c.Coin != "LTC" || c.Rate != checkout.RateCurrent || c.Stage != checkout.StageAwaitingAddress ||
			!strings.HasPrefix(c.LinkURL, "http") || !strings.Contains(c.LinkURL, "/refund/") || c.Address != nil || c.AmountBase != nil || c.TxHash != nil ||
			c.LinkExpiresAt != h.clock.Now().Add(checkout.RefundLinkTTL).Unix() {
			t.Errorf("the crypto refund = %s", r.Body)
		}
		r = h.do(request{method: "GET", path: base + "/refunds/" + ref.ID, secret: reader})
		if got := refundOf(t, r); r.Status != http.StatusOK || got.Crypto == nil || got.Crypto.LinkURL != c.LinkURL {
			t.Errorf("GET the refund = %d %s", r.Status, r.Body)
		}
		cancel := base + "/refunds/" + ref.ID + "/cancel"
		wantError(t, h.do(request{method: "POST", path: cancel, secret: reader}), http.StatusForbidden, checkout.EPermissionDenied)
		for i := range 2 {
			r = h.do(request{method: "POST", path: cancel, secret: refunder})
			if got := refundOf(t, r); r.Status != http.StatusOK || got.Status != checkout.RefundCanceled || got.Crypto.Stage != checkout.StageDone {
				t.Errorf("cancel #%d = %d %s; want 200, canceled", i+1, r.Status, r.Body)
			}
		}
		// The payment's default rate; the whole payment is free again.
		r = h.do(request{method: "POST", path: base + "/payments/" + id + "/refunds", secret: refunder})
		if got := refundOf(t, r); r.Status != http.StatusCreated || got.Amount != 1500 || got.Crypto.Rate != checkout.RateOfPayment {
			t.Errorf("a refund of all after the cancel = %d %s", r.Status, r.Body)
		}

		card := h.paid("4242424242424242")
		wantError(t, h.do(request{method: "POST", path: base + "/payments/" + card + "/refunds", secret: refunder, body: `{"rate":"current"}`}), http.StatusBadRequest, checkout.EValidationFailed)
		wantError(t, h.do(request{method: "POST", path: base + "/payments/" + id + "/refunds", secret: refunder, body: `{"rate":"today"}`}), http.StatusBadRequest, checkout.EValidationFailed)
		r = h.do(request{method: "POST", path: base + "/payments/" + card + "/refunds", secret: refunder})
		cardRefund := refundOf(t, r)
		wantError(t, h.do(request{method: "POST", path: base + "/refunds/" + cardRefund.ID + "/cancel", secret: refunder}), http.StatusConflict, checkout.ERefundNotCancelable)
		wantError(t, h.do(request{method: "POST", path: base + "/refunds/re_" + strings.Repeat("0", 32) + "/cancel", secret: refunder}), http.StatusNotFound, checkout.ERefundNotFound)
	})
}

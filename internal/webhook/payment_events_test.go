package webhook_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// Payment events reach endpoints as the OpenAPI document describes them:
// a decline (payment.failed), a success (payment.succeeded with
// checkout.completed) and the dispute of the test card 0259
// (payment.disputed), each carrying the payment, or the session.
func TestPaymentEventsMatchTheDocument(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		r := e.net.Receiver(t, "hooks.example.com")
		e.endpoint(r, checkout.ModeTest)
		id := e.createSession(checkout.ModeTest)
		ctx := context.Background()
		form := func(number string) pay.CardForm {
			return pay.CardForm{Number: number, Expiry: "12/30", CVC: "123", Name: "Jo Buyer"}
		}
		if _, err := e.svc.PayByCard(ctx, id, form("4000000000000002")); err != nil {
			t.Fatal(err)
		}
		out, err := e.svc.PayByCard(ctx, id, form("4000000000000259"))
		if err != nil || out.Payment.Status != checkout.PaymentSucceeded {
			t.Fatalf("PayByCard(0259) = %v, %v; want succeeded", out, err)
		}
		e.clock.Advance(checkout.DisputeDelay)
		if _, err := e.svc.ProcessAllDuePayments(ctx); err != nil {
			t.Fatal(err)
		}
		e.runOnce()

		var got []string
		for _, req := range r.Requests() {
			checkEventSchema(t, req.Body)
			checkWebhookRequest(t, req.Header, req.Body)
			var evt struct {
				Type string `json:"type"`
				Data struct {
					Object struct {
						Object     string  `json:"object"`
						Status     string  `json:"status"`
						CheckoutID string  `json:"checkout_id"`
						Fee        int64   `json:"fee"`
						Net        int64   `json:"net"`
						Failure    *string `json:"failure_code"`
						CardLast4  *string `json:"card_last4"`
					} `json:"object"`
				} `json:"data"`
			}
			if err := json.Unmarshal(req.Body, &evt); err != nil {
				t.Fatal(err)
			}
			got = append(got, evt.Type)
			o := evt.Data.Object
			switch evt.Type {
			case checkout.EventPaymentFailed:
				if o.Object != "payment" || o.Status != "failed" || o.Failure == nil || *o.Failure != checkout.FailCardDeclined || o.CheckoutID != id || o.Fee != 0 || o.Net != 0 {
					t.Errorf("payment.failed carries %s", req.Body)
				}
			case checkout.EventPaymentSucceeded:
				// 1500 at 2.9% + 30: 43.5 rounds half up to 44, plus 30.
				if o.Object != "payment" || o.Status != "succeeded" || o.Fee != 74 || o.Net != 1500-74 || o.CardLast4 == nil || *o.CardLast4 != "0259" {
					t.Errorf("payment.succeeded carries %s", req.Body)
				}
			case checkout.EventPaymentDisputed:
				if o.Object != "payment" || o.Status != "disputed" {
					t.Errorf("payment.disputed carries %s", req.Body)
				}
			case checkout.EventCheckoutCompleted:
				if o.Object != "checkout_session" || o.Status != "complete" {
					t.Errorf("checkout.completed carries %s", req.Body)
				}
			}
		}
		want := map[string]bool{checkout.EventCheckoutCreated: true, checkout.EventPaymentFailed: true, checkout.EventPaymentSucceeded: true,
			checkout.EventCheckoutCompleted: true, checkout.EventPaymentDisputed: true}
		if len(got) != len(want) {
			t.Fatalf("events delivered = %v; want one each of %v", got, want)
		}
		for _, typ := range got {
			if !want[typ] {
				t.Errorf("unexpected event %s", typ)
			}
			delete(want, typ)
		}
	})
}

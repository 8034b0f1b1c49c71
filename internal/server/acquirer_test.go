package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/pay/stripefake"
	"github.com/checkoutd/checkoutd/internal/pay/stripepay"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

const (
	stripeSecret  = "sk_live_51ServerTestKey0000000000000LIVE"
	stripePublish = "pk_live_51ServerTestKey0000000000000PUBL"
	stripeWebhook = "whsec_U2VydmVyIHRlc3RzJyBzaWduaW5nIHNlY3JldA"
)

// POST /webhooks/stripe/{storeId}, over HTTP: a signed event is looked up
// and completes the payment it names (200, received); the same event
// signed with another secret is 401 invalid_signature; a store without
// Stripe is 404; a body over 512 KiB is 413; Stripe not answering the
// lookup is 503 with Retry-After, so that Stripe sends it again.
func TestAcquirerWebhookRoute(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		var h *harness
		fake := stripefake.New(t, stripefake.Options{Now: func() time.Time { return h.clock.Now() }})
		h = newHarness(t, db, harnessOptions{acquirers: []pay.AcquirerConnector{stripepay.New(stripepay.Config{URL: fake.URL})}})
		if _, err := h.svc.SetAcquirerAccount(ctx, service.AcquirerAccountParams{MerchantID: h.store.ID, Mode: checkout.ModeLive, Acquirer: "stripe",
			SecretKey: stripeSecret, PublishableKey: stripePublish, WebhookSecret: stripeWebhook}); err != nil {
			t.Fatal(err)
		}
		_, live := h.newKey(h.store.ID, checkout.ModeLive, checkout.PermCheckoutsWrite)
		paid := func() (string, stripefake.Event) {
			t.Helper()
			var s checkout.SessionJSON
			e := h.do(request{method: "POST", path: "/v1/stores/" + h.store.ID + "/checkouts", secret: live,
				body: `{"items":[{"name":"Sword","amount":1500}]}`}).envelope(t)
			if err := json.Unmarshal(e.Data, &s); err != nil {
				t.Fatal(err)
			}
			st, err := h.svc.StartAcquirerPayment(ctx, s.ID)
			if err != nil {
				t.Fatal(err)
			}
			if err := fake.Confirm(st.Payment.Acquirer.ID, stripefake.CardVisa); err != nil {
				t.Fatal(err)
			}
			return s.ID, fake.EventsOf("payment_intent.succeeded", st.Payment.Acquirer.ID)[0]
		}
		post := func(storeID string, body []byte, header http.Header) *response {
			t.Helper()
			x, err := h.send(request{method: "POST", path: "/webhooks/stripe/" + storeID, body: string(body), header: header})
			if err != nil {
				t.Fatal(err)
			}
			return x.resp
		}
		id, ev := paid()
		if r := post(h.store.ID, ev.Body, fake.Header(ev, "whsec_QW5vdGhlciBzZWNyZXQgYWx0b2dldGhlcg")); r.Status != http.StatusUnauthorized ||
			!strings.Contains(string(r.Body), `"code":"invalid_signature"`) {
			t.Errorf("another secret's signature = %d %s; want 401 invalid_signature", r.Status, r.Body)
		}
		// The unsigned event was still a hint: the session is complete.
		if s, err := db.SessionGet(ctx, id); err != nil || s.Status != checkout.StatusComplete {
			t.Errorf("the session after the unsigned event = %+v, %v; want complete", s, err)
		}
		if r := post(h.store.ID, ev.Body, fake.Header(ev, stripeWebhook)); r.Status != http.StatusOK || string(r.Body) != `{"ok":true,"data":{"received":true}}`+"\n" {
			t.Errorf("the signed event = %d %s; want 200 received", r.Status, r.Body)
		}
		if r := post(checkout.NewStoreID(), ev.Body, fake.Header(ev, stripeWebhook)); r.Status != http.StatusNotFound {
			t.Errorf("a store without Stripe = %d %s; want 404", r.Status, r.Body)
		}
		if r := post(h.store.ID, []byte(`{"x":"`+strings.Repeat("a", 600<<10)+`"}`), nil); r.Status != http.StatusRequestEntityTooLarge {
			t.Errorf("a body of 600 KiB = %d %s; want 413", r.Status, r.Body)
		}
		_, ev = paid()
		var pi struct {
			Data struct {
				Object struct{ ID string } `json:"object"`
			} `json:"data"`
		}
		if err := json.Unmarshal(ev.Body, &pi); err != nil {
			t.Fatal(err)
		}
		fake.FailNext("/v1/payment_intents/"+pi.Data.Object.ID, http.StatusServiceUnavailable)
		if r := post(h.store.ID, ev.Body, fake.Header(ev, stripeWebhook)); r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
			t.Errorf("Stripe down = %d %s, Retry-After %q; want 503 with Retry-After", r.Status, r.Body, r.Header.Get("Retry-After"))
		}
	})
}

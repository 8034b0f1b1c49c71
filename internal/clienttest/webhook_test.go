package clienttest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/client"
	"github.com/checkoutd/checkoutd/internal/app"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
	"github.com/checkoutd/checkoutd/internal/webhook/webhooktest"
)

// hooks is a harness with one test-mode endpoint whose receiver runs
// client.WebhookHandler.
type hooks struct {
	*harness
	r  *webhooktest.Receiver
	ep *checkout.Endpoint

	mu   sync.Mutex
	got  []*client.Event
	fail bool // the handler's fn fails
}

func newHooks(t *testing.T, db *store.DB, opts ...func(*app.Config)) *hooks {
	h := &hooks{harness: newHarness(t, db, opts...)}
	h.r = h.net.Receiver(t, "hooks.example.com")
	ep, err := h.app.Service.CreateEndpoint(context.Background(), checkout.EndpointParams{
		MerchantID: h.merchant.ID, Mode: checkout.ModeTest, URL: h.r.URL, Events: []string{checkout.AllEvents}})
	if err != nil {
		t.Fatal(err)
	}
	h.ep = ep
	h.handle(ep.Secret)
	return h
}

// handle makes the receiver verify with secrets.
func (h *hooks) handle(secrets ...string) {
	h.r.SetHandler(client.WebhookHandler(secrets, func(e *client.Event) error {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.fail {
			return errors.New("the order database is down")
		}
		h.got = append(h.got, e)
		return nil
	}).ServeHTTP)
}

// deliver runs the dispatcher once and returns the last request the
// receiver got and the status the attempt recorded.
func (h *hooks) deliver() (webhooktest.Request, int) {
	h.t.Helper()
	ctx := context.Background()
	if n, err := h.app.Dispatcher.RunOnce(ctx); err != nil || n != 1 {
		h.t.Fatalf("RunOnce = %d, %v; want 1 attempt", n, err)
	}
	reqs := h.r.Requests()
	ds, err := h.db.DeliveryList(ctx, checkout.DeliveryListParams{EndpointID: h.ep.ID})
	if err != nil || len(ds) == 0 {
		h.t.Fatalf("DeliveryList = %v, %v", ds, err)
	}
	as, err := h.db.AttemptList(ctx, ds[0].ID)
	if err != nil || len(as) == 0 {
		h.t.Fatalf("AttemptList = %v, %v", as, err)
	}
	return reqs[len(reqs)-1], as[len(as)-1].StatusCode
}

func (h *hooks) setFail(fail bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.fail = fail
}

func (h *hooks) events() []*client.Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*client.Event(nil), h.got...)
}

// Real deliveries of the dispatcher to a receiver built with
// WebhookHandler: accepted, typed, and the answers the dispatcher records
// are the handler's.
func TestWebhookHandlerRealDeliveries(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHooks(t, db)
		ctx := context.Background()
		p := sword()
		p.Title = `<Sword & "Shield">` // escaped by checkoutd's encoding: still verifies
		p.Metadata = map[string]string{"order_id": "42"}
		s, err := h.client().Create(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if _, status := h.deliver(); status != http.StatusOK {
			t.Fatalf("checkout.created answered %d; want 200", status)
		}
		got := h.events()
		if len(got) != 1 || got[0].Type != client.EventCheckoutCreated || got[0].Object != "event" || got[0].Livemode || got[0].APIVersion != "v1" ||
			!strings.HasPrefix(got[0].ID, "evt_") || got[0].Created != s.CreatedAt || got[0].ObjectType() != "checkout_session" {
			t.Fatalf("events = %+v", got)
		}
		gs, err := got[0].Session()
		if err != nil || gs.ID != s.ID || gs.Title != p.Title || gs.TotalAmount != 1500 || gs.Metadata["order_id"] != "42" || gs.Status != client.StatusOpen {
			t.Errorf("Session() = %+v, %v", gs, err)
		}
		if _, err := got[0].Payment(); err == nil {
			t.Error("Payment() of a checkout event succeeded")
		}

		// Send test event: a webhook_test object.
		if _, _, err := h.app.Service.SendTestEvent(ctx, h.ep.ID); err != nil {
			t.Fatal(err)
		}
		if _, status := h.deliver(); status != http.StatusOK {
			t.Fatalf("webhook.test answered %d", status)
		}
		got = h.events()
		wt, err := got[len(got)-1].WebhookTest()
		if got[len(got)-1].Type != client.EventWebhookTest || err != nil || wt.EndpointID != h.ep.ID || wt.Message == "" {
			t.Errorf("webhook.test = %+v, %v", wt, err)
		}

		// The merchant's fn fails: 500, so that checkoutd tries again.
		h.setFail(true)
		h.client().Create(ctx, sword())
		if _, status := h.deliver(); status != http.StatusInternalServerError {
			t.Errorf("a failing fn answered %d; want 500", status)
		}
		h.setFail(false)

		// A wrong secret: 401.
		h.handle("whsec_" + strings.Repeat("x", 32))
		h.client().Create(ctx, sword())
		if req, status := h.deliver(); status != http.StatusUnauthorized {
			t.Errorf("a wrong secret answered %d; want 401 (header %s)", status, req.Header.Get(client.SignatureHeader))
		}

		// Roll with overlap: two v1= values; the old secret and the new
		// one each verify alone.
		old := h.ep.Secret
		ep, err := h.app.Service.RollEndpointSecretIn(ctx, checkout.Scope{MerchantID: h.merchant.ID, Mode: checkout.ModeTest}, h.ep.ID, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		for _, secrets := range [][]string{{old}, {ep.Secret}, {"whsec_other", ep.Secret}} {
			h.handle(secrets...)
			before := len(h.events())
			h.client().Create(ctx, sword())
			req, status := h.deliver()
			if _, v1 := webhooktest.Signatures(req.Header.Get(client.SignatureHeader)); status != http.StatusOK || len(v1) != 2 || len(h.events()) != before+1 {
				t.Errorf("roll with overlap, verified with %d secret(s): %d, v1 %q", len(secrets), status, v1)
			}
		}
	})
}

// A real delivery verifies, and what a receiver may do to its bytes is
// told apart: the body encoded again (keys sorted, indented, with the
// encoder's newline, its escaping undone) is ErrReserialized, a changed
// amount is not. The refusals of every malformed or stale header, on a
// delivery made up in checkoutd's encoding, are the client's own
// TestVerifyWebhookRefusals; these hold its idea of checkoutd's bytes to
// the bytes checkoutd sends.
func TestVerifyWebhookRealDelivery(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHooks(t, db)
		p := sword()
		p.Title = `<Sword & "Shield">` // escaped by checkoutd's encoder: \u003c, \u0026, \u003e
		if _, err := h.client().Create(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		req, _ := h.deliver()
		body, header, secret := req.Body, req.Header.Get(client.SignatureHeader), h.ep.Secret
		if e, err := client.VerifyWebhook(body, header, secret); err != nil || e.Type != client.EventCheckoutCreated {
			t.Fatalf("VerifyWebhook(the delivery) = %v, %v", e, err)
		}
		if ts, v1 := webhooktest.Signatures(header); ts == "" || len(v1) != 1 {
			t.Errorf("header %q; want t= and one v1=", header)
		}

		var m map[string]any
		json.Unmarshal(body, &m)
		sorted, _ := json.Marshal(m)
		indented, _ := json.MarshalIndent(json.RawMessage(body), "", "  ")
		var withNewline bytes.Buffer
		json.NewEncoder(&withNewline).Encode(json.RawMessage(body))
		unescaped := bytes.ReplaceAll(body, []byte(`\u0026`), []byte(`&`))
		tampered := bytes.Replace(body, []byte(`"amount":1500`), []byte(`"amount":15`), 1)
		if bytes.Equal(unescaped, body) || bytes.Equal(tampered, body) || bytes.Equal(sorted, body) {
			t.Fatalf("no \\u0026, no amount 1500 or keys already sorted in %s", body)
		}
		for _, tt := range []struct {
			name    string
			body    []byte
			want    []error
			notWant error
		}{
			{"keys sorted (a map encoded again)", sorted, []error{client.ErrNoMatchingSignature, client.ErrReserialized}, nil},
			{"indented", indented, []error{client.ErrReserialized}, nil},
			{"encoder's newline", withNewline.Bytes(), []error{client.ErrReserialized}, nil},
			{"escaping changed", unescaped, []error{client.ErrReserialized}, nil},
			{"tampered", tampered, []error{client.ErrNoMatchingSignature}, client.ErrReserialized},
		} {
			e, err := client.VerifyWebhook(tt.body, header, secret)
			for _, want := range tt.want {
				if e != nil || !errors.Is(err, want) {
					t.Errorf("%s: VerifyWebhook = %v, %v; want %v", tt.name, e, err, want)
				}
			}
			if tt.notWant != nil && errors.Is(err, tt.notWant) {
				t.Errorf("%s: VerifyWebhook = %v; want not %v", tt.name, err, tt.notWant)
			}
		}
	})
}

// A delivery signed by a checkoutd whose clock is 6 minutes behind the
// receiver's: the handler refuses it as stale (401), and the event is not
// handled.
func TestWebhookHandlerRefusesStaleDelivery(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		behind := func() time.Time { return time.Now().Add(-6 * time.Minute) }
		h := newHooks(t, db, func(c *app.Config) { c.Now = behind })
		if _, err := h.client().Create(context.Background(), sword()); err != nil {
			t.Fatal(err)
		}
		req, status := h.deliver()
		if status != http.StatusUnauthorized || len(h.events()) != 0 {
			t.Errorf("a stale delivery answered %d with %d events handled; want 401 and none", status, len(h.events()))
		}
		_, err := client.VerifyWebhook(req.Body, req.Header.Get(client.SignatureHeader), h.ep.Secret)
		if !errors.Is(err, client.ErrStaleTimestamp) {
			t.Errorf("VerifyWebhook(stale delivery) = %v; want ErrStaleTimestamp", err)
		}
	})
}

// strict decodes raw into v, refusing fields v has no place for: the typed
// structs must cover every field checkoutd sends.
func strict(t *testing.T, raw []byte, v any) {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		t.Errorf("decode %T strictly: %v in %s", v, err, raw)
	}
}

// A buyer is declined, then pays: payment.failed, payment.succeeded and
// checkout.completed arrive through WebhookHandler, typed, every field of
// checkoutd's objects in the client's structs; Get reads the session
// complete.
func TestWebhookPaymentEvents(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHooks(t, db)
		ctx := context.Background()
		c := h.client()
		s, err := c.Create(ctx, client.CreateParams{Items: []client.ItemParams{{Name: "Sword", Amount: 1500}}, Customer: &client.CustomerParams{Email: "jo@example.com"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, number := range []string{"4000000000000002", "4242424242424242"} {
			if _, err := h.app.Service.PayByCard(ctx, s.ID, pay.CardForm{Number: number, Expiry: "12/30", CVC: "123", Name: "Jo Buyer"}); err != nil {
				t.Fatal(err)
			}
		}
		for {
			n, err := h.app.Dispatcher.RunOnce(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				break
			}
		}
		byType := map[string]*client.Event{}
		for _, e := range h.events() {
			byType[e.Type] = e
		}
		for _, r := range h.r.Requests() {
			var e client.Event
			strict(t, r.Body, &e)
			switch e.ObjectType() {
			case "checkout_session":
				strict(t, e.Data.Object, &client.Session{})
			case "payment":
				strict(t, e.Data.Object, &client.Payment{})
			}
		}
		failed, err := byType[client.EventPaymentFailed].Payment()
		if err != nil || failed.Status != "failed" || deref(failed.FailureCode) != "card_declined" || deref(failed.CardLast4) != "0002" ||
			failed.CheckoutID != s.ID || failed.Method != "card" || failed.Amount != 1500 {
			t.Errorf("payment.failed = %+v, %v", failed, err)
		}
		paid, err := byType[client.EventPaymentSucceeded].Payment()
		if err != nil || paid.Status != "succeeded" || !strings.HasPrefix(paid.ID, "pay_") || paid.Fee <= 0 || paid.Net != paid.Amount-paid.Fee-paid.AmountRefunded ||
			deref(paid.CardLast4) != "4242" || paid.Currency != "USD" || paid.CreatedAt == 0 {
			t.Errorf("payment.succeeded = %+v, %v", paid, err)
		}
		done, err := byType[client.EventCheckoutCompleted].Session()
		if err != nil || done.Status != client.StatusComplete || deref(done.PaymentID) != paid.ID || done.CompletedAt == nil {
			t.Errorf("checkout.completed = %+v, %v", done, err)
		}
		g, err := c.Get(ctx, s.ID)
		if err != nil || g.Status != client.StatusComplete || deref(g.PaymentID) != paid.ID || deref(g.CompletedAt) != deref(done.CompletedAt) {
			t.Errorf("Get after payment = %+v, %v", g, err)
		}
	})
}

package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/app"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
	"github.com/checkoutd/checkoutd/internal/webhook/webhooktest"
)

// hooks is a harness with one test-mode endpoint whose receiver runs
// WebhookHandler.
type hooks struct {
	*harness
	r  *webhooktest.Receiver
	ep *checkout.Endpoint

	mu   sync.Mutex
	got  []*Event
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
	h.r.SetHandler(WebhookHandler(secrets, func(e *Event) error {
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

func (h *hooks) events() []*Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*Event(nil), h.got...)
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
		s, err := h.client(nil).Create(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if _, status := h.deliver(); status != http.StatusOK {
			t.Fatalf("checkout.created answered %d; want 200", status)
		}
		got := h.events()
		if len(got) != 1 || got[0].Type != EventCheckoutCreated || got[0].Object != "event" || got[0].Livemode || got[0].APIVersion != "v1" ||
			!strings.HasPrefix(got[0].ID, "evt_") || got[0].Created != s.CreatedAt || got[0].ObjectType() != "checkout_session" {
			t.Fatalf("events = %+v", got)
		}
		gs, err := got[0].Session()
		if err != nil || gs.ID != s.ID || gs.Title != p.Title || gs.TotalAmount != 1500 || gs.Metadata["order_id"] != "42" || gs.Status != StatusOpen {
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
		if got[len(got)-1].Type != EventWebhookTest || err != nil || wt.EndpointID != h.ep.ID || wt.Message == "" {
			t.Errorf("webhook.test = %+v, %v", wt, err)
		}

		// The merchant's fn fails: 500, so that checkoutd tries again.
		h.setFail(true)
		h.client(nil).Create(ctx, sword())
		if _, status := h.deliver(); status != http.StatusInternalServerError {
			t.Errorf("a failing fn answered %d; want 500", status)
		}
		h.setFail(false)

		// A wrong secret: 401.
		h.handle("whsec_" + strings.Repeat("x", 32))
		h.client(nil).Create(ctx, sword())
		if req, status := h.deliver(); status != http.StatusUnauthorized {
			t.Errorf("a wrong secret answered %d; want 401 (header %s)", status, req.Header.Get(SignatureHeader))
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
			h.client(nil).Create(ctx, sword())
			req, status := h.deliver()
			if _, v1 := webhooktest.Signatures(req.Header.Get(SignatureHeader)); status != http.StatusOK || len(v1) != 2 || len(h.events()) != before+1 {
				t.Errorf("roll with overlap, verified with %d secret(s): %d, v1 %q", len(secrets), status, v1)
			}
		}
	})
}

// What a receiver gets wrong is told apart, on a real delivery.
func TestVerifyWebhookRefusals(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHooks(t, db)
		if _, err := h.client(nil).Create(context.Background(), sword()); err != nil {
			t.Fatal(err)
		}
		req, _ := h.deliver()
		body, header, secret := req.Body, req.Header.Get(SignatureHeader), h.ep.Secret
		if e, err := VerifyWebhook(body, header, secret); err != nil || e.Type != EventCheckoutCreated {
			t.Fatalf("VerifyWebhook(the delivery) = %v, %v", e, err)
		}

		var m map[string]any
		json.Unmarshal(body, &m)
		sorted, _ := json.Marshal(m)
		indented, _ := json.MarshalIndent(json.RawMessage(body), "", "  ")
		var withNewline bytes.Buffer
		json.NewEncoder(&withNewline).Encode(json.RawMessage(body))
		unescaped := bytes.ReplaceAll(body, []byte(`\u0026`), []byte(`&`))
		if bytes.Equal(unescaped, body) {
			unescaped = append([]byte(" "), body...)
		}
		tampered := bytes.Replace(body, []byte(`"amount":1500`), []byte(`"amount":15`), 1)
		if bytes.Equal(tampered, body) {
			t.Fatalf("no amount to tamper with in %s", body)
		}
		ts, v1 := webhooktest.Signatures(header)
		now := time.Now()
		for _, tt := range []struct {
			name    string
			body    []byte
			header  string
			secrets []string
			now     time.Time
			want    []error
			notWant error
			says    string
		}{
			{"tampered", tampered, header, []string{secret}, now, []error{ErrNoMatchingSignature}, ErrReserialized, "wrong secret"},
			{"wrong secret", body, header, []string{"whsec_" + strings.Repeat("0", 32)}, now, []error{ErrNoMatchingSignature}, ErrReserialized, ""},
			{"secret without whsec_", body, header, []string{strings.TrimPrefix(secret, "whsec_")}, now, []error{ErrNoMatchingSignature}, nil, "prefix included"},
			{"keys sorted (a map encoded again)", sorted, header, []string{secret}, now, []error{ErrNoMatchingSignature, ErrReserialized}, nil, "it looks re-serialized"},
			{"indented", indented, header, []string{secret}, now, []error{ErrReserialized}, nil, "raw bytes"},
			{"encoder's newline", withNewline.Bytes(), header, []string{secret}, now, []error{ErrReserialized}, nil, ""},
			{"escaping changed", unescaped, header, []string{secret}, now, []error{ErrReserialized}, nil, ""},
			{"empty body", nil, header, []string{secret}, now, []error{ErrNoMatchingSignature}, ErrReserialized, "empty"},
			{"stale", body, header, []string{secret}, now.Add(6 * time.Minute), []error{ErrStaleTimestamp}, ErrNoMatchingSignature, ""},
			{"from the future", body, header, []string{secret}, now.Add(-6 * time.Minute), []error{ErrStaleTimestamp}, nil, ""},
			{"no header", body, "", []string{secret}, now, []error{ErrMalformedHeader}, nil, "missing"},
			{"no t", body, "v1=" + v1[0], []string{secret}, now, []error{ErrMalformedHeader}, nil, ""},
			{"t not a number", body, "t=soon,v1=" + v1[0], []string{secret}, now, []error{ErrMalformedHeader}, nil, ""},
			{"two t", body, "t=" + ts + ",t=" + ts + ",v1=" + v1[0], []string{secret}, now, []error{ErrMalformedHeader}, nil, ""},
			{"no v1", body, "t=" + ts + ",v0=" + v1[0], []string{secret}, now, []error{ErrMalformedHeader}, nil, ""},
			{"v1 not hex", body, "t=" + ts + ",v1=xyz", []string{secret}, now, []error{ErrMalformedHeader}, nil, ""},
			{"t changed", body, "t=" + ts + "1,v1=" + v1[0], []string{secret}, now, []error{ErrNoMatchingSignature}, nil, ""},
		} {
			v := &Verifier{Secrets: tt.secrets, Now: func() time.Time { return tt.now }}
			e, err := v.Verify(tt.body, tt.header)
			for _, want := range tt.want {
				if e != nil || !errors.Is(err, want) {
					t.Errorf("%s: Verify = %v, %v; want %v", tt.name, e, err, want)
				}
			}
			if tt.notWant != nil && errors.Is(err, tt.notWant) {
				t.Errorf("%s: Verify = %v; want not %v", tt.name, err, tt.notWant)
			}
			if err != nil && !strings.Contains(err.Error(), tt.says) {
				t.Errorf("%s: Verify = %q; want it to say %q", tt.name, err, tt.says)
			}
		}
		// Within the tolerance either way, and with a tolerance of one's own.
		for _, d := range []time.Duration{4 * time.Minute, -4 * time.Minute} {
			if _, err := (&Verifier{Secrets: []string{secret}, Now: func() time.Time { return now.Add(d) }}).Verify(body, header); err != nil {
				t.Errorf("%v from the signature: %v", d, err)
			}
		}
		if _, err := (&Verifier{Secrets: []string{secret}, Tolerance: time.Minute, Now: func() time.Time { return now.Add(2 * time.Minute) }}).Verify(body, header); !errors.Is(err, ErrStaleTimestamp) {
			t.Errorf("Tolerance 1m, 2m late: %v", err)
		}
	})
}

// The handler's answers to what is not a good delivery.
func TestWebhookHandlerAnswers(t *testing.T) {
	const secret = "whsec_test"
	body := []byte(`{"id":"evt_1","object":"event","type":"webhook.test","livemode":false,"created":1,"api_version":"v1","data":{"object":{"object":"webhook_test"}}}`)
	good := WebhookSignature(secret, time.Now(), body)
	called := 0
	hd := WebhookHandler([]string{secret}, func(*Event) error { called++; return nil })
	for _, tt := range []struct {
		name, method, header string
		body                 []byte
		want                 int
	}{
		{"good", "POST", good, body, 200},
		{"GET", "GET", good, nil, 405},
		{"too large", "POST", good, bytes.Repeat([]byte("x"), MaxWebhookBody+1), 413},
		{"malformed header", "POST", "nope", body, 400},
		{"stale", "POST", WebhookSignature(secret, time.Now().Add(-time.Hour), body), body, 401},
		{"bad signature", "POST", WebhookSignature("whsec_other", time.Now(), body), body, 401},
	} {
		req := httptest.NewRequest(tt.method, "/hook", bytes.NewReader(tt.body))
		req.Header.Set(SignatureHeader, tt.header)
		w := httptest.NewRecorder()
		hd.ServeHTTP(w, req)
		if w.Code != tt.want {
			t.Errorf("%s: %d %s; want %d", tt.name, w.Code, w.Body, tt.want)
		}
	}
	if called != 1 {
		t.Errorf("fn called %d times; want 1", called)
	}
}

// WebhookSignature is the worked example of docs/webhooks.md.
func TestWebhookSignatureDocsExample(t *testing.T) {
	body := []byte(`{"id":"evt_1"}`)
	const want = "t=1700000000,v1=c89214b5b5da833daed6f0b8c5bb6bd58cea9022bd80ccc78230f3942d632925"
	if got := WebhookSignature("whsec_test", time.Unix(1700000000, 0), body); got != want {
		t.Errorf("WebhookSignature = %s; want %s", got, want)
	}
	v := &Verifier{Secrets: []string{"whsec_test"}, Now: func() time.Time { return time.Unix(1700000100, 0) }}
	if _, err := v.Verify(body, want); err != nil {
		t.Errorf("Verify(the docs' example) = %v", err)
	}
}

// A delivery signed by a checkoutd whose clock is 6 minutes behind the
// receiver's: the handler refuses it as stale (401), and the event is not
// handled.
func TestWebhookHandlerRefusesStaleDelivery(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		behind := func() time.Time { return time.Now().Add(-6 * time.Minute) }
		h := newHooks(t, db, func(c *app.Config) { c.Now = behind })
		if _, err := h.client(nil).Create(context.Background(), sword()); err != nil {
			t.Fatal(err)
		}
		req, status := h.deliver()
		if status != http.StatusUnauthorized || len(h.events()) != 0 {
			t.Errorf("a stale delivery answered %d with %d events handled; want 401 and none", status, len(h.events()))
		}
		_, err := VerifyWebhook(req.Body, req.Header.Get(SignatureHeader), h.ep.Secret)
		if !errors.Is(err, ErrStaleTimestamp) {
			t.Errorf("VerifyWebhook(stale delivery) = %v; want ErrStaleTimestamp", err)
		}
	})
}

// An empty secret would let anyone sign: it is refused, whatever the
// header, and the handler answers 500 (the receiver's configuration is
// wrong, and checkoutd should try again once it is fixed).
func TestVerifyWebhookRefusesEmptySecret(t *testing.T) {
	body := []byte(`{"id":"evt_1","object":"event","type":"webhook.test"}`)
	forged := WebhookSignature("", time.Now(), body)
	for _, secrets := range [][]string{nil, {""}, {"whsec_test", ""}} {
		if _, err := VerifyWebhook(body, forged, secrets...); !errors.Is(err, ErrNoSecret) {
			t.Errorf("VerifyWebhook with secrets %q = %v; want ErrNoSecret", secrets, err)
		}
	}
	req := httptest.NewRequest("POST", "/hook", bytes.NewReader(body))
	req.Header.Set(SignatureHeader, forged)
	w := httptest.NewRecorder()
	WebhookHandler([]string{""}, func(*Event) error { t.Error("fn called"); return nil }).ServeHTTP(w, req)
	if w.Code != http.StatusInternalServerError {
		t.Errorf("handler with an empty secret = %d; want 500", w.Code)
	}
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
		c := h.client(nil)
		s, err := c.Create(ctx, CreateParams{Items: []ItemParams{{Name: "Sword", Amount: 1500}}, Customer: &CustomerParams{Email: "jo@example.com"}})
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
		byType := map[string]*Event{}
		for _, e := range h.events() {
			byType[e.Type] = e
		}
		for _, r := range h.r.Requests() {
			var e Event
			strict(t, r.Body, &e)
			switch e.ObjectType() {
			case "checkout_session":
				strict(t, e.Data.Object, &Session{})
			case "payment":
				strict(t, e.Data.Object, &Payment{})
			}
		}
		failed, err := byType[EventPaymentFailed].Payment()
		if err != nil || failed.Status != "failed" || deref(failed.FailureCode) != "card_declined" || deref(failed.CardLast4) != "0002" ||
			failed.CheckoutID != s.ID || failed.Method != "card" || failed.Amount != 1500 {
			t.Errorf("payment.failed = %+v, %v", failed, err)
		}
		paid, err := byType[EventPaymentSucceeded].Payment()
		if err != nil || paid.Status != "succeeded" || !strings.HasPrefix(paid.ID, "pay_") || paid.Fee <= 0 || paid.Net != paid.Amount-paid.Fee-paid.AmountRefunded ||
			deref(paid.CardLast4) != "4242" || paid.Currency != "USD" || paid.CreatedAt == 0 {
			t.Errorf("payment.succeeded = %+v, %v", paid, err)
		}
		done, err := byType[EventCheckoutCompleted].Session()
		if err != nil || done.Status != StatusComplete || deref(done.PaymentID) != paid.ID || done.CompletedAt == nil {
			t.Errorf("checkout.completed = %+v, %v", done, err)
		}
		g, err := c.Get(ctx, s.ID)
		if err != nil || g.Status != StatusComplete || deref(g.PaymentID) != paid.ID || deref(g.CompletedAt) != deref(done.CompletedAt) {
			t.Errorf("Get after payment = %+v, %v", g, err)
		}
	})
}

package stripefake_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stripe/stripe-go/v85"
	"github.com/stripe/stripe-go/v85/webhook"

	"github.com/checkoutd/checkoutd/internal/pay/stripefake"
)

const secret = "whsec_dGhlIGZha2UncyB0ZXN0IHNpZ25pbmcgc2VjcmV0"

func client(f *stripefake.Fake) *stripe.Client {
	return stripe.NewClient("sk_test_fake", stripe.WithBackends(&stripe.Backends{API: stripe.GetBackendWithConfig(stripe.APIBackend, &stripe.BackendConfig{
		URL: stripe.String(f.URL), HTTPClient: f.Client(), MaxNetworkRetries: stripe.Int64(0),
		LeveledLogger: &stripe.LeveledLogger{Level: stripe.LevelNull},
	})}))
}

func createIntent(t *testing.T, c *stripe.Client) *stripe.PaymentIntent {
	t.Helper()
	pi, err := c.V1PaymentIntents.Create(context.Background(), &stripe.PaymentIntentCreateParams{
		Amount: stripe.Int64(1500), Currency: stripe.String("eur"), PaymentMethodTypes: []*string{stripe.String("card")},
		Metadata: map[string]string{"checkoutd_payment_id": "pay_1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return pi
}

// The fake's events are what stripe-go's strictest parse takes: signed as
// Stripe signs, in stripe-go's API version, in the shape it reads.
func TestEventsParseInStripeGo(t *testing.T) {
	f := stripefake.New(t, stripefake.Options{})
	pi := createIntent(t, client(f))
	if err := f.Confirm(pi.ID, stripefake.CardVisa); err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, ev := range f.Events() {
		types = append(types, ev.Type)
		e, err := webhook.ConstructEvent(ev.Body, f.Header(ev, secret).Get("Stripe-Signature"), secret)
		if err != nil {
			t.Fatalf("%s: %v", ev.Type, err)
		}
		if e.ID != ev.ID || string(e.Type) != ev.Type || e.APIVersion != stripe.APIVersion {
			t.Fatalf("parsed %s %s %s", e.ID, e.Type, e.APIVersion)
		}
	}
	if got := strings.Join(types, ","); got != "payment_intent.created,charge.succeeded,payment_intent.succeeded" {
		t.Fatalf("events %s", got)
	}
	var got stripe.PaymentIntent
	ev := f.EventsOf("payment_intent.succeeded", pi.ID)[0]
	e, _ := webhook.ConstructEvent(ev.Body, f.Header(ev, secret).Get("Stripe-Signature"), secret)
	if err := json.Unmarshal(e.Data.Raw, &got); err != nil || got.Status != stripe.PaymentIntentStatusSucceeded || got.Metadata["checkoutd_payment_id"] != "pay_1" {
		t.Fatalf("object %+v, %v", got, err)
	}
	if _, err := webhook.ConstructEvent(ev.Body, f.Header(ev, "whsec_another").Get("Stripe-Signature"), secret); err == nil {
		t.Fatal("another secret's signature verified")
	}
}

// Events are delivered as Stripe delivers them, as often and in whatever
// order a test sends them.
func TestSend(t *testing.T) {
	var mu sync.Mutex
	var got []string
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if _, err := webhook.ConstructEvent(body, r.Header.Get("Stripe-Signature"), secret); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var e struct{ Type string }
		json.Unmarshal(body, &e)
		mu.Lock()
		got = append(got, e.Type)
		mu.Unlock()
	}))
	defer receiver.Close()
	// OnEvent forwards each event as it happens.
	var f *stripefake.Fake
	f = stripefake.New(t, stripefake.Options{OnEvent: func(ev stripefake.Event) {
		if ev.Type == "payment_intent.succeeded" {
			if status, err := f.Send(context.Background(), http.DefaultClient, receiver.URL, ev, secret); err != nil || status != 200 {
				t.Errorf("sent: %d, %v", status, err)
			}
		}
	}})
	f.Confirm(createIntent(t, client(f)).ID, stripefake.CardVisa)
	evs := f.Events()
	// Twice, and out of order.
	for i := len(evs) - 1; i >= 0; i-- {
		f.Send(context.Background(), http.DefaultClient, receiver.URL, evs[i], secret)
	}
	mu.Lock()
	defer mu.Unlock()
	if s := strings.Join(got, ","); s != "payment_intent.succeeded,payment_intent.succeeded,charge.succeeded,payment_intent.created" {
		t.Fatalf("received %s", s)
	}
}

// Stripe.js confirms with the publishable key and the client secret, from
// the page's origin.
func TestConfirmAsStripeJS(t *testing.T) {
	f := stripefake.New(t, stripefake.Options{TLS: true})
	pi := createIntent(t, client(f))
	post := func(secret string) *http.Response {
		form := url.Values{"key": {"pk_test_fake"}, "client_secret": {secret}, "payment_method": {stripefake.CardVisa}}
		res, err := f.Client().PostForm(f.URL+"/v1/payment_intents/"+pi.ID+"/confirm", form)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	if res := post(pi.ID + "_secret_wrong"); res.StatusCode != 404 {
		t.Fatalf("a wrong client secret: %d", res.StatusCode)
	}
	if res := post(pi.ClientSecret); res.StatusCode != 200 || res.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("confirmed: %d", res.StatusCode)
	}
	if s := f.PaymentStatus(pi.ID); s != "succeeded" {
		t.Fatalf("status %s", s)
	}
	// The publishable key does nothing else.
	res, err := f.Client().PostForm(f.URL+"/v1/payment_intents/"+pi.ID+"/cancel", url.Values{"key": {"pk_test_fake"}, "client_secret": {pi.ClientSecret}})
	if err != nil || res.StatusCode != 401 {
		t.Fatalf("cancel with the publishable key: %v %v", res.StatusCode, err)
	}
}

func TestIdempotencyKeyOtherParameters(t *testing.T) {
	f := stripefake.New(t, stripefake.Options{})
	c := client(f)
	params := func(amount int64) *stripe.PaymentIntentCreateParams {
		p := &stripe.PaymentIntentCreateParams{Amount: stripe.Int64(amount), Currency: stripe.String("eur"), PaymentMethodTypes: []*string{stripe.String("card")}}
		p.SetIdempotencyKey("k")
		return p
	}
	a, err := c.V1PaymentIntents.Create(context.Background(), params(100))
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.V1PaymentIntents.Create(context.Background(), params(100))
	if err != nil || a.ID != b.ID {
		t.Fatalf("again: %v %v", b, err)
	}
	_, err = c.V1PaymentIntents.Create(context.Background(), params(200))
	if se, ok := err.(*stripe.Error); !ok || se.Type != stripe.ErrorTypeIdempotency {
		t.Fatalf("other parameters: %v", err)
	}
}

// A request left hanging does not hold the fake's end.
func TestHangReleasedAtEnd(t *testing.T) {
	t.Run("hang", func(t *testing.T) {
		f := stripefake.New(t, stripefake.Options{})
		arrived := f.HangNext("")
		go client(f).V1Accounts.Retrieve(context.Background(), nil)
		<-arrived
	})
}

func TestForward(t *testing.T) {
	var mu sync.Mutex
	var got []string
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		e, err := webhook.ConstructEvent(body, r.Header.Get("Stripe-Signature"), secret)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		got = append(got, string(e.Type))
		mu.Unlock()
	}))
	defer receiver.Close()
	f := stripefake.New(t, stripefake.Options{})
	f.Forward(http.DefaultClient, receiver.URL, secret)
	pi := createIntent(t, client(f))
	f.Confirm(pi.ID, stripefake.CardDeclined)
	if err := f.WaitDelivered(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if s := strings.Join(got, ","); s != "payment_intent.created,charge.failed,payment_intent.payment_failed" {
		t.Fatalf("received %s", s)
	}
	for _, d := range f.Deliveries() {
		if d.Status != 200 || d.Err != nil {
			t.Fatalf("delivery %s: %d %v", d.Event.Type, d.Status, d.Err)
		}
	}
}

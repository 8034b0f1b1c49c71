package stripepay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v85"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/clock"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/pay/stripefake"
)

// Credentials of a store in the tests; the fake takes any key of the
// right shape.
const (
	testSecretKey      = "sk_live_51FakeSecretKeyForCheckoutdTests0001"
	testPublishableKey = "pk_live_51FakePublishableKeyForCheckoutdTests01"
	testWebhookSecret  = "whsec_ZmFrZSBzaWduaW5nIHNlY3JldCBmb3IgdGVzdHM="
)

var testCreds = pay.AcquirerCredentials{SecretKey: testSecretKey, PublishableKey: testPublishableKey, WebhookSecret: testWebhookSecret}

// flow is a store's Stripe acquirer against a fake Stripe on a fake clock.
type flow struct {
	fake  *stripefake.Fake
	clk   *clock.Fake
	conn  *Connector
	acq   pay.Acquirer
	paid  int // payments made, for their ids
	stage context.Context
}

func newFlow(t *testing.T) *flow {
	t.Helper()
	clk := clock.NewFake(time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC))
	fake := stripefake.New(t, stripefake.Options{Now: clk.Now})
	conn := New(Config{URL: fake.URL, HTTPClient: fake.Client()})
	return &flow{fake: fake, clk: clk, conn: conn, acq: conn.Connect(testCreds), stage: context.Background()}
}

// create creates a payment of amount EUR for a new checkoutd payment.
func (f *flow) create(t *testing.T, amount int64) pay.AcquirerPayment {
	t.Helper()
	f.paid++
	id := fmt.Sprintf("pay_%04d", f.paid)
	p, err := f.acq.CreatePayment(f.stage, pay.AcquirerPaymentRequest{
		PaymentID: id, SessionID: "cs_" + id, StoreID: "st_1", Amount: amount, Currency: "EUR",
		IdempotencyKey: "checkoutd_" + id + "_create",
	})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	return p
}

func (f *flow) lookup(t *testing.T, id string) pay.AcquirerPayment {
	t.Helper()
	p, err := f.acq.LookupPayment(f.stage, id)
	if err != nil {
		t.Fatalf("lookup %s: %v", id, err)
	}
	return p
}

func TestCreatePaymentSends(t *testing.T) {
	f := newFlow(t)
	p, err := f.acq.CreatePayment(f.stage, pay.AcquirerPaymentRequest{
		PaymentID: "pay_1", SessionID: "cs_1", StoreID: "st_1", Amount: 1999, Currency: "EUR",
		StatementDescriptor: "SHOP 1042", IdempotencyKey: "checkoutd_pay_1_create",
	})
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != pay.AcquirerPending || p.Amount != 1999 || p.Currency != "eur" || !strings.HasPrefix(p.ClientSecret, p.ID+"_secret_") ||
		p.CheckoutPaymentID != "pay_1" || p.CheckoutSessionID != "cs_1" || p.CheckoutStoreID != "st_1" {
		t.Fatalf("created %+v", p)
	}
	reqs := f.fake.Requests()
	r := reqs[len(reqs)-1]
	want := map[string]string{
		"amount": "1999", "currency": "eur", "payment_method_types[0]": "card", "statement_descriptor_suffix": "SHOP 1042",
		"metadata[checkoutd_payment_id]": "pay_1", "metadata[checkoutd_session_id]": "cs_1", "metadata[checkoutd_store_id]": "st_1",
	}
	for k, v := range want {
		if got := r.Form[k]; len(got) != 1 || got[0] != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if _, ok := r.Form["automatic_payment_methods[enabled]"]; ok {
		t.Errorf("automatic_payment_methods sent with payment_method_types")
	}
	if r.IdempotencyKey != "checkoutd_pay_1_create" {
		t.Errorf("idempotency key %q", r.IdempotencyKey)
	}
}

func TestPaymentSucceeds(t *testing.T) {
	f := newFlow(t)
	p := f.create(t, 1500)
	if err := f.fake.Confirm(p.ID, stripefake.CardVisa); err != nil {
		t.Fatal(err)
	}
	got := f.lookup(t, p.ID)
	if got.Status != pay.AcquirerSucceeded || got.Brand != "visa" || got.Last4 != "4242" || got.Country != "US" ||
		got.ChargeID != f.fake.ChargeOf(p.ID) || got.FailureCode != "" || got.CheckoutPaymentID != p.CheckoutPaymentID {
		t.Fatalf("looked up %+v", got)
	}
}

func TestPaymentDeclined(t *testing.T) {
	for card, code := range map[string]string{
		stripefake.CardDeclined:          checkout.FailCardDeclined,
		stripefake.CardInsufficientFunds: checkout.FailInsufficientFunds,
		stripefake.CardExpired:           checkout.FailExpiredCard,
		stripefake.CardIncorrectCVC:      checkout.FailIncorrectCVC,
		stripefake.CardProcessingError:   checkout.FailProcessingError,
	} {
		t.Run(card, func(t *testing.T) {
			f := newFlow(t)
			p := f.create(t, 1500)
			if err := f.fake.Confirm(p.ID, card); err == nil {
				t.Fatal("the decline confirmed")
			}
			got := f.lookup(t, p.ID)
			if got.Status != pay.AcquirerFailed || got.FailureCode != code {
				t.Fatalf("looked up %s %q, want failed %q", got.Status, got.FailureCode, code)
			}
			// The service cancels a declined payment so that nothing
			// confirms it later; its failure stays known.
			c, err := f.acq.CancelPayment(f.stage, p.ID, "checkoutd_"+p.CheckoutPaymentID+"_cancel")
			if err != nil || c.Status != pay.AcquirerCanceled || c.FailureCode != code {
				t.Fatalf("canceled %s %q, %v", c.Status, c.FailureCode, err)
			}
		})
	}
}

func TestPayment3DSecure(t *testing.T) {
	f := newFlow(t)
	ok, refused := f.create(t, 1500), f.create(t, 1500)
	for _, p := range []pay.AcquirerPayment{ok, refused} {
		if err := f.fake.Confirm(p.ID, stripefake.CardAuthenticationRequired); err != nil {
			t.Fatal(err)
		}
		if got := f.lookup(t, p.ID); got.Status != pay.AcquirerRequiresAction {
			t.Fatalf("before 3-D Secure: %s", got.Status)
		}
	}
	f.fake.CompleteAction(ok.ID, true)
	f.fake.CompleteAction(refused.ID, false)
	if got := f.lookup(t, ok.ID); got.Status != pay.AcquirerSucceeded || got.Last4 != "3184" {
		t.Errorf("authenticated: %+v", got)
	}
	if got := f.lookup(t, refused.ID); got.Status != pay.AcquirerFailed || got.FailureCode != checkout.FailAuthenticationFailed {
		t.Errorf("not authenticated: %s %q", got.Status, got.FailureCode)
	}
}

func TestCancelPayment(t *testing.T) {
	f := newFlow(t)
	p := f.create(t, 1500)
	c, err := f.acq.CancelPayment(f.stage, p.ID, "checkoutd_pay_0001_cancel")
	if err != nil || c.Status != pay.AcquirerCanceled || c.FailureCode != "" {
		t.Fatalf("canceled %+v, %v", c, err)
	}
	// Canceled already: as it is.
	if c, err = f.acq.CancelPayment(f.stage, p.ID, "checkoutd_pay_0001_cancel2"); err != nil || c.Status != pay.AcquirerCanceled {
		t.Fatalf("canceled again %+v, %v", c, err)
	}
	if err := f.fake.Confirm(p.ID, stripefake.CardVisa); err == nil {
		t.Fatal("a canceled payment confirmed")
	}

	// Succeeded meanwhile (the buyer confirmed as the cancel left): the
	// payment as it is, with no error.
	won := f.create(t, 1500)
	f.fake.Confirm(won.ID, stripefake.CardVisa)
	c, err = f.acq.CancelPayment(f.stage, won.ID, "checkoutd_pay_0002_cancel")
	if err != nil || c.Status != pay.AcquirerSucceeded || c.Last4 != "4242" {
		t.Fatalf("canceled after success %+v, %v", c, err)
	}
}

func TestRefund(t *testing.T) {
	f := newFlow(t)
	p := f.create(t, 1500)
	f.fake.Confirm(p.ID, stripefake.CardVisa)
	req := pay.AcquirerRefundRequest{RefundID: "re_ck_1", AcquirerPayment: p.ID, Amount: 500,
		IdempotencyKey: "checkoutd_re_ck_1_refund", CheckoutPayment: p.CheckoutPaymentID, CheckoutStoreID: "st_1"}
	r, err := f.acq.Refund(f.stage, req)
	if err != nil || r.Status != pay.AcquirerSucceeded || r.Amount != 500 || r.CheckoutRefundID != "re_ck_1" {
		t.Fatalf("refund %+v, %v", r, err)
	}
	// Asked again with its key (its answer lost): the same refund.
	again, err := f.acq.Refund(f.stage, req)
	if err != nil || again.ID != r.ID {
		t.Fatalf("refund asked again: %+v, %v; want %s", again, err, r.ID)
	}
	if got, err := f.acq.LookupRefund(f.stage, r.ID); err != nil || got != r {
		t.Fatalf("looked up %+v, %v; want %+v", got, err, r)
	}
	// More than is left: refused, definitely.
	_, err = f.acq.Refund(f.stage, pay.AcquirerRefundRequest{RefundID: "re_ck_2", AcquirerPayment: p.ID, Amount: 1001, IdempotencyKey: "checkoutd_re_ck_2_refund"})
	if !checkout.IsCode(err, checkout.EValidationFailed) || pay.Unavailable(err) {
		t.Fatalf("too large: %v", err)
	}
}

func TestRefundFails(t *testing.T) {
	f := newFlow(t)
	p := f.create(t, 1500)
	f.fake.Confirm(p.ID, stripefake.CardRefundFail)
	r, err := f.acq.Refund(f.stage, pay.AcquirerRefundRequest{RefundID: "re_ck_1", AcquirerPayment: p.ID, Amount: 1500, IdempotencyKey: "k1"})
	if err != nil || r.Status != pay.AcquirerPending {
		t.Fatalf("refund %+v, %v", r, err)
	}
	f.clk.Advance(time.Minute)
	got, err := f.acq.LookupRefund(f.stage, r.ID)
	if err != nil || got.Status != pay.AcquirerFailed || got.FailureCode != checkout.RefundFailExpiredOrCanceledCard {
		t.Fatalf("later %+v, %v", got, err)
	}
	if evs := f.fake.EventsOf("charge.refund.updated", r.ID); len(evs) != 1 {
		t.Fatalf("%d charge.refund.updated events", len(evs))
	}
}

func TestDispute(t *testing.T) {
	f := newFlow(t)
	p := f.create(t, 1500)
	f.fake.Confirm(p.ID, stripefake.CardDispute)
	f.fake.Tick()
	if evs := f.fake.EventsOf("charge.dispute.created", ""); len(evs) != 0 {
		t.Fatal("the dispute opened at once")
	}
	f.clk.Advance(time.Minute)
	f.fake.Tick()
	evs := f.fake.EventsOf("charge.dispute.created", "")
	if len(evs) != 1 {
		t.Fatalf("%d disputes opened", len(evs))
	}
	ev := f.parse(t, evs[0])
	if ev.Kind != pay.AcquirerEventDisputeOpened || !ev.Verified || ev.AcquirerPayment != p.ID || ev.AcquirerDispute != evs[0].Object {
		t.Fatalf("event %+v", ev)
	}
	d, err := f.acq.LookupDispute(f.stage, ev.AcquirerDispute)
	want := pay.AcquirerDispute{ID: ev.AcquirerDispute, AcquirerPayment: p.ID, CheckoutPaymentID: p.CheckoutPaymentID,
		Amount: 1500, Currency: "eur", Reason: string(checkout.DisputeFraudulent), Status: string(checkout.DisputeNeedsResponse),
		EvidenceDueBy: f.clk.Now().Add(7 * 24 * time.Hour), Fee: stripefake.DisputeFee}
	if err != nil || d != want {
		t.Fatalf("looked up %+v, %v; want %+v", d, err, want)
	}
	f.fake.SetDisputeStatus(d.ID, "lost")
	closed := f.fake.EventsOf("charge.dispute.closed", d.ID)
	if len(closed) != 1 || f.parse(t, closed[0]).Kind != pay.AcquirerEventDisputeClosed {
		t.Fatalf("closed events %v", closed)
	}
	if d, err = f.acq.LookupDispute(f.stage, d.ID); err != nil || d.Status != string(checkout.DisputeLost) {
		t.Fatalf("closed %+v, %v", d, err)
	}

	// One opened by hand, for another reason.
	q := f.create(t, 700)
	f.fake.Confirm(q.ID, stripefake.CardVisa)
	id, err := f.fake.OpenDispute(q.ID, "product_unacceptable")
	if err != nil {
		t.Fatal(err)
	}
	if d, err = f.acq.LookupDispute(f.stage, id); err != nil || d.Reason != string(checkout.DisputeGeneral) || d.AcquirerPayment != q.ID {
		t.Fatalf("by hand %+v, %v", d, err)
	}
}

func TestDisputeMapping(t *testing.T) {
	for s, want := range map[stripe.DisputeStatus]checkout.DisputeStatus{
		"needs_response": checkout.DisputeNeedsResponse, "warning_needs_response": checkout.DisputeNeedsResponse,
		"under_review": checkout.DisputeUnderReview, "warning_under_review": checkout.DisputeUnderReview,
		"won": checkout.DisputeWon, "warning_closed": checkout.DisputeWon, "prevented": checkout.DisputeWon, "charge_refunded": checkout.DisputeWon,
		"lost": checkout.DisputeLost, "a_new_status": checkout.DisputeNeedsResponse,
	} {
		if got := disputeStatus(s); got != want {
			t.Errorf("%s → %s, want %s", s, got, want)
		}
	}
	for r, want := range map[stripe.DisputeReason]checkout.DisputeReason{
		"fraudulent": checkout.DisputeFraudulent, "product_not_received": checkout.DisputeProductNotReceived,
		"duplicate": checkout.DisputeDuplicate, "unrecognized": checkout.DisputeGeneral, "credit_not_processed": checkout.DisputeGeneral,
	} {
		if got := disputeReason(r); got != want {
			t.Errorf("%s → %s, want %s", r, got, want)
		}
	}
}

// parse parses an event of the fake as delivered now, signed with the
// store's secret.
func (f *flow) parse(t *testing.T, ev stripefake.Event) pay.AcquirerEvent {
	t.Helper()
	got, err := f.acq.ParseWebhook(ev.Body, stripefake.Header(ev, testWebhookSecret, f.clk.Now()), f.clk.Now())
	if err != nil {
		t.Fatalf("parse %s: %v", ev.Type, err)
	}
	return got
}

func TestParseWebhook(t *testing.T) {
	f := newFlow(t)
	p := f.create(t, 1500)
	f.fake.Confirm(p.ID, stripefake.CardVisa)
	succeeded := f.fake.EventsOf("payment_intent.succeeded", p.ID)[0]
	now := f.clk.Now()

	ev := f.parse(t, succeeded)
	want := pay.AcquirerEvent{ID: succeeded.ID, Kind: pay.AcquirerEventPayment, Verified: true, AcquirerPayment: p.ID, CheckoutPaymentID: p.CheckoutPaymentID}
	if fmt.Sprint(ev) != fmt.Sprint(want) {
		t.Fatalf("parsed %+v, want %+v", ev, want)
	}
	// A charge's event names its PaymentIntent, and checkoutd's payment
	// from the metadata Stripe copies to the charge.
	if ev := f.parse(t, f.fake.EventsOf("charge.succeeded", "")[0]); ev.Kind != pay.AcquirerEventOther || ev.AcquirerPayment != p.ID || ev.CheckoutPaymentID != p.CheckoutPaymentID {
		t.Fatalf("charge.succeeded %+v", ev)
	}

	for _, c := range []struct {
		name   string
		header http.Header
		now    time.Time
	}{
		{"wrong secret", stripefake.Header(succeeded, "whsec_c29tZW9uZSBlbHNlJ3Mgc2VjcmV0IGhlcmU=", now), now},
		{"no signature", http.Header{}, now},
		{"too old", stripefake.Header(succeeded, testWebhookSecret, now), now.Add(DefaultWebhookTolerance + time.Second)},
		{"tampered", func() http.Header {
			h := stripefake.Header(succeeded, testWebhookSecret, now)
			h.Set("Stripe-Signature", strings.Replace(h.Get("Stripe-Signature"), "v1=", "v1=00", 1))
			return h
		}(), now},
	} {
		got, err := f.acq.ParseWebhook(succeeded.Body, c.header, c.now)
		if err != nil || got.Verified || got.AcquirerPayment != p.ID || got.CheckoutPaymentID != p.CheckoutPaymentID {
			t.Errorf("%s: %+v, %v; want it unverified, naming the payment", c.name, got, err)
		}
	}
	// Signed long ago, received within the tolerance of when it was signed.
	if got, _ := f.acq.ParseWebhook(succeeded.Body, stripefake.Header(succeeded, testWebhookSecret, now.Add(-time.Hour)), now.Add(-time.Hour+DefaultWebhookTolerance)); !got.Verified {
		t.Error("an event within the tolerance did not verify")
	}
	if _, err := f.acq.ParseWebhook([]byte(`{"not":"an event"}`), http.Header{}, now); err == nil {
		t.Error("a body that is no event parsed")
	}

	// Another API version than stripe-go's: read all the same.
	f.fake.SetAPIVersion("2024-06-20")
	q := f.create(t, 900)
	f.fake.Confirm(q.ID, stripefake.CardDeclined)
	old := f.fake.EventsOf("payment_intent.payment_failed", q.ID)[0]
	if !strings.Contains(string(old.Body), `"api_version":"2024-06-20"`) {
		t.Fatalf("event of version %s", old.Body)
	}
	if got := f.parse(t, old); !got.Verified || got.Kind != pay.AcquirerEventPayment || got.AcquirerPayment != q.ID {
		t.Fatalf("other API version: %+v", got)
	}
}

func TestParseWebhookKinds(t *testing.T) {
	f := newFlow(t)
	p := f.create(t, 1500)
	f.fake.Confirm(p.ID, stripefake.CardVisa)
	r, err := f.acq.Refund(f.stage, pay.AcquirerRefundRequest{RefundID: "re_ck_1", AcquirerPayment: p.ID, Amount: 1500,
		IdempotencyKey: "k", CheckoutPayment: p.CheckoutPaymentID})
	if err != nil {
		t.Fatal(err)
	}
	q := f.create(t, 1500)
	f.acq.CancelPayment(f.stage, q.ID, "c")
	for _, c := range []struct {
		typ, object string
		kind        pay.AcquirerEventKind
		payment     string
		refunds     string
	}{
		{"payment_intent.created", p.ID, pay.AcquirerEventOther, p.ID, ""},
		{"payment_intent.succeeded", p.ID, pay.AcquirerEventPayment, p.ID, ""},
		{"payment_intent.canceled", q.ID, pay.AcquirerEventPayment, q.ID, ""},
		{"refund.created", r.ID, pay.AcquirerEventRefund, p.ID, r.ID},
		{"charge.refunded", "", pay.AcquirerEventRefund, p.ID, ""},
	} {
		evs := f.fake.EventsOf(c.typ, c.object)
		if len(evs) != 1 {
			t.Fatalf("%d %s events", len(evs), c.typ)
		}
		got := f.parse(t, evs[0])
		if got.Kind != c.kind || got.AcquirerPayment != c.payment || strings.Join(got.AcquirerRefunds, ",") != c.refunds || got.CheckoutPaymentID == "" {
			t.Errorf("%s: %+v", c.typ, got)
		}
	}
}

func TestWebhookNotCheckoutds(t *testing.T) {
	f := newFlow(t)
	// A PaymentIntent the merchant made elsewhere in the same account.
	client := stripe.NewClient(testSecretKey, stripe.WithBackends(&stripe.Backends{API: f.conn.backend}))
	pi, err := client.V1PaymentIntents.Create(f.stage, &stripe.PaymentIntentCreateParams{
		Amount: stripe.Int64(100), Currency: stripe.String("usd"), PaymentMethodTypes: []*string{stripe.String("card")},
	})
	if err != nil {
		t.Fatal(err)
	}
	f.fake.Confirm(pi.ID, stripefake.CardVisa)
	ev := f.parse(t, f.fake.EventsOf("payment_intent.succeeded", pi.ID)[0])
	if !ev.Verified || ev.CheckoutPaymentID != "" || ev.AcquirerPayment != pi.ID {
		t.Fatalf("%+v", ev)
	}
}

func TestUnavailable(t *testing.T) {
	f := newFlow(t)
	p := f.create(t, 1500)
	for _, status := range []int{500, 502, 503, 429, 409} {
		f.fake.FailNext("/v1/payment_intents/"+p.ID, status)
		if _, err := f.acq.LookupPayment(f.stage, p.ID); !pay.Unavailable(err) || checkout.IsCode(err, checkout.EValidationFailed) {
			t.Errorf("%d: %v, want unavailable", status, err)
		}
	}
	// A time-out: Stripe never answers, the client gives up.
	ctx, cancel := context.WithCancel(f.stage)
	arrived := f.fake.HangNext("/v1/refunds")
	go func() { <-arrived; cancel() }()
	if _, err := f.acq.Refund(ctx, pay.AcquirerRefundRequest{AcquirerPayment: p.ID, Amount: 1, IdempotencyKey: "k"}); !pay.Unavailable(err) {
		t.Errorf("time-out: %v, want unavailable", err)
	}
	hang := New(Config{URL: f.fake.URL, HTTPClient: &http.Client{Timeout: 50 * time.Millisecond}}).Connect(testCreds)
	f.fake.HangNext("/v1/payment_intents/" + p.ID)
	if _, err := hang.LookupPayment(f.stage, p.ID); !pay.Unavailable(err) {
		t.Errorf("client time-out: %v, want unavailable", err)
	}
	// Nobody listening.
	down := New(Config{URL: "http://127.0.0.1:1"}).Connect(testCreds)
	if _, err := down.LookupPayment(f.stage, p.ID); !pay.Unavailable(err) {
		t.Errorf("connection refused: %v, want unavailable", err)
	}
}

func TestCreateIdempotent(t *testing.T) {
	f := newFlow(t)
	req := pay.AcquirerPaymentRequest{PaymentID: "pay_1", SessionID: "cs_1", StoreID: "st_1", Amount: 1500, Currency: "eur", IdempotencyKey: "checkoutd_pay_1_create"}
	// Made at Stripe, its answer lost: unknown.
	f.fake.LoseNextAnswer("/v1/payment_intents")
	if _, err := f.acq.CreatePayment(f.stage, req); !pay.Unavailable(err) {
		t.Fatalf("lost answer: %v", err)
	}
	a, err := f.acq.CreatePayment(f.stage, req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := f.acq.CreatePayment(f.stage, req)
	if err != nil || a.ID != b.ID || a.ClientSecret != b.ClientSecret {
		t.Fatalf("asked again: %s, %v; want %s", b.ID, err, a.ID)
	}
	if n := len(f.fake.EventsOf("payment_intent.created", "")); n != 1 {
		t.Fatalf("%d PaymentIntents made", n)
	}
	// The same key with another amount: a definite refusal.
	req.Amount = 1600
	if _, err := f.acq.CreatePayment(f.stage, req); !checkout.IsCode(err, checkout.EValidationFailed) {
		t.Fatalf("reused key: %v", err)
	}
}

func TestRefusalHasNoKey(t *testing.T) {
	f := newFlow(t)
	_, err := f.acq.CreatePayment(f.stage, pay.AcquirerPaymentRequest{PaymentID: "pay_1", Amount: 0, Currency: "eur", IdempotencyKey: "k0"})
	if !checkout.IsCode(err, checkout.EValidationFailed) || !strings.Contains(checkout.ErrorMessage(err), "amount") {
		t.Fatalf("amount 0: %v", err)
	}
	if _, err := f.acq.LookupPayment(f.stage, "pi_nope"); !checkout.IsCode(err, checkout.EValidationFailed) {
		t.Fatalf("unknown payment: %v", err)
	}
	f.fake.RevokeKey(testSecretKey)
	_, err = f.acq.LookupPayment(f.stage, "pi_nope")
	var ce *checkout.Error
	if !errors.As(err, &ce) || ce.Code != checkout.EValidationFailed || ce.Param != "secret_key" {
		t.Fatalf("revoked key: %v", err)
	}
	noKey(t, err.Error(), ce.Message)
	// Not even Stripe's masked key (sk_live_****0001).
	if strings.Contains(err.Error(), "sk_live") {
		t.Errorf("%v shows the masked key", err)
	}
}

// noKey fails when any text shows a key or a part of one.
func noKey(t *testing.T, texts ...string) {
	t.Helper()
	for _, s := range texts {
		for _, secret := range []string{testSecretKey, testSecretKey[len(testSecretKey)-4:], testWebhookSecret} {
			if strings.Contains(s, secret) {
				t.Errorf("%q shows %q", s, secret)
			}
		}
	}
}

func TestNoKeyInStrings(t *testing.T) {
	f := newFlow(t)
	noKey(t, fmt.Sprintf("%v %+v %#v %s", f.acq, f.acq, f.acq, f.acq), fmt.Sprintf("%v %+v %#v", f.conn, f.conn, f.conn))
	noKey(t, fmt.Sprintf("%v %+v %#v %s", testCreds, testCreds, testCreds, testCreds), fmt.Sprintf("%+v", struct{ C pay.AcquirerCredentials }{testCreds}))
	var b strings.Builder
	slog.New(slog.NewJSONHandler(&b, nil)).Info("x", "creds", testCreds)
	slog.New(slog.NewTextHandler(&b, nil)).Info("x", "creds", testCreds)
	noKey(t, b.String())
	if !strings.Contains(b.String(), testPublishableKey) {
		t.Errorf("the publishable key, which is public, is not shown: %s", b.String())
	}
}

func TestCheck(t *testing.T) {
	f := newFlow(t)
	ctx := f.stage
	acc, err := f.conn.Check(ctx, testCreds)
	if err != nil || acc.ID != stripefake.AccountID || !acc.Live || len(acc.Warnings) != 1 || !strings.Contains(acc.Warnings[0], "No webhook endpoint") {
		t.Fatalf("no endpoint: %+v, %v", acc, err)
	}
	f.fake.AddEndpoint(stripefake.Endpoint{URL: "https://elsewhere.example.com/stripe"})
	ours := f.fake.AddEndpoint(stripefake.Endpoint{URL: "https://pay.example.com/webhooks/stripe/st_1"})
	if acc, err = f.conn.Check(ctx, testCreds); err != nil || len(acc.Warnings) != 0 {
		t.Fatalf("with checkoutd's endpoint: %+v, %v", acc, err)
	}
	f.fake.AddEndpoint(stripefake.Endpoint{URL: "https://pay.example.com/webhooks/stripe/st_2", APIVersion: "2024-06-20", EnabledEvents: []string{"payment_intent.succeeded"}})
	acc, err = f.conn.Check(ctx, testCreds)
	if err != nil || len(acc.Warnings) != 2 || !strings.Contains(acc.Warnings[0], "2024-06-20") || !strings.Contains(acc.Warnings[0], "--api-version "+stripe.APIVersion) ||
		!strings.Contains(acc.Warnings[1], "charge.dispute.created") {
		t.Fatalf("another version: %+v, %v", acc, err)
	}
	_ = ours

	for _, c := range []struct {
		name  string
		edit  func(*pay.AcquirerCredentials)
		param string
	}{
		{"no secret key", func(c *pay.AcquirerCredentials) { c.SecretKey = "" }, "secret_key"},
		{"publishable as secret", func(c *pay.AcquirerCredentials) { c.SecretKey = testPublishableKey }, "secret_key"},
		{"test secret key", func(c *pay.AcquirerCredentials) { c.SecretKey = "sk_test_51abcdef" }, "secret_key"},
		{"garbage secret key", func(c *pay.AcquirerCredentials) { c.SecretKey = "hunter2hunter2" }, "secret_key"},
		{"test publishable key", func(c *pay.AcquirerCredentials) { c.PublishableKey = "pk_test_51abcdef" }, "publishable_key"},
		{"secret as publishable", func(c *pay.AcquirerCredentials) { c.PublishableKey = testSecretKey }, "publishable_key"},
		{"no webhook secret", func(c *pay.AcquirerCredentials) { c.WebhookSecret = "" }, "webhook_secret"},
		{"webhook secret shape", func(c *pay.AcquirerCredentials) { c.WebhookSecret = "whsec_short" }, "webhook_secret"},
		{"revoked", func(c *pay.AcquirerCredentials) { c.SecretKey = "sk_live_51RevokedKey0000000000009999" }, "secret_key"},
	} {
		cr := testCreds
		c.edit(&cr)
		f.fake.RevokeKey("sk_live_51RevokedKey0000000000009999")
		_, err := f.conn.Check(ctx, cr)
		var ce *checkout.Error
		if !errors.As(err, &ce) || ce.Code != checkout.EValidationFailed || ce.Param != c.param {
			t.Errorf("%s: %v, want validation_failed on %s", c.name, err, c.param)
			continue
		}
		noKey(t, err.Error())
		if strings.Contains(err.Error(), "9999") || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: %v shows the key", c.name, err)
		}
	}

	// Test keys, when the operator allows them.
	test := pay.AcquirerCredentials{SecretKey: "sk_test_51abcdef", PublishableKey: "pk_test_51abcdef", WebhookSecret: testWebhookSecret}
	acc, err = New(Config{URL: f.fake.URL, AllowTestKeys: true}).Check(ctx, test)
	if err != nil || acc.Live || !strings.Contains(acc.Warnings[0], "test-mode") {
		t.Fatalf("test keys allowed: %+v, %v", acc, err)
	}

	// A connected account (Stripe Connect): the platform's key acts for it.
	connected := testCreds
	connected.AccountID = "acct_1Connected000000"
	if acc, err := f.conn.Check(ctx, connected); err != nil || acc.ID != connected.AccountID {
		t.Fatalf("connected account: %+v, %v", acc, err)
	}
	reqs := f.fake.Requests()
	if r := reqs[len(reqs)-2]; r.Path != "/v1/accounts/"+connected.AccountID {
		t.Fatalf("connected account read at %s", r.Path)
	}

	f.fake.FailNext("/v1/account", 503)
	if _, err := f.conn.Check(ctx, testCreds); !pay.Unavailable(err) {
		t.Fatalf("Stripe down: %v", err)
	}
}

func TestPage(t *testing.T) {
	pg := New(Config{}).Page()
	if pg.Script != "https://js.stripe.com/v3" || len(pg.Adapter) == 0 ||
		fmt.Sprint(pg.Origins) != fmt.Sprint(pay.AcquirerOrigins{Script: []string{"https://js.stripe.com"}, Frame: []string{"https://js.stripe.com", "https://hooks.stripe.com"}, Connect: []string{"https://api.stripe.com"}}) {
		t.Fatalf("%+v", pg)
	}
}

// As Stripe's: the refund of the test card 5126 shows succeeded, then
// fails.
func TestRefundFailsAfterSucceeding(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC))
	fake := stripefake.New(t, stripefake.Options{Now: clk.Now, RefundFailSucceedsFirst: true})
	acq := New(Config{URL: fake.URL, HTTPClient: fake.Client()}).Connect(testCreds)
	f := &flow{fake: fake, clk: clk, acq: acq, stage: context.Background()}
	p := f.create(t, 1500)
	fake.Confirm(p.ID, stripefake.CardRefundFail)
	r, err := acq.Refund(f.stage, pay.AcquirerRefundRequest{RefundID: "re_ck_1", AcquirerPayment: p.ID, Amount: 1500, IdempotencyKey: "k1"})
	if err != nil || r.Status != pay.AcquirerSucceeded {
		t.Fatalf("refund %+v, %v", r, err)
	}
	clk.Advance(time.Minute)
	if got, err := acq.LookupRefund(f.stage, r.ID); err != nil || got.Status != pay.AcquirerFailed || got.FailureCode != checkout.RefundFailExpiredOrCanceledCard {
		t.Fatalf("later %+v, %v", got, err)
	}
	ev := f.parse(t, fake.EventsOf("charge.refund.updated", r.ID)[0])
	if ev.Kind != pay.AcquirerEventRefund || ev.AcquirerPayment != p.ID || len(ev.AcquirerRefunds) != 1 || ev.AcquirerRefunds[0] != r.ID {
		t.Fatalf("event %+v", ev)
	}
}

package service_test

import (
	"errors"
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

// cardFixture is a store that takes live cards through its own Stripe
// account, at a fake of Stripe on the fixture's clock, with a live API key
// to make sessions with.
type cardFixture struct {
	*payFixture
	fake *stripefake.Fake
	conn *stripepay.Connector
	live *checkout.APIKey
}

func newCardFixture(t *testing.T, db *store.DB, o stripefake.Options) *cardFixture {
	t.Helper()
	pf := newPayFixture(t, db)
	o.Now = pf.clock.Now
	f := &cardFixture{payFixture: pf, fake: stripefake.New(t, o)}
	f.conn = stripepay.New(stripepay.Config{URL: f.fake.URL})
	f.svc = f.cardNode(db)
	f.fake.AddEndpoint(stripefake.Endpoint{URL: f.svc.AcquirerWebhookURL(f.m.ID, "stripe")})
	if _, err := f.svc.SetAcquirerAccount(ctx, goodAcquirerParams(f.m.ID)); err != nil {
		t.Fatal(err)
	}
	f.live, _ = f.newKey(t, checkout.ModeLive, checkout.KeyBearer)
	return f
}

// cardNode is a service on db as another node runs it: the fixture's
// clocks, processors and Stripe connector.
func (f *cardFixture) cardNode(db *store.DB) *service.Service {
	return service.New(service.Config{
		Store: db, Now: f.clock.Now, CacheNow: f.cache.Now, CheckoutBaseURL: "https://pay.example", BaseURL: "https://api.example/",
		Logger: f.log, SecretsKey: testSecretsKey, Actor: operator, Acquirers: []pay.AcquirerConnector{f.conn},
		Processors: pay.Registry{Test: pay.Processors{Card: f.cards, Crypto: pay.TestNetwork{}, Skins: f.skins}},
	})
}

// liveSession makes a live session of 15.00.
func (f *cardFixture) liveSession(t *testing.T) string {
	t.Helper()
	return f.createWith(t, f.live, `{"items":[{"name":"Sword","amount":1500}]}`).ID
}

// start starts (or resumes) the session's card payment at Stripe.
func (f *cardFixture) start(t *testing.T, id string) *service.AcquirerStart {
	t.Helper()
	st, err := f.svc.StartAcquirerPayment(ctx, id)
	if err != nil {
		t.Fatalf("StartAcquirerPayment = %v", err)
	}
	if st.ClientSecret == "" || st.PublishableKey != stripePublishableKey || st.Acquirer != "stripe" || st.Payment.Acquirer == nil || st.Payment.Acquirer.ID == "" {
		t.Fatalf("StartAcquirerPayment = %+v, payment %+v", st, st.Payment)
	}
	return st
}

// back is the buyer's return to the page.
func (f *cardFixture) back(t *testing.T, id string) *service.PaymentOutcome {
	t.Helper()
	out, err := f.svc.ReturnFromAcquirer(ctx, id)
	if err != nil {
		t.Fatalf("ReturnFromAcquirer = %v", err)
	}
	return out
}

// deliver hands the store's checkoutd Stripe's events of type typ about
// object as Stripe posts them, signed with secret, and returns what each
// answered.
func (f *cardFixture) deliver(t *testing.T, typ, object, secret string) []error {
	t.Helper()
	evs := f.fake.EventsOf(typ, object)
	if len(evs) == 0 {
		t.Fatalf("Stripe made no %s event about %s", typ, object)
	}
	var errs []error
	for _, ev := range evs {
		verified, err := f.svc.AcquirerWebhook(ctx, "stripe", f.m.ID, ev.Body, f.fake.Header(ev, secret))
		if err == nil && !verified {
			err = errors.New("not verified")
		}
		errs = append(errs, err)
	}
	return errs
}

func (f *cardFixture) payment(t *testing.T, id string) *checkout.Payment {
	t.Helper()
	p, err := f.db.PaymentGet(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// paidByCard makes a live session and pays it with Stripe's test payment
// method pm, as a buyer does: the page starts the payment, Stripe.js
// confirms it, the buyer comes back. It returns the session's id and its
// payment.
func (f *cardFixture) paidByCard(t *testing.T, pm string) (string, *checkout.Payment) {
	t.Helper()
	id := f.liveSession(t)
	pi := f.start(t, id).Payment.Acquirer.ID
	if err := f.fake.Confirm(pi, pm); err != nil {
		t.Fatal(err)
	}
	f.back(t, id)
	return id, f.paidOnce(t, id)
}

// A card payment through Stripe: started once however often the page asks
// (one PaymentIntent, one payment holding the session, the same client
// secret), confirmed by the buyer, completed on the return by a lookup,
// with the card's details; Stripe's webhook, twice and late, changes
// nothing more: one payment.succeeded, one checkout.completed.
func TestAcquirerPaymentSucceeds(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newCardFixture(t, db, stripefake.Options{})
		id := f.liveSession(t)
		ps, err := f.svc.PageSession(ctx, id)
		if err != nil || ps.Acquirer == nil || ps.Acquirer.Name != "stripe" || ps.Acquirer.PublishableKey != stripePublishableKey ||
			len(ps.Methods) == 0 || ps.Methods[0] != checkout.MethodCard || ps.Acquirer.Page.Script != stripepay.Script {
			t.Fatalf("PageSession = %+v, %v; want card first, through Stripe", ps, err)
		}
		st := f.start(t, id)
		again := f.start(t, id) // another tab, a double click
		if again.Payment.ID != st.Payment.ID || again.ClientSecret != st.ClientSecret {
			t.Errorf("a second start = %s; want the first payment %s resumed", again.Payment.ID, st.Payment.ID)
		}
		creates := 0
		for _, r := range f.fake.Requests() {
			if r.Method == "POST" && r.Path == "/v1/payment_intents" {
				creates++
				if r.IdempotencyKey != "checkoutd_"+st.Payment.ID+"_create" {
					t.Errorf("a create's idempotency key = %q", r.IdempotencyKey)
				}
			}
		}
		if creates != 2 || len(f.payments(t, id)[checkout.PaymentProcessing]) != 1 {
			t.Errorf("%d creates, payments %v; want the same create asked twice, one payment", creates, f.payments(t, id))
		}
		pi := st.Payment.Acquirer.ID
		// Before the buyer confirms, the return finds it waiting.
		if out := f.back(t, id); out.Payment.Status != checkout.PaymentProcessing || out.Session.Status != checkout.StatusOpen {
			t.Errorf("the return before confirming = %s, %s; want processing, open", out.Payment.Status, out.Session.Status)
		}
		if err := f.fake.Confirm(pi, stripefake.CardVisa); err != nil {
			t.Fatal(err)
		}
		out := f.back(t, id)
		p := f.paidOnce(t, id)
		if out.Session.Status != checkout.StatusComplete || p.ID != st.Payment.ID || *p.CardBrand != "visa" || *p.CardLast4 != "4242" ||
			p.Acquirer.ChargeID != f.fake.ChargeOf(pi) || p.Acquirer.Status != string(pay.AcquirerSucceeded) {
			t.Errorf("after the return: session %s, payment %+v, %+v", out.Session.Status, p, p.Acquirer)
		}
		for range 2 {
			for _, err := range f.deliver(t, "payment_intent.succeeded", pi, stripeWebhookSecret) {
				if err != nil {
					t.Errorf("the webhook = %v", err)
				}
			}
		}
		if ev := f.eventCounts(t, id); ev[checkout.EventPaymentSucceeded] != 1 || ev[checkout.EventCheckoutCompleted] != 1 {
			t.Errorf("events = %v; want one payment.succeeded and one checkout.completed", ev)
		}
	})
}

// The webhook alone completes a payment whose buyer never came back, on
// another node, after a restart; a webhook whose signature fails is still
// looked up (it is a hint) and answered unverified; one about a payment
// that is not checkoutd's, or another store's, changes nothing.
func TestAcquirerWebhookCompletes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newCardFixture(t, db, stripefake.Options{})
		id := f.liveSession(t)
		pi := f.start(t, id).Payment.Acquirer.ID
		if err := f.fake.Confirm(pi, stripefake.CardVisa); err != nil {
			t.Fatal(err)
		}
		f.svc = f.cardNode(db) // a restart, or the other node
		errs := f.deliver(t, "payment_intent.succeeded", pi, stripeOtherSecret)
		if len(errs) != 1 || errs[0] == nil || errs[0].Error() != "not verified" {
			t.Errorf("the webhook signed with another secret = %v; want answered unverified", errs)
		}
		f.paidOnce(t, id) // the lookup it led to completed the session
		if !f.logged("signature did not check out") {
			t.Errorf("log = %s; want the unverified webhook logged", f.logBuf)
		}
		// Not checkoutd's, and a body that is not JSON.
		foreign := []byte(`{"id":"evt_x","object":"event","type":"payment_intent.succeeded","api_version":"` + "2020-08-27" +
			`","data":{"object":{"id":"pi_foreign","object":"payment_intent","metadata":{}}}}`)
		ok, err := f.svc.AcquirerWebhook(ctx, "stripe", f.m.ID, foreign, stripefake.Header(stripefake.Event{Body: foreign}, stripeWebhookSecret, f.clock.Now()))
		if err != nil || !ok {
			t.Errorf("a webhook of a payment not checkoutd's = %v, %v; want taken and ignored", ok, err)
		}
		if _, err := f.svc.AcquirerWebhook(ctx, "stripe", f.m.ID, []byte("{"), http.Header{}); !checkout.IsCode(err, checkout.EValidationFailed) {
			t.Errorf("a webhook that is not JSON = %v; want validation_failed", err)
		}
		if _, err := f.svc.AcquirerWebhook(ctx, "stripe", checkout.NewStoreID(), foreign, http.Header{}); !checkout.IsCode(err, checkout.ENotFound) {
			t.Errorf("a webhook of a store without Stripe = %v; want not_found", err)
		}
		if _, err := f.svc.AcquirerWebhook(ctx, "adyen", f.m.ID, foreign, http.Header{}); !checkout.IsCode(err, checkout.ENotFound) {
			t.Errorf("a webhook of another acquirer = %v; want not_found", err)
		}
	})
}

// A decline is canceled at Stripe before the payment fails, so nothing can
// confirm it later; the session is free for another card, which pays.
func TestAcquirerDeclineThenAnotherCard(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newCardFixture(t, db, stripefake.Options{})
		id := f.liveSession(t)
		first := f.start(t, id).Payment
		if err := f.fake.Confirm(first.Acquirer.ID, stripefake.CardInsufficientFunds); err == nil {
			t.Fatal("a confirm with a declined card succeeded")
		}
		out := f.back(t, id)
		if out.Payment.ID != first.ID || out.Payment.Status != checkout.PaymentFailed || *out.Payment.FailureCode != checkout.FailInsufficientFunds ||
			out.Session.Status != checkout.StatusOpen || out.Session.ActivePaymentID != nil {
			t.Fatalf("after the decline: payment %+v, session %+v", out.Payment, out.Session)
		}
		if got := f.fake.PaymentStatus(first.Acquirer.ID); got != "canceled" {
			t.Errorf("the declined PaymentIntent is %s at Stripe; want canceled", got)
		}
		// The return again (a reload) says the same, and finds the same
		// payment.
		if again := f.back(t, id); again.Payment.ID != first.ID || again.Payment.Status != checkout.PaymentFailed {
			t.Errorf("the return reloaded = %+v", again.Payment)
		}
		second := f.start(t, id).Payment
		if second.ID == first.ID || second.Acquirer.ID == first.Acquirer.ID {
			t.Fatalf("the second card's payment = %s at %s; want a new one", second.ID, second.Acquirer.ID)
		}
		if err := f.fake.Confirm(second.Acquirer.ID, stripefake.CardMastercard); err != nil {
			t.Fatal(err)
		}
		f.back(t, id)
		if p := f.paidOnce(t, id); p.ID != second.ID {
			t.Errorf("paid by %s; want %s", p.ID, second.ID)
		}
		// The first PaymentIntent's events, late and out of order (its
		// cancel's, then its decline's), change nothing.
		for _, typ := range []string{"payment_intent.canceled", "payment_intent.payment_failed"} {
			for _, err := range f.deliver(t, typ, first.Acquirer.ID, stripeWebhookSecret) {
				if err != nil {
					t.Errorf("%s late = %v", typ, err)
				}
			}
		}
		if p := f.payment(t, first.ID); p.Status != checkout.PaymentFailed || *p.FailureCode != checkout.FailInsufficientFunds {
			t.Errorf("the first payment after late events = %s %v", p.Status, *p.FailureCode)
		}
		if ev := f.eventCounts(t, id); ev[checkout.EventPaymentFailed] != 1 || ev[checkout.EventPaymentSucceeded] != 1 || ev[checkout.EventCheckoutCompleted] != 1 {
			t.Errorf("events = %v; want one payment.failed, one payment.succeeded, one checkout.completed", ev)
		}
	})
}

// 3-D Secure: the payment holds the session while the buyer confirms with
// their bank, is looked up every minute by the payments job, and completes
// when the bank confirms (the webhook); one never confirmed is canceled at
// Stripe when its hold is over and fails, authentication_failed.
func TestAcquirerThreeDSecure(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newCardFixture(t, db, stripefake.Options{})
		id := f.liveSession(t)
		pi := f.start(t, id).Payment.Acquirer.ID
		if err := f.fake.Confirm(pi, stripefake.CardAuthenticationRequired); err != nil {
			t.Fatal(err)
		}
		if out := f.back(t, id); out.Payment.Status != checkout.PaymentProcessing || out.Session.ActivePaymentID == nil {
			t.Fatalf("while 3-D Secure waits: %+v; want it holding the session", out.Payment)
		}
		f.clock.Advance(service.AcquirerLook)
		f.processDue(t)
		if p := f.payment(t, *f.reload(t, id).ActivePaymentID); p.Status != checkout.PaymentProcessing {
			t.Fatalf("after a look: %s", p.Status)
		}
		if err := f.fake.CompleteAction(pi, true); err != nil {
			t.Fatal(err)
		}
		for _, err := range f.deliver(t, "payment_intent.succeeded", pi, stripeWebhookSecret) {
			if err != nil {
				t.Fatal(err)
			}
		}
		f.paidOnce(t, id)

		// Left at 3-D Secure: the job cancels it once its hold is over.
		gone := f.liveSession(t)
		abandoned := f.start(t, gone).Payment
		if err := f.fake.Confirm(abandoned.Acquirer.ID, stripefake.CardAuthenticationRequired); err != nil {
			t.Fatal(err)
		}
		for f.clock.Now().Before(abandoned.CreatedAt.Add(service.AcquirerHold)) {
			f.clock.Advance(service.AcquirerLook)
			f.processDue(t)
		}
		p := f.payment(t, abandoned.ID)
		if p.Status != checkout.PaymentFailed || *p.FailureCode != checkout.FailAuthenticationFailed || f.reload(t, gone).ActivePaymentID != nil {
			t.Errorf("after its hold: %s %v; want failed, authentication_failed, the session free", p.Status, p.FailureCode)
		}
		if got := f.fake.PaymentStatus(abandoned.Acquirer.ID); got != "canceled" {
			t.Errorf("at Stripe: %s; want canceled", got)
		}
	})
}

// Stripe not answering is never a failure: a create whose answer was lost
// leaves the payment holding the session, and the buyer's next try gets
// the same PaymentIntent (one at Stripe); a lookup that fails leaves it
// processing, and the payments job learns the outcome once Stripe answers.
func TestAcquirerUnknownOutcome(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newCardFixture(t, db, stripefake.Options{})
		id := f.liveSession(t)
		f.fake.LoseNextAnswer("/v1/payment_intents")
		if _, err := f.svc.StartAcquirerPayment(ctx, id); !checkout.IsCode(err, checkout.EUnavailable) {
			t.Fatalf("a start whose create answer was lost = %v; want service_unavailable", err)
		}
		held := f.payments(t, id)[checkout.PaymentProcessing]
		if len(held) != 1 || held[0].Acquirer == nil || held[0].Acquirer.ID != "" {
			t.Fatalf("payments = %v; want one, processing, its PaymentIntent not known yet", f.payments(t, id))
		}
		st := f.start(t, id)
		if st.Payment.ID != held[0].ID {
			t.Errorf("the next try = %s; want %s again", st.Payment.ID, held[0].ID)
		}
		intents := map[string]bool{}
		for _, r := range f.fake.Requests() {
			if r.Method == "POST" && r.Path == "/v1/payment_intents" {
				intents[r.IdempotencyKey] = true
			}
		}
		if len(intents) != 1 {
			t.Errorf("creates with keys %v; want one key", intents)
		}
		if err := f.fake.Confirm(st.Payment.Acquirer.ID, stripefake.CardVisa); err != nil {
			t.Fatal(err)
		}
		f.fake.FailNext("/v1/payment_intents/"+st.Payment.Acquirer.ID, http.StatusServiceUnavailable)
		if out := f.back(t, id); out.Payment.Status != checkout.PaymentProcessing {
			t.Fatalf("a return whose lookup failed = %s; want processing", out.Payment.Status)
		}
		f.clock.Advance(service.AcquirerLook)
		f.processDue(t)
		f.paidOnce(t, id)
	})
}

// A live card payment is refunded through Stripe: in part (succeeded at
// once, payment.refunded), then a refund of the failing refund card that
// Stripe says succeeded and later failed: the webhook reverses it, the
// amount the merchant's again.
func TestAcquirerRefunds(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newCardFixture(t, db, stripefake.Options{RefundFailSucceedsFirst: true, Delay: time.Minute})
		_, p := f.paidByCard(t, stripefake.CardVisa)
		if err := f.svc.RefundBlock(p); err != nil {
			t.Fatalf("RefundBlock = %v", err)
		}
		out, err := f.svc.RefundPayment(ctx, service.RefundRequest{PaymentID: p.ID, Params: checkout.RefundParams{Amount: amount(500)}, By: operator})
		if err != nil || out.Refund.Status != checkout.RefundSucceeded || out.Payment.AmountRefunded != 500 || out.Refund.Acquirer == nil {
			t.Fatalf("RefundPayment = %+v, %v", out, err)
		}
		if got := f.refundedEvents(t, p.ID); len(got) != 0 {
			t.Errorf("test-mode refunded events %v; want none (the payment is live)", got)
		}
		r, err := f.db.RefundGet(ctx, out.Refund.ID)
		if err != nil || r.Acquirer == nil || r.Acquirer.ID == "" {
			t.Fatalf("the refund = %+v, %v; want its Stripe id noted", r, err)
		}

		_, q := f.paidByCard(t, stripefake.CardRefundFail)
		out, err = f.svc.RefundPayment(ctx, service.RefundRequest{PaymentID: q.ID, By: operator})
		if err != nil || out.Refund.Status != checkout.RefundSucceeded || out.Payment.Status != checkout.PaymentRefunded {
			t.Fatalf("RefundPayment of the failing card = %+v, %v; want succeeded first", out, err)
		}
		f.clock.Advance(time.Minute)
		f.fake.Tick()
		for _, err := range f.deliver(t, "charge.refund.updated", out.Refund.Acquirer.ID, stripeWebhookSecret) {
			if err != nil {
				t.Fatal(err)
			}
		}
		r, _ = f.db.RefundGet(ctx, out.Refund.ID)
		q = f.payment(t, q.ID)
		if r.Status != checkout.RefundFailed || q.AmountRefunded != 0 || q.Status != checkout.PaymentSucceeded {
			t.Errorf("after Stripe failed the refund: refund %s, payment %s with %d refunded; want failed, succeeded with 0", r.Status, q.Status, q.AmountRefunded)
		}
		if ev := f.eventCounts(t, q.SessionID); ev[checkout.EventPaymentRefunded] != 2 {
			t.Errorf("events = %v; want payment.refunded twice (refunded, then not)", ev)
		}
		// A second delivery changes nothing.
		f.deliver(t, "charge.refund.updated", out.Refund.Acquirer.ID, stripeWebhookSecret)
		if ev := f.eventCounts(t, q.SessionID); ev[checkout.EventPaymentRefunded] != 2 {
			t.Errorf("events after a repeated webhook = %v", ev)
		}
	})
}

// A dispute opened at Stripe reaches checkoutd through its webhook (a
// dispute names no payment of its own: its lookup does): the payment is
// disputed (payment.disputed, Stripe's reason and deadline), evidence is
// refused here, and Stripe's decision closes it (payment.dispute_closed),
// lost with the amount and fee taken from net; repeated webhooks change
// nothing.
func TestAcquirerDispute(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newCardFixture(t, db, stripefake.Options{})
		id, p := f.paidByCard(t, stripefake.CardVisa)
		pi := p.Acquirer.ID
		dp, err := f.fake.OpenDispute(pi, "product_not_received")
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			for _, err := range f.deliver(t, "charge.dispute.created", dp, stripeWebhookSecret) {
				if err != nil {
					t.Fatal(err)
				}
			}
		}
		d, err := f.svc.DisputeOfPayment(ctx, p.ID)
		if err != nil || d == nil || d.Status != checkout.DisputeNeedsResponse || d.Reason != checkout.DisputeProductNotReceived || d.DueAt != nil {
			t.Fatalf("the dispute = %+v, %v", d, err)
		}
		_, err = f.svc.SubmitDisputeEvidence(ctx, service.DisputeEvidenceRequest{DisputeID: d.ID, By: operator,
			Evidence: checkout.DisputeEvidence{UncategorizedText: "winning_evidence"}})
		if !checkout.IsCode(err, checkout.EDisputeClosed) {
			t.Errorf("evidence for Stripe's dispute = %v; want dispute_not_open (answered at Stripe)", err)
		}
		if err := f.fake.SetDisputeStatus(dp, "lost"); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			for _, err := range f.deliver(t, "charge.dispute.closed", dp, stripeWebhookSecret) {
				if err != nil {
					t.Fatal(err)
				}
			}
		}
		p = f.payment(t, p.ID)
		d, _ = f.svc.DisputeOfPayment(ctx, p.ID)
		if d.Status != checkout.DisputeLost || p.Status != checkout.PaymentDisputeLost {
			t.Errorf("after Stripe decided: dispute %s, payment %s; want lost, dispute_lost", d.Status, p.Status)
		}
		if ev := f.eventCounts(t, id); ev[checkout.EventPaymentDisputed] != 1 || ev[checkout.EventPaymentDisputeClosed] != 1 {
			t.Errorf("events = %v; want one payment.disputed, one payment.dispute_closed", ev)
		}
	})
}

// logged reports whether the fixture's log holds s.
func (f *cardFixture) logged(s string) bool { return strings.Contains(f.logBuf.String(), s) }

// A card payment at Stripe racing a crypto payment of the same session:
// exactly one pays it. Crypto that arrives while the card payment holds
// the session is recorded failed, duplicate_payment, and marked to be
// refunded; the card then pays. A card payment asked for while crypto
// confirms is declined before anything is made at Stripe. (The race runs
// in test mode, whose crypto network is simulated, with the store's Stripe
// account set up for test mode too.)
func TestAcquirerRacesCrypto(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newCardFixture(t, db, stripefake.Options{})
		f.svc.UseAcquirer(f.m.ID, checkout.ModeTest, f.conn, pay.AcquirerCredentials{SecretKey: stripeSecretKey,
			PublishableKey: stripePublishableKey, WebhookSecret: stripeWebhookSecret})
		id := f.create(t).ID
		q := f.quote(t, id, "BTC")
		card := f.start(t, id).Payment
		late, err := f.svc.CryptoReceived(ctx, id, "BTC", "tx-"+q.Address)
		if err != nil {
			t.Fatal(err)
		}
		if late.Status != checkout.PaymentFailed || *late.FailureCode != checkout.FailDuplicatePayment || !late.RefundDue() {
			t.Errorf("crypto while the card holds the session = %s %v, refund due %v; want failed duplicate_payment, to be refunded",
				late.Status, *late.FailureCode, late.RefundDue())
		}
		if err := f.fake.Confirm(card.Acquirer.ID, stripefake.CardVisa); err != nil {
			t.Fatal(err)
		}
		f.back(t, id)
		if p := f.paidOnce(t, id); p.ID != card.ID {
			t.Errorf("paid by %s; want the card %s", p.ID, card.ID)
		}

		// Crypto first: the card is declined, and Stripe is not asked.
		other := f.create(t).ID
		oq := f.quote(t, other, "BTC")
		if _, err := f.svc.CryptoReceived(ctx, other, "BTC", "tx-"+oq.Address); err != nil {
			t.Fatal(err)
		}
		before := len(f.fake.Requests())
		if _, err := f.svc.StartAcquirerPayment(ctx, other); !errors.Is(err, checkout.DeclineInProgress) {
			t.Errorf("a card while crypto confirms = %v; want declined, in progress", err)
		}
		if n := len(f.fake.Requests()); n != before {
			t.Errorf("Stripe was asked %d times for the declined card", n-before)
		}
	})
}

// An unsigned event leads to a lookup only for a payment that waits for
// its outcome: about a payment settled already, or a dispute, it makes
// checkoutd ask Stripe nothing, so that anyone posting events cannot make
// it call Stripe at will.
func TestAcquirerUnsignedEventsAskNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newCardFixture(t, db, stripefake.Options{})
		id, p := f.paidByCard(t, stripefake.CardVisa)
		pi := p.Acquirer.ID
		dp, err := f.fake.OpenDispute(pi, "fraudulent")
		if err != nil {
			t.Fatal(err)
		}
		before := len(f.fake.Requests())
		for _, typ := range []struct{ typ, object string }{{"payment_intent.succeeded", pi}, {"charge.dispute.created", dp}} {
			for _, err := range f.deliver(t, typ.typ, typ.object, stripeOtherSecret) {
				if err == nil || err.Error() != "not verified" {
					t.Errorf("%s unsigned = %v; want not verified", typ.typ, err)
				}
			}
		}
		if n := len(f.fake.Requests()); n != before {
			t.Errorf("unsigned events made checkoutd ask Stripe %d times", n-before)
		}
		if d, _ := f.svc.DisputeOfPayment(ctx, f.paidOnce(t, id).ID); d != nil {
			t.Errorf("an unsigned dispute event opened %+v", d)
		}
	})
}

package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/logtest"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// These tests pay sessions through the service on both databases, with the
// test-mode simulators behind a card processor that counts its charges and
// can hold one in flight: the proof that a buyer is charged once, and a
// session paid once, whatever races.

// cards is the test card simulator, counted, with a gate a test may close
// to keep charges in flight.
type cards struct {
	*pay.TestCards
	mu      sync.Mutex
	charged []string // payment ids, in the order charged
	gate    chan struct{}
	inside  chan string // a charge reached the processor
	// unknown makes Charge fail after charging: the outcome is lost on
	// the way back, as when a node dies mid-charge.
	unknown bool
	// afterCharge, when set, runs once a charge is made, before it answers.
	afterCharge func()
}

func newCards() *cards { return &cards{TestCards: pay.NewTestCards()} }

func (c *cards) Charge(ctx context.Context, ch pay.CardCharge) (pay.CardResult, error) {
	c.mu.Lock()
	c.charged = append(c.charged, ch.PaymentID)
	gate, inside, unknown := c.gate, c.inside, c.unknown
	c.mu.Unlock()
	if inside != nil {
		inside <- ch.PaymentID
	}
	if gate != nil {
		<-gate
	}
	res, err := c.TestCards.Charge(ctx, ch)
	c.mu.Lock()
	after := c.afterCharge
	c.mu.Unlock()
	if after != nil {
		after()
	}
	if unknown {
		return pay.CardResult{}, errors.New("processor did not answer")
	}
	return res, err
}

func (c *cards) loseAnswers(lose bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.unknown = lose
}

// onCharge has fn run once each charge is made, before it answers; nil
// stops it.
func (c *cards) onCharge(fn func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.afterCharge = fn
}

func (c *cards) charges() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.charged)
}

// hold makes the next charges wait until the returned func is called, and
// announces each on the returned channel.
func (c *cards) hold() (inside <-chan string, release func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gate, c.inside = make(chan struct{}), make(chan string, 100)
	gate := c.gate
	return c.inside, func() {
		c.mu.Lock()
		c.gate, c.inside = nil, nil
		c.mu.Unlock()
		close(gate)
	}
}

// skins is the simulated skins platform with faults a test may inject:
// the answer of a trade the platform made is lost, a trade never reaches
// the platform, or lookups fail.
type skins struct {
	*pay.TestSkins
	lose, drop, lookupFails atomic.Bool
	trades                  atomic.Int64 // trades that reached the platform
	lookups                 atomic.Int64 // lookups asked, answered or not
}

func (s *skins) Trade(ctx context.Context, r pay.TradeRequest) (pay.Trade, error) {
	if s.drop.Load() {
		return pay.Trade{}, errors.New("connection reset")
	}
	s.trades.Add(1)
	tr, err := s.TestSkins.Trade(ctx, r)
	if err == nil && s.lose.Load() {
		return pay.Trade{}, context.DeadlineExceeded
	}
	return tr, err
}

func (s *skins) Lookup(ctx context.Context, paymentID string) (pay.Trade, bool, error) {
	s.lookups.Add(1)
	if s.lookupFails.Load() {
		return pay.Trade{}, false, errors.New("platform unavailable")
	}
	return s.TestSkins.Lookup(ctx, paymentID)
}

// payFixture is a fixture whose service has payment processors.
type payFixture struct {
	*fixture
	cards *cards
	skins *skins
	// log holds what every node of the fixture logged.
	log    *slog.Logger
	logBuf *logtest.Buffer
}

func newPayFixture(t *testing.T, db *store.DB) *payFixture {
	t.Helper()
	f := newFixture(t, db)
	pf := &payFixture{fixture: f, cards: newCards(), skins: &skins{TestSkins: pay.NewTestSkins()}}
	pf.log, pf.logBuf = logtest.Capture()
	f.svc = pf.node(db)
	return pf
}

// node returns a service on db, as another node would run it, with the
// fixture's clocks and processors.
func (f *payFixture) node(db *store.DB) *service.Service {
	return service.New(service.Config{
		Store: db, Now: f.clock.Now, CacheNow: f.cache.Now, CheckoutBaseURL: "https://pay.example", Logger: f.log, SecretsKey: testSecretsKey,
		Processors: pay.Registry{Test: pay.Processors{Card: f.cards, Crypto: pay.TestNetwork{}, Skins: f.skins}},
	})
}

var ctx = context.Background()

func card(number string) pay.CardForm {
	return pay.CardForm{Number: number, Expiry: "12/30", CVC: "123", Name: "Jo Buyer"}
}

func (f *payFixture) session(t *testing.T) *checkout.Session {
	t.Helper()
	s, err := f.db.SessionGet(ctx, f.create(t).ID)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (f *payFixture) reload(t *testing.T, id string) *checkout.Session {
	t.Helper()
	s, err := f.db.SessionGet(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// payments returns a session's payments by status.
func (f *payFixture) payments(t *testing.T, id string) map[checkout.PaymentStatus][]*checkout.Payment {
	t.Helper()
	ps, err := f.db.PaymentListBySession(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	out := map[checkout.PaymentStatus][]*checkout.Payment{}
	for _, p := range ps {
		out[p.Status] = append(out[p.Status], p)
	}
	return out
}

// eventCounts counts the store's events of each type about session id
// (the session itself, or one of its payments), in the session's mode.
func (f *payFixture) eventCounts(t *testing.T, id string) map[string]int {
	t.Helper()
	es, err := f.db.EventList(ctx, checkout.EventListParams{MerchantID: f.m.ID, Mode: f.reload(t, id).Mode, Limit: 100000})
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, e := range es {
		var obj struct {
			ID         string `json:"id"`
			CheckoutID string `json:"checkout_id"`
		}
		if err := json.Unmarshal(e.Object, &obj); err != nil {
			t.Fatal(err)
		}
		if obj.ID == id || obj.CheckoutID == id {
			n[e.Type]++
		}
	}
	return n
}

// paidOnce checks that session id was paid by exactly one payment, with one
// payment.succeeded and one checkout.completed, and returns that payment.
func (f *payFixture) paidOnce(t *testing.T, id string) *checkout.Payment {
	t.Helper()
	s := f.reload(t, id)
	succeeded := f.payments(t, id)[checkout.PaymentSucceeded]
	if s.Status != checkout.StatusComplete || len(succeeded) != 1 || s.PaymentID == nil || *s.PaymentID != succeeded[0].ID {
		t.Fatalf("session %s: %s, payment %v, %d succeeded payments; want complete, paid by its one succeeded payment", id, s.Status, s.PaymentID, len(succeeded))
	}
	if ev := f.eventCounts(t, id); ev[checkout.EventCheckoutCompleted] != 1 || ev[checkout.EventPaymentSucceeded] != 1 {
		t.Errorf("events of %s = %v; want one checkout.completed and one payment.succeeded", id, ev)
	}
	return succeeded[0]
}

func TestPayByCardTestCards(t *testing.T) {
	declines := map[string]string{
		"4000000000000002": checkout.FailCardDeclined,
		"4000000000009995": checkout.FailInsufficientFunds,
		"4000000000000069": checkout.FailExpiredCard,
		"4000000000000127": checkout.FailIncorrectCVC,
		"4000000000000119": checkout.FailProcessingError,
		"4111111111111111": checkout.FailTestModeLiveCard,
	}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPayFixture(t, db)
		s := f.session(t)
		for number, code := range declines {
			out, err := f.svc.PayByCard(ctx, s.ID, card(number))
			if err != nil {
				t.Fatalf("PayByCard(%s) = %v", number, err)
			}
			if p := out.Payment; p.Status != checkout.PaymentFailed || *p.FailureCode != code || p.Fee != 0 || *p.CardLast4 != number[12:] {
				t.Errorf("PayByCard(%s): payment %s, code %v, fee %d; want failed with %s", number, p.Status, p.FailureCode, p.Fee, code)
			}
			if got := f.reload(t, s.ID); got.Status != checkout.StatusOpen || got.PaymentInProgress() || got.PaymentID != nil {
				t.Fatalf("after %s the session is %s, in progress %v; want open and free for another try", number, got.Status, got.PaymentInProgress())
			}
		}
		if ev := f.eventCounts(t, s.ID); ev[checkout.EventPaymentFailed] != len(declines) || ev[checkout.EventCheckoutCompleted] != 0 {
			t.Errorf("events after the declines = %v; want %d payment.failed", ev, len(declines))
		}

		f.clock.Advance(10 * time.Minute)
		out, err := f.svc.PayByCard(ctx, s.ID, card("4242 4242 4242 4242"))
		if err != nil {
			t.Fatal(err)
		}
		p := f.paidOnce(t, s.ID)
		sess := f.reload(t, s.ID)
		if out.Payment.ID != p.ID || !sess.CompletedAt.Equal(t0.Add(10*time.Minute)) {
			t.Errorf("completed at %v by %s; want %v by %s", sess.CompletedAt, *sess.PaymentID, t0.Add(10*time.Minute), out.Payment.ID)
		}
		// 2.9% of 1500 is 43.5, rounded to 44, plus 30.
		if p.Fee != 74 || p.Net() != 1500-74 || *p.CardBrand != "visa" || *p.CardLast4 != "4242" || *p.BuyerCountry != "US" {
			t.Errorf("payment = fee %d, net %d, %s %s %s", p.Fee, p.Net(), *p.CardBrand, *p.CardLast4, *p.BuyerCountry)
		}
		// A paid session takes no other card, and the card is not charged.
		before := len(f.cards.charges())
		if _, err := f.svc.PayByCard(ctx, s.ID, card("5555555555554444")); !errors.Is(err, checkout.DeclineComplete) {
			t.Errorf("PayByCard on a paid session = %v; want %v", err, checkout.DeclineComplete)
		}
		if got := len(f.cards.charges()); got != before {
			t.Errorf("a paid session's card was charged")
		}
	})
}

// TestPayByCardEvents checks what the events of a card payment carry.
func TestPayByCardEvents(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPayFixture(t, db)
		s := f.session(t)
		if _, err := f.svc.PayByCard(ctx, s.ID, card("4242424242424242")); err != nil {
			t.Fatal(err)
		}
		for _, e := range f.events(t, "") {
			switch e.Type {
			case checkout.EventPaymentSucceeded:
				var p checkout.PaymentJSON
				json.Unmarshal(e.Object, &p)
				if p.Object != "payment" || p.Status != checkout.PaymentSucceeded || p.CheckoutID != s.ID || p.Amount != 1500 || p.Fee != 74 || p.Net != 1426 || *p.CardLast4 != "4242" {
					t.Errorf("payment.succeeded carries %+v", p)
				}
			case checkout.EventCheckoutCompleted:
				var v checkout.SessionJSON
				json.Unmarshal(e.Object, &v)
				if v.Status != checkout.StatusComplete || v.PaymentID == nil || v.CompletedAt == nil {
					t.Errorf("checkout.completed carries a session %s, payment %v, completed %v", v.Status, v.PaymentID, v.CompletedAt)
				}
			}
		}
	})
}

func TestPayByCardValidation(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPayFixture(t, db)
		s := f.session(t)
		form := card("4242424242424241")
		form.Email = "not an email"
		_, err := f.svc.PayByCard(ctx, s.ID, form)
		var ce *checkout.Error
		if !errors.As(err, &ce) || ce.Code != checkout.EValidationFailed || len(ce.Details) != 2 {
			t.Fatalf("PayByCard with a bad number and email = %v; want validation_failed with two details", err)
		}
		if len(f.cards.charges()) != 0 || len(f.payments(t, s.ID)) != 0 {
			t.Errorf("an invalid form reached the processor or left a payment")
		}
		if _, err := f.svc.PayByCard(ctx, "cs_nope", card("4242424242424242")); !checkout.IsCode(err, checkout.ECheckoutNotFound) {
			t.Errorf("PayByCard of an unknown session = %v; want checkout_not_found", err)
		}
		// The receipt goes where the buyer asked.
		form = card("4242424242424242")
		form.Email = "other@example.com"
		out, err := f.svc.PayByCard(ctx, s.ID, form)
		if err != nil || *out.Payment.ReceiptEmail != "other@example.com" {
			t.Errorf("PayByCard with an email = %v; receipt to %v", err, out.Payment.ReceiptEmail)
		}
	})
}

// TestCardAttemptLimit: after 10 failed card payments a session refuses
// cards without charging them, and still takes other methods.
func TestCardAttemptLimit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPayFixture(t, db)
		s := f.session(t)
		for i := range checkout.MaxFailedCardAttempts {
			if _, err := f.svc.PayByCard(ctx, s.ID, card("4000000000000002")); err != nil {
				t.Fatalf("attempt %d = %v", i+1, err)
			}
		}
		if _, err := f.svc.PayByCard(ctx, s.ID, card("4242424242424242")); !errors.Is(err, checkout.DeclineTooManyRetries) {
			t.Errorf("attempt %d = %v; want %v", checkout.MaxFailedCardAttempts+1, err, checkout.DeclineTooManyRetries)
		}
		if got := len(f.cards.charges()); got != checkout.MaxFailedCardAttempts {
			t.Errorf("charges = %d; want %d: the refused attempt must not reach the processor", got, checkout.MaxFailedCardAttempts)
		}
		inv, _ := f.svc.SkinsInventory(ctx, s.ID)
		if _, err := f.svc.PayBySkins(ctx, s.ID, []string{inv[7].ID}); err != nil {
			t.Errorf("skins after the card limit = %v; want the trade taken", err)
		}
	})
}

// TestDisputeCard: 4000 0000 0000 0259 succeeds, then the payments job opens
// a dispute 30 seconds later, once.
func TestDisputeCard(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPayFixture(t, db)
		s := f.session(t)
		if _, err := f.svc.PayByCard(ctx, s.ID, card("4000000000000259")); err != nil {
			t.Fatal(err)
		}
		p := f.paidOnce(t, s.ID)
		f.clock.Advance(checkout.DisputeDelay - time.Second)
		f.processDue(t)
		if got := f.payments(t, s.ID)[checkout.PaymentSucceeded]; len(got) != 1 {
			t.Fatalf("a second before the dispute the payment is not succeeded")
		}
		f.clock.Advance(time.Second)
		f.processDue(t)
		f.processDue(t)
		disputed := f.payments(t, s.ID)[checkout.PaymentDisputed]
		if len(disputed) != 1 || disputed[0].ID != p.ID || disputed[0].DueAt != nil {
			t.Fatalf("payments after the dispute = %v; want %s disputed, nothing more due", f.payments(t, s.ID), p.ID)
		}
		if ev := f.eventCounts(t, s.ID); ev[checkout.EventPaymentDisputed] != 1 {
			t.Errorf("events = %v; want one payment.disputed", ev)
		}
		if got := f.reload(t, s.ID).Status; got != checkout.StatusComplete {
			t.Errorf("a disputed payment's session is %s; want complete (final)", got)
		}
	})
}

func (f *payFixture) processDue(t *testing.T) int {
	t.Helper()
	n, err := f.svc.ProcessAllDuePayments(ctx)
	if err != nil {
		t.Fatalf("ProcessAllDuePayments = %v", err)
	}
	return n
}

func (f *payFixture) quote(t *testing.T, id, coin string) *checkout.CryptoQuote {
	t.Helper()
	q, err := f.svc.CryptoQuote(ctx, id, coin)
	if err != nil {
		t.Fatalf("CryptoQuote(%s) = %v", coin, err)
	}
	return q
}

// TestCryptoPayment follows a BTC payment broadcast five minutes before the
// hour ends: open past expires_at while it confirms, complete when the
// payments job sees its confirmations, with nobody on the page.
func TestCryptoPayment(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPayFixture(t, db)
		s := f.session(t)
		q := f.quote(t, s.ID, "BTC")
		// $15.00 at $60,000.
		if q.AmountBase != "25000" || q.Address == "" {
			t.Errorf("quote = %s to %q; want 25000 satoshi", q.AmountBase, q.Address)
		}
		f.clock.Advance(time.Minute)
		if again := f.quote(t, s.ID, "btc"); *again != *q {
			t.Errorf("second quote = %+v; want the first %+v", again, q)
		}

		f.clock.Advance(54 * time.Minute)
		p, err := f.svc.SimulateCryptoPayment(ctx, s.ID, "BTC")
		if err != nil {
			t.Fatal(err)
		}
		if p.Status != checkout.PaymentProcessing || p.Crypto.AmountBase != "25000" || p.Crypto.Confirmations != 2 {
			t.Errorf("payment = %s, %+v", p.Status, p.Crypto)
		}
		// A card cannot pay the session now, and is not charged.
		if _, err := f.svc.PayByCard(ctx, s.ID, card("4242424242424242")); !errors.Is(err, checkout.DeclineInProgress) {
			t.Errorf("card during the crypto payment = %v; want %v", err, checkout.DeclineInProgress)
		}
		if len(f.cards.charges()) != 0 {
			t.Errorf("the card was charged")
		}
		// Past the hour, the job and reads leave it open.
		f.clock.Advance(19*time.Minute + 59*time.Second)
		if n, err := f.svc.ExpireAll(ctx); n != 0 || err != nil {
			t.Errorf("ExpireAll = %d, %v; want nothing expired", n, err)
		}
		if n := f.processDue(t); n != 0 {
			t.Errorf("ProcessAllDuePayments a second before the 2nd confirmation changed %d payments", n)
		}
		if got := f.reload(t, s.ID).Status; got != checkout.StatusOpen {
			t.Fatalf("session = %s; want open", got)
		}
		pr, _ := f.svc.CryptoProgressOf(ctx, p)
		if pr != (service.CryptoProgress{Confirmations: 1, Needed: 2}) {
			t.Errorf("progress = %+v; want 1 of 2", pr)
		}
		f.clock.Advance(time.Second)
		if n := f.processDue(t); n != 1 {
			t.Errorf("ProcessAllDuePayments at the 2nd confirmation changed %d payments; want 1", n)
		}
		paid := f.paidOnce(t, s.ID)
		if paid.ID != p.ID || paid.Fee != 15 { // 1% of 1500
			t.Errorf("paid by %s with fee %d; want %s and 15", paid.ID, paid.Fee, p.ID)
		}
		if ev := f.eventCounts(t, s.ID); ev[checkout.EventCheckoutExpired] != 0 {
			t.Errorf("events = %v; want no checkout.expired", ev)
		}
	})
}

// TestCryptoEveryCoinConfirmsOnItsTimescale pays a session in each coin and
// moves the clock to the end of its confirmations.
func TestCryptoEveryCoinConfirmsOnItsTimescale(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPayFixture(t, db)
		for _, c := range checkout.Coins {
			s := f.session(t)
			f.quote(t, s.ID, c.Code)
			if _, err := f.svc.SimulateCryptoPayment(ctx, s.ID, c.Code); err != nil {
				t.Fatal(err)
			}
			f.clock.Advance(c.ConfirmationTime() - time.Millisecond)
			f.processDue(t)
			if got := f.reload(t, s.ID).Status; got != checkout.StatusOpen {
				t.Errorf("%s just before %v: %s; want open", c.Code, c.ConfirmationTime(), got)
			}
			f.clock.Advance(time.Millisecond)
			f.processDue(t)
			f.paidOnce(t, s.ID)
		}
	})
}

// TestLateCrypto: money that arrives for a session that cannot take it is
// recorded as a failed payment, to be refunded, and changes nothing else.
func TestLateCrypto(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPayFixture(t, db)

		expired := f.session(t)
		q := f.quote(t, expired.ID, "ETH")
		f.clock.Advance(time.Hour)
		if _, err := f.svc.ExpireAll(ctx); err != nil {
			t.Fatal(err)
		}
		p, err := f.svc.CryptoReceived(ctx, expired.ID, "ETH", "0xlate")
		if err != nil {
			t.Fatal(err)
		}
		if p.Status != checkout.PaymentFailed || *p.FailureCode != checkout.FailSessionExpired || p.Crypto.AmountBase != q.AmountBase {
			t.Errorf("late payment = %s %v; want failed with session_expired", p.Status, p.FailureCode)
		}
		if got := f.reload(t, expired.ID).Status; got != checkout.StatusExpired {
			t.Errorf("session = %s; want expired (final)", got)
		}
		if ev := f.eventCounts(t, expired.ID); ev[checkout.EventPaymentFailed] != 1 || ev[checkout.EventCheckoutCompleted] != 0 {
			t.Errorf("events = %v; want one payment.failed", ev)
		}
		// The test wallet sends nothing to a paid session; a real network
		// report of more money is recorded for refund.
		paid := f.session(t)
		f.quote(t, paid.ID, "SOL")
		if _, err := f.svc.PayByCard(ctx, paid.ID, card("4242424242424242")); err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.SimulateCryptoPayment(ctx, paid.ID, "SOL"); !errors.Is(err, checkout.DeclineComplete) {
			t.Errorf("simulated payment of a paid session = %v; want %v", err, checkout.DeclineComplete)
		}
		p, err = f.svc.CryptoReceived(ctx, paid.ID, "SOL", "solsig")
		if err != nil || p.Status != checkout.PaymentFailed || *p.FailureCode != checkout.FailSessionCompleted {
			t.Errorf("crypto for a paid session = %v, %v; want failed with session_completed", err, p)
		}
		f.paidOnce(t, paid.ID)
	})
}

// TestCryptoReceivedOncePerTransaction: a network reporting one transaction
// many times, at once, records one payment.
func TestCryptoReceivedOncePerTransaction(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPayFixture(t, db)
		s := f.session(t)
		f.quote(t, s.ID, "LTC")
		var wg sync.WaitGroup
		ids := make([]string, 8)
		for i := range ids {
			wg.Go(func() {
				p, err := f.svc.CryptoReceived(ctx, s.ID, "LTC", "ltctx1")
				if err != nil {
					t.Errorf("CryptoReceived = %v", err)
					return
				}
				ids[i] = p.ID
			})
		}
		wg.Wait()
		if distinct := slices.Compact(slices.Sorted(slices.Values(ids))); len(distinct) != 1 {
			t.Errorf("one transaction reported 8 times became payments %v; want one", distinct)
		}
		all := f.payments(t, s.ID)
		if len(all) != 1 || len(all[checkout.PaymentProcessing]) != 1 {
			t.Errorf("payments = %v; want one, processing", all)
		}
		// Another transaction to the same address while the first confirms
		// is more money: recorded for refund.
		p, err := f.svc.CryptoReceived(ctx, s.ID, "LTC", "ltctx2")
		if err != nil || p.Status != checkout.PaymentFailed || *p.FailureCode != checkout.FailDuplicatePayment {
			t.Errorf("a second transaction = %v, %+v; want failed with duplicate_payment", err, p)
		}
	})
}

// TestSkinsPayment follows a trade through its 7-day hold, with the session
// open past expires_at and nobody on the page.
func TestSkinsPayment(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPayFixture(t, db)
		s := f.session(t)
		inv, err := f.svc.SkinsInventory(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		// 30% + 45% + 20% of the total: refused before anything is traded.
		if _, err := f.svc.PayBySkins(ctx, s.ID, []string{inv[3].ID, inv[4].ID, inv[2].ID}); !checkout.IsCode(err, checkout.EValidationFailed) {
			t.Errorf("a short trade = %v; want validation_failed", err)
		}
		for _, ids := range [][]string{nil, {"skin_nope"}, {inv[7].ID, inv[7].ID}} {
			if _, err := f.svc.PayBySkins(ctx, s.ID, ids); !checkout.IsCode(err, checkout.EValidationFailed) {
				t.Errorf("trade of %v = %v; want validation_failed", ids, err)
			}
		}
		if len(f.payments(t, s.ID)) != 0 {
			t.Fatalf("refused trades left payments")
		}

		out, err := f.svc.PayBySkins(ctx, s.ID, []string{inv[3].ID, inv[4].ID, inv[2].ID, inv[1].ID})
		if err != nil {
			t.Fatal(err)
		}
		p := out.Payment
		holdEnd := t0.Add(checkout.SkinsTradeHold)
		if p.Status != checkout.PaymentProcessing || p.Skins == nil || p.Skins.HoldUntil != holdEnd.Unix() || len(p.Skins.Items) != 4 || p.DueAt == nil || !p.DueAt.Equal(holdEnd) {
			t.Fatalf("trade payment = %s, %+v, due %v; want processing until %v", p.Status, p.Skins, p.DueAt, holdEnd)
		}
		if _, err := f.svc.PayByCard(ctx, s.ID, card("4242424242424242")); !errors.Is(err, checkout.DeclineInProgress) {
			t.Errorf("card during the hold = %v; want %v", err, checkout.DeclineInProgress)
		}
		f.clock.Advance(checkout.SkinsTradeHold - time.Second)
		if n, _ := f.svc.ExpireAll(ctx); n != 0 {
			t.Errorf("ExpireAll during the hold expired %d sessions", n)
		}
		if n := f.processDue(t); n != 0 {
			t.Errorf("the job changed %d payments a second before the hold ends", n)
		}
		if got := f.reload(t, s.ID).Status; got != checkout.StatusOpen {
			t.Fatalf("a second before the hold ends the session is %s; want open", got)
		}
		f.clock.Advance(time.Second)
		f.processDue(t)
		if paid := f.paidOnce(t, s.ID); paid.ID != p.ID || paid.Fee != 75 { // 5% of 1500
			t.Errorf("paid by %s, fee %d; want %s, 75", paid.ID, paid.Fee, p.ID)
		}
	})
}

// TestConcurrentCardAttempts: many card payments of one session at once
// (tabs, double clicks): one is charged and succeeds; every other is
// declined before it reaches the processor.
func TestConcurrentCardAttempts(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPayFixture(t, db)
		s := f.session(t)
		inside, release := f.cards.hold()
		const n = 8
		results := make(chan error, n)
		start := make(chan struct{})
		for range n {
			go func() {
				<-start
				_, err := f.svc.PayByCard(ctx, s.ID, card("4242424242424242"))
				results <- err
			}()
		}
		close(start)
		// One attempt reaches the processor and stays there; the others
		// are declined meanwhile.
		first := <-inside
		declined := 0
		for range n - 1 {
			if err := <-results; !errors.Is(err, checkout.DeclineInProgress) {
				t.Errorf("a concurrent attempt = %v; want %v", err, checkout.DeclineInProgress)
			}
			declined++
		}
		release()
		if err := <-results; err != nil {
			t.Errorf("the attempt in flight = %v", err)
		}
		if got := f.cards.charges(); !slices.Equal(got, []string{first}) {
			t.Errorf("charges = %v; want only %s", got, first)
		}
		if p := f.paidOnce(t, s.ID); p.ID != first {
			t.Errorf("paid by %s; want %s", p.ID, first)
		}
		if all := f.payments(t, s.ID); len(all) != 1 {
			t.Errorf("payments = %v; want the one", all)
		}
	})
}

// TestPaymentsRaceAcrossNodes races every way of paying one session from
// two nodes (two database handles, as two processes): card against card,
// card against a simulated crypto payment, card against a skins trade.
// Exactly one wins; no loser is charged; the session is paid once.
func TestPaymentsRaceAcrossNodes(t *testing.T) {
	type attempt func(svc *service.Service, id string) error
	byCard := func(svc *service.Service, id string) error {
		_, err := svc.PayByCard(ctx, id, card("4242424242424242"))
		return err
	}
	byCrypto := func(svc *service.Service, id string) error {
		if _, err := svc.CryptoQuote(ctx, id, "SOL"); err != nil {
			return err
		}
		_, err := svc.SimulateCryptoPayment(ctx, id, "SOL")
		return err
	}
	bySkins := func(svc *service.Service, id string) error {
		inv, err := svc.SkinsInventory(ctx, id)
		if err != nil {
			return err
		}
		_, err = svc.PayBySkins(ctx, id, []string{inv[7].ID})
		return err
	}
	races := []struct {
		name string
		a, b attempt
	}{
		{"card and card", byCard, byCard},
		{"card and crypto", byCard, byCrypto},
		{"crypto and card", byCrypto, byCard},
		{"card and skins", byCard, bySkins},
		{"crypto and skins", byCrypto, bySkins},
	}
	for _, name := range storetest.Databases {
		t.Run(name, func(t *testing.T) {
			db1, db2 := openTwice(t, name)
			f := newPayFixture(t, db1)
			nodes := [2]*service.Service{f.svc, f.node(db2)}
			for _, race := range races {
				for round := range 10 {
					s := f.session(t)
					var wg sync.WaitGroup
					errs := [2]error{}
					start := make(chan struct{})
					for i, try := range []attempt{race.a, race.b} {
						wg.Go(func() {
							<-start
							errs[i] = try(nodes[i], s.ID)
						})
					}
					close(start)
					wg.Wait()
					won := 0
					for i, err := range errs {
						var d checkout.Decline
						switch {
						case err == nil:
							won++
						case errors.As(err, &d) && (d == checkout.DeclineInProgress || d == checkout.DeclineComplete):
						default:
							t.Fatalf("%s, round %d: attempt %d = %v; want success or a decline", race.name, round, i, err)
						}
					}
					if won != 1 {
						t.Fatalf("%s, round %d: %d attempts went through (%v); want exactly 1", race.name, round, won, errs)
					}
					// Let whatever went through finish: confirmations, the hold.
					f.clock.Advance(checkout.SkinsTradeHold)
					if _, err := nodes[round%2].ProcessAllDuePayments(ctx); err != nil {
						t.Fatal(err)
					}
					p := f.paidOnce(t, s.ID)
					if all := f.payments(t, s.ID); len(all) != 1 {
						t.Fatalf("%s, round %d: payments %v; want one", race.name, round, all)
					}
					if p.Method == checkout.MethodCard {
						if got := f.cards.charges(); !slices.Contains(got, p.ID) {
							t.Errorf("%s: the card that paid was not charged", race.name)
						}
					}
				}
			}
			// Every charge made belongs to the payment that paid its session.
			for _, id := range f.cards.charges() {
				p, err := db1.PaymentGet(ctx, id)
				if err != nil || p.Status != checkout.PaymentSucceeded {
					t.Errorf("charge %s: payment %v, %v; want succeeded", id, p, err)
				}
			}
		})
	}
}

// TestCryptoConfirmationRacingCard: the payments job on one node confirms a
// crypto payment while the other node takes a card for the same session.
func TestCryptoConfirmationRacingCard(t *testing.T) {
	for _, name := range storetest.Databases {
		t.Run(name, func(t *testing.T) {
			db1, db2 := openTwice(t, name)
			f := newPayFixture(t, db1)
			other := f.node(db2)
			for round := range 10 {
				s := f.session(t)
				f.quote(t, s.ID, "ETH")
				if _, err := f.svc.SimulateCryptoPayment(ctx, s.ID, "ETH"); err != nil {
					t.Fatal(err)
				}
				f.clock.Advance(time.Minute)
				var wg sync.WaitGroup
				var cardErr, jobErr error
				wg.Go(func() { _, cardErr = other.PayByCard(ctx, s.ID, card("4242424242424242")) })
				wg.Go(func() { _, jobErr = f.svc.ProcessAllDuePayments(ctx) })
				wg.Wait()
				if jobErr != nil {
					t.Fatal(jobErr)
				}
				if !errors.Is(cardErr, checkout.DeclineInProgress) && !errors.Is(cardErr, checkout.DeclineComplete) {
					t.Fatalf("round %d: card = %v; want declined", round, cardErr)
				}
				if p := f.paidOnce(t, s.ID); p.Method != checkout.MethodCrypto {
					t.Fatalf("round %d: paid by %s; want crypto", round, p.Method)
				}
			}
			if got := f.cards.charges(); len(got) != 0 {
				t.Errorf("charges = %v; want none", got)
			}
		})
	}
}

// TestCardOutcomeLost: a charge whose answer never came back (a node dying
// mid-charge) holds the session until the payments job asks the processor
// and settles it, either way.
func TestCardOutcomeLost(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPayFixture(t, db)
		for _, tc := range []struct {
			number string
			want   checkout.PaymentStatus
		}{{"4242424242424242", checkout.PaymentSucceeded}, {"4000000000000002", checkout.PaymentFailed}} {
			s := f.session(t)
			f.cards.loseAnswers(true)
			out, err := f.svc.PayByCard(ctx, s.ID, card(tc.number))
			f.cards.loseAnswers(false)
			if err != nil || out.Payment.Status != checkout.PaymentProcessing {
				t.Fatalf("PayByCard with the answer lost = %v, %v; want processing", err, out)
			}
			if _, err := f.svc.PayByCard(ctx, s.ID, card("5555555555554444")); !errors.Is(err, checkout.DeclineInProgress) {
				t.Errorf("a second card while the first is unknown = %v; want %v", err, checkout.DeclineInProgress)
			}
			f.clock.Advance(checkout.CardChargeTimeout - time.Second)
			f.processDue(t)
			if got := f.payments(t, s.ID)[checkout.PaymentProcessing]; len(got) != 1 {
				t.Fatalf("before the charge's time-out the payment is no longer processing")
			}
			f.clock.Advance(time.Second)
			f.processDue(t)
			if got := f.payments(t, s.ID)[tc.want]; len(got) != 1 || got[0].ID != out.Payment.ID {
				t.Errorf("%s: after the lookup: %v; want %s %s", tc.number, f.payments(t, s.ID), out.Payment.ID, tc.want)
			}
		}
	})
}

// unavailableStore is a real store whose write transactions fail with
// service_unavailable while down is set: a database failing over for
// longer than the failover budget.
type unavailableStore struct {
	checkout.Store
	down *atomic.Bool
}

func (s unavailableStore) InTx(ctx context.Context, fn func(checkout.Tx) error) error {
	if s.down.Load() {
		return &checkout.Error{Code: checkout.EUnavailable, Message: "The database is unavailable (failing over); try again shortly."}
	}
	return s.Store.InTx(ctx, fn)
}

// A charge the processor answered whose outcome the database would not
// take (a failover longer than the budget) is not an error to the buyer,
// who would pay again: the payment is shown in progress, holding the
// session, and the payments job settles it from the processor once the
// database is back. One charge, captured once.
func TestCardOutcomeNotWritten(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPayFixture(t, db)
		s := f.session(t)
		down := &atomic.Bool{}
		f.cards.onCharge(func() { down.Store(true) }) // the database goes as the processor answers
		node := service.New(service.Config{
			Store: unavailableStore{db, down}, Now: f.clock.Now, CheckoutBaseURL: "https://pay.example", Logger: f.log,
			Processors: pay.Registry{Test: pay.Processors{Card: f.cards}},
		})
		out, err := node.PayByCard(ctx, s.ID, card("4242424242424242"))
		f.cards.onCharge(nil)
		if err != nil || out.Payment.Status != checkout.PaymentProcessing {
			t.Fatalf("PayByCard with its outcome not written = %v, %v; want processing", err, out)
		}
		down.Store(false)
		if _, err := f.svc.PayByCard(ctx, s.ID, card("5555555555554444")); !errors.Is(err, checkout.DeclineInProgress) {
			t.Errorf("a second card while the first is not settled = %v; want %v", err, checkout.DeclineInProgress)
		}
		f.clock.Advance(checkout.CardChargeTimeout)
		f.processDue(t)
		if got := f.payments(t, s.ID); len(got[checkout.PaymentSucceeded]) != 1 || len(got[checkout.PaymentSucceeded])+len(got[checkout.PaymentFailed])+len(got[checkout.PaymentProcessing]) != 1 {
			t.Errorf("payments after the lookup = %v; want the one charge, succeeded", got)
		}
		if got := f.reload(t, s.ID); got.Status != checkout.StatusComplete {
			t.Errorf("session = %s; want complete", got.Status)
		}
	})
}

// TestChargeNeverReceived: the node stopped before the processor saw the
// charge; the lookup finds nothing and the payment fails as
// processing_error, freeing the session.
func TestChargeNeverReceived(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPayFixture(t, db)
		s := f.session(t)
		lost := &forgetfulCards{}
		node := service.New(service.Config{
			Store: db, Now: f.clock.Now, CheckoutBaseURL: "https://pay.example",
			Processors: pay.Registry{Test: pay.Processors{Card: lost}},
		})
		out, err := node.PayByCard(ctx, s.ID, card("4242424242424242"))
		if err != nil || out.Payment.Status != checkout.PaymentProcessing {
			t.Fatalf("PayByCard = %v, %v; want processing", err, out)
		}
		f.clock.Advance(checkout.CardChargeTimeout)
		if _, err := node.ProcessAllDuePayments(ctx); err != nil {
			t.Fatal(err)
		}
		failed := f.payments(t, s.ID)[checkout.PaymentFailed]
		if len(failed) != 1 || *failed[0].FailureCode != checkout.FailProcessingError {
			t.Fatalf("payments = %v; want one failed with processing_error", f.payments(t, s.ID))
		}
		if got := f.reload(t, s.ID); got.PaymentInProgress() || got.Status != checkout.StatusOpen {
			t.Errorf("session = %s, in progress %v; want open and free", got.Status, got.PaymentInProgress())
		}
		if _, err := f.svc.PayByCard(ctx, s.ID, card("4242424242424242")); err != nil {
			t.Errorf("paying again = %v", err)
		}
		f.paidOnce(t, s.ID)
	})
}

// forgetfulCards never answers and never remembers: the charge was lost
// before it reached the processor.
type forgetfulCards struct{}

func (forgetfulCards) Charge(context.Context, pay.CardCharge) (pay.CardResult, error) {
	return pay.CardResult{}, fmt.Errorf("connection reset")
}

func (forgetfulCards) Lookup(context.Context, string) (pay.CardResult, bool, error) {
	return pay.CardResult{}, false, nil
}

func (forgetfulCards) Refund(context.Context, pay.RefundRequest) (pay.RefundResult, error) {
	return pay.RefundResult{}, fmt.Errorf("connection reset")
}

// TestSkinsTradeOutcomeLost: the platform accepted the trade and the answer
// was lost (a time-out, a crash after the trade). The payment stays
// processing and keeps the session, so the buyer cannot pay twice; the
// payments job asks the platform, retries while it does not answer, and
// carries on with the trade it finds.
func TestSkinsTradeOutcomeLost(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPayFixture(t, db)
		s := f.session(t)
		inv, err := f.svc.SkinsInventory(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		f.skins.lose.Store(true)
		out, err := f.svc.PayBySkins(ctx, s.ID, []string{inv[7].ID})
		f.skins.lose.Store(false)
		if err != nil || out.Payment.Status != checkout.PaymentProcessing {
			t.Fatalf("PayBySkins with the answer lost = %v, %v; want processing", err, out)
		}
		p := out.Payment
		if got := f.reload(t, s.ID); got.ActivePaymentID == nil || *got.ActivePaymentID != p.ID || got.Status != checkout.StatusOpen {
			t.Fatalf("session = %s held by %v; want open, held by %s", got.Status, got.ActivePaymentID, p.ID)
		}
		// The buyer cannot pay again, by any method.
		if _, err := f.svc.PayBySkins(ctx, s.ID, []string{inv[7].ID}); !errors.Is(err, checkout.DeclineInProgress) {
			t.Errorf("a second trade = %v; want %v", err, checkout.DeclineInProgress)
		}
		if _, err := f.svc.PayByCard(ctx, s.ID, card("4242424242424242")); !errors.Is(err, checkout.DeclineInProgress) {
			t.Errorf("a card = %v; want %v", err, checkout.DeclineInProgress)
		}
		if len(f.cards.charges()) != 0 || f.skins.trades.Load() != 1 {
			t.Errorf("charges %v, trades %d; want none and 1", f.cards.charges(), f.skins.trades.Load())
		}
		f.clock.Advance(checkout.CardChargeTimeout - time.Second)
		f.processDue(t)
		if got := f.payments(t, s.ID)[checkout.PaymentProcessing]; len(got) != 1 || got[0].Skins != nil {
			t.Fatalf("before the time-out: %v; want the payment processing, no trade recorded", f.payments(t, s.ID))
		}
		// The platform does not answer the lookup: the payment stays
		// processing and is looked up again later.
		f.clock.Advance(time.Second)
		f.skins.lookupFails.Store(true)
		if _, err := f.svc.ProcessAllDuePayments(ctx); err == nil {
			t.Errorf("ProcessAllDuePayments with the lookup failing = nil; want its error")
		}
		f.skins.lookupFails.Store(false)
		if got := f.payments(t, s.ID)[checkout.PaymentProcessing]; len(got) != 1 {
			t.Fatalf("after a failed lookup: %v; want the payment processing", f.payments(t, s.ID))
		}
		f.clock.Advance(time.Hour)
		if n, err := f.svc.ExpireAll(ctx); n != 0 || err != nil {
			t.Errorf("ExpireAll = %d, %v; want nothing expired while the trade is unknown", n, err)
		}
		// The lookup finds the trade: the payment holds the session through
		// its hold, which began when the platform accepted the trade.
		f.processDue(t)
		got := f.payments(t, s.ID)[checkout.PaymentProcessing]
		holdEnd := t0.Add(checkout.SkinsTradeHold)
		if len(got) != 1 || got[0].Skins == nil || got[0].Skins.HoldUntil != holdEnd.Unix() || got[0].DueAt == nil || !got[0].DueAt.Equal(holdEnd) {
			t.Fatalf("after the lookup: %v; want the trade recorded, due at %v", f.payments(t, s.ID), holdEnd)
		}
		f.clock.Set(holdEnd)
		f.processDue(t)
		if paid := f.paidOnce(t, s.ID); paid.ID != p.ID {
			t.Errorf("paid by %s; want %s", paid.ID, p.ID)
		}
		if all := f.payments(t, s.ID); len(all) != 1 || f.skins.trades.Load() != 1 {
			t.Errorf("payments %v, trades %d; want one of each", all, f.skins.trades.Load())
		}
	})
}

// A processor that does not answer is asked again after
// service.ProcessorRetry, not at every round of the job: an outage costs one
// error log and one question per payment a minute, not one every few
// seconds.
func TestProcessorOutageIsAskedAgainLater(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPayFixture(t, db)
		s := f.session(t)
		inv, err := f.svc.SkinsInventory(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		f.skins.lose.Store(true)
		if _, err := f.svc.PayBySkins(ctx, s.ID, []string{inv[7].ID}); err != nil {
			t.Fatal(err)
		}
		f.skins.lose.Store(false)
		f.skins.lookupFails.Store(true)
		f.clock.Advance(checkout.CardChargeTimeout)
		if _, err := f.svc.ProcessAllDuePayments(ctx); err == nil || f.skins.lookups.Load() != 1 {
			t.Fatalf("first round = %v after %d lookups; want the lookup's error after 1", err, f.skins.lookups.Load())
		}
		f.clock.Advance(service.ProcessorRetry - time.Second)
		if n, err := f.svc.ProcessAllDuePayments(ctx); n != 0 || err != nil || f.skins.lookups.Load() != 1 {
			t.Fatalf("a round before the retry = %d, %v after %d lookups; want nothing asked", n, err, f.skins.lookups.Load())
		}
		f.clock.Advance(time.Second)
		f.skins.lookupFails.Store(false)
		f.processDue(t)
		if f.skins.lookups.Load() != 2 {
			t.Fatalf("lookups = %d; want the second at the retry", f.skins.lookups.Load())
		}
		if got := f.payments(t, s.ID)[checkout.PaymentProcessing]; len(got) != 1 || got[0].Skins == nil {
			t.Fatalf("after the platform answered: %v; want the trade recorded", f.payments(t, s.ID))
		}
	})
}

// TestSkinsTradeNeverReceived: the trade never reached the platform; the
// lookup finds nothing and the payment fails as processing_error, freeing
// the session.
func TestSkinsTradeNeverReceived(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPayFixture(t, db)
		s := f.session(t)
		inv, _ := f.svc.SkinsInventory(ctx, s.ID)
		f.skins.drop.Store(true)
		out, err := f.svc.PayBySkins(ctx, s.ID, []string{inv[7].ID})
		f.skins.drop.Store(false)
		if err != nil || out.Payment.Status != checkout.PaymentProcessing {
			t.Fatalf("PayBySkins with the trade lost = %v, %v; want processing", err, out)
		}
		f.clock.Advance(checkout.CardChargeTimeout)
		f.processDue(t)
		failed := f.payments(t, s.ID)[checkout.PaymentFailed]
		if len(failed) != 1 || *failed[0].FailureCode != checkout.FailProcessingError {
			t.Fatalf("payments = %v; want one failed with processing_error", f.payments(t, s.ID))
		}
		if got := f.reload(t, s.ID); got.PaymentInProgress() || got.Status != checkout.StatusOpen {
			t.Errorf("session = %s, in progress %v; want open and free", got.Status, got.PaymentInProgress())
		}
		if _, err := f.svc.PayBySkins(ctx, s.ID, []string{inv[7].ID}); err != nil {
			t.Errorf("trading again = %v", err)
		}
	})
}

// TestCardApprovedAfterFailure: a charge stays in flight past its time-out;
// the payments job finds nothing at the processor and fails the payment,
// freeing the session; then the processor approves the charge. The money
// was taken for a failed payment: it is flagged for refund (its failure
// code says so), logged as an error with the payment and session, and
// counted; the session is not paid by it.
func TestCardApprovedAfterFailure(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPayFixture(t, db)
		s := f.session(t)
		inside, release := f.cards.hold()
		done := make(chan *service.PaymentOutcome, 1)
		go func() {
			out, err := f.svc.PayByCard(ctx, s.ID, card("4242424242424242"))
			if err != nil {
				t.Errorf("PayByCard = %v", err)
			}
			done <- out
		}()
		id := <-inside
		f.clock.Advance(checkout.CardChargeTimeout)
		f.processDue(t)
		if failed := f.payments(t, s.ID)[checkout.PaymentFailed]; len(failed) != 1 || *failed[0].FailureCode != checkout.FailProcessingError {
			t.Fatalf("after the lookup found nothing: %v; want %s failed with processing_error", f.payments(t, s.ID), id)
		}
		release()
		out := <-done
		if out == nil {
			t.FailNow()
		}
		p, err := db.PaymentGet(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if p.Status != checkout.PaymentFailed || *p.FailureCode != checkout.FailCapturedAfterFailure || !p.RefundDue() {
			t.Errorf("payment = %s, %v, refund due %v; want failed with %s, to be refunded", p.Status, *p.FailureCode, p.RefundDue(), checkout.FailCapturedAfterFailure)
		}
		if out.Payment.ID != id || out.Payment.Status != checkout.PaymentFailed {
			t.Errorf("outcome = %s %s; want %s failed", out.Payment.ID, out.Payment.Status, id)
		}
		if got := f.reload(t, s.ID); got.Status != checkout.StatusOpen || got.PaymentInProgress() {
			t.Errorf("session = %s, in progress %v; want open and free", got.Status, got.PaymentInProgress())
		}
		var line string
		for l := range strings.Lines(f.logBuf.String()) {
			if strings.Contains(l, "level=ERROR") && strings.Contains(l, "payment_id="+id) && strings.Contains(l, "session_id="+s.ID) {
				line = l
			}
		}
		if line == "" {
			t.Errorf("no error log naming payment %s and session %s; log:\n%s", id, s.ID, f.logBuf)
		}
		if n := f.svc.Stats().CapturedAfterFailure; n != 1 {
			t.Errorf("Stats().CapturedAfterFailure = %d; want 1", n)
		}
		// The session still takes a payment, which counts nothing more.
		f.paidOnceBy(t, s.ID, "4242424242424242")
		if n := f.svc.Stats().CapturedAfterFailure; n != 1 {
			t.Errorf("Stats().CapturedAfterFailure = %d after another payment; want 1", n)
		}
	})
}

func (f *payFixture) paidOnceBy(t *testing.T, id, number string) {
	t.Helper()
	if _, err := f.svc.PayByCard(ctx, id, card(number)); err != nil {
		t.Fatal(err)
	}
	f.paidOnce(t, id)
}

// stuckNetwork is the simulated network on which transactions never
// confirm, counting how often it is asked.
type stuckNetwork struct {
	pay.TestNetwork
	polls atomic.Int64
}

func (n *stuckNetwork) Confirmations(ctx context.Context, p *checkout.Payment, now time.Time) (int, error) {
	n.polls.Add(1)
	return 0, nil
}

// TestCryptoNeverConfirms: a transaction that never confirms holds its
// session until its coin's deadline, then fails with confirmation_timeout
// and frees the session, which expires as usual at its own expires_at. On
// the way the network is asked a few dozen times, not every block.
func TestCryptoNeverConfirms(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPayFixture(t, db)
		for _, c := range checkout.Coins {
			net := &stuckNetwork{}
			node := service.New(service.Config{
				Store: db, Now: f.clock.Now, CheckoutBaseURL: "https://pay.example", Logger: f.log,
				Processors: pay.Registry{Test: pay.Processors{Crypto: net}},
			})
			start := f.clock.Now()
			s := f.session(t)
			if _, err := node.CryptoQuote(ctx, s.ID, c.Code); err != nil {
				t.Fatal(err)
			}
			f.clock.Advance(5 * time.Minute)
			p, err := node.SimulateCryptoPayment(ctx, s.ID, c.Code)
			if err != nil {
				t.Fatal(err)
			}
			deadline := f.clock.Now().Add(c.ConfirmationDeadline)
			// The job runs every few seconds; here 500 times until the
			// deadline.
			step := c.ConfirmationDeadline / 500
			for f.clock.Now().Add(step).Before(deadline) {
				f.clock.Advance(step)
				if _, err := node.ProcessAllDuePayments(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if got := f.payments(t, s.ID)[checkout.PaymentProcessing]; len(got) != 1 {
				t.Fatalf("%s before its deadline: %v; want processing", c.Code, f.payments(t, s.ID))
			}
			if got := f.reload(t, s.ID); got.Status != checkout.StatusOpen || !got.PaymentInProgress() {
				t.Fatalf("%s before its deadline: session %s, in progress %v; want open and held", c.Code, got.Status, got.PaymentInProgress())
			}
			if polls, most := net.polls.Load(), int64(40); polls > most {
				t.Errorf("%s: the network was asked %d times in %v; want at most %d", c.Code, polls, c.ConfirmationDeadline, most)
			}
			f.clock.Set(deadline)
			if _, err := node.ProcessAllDuePayments(ctx); err != nil {
				t.Fatal(err)
			}
			failed := f.payments(t, s.ID)[checkout.PaymentFailed]
			if len(failed) != 1 || failed[0].ID != p.ID || *failed[0].FailureCode != checkout.FailConfirmationTimeout || failed[0].DueAt != nil {
				t.Fatalf("%s at its deadline: %v; want %s failed with confirmation_timeout, nothing due", c.Code, f.payments(t, s.ID), p.ID)
			}
			if ev := f.eventCounts(t, s.ID); ev[checkout.EventPaymentFailed] != 1 {
				t.Errorf("%s: events %v; want one payment.failed", c.Code, ev)
			}
			sess := f.reload(t, s.ID)
			expiresAt := start.Add(checkout.SessionLifetime)
			if f.clock.Now().Before(expiresAt) {
				// Within the hour the session is open and free again.
				if sess.Status != checkout.StatusOpen || sess.PaymentInProgress() {
					t.Errorf("%s: session %s, in progress %v; want open and free", c.Code, sess.Status, sess.PaymentInProgress())
				}
				f.clock.Set(expiresAt)
			}
			if n, err := node.ExpireAll(ctx); n != 1 || err != nil {
				t.Errorf("%s: ExpireAll = %d, %v; want the session expired", c.Code, n, err)
			}
			if got := f.reload(t, s.ID).Status; got != checkout.StatusExpired {
				t.Errorf("%s: session %s; want expired", c.Code, got)
			}
		}
	})
}

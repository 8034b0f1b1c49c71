package page_test

// These tests pay a live session through a store's own Stripe account in
// Chromium, on the page that ships: it loads https://js.stripe.com/v3 as in
// production. The browser resolves js.stripe.com, api.stripe.com and
// hooks.stripe.com to a TLS server on loopback (browsertest.MapHost), which
// serves a stand-in for Stripe.js (testdata/stripe-v3.js: not Stripe's
// code, nor its UI), forwards Stripe's API to the running test's fake of
// Stripe (package stripefake), and serves a stand-in 3-D Secure challenge.
// So the page's wiring, its Content-Security-Policy, the return door and
// the webhook's completion run in a real browser; real Stripe.js and real
// 3-D Secure are docs/payments.md's manual checklist.

import (
	"context"
	"html/template"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/app"
	"github.com/checkoutd/checkoutd/internal/browsertest"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/pay/stripefake"
	"github.com/checkoutd/checkoutd/internal/pay/stripepay"
	"github.com/checkoutd/checkoutd/internal/seal"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// The keys of the store's Stripe account, as the fake takes them.
const (
	stripeSecretKey      = "sk_live_51CheckoutdBrowserTestKey00000LIVE"
	stripePublishableKey = "pk_live_51CheckoutdBrowserTestKey00000PUBL"
	stripeWebhookSecret  = "whsec_Q2hlY2tvdXRkIGJyb3dzZXIgdGVzdHMhIHNlYw"
)

// stripeHosts is Stripe as the browser reaches it in these tests. Its fake
// is the running test's: the browser tests of this package run one at a
// time (none calls t.Parallel), as the browser's host rules are its own.
var stripeHosts struct {
	srv *httptest.Server
	mu  sync.Mutex
	// fake is the running test's fake of Stripe's API; nil between tests.
	fake *stripefake.Fake
	// unreachable makes js.stripe.com drop its connections, as a network
	// (or a blocker) that keeps Stripe.js from the page does.
	unreachable bool
}

// startStripeHosts starts the server the browser reaches Stripe at, and
// maps Stripe's hosts to it: TestMain calls it before the browser starts.
func startStripeHosts() {
	stripeHosts.srv = httptest.NewTLSServer(http.HandlerFunc(serveStripe))
	for _, host := range []string{"js.stripe.com", "api.stripe.com", "hooks.stripe.com"} {
		browsertest.MapHost(host, stripeHosts.srv.Listener.Addr().String())
	}
}

// useStripe makes fake the Stripe the browser reaches until t ends.
func useStripe(t *testing.T, fake *stripefake.Fake) {
	stripeHosts.mu.Lock()
	defer stripeHosts.mu.Unlock()
	if stripeHosts.fake != nil {
		t.Fatal("another test is using the Stripe hosts: browser tests must not run in parallel")
	}
	stripeHosts.fake = fake
	t.Cleanup(func() {
		stripeHosts.mu.Lock()
		defer stripeHosts.mu.Unlock()
		stripeHosts.fake, stripeHosts.unreachable = nil, false
	})
}

func serveStripe(w http.ResponseWriter, r *http.Request) {
	stripeHosts.mu.Lock()
	fake, unreachable := stripeHosts.fake, stripeHosts.unreachable
	stripeHosts.mu.Unlock()
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		host = r.Host
	}
	switch {
	case host == "js.stripe.com" && r.URL.Path == "/v3":
		if unreachable {
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				conn.Close()
			}
			return
		}
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		http.ServeFile(w, r, "testdata/stripe-v3.js")
	case host == "api.stripe.com" && strings.HasPrefix(r.URL.Path, "/v1/") && fake != nil:
		u, _ := url.Parse(fake.URL)
		httputil.NewSingleHostReverseProxy(u).ServeHTTP(w, r)
	case host == "hooks.stripe.com" && r.URL.Path == "/3d_secure" && fake != nil:
		serveChallenge(w, r, fake)
	default:
		http.NotFound(w, r)
	}
}

// challengePage is the stand-in 3-D Secure challenge, as Stripe's test
// one: the buyer completes or fails it; then it tells the page's Stripe.js
// stand-in.
var challengePage = template.Must(template.New("3ds").Parse(`<!doctype html>
<html><head><title>3-D Secure (stand-in)</title></head><body>
{{if .Done}}<script>parent.postMessage({standIn3DS: {{.Intent}}, ok: {{.OK}}}, "*");</script>
{{else}}<form method="post"><input type="hidden" name="payment_intent" value="{{.Intent}}">
<button id="complete" name="ok" value="true">Complete authentication</button> <button id="fail" name="ok" value="false">Fail authentication</button></form>{{end}}
</body></html>`))

func serveChallenge(w http.ResponseWriter, r *http.Request, fake *stripefake.Fake) {
	v := struct {
		Intent   string
		Done, OK bool
	}{Intent: r.FormValue("payment_intent"), OK: r.FormValue("ok") == "true"}
	if r.Method == http.MethodPost {
		if err := fake.CompleteAction(v.Intent, v.OK); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		v.Done = true
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	challengePage.Execute(w, v)
}

// stripeEnv is a browserEnv whose store takes live cards through its own
// Stripe account, with a live API key to make sessions with.
type stripeEnv struct {
	*browserEnv
	fake *stripefake.Fake
}

func newStripeEnv(t *testing.T, db *store.DB) *stripeEnv {
	t.Helper()
	return newStripeEnvWith(t, db, nil)
}

// newStripeEnvWith is newStripeEnv with onEvent called with each event
// Stripe makes, as it makes it (before it answers the request that made
// it).
func newStripeEnvWith(t *testing.T, db *store.DB, onEvent func(*stripeEnv, stripefake.Event)) *stripeEnv {
	t.Helper()
	var fake *stripefake.Fake
	var se *stripeEnv
	var ready sync.WaitGroup // se is set
	ready.Add(1)
	e := newBrowserEnvWith(t, db, func(c *app.Config) {
		o := stripefake.Options{Now: c.Now}
		if onEvent != nil {
			o.OnEvent = func(ev stripefake.Event) {
				ready.Wait()
				onEvent(se, ev)
			}
		}
		fake = stripefake.New(t, o)
		c.SecretsKey, _ = seal.Generate()
		c.Acquirers = []pay.AcquirerConnector{stripepay.New(stripepay.Config{URL: fake.URL})}
	})
	useStripe(t, fake)
	ctx := context.Background()
	fake.AddEndpoint(stripefake.Endpoint{URL: e.svc.AcquirerWebhookURL(e.store.ID, stripepay.Name)})
	if _, err := e.svc.SetAcquirerAccount(ctx, service.AcquirerAccountParams{
		MerchantID: e.store.ID, Mode: checkout.ModeLive, Acquirer: stripepay.Name,
		SecretKey: stripeSecretKey, PublishableKey: stripePublishableKey, WebhookSecret: stripeWebhookSecret,
	}); err != nil {
		t.Fatal(err)
	}
	var err error
	_, e.secret, err = e.svc.CreateAPIKey(ctx, checkout.APIKeyParams{MerchantID: e.store.ID, Mode: checkout.ModeLive, Type: checkout.KeyBearer,
		Permissions: []checkout.Permission{checkout.PermCheckoutsWrite}})
	if err != nil {
		t.Fatal(err)
	}
	se = &stripeEnv{browserEnv: e, fake: fake}
	ready.Done()
	return se
}

// hook is where Stripe posts the store's events.
func (e *stripeEnv) hook() string { return e.srv.URL + "/webhooks/stripe/" + e.store.ID }

// liveEvents counts the store's live events by type.
func (e *stripeEnv) liveEvents() map[string]int {
	e.t.Helper()
	evs, err := e.svc.Store().EventList(context.Background(), checkout.EventListParams{MerchantID: e.store.ID, Mode: checkout.ModeLive, Limit: 1000})
	if err != nil {
		e.t.Fatal(err)
	}
	n := map[string]int{}
	for _, ev := range evs {
		n[ev.Type]++
	}
	return n
}

// ready waits for the page's card form: the stand-in element mounted and
// the Pay button enabled by the adapter.
func (e *stripeEnv) ready() {
	e.t.Helper()
	e.WaitFor(`document.getElementById("stand-in-card") !== null && !document.querySelector("button.pay-button").disabled`)
}

// payWith picks a test payment method in the stand-in element and presses
// Pay.
func (e *stripeEnv) payWith(pm string) {
	e.t.Helper()
	e.ready()
	e.Do(chromedp.SetValue(chromedp.ID("stand-in-card"), pm))
	e.pay()
}

// paymentIntents returns the PaymentIntents of a session's payments,
// oldest first.
func (e *stripeEnv) paymentIntents(id string) []string {
	e.t.Helper()
	ps, err := e.svc.Store().PaymentListBySession(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, p := range ps {
		if p.Acquirer != nil {
			out = append(out, p.Acquirer.ID)
		}
	}
	return out
}

// inFrame runs actions in the page's frame whose address begins with
// prefix. A frame of another site is a target of its own in Chromium (site
// isolation), which the page's actions do not reach; it is detached from,
// never closed, when they are done.
func (e *stripeEnv) inFrame(prefix string, steps ...chromedp.Action[chromedp.Void]) {
	e.t.Helper()
	ts, err := chromedp.Targets(e.Tab())
	if err != nil {
		e.t.Fatal(err)
	}
	for _, ti := range ts {
		if ti.Type == "iframe" && strings.HasPrefix(ti.URL, prefix) {
			frame, cancel := chromedp.NewContext(e.Tab(), chromedp.WithTargetID(ti.TargetID), chromedp.WithDetachOnCancel())
			defer cancel()
			ctx, cancelTimeout := context.WithTimeout(frame, browsertest.WaitTimeout)
			defer cancelTimeout()
			if err := chromedp.Do(ctx, steps...); err != nil {
				e.t.Fatalf("in the frame %s: %v", ti.URL, err)
			}
			return
		}
	}
	e.t.Fatalf("no frame at %s", prefix)
}

func TestBrowserStripePaysAndReturnsToTheShop(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newStripeEnv(t, db)
		s := e.create(orderBody)
		e.Do(chromedp.Navigate(s.CheckoutURL))
		e.ready()

		// The adapter set Stripe.js up as Stripe documents it.
		if got := browsertest.Eval[string](e.Page, `JSON.stringify([stripeStandIn.publishableKey, stripeStandIn.elementsOptions, stripeStandIn.created])`); got !=
			`["`+stripePublishableKey+`",{"mode":"payment","amount":3999,"currency":"usd","paymentMethodTypes":["card"]},"payment"]` {
			t.Errorf("Stripe.js was set up with %s", got)
		}
		if got := e.TextIs("button.pay-button", "Pay $39.99"); got != "Pay $39.99" {
			t.Errorf("button = %q; want Pay $39.99", got)
		}
		if n := browsertest.Eval[int](e.Page, `document.querySelectorAll(".test-banner, #number").length`); n != 0 {
			t.Errorf("the live page shows test mode's banner or checkoutd's own card fields")
		}

		e.payWith(stripefake.CardVisa)
		u := e.landedOnShop()
		if u.Path != "/thanks" || u.Query().Get("order") != "42" || u.Query().Get("checkout_id") != s.ID {
			t.Errorf("landed on %s; want /thanks with order=42 and checkout_id=%s", u, s.ID)
		}
		got := e.retrieve(s.ID)
		if got.Status != checkout.StatusComplete || got.PaymentID == nil {
			t.Fatalf("session after paying = %s; want complete", got.Status)
		}
		pis := e.paymentIntents(s.ID)
		if len(pis) != 1 || e.fake.PaymentStatus(pis[0]) != "succeeded" {
			t.Fatalf("PaymentIntents = %v; want one, succeeded", pis)
		}

		// Stripe's webhooks, each delivered twice, change nothing more.
		for range 2 {
			for _, ev := range e.fake.Events() {
				status, err := e.fake.Send(context.Background(), http.DefaultClient, e.hook(), ev, stripeWebhookSecret)
				if err != nil || status != http.StatusOK {
					t.Errorf("webhook %s = %d, %v; want 200", ev.Type, status, err)
				}
			}
		}
		if ev := e.liveEvents(); ev[checkout.EventPaymentSucceeded] != 1 || ev[checkout.EventCheckoutCompleted] != 1 || ev[checkout.EventPaymentFailed] != 0 {
			t.Errorf("events = %v; want one payment.succeeded and one checkout.completed", ev)
		}

		// Back on the page: the receipt, with the card Stripe took.
		e.Do(chromedp.Navigate(s.CheckoutURL))
		if got := e.TextHas(".receipt", "Payment received", "Visa ending in 4242"); !strings.Contains(got, "Visa ending in 4242") {
			t.Errorf("receipt = %q; want the Visa ending in 4242", got)
		}
	})
}

// Stripe's webhook can come before the buyer is back: here each event is
// delivered as Stripe makes it, before Stripe.js hears that the payment
// succeeded. The webhook completes the session; the buyer's return finds it
// complete and goes on to the shop; nothing happens twice.
func TestBrowserStripeWebhookBeforeTheReturn(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		var mu sync.Mutex
		var answered []string
		e := newStripeEnvWith(t, db, func(e *stripeEnv, ev stripefake.Event) {
			status, err := e.fake.Send(context.Background(), http.DefaultClient, e.hook(), ev, stripeWebhookSecret)
			mu.Lock()
			defer mu.Unlock()
			answered = append(answered, ev.Type+" "+http.StatusText(status))
			if err != nil || status != http.StatusOK {
				t.Errorf("webhook %s = %d, %v; want 200", ev.Type, status, err)
			}
		})
		s := e.create(orderBody)
		e.Do(chromedp.Navigate(s.CheckoutURL))
		e.payWith(stripefake.CardVisa)
		if u := e.landedOnShop(); u.Query().Get("checkout_id") != s.ID {
			t.Errorf("landed on %s; want checkout_id=%s", u, s.ID)
		}
		mu.Lock()
		if !slices.Contains(answered, "payment_intent.succeeded OK") {
			t.Errorf("webhooks answered %v; want payment_intent.succeeded among them", answered)
		}
		mu.Unlock()
		if got := e.retrieve(s.ID).Status; got != checkout.StatusComplete {
			t.Errorf("session = %s; want complete", got)
		}
		if ev := e.liveEvents(); ev[checkout.EventPaymentSucceeded] != 1 || ev[checkout.EventCheckoutCompleted] != 1 {
			t.Errorf("events = %v; want one payment.succeeded and one checkout.completed", ev)
		}
	})
}

func TestBrowserStripeDeclineThenAnotherCard(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newStripeEnv(t, db)
		s := e.create(orderBody)
		e.Do(chromedp.Navigate(s.CheckoutURL))
		// Stripe answers a decline 402, which the browser logs, as it
		// would for Stripe.js.
		e.ExpectConsole("status of 402")
		e.payWith(stripefake.CardDeclined)
		const msg = "Your card was declined. Try another card, or pay another way."
		if got := e.TextIs("#message", msg); got != msg {
			t.Fatalf("after a decline the page says %q; want %q", got, msg)
		}
		if got := e.retrieve(s.ID).Status; got != checkout.StatusOpen {
			t.Fatalf("after a decline the session is %s; want open", got)
		}
		e.clk.Advance(time.Minute) // the buyer reaches for another card

		// The same page takes the next card.
		e.payWith(stripefake.CardVisa)
		if u := e.landedOnShop(); u.Query().Get("checkout_id") != s.ID {
			t.Errorf("landed on %s; want checkout_id=%s", u, s.ID)
		}
		if got := e.payments(s.ID); !slices.Equal(got, []checkout.PaymentStatus{checkout.PaymentFailed, checkout.PaymentSucceeded}) {
			t.Errorf("payments = %v; want failed, succeeded", got)
		}
		pis := e.paymentIntents(s.ID)
		if len(pis) != 2 || e.fake.PaymentStatus(pis[0]) != "canceled" || e.fake.PaymentStatus(pis[1]) != "succeeded" {
			t.Errorf("PaymentIntents %v; want the declined one canceled, the next succeeded", pis)
		}
		if ev := e.liveEvents(); ev[checkout.EventPaymentFailed] != 1 || ev[checkout.EventPaymentSucceeded] != 1 || ev[checkout.EventCheckoutCompleted] != 1 {
			t.Errorf("events = %v; want one payment.failed, one payment.succeeded, one checkout.completed", ev)
		}
	})
}

// A card that asks for 3-D Secure: the challenge's frame, from
// hooks.stripe.com as the CSP allows. Failed, the page says the bank could
// not confirm the payment; completed, the payment succeeds.
func TestBrowserStripe3DSecure(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newStripeEnv(t, db)
		s := e.create(orderBody)
		e.Do(chromedp.Navigate(s.CheckoutURL))
		challenge := func(button string) {
			t.Helper()
			e.payWith(stripefake.CardAuthenticationRequired)
			e.WaitFor(`document.getElementById("stand-in-3ds")?.dataset.loaded === "1"`)
			pis := e.paymentIntents(s.ID)
			pi := pis[len(pis)-1]
			if got := e.fake.PaymentStatus(pi); got != "requires_action" {
				t.Fatalf("before the challenge the PaymentIntent is %q; want requires_action", got)
			}
			e.inFrame("https://hooks.stripe.com/3d_secure?payment_intent="+pi, chromedp.Click(chromedp.ID(button)))
		}

		challenge("fail")
		const msg = "Your bank could not confirm that the payment is yours."
		if got := e.TextHas("#message", msg); !strings.Contains(got, msg) {
			t.Fatalf("after a failed challenge the page says %q; want %q", got, msg)
		}
		if got := e.retrieve(s.ID).Status; got != checkout.StatusOpen {
			t.Fatalf("after a failed challenge the session is %s; want open", got)
		}
		e.clk.Advance(time.Minute) // the buyer tries again

		challenge("complete")
		if u := e.landedOnShop(); u.Query().Get("checkout_id") != s.ID {
			t.Errorf("landed on %s; want checkout_id=%s", u, s.ID)
		}
		if got := e.retrieve(s.ID).Status; got != checkout.StatusComplete {
			t.Errorf("session after 3-D Secure = %s; want complete", got)
		}
		if got := e.payments(s.ID); !slices.Equal(got, []checkout.PaymentStatus{checkout.PaymentFailed, checkout.PaymentSucceeded}) {
			t.Errorf("payments = %v; want failed (the challenge), succeeded", got)
		}
	})
}

// When Stripe.js cannot be loaded (the network, a blocker), the adapter
// says so, and the Pay button stays off.
func TestBrowserStripeScriptUnreachable(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newStripeEnv(t, db)
		stripeHosts.mu.Lock()
		stripeHosts.unreachable = true
		stripeHosts.mu.Unlock()
		s := e.create(orderBody)
		e.ExpectConsole("js.stripe.com/v3")
		e.Do(chromedp.Navigate(s.CheckoutURL))
		const msg = "The card form could not be loaded from the card processor. Check your connection and reload the page, or pay another way."
		if got := e.TextIs("#message", msg); got != msg {
			t.Errorf("the page says %q; want %q", got, msg)
		}
		if !browsertest.Until(e.Page, `document.querySelector("button.pay-button").disabled`, true) {
			t.Error("the Pay button is enabled without Stripe.js")
		}
		if got := e.payments(s.ID); len(got) != 0 {
			t.Errorf("payments = %v; want none", got)
		}
	})
}

// Stripe does not answer the start: the page says so and lets the buyer
// press Pay again, which resumes the same payment and pays.
func TestBrowserStripeUnavailableThenPays(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newStripeEnv(t, db)
		s := e.create(orderBody)
		e.Do(chromedp.Navigate(s.CheckoutURL))
		e.fake.FailNext("/v1/payment_intents", http.StatusServiceUnavailable)
		e.ExpectConsole("status of 503") // the start door's answer
		e.payWith(stripefake.CardVisa)
		const msg = "The card processor did not answer. Try again in a moment."
		if got := e.TextIs("#message", msg); got != msg {
			t.Fatalf("with Stripe down the page says %q; want %q", got, msg)
		}
		if !browsertest.Until(e.Page, `!document.querySelector("button.pay-button").disabled && document.querySelector("button.pay-button").textContent === "Pay $39.99"`, true) {
			t.Fatal("the Pay button is not back after the failed start")
		}

		e.pay()
		if u := e.landedOnShop(); u.Query().Get("checkout_id") != s.ID {
			t.Errorf("landed on %s; want checkout_id=%s", u, s.ID)
		}
		if got := e.payments(s.ID); !slices.Equal(got, []checkout.PaymentStatus{checkout.PaymentSucceeded}) {
			t.Errorf("payments = %v; want one, succeeded: the first start resumed", got)
		}
	})
}

// A second tab, its page loaded before the first paid, presses Pay: the
// start sends it to the page, which shows the receipt; nothing more is
// made at Stripe.
func TestBrowserStripeSecondTabAfterPaying(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newStripeEnv(t, db)
		s := e.create(orderBody)
		second, cancel := chromedp.NewContext(e.Tab())
		defer cancel()
		if err := chromedp.Do(second, chromedp.Navigate(s.CheckoutURL),
			chromedp.WaitEnabled(chromedp.CSS("button.pay-button"))); err != nil {
			t.Fatal(err)
		}

		e.Do(chromedp.Navigate(s.CheckoutURL))
		e.payWith(stripefake.CardVisa)
		e.landedOnShop()

		if err := chromedp.Do(second,
			chromedp.Click(chromedp.CSS("button.pay-button")),
			chromedp.WaitVisible(chromedp.CSS(".receipt")),
		); err != nil {
			t.Fatal(err)
		}
		if got := e.paymentIntents(s.ID); len(got) != 1 {
			t.Errorf("PaymentIntents = %v; want the first tab's alone", got)
		}
		if got := e.payments(s.ID); !slices.Equal(got, []checkout.PaymentStatus{checkout.PaymentSucceeded}) {
			t.Errorf("payments = %v; want exactly one, succeeded", got)
		}
	})
}

// The page's form token is gone (the browser dropped its cookies, a tab
// restored without them): the start refuses it, and the page says to
// reload rather than to try again in vain; reloaded, it pays.
func TestBrowserStripeExpiredForm(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newStripeEnv(t, db)
		s := e.create(orderBody)
		e.Do(chromedp.Navigate(s.CheckoutURL))
		e.ready()
		if _, err := chromedp.Call(e.Tab(), network.DeleteCookies, network.DeleteCookiesParams{Name: "checkoutd_csrf", URL: s.CheckoutURL}); err != nil {
			t.Fatal(err)
		}
		e.ExpectConsole("status of 403") // the start door's refusal
		e.payWith(stripefake.CardVisa)
		const msg = "This page has expired. Reload it and try again."
		if got := e.TextIs("#message", msg); got != msg {
			t.Fatalf("without the form's cookie the page says %q; want %q", got, msg)
		}
		if got := e.paymentIntents(s.ID); len(got) != 0 {
			t.Fatalf("PaymentIntents = %v; want none made", got)
		}

		e.Do(chromedp.Reload())
		e.payWith(stripefake.CardVisa)
		if u := e.landedOnShop(); u.Query().Get("checkout_id") != s.ID {
			t.Errorf("landed on %s; want checkout_id=%s", u, s.ID)
		}
	})
}

package page

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/pay/stripefake"
	"github.com/checkoutd/checkoutd/internal/pay/stripepay"
	"github.com/checkoutd/checkoutd/internal/seal"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// These tests drive the page of a live session whose store takes cards
// through its own Stripe account, at a fake of Stripe (package
// stripefake), over HTTP: what the page serves the adapter script, and the
// doors the script calls. The browser tests run the script itself.

// The keys of the store's Stripe account, as the fake takes them.
const (
	stripeSecretKey      = "sk_live_51CheckoutdPageTestKey00000000LIVE"
	stripePublishableKey = "pk_live_51CheckoutdPageTestKey00000000PUBL"
	stripeWebhookSecret  = "whsec_Q2hlY2tvdXRkIHBhZ2UgdGVzdHMhIHNlY3JldA"
)

// stripeCSP is the Content-Security-Policy of the payment page of a live
// session paid through Stripe: Stripe's script, its frames and its API
// beyond the page's own, and nothing more.
const stripeCSP = "default-src 'none'; script-src 'self' https://js.stripe.com; style-src 'self'; img-src 'self' https: data:; " +
	"connect-src 'self' https://api.stripe.com; frame-src https://js.stripe.com https://hooks.stripe.com; " +
	"form-action 'self' https://acme.example; frame-ancestors 'none'; base-uri 'none'"

// pageCSP is the Content-Security-Policy of every other page of a session
// with fullBody's return_url.
const pageCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' https: data:; connect-src 'self'; " +
	"form-action 'self' https://acme.example; frame-ancestors 'none'; base-uri 'none'"

// stripeEnv is an env whose store has its Stripe account set up, at fake.
type stripeEnv struct {
	*env
	fake *stripefake.Fake
}

func newStripeEnv(t *testing.T, db *store.DB) *stripeEnv {
	t.Helper()
	var fake *stripefake.Fake
	e := newEnvConfig(t, db, func(c *service.Config) {
		fake = stripefake.New(t, stripefake.Options{})
		c.SecretsKey, _ = seal.Generate()
		c.Acquirers = []pay.AcquirerConnector{stripepay.New(stripepay.Config{URL: fake.URL})}
	})
	fake.AddEndpoint(stripefake.Endpoint{URL: e.svc.AcquirerWebhookURL(e.store.ID, stripepay.Name)})
	if _, err := e.svc.SetAcquirerAccount(context.Background(), service.AcquirerAccountParams{
		MerchantID: e.store.ID, Mode: checkout.ModeLive, Acquirer: stripepay.Name,
		SecretKey: stripeSecretKey, PublishableKey: stripePublishableKey, WebhookSecret: stripeWebhookSecret,
	}); err != nil {
		t.Fatal(err)
	}
	return &stripeEnv{env: e, fake: fake}
}

// startJSON is what the start door answers, in the envelope.
type startJSON struct {
	OK   bool `json:"ok"`
	Data struct {
		ClientSecret string `json:"client_secret"`
		PaymentID    string `json:"payment_id"`
		Error        string `json:"error"`
		Redirect     string `json:"redirect"`
	} `json:"data"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// start posts the page's form to the start door as the adapter does, and
// returns the answer.
func (e *stripeEnv) start(id string, headers ...string) (*response, startJSON) {
	e.t.Helper()
	r := e.post("/invoice/"+id+"/card/start", url.Values{}, append([]string{"Accept", "application/json"}, headers...)...)
	var got startJSON
	if r.status == http.StatusOK {
		if err := json.Unmarshal([]byte(r.body), &got); err != nil {
			e.t.Fatalf("start answered %q: %v", r.body, err)
		}
	}
	return r, got
}

// intentOf returns the PaymentIntent of checkoutd's payment.
func (e *stripeEnv) intentOf(paymentID string) string {
	e.t.Helper()
	p, err := e.svc.Store().PaymentGet(context.Background(), paymentID)
	if err != nil || p.Acquirer == nil || p.Acquirer.ID == "" {
		e.t.Fatalf("payment %s: %+v, %v; want one at Stripe", paymentID, p, err)
	}
	return p.Acquirer.ID
}

// creates counts the PaymentIntents the page had made at Stripe.
func (e *stripeEnv) creates() int {
	n := 0
	for _, r := range e.fake.Requests() {
		if r.Method == "POST" && r.Path == "/v1/payment_intents" {
			n++
		}
	}
	return n
}

var scriptSrcRE = regexp.MustCompile(`<script src="([^"]+)"`)

func TestStripePageShowsTheElementsForm(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newStripeEnv(t, db)
		s := e.session(checkout.ModeLive, fullBody)
		r := e.get("/invoice/" + s.ID)
		if r.status != http.StatusOK {
			t.Fatalf("GET invoice = %d; want 200", r.status)
		}
		contains(t, "live page", r.body,
			`<a href="/invoice/`+s.ID+`?method=card" class="method current" aria-current="page">Card</a>`,
			`action="/invoice/`+s.ID+`/card/start" data-acquirer-form data-acquirer="stripe"`,
			`data-publishable-key="`+stripePublishableKey+`"`, `data-amount="3999"`, `data-currency="usd"`,
			`data-return-url="/invoice/`+s.ID+`/card/return"`, `data-acquirer-element`, "Pay $39.99")
		if m := tokenRE.FindStringSubmatch(r.body); m == nil || m[1] != tokenOf(t, e.env, s.ID) {
			t.Errorf("the form's CSRF field = %v; want the cookie's token", m)
		}
		// The card is Stripe's to take: checkoutd's own fields are not
		// there, nor is test mode's banner.
		lacks(t, "live page", r.body, `name="number"`, `name="cvc"`, "Card number", "Test mode", stripeSecretKey, stripeWebhookSecret)

		// Stripe.js from Stripe, then checkoutd's adapter, after the
		// page's own script.
		var srcs []string
		for _, m := range scriptSrcRE.FindAllStringSubmatch(r.body, -1) {
			srcs = append(srcs, m[1])
		}
		if len(srcs) != 3 || !strings.HasPrefix(srcs[0], "/assets/page.js") || srcs[1] != "https://js.stripe.com/v3" || srcs[2] != "/assets/acquirer/stripe.js" {
			t.Errorf("scripts = %q; want page.js, https://js.stripe.com/v3, /assets/acquirer/stripe.js", srcs)
		}
		if got := r.header.Get("Content-Security-Policy"); got != stripeCSP {
			t.Errorf("CSP = %q;\nwant %q", got, stripeCSP)
		}
		if m := regexp.MustCompile(`(?i)<script[^>]*>[^<]|<style|\sstyle=|\son[a-z]+=`).FindString(r.body); m != "" {
			t.Errorf("page has %q: inline code the CSP would refuse", m)
		}
	})
}

// Stripe's origins are admitted on the page of a live session paid
// through Stripe, and nowhere else: a test-mode page, a live session of a
// store without Stripe, the paid session's receipt, an error page.
func TestStripeOriginsOnlyWhereTheElementIs(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newStripeEnv(t, db)
		test := e.session(checkout.ModeTest, fullBody)
		r := e.get("/invoice/" + test.ID)
		if got := r.header.Get("Content-Security-Policy"); got != pageCSP {
			t.Errorf("test-mode CSP = %q; want it as without Stripe: %q", got, pageCSP)
		}
		contains(t, "test-mode page", r.body, "Test mode", "Card number", `action="/invoice/`+test.ID+`/card"`)
		lacks(t, "test-mode page", r.body, "js.stripe.com", "data-acquirer", stripePublishableKey)

		// Another store, on the same server, without a Stripe account.
		other, err := e.svc.CreateMerchant(context.Background(), checkout.MerchantParams{Name: "Other Games", Currency: "USD"})
		if err != nil {
			t.Fatal(err)
		}
		k, _, err := e.svc.CreateAPIKey(context.Background(), checkout.APIKeyParams{MerchantID: other.ID, Mode: checkout.ModeLive, Type: checkout.KeyBearer, Permissions: []checkout.Permission{checkout.PermCheckoutsWrite}})
		if err != nil {
			t.Fatal(err)
		}
		params, _ := checkout.ParseCreateRequest([]byte(fullBody))
		res, err := e.svc.CreateSession(context.Background(), service.CreateSessionParams{Key: k, StoreID: other.ID, Params: params})
		if err != nil {
			t.Fatal(err)
		}
		var bare checkout.SessionJSON
		json.Unmarshal(res.Data, &bare)
		r = e.get("/invoice/" + bare.ID)
		contains(t, "page without Stripe", r.body, "Payments are unavailable")
		lacks(t, "page without Stripe", r.body, "<form", "js.stripe.com", "data-acquirer", "Card")
		if got := r.header.Get("Content-Security-Policy"); got != pageCSP {
			t.Errorf("CSP without Stripe = %q; want %q", got, pageCSP)
		}

		// Paid, the session's receipt loads nothing of Stripe's.
		s := e.session(checkout.ModeLive, fullBody)
		_, st := e.start(s.ID)
		if err := e.fake.Confirm(e.intentOf(st.Data.PaymentID), stripefake.CardVisa); err != nil {
			t.Fatal(err)
		}
		e.get("/invoice/" + s.ID + "/card/return")
		r = e.get("/invoice/" + s.ID)
		contains(t, "receipt", r.body, "Payment received", "Visa ending in 4242")
		lacks(t, "receipt", r.body, "js.stripe.com", "data-acquirer")
		if got := r.header.Get("Content-Security-Policy"); got != pageCSP {
			t.Errorf("the receipt's CSP = %q; want %q", got, pageCSP)
		}

		r = e.get("/invoice/cs_" + strings.Repeat("a", 64))
		if got := r.header.Get("Content-Security-Policy"); r.status != http.StatusNotFound || strings.Contains(got, "stripe") {
			t.Errorf("404 = %d with CSP %q; want no Stripe origin", r.status, got)
		}
	})
}

func TestStripeAdapterIsServed(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newStripeEnv(t, db)
		r := e.get("/assets/acquirer/stripe.js")
		if r.status != http.StatusOK || r.header.Get("Content-Type") != "text/javascript; charset=utf-8" || r.header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET stripe.js = %d, %q, nosniff %q; want 200 JavaScript", r.status, r.header.Get("Content-Type"), r.header.Get("X-Content-Type-Options"))
		}
		if r.body != string(stripepay.New(stripepay.Config{}).Page().Adapter) {
			t.Errorf("GET stripe.js served %.80q; want stripepay's adapter", r.body)
		}
		for _, path := range []string{"/assets/acquirer/paypal.js", "/assets/acquirer/stripe", "/assets/acquirer/stripe.css", "/assets/acquirer/.js"} {
			if r := e.get(path); r.status != http.StatusNotFound {
				t.Errorf("GET %s = %d; want 404", path, r.status)
			}
		}
	})
}

func TestStripeStartDoor(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newStripeEnv(t, db)
		s := e.session(checkout.ModeLive, fullBody)

		// Refused before anything is made at Stripe.
		for _, c := range []struct {
			name    string
			form    url.Values
			headers []string
		}{
			{"no token", withToken(url.Values{}, "-"), nil},
			{"wrong token", withToken(url.Values{}, strings.Repeat("x", 43)), nil},
			{"cross-site", url.Values{}, []string{"Sec-Fetch-Site", "cross-site"}},
			{"other origin", url.Values{}, []string{"Origin", "https://evil.example"}},
		} {
			if r := e.post("/invoice/"+s.ID+"/card/start", c.form, c.headers...); r.status != http.StatusForbidden {
				t.Errorf("%s: start = %d; want 403", c.name, r.status)
			}
		}
		if n := e.creates(); n != 0 {
			t.Fatalf("refused starts made %d PaymentIntents; want none", n)
		}

		r, st := e.start(s.ID, "Sec-Fetch-Site", "same-origin")
		if r.status != http.StatusOK || !st.OK || st.Data.ClientSecret == "" || !strings.HasPrefix(st.Data.PaymentID, "pay_") || st.Data.Redirect != "" {
			t.Fatalf("start = %d %s; want the client secret", r.status, r.body)
		}
		if r.header.Get("Cache-Control") != "no-store" || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
			t.Errorf("start: Cache-Control %q, Content-Type %q", r.header.Get("Cache-Control"), r.header.Get("Content-Type"))
		}
		pi := e.intentOf(st.Data.PaymentID)
		if !strings.HasPrefix(st.Data.ClientSecret, pi+"_secret_") {
			t.Errorf("client secret %q is not %s's", st.Data.ClientSecret, pi)
		}
		// Again (a reload, a second tab): the same payment.
		if _, again := e.start(s.ID); again.Data.PaymentID != st.Data.PaymentID || again.Data.ClientSecret != st.Data.ClientSecret {
			t.Errorf("a second start = %+v; want the first payment resumed", again.Data)
		}

		// Paid, the start sends the page back to say so.
		if err := e.fake.Confirm(pi, stripefake.CardVisa); err != nil {
			t.Fatal(err)
		}
		e.get("/invoice/" + s.ID + "/card/return")
		r, st = e.start(s.ID)
		want := "/invoice/" + s.ID + "?decline=session_complete&method=card"
		if r.status != http.StatusOK || !st.OK || st.Data.ClientSecret != "" || st.Data.Redirect != want || st.Data.Error == "" {
			t.Errorf("start on a paid session = %d %s; want redirect %s", r.status, r.body, want)
		}
		if n := e.creates(); n != 2 {
			t.Errorf("PaymentIntent creates = %d; want 2 (the same one asked twice)", n)
		}
	})
}

func TestStripeReturnLooksThePaymentUp(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newStripeEnv(t, db)
		s := e.session(checkout.ModeLive, fullBody)
		_, st := e.start(s.ID)
		pi := e.intentOf(st.Data.PaymentID)

		// A forged return, as Stripe.js's own would read: Stripe says the
		// payment waits for the buyer, so nothing completes.
		forged := "/invoice/" + s.ID + "/card/return?" + url.Values{
			"payment_intent": {pi}, "payment_intent_client_secret": {st.Data.ClientSecret}, "redirect_status": {"succeeded"},
		}.Encode()
		r := e.get(forged)
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "/invoice/"+s.ID+"?method=card" {
			t.Errorf("forged return = %d to %q; want 303 back to the page", r.status, r.header.Get("Location"))
		}
		got, _ := e.svc.Store().SessionGet(context.Background(), s.ID)
		p, _ := e.svc.Store().PaymentGet(context.Background(), st.Data.PaymentID)
		if got.Status != checkout.StatusOpen || p.Status != checkout.PaymentProcessing {
			t.Fatalf("after a forged return: session %s, payment %s; want open, processing", got.Status, p.Status)
		}
		page := e.get(r.header.Get("Location"))
		contains(t, "page after a forged return", page.body, "data-acquirer-form", "Pay $39.99")
		lacks(t, "page after a forged return", page.body, "Payment received")

		// Another pi_ in the query changes nothing either.
		other := "/invoice/" + s.ID + "/card/return?payment_intent=pi_x&redirect_status=succeeded"
		if r := e.get(other); r.header.Get("Location") != "/invoice/"+s.ID+"?method=card" {
			t.Errorf("return naming pi_x = %q; want back to the page", r.header.Get("Location"))
		}

		// Confirmed at Stripe, the return completes it and sends the buyer
		// to the merchant.
		if err := e.fake.Confirm(pi, stripefake.CardVisa); err != nil {
			t.Fatal(err)
		}
		r = e.get("/invoice/" + s.ID + "/card/return")
		want := "https://acme.example/done?x=1&checkout_id=" + s.ID + "#top"
		if r.status != http.StatusSeeOther || r.header.Get("Location") != want {
			t.Fatalf("return after paying = %d to %q; want 303 to %q", r.status, r.header.Get("Location"), want)
		}
		got, _ = e.svc.Store().SessionGet(context.Background(), s.ID)
		if got.Status != checkout.StatusComplete || got.PaymentID == nil || *got.PaymentID != st.Data.PaymentID {
			t.Errorf("session after the return = %s, payment %v; want complete by %s", got.Status, got.PaymentID, st.Data.PaymentID)
		}
		// Back again (the back button): still the merchant's.
		if r := e.get("/invoice/" + s.ID + "/card/return"); r.header.Get("Location") != want {
			t.Errorf("a second return = %q; want %q", r.header.Get("Location"), want)
		}
	})
}

func TestStripeReturnAfterADecline(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newStripeEnv(t, db)
		s := e.session(checkout.ModeLive, fullBody)
		_, st := e.start(s.ID)
		pi := e.intentOf(st.Data.PaymentID)
		if err := e.fake.Confirm(pi, stripefake.CardDeclined); err == nil {
			t.Fatal("Confirm with a declined card = nil; want the decline")
		}
		r := e.get("/invoice/" + s.ID + "/card/return?payment_intent=" + pi + "&redirect_status=failed")
		want := "/invoice/" + s.ID + "?" + url.Values{"method": {"card"}, "failed": {st.Data.PaymentID}}.Encode()
		if r.status != http.StatusSeeOther || r.header.Get("Location") != want {
			t.Fatalf("return after a decline = %d to %q; want 303 to %q", r.status, r.header.Get("Location"), want)
		}
		page := e.get(want)
		contains(t, "page after a decline", page.body, "Your card was declined. Try another card, or pay another way.", "data-acquirer-form", "Pay $39.99")
		if got := e.fake.PaymentStatus(pi); got != "canceled" {
			t.Errorf("the declined PaymentIntent is %q at Stripe; want canceled before another", got)
		}

		// The next card is a new payment, which pays.
		_, next := e.start(s.ID)
		if next.Data.PaymentID == st.Data.PaymentID || next.Data.ClientSecret == "" {
			t.Fatalf("start after a decline = %+v; want a new payment", next.Data)
		}
		if err := e.fake.Confirm(e.intentOf(next.Data.PaymentID), stripefake.CardVisa); err != nil {
			t.Fatal(err)
		}
		if r := e.get("/invoice/" + s.ID + "/card/return"); !strings.HasPrefix(r.header.Get("Location"), "https://acme.example/done") {
			t.Errorf("return after the second card = %q; want the merchant's return_url", r.header.Get("Location"))
		}
		ps, _ := e.svc.Store().PaymentListBySession(context.Background(), s.ID)
		n := map[checkout.PaymentStatus]int{}
		for _, p := range ps {
			n[p.Status]++
		}
		if len(ps) != 2 || n[checkout.PaymentFailed] != 1 || n[checkout.PaymentSucceeded] != 1 {
			t.Errorf("payments = %v; want one failed, one succeeded", n)
		}
	})
}

// The doors of the element on sessions that have none: a test-mode
// session's start declines (its cards are the simulator's, on the page's
// own form) and makes nothing at Stripe; an unknown session is not found.
func TestStripeDoorsWithoutTheElement(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newStripeEnv(t, db)
		test := e.session(checkout.ModeTest, fullBody)
		r, st := e.start(test.ID)
		want := "/invoice/" + test.ID + "?decline=method_unavailable&method=card"
		if r.status != http.StatusOK || st.Data.ClientSecret != "" || st.Data.Redirect != want {
			t.Errorf("start on a test-mode session = %d %s; want redirect %s", r.status, r.body, want)
		}
		if r := e.get("/invoice/" + test.ID + "/card/return?payment_intent=pi_x&redirect_status=succeeded"); r.status != http.StatusSeeOther || r.header.Get("Location") != "/invoice/"+test.ID+"?method=card" {
			t.Errorf("return on a test-mode session = %d to %q; want back to the page", r.status, r.header.Get("Location"))
		}
		if got, _ := e.svc.Store().SessionGet(context.Background(), test.ID); got.Status != checkout.StatusOpen {
			t.Errorf("test-mode session after the doors = %s; want open", got.Status)
		}
		if n := e.creates(); n != 0 {
			t.Errorf("PaymentIntents made = %d; want none", n)
		}
		unknown := "/invoice/cs_" + strings.Repeat("d", 64)
		if r := e.get(unknown + "/card/return"); r.status != http.StatusNotFound {
			t.Errorf("return of an unknown session = %d; want 404", r.status)
		}
	})
}

package page_test

// These tests open real checkout_urls in headless Chromium (internal/browsertest)
// and pay as a buyer would: typing, clicking, tabbing, on a desktop and a
// phone-sized screen. The whole of checkoutd's HTTP surface serves them
// (server.New, on a real database, both kinds), with a fake clock that the
// tests move for confirmations, holds and expiry. The merchant's site is a
// TLS server on loopback that the browser reaches as https://shop.example.test.
//
// go test ./internal/page -run Browser -update-screenshots regenerates the
// pictures under docs/screenshots from these very tests.

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/app"
	"github.com/checkoutd/checkoutd/internal/browsertest"
	"github.com/checkoutd/checkoutd/internal/clock"
	"github.com/checkoutd/checkoutd/internal/logtest"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
	"github.com/checkoutd/checkoutd/internal/web"
)

var updateScreenshots = flag.Bool("update-screenshots", false, "write a PNG of each page state to docs/screenshots")

// screenshotDir is docs/screenshots, from this package's directory.
const screenshotDir = "../../docs/screenshots"

// t0 is when every test's fake clock starts.
var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// shopHost is the merchant's site as the browser knows it: return_url,
// cancel_url and item images point there.
const shopHost = "shop.example.test"

// shop is the merchant's site: it records the URLs buyers arrive at.
var shop struct {
	srv     *httptest.Server
	mu      sync.Mutex
	arrived []string
}

func TestMain(m *testing.M) {
	shop.srv = httptest.NewTLSServer(http.HandlerFunc(serveShop))
	browsertest.MapHost(shopHost, shop.srv.Listener.Addr().String())
	startStripeHosts()
	code := browsertest.Run(m)
	shop.srv.Close()
	stripeHosts.srv.Close()
	os.Exit(code)
}

func serveShop(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/img/") {
		w.Header().Set("Content-Type", "image/png")
		w.Write(itemImage(r.URL.Path))
		return
	}
	shop.mu.Lock()
	shop.arrived = append(shop.arrived, "https://"+r.Host+r.URL.RequestURI())
	shop.mu.Unlock()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, `<!doctype html><link rel="icon" href="data:,"><title>Acme Games</title><h1 id=shop>Acme Games: %s</h1>`, r.URL.Path)
}

// itemImage is a square PNG, a colour of its own per path.
func itemImage(path string) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 96, 96))
	c := color.RGBA{R: 0x3b, G: 0x4f, B: 0xd8, A: 0xff}
	if strings.Contains(path, "shield") {
		c = color.RGBA{R: 0xd8, G: 0x8a, B: 0x3b, A: 0xff}
	}
	for y := range 96 {
		for x := range 96 {
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	png.Encode(&buf, img)
	return buf.Bytes()
}

// browserEnv is checkoutd on a database, a buyer's tab, and a merchant key.
type browserEnv struct {
	t      *testing.T
	db     *store.DB
	clk    *clock.Fake
	svc    *service.Service
	srv    *httptest.Server
	store  *checkout.Merchant
	secret string
	// Page is the buyer's tab: an error the page writes to the console
	// (a Content-Security-Policy violation among them) fails the test.
	*browsertest.Page
}

func newBrowserEnv(t *testing.T, db *store.DB) *browserEnv {
	t.Helper()
	return newBrowserEnvWith(t, db, nil)
}

// newBrowserEnvWith is newBrowserEnv with configure applied to the
// application's configuration first.
func newBrowserEnvWith(t *testing.T, db *store.DB, configure func(*app.Config)) *browserEnv {
	t.Helper()
	page := browsertest.NewPage(t)
	clk := clock.NewFake(t0)
	log := slog.New(web.LogHandler{Handler: logtest.Logger(t).Handler()})
	e := &browserEnv{t: t, db: db, clk: clk, Page: page}
	e.srv = httptest.NewUnstartedServer(nil)
	cfg := app.Config{
		Store: db, Logger: log, Now: clk.Now, CheckoutBaseURL: "http://" + e.srv.Listener.Addr().String(),
		Processors: pay.Registry{Test: pay.Simulators()},
	}
	if configure != nil {
		configure(&cfg)
	}
	a := app.New(cfg)
	t.Cleanup(a.Close)
	e.svc = a.Service
	e.srv.Config.Handler = a.Handler
	e.srv.Start()
	t.Cleanup(e.srv.Close)

	ctx := context.Background()
	m, err := e.svc.CreateMerchant(ctx, checkout.MerchantParams{
		Name: "Acme Games", Currency: "USD", Website: "https://" + shopHost, StatementDescriptor: "ACME GAMES",
	})
	if err != nil {
		t.Fatal(err)
	}
	e.store = m
	_, e.secret, err = e.svc.CreateAPIKey(ctx, checkout.APIKeyParams{
		MerchantID: m.ID, Mode: checkout.ModeTest, Type: checkout.KeyBearer,
		Permissions: []checkout.Permission{checkout.PermCheckoutsWrite},
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// orderBody is a create request as a merchant's server sends it: its
// return_url carries a query of its own, kept after payment.
const orderBody = `{"items":[{"name":"Sword of <Testing>","amount":1500,"quantity":2,"image":"https://` + shopHost + `/img/sword.png"},
	{"name":"Shield","amount":999,"image":"https://` + shopHost + `/img/shield.png"}],
	"title":"Order 42","description":"Delivered to your game account within a minute.",
	"customer":{"email":"buyer@example.com"},"metadata":{"order_id":"42"},
	"return_url":"https://` + shopHost + `/thanks?order=42","cancel_url":"https://` + shopHost + `/cart"}`

// create makes a session through the merchant API, as a merchant does.
func (e *browserEnv) create(body string) *checkout.SessionJSON {
	e.t.Helper()
	var env struct {
		OK   bool                 `json:"ok"`
		Data checkout.SessionJSON `json:"data"`
	}
	status := e.api("POST", "/v1/stores/"+e.store.ID+"/checkouts", body, &env)
	if status != http.StatusCreated || !env.OK {
		e.t.Fatalf("create = %d", status)
	}
	return &env.Data
}

// retrieve reads a session through the merchant API.
func (e *browserEnv) retrieve(id string) *checkout.SessionJSON {
	e.t.Helper()
	var env struct {
		Data checkout.SessionJSON `json:"data"`
	}
	if status := e.api("GET", "/v1/stores/"+e.store.ID+"/checkouts/"+id, "", &env); status != http.StatusOK {
		e.t.Fatalf("retrieve %s = %d", id, status)
	}
	return &env.Data
}

func (e *browserEnv) api(method, path, body string, v any) int {
	e.t.Helper()
	req, _ := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+e.secret)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp.StatusCode
}

// events counts the store's test-mode events by type.
func (e *browserEnv) events() map[string]int {
	e.t.Helper()
	evs, err := e.svc.Store().EventList(context.Background(), checkout.EventListParams{MerchantID: e.store.ID, Mode: checkout.ModeTest, Limit: 1000})
	if err != nil {
		e.t.Fatal(err)
	}
	n := map[string]int{}
	for _, ev := range evs {
		n[ev.Type]++
	}
	return n
}

// payments returns the statuses of a session's payments, oldest first.
func (e *browserEnv) payments(id string) []checkout.PaymentStatus {
	e.t.Helper()
	ps, err := e.svc.Store().PaymentListBySession(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []checkout.PaymentStatus
	for _, p := range ps {
		out = append(out, p.Status)
	}
	return out
}

// runJobs runs the background jobs once, as their loops would at the fake
// clock's time.
func (e *browserEnv) runJobs() {
	e.t.Helper()
	ctx := context.Background()
	if _, err := e.svc.ExpireAll(ctx); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.svc.ProcessAllDuePayments(ctx); err != nil {
		e.t.Fatal(err)
	}
}

// landedOnShop waits for the buyer to reach the merchant's return_url and
// returns the URL they arrived at.
func (e *browserEnv) landedOnShop() *url.URL {
	e.t.Helper()
	e.WaitFor(`location.host === "` + shopHost + `" && document.getElementById("shop") !== null`)
	loc, err := chromedp.Run(e.Tab(), chromedp.Location())
	if err != nil {
		e.t.Fatal(err)
	}
	u, err := url.Parse(loc)
	if err != nil {
		e.t.Fatal(err)
	}
	return u
}

// fillCard types a card into the form, key by key as a buyer would.
func (e *browserEnv) fillCard(number string) {
	e.t.Helper()
	e.Do(
		chromedp.WaitVisible(chromedp.ID("number")),
		chromedp.SendKeys(chromedp.ID("number"), number),
		chromedp.SendKeys(chromedp.ID("expiry"), "1230"),
		chromedp.SendKeys(chromedp.ID("cvc"), "123"),
		chromedp.SendKeys(chromedp.ID("name"), "Jo Buyer"),
	)
}

// pay clicks the Pay button.
func (e *browserEnv) pay() {
	e.t.Helper()
	e.Do(chromedp.Click(chromedp.CSS("button.pay-button")))
}

// screenshot writes the page as docs/screenshots/<name>.png under
// -update-screenshots.
func (e *browserEnv) screenshot(name string) {
	e.t.Helper()
	if *updateScreenshots {
		e.Screenshot(filepath.Join(screenshotDir, name+".png"))
	}
}

// shoot reports whether this run of a test takes the screenshots: one
// database is enough.
func shoot(t *testing.T) bool { return strings.HasSuffix(t.Name(), "/sqlite") }

func TestBrowserCardPaysAndReturnsToTheShop(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newBrowserEnv(t, db)
		s := e.create(orderBody)
		e.Do(chromedp.Navigate(s.CheckoutURL))

		// What the buyer sees before paying.
		for _, c := range []struct{ sel, want string }{
			{"h1", "Order 42"},
			{".test-banner", "Test mode: nothing is charged. Pay with a test card such as 4242 4242 4242 4242."},
			{".merchant-name a", "Acme Games"},
			{".total strong", "$39.99"},
			{".item-name", "Sword of <Testing>"}, // as the merchant wrote it: escaped into text
			{".description", "Delivered to your game account within a minute."},
		} {
			if got := e.TextIs(c.sel, c.want); got != c.want {
				t.Errorf("%s = %q; want %q", c.sel, got, c.want)
			}
		}
		// The images load lazily, after the page: wait for them.
		if got := browsertest.Until(e.Page, `[...document.querySelectorAll("img.item-image")].filter(i => i.complete && i.naturalWidth === 96).length`, 2); got != 2 {
			t.Errorf("item images loaded = %d; want 2", got)
		}
		if got := browsertest.Until(e.Page, `document.querySelector("a.back").href`, "https://"+shopHost+"/cart"); got != "https://"+shopHost+"/cart" {
			t.Errorf("back link = %q; want cancel_url", got)
		}
		if got := e.ValueIs("#email", "buyer@example.com"); got != "buyer@example.com" {
			t.Errorf("email = %q; want the customer's, prefilled", got)
		}
		for id, label := range map[string]string{"number": "Card number", "expiry": "Expiry", "cvc": "CVC", "name": "Name on card"} {
			if got := browsertest.Until(e.Page, `document.getElementById("`+id+`").labels[0].textContent`, label); got != label {
				t.Errorf("label of #%s = %q; want %q", id, got, label)
			}
		}
		if got := browsertest.Until(e.Page, `document.body.innerText.includes("42") && !document.body.innerHTML.includes("order_id")`, true); !got {
			t.Errorf("metadata is shown on the page")
		}

		// The script formats what is typed.
		e.fillCard("4242424242424242")
		for sel, want := range map[string]string{"#number": "4242 4242 4242 4242", "#expiry": "12/30"} {
			if got := e.ValueIs(sel, want); got != want {
				t.Errorf("%s as typed = %q; want %q", sel, got, want)
			}
		}
		if got := e.TextIs("button.pay-button", "Pay $39.99"); got != "Pay $39.99" {
			t.Errorf("button = %q; want Pay $39.99", got)
		}
		if shoot(t) {
			e.screenshot("card-form")
		}

		e.pay()
		u := e.landedOnShop()
		if u.Path != "/thanks" || u.Query().Get("order") != "42" || u.Query().Get("checkout_id") != s.ID {
			t.Errorf("landed on %s; want /thanks with order=42 and checkout_id=%s", u, s.ID)
		}

		got := e.retrieve(s.ID)
		if got.Status != checkout.StatusComplete || got.PaymentID == nil || got.CompletedAt == nil {
			t.Errorf("session after paying = %s, payment %v, completed %v; want complete with both set", got.Status, got.PaymentID, got.CompletedAt)
		}
		if ev := e.events(); ev[checkout.EventCheckoutCompleted] != 1 || ev[checkout.EventPaymentSucceeded] != 1 || ev[checkout.EventPaymentFailed] != 0 {
			t.Errorf("events = %v; want one checkout.completed and one payment.succeeded", ev)
		}

		// Back on the page, the buyer sees it paid, and no form.
		e.Do(chromedp.Navigate(s.CheckoutURL))
		if got := e.TextIs(".receipt h2", "Payment received"); got != "Payment received" {
			t.Errorf("page after paying = %q; want the receipt", got)
		}
		if n := browsertest.Until(e.Page, `document.forms.length`, 0); n != 0 {
			t.Errorf("a paid session's page has %d forms; want none", n)
		}
	})
}

func TestBrowserCardDeclinesThenSucceeds(t *testing.T) {
	declines := []struct {
		number, message string
	}{
		{"4000000000000002", "Your card was declined."},
		{"4000000000009995", "Your card has insufficient funds."},
		{"4000000000000069", "Your card has expired."},
		{"4000000000000127", "Your card's security code (CVC) is incorrect."},
		{"4000000000000119", "An error occurred while processing your card."},
		{"4111111111111111", "this checkout is in test mode, where only test cards work."},
	}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newBrowserEnv(t, db)
		s := e.create(orderBody)
		e.Do(chromedp.Navigate(s.CheckoutURL))
		for i, d := range declines {
			e.fillCard(d.number)
			e.pay()
			e.WaitFor(`document.getElementById("message").textContent.includes(` + browsertest.JSString(d.message) + `)`)
			if i == 0 && shoot(t) {
				e.screenshot("card-declined")
			}
			if got := e.ValueIs("#number", ""); got != "" {
				t.Errorf("after %s the number field holds %q; want it empty (never sent back)", d.number, got)
			}
			if got := e.retrieve(s.ID).Status; got != checkout.StatusOpen {
				t.Fatalf("after %s the session is %s; want open", d.number, got)
			}
			e.clk.Advance(time.Minute) // the buyer reaches for another card
		}
		// The same page takes the next card.
		e.fillCard("5555555555554444")
		e.pay()
		if u := e.landedOnShop(); u.Query().Get("checkout_id") != s.ID {
			t.Errorf("landed on %s; want checkout_id=%s", u, s.ID)
		}
		want := slices.Repeat([]checkout.PaymentStatus{checkout.PaymentFailed}, len(declines))
		want = append(want, checkout.PaymentSucceeded)
		if got := e.payments(s.ID); !slices.Equal(got, want) {
			t.Errorf("payments = %v; want %v", got, want)
		}
		if ev := e.events(); ev[checkout.EventPaymentFailed] != len(declines) || ev[checkout.EventCheckoutCompleted] != 1 {
			t.Errorf("events = %v; want %d payment.failed and one checkout.completed", ev, len(declines))
		}
	})
}

func TestBrowserCardChecksBeforeSending(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newBrowserEnv(t, db)
		s := e.create(orderBody)
		e.Do(chromedp.Navigate(s.CheckoutURL))

		// Nothing typed: every field says what it needs, the first has focus.
		e.pay()
		for id, msg := range map[string]string{
			"number": "Enter your card number.", "expiry": "Enter your card's expiry date.",
			"cvc": "Enter your card's security code (CVC).", "name": "Enter the name on your card.",
		} {
			if got := e.TextIs("#"+id+"-error", msg); got != msg {
				t.Errorf("#%s-error = %q; want %q", id, got, msg)
			}
			if got := browsertest.Until(e.Page, `document.getElementById("`+id+`").getAttribute("aria-invalid")`, "true"); got != "true" {
				t.Errorf("#%s aria-invalid = %q; want true", id, got)
			}
		}
		if got := browsertest.Until(e.Page, `document.activeElement.id`, "number"); got != "number" {
			t.Errorf("focus on #%s; want #number", got)
		}

		// A number that fails the Luhn check is never sent.
		e.fillCard("4242424242424241")
		e.pay()
		if got := e.TextIs("#number-error", "Your card number is invalid."); got != "Your card number is invalid." {
			t.Errorf("#number-error = %q", got)
		}
		// Typing again clears the error.
		e.Do(chromedp.SendKeys(chromedp.ID("number"), "1"))
		if got := browsertest.Until(e.Page, `document.getElementById("number-error").textContent`, ""); got != "" {
			t.Errorf("#number-error after typing = %q; want it cleared", got)
		}

		// The server is the real check: an expiry in the past passes the
		// script's format check and is refused there, the form coming back
		// with the message and without the card number.
		e.Fill("#number", "4242424242424242")
		e.Fill("#expiry", "0120")
		e.ExpectConsole("status of 400") // the form comes back as 400 Bad Request
		e.pay()
		if got := e.TextIs("#expiry-error", "Your card's expiry date is in the past."); got != "Your card's expiry date is in the past." {
			t.Errorf("#expiry-error from the server = %q; want it to say the date is past", got)
		}
		if got := e.ValueIs("#number", ""); got != "" {
			t.Errorf("re-rendered number = %q; want empty", got)
		}
		if got := e.ValueIs("#name", "Jo Buyer"); got != "Jo Buyer" {
			t.Errorf("re-rendered name = %q; want what was typed", got)
		}
		if got := e.payments(s.ID); len(got) != 0 {
			t.Errorf("payments = %v; want none: nothing was valid enough to charge", got)
		}
	})
}

func TestBrowserPaysOnceWhateverTheBuyerClicks(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newBrowserEnv(t, db)
		s := e.create(orderBody)

		// A second tab on the same checkout, its form loaded first.
		second, cancel := chromedp.NewContext(e.Tab())
		defer cancel()
		if err := chromedp.Do(second, chromedp.Navigate(s.CheckoutURL)); err != nil {
			t.Fatal(err)
		}

		// A double click in the first tab sends one payment.
		e.Do(chromedp.Navigate(s.CheckoutURL))
		e.fillCard("4242424242424242")
		e.Do(chromedp.Evaluate[chromedp.Void](`(() => { const b = document.querySelector("button.pay-button"); b.click(); b.click(); })()`))
		e.landedOnShop()

		// The second tab pays too, too late: declined, never charged.
		if err := chromedp.Do(second,
			chromedp.SendKeys(chromedp.ID("number"), "5555555555554444"),
			chromedp.SendKeys(chromedp.ID("expiry"), "1230"),
			chromedp.SendKeys(chromedp.ID("cvc"), "123"),
			chromedp.SendKeys(chromedp.ID("name"), "Jo Buyer"),
			chromedp.Click(chromedp.CSS("button.pay-button")),
			chromedp.WaitVisible(chromedp.CSS(".receipt")),
		); err != nil {
			t.Fatal(err)
		}
		if got := e.payments(s.ID); !slices.Equal(got, []checkout.PaymentStatus{checkout.PaymentSucceeded}) {
			t.Errorf("payments = %v; want exactly one, succeeded", got)
		}
		if ev := e.events(); ev[checkout.EventCheckoutCompleted] != 1 || ev[checkout.EventPaymentSucceeded] != 1 {
			t.Errorf("events = %v; want one checkout.completed and one payment.succeeded", ev)
		}
	})
}

func TestBrowserReceiptWithoutReturnURL(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newBrowserEnv(t, db)
		s := e.create(`{"items":[{"name":"Gold coins × 500","amount":499}],"customer":{"email":"buyer@example.com"}}`)
		e.Do(chromedp.Navigate(s.CheckoutURL))
		e.fillCard("4242424242424242")
		e.pay()
		if got := e.TextIs(".receipt h2", "Payment received"); got != "Payment received" {
			t.Fatalf("after paying = %q; want the receipt", got)
		}
		paid := e.retrieve(s.ID)
		wants := []string{"$4.99", "Visa", *paid.PaymentID, "buyer@example.com", "You can close this page."}
		receipt := e.TextHas(".receipt", wants...)
		for _, want := range wants {
			if !strings.Contains(receipt, want) {
				t.Errorf("receipt %q lacks %q", receipt, want)
			}
		}
		if shoot(t) {
			e.screenshot("receipt")
		}
	})
}

func TestBrowserCryptoConfirmsWhileTheBuyerWatches(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newBrowserEnv(t, db)
		s := e.create(orderBody)
		e.clk.Advance(50 * time.Minute) // ten minutes left of the hour
		e.Do(
			chromedp.Navigate(s.CheckoutURL),
			chromedp.Click(chromedp.CSS(`nav.methods a[href$="method=crypto"]`)),
			chromedp.Click(chromedp.CSS(`button[name=coin][value=BTC]`)),
			chromedp.WaitVisible(chromedp.CSS(".quote")),
		)
		q, err := e.svc.Store().CryptoQuoteGet(context.Background(), s.ID, "BTC")
		if err != nil {
			t.Fatal(err)
		}
		if got := e.TextIs("[data-address]", q.Address); got != q.Address {
			t.Errorf("address = %q; want %q", got, q.Address)
		}
		// $39.99 at the test price of $60,000 a coin: 66650 satoshi.
		if got := e.TextIs("[data-coin-amount]", "0.0006665 BTC"); got != "0.0006665 BTC" {
			t.Errorf("amount = %q; want 0.0006665 BTC", got)
		}
		if n := browsertest.Until(e.Page, `document.querySelectorAll(".qr-wrap svg").length`, 1); n != 1 {
			t.Errorf("QR codes = %d; want 1", n)
		}
		if shoot(t) {
			e.screenshot("crypto-quote")
		}

		// The test-mode control broadcasts the transaction.
		e.Do(chromedp.Click(chromedp.CSS(".simulate button")))
		e.WaitFor(`document.body.dataset.state === "processing"`)
		if got := e.TextIs("[data-confirmations]", "0") + " of " + e.TextIs("[data-needed]", "2"); got != "0 of 2" {
			t.Errorf("confirmations = %q; want 0 of 2", got)
		}

		// The page follows the network without reloading: a mark set on
		// this document survives the update.
		e.Do(chromedp.Evaluate[chromedp.Void](`window.stillThisPage = true`))
		e.clk.Advance(10 * time.Minute) // one block; the hour is over
		e.runJobs()
		e.WaitFor(`document.querySelector("[data-confirmations]").textContent === "1"`)
		if !browsertest.Eval[bool](e.Page, `window.stillThisPage === true`) {
			t.Errorf("the page reloaded to show a confirmation; want it updated in place")
		}
		if got := browsertest.Until(e.Page, `document.querySelector("progress").value`, 1.0); got != 1 {
			t.Errorf("progress = %v; want 1", got)
		}
		if got := e.retrieve(s.ID).Status; got != checkout.StatusOpen {
			t.Errorf("past expires_at with the payment on its way the session is %s; want open", got)
		}
		if shoot(t) {
			e.screenshot("crypto-waiting")
		}

		// The second block confirms it; the job completes the session and
		// the page sends the buyer back to the shop.
		e.clk.Advance(10 * time.Minute)
		e.runJobs()
		if u := e.landedOnShop(); u.Query().Get("checkout_id") != s.ID || u.Query().Get("order") != "42" {
			t.Errorf("landed on %s; want order=42 and checkout_id=%s", u, s.ID)
		}
		if got := e.retrieve(s.ID); got.Status != checkout.StatusComplete || got.PaymentID == nil {
			t.Errorf("session = %s; want complete", got.Status)
		}
		if ev := e.events(); ev[checkout.EventCheckoutCompleted] != 1 || ev[checkout.EventCheckoutExpired] != 0 {
			t.Errorf("events = %v; want one checkout.completed and no checkout.expired", ev)
		}
	})
}

func TestBrowserSkinsCompleteAfterTheHoldWithTheBuyerGone(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newBrowserEnv(t, db)
		s := e.create(orderBody)
		inv, err := e.svc.SkinsInventory(context.Background(), s.ID)
		if err != nil {
			t.Fatal(err)
		}
		e.Do(
			chromedp.Navigate(s.CheckoutURL),
			chromedp.Click(chromedp.CSS(`nav.methods a[href$="method=skins"]`)),
			chromedp.WaitVisible(chromedp.CSS("form[data-skins-form]")),
		)
		const button = `document.querySelector("form[data-skins-form] button")`
		disabled := func() bool { return browsertest.Eval[bool](e.Page, button+`.disabled`) }
		if !browsertest.Until(e.Page, button+`.disabled`, true) {
			t.Errorf("the trade button is enabled with nothing picked")
		}
		pick := func(i int) { e.Do(chromedp.Click(chromedp.CSS(`input[value="` + inv[i].ID + `"]`))) }
		// 30%, 45% and 20% of the total: not enough yet.
		pick(3)
		pick(4)
		pick(2)
		if !browsertest.Until(e.Page, browsertest.TextJS("[data-picked]")+`.includes("(not enough yet)") && `+button+`.disabled`, true) {
			t.Errorf("picked 95%%: %q, disabled %v; want not enough and disabled", browsertest.Eval[string](e.Page, browsertest.TextJS("[data-picked]")), disabled())
		}
		// And 12%: enough.
		pick(1)
		if !browsertest.Until(e.Page, browsertest.TextJS("[data-picked]")+`.includes("(enough)") && !`+button+`.disabled`, true) {
			t.Errorf("picked 107%%: %q, disabled %v; want enough and enabled", browsertest.Eval[string](e.Page, browsertest.TextJS("[data-picked]")), disabled())
		}
		e.Do(chromedp.Click(chromedp.CSS("form[data-skins-form] button")))
		e.WaitFor(`document.body.dataset.state === "processing"`)
		if got := e.TextHas(".pay .card-panel", "Your trade offer was accepted", "8 November 2026"); !strings.Contains(got, "Your trade offer was accepted") || !strings.Contains(got, "8 November 2026") {
			t.Errorf("after the trade = %q; want the hold and its end", got)
		}
		if shoot(t) {
			e.screenshot("skins-hold")
		}

		// The buyer closes the page. The hold runs past expires_at.
		e.Do(chromedp.Navigate("about:blank"))
		e.clk.Advance(24 * time.Hour)
		e.runJobs()
		if got := e.retrieve(s.ID).Status; got != checkout.StatusOpen {
			t.Errorf("a day into the hold the session is %s; want open", got)
		}
		e.clk.Advance(checkout.SkinsTradeHold - 24*time.Hour)
		e.runJobs()
		if got := e.retrieve(s.ID); got.Status != checkout.StatusComplete || got.PaymentID == nil {
			t.Errorf("at the hold's end the session is %s; want complete", got.Status)
		}
		if ev := e.events(); ev[checkout.EventCheckoutCompleted] != 1 || ev[checkout.EventPaymentSucceeded] != 1 || ev[checkout.EventCheckoutExpired] != 0 {
			t.Errorf("events = %v; want one checkout.completed and one payment.succeeded, no checkout.expired", ev)
		}
	})
}

func TestBrowserFinalStatesAndUnknownSessions(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newBrowserEnv(t, db)
		s := e.create(orderBody)
		e.clk.Advance(time.Hour)
		e.Do(chromedp.Navigate(s.CheckoutURL))
		if got := e.TextIs(".pay h2", "This checkout has expired"); got != "This checkout has expired" {
			t.Errorf("expired session's page = %q", got)
		}
		if n := browsertest.Until(e.Page, `document.forms.length`, 0); n != 0 {
			t.Errorf("expired session's page has %d forms; want none", n)
		}
		if got := browsertest.Until(e.Page, `document.querySelector(".pay a.button").href`, "https://"+shopHost+"/cart"); got != "https://"+shopHost+"/cart" {
			t.Errorf("expired page links to %q; want cancel_url", got)
		}
		if shoot(t) {
			e.screenshot("expired")
		}

		e.ExpectConsole("status of 404")
		resp, err := chromedp.Run(e.Tab(), chromedp.NavigateResponse(e.srv.URL+"/invoice/cs_"+strings.Repeat("ab", 32)))
		if err != nil {
			t.Fatal(err)
		}
		if resp.Status != http.StatusNotFound {
			t.Errorf("unknown session: status %d; want 404", resp.Status)
		}
		if !browsertest.Until(e.Page, `/not found|no such/i.test(`+browsertest.TextJS("h1")+`)`, true) {
			t.Errorf("unknown session's page says %q; want that it was not found", browsertest.Eval[string](e.Page, browsertest.TextJS("h1")))
		}
	})
}

func TestBrowserKeyboardOnly(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newBrowserEnv(t, db)
		s := e.create(orderBody)
		e.Do(chromedp.Navigate(s.CheckoutURL), chromedp.WaitVisible(chromedp.ID("number")))

		// Tab from the top of the page: every control is reached, in the
		// order it is read, and shows where the focus is. The card is typed
		// into each field as the focus reaches it, and Enter sends it.
		typed := map[string]string{"number": "4242424242424242", "expiry": "1230", "cvc": "123", "name": "Jo Buyer"}
		var order []string
		for range 20 {
			e.Do(chromedp.KeyEvent("\t"))
			id := browsertest.Eval[string](e.Page, `(() => { const a = document.activeElement; return a.id || a.textContent.trim(); })()`)
			order = append(order, id)
			ring := browsertest.Eval[string](e.Page, `getComputedStyle(document.activeElement).boxShadow`)
			outline := browsertest.Eval[string](e.Page, `getComputedStyle(document.activeElement).outlineStyle`)
			if ring == "none" && outline == "none" {
				t.Errorf("%s shows no focus", id)
			}
			if keys, ok := typed[id]; ok {
				e.Do(chromedp.KeyEvent(keys))
			}
			if id == "name" {
				break
			}
		}
		want := []string{"← Back to Acme Games", "Acme Games", "Card", "Crypto", "Skins", "email", "number", "expiry", "cvc", "name"}
		if !slices.Equal(order, want) {
			t.Errorf("tab order = %q; want %q", order, want)
		}
		e.Do(chromedp.KeyEvent("\r"))
		if u := e.landedOnShop(); u.Query().Get("checkout_id") != s.ID {
			t.Errorf("landed on %s", u)
		}
	})
}

func TestBrowserPhoneSizedScreen(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newBrowserEnv(t, db)
		s := e.create(orderBody)
		e.Do(
			chromedp.EmulateViewport(375, 740, chromedp.EmulateMobile, chromedp.EmulateScale(2)),
			chromedp.Navigate(s.CheckoutURL),
			chromedp.WaitVisible(chromedp.ID("number")),
		)
		if w := browsertest.Eval[int](e.Page, `document.documentElement.scrollWidth`); w > 375 {
			t.Errorf("page is %dpx wide on a 375px screen: it scrolls sideways", w)
		}
		for _, sel := range []string{"#number", "#expiry", "#cvc", "#name", "button.pay-button", "nav.methods"} {
			right := browsertest.Eval[float64](e.Page, `document.querySelector("`+sel+`").getBoundingClientRect().right`)
			if right > 375 {
				t.Errorf("%s ends at %vpx, off a 375px screen", sel, right)
			}
		}
		// Inputs at 16px or more, so phones do not zoom in on focus.
		if px := browsertest.Eval[float64](e.Page, `parseFloat(getComputedStyle(document.getElementById("number")).fontSize)`); px < 16 {
			t.Errorf("card number font size = %vpx; want at least 16px", px)
		}
		if shoot(t) {
			e.screenshot("phone")
		}
		e.fillCard("4242424242424242")
		e.Do(chromedp.ScrollIntoView(chromedp.CSS("button.pay-button")))
		e.pay()
		if u := e.landedOnShop(); u.Query().Get("checkout_id") != s.ID {
			t.Errorf("landed on %s", u)
		}
	})
}

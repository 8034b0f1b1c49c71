package page

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/clock"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// These tests drive the page over HTTP, as a browser without JavaScript
// would: forms, cookies and redirects. The browser tests cover the script.

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

type env struct {
	t      *testing.T
	db     *store.DB
	clk    *clock.Fake
	svc    *service.Service
	srv    *httptest.Server
	client *http.Client
	store  *checkout.Merchant
	keys   map[checkout.Mode]*checkout.APIKey
}

func newEnv(t *testing.T, db *store.DB) *env {
	t.Helper()
	return newEnvWith(t, db, pay.Registry{Test: pay.Simulators()})
}

// newEnvWith is newEnv with processors procs.
func newEnvWith(t *testing.T, db *store.DB, procs pay.Registry) *env {
	t.Helper()
	return newEnvConfig(t, db, func(c *service.Config) { c.Processors = procs })
}

// newEnvConfig is newEnv with configure applied to the service's
// configuration first.
func newEnvConfig(t *testing.T, db *store.DB, configure func(*service.Config)) *env {
	t.Helper()
	clk := clock.NewFake(t0)
	cfg := service.Config{
		Store: db, Now: clk.Now, CheckoutBaseURL: "https://pay.example.test",
		Processors: pay.Registry{Test: pay.Simulators()},
	}
	configure(&cfg)
	svc := service.New(cfg)
	p := New(svc, nil)
	mux := http.NewServeMux()
	// The page's routes, as internal/server/routes.go lists them.
	mux.Handle("GET /invoice/{id}", p.HandleInvoice())
	mux.Handle("GET /invoice/{id}/status", p.HandleStatus())
	mux.Handle("POST /invoice/{id}/card", p.HandleCard())
	mux.Handle("POST /invoice/{id}/crypto", p.HandleCryptoQuote())
	mux.Handle("POST /invoice/{id}/crypto/simulate", p.HandleCryptoSimulate())
	mux.Handle("POST /invoice/{id}/skins", p.HandleSkins())
	mux.Handle("POST /invoice/{id}/card/start", p.HandleAcquirerStart())
	mux.Handle("GET /invoice/{id}/card/return", p.HandleAcquirerReturn())
	mux.Handle("GET /invoice/", p.HandleNotFound())
	mux.Handle("GET /refund/{token}", p.HandleRefund())
	mux.Handle("POST /refund/{token}", p.HandleRefundAddress())
	mux.Handle("GET /refund/", p.HandleRefundNotFound())
	mux.Handle("GET /assets/{name}", p.HandleAsset())
	mux.Handle("GET /assets/acquirer/{file}", p.HandleAcquirerAdapter())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	jar, _ := cookiejar.New(nil)
	e := &env{t: t, db: db, clk: clk, svc: svc, srv: srv, keys: map[checkout.Mode]*checkout.APIKey{},
		client: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	ctx := context.Background()
	m, err := svc.CreateMerchant(ctx, checkout.MerchantParams{Name: "Acme Games", Currency: "USD", Website: "https://acme.example"})
	if err != nil {
		t.Fatal(err)
	}
	e.store = m
	for _, mode := range []checkout.Mode{checkout.ModeTest, checkout.ModeLive} {
		k, _, err := svc.CreateAPIKey(ctx, checkout.APIKeyParams{MerchantID: m.ID, Mode: mode, Type: checkout.KeyBearer, Permissions: []checkout.Permission{checkout.PermCheckoutsWrite}})
		if err != nil {
			t.Fatal(err)
		}
		e.keys[mode] = k
	}
	return e
}

// session creates a session of mode from a create request body.
func (e *env) session(mode checkout.Mode, body string) *checkout.SessionJSON {
	e.t.Helper()
	params, err := checkout.ParseCreateRequest([]byte(body))
	if err != nil {
		e.t.Fatalf("ParseCreateRequest(%s) = %v", body, err)
	}
	res, err := e.svc.CreateSession(context.Background(), service.CreateSessionParams{Key: e.keys[mode], StoreID: e.store.ID, Params: params})
	if err != nil {
		e.t.Fatal(err)
	}
	var s checkout.SessionJSON
	if err := json.Unmarshal(res.Data, &s); err != nil {
		e.t.Fatal(err)
	}
	return &s
}

type response struct {
	status int
	header http.Header
	body   string
}

func (e *env) do(req *http.Request) *response {
	e.t.Helper()
	resp, err := e.client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return &response{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

func (e *env) get(path string) *response {
	e.t.Helper()
	req, _ := http.NewRequest("GET", e.srv.URL+path, nil)
	return e.do(req)
}

var tokenRE = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// post sends a form to path as the page would, with the token of a page
// loaded first. Extra headers are set on the request.
func (e *env) post(path string, form url.Values, headers ...string) *response {
	e.t.Helper()
	if form.Get(csrfField) == "" {
		id := strings.Split(strings.TrimPrefix(path, "/invoice/"), "/")[0]
		page := e.get("/invoice/" + id)
		if m := tokenRE.FindStringSubmatch(page.body); m != nil {
			form.Set(csrfField, m[1])
		} else {
			// A page without forms (paid, expired) still sets the cookie:
			// post as a second tab whose form was loaded earlier would.
			form.Set(csrfField, tokenOf(e.t, e, id))
		}
	}
	req, _ := http.NewRequest("POST", e.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return e.do(req)
}

func card(number string) url.Values {
	return url.Values{"number": {number}, "expiry": {"12/30"}, "cvc": {"123"}, "name": {"Jo Buyer"}}
}

func contains(t *testing.T, what, body string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(body, w) {
			t.Errorf("%s does not contain %q", what, w)
		}
	}
}

func lacks(t *testing.T, what, body string, unwanted ...string) {
	t.Helper()
	for _, w := range unwanted {
		if strings.Contains(body, w) {
			t.Errorf("%s contains %q", what, w)
		}
	}
}

const fullBody = `{"items":[{"name":"Sword <script>alert(1)</script>","amount":1500,"quantity":2},
	{"name":"Shield","amount":999,"image":"https://img.example/shield.png"}],
	"title":"Order \"42\" <b>bold</b>","description":"Thanks & enjoy","customer":{"email":"buyer@example.com"},
	"metadata":{"order_id":"SECRETMETA"},"return_url":"https://acme.example/done?x=1#top","cancel_url":"https://acme.example/cart"}`

func TestInvoiceShowsTheSession(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		s := e.session(checkout.ModeTest, fullBody)
		r := e.get("/invoice/" + s.ID)
		if r.status != http.StatusOK {
			t.Fatalf("GET invoice = %d; want 200", r.status)
		}
		contains(t, "page", r.body,
			"Acme Games", `href="https://acme.example"`,
			"Order &#34;42&#34; &lt;b&gt;bold&lt;/b&gt;",
			"Sword &lt;script&gt;alert(1)&lt;/script&gt;", "2 × $15.00", "$30.00",
			"Shield", `src="https://img.example/shield.png"`, "1 × $9.99",
			"$39.99", "Pay $39.99", "Thanks &amp; enjoy",
			`value="buyer@example.com"`, `href="https://acme.example/cart"`, "Back to Acme Games",
			"Test mode", "Card number", "Expiry", "CVC", "Name on card")
		lacks(t, "page", r.body, "<script>alert", "SECRETMETA", "order_id", "<b>bold")
	})
}

func TestInvoiceFormatsTheCurrency(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		tests := []struct{ body, want string }{
			{`{"items":[{"name":"A","amount":1500}],"currency":"jpy"}`, "¥1,500"},
			{`{"items":[{"name":"A","amount":123456}],"currency":"usd"}`, "$1,234.56"},
			{`{"items":[{"name":"A","amount":1234567}],"currency":"kwd"}`, "1,234.567 KWD"},
			{`{"items":[{"name":"A","amount":99}],"currency":"eur"}`, "€0.99"},
		}
		for _, tt := range tests {
			s := e.session(checkout.ModeTest, tt.body)
			contains(t, tt.body, e.get("/invoice/"+s.ID).body, "Pay "+tt.want)
		}
	})
}

func TestInvoiceSecurityHeadersAndNoInlineCode(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		s := e.session(checkout.ModeTest, fullBody)
		r := e.get("/invoice/" + s.ID)
		want := map[string]string{
			"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' https: data:; connect-src 'self'; " +
				"form-action 'self' https://acme.example; frame-ancestors 'none'; base-uri 'none'",
			"X-Content-Type-Options": "nosniff",
			"X-Frame-Options":        "DENY",
			"Referrer-Policy":        "no-referrer",
			"Cache-Control":          "no-store",
		}
		for k, v := range want {
			if got := r.header.Get(k); got != v {
				t.Errorf("%s = %q; want %q", k, got, v)
			}
		}
		// No inline script, style or event handler for the CSP to refuse.
		for _, tag := range regexp.MustCompile(`(?i)<script[^>]*>`).FindAllString(r.body, -1) {
			if !strings.Contains(tag, ` src="/assets/`) {
				t.Errorf("inline script %s: the CSP would refuse it", tag)
			}
		}
		if m := regexp.MustCompile(`(?i)<style|\sstyle=|\son[a-z]+=`).FindString(r.body); m != "" {
			t.Errorf("page has %q: inline style or handler the CSP would refuse", m)
		}
		// A session without return_url lets forms post to the page only.
		s2 := e.session(checkout.ModeTest, `{"items":[{"name":"A","amount":500}]}`)
		if got := e.get("/invoice/" + s2.ID).header.Get("Content-Security-Policy"); !strings.Contains(got, "form-action 'self';") {
			t.Errorf("CSP without return_url = %q; want form-action 'self' alone", got)
		}
	})
}

func TestInvoiceNotFound(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		for _, path := range []string{
			"/invoice/cs_" + strings.Repeat("a", 64), "/invoice/cs_" + strings.Repeat("b", 32),
			"/invoice/nope", "/invoice/cs_" + strings.Repeat("a", 64) + "/nope", "/invoice/",
		} {
			r := e.get(path)
			if r.status != http.StatusNotFound || !strings.Contains(r.body, "Checkout not found") {
				t.Errorf("GET %s = %d %.80q; want 404 Checkout not found", path, r.status, r.body)
			}
			if ct := r.header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
				t.Errorf("GET %s: Content-Type = %q", path, ct)
			}
		}
	})
}

func TestCardDeclineThenSuccess(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		s := e.session(checkout.ModeTest, fullBody)
		r := e.post("/invoice/"+s.ID+"/card", card("4000 0000 0000 9995"))
		if r.status != http.StatusSeeOther {
			t.Fatalf("declined POST = %d; want 303", r.status)
		}
		loc := r.header.Get("Location")
		page := e.get(loc)
		contains(t, "page after decline", page.body, "Your card has insufficient funds.", "Pay $39.99")
		got, _ := e.svc.Store().SessionGet(context.Background(), s.ID)
		if got.Status != checkout.StatusOpen || got.PaymentInProgress() {
			t.Fatalf("after decline: session %s, in progress %v; want open and free", got.Status, got.PaymentInProgress())
		}

		r = e.post("/invoice/"+s.ID+"/card", card("4242424242424242"))
		want := "https://acme.example/done?x=1&checkout_id=" + s.ID + "#top"
		if r.status != http.StatusSeeOther || r.header.Get("Location") != want {
			t.Fatalf("paying POST = %d to %q; want 303 to %q", r.status, r.header.Get("Location"), want)
		}
		page = e.get("/invoice/" + s.ID)
		contains(t, "receipt", page.body, "Payment received", "Visa ending in 4242", "Return to Acme Games")
		lacks(t, "receipt", page.body, "<form", "Card number")

		// Paying again (a second tab) charges nothing and says why.
		r = e.post("/invoice/"+s.ID+"/card", card("5555555555554444"))
		if loc := r.header.Get("Location"); !strings.Contains(loc, "decline=session_complete") {
			t.Errorf("second payment redirects to %q; want decline=session_complete", loc)
		}
		ps, _ := e.svc.Store().PaymentListBySession(context.Background(), s.ID)
		if len(ps) != 2 {
			t.Errorf("payments = %d; want 2 (the decline and the success)", len(ps))
		}
	})
}

func TestCardWithoutReturnURLShowsTheReceipt(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		s := e.session(checkout.ModeTest, `{"items":[{"name":"A","amount":500}]}`)
		r := e.post("/invoice/"+s.ID+"/card", card("4242424242424242"))
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "/invoice/"+s.ID {
			t.Fatalf("POST = %d to %q; want 303 to the page", r.status, r.header.Get("Location"))
		}
		contains(t, "receipt", e.get("/invoice/"+s.ID).body, "Payment received", "$5.00", "You can close this page.")
	})
}

func TestCardValidationKeepsOnlySafeFields(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		s := e.session(checkout.ModeTest, fullBody)
		form := url.Values{"number": {"4242 4242 4242 4241"}, "expiry": {"13/30"}, "cvc": {"98"}, "name": {"Jo <Buyer>"}, "email": {"not-an-email"}}
		r := e.post("/invoice/"+s.ID+"/card", form)
		if r.status != http.StatusBadRequest {
			t.Fatalf("POST = %d; want 400", r.status)
		}
		contains(t, "form again", r.body, "Your card number is invalid.", "Enter the expiry date as MM/YY.",
			"3 or 4 digits", `value="13/30"`, `value="Jo &lt;Buyer&gt;"`, `value="not-an-email"`, `aria-invalid="true"`)
		lacks(t, "form again", r.body, "4241", `value="98"`)
		if ps, _ := e.svc.Store().PaymentListBySession(context.Background(), s.ID); len(ps) != 0 {
			t.Errorf("payments after a form error = %d; want 0", len(ps))
		}
	})
}

func TestFormsRefuseCrossSiteRequests(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		s := e.session(checkout.ModeTest, fullBody)
		path := "/invoice/" + s.ID + "/card"
		tests := []struct {
			name    string
			form    url.Values
			headers []string
		}{
			{"no token", withToken(card("4242424242424242"), "-"), nil},
			{"wrong token", withToken(card("4242424242424242"), strings.Repeat("x", 43)), nil},
			{"cross-site", card("4242424242424242"), []string{"Sec-Fetch-Site", "cross-site"}},
			{"other origin", card("4242424242424242"), []string{"Origin", "https://evil.example"}},
		}
		for _, tt := range tests {
			r := e.post(path, tt.form, tt.headers...)
			if r.status != http.StatusForbidden {
				t.Errorf("%s: POST = %d; want 403", tt.name, r.status)
			}
		}
		// Without the cookie, a token alone is refused.
		bare := &http.Client{CheckRedirect: e.client.CheckRedirect}
		f := card("4242424242424242")
		f.Set(csrfField, strings.Repeat("x", 43))
		resp, err := bare.PostForm(e.srv.URL+path, f)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("no cookie: POST = %d; want 403", resp.StatusCode)
		}
		if ps, _ := e.svc.Store().PaymentListBySession(context.Background(), s.ID); len(ps) != 0 {
			t.Errorf("payments after refused posts = %d; want 0", len(ps))
		}
	})
}

// withToken sets the form's token; "-" sends none at all (post fills in a
// valid one when the field is empty).
func withToken(f url.Values, tok string) url.Values {
	if tok == "-" {
		tok = " "
	}
	f.Set(csrfField, tok)
	return f
}

func TestFormBodyLimit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		s := e.session(checkout.ModeTest, fullBody)
		f := card("4242424242424242")
		f.Set("name", strings.Repeat("a", maxFormBytes))
		if r := e.post("/invoice/"+s.ID+"/card", f); r.status != http.StatusBadRequest {
			t.Errorf("oversize POST = %d; want 400", r.status)
		}
	})
}

func TestStatusShowsOnlyWhatThePageNeeds(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		s := e.session(checkout.ModeTest, fullBody)
		r := e.get("/invoice/" + s.ID + "/status")
		if r.status != http.StatusOK || r.header.Get("Cache-Control") != "no-store" {
			t.Fatalf("status = %d (Cache-Control %q)", r.status, r.header.Get("Cache-Control"))
		}
		var got struct {
			OK   bool                       `json:"ok"`
			Data map[string]json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal([]byte(r.body), &got); err != nil {
			t.Fatal(err)
		}
		if len(got.Data) != 3 || string(got.Data["status"]) != `"open"` || string(got.Data["payment"]) != "null" || string(got.Data["redirect_url"]) != "null" {
			t.Errorf("status = %s; want only status open, payment null, redirect_url null", r.body)
		}
		lacks(t, "status", r.body, "buyer@example.com", "SECRETMETA", "Sword", "3999")

		if r := e.get("/invoice/cs_" + strings.Repeat("c", 64) + "/status"); r.status != http.StatusNotFound {
			t.Errorf("status of an unknown session = %d; want 404", r.status)
		}
	})
}

func TestFinalStatesShowNoForm(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		s := e.session(checkout.ModeTest, fullBody)
		e.clk.Advance(time.Hour)
		r := e.get("/invoice/" + s.ID)
		contains(t, "expired page", r.body, "This checkout has expired", `href="https://acme.example/cart"`)
		lacks(t, "expired page", r.body, "<form", "Card number", "Pay $")
		// The read expired it for everyone.
		got, _ := e.svc.Store().SessionGet(context.Background(), s.ID)
		if got.Status != checkout.StatusExpired {
			t.Errorf("session after the page read = %s; want expired", got.Status)
		}
		// A payment posted to it declines without a charge.
		r = e.post("/invoice/"+s.ID+"/card", card("4242424242424242"))
		if !strings.Contains(r.header.Get("Location"), "decline=session_expired") {
			t.Errorf("POST to an expired session redirects to %q; want decline=session_expired", r.header.Get("Location"))
		}
	})
}

func TestLiveModeWithoutProcessorsOffersNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		s := e.session(checkout.ModeLive, fullBody)
		r := e.get("/invoice/" + s.ID)
		contains(t, "live page", r.body, "Payments are unavailable")
		lacks(t, "live page", r.body, "<form", "Test mode", "Card number")
		r = e.post("/invoice/"+s.ID+"/card", withToken(card("4242424242424242"), tokenOf(t, e, s.ID)))
		if !strings.Contains(r.header.Get("Location"), "decline=method_unavailable") {
			t.Errorf("card POST on live = %q; want decline=method_unavailable", r.header.Get("Location"))
		}
	})
}

// tokenOf returns the csrf token a page load sets (the live page has no
// form to read it from).
func tokenOf(t *testing.T, e *env, id string) string {
	t.Helper()
	u, _ := url.Parse(e.srv.URL + "/invoice/")
	for _, c := range e.client.Jar.Cookies(u) {
		if c.Name == csrfCookie {
			return c.Value
		}
	}
	t.Fatal("no csrf cookie")
	return ""
}

func TestCardAttemptLimit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		s := e.session(checkout.ModeTest, fullBody)
		for i := 0; i < checkout.MaxFailedCardAttempts; i++ {
			if r := e.post("/invoice/"+s.ID+"/card", card("4000000000000002")); !strings.Contains(r.header.Get("Location"), "failed=pay_") {
				t.Fatalf("attempt %d redirects to %q; want a failed payment", i+1, r.header.Get("Location"))
			}
		}
		r := e.post("/invoice/"+s.ID+"/card", card("4242424242424242"))
		if !strings.Contains(r.header.Get("Location"), "decline=too_many_attempts") {
			t.Fatalf("attempt %d redirects to %q; want decline=too_many_attempts", checkout.MaxFailedCardAttempts+1, r.header.Get("Location"))
		}
		contains(t, "page", e.get(r.header.Get("Location")).body, "after 10 failed attempts")
		// Other methods stay open to the buyer.
		contains(t, "crypto tab", e.get("/invoice/"+s.ID+"?method=crypto").body, "BTC", "Bitcoin")
	})
}

func TestCryptoOnThePage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		s := e.session(checkout.ModeTest, fullBody)
		e.clk.Advance(55 * time.Minute) // 5 minutes before the hour ends
		r := e.post("/invoice/"+s.ID+"/crypto", url.Values{"coin": {"BTC"}})
		if r.status != http.StatusSeeOther {
			t.Fatalf("quote POST = %d", r.status)
		}
		page := e.get(r.header.Get("Location"))
		q, err := e.svc.Store().CryptoQuoteGet(context.Background(), s.ID, "BTC")
		if err != nil {
			t.Fatal(err)
		}
		// $39.99 at the test price of $60,000: 66650 satoshi, rounded up.
		contains(t, "quote", page.body, q.Address, "0.0006665 BTC", "66650 satoshi", `<svg class="qr"`,
			`href="bitcoin:`+q.Address+`?amount=0.0006665"`, "Simulate payment (test mode)", `data-status-url=`)

		r = e.post("/invoice/"+s.ID+"/crypto/simulate", url.Values{"coin": {"BTC"}})
		page = e.get(r.header.Get("Location"))
		contains(t, "processing", page.body, "Payment on its way", "0</span> of <span data-needed>2</span> confirmations")
		lacks(t, "processing", page.body, "<form")

		// Past the hour the session waits for its payment.
		e.clk.Advance(15 * time.Minute)
		if _, err := e.svc.ExpireAll(context.Background()); err != nil {
			t.Fatal(err)
		}
		page = e.get("/invoice/" + s.ID)
		contains(t, "confirming", page.body, "1</span> of <span data-needed>2</span>")
		st := e.get("/invoice/" + s.ID + "/status").body
		contains(t, "status", st, `"confirmations":1`, `"confirmations_required":2`, `"method":"crypto"`)

		e.clk.Advance(5 * time.Minute)
		if _, err := e.svc.ProcessAllDuePayments(context.Background()); err != nil {
			t.Fatal(err)
		}
		contains(t, "status", e.get("/invoice/"+s.ID+"/status").body, `"status":"complete"`, `"redirect_url":"https://acme.example/done?x=1\u0026checkout_id=`+s.ID+`#top"`)
		contains(t, "receipt", e.get("/invoice/"+s.ID).body, "Payment received", "0.0006665 BTC")
	})
}

func TestSkinsOnThePage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		s := e.session(checkout.ModeTest, fullBody)
		page := e.get("/invoice/" + s.ID + "?method=skins")
		inv, err := e.svc.SkinsInventory(context.Background(), s.ID)
		if err != nil {
			t.Fatal(err)
		}
		contains(t, "skins", page.body, "Pick items worth at least $39.99", inv[0].Name, inv[7].Name, "Send trade offer")

		// Too little: refused, nothing traded, the pick kept.
		r := e.post("/invoice/"+s.ID+"/skins", url.Values{"item": {inv[0].ID, inv[1].ID}})
		if r.status != http.StatusBadRequest {
			t.Fatalf("short trade = %d; want 400", r.status)
		}
		contains(t, "short trade", r.body, "pick items worth at least $39.99", `value="`+inv[0].ID+`" data-value="`)
		if ps, _ := e.svc.Store().PaymentListBySession(context.Background(), s.ID); len(ps) != 0 {
			t.Fatalf("payments after a short trade = %d; want 0", len(ps))
		}

		r = e.post("/invoice/"+s.ID+"/skins", url.Values{"item": {inv[7].ID}})
		page = e.get(r.header.Get("Location"))
		contains(t, "hold", page.body, "Your trade offer was accepted", "8 November 2026")

		e.clk.Advance(checkout.SkinsTradeHold)
		if _, err := e.svc.ProcessAllDuePayments(context.Background()); err != nil {
			t.Fatal(err)
		}
		contains(t, "receipt", e.get("/invoice/"+s.ID).body, "Payment received", "Skins trade (1 items)")
	})
}

func TestAssets(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		p := New(e.svc, nil)
		for name, ct := range map[string]string{"page.js": "text/javascript; charset=utf-8", "page.css": "text/css; charset=utf-8", "favicon.svg": "image/svg+xml"} {
			r := e.get(p.assets.URL("/assets/", name))
			if r.status != http.StatusOK || r.header.Get("Content-Type") != ct || !strings.Contains(r.header.Get("Cache-Control"), "immutable") {
				t.Errorf("GET %s = %d %q %q", name, r.status, r.header.Get("Content-Type"), r.header.Get("Cache-Control"))
			}
			if r := e.get("/assets/" + name + "?v=old"); r.header.Get("Cache-Control") != "no-cache" {
				t.Errorf("GET %s?v=old: Cache-Control %q; want no-cache", name, r.header.Get("Cache-Control"))
			}
		}
		if r := e.get("/assets/nope.js"); r.status != http.StatusNotFound {
			t.Errorf("GET unknown asset = %d; want 404", r.status)
		}
	})
}

// downNetwork is a crypto network whose node stops answering when down is
// set: a fault injected into the test network.
type downNetwork struct {
	pay.CryptoNetwork
	down *atomic.Bool
}

func (n downNetwork) Confirmations(ctx context.Context, p *checkout.Payment, now time.Time) (int, error) {
	if n.down.Load() {
		return 0, errors.New("node unreachable: connection refused")
	}
	return n.CryptoNetwork.Confirmations(ctx, p, now)
}

// A payment on its way while the crypto node does not answer (restarting,
// down): the page and its status still answer, saying the count is
// unknown for now, never a 500; back, the count shows again.
func TestCryptoNodeDownOnThePage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		down := &atomic.Bool{}
		procs := pay.Simulators()
		procs.Crypto = downNetwork{procs.Crypto, down}
		e := newEnvWith(t, db, pay.Registry{Test: procs})
		s := e.session(checkout.ModeTest, fullBody)
		e.post("/invoice/"+s.ID+"/crypto", url.Values{"coin": {"BTC"}})
		e.post("/invoice/"+s.ID+"/crypto/simulate", url.Values{"coin": {"BTC"}})

		down.Store(true)
		page := e.get("/invoice/" + s.ID)
		if page.status != http.StatusOK {
			t.Fatalf("page with the node down = %d; want 200", page.status)
		}
		contains(t, "page, node down", page.body, "Payment on its way", "<span data-confirmations>?</span> of <span data-needed>2</span>", "cannot count its confirmations right now")
		st := e.get("/invoice/" + s.ID + "/status")
		if st.status != http.StatusOK {
			t.Fatalf("status with the node down = %d: %s; want 200", st.status, st.body)
		}
		contains(t, "status, node down", st.body, `"method":"crypto"`, `"status":"processing"`)
		lacks(t, "status, node down", st.body, `"confirmations"`)

		down.Store(false)
		contains(t, "page, node back", e.get("/invoice/"+s.ID).body, "<span data-confirmations>0</span> of <span data-needed>2</span>")
		lacks(t, "page, node back", e.get("/invoice/"+s.ID).body, "cannot count")
		contains(t, "status, node back", e.get("/invoice/"+s.ID+"/status").body, `"confirmations":0`)
	})
}

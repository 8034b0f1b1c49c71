package dashboard_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/app"
	"github.com/checkoutd/checkoutd/internal/clock"
	"github.com/checkoutd/checkoutd/internal/logtest"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

const password = "correct horse battery staple"

// The payment page's policy: the dashboard must be as strict.
const wantCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' https: data:; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// env is the whole application (app.New) on a real database behind a real
// HTTP server, with a fake clock.
type env struct {
	t      *testing.T
	db     *store.DB
	clock  *clock.Fake
	svc    *service.Service
	app    *app.App
	srv    *httptest.Server
	https  bool
	client *http.Client
}

func newEnv(t *testing.T, db *store.DB, baseURL string) *env {
	t.Helper()
	return newEnvWith(t, db, baseURL, nil)
}

// newEnvWith is newEnv with a change to the application's configuration.
func newEnvWith(t *testing.T, db *store.DB, baseURL string, configure func(*app.Config)) *env {
	t.Helper()
	clk := clock.NewFake(t0)
	cfg := app.Config{Store: db, Logger: logtest.Logger(t), Now: clk.Now, CacheNow: clk.Now, BaseURL: baseURL, CheckoutBaseURL: baseURL}
	if configure != nil {
		configure(&cfg)
	}
	a := app.New(cfg)
	t.Cleanup(a.Close)
	srv := httptest.NewServer(a.Handler)
	t.Cleanup(srv.Close)
	return &env{t: t, db: db, clock: clk, svc: a.Service, app: a, srv: srv, https: strings.HasPrefix(baseURL, "https:"),
		client: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (e *env) sessionCookieName() string {
	if e.https {
		return "__Host-checkoutd_dashboard"
	}
	return "checkoutd_dashboard"
}

// page is a response read whole.
type page struct {
	status int
	header http.Header
	body   string
	resp   *http.Response
}

func (p *page) cookie(name string) *http.Cookie {
	for _, c := range p.resp.Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// inlineScript matches a script element without a src: the policy would
// refuse it.
var inlineScript = regexp.MustCompile(`<script(\s[^>]*)?>\s*[^<\s]|<script>`)

var formTokenRE = regexp.MustCompile(`name="form_token" value="([^"]+)"`)

func (p *page) formToken(t *testing.T) string {
	t.Helper()
	m := formTokenRE.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no form token in %s", p.body)
	}
	return m[1]
}

func (e *env) do(method, path string, form url.Values, header http.Header, cookies ...*http.Cookie) *page {
	e.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, e.srv.URL+path, body)
	if err != nil {
		e.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range header {
		req.Header[k] = v
	}
	for _, c := range cookies {
		if c != nil {
			req.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
		}
	}
	resp, err := e.client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return &page{status: resp.StatusCode, header: resp.Header, body: string(b), resp: resp}
}

func (e *env) get(path string, cookies ...*http.Cookie) *page {
	e.t.Helper()
	return e.do(http.MethodGet, path, nil, nil, cookies...)
}

func (e *env) post(path string, form url.Values, cookies ...*http.Cookie) *page {
	e.t.Helper()
	return e.do(http.MethodPost, path, form, http.Header{"Sec-Fetch-Site": {"same-origin"}}, cookies...)
}

// signInForm opens the sign-in page: its form cookie and token.
func (e *env) signInForm() (*http.Cookie, string) {
	e.t.Helper()
	p := e.get("/dashboard/signin")
	if p.status != http.StatusOK {
		e.t.Fatalf("GET /dashboard/signin = %d", p.status)
	}
	var c *http.Cookie
	for _, ck := range p.resp.Cookies() {
		if strings.Contains(ck.Name, "checkoutd_dashboard_form") {
			c = ck
		}
	}
	if c == nil {
		e.t.Fatal("the sign-in page set no form cookie")
	}
	return c, p.formToken(e.t)
}

func (e *env) trySignIn(email, pw string, cookies ...*http.Cookie) *page {
	e.t.Helper()
	fc, tok := e.signInForm()
	return e.post("/dashboard/signin", url.Values{"email": {email}, "password": {pw}, "form_token": {tok}}, append(cookies, fc)...)
}

// signIn signs in and returns the session cookie.
func (e *env) signIn(email string) *http.Cookie {
	e.t.Helper()
	p := e.trySignIn(email, password)
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/dashboard/" {
		e.t.Fatalf("sign in = %d %s; want 303 to /dashboard/: %s", p.status, p.header.Get("Location"), p.body)
	}
	c := p.cookie(e.sessionCookieName())
	if c == nil {
		e.t.Fatalf("sign in set no %s cookie", e.sessionCookieName())
	}
	return c
}

func (e *env) account(email string) *checkout.Account {
	e.t.Helper()
	a, err := e.svc.CreateAccount(context.Background(), email, password)
	if err != nil {
		e.t.Fatal(err)
	}
	return a
}

func wantRedirectToSignIn(t *testing.T, what string, p *page) {
	t.Helper()
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/dashboard/signin" {
		t.Errorf("%s = %d, Location %q; want 303 to /dashboard/signin", what, p.status, p.header.Get("Location"))
	}
}

func TestRedirectWithoutSession(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, "http://dash.example.test")
		bogus := &http.Cookie{Name: e.sessionCookieName(), Value: strings.Repeat("A", 43)}
		for _, path := range []string{"/dashboard/", "/dashboard/keys", "/dashboard/stores/abc/test/developers/webhooks"} {
			wantRedirectToSignIn(t, "GET "+path, e.get(path))
			p := e.get(path, bogus)
			wantRedirectToSignIn(t, "GET "+path+" (unknown session)", p)
			if c := p.cookie(bogus.Name); c == nil || c.MaxAge >= 0 {
				t.Errorf("GET %s with an unknown session did not clear its cookie", path)
			}
		}
		if p := e.get("/dashboard"); p.status != http.StatusMovedPermanently || p.header.Get("Location") != "/dashboard/" {
			t.Errorf("GET /dashboard = %d, Location %q; want 301 to /dashboard/", p.status, p.header.Get("Location"))
		}
		wantRedirectToSignIn(t, "POST /dashboard/signout", e.post("/dashboard/signout", url.Values{"form_token": {"x"}}))
		for _, path := range []string{"/dashboard/signin"} {
			if p := e.get(path); p.status != http.StatusOK || p.header.Get("Content-Security-Policy") != wantCSP {
				t.Errorf("GET %s = %d, CSP %q; want 200 with the payment page's policy", path, p.status, p.header.Get("Content-Security-Policy"))
			}
		}
		p := e.get("/dashboard/signin")
		for _, want := range []string{`<label for="email">Email</label>`, `<label for="password">Password</label>`, `<button type="submit">Sign in</button>`} {
			if !strings.Contains(p.body, want) {
				t.Errorf("the sign-in page has no %s", want)
			}
		}
		if inlineScript.MatchString(p.body) || strings.Contains(p.body, "style=") || strings.Contains(p.body, "<style") {
			t.Error("the sign-in page has inline script or style")
		}
	})
}

func TestSignInCookie(t *testing.T) {
	for _, base := range []string{"http://dash.example.test", "https://dash.example.test"} {
		t.Run(strings.Split(base, ":")[0], func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				e := newEnv(t, db, base)
				a := e.account("ann@example.com")
				m, err := e.svc.CreateMerchant(context.Background(), checkout.MerchantParams{Name: "Acme Games", Currency: "USD"})
				if err != nil {
					t.Fatal(err)
				}
				if _, _, err := e.svc.AddMember(context.Background(), m.ID, a.Email, checkout.RoleAdministrator); err != nil {
					t.Fatal(err)
				}
				// A planted session cookie is replaced (no fixation).
				planted := &http.Cookie{Name: e.sessionCookieName(), Value: "planted-by-someone-else"}
				p := e.trySignIn("Ann@Example.com", password, planted)
				c := p.cookie(e.sessionCookieName())
				if p.status != http.StatusSeeOther || c == nil {
					t.Fatalf("sign in = %d, cookie %v: %s", p.status, c, p.body)
				}
				if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.Secure != e.https || c.Domain != "" ||
					len(c.Value) != 43 || c.Value == planted.Value {
					t.Errorf("session cookie %+v; want HttpOnly, SameSite=Lax, Path=/, Secure %v, no Domain, a new 43-character token", c, e.https)
				}
				if e.https != strings.HasPrefix(c.Name, "__Host-") {
					t.Errorf("cookie name %q under %s", c.Name, base)
				}
				home := e.get("/dashboard/", c)
				if home.status != http.StatusOK || !strings.Contains(home.body, "Acme Games") || !strings.Contains(home.body, "ann@example.com") ||
					!strings.Contains(home.body, "Sign out") || home.header.Get("Content-Security-Policy") != wantCSP {
					t.Errorf("GET /dashboard/ = %d, CSP %q: %s; want the store, the account and a sign-out button", home.status, home.header.Get("Content-Security-Policy"), home.body)
				}

				// Signing in again gives a new token and ends the old session.
				p = e.trySignIn("ann@example.com", password, c)
				c2 := p.cookie(e.sessionCookieName())
				if c2 == nil || c2.Value == c.Value {
					t.Fatalf("second sign-in cookie %v; want a new token", c2)
				}
				wantRedirectToSignIn(t, "the old session after a new sign-in", e.get("/dashboard/", c))
				if p := e.get("/dashboard/", c2); p.status != http.StatusOK {
					t.Errorf("new session: %d", p.status)
				}
			})
		})
	}
}

func TestHomeEmptyState(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, "http://dash.example.test")
		e.account("ann@example.com")
		p := e.get("/dashboard/", e.signIn("ann@example.com"))
		if p.status != http.StatusOK || !strings.Contains(p.body, "checkoutd stores create") ||
			!strings.Contains(p.body, "checkoutd members add --store STORE_ID --email ann@example.com") {
			t.Errorf("home without stores = %d: %s; want the CLI commands", p.status, p.body)
		}
		if p := e.get("/dashboard/nope", e.signIn("ann@example.com")); p.status != http.StatusNotFound {
			t.Errorf("GET /dashboard/nope signed in = %d; want 404", p.status)
		}
	})
}

// A wrong password and an unknown email get the same page.
func TestSignInNoEnumeration(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, "http://dash.example.test")
		e.account("ann@example.com")
		fc, tok := e.signInForm()
		try := func(email, pw string) *page {
			return e.post("/dashboard/signin", url.Values{"email": {email}, "password": {pw}, "form_token": {tok}}, fc)
		}
		wrong := try("ann@example.com", "not the password at all")
		unknown := try("bob@example.com", password)
		if wrong.status != http.StatusUnauthorized || !strings.Contains(wrong.body, "Email or password is incorrect.") {
			t.Errorf("wrong password = %d: %s", wrong.status, wrong.body)
		}
		if wrong.status != unknown.status || wrong.body != strings.ReplaceAll(unknown.body, "bob@example.com", "ann@example.com") {
			t.Errorf("wrong password and unknown email differ:\n%d %s\n%d %s", wrong.status, wrong.body, unknown.status, unknown.body)
		}
		if wrong.cookie(e.sessionCookieName()) != nil {
			t.Error("a failed sign-in set a session cookie")
		}
	})
}

// 10 failures per 15 minutes: the 10th is still checked, the 11th is not.
func TestSignInLimit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, "http://dash.example.test")
		e.account("ann@example.com")
		for i := 1; i <= 10; i++ {
			if p := e.trySignIn("ann@example.com", "not the password at all"); p.status != http.StatusUnauthorized {
				t.Fatalf("failure %d = %d; want 401", i, p.status)
			}
		}
		p := e.trySignIn("ann@example.com", password)
		if p.status != http.StatusTooManyRequests || !strings.Contains(p.body, "Too many attempts; try again in 2 minutes.") ||
			p.header.Get("Retry-After") != "90" || p.cookie(e.sessionCookieName()) != nil {
			t.Errorf("11th attempt (right password) = %d, Retry-After %q: %s; want 429, try again in 2 minutes", p.status, p.header.Get("Retry-After"), p.body)
		}
		unknown := e.trySignIn("bob@example.com", password)
		if unknown.status != http.StatusTooManyRequests || !strings.Contains(unknown.body, "Too many attempts; try again in 2 minutes.") {
			t.Errorf("unknown email while limited = %d: %s; want the same 429", unknown.status, unknown.body)
		}
		e.clock.Advance(90*time.Second - time.Second)
		if p := e.trySignIn("ann@example.com", password); p.status != http.StatusTooManyRequests {
			t.Errorf("a second before a failure comes back = %d; want 429", p.status)
		}
		e.clock.Advance(time.Second)
		e.signIn("ann@example.com")
	})
}

func TestCrossSiteAndFormToken(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, "http://dash.example.test")
		e.account("ann@example.com")
		e.account("bob@example.com")
		ann := e.signIn("ann@example.com")
		home := e.get("/dashboard/", ann)
		tok := home.formToken(t)
		stillSignedIn := func(what string) {
			t.Helper()
			if p := e.get("/dashboard/", ann); p.status != http.StatusOK {
				t.Errorf("after %s: GET /dashboard/ = %d; want the session intact", what, p.status)
			}
		}

		// Cross-site: refused even with the right token.
		p := e.do(http.MethodPost, "/dashboard/signout", url.Values{"form_token": {tok}}, http.Header{"Sec-Fetch-Site": {"cross-site"}}, ann)
		if p.status != http.StatusForbidden {
			t.Errorf("cross-site sign-out = %d; want 403", p.status)
		}
		stillSignedIn("a cross-site sign-out")
		fc, ftok := e.signInForm()
		p = e.do(http.MethodPost, "/dashboard/signin", url.Values{"email": {"ann@example.com"}, "password": {password}, "form_token": {ftok}},
			http.Header{"Sec-Fetch-Site": {"cross-site"}}, fc)
		if p.status != http.StatusForbidden || p.cookie(e.sessionCookieName()) != nil {
			t.Errorf("cross-site sign-in = %d; want 403 and no session", p.status)
		}

		// No token, or another session's.
		bob := e.signIn("bob@example.com")
		bobTok := e.get("/dashboard/", bob).formToken(t)
		if bobTok == tok {
			t.Fatal("two sessions have one form token")
		}
		for _, form := range []url.Values{{}, {"form_token": {""}}, {"form_token": {bobTok}}} {
			if p := e.post("/dashboard/signout", form, ann); p.status != http.StatusForbidden {
				t.Errorf("sign-out with form %v = %d; want 403", form, p.status)
			}
		}
		stillSignedIn("sign-outs without the form token")
		// The sign-in form needs its token too.
		p = e.post("/dashboard/signin", url.Values{"email": {"ann@example.com"}, "password": {password}}, fc)
		if p.status != http.StatusForbidden {
			t.Errorf("sign-in without the form token = %d; want 403", p.status)
		}
		p = e.post("/dashboard/signin", url.Values{"email": {"ann@example.com"}, "password": {password}, "form_token": {ftok}})
		if p.status != http.StatusForbidden {
			t.Errorf("sign-in without the form cookie = %d; want 403", p.status)
		}
	})
}

func TestSignOut(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, "https://dash.example.test")
		e.account("ann@example.com")
		c := e.signIn("ann@example.com")
		tok := e.get("/dashboard/", c).formToken(t)
		p := e.post("/dashboard/signout", url.Values{"form_token": {tok}}, c)
		wantRedirectToSignIn(t, "sign-out", p)
		if cl := p.cookie(e.sessionCookieName()); cl == nil || cl.MaxAge >= 0 || !cl.Secure || cl.Path != "/" {
			t.Errorf("sign-out cookie %+v; want it cleared (Secure, Path=/ for __Host-)", cl)
		}
		wantRedirectToSignIn(t, "GET /dashboard/ after sign-out", e.get("/dashboard/", c))
		if _, _, err := e.svc.DashboardSession(context.Background(), c.Value); !checkout.IsCode(err, checkout.EAuthenticationRequired) {
			t.Errorf("the session after sign-out: %v; want it gone", err)
		}
	})
}

func TestSetupLink(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, "http://dash.example.test")
		ctx := context.Background()
		token, _, err := e.svc.SetupToken(ctx)
		if err != nil || token == "" {
			t.Fatalf("SetupToken = %q, %v", token, err)
		}
		if p := e.get("/dashboard/setup?token=nope"); p.status != http.StatusNotFound || !strings.Contains(p.body, "not valid") {
			t.Errorf("GET setup with a wrong token = %d: %s", p.status, p.body)
		}
		p := e.get("/dashboard/setup?token=" + token)
		if p.status != http.StatusOK || p.header.Get("Content-Security-Policy") != wantCSP || p.header.Get("Referrer-Policy") != "no-referrer" {
			t.Fatalf("GET setup = %d, CSP %q: %s", p.status, p.header.Get("Content-Security-Policy"), p.body)
		}
		fc := p.cookie("checkoutd_dashboard_form")
		ftok := p.formToken(t)
		form := func(email, pw string) url.Values {
			return url.Values{"token": {token}, "email": {email}, "password": {pw}, "form_token": {ftok}}
		}
		// A mistake keeps the values, shows the error beside the field, and
		// does not spend the link.
		p = e.post("/dashboard/setup", form("ann@example.com", "short"), fc)
		if p.status != http.StatusBadRequest || !strings.Contains(p.body, `value="ann@example.com"`) || !strings.Contains(p.body, `id="password-error"`) {
			t.Errorf("setup with a short password = %d: %s", p.status, p.body)
		}
		p = e.post("/dashboard/setup", form("ann@example.com", password), fc)
		c := p.cookie(e.sessionCookieName())
		if p.status != http.StatusSeeOther || p.header.Get("Location") != "/dashboard/" || c == nil {
			t.Fatalf("setup = %d %s: %s; want 303 to /dashboard/, signed in", p.status, p.header.Get("Location"), p.body)
		}
		if home := e.get("/dashboard/", c); home.status != http.StatusOK || !strings.Contains(home.body, "ann@example.com") {
			t.Errorf("home after setup = %d: %s", home.status, home.body)
		}
		// Single use.
		if p := e.get("/dashboard/setup?token=" + token); p.status != http.StatusNotFound {
			t.Errorf("GET setup after use = %d; want 404", p.status)
		}
		if p := e.post("/dashboard/setup", form("bob@example.com", password), fc); p.status != http.StatusNotFound || p.cookie(e.sessionCookieName()) != nil {
			t.Errorf("POST setup after use = %d; want 404, no session", p.status)
		}
		if _, err := db.AccountGetByEmail(ctx, "bob@example.com"); !checkout.IsCode(err, checkout.ENotFound) {
			t.Errorf("a used link created another account: %v", err)
		}
	})
}

func TestSetupLinkExpiry(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, "http://dash.example.test")
		token, _, err := e.svc.SetupToken(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(24*time.Hour - time.Second)
		p := e.get("/dashboard/setup?token=" + token)
		if p.status != http.StatusOK {
			t.Fatalf("GET setup a second before expiry = %d", p.status)
		}
		fc, ftok := p.cookie("checkoutd_dashboard_form"), p.formToken(t)
		e.clock.Advance(time.Second)
		if p := e.get("/dashboard/setup?token=" + token); p.status != http.StatusNotFound || !strings.Contains(p.body, "expired") {
			t.Errorf("GET setup at expiry = %d: %s", p.status, p.body)
		}
		p = e.post("/dashboard/setup", url.Values{"token": {token}, "email": {"ann@example.com"}, "password": {password}, "form_token": {ftok}}, fc)
		if p.status != http.StatusNotFound || p.cookie(e.sessionCookieName()) != nil {
			t.Errorf("POST setup at expiry = %d; want 404", p.status)
		}
	})
}

// Account emails and typed values are escaped in pages.
func TestEscaping(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, "http://dash.example.test")
		email := "o'brien&{x}@example.com"
		e.account(email)
		p := e.get("/dashboard/", e.signIn(email))
		if !strings.Contains(p.body, "o&#39;brien&amp;{x}@example.com") || strings.Contains(p.body, email) {
			t.Errorf("the account email is not escaped in the home page: %s", p.body)
		}
		typed := `"><script>alert(1)</script>`
		p = e.trySignIn(typed, "not the password at all")
		if strings.Contains(p.body, "<script>alert") || !strings.Contains(p.body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Errorf("the typed email is not escaped in the sign-in page: %s", p.body)
		}
	})
}

package dashboard_test

// These tests use the dashboard in headless Chromium (internal/browsertest)
// as a merchant would: the setup link, forms typed into by their labels,
// buttons pressed by their words, menus opened, the keyboard alone, a
// phone-sized screen. The whole application (app.New) serves them on a real
// database, both kinds, with a fake clock for the service and the key cache.
//
// go test ./internal/dashboard -run 'TestBrowser(MerchantJourney|Webhooks|CryptoKeys|Payments|Refunds|Disputes|Security|TeamSupportRefunds)/sqlite' -update-screenshots
// regenerates docs/screenshots/dashboard-*.png from these very tests
// (docs/dashboard.md, Screenshots).

import (
	"context"
	"encoding/json"
	"flag"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/app"
	"github.com/checkoutd/checkoutd/internal/browsertest"
	"github.com/checkoutd/checkoutd/internal/clock"
	"github.com/checkoutd/checkoutd/internal/logtest"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
	"github.com/checkoutd/checkoutd/internal/webhook/webhooktest"
)

var updateScreenshots = flag.Bool("update-screenshots", false, "write a PNG of the dashboard's main pages to docs/screenshots")

// screenshotDir is docs/screenshots, from this package's directory.
const screenshotDir = "../../docs/screenshots"

func TestMain(m *testing.M) {
	os.Exit(browsertest.Run(m))
}

// browserEnv is checkoutd on a database and a merchant's tab.
type browserEnv struct {
	t   *testing.T
	clk *clock.Fake
	app *app.App
	svc *service.Service
	srv *httptest.Server
	// logs writes the API's request logs; Flush makes them readable.
	logs *service.RequestLogWriter
	// Page is the merchant's tab: an error a page writes to the console (a
	// Content-Security-Policy violation among them) fails the test.
	*browsertest.Page
}

// newBrowserEnv serves checkoutd on db, configured further by configure
// (fakeInternet, for webhooks), to a new tab.
func newBrowserEnv(t *testing.T, db *store.DB, configure ...func(*app.Config)) *browserEnv {
	t.Helper()
	e := &browserEnv{t: t, clk: clock.NewFake(t0), Page: browsertest.NewPage(t)}
	e.srv = httptest.NewUnstartedServer(nil)
	base := "http://" + e.srv.Listener.Addr().String()
	cfg := app.Config{Store: db, Logger: logtest.Logger(t), Now: e.clk.Now, CacheNow: e.clk.Now,
		BaseURL: base, CheckoutBaseURL: base, Processors: pay.Registry{Test: pay.Simulators()}}
	for _, c := range configure {
		c(&cfg)
	}
	e.app = app.New(cfg)
	t.Cleanup(e.app.Close)
	e.svc, e.logs = e.app.Service, e.app.RequestLogs
	e.srv.Config.Handler = e.app.Handler
	e.srv.Start()
	t.Cleanup(e.srv.Close)
	return e
}

// open navigates to a path of the service.
func (e *browserEnv) open(path string) {
	e.t.Helper()
	e.Do(chromedp.Navigate(e.srv.URL + path))
}

// at waits until the tab shows path (a page's own, after its redirects),
// loaded; a check that follows a click reads the new page, not the old.
func (e *browserEnv) at(path string) {
	e.t.Helper()
	e.WaitFor(`location.pathname + location.search === ` + browsertest.JSString(path))
}

// path is the tab's path, loaded.
func (e *browserEnv) path() string {
	e.t.Helper()
	return browsertest.Eval[string](e.Page, `location.pathname`)
}

// labelled is a CSS selector of the form control whose label reads label
// (its own words, before a hint such as "(optional)"), failing the test when
// no label reads so: fields are found as a person finds them.
func (e *browserEnv) labelled(label string) string {
	e.t.Helper()
	id := `([...document.querySelectorAll("label")].find(l => l.firstChild.textContent.trim() === ` +
		browsertest.JSString(label) + `)?.control?.id ?? "")`
	if ok, _ := e.Poll(id + ` !== ""`); !ok {
		e.t.Fatalf("no field labelled %q on %s", label, e.path())
	}
	return "#" + browsertest.Eval[string](e.Page, `CSS.escape(`+id+`)`)
}

// fill replaces what the field labelled label holds with value, typed.
func (e *browserEnv) fill(label, value string) {
	e.t.Helper()
	e.Fill(e.labelled(label), value)
}

// press clicks the button that reads text.
func (e *browserEnv) press(text string) {
	e.t.Helper()
	e.Do(chromedp.Click(chromedp.Search(`//button[normalize-space()="` + text + `"]`)))
}

// follow clicks the link that reads text within the element sel matches.
func (e *browserEnv) follow(sel, text string) {
	e.t.Helper()
	e.Do(chromedp.Click(chromedp.JSPath(`[...document.querySelectorAll(` + browsertest.JSString(sel+" a") + `)].find(a => a.innerText.trim() === ` + browsertest.JSString(text) + `)`)))
}

// tick ticks (on) or unticks the checkbox or radio button of the choice
// whose words start with words, by clicking it as a person does.
func (e *browserEnv) tick(words string, on bool) {
	e.t.Helper()
	input := `[...document.querySelectorAll("label.choice")].find(l => l.innerText.trim().startsWith(` +
		browsertest.JSString(words) + `))?.querySelector("input")`
	if ok, _ := e.Poll(input + ` != null`); !ok {
		e.t.Fatalf("no choice reads %q on %s", words, e.path())
	}
	if browsertest.Eval[bool](e.Page, input+`.checked`) != on {
		e.Do(chromedp.Click(chromedp.JSPath(input)))
	}
	if got := browsertest.Until(e.Page, input+`.checked`, on); got != on {
		e.t.Fatalf("%q ticked = %v after a click; want %v", words, got, on)
	}
}

// query is the value of the tab's URL parameter name.
func (e *browserEnv) query(name string) string {
	e.t.Helper()
	return browsertest.Eval[string](e.Page, `new URLSearchParams(location.search).get(`+browsertest.JSString(name)+`) ?? ""`)
}

// deliver runs the dispatcher once, as its loop would now: every due
// delivery is attempted. It returns how many were.
func (e *browserEnv) deliver() int {
	e.t.Helper()
	return deliver(e.t, e.app)
}

// signIn signs in through the sign-in page, as a person does.
func (e *browserEnv) signIn(email string) {
	e.t.Helper()
	e.open("/dashboard/signin")
	e.fill("Email", email)
	e.fill("Password", password)
	e.press("Sign in")
	e.at("/dashboard/")
}

// account creates an account and a store it is a member of, with a test
// key, through the service; it returns the store and the key's secret.
func (e *browserEnv) account(email string) (*checkout.Merchant, string) {
	e.t.Helper()
	ctx := context.Background()
	a, err := e.svc.CreateAccount(ctx, email, password)
	if err != nil {
		e.t.Fatal(err)
	}
	m, err := e.svc.CreateStore(ctx, a.ID, checkout.MerchantParams{Name: "Acme Games", Currency: "USD", Website: "https://acme.example"})
	if err != nil {
		e.t.Fatal(err)
	}
	_, secret, err := e.svc.CreateAPIKey(ctx, checkout.APIKeyParams{Name: "Web shop", MerchantID: m.ID, Mode: checkout.ModeTest,
		Type: checkout.KeyBearer, Permissions: []checkout.Permission{checkout.PermCheckoutsWrite}})
	if err != nil {
		e.t.Fatal(err)
	}
	return m, secret
}

// createCheckout creates a checkout session through the API with secret,
// as a merchant's server does.
func (e *browserEnv) createCheckout(storeID, secret string) apiResponse {
	e.t.Helper()
	return postCheckout(e.t, e.srv.URL, storeID, secret, "")
}

// screenshot writes the page as docs/screenshots/dashboard-<name>.png under
// -update-screenshots, from the SQLite run: one database is enough.
func (e *browserEnv) screenshot(name string) {
	e.t.Helper()
	if *updateScreenshots && strings.HasSuffix(e.t.Name(), "/sqlite") {
		e.Screenshot(filepath.Join(screenshotDir, "dashboard-"+name+".png"))
	}
}

// textOf is the trimmed text of the first element sel matches, now.
func (e *browserEnv) textOf(sel string) string {
	e.t.Helper()
	return browsertest.Eval[string](e.Page, browsertest.TextJS(sel))
}

// field is the text of the definition of term in the page's first list of
// fields (dl.fields) that has it, waiting for it: "Key id", "Events".
func (e *browserEnv) field(term string) string {
	e.t.Helper()
	dd := `[...document.querySelectorAll("dl.fields dt")].find(dt => dt.textContent === ` + browsertest.JSString(term) + `)?.nextElementSibling`
	if ok, _ := e.Poll(dd + ` != null`); !ok {
		e.t.Fatalf("no field %q on %s", term, e.path())
	}
	return browsertest.Eval[string](e.Page, dd+`.innerText.trim()`)
}

// has reports whether an element matches sel, now.
func (e *browserEnv) has(sel string) bool {
	e.t.Helper()
	return browsertest.Eval[bool](e.Page, `document.querySelector(`+browsertest.JSString(sel)+`) !== null`)
}

var storeHomePath = regexp.MustCompile(`^/dashboard/stores/([0-9a-f-]{36})/test/$`)

// The first account from the setup link to signing in again, through every
// page that exists, as a merchant does it.
func TestBrowserMerchantJourney(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newBrowserEnv(t, db)
		ctx := context.Background()

		// The setup link that serve logs, opened; the first account.
		token, _, err := e.svc.SetupToken(ctx)
		if err != nil || token == "" {
			t.Fatalf("SetupToken = %q, %v", token, err)
		}
		e.open("/dashboard/setup?token=" + url.QueryEscape(token))
		if got := e.TextIs("h1", "Create the first account"); got != "Create the first account" {
			t.Fatalf("the setup link shows %q", got)
		}
		e.fill("Email", "ann@example.com")
		e.fill("Password", password)
		e.press("Create account")
		e.at("/dashboard/")
		if got := e.TextIs("details.account summary", "ann@example.com"); got != "ann@example.com" {
			t.Errorf("signed in as %q; want ann@example.com", got)
		}

		// A store, through the form: a refused field says why beside
		// itself, and keeps what was typed.
		e.follow("main", "Create a store")
		e.at("/dashboard/stores/new")
		if got := e.ValueIs("#currency", "USD"); got != "USD" {
			t.Errorf("currency = %q; want USD filled in", got)
		}
		e.fill("Name", "Acme Games")
		e.fill("Website", "http://acme.example")
		e.fill("Statement descriptor", "ACME GAMES")
		e.ExpectConsole("status of 400") // the form comes back as 400 Bad Request
		e.press("Create store")
		e.WaitFor(`document.getElementById("website-error") !== null`)
		if got := e.textOf("#website-error"); !strings.Contains(got, "https") {
			t.Errorf("website error = %q; want it to ask for https", got)
		}
		if !browsertest.Eval[bool](e.Page, `(() => { const f = document.getElementById("website"), err = f.nextElementSibling;
			return err.id === "website-error" && f.getAttribute("aria-invalid") === "true" &&
				f.getAttribute("aria-describedby").split(" ").includes("website-error") &&
				err.getBoundingClientRect().top - f.getBoundingClientRect().bottom < 24; })()`) {
			t.Errorf("the website's error is not beside it, or not tied to it (aria-invalid, aria-describedby)")
		}
		for sel, want := range map[string]string{"#name": "Acme Games", "#currency": "USD", "#website": "http://acme.example", "#statement_descriptor": "ACME GAMES"} {
			if got := e.ValueIs(sel, want); got != want {
				t.Errorf("%s after the refusal = %q; want %q kept", sel, got, want)
			}
		}
		if n := browsertest.Eval[int](e.Page, `document.querySelectorAll(".field-error").length`); n != 1 {
			t.Errorf("%d field errors; want only the website's", n)
		}
		e.fill("Website", "https://acme.example")
		e.press("Create store")
		e.WaitFor(`location.pathname.endsWith("/test/")`)
		m := storeHomePath.FindStringSubmatch(e.path())
		if m == nil {
			t.Fatalf("after creating the store the tab is at %s; want its test home", e.path())
		}
		storeID := m[1]
		if got := e.TextIs("#store-id", storeID); got != storeID {
			t.Errorf("the store's home shows id %q; want %q", got, storeID)
		}
		if got := e.TextIs("main h1", "Acme Games"); got != "Acme Games" {
			t.Errorf("the store's home is titled %q", got)
		}
		if !e.has(".test-banner") {
			t.Error("a test-mode page has no test banner")
		}
		e.screenshot("store-home")

		// An API key: its secret read from the page works over HTTP.
		keys := "/dashboard/stores/" + storeID + "/test/developers/keys"
		e.follow("nav.side", "API keys")
		e.at(keys)
		e.fill("Name", "Web shop")
		e.press("Create key")
		e.WaitFor(`document.getElementById("key-secret") !== null`)
		secret := e.textOf("#key-secret")
		if !strings.HasPrefix(secret, "ck_test_sk_") {
			t.Fatalf("the secret on the page = %q; want a test bearer secret", secret)
		}
		keyID := e.field("Key id")
		session := e.createCheckout(storeID, secret)
		if session.status != http.StatusCreated {
			t.Fatalf("a checkout with the new key = %d; want 201", session.status)
		}
		e.screenshot("key-created")
		// The copy button puts the secret on the clipboard.
		if _, err := chromedp.CallBrowser(e.Tab(), browser.SetPermission, browser.SetPermissionParams{
			Permission: &browser.PermissionDescriptor{Name: "clipboard-read"}, Setting: browser.PermissionSettingGranted,
			Origin: e.srv.URL, BrowserContextID: chromedp.FromContext(e.Tab()).BrowserContextID,
		}); err != nil {
			t.Fatal(err)
		}
		e.Do(chromedp.Click(chromedp.CSS(`button[data-copy="key-secret"]`)))
		if got := e.TextIs(`button[data-copy="key-secret"]`, "Copied"); got != "Copied" {
			t.Errorf("the copy button reads %q once pressed; want Copied", got)
		}
		clip, err := chromedp.Run(e.Tab(), chromedp.Evaluate[string](`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise))
		if err != nil || clip != secret {
			t.Errorf("the clipboard holds %q (%v); want the secret", clip, err)
		}
		e.follow("main", "I have saved the secret")
		e.at(keys)
		row := "#key-" + keyID
		if got := e.TextHas(row, "Web shop", "…"+secret[len(secret)-4:]); !strings.Contains(got, "Web shop") || strings.Contains(got, secret) {
			t.Errorf("the key's row = %q; want its name and hint, never the secret", got)
		}
		if browsertest.Eval[bool](e.Page, `document.body.innerHTML.includes(`+browsertest.JSString(secret)+`)`) {
			t.Error("the keys page holds the secret")
		}
		e.screenshot("keys")

		// Times in the viewer's time zone: the key's creation seen from Tokyo.
		if _, err := chromedp.Call(e.Tab(), emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: "Asia/Tokyo"}); err != nil {
			t.Fatal(err)
		}
		e.Do(chromedp.Reload())
		createdAt := row + " time"
		// ICU puts a narrow no-break space before PM: any space will do.
		const tokyo = "Nov 1, 2026, 09:00:00 PM GMT+9"
		if got := browsertest.Until(e.Page, browsertest.TextJS(createdAt)+`.replace(/\s+/g, " ")`, tokyo); got != tokyo {
			t.Errorf("created at 12:00 UTC reads %q in Tokyo; want %q", got, tokyo)
		}
		if got := browsertest.Eval[string](e.Page, `document.querySelector(`+browsertest.JSString(createdAt)+`).title`); got != "2026-11-01 12:00:00 UTC" {
			t.Errorf("the time's title = %q; want the UTC time", got)
		}
		if _, err := chromedp.Call(e.Tab(), emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: ""}); err != nil {
			t.Fatal(err)
		}

		// The key's request found in Logs by the Request-Id of its response,
		// pasted into the search: the page of the request, with both bodies.
		// A refused request is listed too.
		e.clk.Advance(time.Second) // newest first: the refused request on top
		refused := postCheckout(t, e.srv.URL, storeID, secret, `{"items":[]}`)
		if refused.status != http.StatusBadRequest {
			t.Fatalf("a checkout without items = %d; want 400", refused.status)
		}
		e.logs.Flush(ctx)
		logs := "/dashboard/stores/" + storeID + "/test/developers/logs"
		e.follow("nav.side", "Logs")
		e.at(logs)
		call := "POST /v1/stores/" + storeID + "/checkouts"
		if got := e.TextHas("main table tbody", call, "201", "400", "Web shop"); strings.Count(got, call) != 2 {
			t.Errorf("Logs lists %q; want both requests of Web shop", got)
		}
		e.screenshot("logs")
		e.fill("Request-Id", session.requestID)
		e.press("Search")
		e.at(logs + "/" + session.requestID)
		if got := e.TextIs("main h1", call); got != call {
			t.Errorf("the request's page is titled %q; want %q", got, call)
		}
		bodies := browsertest.Eval[[]string](e.Page, `[...document.querySelectorAll("main pre")].map(p => p.textContent)`)
		if len(bodies) != 2 || bodies[0] != `{"items":[{"name":"Sword","amount":1500,"quantity":2}]}` || bodies[1] != session.body {
			t.Errorf("the request's page shows the bodies %q; want the request's and the response's as sent", bodies)
		}

		// The session's checkout.created in Events; its page shows the
		// payload.
		var created struct{ Data struct{ ID string } }
		if err := json.Unmarshal([]byte(session.body), &created); err != nil || created.Data.ID == "" {
			t.Fatalf("the session created: %s (%v)", session.body, err)
		}
		events := "/dashboard/stores/" + storeID + "/test/developers/events"
		e.follow("nav.side", "Events")
		e.at(events)
		if got := e.TextHas("main table tbody tr", "checkout.created", created.Data.ID); !strings.Contains(got, created.Data.ID) {
			t.Errorf("Events' first row = %q; want the session's checkout.created", got)
		}
		e.follow("main table tbody", "checkout.created")
		e.WaitFor(`location.pathname.startsWith(` + browsertest.JSString(events+"/evt_") + `)`)
		var payload struct {
			Type string
			Data struct{ Object struct{ ID string } }
		}
		if err := json.Unmarshal([]byte(browsertest.Eval[string](e.Page, `document.getElementById("event-payload").textContent`)), &payload); err != nil ||
			payload.Type != "checkout.created" || payload.Data.Object.ID != created.Data.ID {
			t.Errorf("the event's payload = %+v (%v); want the session's checkout.created", payload, err)
		}
		e.follow("nav.side", "API keys")
		e.at(keys)

		// Revoked through the confirmation; once the key cache has let it
		// go, the API refuses it.
		e.Do(chromedp.Click(chromedp.CSS(row + ` a[href$="/revoke"]`)))
		e.at(keys + "/" + keyID + "/revoke")
		if got := e.TextIs("main h1", "Revoke “Web shop”?"); got != "Revoke “Web shop”?" {
			t.Errorf("the confirmation asks %q", got)
		}
		e.press("Revoke key")
		e.at(keys + "?revoked=" + keyID)
		if got := e.TextHas(".notice", "Web shop is revoked"); !strings.Contains(got, "Web shop is revoked") {
			t.Errorf("after revoking the page says %q", got)
		}
		if got := e.TextHas(row, "Revoked"); !strings.Contains(got, "Revoked") || browsertest.Eval[bool](e.Page, `document.querySelector(`+browsertest.JSString(row+` a[href$="/revoke"]`)+`) !== null`) {
			t.Errorf("the revoked key's row = %q; want it marked, with no Revoke link", got)
		}
		e.clk.Advance(service.MaxKeyCacheTTL)
		if got := e.createCheckout(storeID, secret).status; got != http.StatusUnauthorized {
			t.Errorf("the revoked key once the cache has expired = %d; want 401", got)
		}

		// Live mode from the keys page lands on the live keys; the banner
		// goes; back to test.
		e.Do(chromedp.Click(chromedp.CSS("a.mode-switch")))
		liveKeys := "/dashboard/stores/" + storeID + "/live/developers/keys"
		e.at(liveKeys)
		if e.has(".test-banner") || !browsertest.Eval[bool](e.Page, `document.body.classList.contains("mode-live")`) {
			t.Error("live mode shows the test banner, or is not marked live")
		}
		for sel, want := range map[string]string{".mode-label": "Live mode", "#create": "Create a live key", `nav.side a[aria-current="page"]`: "API keys"} {
			if got := e.TextIs(sel, want); got != want {
				t.Errorf("live keys page: %s = %q; want %q", sel, got, want)
			}
		}
		if e.has(row) {
			t.Error("the live keys page lists the test key")
		}
		e.Do(chromedp.Click(chromedp.CSS("a.mode-switch")))
		e.at(keys)
		if !e.has(".test-banner") || !e.has(row) {
			t.Error("back in test mode: no banner, or the test key is missing")
		}

		// A second store, from the switcher; the switcher keeps the section.
		e.Do(chromedp.Click(chromedp.CSS("details.switcher summary")))
		e.follow("details.switcher", "Create a store")
		e.at("/dashboard/stores/new")
		e.fill("Name", "Second Shop")
		e.press("Create store")
		e.WaitFor(`location.pathname.endsWith("/test/") && !location.pathname.includes(` + browsertest.JSString(storeID) + `)`)
		second := storeHomePath.FindStringSubmatch(e.path())[1]
		e.follow("nav.side", "API keys")
		e.at("/dashboard/stores/" + second + "/test/developers/keys")
		if got := e.TextIs("details.switcher summary", "Second Shop"); got != "Second Shop" {
			t.Errorf("the switcher shows %q; want Second Shop", got)
		}
		e.Do(chromedp.Click(chromedp.CSS("details.switcher summary")))
		e.follow("details.switcher", "Acme Games")
		e.at(keys)
		if got := e.TextIs("details.switcher summary", "Acme Games"); got != "Acme Games" || !e.has(row) {
			t.Errorf("switched to %q; want Acme Games's keys", got)
		}

		// Signed out from the account menu; signed in again.
		e.Do(chromedp.Click(chromedp.CSS("details.account summary")))
		e.press("Sign out")
		e.at("/dashboard/signin")
		e.open(keys)
		e.at("/dashboard/signin")
		e.screenshot("signin")
		e.fill("Email", "ann@example.com")
		e.fill("Password", password)
		e.press("Sign in")
		e.at("/dashboard/")
		if got := e.TextHas("ul.stores", "Acme Games", "Second Shop"); !strings.Contains(got, "Acme Games") || !strings.Contains(got, "Second Shop") {
			t.Errorf("home after signing in again lists %q; want both stores", got)
		}
	})
}

// focusShown is a JavaScript expression: whether the focused element shows
// it has the focus (an outline or a ring).
const focusShown = `(() => { const s = getComputedStyle(document.activeElement);
	return (s.outlineStyle !== "none" && parseFloat(s.outlineWidth) > 0) || s.boxShadow !== "none"; })()`

// focused is a JavaScript expression naming the focused element: its id,
// else its accessible name (aria-label, else its words).
const focused = `(() => { const a = document.activeElement; return a.id || a.getAttribute("aria-label") || a.innerText.trim(); })()`

// tabTo presses Tab until the focus is on want (an id, or the words of a
// link or button), at most limit times, and returns where the focus went
// on the way. Each stop must show the focus.
func (e *browserEnv) tabTo(want string, limit int) []string {
	e.t.Helper()
	var stops []string
	for range limit {
		e.Do(chromedp.KeyEvent("\t"))
		at := browsertest.Eval[string](e.Page, focused)
		stops = append(stops, at)
		if !browsertest.Eval[bool](e.Page, focusShown) {
			e.t.Errorf("on %s, %q shows no focus", e.path(), at)
		}
		if at == want {
			return stops
		}
	}
	e.t.Fatalf("on %s, Tab never reached %q: it went %q", e.path(), want, stops)
	return nil
}

// The keyboard alone signs in and creates a store: every control is reached
// with Tab, in reading order, and shows the focus.
func TestBrowserKeyboardOnly(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newBrowserEnv(t, db)
		if _, err := e.svc.CreateAccount(context.Background(), "ann@example.com", password); err != nil {
			t.Fatal(err)
		}

		// Sign in: the email has the focus when the page opens.
		e.open("/dashboard/signin")
		if got := browsertest.Until(e.Page, focused, "email"); got != "email" {
			t.Errorf("the sign-in page opens with the focus on %q; want the email", got)
		}
		e.Do(chromedp.KeyEvent("ann@example.com"))
		e.tabTo("password", 1)
		e.Do(chromedp.KeyEvent(password))
		e.tabTo("Sign in", 1)
		e.Do(chromedp.KeyEvent("\r"))
		e.at("/dashboard/")

		// Home: the skip link comes first and shows itself; then to the
		// button that creates a store.
		stops := e.tabTo("Skip to content", 1)
		if left := browsertest.Eval[float64](e.Page, `document.activeElement.getBoundingClientRect().left`); left < 0 {
			t.Errorf("the focused skip link is off screen (left %v)", left)
		}
		stops = append(stops, e.tabTo("Create a store", 5)...)
		if want := []string{"Skip to content", "checkoutd", "Account: ann@example.com", "Create a store"}; !slices.Equal(stops, want) {
			t.Errorf("home's tab order = %q; want %q", stops, want)
		}
		e.Do(chromedp.KeyEvent("\r"))
		e.at("/dashboard/stores/new")

		// The store form, field by field; Enter on the button sends it.
		e.tabTo("name", 6)
		e.Do(chromedp.KeyEvent("Acme Games"))
		stops = e.tabTo("Create store", 5)
		if want := []string{"currency", "website", "statement_descriptor", "Create store"}; !slices.Equal(stops, want) {
			t.Errorf("the store form's tab order after the name = %q; want %q", stops, want)
		}
		e.Do(chromedp.KeyEvent("\r"))
		e.WaitFor(`location.pathname.endsWith("/test/")`)
		if got := e.TextIs("main h1", "Acme Games"); got != "Acme Games" {
			t.Errorf("the store made from the keyboard is %q", got)
		}

		// The store switcher opens with Enter and closes with Escape,
		// giving the focus back.
		e.tabTo("Store: Acme Games. Switch store", 5)
		e.Do(chromedp.KeyEvent("\r"))
		if !browsertest.Until(e.Page, `document.querySelector("details.switcher").open`, true) {
			t.Error("Enter did not open the store switcher")
		}
		e.Do(chromedp.KeyEvent("\t"))
		if got := browsertest.Eval[string](e.Page, focused); got != "Acme Games" {
			t.Errorf("Tab in the open switcher went to %q; want the first store", got)
		}
		e.Do(chromedp.KeyEvent(kb.Escape))
		if browsertest.Until(e.Page, `document.querySelector("details.switcher").open`, false) {
			t.Error("Escape did not close the store switcher")
		}
		if got := browsertest.Eval[bool](e.Page, `document.activeElement === document.querySelector("details.switcher summary")`); !got {
			t.Errorf("after Escape the focus is on %q; want the switcher", browsertest.Eval[string](e.Page, focused))
		}
	})
}

// The main pages fit a phone's 375 px: nothing scrolls sideways.
func TestBrowserPhoneSizedScreen(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		n := webhooktest.NewNetwork(t)
		e := newBrowserEnv(t, db, fakeInternet(n))
		m, secret := e.account("ann@example.com")
		// An endpoint with a long URL and every event; a checkout, so
		// that the lists of events, logs and deliveries have a row.
		r := n.Receiver(t, "order-fulfilment.hooks.acme-games.example.com")
		if _, err := e.svc.CreateEndpoint(context.Background(), checkout.EndpointParams{MerchantID: m.ID, Mode: checkout.ModeTest,
			URL: r.URL + "/checkoutd/test-mode/events", Events: []string{checkout.AllEvents}, Description: "Order fulfilment"}); err != nil {
			t.Fatal(err)
		}
		if got := e.createCheckout(m.ID, secret).status; got != http.StatusCreated {
			t.Fatalf("create a checkout = %d", got)
		}
		e.logs.Flush(context.Background())
		if got := e.deliver(); got != 1 {
			t.Fatalf("the dispatcher made %d attempts; want the checkout.created's", got)
		}
		e.Do(chromedp.EmulateViewport(375, 740, chromedp.EmulateMobile, chromedp.EmulateScale(2)))
		fits := func(what string) {
			t.Helper()
			if w := browsertest.Eval[int](e.Page, `document.documentElement.scrollWidth`); w > 375 {
				// What sticks out, for the message: the first few
				// elements past the edge, and where they end.
				wide := browsertest.Eval[string](e.Page, `[...document.querySelectorAll("body *")]
					.filter(el => el.getBoundingClientRect().right > 376 && !el.closest("details:not([open])")).slice(0, 5)
					.map(el => el.tagName.toLowerCase() + (el.className ? "." + el.className : "") + " to " + Math.round(el.getBoundingClientRect().right) + "px").join(", ")`)
				t.Errorf("%s is %dpx wide on a 375px screen: it scrolls sideways (%s)", what, w, wide)
			}
		}
		e.open("/dashboard/signin")
		e.at("/dashboard/signin")
		fits("sign-in")
		// Inputs at 16px or more, so phones do not zoom in on focus.
		if px := browsertest.Eval[float64](e.Page, `parseFloat(getComputedStyle(document.getElementById("email")).fontSize)`); px < 16 {
			t.Errorf("the email field's font size = %vpx; want at least 16px", px)
		}
		e.signIn("ann@example.com")
		fits("home")
		base := "/dashboard/stores/" + m.ID + "/test/"
		for _, section := range []string{"", "developers/keys", "developers/webhooks", "developers/webhooks/new", "developers/deliveries",
			"developers/events", "developers/logs", "settings", "team"} {
			e.open(base + section)
			e.at(base + section)
			fits(base + section)
		}
		// A list's first row's page. (The row's link is opened rather than
		// tapped: a long one, an endpoint's URL, runs past the screen in
		// its table's own sideways scroll, where a tap on its middle
		// misses.)
		for _, list := range []string{"developers/webhooks", "developers/deliveries", "developers/events", "developers/logs"} {
			e.open(base + list)
			e.at(base + list)
			e.open(browsertest.Eval[string](e.Page, `document.querySelector("main table tbody a").getAttribute("href")`))
			e.WaitFor(`location.pathname.startsWith(` + browsertest.JSString(base+list+"/") + `)`)
			fits("a page of " + list)
			if list == "developers/webhooks" {
				e.press("Reveal secret")
				e.WaitFor(`document.getElementById("endpoint-secret") !== null`)
				fits("an endpoint's page with its secret")
			}
		}
		// The mode switch, shortened to fit, still says what it does to
		// a screen reader.
		if got := e.textOf("a.mode-switch"); !strings.Contains(got, "Switch to live") {
			t.Errorf("on a phone the mode switch reads %q; want it to say Switch to live", got)
		}
		e.open("/dashboard/stores/new")
		e.at("/dashboard/stores/new")
		fits("the store form")

		// An invitation's link, long, shown on the Team page.
		e.open(base + "team")
		e.fill("Email", "sue.long-name@order-fulfilment.acme-games.example.com")
		e.press("Create invitation link")
		e.WaitFor(`document.getElementById("invitation-url") !== null`)
		fits("the team page with an invitation's link")
		if right := browsertest.Eval[float64](e.Page, `document.getElementById("invitation-url").getBoundingClientRect().right`); right > 375 {
			t.Errorf("the invitation's link ends at %vpx, off a 375px screen", right)
		}

		// The header's menus, open, stay on the screen.
		e.open(base)
		e.at(base)
		for _, menu := range []string{"details.switcher", "details.account"} {
			e.Do(chromedp.Click(chromedp.CSS(menu + " summary")))
			e.WaitFor(`document.querySelector("` + menu + `").open`)
			box := browsertest.Eval[[]float64](e.Page, `(r => [r.left, r.right])(document.querySelector("`+menu+` ul").getBoundingClientRect())`)
			if box[0] < 0 || box[1] > 375 {
				t.Errorf("%s open spans %vpx to %vpx, off a 375px screen", menu, box[0], box[1])
			}
			fits(menu + " open")
			e.Do(chromedp.KeyEvent(kb.Escape))
		}

		e.open(base + "developers/keys")
		e.fill("Name", "Phone")
		e.press("Create key")
		e.WaitFor(`document.getElementById("key-secret") !== null`)
		fits("the new key's page")
		if right := browsertest.Eval[float64](e.Page, `document.getElementById("key-secret").getBoundingClientRect().right`); right > 375 {
			t.Errorf("the secret ends at %vpx, off a 375px screen", right)
		}
		e.follow("main", "I have saved the secret")
		e.at(base + "developers/keys")
		e.Do(chromedp.Click(chromedp.CSS(`table a[href$="/revoke"]`)))
		e.WaitFor(`location.pathname.endsWith("/revoke")`)
		fits("the revoke confirmation")
		e.open("/dashboard/stores/" + m.ID + "/live/developers/keys")
		e.at("/dashboard/stores/" + m.ID + "/live/developers/keys")
		fits("live keys")
	})
}

// Every page names an icon. Without one the browser asks for /favicon.ico,
// a 404 that it logs as an error on every page of the dashboard; the
// console checks of the other tests see that the icon named loads.
func TestBrowserPagesNameAnIcon(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newBrowserEnv(t, db)
		m, _ := e.account("ann@example.com")
		const icon = `document.querySelector('link[rel~="icon"]')`
		e.open("/dashboard/signin")
		e.at("/dashboard/signin")
		if !browsertest.Eval[bool](e.Page, icon+` !== null`) {
			t.Error("the sign-in page names no icon: the browser asks for /favicon.ico, a 404")
		}
		e.signIn("ann@example.com")
		e.open("/dashboard/stores/" + m.ID + "/test/developers/keys")
		e.at("/dashboard/stores/" + m.ID + "/test/developers/keys")
		if !browsertest.Eval[bool](e.Page, icon+` !== null`) {
			t.Error("a store's page names no icon: the browser asks for /favicon.ico, a 404")
		}
	})
}

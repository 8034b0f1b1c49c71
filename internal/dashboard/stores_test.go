package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

var storeHomeRE = regexp.MustCompile(`^/dashboard/stores/([0-9a-f-]{36})/test/$`)

// formPost posts a signed-in form: the page's form token is read from the
// page at from.
func (e *env) formPost(from, to string, form url.Values, session *http.Cookie) *page {
	e.t.Helper()
	p := e.get(from, session)
	if p.status != http.StatusOK {
		e.t.Fatalf("GET %s = %d: %s", from, p.status, p.body)
	}
	form.Set("form_token", p.formToken(e.t))
	return e.post(to, form, session)
}

func TestCreateStore(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, "http://dash.example.test")
		e.account("ann@example.com")
		ann := e.signIn("ann@example.com")

		// Refused: every field's error beside it, the values kept.
		p := e.formPost("/dashboard/stores/new", "/dashboard/stores/new",
			url.Values{"name": {"Ann's <shop>"}, "currency": {"EURO"}, "website": {"http://ann.example"}, "statement_descriptor": {"AB"}}, ann)
		if p.status != http.StatusBadRequest {
			t.Fatalf("create with bad fields = %d: %s", p.status, p.body)
		}
		for _, want := range []string{`id="currency-error"`, `id="website-error"`, `id="sd-error"`, `value="Ann&#39;s &lt;shop&gt;"`,
			`value="EURO"`, `value="http://ann.example"`, "Must use https"} {
			if !strings.Contains(p.body, want) {
				t.Errorf("the refused form has no %s", want)
			}
		}
		if strings.Contains(p.body, `id="name-error"`) {
			t.Error("the refused form marks the valid name")
		}
		if stores, _ := e.svc.AccountStores(context.Background(), accountOf(t, e, "ann@example.com")); len(stores) != 0 {
			t.Fatalf("a refused form made a store: %v", stores)
		}

		p = e.formPost("/dashboard/stores/new", "/dashboard/stores/new",
			url.Values{"name": {"Ann's shop"}, "currency": {"eur"}, "website": {"https://ann.example"}}, ann)
		m := storeHomeRE.FindStringSubmatch(p.header.Get("Location"))
		if p.status != http.StatusSeeOther || m == nil {
			t.Fatalf("create = %d, Location %q; want 303 to the store's test home", p.status, p.header.Get("Location"))
		}
		storeID := m[1]
		home := e.get(p.header.Get("Location"), ann)
		for _, want := range []string{"Ann&#39;s shop", storeID, `data-copy="store-id"`, "Test mode", `class="test-banner"`,
			"/v1/stores/" + storeID + "/checkouts", "http://dash.example.test/v1/"} {
			if !strings.Contains(home.body, want) {
				t.Errorf("the store's home has no %s", want)
			}
		}
		if p := e.get("/dashboard/stores/"+storeID+"/", ann); p.status != http.StatusSeeOther || p.header.Get("Location") != "/dashboard/stores/"+storeID+"/test/" {
			t.Errorf("GET the store's root = %d %q; want 303 to test mode", p.status, p.header.Get("Location"))
		}
		if p := e.get("/dashboard/", ann); !strings.Contains(p.body, `href="/dashboard/stores/`+storeID+`/test/"`) {
			t.Errorf("home does not list the new store: %s", p.body)
		}

		// Edit: refused with the values kept, then saved.
		settings := "/dashboard/stores/" + storeID + "/live/settings"
		p = e.formPost(settings, settings, url.Values{"name": {""}, "currency": {"GBP"}}, ann)
		if p.status != http.StatusBadRequest || !strings.Contains(p.body, `id="name-error"`) || !strings.Contains(p.body, `value="GBP"`) {
			t.Errorf("settings with no name = %d: %s", p.status, p.body)
		}
		p = e.formPost(settings, settings, url.Values{"name": {"Ann's games"}, "currency": {"GBP"}, "statement_descriptor": {"ANN GAMES"}}, ann)
		if p.status != http.StatusSeeOther || p.header.Get("Location") != settings+"?saved=1" {
			t.Fatalf("settings = %d %q", p.status, p.header.Get("Location"))
		}
		if got, _ := db.MerchantGet(context.Background(), storeID); got.Name != "Ann's games" || got.Currency != "GBP" || got.Website != "" {
			t.Errorf("the saved store = %+v", got)
		}
		if p := e.get(settings+"?saved=1", ann); !strings.Contains(p.body, "Saved.") || strings.Contains(p.body, `class="test-banner"`) ||
			!strings.Contains(p.body, "Live mode") {
			t.Errorf("the saved settings page in live mode: %s", p.body)
		}
	})
}

func accountOf(t *testing.T, e *env, email string) string {
	a, err := e.db.AccountGetByEmail(context.Background(), email)
	if err != nil {
		t.Fatal(err)
	}
	return a.ID
}

// One account cannot open or change another's store, whatever ids it puts in
// the URL; the answer is the one for a store that does not exist.
func TestStoresOfOthersAreNotFound(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, "http://dash.example.test")
		ctx := context.Background()
		annAcct, bobAcct := e.account("ann@example.com"), e.account("bob@example.com")
		annStore, err := e.svc.CreateStore(ctx, annAcct.ID, checkout.MerchantParams{Name: "Ann's", Currency: "USD"})
		if err != nil {
			t.Fatal(err)
		}
		bobStore, err := e.svc.CreateStore(ctx, bobAcct.ID, checkout.MerchantParams{Name: "Bob's", Currency: "USD"})
		if err != nil {
			t.Fatal(err)
		}
		bob := e.signIn("bob@example.com")
		for _, path := range []string{"/test/", "/live/", "/test/settings"} {
			other := e.get("/dashboard/stores/"+annStore.ID+path, bob)
			none := e.get("/dashboard/stores/00000000-0000-4000-8000-000000000000"+path, bob)
			if other.status != http.StatusNotFound || none.status != http.StatusNotFound || strings.Contains(other.body, "Ann") {
				t.Errorf("GET another's store %s = %d, no store = %d; want 404 alike: %s", path, other.status, none.status, other.body)
			}
		}
		if p := e.get("/dashboard/stores/"+bobStore.ID+"/staging/", bob); p.status != http.StatusNotFound {
			t.Errorf("an unknown mode = %d; want 404", p.status)
		}
		// A form token of Bob's own page does not open Ann's store.
		p := e.formPost("/dashboard/stores/"+bobStore.ID+"/test/settings", "/dashboard/stores/"+annStore.ID+"/test/settings",
			url.Values{"name": {"Taken"}, "currency": {"USD"}}, bob)
		if p.status != http.StatusNotFound {
			t.Errorf("POST another's settings = %d; want 404", p.status)
		}
		if got, _ := db.MerchantGet(ctx, annStore.ID); got.Name != "Ann's" {
			t.Errorf("Bob renamed Ann's store: %+v", got)
		}
		// The switcher lists Bob's stores only; switching keeps the section and mode.
		p = e.get("/dashboard/stores/"+bobStore.ID+"/live/settings", bob)
		if strings.Contains(p.body, annStore.ID) || !strings.Contains(p.body, `href="/dashboard/stores/`+bobStore.ID+`/test/settings"`) {
			t.Errorf("the live settings page's switches: %s", p.body)
		}
	})
}

// The pages link the style sheet and the script by version: that version
// is cached for good, any other revalidated, an unknown file a 404.
func TestDashboardAssets(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, "http://dash.example.test")
		page := e.get("/dashboard/signin")
		for name, ct := range map[string]string{"dashboard.css": "text/css; charset=utf-8", "dashboard.js": "text/javascript; charset=utf-8"} {
			m := regexp.MustCompile(`"(/dashboard/assets/` + regexp.QuoteMeta(name) + `\?v=[0-9a-f]+)"`).FindStringSubmatch(page.body)
			if m == nil {
				t.Fatalf("the sign-in page does not link %s by version", name)
			}
			if r := e.get(m[1]); r.status != http.StatusOK || r.header.Get("Content-Type") != ct || !strings.Contains(r.header.Get("Cache-Control"), "immutable") {
				t.Errorf("GET %s = %d %q %q", m[1], r.status, r.header.Get("Content-Type"), r.header.Get("Cache-Control"))
			}
			if r := e.get("/dashboard/assets/" + name + "?v=old"); r.header.Get("Cache-Control") != "no-cache" {
				t.Errorf("GET %s?v=old: Cache-Control %q; want no-cache", name, r.header.Get("Cache-Control"))
			}
		}
		if r := e.get("/dashboard/assets/nope.js"); r.status != http.StatusNotFound {
			t.Errorf("GET an unknown asset = %d; want 404", r.status)
		}
	})
}

package dashboard_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/app"
	"github.com/checkoutd/checkoutd/internal/httpsig"
	"github.com/checkoutd/checkoutd/internal/seal"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

var secretRE = regexp.MustCompile(`<code id="key-secret">(ck_(test|live)_sk_[0-9A-Za-z]+)</code>`)

// signedInStore makes an account with a store and signs it in.
func (e *env) signedInStore(email string) (*checkout.Merchant, *http.Cookie) {
	e.t.Helper()
	a := e.account(email)
	m, err := e.svc.CreateStore(context.Background(), a.ID, checkout.MerchantParams{Name: "Shop of " + email, Currency: "USD"})
	if err != nil {
		e.t.Fatal(err)
	}
	return m, e.signIn(email)
}

// apiCreate creates a checkout session through the API with a secret and
// returns the status.
func (e *env) apiCreate(storeID, secret string) int {
	e.t.Helper()
	return postCheckout(e.t, e.srv.URL, storeID, secret, "").status
}

// apiResponse is an API response read whole.
type apiResponse struct {
	status    int
	requestID string // its Request-Id header: what a merchant pastes into Logs
	body      string
}

// postCheckout creates a checkout session through the API served at base,
// with a key's secret, as a merchant's server does: body is the request's
// (a sword, twice, when empty).
func postCheckout(t *testing.T, base, storeID, secret, body string) apiResponse {
	t.Helper()
	if body == "" {
		body = `{"items":[{"name":"Sword","amount":1500,"quantity":2}]}`
	}
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/stores/"+storeID+"/checkouts", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return apiResponse{status: resp.StatusCode, requestID: resp.Header.Get("Request-Id"), body: string(b)}
}

func TestAPIKeys(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, "http://dash.example.test")
		m, ann := e.signedInStore("ann@example.com")
		keys := "/dashboard/stores/" + m.ID + "/test/developers/keys"

		p := e.get(keys, ann)
		if p.status != http.StatusOK || !strings.Contains(p.body, "No test key yet") || !strings.Contains(p.body, `data-copy="store-id"`) ||
			!strings.Contains(p.body, m.ID) {
			t.Fatalf("the empty keys page = %d: %s", p.status, p.body)
		}

		// Refused forms keep the values and say what is wrong.
		p = e.formPost(keys, keys, url.Values{"name": {"Web <shop>"}, "type": {"bearer"}}, ann)
		if p.status != http.StatusBadRequest || !strings.Contains(p.body, "Choose at least one permission.") || !strings.Contains(p.body, `value="Web &lt;shop&gt;"`) {
			t.Errorf("no permissions = %d: %s", p.status, p.body)
		}
		p = e.formPost(keys, keys, url.Values{"name": {strings.Repeat("n", 101)}, "type": {"bearer"}, "permissions": {"checkouts:read"}}, ann)
		if p.status != http.StatusBadRequest || !strings.Contains(p.body, `id="key-name-error"`) || !strings.Contains(p.body, `value="checkouts:read" checked`) {
			t.Errorf("a long name = %d: %s", p.status, p.body)
		}
		p = e.formPost(keys, keys, url.Values{"name": {"x"}, "type": {"hmac"}, "permissions": {"checkouts:read"}}, ann)
		if p.status != http.StatusBadRequest || !strings.Contains(p.body, "HMAC keys need the server&#39;s secrets key") ||
			!strings.Contains(p.body, `value="hmac" checked`) {
			t.Errorf("an HMAC key without a secrets key = %d: %s", p.status, p.body)
		}
		if ks, _ := db.APIKeyList(context.Background(), m.ID); len(ks) != 0 {
			t.Fatalf("refused forms made keys: %v", ks)
		}

		// Created: the secret once, not cached, and it works.
		p = e.formPost(keys, keys, url.Values{"name": {"Storefront"}, "type": {"bearer"}, "permissions": {"checkouts:write"}}, ann)
		sm := secretRE.FindStringSubmatch(p.body)
		if p.status != http.StatusCreated || sm == nil || sm[2] != "test" || p.header.Get("Cache-Control") != "no-store" {
			t.Fatalf("create = %d, Cache-Control %q: %s", p.status, p.header.Get("Cache-Control"), p.body)
		}
		secret := sm[1]
		if got := e.apiCreate(m.ID, secret); got != http.StatusCreated {
			t.Fatalf("the new key creates a session: %d; want 201", got)
		}
		list := e.get(keys, ann)
		if strings.Contains(list.body, secret) || !strings.Contains(list.body, "Storefront") || !strings.Contains(list.body, "…"+secret[len(secret)-4:]) {
			t.Errorf("the list shows the secret or misses the key: %s", list.body)
		}
		if live := e.get("/dashboard/stores/"+m.ID+"/live/developers/keys", ann); strings.Contains(live.body, "Storefront") {
			t.Errorf("the live keys page lists a test key: %s", live.body)
		}

		// Revoke: a confirmation first, then the API refuses the key.
		ks, _ := db.APIKeyList(context.Background(), m.ID)
		revoke := keys + "/" + ks[0].ID + "/revoke"
		if p := e.get(revoke, ann); p.status != http.StatusOK || !strings.Contains(p.body, "Revoke key") {
			t.Fatalf("the confirmation = %d: %s", p.status, p.body)
		}
		if live := e.get("/dashboard/stores/"+m.ID+"/live/developers/keys/"+ks[0].ID+"/revoke", ann); live.status != http.StatusNotFound {
			t.Errorf("the test key's confirmation in live mode = %d; want 404", live.status)
		}
		p = e.formPost(revoke, revoke, url.Values{}, ann)
		if p.status != http.StatusSeeOther || p.header.Get("Location") != keys+"?revoked="+ks[0].ID {
			t.Fatalf("revoke = %d %q", p.status, p.header.Get("Location"))
		}
		if p := e.get(p.header.Get("Location"), ann); !strings.Contains(p.body, "The key Storefront is revoked") || !strings.Contains(p.body, "Revoked") {
			t.Errorf("after revoking: %s", p.body)
		}
		e.clock.Advance(5 * time.Second)
		if got := e.apiCreate(m.ID, secret); got != http.StatusUnauthorized {
			t.Errorf("the revoked key 5 s later: %d; want 401", got)
		}
	})
}

// Another account's key cannot be seen or revoked by editing ids.
func TestAPIKeysOfOthers(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, "http://dash.example.test")
		annStore, _ := e.signedInStore("ann@example.com")
		bobStore, bob := e.signedInStore("bob@example.com")
		k, _, err := e.svc.CreateAPIKey(context.Background(), checkout.APIKeyParams{Name: "Ann's key", MerchantID: annStore.ID,
			Mode: checkout.ModeTest, Type: checkout.KeyBearer, Permissions: []checkout.Permission{checkout.PermCheckoutsWrite}})
		if err != nil {
			t.Fatal(err)
		}
		bobKeys := "/dashboard/stores/" + bobStore.ID + "/test/developers/keys"
		if p := e.get(bobKeys+"/"+k.ID+"/revoke", bob); p.status != http.StatusNotFound || strings.Contains(p.body, "Ann") {
			t.Errorf("Ann's key under Bob's store = %d: %s", p.status, p.body)
		}
		p := e.formPost(bobKeys, bobKeys+"/"+k.ID+"/revoke", url.Values{}, bob)
		if p.status != http.StatusNotFound {
			t.Errorf("revoking Ann's key under Bob's store = %d; want 404", p.status)
		}
		if got, _ := db.APIKeyGet(context.Background(), k.ID); got.Revoked() {
			t.Error("Bob revoked Ann's key")
		}
		if p := e.get("/dashboard/stores/"+annStore.ID+"/test/developers/keys", bob); p.status != http.StatusNotFound {
			t.Errorf("Ann's keys page for Bob = %d; want 404", p.status)
		}
	})
}

var hmacSecretRE = regexp.MustCompile(`<code id="key-secret">(ck_test_hk_[0-9A-Za-z]{86})</code>`)

// With the operator's secrets key, the form makes HMAC keys: the secret is
// shown once, and requests signed with it get in.
func TestAPIKeysHMAC(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		key, err := seal.NewKey(bytes.Repeat([]byte{7}, 32))
		if err != nil {
			t.Fatal(err)
		}
		e := newEnvWith(t, db, "http://dash.example.test", func(c *app.Config) { c.SecretsKey = key })
		m, ann := e.signedInStore("ann@example.com")
		keys := "/dashboard/stores/" + m.ID + "/test/developers/keys"
		p := e.formPost(keys, keys, url.Values{"name": {"Signer"}, "type": {"hmac"}, "permissions": {"checkouts:write"}}, ann)
		sm := hmacSecretRE.FindStringSubmatch(p.body)
		if p.status != http.StatusCreated || sm == nil || !strings.Contains(p.body, "Signed requests") || strings.Contains(p.body, "Bearer $CHECKOUTD_SECRET") {
			t.Fatalf("create an HMAC key = %d: %s", p.status, p.body)
		}
		ks, _ := db.APIKeyList(context.Background(), m.ID)
		if len(ks) != 1 || ks[0].Type != checkout.KeyHMAC {
			t.Fatalf("keys = %+v", ks)
		}
		body := `{"items":[{"name":"Sword","amount":1500,"quantity":1}]}`
		path := "/v1/stores/" + m.ID + "/checkouts"
		u, _ := url.Parse(path)
		hdr := http.Header{"Content-Type": {"application/json"}, "Content-Digest": {httpsig.ContentDigest([]byte(body))}}
		in, sig, err := httpsig.Sign(httpsig.Request{Method: "POST", BaseURL: "http://dash.example.test", URL: u, Header: hdr, Body: []byte(body)},
			ks[0].ID, sm[1], "dashboard-nonce", e.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest("POST", e.srv.URL+path, strings.NewReader(body))
		req.Header = hdr
		req.Header.Set("Signature-Input", in)
		req.Header.Set("Signature", sig)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			t.Errorf("a request signed with the new key = %d; want 201", resp.StatusCode)
		}
		if list := e.get(keys, ann); !strings.Contains(list.body, "ck_test_hk_…"+sm[1][len(sm[1])-4:]) || strings.Contains(list.body, sm[1]) {
			t.Errorf("the list's HMAC key: %s", list.body)
		}
	})
}

package server_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

const swordBody = `{"items":[{"name":"Sword","amount":1500}]}`

// Only a valid bearer key of the right shape gets in: no credentials answer
// authentication_required, anything else invalid_api_key, both 401 with
// WWW-Authenticate, and neither says more about the key.
func TestAuthentication(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		s := h.mustCreate(swordBody)
		_, hmac, err := h.svc.CreateAPIKey(context.Background(), checkout.APIKeyParams{
			MerchantID: h.store.ID, Mode: checkout.ModeTest, Type: checkout.KeyHMAC, Permissions: []checkout.Permission{checkout.PermCheckoutsWrite},
		})
		if err != nil {
			t.Fatal(err)
		}
		revokedKey, revoked := h.newKey(h.store.ID, checkout.ModeTest, checkout.PermCheckoutsWrite)
		if _, err := h.svc.RevokeAPIKey(context.Background(), revokedKey.ID); err != nil {
			t.Fatal(err)
		}

		tests := []struct {
			name   string
			header []string // Authorization values; nil sends none
			code   string   // "" when the request gets in
		}{
			{"no header", nil, "authentication_required"},
			{"empty header", []string{""}, "authentication_required"},
			{"bearer", []string{"Bearer " + h.secret}, ""},
			{"bearer in lower case", []string{"bearer " + h.secret}, ""},
			{"bearer in upper case", []string{"BEARER " + h.secret}, ""},
			{"scheme alone", []string{"Bearer"}, "invalid_api_key"},
			{"scheme and a space", []string{"Bearer "}, "invalid_api_key"},
			{"secret alone", []string{h.secret}, "invalid_api_key"},
			{"basic", []string{"Basic " + base64.StdEncoding.EncodeToString([]byte(h.secret+":"))}, "invalid_api_key"},
			{"basic with the bare secret", []string{"Basic " + h.secret}, "invalid_api_key"},
			{"another scheme", []string{"Token " + h.secret}, "invalid_api_key"},
			{"secret with a character more", []string{"Bearer " + h.secret + "x"}, "invalid_api_key"},
			{"secret with a character less", []string{"Bearer " + h.secret[:len(h.secret)-1]}, "invalid_api_key"},
			{"secret with a wrong character", []string{"Bearer " + h.secret[:len(h.secret)-1] + "!"}, "invalid_api_key"},
			{"secret in the wrong mode", []string{"Bearer " + strings.Replace(h.secret, "_test_", "_live_", 1)}, "invalid_api_key"},
			{"unknown test secret", []string{"Bearer ck_test_sk_" + checkout.NewSecret()}, "invalid_api_key"},
			{"unknown live secret", []string{"Bearer ck_live_sk_" + checkout.NewSecret()}, "invalid_api_key"},
			{"an HMAC key's secret", []string{"Bearer " + hmac}, "invalid_api_key"},
			{"a webhook signing secret", []string{"Bearer whsec_" + checkout.NewSecret()}, "invalid_api_key"},
			{"revoked key", []string{"Bearer " + revoked}, "invalid_api_key"},
		}
		for _, tt := range tests {
			for _, req := range []request{
				{method: "GET", path: "/v1/stores/" + h.store.ID + "/checkouts/" + s.ID},
				{method: "POST", path: "/v1/stores/" + h.store.ID + "/checkouts", body: swordBody},
			} {
				t.Run(tt.name+" "+req.method, func(t *testing.T) {
					if tt.header != nil {
						req.header = http.Header{"Authorization": tt.header}
					}
					r := h.with(t).do(req)
					if tt.code == "" {
						if r.Status != http.StatusOK && r.Status != http.StatusCreated {
							t.Fatalf("%s with Authorization %q = %d %s; want success", req.method, tt.header, r.Status, r.Body)
						}
						return
					}
					e := r.envelope(t)
					if r.Status != http.StatusUnauthorized || e.Error == nil || e.Error.Code != tt.code {
						t.Fatalf("%s with Authorization %q = %d %s; want 401 %s", req.method, tt.header, r.Status, r.Body, tt.code)
					}
					if got := r.Header.Get("WWW-Authenticate"); got != `Bearer realm="checkoutd"` {
						t.Errorf("WWW-Authenticate = %q; want Bearer realm=\"checkoutd\"", got)
					}
					for _, v := range tt.header {
						if _, secret, ok := strings.Cut(v, " "); ok && len(secret) > 8 && strings.Contains(string(r.Body), secret) {
							t.Errorf("the answer repeats the secret sent: %s", r.Body)
						}
					}
				})
			}
		}
	})
}

// An HMAC key's secret sent as a bearer is refused with a message that says
// what to do instead: sign with it, or send a bearer key.
func TestHMACSecretAsBearer(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		_, hmac, err := h.svc.CreateAPIKey(context.Background(), checkout.APIKeyParams{
			MerchantID: h.store.ID, Mode: checkout.ModeTest, Type: checkout.KeyHMAC, Permissions: []checkout.Permission{checkout.PermCheckoutsWrite},
		})
		if err != nil {
			t.Fatal(err)
		}
		r := h.with(t).do(request{method: "POST", path: "/v1/stores/" + h.store.ID + "/checkouts", body: swordBody,
			header: http.Header{"Authorization": {"Bearer " + hmac}}})
		e := r.envelope(t)
		if r.Status != http.StatusUnauthorized || e.Error == nil || e.Error.Code != checkout.EInvalidAPIKey {
			t.Fatalf("POST with an HMAC key's secret = %d %s; want 401 invalid_api_key", r.Status, r.Body)
		}
		if msg := e.Error.Message; !strings.Contains(msg, "bearer key") || !strings.Contains(msg, "sign the request") {
			t.Errorf("message = %q; want it to say to sign the request with it, or to send a bearer key", msg)
		}
	})
}

// A revoked key stops working on a node once its cache has aged
// service.MaxKeyCacheTTL (DESIGN.md 2: within 5 seconds), on every route.
func TestRevocation(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		s := h.mustCreate(swordBody) // the key is cached now
		if _, err := h.svc.RevokeAPIKey(context.Background(), h.key.ID); err != nil {
			t.Fatal(err)
		}
		h.cacheClock.Advance(service.MaxKeyCacheTTL)
		wantError(t, h.get(s.ID), http.StatusUnauthorized, "invalid_api_key")
		wantError(t, h.post(swordBody), http.StatusUnauthorized, "invalid_api_key")
		// Another key of the store still works.
		_, other := h.newKey(h.store.ID, checkout.ModeTest, checkout.PermCheckoutsRead)
		if r := h.do(request{method: "GET", path: "/v1/stores/" + h.store.ID + "/checkouts/" + s.ID, secret: other}); r.Status != http.StatusOK {
			t.Errorf("Retrieve with another key = %d %s; want 200", r.Status, r.Body)
		}
	})
}

// checkouts:write creates and retrieves; checkouts:read only retrieves. A
// key's store is checked before its permission, and its permission before
// anything about the request.
func TestPermissions(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		s := h.mustCreate(swordBody)
		_, read := h.newKey(h.store.ID, checkout.ModeTest, checkout.PermCheckoutsRead)
		_, write := h.newKey(h.store.ID, checkout.ModeTest, checkout.PermCheckoutsWrite)
		_, both := h.newKey(h.store.ID, checkout.ModeTest, checkout.PermCheckoutsRead, checkout.PermCheckoutsWrite)
		_, liveRead := h.newKey(h.store.ID, checkout.ModeLive, checkout.PermCheckoutsRead)
		other := h.newStore("Other Shop", "EUR")
		create := "/v1/stores/" + h.store.ID + "/checkouts"
		tests := []struct {
			name   string
			req    request
			status int
			code   string
		}{
			{"read key retrieves", request{method: "GET", path: create + "/" + s.ID, secret: read}, 200, ""},
			{"read key creates", request{method: "POST", path: create, secret: read, body: swordBody}, 403, "permission_denied"},
			{"live read key creates", request{method: "POST", path: create, secret: liveRead, body: swordBody}, 403, "permission_denied"},
			{"write key retrieves", request{method: "GET", path: create + "/" + s.ID, secret: write}, 200, ""},
			{"write key creates", request{method: "POST", path: create, secret: write, body: swordBody}, 201, ""},
			{"read and write key retrieves", request{method: "GET", path: create + "/" + s.ID, secret: both}, 200, ""},
			{"read and write key creates", request{method: "POST", path: create, secret: both, body: swordBody}, 201, ""},
			{"read key creates in another store", request{method: "POST", path: "/v1/stores/" + other.ID + "/checkouts", secret: read, body: swordBody}, 404, "store_not_found"},
			{"read key creates in a malformed store", request{method: "POST", path: "/v1/stores/acme/checkouts", secret: read, body: swordBody}, 400, "validation_failed"},
			{"read key creates with a bad body", request{method: "POST", path: create, secret: read, body: `{"items":[]}`}, 403, "permission_denied"},
			{"read key creates with bad JSON", request{method: "POST", path: create, secret: read, body: `[`}, 403, "permission_denied"},
			{"read key creates without a content type", request{method: "POST", path: create, secret: read, body: swordBody, headers: map[string]string{"Content-Type": ""}}, 403, "permission_denied"},
			{"read key creates with a bad Idempotency-Key", request{method: "POST", path: create, secret: read, body: swordBody, headers: map[string]string{"Idempotency-Key": "a b"}}, 403, "permission_denied"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := h.with(t).do(tt.req)
				if tt.code == "" {
					if r.Status != tt.status {
						t.Errorf("%s %s = %d %s; want %d", tt.req.method, tt.req.path, r.Status, r.Body, tt.status)
					}
					return
				}
				e := wantError(t, r, tt.status, tt.code)
				if tt.code == "permission_denied" && !strings.Contains(e.Error.Message, "checkouts:write") {
					t.Errorf("permission_denied message %q does not name the permission needed", e.Error.Message)
				}
			})
		}
	})
}

// Each key has its own token bucket, on the service's clock; over it the
// API answers 429 rate_limited with Retry-After, and with time the key is
// admitted again. Requests that fail authentication take no token.
func TestRateLimit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db, harnessOptions{rateLimit: 0.5, rateBurst: 2}) // a token every 2 s
		s := h.mustCreate(swordBody)                                         // token 1
		if r := h.get(s.ID); r.Status != http.StatusOK {                     // token 2
			t.Fatalf("Retrieve = %d %s; want 200", r.Status, r.Body)
		}
		for _, r := range []*response{h.get(s.ID), h.post(swordBody), h.get("cs_1")} {
			wantError(t, r, http.StatusTooManyRequests, "rate_limited")
			if got := r.Header.Get("Retry-After"); got != "2" {
				t.Errorf("Retry-After = %q; want 2", got)
			}
		}
		// Another key has its own bucket; a bad key takes none.
		_, other := h.newKey(h.store.ID, checkout.ModeTest, checkout.PermCheckoutsRead)
		for range 3 {
			wantError(t, h.do(request{method: "GET", path: "/v1/stores/" + h.store.ID + "/checkouts/" + s.ID, secret: "ck_test_sk_" + checkout.NewSecret()}),
				http.StatusUnauthorized, "invalid_api_key")
		}
		if r := h.do(request{method: "GET", path: "/v1/stores/" + h.store.ID + "/checkouts/" + s.ID, secret: other}); r.Status != http.StatusOK {
			t.Errorf("Retrieve with another key = %d %s; want 200", r.Status, r.Body)
		}

		h.clock.Advance(time.Second)
		r := h.get(s.ID)
		wantError(t, r, http.StatusTooManyRequests, "rate_limited")
		if got := r.Header.Get("Retry-After"); got != "1" {
			t.Errorf("Retry-After a second later = %q; want 1", got)
		}
		h.clock.Advance(time.Second)
		if r := h.get(s.ID); r.Status != http.StatusOK {
			t.Errorf("Retrieve once a token is back = %d %s; want 200", r.Status, r.Body)
		}
		wantError(t, h.get(s.ID), http.StatusTooManyRequests, "rate_limited")
	})
}

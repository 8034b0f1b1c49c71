package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/yaronf/httpsign"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/api"
	"github.com/checkoutd/checkoutd/internal/httpsig"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// newHMACKey makes an HMAC key for the harness's store.
func (h *harness) newHMACKey(perm checkout.Permission) (*checkout.APIKey, string) {
	h.t.Helper()
	k, secret, err := h.svc.CreateAPIKey(context.Background(), checkout.APIKeyParams{
		MerchantID: h.store.ID, Mode: checkout.ModeTest, Type: checkout.KeyHMAC, Permissions: []checkout.Permission{perm},
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return k, secret
}

// signed is a request signed as DESIGN.md 6 says, for the API at apiBase,
// by keyID with secret, at created.
func signed(t *testing.T, method, path, body, keyID, secret, nonce string, created time.Time) request {
	t.Helper()
	u, _ := url.Parse(path)
	hdr := http.Header{}
	if body != "" {
		hdr.Set("Content-Type", "application/json")
		hdr.Set("Content-Digest", httpsig.ContentDigest([]byte(body)))
	}
	in, sig, err := httpsig.Sign(httpsig.Request{Method: method, BaseURL: apiBase, URL: u, Header: hdr, Body: []byte(body)}, keyID, secret, nonce, created)
	if err != nil {
		t.Fatal(err)
	}
	headers := map[string]string{"Signature-Input": in, "Signature": sig}
	if body != "" {
		headers["Content-Digest"] = hdr.Get("Content-Digest")
	}
	return request{method: method, path: path, body: body, headers: headers}
}

// A signed create and a signed retrieve get in, as the HMAC key; the same
// signature again is refused as replayed, on this node and on another one
// over the same database. The requests are signed for apiBase and sent to
// the test server's own address: @target-uri comes from the configured base
// URL, never from the Host header.
func TestSignedRequests(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		k, secret := h.newHMACKey(checkout.PermCheckoutsWrite)
		create := signed(t, "POST", "/v1/stores/"+h.store.ID+"/checkouts", swordBody, k.ID, secret, "nonce-create", t0)
		r := h.do(create)
		if r.Status != http.StatusCreated {
			t.Fatalf("signed POST = %d %s; want 201", r.Status, r.Body)
		}
		var created struct {
			Data struct{ ID string } `json:"data"`
		}
		r.decode(t, &created)
		get := signed(t, "GET", "/v1/stores/"+h.store.ID+"/checkouts/"+created.Data.ID, "", k.ID, secret, "nonce-get", t0)
		if r := h.do(get); r.Status != http.StatusOK {
			t.Fatalf("signed GET = %d %s; want 200", r.Status, r.Body)
		}

		other := newHarness(t, db) // another node
		for name, node := range map[string]*harness{"this node": h, "another node": other} {
			e := wantError(t, node.do(create), http.StatusUnauthorized, checkout.EInvalidSignature)
			if !strings.Contains(e.Error.Message, "replayed") {
				t.Errorf("%s: replay message = %q; want it to say replayed", name, e.Error.Message)
			}
		}
		if got := h.do(signed(t, "POST", "/v1/stores/"+h.store.ID+"/checkouts", swordBody, k.ID, secret, "nonce-2", t0)); got.Status != http.StatusCreated {
			t.Errorf("a new nonce = %d %s; want 201", got.Status, got.Body)
		}
	})
}

// Each refusal is 401 invalid_signature with a message saying which check
// failed.
func TestSignedRefusals(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		ctx := context.Background()
		k, secret := h.newHMACKey(checkout.PermCheckoutsWrite)
		revoked, revokedSecret := h.newHMACKey(checkout.PermCheckoutsWrite)
		if _, err := h.svc.RevokeAPIKey(ctx, revoked.ID); err != nil {
			t.Fatal(err)
		}
		post := "/v1/stores/" + h.store.ID + "/checkouts"
		sign := func(nonce string) request { return signed(t, "POST", post, swordBody, k.ID, secret, nonce, t0) }
		tampered := sign("n-body")
		tampered.body = strings.Replace(swordBody, "1500", "1", 1)
		wrongSecret := signed(t, "POST", post, swordBody, k.ID, secret[:len(secret)-1]+"Z", "n-secret", t0)
		if strings.HasSuffix(secret, "Z") {
			wrongSecret = signed(t, "POST", post, swordBody, k.ID, secret[:len(secret)-1]+"Y", "n-secret", t0)
		}
		noDigest := sign("n-nodigest")
		noDigest.headers["Content-Digest"] = ""
		both := sign("n-both")
		both.secret = h.secret
		tests := []struct {
			name string
			req  request
			now  time.Time
			want string
		}{
			{"stale", sign("n-stale"), t0.Add(httpsig.Window + time.Second), "stale"},
			{"body changed", tampered, t0, "Content-Digest does not match"},
			{"no Content-Digest", noDigest, t0, "Content-Digest"},
			{"unknown key", signed(t, "POST", post, swordBody, checkout.NewAPIKeyID(), secret, "n-unknown", t0), t0, "keyid"},
			{"a bearer key", signed(t, "POST", post, swordBody, h.key.ID, h.secret, "n-bearer", t0), t0, "bearer key"},
			{"a revoked key", signed(t, "POST", post, swordBody, revoked.ID, revokedSecret, "n-revoked", t0), t0, "revoked"},
			{"another secret", wrongSecret, t0, "does not match"},
			{"signature and Authorization", both, t0, "not both"},
		}
		for _, tt := range tests {
			h.clock.Set(tt.now)
			r := h.do(tt.req)
			e := wantError(t, r, http.StatusUnauthorized, checkout.EInvalidSignature)
			if !strings.Contains(e.Error.Message, tt.want) {
				t.Errorf("%s: message = %q; want it to say %q", tt.name, e.Error.Message, tt.want)
			}
			if strings.Contains(e.Error.Message, secret) || strings.Contains(e.Error.Message, httpsig.ContentDigest([]byte(swordBody))) {
				t.Errorf("%s: message %q holds an expected value", tt.name, e.Error.Message)
			}
		}
	})
}

// Refused signatures spend the client's failed-authentication budget as
// invalid keys do. Past it, a signature whose keyid names no key this node
// knows of is answered 429 before its body is read, while a good signature
// of a real key still gets in (the limit never refuses a valid key), and a
// bad one of a real key is still checked and refused 401.
func TestSignedFailuresAreLimited(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db, harnessOptions{authFailureLimit: 20})
		k, secret := h.newHMACKey(checkout.PermCheckoutsWrite)
		post := "/v1/stores/" + h.store.ID + "/checkouts"
		badOf := func(nonce string) request {
			bad := signed(t, "POST", post, swordBody, k.ID, secret, nonce, t0)
			bad.body = strings.Replace(swordBody, "1500", "1600", 1) // the digest no longer matches
			return bad
		}
		for i := range 20 {
			wantError(t, h.do(badOf(fmt.Sprintf("bad-%d", i))), http.StatusUnauthorized, checkout.EInvalidSignature)
		}
		for _, req := range []request{
			signed(t, "POST", post, swordBody, checkout.NewAPIKeyID(), secret, "unknown-key", t0),
			signed(t, "POST", post, swordBody, "key_nonsense", secret, "malformed-key", t0),
			{method: "POST", path: post, body: swordBody, headers: map[string]string{"Signature-Input": "nonsense", "Signature": "nonsense"}},
		} {
			wantPlainError(t, h.do(req), http.StatusTooManyRequests, "rate_limited")
		}
		wantError(t, h.do(badOf("bad-over")), http.StatusUnauthorized, checkout.EInvalidSignature)
		h.cacheClock.Advance(service.MaxKeyCacheTTL) // the key no longer cached
		if r := h.do(signed(t, "POST", post, swordBody, k.ID, secret, "good", t0)); r.Status != http.StatusCreated {
			t.Errorf("a good signature from the limited address = %d %s; want 201", r.Status, r.Body)
		}
		if got, want := h.authFailures.Stats(), (api.FailureStats{Refused: 3, Admitted: 1}); got != want {
			t.Errorf("limiter's counts = %+v; want %+v", got, want)
		}
	})
}

// An HMAC key revoked after it signed (and so is cached) stops signing on
// a node once its cache has aged service.MaxKeyCacheTTL, as a bearer key
// stops working.
func TestSignedRevocation(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		k, secret := h.newHMACKey(checkout.PermCheckoutsWrite)
		post := "/v1/stores/" + h.store.ID + "/checkouts"
		if r := h.do(signed(t, "POST", post, swordBody, k.ID, secret, "n1", t0)); r.Status != http.StatusCreated {
			t.Fatalf("signed POST = %d %s", r.Status, r.Body)
		}
		if _, err := h.svc.RevokeAPIKey(context.Background(), k.ID); err != nil {
			t.Fatal(err)
		}
		h.cacheClock.Advance(service.MaxKeyCacheTTL)
		wantError(t, h.do(signed(t, "POST", post, swordBody, k.ID, secret, "n2", t0)), http.StatusUnauthorized, checkout.EInvalidSignature)
	})
}

// A request signed by an independent RFC 9421 implementation,
// github.com/yaronf/httpsign v0.4.2, gets in. httpsign stamps created with
// the real time, so the server's clock is set to it.
func TestSignedByHTTPSign(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		k, secret := h.newHMACKey(checkout.PermCheckoutsWrite)
		h.clock.Set(time.Now())
		path := "/v1/stores/" + h.store.ID + "/checkouts"
		req, _ := http.NewRequest("POST", apiBase+path, strings.NewReader(swordBody))
		req.Header.Set("Content-Type", "application/json")
		rc := io.NopCloser(strings.NewReader(swordBody))
		digest, err := httpsign.GenerateContentDigestHeader(&rc, []string{httpsign.DigestSha256})
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Digest", digest)
		signer, err := httpsign.NewHMACSHA256Signer([]byte(secret), httpsign.NewSignConfig().SetKeyID(k.ID).SetNonce("httpsign-nonce"),
			httpsign.Headers("@method", "@target-uri", "content-digest", "content-type"))
		if err != nil {
			t.Fatal(err)
		}
		in, sig, err := httpsign.SignRequest("sig1", *signer, req)
		if err != nil {
			t.Fatal(err)
		}
		r := h.do(request{method: "POST", path: path, body: swordBody,
			headers: map[string]string{"Content-Digest": digest, "Signature-Input": in, "Signature": sig}})
		if r.Status != http.StatusCreated {
			t.Errorf("POST signed by httpsign = %d %s; want 201", r.Status, r.Body)
		}
	})
}

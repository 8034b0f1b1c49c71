package clienttest_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/client"
	"github.com/checkoutd/checkoutd/internal/app"
	"github.com/checkoutd/checkoutd/internal/seal"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
	"github.com/yaronf/httpsign"
)

// WithHMAC against the server: the client signs for the API's public
// address (the server's --base-url) and sends through a proxy to the
// server's own; a create and a retrieve get in; a create whose answer is
// lost after the server committed is retried signed afresh (a new nonce, so
// not refused as replayed) with the same Idempotency-Key, and one session
// exists; a wrong secret is 401 invalid_signature.
func TestWithHMACAgainstServer(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		const public = "https://api.example.com"
		sk, err := seal.NewKey([]byte("client tests secrets key, 32 B!!"))
		if err != nil {
			t.Fatal(err)
		}
		h := newHarness(t, db, func(c *app.Config) { c.BaseURL, c.SecretsKey = public, sk })
		k, secret, err := h.app.Service.CreateAPIKey(context.Background(), checkout.APIKeyParams{
			MerchantID: h.merchant.ID, Mode: checkout.ModeTest, Type: checkout.KeyHMAC, Permissions: []checkout.Permission{checkout.PermCheckoutsWrite}})
		if err != nil {
			t.Fatal(err)
		}
		server, _ := url.Parse(h.url)
		toServer := transport(func(r *http.Request) (*http.Response, error) {
			r = r.Clone(r.Context())
			r.URL.Scheme, r.URL.Host = server.Scheme, server.Host
			return http.DefaultTransport.RoundTrip(r)
		})
		p := &proxy{}
		newClient := func(secret string) *client.Client {
			return client.New(public, h.merchant.ID, client.WithHMAC(k.ID, secret), client.WithHTTPClient(&http.Client{Transport: p}))
		}
		p.fault = func(_ int, r *http.Request) (*http.Response, error) { return toServer(r) }
		ctx := context.Background()

		s, err := newClient(secret).Create(ctx, sword())
		if err != nil {
			t.Fatalf("signed Create = %v", err)
		}
		if g, err := newClient(secret).Get(ctx, s.ID); err != nil || g.ID != s.ID {
			t.Fatalf("signed Get = %v, %v", g, err)
		}

		// The answer lost after the server committed: the retry is signed
		// afresh and replays the session.
		n := 0
		var keys []string
		p.fault = func(_ int, r *http.Request) (*http.Response, error) {
			keys = append(keys, r.Header.Get("Idempotency-Key"))
			resp, err := toServer(r)
			if n++; n == 1 && err == nil {
				io.ReadAll(resp.Body)
				resp.Body.Close()
				return nil, errors.New("connection reset (injected after the server answered)")
			}
			return resp, err
		}
		before := h.created()
		s2, err := newClient(secret).Create(ctx, sword())
		if err != nil || n != 2 {
			t.Fatalf("signed Create after a lost answer = %v after %d attempts", err, n)
		}
		if got := h.created() - before; got != 1 || s2.ID == s.ID || keys[0] != keys[1] {
			t.Errorf("%d sessions created by a retried signed create, with keys %q; want 1 and one key", got, keys)
		}

		p.fault = func(_ int, r *http.Request) (*http.Response, error) { return toServer(r) }
		_, err = newClient(otherLast(secret)).Get(ctx, s.ID)
		var e *client.Error
		if !errors.As(err, &e) || e.StatusCode != 401 || e.Code != "invalid_signature" {
			t.Errorf("Get signed with a wrong secret = %v; want 401 invalid_signature", err)
		}
	})
}

// The client's signatures verify with an independent RFC 9421
// implementation, github.com/yaronf/httpsign, for a create and a retrieve.
// (It is here, in the server's module, because the client's module requires
// nothing.)
func TestWithHMACVerifiesWithHTTPSign(t *testing.T) {
	const secret = "ck_test_hk_0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefghijklmnopqrstuvwx"
	var reqs []*http.Request
	p := &proxy{fault: func(_ int, r *http.Request) (*http.Response, error) {
		var b []byte
		if r.Body != nil {
			b, _ = io.ReadAll(r.Body)
		}
		c := r.Clone(context.Background())
		c.Body = io.NopCloser(strings.NewReader(string(b)))
		reqs = append(reqs, c)
		return unavailable(400, ""), nil
	}}
	c := client.New("https://api.example.com", "7d1f6c8e-1c9a-4c55-9f9e-2b7a1c3d4e5f", client.WithHMAC("key_1", secret), client.WithHTTPClient(&http.Client{Transport: p}))
	c.Create(context.Background(), sword())
	c.Get(context.Background(), "cs_x")
	if len(reqs) != 2 {
		t.Fatalf("%d requests; want a create and a get", len(reqs))
	}
	for i, fields := range []httpsign.Fields{
		httpsign.Headers("@method", "@target-uri", "content-digest", "content-type"),
		httpsign.Headers("@method", "@target-uri"),
	} {
		v, err := httpsign.NewHMACSHA256Verifier([]byte(secret), httpsign.NewVerifyConfig().SetKeyID("key_1").
			SetNotOlderThan(time.Minute).SetNotNewerThan(time.Minute), fields)
		if err != nil {
			t.Fatal(err)
		}
		if err := httpsign.VerifyRequest("sig1", *v, reqs[i]); err != nil {
			t.Errorf("httpsign.VerifyRequest(the client's %s) = %v", reqs[i].Method, err)
		}
	}
}

// otherLast returns secret with its last character changed: always to
// another one (a fixed replacement would be the same character once in 62
// runs).
func otherLast(secret string) string {
	last := "x"
	if secret[len(secret)-1] == 'x' {
		last = "y"
	}
	return secret[:len(secret)-1] + last
}

package server_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// countingStore counts the key lookups that reach the database.
type countingStore struct {
	checkout.Store
	keyReads atomic.Int64
}

func (s *countingStore) APIKeyGetByHash(ctx context.Context, hash string) (*checkout.APIKey, error) {
	s.keyReads.Add(1)
	return s.Store.APIKeyGetByHash(ctx, hash)
}

func newCountingHarness(t *testing.T, db *store.DB, opts harnessOptions) (*harness, *countingStore) {
	var cs *countingStore
	opts.wrapStore = func(st checkout.Store) checkout.Store {
		cs = &countingStore{Store: st}
		return cs
	}
	return newHarness(t, db, opts), cs
}

// A secret that cannot be a bearer key (wrong prefix, length or alphabet,
// an HMAC key's, a webhook signing secret) is refused without a database
// read; an unknown one of the right shape is read once and then remembered
// as unknown for as long as a known key is cached, so a repeated made-up key
// does not reach the database on every request.
func TestFailedAuthenticationSparesTheDatabase(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h, cs := newCountingHarness(t, db, harnessOptions{})
		s := h.mustCreate(swordBody)
		retrieve := "/v1/stores/" + h.store.ID + "/checkouts/" + s.ID
		reads := func() int64 { return cs.keyReads.Load() }

		for _, secret := range []string{
			"sk_test_" + checkout.NewSecret(),
			"ck_test_sk_" + checkout.NewSecret()[:42],
			"ck_test_sk_" + checkout.NewSecret() + "a",
			"ck_test_sk_" + checkout.NewSecret()[:42] + "-",
			"ck_test_sk_" + checkout.NewSecret()[:42] + "é",
			"ck_prod_sk_" + checkout.NewSecret(),
			"ck_test_pk_" + checkout.NewSecret(),
			"ck_test_hk_" + checkout.NewSecret() + checkout.NewSecret(),
			"whsec_" + checkout.NewSecret(),
			strings.Repeat("x", 4000),
		} {
			before := reads()
			wantError(t, h.do(request{method: "GET", path: retrieve, secret: secret}), http.StatusUnauthorized, "invalid_api_key")
			if got := reads() - before; got != 0 {
				t.Errorf("a malformed secret of %d characters cost %d key reads; want 0", len(secret), got)
			}
		}

		unknown := "ck_test_sk_" + checkout.NewSecret()
		before := reads()
		for range 5 {
			wantError(t, h.do(request{method: "GET", path: retrieve, secret: unknown}), http.StatusUnauthorized, "invalid_api_key")
			wantError(t, h.do(request{method: "POST", path: "/v1/stores/" + h.store.ID + "/checkouts", secret: unknown, body: swordBody}),
				http.StatusUnauthorized, "invalid_api_key")
		}
		if got := reads() - before; got != 1 {
			t.Errorf("10 requests with one unknown key cost %d key reads; want 1", got)
		}
		h.cacheClock.Advance(2*time.Second - time.Millisecond)
		h.do(request{method: "GET", path: retrieve, secret: unknown})
		if got := reads() - before; got != 1 {
			t.Errorf("just before 2 s: %d key reads; want 1 (the miss still remembered)", got)
		}
		h.cacheClock.Advance(time.Millisecond)
		h.do(request{method: "GET", path: retrieve, secret: unknown})
		if got := reads() - before; got != 2 {
			t.Errorf("after 2 s: %d key reads; want 2 (the miss forgotten)", got)
		}
	})
}

// A key that comes to exist after its secret was tried and found unknown
// (created on another node: the secret of a key created on this one cannot
// have been tried before) works once the miss is forgotten, within the key
// cache's 2 seconds.
func TestNewKeyAfterAMiss(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		s := h.mustCreate(swordBody)
		retrieve := request{method: "GET", path: "/v1/stores/" + h.store.ID + "/checkouts/" + s.ID, secret: "ck_test_sk_" + checkout.NewSecret()}
		wantError(t, h.do(retrieve), http.StatusUnauthorized, "invalid_api_key")
		k := &checkout.APIKey{ID: checkout.NewAPIKeyID(), MerchantID: h.store.ID, Mode: checkout.ModeTest, Type: checkout.KeyBearer,
			Permissions: []checkout.Permission{checkout.PermCheckoutsRead}, SecretHash: checkout.HashSecret(retrieve.secret),
			SecretHint: retrieve.secret[len(retrieve.secret)-4:], CreatedAt: t0}
		if err := db.InTx(context.Background(), func(tx checkout.Tx) error { return tx.APIKeyInsert(context.Background(), k) }); err != nil {
			t.Fatal(err)
		}
		h.cacheClock.Advance(service.DefaultKeyCacheTTL)
		if r := h.do(retrieve); r.Status != http.StatusOK {
			t.Errorf("a key created after a miss, %v later: %d %s; want 200", service.DefaultKeyCacheTTL, r.Status, r.Body)
		}
	})
}

// A client (an address) that fails authentication 20 times in a minute is
// refused with 429 rate_limited and Retry-After, without a database read,
// until its budget refills on the service's clock (one attempt every 3 s);
// a key known to this node still gets in from that address; requests
// without credentials do not count.
func TestFailedAuthenticationLimit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h, cs := newCountingHarness(t, db, harnessOptions{authFailureLimit: 20})
		s := h.mustCreate(swordBody) // caches h.key
		retrieve := "/v1/stores/" + h.store.ID + "/checkouts/" + s.ID
		bad := func() request {
			return request{method: "GET", path: retrieve, secret: "ck_live_sk_" + checkout.NewSecret()}
		}
		for range 5 {
			wantError(t, h.do(request{method: "GET", path: retrieve}), http.StatusUnauthorized, "authentication_required")
		}
		for i := range 20 {
			if r := h.do(bad()); r.Status != http.StatusUnauthorized {
				t.Fatalf("failed attempt %d = %d %s; want 401", i+1, r.Status, r.Body)
			}
		}
		before := cs.keyReads.Load()
		for _, req := range []request{bad(), bad(), {method: "GET", path: retrieve, secret: "nonsense"},
			{method: "POST", path: "/v1/stores/" + h.store.ID + "/checkouts", secret: "ck_test_sk_" + checkout.NewSecret(), body: swordBody}} {
			r := h.do(req)
			wantPlainError(t, r, http.StatusTooManyRequests, "rate_limited")
			if got := r.Header.Get("Retry-After"); got != "3" {
				t.Errorf("Retry-After = %q; want 3", got)
			}
		}
		if got := cs.keyReads.Load() - before; got != 0 {
			t.Errorf("refused attempts cost %d key reads; want 0", got)
		}
		if r := h.get(s.ID); r.Status != http.StatusOK {
			t.Errorf("a cached key from the throttled address = %d %s; want 200", r.Status, r.Body)
		}
		wantError(t, h.do(request{method: "GET", path: retrieve}), http.StatusUnauthorized, "authentication_required")

		h.clock.Advance(2 * time.Second)
		r := h.do(bad())
		wantError(t, r, http.StatusTooManyRequests, "rate_limited")
		if got := r.Header.Get("Retry-After"); got != "1" {
			t.Errorf("Retry-After 2 s later = %q; want 1", got)
		}
		h.clock.Advance(time.Second)
		wantError(t, h.do(bad()), http.StatusUnauthorized, "invalid_api_key")
		wantError(t, h.do(bad()), http.StatusTooManyRequests, "rate_limited")

		h.clock.Advance(time.Minute)
		for i := range 20 {
			if r := h.do(bad()); r.Status != http.StatusUnauthorized {
				t.Fatalf("a minute later, failed attempt %d = %d %s; want 401", i+1, r.Status, r.Body)
			}
		}
		wantError(t, h.do(bad()), http.StatusTooManyRequests, "rate_limited")
	})
}

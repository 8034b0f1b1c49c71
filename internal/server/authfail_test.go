package server_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/api"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// countingStore counts the key lookups that reach the database.
type countingStore struct {
	checkout.Store
	keyReads   atomic.Int64
	indexReads atomic.Int64
	// indexDown makes the reads of the index of keys fail, as with the
	// database unreachable.
	indexDown atomic.Bool
}

func (s *countingStore) APIKeyEachActive(ctx context.Context, since time.Time, each func(string, checkout.KeyType, string)) error {
	s.indexReads.Add(1)
	if s.indexDown.Load() {
		return checkout.Errorf(checkout.EUnavailable, "The database is unreachable.")
	}
	return s.Store.APIKeyEachActive(ctx, since, each)
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
// refused with 429 rate_limited and Retry-After, without a read of the key,
// for every credential that cannot be valid, until its budget refills on the
// service's clock (one attempt every 3 s); requests without credentials do
// not count.
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
		if got, want := h.authFailures.Stats(), (api.FailureStats{Refused: 4}); got != want {
			t.Errorf("limiter's counts = %+v; want %+v", got, want)
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

// The limit never refuses a valid key (issue 27): after 30 unknown and
// malformed keys from one address, every valid key gets in from it, whether
// this node holds it in its cache, read it long ago, made it, or never heard
// of it (a key created on another node, or by the CLI, a moment ago). A
// revoked key never does. The made-up keys cost no key read, and the
// limiter counts what it refused and what it let through.
func TestFailedAuthenticationLimitAdmitsValidKeys(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h, cs := newCountingHarness(t, db, harnessOptions{authFailureLimit: 20})
		ctx := context.Background()
		s := h.mustCreate(swordBody) // caches h.key
		retrieve := func(secret string) request {
			return request{method: "GET", path: "/v1/stores/" + h.store.ID + "/checkouts/" + s.ID, secret: secret}
		}
		_, oldSecret := h.newKey(h.store.ID, checkout.ModeTest, checkout.PermCheckoutsRead)
		if r := h.do(retrieve(oldSecret)); r.Status != http.StatusOK { // read, then forgotten below
			t.Fatalf("a new key = %d %s", r.Status, r.Body)
		}
		revoked, revokedSecret := h.newKey(h.store.ID, checkout.ModeTest, checkout.PermCheckoutsRead)
		if _, err := h.svc.RevokeAPIKey(ctx, revoked.ID); err != nil {
			t.Fatal(err)
		}

		for i := range 30 {
			secret := "ck_test_sk_" + checkout.NewSecret()
			if i%2 == 1 {
				secret = "ck_test_sk_" + checkout.NewSecret()[:40] // malformed
			}
			r := h.do(retrieve(secret))
			if i < 20 {
				wantError(t, r, http.StatusUnauthorized, "invalid_api_key")
			} else {
				wantPlainError(t, r, http.StatusTooManyRequests, "rate_limited")
			}
		}
		keyReads := cs.keyReads.Load()

		// A key created on another node (straight into the database) after
		// this one first read its index of keys.
		elsewhere := "ck_test_sk_" + checkout.NewSecret()
		k := &checkout.APIKey{ID: checkout.NewAPIKeyID(), MerchantID: h.store.ID, Mode: checkout.ModeTest, Type: checkout.KeyBearer,
			Permissions: []checkout.Permission{checkout.PermCheckoutsRead}, SecretHash: checkout.HashSecret(elsewhere),
			SecretHint: elsewhere[len(elsewhere)-4:], CreatedAt: t0}
		if err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.APIKeyInsert(ctx, k) }); err != nil {
			t.Fatal(err)
		}
		_, fresh := h.newKey(h.store.ID, checkout.ModeTest, checkout.PermCheckoutsRead) // made here, never used
		if r := h.do(retrieve(h.secret)); r.Status != http.StatusOK {
			t.Errorf("a key cached as valid = %d %s; want 200", r.Status, r.Body)
		}
		h.cacheClock.Advance(service.MaxKeyCacheTTL) // nothing cached any more
		for name, secret := range map[string]string{"read before, no longer cached": oldSecret, "created on another node": elsewhere,
			"created on this node, never used": fresh, "the harness's, no longer cached": h.secret} {
			if r := h.do(retrieve(secret)); r.Status != http.StatusOK {
				t.Errorf("a valid key (%s) from the limited address = %d %s; want 200", name, r.Status, r.Body)
			}
		}
		if got, want := cs.keyReads.Load()-keyReads, int64(4); got != want {
			t.Errorf("the valid keys cost %d key reads; want %d, one each", got, want)
		}
		for range 2 {
			if r := h.do(retrieve(revokedSecret)); r.Status != http.StatusUnauthorized && r.Status != http.StatusTooManyRequests {
				t.Errorf("a revoked key from the limited address = %d %s; want 401 or 429", r.Status, r.Body)
			}
		}
		keyReads = cs.keyReads.Load()
		for range 10 {
			wantPlainError(t, h.do(retrieve("ck_test_sk_"+checkout.NewSecret())), http.StatusTooManyRequests, "rate_limited")
		}
		if got := cs.keyReads.Load() - keyReads; got != 0 {
			t.Errorf("10 made-up keys over the limit cost %d key reads; want 0", got)
		}
		if got := h.authFailures.Stats(); got.Admitted != 5 || got.Refused < 20 {
			t.Errorf("limiter's counts = %+v; want 5 admitted, at least 20 refused", got)
		}
	})
}

// However many made-up keys a limited client sends at once, the index of
// keys is read at most once every service.KeyIndexReadEvery (and once more
// for those that arrived during a read): the flood costs the database a
// bounded number of small reads, not one per key.
func TestFailedAuthenticationFloodReadsTheIndexRarely(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h, cs := newCountingHarness(t, db, harnessOptions{authFailureLimit: 20})
		retrieve := func(secret string) request {
			return request{method: "GET", path: "/v1/stores/" + h.store.ID + "/checkouts/cs_" + strings.Repeat("0", 64), secret: secret}
		}
		for range 20 {
			wantError(t, h.do(retrieve("ck_test_sk_"+checkout.NewSecret())), http.StatusUnauthorized, "invalid_api_key")
		}
		reqs := make([]request, 200)
		for i := range reqs {
			reqs[i] = retrieve("ck_test_sk_" + checkout.NewSecret())
		}
		before, start := cs.indexReads.Load(), time.Now()
		for _, r := range h.doAll(reqs) {
			wantPlainError(t, r, http.StatusTooManyRequests, "rate_limited")
		}
		elapsed := time.Since(start)
		reads := cs.indexReads.Load() - before
		if most := 2 + int64(elapsed/service.KeyIndexReadEvery); reads > most {
			t.Errorf("200 made-up keys at once over %v cost %d reads of the index; want at most %d", elapsed, reads, most)
		}
		t.Logf("200 made-up keys at once over %v: %d reads of the index, no key read", elapsed, reads)
	})
}

// When the index of keys cannot be read, a limited client's secret that
// neither a cache nor the index decides is answered 503 service_unavailable
// (with Retry-After), as any request that needs the database then is:
// neither let in nor called invalid. A key the node made is listed already.
// Once the database answers, the index is read and the limit works as
// before.
func TestFailedAuthenticationLimitIndexUnavailable(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h, cs := newCountingHarness(t, db, harnessOptions{authFailureLimit: 20})
		s := h.mustCreate(swordBody)
		retrieve := func(secret string) request {
			return request{method: "GET", path: "/v1/stores/" + h.store.ID + "/checkouts/" + s.ID, secret: secret}
		}
		for range 20 {
			wantError(t, h.do(retrieve("ck_test_sk_"+checkout.NewSecret())), http.StatusUnauthorized, "invalid_api_key")
		}
		h.cacheClock.Advance(service.MaxKeyCacheTTL)
		cs.indexDown.Store(true)
		r := h.do(retrieve("ck_test_sk_" + checkout.NewSecret()))
		wantPlainError(t, r, http.StatusServiceUnavailable, "service_unavailable")
		if r.Header.Get("Retry-After") == "" {
			t.Errorf("503 without Retry-After")
		}
		if r := h.do(retrieve(h.secret)); r.Status != http.StatusOK {
			t.Errorf("a key this node made, the index unreadable = %d %s; want 200 (the node listed it when it made it)", r.Status, r.Body)
		}
		wantPlainError(t, h.do(retrieve("nonsense")), http.StatusTooManyRequests, "rate_limited")
		cs.indexDown.Store(false)
		wantPlainError(t, h.do(retrieve("ck_test_sk_"+checkout.NewSecret())), http.StatusTooManyRequests, "rate_limited")
		if r := h.do(retrieve(h.secret)); r.Status != http.StatusOK {
			t.Errorf("a valid key once the database answers = %d %s; want 200", r.Status, r.Body)
		}
	})
}

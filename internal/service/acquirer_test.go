package service_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/pay/stripefake"
	"github.com/checkoutd/checkoutd/internal/pay/stripepay"
	"github.com/checkoutd/checkoutd/internal/seal"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// A Stripe account's keys, as the fake takes them; each hint is its last
// four characters.
const (
	stripeSecretKey      = "sk_live_51CheckoutdServiceTestKey000LIVE"
	stripeTestSecretKey  = "sk_test_51CheckoutdServiceTestKey000TEST"
	stripePublishableKey = "pk_live_51CheckoutdPublishableKey0000PUBL"
	stripeTestPublishKey = "pk_test_51CheckoutdPublishableKey0000PUBL"
	stripeWebhookSecret  = "whsec_Q2hlY2tvdXRkIHNlcnZpY2UgdGVzdHMhHSEC"
	stripeOtherSecret    = "whsec_QW5vdGhlciBlbmRwb2ludCdzIHNlY3JldA9OLD"
	stripeRolledKey      = "sk_live_51CheckoutdServiceTestKey00ROLLED"
)

// acquirerFixture is a fixture whose service connects to Stripe (a fake
// of it), as the operator at the command line. The fake's account has a
// webhook endpoint for the fixture's store, so a check gives no warning.
type acquirerFixture struct {
	*fixture
	fake *stripefake.Fake
	conn *stripepay.Connector
}

func newAcquirerFixture(t *testing.T, db *store.DB) *acquirerFixture {
	t.Helper()
	fake := stripefake.New(t, stripefake.Options{})
	f := &acquirerFixture{fixture: newFixture(t, db), fake: fake, conn: stripepay.New(stripepay.Config{URL: fake.URL})}
	f.svc = f.acquirerService(db, testSecretsKey)
	fake.AddEndpoint(stripefake.Endpoint{URL: f.svc.AcquirerWebhookURL(f.m.ID, "stripe")})
	return f
}

// acquirerService is another node with the secrets key k.
func (f *acquirerFixture) acquirerService(db *store.DB, k *seal.Key) *service.Service {
	return service.New(service.Config{Store: db, Now: f.clock.Now, CacheNow: f.cache.Now, BaseURL: "https://api.example/",
		CheckoutBaseURL: "https://pay.example", SecretsKey: k, Actor: operator, Acquirers: []pay.AcquirerConnector{f.conn}})
}

func goodAcquirerParams(storeID string) service.AcquirerAccountParams {
	return service.AcquirerAccountParams{MerchantID: storeID, Mode: checkout.ModeLive, Acquirer: "stripe",
		SecretKey: " " + stripeSecretKey + "\n", PublishableKey: stripePublishableKey, WebhookSecret: stripeWebhookSecret}
}

// noSecretIn fails if what (a row, an error, an entry: anything printed)
// holds a secret.
func noSecretIn(t *testing.T, name string, what any) {
	t.Helper()
	s := fmt.Sprintf("%+v", what)
	for _, secret := range []string{stripeSecretKey, stripeWebhookSecret, stripeOtherSecret, stripeTestSecretKey, "CheckoutdServiceTestKey"} {
		if strings.Contains(s, secret) {
			t.Errorf("%s holds the secret %q: %s", name, secret, s)
		}
	}
}

// accountReads counts the fake's answers to GET /v1/account: the
// checks of keys.
func accountReads(f *stripefake.Fake) int {
	n := 0
	for _, r := range f.Requests() {
		if r.Method == "GET" && r.Path == "/v1/account" {
			n++
		}
	}
	return n
}

// sameInfo reports whether a and b are alike, their times at the same
// instant.
func sameInfo(a, b *service.AcquirerAccountInfo) bool {
	if a == nil || b == nil || !a.SetAt.Equal(b.SetAt) {
		return false
	}
	x, y := *a, *b
	x.SetAt, y.SetAt = b.SetAt, b.SetAt
	return reflect.DeepEqual(x, y)
}

// A store's Stripe account is checked with the acquirer, then kept with
// its secrets sealed (the row holds no secret in the clear), shown with
// hints only, and opened again by storeAcquirer on any node with the secrets
// key, to the very keys entered.
func TestSetAcquirerAccount(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newAcquirerFixture(t, db)
		ctx := context.Background()
		if _, _, ok, err := f.svc.AcquirerFor(ctx, f.m.ID, checkout.ModeLive); ok || err != nil {
			t.Fatalf("AcquirerFor before any account = %v, %v; want none", ok, err)
		}
		info, err := f.svc.SetAcquirerAccount(ctx, goodAcquirerParams(f.m.ID))
		if err != nil {
			t.Fatalf("SetAcquirerAccount = %v", err)
		}
		want := &service.AcquirerAccountInfo{Acquirer: "stripe", Mode: checkout.ModeLive, AccountID: stripefake.AccountID,
			PublishableKey: stripePublishableKey, SecretKeyHint: "LIVE", WebhookSecretHint: "HSEC", SetBy: operator, SetAt: f.clock.Now(),
			WebhookURL: "https://api.example/webhooks/stripe/" + f.m.ID}
		if !sameInfo(info, want) {
			t.Errorf("SetAcquirerAccount = %+v; want %+v", info, want)
		}
		if got, err := f.svc.AcquirerAccountOf(ctx, f.m.ID, checkout.ModeLive, "stripe"); err != nil || !sameInfo(got, want) {
			t.Errorf("AcquirerAccountOf = %+v, %v; want %+v", got, err, want)
		}
		if n := accountReads(f.fake); n != 1 {
			t.Errorf("Stripe was asked for the account %d times; want once, by the check", n)
		}

		// At rest: sealed with the secrets key, for the row.
		row, err := db.AcquirerAccountGet(ctx, f.m.ID, checkout.ModeLive, "stripe")
		if err != nil {
			t.Fatal(err)
		}
		noSecretIn(t, "the stored row", row)
		if !strings.HasPrefix(row.SealedSecretKey, "v1."+testSecretsKey.ID()+".") || !strings.HasPrefix(row.SealedWebhookSecret, "v1."+testSecretsKey.ID()+".") {
			t.Errorf("stored row = %+v; want both secrets sealed with the secrets key %s", row, testSecretsKey.ID())
		}
		// A sealed secret key moved into the webhook secret's column does not
		// open.
		if _, err := testSecretsKey.Open(row.SealedSecretKey, checkout.AcquirerSealOwner(f.m.ID, checkout.ModeLive, "stripe", checkout.AcquirerWebhookSecret)); err == nil {
			t.Error("the sealed secret key opens as the webhook secret; want it bound to its column")
		}

		// Any node with the secrets key connects with the keys entered.
		for i, svc := range []*service.Service{f.svc, f.acquirerService(db, testSecretsKey)} {
			acq, conn, ok, err := svc.AcquirerFor(ctx, f.m.ID, checkout.ModeLive)
			if err != nil || !ok || conn != f.conn {
				t.Fatalf("node %d: AcquirerFor = %v, %v, %v", i, conn, ok, err)
			}
			if acq == nil {
				t.Fatalf("node %d: AcquirerFor gave no Acquirer", i)
			}
			wantCreds := pay.AcquirerCredentials{SecretKey: stripeSecretKey, PublishableKey: stripePublishableKey, WebhookSecret: stripeWebhookSecret}
			if got, err := svc.AcquirerCredentials(ctx, f.m.ID, checkout.ModeLive, "stripe"); err != nil || got != wantCreds {
				t.Errorf("node %d: the sealed credentials open to %+v, %v; want the keys entered", i, got, err)
			}
		}
		if _, _, ok, err := f.svc.AcquirerFor(ctx, f.m.ID, checkout.ModeTest); ok || err != nil {
			t.Errorf("AcquirerFor in test mode = %v, %v; want none", ok, err)
		}
		// Another secrets key cannot open them: an internal error whose
		// cause names the store and says so, never a secret.
		other, _ := seal.Generate()
		_, _, _, err = f.acquirerService(db, other).AcquirerFor(ctx, f.m.ID, checkout.ModeLive)
		if !checkout.IsCode(err, checkout.EInternal) || !errors.Is(err, seal.ErrOtherKey) || !strings.Contains(err.Error(), f.m.ID) {
			t.Errorf("AcquirerFor with another secrets key = %v; want internal_error naming the store, seal.ErrOtherKey", err)
		}
		noSecretIn(t, "the error", err)

		// Set again with a webhook endpoint of an old API version: replaced,
		// with the check's warning kept.
		f.clock.Advance(60e9)
		f.fake.AddEndpoint(stripefake.Endpoint{URL: f.svc.AcquirerWebhookURL(f.m.ID, "stripe"), APIVersion: "2024-06-20"})
		p := goodAcquirerParams(f.m.ID)
		p.WebhookSecret = stripeOtherSecret
		info, err = f.svc.SetAcquirerAccount(ctx, p)
		if err != nil || len(info.Warnings) != 1 || !strings.Contains(info.Warnings[0], "2024-06-20") || info.WebhookSecretHint != "9OLD" {
			t.Errorf("SetAcquirerAccount with an old endpoint = %+v, %v; want its warning and the new hint", info, err)
		}
		if got, _ := f.svc.AcquirerAccountOf(ctx, f.m.ID, checkout.ModeLive, "stripe"); !sameInfo(got, info) {
			t.Errorf("AcquirerAccountOf after a second set = %+v; want %+v", got, info)
		}

		// Removed: gone, and storeAcquirer has none.
		if err := f.svc.RemoveAcquirerAccount(ctx, f.m.ID, checkout.ModeLive, "stripe"); err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.AcquirerAccountOf(ctx, f.m.ID, checkout.ModeLive, "stripe"); !checkout.IsCode(err, checkout.ENotFound) {
			t.Errorf("AcquirerAccountOf after removal = %v; want not_found", err)
		}
		if _, _, ok, err := f.svc.AcquirerFor(ctx, f.m.ID, checkout.ModeLive); ok || err != nil {
			t.Errorf("AcquirerFor after removal = %v, %v; want none", ok, err)
		}
		if err := f.svc.RemoveAcquirerAccount(ctx, f.m.ID, checkout.ModeLive, "stripe"); !checkout.IsCode(err, checkout.ENotFound) {
			t.Errorf("RemoveAcquirerAccount again = %v; want not_found", err)
		}
	})
}

// Keys the check refuses, or that cannot be checked, are refused with an
// error naming the field (never repeating a secret), and nothing is kept:
// a store's account already set stays as it was.
func TestSetAcquirerAccountRefused(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newAcquirerFixture(t, db)
		ctx := context.Background()
		if _, err := f.svc.SetAcquirerAccount(ctx, goodAcquirerParams(f.m.ID)); err != nil {
			t.Fatal(err)
		}
		before, _ := db.AcquirerAccountGet(ctx, f.m.ID, checkout.ModeLive, "stripe")
		other := newFixture(t, db) // a store with no account
		f.fake.RevokeKey(stripeRolledKey)
		cases := []struct {
			name   string
			edit   func(p *service.AcquirerAccountParams)
			code   string
			params []string // the violations' fields
		}{
			{"a rolled secret key", func(p *service.AcquirerAccountParams) { p.SecretKey = stripeRolledKey }, checkout.EValidationFailed, []string{"secret_key"}},
			{"a key that is no key", func(p *service.AcquirerAccountParams) { p.SecretKey = "hunter2hunter2hunter2" }, checkout.EValidationFailed, []string{"secret_key"}},
			{"the publishable key for the secret", func(p *service.AcquirerAccountParams) { p.SecretKey = stripePublishableKey }, checkout.EValidationFailed, []string{"secret_key"}},
			{"a test-mode key", func(p *service.AcquirerAccountParams) { p.SecretKey = stripeTestSecretKey }, checkout.EValidationFailed, []string{"secret_key"}},
			{"a secret key for the publishable", func(p *service.AcquirerAccountParams) { p.PublishableKey = stripeSecretKey }, checkout.EValidationFailed, []string{"publishable_key"}},
			{"a wrong webhook secret", func(p *service.AcquirerAccountParams) { p.WebhookSecret = "whsec_short" }, checkout.EValidationFailed, []string{"webhook_secret"}},
			{"nothing", func(p *service.AcquirerAccountParams) { p.SecretKey, p.PublishableKey, p.WebhookSecret = " ", "", "" }, checkout.EValidationFailed,
				[]string{"secret_key", "publishable_key", "webhook_secret"}},
			{"test mode", func(p *service.AcquirerAccountParams) { p.Mode = checkout.ModeTest }, checkout.EValidationFailed, []string{"mode"}},
			{"another acquirer", func(p *service.AcquirerAccountParams) { p.Acquirer = "acme" }, checkout.EValidationFailed, []string{"acquirer"}},
		}
		for _, c := range cases {
			for _, storeID := range []string{f.m.ID, other.m.ID} {
				p := goodAcquirerParams(storeID)
				c.edit(&p)
				_, err := f.svc.SetAcquirerAccount(ctx, p)
				var ce *checkout.Error
				if !errors.As(err, &ce) || ce.Code != c.code {
					t.Errorf("%s: SetAcquirerAccount = %v; want %s", c.name, err, c.code)
					continue
				}
				var params []string
				for _, v := range ce.Details {
					params = append(params, v.Param)
				}
				if !reflect.DeepEqual(params, c.params) || ce.Param != c.params[0] {
					t.Errorf("%s: refused on %q (%v); want %v", c.name, ce.Param, params, c.params)
				}
				noSecretIn(t, c.name+"'s refusal", ce)
				if strings.Contains(fmt.Sprintf("%+v", ce), p.SecretKey) && strings.TrimSpace(p.SecretKey) != "" {
					t.Errorf("%s: the refusal repeats the secret key entered: %+v", c.name, ce)
				}
			}
		}
		f.fake.FailNext("/v1/account", http.StatusServiceUnavailable)
		_, err := f.svc.SetAcquirerAccount(ctx, goodAcquirerParams(other.m.ID))
		if !checkout.IsCode(err, checkout.EUnavailable) || !strings.Contains(checkout.ErrorMessage(err), "nothing was saved") {
			t.Errorf("SetAcquirerAccount with Stripe out of reach = %v; want service_unavailable, nothing saved", err)
		}

		// Nothing was kept: the first store's account is as it was, the
		// other has none, and nothing was recorded.
		if after, _ := db.AcquirerAccountGet(ctx, f.m.ID, checkout.ModeLive, "stripe"); !reflect.DeepEqual(after, before) {
			t.Errorf("after refusals, the account = %+v; want %+v", after, before)
		}
		if _, err := db.AcquirerAccountGet(ctx, other.m.ID, checkout.ModeLive, "stripe"); !checkout.IsCode(err, checkout.ENotFound) {
			t.Errorf("the other store's account = %v; want none", err)
		}
		for _, e := range allAudit(t, db, f.m.ID, other.m.ID) {
			if e.Action == checkout.AuditAcquirerSet && e.MerchantID == other.m.ID {
				t.Errorf("a refused set was recorded: %+v", e)
			}
		}

		// Without a secrets key: refused before the acquirer is asked, with
		// the HMAC keys' explanation.
		n := accountReads(f.fake)
		_, err = f.acquirerService(db, nil).SetAcquirerAccount(ctx, goodAcquirerParams(other.m.ID))
		var ce *checkout.Error
		if !errors.As(err, &ce) || ce.Param != "secret_key" || !strings.Contains(ce.Message, "--secrets-key or CHECKOUTD_SECRETS_KEY") {
			t.Errorf("SetAcquirerAccount without a secrets key = %v; want a refusal of secret_key saying how to set one", err)
		}
		if accountReads(f.fake) != n {
			t.Error("without a secrets key, the keys were still sent to the acquirer")
		}
		// Without an acquirer configured.
		bare := service.New(service.Config{Store: db, SecretsKey: testSecretsKey})
		if _, err := bare.SetAcquirerAccount(ctx, goodAcquirerParams(other.m.ID)); !checkout.IsCode(err, checkout.EValidationFailed) || !strings.Contains(checkout.ErrorMessage(err), "not configured") {
			t.Errorf("SetAcquirerAccount with no acquirer configured = %v; want a refusal saying so", err)
		}
	})
}

// Only an Administrator sets up or removes the acquirer; every member who
// may see the settings sees the account, but only an Administrator its
// secrets' hints.
func TestAcquirerAccountRoles(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newAcquirerFixture(t, db)
		ctx := context.Background()
		if _, err := f.svc.SetAcquirerAccount(ctx, goodAcquirerParams(f.m.ID)); err != nil {
			t.Fatal(err)
		}
		for _, role := range checkout.Roles {
			mctx := f.member(t, string(role)+"@example.com", role)
			_, err := f.svc.SetAcquirerAccount(mctx, goodAcquirerParams(f.m.ID))
			rerr := f.svc.RemoveAcquirerAccount(mctx, f.m.ID, checkout.ModeLive, "nope")
			info, gerr := f.svc.AcquirerAccountOf(mctx, f.m.ID, checkout.ModeLive, "stripe")
			if gerr != nil {
				t.Errorf("%s: AcquirerAccountOf = %v", role, gerr)
				continue
			}
			if role == checkout.RoleAdministrator {
				if err != nil || !checkout.IsCode(rerr, checkout.ENotFound) || info.SecretKeyHint != "LIVE" {
					t.Errorf("administrator: set %v, remove %v, hint %q; want allowed, with hints", err, rerr, info.SecretKeyHint)
				}
				continue
			}
			if !checkout.IsCode(err, checkout.EPermissionDenied) || !checkout.IsCode(rerr, checkout.EPermissionDenied) {
				t.Errorf("%s: SetAcquirerAccount = %v, RemoveAcquirerAccount = %v; want permission_denied", role, err, rerr)
			}
			if info.SecretKeyHint != "" || info.WebhookSecretHint != "" || info.AccountID == "" {
				t.Errorf("%s: AcquirerAccountOf = %+v; want the account without hints", role, info)
			}
		}
		stranger := f.member(t, "stranger@example.com", "")
		if _, err := f.svc.AcquirerAccountOf(stranger, f.m.ID, checkout.ModeLive, "stripe"); !checkout.IsCode(err, checkout.EStoreNotFound) {
			t.Errorf("AcquirerAccountOf by no member = %v; want store_not_found", err)
		}
	})
}

// Rotating the secrets key seals the acquirer accounts' secrets again with
// it: after it the new key alone opens them, to the same keys; with an
// account the given keys cannot open, nothing changes.
func TestResealAcquirerSecrets(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newAcquirerFixture(t, db)
		ctx := context.Background()
		if _, err := f.svc.SetAcquirerAccount(ctx, goodAcquirerParams(f.m.ID)); err != nil {
			t.Fatal(err)
		}
		k, _ := f.newKey(t, checkout.ModeTest, checkout.KeyHMAC)
		next, _ := seal.Generate()
		n, err := f.svc.ResealSecrets(ctx, next)
		if err != nil || n != 3 {
			t.Fatalf("ResealSecrets = %d, %v; want 3 (an HMAC key and an account's two secrets)", n, err)
		}
		row, _ := db.AcquirerAccountGet(ctx, f.m.ID, checkout.ModeLive, "stripe")
		if !strings.HasPrefix(row.SealedSecretKey, "v1."+next.ID()+".") || !strings.HasPrefix(row.SealedWebhookSecret, "v1."+next.ID()+".") || row.SecretKeyHint != "LIVE" {
			t.Errorf("after ResealSecrets, the row = %+v; want both secrets sealed with %s, the hints kept", row, next.ID())
		}
		nextNode := f.acquirerService(db, next)
		if _, _, ok, err := nextNode.AcquirerFor(ctx, f.m.ID, checkout.ModeLive); err != nil || !ok {
			t.Errorf("AcquirerFor with the new key = %v, %v; want the account", ok, err)
		}
		if c, err := nextNode.AcquirerCredentials(ctx, f.m.ID, checkout.ModeLive, "stripe"); err != nil || c.SecretKey != stripeSecretKey || c.WebhookSecret != stripeWebhookSecret {
			t.Errorf("the new key opens the credentials to %+v, %v; want the keys entered", c, err)
		}
		if _, _, _, err := f.svc.AcquirerFor(ctx, f.m.ID, checkout.ModeLive); !errors.Is(err, seal.ErrOtherKey) {
			t.Errorf("AcquirerFor with the old key = %v; want seal.ErrOtherKey", err)
		}

		// An account sealed with a third key: nothing changes, and the
		// error names the store.
		third, _ := seal.Generate()
		other := newFixture(t, db)
		if _, err := f.acquirerService(db, third).SetAcquirerAccount(ctx, goodAcquirerParams(other.m.ID)); err != nil {
			t.Fatal(err)
		}
		beforeKey, _ := db.APIKeyGet(ctx, k.ID)
		final, _ := seal.Generate()
		_, err = f.acquirerService(db, next).ResealSecrets(ctx, final)
		if err == nil || !strings.Contains(err.Error(), other.m.ID) || !strings.Contains(err.Error(), "nothing was changed") {
			t.Errorf("ResealSecrets with an account it cannot open = %v; want an error naming %s, nothing changed", err, other.m.ID)
		}
		noSecretIn(t, "the error", err)
		if after, _ := db.APIKeyGet(ctx, k.ID); after.SealedSecret != beforeKey.SealedSecret {
			t.Error("a failed ResealSecrets changed an HMAC key's sealed secret")
		}
		if after, _ := db.AcquirerAccountGet(ctx, f.m.ID, checkout.ModeLive, "stripe"); after.SealedSecretKey != row.SealedSecretKey {
			t.Error("a failed ResealSecrets changed an account's sealed secret")
		}
	})
}

// Test-mode keys stand in for live ones only when the connector accepts
// them (an operator's switch, for a merchant's manual checklist): then
// they are kept with a warning that says so.
func TestSetAcquirerAccountTestKeys(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newAcquirerFixture(t, db)
		f.conn = stripepay.New(stripepay.Config{URL: f.fake.URL, AllowTestKeys: true})
		f.svc = f.acquirerService(db, testSecretsKey)
		p := goodAcquirerParams(f.m.ID)
		p.SecretKey, p.PublishableKey = stripeTestSecretKey, stripeTestPublishKey
		info, err := f.svc.SetAcquirerAccount(context.Background(), p)
		if err != nil || len(info.Warnings) != 1 || !strings.Contains(info.Warnings[0], "test-mode keys") || info.SecretKeyHint != "TEST" {
			t.Errorf("SetAcquirerAccount with test keys allowed = %+v, %v; want them kept with a warning", info, err)
		}
	})
}

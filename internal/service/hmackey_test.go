package service_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/httpsig"
	"github.com/checkoutd/checkoutd/internal/seal"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// An HMAC key's secret is stored sealed, never in the clear, and opens again,
// on any node with the same secrets key, to exactly the secret shown once.
func TestCreateHMACKeySealsSecret(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		k, secret := f.newKey(t, checkout.ModeLive, checkout.KeyHMAC)
		if !strings.HasPrefix(secret, "ck_live_hk_") || len(secret) != len("ck_live_hk_")+86 {
			t.Fatalf("HMAC secret = %q; want ck_live_hk_ and 86 characters", secret)
		}
		stored, err := db.APIKeyGet(ctx, k.ID)
		if err != nil {
			t.Fatal(err)
		}
		body := secret[len("ck_live_hk_"):]
		if stored.SealedSecret == "" || strings.Contains(stored.SealedSecret, body) || strings.Contains(stored.SealedSecret, body[:16]) {
			t.Errorf("stored SealedSecret = %q; want the secret sealed, not in the clear", stored.SealedSecret)
		}
		if !strings.HasPrefix(stored.SealedSecret, "v1."+testSecretsKey.ID()+".") {
			t.Errorf("stored SealedSecret = %q; want it to name the secrets key %s", stored.SealedSecret, testSecretsKey.ID())
		}
		if stored.SecretHash != checkout.HashSecret(secret) {
			t.Errorf("stored SecretHash = %q; want the secret's hash, as for every key", stored.SecretHash)
		}
		for i, svc := range []*service.Service{f.svc, f.newService(db)} {
			if got, err := svc.HMACSecret(stored); err != nil || got != secret {
				t.Errorf("node %d: HMACSecret = %q, %v; want the secret shown at creation", i, got, err)
			}
		}
		// A bearer key keeps only its hash.
		if bearer, err := db.APIKeyGet(ctx, f.key.ID); err != nil || bearer.SealedSecret != "" {
			t.Errorf("bearer key = %+v, %v; want no sealed secret", bearer, err)
		}
	})
}

// Without a secrets key the server refuses to make an HMAC key, saying what
// the operator must set, and stores nothing: a signing secret is never kept
// in the clear. Bearer keys need no secrets key.
func TestCreateHMACKeyWithoutSecretsKey(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		bare := service.New(service.Config{Store: db, Now: f.clock.Now, CacheNow: f.cache.Now})
		p := checkout.APIKeyParams{MerchantID: f.m.ID, Mode: checkout.ModeTest, Type: checkout.KeyHMAC,
			Permissions: []checkout.Permission{checkout.PermCheckoutsWrite}}
		k, secret, err := bare.CreateAPIKey(ctx, p)
		var e *checkout.Error
		if !errors.As(err, &e) || e.Code != checkout.EValidationFailed || e.Param != "type" || k != nil || secret != "" {
			t.Fatalf("CreateAPIKey(hmac) without a secrets key = %v, %q, %v; want validation_failed on type", k, secret, err)
		}
		if !strings.Contains(e.Message, "--secrets-key") || !strings.Contains(e.Message, "CHECKOUTD_SECRETS_KEY") {
			t.Errorf("message = %q; want it to name --secrets-key and CHECKOUTD_SECRETS_KEY", e.Message)
		}
		if ks, err := db.APIKeyList(ctx, f.m.ID); err != nil || len(ks) != 1 {
			t.Errorf("keys after the refusal = %d, %v; want only the fixture's bearer key", len(ks), err)
		}
		p.Type = checkout.KeyBearer
		if _, _, err := bare.CreateAPIKey(ctx, p); err != nil {
			t.Errorf("CreateAPIKey(bearer) without a secrets key = %v; want it made", err)
		}
	})
}

// A secret that cannot be opened fails with internal_error, whose cause
// tells the operator why (no secrets key, another one, a moved or altered
// value) and never holds the secret.
func TestHMACSecretFails(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		k, secret := f.newKey(t, checkout.ModeTest, checkout.KeyHMAC)
		stored, err := db.APIKeyGet(ctx, k.ID)
		if err != nil {
			t.Fatal(err)
		}
		other, _ := f.newKey(t, checkout.ModeTest, checkout.KeyHMAC)
		moved := *stored
		moved.SealedSecret = other.SealedSecret // another key's sealed secret on this row
		altered := *stored
		altered.SealedSecret = stored.SealedSecret[:len(stored.SealedSecret)-3] + "AAA"
		anotherKey, _ := seal.NewKey([]byte("another secrets key of 32 bytes!"))
		tests := []struct {
			name string
			svc  *service.Service
			k    *checkout.APIKey
			want string
		}{
			{"no secrets key", service.New(service.Config{Store: db}), stored, "no secrets key"},
			{"another secrets key", service.New(service.Config{Store: db, SecretsKey: anotherKey}), stored, "sealed with another secrets key"},
			{"moved from another key", f.svc, &moved, "moved from another row"},
			{"altered", f.svc, &altered, "altered"},
			{"a bearer key", f.svc, f.key, "not an HMAC key"},
		}
		for _, tt := range tests {
			got, err := tt.svc.HMACSecret(tt.k)
			if !checkout.IsCode(err, checkout.EInternal) || got != "" {
				t.Errorf("%s: HMACSecret = %q, %v; want internal_error", tt.name, got, err)
				continue
			}
			if msg := err.Error(); !strings.Contains(msg, tt.want) || !strings.Contains(msg, tt.k.ID) || strings.Contains(msg, secret) {
				t.Errorf("%s: error = %q; want it to say %q and the key's id, without the secret", tt.name, msg, tt.want)
			}
			if checkout.ErrorMessage(err) != "An internal error occurred." {
				t.Errorf("%s: message = %q; want the generic one: the cause is for the log", tt.name, checkout.ErrorMessage(err))
			}
		}
		_, err = tests[1].svc.HMACSecret(stored)
		if !errors.Is(err, seal.ErrOtherKey) || !strings.Contains(err.Error(), anotherKey.ID()) || !strings.Contains(err.Error(), testSecretsKey.ID()) {
			t.Errorf("HMACSecret with another secrets key = %v; want seal.ErrOtherKey naming both keys' ids", err)
		}
	})
}

// The purge deletes the signature nonces whose window has passed, and only
// those: a nonce still in its window is still refused.
func TestPurgeSignatureNonces(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		now := f.clock.Now()
		for _, u := range []struct {
			nonce   string
			expires time.Time
		}{{"gone", now.Add(-time.Millisecond)}, {"kept", now}} {
			if fresh, err := db.SignatureNonceUse(ctx, "key_a", u.nonce, now.Add(-time.Minute), u.expires); err != nil || !fresh {
				t.Fatalf("SignatureNonceUse(%s) = %v, %v", u.nonce, fresh, err)
			}
		}
		if res, err := f.svc.Purge(ctx); err != nil || res != (service.PurgeResult{SignatureNonces: 1}) {
			t.Errorf("Purge = %+v, %v; want one nonce", res, err)
		}
		if fresh, err := db.SignatureNonceUse(ctx, "key_a", "kept", now.Add(-time.Millisecond), now); err != nil || fresh {
			t.Errorf("the nonce in its window after the purge = fresh %v, %v; want kept", fresh, err)
		}
	})
}

// A signed request that the server cannot check for want of the right
// secrets key is internal_error, its cause (for the log) saying so, and no
// nonce is spent.
func TestAuthenticateSignedWithoutTheSecretsKey(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		k, secret := f.newKey(t, checkout.ModeTest, checkout.KeyHMAC)
		u, _ := url.Parse("/v1/stores/" + f.m.ID + "/checkouts/cs_x")
		r := httpsig.Request{Method: "GET", BaseURL: "https://api.example", URL: u, Header: http.Header{}}
		in, sig, err := httpsig.Sign(r, k.ID, secret, "nonce-1", f.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		r.Header.Set("Signature-Input", in)
		r.Header.Set("Signature", sig)
		anotherKey, _ := seal.NewKey([]byte("another secrets key of 32 bytes!"))
		for name, key := range map[string]*seal.Key{"no secrets key": nil, "another secrets key": anotherKey} {
			svc := service.New(service.Config{Store: db, Now: f.clock.Now, BaseURL: "https://api.example", SecretsKey: key})
			got, err := svc.AuthenticateSigned(context.Background(), r)
			if !checkout.IsCode(err, checkout.EInternal) || got != nil || !strings.Contains(err.Error(), "secrets key") {
				t.Errorf("%s: AuthenticateSigned = %v, %v; want internal_error about the secrets key", name, got, err)
			}
		}
		svc := service.New(service.Config{Store: db, Now: f.clock.Now, BaseURL: "https://api.example", SecretsKey: testSecretsKey})
		if got, err := svc.AuthenticateSigned(context.Background(), r); err != nil || got.ID != k.ID {
			t.Errorf("AuthenticateSigned with the secrets key = %v, %v; want the key (no nonce spent before)", got, err)
		}
	})
}

// ResealSecrets seals every HMAC secret, revoked keys' too, again with a new
// key in one transaction: after it the new key alone opens each to the same
// secret, and the old one none. With a key that opens only some (a secret
// sealed with a third key), nothing changes at all.
func TestResealSecrets(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		k1, s1 := f.newKey(t, checkout.ModeTest, checkout.KeyHMAC)
		k2, s2 := f.newKey(t, checkout.ModeLive, checkout.KeyHMAC)
		f.newKey(t, checkout.ModeTest, checkout.KeyBearer)
		if _, err := f.svc.RevokeAPIKey(ctx, k2.ID); err != nil {
			t.Fatal(err)
		}
		next, _ := seal.Generate()
		n, err := f.svc.ResealSecrets(ctx, next)
		if err != nil || n != 2 {
			t.Fatalf("ResealSecrets = %d, %v; want 2", n, err)
		}
		for k, secret := range map[string]string{k1.ID: s1, k2.ID: s2} {
			stored, err := db.APIKeyGet(ctx, k)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := next.Open(stored.SealedSecret, k); err != nil || got != secret {
				t.Errorf("the new key opens %s to %q, %v; want its secret", k, got, err)
			}
			if _, err := testSecretsKey.Open(stored.SealedSecret, k); !errors.Is(err, seal.ErrOtherKey) {
				t.Errorf("the old key still opens %s: %v", k, err)
			}
		}

		// A service whose keys open k1 but not a secret sealed with a third
		// key changes nothing.
		third, _ := seal.Generate()
		stranger, _ := f.newKey(t, checkout.ModeTest, checkout.KeyBearer)
		if err := db.InTx(ctx, func(tx checkout.Tx) error {
			return tx.APIKeySetSealed(ctx, stranger.ID, third.Seal("ck_test_hk_x", stranger.ID))
		}); err != nil {
			t.Fatal(err)
		}
		before, _ := db.APIKeyGet(ctx, k1.ID)
		svc := service.New(service.Config{Store: db, SecretsKey: next})
		final, _ := seal.Generate()
		if _, err := svc.ResealSecrets(ctx, final); err == nil || !strings.Contains(err.Error(), stranger.ID) || !strings.Contains(err.Error(), "nothing was changed") {
			t.Errorf("ResealSecrets with a secret it cannot open = %v; want an error naming %s, nothing changed", err, stranger.ID)
		}
		if after, _ := db.APIKeyGet(ctx, k1.ID); after.SealedSecret != before.SealedSecret {
			t.Errorf("a failed ResealSecrets changed %s's sealed secret", k1.ID)
		}
		if _, err := service.New(service.Config{Store: db}).ResealSecrets(ctx, final); err == nil {
			t.Errorf("ResealSecrets without a secrets key = nil; want an error")
		}
	})
}

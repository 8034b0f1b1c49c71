package service_test

import (
	"context"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// slowKeyRead is a store whose key reads take long: while one is under way
// the key is revoked (by another node), and the read returns the key as it
// was when it began.
type slowKeyRead struct {
	checkout.Store
	onRead func()
}

func (s slowKeyRead) APIKeyGetByHash(ctx context.Context, hash string) (*checkout.APIKey, error) {
	k, err := s.Store.APIKeyGetByHash(ctx, hash)
	s.onRead()
	return k, err
}

// A revoked key stops working within the cache TTL of the start of the read
// that cached it, however long that read took (DESIGN.md 2: within 5 s).
func TestAuthenticateRevokedDuringSlowRead(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		node := service.New(service.Config{
			Store: slowKeyRead{db, func() {
				if _, err := f.svc.RevokeAPIKey(ctx, f.key.ID); err != nil {
					t.Error(err)
				}
				f.cache.Advance(4 * time.Second) // the read took 4 s
			}},
			Now: f.clock.Now, CacheNow: f.cache.Now,
		})
		if _, err := node.Authenticate(ctx, f.secret); err != nil {
			t.Fatalf("Authenticate = %v; the read saw the key before it was revoked", err)
		}
		// 4.5 s after the revocation, 0.5 s after the read returned: the
		// entry (2 s TTL) counts from the read's start and has run out.
		f.cache.Advance(500 * time.Millisecond)
		if _, err := node.Authenticate(ctx, f.secret); !checkout.IsCode(err, checkout.EInvalidAPIKey) {
			t.Errorf("Authenticate 4.5 s after revocation = %v; want invalid_api_key", err)
		}
	})
}

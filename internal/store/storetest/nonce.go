package storetest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/internal/store"
)

// useNonce calls SignatureNonceUse and fails the test on an error.
func useNonce(t *testing.T, db *store.DB, key, nonce string, now, expires time.Time) bool {
	t.Helper()
	fresh, err := db.SignatureNonceUse(context.Background(), key, nonce, now, expires)
	if err != nil {
		t.Fatalf("SignatureNonceUse(%s, %s) = %v", key, nonce, err)
	}
	return fresh
}

// A nonce is fresh once per key until it expires; another key's is its
// own; an expired one the purge has not reached is fresh again.
func testSignatureNonceUse(t *testing.T, db *store.DB) {
	expires := base.Add(5 * time.Minute)
	steps := []struct {
		what, key, nonce string
		now              time.Time
		want             bool
	}{
		{"first use", "key_a", "n1", base, true},
		{"again", "key_a", "n1", base.Add(time.Second), false},
		{"again, the last millisecond", "key_a", "n1", expires.Add(-time.Millisecond), false},
		{"another key, the same nonce", "key_b", "n1", base, true},
		{"another nonce", "key_a", "n2", base, true},
		{"expired, not purged", "key_a", "n1", expires, true},
	}
	for _, s := range steps {
		if got := useNonce(t, db, s.key, s.nonce, s.now, expires); got != s.want {
			t.Errorf("%s: SignatureNonceUse(%s, %s) at %v = %v; want %v", s.what, s.key, s.nonce, s.now.Sub(base), got, s.want)
		}
	}
	// Taken over, the nonce lives until its new expiry.
	later := expires.Add(5 * time.Minute)
	if !useNonce(t, db, "key_a", "n3", expires, later) || useNonce(t, db, "key_a", "n3", later.Add(-time.Second), later) {
		t.Errorf("a nonce used again after its expiry is not remembered until its new one")
	}
}

// Many uses of one nonce at once: exactly one is fresh, however the
// database orders them (on PostgreSQL, over several connections).
func testSignatureNonceConcurrent(t *testing.T, db *store.DB) {
	const n = 16
	for round := range 3 {
		nonce := fmt.Sprintf("nonce-%d", round)
		var fresh atomic.Int32
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for range n {
			wg.Go(func() {
				ok, err := db.SignatureNonceUse(context.Background(), "key_a", nonce, base, base.Add(5*time.Minute))
				if err != nil {
					errs <- err
					return
				}
				if ok {
					fresh.Add(1)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("SignatureNonceUse at once = %v", err)
		}
		if got := fresh.Load(); got != 1 {
			t.Errorf("round %d: %d of %d uses of one nonce at once were fresh; want exactly 1", round, got, n)
		}
	}
}

// The purge deletes the nonces expired before its time, only them.
func testSignatureNoncePurge(t *testing.T, db *store.DB) {
	ctx := context.Background()
	for i := range 5 {
		useNonce(t, db, "key_a", fmt.Sprintf("n%d", i), base, base.Add(time.Duration(i)*time.Minute))
	}
	n, err := db.SignatureNoncePurge(ctx, base.Add(2*time.Minute))
	if err != nil || n != 2 {
		t.Errorf("SignatureNoncePurge = %d, %v; want 2 (n0 and n1)", n, err)
	}
	// What is left is still remembered, at a time before its expiry.
	for i := 2; i < 5; i++ {
		if useNonce(t, db, "key_a", fmt.Sprintf("n%d", i), base, base.Add(time.Hour)) {
			t.Errorf("n%d was fresh after the purge; want it kept", i)
		}
	}
	if n, err := db.SignatureNoncePurge(ctx, base.Add(2*time.Minute)); err != nil || n != 0 {
		t.Errorf("SignatureNoncePurge again = %d, %v; want 0", n, err)
	}
}

package storetest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
)

// dashboardTests are the conformance tests of dashboard sessions and setup
// tokens.
var dashboardTests = []struct {
	name string
	fn   func(t *testing.T, db *store.DB)
}{
	{"Account/Exist", testAccountsExist},
	{"DashboardSession/Lifecycle", testDashboardSessionLifecycle},
	{"DashboardSession/Conflict", testDashboardSessionConflict},
	{"SetupToken/RoundTrip", testSetupTokenRoundTrip},
	{"SetupToken/UseOnce", testSetupTokenUseOnce},
	{"SetupToken/Expired", testSetupTokenExpired},
	{"Dashboard/Purge", testDashboardPurge},
}

// hashOf stands for the hash of a random token.
func hashOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func testAccountsExist(t *testing.T, db *store.DB) {
	ctx := context.Background()
	if ok, err := db.AccountsExist(ctx); ok || err != nil {
		t.Errorf("AccountsExist(empty) = %v, %v; want false", ok, err)
	}
	newAccount(t, db, "ann@example.com", base)
	newAccount(t, db, "bob@example.com", base)
	if ok, err := db.AccountsExist(ctx); !ok || err != nil {
		t.Errorf("AccountsExist = %v, %v; want true", ok, err)
	}
}

func testDashboardSessionLifecycle(t *testing.T, db *store.DB) {
	ctx := context.Background()
	a := newAccount(t, db, "ann@example.com", base)
	want := &checkout.DashboardSession{ID: hashOf("one"), AccountID: a.ID, CreatedAt: base, LastSeenAt: base, ExpiresAt: base.Add(12 * time.Hour)}
	other := &checkout.DashboardSession{ID: hashOf("two"), AccountID: a.ID, CreatedAt: base, LastSeenAt: base, ExpiresAt: base.Add(12 * time.Hour)}
	inTx(t, db, func(tx checkout.Tx) error {
		if err := tx.DashboardSessionInsert(ctx, want); err != nil {
			return err
		}
		return tx.DashboardSessionInsert(ctx, other)
	})
	got, err := db.DashboardSessionGet(ctx, want.ID)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("DashboardSessionGet = %+v, %v; want %+v", got, err, want)
	}

	seen := base.Add(90 * time.Second)
	inTx(t, db, func(tx checkout.Tx) error { return tx.DashboardSessionTouch(ctx, want.ID, seen) })
	got, err = db.DashboardSessionGet(ctx, want.ID)
	if err != nil || !got.LastSeenAt.Equal(seen) || !got.CreatedAt.Equal(base) || !got.ExpiresAt.Equal(want.ExpiresAt) {
		t.Errorf("after DashboardSessionTouch = %+v, %v; want last seen %v, the rest unchanged", got, err, seen)
	}

	inTx(t, db, func(tx checkout.Tx) error { return tx.DashboardSessionDelete(ctx, want.ID) })
	_, err = db.DashboardSessionGet(ctx, want.ID)
	wantCode(t, "DashboardSessionGet(deleted)", err, checkout.ENotFound)
	if _, err := db.DashboardSessionGet(ctx, other.ID); err != nil {
		t.Errorf("DashboardSessionGet(the other session) = %v; want it untouched", err)
	}
	// Deleting again succeeds; touching a deleted session does not.
	inTx(t, db, func(tx checkout.Tx) error { return tx.DashboardSessionDelete(ctx, want.ID) })
	err = db.InTx(ctx, func(tx checkout.Tx) error { return tx.DashboardSessionTouch(ctx, want.ID, seen) })
	wantCode(t, "DashboardSessionTouch(deleted)", err, checkout.ENotFound)
}

func testDashboardSessionConflict(t *testing.T, db *store.DB) {
	ctx := context.Background()
	a := newAccount(t, db, "ann@example.com", base)
	ds := &checkout.DashboardSession{ID: hashOf("one"), AccountID: a.ID, CreatedAt: base, LastSeenAt: base, ExpiresAt: base.Add(time.Hour)}
	inTx(t, db, func(tx checkout.Tx) error { return tx.DashboardSessionInsert(ctx, ds) })
	err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.DashboardSessionInsert(ctx, ds) })
	wantCode(t, "DashboardSessionInsert(taken id)", err, checkout.EConflict)
}

func testSetupTokenRoundTrip(t *testing.T, db *store.DB) {
	ctx := context.Background()
	_, err := db.SetupTokenGet(ctx, hashOf("none"))
	wantCode(t, "SetupTokenGet(unknown)", err, checkout.ENotFound)

	want := &checkout.SetupToken{Hash: hashOf("one"), CreatedAt: base, ExpiresAt: base.Add(24 * time.Hour)}
	inTx(t, db, func(tx checkout.Tx) error { return tx.SetupTokenInsert(ctx, want) })
	got, err := db.SetupTokenGet(ctx, want.Hash)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("SetupTokenGet = %+v, %v; want %+v", got, err, want)
	}
	err = db.InTx(ctx, func(tx checkout.Tx) error { return tx.SetupTokenInsert(ctx, want) })
	wantCode(t, "SetupTokenInsert(taken hash)", err, checkout.EConflict)
}

func testSetupTokenUseOnce(t *testing.T, db *store.DB) {
	ctx := context.Background()
	st := &checkout.SetupToken{Hash: hashOf("one"), CreatedAt: base, ExpiresAt: base.Add(24 * time.Hour)}
	inTx(t, db, func(tx checkout.Tx) error { return tx.SetupTokenInsert(ctx, st) })

	// Two uses at once: one wins.
	at := base.Add(time.Hour)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Go(func() {
			errs[i] = db.InTx(ctx, func(tx checkout.Tx) error { return tx.SetupTokenUse(ctx, st.Hash, at) })
		})
	}
	wg.Wait()
	if (errs[0] == nil) == (errs[1] == nil) {
		t.Fatalf("two SetupTokenUse = %v, %v; want one success and one not_found", errs[0], errs[1])
	}
	for _, err := range errs {
		if err != nil {
			wantCode(t, "SetupTokenUse(used)", err, checkout.ENotFound)
		}
	}
	got, err := db.SetupTokenGet(ctx, st.Hash)
	if err != nil || got.UsedAt == nil || !got.UsedAt.Equal(at) {
		t.Errorf("SetupTokenGet after use = %+v, %v; want used at %v", got, err, at)
	}

	// A use rolled back leaves the token usable.
	other := &checkout.SetupToken{Hash: hashOf("two"), CreatedAt: base, ExpiresAt: base.Add(24 * time.Hour)}
	inTx(t, db, func(tx checkout.Tx) error { return tx.SetupTokenInsert(ctx, other) })
	err = db.InTx(ctx, func(tx checkout.Tx) error {
		if err := tx.SetupTokenUse(ctx, other.Hash, at); err != nil {
			return err
		}
		return checkout.Errorf(checkout.EConflict, "rolled back")
	})
	wantCode(t, "InTx(use, then fail)", err, checkout.EConflict)
	inTx(t, db, func(tx checkout.Tx) error { return tx.SetupTokenUse(ctx, other.Hash, at) })

	err = db.InTx(ctx, func(tx checkout.Tx) error { return tx.SetupTokenUse(ctx, hashOf("unknown"), at) })
	wantCode(t, "SetupTokenUse(unknown)", err, checkout.ENotFound)
}

func testSetupTokenExpired(t *testing.T, db *store.DB) {
	ctx := context.Background()
	st := &checkout.SetupToken{Hash: hashOf("one"), CreatedAt: base, ExpiresAt: base.Add(24 * time.Hour)}
	inTx(t, db, func(tx checkout.Tx) error { return tx.SetupTokenInsert(ctx, st) })
	err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.SetupTokenUse(ctx, st.Hash, st.ExpiresAt) })
	wantCode(t, "SetupTokenUse(at its expiry)", err, checkout.ENotFound)
	inTx(t, db, func(tx checkout.Tx) error { return tx.SetupTokenUse(ctx, st.Hash, st.ExpiresAt.Add(-time.Second)) })
}

func testDashboardPurge(t *testing.T, db *store.DB) {
	ctx := context.Background()
	a := newAccount(t, db, "ann@example.com", base)
	inTx(t, db, func(tx checkout.Tx) error {
		for i, exp := range []time.Duration{time.Hour, 2 * time.Hour} {
			ds := &checkout.DashboardSession{ID: hashOf("s" + string(rune('0'+i))), AccountID: a.ID, CreatedAt: base, LastSeenAt: base, ExpiresAt: base.Add(exp)}
			if err := tx.DashboardSessionInsert(ctx, ds); err != nil {
				return err
			}
			st := &checkout.SetupToken{Hash: hashOf("t" + string(rune('0'+i))), CreatedAt: base, ExpiresAt: base.Add(exp)}
			if err := tx.SetupTokenInsert(ctx, st); err != nil {
				return err
			}
		}
		return nil
	})
	// Expired at exactly t: kept (the service no longer accepts it; the
	// next purge takes it).
	if n, err := db.DashboardSessionPurge(ctx, base.Add(time.Hour)); n != 0 || err != nil {
		t.Errorf("DashboardSessionPurge(at the first expiry) = %d, %v; want 0", n, err)
	}
	if n, err := db.DashboardSessionPurge(ctx, base.Add(time.Hour+time.Second)); n != 1 || err != nil {
		t.Errorf("DashboardSessionPurge = %d, %v; want 1", n, err)
	}
	if n, err := db.SetupTokenPurge(ctx, base.Add(time.Hour+time.Second)); n != 1 || err != nil {
		t.Errorf("SetupTokenPurge = %d, %v; want 1", n, err)
	}
	_, err := db.DashboardSessionGet(ctx, hashOf("s0"))
	wantCode(t, "DashboardSessionGet(purged)", err, checkout.ENotFound)
	_, err = db.SetupTokenGet(ctx, hashOf("t0"))
	wantCode(t, "SetupTokenGet(purged)", err, checkout.ENotFound)
	if _, err := db.DashboardSessionGet(ctx, hashOf("s1")); err != nil {
		t.Errorf("a live session was purged: %v", err)
	}
	if _, err := db.SetupTokenGet(ctx, hashOf("t1")); err != nil {
		t.Errorf("a live setup token was purged: %v", err)
	}
}

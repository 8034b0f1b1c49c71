package storetest

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
)

// acquirerTests are the conformance tests of stores' acquirer accounts.
var acquirerTests = []struct {
	name string
	fn   func(t *testing.T, db *store.DB)
}{
	{"AcquirerAccount/Lifecycle", testAcquirerAccountLifecycle},
	{"AcquirerAccount/UnknownStore", testAcquirerAccountUnknownStore},
	{"AcquirerAccount/Sealed", testAcquirerAccountSealed},
}

func newAcquirerAccount(m *checkout.Merchant, mode checkout.Mode, acquirer, n string, set time.Time) *checkout.AcquirerAccount {
	return &checkout.AcquirerAccount{
		MerchantID: m.ID, Mode: mode, Acquirer: acquirer, AccountID: "acct_" + n, PublishableKey: "pk_live_" + n,
		SealedSecretKey: "v1.k." + n, SecretKeyHint: "sk" + n, SealedWebhookSecret: "v1.w." + n, WebhookSecretHint: "wh" + n,
		SetBy: checkout.Actor{Kind: checkout.ActorAccount, ID: "acct_ann", Name: "ann@example.com"}, SetAt: set,
	}
}

// A store's account at an acquirer is put, read, replaced in place (one
// per store, mode and acquirer) and deleted; another store's, mode's or
// acquirer's is another row.
func testAcquirerAccountLifecycle(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	other := newMerchant(t, db, "Other", base)
	_, err := db.AcquirerAccountGet(ctx, m.ID, checkout.ModeLive, "stripe")
	wantCode(t, "AcquirerAccountGet(none)", err, checkout.ENotFound)

	a := newAcquirerAccount(m, checkout.ModeLive, "stripe", "1", base.Add(1500*time.Millisecond))
	a.Warnings = []string{"The webhook endpoint's API version is 2020-08-27.", "Another\nline."}
	test := newAcquirerAccount(m, checkout.ModeTest, "stripe", "2", base)
	otherAcq := newAcquirerAccount(m, checkout.ModeLive, "acme", "3", base)
	otherStore := newAcquirerAccount(other, checkout.ModeLive, "stripe", "4", base)
	for _, x := range []*checkout.AcquirerAccount{a, test, otherAcq, otherStore} {
		inTx(t, db, func(tx checkout.Tx) error { return tx.AcquirerAccountPut(ctx, x) })
	}
	a.Warnings[1] = "Another line." // warnings are kept one a line
	got, err := db.AcquirerAccountGet(ctx, m.ID, checkout.ModeLive, "stripe")
	if err != nil || !reflect.DeepEqual(got, a) {
		t.Errorf("AcquirerAccountGet = %+v, %v; want %+v", got, err, a)
	}
	list, err := db.AcquirerAccountList(ctx, m.ID)
	if err != nil || len(list) != 3 || list[0].Acquirer != "acme" || list[1].Acquirer != "stripe" || list[1].Mode != checkout.ModeLive || list[2].Mode != checkout.ModeTest {
		t.Errorf("AcquirerAccountList = %v, %v; want live acme, live stripe, test stripe", list, err)
	}

	// Put again: replaced, warnings gone.
	b := newAcquirerAccount(m, checkout.ModeLive, "stripe", "5", base.Add(time.Hour))
	b.SetBy = checkout.Actor{Kind: checkout.ActorCLI, Name: "cli:root"}
	inTx(t, db, func(tx checkout.Tx) error { return tx.AcquirerAccountPut(ctx, b) })
	if got, err := db.AcquirerAccountGet(ctx, m.ID, checkout.ModeLive, "stripe"); err != nil || !reflect.DeepEqual(got, b) {
		t.Errorf("AcquirerAccountGet after a second put = %+v, %v; want %+v", got, err, b)
	}

	inTx(t, db, func(tx checkout.Tx) error { return tx.AcquirerAccountDelete(ctx, m.ID, checkout.ModeLive, "stripe") })
	_, err = db.AcquirerAccountGet(ctx, m.ID, checkout.ModeLive, "stripe")
	wantCode(t, "AcquirerAccountGet(deleted)", err, checkout.ENotFound)
	err = db.InTx(ctx, func(tx checkout.Tx) error { return tx.AcquirerAccountDelete(ctx, m.ID, checkout.ModeLive, "stripe") })
	wantCode(t, "AcquirerAccountDelete(deleted)", err, checkout.ENotFound)
	for _, x := range []*checkout.AcquirerAccount{test, otherAcq, otherStore} {
		if _, err := db.AcquirerAccountGet(ctx, x.MerchantID, x.Mode, x.Acquirer); err != nil {
			t.Errorf("AcquirerAccountGet(%s %s %s) after deleting another = %v", x.MerchantID, x.Mode, x.Acquirer, err)
		}
	}
}

// An account of a store that does not exist is refused.
func testAcquirerAccountUnknownStore(t *testing.T, db *store.DB) {
	m := &checkout.Merchant{ID: checkout.NewStoreID()}
	err := db.InTx(context.Background(), func(tx checkout.Tx) error {
		return tx.AcquirerAccountPut(context.Background(), newAcquirerAccount(m, checkout.ModeLive, "stripe", "1", base))
	})
	if err == nil {
		t.Error("AcquirerAccountPut of an unknown store = nil; want an error")
	}
}

// Every account's sealed secrets are listed and written again, the hints
// kept.
func testAcquirerAccountSealed(t *testing.T, db *store.DB) {
	ctx := context.Background()
	var want []*checkout.AcquirerAccount
	for _, name := range []string{"Acme", "Other"} {
		a := newAcquirerAccount(newMerchant(t, db, name, base), checkout.ModeLive, "stripe", name, base)
		inTx(t, db, func(tx checkout.Tx) error { return tx.AcquirerAccountPut(ctx, a) })
		want = append(want, a)
	}
	inTx(t, db, func(tx checkout.Tx) error {
		as, err := tx.AcquirerAccountListSealed(ctx)
		if err != nil {
			return err
		}
		if len(as) != 2 {
			t.Fatalf("AcquirerAccountListSealed = %v; want both accounts", as)
		}
		for _, a := range as {
			a.SealedSecretKey, a.SealedWebhookSecret = "v1.new.k."+a.AccountID, "v1.new.w."+a.AccountID
			a.SecretKeyHint = "ignored"
			if err := tx.AcquirerAccountSetSealed(ctx, a); err != nil {
				return err
			}
		}
		gone := newAcquirerAccount(&checkout.Merchant{ID: checkout.NewStoreID()}, checkout.ModeLive, "stripe", "x", base)
		wantCode(t, "AcquirerAccountSetSealed(unknown)", tx.AcquirerAccountSetSealed(ctx, gone), checkout.ENotFound)
		return nil
	})
	for _, w := range want {
		got, err := db.AcquirerAccountGet(ctx, w.MerchantID, w.Mode, w.Acquirer)
		if err != nil || got.SealedSecretKey != "v1.new.k."+w.AccountID || got.SealedWebhookSecret != "v1.new.w."+w.AccountID || got.SecretKeyHint != w.SecretKeyHint {
			t.Errorf("after AcquirerAccountSetSealed, %s = %+v, %v", w.AccountID, got, err)
		}
	}
}

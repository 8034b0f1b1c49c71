package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
)

// base is the time the suite's records are made at: whole seconds, built by
// time.Unix as the store builds the times it reads, so records compare with
// reflect.DeepEqual.
var base = time.Unix(1_790_000_000, 0)

// Exercise is the conformance suite: every behaviour of checkout.Store and
// checkout.Tx that callers rely on, one subtest each. open returns a fresh,
// migrated, empty store; each subtest opens its own. Every database must
// pass it as it is: a behaviour that differs between SQLite and PostgreSQL
// is a bug of the store, not of the suite.
func Exercise(t *testing.T, open func(t *testing.T) *store.DB) {
	tests := []struct {
		name string
		fn   func(t *testing.T, db *store.DB)
	}{
		{"Migrate/Idempotent", testMigrateIdempotent},
		{"Ping", testPing},
		{"Merchant/RoundTrip", testMerchantRoundTrip},
		{"Merchant/NotFound", testMerchantNotFound},
		{"Merchant/Conflict", testMerchantConflict},
		{"Merchant/List", testMerchantList},
		{"Merchant/Update", testMerchantUpdate},
		{"APIKey/RoundTrip", testAPIKeyRoundTrip},
		{"APIKey/NotFound", testAPIKeyNotFound},
		{"APIKey/Conflict", testAPIKeyConflict},
		{"APIKey/UnknownStore", testAPIKeyUnknownStore},
		{"APIKey/List", testAPIKeyList},
		{"APIKey/Revoke", testAPIKeyRevoke},
		{"APIKey/EachActive", testAPIKeyEachActive},
		{"APIKey/Sealed", testAPIKeySealed},
		{"Session/RoundTrip", testSessionRoundTrip},
		{"Session/RoundTripMinimal", testSessionRoundTripMinimal},
		{"Session/NotFound", testSessionNotFound},
		{"Session/Conflict", testSessionConflict},
		{"Session/Update", testSessionUpdate},
		{"Session/ListDue", testSessionListDue},
		{"Session/ConcurrentComplete", testSessionConcurrentComplete},
		{"Event/RoundTrip", testEventRoundTrip},
		{"Event/List", testEventList},
		{"Event/Conflict", testEventConflict},
		{"Delivery/CountPending", testDeliveryCountPending},
		{"Idempotency/RoundTrip", testIdempotencyRoundTrip},
		{"Idempotency/Conflict", testIdempotencyConflict},
		{"SignatureNonce/Use", testSignatureNonceUse},
		{"SignatureNonce/Concurrent", testSignatureNonceConcurrent},
		{"SignatureNonce/Purge", testSignatureNoncePurge},
		{"Idempotency/Purge", testIdempotencyPurge},
		{"RequestLog/RoundTrip", testRequestLogRoundTrip},
		{"RequestLog/BatchIsAtomic", testRequestLogBatchAtomic},
		{"RequestLog/List", testRequestLogList},
		{"RequestLog/Purge", testRequestLogPurge},
		{"InTx/Commit", testInTxCommit},
		{"InTx/RollbackOnError", testInTxRollbackOnError},
		{"InTx/RollbackOnPanic", testInTxRollbackOnPanic},
		{"InTx/Isolation", testInTxIsolation},
		{"Close", testClose},
	}
	tests = append(tests, webhookTests...)
	tests = append(tests, dashboardWebhookTests...)
	tests = append(tests, paymentTests...)
	tests = append(tests, refundTests...)
	tests = append(tests, disputeTests...)
	tests = append(tests, paymentListTests...)
	tests = append(tests, sessionListTests...)
	tests = append(tests, accountTests...)
	tests = append(tests, dashboardTests...)
	tests = append(tests, listTests...)
	tests = append(tests, homeTests...)
	tests = append(tests, auditTests...)
	tests = append(tests, acquirerTests...)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, open(t)) })
	}
}

// inTx runs fn in a transaction and fails the test on error.
func inTx(t *testing.T, db *store.DB, fn func(tx checkout.Tx) error) {
	t.Helper()
	if err := db.InTx(context.Background(), fn); err != nil {
		t.Fatalf("InTx: %v", err)
	}
}

// wantCode fails unless err carries code.
func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	if got := checkout.ErrorCode(err); got != code {
		t.Errorf("%s = %v (code %q); want code %q", what, err, got, code)
	}
}

func ptr[T any](v T) *T { return &v }

func newMerchant(t *testing.T, db *store.DB, name string, created time.Time) *checkout.Merchant {
	t.Helper()
	m := &checkout.Merchant{ID: checkout.NewStoreID(), Name: name, Currency: "USD", Website: "https://acme.example",
		StatementDescriptor: "ACME GAMES", CreatedAt: created}
	inTx(t, db, func(tx checkout.Tx) error { return tx.MerchantInsert(context.Background(), m) })
	return m
}

func newKey(t *testing.T, db *store.DB, merchantID string, mode checkout.Mode, created time.Time) *checkout.APIKey {
	t.Helper()
	k := &checkout.APIKey{ID: checkout.NewAPIKeyID(), MerchantID: merchantID, Mode: mode, Type: checkout.KeyBearer,
		Permissions: []checkout.Permission{checkout.PermCheckoutsWrite}, SecretHash: checkout.HashSecret(checkout.NewSecret()),
		SecretHint: "abcd", CreatedAt: created}
	inTx(t, db, func(tx checkout.Tx) error { return tx.APIKeyInsert(context.Background(), k) })
	return k
}

// newSession returns an open session of m created at base, not stored.
func newSession(m *checkout.Merchant, f func(s *checkout.Session)) *checkout.Session {
	s := &checkout.Session{
		ID: checkout.NewSessionID(), MerchantID: m.ID, Mode: checkout.ModeTest, Status: checkout.StatusOpen, Title: "Order",
		Currency: "USD", Amount: 1500, TotalAmount: 1500,
		Items:     []checkout.Item{{Name: "Sword", Amount: 1500, Quantity: 1}},
		Metadata:  map[string]string{},
		CreatedAt: base, ExpiresAt: base.Add(time.Hour),
	}
	if f != nil {
		f(s)
	}
	return s
}

func insertSession(t *testing.T, db *store.DB, s *checkout.Session) *checkout.Session {
	t.Helper()
	inTx(t, db, func(tx checkout.Tx) error { return tx.SessionInsert(context.Background(), s) })
	return s
}

func testMigrateIdempotent(t *testing.T, db *store.DB) {
	ctx := context.Background()
	for i := range 2 {
		n, err := db.Migrate(ctx)
		if err != nil || n != 0 {
			t.Errorf("Migrate #%d on a migrated store = %d, %v; want 0, nil", i+1, n, err)
		}
	}
	// The schema still works after the second run.
	newMerchant(t, db, "Acme", base)
}

func testPing(t *testing.T, db *store.DB) {
	if err := db.Ping(context.Background()); err != nil {
		t.Errorf("Ping = %v", err)
	}
	if db.Dialect() != "sqlite" && db.Dialect() != "postgres" {
		t.Errorf("Dialect() = %q", db.Dialect())
	}
}

func testMerchantRoundTrip(t *testing.T, db *store.DB) {
	ctx := context.Background()
	for _, want := range []*checkout.Merchant{
		{ID: checkout.NewStoreID(), Name: "Ünïcode Shop 日本 😀 'quoted' \"double\" back\\slash", Currency: "JPY",
			Website: "https://shop.example/path?q=1", StatementDescriptor: "NCODE SHOP", CreatedAt: base},
		{ID: checkout.NewStoreID(), Name: "No website", Currency: "KWD", Website: "", StatementDescriptor: "NO WEBSITE", CreatedAt: base.Add(time.Second)},
	} {
		inTx(t, db, func(tx checkout.Tx) error { return tx.MerchantInsert(ctx, want) })
		got, err := db.MerchantGet(ctx, want.ID)
		if err != nil {
			t.Fatalf("MerchantGet(%s) = %v", want.ID, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("MerchantGet = %+v; want %+v", got, want)
		}
	}
}

func testMerchantNotFound(t *testing.T, db *store.DB) {
	_, err := db.MerchantGet(context.Background(), checkout.NewStoreID())
	wantCode(t, "MerchantGet(unknown)", err, checkout.EStoreNotFound)
	_, err = db.MerchantGet(context.Background(), "")
	wantCode(t, "MerchantGet(\"\")", err, checkout.EStoreNotFound)
}

func testMerchantConflict(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "First", base)
	dup := *m
	dup.Name = "Second"
	err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.MerchantInsert(ctx, &dup) })
	wantCode(t, "MerchantInsert(taken id)", err, checkout.EConflict)
	got, err := db.MerchantGet(ctx, m.ID)
	if err != nil || got.Name != "First" {
		t.Errorf("after a conflicting insert, MerchantGet = %+v, %v; want the first", got, err)
	}
}

func testMerchantUpdate(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Before", base)
	other := newMerchant(t, db, "Other", base)
	want := *m
	want.Name, want.Currency, want.Website, want.StatementDescriptor = "After 'é'", "EUR", "https://after.example", "AFTER SHOP"
	want.Pricing.CardFixed++
	inTx(t, db, func(tx checkout.Tx) error { return tx.MerchantUpdate(ctx, &want) })
	if got, err := db.MerchantGet(ctx, m.ID); err != nil || !reflect.DeepEqual(got, &want) {
		t.Errorf("after MerchantUpdate, MerchantGet = %+v, %v; want %+v", got, err, &want)
	}
	if got, err := db.MerchantGet(ctx, other.ID); err != nil || !reflect.DeepEqual(got, other) {
		t.Errorf("MerchantUpdate changed another store: %+v, %v", got, err)
	}
	ghost := want
	ghost.ID = checkout.NewStoreID()
	err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.MerchantUpdate(ctx, &ghost) })
	wantCode(t, "MerchantUpdate(unknown)", err, checkout.EStoreNotFound)
}

func testMerchantList(t *testing.T, db *store.DB) {
	ctx := context.Background()
	got, err := db.MerchantList(ctx)
	if err != nil || len(got) != 0 {
		t.Fatalf("MerchantList on an empty store = %v, %v; want none", got, err)
	}
	b := newMerchant(t, db, "B", base.Add(time.Second))
	a := newMerchant(t, db, "A", base)
	c := newMerchant(t, db, "C", base.Add(2*time.Second))
	got, err = db.MerchantList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := []*checkout.Merchant{a, b, c}; !reflect.DeepEqual(got, want) {
		t.Errorf("MerchantList = %v; want oldest first %v", names(got), names(want))
	}
}

func names(ms []*checkout.Merchant) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Name)
	}
	return out
}

func testAPIKeyRoundTrip(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	for _, want := range []*checkout.APIKey{
		{ID: checkout.NewAPIKeyID(), Name: "Web shop 'ü' <b>", MerchantID: m.ID, Mode: checkout.ModeTest, Type: checkout.KeyBearer,
			Permissions: []checkout.Permission{checkout.PermCheckoutsWrite}, SecretHash: checkout.HashSecret("a"), SecretHint: "wxyz", CreatedAt: base},
		{ID: checkout.NewAPIKeyID(), MerchantID: m.ID, Mode: checkout.ModeLive, Type: checkout.KeyHMAC,
			Permissions: []checkout.Permission{checkout.PermCheckoutsRead, checkout.PermCheckoutsWrite}, SecretHash: checkout.HashSecret("b"),
			SecretHint: "0Aa9", CreatedAt: base.Add(time.Second),
			// An HMAC key keeps its secret sealed (package seal): the store
			// keeps the text as it is given.
			SealedSecret: "v1.0123456789abcdef.AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0-P0BBQkNERUZH-_"},
	} {
		inTx(t, db, func(tx checkout.Tx) error { return tx.APIKeyInsert(ctx, want) })
		got, err := db.APIKeyGet(ctx, want.ID)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("APIKeyGet = %+v, %v; want %+v", got, err, want)
		}
		got, err = db.APIKeyGetByHash(ctx, want.SecretHash)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("APIKeyGetByHash = %+v, %v; want %+v", got, err, want)
		}
	}
	ks, err := db.APIKeyList(ctx, m.ID)
	if err != nil || len(ks) != 2 || ks[0].SealedSecret != "" || !strings.HasPrefix(ks[1].SealedSecret, "v1.") {
		t.Errorf("APIKeyList = %+v, %v; want the bearer key without a sealed secret and the HMAC key with its own", ks, err)
	}
}

func testAPIKeyNotFound(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	newKey(t, db, m.ID, checkout.ModeTest, base)
	_, err := db.APIKeyGet(ctx, checkout.NewAPIKeyID())
	wantCode(t, "APIKeyGet(unknown)", err, checkout.ENotFound)
	_, err = db.APIKeyGetByHash(ctx, checkout.HashSecret("unknown"))
	wantCode(t, "APIKeyGetByHash(unknown)", err, checkout.ENotFound)
	err = db.InTx(ctx, func(tx checkout.Tx) error { return tx.APIKeyRevoke(ctx, checkout.NewAPIKeyID(), base) })
	wantCode(t, "APIKeyRevoke(unknown)", err, checkout.ENotFound)
}

func testAPIKeyConflict(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	k := newKey(t, db, m.ID, checkout.ModeTest, base)

	sameID := *k
	sameID.SecretHash = checkout.HashSecret("other")
	err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.APIKeyInsert(ctx, &sameID) })
	wantCode(t, "APIKeyInsert(taken id)", err, checkout.EConflict)

	sameHash := *k
	sameHash.ID = checkout.NewAPIKeyID()
	err = db.InTx(ctx, func(tx checkout.Tx) error { return tx.APIKeyInsert(ctx, &sameHash) })
	wantCode(t, "APIKeyInsert(taken secret hash)", err, checkout.EConflict)

	ks, err := db.APIKeyList(ctx, m.ID)
	if err != nil || len(ks) != 1 {
		t.Errorf("after conflicting inserts, APIKeyList = %d keys, %v; want 1", len(ks), err)
	}
}

// A key must belong to a store that exists. Both databases refuse it; what
// the refusal is called does not matter to any caller, which checks the
// store first.
func testAPIKeyUnknownStore(t *testing.T, db *store.DB) {
	ctx := context.Background()
	k := &checkout.APIKey{ID: checkout.NewAPIKeyID(), MerchantID: checkout.NewStoreID(), Mode: checkout.ModeTest, Type: checkout.KeyBearer,
		Permissions: []checkout.Permission{checkout.PermCheckoutsWrite}, SecretHash: checkout.HashSecret("x"), SecretHint: "abcd", CreatedAt: base}
	if err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.APIKeyInsert(ctx, k) }); err == nil {
		t.Errorf("APIKeyInsert for an unknown store = nil; want an error")
	}
	m := &checkout.Merchant{ID: checkout.NewStoreID()}
	s := newSession(m, nil)
	if err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.SessionInsert(ctx, s) }); err == nil {
		t.Errorf("SessionInsert for an unknown store = nil; want an error")
	}
}

func testAPIKeyList(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	other := newMerchant(t, db, "Other", base)
	k2 := newKey(t, db, m.ID, checkout.ModeLive, base.Add(2*time.Second))
	k1 := newKey(t, db, m.ID, checkout.ModeTest, base.Add(time.Second))
	newKey(t, db, other.ID, checkout.ModeTest, base)
	got, err := db.APIKeyList(ctx, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := []*checkout.APIKey{k1, k2}; !reflect.DeepEqual(got, want) {
		t.Errorf("APIKeyList = %v; want the store's keys, oldest first: %v", got, want)
	}
	got, err = db.APIKeyList(ctx, checkout.NewStoreID())
	if err != nil || len(got) != 0 {
		t.Errorf("APIKeyList(unknown store) = %v, %v; want none", got, err)
	}
}

func testAPIKeyRevoke(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	k := newKey(t, db, m.ID, checkout.ModeTest, base)
	other := newKey(t, db, m.ID, checkout.ModeTest, base)
	first, second := base.Add(time.Minute), base.Add(time.Hour)
	inTx(t, db, func(tx checkout.Tx) error { return tx.APIKeyRevoke(ctx, k.ID, first) })
	inTx(t, db, func(tx checkout.Tx) error { return tx.APIKeyRevoke(ctx, k.ID, second) })
	got, err := db.APIKeyGet(ctx, k.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.RevokedAt == nil || !got.RevokedAt.Equal(first) || !got.Revoked() {
		t.Errorf("after revoking twice, RevokedAt = %v; want the first time %v", got.RevokedAt, first)
	}
	// A revoked key is still found by its hash: the caller refuses it.
	got, err = db.APIKeyGetByHash(ctx, k.SecretHash)
	if err != nil || !got.Revoked() {
		t.Errorf("APIKeyGetByHash(revoked) = %+v, %v; want the revoked key", got, err)
	}
	if got, _ := db.APIKeyGet(ctx, other.ID); got.Revoked() {
		t.Errorf("revoking one key revoked another")
	}
}

// APIKeyEachActive gives every store's unrevoked keys created at or after
// its time (the second, as keys are stamped), all of them for the zero
// time, each with its id, type and secret hash.
func testAPIKeyEachActive(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	other := newMerchant(t, db, "Other", base)
	old := newKey(t, db, m.ID, checkout.ModeTest, base)
	revoked := newKey(t, db, m.ID, checkout.ModeTest, base.Add(time.Minute))
	inTx(t, db, func(tx checkout.Tx) error { return tx.APIKeyRevoke(ctx, revoked.ID, base.Add(time.Hour)) })
	atBound := newKey(t, db, other.ID, checkout.ModeLive, base.Add(time.Minute))
	hmac := &checkout.APIKey{ID: checkout.NewAPIKeyID(), MerchantID: m.ID, Mode: checkout.ModeLive, Type: checkout.KeyHMAC,
		Permissions: []checkout.Permission{checkout.PermCheckoutsRead}, SecretHash: checkout.HashSecret(checkout.NewSecret()),
		SecretHint: "abcd", CreatedAt: base.Add(time.Hour), SealedSecret: "v1.sealed"}
	inTx(t, db, func(tx checkout.Tx) error { return tx.APIKeyInsert(ctx, hmac) })
	line := func(k *checkout.APIKey) string { return k.ID + " " + string(k.Type) + " " + k.SecretHash }
	for _, c := range []struct {
		since time.Time
		want  []string
	}{
		{time.Time{}, []string{line(old), line(atBound), line(hmac)}},
		{base.Add(time.Minute), []string{line(atBound), line(hmac)}},
		{base.Add(time.Minute + time.Second), []string{line(hmac)}},
		{base.Add(2 * time.Hour), nil},
	} {
		var got []string
		err := db.APIKeyEachActive(ctx, c.since, func(id string, typ checkout.KeyType, hash string) {
			got = append(got, id+" "+string(typ)+" "+hash)
		})
		slices.Sort(got)
		slices.Sort(c.want)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("APIKeyEachActive(%v) = %v, %v; want %v", c.since, got, err, c.want)
		}
	}
}

func testSessionRoundTrip(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	completed := base.Add(10 * time.Minute)
	want := newSession(m, func(s *checkout.Session) {
		s.Mode = checkout.ModeLive
		s.Status = checkout.StatusComplete
		s.Title = "Título 😀 \"quoted\" 'single' back\\slash"
		s.Description = ptr("Line one\nLine two\ttabbed, ünïcödé")
		s.Currency = "KWD"
		s.Amount, s.DiscountAmount, s.TaxAmount, s.TotalAmount = 100_000_000, 0, 0, 100_000_000
		s.Items = []checkout.Item{
			{Name: "Sword 🗡", Amount: 99_999_900, Quantity: 1, Image: ptr("https://cdn.example/sword.png?size=2")},
			{Name: "Gem", Amount: 1, Quantity: 100},
		}
		s.Customer = checkout.Customer{Email: ptr("büyer@example.com"), Name: ptr("Ada Lovelace")}
		s.Metadata = map[string]string{"order_id": "42", "ключ": "значение", "empty": "", "json": `{"a":[1,"b"]}`, "nul": "a\u0000b"}
		s.ReturnURL = ptr("https://shop.example/done?x=1#top")
		s.CancelURL = ptr("https://shop.example/cart")
		s.PaymentID = ptr("pay_0123456789abcdef0123456789abcdef")
		s.CompletedAt = &completed
		s.ActivePaymentID = ptr("pay_1123456789abcdef0123456789abcdef")
	})
	insertSession(t, db, want)
	got, err := db.SessionGet(ctx, want.ID)
	if err != nil {
		t.Fatalf("SessionGet = %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SessionGet =\n%s\nwant\n%s", sessionJSON(got), sessionJSON(want))
	}
	inTx(t, db, func(tx checkout.Tx) error {
		got, err := tx.SessionGetForUpdate(ctx, want.ID)
		if err != nil {
			return err
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("SessionGetForUpdate =\n%s\nwant\n%s", sessionJSON(got), sessionJSON(want))
		}
		return nil
	})
}

// A session with nothing optional set comes back with nil pointers, not
// empty strings.
func testSessionRoundTripMinimal(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	want := insertSession(t, db, newSession(m, nil))
	got, err := db.SessionGet(ctx, want.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SessionGet =\n%s\nwant\n%s", sessionJSON(got), sessionJSON(want))
	}
	if got.Description != nil || got.ReturnURL != nil || got.CancelURL != nil || got.PaymentID != nil || got.CompletedAt != nil ||
		got.Customer.Email != nil || got.Customer.Name != nil || got.Items[0].Image != nil || got.Metadata == nil {
		t.Errorf("SessionGet = %s; want nil optional fields and empty metadata", sessionJSON(got))
	}
	// The legacy 32-hex id shape is stored as well.
	legacy := insertSession(t, db, newSession(m, func(s *checkout.Session) { s.ID = checkout.NewID(checkout.PrefixSession, 16) }))
	if _, err := db.SessionGet(ctx, legacy.ID); err != nil {
		t.Errorf("SessionGet(legacy id) = %v", err)
	}
}

// sessionJSON shows a session in failure messages, pointers followed.
func sessionJSON(s *checkout.Session) string {
	b, _ := json.MarshalIndent(s, "", "  ")
	return string(b)
}

func testSessionNotFound(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	insertSession(t, db, newSession(m, nil))
	id := checkout.NewSessionID()
	_, err := db.SessionGet(ctx, id)
	wantCode(t, "SessionGet(unknown)", err, checkout.ECheckoutNotFound)
	err = db.InTx(ctx, func(tx checkout.Tx) error {
		_, err := tx.SessionGetForUpdate(ctx, id)
		return err
	})
	wantCode(t, "SessionGetForUpdate(unknown)", err, checkout.ECheckoutNotFound)
	err = db.InTx(ctx, func(tx checkout.Tx) error { return tx.SessionUpdate(ctx, newSession(m, nil)) })
	wantCode(t, "SessionUpdate(unknown)", err, checkout.ECheckoutNotFound)
}

func testSessionConflict(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	s := insertSession(t, db, newSession(m, nil))
	dup := *s
	dup.Title = "Other"
	err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.SessionInsert(ctx, &dup) })
	wantCode(t, "SessionInsert(taken id)", err, checkout.EConflict)
	if got, _ := db.SessionGet(ctx, s.ID); got.Title != s.Title {
		t.Errorf("a conflicting insert changed the session: title %q", got.Title)
	}
}

// SessionUpdate writes status, payment, completion time and whether a
// payment is in progress, and nothing else.
func testSessionUpdate(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	s := insertSession(t, db, newSession(m, nil))
	other := insertSession(t, db, newSession(m, nil))

	inProgress := *s
	inProgress.ActivePaymentID = ptr("pay_1")
	inTx(t, db, func(tx checkout.Tx) error { return tx.SessionUpdate(ctx, &inProgress) })
	got, _ := db.SessionGet(ctx, s.ID)
	if !reflect.DeepEqual(got, &inProgress) {
		t.Errorf("after marking a payment in progress, SessionGet =\n%s\nwant\n%s", sessionJSON(got), sessionJSON(&inProgress))
	}

	completed := base.Add(30 * time.Minute)
	want := inProgress
	want.Status, want.PaymentID, want.CompletedAt, want.ActivePaymentID = checkout.StatusComplete, ptr("pay_1"), &completed, nil
	changed := want
	changed.Title, changed.Amount, changed.Metadata = "changed", 1, map[string]string{"x": "y"} // not mutable
	inTx(t, db, func(tx checkout.Tx) error { return tx.SessionUpdate(ctx, &changed) })
	got, _ = db.SessionGet(ctx, s.ID)
	if !reflect.DeepEqual(got, &want) {
		t.Errorf("after completing, SessionGet =\n%s\nwant\n%s", sessionJSON(got), sessionJSON(&want))
	}

	if got, _ := db.SessionGet(ctx, other.ID); !reflect.DeepEqual(got, other) {
		t.Errorf("updating one session changed another: %s", sessionJSON(got))
	}

	// Back to nil pointers: written as NULL, read as nil.
	reset := *s
	inTx(t, db, func(tx checkout.Tx) error { return tx.SessionUpdate(ctx, &reset) })
	if got, _ := db.SessionGet(ctx, s.ID); !reflect.DeepEqual(got, s) {
		t.Errorf("after resetting, SessionGet =\n%s\nwant\n%s", sessionJSON(got), sessionJSON(s))
	}
}

func testSessionListDue(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	now := base.Add(2 * time.Hour)
	at := func(d time.Duration, f func(s *checkout.Session)) *checkout.Session {
		return insertSession(t, db, newSession(m, func(s *checkout.Session) {
			s.ExpiresAt = now.Add(d)
			s.CreatedAt = s.ExpiresAt.Add(-time.Hour)
			if f != nil {
				f(s)
			}
		}))
	}
	// Inserted out of order, so the order of the answer is the query's.
	dueExactly := at(0, nil)
	dueOldest := at(-90*time.Minute, nil)
	due := at(-time.Minute, func(s *checkout.Session) { s.Mode = checkout.ModeLive })
	at(time.Second, nil) // not due yet
	at(-time.Hour, func(s *checkout.Session) { s.ActivePaymentID = ptr("pay_2") })
	at(-time.Hour, func(s *checkout.Session) {
		s.Status, s.PaymentID, s.CompletedAt = checkout.StatusComplete, ptr("pay_1"), ptr(now.Add(-2*time.Hour))
	})
	at(-time.Hour, func(s *checkout.Session) { s.Status = checkout.StatusExpired })

	got, err := db.SessionListDue(ctx, now, 100)
	if err != nil {
		t.Fatal(err)
	}
	if want := []*checkout.Session{dueOldest, due, dueExactly}; !reflect.DeepEqual(ids(got), ids(want)) {
		t.Errorf("SessionListDue(now, 100) = %v; want the open, due sessions without a payment in progress, by expires_at: %v", ids(got), ids(want))
	}
	if len(got) == 3 && !reflect.DeepEqual(got[0], dueOldest) {
		t.Errorf("SessionListDue returned\n%s\nwant\n%s", sessionJSON(got[0]), sessionJSON(dueOldest))
	}
	got, err = db.SessionListDue(ctx, now, 2)
	if err != nil {
		t.Fatal(err)
	}
	if want := []*checkout.Session{dueOldest, due}; !reflect.DeepEqual(ids(got), ids(want)) {
		t.Errorf("SessionListDue(now, 2) = %v; want %v", ids(got), ids(want))
	}
	got, err = db.SessionListDue(ctx, now.Add(-time.Nanosecond), 100)
	if err != nil {
		t.Fatal(err)
	}
	// now - 1ns is in the second before now: whole seconds count.
	if want := []*checkout.Session{dueOldest, due}; !reflect.DeepEqual(ids(got), ids(want)) {
		t.Errorf("SessionListDue(now-1ns, 100) = %v; want %v", ids(got), ids(want))
	}
	got, err = db.SessionListDue(ctx, base, 100)
	if err != nil || len(got) != 0 {
		t.Errorf("SessionListDue(before any expiry) = %v, %v; want none", ids(got), err)
	}
}

func ids(ss []*checkout.Session) []string {
	out := []string{}
	for _, s := range ss {
		out = append(out, s.ID)
	}
	return out
}

func testSessionConcurrentComplete(t *testing.T, db *store.DB) { ConcurrentComplete(t, db) }

// ConcurrentComplete has goroutines race to complete one session, each
// reading it for update and completing it if it is still open: exactly one
// wins, and its payment is the one recorded with one checkout.completed
// event. dbs are handles on one database (several nodes); the goroutines
// take turns among them.
func ConcurrentComplete(t *testing.T, dbs ...*store.DB) {
	ctx := context.Background()
	db := dbs[0]
	m := newMerchant(t, db, "Acme", base)
	s := insertSession(t, db, newSession(m, nil))
	const n = 16
	var (
		wg      sync.WaitGroup
		wins    atomic.Int32
		winner  atomic.Value
		errs    = make(chan error, n)
		startCh = make(chan struct{})
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-startCh
			payment := fmt.Sprintf("pay_%032x", i)
			db := dbs[i%len(dbs)]
			won := false
			err := db.InTx(ctx, func(tx checkout.Tx) error {
				won = false
				s, err := tx.SessionGetForUpdate(ctx, s.ID)
				if err != nil {
					return err
				}
				if s.Status != checkout.StatusOpen {
					return nil
				}
				if err := s.Complete(payment, base.Add(time.Minute)); err != nil {
					return err
				}
				if err := tx.SessionUpdate(ctx, s); err != nil {
					return err
				}
				e := &checkout.Event{ID: checkout.NewEventID(), MerchantID: m.ID, Mode: s.Mode, Type: checkout.EventCheckoutCompleted,
					CreatedAt: base, Object: json.RawMessage(`{"payment":"` + payment + `"}`)}
				if err := tx.EventInsert(ctx, e); err != nil {
					return err
				}
				won = true
				return nil
			})
			if err != nil {
				errs <- err
				return
			}
			if won {
				wins.Add(1)
				winner.Store(payment)
			}
		}()
	}
	close(startCh)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("InTx: %v", err)
	}
	if got := wins.Load(); got != 1 {
		t.Fatalf("%d of %d transactions completed the session; want exactly 1", got, n)
	}
	got, err := db.SessionGet(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != checkout.StatusComplete || got.PaymentID == nil || *got.PaymentID != winner.Load().(string) {
		t.Errorf("session = %s, payment %v; want complete, paid by the winner %s", got.Status, got.PaymentID, winner.Load())
	}
	events, err := db.EventList(ctx, checkout.EventListParams{MerchantID: m.ID, Mode: checkout.ModeTest})
	if err != nil || len(events) != 1 {
		t.Errorf("EventList = %d events, %v; want exactly one checkout.completed", len(events), err)
	}
}

func newEvent(m *checkout.Merchant, mode checkout.Mode, typ string, created time.Time) *checkout.Event {
	return &checkout.Event{ID: checkout.NewEventID(), MerchantID: m.ID, Mode: mode, Type: typ, CreatedAt: created,
		Object: json.RawMessage(`{"id":"cs_1","object":"checkout_session","title":"Ünïcode 😀","metadata":{"nul":"a\u0000b"}}`)}
}

func insertEvents(t *testing.T, db *store.DB, es ...*checkout.Event) {
	t.Helper()
	inTx(t, db, func(tx checkout.Tx) error {
		for _, e := range es {
			if err := tx.EventInsert(context.Background(), e); err != nil {
				return err
			}
		}
		return nil
	})
}

func testEventRoundTrip(t *testing.T, db *store.DB) {
	m := newMerchant(t, db, "Acme", base)
	want := newEvent(m, checkout.ModeLive, checkout.EventCheckoutCreated, base)
	insertEvents(t, db, want)
	got, err := db.EventList(context.Background(), checkout.EventListParams{MerchantID: m.ID, Mode: checkout.ModeLive})
	if err != nil || len(got) != 1 {
		t.Fatalf("EventList = %v, %v; want one event", got, err)
	}
	if !reflect.DeepEqual(got[0], want) {
		t.Errorf("EventList()[0] = %+v (%s); want %+v (%s)", got[0], got[0].Object, want, want.Object)
	}
}

// Events come newest first by time, and in the order they were stored
// within one second (two in one second; see also Event/ListPages).
func testEventList(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	other := newMerchant(t, db, "Other", base)
	e1 := newEvent(m, checkout.ModeTest, checkout.EventCheckoutCreated, base)
	e2 := newEvent(m, checkout.ModeTest, checkout.EventCheckoutExpired, base.Add(time.Hour))
	e3 := newEvent(m, checkout.ModeTest, checkout.EventCheckoutCreated, base.Add(time.Hour))
	e4 := newEvent(m, checkout.ModeTest, checkout.EventCheckoutCompleted, base.Add(time.Minute))
	live := newEvent(m, checkout.ModeLive, checkout.EventCheckoutCreated, base.Add(2*time.Hour))
	otherStore := newEvent(other, checkout.ModeTest, checkout.EventCheckoutCreated, base.Add(2*time.Hour))
	insertEvents(t, db, e1, e2)
	insertEvents(t, db, live, otherStore)
	insertEvents(t, db, e3, e4)

	tests := []struct {
		p    checkout.EventListParams
		want []*checkout.Event
	}{
		{checkout.EventListParams{MerchantID: m.ID, Mode: checkout.ModeTest}, []*checkout.Event{e3, e2, e4, e1}},
		{checkout.EventListParams{MerchantID: m.ID, Mode: checkout.ModeTest, Limit: 2}, []*checkout.Event{e3, e2}},
		{checkout.EventListParams{MerchantID: m.ID, Mode: checkout.ModeTest, Type: checkout.EventCheckoutCreated}, []*checkout.Event{e3, e1}},
		{checkout.EventListParams{MerchantID: m.ID, Mode: checkout.ModeTest, Type: checkout.EventCheckoutCreated, Limit: 1}, []*checkout.Event{e3}},
		{checkout.EventListParams{MerchantID: m.ID, Mode: checkout.ModeTest, Type: checkout.EventPaymentFailed}, nil},
		{checkout.EventListParams{MerchantID: m.ID, Mode: checkout.ModeLive}, []*checkout.Event{live}},
		{checkout.EventListParams{MerchantID: other.ID, Mode: checkout.ModeTest}, []*checkout.Event{otherStore}},
		{checkout.EventListParams{MerchantID: checkout.NewStoreID(), Mode: checkout.ModeTest}, nil},
	}
	for _, tt := range tests {
		got, err := db.EventList(ctx, tt.p)
		if err != nil {
			t.Errorf("EventList(%+v) = %v", tt.p, err)
			continue
		}
		if !reflect.DeepEqual(eventIDs(got), eventIDs(tt.want)) {
			t.Errorf("EventList(%+v) = %v; want %v", tt.p, eventIDs(got), eventIDs(tt.want))
		}
	}

	// Without a limit, at most 100.
	var many []*checkout.Event
	for range 105 {
		many = append(many, newEvent(other, checkout.ModeLive, checkout.EventCheckoutCreated, base))
	}
	insertEvents(t, db, many...)
	got, err := db.EventList(ctx, checkout.EventListParams{MerchantID: other.ID, Mode: checkout.ModeLive})
	if err != nil || len(got) != 100 || got[0].ID != many[104].ID {
		t.Errorf("EventList without a limit = %d events, %v; want the newest 100", len(got), err)
	}
}

func eventIDs(es []*checkout.Event) []string {
	out := []string{}
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}

func testEventConflict(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	e := newEvent(m, checkout.ModeTest, checkout.EventCheckoutCreated, base)
	insertEvents(t, db, e)
	err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.EventInsert(ctx, e) })
	wantCode(t, "EventInsert(taken id)", err, checkout.EConflict)
}

// The queue's depth counts pending deliveries only, due or waiting for a
// retry, leased ones among the due.
func testDeliveryCountPending(t *testing.T, db *store.DB) {
	ctx := context.Background()
	count := func(at time.Time, want checkout.PendingDeliveries) {
		t.Helper()
		got, err := db.DeliveryCountPending(ctx, at)
		if err != nil || got != want {
			t.Errorf("DeliveryCountPending(%v) = %+v, %v; want %+v", at.Sub(base), got, err, want)
		}
	}
	count(base, checkout.PendingDeliveries{})

	m := newMerchant(t, db, "Acme", base)
	ep, err := checkout.NewEndpoint(checkout.EndpointParams{MerchantID: m.ID, Mode: checkout.ModeTest,
		URL: "https://hooks.example.com/x", Events: []string{checkout.AllEvents}}, base)
	if err != nil {
		t.Fatal(err)
	}
	e := newEvent(m, checkout.ModeTest, checkout.EventCheckoutCreated, base)
	insertEvents(t, db, e)
	due := checkout.NewDelivery(e, ep, base)
	later := checkout.NewDelivery(e, ep, base)
	later.NextAttemptAt = base.Add(time.Hour)
	var finished []*checkout.Delivery
	for _, st := range []checkout.DeliveryStatus{checkout.DeliverySucceeded, checkout.DeliveryFailed, checkout.DeliveryCanceled} {
		d := checkout.NewDelivery(e, ep, base)
		d.Status = st
		finished = append(finished, d)
	}
	inTx(t, db, func(tx checkout.Tx) error {
		if err := tx.EndpointInsert(ctx, ep); err != nil {
			return err
		}
		for _, d := range append([]*checkout.Delivery{due, later}, finished...) {
			if err := tx.DeliveryInsert(ctx, d); err != nil {
				return err
			}
		}
		return nil
	})
	count(base, checkout.PendingDeliveries{Due: 1, Waiting: 1})
	count(base.Add(time.Hour), checkout.PendingDeliveries{Due: 2})

	// A delivery being attempted is still due, until its attempt is recorded.
	claims, err := db.DeliveryClaim(ctx, store.ClaimParams{Owner: "o", Now: base, LeaseUntil: base.Add(time.Minute), Limit: 10, PerEndpoint: 10})
	if err != nil || len(claims) != 1 {
		t.Fatalf("DeliveryClaim = %d, %v; want 1", len(claims), err)
	}
	count(base, checkout.PendingDeliveries{Due: 1, Waiting: 1})
}

func newIdempotency(m *checkout.Merchant, mode checkout.Mode, key string, created time.Time) *checkout.IdempotencyRecord {
	return &checkout.IdempotencyRecord{MerchantID: m.ID, Mode: mode, Key: key, RequestHash: checkout.HashSecret(key),
		Body: []byte(`{"id":"cs_1","title":"Ünïcode 😀"}`), CreatedAt: created}
}

func insertIdempotency(t *testing.T, db *store.DB, rs ...*checkout.IdempotencyRecord) {
	t.Helper()
	inTx(t, db, func(tx checkout.Tx) error {
		for _, r := range rs {
			if err := tx.IdempotencyInsert(context.Background(), r); err != nil {
				return err
			}
		}
		return nil
	})
}

func testIdempotencyRoundTrip(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	want := newIdempotency(m, checkout.ModeLive, "order-42/retry:1~!", base)
	insertIdempotency(t, db, want)
	got, err := db.IdempotencyGet(ctx, m.ID, checkout.ModeLive, want.Key)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("IdempotencyGet = %+v, %v; want %+v", got, err, want)
	}
	for _, q := range []struct {
		merchant string
		mode     checkout.Mode
		key      string
	}{
		{m.ID, checkout.ModeTest, want.Key},                  // another mode
		{checkout.NewStoreID(), checkout.ModeLive, want.Key}, // another store
		{m.ID, checkout.ModeLive, "ORDER-42/retry:1~!"},      // keys are case-sensitive
		{m.ID, checkout.ModeLive, "order-42"},
	} {
		_, err := db.IdempotencyGet(ctx, q.merchant, q.mode, q.key)
		wantCode(t, fmt.Sprintf("IdempotencyGet(%s, %s, %q)", q.merchant, q.mode, q.key), err, checkout.ENotFound)
	}
}

func testIdempotencyConflict(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	other := newMerchant(t, db, "Other", base)
	r := newIdempotency(m, checkout.ModeTest, "k", base)
	insertIdempotency(t, db, r)
	second := *r
	second.RequestHash, second.Body = "other", []byte("{}")
	err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.IdempotencyInsert(ctx, &second) })
	wantCode(t, "IdempotencyInsert twice", err, checkout.EConflict)
	if got, _ := db.IdempotencyGet(ctx, m.ID, checkout.ModeTest, "k"); !reflect.DeepEqual(got, r) {
		t.Errorf("after a conflicting insert, IdempotencyGet = %+v; want the first", got)
	}
	// The same key in another mode or store is another record.
	insertIdempotency(t, db, newIdempotency(m, checkout.ModeLive, "k", base), newIdempotency(other, checkout.ModeTest, "k", base))

	// A record whose window is over, not purged yet, gives way to a new
	// one; until then it stands.
	for _, tt := range []struct {
		after time.Duration
		code  string
	}{
		{checkout.IdempotencyWindow - time.Second, checkout.EConflict},
		{checkout.IdempotencyWindow, ""},
	} {
		next := second
		next.CreatedAt = base.Add(tt.after)
		err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.IdempotencyInsert(ctx, &next) })
		wantCode(t, fmt.Sprintf("IdempotencyInsert %v later", tt.after), err, tt.code)
		want := r
		if tt.code == "" {
			want = &next
		}
		if got, _ := db.IdempotencyGet(ctx, m.ID, checkout.ModeTest, "k"); !reflect.DeepEqual(got, want) {
			t.Errorf("after IdempotencyInsert %v later, IdempotencyGet = %+v; want %+v", tt.after, got, want)
		}
	}
}

func testIdempotencyPurge(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	cut := base.Add(24 * time.Hour)
	old := newIdempotency(m, checkout.ModeTest, "old", cut.Add(-time.Second))
	older := newIdempotency(m, checkout.ModeLive, "older", cut.Add(-48*time.Hour))
	atCut := newIdempotency(m, checkout.ModeTest, "at-cut", cut)
	newer := newIdempotency(m, checkout.ModeTest, "newer", cut.Add(time.Second))
	insertIdempotency(t, db, old, older, atCut, newer)
	n, err := db.IdempotencyPurge(ctx, cut)
	if err != nil || n != 2 {
		t.Errorf("IdempotencyPurge(cut) = %d, %v; want 2 (the records created before it)", n, err)
	}
	for _, r := range []*checkout.IdempotencyRecord{old, older} {
		_, err := db.IdempotencyGet(ctx, m.ID, r.Mode, r.Key)
		wantCode(t, "IdempotencyGet(purged "+r.Key+")", err, checkout.ENotFound)
	}
	for _, r := range []*checkout.IdempotencyRecord{atCut, newer} {
		if _, err := db.IdempotencyGet(ctx, m.ID, r.Mode, r.Key); err != nil {
			t.Errorf("IdempotencyGet(%s) after the purge = %v; want it kept", r.Key, err)
		}
	}
	if n, err := db.IdempotencyPurge(ctx, cut); err != nil || n != 0 {
		t.Errorf("IdempotencyPurge again = %d, %v; want 0", n, err)
	}
}

func newRequestLog(m *checkout.Merchant, mode checkout.Mode, created time.Time) *checkout.RequestLog {
	return &checkout.RequestLog{
		RequestID: checkout.NewRequestID(), MerchantID: m.ID, Mode: mode, APIKeyID: checkout.NewAPIKeyID(),
		Method: "POST", Path: "/v1/stores/" + m.ID + "/checkouts?x=%20y", Route: "/v1/stores/{storeId}/checkouts", Status: 201, Duration: 1234567 * time.Microsecond,
		RequestBody:  `{"items":[{"name":"Ünïcode 😀","amount":1500}],"metadata":{"k":"a\u0000b"}}`,
		ResponseBody: `{"ok":true,"data":{"id":"cs_1"}}`,
		CreatedAt:    created,
	}
}

func testRequestLogRoundTrip(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	if err := db.RequestLogInsert(ctx, nil); err != nil {
		t.Errorf("RequestLogInsert(no logs) = %v", err)
	}
	want := newRequestLog(m, checkout.ModeLive, time.UnixMilli(base.UnixMilli()+123))
	empty := newRequestLog(m, checkout.ModeTest, base)
	empty.Method, empty.RequestBody, empty.ResponseBody, empty.Status, empty.Duration = "GET", "", "", 404, 0
	if err := db.RequestLogInsert(ctx, []*checkout.RequestLog{want, empty}); err != nil {
		t.Fatalf("RequestLogInsert = %v", err)
	}
	for _, w := range []*checkout.RequestLog{want, empty} {
		got, err := db.RequestLogGet(ctx, w.RequestID)
		if err != nil || !reflect.DeepEqual(got, w) {
			t.Errorf("RequestLogGet = %+v, %v; want %+v", got, err, w)
		}
	}
	_, err := db.RequestLogGet(ctx, checkout.NewRequestID())
	wantCode(t, "RequestLogGet(unknown)", err, checkout.ENotFound)
}

// A batch is written in one transaction: all of it or none.
func testRequestLogBatchAtomic(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	first := newRequestLog(m, checkout.ModeTest, base)
	if err := db.RequestLogInsert(ctx, []*checkout.RequestLog{first}); err != nil {
		t.Fatal(err)
	}
	fresh := newRequestLog(m, checkout.ModeTest, base)
	err := db.RequestLogInsert(ctx, []*checkout.RequestLog{fresh, first})
	wantCode(t, "RequestLogInsert(a taken request id)", err, checkout.EConflict)
	_, err = db.RequestLogGet(ctx, fresh.RequestID)
	wantCode(t, "RequestLogGet(the rest of a failed batch)", err, checkout.ENotFound)
}

func testRequestLogList(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	other := newMerchant(t, db, "Other", base)
	ms := func(n int64) time.Time { return time.UnixMilli(base.UnixMilli() + n) }
	var logs []*checkout.RequestLog
	for _, off := range []int64{5, 1, 3, 3, 2, 4} {
		logs = append(logs, newRequestLog(m, checkout.ModeTest, ms(off)))
	}
	noise := []*checkout.RequestLog{newRequestLog(m, checkout.ModeLive, ms(10)), newRequestLog(other, checkout.ModeTest, ms(10))}
	if err := db.RequestLogInsert(ctx, append(slices.Clone(logs), noise...)); err != nil {
		t.Fatal(err)
	}
	// Newest first; two in the same millisecond by request id, descending.
	want := slices.Clone(logs)
	slices.SortFunc(want, func(a, b *checkout.RequestLog) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return compareStrings(b.RequestID, a.RequestID)
	})
	p := checkout.RequestLogListParams{MerchantID: m.ID, Mode: checkout.ModeTest}
	got, err := db.RequestLogList(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("RequestLogList(%+v) = %v; want %v", p, logIDs(got), logIDs(want))
	}

	// Paging by cursor: strictly after the last log of the page before,
	// through the two logs of one millisecond.
	p.Limit = 2
	for i := 0; i < len(want); i += 2 {
		got, _ = db.RequestLogList(ctx, p)
		if !reflect.DeepEqual(logIDs(got), logIDs(want[i:i+2])) {
			t.Errorf("RequestLogList(after %v, limit 2) = %v; want %v", p.After, logIDs(got), logIDs(want[i:i+2]))
		}
		p.After = checkout.Cursor{At: want[i+1].CreatedAt, ID: want[i+1].RequestID}
	}
	got, _ = db.RequestLogList(ctx, p)
	if len(got) != 0 {
		t.Errorf("RequestLogList(after the oldest) = %v; want none", logIDs(got))
	}

	// Without a limit, at most 50.
	var many []*checkout.RequestLog
	for i := range 55 {
		many = append(many, newRequestLog(other, checkout.ModeLive, ms(int64(100+i))))
	}
	if err := db.RequestLogInsert(ctx, many); err != nil {
		t.Fatal(err)
	}
	got, err = db.RequestLogList(ctx, checkout.RequestLogListParams{MerchantID: other.ID, Mode: checkout.ModeLive})
	if err != nil || len(got) != 50 || got[0].RequestID != many[54].RequestID {
		t.Errorf("RequestLogList without a limit = %d logs, %v; want the newest 50", len(got), err)
	}
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func logIDs(ls []*checkout.RequestLog) []string {
	out := []string{}
	for _, l := range ls {
		out = append(out, l.RequestID)
	}
	return out
}

func testRequestLogPurge(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	cut := base.Add(checkout.Retention)
	msBefore := newRequestLog(m, checkout.ModeTest, cut.Add(-time.Millisecond))
	dayBefore := newRequestLog(m, checkout.ModeLive, cut.Add(-24*time.Hour))
	atCut := newRequestLog(m, checkout.ModeTest, cut)
	msAfter := newRequestLog(m, checkout.ModeTest, cut.Add(time.Millisecond))
	if err := db.RequestLogInsert(ctx, []*checkout.RequestLog{msBefore, dayBefore, atCut, msAfter}); err != nil {
		t.Fatal(err)
	}
	n, err := db.RequestLogPurge(ctx, cut)
	if err != nil || n != 2 {
		t.Errorf("RequestLogPurge(cut) = %d, %v; want 2 (the logs created before it)", n, err)
	}
	for _, l := range []*checkout.RequestLog{msBefore, dayBefore} {
		_, err := db.RequestLogGet(ctx, l.RequestID)
		wantCode(t, "RequestLogGet(purged)", err, checkout.ENotFound)
	}
	for _, l := range []*checkout.RequestLog{atCut, msAfter} {
		if _, err := db.RequestLogGet(ctx, l.RequestID); err != nil {
			t.Errorf("RequestLogGet(created %v) after purging before %v = %v; want it kept", l.CreatedAt, cut, err)
		}
	}
}

func testInTxCommit(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := &checkout.Merchant{ID: checkout.NewStoreID(), Name: "Acme", Currency: "USD", StatementDescriptor: "ACME GAMES", CreatedAt: base}
	k := &checkout.APIKey{ID: checkout.NewAPIKeyID(), MerchantID: m.ID, Mode: checkout.ModeTest, Type: checkout.KeyBearer,
		Permissions: []checkout.Permission{checkout.PermCheckoutsRead}, SecretHash: checkout.HashSecret("x"), SecretHint: "abcd", CreatedAt: base}
	s := newSession(m, nil)
	e := newEvent(m, checkout.ModeTest, checkout.EventCheckoutCreated, base)
	// Everything in one transaction, later writes depending on earlier ones.
	inTx(t, db, func(tx checkout.Tx) error {
		return errors.Join(tx.MerchantInsert(ctx, m), tx.APIKeyInsert(ctx, k), tx.SessionInsert(ctx, s), tx.EventInsert(ctx, e),
			tx.IdempotencyInsert(ctx, newIdempotency(m, checkout.ModeTest, "k", base)))
	})
	if _, err := db.MerchantGet(ctx, m.ID); err != nil {
		t.Errorf("MerchantGet after commit = %v", err)
	}
	if _, err := db.APIKeyGet(ctx, k.ID); err != nil {
		t.Errorf("APIKeyGet after commit = %v", err)
	}
	if _, err := db.SessionGet(ctx, s.ID); err != nil {
		t.Errorf("SessionGet after commit = %v", err)
	}
}

var errRollback = errors.New("changed my mind")

// A transaction whose function fails writes nothing, and its error comes
// back: a *checkout.Error as it was, any other wrapped as internal_error.
func testInTxRollbackOnError(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	s := insertSession(t, db, newSession(m, nil))
	m2 := &checkout.Merchant{ID: checkout.NewStoreID(), Name: "Never", Currency: "USD", StatementDescriptor: "NEVER", CreatedAt: base}
	s2 := newSession(m, nil)
	e := newEvent(m, checkout.ModeTest, checkout.EventCheckoutExpired, base)
	k := newKey(t, db, m.ID, checkout.ModeTest, base)
	write := func(tx checkout.Tx) error {
		done := *s
		done.Status = checkout.StatusExpired
		return errors.Join(tx.MerchantInsert(ctx, m2), tx.SessionInsert(ctx, s2), tx.SessionUpdate(ctx, &done), tx.EventInsert(ctx, e),
			tx.IdempotencyInsert(ctx, newIdempotency(m, checkout.ModeTest, "k", base)), tx.APIKeyRevoke(ctx, k.ID, base))
	}
	checkNothingWritten := func() {
		t.Helper()
		if _, err := db.MerchantGet(ctx, m2.ID); !checkout.IsCode(err, checkout.EStoreNotFound) {
			t.Errorf("MerchantGet after rollback = %v; want store_not_found", err)
		}
		if _, err := db.SessionGet(ctx, s2.ID); !checkout.IsCode(err, checkout.ECheckoutNotFound) {
			t.Errorf("SessionGet(inserted) after rollback = %v; want checkout_not_found", err)
		}
		if got, _ := db.SessionGet(ctx, s.ID); got.Status != checkout.StatusOpen {
			t.Errorf("SessionGet(updated) after rollback: status %s; want open", got.Status)
		}
		if es, _ := db.EventList(ctx, checkout.EventListParams{MerchantID: m.ID, Mode: checkout.ModeTest}); len(es) != 0 {
			t.Errorf("EventList after rollback = %d events; want none", len(es))
		}
		if _, err := db.IdempotencyGet(ctx, m.ID, checkout.ModeTest, "k"); !checkout.IsCode(err, checkout.ENotFound) {
			t.Errorf("IdempotencyGet after rollback = %v; want not_found", err)
		}
		ks, _ := db.APIKeyList(ctx, m.ID)
		for _, k := range ks {
			if k.Revoked() {
				t.Errorf("key %s revoked by a rolled-back transaction", k.ID)
			}
		}
	}

	err := db.InTx(ctx, func(tx checkout.Tx) error {
		if err := write(tx); err != nil {
			return err
		}
		return errRollback
	})
	if !errors.Is(err, errRollback) || !checkout.IsCode(err, checkout.EInternal) {
		t.Errorf("InTx = %v; want internal_error wrapping the function's error", err)
	}
	checkNothingWritten()

	coded := checkout.Errorf(checkout.EIdempotencyConflict, "no")
	err = db.InTx(ctx, func(tx checkout.Tx) error {
		if err := write(tx); err != nil {
			return err
		}
		return coded
	})
	if err != coded {
		t.Errorf("InTx = %v; want the function's *checkout.Error as it was", err)
	}
	checkNothingWritten()

	// A store error inside the transaction, returned by fn, rolls back the
	// writes before it.
	err = db.InTx(ctx, func(tx checkout.Tx) error {
		if err := write(tx); err != nil {
			return err
		}
		return tx.MerchantInsert(ctx, m) // taken
	})
	wantCode(t, "InTx ending in a conflict", err, checkout.EConflict)
	checkNothingWritten()

	// The store still takes writes afterwards.
	newMerchant(t, db, "After", base)
}

// A function that panics rolls its transaction back and the panic goes on;
// the store is not left holding the transaction (on SQLite, the one write
// connection) and takes the next write.
func testInTxRollbackOnPanic(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := &checkout.Merchant{ID: checkout.NewStoreID(), Name: "Never", Currency: "USD", StatementDescriptor: "NEVER", CreatedAt: base}
	func() {
		defer func() {
			if p := recover(); p != "boom" {
				t.Errorf("recovered %v; want the function's panic", p)
			}
		}()
		db.InTx(ctx, func(tx checkout.Tx) error {
			if err := tx.MerchantInsert(ctx, m); err != nil {
				return err
			}
			panic("boom")
		})
	}()
	if _, err := db.MerchantGet(ctx, m.ID); !checkout.IsCode(err, checkout.EStoreNotFound) {
		t.Errorf("MerchantGet after a panic = %v; want store_not_found", err)
	}
	tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	err := db.InTx(tctx, func(tx checkout.Tx) error { return tx.MerchantInsert(tctx, m) })
	if err != nil {
		t.Errorf("InTx after a panic = %v; want the store to take writes", err)
	}
}

// Reads outside the transaction see committed data only.
func testInTxIsolation(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	s := newSession(m, nil)
	inTx(t, db, func(tx checkout.Tx) error {
		if err := tx.SessionInsert(ctx, s); err != nil {
			return err
		}
		if _, err := db.SessionGet(ctx, s.ID); !checkout.IsCode(err, checkout.ECheckoutNotFound) {
			t.Errorf("SessionGet of an uncommitted session = %v; want checkout_not_found", err)
		}
		// The transaction sees its own writes.
		got, err := tx.SessionGetForUpdate(ctx, s.ID)
		if err != nil || got.ID != s.ID {
			t.Errorf("SessionGetForUpdate of its own insert = %v, %v", got, err)
		}
		return nil
	})
	if _, err := db.SessionGet(ctx, s.ID); err != nil {
		t.Errorf("SessionGet after commit = %v", err)
	}
}

// After Close the store refuses work with service_unavailable rather than
// hang or panic.
func testClose(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	if err := db.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
	if err := db.Ping(ctx); !checkout.IsCode(err, checkout.EUnavailable) {
		t.Errorf("Ping after Close = %v; want service_unavailable", err)
	}
	if _, err := db.MerchantGet(ctx, m.ID); !checkout.IsCode(err, checkout.EUnavailable) {
		t.Errorf("MerchantGet after Close = %v; want service_unavailable", err)
	}
	if _, err := db.SessionGet(ctx, "cs_"+strings.Repeat("0", 64)); !checkout.IsCode(err, checkout.EUnavailable) {
		t.Errorf("SessionGet after Close = %v; want service_unavailable", err)
	}
	if err := db.InTx(ctx, func(tx checkout.Tx) error { return nil }); !checkout.IsCode(err, checkout.EUnavailable) {
		t.Errorf("InTx after Close = %v; want service_unavailable", err)
	}
}

// APIKeyListSealed lists the keys with a sealed secret, revoked ones too,
// oldest first; APIKeySetSealed replaces one's, and refuses an unknown key.
func testAPIKeySealed(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	newKey(t, db, m.ID, checkout.ModeTest, base) // a bearer key: nothing sealed
	var hmacs []*checkout.APIKey
	for i := range 2 {
		k := &checkout.APIKey{ID: checkout.NewAPIKeyID(), MerchantID: m.ID, Mode: checkout.ModeTest, Type: checkout.KeyHMAC,
			Permissions: []checkout.Permission{checkout.PermCheckoutsWrite}, SecretHash: checkout.HashSecret(checkout.NewSecret()),
			SecretHint: "abcd", CreatedAt: base.Add(time.Duration(i) * time.Second), SealedSecret: fmt.Sprintf("v1.old.%d", i)}
		inTx(t, db, func(tx checkout.Tx) error { return tx.APIKeyInsert(ctx, k) })
		hmacs = append(hmacs, k)
	}
	inTx(t, db, func(tx checkout.Tx) error { return tx.APIKeyRevoke(ctx, hmacs[1].ID, base) })
	inTx(t, db, func(tx checkout.Tx) error {
		ks, err := tx.APIKeyListSealed(ctx)
		if err != nil {
			return err
		}
		if len(ks) != 2 || ks[0].ID != hmacs[0].ID || ks[1].ID != hmacs[1].ID || !ks[1].Revoked() {
			t.Errorf("APIKeyListSealed = %v; want both HMAC keys, oldest first, the revoked one too", ks)
		}
		for i, k := range ks {
			if err := tx.APIKeySetSealed(ctx, k.ID, fmt.Sprintf("v1.new.%d", i)); err != nil {
				return err
			}
		}
		wantCode(t, "APIKeySetSealed(unknown)", tx.APIKeySetSealed(ctx, checkout.NewAPIKeyID(), "v1.x"), checkout.ENotFound)
		return nil
	})
	for i, k := range hmacs {
		if got, err := db.APIKeyGet(ctx, k.ID); err != nil || got.SealedSecret != fmt.Sprintf("v1.new.%d", i) {
			t.Errorf("after APIKeySetSealed, key %d's sealed secret = %q, %v", i, got.SealedSecret, err)
		}
	}
}

package service_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/password"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

const goodPassword = "correct horse battery staple"

var accountID = regexp.MustCompile(`^acct_[0-9a-f]{32}$`)

func wantError(t *testing.T, what string, err error, code, param string) {
	t.Helper()
	ce, ok := err.(*checkout.Error)
	if !ok || ce.Code != code || ce.Param != param {
		t.Errorf("%s = %v; want %s on %q", what, err, code, param)
	}
}

func TestCreateAccount(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		f.clock.Advance(1500 * time.Millisecond)
		a, err := f.svc.CreateAccount(ctx, "  Ann.Lee@Example.COM ", goodPassword)
		if err != nil {
			t.Fatalf("CreateAccount = %v", err)
		}
		if !accountID.MatchString(a.ID) || a.Email != "ann.lee@example.com" || !a.CreatedAt.Equal(t0.Add(time.Second)) {
			t.Errorf("CreateAccount = %+v; want acct_ and 32 hex, the email normalised, created at %v", a, t0.Add(time.Second))
		}
		if !strings.HasPrefix(a.PasswordHash, "$argon2id$v=19$m=19456,t=2,p=1$") || strings.Contains(a.PasswordHash, goodPassword) {
			t.Errorf("PasswordHash = %q; want an argon2id PHC string", a.PasswordHash)
		}
		got, err := db.AccountGetByEmail(ctx, "ann.lee@example.com")
		if err != nil || got.ID != a.ID || got.PasswordHash != a.PasswordHash {
			t.Fatalf("the stored account = %+v, %v; want %+v", got, err, a)
		}
		if ok, err := password.Verify(goodPassword, got.PasswordHash); !ok || err != nil {
			t.Errorf("the stored hash does not verify the password: %v, %v", ok, err)
		}

		// The same email in another spelling is the same account.
		_, err = f.svc.CreateAccount(ctx, "ANN.LEE@example.com", "another password entirely")
		wantError(t, "CreateAccount(taken email)", err, checkout.EAccountExists, "email")
		if err != nil && !strings.Contains(err.Error(), "ann.lee@example.com") {
			t.Errorf("the conflict %q does not name the email", err)
		}
		// Another email is another account.
		if b, err := f.svc.CreateAccount(ctx, "bob@example.com", goodPassword); err != nil || b.ID == a.ID || b.PasswordHash == a.PasswordHash {
			t.Errorf("CreateAccount(bob) = %+v, %v; want a second account with a hash of its own (own salt)", b, err)
		}
	})
}

func TestCreateAccountInvalid(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		tests := []struct {
			email, pw string
			params    []string // every offending param, in order; none when accepted
		}{
			{"ann@example.com", strings.Repeat("a", 11), []string{"password"}},
			{"ann@example.com", strings.Repeat("é", 11), []string{"password"}}, // 22 bytes, 11 characters
			{"a1@example.com", strings.Repeat("é", 12), nil},
			{"a2@example.com", strings.Repeat("a", password.MaxBytes), nil},
			{"ann@example.com", strings.Repeat("a", password.MaxBytes+1), []string{"password"}},
			{"", goodPassword, []string{"email"}},
			{"not an email", goodPassword, []string{"email"}},
			{"ann@localhost", goodPassword, []string{"email"}},
			{"Ann <ann@example.com>", goodPassword, []string{"email"}},
			{"a@b.co," + "c@d.co", goodPassword, []string{"email"}},
			{strings.Repeat("a", 250) + "@example.com", goodPassword, []string{"email"}},
			{"nope", "short", []string{"email", "password"}},
		}
		for _, tt := range tests {
			a, err := f.svc.CreateAccount(ctx, tt.email, tt.pw)
			if tt.params == nil {
				if err != nil {
					t.Errorf("CreateAccount(%q, %d bytes) = %v; want it accepted", tt.email, len(tt.pw), err)
				}
				continue
			}
			ce, ok := err.(*checkout.Error)
			if !ok || ce.Code != checkout.EValidationFailed || ce.Param != tt.params[0] || len(ce.Details) != len(tt.params) {
				t.Errorf("CreateAccount(%q, %d bytes) = %+v, %v; want validation_failed on %v", tt.email, len(tt.pw), a, err, tt.params)
				continue
			}
			for i, p := range tt.params {
				if ce.Details[i].Param != p {
					t.Errorf("CreateAccount(%q): detail %d on %q; want %q", tt.email, i, ce.Details[i].Param, p)
				}
			}
		}
		if _, err := db.AccountGetByEmail(ctx, "ann@example.com"); !checkout.IsCode(err, checkout.ENotFound) {
			t.Errorf("a refused account was stored: %v", err)
		}
	})
}

func TestAddMember(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		ann := f.account(t, "ann@example.com")
		m, added, err := f.svc.AddMember(ctx, f.m.ID, " ANN@example.com", checkout.RoleAdministrator)
		if err != nil || !added || m.AccountID != ann.ID || m.MerchantID != f.m.ID || !m.CreatedAt.Equal(t0) {
			t.Fatalf("AddMember = %+v, %v, %v; want ann added to %s at %v", m, added, err, f.m.ID, t0)
		}
		same := func(a, b *checkout.Membership) bool {
			return a != nil && b != nil && a.AccountID == b.AccountID && a.MerchantID == b.MerchantID && a.CreatedAt.Equal(b.CreatedAt)
		}
		if got, err := db.MembershipGet(ctx, ann.ID, f.m.ID); err != nil || !same(got, m) {
			t.Errorf("MembershipGet = %+v, %v; want %+v", got, err, m)
		}

		// Again: nothing changes, and it succeeds with the first membership.
		f.clock.Advance(time.Hour)
		again, added, err := f.svc.AddMember(ctx, f.m.ID, "ann@example.com", checkout.RoleAdministrator)
		if err != nil || added || !same(again, m) {
			t.Errorf("AddMember again = %+v, %v, %v; want the first membership, not added", again, added, err)
		}

		// An account may have several stores.
		other, err := f.svc.CreateMerchant(ctx, checkout.MerchantParams{Name: "Other", Currency: "EUR"})
		if err != nil {
			t.Fatal(err)
		}
		if _, added, err := f.svc.AddMember(ctx, other.ID, "ann@example.com", checkout.RoleAdministrator); err != nil || !added {
			t.Errorf("AddMember(another store) = %v, %v", added, err)
		}
		if ms, err := db.MembershipList(ctx, ann.ID); err != nil || len(ms) != 2 {
			t.Errorf("MembershipList = %d, %v; want 2", len(ms), err)
		}

		_, _, err = f.svc.AddMember(ctx, checkout.NewStoreID(), "ann@example.com", checkout.RoleAdministrator)
		wantError(t, "AddMember(unknown store)", err, checkout.EStoreNotFound, "")
		_, _, err = f.svc.AddMember(ctx, "acme", "ann@example.com", checkout.RoleAdministrator)
		wantError(t, "AddMember(malformed store id)", err, checkout.EStoreNotFound, "")
		_, _, err = f.svc.AddMember(ctx, f.m.ID, "bob@example.com", checkout.RoleAdministrator)
		wantError(t, "AddMember(email without an account)", err, checkout.EAccountNotFound, "email")
		_, _, err = f.svc.AddMember(ctx, f.m.ID, "bob", checkout.RoleAdministrator)
		wantError(t, "AddMember(not an email)", err, checkout.EValidationFailed, "email")
	})
}

func TestVerifyPassword(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		ann := f.account(t, "ann@example.com")
		got, err := f.svc.VerifyPassword(ctx, " Ann@Example.com", goodPassword)
		if err != nil || got.ID != ann.ID {
			t.Errorf("VerifyPassword(right) = %+v, %v; want ann", got, err)
		}

		// A wrong password and an unknown email: the same error, and the
		// same work (one argon2id hash each), so nothing tells them apart.
		var answers []string
		for _, c := range []struct{ email, pw string }{
			{"ann@example.com", goodPassword + "!"},
			{"ann@example.com", ""},
			{"nobody@example.com", goodPassword},
			{"not an email", goodPassword},
		} {
			before := password.Derivations()
			a, err := f.svc.VerifyPassword(ctx, c.email, c.pw)
			if a != nil || !checkout.IsCode(err, checkout.EInvalidCredentials) {
				t.Errorf("VerifyPassword(%q, %q) = %+v, %v; want invalid_credentials", c.email, c.pw, a, err)
				continue
			}
			if n := password.Derivations() - before; n != 1 {
				t.Errorf("VerifyPassword(%q, %q) computed %d hashes; want 1, as every failure", c.email, c.pw, n)
			}
			answers = append(answers, err.Error())
		}
		for _, a := range answers[1:] {
			if a != answers[0] {
				t.Errorf("failures answer %q and %q; want one answer", answers[0], a)
			}
		}

		// Too long for any account: refused without hashing, whatever the
		// email.
		for _, email := range []string{"ann@example.com", "nobody@example.com"} {
			before := password.Derivations()
			_, err := f.svc.VerifyPassword(ctx, email, strings.Repeat("a", password.MaxBytes+1))
			if !checkout.IsCode(err, checkout.EInvalidCredentials) || password.Derivations() != before {
				t.Errorf("VerifyPassword(%s, too long) = %v after %d hashes; want invalid_credentials, no hash", email, err, password.Derivations()-before)
			}
		}
	})
}

// A hash the service cannot read (damaged in the database) fails as a wrong
// password would, and is logged for the operator.
func TestVerifyPasswordDamagedHash(t *testing.T) {
	db := storetest.Open(t, "sqlite")
	f := newFixture(t, db)
	ctx := context.Background()
	a := &checkout.Account{ID: checkout.NewAccountID(), Email: "ann@example.com", PasswordHash: "$argon2id$v=19$m=1,t=1,p=1$x$y", CreatedAt: t0}
	if err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.AccountInsert(ctx, a) }); err != nil {
		t.Fatal(err)
	}
	if got, err := f.svc.VerifyPassword(ctx, "ann@example.com", goodPassword); got != nil || !checkout.IsCode(err, checkout.EInvalidCredentials) {
		t.Errorf("VerifyPassword(damaged hash) = %+v, %v; want invalid_credentials", got, err)
	}
}

func TestStoresOfAnAccount(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		ann := f.account(t, "ann@example.com")
		bob := f.account(t, "bob@example.com")

		_, err := f.svc.CreateStore(ctx, ann.ID, checkout.MerchantParams{Name: "", Currency: "XXQ"})
		wantError(t, "CreateStore(no name, bad currency)", err, checkout.EValidationFailed, "name")
		if ce, ok := err.(*checkout.Error); !ok || len(ce.Details) != 2 {
			t.Errorf("CreateStore(no name, bad currency) = %v; want a violation for each field", err)
		}
		m, err := f.svc.CreateStore(ctx, ann.ID, checkout.MerchantParams{Name: "Ann's shop", Currency: "eur", Website: "https://ann.example"})
		if err != nil || m.Currency != "EUR" || m.StatementDescriptor != "ANNS SHOP" {
			t.Fatalf("CreateStore = %+v, %v", m, err)
		}
		if got, err := f.svc.StoreOf(ctx, ann.ID, m.ID); err != nil || got.ID != m.ID {
			t.Errorf("StoreOf(creator) = %+v, %v; want the store: its creator is a member", got, err)
		}
		stores, err := f.svc.AccountStores(ctx, ann.ID)
		if err != nil || len(stores) != 1 || stores[0].ID != m.ID {
			t.Errorf("AccountStores(ann) = %v, %v", stores, err)
		}

		// Another account's store and no store at all look the same.
		_, errOther := f.svc.StoreOf(ctx, bob.ID, m.ID)
		_, errNone := f.svc.StoreOf(ctx, bob.ID, "store_nothere")
		wantError(t, "StoreOf(not a member)", errOther, checkout.EStoreNotFound, "")
		if checkout.ErrorMessage(errNone) != strings.ReplaceAll(checkout.ErrorMessage(errOther), m.ID, "store_nothere") {
			t.Errorf("the refusals differ: %q and %q", errOther, errNone)
		}
		if _, err := f.svc.UpdateStore(ctx, bob.ID, m.ID, checkout.MerchantParams{Name: "Bob's now", Currency: "USD"}); !checkout.IsCode(err, checkout.EStoreNotFound) {
			t.Errorf("UpdateStore(not a member) = %v; want store_not_found", err)
		}

		up, err := f.svc.UpdateStore(ctx, ann.ID, m.ID, checkout.MerchantParams{Name: "Ann's games", Currency: "GBP", StatementDescriptor: "ANN GAMES"})
		if err != nil || up.ID != m.ID || up.Name != "Ann's games" || up.Currency != "GBP" || up.Website != "" ||
			up.StatementDescriptor != "ANN GAMES" || !up.CreatedAt.Equal(m.CreatedAt) || up.Pricing != m.Pricing {
			t.Errorf("UpdateStore = %+v, %v", up, err)
		}
		_, err = f.svc.UpdateStore(ctx, ann.ID, m.ID, checkout.MerchantParams{Name: "x", Currency: "GBP", Website: "http://plain.example"})
		wantError(t, "UpdateStore(http website)", err, checkout.EValidationFailed, "website")
		if got, _ := db.MerchantGet(ctx, m.ID); got.Name != "Ann's games" {
			t.Errorf("a refused update changed the store: %+v", got)
		}
	})
}

// A hash made under parameters other than the current ones is replaced by
// one under them at the next successful sign-in, and only then.
func TestVerifyPasswordRehashes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		a := f.account(t, "ann@example.com")
		old := password.HashWith(goodPassword, password.Params{Memory: 8 * 1024, Time: 1, Threads: 1})
		if err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.AccountSetPasswordHash(ctx, a.ID, old) }); err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.VerifyPassword(ctx, "ann@example.com", "not the password at all"); !checkout.IsCode(err, checkout.EInvalidCredentials) {
			t.Fatalf("a wrong password = %v", err)
		}
		if got, _ := db.AccountGet(ctx, a.ID); got.PasswordHash != old {
			t.Fatal("a failed sign-in rehashed the password")
		}
		if _, err := f.svc.VerifyPassword(ctx, "ann@example.com", goodPassword); err != nil {
			t.Fatalf("VerifyPassword = %v", err)
		}
		got, _ := db.AccountGet(ctx, a.ID)
		if got.PasswordHash == old || password.NeedsRehash(got.PasswordHash) {
			t.Fatalf("after a sign-in the hash is %s; want one under the current parameters", got.PasswordHash)
		}
		if ok, err := password.Verify(goodPassword, got.PasswordHash); !ok || err != nil {
			t.Errorf("the new hash does not verify the password: %v, %v", ok, err)
		}
		if _, err := f.svc.VerifyPassword(ctx, "ann@example.com", goodPassword); err != nil {
			t.Errorf("signing in again = %v", err)
		}
	})
}

// account creates an account with goodPassword.
func (f *fixture) account(t *testing.T, email string) *checkout.Account {
	t.Helper()
	a, err := f.svc.CreateAccount(context.Background(), email, goodPassword)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

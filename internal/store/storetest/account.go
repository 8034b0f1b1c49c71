package storetest

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
)

// accountTests are the conformance tests of dashboard accounts and their
// memberships of stores.
var accountTests = []struct {
	name string
	fn   func(t *testing.T, db *store.DB)
}{
	{"Account/RoundTrip", testAccountRoundTrip},
	{"Account/NotFound", testAccountNotFound},
	{"Account/Conflict", testAccountConflict},
	{"Account/SetPasswordHash", testAccountSetPasswordHash},
	{"Membership/RoundTrip", testMembershipRoundTrip},
	{"Membership/Conflict", testMembershipConflict},
	{"Membership/UnknownAccountOrStore", testMembershipUnknown},
	{"Membership/Roles", testMembershipRoles},
	{"Invitation/Lifecycle", testInvitationLifecycle},
}

// A stand-in for a PHC string: the store keeps whatever it is given.
const phc = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0c2FsdA$a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2U"

func newAccount(t *testing.T, db *store.DB, email string, created time.Time) *checkout.Account {
	t.Helper()
	a := &checkout.Account{ID: checkout.NewAccountID(), Email: email, PasswordHash: phc, CreatedAt: created}
	inTx(t, db, func(tx checkout.Tx) error { return tx.AccountInsert(context.Background(), a) })
	return a
}

func addMember(t *testing.T, db *store.DB, a *checkout.Account, m *checkout.Merchant, created time.Time) *checkout.Membership {
	t.Helper()
	ms := &checkout.Membership{AccountID: a.ID, MerchantID: m.ID, Role: checkout.RoleAdministrator, CreatedAt: created}
	inTx(t, db, func(tx checkout.Tx) error { return tx.MembershipInsert(context.Background(), ms) })
	return ms
}

func testAccountRoundTrip(t *testing.T, db *store.DB) {
	ctx := context.Background()
	for _, want := range []*checkout.Account{
		newAccount(t, db, "ann@example.com", base),
		newAccount(t, db, "o'brien+shop@xn--bcher-kva.example", base.Add(time.Second)),
	} {
		got, err := db.AccountGet(ctx, want.ID)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("AccountGet = %+v, %v; want %+v", got, err, want)
		}
		got, err = db.AccountGetByEmail(ctx, want.Email)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("AccountGetByEmail(%s) = %+v, %v; want %+v", want.Email, got, err, want)
		}
	}
}

func testAccountNotFound(t *testing.T, db *store.DB) {
	ctx := context.Background()
	newAccount(t, db, "ann@example.com", base)
	_, err := db.AccountGet(ctx, checkout.NewAccountID())
	wantCode(t, "AccountGet(unknown)", err, checkout.ENotFound)
	_, err = db.AccountGetByEmail(ctx, "bob@example.com")
	wantCode(t, "AccountGetByEmail(unknown)", err, checkout.ENotFound)
	// The store matches exactly; normalising is the caller's work.
	_, err = db.AccountGetByEmail(ctx, "Ann@example.com")
	wantCode(t, "AccountGetByEmail(another case)", err, checkout.ENotFound)
}

func testAccountConflict(t *testing.T, db *store.DB) {
	ctx := context.Background()
	a := newAccount(t, db, "ann@example.com", base)

	sameEmail := &checkout.Account{ID: checkout.NewAccountID(), Email: a.Email, PasswordHash: phc, CreatedAt: base}
	err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.AccountInsert(ctx, sameEmail) })
	wantCode(t, "AccountInsert(taken email)", err, checkout.EConflict)

	sameID := &checkout.Account{ID: a.ID, Email: "bob@example.com", PasswordHash: phc, CreatedAt: base}
	err = db.InTx(ctx, func(tx checkout.Tx) error { return tx.AccountInsert(ctx, sameID) })
	wantCode(t, "AccountInsert(taken id)", err, checkout.EConflict)

	if _, err := db.AccountGet(ctx, sameEmail.ID); !checkout.IsCode(err, checkout.ENotFound) {
		t.Errorf("the refused account was stored: %v", err)
	}
	if _, err := db.AccountGetByEmail(ctx, "bob@example.com"); !checkout.IsCode(err, checkout.ENotFound) {
		t.Errorf("the refused account was stored: %v", err)
	}
}

func testMembershipRoundTrip(t *testing.T, db *store.DB) {
	ctx := context.Background()
	ann := newAccount(t, db, "ann@example.com", base)
	bob := newAccount(t, db, "bob@example.com", base)
	loner := newAccount(t, db, "loner@example.com", base)
	acme := newMerchant(t, db, "Acme", base)
	other := newMerchant(t, db, "Other", base)

	// A store with several accounts, an account with several stores.
	annOther := addMember(t, db, ann, other, base.Add(2*time.Second))
	annAcme := addMember(t, db, ann, acme, base.Add(time.Second))
	bobAcme := addMember(t, db, bob, acme, base.Add(3*time.Second))

	got, err := db.MembershipList(ctx, ann.ID)
	if want := []*checkout.Membership{annAcme, annOther}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("MembershipList(ann) = %+v, %v; want oldest first %+v", got, err, want)
	}
	got, err = db.MembershipList(ctx, bob.ID)
	if want := []*checkout.Membership{bobAcme}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("MembershipList(bob) = %+v, %v; want %+v", got, err, want)
	}
	got, err = db.MembershipList(ctx, loner.ID)
	if err != nil || len(got) != 0 {
		t.Errorf("MembershipList(no stores) = %+v, %v; want none", got, err)
	}

	m, err := db.MembershipGet(ctx, bob.ID, acme.ID)
	if err != nil || !reflect.DeepEqual(m, bobAcme) {
		t.Errorf("MembershipGet(bob, acme) = %+v, %v; want %+v", m, err, bobAcme)
	}
	_, err = db.MembershipGet(ctx, bob.ID, other.ID)
	wantCode(t, "MembershipGet(bob, a store he is not a member of)", err, checkout.ENotFound)
	_, err = db.MembershipGet(ctx, checkout.NewAccountID(), acme.ID)
	wantCode(t, "MembershipGet(unknown account)", err, checkout.ENotFound)
	_, err = db.MembershipGet(ctx, ann.ID, checkout.NewStoreID())
	wantCode(t, "MembershipGet(unknown store)", err, checkout.ENotFound)
}

func testMembershipConflict(t *testing.T, db *store.DB) {
	ctx := context.Background()
	a := newAccount(t, db, "ann@example.com", base)
	m := newMerchant(t, db, "Acme", base)
	first := addMember(t, db, a, m, base)
	again := &checkout.Membership{AccountID: a.ID, MerchantID: m.ID, Role: checkout.RoleViewer, CreatedAt: base.Add(time.Hour)}
	err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.MembershipInsert(ctx, again) })
	wantCode(t, "MembershipInsert twice", err, checkout.EConflict)
	got, err := db.MembershipList(ctx, a.ID)
	if want := []*checkout.Membership{first}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("after a second insert, MembershipList = %+v, %v; want the first only", got, err)
	}
}

// A membership names an account and a store that exist. Both databases
// refuse others; what the refusal is called does not matter to the service,
// which reads both first.
func testMembershipUnknown(t *testing.T, db *store.DB) {
	ctx := context.Background()
	a := newAccount(t, db, "ann@example.com", base)
	m := newMerchant(t, db, "Acme", base)
	for name, ms := range map[string]*checkout.Membership{
		"unknown store":   {AccountID: a.ID, MerchantID: checkout.NewStoreID(), Role: checkout.RoleViewer, CreatedAt: base},
		"unknown account": {AccountID: checkout.NewAccountID(), MerchantID: m.ID, Role: checkout.RoleViewer, CreatedAt: base},
		"unknown role":    {AccountID: a.ID, MerchantID: m.ID, Role: "owner", CreatedAt: base},
	} {
		if err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.MembershipInsert(ctx, ms) }); err == nil {
			t.Errorf("MembershipInsert(%s) = nil; want an error", name)
		}
	}
	if got, err := db.MembershipList(ctx, a.ID); err != nil || len(got) != 0 {
		t.Errorf("MembershipList = %+v, %v; want none", got, err)
	}
}

func testAccountSetPasswordHash(t *testing.T, db *store.DB) {
	ctx := context.Background()
	a := newAccount(t, db, "ann@example.com", base)
	b := newAccount(t, db, "bob@example.com", base)
	const rehashed = "$argon2id$v=19$m=65536,t=3,p=1$c2FsdHNhbHRzYWx0c2FsdA$a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2U"
	inTx(t, db, func(tx checkout.Tx) error { return tx.AccountSetPasswordHash(ctx, a.ID, rehashed) })
	if got, err := db.AccountGet(ctx, a.ID); err != nil || got.PasswordHash != rehashed || got.Email != a.Email {
		t.Errorf("after AccountSetPasswordHash, AccountGet = %+v, %v", got, err)
	}
	if got, _ := db.AccountGet(ctx, b.ID); got.PasswordHash != phc {
		t.Errorf("AccountSetPasswordHash changed another account: %+v", got)
	}
	err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.AccountSetPasswordHash(ctx, checkout.NewAccountID(), rehashed) })
	wantCode(t, "AccountSetPasswordHash(unknown)", err, checkout.ENotFound)
}

// A store's members, with their roles and emails; a role changed, a member
// removed; a store's list read for update in a transaction.
func testMembershipRoles(t *testing.T, db *store.DB) {
	ctx := context.Background()
	ann := newAccount(t, db, "ann@example.com", base)
	bob := newAccount(t, db, "bob@example.com", base)
	acme := newMerchant(t, db, "Acme", base)
	other := newMerchant(t, db, "Other", base)
	addMember(t, db, ann, acme, base)
	addMember(t, db, bob, acme, base.Add(time.Second))
	addMember(t, db, bob, other, base)

	inTx(t, db, func(tx checkout.Tx) error { return tx.MembershipSetRole(ctx, bob.ID, acme.ID, checkout.RoleSupport) })
	want := []*checkout.Membership{
		{AccountID: ann.ID, MerchantID: acme.ID, Role: checkout.RoleAdministrator, CreatedAt: base, Email: ann.Email},
		{AccountID: bob.ID, MerchantID: acme.ID, Role: checkout.RoleSupport, CreatedAt: base.Add(time.Second), Email: bob.Email},
	}
	if got, err := db.MembershipListByStore(ctx, acme.ID); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("MembershipListByStore = %+v, %v; want %+v", got, err, want)
	}
	inTx(t, db, func(tx checkout.Tx) error {
		got, err := tx.MembershipListForUpdate(ctx, acme.ID)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("MembershipListForUpdate = %+v, %v; want %+v", got, err, want)
		}
		return nil
	})
	if m, err := db.MembershipGet(ctx, bob.ID, other.ID); err != nil || m.Role != checkout.RoleAdministrator {
		t.Errorf("bob's role in another store = %+v, %v; want it unchanged", m, err)
	}
	err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.MembershipSetRole(ctx, bob.ID, acme.ID, "owner") })
	if err == nil {
		t.Error("MembershipSetRole(an unknown role) = nil; want an error")
	}
	err = db.InTx(ctx, func(tx checkout.Tx) error {
		return tx.MembershipSetRole(ctx, checkout.NewAccountID(), acme.ID, checkout.RoleViewer)
	})
	wantCode(t, "MembershipSetRole(no member)", err, checkout.ENotFound)

	inTx(t, db, func(tx checkout.Tx) error { return tx.MembershipDelete(ctx, bob.ID, acme.ID) })
	if _, err := db.MembershipGet(ctx, bob.ID, acme.ID); !checkout.IsCode(err, checkout.ENotFound) {
		t.Errorf("MembershipGet after MembershipDelete = %v; want not_found", err)
	}
	if _, err := db.MembershipGet(ctx, bob.ID, other.ID); err != nil {
		t.Errorf("bob's membership of another store after his removal from acme: %v", err)
	}
	err = db.InTx(ctx, func(tx checkout.Tx) error { return tx.MembershipDelete(ctx, bob.ID, acme.ID) })
	wantCode(t, "MembershipDelete twice", err, checkout.ENotFound)
}

// An invitation stored, found by its token's hash, listed while pending,
// accepted once, and revoked only while pending.
func testInvitationLifecycle(t *testing.T, db *store.DB) {
	ctx := context.Background()
	ann := newAccount(t, db, "ann@example.com", base)
	acme := newMerchant(t, db, "Acme", base)
	other := newMerchant(t, db, "Other", base)
	newInv := func(email string, created time.Time) *checkout.Invitation {
		inv := &checkout.Invitation{ID: checkout.NewInvitationID(), MerchantID: acme.ID, Email: email, Role: checkout.RoleSupport,
			TokenHash: checkout.NewID("h", 16), InvitedBy: "cli", CreatedAt: created, ExpiresAt: created.Add(checkout.InvitationTTL)}
		inTx(t, db, func(tx checkout.Tx) error { return tx.InvitationInsert(ctx, inv) })
		return inv
	}
	first := newInv("ann@example.com", base)
	second := newInv("bob@example.com", base.Add(time.Second))
	if got, err := db.InvitationGetByHash(ctx, first.TokenHash); err != nil || !reflect.DeepEqual(got, first) {
		t.Errorf("InvitationGetByHash = %+v, %v; want %+v", got, err, first)
	}
	_, err := db.InvitationGetByHash(ctx, "nothere")
	wantCode(t, "InvitationGetByHash(unknown)", err, checkout.ENotFound)
	got, err := db.InvitationListPending(ctx, acme.ID, base.Add(time.Minute))
	if err != nil || len(got) != 2 || got[0].ID != second.ID || got[1].ID != first.ID {
		t.Errorf("InvitationListPending = %+v, %v; want newest first", got, err)
	}
	if got, _ := db.InvitationListPending(ctx, acme.ID, first.ExpiresAt); len(got) != 1 || got[0].ID != second.ID {
		t.Errorf("InvitationListPending at the first's expiry = %+v; want the second only", got)
	}
	if got, _ := db.InvitationListPending(ctx, other.ID, base); len(got) != 0 {
		t.Errorf("another store's pending invitations = %+v; want none", got)
	}

	at := base.Add(time.Hour)
	inTx(t, db, func(tx checkout.Tx) error { return tx.InvitationAccept(ctx, first.ID, ann.ID, at) })
	err = db.InTx(ctx, func(tx checkout.Tx) error { return tx.InvitationAccept(ctx, first.ID, ann.ID, at) })
	wantCode(t, "InvitationAccept twice", err, checkout.ENotFound)
	if got, _ := db.InvitationGetByHash(ctx, first.TokenHash); got.AcceptedAt == nil || !got.AcceptedAt.Equal(at) || got.AcceptedBy != ann.ID {
		t.Errorf("the accepted invitation = %+v", got)
	}
	err = db.InTx(ctx, func(tx checkout.Tx) error { return tx.InvitationRevoke(ctx, first.ID, acme.ID, at) })
	wantCode(t, "InvitationRevoke(accepted)", err, checkout.ENotFound)
	err = db.InTx(ctx, func(tx checkout.Tx) error { return tx.InvitationRevoke(ctx, second.ID, other.ID, at) })
	wantCode(t, "InvitationRevoke(another store's)", err, checkout.ENotFound)
	inTx(t, db, func(tx checkout.Tx) error { return tx.InvitationRevoke(ctx, second.ID, acme.ID, at) })
	err = db.InTx(ctx, func(tx checkout.Tx) error { return tx.InvitationAccept(ctx, second.ID, ann.ID, at) })
	wantCode(t, "InvitationAccept(revoked)", err, checkout.ENotFound)
	late := newInv("carl@example.com", base)
	err = db.InTx(ctx, func(tx checkout.Tx) error { return tx.InvitationAccept(ctx, late.ID, ann.ID, late.ExpiresAt) })
	wantCode(t, "InvitationAccept(expired)", err, checkout.ENotFound)
	if got, _ := db.InvitationListPending(ctx, acme.ID, at); len(got) != 1 || got[0].ID != late.ID {
		t.Errorf("InvitationListPending after accept and revoke = %+v; want the third only", got)
	}
}

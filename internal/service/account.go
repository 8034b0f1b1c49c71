package service

import (
	"context"
	"strconv"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/password"
)

// CreateAccount creates a dashboard account. The email is normalised
// (checkout.NormalizeEmail) and must be one address, as a session's
// customer.email; the password must pass password.Check. Every problem is
// reported at once (validation_failed, param email or password); an email
// that has an account already fails with account_exists.
func (s *Service) CreateAccount(ctx context.Context, email, pw string) (*checkout.Account, error) {
	return s.createAccount(ctx, email, pw, nil)
}

// createAccount is CreateAccount, running before in the transaction that
// inserts the account when it is not nil.
func (s *Service) createAccount(ctx context.Context, email, pw string, before func(tx checkout.Tx) error) (*checkout.Account, error) {
	email = checkout.NormalizeEmail(email)
	var details []checkout.Violation
	if msg := checkout.CheckEmail(email); msg != "" {
		details = append(details, checkout.Violation{Code: "invalid_email", Param: "email", Message: "email " + msg})
	}
	if err := password.Check(pw); err != nil {
		details = append(details, err.(*checkout.Error).Details...)
	}
	if len(details) > 0 {
		return nil, validationError(details)
	}
	a := &checkout.Account{ID: checkout.NewAccountID(), Email: email, PasswordHash: password.Hash(pw), CreatedAt: s.now().Truncate(time.Second)}
	// At the first account's setup nobody is signed in: the account
	// creates itself.
	by := s.origin(ctx).Actor
	if by.Kind == "" {
		by = checkout.Actor{Kind: checkout.ActorAccount, ID: a.ID, Name: a.Email}
	}
	err := s.store.InTx(ctx, func(tx checkout.Tx) error {
		if before != nil {
			if err := before(tx); err != nil {
				return err
			}
		}
		if err := tx.AccountInsert(ctx, a); err != nil {
			return err
		}
		return s.recordAs(ctx, tx, by, "", checkout.AuditAccountCreate, a.ID)
	})
	if checkout.IsCode(err, checkout.EConflict) {
		return nil, &checkout.Error{Code: checkout.EAccountExists, Param: "email",
			Message: "An account with the email " + email + " exists already."}
	}
	if err != nil {
		return nil, err
	}
	return a, nil
}

// validationError is validation_failed for every violation in details, the
// first one its message and param, as the domain's own validators answer.
func validationError(details []checkout.Violation) error {
	msg := details[0].Message
	if len(details) > 1 {
		msg += " (" + strconv.Itoa(len(details)) + " problems in all; see details.)"
	}
	return &checkout.Error{Code: checkout.EValidationFailed, Message: msg, Param: details[0].Param, Details: details}
}

// AddMember gives the account with this email access to a store, with a
// role. Adding an account that is a member already changes nothing and
// succeeds (added is false; its role stays), so a provisioning script can
// run again. An unknown store is store_not_found; an email without an
// account, account_not_found; an unknown role, validation_failed.
func (s *Service) AddMember(ctx context.Context, storeID, email string, role checkout.Role) (m *checkout.Membership, added bool, err error) {
	if err := s.authorize(ctx, storeID, checkout.ActionManageMembers); err != nil {
		return nil, false, err
	}
	email = checkout.NormalizeEmail(email)
	var details []checkout.Violation
	if msg := checkout.CheckEmail(email); msg != "" {
		details = append(details, checkout.Violation{Code: "invalid_email", Param: "email", Message: "email " + msg})
	}
	role, err = checkout.ParseRole(string(role), "role")
	if err != nil {
		details = append(details, err.(*checkout.Error).Details...)
	}
	if len(details) > 0 {
		return nil, false, validationError(details)
	}
	if _, err := s.store.MerchantGet(ctx, storeID); err != nil {
		return nil, false, err
	}
	a, err := s.store.AccountGetByEmail(ctx, email)
	if checkout.IsCode(err, checkout.ENotFound) {
		return nil, false, &checkout.Error{Code: checkout.EAccountNotFound, Param: "email",
			Message: "No account has the email " + email + "; create it first."}
	}
	if err != nil {
		return nil, false, err
	}
	m = &checkout.Membership{AccountID: a.ID, MerchantID: storeID, Role: role, CreatedAt: s.now().Truncate(time.Second), Email: a.Email}
	err = s.store.InTx(ctx, func(tx checkout.Tx) error {
		if err := tx.MembershipInsert(ctx, m); err != nil {
			return err
		}
		return s.Record(ctx, tx, storeID, checkout.AuditMemberAdd, a.ID)
	})
	if checkout.IsCode(err, checkout.EConflict) {
		m, err = s.store.MembershipGet(ctx, a.ID, storeID)
		if m != nil {
			m.Email = a.Email
		}
		return m, false, err
	}
	if err != nil {
		return nil, false, err
	}
	return m, true, nil
}

// VerifyPassword returns the account whose email and password these are.
// An unknown email and a wrong password fail alike, with
// invalid_credentials, and cost alike: for an unknown email the password is
// hashed against a dummy hash of the same parameters
// (password.VerifyDummy), so neither the answer
// nor its time tells whether the account exists. A password longer than
// password.MaxBytes fails at once, whatever the email: no account has one.
func (s *Service) VerifyPassword(ctx context.Context, email, pw string) (*checkout.Account, error) {
	invalid := checkout.Errorf(checkout.EInvalidCredentials, "The email or password is not right.")
	if len(pw) > password.MaxBytes {
		return nil, invalid
	}
	a, err := s.store.AccountGetByEmail(ctx, checkout.NormalizeEmail(email))
	if checkout.IsCode(err, checkout.ENotFound) {
		password.VerifyDummy(pw)
		return nil, invalid
	}
	if err != nil {
		return nil, err
	}
	ok, err := password.Verify(pw, a.PasswordHash)
	if err != nil {
		// An operator's problem (a hash edited or damaged in the
		// database); to the caller, the same answer as a wrong password.
		s.log.ErrorContext(ctx, "an account's stored password hash cannot be read", "account_id", a.ID, "error", err)
		return nil, invalid
	}
	if !ok {
		return nil, invalid
	}
	if password.NeedsRehash(a.PasswordHash) {
		s.rehash(ctx, a, pw)
	}
	return a, nil
}

// rehash stores a new hash of pw under the current parameters: they were
// raised since the account's hash was made. The sign-in goes on whatever
// happens; a failure is logged and the next sign-in tries again.
func (s *Service) rehash(ctx context.Context, a *checkout.Account, pw string) {
	h := password.Hash(pw)
	err := s.store.InTx(ctx, func(tx checkout.Tx) error { return tx.AccountSetPasswordHash(ctx, a.ID, h) })
	if err != nil {
		s.log.WarnContext(ctx, "store a password's hash under the current parameters", "account_id", a.ID, "error", err)
		return
	}
	a.PasswordHash = h
}

// AccountStores returns the stores an account is a member of, in the order
// it joined them.
func (s *Service) AccountStores(ctx context.Context, accountID string) ([]*checkout.Merchant, error) {
	ms, err := s.store.MembershipList(ctx, accountID)
	if err != nil {
		return nil, err
	}
	stores := make([]*checkout.Merchant, 0, len(ms))
	for _, m := range ms {
		st, err := s.store.MerchantGet(ctx, m.MerchantID)
		if err != nil {
			return nil, err
		}
		stores = append(stores, st)
	}
	return stores, nil
}

// CreateStore creates a store for a signed-in account, which becomes its
// administrator in the same transaction: a store made in the dashboard is
// never left without anyone who can open it.
func (s *Service) CreateStore(ctx context.Context, accountID string, p checkout.MerchantParams) (*checkout.Merchant, error) {
	m, err := checkout.NewMerchant(p, s.now())
	if err != nil {
		return nil, err
	}
	err = s.store.InTx(ctx, func(tx checkout.Tx) error {
		if err := tx.MerchantInsert(ctx, m); err != nil {
			return err
		}
		if err := tx.MembershipInsert(ctx, &checkout.Membership{AccountID: accountID, MerchantID: m.ID, Role: checkout.RoleAdministrator, CreatedAt: m.CreatedAt}); err != nil {
			return err
		}
		return s.Record(ctx, tx, m.ID, checkout.AuditStoreCreate, m.ID)
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// StoreOf returns a store the account is a member of. A store that does
// not exist and one the account is no member of fail alike, with
// store_not_found and the same message, so that an id tried in a URL tells
// nothing about other accounts' stores.
func (s *Service) StoreOf(ctx context.Context, accountID, storeID string) (*checkout.Merchant, error) {
	m, _, err := s.Member(ctx, accountID, storeID)
	return m, err
}

// UpdateStore changes the name, currency, website and statement descriptor
// of a store the account is an administrator of, checked by the rules of
// CreateStore. The pricing is the operator's and stays.
func (s *Service) UpdateStore(ctx context.Context, accountID, storeID string, p checkout.MerchantParams) (*checkout.Merchant, error) {
	m, ms, err := s.Member(ctx, accountID, storeID)
	if err != nil {
		return nil, err
	}
	if !ms.Role.May(checkout.ActionManageSettings) {
		return nil, checkout.Forbidden(ms.Role, checkout.ActionManageSettings)
	}
	p.Pricing = nil
	n, err := m.Updated(p)
	if err != nil {
		return nil, err
	}
	err = s.store.InTx(ctx, func(tx checkout.Tx) error {
		if err := tx.MerchantUpdate(ctx, n); err != nil {
			return err
		}
		return s.Record(ctx, tx, n.ID, checkout.AuditStoreUpdate, n.ID)
	})
	if err != nil {
		return nil, err
	}
	return n, nil
}

package service

import (
	"context"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/password"
)

// Invitations: an administrator (or the operator) invites an email to a
// store with a role. The service sends no mail: the link, which carries a
// token the database keeps only the hash of, is shown once to whoever
// invited (the dashboard's Team page, checkoutd members invite), who passes
// it on. The link works once, for checkout.InvitationTTL: opened by the
// account with that email, signed in, it joins the store; opened by
// someone without an account, it creates the account (the password rules
// of setup) and joins.

// InviteMember invites the email to a store with a role and returns the
// invitation and its link's token, which is shown this once. An email that
// is a member already is member_exists; a bad email or role,
// validation_failed.
func (s *Service) InviteMember(ctx context.Context, storeID, email string, role checkout.Role) (*checkout.Invitation, string, error) {
	if err := s.authorize(ctx, storeID, checkout.ActionManageMembers); err != nil {
		return nil, "", err
	}
	email = checkout.NormalizeEmail(email)
	var details []checkout.Violation
	if msg := checkout.CheckEmail(email); msg != "" {
		details = append(details, checkout.Violation{Code: "invalid_email", Param: "email", Message: "email " + msg})
	}
	role, err := checkout.ParseRole(string(role), "role")
	if err != nil {
		details = append(details, err.(*checkout.Error).Details...)
	}
	if len(details) > 0 {
		return nil, "", validationError(details)
	}
	if _, err := s.store.MerchantGet(ctx, storeID); err != nil {
		return nil, "", err
	}
	if a, err := s.store.AccountGetByEmail(ctx, email); err == nil {
		if _, err := s.store.MembershipGet(ctx, a.ID, storeID); err == nil {
			return nil, "", &checkout.Error{Code: checkout.EMemberExists, Param: "email",
				Message: email + " is a member of this store already; change their role instead."}
		}
	}
	by := "cli"
	if id, ok := accountOf(ctx); ok {
		by = id
	}
	token, hash := newToken()
	now := s.now().Truncate(time.Second)
	inv := &checkout.Invitation{ID: checkout.NewInvitationID(), MerchantID: storeID, Email: email, Role: role, TokenHash: hash,
		InvitedBy: by, CreatedAt: now, ExpiresAt: now.Add(checkout.InvitationTTL)}
	err = s.store.InTx(ctx, func(tx checkout.Tx) error {
		if err := tx.InvitationInsert(ctx, inv); err != nil {
			return err
		}
		return s.Record(ctx, tx, storeID, checkout.AuditInvitationCreate, inv.ID)
	})
	if err != nil {
		return nil, "", err
	}
	return inv, token, nil
}

// Invitations returns a store's invitations whose links still work, newest
// first.
func (s *Service) Invitations(ctx context.Context, storeID string) ([]*checkout.Invitation, error) {
	if err := s.authorize(ctx, storeID, checkout.ActionViewMembers); err != nil {
		return nil, err
	}
	return s.store.InvitationListPending(ctx, storeID, s.now())
}

// RevokeInvitation takes back a store's pending invitation: its link stops
// working at once. One used, revoked, expired, of another store or unknown
// is not_found.
func (s *Service) RevokeInvitation(ctx context.Context, storeID, id string) error {
	if err := s.authorize(ctx, storeID, checkout.ActionManageMembers); err != nil {
		return err
	}
	err := s.store.InTx(ctx, func(tx checkout.Tx) error {
		if err := tx.InvitationRevoke(ctx, id, storeID, s.now()); err != nil {
			return err
		}
		return s.Record(ctx, tx, storeID, checkout.AuditInvitationRevoke, id)
	})
	if checkout.IsCode(err, checkout.ENotFound) {
		return checkout.Errorf(checkout.ENotFound, "No pending invitation %s in this store.", id)
	}
	return err
}

// Invitation returns the invitation of a link's token with its store, when
// the link still works; invitation_invalid, saying why, when it does not.
func (s *Service) Invitation(ctx context.Context, token string) (*checkout.Invitation, *checkout.Merchant, error) {
	inv, err := s.store.InvitationGetByHash(ctx, tokenID(token))
	if checkout.IsCode(err, checkout.ENotFound) || token == "" {
		return nil, nil, checkout.Errorf(checkout.EInvitationInvalid, "This invitation link is not valid. Ask the store's administrator for a new one.")
	}
	if err != nil {
		return nil, nil, err
	}
	switch {
	case inv.AcceptedAt != nil:
		return nil, nil, checkout.Errorf(checkout.EInvitationInvalid, "This invitation was used already: a link works once. Sign in, or ask the store's administrator for a new one.")
	case inv.RevokedAt != nil:
		return nil, nil, checkout.Errorf(checkout.EInvitationInvalid, "This invitation was revoked. Ask the store's administrator for a new one.")
	case !inv.Pending(s.now()):
		return nil, nil, checkout.Errorf(checkout.EInvitationInvalid, "This invitation expired. Ask the store's administrator for a new one.")
	}
	m, err := s.store.MerchantGet(ctx, inv.MerchantID)
	if err != nil {
		return nil, nil, err
	}
	return inv, m, nil
}

// AcceptInvitation joins the signed-in account to the invitation's store,
// with its role. The account's email must be the invitation's
// (invitation_invalid otherwise). The link works once: of two accepting
// at once, exactly one joins; the other gets invitation_invalid.
func (s *Service) AcceptInvitation(ctx context.Context, token, accountID string) (*checkout.Membership, error) {
	inv, _, err := s.Invitation(ctx, token)
	if err != nil {
		return nil, err
	}
	a, err := s.store.AccountGet(ctx, accountID)
	if err != nil {
		return nil, err
	}
	if a.Email != inv.Email {
		return nil, checkout.Errorf(checkout.EInvitationInvalid,
			"This invitation is for another email than yours (%s). Sign out and open the link again, or ask for an invitation to your email.", a.Email)
	}
	m := &checkout.Membership{AccountID: a.ID, MerchantID: inv.MerchantID, Role: inv.Role, CreatedAt: s.now().Truncate(time.Second), Email: a.Email}
	err = s.store.InTx(ctx, func(tx checkout.Tx) error {
		if err := tx.InvitationAccept(ctx, inv.ID, a.ID, s.now()); err != nil {
			return err
		}
		if err := tx.MembershipInsert(ctx, m); err != nil {
			return err
		}
		return s.recordAs(ctx, tx, checkout.Actor{Kind: checkout.ActorAccount, ID: a.ID, Name: a.Email}, inv.MerchantID, checkout.AuditInvitationAccept, inv.ID)
	})
	return m, s.acceptError(ctx, token, err)
}

// AcceptInvitationNewAccount creates the account of the invitation's email
// with a password (the rules of CreateAccount) and joins it to the store,
// in one transaction: a link used once, whatever accepts it at once. An
// email that has an account already is account_exists: that person signs
// in and opens the link again.
func (s *Service) AcceptInvitationNewAccount(ctx context.Context, token, pw string) (*checkout.Account, *checkout.Membership, error) {
	inv, _, err := s.Invitation(ctx, token)
	if err != nil {
		return nil, nil, err
	}
	if err := password.Check(pw); err != nil {
		return nil, nil, err
	}
	now := s.now().Truncate(time.Second)
	a := &checkout.Account{ID: checkout.NewAccountID(), Email: inv.Email, PasswordHash: password.Hash(pw), CreatedAt: now}
	m := &checkout.Membership{AccountID: a.ID, MerchantID: inv.MerchantID, Role: inv.Role, CreatedAt: now, Email: a.Email}
	err = s.store.InTx(ctx, func(tx checkout.Tx) error {
		if err := tx.InvitationAccept(ctx, inv.ID, a.ID, s.now()); err != nil {
			return err
		}
		if err := tx.AccountInsert(ctx, a); err != nil {
			return err
		}
		if err := tx.MembershipInsert(ctx, m); err != nil {
			return err
		}
		return s.recordAs(ctx, tx, checkout.Actor{Kind: checkout.ActorAccount, ID: a.ID, Name: a.Email}, inv.MerchantID, checkout.AuditInvitationAccept, inv.ID)
	})
	if checkout.IsCode(err, checkout.EConflict) {
		return nil, nil, &checkout.Error{Code: checkout.EAccountExists, Param: "email",
			Message: "An account with the email " + inv.Email + " exists already: sign in, then open the link again."}
	}
	if err := s.acceptError(ctx, token, err); err != nil {
		return nil, nil, err
	}
	return a, m, nil
}

// acceptError is what an accept's transaction failing with err answers:
// an invitation used, revoked or expired since it was read says why, as
// Invitation does; a member already, member_exists.
func (s *Service) acceptError(ctx context.Context, token string, err error) error {
	switch {
	case checkout.IsCode(err, checkout.ENotFound):
		if _, _, err := s.Invitation(ctx, token); err != nil {
			return err
		}
		return checkout.Errorf(checkout.EInvitationInvalid, "This invitation link is not valid any more.")
	case checkout.IsCode(err, checkout.EConflict):
		return checkout.Errorf(checkout.EMemberExists, "You are a member of this store already.")
	}
	return err
}

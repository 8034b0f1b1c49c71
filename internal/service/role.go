package service

import (
	"context"

	"github.com/checkoutd/checkoutd/checkout"
)

// Who calls the service decides what it may do there:
//
//   - a member of a store, in the dashboard: the dashboard names the
//     signed-in account in the request's context (AsAccount), and every
//     service function that works in a store checks the account's role
//     there against the one table of checkout/role.go (authorize), at the
//     time of the call, so a role changed or a member removed counts from
//     their next request;
//   - the operator, at the command line, may do everything, as an API key
//     may do what its permissions allow (internal/api checks them): their
//     contexts name no account.

type accountKey struct{}

// AsAccount returns ctx naming the signed-in account the dashboard acts
// for: every service function called with it works as that member of the
// store, within its role.
func AsAccount(ctx context.Context, accountID string) context.Context {
	return context.WithValue(ctx, accountKey{}, accountID)
}

// accountOf returns the account ctx names, if any.
func accountOf(ctx context.Context) (string, bool) {
	id, ok := ctx.Value(accountKey{}).(string)
	return id, ok
}

// authorize checks that the caller may do the action in the store: always
// for the operator and API keys; for a member, when their role allows it.
// An account that is no member of the store (never was, was removed, or is
// a member of other stores) gets store_not_found, as for a store that does
// not exist; a member whose role does not allow the action,
// permission_denied.
func (s *Service) authorize(ctx context.Context, storeID string, a checkout.Action) error {
	_, err := s.roleFor(ctx, storeID, a)
	return err
}

// roleFor is authorize, returning the member's role ("" for the operator
// and API keys, who may do everything).
func (s *Service) roleFor(ctx context.Context, storeID string, a checkout.Action) (checkout.Role, error) {
	accountID, ok := accountOf(ctx)
	if !ok {
		return "", nil
	}
	m, err := s.store.MembershipGet(ctx, accountID, storeID)
	if checkout.IsCode(err, checkout.ENotFound) {
		return "", checkout.Errorf(checkout.EStoreNotFound, "No such store: %s.", storeID)
	}
	if err != nil {
		return "", err
	}
	if !m.Role.May(a) {
		return m.Role, checkout.Forbidden(m.Role, a)
	}
	return m.Role, nil
}

// may reports whether the caller may also do the action in the store,
// where it may do another already (a Viewer reading a page that a
// Developer sees with secrets): the operator and API keys may.
func may(role checkout.Role, a checkout.Action) bool {
	return role == "" || role.May(a)
}

// Authorize checks that the caller may do the action in the store, as every
// service function that works in a store does: a page of a form asks it
// before showing a form its caller could not send.
func (s *Service) Authorize(ctx context.Context, storeID string, a checkout.Action) error {
	return s.authorize(ctx, storeID, a)
}

// Member returns a store and the account's membership of it. A store that
// does not exist and one the account is no member of fail alike, with
// store_not_found and the same message.
func (s *Service) Member(ctx context.Context, accountID, storeID string) (*checkout.Merchant, *checkout.Membership, error) {
	ms, err := s.store.MembershipGet(ctx, accountID, storeID)
	if checkout.IsCode(err, checkout.ENotFound) {
		return nil, nil, checkout.Errorf(checkout.EStoreNotFound, "No such store: %s.", storeID)
	}
	if err != nil {
		return nil, nil, err
	}
	m, err := s.store.MerchantGet(ctx, storeID)
	if err != nil {
		return nil, nil, err
	}
	return m, ms, nil
}

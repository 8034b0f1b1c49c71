package service

import (
	"context"
	"slices"
	"strings"

	"github.com/checkoutd/checkoutd/checkout"
)

// Members returns a store's members with their roles and emails, oldest
// first.
func (s *Service) Members(ctx context.Context, storeID string) ([]*checkout.Membership, error) {
	if err := s.authorize(ctx, storeID, checkout.ActionViewMembers); err != nil {
		return nil, err
	}
	if _, err := s.store.MerchantGet(ctx, storeID); err != nil {
		return nil, err
	}
	return s.store.MembershipListByStore(ctx, storeID)
}

// SetMemberRole changes the role of a member of a store, named by account
// id or email. A store keeps at least one administrator: taking the role
// from its last one is refused with last_administrator, whatever else
// changes at once (the store's members are locked while it is decided).
// Setting the role a member has already changes nothing and succeeds.
func (s *Service) SetMemberRole(ctx context.Context, storeID, member string, role checkout.Role) (*checkout.Membership, error) {
	if err := s.authorize(ctx, storeID, checkout.ActionManageMembers); err != nil {
		return nil, err
	}
	role, err := checkout.ParseRole(string(role), "role")
	if err != nil {
		return nil, err
	}
	if _, err := s.store.MerchantGet(ctx, storeID); err != nil {
		return nil, err
	}
	var out *checkout.Membership
	err = s.store.InTx(ctx, func(tx checkout.Tx) error {
		ms, i, err := lockedMember(ctx, tx, storeID, member)
		if err != nil {
			return err
		}
		m := ms[i]
		if m.Role == role {
			out = m
			return nil
		}
		if role != checkout.RoleAdministrator {
			if err := keepsAnAdministrator(ms, i); err != nil {
				return err
			}
		}
		if err := tx.MembershipSetRole(ctx, m.AccountID, storeID, role); err != nil {
			return err
		}
		m.Role, out = role, m
		return s.Record(ctx, tx, storeID, checkout.AuditMemberRole, m.AccountID)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// RemoveMember takes a member, named by account id or email, out of a
// store: from their next request, the store's pages and actions refuse
// them as an account that was never a member (their dashboard sessions go
// on for their other stores). The last administrator of a store cannot be
// removed (last_administrator).
func (s *Service) RemoveMember(ctx context.Context, storeID, member string) (*checkout.Membership, error) {
	if err := s.authorize(ctx, storeID, checkout.ActionManageMembers); err != nil {
		return nil, err
	}
	if _, err := s.store.MerchantGet(ctx, storeID); err != nil {
		return nil, err
	}
	var out *checkout.Membership
	err := s.store.InTx(ctx, func(tx checkout.Tx) error {
		ms, i, err := lockedMember(ctx, tx, storeID, member)
		if err != nil {
			return err
		}
		if err := keepsAnAdministrator(ms, i); err != nil {
			return err
		}
		out = ms[i]
		if err := tx.MembershipDelete(ctx, out.AccountID, storeID); err != nil {
			return err
		}
		return s.Record(ctx, tx, storeID, checkout.AuditMemberRemove, out.AccountID)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// lockedMember reads and locks a store's members and finds one, by account
// id or email: member_not_found when none is it. The caller's own role is
// checked again on the locked list, so that an administrator demoted or
// removed at the same moment changes no one.
func lockedMember(ctx context.Context, tx checkout.Tx, storeID, member string) ([]*checkout.Membership, int, error) {
	ms, err := tx.MembershipListForUpdate(ctx, storeID)
	if err != nil {
		return nil, 0, err
	}
	if caller, ok := accountOf(ctx); ok {
		j := slices.IndexFunc(ms, func(m *checkout.Membership) bool { return m.AccountID == caller })
		if j < 0 {
			return nil, 0, checkout.Errorf(checkout.EStoreNotFound, "No such store: %s.", storeID)
		}
		if !ms[j].Role.May(checkout.ActionManageMembers) {
			return nil, 0, checkout.Forbidden(ms[j].Role, checkout.ActionManageMembers)
		}
	}
	email := checkout.NormalizeEmail(member)
	i := slices.IndexFunc(ms, func(m *checkout.Membership) bool { return m.AccountID == member || m.Email == email })
	if i < 0 {
		return nil, 0, &checkout.Error{Code: checkout.EMemberNotFound, Param: "member",
			Message: "No member of this store is " + strings.TrimSpace(member) + "."}
	}
	return ms, i, nil
}

// keepsAnAdministrator refuses to take ms[i] from the administrators when
// it is the last one.
func keepsAnAdministrator(ms []*checkout.Membership, i int) error {
	if ms[i].Role != checkout.RoleAdministrator {
		return nil
	}
	for j, m := range ms {
		if j != i && m.Role == checkout.RoleAdministrator {
			return nil
		}
	}
	return checkout.Errorf(checkout.ELastAdministrator,
		"%s is the store's last administrator: make another member an administrator first.", ms[i].Email)
}

package service_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// An invitation's link joins the account of its email, with its role, once;
// it expires after 7 days, and a revoked one stops working.
func TestInvitations(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		admin := f.member(t, "admin@example.com", checkout.RoleAdministrator)

		inv, token, err := f.svc.InviteMember(admin, f.m.ID, " Bob@Example.com ", "Support")
		if err != nil {
			t.Fatal(err)
		}
		if inv.Email != "bob@example.com" || inv.Role != checkout.RoleSupport || len(token) != 43 || inv.TokenHash == token ||
			!inv.ExpiresAt.Equal(inv.CreatedAt.Add(7*24*time.Hour)) || inv.InvitedBy == "cli" {
			t.Errorf("InviteMember = %+v, %q", inv, token)
		}
		if list, err := f.svc.Invitations(admin, f.m.ID); err != nil || len(list) != 1 || list[0].ID != inv.ID {
			t.Errorf("Invitations = %+v, %v", list, err)
		}
		for _, tt := range []struct {
			email string
			role  checkout.Role
			code  string
			param string
		}{
			{"bob", checkout.RoleViewer, checkout.EValidationFailed, "email"},
			{"carl@example.com", "owner", checkout.EValidationFailed, "role"},
			{"admin@example.com", checkout.RoleViewer, checkout.EMemberExists, "email"},
		} {
			_, _, err := f.svc.InviteMember(admin, f.m.ID, tt.email, tt.role)
			wantError(t, "InviteMember("+tt.email+", "+string(tt.role)+")", err, tt.code, tt.param)
		}

		// A new person: the account is made with the invitation's email.
		_, _, err = f.svc.AcceptInvitationNewAccount(ctx, token, "short")
		wantError(t, "AcceptInvitationNewAccount(a short password)", err, checkout.EValidationFailed, "password")
		a, m, err := f.svc.AcceptInvitationNewAccount(ctx, token, goodPassword)
		if err != nil || a.Email != "bob@example.com" || m.Role != checkout.RoleSupport || m.MerchantID != f.m.ID {
			t.Fatalf("AcceptInvitationNewAccount = %+v, %+v, %v", a, m, err)
		}
		if _, err := f.svc.VerifyPassword(ctx, "bob@example.com", goodPassword); err != nil {
			t.Errorf("the new account cannot sign in: %v", err)
		}
		for _, again := range []func() error{
			func() error { _, _, err := f.svc.AcceptInvitationNewAccount(ctx, token, goodPassword); return err },
			func() error { _, err := f.svc.AcceptInvitation(ctx, token, a.ID); return err },
		} {
			if err := again(); !checkout.IsCode(err, checkout.EInvitationInvalid) || checkout.ErrorMessage(err) == "" {
				t.Errorf("the link used again = %v; want invitation_invalid", err)
			}
		}
		if list, _ := f.svc.Invitations(admin, f.m.ID); len(list) != 0 {
			t.Errorf("Invitations after it was used = %+v; want none", list)
		}

		// An existing account, signed in: its email only.
		carl, err := f.svc.CreateAccount(ctx, "carl@example.com", goodPassword)
		if err != nil {
			t.Fatal(err)
		}
		_, token, err = f.svc.InviteMember(ctx, f.m.ID, "carl@example.com", checkout.RoleViewer) // the operator
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.AcceptInvitation(ctx, token, a.ID); !checkout.IsCode(err, checkout.EInvitationInvalid) {
			t.Errorf("AcceptInvitation by another email's account = %v; want invitation_invalid", err)
		}
		_, _, err = f.svc.AcceptInvitationNewAccount(ctx, token, goodPassword)
		wantError(t, "AcceptInvitationNewAccount(an email with an account)", err, checkout.EAccountExists, "email")
		if m, err := f.svc.AcceptInvitation(ctx, token, carl.ID); err != nil || m.Role != checkout.RoleViewer {
			t.Errorf("AcceptInvitation = %+v, %v", m, err)
		}

		// Expired, revoked, unknown.
		inv, token, _ = f.svc.InviteMember(admin, f.m.ID, "dan@example.com", checkout.RoleDeveloper)
		f.clock.Advance(checkout.InvitationTTL)
		if _, _, err := f.svc.Invitation(ctx, token); !checkout.IsCode(err, checkout.EInvitationInvalid) {
			t.Errorf("Invitation after 7 days = %v; want invitation_invalid", err)
		}
		if err := f.svc.RevokeInvitation(admin, f.m.ID, inv.ID); !checkout.IsCode(err, checkout.ENotFound) {
			t.Errorf("RevokeInvitation(expired) = %v; want not_found", err)
		}
		inv, token, _ = f.svc.InviteMember(admin, f.m.ID, "dan@example.com", checkout.RoleDeveloper)
		if err := f.svc.RevokeInvitation(admin, f.m.ID, inv.ID); err != nil {
			t.Fatal(err)
		}
		if _, _, err := f.svc.AcceptInvitationNewAccount(ctx, token, goodPassword); !checkout.IsCode(err, checkout.EInvitationInvalid) {
			t.Errorf("a revoked invitation accepted = %v; want invitation_invalid", err)
		}
		if _, _, err := f.svc.Invitation(ctx, "nothere"); !checkout.IsCode(err, checkout.EInvitationInvalid) {
			t.Errorf("Invitation(unknown) = %v; want invitation_invalid", err)
		}
		// Only an administrator invites.
		support := service.AsAccount(ctx, a.ID)
		if _, _, err := f.svc.InviteMember(support, f.m.ID, "eve@example.com", checkout.RoleAdministrator); !checkout.IsCode(err, checkout.EPermissionDenied) {
			t.Errorf("InviteMember by a support member = %v; want permission_denied", err)
		}
	})
}

// An invitation's link is used once, whatever opens it at the same moment:
// of two accepting at once, exactly one joins, on both databases.
func TestInvitationUsedOnceUnderConcurrency(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		for round := range 3 {
			email := []string{"bob@example.com", "carl@example.com", "dan@example.com"}[round]
			_, token, err := f.svc.InviteMember(ctx, f.m.ID, email, checkout.RoleViewer)
			if err != nil {
				t.Fatal(err)
			}
			var existing *checkout.Account
			if round > 0 {
				if existing, err = f.svc.CreateAccount(ctx, email, goodPassword); err != nil {
					t.Fatal(err)
				}
			}
			errs := make([]error, 2)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					switch {
					case round == 0: // two new people
						_, _, errs[i] = f.svc.AcceptInvitationNewAccount(ctx, token, goodPassword)
					case round == 1: // the account, twice
						_, errs[i] = f.svc.AcceptInvitation(ctx, token, existing.ID)
					default: // the account and a new person
						if i == 0 {
							_, errs[i] = f.svc.AcceptInvitation(ctx, token, existing.ID)
						} else {
							_, _, errs[i] = f.svc.AcceptInvitationNewAccount(ctx, token, goodPassword)
						}
					}
				}()
			}
			close(start)
			wg.Wait()
			ok := 0
			for _, err := range errs {
				switch {
				case err == nil:
					ok++
				case checkout.IsCode(err, checkout.EInvitationInvalid), checkout.IsCode(err, checkout.EAccountExists),
					checkout.IsCode(err, checkout.EMemberExists):
				default:
					t.Errorf("round %d: %v", round, err)
				}
			}
			if ok != 1 {
				t.Errorf("round %d: %d accepts succeeded (%v); want exactly 1", round, ok, errs)
			}
			ms, _ := f.svc.Members(ctx, f.m.ID)
			joined := 0
			for _, m := range ms {
				if m.Email == email {
					joined++
				}
			}
			if joined != 1 {
				t.Errorf("round %d: %s is a member %d times; want once", round, email, joined)
			}
		}
	})
}

package service_test

import (
	"context"
	"sync"
	"testing"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// member makes an account with the email, a member of the fixture's store
// with the role ("" for none), and returns its context for the service.
func (f *fixture) member(t *testing.T, email string, role checkout.Role) context.Context {
	t.Helper()
	ctx := context.Background()
	a, err := f.svc.CreateAccount(ctx, email, goodPassword)
	if err != nil {
		t.Fatal(err)
	}
	if role != "" {
		if _, _, err := f.svc.AddMember(ctx, f.m.ID, email, role); err != nil {
			t.Fatal(err)
		}
	}
	return service.AsAccount(ctx, a.ID)
}

// Every service function that works in a store checks the caller's role
// there, whichever door calls it: a member whose role does not allow the
// action gets permission_denied, an account that is no member
// store_not_found, and the operator (no account in the context) may do
// everything.
func TestRolesInTheService(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHooks(t, db)
		f := h.fixture
		sc := h.scope
		const payID, refID, dpID = "pay_00000000000000000000000000000000", "re_00000000000000000000000000000000", "dp_00000000000000000000000000000000"
		calls := []struct {
			name   string
			action checkout.Action
			call   func(ctx context.Context) error
		}{
			{"PaymentIn", checkout.ActionViewPayments, func(ctx context.Context) error { _, err := f.svc.PaymentIn(ctx, sc, payID); return err }},
			{"ListPayments", checkout.ActionViewPayments, func(ctx context.Context) error {
				_, err := f.svc.ListPayments(ctx, sc, service.PaymentFilter{}, "", 10)
				return err
			}},
			{"RefundIn", checkout.ActionViewPayments, func(ctx context.Context) error { _, err := f.svc.RefundIn(ctx, sc, refID); return err }},
			{"DisputeIn", checkout.ActionViewPayments, func(ctx context.Context) error { _, err := f.svc.DisputeIn(ctx, sc, dpID); return err }},
			{"OpenDisputes", checkout.ActionViewPayments, func(ctx context.Context) error { _, err := f.svc.OpenDisputes(ctx, sc); return err }},
			{"RefundPayment", checkout.ActionRefund, func(ctx context.Context) error {
				_, err := f.svc.RefundPayment(ctx, service.RefundRequest{Scope: sc, PaymentID: payID})
				return err
			}},
			{"CancelRefund", checkout.ActionRefund, func(ctx context.Context) error { _, err := f.svc.CancelRefund(ctx, sc, refID); return err }},
			{"SimulateRefundPayout", checkout.ActionRefund, func(ctx context.Context) error {
				_, err := f.svc.SimulateRefundPayout(ctx, sc, refID)
				return err
			}},
			{"SubmitDisputeEvidence", checkout.ActionAnswerDispute, func(ctx context.Context) error {
				_, err := f.svc.SubmitDisputeEvidence(ctx, service.DisputeEvidenceRequest{Scope: sc, DisputeID: dpID})
				return err
			}},
			{"ListAPIKeys", checkout.ActionViewKeys, func(ctx context.Context) error { _, err := f.svc.ListAPIKeys(ctx, sc); return err }},
			{"CreateAPIKey", checkout.ActionManageKeys, func(ctx context.Context) error {
				_, _, err := f.svc.CreateAPIKey(ctx, checkout.APIKeyParams{MerchantID: f.m.ID, Mode: checkout.ModeTest, Type: checkout.KeyBearer,
					Permissions: []checkout.Permission{checkout.PermCheckoutsWrite}})
				return err
			}},
			{"RevokeAPIKeyIn", checkout.ActionManageKeys, func(ctx context.Context) error { _, err := f.svc.RevokeAPIKeyIn(ctx, sc, "key_x"); return err }},
			{"EndpointsIn", checkout.ActionViewWebhooks, func(ctx context.Context) error { _, err := f.svc.EndpointsIn(ctx, sc); return err }},
			{"EndpointIn", checkout.ActionViewWebhooks, func(ctx context.Context) error { _, err := f.svc.EndpointIn(ctx, sc, h.ep.ID); return err }},
			{"EndpointHealth", checkout.ActionViewWebhooks, func(ctx context.Context) error {
				_, err := f.svc.EndpointHealth(ctx, sc, h.ep.ID)
				return err
			}},
			{"DeliveriesIn", checkout.ActionViewWebhooks, func(ctx context.Context) error {
				_, err := f.svc.DeliveriesIn(ctx, sc, checkout.DeliveryFilter{Limit: 10})
				return err
			}},
			{"DeliveryIn", checkout.ActionViewWebhooks, func(ctx context.Context) error { _, _, err := f.svc.DeliveryIn(ctx, sc, "dl_x"); return err }},
			{"CreateEndpoint", checkout.ActionManageWebhooks, func(ctx context.Context) error {
				_, err := f.svc.CreateEndpoint(ctx, checkout.EndpointParams{MerchantID: f.m.ID, Mode: checkout.ModeTest, URL: "https://hooks.example.com/2",
					Events: []string{checkout.AllEvents}})
				return err
			}},
			{"UpdateEndpoint", checkout.ActionManageWebhooks, func(ctx context.Context) error {
				d := "Orders"
				_, err := f.svc.UpdateEndpoint(ctx, sc, h.ep.ID, checkout.EndpointUpdate{Description: &d})
				return err
			}},
			{"SetEndpointEnabledIn", checkout.ActionManageWebhooks, func(ctx context.Context) error {
				_, _, err := f.svc.SetEndpointEnabledIn(ctx, sc, h.ep.ID, true)
				return err
			}},
			{"SendTestEventIn", checkout.ActionManageWebhooks, func(ctx context.Context) error {
				_, _, err := f.svc.SendTestEventIn(ctx, sc, "we_x")
				return err
			}},
			{"RollEndpointSecretIn", checkout.ActionManageWebhooks, func(ctx context.Context) error {
				_, err := f.svc.RollEndpointSecretIn(ctx, sc, "we_x", 0)
				return err
			}},
			{"RetryFailed", checkout.ActionManageWebhooks, func(ctx context.Context) error {
				_, err := f.svc.RetryFailed(ctx, sc, "we_x", t0)
				return err
			}},
			{"ResendIn", checkout.ActionManageWebhooks, func(ctx context.Context) error { _, err := f.svc.ResendIn(ctx, sc, "dl_x"); return err }},
			{"DeleteEndpointIn", checkout.ActionManageWebhooks, func(ctx context.Context) error { return f.svc.DeleteEndpointIn(ctx, sc, "we_x") }},
			{"ListEvents", checkout.ActionViewEvents, func(ctx context.Context) error {
				_, err := f.svc.ListEvents(ctx, sc, service.EventFilter{}, "", 10)
				return err
			}},
			{"EventIn", checkout.ActionViewEvents, func(ctx context.Context) error { _, err := f.svc.EventIn(ctx, sc, "evt_x"); return err }},
			{"ListRequestLogs", checkout.ActionViewLogs, func(ctx context.Context) error {
				_, err := f.svc.ListRequestLogs(ctx, sc, service.RequestLogFilter{}, "", 10)
				return err
			}},
			{"RequestLogIn", checkout.ActionViewLogs, func(ctx context.Context) error { _, err := f.svc.RequestLogIn(ctx, sc, "req_x"); return err }},
			{"CryptoKeys", checkout.ActionViewSettings, func(ctx context.Context) error { _, err := f.svc.CryptoKeys(ctx, f.m.ID); return err }},
			{"SetCryptoKey", checkout.ActionManageSettings, func(ctx context.Context) error {
				_, err := f.svc.SetCryptoKey(ctx, f.m.ID, "BTC", "main", "x")
				return err
			}},
			{"RemoveCryptoKey", checkout.ActionManageSettings, func(ctx context.Context) error { return f.svc.RemoveCryptoKey(ctx, f.m.ID, "BTC") }},
			{"AcquirerAccountOf", checkout.ActionViewSettings, func(ctx context.Context) error {
				_, err := f.svc.AcquirerAccountOf(ctx, f.m.ID, checkout.ModeLive, "stripe")
				return err
			}},
			{"SetAcquirerAccount", checkout.ActionManageAcquirer, func(ctx context.Context) error {
				_, err := f.svc.SetAcquirerAccount(ctx, goodAcquirerParams(f.m.ID))
				return err
			}},
			{"RemoveAcquirerAccount", checkout.ActionManageAcquirer, func(ctx context.Context) error {
				return f.svc.RemoveAcquirerAccount(ctx, f.m.ID, checkout.ModeLive, "stripe")
			}},
			{"Members", checkout.ActionViewMembers, func(ctx context.Context) error { _, err := f.svc.Members(ctx, f.m.ID); return err }},
			{"AddMember", checkout.ActionManageMembers, func(ctx context.Context) error {
				_, _, err := f.svc.AddMember(ctx, f.m.ID, "nobody@example.com", checkout.RoleViewer)
				return err
			}},
			{"SetMemberRole", checkout.ActionManageMembers, func(ctx context.Context) error {
				_, err := f.svc.SetMemberRole(ctx, f.m.ID, "nobody@example.com", checkout.RoleViewer)
				return err
			}},
			{"RemoveMember", checkout.ActionManageMembers, func(ctx context.Context) error {
				_, err := f.svc.RemoveMember(ctx, f.m.ID, "nobody@example.com")
				return err
			}},
		}
		ctxs := map[string]context.Context{}
		for _, role := range checkout.Roles {
			ctxs[string(role)] = f.member(t, string(role)+"@example.com", role)
		}
		ctxs["no member"] = f.member(t, "none@example.com", "")
		for _, c := range calls {
			for who, ctx := range ctxs {
				err := c.call(ctx)
				role := checkout.Role(who)
				switch {
				case !role.Valid():
					if !checkout.IsCode(err, checkout.EStoreNotFound) {
						t.Errorf("%s as %s = %v; want store_not_found", c.name, who, err)
					}
				case !role.May(c.action):
					if !checkout.IsCode(err, checkout.EPermissionDenied) || checkout.ErrorMessage(err) != checkout.Forbidden(role, c.action).Message {
						t.Errorf("%s as %s = %v; want permission_denied: %s", c.name, who, err, checkout.Forbidden(role, c.action).Message)
					}
				default:
					if checkout.IsCode(err, checkout.EPermissionDenied) || checkout.IsCode(err, checkout.EStoreNotFound) {
						t.Errorf("%s as %s = %v; want it allowed", c.name, who, err)
					}
				}
			}
			// The operator: no account in the context.
			if err := c.call(context.Background()); checkout.IsCode(err, checkout.EPermissionDenied) || checkout.IsCode(err, checkout.EStoreNotFound) {
				t.Errorf("%s as the operator = %v; want it allowed", c.name, err)
			}
		}

		// A Viewer reads keys and endpoints without their secrets; what the
		// service keeps (its caches) keeps them.
		viewer := ctxs[string(checkout.RoleViewer)]
		ks, err := f.svc.ListAPIKeys(viewer, sc)
		if err != nil || len(ks) == 0 {
			t.Fatalf("ListAPIKeys as a viewer = %v, %v", ks, err)
		}
		for _, k := range ks {
			if k.SecretHint != "" || k.SecretHash != "" || k.SealedSecret != "" {
				t.Errorf("a viewer's key = %+v; want no hint, hash or sealed secret", k)
			}
		}
		ep, err := f.svc.EndpointIn(viewer, sc, h.ep.ID)
		if err != nil || ep.Secret != "" || ep.URL != h.ep.URL {
			t.Errorf("EndpointIn as a viewer = %+v, %v; want the endpoint without its secret", ep, err)
		}
		eps, _ := f.svc.EndpointsIn(viewer, sc)
		for _, ep := range eps {
			if ep.Secret != "" {
				t.Errorf("EndpointsIn as a viewer shows a secret: %+v", ep)
			}
		}
		dev := ctxs[string(checkout.RoleDeveloper)]
		if ep, err := f.svc.EndpointIn(dev, sc, h.ep.ID); err != nil || ep.Secret != h.ep.Secret {
			t.Errorf("EndpointIn as a developer = %+v, %v; want the secret", ep, err)
		}
		if ks, err := f.svc.ListAPIKeys(dev, sc); err != nil || len(ks) == 0 || ks[0].SecretHint == "" {
			t.Errorf("ListAPIKeys as a developer = %v, %v; want hints", ks, err)
		}
	})
}

// A role changed or a member removed counts from the member's next call.
func TestRoleChangeCountsAtOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		f.member(t, "ann@example.com", checkout.RoleAdministrator)
		bob := f.member(t, "bob@example.com", checkout.RoleDeveloper)
		sc := checkout.Scope{MerchantID: f.m.ID, Mode: checkout.ModeTest}
		if _, err := f.svc.ListAPIKeys(bob, sc); err != nil {
			t.Fatalf("ListAPIKeys as a developer = %v", err)
		}
		bobAccount, _ := db.AccountGetByEmail(context.Background(), "bob@example.com")
		_, err := f.svc.UpdateStore(context.Background(), bobAccount.ID, f.m.ID, checkout.MerchantParams{Name: "Bob's now", Currency: "USD"})
		if !checkout.IsCode(err, checkout.EPermissionDenied) {
			t.Errorf("UpdateStore by a developer = %v; want permission_denied", err)
		}
		if _, err := f.svc.SetMemberRole(context.Background(), f.m.ID, "bob@example.com", checkout.RoleSupport); err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.ListAPIKeys(bob, sc); !checkout.IsCode(err, checkout.EPermissionDenied) {
			t.Errorf("ListAPIKeys as bob made support = %v; want permission_denied", err)
		}
		if _, err := f.svc.RemoveMember(context.Background(), f.m.ID, "bob@example.com"); err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.PaymentIn(bob, sc, "pay_00000000000000000000000000000000"); !checkout.IsCode(err, checkout.EStoreNotFound) {
			t.Errorf("PaymentIn as bob removed = %v; want store_not_found", err)
		}
	})
}

// A store keeps an administrator whatever changes at once: two
// administrators each demoting or removing the other at the same moment,
// exactly one of them succeeds, on both databases.
func TestLastAdministratorUnderConcurrency(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		ann := f.member(t, "ann@example.com", checkout.RoleAdministrator)
		bob := f.member(t, "bob@example.com", checkout.RoleAdministrator)
		for round, change := range []func(ctx context.Context, other string) error{
			func(ctx context.Context, other string) error {
				_, err := f.svc.SetMemberRole(ctx, f.m.ID, other, checkout.RoleViewer)
				return err
			},
			func(ctx context.Context, other string) error {
				_, err := f.svc.RemoveMember(ctx, f.m.ID, other)
				return err
			},
		} {
			var wg sync.WaitGroup
			errs := make([]error, 2)
			start := make(chan struct{})
			for i, who := range []struct {
				ctx   context.Context
				other string
			}{{ann, "bob@example.com"}, {bob, "ann@example.com"}} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					errs[i] = change(who.ctx, who.other)
				}()
			}
			close(start)
			wg.Wait()
			ok, refused := 0, 0
			for _, err := range errs {
				switch {
				case err == nil:
					ok++
				case checkout.IsCode(err, checkout.ELastAdministrator), checkout.IsCode(err, checkout.EPermissionDenied),
					checkout.IsCode(err, checkout.EStoreNotFound):
					// Refused as the last administrator, or no longer an
					// administrator (or member) when the call began.
					refused++
				default:
					t.Errorf("round %d: %v", round, err)
				}
			}
			ms, err := f.svc.Members(context.Background(), f.m.ID)
			if err != nil {
				t.Fatal(err)
			}
			admins := 0
			for _, m := range ms {
				if m.Role == checkout.RoleAdministrator {
					admins++
				}
			}
			if ok != 1 || refused != 1 || admins != 1 {
				t.Errorf("round %d: %d succeeded, %d refused, %d administrators left (%v); want 1, 1, 1", round, ok, refused, admins, errs)
			}
			// Both administrators again for the next round.
			if _, _, err := f.svc.AddMember(context.Background(), f.m.ID, "ann@example.com", checkout.RoleAdministrator); err != nil {
				t.Fatal(err)
			}
			if _, _, err := f.svc.AddMember(context.Background(), f.m.ID, "bob@example.com", checkout.RoleAdministrator); err != nil {
				t.Fatal(err)
			}
			for _, email := range []string{"ann@example.com", "bob@example.com"} {
				if _, err := f.svc.SetMemberRole(context.Background(), f.m.ID, email, checkout.RoleAdministrator); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}

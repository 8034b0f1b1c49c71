package service_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/pay/stripefake"
	"github.com/checkoutd/checkoutd/internal/pay/stripepay"
	"github.com/checkoutd/checkoutd/internal/seal"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// auditFixture is a payFixture whose service also checks webhook URLs and
// seals HMAC secrets, so that every changing operation can run.
func newAuditFixture(t *testing.T, db *store.DB) *payFixture {
	t.Helper()
	f := newPayFixture(t, db)
	f.svc = service.New(service.Config{
		Store: db, Now: f.clock.Now, CacheNow: f.cache.Now, CheckoutBaseURL: "https://pay.example", Logger: f.log,
		URLs: fakeURLs{}, SecretsKey: testSecretsKey,
		Acquirers:  []pay.AcquirerConnector{stripepay.New(stripepay.Config{URL: stripefake.New(t, stripefake.Options{}).URL})},
		Processors: pay.Registry{Test: pay.Processors{Card: f.cards, Crypto: pay.TestNetwork{}, Skins: f.skins}},
	})
	return f
}

// allAudit returns every audit entry of the stores and of the account
// level, newest first within each.
func allAudit(t *testing.T, db *store.DB, stores ...string) []*checkout.AuditEntry {
	t.Helper()
	var out []*checkout.AuditEntry
	for _, st := range append([]string{""}, stores...) {
		es, err := db.AuditList(context.Background(), checkout.AuditListParams{MerchantID: st, Limit: 10000})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, es...)
	}
	return out
}

// TestAuditEveryChange runs every changing operation of the dashboard and
// the CLI through the service: each that changes something leaves exactly
// one entry, with its action, store, object, actor and origin; each that
// is refused, or changes nothing, leaves none. No entry holds a secret.
func TestAuditEveryChange(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newAuditFixture(t, db)
		svc := f.svc
		jo := f.account(t, "jo@acme.example")
		joActor := checkout.Actor{Kind: checkout.ActorAccount, ID: jo.ID, Name: jo.Email}
		origin := service.Origin{Actor: joActor, ClientAddress: "192.0.2.7", UserAgent: "Mozilla/5.0 (audit test)"}
		octx := service.WithOrigin(ctx, origin)
		scope := checkout.Scope{MerchantID: f.m.ID, Mode: checkout.ModeTest}
		stores := []string{f.m.ID}
		var secrets []string // every secret the operations hand out

		seen := len(allAudit(t, db, stores...))
		f.clock.Advance(time.Second)
		// step runs fn and checks what it left: one entry of want (with
		// its store and object) or, when want is "", none.
		step := func(name string, want checkout.AuditAction, storeID string, object func() string, fn func() error) {
			t.Helper()
			err := fn()
			if want != "" && err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if want == "" && err == nil && !strings.HasPrefix(name, "noop") {
				t.Fatalf("%s = nil error; want it refused", name)
			}
			all := allAudit(t, db, stores...)
			var fresh []*checkout.AuditEntry
			for _, e := range all {
				if e.CreatedAt.Equal(f.clock.Now().Truncate(time.Millisecond)) {
					fresh = append(fresh, e)
				}
			}
			n := len(all) - seen
			seen = len(all)
			if want == "" {
				if n != 0 {
					t.Errorf("%s left %d audit entries; want none", name, n)
				}
				f.clock.Advance(time.Second)
				return
			}
			if n != 1 || len(fresh) != 1 {
				t.Fatalf("%s left %d audit entries (%d now); want exactly one", name, n, len(fresh))
			}
			e := fresh[0]
			if storeID == "=object" {
				storeID = object()
			}
			if e.Action != want || e.MerchantID != storeID || e.ObjectID != object() {
				t.Errorf("%s recorded %s in %q on %q; want %s in %q on %q", name, e.Action, e.MerchantID, e.ObjectID, want, storeID, object())
			}
			if !e.Action.Valid() || !strings.HasPrefix(e.ID, checkout.PrefixAudit) || len(e.ID) != 35 {
				t.Errorf("%s: entry %+v; want a known action and an au_ id", name, e)
			}
			f.clock.Advance(time.Second) // each step its own moment
		}
		none := func() string { return "" }
		var obj string
		is := func() string { return obj }

		// API keys.
		var key *checkout.APIKey
		step("CreateAPIKey", checkout.AuditAPIKeyCreate, f.m.ID, is, func() error {
			k, secret, err := svc.CreateAPIKey(octx, checkout.APIKeyParams{MerchantID: f.m.ID, Mode: checkout.ModeTest, Type: checkout.KeyHMAC,
				Permissions: []checkout.Permission{checkout.PermCheckoutsWrite}})
			if err == nil {
				key, obj = k, k.ID
				secrets = append(secrets, secret)
			}
			return err
		})
		step("CreateAPIKey with no permission", "", "", none, func() error {
			_, _, err := svc.CreateAPIKey(octx, checkout.APIKeyParams{MerchantID: f.m.ID, Mode: checkout.ModeTest, Type: checkout.KeyBearer})
			return err
		})
		step("RevokeAPIKeyIn", checkout.AuditAPIKeyRevoke, f.m.ID, is, func() error {
			_, err := svc.RevokeAPIKeyIn(octx, scope, key.ID)
			return err
		})
		step("noop RevokeAPIKey of a revoked key", "", "", none, func() error {
			_, err := svc.RevokeAPIKey(octx, key.ID)
			return err
		})
		step("RevokeAPIKeyIn of another mode", "", "", none, func() error {
			_, err := svc.RevokeAPIKeyIn(octx, checkout.Scope{MerchantID: f.m.ID, Mode: checkout.ModeLive}, f.key.ID)
			return err
		})

		// Webhook endpoints.
		var ep *checkout.Endpoint
		step("CreateEndpoint", checkout.AuditEndpointCreate, f.m.ID, is, func() error {
			var err error
			ep, err = svc.CreateEndpoint(octx, checkout.EndpointParams{MerchantID: f.m.ID, Mode: checkout.ModeTest,
				URL: "https://hooks.example.com/a", Events: []string{checkout.AllEvents}})
			if err == nil {
				obj = ep.ID
				secrets = append(secrets, ep.Secret)
			}
			return err
		})
		step("CreateEndpoint over http", "", "", none, func() error {
			_, err := svc.CreateEndpoint(octx, checkout.EndpointParams{MerchantID: f.m.ID, Mode: checkout.ModeTest,
				URL: "http://hooks.example.com/a", Events: []string{checkout.AllEvents}})
			return err
		})
		desc := "Orders"
		step("UpdateEndpoint", checkout.AuditEndpointUpdate, f.m.ID, is, func() error {
			_, err := svc.UpdateEndpoint(octx, scope, ep.ID, checkout.EndpointUpdate{Description: &desc})
			return err
		})
		bad := "two\nlines"
		step("UpdateEndpoint with a bad description", "", "", none, func() error {
			_, err := svc.UpdateEndpoint(octx, scope, ep.ID, checkout.EndpointUpdate{Description: &bad})
			return err
		})
		step("SendTestEventIn", checkout.AuditEndpointTest, f.m.ID, is, func() error {
			_, _, err := svc.SendTestEventIn(octx, scope, ep.ID)
			return err
		})
		var canceled string
		step("SetEndpointEnabledIn(false)", checkout.AuditEndpointDisable, f.m.ID, is, func() error {
			_, _, err := svc.SetEndpointEnabledIn(octx, scope, ep.ID, false)
			ds, _ := db.DeliveryList(ctx, checkout.DeliveryListParams{EndpointID: ep.ID})
			canceled = ds[0].ID
			return err
		})
		step("SendTestEventIn to a disabled endpoint", "", "", none, func() error {
			_, _, err := svc.SendTestEventIn(octx, scope, ep.ID)
			return err
		})
		step("ResendIn to a disabled endpoint", "", "", none, func() error {
			_, err := svc.ResendIn(octx, scope, canceled)
			return err
		})
		step("SetEndpointEnabledIn(true)", checkout.AuditEndpointEnable, f.m.ID, is, func() error {
			_, _, err := svc.SetEndpointEnabledIn(octx, scope, ep.ID, true)
			return err
		})
		step("ResendIn", checkout.AuditDeliveryResend, f.m.ID, func() string { return canceled }, func() error {
			_, err := svc.ResendIn(octx, scope, canceled)
			return err
		})
		step("noop RetryFailed with nothing failed", "", "", none, func() error {
			_, err := svc.RetryFailed(octx, scope, ep.ID, t0)
			return err
		})
		step("RetryFailed", checkout.AuditEndpointRetryFailed, f.m.ID, is, func() error {
			// A delivery that failed for good, as the dispatcher leaves it.
			ev, err := checkout.NewEvent(checkout.EventWebhookTest, f.m.ID, checkout.ModeTest, map[string]string{"object": "webhook_test"}, f.clock.Now())
			if err != nil {
				return err
			}
			d := checkout.NewDelivery(ev, ep, f.clock.Now())
			d.Status = checkout.DeliveryFailed
			if err := db.InTx(ctx, func(tx checkout.Tx) error {
				if err := tx.EventInsert(ctx, ev); err != nil {
					return err
				}
				return tx.DeliveryInsert(ctx, d)
			}); err != nil {
				return err
			}
			res, err := svc.RetryFailed(octx, scope, ep.ID, t0)
			if err == nil && res.Queued != 1 {
				return errors.New("RetryFailed queued none")
			}
			return err
		})
		step("RevealEndpointSecret", checkout.AuditEndpointSecretReveal, f.m.ID, is, func() error {
			_, err := svc.RevealEndpointSecret(octx, scope, ep.ID)
			return err
		})
		step("RevealEndpointSecret in another mode", "", "", none, func() error {
			_, err := svc.RevealEndpointSecret(octx, checkout.Scope{MerchantID: f.m.ID, Mode: checkout.ModeLive}, ep.ID)
			return err
		})
		step("RollEndpointSecretIn", checkout.AuditEndpointSecretRoll, f.m.ID, is, func() error {
			rolled, err := svc.RollEndpointSecretIn(octx, scope, ep.ID, time.Hour)
			if err == nil {
				secrets = append(secrets, rolled.Secret)
			}
			return err
		})
		step("RollEndpointSecretIn keeping the old for two days", "", "", none, func() error {
			_, err := svc.RollEndpointSecretIn(octx, scope, ep.ID, 48*time.Hour)
			return err
		})
		step("DeleteEndpointIn", checkout.AuditEndpointDelete, f.m.ID, is, func() error {
			return svc.DeleteEndpointIn(octx, scope, ep.ID)
		})
		step("DeleteEndpointIn again", "", "", none, func() error {
			return svc.DeleteEndpointIn(octx, scope, ep.ID)
		})

		// The store's settings, its team, its crypto keys.
		obj = f.m.ID
		step("AddMember", checkout.AuditMemberAdd, f.m.ID, func() string { return jo.ID }, func() error {
			_, _, err := svc.AddMember(octx, f.m.ID, jo.Email, checkout.RoleAdministrator)
			return err
		})
		step("noop AddMember of a member", "", "", none, func() error {
			_, _, err := svc.AddMember(octx, f.m.ID, jo.Email, checkout.RoleAdministrator)
			return err
		})
		step("AddMember of no account", "", "", none, func() error {
			_, _, err := svc.AddMember(octx, f.m.ID, "nobody@acme.example", checkout.RoleAdministrator)
			return err
		})
		var token string
		step("InviteMember", checkout.AuditInvitationCreate, f.m.ID, is, func() error {
			inv, _, err := svc.InviteMember(octx, f.m.ID, "kim@acme.example", checkout.RoleViewer)
			if err == nil {
				obj = inv.ID
			}
			return err
		})
		step("RevokeInvitation", checkout.AuditInvitationRevoke, f.m.ID, is, func() error {
			return svc.RevokeInvitation(octx, f.m.ID, obj)
		})
		step("RevokeInvitation again", "", "", none, func() error {
			return svc.RevokeInvitation(octx, f.m.ID, obj)
		})
		step("InviteMember of a member", "", "", none, func() error {
			_, _, err := svc.InviteMember(octx, f.m.ID, jo.Email, checkout.RoleViewer)
			return err
		})
		step("InviteMember again", checkout.AuditInvitationCreate, f.m.ID, is, func() error {
			inv, tok, err := svc.InviteMember(octx, f.m.ID, "kim@acme.example", checkout.RoleViewer)
			if err == nil {
				obj, token = inv.ID, tok
			}
			return err
		})
		var kim *checkout.Account
		step("AcceptInvitationNewAccount", checkout.AuditInvitationAccept, f.m.ID, is, func() error {
			var err error
			kim, _, err = svc.AcceptInvitationNewAccount(octx, token, "a long enough password")
			return err
		})
		step("AcceptInvitationNewAccount twice", "", "", none, func() error {
			_, _, err := svc.AcceptInvitationNewAccount(ctx, token, "a long enough password")
			return err
		})
		step("SetMemberRole", checkout.AuditMemberRole, f.m.ID, func() string { return kim.ID }, func() error {
			_, err := svc.SetMemberRole(octx, f.m.ID, kim.ID, checkout.RoleSupport)
			return err
		})
		step("noop SetMemberRole to the role held", "", "", none, func() error {
			_, err := svc.SetMemberRole(octx, f.m.ID, kim.ID, checkout.RoleSupport)
			return err
		})
		step("SetMemberRole to no role", "", "", none, func() error {
			_, err := svc.SetMemberRole(octx, f.m.ID, kim.ID, "owner")
			return err
		})
		step("SetMemberRole of the last administrator", "", "", none, func() error {
			_, err := svc.SetMemberRole(octx, f.m.ID, jo.ID, checkout.RoleViewer)
			return err
		})
		step("RemoveMember", checkout.AuditMemberRemove, f.m.ID, func() string { return kim.ID }, func() error {
			_, err := svc.RemoveMember(octx, f.m.ID, kim.ID)
			return err
		})
		step("RemoveMember of no member", "", "", none, func() error {
			_, err := svc.RemoveMember(octx, f.m.ID, kim.ID)
			return err
		})
		obj = f.m.ID
		step("UpdateStore", checkout.AuditStoreUpdate, f.m.ID, is, func() error {
			_, err := svc.UpdateStore(octx, jo.ID, f.m.ID, checkout.MerchantParams{Name: "Acme Games Ltd", Currency: "USD"})
			return err
		})
		step("UpdateStore of a store jo is no member of", "", "", none, func() error {
			_, err := svc.UpdateStore(octx, jo.ID, checkout.NewStoreID(), checkout.MerchantParams{Name: "X", Currency: "USD"})
			return err
		})
		step("SetDisputeFee", checkout.AuditStoreDisputeFee, f.m.ID, is, func() error {
			_, err := svc.SetDisputeFee(octx, f.m.ID, 2000)
			return err
		})
		obj = "BTC"
		step("SetCryptoKey", checkout.AuditCryptoKeySet, f.m.ID, is, func() error {
			_, err := svc.SetCryptoKey(octx, f.m.ID, "btc", "test",
				"tpubDC8msFGeGuwnKG9Upg7DM2b4DaRqg3CUZa5g8v2SRQ6K4NSkxUgd7HsL2XVWbVm39yBA4LAxysQAm397zwQSQoQgewGiYZqrA9DsP4zbQ1M")
			return err
		})
		step("SetCryptoKey of a broken key", "", "", none, func() error {
			_, err := svc.SetCryptoKey(octx, f.m.ID, "BTC", "test", "tpubnotakey")
			return err
		})
		step("RemoveCryptoKey", checkout.AuditCryptoKeyRemove, f.m.ID, is, func() error {
			return svc.RemoveCryptoKey(octx, f.m.ID, "BTC")
		})
		step("RemoveCryptoKey of no key", "", "", none, func() error {
			return svc.RemoveCryptoKey(octx, f.m.ID, "LTC")
		})
		obj = "stripe"
		secrets = append(secrets, stripeSecretKey, stripeWebhookSecret)
		step("SetAcquirerAccount", checkout.AuditAcquirerSet, f.m.ID, is, func() error {
			_, err := svc.SetAcquirerAccount(octx, goodAcquirerParams(f.m.ID))
			return err
		})
		step("SetAcquirerAccount with a wrong key", "", "", none, func() error {
			p := goodAcquirerParams(f.m.ID)
			p.SecretKey = "hunter2hunter2hunter2"
			_, err := svc.SetAcquirerAccount(octx, p)
			return err
		})
		step("RemoveAcquirerAccount", checkout.AuditAcquirerRemove, f.m.ID, is, func() error {
			return svc.RemoveAcquirerAccount(octx, f.m.ID, checkout.ModeLive, "stripe")
		})
		step("RemoveAcquirerAccount of none", "", "", none, func() error {
			return svc.RemoveAcquirerAccount(octx, f.m.ID, checkout.ModeLive, "stripe")
		})
		var created *checkout.Merchant
		step("CreateStore", checkout.AuditStoreCreate, "=object", is, func() error {
			var err error
			created, err = svc.CreateStore(octx, jo.ID, checkout.MerchantParams{Name: "Second", Currency: "EUR"})
			if err == nil {
				obj = created.ID
				stores = append(stores, created.ID)
				seen = 0
				for _, st := range stores {
					es, _ := db.AuditList(ctx, checkout.AuditListParams{MerchantID: st, Limit: 10000})
					if st != created.ID {
						seen += len(es)
					}
				}
				es, _ := db.AuditList(ctx, checkout.AuditListParams{Limit: 10000})
				seen += len(es)
			}
			return err
		})

		// Money: refunds, crypto refunds, dispute answers. The payments
		// themselves are the buyers' and record nothing.
		p := f.paidByCard(t, "4242424242424242")
		crypto := f.paidByCrypto(t, "BTC")
		_, dispute := f.disputedByCard(t, "4000000000000259")
		seen = len(allAudit(t, db, stores...))
		f.clock.Advance(time.Second)
		var refund *checkout.Refund
		step("RefundPayment", checkout.AuditRefundCreate, f.m.ID, is, func() error {
			out, err := svc.RefundPayment(octx, service.RefundRequest{Scope: scope, PaymentID: p.ID, Params: checkout.RefundParams{Amount: amount(500)}, By: joActor})
			if err == nil {
				obj = out.Refund.ID
			}
			return err
		})
		step("RefundPayment of more than is left", "", "", none, func() error {
			_, err := svc.RefundPayment(octx, service.RefundRequest{Scope: scope, PaymentID: p.ID, Params: checkout.RefundParams{Amount: amount(5000)}, By: joActor})
			return err
		})
		step("RefundPayment of crypto", checkout.AuditRefundCreate, f.m.ID, is, func() error {
			out, err := svc.RefundPayment(octx, service.RefundRequest{Scope: scope, PaymentID: crypto.ID, Params: checkout.RefundParams{Amount: amount(500)}, By: joActor})
			if err == nil {
				refund, obj = out.Refund, out.Refund.ID
			}
			return err
		})
		step("SimulateRefundPayout before the buyer's address", "", "", none, func() error {
			_, err := svc.SimulateRefundPayout(octx, scope, refund.ID)
			return err
		})
		step("CancelRefund", checkout.AuditRefundCancel, f.m.ID, is, func() error {
			_, err := svc.CancelRefund(octx, scope, refund.ID)
			return err
		})
		step("RefundPayment of crypto again", checkout.AuditRefundCreate, f.m.ID, is, func() error {
			out, err := svc.RefundPayment(octx, service.RefundRequest{Scope: scope, PaymentID: crypto.ID, Params: checkout.RefundParams{Amount: amount(500)}, By: joActor})
			if err == nil {
				refund, obj = out.Refund, out.Refund.ID
			}
			return err
		})
		step("noop GiveRefundAddress (the buyer's)", "", "", none, func() error {
			_, err := svc.GiveRefundAddress(ctx, refund.LinkToken, buyerBTC)
			return err
		})
		step("SimulateRefundPayout", checkout.AuditRefundSimulatePayout, f.m.ID, is, func() error {
			_, err := svc.SimulateRefundPayout(octx, scope, refund.ID)
			return err
		})
		step("CancelRefund of a refund paid out", "", "", none, func() error {
			_, err := svc.CancelRefund(octx, scope, refund.ID)
			return err
		})
		obj = dispute.ID
		step("SubmitDisputeEvidence", checkout.AuditDisputeAnswer, f.m.ID, is, func() error {
			_, err := svc.SubmitDisputeEvidence(octx, service.DisputeEvidenceRequest{Scope: scope, DisputeID: dispute.ID,
				Evidence: checkout.DisputeEvidence{UncategorizedText: "winning_evidence"}, By: joActor})
			return err
		})
		step("SubmitDisputeEvidence again", "", "", none, func() error {
			_, err := svc.SubmitDisputeEvidence(octx, service.DisputeEvidenceRequest{Scope: scope, DisputeID: dispute.ID,
				Evidence: checkout.DisputeEvidence{UncategorizedText: "more"}, By: joActor})
			return err
		})

		// Account-level: accounts, sign-ins, the secrets key.
		var sam *checkout.Account
		step("CreateAccount", checkout.AuditAccountCreate, "", is, func() error {
			var err error
			if sam, err = svc.CreateAccount(octx, "sam@acme.example", goodPassword); err == nil {
				obj = sam.ID
			}
			return err
		})
		step("CreateAccount with a short password", "", "", none, func() error {
			_, err := svc.CreateAccount(octx, "kim@acme.example", "short")
			return err
		})
		signIn := service.WithOrigin(ctx, service.Origin{ClientAddress: "198.51.100.4", UserAgent: "curl/8"})
		step("SignIn", checkout.AuditSignIn, "", is, func() error {
			_, err := svc.SignIn(signIn, sam.Email, goodPassword, "198.51.100.4/32")
			return err
		})
		secrets = append(secrets, goodPassword, "wrong password 12345")
		step("SignIn with a wrong password", checkout.AuditSignInFailed, "", none, func() error {
			_, err := svc.SignIn(signIn, sam.Email, "wrong password 12345", "198.51.100.4/32")
			if !checkout.IsCode(err, checkout.EInvalidCredentials) {
				return errors.New("want invalid_credentials")
			}
			return nil
		})
		// A secret pasted into the email field is not kept.
		step("SignIn with a secret for an email", checkout.AuditSignInFailed, "", none, func() error {
			_, err := svc.SignIn(signIn, secrets[0], "wrong password 12345", "198.51.100.4/32")
			if !checkout.IsCode(err, checkout.EInvalidCredentials) {
				return errors.New("want invalid_credentials")
			}
			return nil
		})
		next, nextText := seal.Generate()
		secrets = append(secrets, nextText)
		obj = next.ID()
		step("ResealSecrets", checkout.AuditSecretsRotate, "", is, func() error {
			_, err := svc.ResealSecrets(octx, next)
			return err
		})

		// Who and from where; and never a secret.
		all := allAudit(t, db, stores...)
		var err error
		for _, e := range all {
			switch e.Action {
			case checkout.AuditAccountCreate:
				if e.ObjectID == jo.ID {
					continue // made before the origin, by the account itself
				}
			case checkout.AuditStoreCreate, checkout.AuditAPIKeyCreate:
				if e.ObjectID == f.m.ID || e.ObjectID == f.key.ID {
					continue // the fixture's, with no origin
				}
			case checkout.AuditInvitationAccept:
				// The person who joined, from where they opened the link.
				if e.Actor.Kind != checkout.ActorAccount || e.Actor.Name != "kim@acme.example" || e.ClientAddress != origin.ClientAddress {
					t.Errorf("%s recorded %+v from %q; want kim from the origin", e.Action, e.Actor, e.ClientAddress)
				}
				continue
			case checkout.AuditSignIn, checkout.AuditSignInFailed:
				if e.ClientAddress != "198.51.100.4" || e.UserAgent != "curl/8" || e.Actor.Kind != checkout.ActorAccount {
					t.Errorf("%s recorded %+v; want the account from 198.51.100.4 with curl/8", e.Action, e)
				}
				if e.Action == checkout.AuditSignIn && e.Actor.ID != sam.ID {
					t.Errorf("sign-in recorded actor %+v; want sam", e.Actor)
				}
				continue
			}
			if e.Actor != joActor || e.ClientAddress != origin.ClientAddress || e.UserAgent != origin.UserAgent {
				t.Errorf("%s recorded %+v from %q %q; want jo from the origin", e.Action, e.Actor, e.ClientAddress, e.UserAgent)
			}
		}
		tried, err := svc.ListAudit(ctx, "", service.AuditFilter{Actor: "email:Sam@acme.example"}, "", 10)
		if err != nil || len(tried.Items) != 1 || tried.Items[0].Action != checkout.AuditSignInFailed {
			t.Errorf("the failed sign-ins that tried sam's email = %+v, %v; want one", tried.Items, err)
		}
		failed, err := svc.ListAudit(ctx, "", service.AuditFilter{Action: string(checkout.AuditSignInFailed)}, "", 10)
		if err != nil || len(failed.Items) != 2 || failed.Items[1].Actor.Name != sam.Email {
			t.Fatalf("failed sign-ins = %+v, %v; want two, the older with sam's email", failed.Items, err)
		}
		for _, e := range all {
			for _, field := range []string{e.ID, e.MerchantID, e.Actor.ID, e.Actor.Name, string(e.Action), e.ObjectID, e.ClientAddress, e.UserAgent} {
				if checkout.RedactSecrets(field) != field {
					t.Errorf("%s holds a secret-shaped string: %q", e.Action, field)
				}
				for _, s := range secrets {
					if s != "" && strings.Contains(field, s) {
						t.Errorf("%s holds a secret: %q", e.Action, field)
					}
				}
			}
		}
	})
}

// failingAuditStore is a real store whose transactions write the audit
// entry and then fail, as a database would that broke at the commit.
type failingAuditStore struct{ checkout.Store }

func (s failingAuditStore) InTx(ctx context.Context, fn func(checkout.Tx) error) error {
	return s.Store.InTx(ctx, func(tx checkout.Tx) error { return fn(failingAuditTx{tx}) })
}

type failingAuditTx struct{ checkout.Tx }

var errAuditBroken = errors.New("the database broke after the audit entry")

func (tx failingAuditTx) AuditInsert(ctx context.Context, e *checkout.AuditEntry) error {
	if err := tx.Tx.AuditInsert(ctx, e); err != nil {
		return err
	}
	return errAuditBroken
}

// A change and its audit entry are one transaction: when the transaction
// fails after both were written, neither is kept.
func TestAuditIsWrittenWithItsChange(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		broken := service.New(service.Config{Store: failingAuditStore{db}, Now: f.clock.Now, CheckoutBaseURL: "https://pay.example",
			Actor: checkout.Actor{Kind: checkout.ActorCLI, Name: "root"}})
		before := allAudit(t, db, f.m.ID)
		if _, _, err := broken.CreateAPIKey(ctx, checkout.APIKeyParams{MerchantID: f.m.ID, Mode: checkout.ModeLive, Type: checkout.KeyBearer,
			Permissions: []checkout.Permission{checkout.PermCheckoutsWrite}}); !errors.Is(err, errAuditBroken) {
			t.Fatalf("CreateAPIKey with the transaction failing = %v; want it to fail", err)
		}
		if ks, _ := db.APIKeyList(ctx, f.m.ID); len(ks) != 1 {
			t.Errorf("%d keys after a failed create; want the fixture's one", len(ks))
		}
		if _, err := broken.UpdateStore(ctx, "", f.m.ID, checkout.MerchantParams{Name: "Renamed", Currency: "USD"}); err == nil {
			t.Fatal("UpdateStore without membership = nil error")
		}
		if _, err := broken.SetDisputeFee(ctx, f.m.ID, 100); !errors.Is(err, errAuditBroken) {
			t.Fatalf("SetDisputeFee with the transaction failing = %v; want it to fail", err)
		}
		if m, _ := db.MerchantGet(ctx, f.m.ID); m.Pricing.DisputeFee == 100 {
			t.Error("the dispute fee changed in a transaction that failed")
		}
		if after := allAudit(t, db, f.m.ID); len(after) != len(before) {
			t.Errorf("%d audit entries after failed changes; want %d", len(after), len(before))
		}
		// The same change on a sound store: one entry, by the CLI's actor.
		cli := service.New(service.Config{Store: db, Now: f.clock.Now, Actor: checkout.Actor{Kind: checkout.ActorCLI, Name: "root"}})
		if _, err := cli.SetDisputeFee(ctx, f.m.ID, 100); err != nil {
			t.Fatal(err)
		}
		page, err := cli.ListAudit(ctx, f.m.ID, service.AuditFilter{Actor: "cli:root"}, "", 10)
		if err != nil || len(page.Items) != 1 || page.Items[0].Action != checkout.AuditStoreDisputeFee || page.Items[0].ClientAddress != "" {
			t.Errorf("the CLI's entries = %+v, %v; want the dispute fee's, with no address", page.Items, err)
		}
	})
}

// The purge keeps an audit entry for a year and deletes it after.
func TestAuditPurgedAfterAYear(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		count := func() int { return len(allAudit(t, db, f.m.ID)) }
		n := count() // the fixture's store and key
		if n == 0 {
			t.Fatal("the fixture recorded nothing")
		}
		f.clock.Advance(checkout.AuditRetention - time.Second)
		if _, err := f.svc.SetDisputeFee(ctx, f.m.ID, 100); err != nil {
			t.Fatal(err)
		}
		res, err := f.svc.Purge(ctx)
		if err != nil || res.AuditEntries != 0 || count() != n+1 {
			t.Fatalf("Purge a second before a year = %+v, %v, %d entries; want none deleted", res, err, count())
		}
		f.clock.Advance(time.Second + time.Millisecond)
		res, err = f.svc.Purge(ctx)
		if err != nil || res.AuditEntries != int64(n) || count() != 1 {
			t.Fatalf("Purge a year on = %+v, %v, %d entries left; want the %d of a year ago deleted, one left", res, err, count(), n)
		}
	})
}

// The audit list's filters: actor by email, id or cli:USER; action; dates;
// paging; and every bad filter refused, naming it.
func TestListAuditFilters(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		jo := f.account(t, "jo@acme.example")
		octx := service.WithOrigin(ctx, service.Origin{Actor: checkout.Actor{Kind: checkout.ActorAccount, ID: jo.ID, Name: jo.Email}})
		start := f.clock.Now()
		for range 5 {
			f.clock.Advance(time.Minute)
			if _, err := f.svc.SetDisputeFee(octx, f.m.ID, 100); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range []struct {
			f    service.AuditFilter
			want int
		}{
			{service.AuditFilter{Actor: "Jo@Acme.example"}, 5},
			{service.AuditFilter{Actor: jo.ID}, 5},
			{service.AuditFilter{Actor: f.key.ID}, 0},
			{service.AuditFilter{Actor: "cli:root"}, 0},
			{service.AuditFilter{Actor: "cli:" + strings.Repeat("r", 296)}, 0},
			{service.AuditFilter{Action: "store.dispute_fee"}, 5},
			{service.AuditFilter{Action: "api_key.create"}, 1},
			{service.AuditFilter{Since: start.Add(2 * time.Minute), Until: start.Add(4 * time.Minute)}, 2},
		} {
			var got int
			cursor := ""
			for {
				page, err := f.svc.ListAudit(ctx, f.m.ID, c.f, cursor, 2)
				if err != nil {
					t.Fatalf("ListAudit(%+v) = %v", c.f, err)
				}
				got += len(page.Items)
				if cursor = page.Next; cursor == "" {
					break
				}
			}
			if got != c.want {
				t.Errorf("ListAudit(%+v) = %d entries; want %d", c.f, got, c.want)
			}
		}
		for _, c := range []struct {
			f     service.AuditFilter
			param string
		}{
			{service.AuditFilter{Actor: "jo"}, "actor"},
			{service.AuditFilter{Actor: "cli:"}, "actor"},
			{service.AuditFilter{Actor: "cli:" + strings.Repeat("r", 297)}, "actor"},
			{service.AuditFilter{Action: "api_key.eat"}, "action"},
			{service.AuditFilter{Since: start.Add(time.Hour), Until: start}, "until"},
		} {
			_, err := f.svc.ListAudit(ctx, f.m.ID, c.f, "", 10)
			wantError(t, "ListAudit", err, checkout.EValidationFailed, c.param)
		}
		if _, err := f.svc.ListAudit(ctx, f.m.ID, service.AuditFilter{}, "bogus!", 10); !checkout.IsCode(err, checkout.EValidationFailed) {
			t.Errorf("ListAudit with a bad cursor = %v; want validation_failed", err)
		}
	})
}

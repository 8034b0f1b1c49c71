package dashboard_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/app"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
	"github.com/checkoutd/checkoutd/internal/webhook/webhooktest"
)

// auditCount is how many audit entries store storeID ("" for the
// account-level ones) holds.
func (e *env) auditCount(storeID string) int {
	e.t.Helper()
	es, err := e.db.AuditList(context.Background(), checkout.AuditListParams{MerchantID: storeID, Limit: 100000})
	if err != nil {
		e.t.Fatal(err)
	}
	return len(es)
}

// newestAudit is store storeID's newest audit entry.
func (e *env) newestAudit(storeID string) *checkout.AuditEntry {
	e.t.Helper()
	es, err := e.db.AuditList(context.Background(), checkout.AuditListParams{MerchantID: storeID, Limit: 1})
	if err != nil || len(es) == 0 {
		e.t.Fatalf("no audit entry in %q: %v", storeID, err)
	}
	return es[0]
}

// Every changing form of the dashboard leaves one audit entry, by the
// account signed in, from the browser's address and user agent; a form
// refused leaves none; a failed sign-in leaves a failed-attempt entry with
// the email tried.
func TestDashboardActionsAreAudited(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		n := webhooktest.NewNetwork(t)
		e := &hookEnv{env: newEnvWith(t, db, "http://dash.example.test", func(c *app.Config) {
			fakeInternet(n)(c)
			c.Processors = pay.Registry{Test: pay.Simulators()}
		}), net: n}
		ann := e.account("ann@example.com")
		m, err := e.svc.CreateStore(context.Background(), ann.ID, checkout.MerchantParams{Name: "Ann's", Currency: "USD"})
		if err != nil {
			t.Fatal(err)
		}
		base := "/dashboard/stores/" + m.ID + "/test/"

		// Sign-in, failed and not: account-level entries.
		before := e.auditCount("")
		if p := e.trySignIn("ann@example.com", "not the password at all"); p.status != http.StatusUnauthorized {
			t.Fatalf("a wrong password = %d", p.status)
		}
		if got := e.newestAudit(""); e.auditCount("") != before+1 || got.Action != checkout.AuditSignInFailed ||
			got.Actor.Name != "ann@example.com" || got.Actor.ID != "" || got.ClientAddress != "127.0.0.1" {
			t.Errorf("a failed sign-in recorded %+v; want one failed attempt with the email tried", got)
		}
		c := e.signIn("ann@example.com")
		if got := e.newestAudit(""); e.auditCount("") != before+2 || got.Action != checkout.AuditSignIn || got.Actor.ID != ann.ID {
			t.Errorf("a sign-in recorded %+v", got)
		}

		n.Receiver(t, "hooks.example.com")
		var keyID, epPath string
		step := func(name string, want checkout.AuditAction, do func() *page) {
			t.Helper()
			e.clock.Advance(time.Second)
			before := e.auditCount(m.ID)
			p := do()
			after := e.auditCount(m.ID)
			if want == "" {
				if after != before {
					t.Errorf("%s (%d) left %d audit entries; want none", name, p.status, after-before)
				}
				return
			}
			if p.status >= 400 {
				t.Fatalf("%s = %d: %s", name, p.status, p.body)
			}
			got := e.newestAudit(m.ID)
			if after != before+1 || got.Action != want || got.Actor.ID != ann.ID || got.Actor.Name != "ann@example.com" ||
				got.ClientAddress != "127.0.0.1" || got.UserAgent != "Go-http-client/1.1" {
				t.Errorf("%s left %d entries, the newest %+v; want one %s by ann from 127.0.0.1", name, after-before, got, want)
			}
		}
		keys := base + "developers/keys"
		step("create a key with a bad name", "", func() *page {
			return e.formPost(keys, keys, url.Values{"name": {strings.Repeat("n", 101)}, "type": {"bearer"}, "permissions": {"checkouts:write"}}, c)
		})
		step("create a key", checkout.AuditAPIKeyCreate, func() *page {
			p := e.formPost(keys, keys, url.Values{"name": {"Storefront"}, "type": {"bearer"}, "permissions": {"checkouts:write"}}, c)
			ks, _ := db.APIKeyList(context.Background(), m.ID)
			keyID = ks[0].ID
			return p
		})
		step("revoke a key", checkout.AuditAPIKeyRevoke, func() *page {
			return e.formPost(keys+"/"+keyID+"/revoke", keys+"/"+keyID+"/revoke", url.Values{}, c)
		})
		step("add an endpoint over http", "", func() *page {
			return e.formPost(base+"developers/webhooks/new", base+"developers/webhooks/new", url.Values{"url": {"http://hooks.example.com/x"}, "all": {"1"}}, c)
		})
		step("add an endpoint", checkout.AuditEndpointCreate, func() *page {
			var epID string
			epPath, epID = e.addEndpoint(m, c, url.Values{"url": {"https://hooks.example.com/x"}, "all": {"1"}})
			if got := e.newestAudit(m.ID); got.ObjectID != epID {
				t.Errorf("the endpoint's entry names %q; want %s", got.ObjectID, epID)
			}
			return &page{status: http.StatusSeeOther}
		})
		step("edit it", checkout.AuditEndpointUpdate, func() *page {
			return e.formPost(epPath+"/edit", epPath+"/edit", url.Values{"url": {"https://hooks.example.com/y"}, "all": {"1"}, "description": {"Orders"}}, c)
		})
		for _, a := range []struct {
			action string
			want   checkout.AuditAction
		}{
			{"test", checkout.AuditEndpointTest}, {"disable", checkout.AuditEndpointDisable}, {"enable", checkout.AuditEndpointEnable},
			{"secret", checkout.AuditEndpointSecretReveal}, {"roll", checkout.AuditEndpointSecretRoll},
		} {
			step(a.action, a.want, func() *page { return e.formPost(epPath, epPath+"/"+a.action, url.Values{}, c) })
		}
		step("resend the canceled test delivery", checkout.AuditDeliveryResend, func() *page {
			ds, _ := db.DeliveryList(context.Background(), checkout.DeliveryListParams{EndpointID: epPath[strings.LastIndex(epPath, "/")+1:]})
			dPath := base + "developers/deliveries/" + ds[len(ds)-1].ID
			return e.formPost(dPath, dPath+"/resend", url.Values{}, c)
		})
		step("retry failed with a bad date", "", func() *page {
			return e.formPost(epPath, epPath+"/retry-failed", url.Values{"since": {"last week"}}, c)
		})
		step("roll keeping the old for 25 hours", "", func() *page {
			return e.formPost(epPath, epPath+"/roll", url.Values{"overlap": {"keep"}, "hours": {"25"}}, c)
		})
		step("delete it", checkout.AuditEndpointDelete, func() *page {
			return e.formPost(epPath+"/delete", epPath+"/delete", url.Values{}, c)
		})
		settings := base + "settings"
		step("store settings without a name", "", func() *page {
			return e.formPost(settings, settings, url.Values{"name": {""}, "currency": {"GBP"}}, c)
		})
		step("store settings", checkout.AuditStoreUpdate, func() *page {
			return e.formPost(settings, settings, url.Values{"name": {"Ann's games"}, "currency": {"GBP"}}, c)
		})
		crypto := "/dashboard/stores/" + m.ID + "/live/settings/crypto"
		step("a crypto key", checkout.AuditCryptoKeySet, func() *page {
			return e.formPost(crypto, crypto, url.Values{"coin": {"BTC"}, "key": {bip84Zpub}, "network": {"main"}}, c)
		})
		step("a private key", "", func() *page {
			return e.formPost(crypto, crypto, url.Values{"coin": {"BTC"}, "key": {bip32Xprv}, "network": {"main"}}, c)
		})
		step("remove the crypto key", checkout.AuditCryptoKeyRemove, func() *page {
			return e.formPost(crypto+"/btc/remove", crypto+"/btc/remove", url.Values{}, c)
		})

		// A store made through the form: its creation is the new store's.
		before = e.auditCount("")
		p := e.formPost("/dashboard/stores/new", "/dashboard/stores/new", url.Values{"name": {"Second"}, "currency": {"EUR"}}, c)
		id := strings.TrimSuffix(strings.TrimPrefix(p.header.Get("Location"), "/dashboard/stores/"), "/test/")
		if got := e.newestAudit(id); p.status != http.StatusSeeOther || e.auditCount(id) != 1 || got.Action != checkout.AuditStoreCreate ||
			got.ObjectID != id || got.Actor.ID != ann.ID || e.auditCount("") != before {
			t.Errorf("a store created in the dashboard recorded %+v (%d)", got, p.status)
		}

		// The secrets the dashboard showed are nowhere in the trail.
		all, _ := db.AuditList(context.Background(), checkout.AuditListParams{MerchantID: m.ID, Limit: 1000})
		for _, a := range all {
			for _, f := range []string{a.Actor.Name, a.ObjectID, a.UserAgent} {
				if checkout.RedactSecrets(f) != f || strings.Contains(f, bip32Xprv) {
					t.Errorf("%s holds a secret: %q", a.Action, f)
				}
			}
		}
	})
}

// A refund from a payment's page is recorded as the account's, once.
func TestDashboardRefundIsAudited(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newRefundEnv(t, db)
		p := e.paidByCard("4242424242424242")
		before := e.auditCount(e.m.ID)
		if pg := e.confirm(p, e.confirmation(p, "10.00", "")); pg.status != http.StatusSeeOther {
			t.Fatalf("refund = %d: %s", pg.status, pg.body)
		}
		got := e.newestAudit(e.m.ID)
		if e.auditCount(e.m.ID) != before+1 || got.Action != checkout.AuditRefundCreate || got.Actor.Name != "ann@example.com" ||
			got.ClientAddress != "127.0.0.1" || !strings.HasPrefix(got.ObjectID, checkout.PrefixRefund) {
			t.Errorf("a refund recorded %+v", got)
		}
		one := func(what string, want checkout.AuditAction, object string) {
			t.Helper()
			got := e.newestAudit(e.m.ID)
			if n := e.auditCount(e.m.ID); n != before+1 || got.Action != want || got.ObjectID != object {
				t.Errorf("%s left %d entries, the newest %+v; want one %s on %s", what, n-before, got, want, object)
			}
			before = e.auditCount(e.m.ID)
		}
		before = e.auditCount(e.m.ID)

		// Through the API: the key, from the caller's address.
		k, secret, err := e.svc.CreateAPIKey(context.Background(), checkout.APIKeyParams{MerchantID: e.m.ID, Mode: checkout.ModeTest,
			Type: checkout.KeyBearer, Permissions: []checkout.Permission{checkout.PermRefundsWrite}})
		if err != nil {
			t.Fatal(err)
		}
		before = e.auditCount(e.m.ID)
		if st, _ := e.apiDo("POST", "/v1/stores/"+e.m.ID+"/payments/"+p.ID+"/refunds", secret, `{"amount":100}`); st != http.StatusCreated {
			t.Fatalf("an API refund = %d", st)
		}
		if got := e.newestAudit(e.m.ID); got.Actor.Kind != checkout.ActorAPIKey || got.Actor.ID != k.ID || got.ClientAddress != "127.0.0.1" {
			t.Errorf("an API refund recorded %+v; want the key from 127.0.0.1", got)
		}
		var apiRefund string
		for _, r := range e.refunds(p) {
			if r.RequestedBy.Kind == checkout.ActorAPIKey {
				apiRefund = r.ID
			}
		}
		one("an API refund", checkout.AuditRefundCreate, apiRefund)
		if st, _ := e.apiDo("POST", "/v1/stores/"+e.m.ID+"/payments/"+p.ID+"/refunds", secret, `{"amount":100000}`); st == http.StatusCreated {
			t.Fatal("an API refund of too much was made")
		}
		if n := e.auditCount(e.m.ID); n != before {
			t.Errorf("a refused API refund left %d entries", n-before)
		}

		// A crypto refund canceled; another paid out (simulated).
		crypto := e.paidByCrypto("BTC")
		before = e.auditCount(e.m.ID)
		r := e.cryptoRefund(crypto, "5.00", "")
		one("a crypto refund", checkout.AuditRefundCreate, r.ID)
		e.refundAction(r, "cancel")
		one("cancel it", checkout.AuditRefundCancel, r.ID)
		r = e.cryptoRefund(crypto, "5.00", "")
		one("another crypto refund", checkout.AuditRefundCreate, r.ID)
		if _, err := e.svc.GiveRefundAddress(context.Background(), r.LinkToken, buyerBTC); err != nil {
			t.Fatal(err)
		}
		if n := e.auditCount(e.m.ID); n != before {
			t.Errorf("the buyer's address left %d entries; want none (the buyer is no member)", n-before)
		}
		e.refundAction(r, "simulate-payout")
		one("simulate its payout", checkout.AuditRefundSimulatePayout, r.ID)
		e.refundAction(r, "cancel")
		if n := e.auditCount(e.m.ID); n != before {
			t.Errorf("canceling a refund paid out left %d entries", n-before)
		}

		// A dispute answered.
		disputed, d := e.disputed("4000000000000259")
		before = e.auditCount(e.m.ID)
		e.evidenceSent(disputed, e.sendEvidence(disputed, e.evidenceConfirmation(disputed, map[string]string{"uncategorized_text": "winning_evidence"})))
		one("a dispute answered", checkout.AuditDisputeAnswer, d.ID)
	})
}

// The Security page lists the store's entries newest first, both modes,
// keyset-paged, filtered by actor, action and dates; bad filters are
// refused beside their field; merchant text is escaped; another store's
// page is a 404 and a signed-out visit goes to sign-in.
func TestSecurityPage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, "http://dash.example.test")
		m, ann := e.signedInStore("ann@example.com")
		a, _ := db.AccountGetByEmail(context.Background(), "ann@example.com")
		security := "/dashboard/stores/" + m.ID + "/live/settings/security"
		ctx := service.WithOrigin(context.Background(), service.Origin{Actor: checkout.Actor{Kind: checkout.ActorAccount, ID: a.ID, Name: a.Email},
			ClientAddress: "192.0.2.9", UserAgent: `<script>alert("ua")</script>`})
		cli := service.WithOrigin(context.Background(), service.Origin{Actor: checkout.Actor{Kind: checkout.ActorCLI, Name: "root"}})
		start := e.clock.Now()
		if start.Hour() > 22 {
			t.Fatal("the fixture's clock must leave an hour in its day")
		}
		for i := range 55 {
			e.clock.Advance(time.Minute)
			c := ctx
			if i%5 == 0 {
				c = cli
			}
			if _, err := e.svc.SetDisputeFee(c, m.ID, int64(i)); err != nil {
				t.Fatal(err)
			}
		}
		p := e.get(security, ann)
		if p.status != http.StatusOK || strings.Count(p.body, "<code>store.dispute_fee</code>") != 50 {
			t.Fatalf("the first page = %d with %d entries; want 50: %s", p.status, strings.Count(p.body, "<code>store.dispute_fee</code>"), p.body)
		}
		if strings.Contains(p.body, `<script>alert("ua")`) || !strings.Contains(p.body, "&lt;script&gt;") || !strings.Contains(p.body, "Command line (root)") {
			t.Error("the page shows the user agent unescaped, or misses the CLI's entries")
		}
		if !strings.Contains(p.body, `aria-current="page">Security</a>`) {
			t.Error("the navigation does not mark Security as the current page")
		}
		older := olderRE.FindStringSubmatch(p.body)
		if older == nil {
			t.Fatal("the first page has no Older link")
		}
		p2 := e.get(html.UnescapeString(older[1]), ann)
		// 55 fee changes and the store's creation: 6 on the second page.
		if p2.status != http.StatusOK || strings.Count(p2.body, "<tr>")-1 != 6 || !strings.Contains(p2.body, "<code>store.create</code>") || olderRE.MatchString(p2.body) {
			t.Errorf("the second page = %d with %d rows; want the last 6: %s", p2.status, strings.Count(p2.body, "<tr>")-1, p2.body)
		}

		for _, c := range []struct {
			query string
			rows  int
		}{
			{"actor=cli%3Aroot", 11},
			{"actor=ANN%40example.com&action=store.dispute_fee", 44},
			{"action=store.create", 1},
			{"from=" + start.Format("2006-01-02") + "&to=" + start.Format("2006-01-02") + "&action=store.create", 1},
			{"from=" + start.Add(24*time.Hour).Format("2006-01-02"), 0},
			{"actor=nobody%40example.com", 0},
		} {
			p := e.get(security+"?"+c.query, ann)
			rows := strings.Count(p.body, "<tr>") - 1
			if c.rows == 0 {
				rows = 0
				if !strings.Contains(p.body, "No entry matches these filters") {
					t.Errorf("%s: no empty state: %s", c.query, p.body)
				}
			}
			if p.status != http.StatusOK || rows != c.rows {
				t.Errorf("%s = %d with %d rows; want %d", c.query, p.status, rows, c.rows)
			}
		}
		for _, c := range []struct{ query, field string }{
			{"actor=ann", "f-actor-error"},
			{"action=store.burn", "f-action-error"},
			{"from=yesterday", "f-from-error"},
			{"from=2026-12-02&to=2026-11-30", "f-to-error"},
		} {
			if p := e.get(security+"?"+c.query, ann); p.status != http.StatusBadRequest || !strings.Contains(p.body, `id="`+c.field+`"`) {
				t.Errorf("%s = %d; want 400 with %s: %s", c.query, p.status, c.field, p.body)
			}
		}
		if p := e.get(security+"?cursor=nonsense!", ann); p.status != http.StatusBadRequest {
			t.Errorf("a bad cursor = %d; want 400", p.status)
		}

		// Bob's store has its own, empty-but-for-its-creation trail; ann's
		// is not his to see.
		bobStore, bob := e.signedInStore("bob@example.com")
		if p := e.get(security, bob); p.status != http.StatusNotFound {
			t.Errorf("ann's Security page for bob = %d; want 404", p.status)
		}
		if p := e.get("/dashboard/stores/"+bobStore.ID+"/test/settings/security", bob); p.status != http.StatusOK ||
			strings.Contains(p.body, "<code>store.dispute_fee</code>") || !strings.Contains(p.body, "<code>store.create</code>") {
			t.Errorf("bob's Security page = %d: %s", p.status, p.body)
		}
		wantRedirectToSignIn(t, "the Security page signed out", e.get(security))
	})
}

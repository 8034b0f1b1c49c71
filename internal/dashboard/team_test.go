package dashboard_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

var invitationLinkRE = regexp.MustCompile(`<code id="invitation-url">([^<]+)</code>`)

// An administrator invites through the Team page: the link shows once; a
// new person opens it, chooses a password and joins with the role; the link
// then works no more. An account of the email, signed in, joins with a
// button; another account is told to sign out.
func TestTeamInvitation(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, "http://dash.example.test")
		m, ann := e.signedInStore("ann@example.com")
		team := "/dashboard/stores/" + m.ID + "/test/team"
		p := e.get(team, ann)
		if p.status != http.StatusOK || !strings.Contains(p.body, "ann@example.com") || !strings.Contains(p.body, "No invitation is waiting") ||
			!strings.Contains(p.body, `href="`+team+`"`) {
			t.Fatalf("the team page = %d: %s", p.status, p.body)
		}
		// Refusals beside the fields, the values kept.
		p = e.formPost(team, team+"/invite", url.Values{"email": {"<b>bob"}, "role": {"owner"}}, ann)
		if p.status != http.StatusBadRequest || !strings.Contains(p.body, `id="invite-email-error"`) || !strings.Contains(p.body, `id="invite-role-error"`) ||
			!strings.Contains(p.body, `value="&lt;b&gt;bob"`) {
			t.Errorf("a bad invitation = %d: %s", p.status, p.body)
		}
		p = e.formPost(team, team+"/invite", url.Values{"email": {"ann@example.com"}, "role": {"viewer"}}, ann)
		if p.status != http.StatusConflict || !strings.Contains(p.body, "is a member of this store already") {
			t.Errorf("inviting a member = %d: %s", p.status, p.body)
		}

		p = e.formPost(team, team+"/invite", url.Values{"email": {"Bob@example.com"}, "role": {"support"}}, ann)
		link := invitationLinkRE.FindStringSubmatch(p.body)
		if p.status != http.StatusOK || link == nil || p.header.Get("Cache-Control") != "no-store" || !strings.Contains(p.body, "bob@example.com") {
			t.Fatalf("invite = %d: %s", p.status, p.body)
		}
		u, _ := url.Parse(html.UnescapeString(link[1]))
		if u.Host != "dash.example.test" || u.Path != "/dashboard/invitation" {
			t.Errorf("the link = %s", u)
		}
		p = e.get(team, ann)
		if strings.Contains(p.body, u.Query().Get("token")) || !strings.Contains(p.body, "bob@example.com") || !strings.Contains(p.body, "Support") {
			t.Errorf("the team page after the invitation shows the link again, or not the invitation: %s", p.body)
		}

		// A new person.
		open := u.RequestURI()
		p = e.get(open)
		if p.status != http.StatusOK || !strings.Contains(p.body, "Create account and join") || !strings.Contains(p.body, `value="bob@example.com" readonly`) ||
			p.header.Get("Referrer-Policy") != "no-referrer" {
			t.Fatalf("the invitation page = %d: %s", p.status, p.body)
		}
		fc := p.cookie("checkoutd_dashboard_form")
		join := func(pw string) *page {
			return e.post("/dashboard/invitation", url.Values{"form_token": {p.formToken(t)}, "token": {u.Query().Get("token")}, "password": {pw}}, fc)
		}
		if res := join("short"); res.status != http.StatusBadRequest || !strings.Contains(res.body, `id="password-error"`) {
			t.Errorf("join with a short password = %d: %s", res.status, res.body)
		}
		res := join(password)
		if res.status != http.StatusSeeOther || res.header.Get("Location") != "/dashboard/stores/"+m.ID+"/test/" {
			t.Fatalf("join = %d %s: %s", res.status, res.header.Get("Location"), res.body)
		}
		bob := res.cookie(e.sessionCookieName())
		if p := e.get("/dashboard/stores/"+m.ID+"/test/payments", bob); p.status != http.StatusOK {
			t.Errorf("bob's payments page = %d", p.status)
		}
		if p := e.get("/dashboard/stores/"+m.ID+"/test/developers/keys", bob); p.status != http.StatusForbidden {
			t.Errorf("bob (support) opens API keys = %d; want 403", p.status)
		}
		if res := join(password); res.status != http.StatusNotFound || !strings.Contains(res.body, "used already") {
			t.Errorf("the link used again = %d: %s", res.status, res.body)
		}
		if p := e.get(open); p.status != http.StatusNotFound || !strings.Contains(p.body, "used already") {
			t.Errorf("the used link opened = %d: %s", p.status, p.body)
		}
		if p := e.get("/dashboard/invitation?token=nothere"); p.status != http.StatusNotFound || !strings.Contains(p.body, "not valid") {
			t.Errorf("an unknown link = %d: %s", p.status, p.body)
		}

		// An account of the email, signed in; another account.
		carl := e.account("carl@example.com")
		_, token, err := e.svc.InviteMember(context.Background(), m.ID, "carl@example.com", checkout.RoleDeveloper)
		if err != nil {
			t.Fatal(err)
		}
		open = "/dashboard/invitation?token=" + url.QueryEscape(token)
		if p := e.get(open, bob); !strings.Contains(p.body, "Sign out, then open the link again") || strings.Contains(p.body, "/dashboard/invitation/accept") {
			t.Errorf("the invitation page to another account: %s", p.body)
		}
		carlSession := e.signIn("carl@example.com")
		p = e.get(open, carlSession)
		if !strings.Contains(p.body, "/dashboard/invitation/accept") {
			t.Fatalf("the invitation page to carl: %s", p.body)
		}
		res = e.post("/dashboard/invitation/accept", url.Values{"form_token": {p.formToken(t)}, "token": {token}}, carlSession)
		if res.status != http.StatusSeeOther || res.header.Get("Location") != "/dashboard/stores/"+m.ID+"/test/" {
			t.Fatalf("accept = %d %s: %s", res.status, res.header.Get("Location"), res.body)
		}
		if ms, _ := e.db.MembershipGet(context.Background(), carl.ID, m.ID); ms == nil || ms.Role != checkout.RoleDeveloper {
			t.Errorf("carl's membership = %+v; want developer", ms)
		}
		res = e.post("/dashboard/invitation/accept", url.Values{"form_token": {p.formToken(t)}, "token": {token}}, carlSession)
		if res.status != http.StatusConflict || !strings.Contains(res.body, "used already") {
			t.Errorf("accept again = %d: %s", res.status, res.body)
		}
	})
}

// An administrator changes a role and removes a member from the Team page:
// the member's next page follows at once. The last administrator stays.
func TestTeamRolesAndRemoval(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, "http://dash.example.test")
		ctx := context.Background()
		m, ann := e.signedInStore("ann@example.com")
		annID := e.account2("ann@example.com").ID
		bob := e.account("bob@example.com")
		if _, _, err := e.svc.AddMember(ctx, m.ID, bob.Email, checkout.RoleDeveloper); err != nil {
			t.Fatal(err)
		}
		own, err := e.svc.CreateStore(ctx, bob.ID, checkout.MerchantParams{Name: "Bob's", Currency: "USD"})
		if err != nil {
			t.Fatal(err)
		}
		bobSession := e.signIn("bob@example.com")
		team := "/dashboard/stores/" + m.ID + "/test/team"
		keys := "/dashboard/stores/" + m.ID + "/test/developers/keys"
		if p := e.get(keys, bobSession); p.status != http.StatusOK {
			t.Fatalf("bob's keys page = %d", p.status)
		}
		if p := e.get(team, bobSession); p.status != http.StatusOK || strings.Contains(p.body, "/team/members/") || strings.Contains(p.body, "Create invitation link") {
			t.Errorf("a developer's team page = %d, with the administrator's forms: %s", p.status, p.body)
		}
		// A developer is refused the administrator's actions.
		if p := e.formPost(team, team+"/members/"+annID+"/role", url.Values{"role": {"viewer"}}, bobSession); p.status != http.StatusForbidden {
			t.Errorf("a developer demoting the administrator = %d; want 403", p.status)
		}

		p := e.formPost(team, team+"/members/"+bob.ID+"/role", url.Values{"role": {"support"}}, ann)
		if p.status != http.StatusSeeOther || p.header.Get("Location") != team+"?done=role" {
			t.Fatalf("change bob's role = %d %s: %s", p.status, p.header.Get("Location"), p.body)
		}
		if p := e.get(keys, bobSession); p.status != http.StatusForbidden || !strings.Contains(p.body, "(Support)") {
			t.Errorf("bob's keys page once support = %d: %s", p.status, p.body)
		}
		p = e.formPost(team, team+"/members/"+annID+"/role", url.Values{"role": {"viewer"}}, ann)
		if p.status != http.StatusConflict || !strings.Contains(p.body, "last administrator") {
			t.Errorf("demote the last administrator = %d: %s", p.status, p.body)
		}
		p = e.formPost(team, team+"/members/"+annID+"/remove", url.Values{}, ann)
		if p.status != http.StatusConflict || !strings.Contains(p.body, "last administrator") {
			t.Errorf("remove the last administrator = %d: %s", p.status, p.body)
		}
		p = e.formPost(team, team+"/members/"+bob.ID+"/remove", url.Values{}, ann)
		if p.status != http.StatusSeeOther || p.header.Get("Location") != team+"?done=removed" {
			t.Fatalf("remove bob = %d %s: %s", p.status, p.header.Get("Location"), p.body)
		}
		for _, path := range []string{"/dashboard/stores/" + m.ID + "/test/", "/dashboard/stores/" + m.ID + "/test/payments"} {
			if p := e.get(path, bobSession); p.status != http.StatusNotFound {
				t.Errorf("bob, removed, opens %s = %d; want 404", path, p.status)
			}
		}
		if p := e.get("/dashboard/stores/"+own.ID+"/test/", bobSession); p.status != http.StatusOK {
			t.Errorf("bob's own store after his removal from ann's = %d; want his session going on", p.status)
		}
		if p := e.formPost(team, team+"/members/"+bob.ID+"/remove", url.Values{}, ann); p.status != http.StatusNotFound {
			t.Errorf("remove bob again = %d; want 404", p.status)
		}
		// An invitation revoked.
		inv, _, err := e.svc.InviteMember(ctx, m.ID, "dan@example.com", checkout.RoleViewer)
		if err != nil {
			t.Fatal(err)
		}
		if p := e.formPost(team, team+"/invitations/"+inv.ID+"/revoke", url.Values{}, ann); p.status != http.StatusSeeOther {
			t.Errorf("revoke = %d: %s", p.status, p.body)
		}
		if p := e.get(team, ann); strings.Contains(p.body, "dan@example.com") || !strings.Contains(p.body, "No invitation is waiting") {
			t.Errorf("the team page after the revoke: %s", p.body)
		}
		if p := e.formPost(team, team+"/invitations/"+inv.ID+"/revoke", url.Values{}, ann); p.status != http.StatusNotFound {
			t.Errorf("revoke again = %d; want 404", p.status)
		}
	})
}

// account2 returns the account with this email.
func (e *env) account2(email string) *checkout.Account {
	e.t.Helper()
	a, err := e.db.AccountGetByEmail(context.Background(), email)
	if err != nil {
		e.t.Fatal(err)
	}
	return a
}

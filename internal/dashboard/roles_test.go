package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/app"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
	"github.com/checkoutd/checkoutd/internal/webhook/webhooktest"
)

// dashboardRouteRE matches a dashboard route in the server's route table.
var dashboardRouteRE = regexp.MustCompile(`r\.handle\("(GET|POST) (/dashboard[^"]*)"`)

// dashboardRoutes lists the dashboard's routes ("GET /dashboard/...") as
// internal/server/routes.go registers them.
func dashboardRoutes(t *testing.T) []string {
	t.Helper()
	src, err := os.ReadFile("../server/routes.go")
	if err != nil {
		t.Fatal(err)
	}
	var routes []string
	for _, m := range dashboardRouteRE.FindAllStringSubmatch(string(src), -1) {
		routes = append(routes, m[1]+" "+m[2])
	}
	if len(routes) < 30 {
		t.Fatalf("found %d dashboard routes in routes.go; the pattern is out of date", len(routes))
	}
	return routes
}

// accountRoutes are the dashboard's routes outside any store: no role
// decides them (sign-in, the account's stores, creating a store).
var accountRoutes = []string{
	"GET /dashboard", "GET /dashboard/{$}", "GET /dashboard/", "GET /dashboard/assets/{name}",
	"GET /dashboard/setup", "POST /dashboard/setup", "GET /dashboard/signin", "POST /dashboard/signin", "POST /dashboard/signout",
	"GET /dashboard/stores/new", "POST /dashboard/stores/new",
	"GET /dashboard/stores/{store}/{$}", // a redirect to the store's test mode, which decides
	// An invitation's link, which decides by its token (team_test.go).
	"GET /dashboard/invitation", "POST /dashboard/invitation", "POST /dashboard/invitation/accept",
}

// matrixRequest is one request of the role matrix: a route of a store, the
// path's variables, a form for a post, and the action a role needs for it.
type matrixRequest struct {
	route  string
	vars   map[string]string
	form   url.Values
	action checkout.Action
}

// roleMatrix is every page and action of a store's dashboard with the
// action (checkout/role.go) that allows it. ids are the objects' ids in the
// test's store.
func roleMatrix(ids map[string]string) []matrixRequest {
	const s = "/dashboard/stores/{store}/{mode}/"
	v := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	f := func(kv ...string) url.Values {
		form := url.Values{}
		for i := 0; i < len(kv); i += 2 {
			form.Add(kv[i], kv[i+1])
		}
		return form
	}
	pay, ref, key, ev, log, ep, dl := v("id", ids["payment"]), v("id", ids["refund"]), v("id", ids["key"]), v("id", ids["event"]),
		v("id", ids["log"]), v("id", ids["endpoint"]), v("id", ids["delivery"])
	endpointAction := func(action string, form url.Values, a checkout.Action) matrixRequest {
		return matrixRequest{"POST " + s + "developers/webhooks/{id}/{action}", v("id", ids["endpoint"], "action", action), form, a}
	}
	return []matrixRequest{
		{"GET " + s + "{$}", nil, nil, checkout.ActionViewPayments},
		{"GET " + s + "payments", nil, nil, checkout.ActionViewPayments},
		{"GET " + s + "sessions", nil, nil, checkout.ActionViewPayments},
		{"GET " + s + "sessions/{id}", v("id", ids["session"]), nil, checkout.ActionViewPayments},
		{"GET " + s + "export/{file}", v("file", "payments.csv"), nil, checkout.ActionViewPayments},
		{"GET " + s + "settings/security", nil, nil, checkout.ActionViewAudit},
		{"GET " + s + "payments/{id}", pay, nil, checkout.ActionViewPayments},
		{"GET " + s + "payments/{id}/refund", v("id", ids["payment"], "?", "amount=1.00&reason="), nil, checkout.ActionRefund},
		{"POST " + s + "payments/{id}/refund", pay, f("amount", "1.00", "reason", ""), checkout.ActionRefund},
		{"POST " + s + "refunds/{id}/cancel", ref, nil, checkout.ActionRefund},
		{"POST " + s + "refunds/{id}/simulate-payout", ref, nil, checkout.ActionRefund},
		{"POST " + s + "payments/{id}/dispute/review", pay, f("product_description", "A sword"), checkout.ActionAnswerDispute},
		{"POST " + s + "payments/{id}/dispute/evidence", pay, f("product_description", "A sword"), checkout.ActionAnswerDispute},
		{"GET " + s + "settings", nil, nil, checkout.ActionViewSettings},
		{"POST " + s + "settings", nil, f("name", "Acme", "currency", "USD"), checkout.ActionManageSettings},
		{"GET " + s + "settings/crypto", nil, nil, checkout.ActionViewSettings},
		{"POST " + s + "settings/crypto", nil, f("coin", "BTC", "xpub", "x"), checkout.ActionManageSettings},
		{"GET " + s + "settings/crypto/{coin}/remove", v("coin", "btc"), nil, checkout.ActionManageSettings},
		{"POST " + s + "settings/crypto/{coin}/remove", v("coin", "btc"), nil, checkout.ActionManageSettings},
		{"GET " + s + "settings/cards", nil, nil, checkout.ActionViewSettings},
		{"POST " + s + "settings/cards", nil, f("acquirer", "stripe", "secret_key", "x"), checkout.ActionManageAcquirer},
		{"GET " + s + "settings/cards/{acquirer}/remove", v("acquirer", "stripe"), nil, checkout.ActionManageAcquirer},
		{"POST " + s + "settings/cards/{acquirer}/remove", v("acquirer", "stripe"), nil, checkout.ActionManageAcquirer},
		{"GET " + s + "developers/keys", nil, nil, checkout.ActionViewKeys},
		{"POST " + s + "developers/keys", nil, f("name", "More", "type", "bearer", "permissions", "checkouts:write"), checkout.ActionManageKeys},
		{"GET " + s + "developers/keys/{id}/revoke", key, nil, checkout.ActionManageKeys},
		{"GET " + s + "developers/events", nil, nil, checkout.ActionViewEvents},
		{"GET " + s + "developers/events/{id}", ev, nil, checkout.ActionViewEvents},
		{"GET " + s + "developers/logs", nil, nil, checkout.ActionViewLogs},
		{"GET " + s + "developers/logs/{id}", log, nil, checkout.ActionViewLogs},
		{"GET " + s + "developers/webhooks", nil, nil, checkout.ActionViewWebhooks},
		{"GET " + s + "developers/webhooks/new", nil, nil, checkout.ActionManageWebhooks},
		{"POST " + s + "developers/webhooks/new", nil, f("url", "https://hooks.example.com/more", "events", "checkout.completed"), checkout.ActionManageWebhooks},
		{"GET " + s + "developers/webhooks/{id}", ep, nil, checkout.ActionViewWebhooks},
		{"GET " + s + "developers/webhooks/{id}/edit", ep, nil, checkout.ActionManageWebhooks},
		{"POST " + s + "developers/webhooks/{id}/edit", ep, f("url", "https://hooks.example.com/x", "events", "checkout.completed"), checkout.ActionManageWebhooks},
		{"GET " + s + "developers/webhooks/{id}/delete", ep, nil, checkout.ActionManageWebhooks},
		endpointAction("secret", nil, checkout.ActionSeeWebhookSecrets),
		endpointAction("test", nil, checkout.ActionManageWebhooks),
		endpointAction("disable", nil, checkout.ActionManageWebhooks),
		endpointAction("enable", nil, checkout.ActionManageWebhooks),
		endpointAction("roll", nil, checkout.ActionManageWebhooks),
		endpointAction("retry-failed", f("since", "2026-10-30"), checkout.ActionManageWebhooks),
		{"GET " + s + "developers/deliveries", nil, nil, checkout.ActionViewWebhooks},
		{"GET " + s + "developers/deliveries/{id}", dl, nil, checkout.ActionViewWebhooks},
		{"POST " + s + "developers/deliveries/{id}/resend", dl, nil, checkout.ActionManageWebhooks},
		{"GET " + s + "team", nil, nil, checkout.ActionViewMembers},
		{"POST " + s + "team/invite", nil, f("email", "invited@example.com", "role", "viewer"), checkout.ActionManageMembers},
		{"POST " + s + "team/members/{account}/{action}", v("account", ids["extra"], "action", "role"), f("role", "viewer"), checkout.ActionManageMembers},
		{"POST " + s + "team/invitations/{id}/revoke", v("id", ids["invitation"]), nil, checkout.ActionManageMembers},
		// Last: they take away what the requests above use.
		{"POST " + s + "team/members/{account}/{action}", v("account", ids["extra"], "action", "remove"), nil, checkout.ActionManageMembers},
		{"POST " + s + "developers/webhooks/{id}/delete", ep, nil, checkout.ActionManageWebhooks},
		{"POST " + s + "developers/keys/{id}/revoke", key, nil, checkout.ActionManageKeys},
	}
}

// subject is who sends the matrix's requests: a member with a role, or an
// account in a state of no membership.
type subject struct {
	name    string
	role    checkout.Role // "" when no member
	session *http.Cookie
	token   string
}

// Every page and action of a store's dashboard, tried by every role and by
// accounts that are no member of the store (never were, were removed, are
// members of another store): each role gets what the table of
// checkout/role.go allows it and a 403 naming its role for the rest, and a
// non-member the same 404 as for a store that does not exist. A route in
// routes.go that the matrix does not try fails the test. A Viewer never
// gets a key's hint, a signing secret or a request log's body.
func TestRoleMatrix(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		n := webhooktest.NewNetwork(t)
		e := newEnvWith(t, db, "http://dash.example.test", func(c *app.Config) {
			c.Processors = pay.Registry{Test: pay.Simulators()}
			fakeInternet(n)(c)
		})
		ctx := context.Background()
		r := n.Receiver(t, "hooks.example.com")
		r.SetHandler(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("thanks")) })

		m, secret, _ := e.storeWithKey("ann@example.com")
		re := &refundEnv{env: e, m: m, secret: secret}
		p := re.paidByCard("4242424242424242")
		const bodyMarker = "matrix-request-body-marker"
		st, logID := e.apiDo("POST", "/v1/stores/"+m.ID+"/checkouts", secret,
			`{"items":[{"name":"Sword","amount":1500}],"metadata":{"note":"`+bodyMarker+`"}}`)
		if st != http.StatusCreated {
			t.Fatalf("create = %d", st)
		}
		e.app.RequestLogs.Flush(ctx)
		sc := checkout.Scope{MerchantID: m.ID, Mode: checkout.ModeTest}
		keys, err := e.svc.ListAPIKeys(ctx, sc)
		if err != nil || len(keys) != 1 {
			t.Fatalf("ListAPIKeys = %v, %v", keys, err)
		}
		hint := "…" + keys[0].SecretHint
		ep, err := e.svc.CreateEndpoint(ctx, checkout.EndpointParams{MerchantID: m.ID, Mode: checkout.ModeTest, URL: "https://hooks.example.com/x", Events: []string{"checkout.completed"}})
		if err != nil {
			t.Fatal(err)
		}
		ev, dl, err := e.svc.SendTestEventIn(ctx, sc, ep.ID)
		if err != nil {
			t.Fatal(err)
		}
		deliver(t, e.app)
		extra := e.account("extra@example.com")
		if _, _, err := e.svc.AddMember(ctx, m.ID, extra.Email, checkout.RoleViewer); err != nil {
			t.Fatal(err)
		}
		inv, _, err := e.svc.InviteMember(ctx, m.ID, "later@example.com", checkout.RoleSupport)
		if err != nil {
			t.Fatal(err)
		}
		ids := map[string]string{"extra": extra.ID, "invitation": inv.ID, "payment": p.ID, "session": p.SessionID, "refund": "re_" + strings.Repeat("0", 32), "key": keys[0].ID, "event": ev.ID,
			"log": logID, "endpoint": ep.ID, "delivery": dl.ID}

		// Who tries: ann, who made the store (an administrator), a member
		// of each other role, and accounts that are no member.
		subjects := []*subject{{name: "administrator", role: checkout.RoleAdministrator}}
		for _, role := range checkout.Roles[1:] {
			email := string(role) + "@example.com"
			e.account(email)
			if _, _, err := e.svc.AddMember(ctx, m.ID, email, role); err != nil {
				t.Fatal(err)
			}
			subjects = append(subjects, &subject{name: string(role), role: role})
		}
		e.account("none@example.com")
		e.account("removed@example.com")
		if _, _, err := e.svc.AddMember(ctx, m.ID, "removed@example.com", checkout.RoleAdministrator); err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.RemoveMember(ctx, m.ID, "removed@example.com"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.CreateStore(ctx, e.account("other@example.com").ID, checkout.MerchantParams{Name: "Other", Currency: "USD"}); err != nil {
			t.Fatal(err)
		}
		subjects = append(subjects, &subject{name: "none"}, &subject{name: "removed"}, &subject{name: "other store"})
		emails := map[string]string{"administrator": "ann@example.com", "none": "none@example.com", "removed": "removed@example.com", "other store": "other@example.com"}
		for _, s := range subjects {
			email := emails[s.name]
			if email == "" {
				email = s.name + "@example.com"
			}
			s.session = e.signIn(email)
			s.token = e.get("/dashboard/", s.session).formToken(t)
		}

		// Every store route of routes.go is tried; every other is an
		// account's route.
		matrix := roleMatrix(ids)
		for _, route := range dashboardRoutes(t) {
			tried := slices.ContainsFunc(matrix, func(q matrixRequest) bool { return q.route == route })
			if !tried && !slices.Contains(accountRoutes, route) {
				t.Errorf("the route %s is not in the role matrix: add it to roleMatrix with the action it needs", route)
			}
		}

		for _, q := range matrix {
			method, pattern, _ := strings.Cut(q.route, " ")
			path := strings.NewReplacer("{store}", m.ID, "{mode}", "test", "{$}", "").Replace(pattern)
			for k, val := range q.vars {
				path = strings.ReplaceAll(path, "{"+k+"}", val)
			}
			if query := q.vars["?"]; query != "" {
				path += "?" + query
			}
			section := strings.TrimPrefix(pattern, "/dashboard/stores/{store}/{mode}/")
			for _, s := range subjects {
				var res *page
				if method == http.MethodGet {
					res = e.get(path, s.session)
				} else {
					form := url.Values{}
					for k, vs := range q.form {
						form[k] = vs
					}
					form.Set("form_token", s.token)
					res = e.post(path, form, s.session)
				}
				what := fmt.Sprintf("%s %s as %s", method, path, s.name)
				switch {
				case s.role == "":
					if res.status != http.StatusNotFound || !strings.Contains(res.body, "There is no such page.") {
						t.Errorf("%s = %d; want 404, as for a store that does not exist: %.300s", what, res.status, res.body)
					}
				case !s.role.May(q.action):
					// The message names the role, and the action the role
					// lacks (for the signing secret, changing webhooks
					// already).
					want := fmt.Sprintf("Your role in this store (%s) does not allow you to", s.role.Title())
					if res.status != http.StatusForbidden || !strings.Contains(res.body, htmlEscape(want)) {
						t.Errorf("%s = %d; want 403 %q: %.300s", what, res.status, want, res.body)
					}
				default:
					if res.status == http.StatusForbidden || res.status >= 500 || res.status == http.StatusSeeOther && strings.Contains(res.header.Get("Location"), "/signin") {
						t.Errorf("%s = %d; want it allowed (%s): %.300s", what, res.status, q.action, res.body)
					}
					// An allowed page shows whole, but a crypto key's or an
					// acquirer account's in test mode, which has none; a post
					// may answer otherwise (a redirect, a form's refusal),
					// never with the role's.
					if method == http.MethodGet && !strings.HasPrefix(section, "settings/crypto/") && !strings.HasPrefix(section, "settings/cards/") && res.status != http.StatusOK {
						t.Errorf("%s = %d; want 200: %.300s", what, res.status, res.body)
					}
					if method == http.MethodGet && res.status == http.StatusOK {
						wantHidden(t, what, res.body, s.role, m.ID)
					}
				}
				if s.role == checkout.RoleViewer || s.role == checkout.RoleSupport {
					for _, leak := range []string{hint, ep.Secret, bodyMarker} {
						if strings.Contains(res.body, leak) {
							t.Errorf("%s shows %q, which a %s may never see", what, leak, s.role)
						}
					}
				}
			}
		}
		// The secrets were there to leak: an administrator sees them.
		sectionOf := func(p string) string { return "/dashboard/stores/" + m.ID + "/test/" + p }
		if p := e.get(sectionOf("developers/keys"), subjects[0].session); !strings.Contains(p.body, keys[0].SecretHint) {
			t.Errorf("an administrator's keys page has no hint %q", hint)
		}
		if p := e.get(sectionOf("developers/logs/"+logID), subjects[0].session); !strings.Contains(p.body, bodyMarker) {
			t.Error("an administrator's request log page has no body")
		}
	})
}

// htmlEscape is how html/template writes text: a message as a page shows
// it.
func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "'", "&#39;", "<", "&lt;", ">", "&gt;", `"`, "&#34;").Replace(s)
}

// shownFor are what pages show a role only when it may do the action:
// their navigation entries, buttons and forms.
var shownFor = []struct {
	html   string // with STORE for the store's id
	action checkout.Action
}{
	{`href="/dashboard/stores/STORE/test/developers/keys"`, checkout.ActionViewKeys},
	{`href="/dashboard/stores/STORE/test/developers/webhooks"`, checkout.ActionViewWebhooks},
	{`href="/dashboard/stores/STORE/test/developers/events"`, checkout.ActionViewEvents},
	{`href="/dashboard/stores/STORE/test/developers/logs"`, checkout.ActionViewLogs},
	{`>Create key</button>`, checkout.ActionManageKeys},
	{`>Revoke<`, checkout.ActionManageKeys},
	{`>Review refund</button>`, checkout.ActionRefund},
	{`>Reveal secret</button>`, checkout.ActionSeeWebhookSecrets},
	{`>Roll secret</button>`, checkout.ActionManageWebhooks},
	{`>Add an endpoint</a>`, checkout.ActionManageWebhooks},
	{`>Send test event</button>`, checkout.ActionManageWebhooks},
	{`>Retry all failed</button>`, checkout.ActionManageWebhooks},
	{`>Resend</button>`, checkout.ActionManageWebhooks},
	{`<form method="post" action="/dashboard/stores/STORE/test/settings"`, checkout.ActionManageSettings},
	{`>Check and set up</button>`, checkout.ActionManageAcquirer},
	{`/settings/cards/stripe/remove`, checkout.ActionManageAcquirer},
	{`>Create invitation link</button>`, checkout.ActionManageMembers},
	{`/team/members/`, checkout.ActionManageMembers},
	{`/team/invitations/`, checkout.ActionManageMembers},
}

// wantHidden checks that a page shows a role none of shownFor's entries
// whose action it may not do.
func wantHidden(t *testing.T, what, body string, role checkout.Role, storeID string) {
	t.Helper()
	for _, sh := range shownFor {
		if !role.May(sh.action) && strings.Contains(body, strings.ReplaceAll(sh.html, "STORE", storeID)) {
			t.Errorf("%s shows %s, which a %s may not use", what, sh.html, role)
		}
	}
}

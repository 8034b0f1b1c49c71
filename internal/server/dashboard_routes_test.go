package server_test

import (
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// dashboardRoute matches a dashboard route in routes.go.
var dashboardRoute = regexp.MustCompile(`r\.handle\("(GET|POST) (/dashboard[^"]*)"`)

// The pages anyone may open: sign-in, setup, the assets.
var publicDashboardRoutes = map[string]bool{
	"GET /dashboard":               true, // a redirect to /dashboard/
	"GET /dashboard/setup":         true,
	"POST /dashboard/setup":        true,
	"GET /dashboard/signin":        true,
	"POST /dashboard/signin":       true,
	"GET /dashboard/invitation":    true, // an invitation's link: 404 for an unknown token
	"POST /dashboard/invitation":   true, // joins with a new account: the form's own token
	"GET /dashboard/assets/{name}": true,
}

// Every dashboard route in routes.go, those added later included, sends a
// request without a session to sign-in, GET and POST alike, whatever the
// ids in its path.
func TestEveryDashboardRouteNeedsASession(t *testing.T) {
	src, err := os.ReadFile("routes.go")
	if err != nil {
		t.Fatal(err)
	}
	routes := dashboardRoute.FindAllStringSubmatch(string(src), -1)
	if len(routes) < 10 {
		t.Fatalf("found %d dashboard routes in routes.go; the pattern is out of date", len(routes))
	}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		fill := strings.NewReplacer("{store}", h.store.ID, "{mode}", "test", "{$}", "")
		for _, m := range routes {
			method, pattern := m[1], m[2]
			if publicDashboardRoutes[method+" "+pattern] {
				continue
			}
			p := regexp.MustCompile(`\{[a-z]+\}`).ReplaceAllString(fill.Replace(pattern), "x_1")
			var body *strings.Reader
			if method == http.MethodPost {
				body = strings.NewReader(url.Values{"form_token": {"x"}}.Encode())
			} else {
				body = strings.NewReader("")
			}
			req, _ := http.NewRequest(method, h.srv.URL+p, body)
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Sec-Fetch-Site", "same-origin")
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/dashboard/signin" {
				t.Errorf("%s %s (route %s) without a session = %d, Location %q; want 303 to /dashboard/signin",
					method, p, pattern, resp.StatusCode, resp.Header.Get("Location"))
			}
		}
	})
}

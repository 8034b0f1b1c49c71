package dashboard_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/app"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
	"github.com/checkoutd/checkoutd/internal/webhook"
	"github.com/checkoutd/checkoutd/internal/webhook/webhooktest"
)

// hookEnv is the application with webhooks delivered to receivers of a
// fake internet.
type hookEnv struct {
	*env
	net *webhooktest.Network
}

func newHookEnv(t *testing.T, db *store.DB) *hookEnv {
	t.Helper()
	n := webhooktest.NewNetwork(t)
	return &hookEnv{env: newEnvWith(t, db, "http://dash.example.test", fakeInternet(n)), net: n}
}

// fakeInternet makes the application deliver webhooks to the receivers of
// n through the production guard and client: only name resolution and the
// final dial are the network's.
func fakeInternet(n *webhooktest.Network) func(*app.Config) {
	return func(c *app.Config) {
		c.Guard = &webhook.Guard{Resolver: n}
		c.RootCAs = n.RootCAs()
		c.WebhookDial = n.Dial
	}
}

// deliver runs a's dispatcher once: every due delivery is attempted. It
// returns how many were.
func deliver(t *testing.T, a *app.App) int {
	t.Helper()
	n, err := a.Dispatcher.RunOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// deliver runs the dispatcher once (the function deliver).
func (e *hookEnv) deliver() int {
	e.t.Helper()
	return deliver(e.t, e.app)
}

var endpointPathRE = regexp.MustCompile(`/developers/webhooks/(we_[0-9a-f]+)\?done=created$`)

// addEndpoint adds an endpoint through the form and returns its page's path.
func (e *hookEnv) addEndpoint(m *checkout.Merchant, c *http.Cookie, form url.Values) (string, string) {
	e.t.Helper()
	newPath := "/dashboard/stores/" + m.ID + "/test/developers/webhooks/new"
	p := e.formPost(newPath, newPath, form, c)
	sm := endpointPathRE.FindStringSubmatch(p.header.Get("Location"))
	if p.status != http.StatusSeeOther || sm == nil {
		e.t.Fatalf("add endpoint = %d %q: %s", p.status, p.header.Get("Location"), p.body)
	}
	return "/dashboard/stores/" + m.ID + "/test/developers/webhooks/" + sm[1], sm[1]
}

func TestWebhookEndpoints(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newHookEnv(t, db)
		m, ann := e.signedInStore("ann@example.com")
		hooks := "/dashboard/stores/" + m.ID + "/test/developers/webhooks"
		if p := e.get(hooks, ann); p.status != http.StatusOK || !strings.Contains(p.body, "No test endpoint yet") {
			t.Fatalf("the empty webhooks page = %d: %s", p.status, p.body)
		}
		newPath := hooks + "/new"
		p := e.get(newPath, ann)
		for _, typ := range []string{"checkout.completed", "payment.failed"} {
			if !strings.Contains(p.body, `value="`+typ+`"`) || !strings.Contains(p.body, html.EscapeString(checkout.EventDescriptions[typ])) {
				t.Errorf("the form does not offer %s with its sentence", typ)
			}
		}
		if strings.Contains(p.body, `value="webhook.test"`) {
			t.Error("the form offers webhook.test, which no endpoint subscribes to")
		}

		// Refusals in words, beside the fields, with the values kept.
		for _, tt := range []struct{ url, want string }{
			{"http://hooks.example.com/x", "Must use https"},
			{"https://10.0.0.1/x", "url"},
			{"https://nowhere.example.com/x", "url"},
		} {
			p := e.formPost(newPath, newPath, url.Values{"url": {tt.url}, "description": {"<b>Orders</b>"}, "events": {"checkout.completed"}}, ann)
			if p.status != http.StatusBadRequest || !strings.Contains(p.body, `id="ep-url-error"`) || !strings.Contains(p.body, tt.want) ||
				!strings.Contains(p.body, `value="`+html.EscapeString(tt.url)+`"`) || !strings.Contains(p.body, `value="&lt;b&gt;Orders&lt;/b&gt;"`) ||
				!strings.Contains(p.body, `value="checkout.completed" checked`) {
				t.Errorf("add %s = %d: %s", tt.url, p.status, p.body)
			}
		}
		p = e.formPost(newPath, newPath, url.Values{"url": {"https://hooks.example.com/x"}}, ann)
		if p.status != http.StatusBadRequest || !strings.Contains(p.body, "Choose All events, or at least one event type.") {
			t.Errorf("no events chosen = %d: %s", p.status, p.body)
		}

		r := e.net.Receiver(t, "hooks.example.com")
		r.SetHandler(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(`<script>alert("r")</script> thanks`)) })
		epPath, epID := e.addEndpoint(m, ann, url.Values{"url": {"https://hooks.example.com/checkoutd"}, "description": {`<script>alert("d")</script>`},
			"events": {"checkout.completed", "payment.failed"}})
		p = e.get(epPath+"?done=created", ann)
		if p.status != http.StatusOK || strings.Contains(p.body, `<script>alert`) || !strings.Contains(p.body, "The endpoint is added") ||
			!strings.Contains(p.body, "<code>checkout.completed</code>, <code>payment.failed</code>") {
			t.Errorf("the endpoint's page = %d: %s", p.status, p.body)
		}
		ep, _ := db.EndpointGet(context.Background(), epID)
		if strings.Contains(p.body, ep.Secret) {
			t.Error("the endpoint's page shows the secret before Reveal")
		}

		// Send test event: a delivery to this endpoint, attempted, its
		// response body shown escaped.
		p = e.formPost(epPath, epPath+"/test", url.Values{}, ann)
		if p.status != http.StatusSeeOther || !strings.Contains(p.header.Get("Location"), "done=tested") {
			t.Fatalf("send test = %d %q", p.status, p.header.Get("Location"))
		}
		if n := e.deliver(); n != 1 {
			t.Fatalf("the dispatcher attempted %d deliveries; want the test's", n)
		}
		ds, _ := db.DeliveryList(context.Background(), checkout.DeliveryListParams{EndpointID: epID})
		if len(ds) != 1 || ds[0].Status != checkout.DeliverySucceeded || ds[0].EventType != checkout.EventWebhookTest {
			t.Fatalf("deliveries = %+v", ds)
		}
		p = e.get("/dashboard/stores/"+m.ID+"/test/developers/deliveries/"+ds[0].ID, ann)
		if p.status != http.StatusOK || !strings.Contains(p.body, "&lt;script&gt;alert(&#34;r&#34;)&lt;/script&gt; thanks") || strings.Contains(p.body, "<script>alert") {
			t.Errorf("the delivery's page = %d: %s", p.status, p.body)
		}
		if p := e.get(epPath, ann); !strings.Contains(p.body, "100.0% succeeded") && !strings.Contains(p.body, ">100.0%<") {
			t.Errorf("the endpoint's health after one success: %s", p.body)
		}

		// Reveal the secret; roll it with overlap: both sign.
		p = e.formPost(epPath, epPath+"/secret", url.Values{}, ann)
		if p.status != http.StatusOK || !strings.Contains(p.body, ep.Secret) || p.header.Get("Cache-Control") != "no-store" {
			t.Errorf("reveal = %d, Cache-Control %q", p.status, p.header.Get("Cache-Control"))
		}
		p = e.formPost(epPath, epPath+"/roll", url.Values{"overlap": {"keep"}, "hours": {"25"}}, ann)
		if p.status != http.StatusBadRequest || !strings.Contains(p.body, "1 to 24 hours") {
			t.Errorf("roll keeping 25 hours = %d", p.status)
		}
		p = e.formPost(epPath, epPath+"/roll", url.Values{"overlap": {"keep"}, "hours": {"24"}}, ann)
		rolled, _ := db.EndpointGet(context.Background(), epID)
		if p.status != http.StatusOK || rolled.Secret == ep.Secret || rolled.PreviousSecret != ep.Secret ||
			!strings.Contains(p.body, rolled.Secret) || !strings.Contains(p.body, ep.Secret) {
			t.Fatalf("roll with overlap = %d; the endpoint %+v", p.status, rolled)
		}
		if !rolled.PreviousSecretExpiresAt.Equal(e.clock.Now().Add(24*time.Hour).Truncate(time.Millisecond)) &&
			!rolled.PreviousSecretExpiresAt.Equal(e.clock.Now().Add(24*time.Hour).Truncate(time.Second)) {
			t.Errorf("the old secret expires at %v; want 24 h from now", rolled.PreviousSecretExpiresAt)
		}

		// Disable cancels the queue and says how many; enable; delete after a confirmation.
		e.formPost(epPath, epPath+"/test", url.Values{}, ann)
		p = e.formPost(epPath, epPath+"/disable", url.Values{}, ann)
		if loc := p.header.Get("Location"); p.status != http.StatusSeeOther || !strings.Contains(loc, "done=disabled&canceled=1") {
			t.Fatalf("disable = %d %q", p.status, loc)
		}
		if p := e.get(p.header.Get("Location"), ann); !strings.Contains(p.body, "1 queued deliveries were canceled") || !strings.Contains(p.body, ">Enable<") {
			t.Errorf("after disabling: %s", p.body)
		}
		if p := e.formPost(epPath, epPath+"/enable", url.Values{}, ann); p.status != http.StatusSeeOther {
			t.Errorf("enable = %d", p.status)
		}
		if p := e.get(epPath+"/delete", ann); p.status != http.StatusOK || !strings.Contains(p.body, "Delete endpoint") {
			t.Errorf("the delete confirmation = %d", p.status)
		}
		if p := e.formPost(epPath+"/delete", epPath+"/delete", url.Values{}, ann); p.status != http.StatusSeeOther || p.header.Get("Location") != hooks+"?done=deleted" {
			t.Errorf("delete = %d %q", p.status, p.header.Get("Location"))
		}
		if _, err := db.EndpointGet(context.Background(), epID); !checkout.IsCode(err, checkout.ENotFound) {
			t.Errorf("after delete, EndpointGet = %v", err)
		}
	})
}

func TestWebhookEditAndRetry(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newHookEnv(t, db)
		m, ann := e.signedInStore("ann@example.com")
		r := e.net.Receiver(t, "hooks.example.com")
		r.Status(http.StatusInternalServerError)
		e.net.Receiver(t, "other.example.com")
		epPath, epID := e.addEndpoint(m, ann, url.Values{"url": {"https://hooks.example.com/a"}, "all": {"1"}})

		// Edit: refused with values kept, then saved.
		p := e.formPost(epPath+"/edit", epPath+"/edit", url.Values{"url": {"https://10.1.2.3/"}, "description": {"Fulfil"}, "all": {"1"}}, ann)
		if p.status != http.StatusBadRequest || !strings.Contains(p.body, `id="ep-url-error"`) || !strings.Contains(p.body, `value="Fulfil"`) {
			t.Errorf("edit to a private address = %d: %s", p.status, p.body)
		}
		p = e.formPost(epPath+"/edit", epPath+"/edit", url.Values{"url": {"https://other.example.com/b"}, "description": {"Fulfil"},
			"events": {"checkout.completed"}}, ann)
		if p.status != http.StatusSeeOther {
			t.Fatalf("edit = %d: %s", p.status, p.body)
		}
		ep, _ := db.EndpointGet(context.Background(), epID)
		if ep.URL != "https://other.example.com/b" || ep.Description != "Fulfil" || len(ep.Events) != 1 || ep.Events[0] != "checkout.completed" {
			t.Errorf("the edited endpoint = %+v", ep)
		}
		e.formPost(epPath+"/edit", epPath+"/edit", url.Values{"url": {"https://hooks.example.com/a"}, "all": {"1"}}, ann)

		// A failing delivery: its attempt shown, then resent.
		e.formPost(epPath, epPath+"/test", url.Values{}, ann)
		e.deliver()
		ds, _ := db.DeliveryList(context.Background(), checkout.DeliveryListParams{EndpointID: epID})
		if len(ds) != 1 || ds[0].Status != checkout.DeliveryPending || ds[0].Attempts != 1 {
			t.Fatalf("after a 500: %+v", ds)
		}
		dPath := "/dashboard/stores/" + m.ID + "/test/developers/deliveries/" + ds[0].ID
		if p := e.get(dPath, ann); !strings.Contains(p.body, "Next attempt") || !strings.Contains(p.body, "500") || strings.Contains(p.body, ">Resend<") {
			t.Errorf("a pending delivery's page: %s", p.body)
		}
		// Let it fail for good: every retry answered 500.
		for range 10 {
			e.clock.Advance(25 * time.Hour)
			e.deliver()
		}
		d, _ := db.DeliveryGet(context.Background(), ds[0].ID)
		if d.Status != checkout.DeliveryFailed {
			t.Fatalf("after 10 days the delivery is %s", d.Status)
		}
		ann = e.signIn("ann@example.com") // days later
		if p := e.get(dPath, ann); !strings.Contains(p.body, ">Resend<") {
			t.Errorf("a failed delivery's page has no Resend: %s", p.body)
		}
		r.Status(http.StatusOK)
		p = e.formPost(dPath, dPath+"/resend", url.Values{}, ann)
		if p.status != http.StatusSeeOther || !strings.Contains(p.header.Get("Location"), "?done=resent") {
			t.Fatalf("resend = %d %q", p.status, p.header.Get("Location"))
		}
		e.deliver()

		// Retry all failed: the one already resent is not resent again.
		since := e.clock.Now().AddDate(0, 0, -30).UTC().Format("2006-01-02")
		p = e.formPost(epPath, epPath+"/retry-failed", url.Values{"since": {since}}, ann)
		if loc := p.header.Get("Location"); p.status != http.StatusSeeOther || !strings.Contains(loc, "done=retried&queued=0&more=0") {
			t.Errorf("retry all failed after a resend = %d %q", p.status, loc)
		}
		if p := e.formPost(epPath, epPath+"/retry-failed", url.Values{"since": {"last week"}}, ann); p.status != http.StatusBadRequest {
			t.Errorf("retry with a bad date = %d", p.status)
		}

		// The deliveries list: filters by status, endpoint, event type.
		list := "/dashboard/stores/" + m.ID + "/test/developers/deliveries"
		if p := e.get(list+"?status=failed", ann); !strings.Contains(p.body, ds[0].ID) {
			t.Errorf("failed filter misses the failed delivery: %s", p.body)
		}
		if p := e.get(list+"?status=succeeded&endpoint="+epID, ann); strings.Contains(p.body, ds[0].ID) || strings.Count(p.body, "badge good\">succeeded") != 1 {
			t.Errorf("succeeded filter: %s", p.body)
		}
		if p := e.get(list+"?status=lost", ann); p.status != http.StatusBadRequest {
			t.Errorf("an unknown status = %d", p.status)
		}
		if p := e.get(list+"?event_type=checkout.completed", ann); !strings.Contains(p.body, "No delivery matches") {
			t.Errorf("event type filter: %s", p.body)
		}
	})
}

// Another store's endpoints and deliveries are 404 under one's own store,
// whatever the action.
func TestWebhooksOfOthers(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newHookEnv(t, db)
		e.net.Receiver(t, "hooks.example.com")
		annStore, ann := e.signedInStore("ann@example.com")
		_, epID := e.addEndpoint(annStore, ann, url.Values{"url": {"https://hooks.example.com/a"}, "all": {"1"}})
		bobStore, bob := e.signedInStore("bob@example.com")
		base := "/dashboard/stores/" + bobStore.ID + "/test/developers/"
		for _, path := range []string{"webhooks/" + epID, "webhooks/" + epID + "/edit", "webhooks/" + epID + "/delete"} {
			if p := e.get(base+path, bob); p.status != http.StatusNotFound || strings.Contains(p.body, "hooks.example.com") {
				t.Errorf("GET %s = %d", path, p.status)
			}
		}
		for _, action := range []string{"test", "disable", "enable", "secret", "roll", "retry-failed", "delete", "edit"} {
			p := e.formPost(base+"webhooks", base+"webhooks/"+epID+"/"+action, url.Values{"since": {"2026-01-01"}, "url": {"https://hooks.example.com/b"}, "all": {"1"}}, bob)
			if p.status != http.StatusNotFound {
				t.Errorf("POST %s on Ann's endpoint = %d; want 404", action, p.status)
			}
		}
		if p := e.get(base+"deliveries?endpoint="+epID, bob); p.status != http.StatusBadRequest || strings.Contains(p.body, "hooks.example.com") {
			t.Errorf("Bob's deliveries filtered by Ann's endpoint = %d", p.status)
		}
		if p := e.get("/dashboard/stores/"+annStore.ID+"/live/developers/webhooks/"+epID, ann); p.status != http.StatusNotFound {
			t.Errorf("a test endpoint in live mode = %d; want 404", p.status)
		}
		ep, _ := db.EndpointGet(context.Background(), epID)
		if !ep.Enabled || ep.URL != "https://hooks.example.com/a" {
			t.Errorf("Bob changed Ann's endpoint: %+v", ep)
		}
	})
}

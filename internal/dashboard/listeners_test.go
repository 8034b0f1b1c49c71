package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// A store's checkoutd listen listeners show in the Webhooks section of
// test mode, apart from its endpoints: their machine, whether they still
// receive, and their deliveries waiting "when checkoutd listen connects".
func TestListenersInDashboard(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, "http://dash.example.test")
		m, secret, ann := e.storeWithKey("ann@example.com")
		ctx := context.Background()
		key, err := e.svc.Authenticate(ctx, secret)
		if err != nil {
			t.Fatal(err)
		}
		l, err := e.svc.Listen(ctx, key, checkout.ListenerParams{Name: `<b>laptop</b>`})
		if err != nil {
			t.Fatal(err)
		}
		if st, _ := e.apiDo("POST", "/v1/stores/"+m.ID+"/checkouts", secret, `{"items":[{"name":"Sword","amount":1500}]}`); st != 201 {
			t.Fatalf("create = %d", st)
		}
		hooks := "/dashboard/stores/" + m.ID + "/test/developers/webhooks"
		p := e.get(hooks, ann)
		if p.status != http.StatusOK || !strings.Contains(p.body, "Local listeners") || !strings.Contains(p.body, "&lt;b&gt;laptop&lt;/b&gt;") ||
			!strings.Contains(p.body, "Receiving") || !strings.Contains(p.body, "1 waiting") || !strings.Contains(p.body, "No test endpoint yet") ||
			!strings.Contains(p.body, "--store "+m.ID) {
			t.Errorf("the webhooks page with a listener = %d: %s", p.status, p.body)
		}
		if p := e.get("/dashboard/stores/"+m.ID+"/live/developers/webhooks", ann); strings.Contains(p.body, "Local listeners") {
			t.Error("live mode's webhooks page offers listeners, which receive test-mode events only")
		}
		epPath := hooks + "/" + l.ID
		p = e.get(epPath, ann)
		if p.status != http.StatusOK || !strings.Contains(p.body, "checkoutd listen on &lt;b&gt;laptop&lt;/b&gt;") ||
			strings.Contains(p.body, `/edit"`) || !strings.Contains(p.body, "When <code>checkoutd listen</code> connects") {
			t.Errorf("the listener's page = %d: %s", p.status, p.body)
		}
		if p := e.get(epPath+"/edit", ann); p.status != http.StatusNotFound {
			t.Errorf("a listener's edit page = %d; want 404: checkoutd listen sets its events", p.status)
		}
		p = e.formPost(epPath, epPath+"/edit", url.Values{"url": {"https://hooks.example.com/x"}, "events": {"all"}}, ann)
		if p.status != http.StatusBadRequest || !strings.Contains(p.body, "A listener has no URL") {
			t.Errorf("editing a listener's URL = %d: %s", p.status, p.body)
		}

		// Away over 24 hours: it no longer receives, and says so.
		e.clock.Advance(checkout.ListenerIdleLimit + time.Second)
		ann = e.signIn("ann@example.com") // the dashboard session ended meanwhile
		if p := e.get(hooks, ann); !strings.Contains(p.body, "Away over 24 h") {
			t.Errorf("the webhooks page with an idle listener: %s", p.body)
		}
		if p := e.get(epPath, ann); !strings.Contains(p.body, "Away for over 24 hours") {
			t.Errorf("an idle listener's page: %s", p.body)
		}
	})
}

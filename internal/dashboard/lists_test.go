package dashboard_test

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// storeWithKey is a signed-in account's store with a test key's secret.
func (e *env) storeWithKey(email string) (*checkout.Merchant, string, *http.Cookie) {
	e.t.Helper()
	m, c := e.signedInStore(email)
	_, secret, err := e.svc.CreateAPIKey(context.Background(), checkout.APIKeyParams{Name: "Server", MerchantID: m.ID, Mode: checkout.ModeTest,
		Type: checkout.KeyBearer, Permissions: []checkout.Permission{checkout.PermCheckoutsWrite}})
	if err != nil {
		e.t.Fatal(err)
	}
	return m, secret, c
}

// apiDo sends an API request and returns its status and Request-Id.
func (e *env) apiDo(method, path, secret, body string) (int, string) {
	e.t.Helper()
	req, _ := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+secret)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Request-Id")
}

// A merchant's item name, as hostile as it gets.
const hostileName = `<script>alert("x")</script> & 'co'`

var olderRE = regexp.MustCompile(`<a href="([^"]+)" rel="next">Older`)

func TestEventsPage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, "http://dash.example.test")
		m, secret, ann := e.storeWithKey("ann@example.com")
		events := "/dashboard/stores/" + m.ID + "/test/developers/events"
		if p := e.get(events, ann); p.status != http.StatusOK || !strings.Contains(p.body, "No test event yet") {
			t.Fatalf("the empty events page = %d: %s", p.status, p.body)
		}
		body := fmt.Sprintf(`{"items":[{"name":%q,"amount":1500}],"metadata":{"note":"<b>bold</b>"}}`, hostileName)
		for i := range 52 {
			if st, _ := e.apiDo("POST", "/v1/stores/"+m.ID+"/checkouts", secret, body); st != http.StatusCreated {
				t.Fatalf("create %d = %d", i, st)
			}
		}
		p := e.get(events, ann)
		if p.status != http.StatusOK || strings.Count(p.body, "<code>checkout.created</code>") != 50 {
			t.Fatalf("the first page = %d with %d events; want 50", p.status, strings.Count(p.body, "<code>checkout.created</code>"))
		}
		if strings.Contains(p.body, "<script>alert") {
			t.Error("the events page shows merchant text unescaped")
		}
		older := olderRE.FindStringSubmatch(p.body)
		if older == nil {
			t.Fatal("the first of two pages has no Older link")
		}
		p2 := e.get(html.UnescapeString(older[1]), ann)
		if p2.status != http.StatusOK || strings.Count(p2.body, "<code>checkout.created</code>") != 2 || olderRE.MatchString(p2.body) ||
			!strings.Contains(p2.body, "Newest") {
			t.Errorf("the second page = %d with %d events: %s", p2.status, strings.Count(p2.body, "<code>checkout.created</code>"), p2.body)
		}

		// Filters: a type with no event, a bad date, a forged cursor.
		if p := e.get(events+"?type=payment.failed", ann); !strings.Contains(p.body, "No event matches these filters") {
			t.Errorf("a type without events: %s", p.body)
		}
		if p := e.get(events+"?from=yesterday", ann); p.status != http.StatusBadRequest || !strings.Contains(p.body, `id="f-from-error"`) ||
			!strings.Contains(p.body, `value="yesterday"`) {
			t.Errorf("a bad date = %d: %s", p.status, p.body)
		}
		if p := e.get(events+"?type=nope", ann); p.status != http.StatusBadRequest {
			t.Errorf("an unknown type = %d; want 400", p.status)
		}
		if p := e.get(events+"?cursor=forged", ann); p.status != http.StatusBadRequest || !strings.Contains(p.body, "cursor") {
			t.Errorf("a forged cursor = %d: %s", p.status, p.body)
		}
		day := e.clock.Now().UTC().Format("2006-01-02")
		if p := e.get(events+"?from="+day+"&to="+day, ann); strings.Count(p.body, "<code>checkout.created</code>") != 50 {
			t.Errorf("today's events: %d on the first page; want 50", strings.Count(p.body, "<code>checkout.created</code>"))
		}

		// An event's page: the payload exactly as sent, escaped in the page.
		list, err := db.EventList(context.Background(), checkout.EventListParams{MerchantID: m.ID, Mode: checkout.ModeTest, Limit: 1})
		if err != nil || len(list) != 1 {
			t.Fatal(err)
		}
		ev := list[0]
		payload, _ := ev.Payload()
		p = e.get(events+"/"+ev.ID, ann)
		if p.status != http.StatusOK || !strings.Contains(p.body, html.EscapeString(string(payload))) || strings.Contains(p.body, "<script>alert") {
			t.Errorf("the event page = %d; want the payload escaped: %s", p.status, p.body)
		}
		if p := e.get("/dashboard/stores/"+m.ID+"/live/developers/events/"+ev.ID, ann); p.status != http.StatusNotFound {
			t.Errorf("the test event in live mode = %d; want 404", p.status)
		}
		bobStore, bob := e.signedInStore("bob@example.com")
		if p := e.get("/dashboard/stores/"+bobStore.ID+"/test/developers/events/"+ev.ID, bob); p.status != http.StatusNotFound || strings.Contains(p.body, "Sword") {
			t.Errorf("Ann's event under Bob's store = %d", p.status)
		}
	})
}

func TestLogsPage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, "http://dash.example.test")
		m, secret, ann := e.storeWithKey("ann@example.com")
		logs := "/dashboard/stores/" + m.ID + "/test/developers/logs"
		if p := e.get(logs, ann); p.status != http.StatusOK || !strings.Contains(p.body, "No test API request yet") || !strings.Contains(p.body, m.ID+"/checkouts") {
			t.Fatalf("the empty logs page = %d: %s", p.status, p.body)
		}
		body := fmt.Sprintf(`{"items":[{"name":%q,"amount":1500}],"metadata":{"leak":"%s"}}`, hostileName, secret)
		st, okID := e.apiDo("POST", "/v1/stores/"+m.ID+"/checkouts", secret, body)
		if st != http.StatusCreated {
			t.Fatalf("create = %d", st)
		}
		_, badID := e.apiDo("POST", "/v1/stores/"+m.ID+"/checkouts", secret, `{"items":[]}`)
		_, getID := e.apiDo("GET", "/v1/stores/"+m.ID+"/checkouts/cs_nothere", secret, "")
		e.app.RequestLogs.Flush(context.Background())

		p := e.get(logs, ann)
		for _, id := range []string{okID, badID, getID} {
			if !strings.Contains(p.body, id) {
				t.Errorf("the logs page misses %s", id)
			}
		}
		if !strings.Contains(p.body, ">Server<") {
			t.Error("the logs page does not name the key")
		}
		if p := e.get(logs+"?status=4xx", ann); strings.Contains(p.body, okID) || !strings.Contains(p.body, badID) || !strings.Contains(p.body, getID) {
			t.Errorf("4xx filter: %s", p.body)
		}
		if p := e.get(logs+"?status=4xx&method=GET", ann); strings.Contains(p.body, badID) || !strings.Contains(p.body, getID) {
			t.Errorf("4xx GET filter: %s", p.body)
		}
		if p := e.get(logs+"?route="+url.QueryEscape("/v1/stores/{storeId}/checkouts/{checkoutId}"), ann); strings.Contains(p.body, badID) || !strings.Contains(p.body, getID) {
			t.Errorf("the retrieve endpoint filter: %s", p.body)
		}
		if p := e.get(logs+"?status=3xx", ann); p.status != http.StatusBadRequest || !strings.Contains(p.body, "Must be 2xx, 4xx or 5xx") {
			t.Errorf("a bad status class = %d: %s", p.status, p.body)
		}

		// The Request-Id search jumps to the request, whose page shows its
		// bodies escaped and redacted.
		p = e.get(logs+"?request_id="+okID, ann)
		if p.status != http.StatusSeeOther || p.header.Get("Location") != logs+"/"+okID {
			t.Fatalf("search %s = %d %q", okID, p.status, p.header.Get("Location"))
		}
		p = e.get(logs+"/"+okID, ann)
		if p.status != http.StatusOK || strings.Contains(p.body, "<script>alert") || strings.Contains(p.body, secret) ||
			!strings.Contains(p.body, "[redacted]") || !strings.Contains(p.body, "&lt;script&gt;") || !strings.Contains(p.body, `"status":"open"`) &&
			!strings.Contains(p.body, `&#34;status&#34;:&#34;open&#34;`) {
			t.Errorf("the request's page = %d: %s", p.status, p.body)
		}
		if p := e.get(logs+"?request_id=req_0000", ann); p.status != http.StatusNotFound || !strings.Contains(p.body, "No request with Request-Id") {
			t.Errorf("an unknown Request-Id = %d: %s", p.status, p.body)
		}
		live := "/dashboard/stores/" + m.ID + "/live/developers/logs"
		if p := e.get(live+"?request_id="+okID, ann); p.status != http.StatusNotFound {
			t.Errorf("a test request searched in live mode = %d; want 404", p.status)
		}
		if p := e.get(live+"/"+okID, ann); p.status != http.StatusNotFound {
			t.Errorf("a test request's page in live mode = %d; want 404", p.status)
		}
	})
}

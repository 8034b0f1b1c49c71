package dashboard_test

import (
	"context"
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// createSession creates a test session through the API from body and
// returns it as the API returned it.
func createSession(t *testing.T, base, storeID, secret, body string) *checkout.SessionJSON {
	t.Helper()
	res := postCheckout(t, base, storeID, secret, body)
	if res.status != http.StatusCreated {
		t.Fatalf("create a checkout = %d: %s", res.status, res.body)
	}
	var env struct{ Data checkout.SessionJSON }
	if err := json.Unmarshal([]byte(res.body), &env); err != nil {
		t.Fatal(err)
	}
	return &env.Data
}

// The Sessions page lists the store's sessions of the page's mode newest
// first, pages them across a boundary keeping the filters, finds them by
// session id, payment id, email and key=value of metadata, answers bad
// input with a message beside the field and the values kept, and says so
// when nothing matches; merchant text is escaped; another store's session
// is never shown, and its page is a 404.
func TestSessionsPage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newRefundEnv(t, db)
		ctx := context.Background()
		list := "/dashboard/stores/" + e.m.ID + "/test/sessions"
		if p := e.get(list, e.ann); p.status != http.StatusOK || !strings.Contains(p.body, "No test checkout session yet") {
			t.Fatalf("the empty sessions page = %d: %s", p.status, p.body)
		}
		if p := e.get(list+"?q=order_id%3DA-1", e.ann); p.status != http.StatusOK || !strings.Contains(p.body, "No test session matches") {
			t.Fatalf("a search of an empty store = %d: %s", p.status, p.body)
		}
		var ids []string // newest first
		for i := range 52 {
			e.clock.Advance(time.Second)
			s := createSession(t, e.srv.URL, e.m.ID, e.secret, `{"items":[{"name":"Sword","amount":1500}],"customer":{"email":"buyer`+
				string(rune('a'+i%3))+`@example.com"},"metadata":{"order_id":"A-`+string(rune('a'+i%26))+`","n":"`+strings.Repeat("x", i+1)+`"}}`)
			ids = append([]string{s.ID}, ids...)
		}
		p := e.get(list, e.ann)
		if p.status != http.StatusOK || !strings.Contains(p.body, ids[0]) || !strings.Contains(p.body, ids[49]) || strings.Contains(p.body, ids[50]) ||
			strings.Index(p.body, ids[0]) > strings.Index(p.body, ids[1]) || !strings.Contains(p.body, "$15.00") {
			t.Fatalf("the first page = %d; want the 50 newest, newest first, with their totals: %s", p.status, p.body)
		}
		m := olderRE.FindStringSubmatch(p.body)
		if m == nil {
			t.Fatalf("no Older link on the first page: %s", p.body)
		}
		p = e.get(html.UnescapeString(m[1]), e.ann)
		if p.status != http.StatusOK || !strings.Contains(p.body, ids[50]) || !strings.Contains(p.body, ids[51]) || strings.Contains(p.body, ids[49]) ||
			olderRE.MatchString(p.body) || !strings.Contains(p.body, "Newest") {
			t.Fatalf("the second page = %d; want the 2 oldest and no Older: %s", p.status, p.body)
		}
		// Paging keeps the filter: 52 sessions of buyera, buyerb, buyerc.
		p = e.get(list+"?status=open&q=buyerA%40example.com", e.ann)
		m = olderRE.FindStringSubmatch(p.body)
		if p.status != http.StatusOK || m != nil || strings.Count(p.body, "buyera@example.com") < 18 {
			t.Errorf("sessions of buyera = %d; want 18 on one page: %s", p.status, p.body)
		}

		paid := e.paidByCard("4242424242424242")
		for _, c := range []struct {
			q    string
			want []string
			not  string
		}{
			{ids[7], []string{ids[7]}, ids[8]},
			{paid.ID, []string{paid.SessionID}, ids[0]},
			{"order_id=A-b", []string{ids[50]}, ids[0]},
			{"n=" + strings.Repeat("x", 3), []string{ids[49]}, ids[48]},
			{"BUYERB@example.com", []string{ids[2], ids[5]}, ids[0]}, // i%3 == 1: i = 49, 46...
		} {
			p := e.get(list+"?"+url.Values{"q": {c.q}}.Encode(), e.ann)
			for _, id := range c.want {
				if p.status != http.StatusOK || !strings.Contains(p.body, id) || strings.Contains(p.body, c.not) {
					t.Errorf("search %q = %d; want %s and not %s: %s", c.q, p.status, id, c.not, p.body)
				}
			}
			if !strings.Contains(p.body, `value="`+html.EscapeString(c.q)+`"`) {
				t.Errorf("search %q: the box does not keep it: %s", c.q, p.body)
			}
		}
		if p := e.get(list+"?status=complete", e.ann); !strings.Contains(p.body, paid.SessionID) || strings.Contains(p.body, ids[0]) ||
			!strings.Contains(p.body, paid.ID) {
			t.Errorf("complete sessions: %s", p.body)
		}

		// Bad input: 400, the message beside its field, the values kept.
		for _, c := range []struct{ query, message, kept string }{
			{"q=cs_123", "A session id is cs_ and 64 lowercase hex digits", `value="cs_123"`},
			{"q=pay_1", "A payment id is pay_ and 32 lowercase hex digits", `value="pay_1"`},
			{"q=hello", "Search by a session id (cs_...)", `value="hello"`},
			{"q=ann%40", "An email to search by must be one email address", `value="ann@"`},
			{"q=%3Dx", "A metadata key is 1 to 40 characters", `value="=x"`},
			{"status=paid&q=order_id%3DA-1", "Must be open, complete or expired.", `value="order_id=A-1"`},
			{"from=2026-13-01&q=order_id%3DA-1", "Enter the date as YYYY-MM-DD.", `value="2026-13-01"`},
			{"from=2026-11-02&to=2026-11-01", "The end of the date range is before its start.", `value="2026-11-02"`},
			{"cursor=nope", "The page cursor is not valid", ""},
		} {
			p := e.get(list+"?"+c.query, e.ann)
			if p.status != http.StatusBadRequest || !strings.Contains(p.body, html.EscapeString(c.message)) || !strings.Contains(p.body, c.kept) ||
				strings.Contains(p.body, "No test session matches") {
				t.Errorf("GET ?%s = %d; want 400 saying %q and keeping %s: %s", c.query, p.status, c.message, c.kept, p.body)
			}
		}

		// A session's page: the API's fields, its checkout_url, its
		// payment attempts, its payment and its events.
		e.clock.Advance(time.Second)
		declinedThenPaid := createSession(t, e.srv.URL, e.m.ID, e.secret,
			`{"items":[{"name":`+jsonString(hostileName)+`,"amount":1250,"quantity":2,"image":"https://img.example/a.png"}],"title":"Order <b>1</b>",
			"customer":{"email":"jo@example.com","name":"Jo"},"metadata":{"order_id":"A-1001","note":"<i>gift</i>"},"return_url":"https://shop.example/done"}`)
		if _, err := e.svc.PayByCard(ctx, declinedThenPaid.ID, pay.CardForm{Number: "4000000000009995", Expiry: "12/30", CVC: "123", Name: "Jo"}); err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(time.Millisecond)
		out, err := e.svc.PayByCard(ctx, declinedThenPaid.ID, pay.CardForm{Number: "4242424242424242", Expiry: "12/30", CVC: "123", Name: "Jo"})
		if err != nil {
			t.Fatal(err)
		}
		page := list + "/" + declinedThenPaid.ID
		p = e.get(page, e.ann)
		for _, want := range []string{
			declinedThenPaid.CheckoutURL, "$25.00", "$12.50", "jo@example.com", "Jo", "https://shop.example/done", "A-1001",
			"insufficient_funds", out.Payment.ID, `href="/dashboard/stores/` + e.m.ID + `/test/payments/` + out.Payment.ID + `"`,
			"checkout.created", "payment.failed", "payment.succeeded", "checkout.completed",
			`href="/dashboard/stores/` + e.m.ID + `/test/developers/events/`,
			"Order &lt;b&gt;1&lt;/b&gt;", "&lt;i&gt;gift&lt;/i&gt;", html.EscapeString(hostileName),
			`&#34;checkout_url&#34;: &#34;` + declinedThenPaid.CheckoutURL,
			`href="/dashboard/stores/` + e.m.ID + `/test/sessions?q=order_id%3DA-1001"`,
		} {
			if !strings.Contains(p.body, want) {
				t.Errorf("the session's page lacks %s: %s", want, p.body)
			}
		}
		if p.status != http.StatusOK || strings.Contains(p.body, "<script>alert") || strings.Contains(p.body, "<i>gift") {
			t.Errorf("the session's page = %d, or merchant text unescaped: %s", p.status, p.body)
		}
		// A payment's page links to its session's.
		if p := e.get(e.path(out.Payment), e.ann); !strings.Contains(p.body, `href="/dashboard/stores/`+e.m.ID+`/test/sessions/`+declinedThenPaid.ID+`"`) {
			t.Errorf("the payment's page does not link to its session: %s", p.body)
		}

		// Another store's session, the other mode's, and ids of any shape:
		// not found, and never listed.
		other, otherSecret, _ := e.storeWithKey("bob@example.com")
		theirs := createSession(t, e.srv.URL, other.ID, otherSecret, `{"items":[{"name":"Sword","amount":1500}],"metadata":{"order_id":"A-1001"}}`)
		for _, path := range []string{list + "/" + theirs.ID, "/dashboard/stores/" + e.m.ID + "/live/sessions/" + declinedThenPaid.ID,
			list + "/cs_nope", list + "/" + strings.Repeat("x", 70)} {
			if p := e.get(path, e.ann); p.status != http.StatusNotFound || strings.Contains(p.body, theirs.ID) {
				t.Errorf("GET %s = %d; want 404", path, p.status)
			}
		}
		for _, q := range []string{theirs.ID, "order_id=A-1001"} {
			p := e.get(list+"?"+url.Values{"q": {q}}.Encode(), e.ann)
			if strings.Contains(p.body, `sessions/`+theirs.ID) {
				t.Errorf("search %q shows another store's session: %s", q, p.body)
			}
		}
		if p := e.get("/dashboard/stores/"+other.ID+"/test/sessions", e.ann); p.status != http.StatusNotFound {
			t.Errorf("another store's Sessions = %d; want 404", p.status)
		}
		if p := e.get("/dashboard/stores/"+e.m.ID+"/live/sessions", e.ann); p.status != http.StatusOK || !strings.Contains(p.body, "No live checkout session yet") {
			t.Errorf("live Sessions = %d: %s", p.status, p.body)
		}
	})
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

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
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// figureValue returns the value of the home's figure id as shown.
func figureValue(body, id string) string {
	m := regexp.MustCompile(`id="figure-` + id + `"><dt>[^<]*</dt><dd class="value[^"]*">([^<]*)</dd>`).FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

// homeMoney pays three $30.00 sessions by card (one refunded $10.00, one
// disputed and lost unanswered, so $30.00 and the $15.00 fee) and leaves
// one unpaid, then sets the clock past the dispute's deadline; it returns
// the figures they make, as the home shows them.
func (e *refundEnv) homeMoney() map[string]string {
	e.t.Helper()
	e.paidByCard("4242424242424242")
	p := e.paidByCard("5555555555554444")
	if _, err := e.svc.RefundPayment(context.Background(), service.RefundRequest{PaymentID: p.ID,
		Params: checkout.RefundParams{Amount: ptr(int64(1000))}, By: checkout.Actor{Kind: checkout.ActorCLI, Name: "root"}}); err != nil {
		e.t.Fatal(err)
	}
	e.session()
	_, d := e.disputed("4000000000002685")
	e.clock.Set(d.EvidenceDueBy)
	e.runPaymentsJob()
	if got := e.dispute(e.reload(&checkout.Payment{ID: d.PaymentID})); got.Status != checkout.DisputeLost {
		e.t.Fatalf("the dispute is %s; want lost", got.Status)
	}
	return map[string]string{"gross": "$90.00", "refunds": "$10.00", "disputes": "$45.00", "net": "$35.00", "payments": "3", "conversion": "75.0%"}
}

func ptr[T any](v T) *T { return &v }

// The store's home shows the figures of the last 30 days: the payments
// made, a chart of them and its table; another range by the form.
func TestStoreHomeFigures(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newRefundEnv(t, db)
		home := "/dashboard/stores/" + e.m.ID + "/test/"
		empty := e.get(home, e.ann)
		wantIn(t, "the empty home", empty.body, "Nothing was paid in these days", `id="figure-gross"`, ">Needs attention</h2>")
		if strings.Contains(empty.body, "<svg") {
			t.Error("the empty home draws a chart")
		}
		want := e.homeMoney()
		e.ann = e.signIn("ann@example.com") // a week later
		pg := e.get(home, e.ann)
		if pg.status != http.StatusOK {
			t.Fatalf("home = %d: %s", pg.status, pg.body)
		}
		for id, v := range want {
			if got := figureValue(pg.body, id); got != v {
				t.Errorf("figure %s = %q; want %q", id, got, v)
			}
		}
		today := checkout.DayOf(e.clock.Now())
		wantIn(t, "the home", pg.body, "3 of 4 sessions paid.", `<svg viewBox="0 0 1000 300"`, `<rect class="gross"`, `<polyline class="net"`,
			"<summary>The figures day by day (a table)</summary>", "<th scope=\"row\">"+today.Format("2006-01-02")+"</th>",
			today.AddDate(0, 0, -29).Format("Jan 2, 2006")+" to "+today.Format("Jan 2, 2006"))
		if n := strings.Count(pg.body, `<th scope="row">`); n != 30 {
			t.Errorf("the table has %d days; want 30", n)
		}

		// A range before the payments: nothing; a range of their days.
		day0 := checkout.DayOf(t0)
		before := e.get(home+"?"+url.Values{"from": {"2026-01-01"}, "to": {day0.AddDate(0, 0, -1).Format("2006-01-02")}}.Encode(), e.ann)
		if before.status != http.StatusOK || figureValue(before.body, "gross") != "$0.00" || !strings.Contains(before.body, `value="2026-01-01"`) {
			t.Errorf("a range before the payments = %d, gross %q", before.status, figureValue(before.body, "gross"))
		}
		pg = e.get(home+"?"+url.Values{"from": {day0.Format("2006-01-02")}, "to": {today.Format("2006-01-02")}}.Encode(), e.ann)
		if figureValue(pg.body, "net") != "$35.00" || !strings.Contains(pg.body, `href="`+home+`">Last 30 days</a>`) {
			t.Errorf("the payments' range: net %q", figureValue(pg.body, "net"))
		}
	})
}

// A range that is not one is answered 400, the reason beside its field and
// what was typed kept (escaped), with the rest of the home.
func TestStoreHomeRangeErrors(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newRefundEnv(t, db)
		home := "/dashboard/stores/" + e.m.ID + "/test/"
		for _, c := range []struct {
			from, to, field, msg string
		}{
			{"2026-13-01", "", "from", "Enter the date as YYYY-MM-DD"},
			{"", `"><script>alert(1)</script>`, "to", "Enter the date as YYYY-MM-DD"},
			{"0001-01-01", "", "from", "Enter the date as YYYY-MM-DD"},
			{"2026-03-02", "2026-03-01", "to", "The end of the date range is before its start."},
			{"2025-03-01", "2026-03-02", "from", "The date range can be at most 366 days long; it has 367."},
		} {
			q := url.Values{"from": {c.from}, "to": {c.to}}
			pg := e.get(home+"?"+q.Encode(), e.ann)
			if pg.status != http.StatusBadRequest || !strings.Contains(pg.body, `id="h-`+c.field+`-error">`+c.msg) {
				t.Errorf("home?%s = %d; want 400 with %q beside %s", q.Encode(), pg.status, c.msg, c.field)
			}
			wantIn(t, "the refused range", pg.body, `value="`+html.EscapeString(c.from)+`"`, `value="`+html.EscapeString(c.to)+`"`, ">Needs attention</h2>")
			if strings.Contains(pg.body, "<script>alert") || strings.Contains(pg.body, `id="figure-gross"`) {
				t.Errorf("home?%s shows figures or unescaped input", q.Encode())
			}
		}
		// A year, leap day included, is the longest range.
		if pg := e.get(home+"?from=2024-01-01&to=2024-12-31", e.ann); pg.status != http.StatusOK {
			t.Errorf("366 days = %d", pg.status)
		}
	})
}

// Needs attention lists a crypto refund from the buyer's address until
// its payout is seen (the coins, the address, a link to the refund), and
// counts the deliveries that failed in the last 7 days, linking to them
// in the deliveries list; with nothing open it says so.
func TestStoreHomeAttention(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := newRefundEnv(t, db)
		home := "/dashboard/stores/" + e.m.ID + "/test/"
		wantIn(t, "the home", e.get(home, e.ann).body, "Nothing needs your attention in test mode")

		p := e.paidByCrypto("BTC")
		r := e.cryptoRefund(p, "10.00", "")
		if pg := e.get(home, e.ann); strings.Contains(pg.body, `id="payout-`) {
			t.Error("a refund awaiting the buyer's address is listed")
		}
		if _, err := e.svc.GiveRefundAddress(ctx, r.LinkToken, buyerBTC); err != nil {
			t.Fatal(err)
		}
		r = e.refund(r)
		pg := e.get(home, e.ann)
		wantIn(t, "the home", pg.body, "Crypto refunds to pay", `<tr id="payout-`+r.ID+`">`, buyerBTC, `href="`+home+`payments/`+p.ID+`#refund-`+r.ID+`"`,
			"$10.00")
		if strings.Contains(pg.body, "Nothing needs your attention") {
			t.Error("the home says nothing needs attention")
		}
		if _, err := e.svc.SimulateRefundPayout(ctx, checkout.Scope{MerchantID: e.m.ID, Mode: checkout.ModeTest}, r.ID); err != nil {
			t.Fatal(err)
		}
		if pg := e.get(home, e.ann); strings.Contains(pg.body, `id="payout-`) {
			t.Error("a refund whose payout is seen is still listed")
		}

		// Two failed deliveries: one of today, one of 6 days ago; one of 7
		// days ago and one of live mode are not counted.
		now := e.clock.Now()
		ep := &checkout.Endpoint{ID: checkout.NewID(checkout.PrefixEndpoint, 16), MerchantID: e.m.ID, Mode: checkout.ModeTest,
			URL: "https://hooks.example.com/a", Enabled: true, Secret: checkout.NewWebhookSecret(), CreatedAt: now, UpdatedAt: now}
		live := *ep
		live.ID, live.Mode = checkout.NewID(checkout.PrefixEndpoint, 16), checkout.ModeLive
		if err := db.InTx(ctx, func(tx checkout.Tx) error {
			if err := tx.EndpointInsert(ctx, ep); err != nil {
				return err
			}
			if err := tx.EndpointInsert(ctx, &live); err != nil {
				return err
			}
			for _, c := range []struct {
				ep *checkout.Endpoint
				at time.Time
			}{{ep, now}, {ep, checkout.DayOf(now).AddDate(0, 0, -6)}, {ep, checkout.DayOf(now).AddDate(0, 0, -6).Add(-time.Millisecond)}, {&live, now}} {
				ev := &checkout.Event{ID: checkout.NewEventID(), MerchantID: e.m.ID, Mode: c.ep.Mode, Type: checkout.EventCheckoutCompleted,
					CreatedAt: c.at, Object: []byte(`{}`)}
				d := checkout.NewDelivery(ev, c.ep, c.at)
				d.Status, d.Attempts = checkout.DeliveryFailed, 8
				if err := tx.EventInsert(ctx, ev); err != nil {
					return err
				}
				if err := tx.DeliveryInsert(ctx, d); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		link := home + "developers/deliveries?" + html.EscapeString(url.Values{"from": {checkout.DayOf(now).AddDate(0, 0, -6).Format("2006-01-02")}, "status": {"failed"}}.Encode())
		pg = e.get(home, e.ann)
		wantIn(t, "the home", pg.body, `<a href="`+link+`">2 deliveries failed</a> in the last 7 days`)
		if list := e.get(html.UnescapeString(link), e.ann); list.status != http.StatusOK || strings.Count(list.body, `class="badge bad">failed<`) != 2 {
			t.Errorf("the failed deliveries' list = %d, %d failed shown; want 2", list.status, strings.Count(list.body, `class="badge bad">failed<`))
		}
	})
}

// The home links the CSV exports of its range; a download is CSV, named
// after the store, mode and range, with the range's payments; a wrong
// range is a 400 page, an unknown export or another's store a 404.
func TestStoreHomeExport(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newRefundEnv(t, db)
		home := "/dashboard/stores/" + e.m.ID + "/test/"
		p := e.paidByCard("4242424242424242")
		day := checkout.DayOf(e.clock.Now()).Format("2006-01-02")
		q := "?" + html.EscapeString(url.Values{"from": {day}, "to": {day}}.Encode())
		pg := e.get(home+"?from="+day+"&to="+day, e.ann)
		wantIn(t, "the home", pg.body, `<a href="`+home+`export/payments.csv`+q+`" download>payments</a>`,
			`<a href="`+home+`export/sessions.csv`+q+`" download>checkout sessions</a>`)

		csv := e.get(home+"export/payments.csv?from="+day+"&to="+day, e.ann)
		if csv.status != http.StatusOK || csv.header.Get("Content-Type") != "text/csv; charset=utf-8" ||
			csv.header.Get("Content-Disposition") != `attachment; filename="payments-`+e.m.ID[:8]+`-test-`+day+`-to-`+day+`.csv"` {
			t.Fatalf("the payments export = %d, %q, %q", csv.status, csv.header.Get("Content-Type"), csv.header.Get("Content-Disposition"))
		}
		lines := strings.Split(strings.TrimSuffix(csv.body, "\n"), "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[0], "id,created_at,session_id,") || !strings.HasPrefix(lines[1], p.ID+",") {
			t.Errorf("the payments export =\n%s", csv.body)
		}
		sessions := e.get(home+"export/sessions.csv", e.ann)
		if sessions.status != http.StatusOK || !strings.Contains(sessions.body, p.SessionID+",") {
			t.Errorf("the sessions export of the last 30 days = %d:\n%s", sessions.status, sessions.body)
		}
		if live := e.get("/dashboard/stores/"+e.m.ID+"/live/export/payments.csv", e.ann); strings.Count(live.body, "\n") != 1 {
			t.Errorf("the live export =\n%s\nwant the header alone", live.body)
		}
		for path, status := range map[string]int{
			home + "export/payments.csv?from=2026-02-30":                               http.StatusBadRequest,
			home + "export/payments.csv?from=2026-03-02&to=2026-03-01":                 http.StatusBadRequest,
			home + "export/refunds.csv":                                                http.StatusNotFound,
			home + "export/payments":                                                   http.StatusNotFound,
			"/dashboard/stores/" + checkout.NewStoreID() + "/test/export/payments.csv": http.StatusNotFound,
		} {
			if got := e.get(path, e.ann); got.status != status || strings.Contains(got.header.Get("Content-Type"), "csv") {
				t.Errorf("GET %s = %d, %s; want %d, a page", path, got.status, got.header.Get("Content-Type"), status)
			}
		}
		wantRedirectToSignIn(t, "an export without a session", e.get(home+"export/payments.csv"))
		if got := e.get(home+"export/payments.csv?from=2026-03-02&to=2026-03-01", e.ann); !strings.Contains(got.body, "The end of the date range is before its start.") {
			t.Errorf("a backwards range's page: %s", got.body)
		}
	})
}

package dashboard_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/browsertest"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// Over ten days buyers pay $30.00 sessions: the first on the payment page,
// the others by the service as the page would; one is refunded $10.00,
// one is disputed and lost unanswered, one session is left unpaid. The
// merchant's home shows the figures they make, the chart of the days (a
// bar for each day with payments, the net line) and its table; the range
// form narrows them to one day. On a phone's screen the home fits.
func TestBrowserHome(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newBrowserEnv(t, db)
		ctx := context.Background()
		m, secret := e.account("ann@example.com")
		session := func() string {
			e.t.Helper()
			var created struct {
				Data struct {
					ID          string
					CheckoutURL string `json:"checkout_url"`
				}
			}
			res := e.createCheckout(m.ID, secret)
			if err := json.Unmarshal([]byte(res.body), &created); err != nil || created.Data.ID == "" {
				t.Fatalf("the session created: %s (%v)", res.body, err)
			}
			return created.Data.CheckoutURL
		}
		id := func(url string) string { return url[strings.LastIndex(url, "/")+1:] }
		payByCard := func(number string) *checkout.Payment {
			t.Helper()
			out, err := e.svc.PayByCard(ctx, id(session()), pay.CardForm{Number: number, Expiry: "12/30", CVC: "123", Name: "Jo Buyer"})
			if err != nil || out.Payment.Status != checkout.PaymentSucceeded {
				t.Fatalf("PayByCard(%s) = %+v, %v", number, out, err)
			}
			return out.Payment
		}

		// Day 0: a buyer pays on the page.
		url := session()
		e.Do(chromedp.Navigate(url),
			chromedp.WaitVisible(chromedp.ID("number")),
			chromedp.SendKeys(chromedp.ID("number"), "4242424242424242"),
			chromedp.SendKeys(chromedp.ID("expiry"), "1230"),
			chromedp.SendKeys(chromedp.ID("cvc"), "123"),
			chromedp.SendKeys(chromedp.ID("name"), "Jo Buyer"),
			chromedp.Click(chromedp.CSS("button.pay-button")))
		if got := e.TextIs(".receipt h2", "Payment received"); got != "Payment received" {
			t.Fatalf("after paying the page shows %q", got)
		}
		// Days 1 to 3: three more, one refunded in part, one disputed; a
		// session left unpaid.
		for day := 1; day <= 3; day++ {
			e.clk.Advance(24 * time.Hour)
			p := payByCard(map[int]string{1: "4242424242424242", 2: "5555555555554444", 3: "4000000000002685"}[day])
			if day == 2 {
				e.clk.Advance(time.Hour)
				if _, err := e.svc.RefundPayment(ctx, service.RefundRequest{PaymentID: p.ID, Params: checkout.RefundParams{Amount: ptr(int64(1000))},
					By: checkout.Actor{Kind: checkout.ActorCLI, Name: "root"}}); err != nil {
					t.Fatal(err)
				}
			}
		}
		session()
		// Day 10: the dispute, unanswered, is lost.
		e.clk.Advance(checkout.DisputeDelay)
		if _, err := e.svc.ProcessAllDuePayments(ctx); err != nil {
			t.Fatal(err)
		}
		e.clk.Advance(7 * 24 * time.Hour)
		if _, err := e.svc.ProcessAllDuePayments(ctx); err != nil {
			t.Fatal(err)
		}

		e.signIn("ann@example.com")
		home := "/dashboard/stores/" + m.ID + "/test/"
		e.open(home)
		e.at(home)
		want := map[string]string{"gross": "$120.00", "refunds": "$10.00", "disputes": "$45.00", "net": "$65.00", "payments": "4", "conversion": "80.0%"}
		for id, v := range want {
			if got := e.textOf("#figure-" + id + " .value"); got != v {
				t.Errorf("the home's %s reads %q; want %q", id, got, v)
			}
		}
		if got := e.textOf("#figure-conversion .hint"); got != "4 of 5 sessions paid." {
			t.Errorf("the conversion's line reads %q", got)
		}
		// The chart: a bar for each of the four days with payments, drawn
		// at its size; the net line.
		if n := browsertest.Eval[int](e.Page, `document.querySelectorAll("#figures svg rect.gross").length`); n != 4 {
			t.Errorf("the chart has %d bars; want 4", n)
		}
		if h := browsertest.Eval[float64](e.Page, `document.querySelector("#figures svg").getBoundingClientRect().height`); h < 100 {
			t.Errorf("the chart is %vpx high", h)
		}
		if !e.has("#figures svg polyline.net") {
			t.Error("the chart has no net line")
		}
		// Its table, behind a summary: 30 days, the refund's on its day.
		e.Do(chromedp.Click(chromedp.CSS("#figures details summary")))
		day2 := checkout.DayOf(t0).AddDate(0, 0, 2).Format("2006-01-02")
		row := browsertest.Eval[string](e.Page, `[...document.querySelectorAll("#figures details tbody tr")].find(r => r.cells[0].innerText === `+browsertest.JSString(day2)+`)?.innerText ?? ""`)
		if f := strings.Fields(row); len(f) != 9 || f[1] != "$30.00" || f[2] != "$10.00" || f[4] != "$20.00" || f[5] != "1" {
			t.Errorf("the table's row of %s reads %q; want gross $30.00, refunds $10.00, net $20.00, 1 payment", day2, row)
		}
		if n := browsertest.Eval[int](e.Page, `document.querySelectorAll("#figures details tbody tr").length`); n != 30 {
			t.Errorf("the table has %d days; want 30", n)
		}
		e.screenshot("home")

		// One day: the range form.
		e.Do(chromedp.SetValue("#h-from", day2), chromedp.SetValue("#h-to", day2))
		e.press("Show")
		e.at(home + "?from=" + day2 + "&to=" + day2)
		if got := e.textOf("#figure-net .value"); got != "$20.00" {
			t.Errorf("the home of %s reads a net of %q; want $20.00", day2, got)
		}
		if got := e.ValueIs("#h-from", day2); got != day2 {
			t.Errorf("the form's From reads %q; want it kept", got)
		}

		// On a phone.
		e.open(home)
		e.at(home)
		e.Do(chromedp.EmulateViewport(375, 740, chromedp.EmulateMobile, chromedp.EmulateScale(2)))
		if w := browsertest.Eval[int](e.Page, `document.documentElement.scrollWidth`); w > 375 {
			t.Errorf("the home is %dpx wide on a 375px screen: it scrolls sideways", w)
		}
		if w := browsertest.Eval[float64](e.Page, `document.querySelector("#figures svg").getBoundingClientRect().width`); w < 200 {
			t.Errorf("the chart is %vpx wide on a phone", w)
		}
		e.screenshot("home-phone")
		e.Do(chromedp.EmulateReset())
	})
}

package dashboard_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/browsertest"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// The Security page in a browser: a change made in the dashboard shows on
// it with who made it and from where, beside the CLI's; the action filter
// narrows the list and keeps its value; a phone-sized screen scrolls the
// table, not the page.
func TestBrowserSecurity(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newBrowserEnv(t, db)
		// The store made by ann in the dashboard, from her browser.
		a, err := e.svc.CreateAccount(context.Background(), "ann@example.com", password)
		if err != nil {
			t.Fatal(err)
		}
		ann := service.WithOrigin(context.Background(), service.Origin{Actor: checkout.Actor{Kind: checkout.ActorAccount, ID: a.ID, Name: a.Email},
			ClientAddress: "203.0.113.24", UserAgent: "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) Safari/604.1"})
		m, err := e.svc.CreateStore(ann, a.ID, checkout.MerchantParams{Name: "Acme Games", Currency: "USD"})
		if err != nil {
			t.Fatal(err)
		}
		e.clk.Advance(time.Minute)
		if _, _, err := e.svc.CreateAPIKey(ann, checkout.APIKeyParams{Name: "Web shop", MerchantID: m.ID, Mode: checkout.ModeLive,
			Type: checkout.KeyBearer, Permissions: []checkout.Permission{checkout.PermCheckoutsWrite}}); err != nil {
			t.Fatal(err)
		}
		cli := service.WithOrigin(context.Background(), service.Origin{Actor: checkout.Actor{Kind: checkout.ActorCLI, Name: "ops"}})
		e.clk.Advance(time.Minute)
		if _, err := e.svc.SetDisputeFee(cli, m.ID, 2500); err != nil {
			t.Fatal(err)
		}
		e.clk.Advance(time.Minute)
		e.signIn("ann@example.com")

		// A change through the dashboard: the store's settings.
		settings := "/dashboard/stores/" + m.ID + "/test/settings"
		e.open(settings)
		e.fill("Name", "Acme Games Ltd")
		e.press("Save")
		e.WaitFor(`location.search.includes("saved")`)

		e.clk.Advance(time.Minute)
		e.follow("nav.side", "Security")
		security := "/dashboard/stores/" + m.ID + "/test/settings/security"
		e.at(security)
		first := e.TextHas("main table tbody tr", "ann@example.com", "store.update", "127.0.0.1")
		if !strings.Contains(first, "store.update") {
			t.Errorf("the newest entry reads %q; want ann's store.update from 127.0.0.1", first)
		}
		if got := e.textOf("main table tbody"); !strings.Contains(got, "Command line (ops)") || !strings.Contains(got, "store.dispute_fee") {
			t.Errorf("the list reads %q; want the CLI's dispute fee too", got)
		}
		e.screenshot("security")

		// The action filter.
		e.Do(chromedp.SetValue(chromedp.CSS(e.labelled("Action")), "store.dispute_fee"))
		e.press("Filter")
		e.at(security + "?actor=&action=store.dispute_fee&from=&to=")
		if n := browsertest.Eval[int](e.Page, `document.querySelectorAll("main table tbody tr").length`); n != 1 {
			t.Errorf("filtered on store.dispute_fee: %d rows; want 1", n)
		}
		if got := e.ValueIs(e.labelled("Action"), "store.dispute_fee"); got != "store.dispute_fee" {
			t.Errorf("the action filter reads %q after filtering; want it kept", got)
		}

		// On a phone, the table scrolls inside its box; the page does not.
		e.Do(chromedp.EmulateViewport(375, 740, chromedp.EmulateMobile, chromedp.EmulateScale(2)))
		e.open(security)
		e.at(security)
		if w := browsertest.Eval[int](e.Page, `document.documentElement.scrollWidth`); w > 375 {
			t.Errorf("the Security page is %dpx wide on a 375px screen: it scrolls sideways", w)
		}
	})
}

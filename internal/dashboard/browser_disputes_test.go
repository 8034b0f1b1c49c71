package dashboard_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/browsertest"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// A buyer pays $30.00 on the payment page with the dispute test card 4000
// 0000 0000 0259; a moment later (the service's clock moved on, the
// payments job run) the buyer's bank disputes it. The merchant finds the
// dispute under Needs attention on the store's home, opens its payment,
// and answers through the form: the note alone is refused beside the
// texts (the note kept, the focus on the first text), then evidence with
// winning_evidence is reviewed (Back keeps it), confirmed and shown sent;
// a minute later the job decides: the page shows the dispute won and the
// payment succeeded, and nothing needs attention any more. On a phone's
// screen the home, the page and the confirmation fit.
func TestBrowserDisputes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newBrowserEnv(t, db)
		ctx := context.Background()
		m, secret := e.account("ann@example.com")

		// The buyer, on the payment page.
		res := e.createCheckout(m.ID, secret)
		var created struct {
			Data struct {
				ID          string
				CheckoutURL string `json:"checkout_url"`
			}
		}
		if err := json.Unmarshal([]byte(res.body), &created); err != nil || created.Data.CheckoutURL == "" {
			t.Fatalf("the session created: %s (%v)", res.body, err)
		}
		e.Do(chromedp.Navigate(created.Data.CheckoutURL),
			chromedp.WaitVisible(chromedp.ID("number")),
			chromedp.SendKeys(chromedp.ID("number"), "4000000000000259"),
			chromedp.SendKeys(chromedp.ID("expiry"), "1230"),
			chromedp.SendKeys(chromedp.ID("cvc"), "123"),
			chromedp.SendKeys(chromedp.ID("name"), "Jo Buyer"),
			chromedp.Click(chromedp.CSS("button.pay-button")))
		if got := e.TextIs(".receipt h2", "Payment received"); got != "Payment received" {
			t.Fatalf("after paying the page shows %q", got)
		}
		s, err := db.SessionGet(ctx, created.Data.ID)
		if err != nil || s.PaymentID == nil {
			t.Fatalf("the session paid = %+v, %v", s, err)
		}
		payID := *s.PaymentID

		// A moment later, the dispute.
		e.clk.Advance(checkout.DisputeDelay)
		if _, err := e.svc.ProcessAllDuePayments(ctx); err != nil {
			t.Fatal(err)
		}

		// The merchant, from the store's home to the payment.
		e.signIn("ann@example.com")
		home := "/dashboard/stores/" + m.ID + "/test/"
		payment := home + "payments/" + payID
		e.open(home)
		e.at(home)
		row := "#needs-attention tbody tr"
		if got := e.TextHas(row, payID); !strings.Contains(got, "$30.00") || !strings.Contains(got, "Fraudulent") ||
			!strings.Contains(got, "needs_response") || !strings.Contains(got, "7 days left") {
			t.Errorf("Needs attention lists %q; want the dispute: $30.00, Fraudulent, needs_response, 7 days left", got)
		}
		e.screenshot("needs-attention")
		e.follow("#needs-attention", payID)
		e.at(payment)
		for term, want := range map[string]string{"Dispute status": "needs_response", "Disputed amount": "$30.00, held", "Dispute fee": "$15.00, held"} {
			if got := e.field(term); got != want {
				t.Errorf("%s reads %q; want %q", term, got, want)
			}
		}
		if got := e.field("Reason"); !strings.HasPrefix(got, "Fraudulent") {
			t.Errorf("Reason reads %q", got)
		}
		if got := e.field("Evidence due by"); !strings.HasSuffix(got, "7 days left") {
			t.Errorf("Evidence due by reads %q; want the time left", got)
		}
		if got := e.textOf("#test-network"); !strings.Contains(got, "Evidence with winning_evidence in one of its texts wins; any other evidence loses") {
			t.Errorf("the test network's rule reads %q", got)
		}
		e.screenshot("dispute")

		// The note alone: refused beside the texts, the note kept, the
		// focus on the first text.
		e.ExpectConsole("status of 400") // the refused form comes back as 400 Bad Request
		e.fill("Your note", "Refund if the buyer calls.")
		e.press("Review evidence")
		e.WaitFor(`document.getElementById("evidence-error") !== null`)
		if got := e.textOf("#evidence-error"); !strings.HasPrefix(got, "Give the card network some evidence") {
			t.Errorf("the refusal reads %q", got)
		}
		if got := browsertest.Until(e.Page, focused, "evidence-product_description"); got != "evidence-product_description" {
			t.Errorf("after the refusal the focus is on %q; want the first text", got)
		}
		if got := e.ValueIs("#evidence-note", "Refund if the buyer calls."); got != "Refund if the buyer calls." {
			t.Errorf("the note after the refusal = %q; want it kept", got)
		}

		// Evidence: the confirmation, Back, and again.
		e.fill("Product or service", "A sword, made to order.\nShipped on 2 November.")
		e.fill("Other evidence", "Signed for on delivery: winning_evidence")
		e.press("Review evidence")
		e.WaitFor(`location.pathname.endsWith("/dispute/review") && document.querySelector("main h1")?.textContent === "Send this evidence?"`)
		if got := e.textOf("main .warning"); !strings.Contains(got, "the test card network decides the dispute won") {
			t.Errorf("the confirmation's test-mode line reads %q", got)
		}
		texts := `[...document.querySelectorAll("dl.evidence dd")].map(d => d.innerText)`
		want := []string{"A sword, made to order.\nShipped on 2 November.", "Signed for on delivery: winning_evidence", "Refund if the buyer calls."}
		if got := browsertest.Eval[[]string](e.Page, texts); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("the confirmation shows %q; want %q, line break kept", got, want)
		}
		e.screenshot("dispute-confirm")
		e.Do(chromedp.EmulateViewport(375, 740, chromedp.EmulateMobile, chromedp.EmulateScale(2)))
		if w := browsertest.Eval[int](e.Page, `document.documentElement.scrollWidth`); w > 375 {
			t.Errorf("the confirmation is %dpx wide on a 375px screen: it scrolls sideways", w)
		}
		e.Do(chromedp.EmulateReset())
		e.press("Back")
		e.WaitFor(`document.getElementById("evidence-product_description") !== null`)
		if got := e.ValueIs("#evidence-product_description", want[0]); got != want[0] {
			t.Errorf("Back leaves the product at %q", got)
		}
		if got := e.ValueIs("#evidence-note", want[2]); got != want[2] {
			t.Errorf("Back leaves the note at %q", got)
		}
		e.press("Review evidence")
		e.WaitFor(`document.querySelector("main h1")?.textContent === "Send this evidence?"`)
		e.press("Send evidence")
		e.at(payment + "?evidence=sent")
		if got := e.TextHas(".notice", "Evidence sent"); !strings.HasPrefix(got, "Evidence sent. The card network decides a moment later") {
			t.Errorf("after sending the page says %q", got)
		}
		if got := e.field("Dispute status"); got != "under_review" {
			t.Errorf("Dispute status reads %q; want under_review", got)
		}
		if got := e.field("Evidence sent"); !strings.HasSuffix(got, "by ann@example.com") {
			t.Errorf("Evidence sent reads %q; want by ann@example.com", got)
		}
		if got := browsertest.Eval[[]string](e.Page, texts); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("the evidence sent reads %q; want %q", got, want)
		}
		if e.has("form.evidence") {
			t.Error("the page still offers the form once the evidence is sent")
		}

		// A minute later, the card network decides.
		e.clk.Advance(checkout.DisputeDecisionDelay)
		if _, err := e.svc.ProcessAllDuePayments(ctx); err != nil {
			t.Fatal(err)
		}
		e.open(payment)
		e.at(payment)
		for term, want := range map[string]string{"Dispute status": "won", "Status": "succeeded", "Disputed amount": "$30.00, given back", "Net": "$28.83"} {
			if got := e.field(term); got != want {
				t.Errorf("once decided, %s reads %q; want %q", term, got, want)
			}
		}
		if got := e.textOf(".dispute-explain"); !strings.HasPrefix(got, "Won:") {
			t.Errorf("the dispute reads %q; want it won", got)
		}

		// On a phone, the page and the home fit.
		e.Do(chromedp.EmulateViewport(375, 740, chromedp.EmulateMobile, chromedp.EmulateScale(2)))
		for _, path := range []string{payment, home} {
			e.open(path)
			e.at(path)
			if w := browsertest.Eval[int](e.Page, `document.documentElement.scrollWidth`); w > 375 {
				t.Errorf("%s is %dpx wide on a 375px screen: it scrolls sideways", path, w)
			}
		}
		if got := e.textOf("#needs-attention"); !strings.Contains(got, "Nothing needs your attention") {
			t.Errorf("once the dispute is won, Needs attention reads %q", got)
		}
	})
}

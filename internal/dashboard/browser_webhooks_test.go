package dashboard_test

import (
	"io"
	"net/http"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/browsertest"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
	"github.com/checkoutd/checkoutd/internal/webhook/webhooktest"
)

var endpointPagePath = regexp.MustCompile(`^/dashboard/stores/[0-9a-f-]{36}/test/developers/webhooks/we_[0-9a-f]+$`)

// A merchant's webhooks, in the browser: an endpoint added through the form
// (a private address refused first), a test event delivered and its
// response read on the delivery's page, a delivery failed for good and
// resent, the secret rolled keeping the old one with both signatures
// verified by the receiver, and the events that went out. The receiver is
// an HTTPS server of a fake internet (webhooktest), reached through the
// production guard and client; the dispatcher runs when the test says.
func TestBrowserWebhooks(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		n := webhooktest.NewNetwork(t)
		e := newBrowserEnv(t, db, fakeInternet(n))
		m, _ := e.account("ann@example.com")
		base := "/dashboard/stores/" + m.ID + "/test/"
		hooks := base + "developers/webhooks"
		r := n.Receiver(t, "hooks.example.com")
		// The receiver answers with markup: the delivery's page shows it
		// as text (were it markup, the policy would refuse the script, an
		// error in the console).
		const thanks = `<b>Thanks!</b> <script>alert("r")</script>`
		r.SetHandler(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, thanks) })
		n.SetAddrs("intranet.example.com", netip.MustParseAddr("10.0.0.7"))
		e.signIn("ann@example.com")

		// Add an endpoint, events ticked one by one: a host in a private
		// network is refused in words beside the URL, with what was typed
		// and ticked kept.
		e.open(base)
		e.follow("nav.side", "Webhooks")
		e.at(hooks)
		e.follow("main", "Add an endpoint")
		e.at(hooks + "/new")
		e.fill("Endpoint URL", "https://intranet.example.com/checkoutd")
		e.fill("Description", "Order fulfilment")
		e.tick("All events", false)
		e.tick("checkout.completed", true)
		e.tick("payment.failed", true)
		e.ExpectConsole("status of 400") // the refused form comes back as 400 Bad Request
		e.press("Add endpoint")
		e.WaitFor(`document.getElementById("ep-url-error") !== null`)
		if got := e.textOf("#ep-url-error"); !strings.Contains(got, "intranet.example.com resolves to a private or reserved address") {
			t.Errorf("the URL's error = %q; want it to say the host is private", got)
		}
		for sel, want := range map[string]string{"#ep-url": "https://intranet.example.com/checkoutd", "#ep-description": "Order fulfilment"} {
			if got := e.ValueIs(sel, want); got != want {
				t.Errorf("%s after the refusal = %q; want %q kept", sel, got, want)
			}
		}
		ticked := `[...document.querySelectorAll("form input[type=checkbox]:checked")].map(i => i.value)`
		if got := browsertest.Eval[[]string](e.Page, ticked); !slices.Equal(got, []string{"checkout.completed", "payment.failed"}) {
			t.Errorf("ticked after the refusal: %q; want the two event types, not All", got)
		}
		e.fill("Endpoint URL", r.URL)
		e.press("Add endpoint")
		e.WaitFor(`location.search === "?done=created"`)
		endpoint := e.path()
		if !endpointPagePath.MatchString(endpoint) {
			t.Fatalf("after adding the endpoint the tab is at %s; want its page", endpoint)
		}
		if got := e.TextIs("main h1", r.URL); got != r.URL {
			t.Errorf("the endpoint's page is titled %q; want its URL", got)
		}
		if got := e.field("Events"); got != "checkout.completed, payment.failed" {
			t.Errorf("the endpoint's events = %q", got)
		}
		// Its actions, links and buttons, stand in one line.
		tops := browsertest.Eval[[]float64](e.Page, `[...document.querySelector("main .actions").querySelectorAll(":scope > a, button")].map(el => el.getBoundingClientRect().top)`)
		if len(tops) != 4 || slices.Min(tops) != slices.Max(tops) {
			t.Errorf("the endpoint's actions start at %v px from the top; want four in one line", tops)
		}

		// Send test event; once delivered, the page shows the delivery
		// succeeded, and the delivery's page the response as text.
		sent := e.sendTestEvent(endpoint)
		e.deliveredOnce()
		e.Do(chromedp.Reload())
		if got := e.TextHas(deliveryRow(sent), "succeeded", "200"); !strings.Contains(got, "webhook.test") {
			t.Errorf("the test event's row = %q; want webhook.test succeeded with 200", got)
		}
		e.Do(chromedp.Click(chromedp.CSS(deliveryRow(sent) + " a")))
		e.at(base + "developers/deliveries/" + sent)
		if got := e.TextIs(".heading .badge", "succeeded"); got != "succeeded" {
			t.Errorf("the delivery's status reads %q; want succeeded", got)
		}
		if got := browsertest.Eval[string](e.Page, `document.querySelector(".attempt h3").textContent.replace(/\s+/g, " ").trim()`); got != "Attempt 1 200" {
			t.Errorf("the attempt reads %q; want Attempt 1 200", got)
		}
		response := `document.querySelector(".attempt pre code")`
		if got := browsertest.Eval[string](e.Page, response+`.textContent`); got != thanks ||
			browsertest.Eval[int](e.Page, response+`.childElementCount`) != 0 {
			t.Errorf("the response body reads %q, or is markup; want %q as text", got, thanks)
		}
		// Its event's page shows the payload the receiver got, byte for byte.
		e.follow("dl.fields", r.Requests()[0].Header.Get("Service-Event-Id"))
		e.WaitFor(`location.pathname.startsWith(` + browsertest.JSString(base+"developers/events/evt_") + `)`)
		if got := browsertest.Eval[string](e.Page, `document.getElementById("event-payload").textContent`); got != string(r.Requests()[0].Body) {
			t.Errorf("the event's payload = %s; want the body delivered, %s", got, r.Requests()[0].Body)
		}
		// A test event is about no object: the page says so rather than
		// leave a blank.
		if got := e.field("Object"); got != "—" {
			t.Errorf("the test event's object reads %q; want —", got)
		}

		// The receiver fails: the delivery is retried on its schedule, then
		// fails for good (days later: the dashboard's session has ended);
		// Resend, once the receiver is fixed, makes a new delivery that
		// succeeds.
		r.SetHandler(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `{"error":"database unavailable"}`)
		})
		e.follow("nav.side", "Webhooks")
		e.at(hooks)
		e.follow("main table", r.URL)
		e.at(endpoint)
		failing := e.sendTestEvent(endpoint)
		e.deliveredOnce()
		e.Do(chromedp.Reload())
		if got := e.TextHas(deliveryRow(failing), "pending", "500"); !strings.Contains(got, "pending") {
			t.Errorf("the failing delivery's row = %q; want pending after a 500", got)
		}
		failed := base + "developers/deliveries/" + failing
		e.Do(chromedp.Click(chromedp.CSS(deliveryRow(failing) + " a")))
		e.at(failed)
		if e.field("Next attempt") == "" || e.has(`form[action$="/resend"]`) {
			t.Error("a pending delivery's page shows no next attempt, or offers Resend")
		}
		// The first retry, a minute later: the page lists both attempts,
		// each with the receiver's answer, and when the next is due.
		e.clk.Advance(checkout.RetrySchedule[0])
		e.deliveredOnce()
		e.Do(chromedp.Reload())
		if n := browsertest.Until(e.Page, `document.querySelectorAll(".attempt").length`, 2); n != 2 {
			t.Errorf("after a retry the delivery's page shows %d attempts; want 2", n)
		}
		next := e.clk.Now().Add(checkout.RetrySchedule[1]).UTC().Format("2006-01-02 15:04:05 UTC")
		if got := browsertest.Eval[string](e.Page, `[...document.querySelectorAll("dl.fields dt")].find(dt => dt.textContent === "Next attempt").nextElementSibling.querySelector("time").title`); got != next {
			t.Errorf("the next attempt is due %q; want %q", got, next)
		}
		e.screenshot("delivery")
		for _, wait := range checkout.RetrySchedule[1:] {
			e.clk.Advance(wait)
			e.deliveredOnce()
		}
		e.open(failed)
		e.at("/dashboard/signin")
		e.signIn("ann@example.com")
		e.open(failed)
		e.at(failed)
		if got := e.TextIs(".heading .badge", "failed"); got != "failed" {
			t.Errorf("after %d attempts the delivery reads %q; want failed", checkout.MaxDeliveryAttempts, got)
		}
		attempts := browsertest.Eval[[]string](e.Page, `[...document.querySelectorAll(".attempt")].map(a => a.querySelector("h3").textContent.replace(/\s+/g, " ").trim() + " " + a.querySelector("pre").textContent)`)
		if len(attempts) != checkout.MaxDeliveryAttempts || !strings.HasPrefix(attempts[7], "Attempt 8 500") || !strings.HasSuffix(attempts[7], "database unavailable\"}") {
			t.Errorf("the failed delivery's attempts: %q; want %d, each 500 with its body", attempts, checkout.MaxDeliveryAttempts)
		}
		r.SetHandler(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, thanks) })
		e.press("Resend")
		e.WaitFor(`location.search === "?done=resent" && !location.pathname.endsWith(` + browsertest.JSString(failing) + `)`)
		resent := strings.TrimPrefix(e.path(), base+"developers/deliveries/")
		if got := e.TextHas(".notice", "resent as a new delivery"); !strings.Contains(got, "resent as a new delivery") {
			t.Errorf("after Resend the page says %q", got)
		}
		e.deliveredOnce()
		e.Do(chromedp.Reload())
		if got := e.TextIs(".heading .badge", "succeeded"); got != "succeeded" {
			t.Errorf("the resent delivery reads %q once delivered; want succeeded", got)
		}
		if got := r.Requests()[len(r.Requests())-1].Header.Get("Service-Delivery-Id"); got != resent {
			t.Errorf("the receiver's last request is of delivery %q; want the resend %s", got, resent)
		}
		e.open(failed)
		if got := e.field("Resent as"); got != resent {
			t.Errorf("the failed delivery reads Resent as %q; want %s", got, resent)
		}

		// Reveal the secret; roll it keeping the old one 24 hours: the page
		// shows both, and each request carries a signature with each.
		e.follow("dl.fields", r.URL)
		e.at(endpoint)
		if got := e.field("Last failure"); strings.Count(got, "500") != 1 || !strings.HasSuffix(got, ": receiver answered 500; only 2xx counts as delivered") {
			t.Errorf("the endpoint's last failure reads %q; want when, then why, once", got)
		}
		e.press("Reveal secret")
		e.WaitFor(`document.getElementById("endpoint-secret") !== null`)
		old := e.textOf("#endpoint-secret")
		if !strings.HasPrefix(old, checkout.WebhookSecretPrefix) {
			t.Fatalf("the revealed secret = %q", old)
		}
		e.tick("Keep the old secret", true)
		e.fill("hours", "24")
		e.press("Roll secret")
		e.WaitFor(`document.getElementById("previous-secret") !== null`)
		current := e.textOf("#endpoint-secret")
		if got := e.textOf("#previous-secret"); got != old || current == old || !strings.HasPrefix(current, checkout.WebhookSecretPrefix) {
			t.Fatalf("after the roll the page shows %q and previous %q; want a new secret and %q", current, got, old)
		}
		if got := e.textOf(".notice"); !strings.Contains(got, "for 24 hours every request carries a signature with the new secret and one with the old") {
			t.Errorf("after the roll the page says %q", got)
		}
		until := browsertest.Eval[string](e.Page, `document.querySelector(".secret time").getAttribute("datetime")`)
		if at, err := time.Parse(time.RFC3339, until); err != nil || at.Sub(e.clk.Now().Add(24*time.Hour)).Abs() > time.Second {
			t.Errorf("the previous secret signs until %q; want 24 hours from now", until)
		}
		e.screenshot("endpoint")
		rolled := e.sendTestEvent(endpoint)
		e.deliveredOnce()
		req := r.Requests()[len(r.Requests())-1]
		if got := req.Header.Get("Service-Delivery-Id"); got != rolled {
			t.Fatalf("the receiver's last request is of delivery %q; want %s", got, rolled)
		}
		// Each v1= by its secret, the new first; and a receiver that checks
		// as docs/webhooks.md says accepts the request with either secret.
		header := req.Header.Get("Service-Webhook-Signature")
		ts, sigs := webhooktest.Signatures(header)
		now := e.clk.Now()
		if len(sigs) != 2 || !webhooktest.Verify("t="+ts+",v1="+sigs[0], req.Body, current, now) || !webhooktest.Verify("t="+ts+",v1="+sigs[1], req.Body, old, now) {
			t.Errorf("Service-Webhook-Signature: %s; want two v1=, the first by the new secret, the second by the old", header)
		}
		for _, secret := range []string{current, old} {
			if !webhooktest.Verify(header, req.Body, secret, now) {
				t.Errorf("docs/webhooks.md's verify refuses %s with the secret %s", header, secret)
			}
		}

		// Events lists the events that went out; the Webhooks list, the
		// endpoint with its last 24 hours.
		e.follow("nav.side", "Events")
		e.at(base + "developers/events")
		rows := browsertest.Eval[[]string](e.Page, `[...document.querySelectorAll("main table tbody tr")].map(tr => tr.innerText)`)
		if len(rows) != 3 || !strings.Contains(rows[0], "webhook.test") || !strings.Contains(rows[0], "succeeded") {
			t.Errorf("Events lists %q; want the three test events, the last delivered", rows)
		}
		if got := e.textOf("main table tbody tr td:nth-child(2)"); got != "—" {
			t.Errorf("a test event's object reads %q in Events; want —", got)
		}
		e.screenshot("events")
		e.follow("nav.side", "Webhooks")
		e.at(hooks)
		if got := e.TextHas("main table tbody tr", r.URL, "Order fulfilment", "2 event types", "Enabled"); !strings.Contains(got, "succeeded") {
			t.Errorf("the endpoint's row = %q; want its URL, description, events, health and status", got)
		}
		e.screenshot("webhooks")
	})
}

// sendTestEvent presses Send test event on a page of the endpoint (its
// page, or the answer to one of its forms) and returns the id of the
// delivery it made, once the page says it is on its way.
func (e *browserEnv) sendTestEvent(endpoint string) string {
	e.t.Helper()
	e.press("Send test event")
	e.WaitFor(`location.pathname === ` + browsertest.JSString(endpoint) + ` && new URLSearchParams(location.search).get("done") === "tested"`)
	id := e.query("delivery")
	if !strings.HasPrefix(id, "whd_") {
		e.t.Fatalf("Send test event went to %s; want the delivery's id in the URL", e.path())
	}
	if got := e.TextHas(".notice", "webhook.test event is on its way"); !strings.Contains(got, "on its way") {
		e.t.Errorf("after Send test event the page says %q", got)
	}
	return id
}

// deliveredOnce runs the dispatcher, which must make one attempt: the test
// knows what is due.
func (e *browserEnv) deliveredOnce() {
	e.t.Helper()
	if got := e.deliver(); got != 1 {
		e.t.Fatalf("the dispatcher made %d attempts; want 1", got)
	}
}

// deliveryRow is a CSS selector of the row of a list of deliveries that
// links to the delivery id.
func deliveryRow(id string) string {
	return `tr:has(a[href$="/developers/deliveries/` + id + `"])`
}

package page

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// A test-network Bitcoin address a buyer may give, and one of mainnet.
const (
	buyerBTC   = "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx"
	mainnetBTC = "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"
)

// cryptoRefund pays a test session of $39.99 in BTC (66650 satoshi) and
// refunds amount of it at rate; it returns the refund.
func (e *env) cryptoRefund(amount int64, rate checkout.RefundRate) *checkout.Refund {
	e.t.Helper()
	ctx := context.Background()
	s := e.session(checkout.ModeTest, fullBody)
	if _, err := e.svc.CryptoQuote(ctx, s.ID, "BTC"); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.svc.SimulateCryptoPayment(ctx, s.ID, "BTC"); err != nil {
		e.t.Fatal(err)
	}
	e.clk.Advance(time.Hour)
	if _, err := e.svc.ProcessAllDuePayments(ctx); err != nil {
		e.t.Fatal(err)
	}
	got, err := e.svc.Store().SessionGet(ctx, s.ID)
	if err != nil || got.PaymentID == nil {
		e.t.Fatalf("the session paid in BTC = %+v, %v", got, err)
	}
	out, err := e.svc.RefundPayment(ctx, service.RefundRequest{
		Scope:     checkout.Scope{MerchantID: e.store.ID, Mode: checkout.ModeTest},
		PaymentID: *got.PaymentID, Params: checkout.RefundParams{Amount: &amount, Rate: rate},
		By: checkout.Actor{Kind: checkout.ActorCLI, Name: "ops"},
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return out.Refund
}

// postRefund sends the refund page's form, with the token of the page
// loaded first unless the form has one.
func (e *env) postRefund(token string, form url.Values, headers ...string) *response {
	e.t.Helper()
	if form.Get(csrfField) == "" {
		if m := tokenRE.FindStringSubmatch(e.get("/refund/" + token).body); m != nil {
			form.Set(csrfField, m[1])
		}
	}
	req, _ := http.NewRequest("POST", e.srv.URL+"/refund/"+token, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return e.do(req)
}

// refundCookie returns the csrf token the refund page set.
func (e *env) refundCookie() string {
	e.t.Helper()
	u, _ := url.Parse(e.srv.URL + "/refund/")
	for _, c := range e.client.Jar.Cookies(u) {
		if c.Name == csrfCookie {
			return c.Value
		}
	}
	e.t.Fatal("no csrf cookie under /refund/")
	return ""
}

// A buyer follows the refund link: sees the refund and, at the payment's
// rate, the coins up front; a wrong address comes back beside the field as
// typed; the right one is taken once, and the page follows the refund to
// the merchant's payout and its confirmation.
func TestRefundPageTakesTheAddressOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		ref := e.cryptoRefund(1000, checkout.RateOfPayment) // 1000/3999 of 66650 satoshi, rounded down
		token := ref.LinkToken
		page := e.get("/refund/" + token)
		if page.status != http.StatusOK {
			t.Fatalf("GET the refund page = %d %s", page.status, page.body)
		}
		contains(t, "the refund page", page.body, "A refund of $10.00", "Acme Games is refunding $10.00 of your Bitcoin payment",
			"0.00016666 BTC", `name="address"`, "This link works until 8 November 2026", "Test mode")
		if got := page.header.Get("Referrer-Policy"); got != "no-referrer" {
			t.Errorf("Referrer-Policy = %q; want no-referrer (the address holds the link)", got)
		}
		if csp := page.header.Get("Content-Security-Policy"); !strings.Contains(csp, "form-action 'self';") {
			t.Errorf("Content-Security-Policy = %q; want forms posted to the page only", csp)
		}

		for _, tt := range []struct{ address, want string }{
			{"", "Enter the address"},
			{mainnetBTC, "another network"},
			{buyerBTC[:len(buyerBTC)-1] + "y", "checksum"},
		} {
			r := e.postRefund(token, url.Values{"address": {tt.address}})
			if r.status != http.StatusBadRequest || !strings.Contains(r.body, tt.want) || !strings.Contains(r.body, `value="`+tt.address+`"`) || !strings.Contains(r.body, `aria-invalid="true"`) {
				t.Errorf("address %q: %d, want 400 saying %q beside the field, as typed:\n%s", tt.address, r.status, tt.want, r.body)
			}
		}
		r := e.postRefund(token, url.Values{"address": {buyerBTC}})
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "/refund/"+token {
			t.Fatalf("the address = %d %s; want 303 to the page", r.status, r.header.Get("Location"))
		}
		page = e.get("/refund/" + token)
		contains(t, "awaiting the payout", page.body, "Acme Games will send <strong data-amount-coin>0.00016666 BTC</strong>", buyerBTC)
		lacks(t, "awaiting the payout", page.body, "<form")

		// A second tab's form, or a replay: the link has been used.
		r = e.postRefund(token, url.Values{"address": {"tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7"}, csrfField: {e.refundCookie()}})
		if r.status != http.StatusConflict || !strings.Contains(r.body, "This link has been used") || !strings.Contains(r.body, buyerBTC) {
			t.Errorf("another address = %d %s; want 409, the link used, the first address kept", r.status, r.body)
		}

		scope := checkout.Scope{MerchantID: e.store.ID, Mode: checkout.ModeTest}
		paid, err := e.svc.SimulateRefundPayout(context.Background(), scope, ref.ID)
		if err != nil {
			t.Fatal(err)
		}
		contains(t, "confirming", e.get("/refund/"+token).body, "is on its way to", paid.Crypto.TxHash)
		e.clk.Advance(time.Hour)
		if _, err := e.svc.ProcessAllDuePayments(context.Background()); err != nil {
			t.Fatal(err)
		}
		contains(t, "succeeded", e.get("/refund/"+token).body, "Refund sent", "0.00016666 BTC</strong> ($10.00) was sent to", paid.Crypto.TxHash)
	})
}

// At the current rate the coins are set when the address is given; a link
// past its time shows so and takes nothing, and once the payments job has
// canceled the refund, the page says it was canceled.
func TestRefundPageCurrentRateAndExpiry(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		ref := e.cryptoRefund(3999, checkout.RateCurrent)
		page := e.get("/refund/" + ref.LinkToken)
		contains(t, "at the current rate", page.body, "The amount in BTC is set at the rate when you give it")
		lacks(t, "at the current rate", page.body, "data-amount-coin")

		e.clk.Advance(checkout.RefundLinkTTL)
		page = e.get("/refund/" + ref.LinkToken)
		contains(t, "expired", page.body, "No refund here", "This link has expired")
		lacks(t, "expired", page.body, "<form")
		r := e.postRefund(ref.LinkToken, url.Values{"address": {buyerBTC}, csrfField: {e.refundCookie()}})
		if r.status != http.StatusConflict || !strings.Contains(r.body, "This link has expired") {
			t.Errorf("an address after the link expired = %d %s; want 409", r.status, r.body)
		}
		if _, err := e.svc.ProcessAllDuePayments(context.Background()); err != nil {
			t.Fatal(err)
		}
		contains(t, "canceled", e.get("/refund/"+ref.LinkToken).body, "This refund was canceled, and nothing was sent")
	})
}

// The refund page's form refuses what another site sends, and what comes
// without the page's token; a link of no refund, or no link at all, is the
// refund page's 404.
func TestRefundPageRefusals(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		ref := e.cryptoRefund(1000, checkout.RateOfPayment)
		for _, tt := range []struct {
			name    string
			form    url.Values
			headers []string
		}{
			{"no token", url.Values{"address": {buyerBTC}, csrfField: {" "}}, nil},
			{"wrong token", url.Values{"address": {buyerBTC}, csrfField: {strings.Repeat("x", 43)}}, nil},
			{"cross-site", url.Values{"address": {buyerBTC}}, []string{"Sec-Fetch-Site", "cross-site"}},
			{"other origin", url.Values{"address": {buyerBTC}}, []string{"Origin", "https://evil.example"}},
		} {
			if r := e.postRefund(ref.LinkToken, tt.form, tt.headers...); r.status != http.StatusForbidden {
				t.Errorf("%s: POST = %d; want 403", tt.name, r.status)
			}
		}
		big := url.Values{"address": {strings.Repeat("a", maxFormBytes)}}
		if r := e.postRefund(ref.LinkToken, big); r.status != http.StatusBadRequest {
			t.Errorf("an oversize form = %d; want 400", r.status)
		}
		got, err := e.svc.Store().RefundGet(context.Background(), ref.ID)
		if err != nil || got.Crypto.Address != "" {
			t.Errorf("after the refusals the refund = %+v, %v; want no address", got.Crypto, err)
		}
		for _, path := range []string{"/refund/" + strings.Repeat("0", 64), "/refund/" + ref.LinkToken[:63], "/refund/nope", "/refund/" + ref.LinkToken + "/x"} {
			if r := e.get(path); r.status != http.StatusNotFound || !strings.Contains(r.body, "Refund not found") {
				t.Errorf("GET %s = %d; want the refund page's 404", path, r.status)
			}
		}
		if r := e.postRefund(strings.Repeat("0", 64), url.Values{"address": {buyerBTC}, csrfField: {e.refundCookie()}}); r.status != http.StatusNotFound {
			t.Errorf("POST to a link of no refund = %d; want 404", r.status)
		}
	})
}

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
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// Test-network addresses a buyer may give (test mode's simulated network
// takes the coins' test networks').
const (
	buyerBTC = "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx"
	buyerLTC = "tltc1q6rz28mcfaxtmd6v789l9rrlrusdprr9pesrjxk"
)

// paidByCrypto pays a new session in coin on test mode's simulated
// network, waits out its confirmations and returns its payment.
func (e *refundEnv) paidByCrypto(coin string) *checkout.Payment {
	e.t.Helper()
	ctx := context.Background()
	id := e.session()
	if _, err := e.svc.CryptoQuote(ctx, id, coin); err != nil {
		e.t.Fatalf("CryptoQuote(%s) = %v", coin, err)
	}
	if _, err := e.svc.SimulateCryptoPayment(ctx, id, coin); err != nil {
		e.t.Fatal(err)
	}
	e.clock.Advance(time.Hour)
	e.processDue()
	s, err := e.db.SessionGet(ctx, id)
	if err != nil || s.PaymentID == nil {
		e.t.Fatalf("the session paid in %s = %+v, %v", coin, s, err)
	}
	p := e.reload(&checkout.Payment{ID: *s.PaymentID})
	if p.Status != checkout.PaymentSucceeded || p.Crypto == nil {
		e.t.Fatalf("the %s payment = %s; want succeeded", coin, p.Status)
	}
	return p
}

// processDue runs the payments job once.
func (e *refundEnv) processDue() {
	e.t.Helper()
	if _, err := e.svc.ProcessAllDuePayments(context.Background()); err != nil {
		e.t.Fatalf("ProcessAllDuePayments = %v", err)
	}
}

// cryptoRefund refunds amount of p through the form, its confirmation and
// Confirm, at rate ("" sends none), and returns the refund.
func (e *refundEnv) cryptoRefund(p *checkout.Payment, amount, rate string) *checkout.Refund {
	e.t.Helper()
	q := url.Values{"amount": {amount}, "reason": {""}}
	if rate != "" {
		q.Set("rate", rate)
	}
	pg := e.get(e.path(p)+"/refund?"+q.Encode(), e.ann)
	if pg.status != http.StatusOK {
		e.t.Fatalf("review a crypto refund of %s = %d: %s", amount, pg.status, pg.body)
	}
	form := url.Values{}
	for _, m := range hiddenRE.FindAllStringSubmatch(pg.body, -1) {
		form.Set(m[1], html.UnescapeString(m[2]))
	}
	_, id := e.outcome(p, e.confirm(p, form))
	r, err := e.svc.RefundIn(context.Background(), checkout.Scope{MerchantID: e.m.ID, Mode: checkout.ModeTest}, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// refundAction posts a crypto refund's button (cancel, simulate-payout) in
// the test mode of ann's store.
func (e *refundEnv) refundAction(r *checkout.Refund, action string) *page {
	e.t.Helper()
	return e.post("/dashboard/stores/"+e.m.ID+"/test/refunds/"+r.ID+"/"+action, url.Values{"form_token": {e.get("/dashboard/", e.ann).formToken(e.t)}}, e.ann)
}

// done follows a crypto refund's button to its payment's page, which
// tells what became of it.
func (e *refundEnv) done(p *checkout.Payment, r *checkout.Refund, res *page) *page {
	e.t.Helper()
	want := e.path(p) + "?refund=" + r.ID + "#refunds"
	if res.status != http.StatusSeeOther || res.header.Get("Location") != want {
		e.t.Fatalf("the button = %d, Location %q; want 303 to %s: %s", res.status, res.header.Get("Location"), want, res.body)
	}
	return e.get(strings.TrimSuffix(want, "#refunds"), e.ann)
}

// refund returns a refund as it is stored now.
func (e *refundEnv) refund(r *checkout.Refund) *checkout.Refund {
	e.t.Helper()
	got, err := e.db.RefundGet(context.Background(), r.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	return got
}

func wantNotIn(t *testing.T, what, body string, unwanted ...string) {
	t.Helper()
	for _, u := range unwanted {
		if strings.Contains(body, u) {
			t.Errorf("%s has %q", what, u)
		}
	}
}

// A test-mode crypto refund through the dashboard, end to end: the form
// asks for the rate (the payment's by default), the confirmation says what
// happens and carries the rate chosen; the payment's page then shows the
// buyer's link until the buyer gives an address, then the exact coins to
// send there, Simulate payout (test mode) pays them, the page shows the
// transaction confirming, and once the payments job sees its
// confirmations the refund succeeded, with what was sent where.
func TestRefundCryptoTestMode(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newRefundEnv(t, db)
		p := e.paidByCrypto("BTC")
		pg := e.get(e.path(p), e.ann)
		wantIn(t, "a test-mode crypto payment's page", pg.body, `id="refund-amount"`, `value="30.00"`, "<dt>Left to refund</dt><dd>$30.00</dd>",
			"<legend>Rate</legend>",
			`<input type="radio" name="rate" value="payment" checked> At the payment&#39;s rate (the buyer gets the coins they paid, in proportion)</label>`,
			`<input type="radio" name="rate" value="current"> At the rate when the buyer gives their address</label>`,
			"The buyer is refunded in BTC: the refund gives you a link where they give their address")
		wantNotIn(t, "a test-mode crypto payment's page", pg.body, "checkoutd cannot send coins", `id="refund-block"`)

		// A rate that is not one is refused beside the rates.
		pg = e.get(e.path(p)+"/refund?amount=12.34&reason=&rate=yesterday", e.ann)
		if pg.status != http.StatusBadRequest {
			t.Errorf("review at the rate %q = %d; want 400", "yesterday", pg.status)
		}
		wantIn(t, "review at an unknown rate", pg.body, `<p class="field-error" id="refund-rate-error">Choose one of the rates.</p>`, `aria-invalid="true"`)

		// The confirmation, at the rate when the buyer gives an address;
		// Back keeps it.
		pg = e.get(e.path(p)+"/refund?amount=12.34&reason=&rate=current", e.ann)
		if pg.status != http.StatusOK {
			t.Fatalf("review = %d: %s", pg.status, pg.body)
		}
		wantIn(t, "the crypto refund's confirmation", pg.body,
			`Refund <strong>$12.34</strong> of payment <code class="wrap">`+p.ID+`</code> ($30.00) to the buyer in BTC?</p>`,
			"Nothing is sent now. The refund gives you a link for the buyer, where they give the BTC address to refund within 7 days",
			"<dt>Rate</dt><dd>At the rate when the buyer gives their address</dd>", `<input type="hidden" name="rate" value="current">`)
		wantNotIn(t, "the crypto refund's confirmation", pg.body, "This cannot be undone.")
		if back := regexp.MustCompile(`<a href="([^"]+)">Back</a>`).FindStringSubmatch(pg.body); back == nil || !strings.Contains(html.UnescapeString(back[1]), "&rate=current&") {
			t.Errorf("the confirmation's Back %q does not keep the rate", back)
		}
		if back := e.get(e.path(p)+"?amount=12.34&reason=&rate=current", e.ann); !strings.Contains(back.body, `value="current" checked`) {
			t.Error("the page Back leads to does not have the rate checked")
		}

		r := e.cryptoRefund(p, "12.34", "current")
		if r.Status != checkout.RefundPending || r.Crypto == nil || r.Crypto.Rate != checkout.RateCurrent || r.Crypto.Stage() != checkout.StageAwaitingAddress {
			t.Fatalf("the refund = %+v, %+v; want pending at the current rate, awaiting the address", r, r.Crypto)
		}
		acct, err := db.AccountGetByEmail(context.Background(), "ann@example.com")
		if err != nil || r.RequestedBy.ID != acct.ID {
			t.Errorf("the refund was requested by %+v; want ann", r.RequestedBy)
		}
		link := "http://dash.example.test/refund/" + r.LinkToken
		expires := time.UnixMilli(r.Crypto.LinkExpiresAt).UTC().Format("2006-01-02 15:04:05 UTC")
		cancel := `<form method="post" action="` + "/dashboard/stores/" + e.m.ID + "/test/refunds/" + r.ID + `/cancel">`
		pg = e.get(e.path(p)+"?refund="+r.ID, e.ann)
		wantIn(t, "the page awaiting the buyer's address", pg.body,
			`<p class="notice" role="status">The refund of $12.34 waits for the buyer's address: send them its link, below.</p>`,
			`<span class="badge warn">pending</span><br><span class="hint">Waiting for the buyer&#39;s address</span>`,
			`<tr class="refund-crypto" id="refund-`+r.ID+`-crypto">`,
			"there they give the BTC address to refund, until <time", expires+"</time>. Unanswered by then, the refund is canceled.",
			`<input type="text" id="refund-link-`+r.ID+`" value="`+link+`" readonly spellcheck="false">`, `data-copy="refund-link-`+r.ID+`"`,
			"Rate: At the rate when the buyer gives their address.", cancel, "Cancel refund",
			"Cancel refund ends it at once, with nothing sent: the link takes no address any more",
			"<dt>Being refunded</dt><dd>$12.34</dd>", "<dt>Left to refund</dt><dd>$17.66</dd>")
		wantNotIn(t, "the page awaiting the buyer's address", pg.body, "Simulate payout")

		// The buyer gives an address through the link.
		if _, err := e.svc.GiveRefundAddress(context.Background(), r.LinkToken, buyerBTC); err != nil {
			t.Fatal(err)
		}
		r = e.refund(r)
		btc, _ := checkout.CoinByCode("BTC")
		coins := checkout.FormatCoin(r.Crypto.AmountBase, btc)
		if r.Crypto.AmountBase == "" || coins == "0" {
			t.Fatalf("the refund after the address = %+v", r.Crypto)
		}
		simulate := `<form method="post" action="` + "/dashboard/stores/" + e.m.ID + "/test/refunds/" + r.ID + `/simulate-payout">`
		pg = e.get(e.path(p), e.ann)
		wantIn(t, "the page awaiting the payout", pg.body,
			`<span class="hint">Waiting for your payout</span>`,
			`<p class="payout">Send <strong>`+coins+` BTC</strong> to <code class="wrap">`+buyerBTC+`</code> from your wallet.</p>`,
			`<code id="refund-amount-`+r.ID+`">`+coins+`</code>`, `<code id="refund-address-`+r.ID+`">`+buyerBTC+`</code>`,
			"Test mode: no wallet pays here; simulate the payout below.",
			simulate, "Simulate payout (test mode)", cancel, "do not pay it afterwards")
		wantNotIn(t, "the page awaiting the payout", pg.body, `id="refund-link-`)

		// Simulate payout, twice (a double click): the payout confirms.
		pg = e.done(p, r, e.refundAction(r, "simulate-payout"))
		r = e.refund(r)
		if r.Crypto.Stage() != checkout.StageConfirming || r.Crypto.TxHash == "" {
			t.Fatalf("after Simulate payout the refund is %+v", r.Crypto)
		}
		wantIn(t, "the page after Simulate payout", pg.body,
			`The payout of the refund of $12.34 was simulated: the refund succeeds once it has 2 confirmations.`,
			`<span class="hint">Payout seen, confirming</span>`,
			"Payout of "+coins+" BTC to", "transaction <code class=\"wrap\">"+r.Crypto.TxHash+"</code>")
		wantNotIn(t, "the page after Simulate payout", pg.body, simulate, cancel)
		e.done(p, r, e.refundAction(r, "simulate-payout"))
		if again := e.refund(r); again.Crypto.TxHash != r.Crypto.TxHash || again.Crypto.SeenAt != r.Crypto.SeenAt {
			t.Errorf("a second Simulate payout paid again: %+v", again.Crypto)
		}

		// Its payout seen, the refund is no longer canceled.
		pg = e.refundAction(r, "cancel")
		if pg.status != http.StatusConflict {
			t.Errorf("Cancel refund once paid out = %d; want 409", pg.status)
		}
		wantIn(t, "Cancel refund once paid out", pg.body,
			`<p class="error" role="alert">Nothing was canceled: the payout of refund `+r.ID+` was seen already (transaction `+r.Crypto.TxHash+`)`)

		// The payments job, past the coin's confirmations.
		e.clock.Advance(20 * time.Minute)
		e.processDue()
		if got := e.refund(r); got.Status != checkout.RefundSucceeded {
			t.Fatalf("after the confirmations the refund is %s", got.Status)
		}
		pg = e.get(e.path(p)+"?refund="+r.ID, e.ann)
		wantIn(t, "the page after the refund succeeded", pg.body,
			`<p class="notice" role="status">Refunded $12.34: `+coins+` BTC sent to the buyer's address.</p>`,
			`<span class="badge good">succeeded</span>`,
			"Sent "+coins+` BTC to <code class="wrap">`+buyerBTC+`</code>, transaction <code class="wrap">`+r.Crypto.TxHash+`</code>.`,
			"<dt>Refunded</dt><dd>$12.34</dd>", "<dt>Left to refund</dt><dd>$17.66</dd>", ">partially_refunded<")
		wantNotIn(t, "the page after the refund succeeded", pg.body, "Cancel refund", "Simulate payout", "Being refunded")
	})
}

// A crypto refund is canceled while it awaits the buyer's address (twice:
// the second finds it canceled) or the payout; one whose link expired is
// canceled by the payments job. Each says nothing was sent, and its
// amount is free to refund again. A payout is simulated only while it is
// awaited.
func TestRefundCryptoCancel(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newRefundEnv(t, db)
		p := e.paidByCrypto("LTC")

		// The form's default: the payment's rate.
		r := e.cryptoRefund(p, "30.00", "payment")
		if r.Crypto.Rate != checkout.RateOfPayment || r.Crypto.Coin != "LTC" {
			t.Errorf("the refund = %+v; want LTC at the payment's rate", r.Crypto)
		}
		pg := e.refundAction(r, "simulate-payout")
		if pg.status != http.StatusConflict {
			t.Errorf("Simulate payout awaiting the address = %d; want 409", pg.status)
		}
		wantIn(t, "Simulate payout awaiting the address", pg.body,
			`<p class="error" role="alert">No payout was simulated: refund `+r.ID+` is waiting for the buyer&#39;s address: there is nothing to pay yet.</p>`)
		pg = e.done(p, r, e.refundAction(r, "cancel"))
		wantIn(t, "the page after Cancel refund", pg.body,
			`<p class="warning" role="status">The refund of $30.00 was canceled. Nothing was sent, and its amount can be refunded again.</p>`,
			">canceled</span>", "<p>Canceled. Nothing was sent.</p>", "<dt>Left to refund</dt><dd>$30.00</dd>", `id="refund-amount"`)
		wantNotIn(t, "the page after Cancel refund", pg.body, `id="refund-link-`, "Cancel refund</button>")
		e.done(p, r, e.refundAction(r, "cancel")) // canceled already: the same page
		if got := e.reload(p); e.refund(r).Status != checkout.RefundCanceled || got.AmountRefunding != 0 || got.Refundable() != 3000 {
			t.Errorf("after Cancel refund: refund %s, payment holds %d", e.refund(r).Status, got.AmountRefunding)
		}
		pg = e.refundAction(r, "simulate-payout")
		if pg.status != http.StatusConflict || !strings.Contains(pg.body, "No payout was simulated: refund "+r.ID+" was canceled already.") {
			t.Errorf("Simulate payout of a canceled refund = %d: %s", pg.status, pg.body)
		}

		// Canceled while the payout is awaited.
		r = e.cryptoRefund(p, "10.00", "")
		if _, err := e.svc.GiveRefundAddress(context.Background(), r.LinkToken, buyerLTC); err != nil {
			t.Fatal(err)
		}
		pg = e.done(p, r, e.refundAction(r, "cancel"))
		wantIn(t, "the page after canceling a refund awaiting its payout", pg.body,
			"The refund of $10.00 was canceled.", `<p>Canceled. Nothing was sent to <code class="wrap">`+buyerLTC+`</code>.</p>`)

		// A link unanswered for its 7 days: the payments job cancels it.
		r = e.cryptoRefund(p, "5.00", "")
		e.clock.Advance(checkout.RefundLinkTTL)
		e.processDue()
		e.ann = e.signIn("ann@example.com") // a week later
		pg = e.get(e.path(p)+"?refund="+r.ID, e.ann)
		wantIn(t, "the page after the link expired", pg.body,
			"The refund of $5.00 was canceled: its link expired without an address. Nothing was sent",
			"<p>Canceled: its link expired without an address. Nothing was sent.</p>")
		if got := e.reload(p); got.AmountRefunding != 0 || got.AmountRefunded != 0 {
			t.Errorf("after the cancels the payment holds %d, refunded %d; want 0, 0", got.AmountRefunding, got.AmountRefunded)
		}
	})
}

// A test-mode crypto payment to refund (underpaid, never made whole) is
// refunded with the form: the warning and the payments list say how, and
// at the payment's rate all of it is what arrived.
func TestRefundCryptoToRefund(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newRefundEnv(t, db)
		p := e.livePayment(e.m, e.clock.Now(), func(p *checkout.Payment) {
			p.Mode = checkout.ModeTest
			p.Crypto.ReceivedBase = "12000000"
			fail(checkout.FailUnderpaid)(p)
		})
		list := e.get("/dashboard/stores/"+e.m.ID+"/test/payments", e.ann)
		wantIn(t, "the payments list", list.body, "1 payment is to refund.",
			"Refund each from its page. checkoutd holds no private key, so crypto goes back from your wallet: its refund gives you a link where the buyer gives their address, then says what to send where.")
		pg := e.get(e.path(p), e.ann)
		wantIn(t, "a test-mode crypto payment to refund", pg.body,
			"return the 0.12 LTC received to the buyer with the refund form below: the buyer gives their address through a link, and you send the coins from your wallet.",
			`id="refund-amount"`, `value="15.00"`, "<legend>Rate</legend>")
		r := e.cryptoRefund(p, "15.00", "payment")
		if _, err := e.svc.GiveRefundAddress(context.Background(), r.LinkToken, buyerLTC); err != nil {
			t.Fatal(err)
		}
		pg = e.get(e.path(p), e.ann)
		wantIn(t, "the refund awaiting its payout", pg.body, `<p class="payout">Send <strong>0.12 LTC</strong> to <code class="wrap">`+buyerLTC+`</code> from your wallet.</p>`)
	})
}

// A card payment's form has no rate, and a rate in its query is not read;
// its refund is not canceled.
func TestRefundCryptoRateCardOnly(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newRefundEnv(t, db)
		p := e.paidByCard("4242424242424242")
		wantNotIn(t, "a card payment's page", e.get(e.path(p), e.ann).body, `name="rate"`, "<legend>Rate</legend>")
		pg := e.get(e.path(p)+"/refund?amount=1.00&reason=&rate=current", e.ann)
		if pg.status != http.StatusOK {
			t.Fatalf("review of a card refund with a rate = %d: %s", pg.status, pg.body)
		}
		wantNotIn(t, "a card refund's confirmation", pg.body, `name="rate"`, "<dt>Rate</dt>", "rate=current")
		_, id := e.outcome(p, e.confirm(p, e.confirmation(p, "1.00", "")))
		r := &checkout.Refund{ID: id}
		pg = e.refundAction(r, "cancel")
		if pg.status != http.StatusConflict || !strings.Contains(pg.body, "Nothing was canceled: refund "+id+" is not a crypto refund.") {
			t.Errorf("Cancel refund of a card refund = %d: %s", pg.status, pg.body)
		}
	})
}

// A crypto refund of another store or of the other mode is the 404 page
// at Cancel refund and Simulate payout, and nothing changes.
func TestRefundCryptoOtherStoreOrMode(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newRefundEnv(t, db)
		p := e.paidByCrypto("BTC")
		r := e.cryptoRefund(p, "30.00", "")
		if _, err := e.svc.GiveRefundAddress(context.Background(), r.LinkToken, buyerBTC); err != nil {
			t.Fatal(err)
		}
		bobStore, bob := e.signedInStore("bob@example.com")
		bobToken := url.Values{"form_token": {e.get("/dashboard/", bob).formToken(t)}}
		annToken := url.Values{"form_token": {e.get("/dashboard/", e.ann).formToken(t)}}
		for _, tt := range []struct {
			who  *http.Cookie
			base string
			form url.Values
		}{
			{bob, "/dashboard/stores/" + e.m.ID + "/test/refunds/", bobToken},      // ann's store, as bob
			{bob, "/dashboard/stores/" + bobStore.ID + "/test/refunds/", bobToken}, // bob's store
			{e.ann, "/dashboard/stores/" + e.m.ID + "/live/refunds/", annToken},    // the other mode
			{e.ann, "/dashboard/stores/" + e.m.ID + "/test/refunds/", annToken},    // no such refund
		} {
			id := r.ID
			if tt.who == e.ann && strings.Contains(tt.base, "/test/") {
				id = "re_nosuchrefund"
			}
			for _, action := range []string{"cancel", "simulate-payout"} {
				if pg := e.post(tt.base+id+"/"+action, tt.form, tt.who); pg.status != http.StatusNotFound || strings.Contains(pg.body, p.ID) {
					t.Errorf("POST %s%s/%s = %d; want the 404 page", tt.base, id, action, pg.status)
				}
			}
		}
		if got := e.refund(r); got.Status != checkout.RefundPending || got.Crypto.TxHash != "" {
			t.Errorf("the refund after posts from elsewhere = %s, %+v; want pending, awaiting its payout", got.Status, got.Crypto)
		}
	})
}

// Cancel refund and Simulate payout posted without the form token, with
// another session's, from another site, or signed out, are refused and
// change nothing.
func TestRefundCryptoCrossSiteAndFormToken(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newRefundEnv(t, db)
		p := e.paidByCrypto("BTC")
		r := e.cryptoRefund(p, "30.00", "")
		if _, err := e.svc.GiveRefundAddress(context.Background(), r.LinkToken, buyerBTC); err != nil {
			t.Fatal(err)
		}
		_, bob := e.signedInStore("bob@example.com")
		token := e.get("/dashboard/", e.ann).formToken(t)
		for _, action := range []string{"cancel", "simulate-payout"} {
			path := "/dashboard/stores/" + e.m.ID + "/test/refunds/" + r.ID + "/" + action
			for _, tt := range []struct {
				what   string
				form   url.Values
				header http.Header
			}{
				{"no form token", url.Values{}, http.Header{"Sec-Fetch-Site": {"same-origin"}}},
				{"another session's token", url.Values{"form_token": {e.get("/dashboard/", bob).formToken(t)}}, http.Header{"Sec-Fetch-Site": {"same-origin"}}},
				{"cross-site", url.Values{"form_token": {token}}, http.Header{"Sec-Fetch-Site": {"cross-site"}}},
				{"another site's Origin", url.Values{"form_token": {token}}, http.Header{"Origin": {"https://evil.example"}}},
			} {
				if pg := e.do(http.MethodPost, path, tt.form, tt.header, e.ann); pg.status != http.StatusForbidden {
					t.Errorf("%s with %s = %d; want 403", action, tt.what, pg.status)
				}
			}
			wantRedirectToSignIn(t, action+" signed out", e.post(path, url.Values{"form_token": {token}}))
		}
		if got := e.refund(r); got.Status != checkout.RefundPending || got.Crypto.TxHash != "" {
			t.Errorf("the refund after refused posts = %s, %+v; want pending, awaiting its payout", got.Status, got.Crypto)
		}
		// The same post, sent properly, simulates the payout.
		e.done(p, r, e.refundAction(r, "simulate-payout"))
	})
}

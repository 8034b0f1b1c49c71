package dashboard_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/app"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// refundEnv is the application with the test-mode simulators, a store of
// ann's with a test key, and ann signed in.
type refundEnv struct {
	*env
	m      *checkout.Merchant
	secret string
	ann    *http.Cookie
}

func newRefundEnv(t *testing.T, db *store.DB) *refundEnv {
	t.Helper()
	e := newEnvWith(t, db, "http://dash.example.test", func(c *app.Config) { c.Processors = pay.Registry{Test: pay.Simulators()} })
	m, secret, ann := e.storeWithKey("ann@example.com")
	return &refundEnv{env: e, m: m, secret: secret, ann: ann}
}

// session creates a test session of $30.00 through the API and returns its
// id.
func (e *refundEnv) session() string {
	e.t.Helper()
	res := postCheckout(e.t, e.srv.URL, e.m.ID, e.secret, "")
	if res.status != http.StatusCreated {
		e.t.Fatalf("create a checkout = %d: %s", res.status, res.body)
	}
	id := res.body[strings.Index(res.body, `"id":"`)+6:]
	return id[:strings.Index(id, `"`)]
}

// paidByCard pays a new session with the test card number and returns its
// payment.
func (e *refundEnv) paidByCard(number string) *checkout.Payment {
	e.t.Helper()
	out, err := e.svc.PayByCard(context.Background(), e.session(), pay.CardForm{Number: number, Expiry: "12/30", CVC: "123", Name: "Jo Buyer"})
	if err != nil || out.Payment.Status != checkout.PaymentSucceeded {
		e.t.Fatalf("PayByCard(%s) = %+v, %v", number, out, err)
	}
	return out.Payment
}

// path is the path of a payment's page in test mode.
func (e *refundEnv) path(p *checkout.Payment) string {
	return "/dashboard/stores/" + e.m.ID + "/test/payments/" + p.ID
}

// review sends the refund form of a payment's page: its confirmation, or
// the page refusing it.
func (e *refundEnv) review(p *checkout.Payment, amount, reason string, c *http.Cookie) *page {
	e.t.Helper()
	return e.get(e.path(p)+"/refund?"+url.Values{"amount": {amount}, "reason": {reason}}.Encode(), c)
}

var hiddenRE = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)

// confirmation reviews a refund and returns the form its Confirm posts.
func (e *refundEnv) confirmation(p *checkout.Payment, amount, reason string) url.Values {
	e.t.Helper()
	pg := e.review(p, amount, reason, e.ann)
	if pg.status != http.StatusOK {
		e.t.Fatalf("review a refund of %s = %d: %s", amount, pg.status, pg.body)
	}
	form := url.Values{}
	for _, m := range hiddenRE.FindAllStringSubmatch(pg.body, -1) {
		form.Set(m[1], html.UnescapeString(m[2]))
	}
	if form.Get("nonce") == "" || form.Get("form_token") == "" {
		e.t.Fatalf("the confirmation carries %v; want a nonce and the form token", form)
	}
	return form
}

// confirm posts a confirmation's form.
func (e *refundEnv) confirm(p *checkout.Payment, form url.Values) *page {
	e.t.Helper()
	return e.post(e.path(p)+"/refund", form, e.ann)
}

// refunds returns a payment's refunds, oldest first.
func (e *refundEnv) refunds(p *checkout.Payment) []*checkout.Refund {
	e.t.Helper()
	rs, err := e.svc.Refunds(context.Background(), p.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	return rs
}

// reload returns a payment as it is stored now.
func (e *refundEnv) reload(p *checkout.Payment) *checkout.Payment {
	e.t.Helper()
	got, err := e.db.PaymentGet(context.Background(), p.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	return got
}

// outcome follows a confirmation's redirect to the payment's page.
func (e *refundEnv) outcome(p *checkout.Payment, res *page) (*page, string) {
	e.t.Helper()
	loc := res.header.Get("Location")
	prefix := e.path(p) + "?refund="
	if res.status != http.StatusSeeOther || !strings.HasPrefix(loc, prefix) || !strings.HasSuffix(loc, "#refunds") {
		e.t.Fatalf("confirm = %d, Location %q; want 303 to %s...#refunds: %s", res.status, loc, prefix, res.body)
	}
	id := strings.TrimSuffix(strings.TrimPrefix(loc, prefix), "#refunds")
	return e.get(strings.TrimSuffix(loc, "#refunds"), e.ann), id
}

func wantIn(t *testing.T, what, body string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(body, w) {
			t.Errorf("%s has no %q", what, w)
		}
	}
}

// The payment's page offers a refund of what is left; the form's answer is
// a confirmation that refunds nothing, with a way back that keeps the
// values; Confirm refunds as the signed-in account and the page tells the
// outcome, with the refunds, what is refunded and what is left. An amount
// from the smallest unit to all that is left is taken, a cent more is not.
func TestRefundForm(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newRefundEnv(t, db)
		p := e.paidByCard("4242424242424242")
		pg := e.get(e.path(p), e.ann)
		if pg.status != http.StatusOK || pg.header.Get("Content-Security-Policy") != wantCSP {
			t.Fatalf("the payment's page = %d, CSP %q", pg.status, pg.header.Get("Content-Security-Policy"))
		}
		wantIn(t, "the payment's page", pg.body,
			"<dt>Refunded</dt><dd>$0.00</dd>", "<dt>Left to refund</dt><dd>$30.00</dd>", "No refund yet.",
			`<form class="refund" method="get" action="`+e.path(p)+`/refund" novalidate>`,
			`<label for="refund-amount">Amount</label>`, `name="amount"`, `value="30.00"`, `inputmode="decimal"`,
			`<label for="refund-reason">Reason <span class="optional">(optional)</span></label>`,
			`<option value="" selected>None</option>`, `<option value="requested_by_customer">Requested by the customer</option>`,
			`<option value="duplicate">Duplicate</option>`, `<option value="fraudulent">Fraudulent</option>`,
			"up to the $30.00 left to refund", "Review refund")
		if strings.Contains(pg.body, "makes no refunds") || inlineScript.MatchString(pg.body) || strings.Contains(pg.body, "style=") {
			t.Error("the payment's page says checkoutd makes no refunds, or has inline script or style")
		}

		// The confirmation: what goes where, and nothing refunded yet.
		pg = e.review(p, "12.34", "requested_by_customer", e.ann)
		if pg.status != http.StatusOK {
			t.Fatalf("review = %d: %s", pg.status, pg.body)
		}
		wantIn(t, "the confirmation", pg.body, "<h1>Refund $12.34?</h1>",
			`Refund <strong>$12.34</strong> of payment <code class="wrap">`+p.ID+`</code> ($30.00) to the card ending 4242? This cannot be undone.`,
			"<dt>Reason</dt><dd>Requested by the customer</dd>", "<dt>Left to refund after</dt><dd>$17.66</dd>",
			`<form method="post" action="`+e.path(p)+`/refund">`, `name="amount" value="12.34"`, `name="reason" value="requested_by_customer"`,
			"Confirm refund")
		if rs := e.refunds(p); len(rs) != 0 {
			t.Fatalf("the confirmation made refunds %v", rs)
		}
		back := regexp.MustCompile(`<a href="([^"]+)">Back</a>`).FindStringSubmatch(pg.body)
		if back == nil {
			t.Fatal("the confirmation has no way back")
		}
		bp := e.get(strings.Split(html.UnescapeString(back[1]), "#")[0], e.ann)
		wantIn(t, "the page Back leads to", bp.body, `value="12.34"`, `<option value="requested_by_customer" selected>`)
		if a, b := e.confirmation(p, "12.34", "requested_by_customer").Get("nonce"), e.confirmation(p, "12.34", "requested_by_customer").Get("nonce"); a == b {
			t.Error("two confirmations carry one nonce")
		}

		// Confirm: the refund, as ann.
		pg, id := e.outcome(p, e.confirm(p, e.confirmation(p, "12.34", "requested_by_customer")))
		rs := e.refunds(p)
		acct, err := db.AccountGetByEmail(context.Background(), "ann@example.com")
		if err != nil {
			t.Fatal(err)
		}
		want := checkout.Actor{Kind: checkout.ActorAccount, ID: acct.ID, Name: "ann@example.com"}
		if len(rs) != 1 || rs[0].ID != id || rs[0].Amount != 1234 || rs[0].Reason != checkout.ReasonRequestedByCustomer ||
			rs[0].Status != checkout.RefundSucceeded || rs[0].RequestedBy != want {
			t.Fatalf("refunds = %+v; want %s of 1234, requested_by_customer, succeeded, by %+v", rs, id, want)
		}
		wantIn(t, "the page after the refund", pg.body, `<p class="notice" role="status">Refunded $12.34 to the card ending 4242.</p>`,
			`<tr id="refund-`+id+`">`, `<span class="badge good">succeeded</span>`, "Requested by the customer", "<td>ann@example.com</td>",
			"<dt>Refunded</dt><dd>$12.34</dd>", "<dt>Left to refund</dt><dd>$17.66</dd>", `value="17.66"`, ">partially_refunded<")

		// The bounds: the smallest unit, then a cent more than is left
		// (refused beside the amount, as typed, nothing refunded), then all
		// that is left.
		_, _ = e.outcome(p, e.confirm(p, e.confirmation(p, "0.01", "")))
		for _, amount := range []string{"17.66", "30"} {
			pg = e.review(p, amount, "duplicate", e.ann)
			if pg.status != http.StatusConflict {
				t.Errorf("review of %s with $17.65 left = %d; want 409", amount, pg.status)
			}
			wantIn(t, "review of "+amount, pg.body, `value="`+amount+`"`, `aria-invalid="true"`, `<option value="duplicate" selected>`,
				`<p class="field-error" id="refund-amount-error">That is more than the $17.65 left to refund.</p>`)
		}
		form := e.confirmation(p, "17.65", "")
		form.Set("amount", "17.66") // a confirmation edited, or made stale by another refund
		pg = e.confirm(p, form)
		if pg.status != http.StatusConflict || !strings.Contains(pg.body, "That is more than the $17.65 left to refund.") || !strings.Contains(pg.body, `value="17.66"`) {
			t.Errorf("confirm 17.66 with $17.65 left = %d: %s", pg.status, pg.body)
		}
		if got := e.reload(p); len(e.refunds(p)) != 2 || got.AmountRefunded != 1235 || got.AmountRefunding != 0 {
			t.Fatalf("after the refused refunds: %d refunds, refunded %d, held %d; want 2, 1235, 0", len(e.refunds(p)), got.AmountRefunded, got.AmountRefunding)
		}
		pg, _ = e.outcome(p, e.confirm(p, e.confirmation(p, "17.65", "")))
		if got := e.reload(p); got.Status != checkout.PaymentRefunded || got.AmountRefunded != 3000 {
			t.Errorf("after refunding what was left: %s, refunded %d; want refunded, 3000", got.Status, got.AmountRefunded)
		}
		wantIn(t, "the page refunded in full", pg.body, "<dt>Refunded</dt><dd>$30.00</dd>", "<dt>Left to refund</dt><dd>$0.00</dd>",
			`<p id="refund-block">Payment `+p.ID+` is refunded in full already.</p>`, ">refunded<")
		if strings.Contains(pg.body, `id="refund-amount"`) || strings.Count(pg.body, `<tr id="refund-`) != 3 {
			t.Errorf("the page refunded in full shows a form, or not its 3 refunds: %s", pg.body)
		}
	})
}

// What is typed and is not an amount comes back beside the field, kept as
// typed (escaped), before anything is confirmed; so does a reason that is
// not one.
func TestRefundFormRefusals(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newRefundEnv(t, db)
		p := e.paidByCard("4242424242424242")
		for _, tt := range []struct{ amount, want string }{
			{"", "Enter an amount in USD, such as 1234.56."},
			{"0", "Enter at least $0.01."},
			{"0.00", "Enter at least $0.01."},
			{"-1", "An amount cannot be negative."},
			{"1.234", "USD has 2 decimals: write at most 2 digits after the point, such as 1234.56."},
			{"abc", "Write the amount in digits, with a point before the decimals and no thousands separators, such as 1234.56."},
			{"1,000", "Write the amount in digits, with a point before the decimals and no thousands separators, such as 1234.56."},
			{`"><script>alert(1)</script>`, "Write the amount in digits"},
		} {
			pg := e.review(p, tt.amount, "", e.ann)
			if pg.status != http.StatusBadRequest {
				t.Errorf("review of %q = %d; want 400", tt.amount, pg.status)
			}
			wantIn(t, "review of "+tt.amount, pg.body, `aria-invalid="true"`, `id="refund-amount-error">`+html.EscapeString(tt.want),
				`value="`+html.EscapeString(tt.amount)+`"`)
			if strings.Contains(pg.body, "<script>alert") {
				t.Errorf("review of %q repeats it unescaped", tt.amount)
			}
		}
		pg := e.review(p, "1.00", "because", e.ann)
		if pg.status != http.StatusBadRequest || !strings.Contains(pg.body, `id="refund-reason-error">Choose one of the reasons, or none.`) {
			t.Errorf("review with the reason %q = %d: %s", "because", pg.status, pg.body)
		}
		// A confirmation without its nonce, or with one that is not one.
		for _, nonce := range []string{"", "abc", strings.Repeat("A", 44)} {
			form := e.confirmation(p, "1.00", "")
			form.Set("nonce", nonce)
			pg := e.confirm(p, form)
			if pg.status != http.StatusBadRequest || !strings.Contains(pg.body, "This confirmation could not be read.") || !strings.Contains(pg.body, `value="1.00"`) {
				t.Errorf("confirm with the nonce %q = %d: %s", nonce, pg.status, pg.body)
			}
		}
		if rs := e.refunds(p); len(rs) != 0 {
			t.Errorf("refusals made refunds %v", rs)
		}
	})
}

// The test card 4000 0000 0000 5126 is charged and its refunds fail: the
// page says so with the reason, the refund is listed failed, and the form
// is there to try again (or to refund another way).
func TestRefundFails(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newRefundEnv(t, db)
		p := e.paidByCard("4000000000005126")
		pg, id := e.outcome(p, e.confirm(p, e.confirmation(p, "30.00", "")))
		msg := html.EscapeString(checkout.RefundFailureMessage(checkout.RefundFailExpiredOrCanceledCard))
		wantIn(t, "the page after a failed refund", pg.body, `<p class="error" role="alert">The refund of $30.00 failed: `+msg+`</p>`,
			`<tr id="refund-`+id+`">`, `<span class="badge bad">failed</span><br><code>expired_or_canceled_card</code><br><span class="hint">`+msg,
			"<dt>Refunded</dt><dd>$0.00</dd>", "<dt>Left to refund</dt><dd>$30.00</dd>", `value="30.00"`, ">succeeded<")
		if got := e.reload(p); got.Status != checkout.PaymentSucceeded || got.AmountRefunded != 0 || got.AmountRefunding != 0 {
			t.Errorf("the payment after a failed refund = %s, refunded %d, held %d", got.Status, got.AmountRefunded, got.AmountRefunding)
		}
	})
}

// A skins payment is refunded whole: a part is refused beside the amount,
// at the review and at a confirmation edited to ask for it; the whole is
// refunded, its items going back.
func TestRefundSkins(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newRefundEnv(t, db)
		ctx := context.Background()
		sessionID := e.session()
		inv, err := e.svc.SkinsInventory(ctx, sessionID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.PayBySkins(ctx, sessionID, []string{inv[7].ID}); err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(checkout.SkinsTradeHold)
		if _, err := e.svc.ProcessAllDuePayments(ctx); err != nil {
			t.Fatal(err)
		}
		e.ann = e.signIn("ann@example.com") // a week later
		s, err := db.SessionGet(ctx, sessionID)
		if err != nil || s.PaymentID == nil {
			t.Fatalf("the skins session = %+v, %v; want it paid", s, err)
		}
		p := e.reload(&checkout.Payment{ID: *s.PaymentID})
		whole := checkout.AmountDecimal(p.Amount, p.Currency)
		wantMsg := "A skins payment is refunded whole, its items going back to the buyer: refund all " + checkout.FormatAmount(p.Amount, p.Currency) + "."
		pg := e.get(e.path(p), e.ann)
		wantIn(t, "the skins payment's page", pg.body, "A skins payment is refunded whole: its items go back to the buyer.", `value="`+whole+`"`)
		pg = e.review(p, "1.00", "", e.ann)
		if pg.status != http.StatusBadRequest || !strings.Contains(pg.body, `id="refund-amount-error">`+wantMsg) {
			t.Errorf("review of a part of a skins payment = %d: %s", pg.status, pg.body)
		}
		form := e.confirmation(p, whole, "")
		form.Set("amount", "1.00")
		if pg := e.confirm(p, form); pg.status != http.StatusBadRequest || !strings.Contains(pg.body, wantMsg) {
			t.Errorf("confirm a part of a skins payment = %d: %s", pg.status, pg.body)
		}
		if rs := e.refunds(p); len(rs) != 0 {
			t.Fatalf("a part of a skins payment made refunds %v", rs)
		}
		pg, _ = e.outcome(p, e.confirm(p, e.confirmation(p, whole, "")))
		wantIn(t, "the skins payment refunded", pg.body, "Refunded "+checkout.FormatAmount(p.Amount, p.Currency)+" by giving its items back to the buyer.")
		if got := e.reload(p); got.Status != checkout.PaymentRefunded {
			t.Errorf("the skins payment after its refund = %s; want refunded", got.Status)
		}
	})
}

// A disputed payment (the test card 4000 0000 0000 0259, once the payments
// job opens its dispute) says what disputed means and what the dispute
// holds of its net, shows why it cannot be refunded instead of the form,
// and a review or a confirmation made before the dispute refunds nothing.
func TestRefundDisputed(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newRefundEnv(t, db)
		p := e.paidByCard("4000000000000259")
		form := e.confirmation(p, "30.00", "")
		e.clock.Advance(checkout.DisputeDelay)
		if _, err := e.svc.ProcessAllDuePayments(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := e.reload(p); got.Status != checkout.PaymentDisputed {
			t.Fatalf("the payment = %s; want disputed", got.Status)
		}
		why := "Payment " + p.ID + " is disputed: the money is the card network&#39;s to decide until the dispute closes"
		pg := e.get(e.path(p), e.ann)
		wantIn(t, "the disputed payment's page", pg.body, `<p id="refund-block">`+why, ">disputed<", "No refund yet.",
			`<br><span class="hint">A dispute is open: its amount and fee are held until the card network decides.</span>`,
			"<dt>Held by the dispute</dt><dd>$30.00 and the $15.00 fee</dd>", "<dt>Net</dt><dd>-$16.17</dd>")
		if list := e.get("/dashboard/stores/"+e.m.ID+"/test/payments", e.ann); !strings.Contains(list.body, "A dispute is open: its amount and fee are held") {
			t.Error("the payments list does not say what disputed means")
		}
		if strings.Contains(pg.body, `id="refund-amount"`) {
			t.Error("the disputed payment's page has the refund form")
		}
		pg = e.review(p, "30.00", "", e.ann)
		if pg.status != http.StatusConflict || !strings.Contains(pg.body, why) || strings.Contains(pg.body, `id="refund-amount"`) {
			t.Errorf("review of a disputed payment = %d: %s", pg.status, pg.body)
		}
		pg = e.confirm(p, form)
		if pg.status != http.StatusConflict || !strings.Contains(pg.body, `<p class="error" role="alert">Nothing was refunded. `+why) {
			t.Errorf("confirm a refund of a disputed payment = %d: %s", pg.status, pg.body)
		}
		if rs := e.refunds(p); len(rs) != 0 {
			t.Errorf("a disputed payment got refunds %v", rs)
		}
	})
}

// A card payment to refund (its charge approved after the payment had
// failed) is refunded with the same form: the warning says so, and once
// refunded it is no longer to refund.
func TestRefundPaymentToRefund(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newRefundEnv(t, db)
		ctx := context.Background()
		at := e.clock.Now()
		s := &checkout.Session{ID: checkout.NewSessionID(), MerchantID: e.m.ID, Mode: checkout.ModeTest, Status: checkout.StatusOpen, Title: "Order",
			Currency: "USD", Amount: 1500, TotalAmount: 1500, Items: []checkout.Item{{Name: "Sword", Amount: 1500, Quantity: 1}},
			Metadata: map[string]string{}, CreatedAt: at, ExpiresAt: at.Add(time.Hour)}
		p := checkout.NewPayment(s, checkout.MethodCard, at)
		last4, brand := "4242", "visa"
		p.CardLast4, p.CardBrand = &last4, &brand
		fail(checkout.FailCapturedAfterFailure)(p)
		if err := db.InTx(ctx, func(tx checkout.Tx) error {
			if err := tx.SessionInsert(ctx, s); err != nil {
				return err
			}
			return tx.PaymentInsert(ctx, p)
		}); err != nil {
			t.Fatal(err)
		}
		pg := e.get(e.path(p), e.ann)
		wantIn(t, "a card payment to refund", pg.body, "<strong>To refund.</strong>", "return it to the buyer with the refund form below.",
			"<dt>Left to refund</dt><dd>$15.00</dd>", `value="15.00"`)
		pg, _ = e.outcome(p, e.confirm(p, e.confirmation(p, "15.00", "")))
		wantIn(t, "the payment refunded", pg.body, "Refunded $15.00 to the card ending 4242.", "<dt>Refunded</dt><dd>$15.00</dd>")
		if strings.Contains(pg.body, "To refund") {
			t.Error("the payment refunded is still marked To refund")
		}
		if got := e.reload(p); got.Status != checkout.PaymentFailed || got.RefundDue() || got.AmountRefunded != 1500 {
			t.Errorf("the payment = %s, due %v, refunded %d; want failed, no longer due, 1500", got.Status, got.RefundDue(), got.AmountRefunded)
		}
		if list := e.get("/dashboard/stores/"+e.m.ID+"/test/payments", e.ann); strings.Contains(list.body, "to refund.") {
			t.Error("the payments list still counts a payment to refund")
		}
	})
}

// A live crypto payment is not refunded here when this server has no node
// for its coin to see the refund's payout (checkoutd cannot send coins
// itself): the page says so instead of the form, a payment to refund too.
// Test mode's are (refunds_crypto_test.go).
func TestRefundCrypto(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newRefundEnv(t, db)
		at := e.clock.Now()
		paid := e.livePayment(e.m, at, func(p *checkout.Payment) { p.Status = checkout.PaymentSucceeded })
		due := e.livePayment(e.m, at, func(p *checkout.Payment) { p.Crypto.ReceivedBase = "12000000"; fail(checkout.FailUnderpaid)(p) })
		live := "/dashboard/stores/" + e.m.ID + "/live/payments/"
		pg := e.get(live+paid.ID, e.ann)
		wantIn(t, "a crypto payment's page", pg.body, `<p id="refund-block">checkoutd cannot send coins`, "<dt>Refunded</dt><dd>$0.00</dd>")
		if strings.Contains(pg.body, `id="refund-amount"`) || strings.Contains(pg.body, "Left to refund") {
			t.Error("a crypto payment's page has the refund form, or an amount left to refund (what to send back is in coins)")
		}
		pg = e.get(live+due.ID, e.ann)
		wantIn(t, "a crypto payment to refund", pg.body, "return the 0.12 LTC received to the buyer: checkoutd cannot send coins, so send them back from your wallet.")
		pg = e.get(live+paid.ID+"/refund?amount=15.00", e.ann)
		if pg.status != http.StatusConflict || !strings.Contains(pg.body, "checkoutd cannot send coins") {
			t.Errorf("review of a crypto refund = %d: %s", pg.status, pg.body)
		}
	})
}

// A payment of another store or of the other mode is the 404 page, at its
// page, its review and its confirmation, and nothing is refunded.
func TestRefundOtherStoreOrMode(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newRefundEnv(t, db)
		p := e.paidByCard("4242424242424242")
		form := e.confirmation(p, "30.00", "")
		bobStore, bob := e.signedInStore("bob@example.com")
		bobForm := url.Values{"form_token": {e.get("/dashboard/", bob).formToken(t)}, "amount": {"30.00"}, "nonce": {form.Get("nonce")}}
		for _, tt := range []struct {
			who  *http.Cookie
			path string
			form url.Values
		}{
			{bob, e.path(p), bobForm}, // ann's store, as bob
			{bob, "/dashboard/stores/" + bobStore.ID + "/test/payments/" + p.ID, bobForm}, // bob's store
			{e.ann, "/dashboard/stores/" + e.m.ID + "/live/payments/" + p.ID, form},       // the other mode
		} {
			for _, pg := range []*page{e.get(tt.path, tt.who), e.get(tt.path+"/refund?amount=30.00", tt.who), e.post(tt.path+"/refund", tt.form, tt.who)} {
				if pg.status != http.StatusNotFound || strings.Contains(pg.body, p.ID) {
					t.Errorf("%s = %d; want the 404 page", tt.path, pg.status)
				}
			}
		}
		if rs := e.refunds(p); len(rs) != 0 {
			t.Errorf("refunds from another store or mode: %v", rs)
		}
	})
}

// One confirmation posted twice, one after the other or at once, refunds
// once: every answer goes to that refund.
func TestRefundConfirmedTwice(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newRefundEnv(t, db)
		p := e.paidByCard("4242424242424242")
		form := e.confirmation(p, "10.00", "duplicate")
		_, first := e.outcome(p, e.confirm(p, form))
		pg, again := e.outcome(p, e.confirm(p, form))
		if again != first {
			t.Errorf("the second post went to refund %s; want %s", again, first)
		}
		if strings.Count(pg.body, `<tr id="refund-`) != 1 || !strings.Contains(pg.body, "Refunded $10.00") {
			t.Errorf("the page after the second post: %s", pg.body)
		}

		form = e.confirmation(p, "5.00", "")
		var wg sync.WaitGroup
		locs := make([]string, 4)
		for i := range locs {
			wg.Go(func() {
				res := e.confirm(p, form)
				locs[i] = res.header.Get("Location")
			})
		}
		wg.Wait()
		for _, loc := range locs {
			if loc == "" || loc != locs[0] {
				t.Errorf("the posts at once went to %q; want one refund", locs)
				break
			}
		}
		if got := e.reload(p); len(e.refunds(p)) != 2 || got.AmountRefunded != 1500 {
			t.Errorf("%d refunds, %d refunded; want 2 refunds, 1500", len(e.refunds(p)), got.AmountRefunded)
		}
	})
}

// A refund posted without the form token, with another session's, from
// another site (Sec-Fetch-Site, or an Origin of another site), or signed
// out, is refused and refunds nothing.
func TestRefundCrossSiteAndFormToken(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newRefundEnv(t, db)
		p := e.paidByCard("4242424242424242")
		form := e.confirmation(p, "30.00", "")
		_, bob := e.signedInStore("bob@example.com")
		without := func(change func(url.Values)) url.Values {
			f := url.Values{}
			for k, v := range form {
				f[k] = v
			}
			change(f)
			return f
		}
		path := e.path(p) + "/refund"
		for _, tt := range []struct {
			what   string
			form   url.Values
			header http.Header
		}{
			{"no form token", without(func(f url.Values) { f.Del("form_token") }), http.Header{"Sec-Fetch-Site": {"same-origin"}}},
			{"another session's token", without(func(f url.Values) { f.Set("form_token", e.get("/dashboard/", bob).formToken(t)) }), http.Header{"Sec-Fetch-Site": {"same-origin"}}},
			{"cross-site", form, http.Header{"Sec-Fetch-Site": {"cross-site"}}},
			{"another site's Origin", form, http.Header{"Origin": {"https://evil.example"}}},
		} {
			if pg := e.do(http.MethodPost, path, tt.form, tt.header, e.ann); pg.status != http.StatusForbidden {
				t.Errorf("a refund with %s = %d; want 403", tt.what, pg.status)
			}
		}
		wantRedirectToSignIn(t, "a refund signed out", e.post(path, form))
		if got := e.reload(p); len(e.refunds(p)) != 0 || got.AmountRefunded != 0 || got.AmountRefunding != 0 {
			t.Errorf("refused posts made %d refunds", len(e.refunds(p)))
		}
		// The same confirmation, sent properly, refunds.
		e.outcome(p, e.confirm(p, form))
	})
}

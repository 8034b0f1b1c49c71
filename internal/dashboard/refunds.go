package dashboard

import (
	"cmp"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/web"
)

// Refunds (issue 28): a payment's page lists its refunds and, while the
// payment can be refunded, a form: the amount in major units as merchants
// type it (12.34), prefilled with what is left to refund, and a reason. The
// form is sent by GET to a confirmation page, which refunds nothing: it says
// what goes back to whom, and its Confirm button posts the refund. The
// refund goes through service.RefundPayment, the call of the API and the
// CLI, as the signed-in account; the payment's page then tells its outcome.
//
// Pressing Confirm twice refunds once: the confirmation carries a random
// nonce, from which the refund's idempotency key is derived, so a second
// post of the same confirmation is answered with the refund the first made.
// Every member of the store may refund for now; roles come later in issue
// 28.
//
// A crypto payment's form also asks at which rate its amount becomes coins
// (the payment's, or the rate when the buyer gives an address): checkoutd
// holds no private key, so its refund is made pending with a link for the
// buyer's address, which the merchant then pays from their wallet
// (refunds_crypto.go shows it and cancels it).

// refundForm is the refund form's values as typed, and its errors by field
// ("" for the form as a whole). Rate is a crypto payment's, "" for others.
type refundForm struct {
	Amount, Reason, Rate string
	Errors               map[string]string
}

// readRefundForm reads the refund form of p from values (a query or a
// post): a rate only for a crypto payment, whose form asks for one.
func readRefundForm(p *checkout.Payment, get func(string) string) refundForm {
	f := refundForm{Amount: get("amount"), Reason: get("reason")}
	if p.Method == checkout.MethodCrypto {
		f.Rate = get("rate")
	}
	return f
}

// values are the form's fields as a query or a post sends them.
func (f refundForm) values() url.Values {
	v := url.Values{"amount": {f.Amount}, "reason": {f.Reason}}
	if f.Rate != "" {
		v.Set("rate", f.Rate)
	}
	return v
}

// params are the form's reason and rate as RefundPayment takes them; the
// amount is parsed apart.
func (f refundForm) params() checkout.RefundParams {
	return checkout.RefundParams{Reason: checkout.RefundReason(f.Reason), Rate: checkout.RefundRate(f.Rate)}
}

// rateOption is a choice of a crypto refund's rate.
type rateOption struct {
	Value checkout.RefundRate
	Label string
}

// refundRates are the rates a crypto refund is priced at, the default
// first.
var refundRates = []rateOption{
	{checkout.RateOfPayment, "At the payment's rate (the buyer gets the coins they paid, in proportion)"},
	{checkout.RateCurrent, "At the rate when the buyer gives their address"},
}

// rateLabel names a rate for people.
func rateLabel(r checkout.RefundRate) string {
	for _, o := range refundRates {
		if o.Value == r {
			return o.Label
		}
	}
	return string(r)
}

// reasonOption is a choice of the form's reason.
type reasonOption struct{ Value, Label string }

// refundReasons are the form's reasons, none first.
var refundReasons = func() []reasonOption {
	out := []reasonOption{{"", "None"}}
	for _, r := range checkout.RefundReasons {
		out = append(out, reasonOption{string(r), reasonLabel(r)})
	}
	return out
}()

// reasonLabel names a reason for people; "" for none.
func reasonLabel(r checkout.RefundReason) string {
	switch r {
	case checkout.ReasonRequestedByCustomer:
		return "Requested by the customer"
	case checkout.ReasonDuplicate:
		return "Duplicate"
	case checkout.ReasonFraudulent:
		return "Fraudulent"
	}
	return string(r)
}

// refundRow is a refund as the pages show it.
type refundRow struct {
	*checkout.Refund
	Amount string
	// ReasonLabel names the reason, "" when none was given; Failure says
	// what FailureCode means, "" unless the refund failed.
	ReasonLabel, Failure string
	// Crypto is a crypto refund's stage and payout, nil for others.
	Crypto *cryptoRefundRow
}

// newRefundRow is r as the pages show it; checkoutBaseURL is the payment
// pages' address, under which a crypto refund's link is.
func newRefundRow(r *checkout.Refund, checkoutBaseURL string) refundRow {
	row := refundRow{Refund: r, Amount: checkout.FormatAmount(r.Amount, r.Currency), ReasonLabel: reasonLabel(r.Reason)}
	if r.FailureCode != nil {
		row.Failure = checkout.RefundFailureMessage(*r.FailureCode)
	}
	if r.Crypto != nil {
		row.Crypto = newCryptoRefundRow(r, checkoutBaseURL)
	}
	return row
}

// refundClass is the badge of a refund's status.
func refundClass(s checkout.RefundStatus) string {
	switch s {
	case checkout.RefundSucceeded:
		return "good"
	case checkout.RefundFailed:
		return "bad"
	case checkout.RefundPending:
		return "warn"
	}
	return ""
}

// RefundTo says where a refund of the payment goes: "to the card ending
// 4242".
func (r paymentRow) RefundTo() string {
	switch {
	case r.CardLast4 != nil:
		return "to the card ending " + *r.CardLast4
	case r.Skins != nil:
		return "by giving its items back to the buyer"
	case r.Crypto != nil:
		return "to the buyer in " + r.Crypto.Coin
	}
	return "to the buyer"
}

type paymentView struct {
	Layout
	Row     paymentRow
	Refunds []refundRow
	// Collected is whether the payment took money, so that what was
	// refunded is shown. Left is what is left to refund, "" for a crypto
	// payment that no refund touched (what to send back is in coins, not
	// its amount); Refunding what refunds under way hold, "" when none.
	Collected       bool
	Left, Refunding string
	// Block says why the payment cannot be refunded now; the form shows
	// when it is "".
	Block   string
	Form    refundForm
	Reasons []reasonOption
	// Rates are a crypto payment's form's rates; nil for others.
	Rates []rateOption
	// Outcome is the refund just asked for (or canceled, or paid out),
	// whose outcome the page tells; nil on any other visit. Refusal says
	// why a crypto refund's Cancel or Simulate payout did nothing.
	Outcome *refundRow
	Refusal string
	// Dispute is the payment's dispute, nil when it has none.
	Dispute *disputeView
}

type refundConfirmView struct {
	Layout
	Row paymentRow
	// Amount is the refund's, formatted; LeftAfter what will be left to
	// refund after it; Reason the reason's label, "" for none; Rate a
	// crypto refund's rate's label, "" for others.
	Amount, LeftAfter, Reason, Rate string
	// LinkTTL is how long a crypto refund's link takes the buyer's
	// address, in words.
	LinkTTL string
	// Form is the form as typed, sent again with the confirmation, and Back
	// the payment's page with it filled in.
	Form  refundForm
	Back  string
	Nonce string
}

// HandlePayment serves GET .../payments/{id}: the payment, its dispute
// (disputes.go) with its evidence form, its refunds, and the refund form,
// prefilled with what is left to refund (or with the amount and reason of
// the query, from the confirmation's Back). After a refund, ?refund= names
// it and the page tells its outcome; after evidence, ?evidence=sent says it
// was sent.
func (d *Dashboard) HandlePayment() http.Handler {
	return d.storePage(checkout.ActionViewPayments, func(w http.ResponseWriter, r *http.Request, s *scope) {
		p, err := d.svc.PaymentIn(r.Context(), s.checkoutScope(), r.PathValue("id"))
		if err != nil {
			d.failOrNotFound(w, r, s, err)
			return
		}
		q := r.URL.Query()
		st := paymentState{outcome: q.Get("refund"), sent: q.Get("evidence") == "sent"}
		if q.Has("amount") {
			f := readRefundForm(p, q.Get)
			st.refund = &f
		}
		d.renderPayment(w, r, s, http.StatusOK, p, st)
	})
}

// paymentState is what a payment's page shows besides the payment: its
// forms as typed, and what was just done.
type paymentState struct {
	// refund is the refund form as typed; nil for one prefilled with
	// what is left to refund. outcome is the id of the refund whose
	// outcome the page tells, or ""; refundRefusal why a crypto refund's
	// Cancel or Simulate payout did nothing.
	refund        *refundForm
	outcome       string
	refundRefusal string
	// dispute is the evidence form as typed; disputeRefusal says why
	// the evidence just confirmed was not sent; sent is whether the page
	// answers evidence just sent.
	dispute        disputeForm
	disputeRefusal string
	sent           bool
}

// renderPayment renders a payment's page, with its refunds and dispute,
// and their forms as st has them.
func (d *Dashboard) renderPayment(w http.ResponseWriter, r *http.Request, s *scope, status int, p *checkout.Payment, st paymentState) {
	refunds, err := d.svc.Refunds(r.Context(), p.ID)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	dispute, err := d.svc.DisputeOfPayment(r.Context(), p.ID)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	f := refundForm{Amount: checkout.AmountDecimal(max(p.Refundable(), 0), p.Currency)}
	if p.Method == checkout.MethodCrypto {
		f.Rate = string(checkout.RateOfPayment)
	}
	if st.refund != nil {
		f = *st.refund
	}
	touched := p.AmountRefunded > 0 || p.AmountRefunding > 0
	v := paymentView{Layout: s.layout("Payment "+p.ID, sectionPayments), Row: newPaymentRow(p), Form: f, Reasons: refundReasons,
		Collected: p.Status.Captured() || p.RefundDue() || touched, Refusal: st.refundRefusal}
	if p.Method == checkout.MethodCrypto {
		v.Rates = refundRates
	}
	if dispute != nil {
		v.Dispute = newDisputeView(dispute, d.svc.Now(), st.dispute, st.disputeRefusal, st.sent)
		if p.Acquirer != nil {
			// The card acquirer that took the payment decides its
			// disputes, on evidence sent there.
			v.Dispute.Acquirer, v.Dispute.TakesEvidence = p.Acquirer.Name, false
		}
	}
	if err := d.svc.RefundBlock(p); err != nil {
		v.Block = refundBlockMessage(p, err)
	}
	// A crypto payment that cannot be refunded here, and was not, is
	// returned in coins from the merchant's wallet: an amount left in its
	// currency would mislead.
	if v.Collected && (p.Method != checkout.MethodCrypto || touched || v.Block == "") {
		v.Left = checkout.FormatAmount(max(p.Refundable(), 0), p.Currency)
	}
	if p.AmountRefunding > 0 {
		v.Refunding = checkout.FormatAmount(p.AmountRefunding, p.Currency)
	}
	for _, rf := range refunds {
		row := newRefundRow(rf, d.svc.CheckoutBaseURL())
		v.Refunds = append(v.Refunds, row)
		if rf.ID == st.outcome {
			v.Outcome = &row
		}
	}
	d.render(w, r, status, "payment", v)
}

// refundBlockMessage says why p cannot be refunded: the service's reason,
// but for a crypto payment that could be if this server watched its coin's
// network (a live one without a node for it), where it says what to do
// instead.
func refundBlockMessage(p *checkout.Payment, err error) string {
	if p.Method == checkout.MethodCrypto && p.RefundBlock() == nil {
		return "checkoutd cannot send coins (it holds no private key), and this server has no " + p.Crypto.Coin +
			" node to see a refund's payout, so this payment is not refunded here: send the coins back from your wallet, to an address the buyer gives you."
	}
	return checkout.ErrorMessage(err)
}

// HandleRefundPage serves GET .../payments/{id}/refund?amount=&reason=: the
// refund form's answer. A refund the service would refuse (an amount that
// is not one, more than is left, part of a skins payment; a payment that
// cannot be refunded) comes back as the payment's page with the form as
// typed and the reason beside its field; any other is the confirmation.
// Nothing is refunded here.
func (d *Dashboard) HandleRefundPage() http.Handler {
	return d.storePage(checkout.ActionRefund, func(w http.ResponseWriter, r *http.Request, s *scope) {
		p, err := d.svc.PaymentIn(r.Context(), s.checkoutScope(), r.PathValue("id"))
		if err != nil {
			d.failOrNotFound(w, r, s, err)
			return
		}
		f := readRefundForm(p, r.URL.Query().Get)
		params, err := d.checkRefund(p, f)
		if err != nil {
			d.refundRefused(w, r, s, p, f, params, err)
			return
		}
		v := refundConfirmView{
			Layout: s.layout("Refund payment "+p.ID, sectionPayments), Row: newPaymentRow(p),
			Amount:    checkout.FormatAmount(*params.Amount, p.Currency),
			LeftAfter: checkout.FormatAmount(p.Refundable()-*params.Amount, p.Currency),
			Reason:    reasonLabel(params.Reason), Form: f, Nonce: newNonce(),
			Back: s.path("payments/"+p.ID) + "?" + f.values().Encode() + "#refund",
		}
		if p.Method == checkout.MethodCrypto {
			v.Rate = rateLabel(cmp.Or(params.Rate, checkout.RateOfPayment))
			v.LinkTTL = fmt.Sprintf("%d days", checkout.RefundLinkTTL/(24*time.Hour))
		}
		d.render(w, r, http.StatusOK, "refund-confirm", v)
	})
}

// checkRefund reads the refund form of p and checks it as RefundPayment
// would, without asking for anything: the amount must parse, the payment
// be refundable here, and the refund pass checkout.NewRefund (a crypto
// one checkout.NewCryptoRefund, which checks its rate too), run on a copy
// of the payment so that nothing is held.
func (d *Dashboard) checkRefund(p *checkout.Payment, f refundForm) (checkout.RefundParams, error) {
	params := f.params()
	amount, err := checkout.ParseAmount(f.Amount, p.Currency)
	if err != nil {
		return params, err
	}
	params.Amount = &amount
	if err := d.svc.RefundBlock(p); err != nil {
		return params, err
	}
	dry := *p
	if p.Method == checkout.MethodCrypto {
		_, err = checkout.NewCryptoRefund(&dry, params, "", checkout.Actor{}, time.Time{})
		return params, err
	}
	_, err = checkout.NewRefund(&dry, params, checkout.Actor{}, time.Time{})
	return params, err
}

// HandleRefund serves POST .../payments/{id}/refund: the confirmation's
// Confirm. It refunds through service.RefundPayment as the signed-in
// account, the confirmation's nonce making the idempotency key, and goes
// to the payment's page, which tells the outcome (succeeded, failed and
// why, or pending; a crypto refund waiting for the buyer's address, with
// its link). A refusal is the payment's page with the form as confirmed
// and the reason beside its field.
func (d *Dashboard) HandleRefund() http.Handler {
	return d.storeAction(checkout.ActionRefund, func(w http.ResponseWriter, r *http.Request, s *scope) {
		p, err := d.svc.PaymentIn(r.Context(), s.checkoutScope(), r.PathValue("id"))
		if err != nil {
			d.failOrNotFound(w, r, s, err)
			return
		}
		f := readRefundForm(p, r.PostFormValue)
		params := f.params()
		nonce := r.PostFormValue("nonce")
		amount, err := checkout.ParseAmount(f.Amount, p.Currency)
		if err == nil && !validNonce(nonce) {
			err = checkout.Errorf(checkout.EValidationFailed, "This confirmation could not be read. Review the refund and confirm it again.")
		}
		if err != nil {
			d.refundRefused(w, r, s, p, f, params, err)
			return
		}
		params.Amount = &amount
		out, err := d.svc.RefundPayment(r.Context(), service.RefundRequest{
			Scope: s.checkoutScope(), PaymentID: p.ID, Params: params,
			By:             checkout.Actor{Kind: checkout.ActorAccount, ID: s.account.ID, Name: s.account.Email},
			IdempotencyKey: refundKey(s.account.ID, nonce),
		})
		if err != nil {
			if cur, gerr := d.svc.PaymentIn(r.Context(), s.checkoutScope(), p.ID); gerr == nil {
				p = cur // what is left now, for the message and the form
			}
			d.refundRefused(w, r, s, p, f, params, err)
			return
		}
		http.Redirect(w, r, s.path("payments/"+p.ID)+"?refund="+out.Refund.ID+"#refunds", http.StatusSeeOther)
	})
}

// refundRefused answers a refund the service refuses with the payment's
// page, the form as typed and the reason beside its field (or above the
// form); a payment not found is the 404 page, and any other error a
// failure.
func (d *Dashboard) refundRefused(w http.ResponseWriter, r *http.Request, s *scope, p *checkout.Payment, f refundForm, params checkout.RefundParams, err error) {
	errs, ok := refundFormErrors(err, p, params)
	if !ok {
		d.failOrNotFound(w, r, s, err)
		return
	}
	f.Errors = errs
	d.renderPayment(w, r, s, web.StatusOf(checkout.ErrorCode(err)), p, paymentState{refund: &f})
}

// refundFormErrors places a refusal of a refund of p beside the form's
// field, in the form's terms (amounts as the page writes them, not minor
// units); a refusal of the whole refund goes under "". False for an error
// that is not a refusal.
func refundFormErrors(err error, p *checkout.Payment, params checkout.RefundParams) (map[string]string, bool) {
	ce, ok := err.(*checkout.Error)
	if !ok {
		return nil, false
	}
	amount := func(n int64) string { return checkout.FormatAmount(n, p.Currency) }
	switch {
	case ce.Code == checkout.ERefundTooLarge:
		return map[string]string{"amount": fmt.Sprintf("That is more than the %s left to refund.", amount(max(p.Refundable(), 0)))}, true
	case ce.Code == checkout.EValidationFailed && ce.Param == "amount" && params.Amount != nil && *params.Amount < 1:
		return map[string]string{"amount": fmt.Sprintf("Enter at least %s.", amount(1))}, true
	case ce.Code == checkout.EValidationFailed && ce.Param == "amount" && params.Amount != nil && p.Method == checkout.MethodSkins:
		return map[string]string{"amount": fmt.Sprintf("A skins payment is refunded whole, its items going back to the buyer: refund all %s.", amount(p.Amount))}, true
	case ce.Code == checkout.EValidationFailed && ce.Param == "reason":
		return map[string]string{"reason": "Choose one of the reasons, or none."}, true
	case ce.Code == checkout.EValidationFailed && ce.Param == "rate" && p.Method == checkout.MethodCrypto:
		return map[string]string{"rate": "Choose one of the rates."}, true
	case ce.Code == checkout.EValidationFailed:
		return fieldErrors(err)
	case ce.Code == checkout.EPaymentNotRefundable:
		return map[string]string{"": "Nothing was refunded. " + refundBlockMessage(p, err)}, true
	case ce.Code == checkout.EIdempotencyConflict:
		return map[string]string{"": "This confirmation was made for another refund, so nothing was refunded. Review the refund and confirm it again."}, true
	}
	return nil, false
}

// newNonce is a confirmation's nonce: 32 random bytes, base64url.
func newNonce() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func validNonce(n string) bool {
	b, err := base64.RawURLEncoding.DecodeString(n)
	return err == nil && len(b) == 32
}

// refundKey is the idempotency key of the refund a confirmation posts: the
// same for the same account and nonce, so that a second post of one
// confirmation (a double click, a resent form) is answered with the first
// one's refund. The store's idempotency keys are shared with the API's
// Idempotency-Key, which cannot guess a hash of a secret nonce.
func refundKey(accountID, nonce string) string {
	sum := sha256.Sum256([]byte("checkoutd dashboard refund\x00" + accountID + "\x00" + nonce))
	return "dashboard_" + base64.RawURLEncoding.EncodeToString(sum[:])
}

package dashboard

import (
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

// refundForm is the refund form's values as typed, and its errors by field
// ("" for the form as a whole).
type refundForm struct {
	Amount, Reason string
	Errors         map[string]string
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
}

func newRefundRow(r *checkout.Refund) refundRow {
	row := refundRow{Refund: r, Amount: checkout.FormatAmount(r.Amount, r.Currency), ReasonLabel: reasonLabel(r.Reason)}
	if r.FailureCode != nil {
		row.Failure = checkout.RefundFailureMessage(*r.FailureCode)
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
	// Outcome is the refund just asked for, whose outcome the page tells;
	// nil on any other visit.
	Outcome *refundRow
	// Dispute is the payment's dispute, nil when it has none.
	Dispute *disputeView
}

type refundConfirmView struct {
	Layout
	Row paymentRow
	// Amount is the refund's, formatted; LeftAfter what will be left to
	// refund after it; Reason the reason's label, "" for none.
	Amount, LeftAfter, Reason string
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
	return d.storePage(func(w http.ResponseWriter, r *http.Request, s *scope) {
		p, err := d.svc.PaymentIn(r.Context(), s.checkoutScope(), r.PathValue("id"))
		if err != nil {
			d.failOrNotFound(w, r, s, err)
			return
		}
		q := r.URL.Query()
		st := paymentState{outcome: q.Get("refund"), sent: q.Get("evidence") == "sent"}
		if q.Has("amount") {
			st.refund = &refundForm{Amount: q.Get("amount"), Reason: q.Get("reason")}
		}
		d.renderPayment(w, r, s, http.StatusOK, p, st)
	})
}

// paymentState is what a payment's page shows besides the payment: its
// forms as typed, and what was just done.
type paymentState struct {
	// refund is the refund form as typed; nil for one prefilled with
	// what is left to refund. outcome is the id of the refund whose
	// outcome the page tells, or "".
	refund  *refundForm
	outcome string
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
	if st.refund != nil {
		f = *st.refund
	}
	touched := p.AmountRefunded > 0 || p.AmountRefunding > 0
	v := paymentView{Layout: s.layout("Payment "+p.ID, sectionPayments), Row: newPaymentRow(p), Form: f, Reasons: refundReasons,
		Collected: p.Status.Captured() || p.RefundDue() || touched}
	if dispute != nil {
		v.Dispute = newDisputeView(dispute, d.svc.Now(), st.dispute, st.disputeRefusal, st.sent)
	}
	if v.Collected && (p.Method != checkout.MethodCrypto || touched) {
		v.Left = checkout.FormatAmount(max(p.Refundable(), 0), p.Currency)
	}
	if p.AmountRefunding > 0 {
		v.Refunding = checkout.FormatAmount(p.AmountRefunding, p.Currency)
	}
	for _, rf := range refunds {
		row := newRefundRow(rf)
		v.Refunds = append(v.Refunds, row)
		if rf.ID == st.outcome {
			v.Outcome = &row
		}
	}
	if err := d.svc.RefundBlock(p); err != nil {
		v.Block = refundBlockMessage(p, err)
	}
	d.render(w, r, status, "payment", v)
}

// refundBlockMessage says why p cannot be refunded: the service's reason,
// but for a crypto payment that could be if checkoutd could send coins,
// where it says what to do instead.
func refundBlockMessage(p *checkout.Payment, err error) string {
	if p.Method == checkout.MethodCrypto && p.RefundBlock() == nil {
		return "checkoutd cannot send coins (it holds no private key), so a crypto payment is not refunded here: send the coins back from your wallet, to an address the buyer gives you."
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
	return d.storePage(func(w http.ResponseWriter, r *http.Request, s *scope) {
		p, err := d.svc.PaymentIn(r.Context(), s.checkoutScope(), r.PathValue("id"))
		if err != nil {
			d.failOrNotFound(w, r, s, err)
			return
		}
		q := r.URL.Query()
		f := refundForm{Amount: q.Get("amount"), Reason: q.Get("reason")}
		params, err := d.checkRefund(p, f)
		if err != nil {
			d.refundRefused(w, r, s, p, f, params, err)
			return
		}
		back := url.Values{"amount": {f.Amount}, "reason": {f.Reason}}
		d.render(w, r, http.StatusOK, "refund-confirm", refundConfirmView{
			Layout: s.layout("Refund payment "+p.ID, sectionPayments), Row: newPaymentRow(p),
			Amount:    checkout.FormatAmount(*params.Amount, p.Currency),
			LeftAfter: checkout.FormatAmount(p.Refundable()-*params.Amount, p.Currency),
			Reason:    reasonLabel(params.Reason), Form: f, Nonce: newNonce(),
			Back: s.path("payments/"+p.ID) + "?" + back.Encode() + "#refund",
		})
	})
}

// checkRefund reads the refund form of p and checks it as RefundPayment
// would, without asking for anything: the amount must parse, the payment
// be refundable here, and the refund pass checkout.NewRefund, run on a
// copy of the payment so that nothing is held.
func (d *Dashboard) checkRefund(p *checkout.Payment, f refundForm) (checkout.RefundParams, error) {
	params := checkout.RefundParams{Reason: checkout.RefundReason(f.Reason)}
	amount, err := checkout.ParseAmount(f.Amount, p.Currency)
	if err != nil {
		return params, err
	}
	params.Amount = &amount
	if err := d.svc.RefundBlock(p); err != nil {
		return params, err
	}
	dry := *p
	_, err = checkout.NewRefund(&dry, params, checkout.Actor{}, time.Time{})
	return params, err
}

// HandleRefund serves POST .../payments/{id}/refund: the confirmation's
// Confirm. It refunds through service.RefundPayment as the signed-in
// account, the confirmation's nonce making the idempotency key, and goes
// to the payment's page, which tells the outcome (succeeded, failed and
// why, or pending). A refusal is the payment's page with the form as
// confirmed and the reason beside its field.
func (d *Dashboard) HandleRefund() http.Handler {
	return d.storeAction(func(w http.ResponseWriter, r *http.Request, s *scope) {
		p, err := d.svc.PaymentIn(r.Context(), s.checkoutScope(), r.PathValue("id"))
		if err != nil {
			d.failOrNotFound(w, r, s, err)
			return
		}
		f := refundForm{Amount: r.PostFormValue("amount"), Reason: r.PostFormValue("reason")}
		params := checkout.RefundParams{Reason: checkout.RefundReason(f.Reason)}
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

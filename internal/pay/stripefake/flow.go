package stripefake

import (
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
)

// DisputeFee is what the fake's disputes cost, in the payment's currency's
// minor units (Stripe's is 15 USD in the US).
const DisputeFee = 1500

// disputeEvidenceWindow is how long after a dispute opens its evidence is
// due.
const disputeEvidenceWindow = 7 * 24 * time.Hour

var currencyShape = regexp.MustCompile(`^[a-z]{3}$`)

func missing(param string) *apiError {
	return invalid(http.StatusBadRequest, "parameter_missing", param, "Missing required param: "+param+".")
}

func noSuch(kind, param, id string) *apiError {
	return invalid(http.StatusNotFound, "resource_missing", param, "No such "+kind+": '"+id+"'")
}

// unexpectedState is Stripe's answer to an action a PaymentIntent's status
// does not allow; it carries the PaymentIntent.
func unexpectedState(pi *intent, action, allowed string) *apiError {
	e := invalid(http.StatusBadRequest, "payment_intent_unexpected_state", "",
		"You cannot "+action+" this PaymentIntent because it has a status of "+pi.status+". "+
			"Only a PaymentIntent with one of the following statuses may be "+action+"ed: "+allowed+".")
	e.Intent = pi.json(false)
	return e
}

func createIntent(f *Fake, form url.Values, key, _ string) (int, any) {
	amount, ok := formInt(form, "amount")
	switch {
	case form.Get("amount") == "":
		return 0, missing("amount")
	case !ok || amount < 1:
		return 0, invalid(http.StatusBadRequest, "parameter_invalid_integer", "amount", "This value must be greater than or equal to 1.")
	case form.Get("currency") == "":
		return 0, missing("currency")
	case !currencyShape.MatchString(form.Get("currency")):
		return 0, invalid(http.StatusBadRequest, "parameter_invalid_string", "currency", "Invalid currency: "+form.Get("currency")+".")
	case form.Get("payment_method_types[0]") != "card" || form.Get("payment_method_types[1]") != "":
		return 0, invalid(http.StatusBadRequest, "parameter_invalid_string", "payment_method_types", "The fake serves card-only PaymentIntents (payment_method_types[]=card).")
	case form.Get("automatic_payment_methods[enabled]") == "true":
		return 0, invalid(http.StatusBadRequest, "parameter_invalid_string", "automatic_payment_methods", "automatic_payment_methods and payment_method_types cannot both be set.")
	case form.Get("confirm") == "true":
		return 0, invalid(http.StatusBadRequest, "parameter_invalid_string", "confirm", "The fake does not confirm at creation: Stripe.js confirms.")
	}
	id := newID("pi")
	pi := &intent{
		id: id, clientSecret: id + "_secret_" + newID("s")[2:], amount: amount, currency: form.Get("currency"),
		status: "requires_payment_method", metadata: metadata(form),
		descriptorSuffix: form.Get("statement_descriptor_suffix"), created: f.opts.Now(),
	}
	f.intents[id] = pi
	f.emit("payment_intent.created", pi.json(false))
	return http.StatusOK, pi.json(false)
}

func retrieveIntent(f *Fake, form url.Values, _, id string) (int, any) {
	pi := f.intents[id]
	if pi == nil {
		return 0, noSuch("payment_intent", "intent", id)
	}
	return http.StatusOK, pi.json(expands(form, "latest_charge"))
}

func cancelIntent(f *Fake, form url.Values, _, id string) (int, any) {
	pi := f.intents[id]
	if pi == nil {
		return 0, noSuch("payment_intent", "intent", id)
	}
	switch pi.status {
	case "requires_payment_method", "requires_confirmation", "requires_action", "processing":
	default:
		return 0, unexpectedState(pi, "cancel", "requires_payment_method, requires_capture, requires_confirmation, requires_action, processing")
	}
	pi.status = "canceled"
	pi.canceledReason = form.Get("cancellation_reason")
	f.emit("payment_intent.canceled", pi.json(false))
	return http.StatusOK, pi.json(expands(form, "latest_charge"))
}

func confirmIntent(f *Fake, form url.Values, _, id string) (int, any) {
	pi := f.intents[id]
	if pi == nil {
		return 0, noSuch("payment_intent", "intent", id)
	}
	if err := f.confirm(pi, form.Get("payment_method")); err != nil {
		return 0, err
	}
	return http.StatusOK, pi.json(expands(form, "latest_charge"))
}

// confirm confirms pi with a test payment method, as Stripe.js's
// confirmPayment does once the buyer pressed Pay.
func (f *Fake) confirm(pi *intent, pm string) *apiError {
	if pi.status != "requires_payment_method" && pi.status != "requires_confirmation" {
		return unexpectedState(pi, "confirm", "requires_payment_method, requires_confirmation")
	}
	if pm == "" {
		return missing("payment_method")
	}
	c, ok := cards[pm]
	if !ok {
		return noSuch("PaymentMethod", "payment_method", pm)
	}
	pi.card, pi.lastError = pm, nil
	switch {
	case c.threeDS:
		pi.status = "requires_action"
		f.emit("payment_intent.requires_action", pi.json(false))
		return nil
	case c.declineCode != "":
		pi.charge = f.newCharge(pi, c, "failed")
		pi.status = "requires_payment_method"
		pi.lastError = &apiError{status: http.StatusPaymentRequired, Type: "card_error", Code: c.code, DeclineCode: c.declineCode,
			Message: "Your card was declined."}
		f.emit("charge.failed", pi.charge.json())
		f.emit("payment_intent.payment_failed", pi.json(false))
		e := *pi.lastError
		e.Intent = pi.json(false)
		return &e
	}
	f.succeed(pi)
	return nil
}

func (f *Fake) newCharge(pi *intent, c card, status string) *charge {
	ch := &charge{id: newID("ch"), intent: pi.id, amount: pi.amount, currency: pi.currency, status: status,
		card: c, metadata: pi.metadata, created: f.opts.Now()}
	f.charges[ch.id] = ch
	return ch
}

func (f *Fake) succeed(pi *intent) {
	c := cards[pi.card]
	pi.charge = f.newCharge(pi, c, "succeeded")
	pi.status = "succeeded"
	if c.dispute {
		pi.charge.disputeAt = f.opts.Now().Add(f.opts.Delay)
	}
	f.emit("charge.succeeded", pi.charge.json())
	f.emit("payment_intent.succeeded", pi.json(false))
}

// Confirm confirms a PaymentIntent with one of the test payment methods
// (CardVisa...), as the buyer does on the page through Stripe.js. A
// decline or a PaymentIntent that cannot be confirmed is an error; the
// PaymentIntent says the rest.
func (f *Fake) Confirm(piID, paymentMethod string) error {
	return f.act(func() *apiError {
		pi := f.intents[piID]
		if pi == nil {
			return noSuch("payment_intent", "intent", piID)
		}
		return f.confirm(pi, paymentMethod)
	})
}

// CompleteAction ends a PaymentIntent's 3-D Secure step: ok, the buyer
// confirmed and it succeeds; not ok, it fails as Stripe fails it
// (payment_intent_authentication_failure) and waits for another card.
func (f *Fake) CompleteAction(piID string, ok bool) error {
	return f.act(func() *apiError {
		pi := f.intents[piID]
		if pi == nil {
			return noSuch("payment_intent", "intent", piID)
		}
		if pi.status != "requires_action" {
			return unexpectedState(pi, "authenticate", "requires_action")
		}
		if ok {
			f.succeed(pi)
			return nil
		}
		pi.status = "requires_payment_method"
		pi.lastError = &apiError{status: http.StatusBadRequest, Type: "invalid_request_error", Code: "payment_intent_authentication_failure",
			Message: "We are unable to authenticate your payment method. Please choose a different payment method and try again."}
		f.emit("payment_intent.payment_failed", pi.json(false))
		return nil
	})
}

// OpenDispute opens a dispute (needs_response, evidence due in 7 days, a
// fee of DisputeFee) on a succeeded PaymentIntent's charge, with one of
// Stripe's reasons (fraudulent, product_not_received...), and returns its
// id.
func (f *Fake) OpenDispute(piID, reason string) (string, error) {
	var id string
	err := f.act(func() *apiError {
		pi := f.intents[piID]
		if pi == nil {
			return noSuch("payment_intent", "intent", piID)
		}
		if pi.status != "succeeded" || pi.charge.disputed {
			return invalid(http.StatusBadRequest, "", "", "Only an undisputed succeeded payment can be disputed.")
		}
		id = f.openDispute(pi.charge, reason).id
		return nil
	})
	return id, err
}

func (f *Fake) openDispute(ch *charge, reason string) *dispute {
	now := f.opts.Now()
	d := &dispute{id: newID("dp"), charge: ch.id, intent: ch.intent, amount: ch.amount, currency: ch.currency,
		reason: reason, status: "needs_response", dueBy: now.Add(disputeEvidenceWindow), fee: DisputeFee, created: now}
	ch.disputed, ch.disputeAt = true, time.Time{}
	f.disputes[d.id] = d
	f.emit("charge.dispute.created", d.json())
	return d
}

// SetDisputeStatus moves a dispute to one of Stripe's statuses
// (under_review, won, lost, warning_closed...), with Stripe's event:
// charge.dispute.closed when it is decided, charge.dispute.updated
// otherwise.
func (f *Fake) SetDisputeStatus(id, status string) error {
	return f.act(func() *apiError {
		d := f.disputes[id]
		if d == nil {
			return noSuch("dispute", "dispute", id)
		}
		d.status = status
		switch status {
		case "won", "lost", "warning_closed", "prevented":
			f.emit("charge.dispute.closed", d.json())
		default:
			f.emit("charge.dispute.updated", d.json())
		}
		return nil
	})
}

// Tick does what is due on the fake's clock: the disputes of CardDispute
// open, the refunds of CardRefundFail fail. Every request does it too.
func (f *Fake) Tick() {
	f.act(func() *apiError { f.due(); return nil })
}

// due does what is due at the fake's now, in the order it came due.
func (f *Fake) due() {
	now := f.opts.Now()
	var charges []*charge
	for _, ch := range f.charges {
		if !ch.disputeAt.IsZero() && !now.Before(ch.disputeAt) {
			charges = append(charges, ch)
		}
	}
	slices.SortFunc(charges, func(a, b *charge) int { return a.disputeAt.Compare(b.disputeAt) })
	for _, ch := range charges {
		f.openDispute(ch, "fraudulent")
	}
	var refunds []*refund
	for _, r := range f.refunds {
		if !r.failAt.IsZero() && !now.Before(r.failAt) {
			refunds = append(refunds, r)
		}
	}
	slices.SortFunc(refunds, func(a, b *refund) int { return a.failAt.Compare(b.failAt) })
	for _, r := range refunds {
		if r.status == "succeeded" {
			f.charges[r.charge].refunded -= r.amount
		}
		r.status, r.failureReason, r.failAt = "failed", "expired_or_canceled_card", time.Time{}
		f.emit("refund.updated", r.json())
		f.emit("charge.refund.updated", r.json())
	}
}

// act runs fn under the lock and hands the events it made to OnEvent.
func (f *Fake) act(fn func() *apiError) error {
	f.mu.Lock()
	err := fn()
	events := f.pending
	f.pending = nil
	f.mu.Unlock()
	if f.opts.OnEvent != nil {
		for _, ev := range events {
			f.opts.OnEvent(ev)
		}
	}
	if err != nil {
		return errors.New(err.Message)
	}
	return nil
}

// PaymentStatus returns a PaymentIntent's status at Stripe ("" when there
// is none).
func (f *Fake) PaymentStatus(piID string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if pi := f.intents[piID]; pi != nil {
		return pi.status
	}
	return ""
}

// ChargeOf returns the id of a PaymentIntent's latest charge, "" when none.
func (f *Fake) ChargeOf(piID string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if pi := f.intents[piID]; pi != nil && pi.charge != nil {
		return pi.charge.id
	}
	return ""
}

func createRefund(f *Fake, form url.Values, _, _ string) (int, any) {
	var ch *charge
	switch {
	case form.Get("payment_intent") != "":
		pi := f.intents[form.Get("payment_intent")]
		if pi == nil {
			return 0, noSuch("payment_intent", "payment_intent", form.Get("payment_intent"))
		}
		ch = pi.charge
	case form.Get("charge") != "":
		ch = f.charges[form.Get("charge")]
		if ch == nil {
			return 0, noSuch("charge", "charge", form.Get("charge"))
		}
	default:
		return 0, missing("payment_intent")
	}
	if ch == nil || ch.status != "succeeded" {
		return 0, invalid(http.StatusBadRequest, "charge_not_refundable", "payment_intent", "This PaymentIntent does not have a successful charge to refund.")
	}
	if ch.disputed {
		return 0, invalid(http.StatusBadRequest, "charge_disputed", "", "Charge "+ch.id+" has been charged back; cannot issue a refund.")
	}
	left := ch.amount
	for _, r := range f.refunds {
		if r.charge == ch.id && (r.status == "pending" || r.status == "succeeded") {
			left -= r.amount
		}
	}
	amount := left
	if form.Get("amount") != "" {
		n, ok := formInt(form, "amount")
		if !ok || n < 1 {
			return 0, invalid(http.StatusBadRequest, "parameter_invalid_integer", "amount", "This value must be greater than or equal to 1.")
		}
		amount = n
	}
	if amount > left || left == 0 {
		return 0, invalid(http.StatusBadRequest, "amount_too_large", "amount", "Refund amount is greater than the unrefunded amount on the charge.")
	}
	now := f.opts.Now()
	r := &refund{id: newID("re"), charge: ch.id, intent: ch.intent, amount: amount, currency: ch.currency,
		status: "succeeded", metadata: metadata(form), created: now}
	if ch.card.refundFail {
		r.failAt = now.Add(f.opts.Delay)
		if !f.opts.RefundFailSucceedsFirst {
			r.status = "pending"
		}
	}
	f.refunds[r.id] = r
	f.emit("refund.created", r.json())
	if r.status == "succeeded" {
		ch.refunded += amount
		f.emit("charge.refunded", ch.json())
	}
	return http.StatusOK, r.json()
}

func retrieveRefund(f *Fake, _ url.Values, _, id string) (int, any) {
	if r := f.refunds[id]; r != nil {
		return http.StatusOK, r.json()
	}
	return 0, noSuch("refund", "refund", id)
}

func retrieveDispute(f *Fake, form url.Values, _, id string) (int, any) {
	if d := f.disputes[id]; d != nil {
		m := d.json()
		if expands(form, "payment_intent") {
			m["payment_intent"] = f.intents[d.intent].json(false)
		}
		return http.StatusOK, m
	}
	return 0, noSuch("dispute", "dispute", id)
}

// AccountID is the id of the fake's one account.
const AccountID = "acct_1FakeCheckoutd00"

// retrieveAccount answers the key's own account, or a connected account
// by its id (Stripe Connect): any id is one.
func retrieveAccount(_ *Fake, _ url.Values, key, id string) (int, any) {
	if id == "" {
		id = AccountID
	}
	return http.StatusOK, map[string]any{
		"id": id, "object": "account", "country": "US", "default_currency": "usd",
		"charges_enabled": true, "payouts_enabled": true, "details_submitted": true, "type": "standard",
		"livemode": strings.Contains(key, "_live_"),
	}
}

func listEndpoints(f *Fake, _ url.Values, _, _ string) (int, any) {
	data := []map[string]any{}
	for _, e := range f.endpoints {
		data = append(data, map[string]any{
			"id": e.ID, "object": "webhook_endpoint", "url": e.URL, "api_version": e.APIVersion,
			"enabled_events": e.EnabledEvents, "status": e.Status, "livemode": false,
		})
	}
	return http.StatusOK, map[string]any{"object": "list", "url": "/v1/webhook_endpoints", "has_more": false, "data": data}
}

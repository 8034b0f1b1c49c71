package checkout_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

var merchantActor = checkout.Actor{Kind: checkout.ActorAccount, ID: "acct_1", Name: "owner@acme.example"}

// paramOf is the field an error names, "" for none.
func paramOf(err error) string {
	var e *checkout.Error
	if errors.As(err, &e) {
		return e.Param
	}
	return ""
}

// succeededPayment is a card payment of 5000 that succeeded, with its fee.
func succeededPayment(t *testing.T, method checkout.PaymentMethod) *checkout.Payment {
	t.Helper()
	p := newPayment(method, checkout.PaymentProcessing)
	p.Amount = 5000
	if err := p.Succeed(checkout.DefaultPricing, t0); err != nil {
		t.Fatal(err)
	}
	return p
}

// A payment is refunded in parts, each held while it is under way, never
// beyond what it collected; the payment follows each success (partially
// refunded, then refunded) and its net with it, and a failed refund frees
// what it held.
func TestRefundParts(t *testing.T) {
	p := succeededPayment(t, checkout.MethodCard)
	fee := p.Fee
	r1, err := checkout.NewRefund(p, checkout.RefundParams{Amount: ptr[int64](2000), Reason: checkout.ReasonRequestedByCustomer}, merchantActor, t0)
	if err != nil {
		t.Fatal(err)
	}
	if r1.Status != checkout.RefundPending || r1.Amount != 2000 || p.AmountRefunding != 2000 || p.Refundable() != 3000 || p.Status != checkout.PaymentSucceeded {
		t.Fatalf("after a refund of 2000 asked: refund %+v; payment refunding %d, refundable %d, %s", r1, p.AmountRefunding, p.Refundable(), p.Status)
	}
	if !strings.HasPrefix(r1.ID, "re_") || len(r1.ID) != 35 || r1.Currency != p.Currency || r1.SessionID != p.SessionID {
		t.Errorf("refund = %+v", r1)
	}
	// A second refund while the first is under way: what is left, no more.
	_, err = checkout.NewRefund(p, checkout.RefundParams{Amount: ptr[int64](3001)}, merchantActor, t0)
	if !checkout.IsCode(err, checkout.ERefundTooLarge) || paramOf(err) != "amount" || p.AmountRefunding != 2000 {
		t.Errorf("a refund of 3001 with 3000 left = %v (holding %d); want refund_amount_too_large on amount, nothing held", err, p.AmountRefunding)
	}
	r2, err := checkout.NewRefund(p, checkout.RefundParams{}, merchantActor, t0) // the rest
	if err != nil || r2.Amount != 3000 || p.Refundable() != 0 {
		t.Fatalf("a refund of the rest = %+v, %v; refundable %d", r2, err, p.Refundable())
	}
	if _, err := checkout.NewRefund(p, checkout.RefundParams{}, merchantActor, t0); !checkout.IsCode(err, checkout.EPaymentNotRefundable) {
		t.Errorf("a refund with everything held = %v; want payment_not_refundable", err)
	}

	if err := r1.Succeed(p, t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if p.Status != checkout.PaymentPartiallyRefunded || p.AmountRefunded != 2000 || p.AmountRefunding != 3000 || p.Net() != 5000-fee-2000 {
		t.Errorf("after 2000 refunded: %s, refunded %d, refunding %d, net %d", p.Status, p.AmountRefunded, p.AmountRefunding, p.Net())
	}
	if err := r1.Succeed(p, t0.Add(time.Second)); !checkout.IsCode(err, checkout.EConflict) || p.AmountRefunded != 2000 {
		t.Errorf("settling a refund twice = %v, refunded %d; want a conflict and no change", err, p.AmountRefunded)
	}
	// The second fails: what it held is free again, the payment unchanged.
	if err := r2.Fail(p, checkout.RefundFailExpiredOrCanceledCard, t0.Add(2*time.Second)); err != nil {
		t.Fatal(err)
	}
	if r2.Status != checkout.RefundFailed || *r2.FailureCode != checkout.RefundFailExpiredOrCanceledCard || p.Refundable() != 3000 || p.Status != checkout.PaymentPartiallyRefunded {
		t.Errorf("after a failed refund: %+v; refundable %d, %s", r2, p.Refundable(), p.Status)
	}
	v := r2.View("https://pay.example")
	if v.Object != "refund" || v.Status != checkout.RefundFailed || v.FailureMessage == nil || v.Reason != nil || v.PaymentID != p.ID || v.RequestedBy.Email == nil {
		t.Errorf("View of the failed refund = %+v", v)
	}

	r3, err := checkout.NewRefund(p, checkout.RefundParams{}, merchantActor, t0.Add(3*time.Second))
	if err != nil || r3.Amount != 3000 {
		t.Fatalf("a refund of the rest after the failure = %+v, %v", r3, err)
	}
	if err := r3.Succeed(p, t0.Add(4*time.Second)); err != nil {
		t.Fatal(err)
	}
	if p.Status != checkout.PaymentRefunded || p.AmountRefunded != 5000 || p.Net() != -fee {
		t.Errorf("refunded in full: %s, refunded %d, net %d; want refunded, net less the fee kept", p.Status, p.AmountRefunded, p.Net())
	}
	if _, err := checkout.NewRefund(p, checkout.RefundParams{}, merchantActor, t0); !checkout.IsCode(err, checkout.EPaymentNotRefundable) {
		t.Errorf("a refund of a refunded payment = %v; want payment_not_refundable", err)
	}
}

// What can be refunded, by the payment's status: a captured payment that
// is not disputed, and a failed one whose money was collected; nothing
// else, and nothing held for a refund refused.
func TestRefundByStatus(t *testing.T) {
	for _, tt := range []struct {
		name string
		pay  func() *checkout.Payment
		ok   bool
	}{
		{"succeeded", func() *checkout.Payment { return succeededPayment(t, checkout.MethodCard) }, true},
		{"partially refunded", func() *checkout.Payment {
			p := succeededPayment(t, checkout.MethodCard)
			p.Status, p.AmountRefunded = checkout.PaymentPartiallyRefunded, 100
			return p
		}, true},
		{"processing", func() *checkout.Payment { return newPayment(checkout.MethodCard, checkout.PaymentProcessing) }, false},
		{"disputed", func() *checkout.Payment {
			p := succeededPayment(t, checkout.MethodCard)
			p.OpenDispute(checkout.DefaultDisputePlan, 1500, t0)
			return p
		}, false},
		{"dispute lost", func() *checkout.Payment { return newPayment(checkout.MethodCard, checkout.PaymentDisputeLost) }, false},
		{"declined", func() *checkout.Payment {
			p := newPayment(checkout.MethodCard, checkout.PaymentProcessing)
			p.Fail(checkout.FailCardDeclined, t0)
			return p
		}, false},
		{"late crypto, to refund", func() *checkout.Payment {
			p := newPayment(checkout.MethodCrypto, checkout.PaymentProcessing)
			p.Fail(checkout.FailSessionExpired, t0)
			return p
		}, true},
	} {
		p := tt.pay()
		status, refunded := p.Status, p.AmountRefunded
		r, err := checkout.NewRefund(p, checkout.RefundParams{}, merchantActor, t0)
		switch {
		case tt.ok && err != nil:
			t.Errorf("%s: NewRefund = %v; want a refund", tt.name, err)
		case !tt.ok && (!checkout.IsCode(err, checkout.EPaymentNotRefundable) || r != nil || p.AmountRefunding != 0):
			t.Errorf("%s: NewRefund = %v, %v, holding %d; want payment_not_refundable, nothing held", tt.name, r, err, p.AmountRefunding)
		case tt.ok && (r.Amount != p.Amount-refunded || p.Status != status):
			t.Errorf("%s: refund of %d, payment %s; want %d, status unchanged while pending", tt.name, r.Amount, p.Status, p.Amount-refunded)
		}
	}
	// A disputed payment says why it cannot be refunded.
	p := succeededPayment(t, checkout.MethodCard)
	p.OpenDispute(checkout.DefaultDisputePlan, 1500, t0)
	if _, err := checkout.NewRefund(p, checkout.RefundParams{}, merchantActor, t0); err == nil || !strings.Contains(err.Error(), "disputed") {
		t.Errorf("a refund of a disputed payment = %v; want it to say the payment is disputed", err)
	}
}

// A failed payment whose money was due back leaves the list of payments
// to refund once it is refunded in full, not before; it stays failed.
func TestRefundOfARefundDuePayment(t *testing.T) {
	p := newPayment(checkout.MethodCrypto, checkout.PaymentProcessing)
	p.Amount = 4000
	p.Fail(checkout.FailDuplicatePayment, t0)
	r, err := checkout.NewRefund(p, checkout.RefundParams{Amount: ptr[int64](1000)}, merchantActor, t0)
	if err != nil {
		t.Fatal(err)
	}
	r.Succeed(p, t0)
	if !p.RefundDue() || p.Status != checkout.PaymentFailed || p.Net() != 0 {
		t.Errorf("a quarter refunded: refund due %v, %s, net %d; want still due, failed, net 0", p.RefundDue(), p.Status, p.Net())
	}
	r, _ = checkout.NewRefund(p, checkout.RefundParams{}, merchantActor, t0)
	r.Succeed(p, t0)
	if p.RefundDue() || p.Status != checkout.PaymentFailed || p.AmountRefunded != 4000 {
		t.Errorf("refunded in full: refund due %v, %s, refunded %d; want no longer due, failed", p.RefundDue(), p.Status, p.AmountRefunded)
	}
}

// Bad refund requests are refused with the field that is wrong, and hold
// nothing: an amount below 1, an unknown reason, a skins payment in part.
func TestRefundValidation(t *testing.T) {
	for _, tt := range []struct {
		name   string
		method checkout.PaymentMethod
		params checkout.RefundParams
		code   string
		param  string
	}{
		{"zero", checkout.MethodCard, checkout.RefundParams{Amount: ptr[int64](0)}, checkout.EValidationFailed, "amount"},
		{"negative", checkout.MethodCard, checkout.RefundParams{Amount: ptr[int64](-1)}, checkout.EValidationFailed, "amount"},
		{"over the amount", checkout.MethodCard, checkout.RefundParams{Amount: ptr[int64](5001)}, checkout.ERefundTooLarge, "amount"},
		{"unknown reason", checkout.MethodCard, checkout.RefundParams{Reason: "changed_mind"}, checkout.EValidationFailed, "reason"},
		{"skins in part", checkout.MethodSkins, checkout.RefundParams{Amount: ptr[int64](4999)}, checkout.EValidationFailed, "amount"},
	} {
		p := succeededPayment(t, tt.method)
		_, err := checkout.NewRefund(p, tt.params, merchantActor, t0)
		if !checkout.IsCode(err, tt.code) || paramOf(err) != tt.param || p.AmountRefunding != 0 {
			t.Errorf("%s: NewRefund = %v (param %q), holding %d; want %s on %s", tt.name, err, paramOf(err), p.AmountRefunding, tt.code, tt.param)
		}
	}
	// Both bounds that pass: 1, and all of it; a skins payment whole.
	for _, tt := range []struct {
		method checkout.PaymentMethod
		amount int64
	}{{checkout.MethodCard, 1}, {checkout.MethodCard, 5000}, {checkout.MethodSkins, 5000}, {checkout.MethodCrypto, 5000}} {
		p := succeededPayment(t, tt.method)
		if r, err := checkout.NewRefund(p, checkout.RefundParams{Amount: ptr(tt.amount), Reason: checkout.ReasonFraudulent}, merchantActor, t0); err != nil || r.Amount != tt.amount {
			t.Errorf("%s refund of %d = %+v, %v", tt.method, tt.amount, r, err)
		}
	}
}

// A refund request's body: both fields optional (null is not sent, and an
// empty body asks for all that is left), each checked at both sides of its
// bounds, unknown fields refused, every violation reported.
func TestParseRefundRequest(t *testing.T) {
	for _, tt := range []struct {
		body   string
		amount *int64
		reason checkout.RefundReason
		errs   []string // code param, in order
	}{
		{"", nil, "", nil},
		{"  \n", nil, "", nil},
		{"{}", nil, "", nil},
		{`{"amount":null,"reason":null}`, nil, "", nil},
		{`{"amount":1}`, ptr[int64](1), "", nil},
		{`{"amount":100000000,"reason":"fraudulent"}`, ptr[int64](100000000), checkout.ReasonFraudulent, nil},
		{`{"reason":"duplicate"}`, nil, checkout.ReasonDuplicate, nil},
		{`{"amount":0}`, nil, "", []string{"out_of_range amount"}},
		{`{"amount":-5}`, nil, "", []string{"out_of_range amount"}},
		{`{"amount":100000001}`, nil, "", []string{"out_of_range amount"}},
		{`{"amount":1.5}`, nil, "", []string{"invalid_type amount"}},
		{`{"amount":"500"}`, nil, "", []string{"invalid_type amount"}},
		{`{"reason":"changed_mind"}`, nil, "", []string{"invalid_value reason"}},
		{`{"reason":7}`, nil, "", []string{"invalid_type reason"}},
		{`{"amount":5,"currency":"USD","reason":"x"}`, nil, "", []string{"unknown_field currency", "invalid_value reason"}},
	} {
		p, err := checkout.ParseRefundRequest([]byte(tt.body))
		var got []string
		var ce *checkout.Error
		if errors.As(err, &ce) {
			for _, d := range ce.Details {
				got = append(got, d.Code+" "+d.Param)
			}
			if ce.Code != checkout.EValidationFailed {
				t.Errorf("ParseRefundRequest(%s) code = %s; want validation_failed", tt.body, ce.Code)
			}
		} else if err != nil {
			t.Errorf("ParseRefundRequest(%s) = %v", tt.body, err)
		}
		if !slices.Equal(got, tt.errs) {
			t.Errorf("ParseRefundRequest(%s) violations = %v; want %v", tt.body, got, tt.errs)
		}
		if tt.errs == nil && ((p.Amount == nil) != (tt.amount == nil) || p.Amount != nil && *p.Amount != *tt.amount || p.Reason != tt.reason) {
			t.Errorf("ParseRefundRequest(%s) = %+v; want amount %v, reason %q", tt.body, p, tt.amount, tt.reason)
		}
	}
	for _, body := range []string{"[]", "nonsense", `{"amount":1`, `"x"`} {
		if _, err := checkout.ParseRefundRequest([]byte(body)); !checkout.IsCode(err, checkout.EInvalidJSON) {
			t.Errorf("ParseRefundRequest(%s) = %v; want invalid_json", body, err)
		}
	}
}

// A refund that succeeded and then failed at the card acquirer gives the
// merchant back what it refunded: the payment follows back, from refunded
// to partially refunded to succeeded, and only a succeeded refund turns.
func TestRefundReverse(t *testing.T) {
	p := succeededPayment(t, checkout.MethodCard)
	var rs []*checkout.Refund
	for _, amount := range []int64{2000, 3000} {
		r, err := checkout.NewRefund(p, checkout.RefundParams{Amount: ptr(amount)}, merchantActor, t0)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Succeed(p, t0); err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	if p.Status != checkout.PaymentRefunded {
		t.Fatalf("payment %s; want refunded", p.Status)
	}
	later := t0.Add(72 * time.Hour)
	if err := rs[1].Reverse(p, checkout.RefundFailDeclined, later); err != nil {
		t.Fatal(err)
	}
	if rs[1].Status != checkout.RefundFailed || *rs[1].FailureCode != checkout.RefundFailDeclined || !rs[1].UpdatedAt.Equal(later) ||
		p.AmountRefunded != 2000 || p.Status != checkout.PaymentPartiallyRefunded || p.Refundable() != 3000 {
		t.Errorf("after the 3000 turned failed: refund %+v; payment %s with %d refunded, %d refundable", rs[1], p.Status, p.AmountRefunded, p.Refundable())
	}
	if err := rs[1].Reverse(p, checkout.RefundFailDeclined, later); !checkout.IsCode(err, checkout.EConflict) || p.AmountRefunded != 2000 {
		t.Errorf("a second reversal = %v, %d refunded; want conflict, nothing changed", err, p.AmountRefunded)
	}
	if err := rs[0].Reverse(p, checkout.RefundFailDeclined, later); err != nil || p.AmountRefunded != 0 || p.Status != checkout.PaymentSucceeded {
		t.Errorf("after both turned failed: %v; payment %s with %d refunded; want succeeded, 0", err, p.Status, p.AmountRefunded)
	}
	pending, err := checkout.NewRefund(p, checkout.RefundParams{Amount: ptr[int64](100)}, merchantActor, t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := pending.Reverse(p, checkout.RefundFailDeclined, later); !checkout.IsCode(err, checkout.EConflict) {
		t.Errorf("reversing a pending refund = %v; want conflict", err)
	}
}

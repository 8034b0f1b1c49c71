package stripepay

import (
	"time"

	"github.com/stripe/stripe-go/v85"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/pay"
)

// payment maps a PaymentIntent onto pay's terms.
func payment(pi *stripe.PaymentIntent) pay.AcquirerPayment {
	p := pay.AcquirerPayment{
		ID:                pi.ID,
		Status:            paymentStatus(pi),
		ClientSecret:      pi.ClientSecret,
		Amount:            pi.Amount,
		Currency:          string(pi.Currency),
		CheckoutPaymentID: pi.Metadata[MetaPaymentID],
		CheckoutSessionID: pi.Metadata[MetaSessionID],
		CheckoutStoreID:   pi.Metadata[MetaStoreID],
	}
	if e := pi.LastPaymentError; e != nil && (p.Status == pay.AcquirerFailed || p.Status == pay.AcquirerCanceled) {
		p.FailureCode = failureCode(string(e.Code), string(e.DeclineCode))
	}
	if ch := pi.LatestCharge; ch != nil {
		p.ChargeID = ch.ID
		if d := ch.PaymentMethodDetails; d != nil && d.Card != nil {
			p.Brand, p.Last4, p.Country = string(d.Card.Brand), d.Card.Last4, d.Card.Country
		}
	}
	return p
}

// paymentStatus maps a PaymentIntent's status (docs/payments.md, Card
// acquirers: Stripe, has the table). A PaymentIntent waiting for a payment
// method after an attempt failed is failed: Stripe would take another
// card on it, which is why the service cancels it first. requires_capture
// does not happen (capture is automatic); it and any status newer than
// stripe-go are pending, looked up again until they settle.
func paymentStatus(pi *stripe.PaymentIntent) pay.AcquirerStatus {
	switch pi.Status {
	case stripe.PaymentIntentStatusRequiresPaymentMethod:
		if pi.LastPaymentError != nil {
			return pay.AcquirerFailed
		}
		return pay.AcquirerPending
	case stripe.PaymentIntentStatusRequiresAction:
		return pay.AcquirerRequiresAction
	case stripe.PaymentIntentStatusSucceeded:
		return pay.AcquirerSucceeded
	case stripe.PaymentIntentStatusCanceled:
		return pay.AcquirerCanceled
	}
	return pay.AcquirerPending
}

// failureCode maps a failed attempt's decline code (more precise) or error
// code onto checkout's card failure codes; any decline without a
// counterpart is card_declined.
func failureCode(code, declineCode string) string {
	for _, c := range []string{declineCode, code} {
		switch c {
		case "insufficient_funds":
			return checkout.FailInsufficientFunds
		case "expired_card":
			return checkout.FailExpiredCard
		case "incorrect_cvc", "invalid_cvc":
			return checkout.FailIncorrectCVC
		case "processing_error":
			return checkout.FailProcessingError
		case "test_mode_decline":
			return checkout.FailTestModeLiveCard
		case "payment_intent_authentication_failure", "authentication_required":
			return checkout.FailAuthenticationFailed
		}
	}
	return checkout.FailCardDeclined
}

// refund maps a Stripe refund onto pay's terms. requires_action (a refund
// waiting for the buyer's bank details, which card refunds never need) is
// pending.
func refund(r *stripe.Refund) pay.AcquirerRefund {
	out := pay.AcquirerRefund{ID: r.ID, Amount: r.Amount, CheckoutRefundID: r.Metadata[MetaRefundID]}
	switch r.Status {
	case stripe.RefundStatusSucceeded:
		out.Status = pay.AcquirerSucceeded
	case stripe.RefundStatusFailed:
		out.Status = pay.AcquirerFailed
		out.FailureCode = refundFailure(r.FailureReason)
	case stripe.RefundStatusCanceled:
		out.Status = pay.AcquirerCanceled
	default:
		out.Status = pay.AcquirerPending
	}
	return out
}

// refundFailure maps why Stripe could not give the money back: the card is
// closed (expired, canceled, lost or stolen), or any other refusal.
func refundFailure(reason stripe.RefundFailureReason) string {
	switch reason {
	case stripe.RefundFailureReasonExpiredOrCanceledCard, stripe.RefundFailureReasonLostOrStolenCard:
		return checkout.RefundFailExpiredOrCanceledCard
	}
	return checkout.RefundFailDeclined
}

// disputeOf maps a Stripe dispute onto pay's terms. Its fee is the sum of
// the fees of its balance transactions (the withdrawal's, less any given
// back); 0 when Stripe withdrew nothing (an inquiry, warning_*).
func disputeOf(d *stripe.Dispute) pay.AcquirerDispute {
	out := pay.AcquirerDispute{
		ID:       d.ID,
		Amount:   d.Amount,
		Currency: string(d.Currency),
		Reason:   string(disputeReason(d.Reason)),
		Status:   string(disputeStatus(d.Status)),
	}
	if d.PaymentIntent != nil {
		out.AcquirerPayment = d.PaymentIntent.ID
		out.CheckoutPaymentID = d.PaymentIntent.Metadata[MetaPaymentID]
	}
	if d.EvidenceDetails != nil && d.EvidenceDetails.DueBy != 0 {
		out.EvidenceDueBy = time.Unix(d.EvidenceDetails.DueBy, 0).UTC()
	}
	for _, bt := range d.BalanceTransactions {
		if bt != nil {
			out.Fee += bt.Fee
		}
	}
	return out
}

// disputeReason maps Stripe's reasons onto checkout's four: those with a
// counterpart to it, every other one general.
func disputeReason(r stripe.DisputeReason) checkout.DisputeReason {
	switch r {
	case stripe.DisputeReasonFraudulent:
		return checkout.DisputeFraudulent
	case stripe.DisputeReasonProductNotReceived:
		return checkout.DisputeProductNotReceived
	case stripe.DisputeReasonDuplicate:
		return checkout.DisputeDuplicate
	}
	return checkout.DisputeGeneral
}

// disputeStatus maps Stripe's dispute statuses onto checkout's. An inquiry
// (warning_needs_response, warning_under_review) is answered like a
// dispute; one that closed without becoming a chargeback
// (warning_closed), a dispute prevented, and the old charge_refunded (the
// merchant refunded the payment during the inquiry) kept the merchant's
// money at Stripe: won. A status newer than stripe-go needs a response.
func disputeStatus(s stripe.DisputeStatus) checkout.DisputeStatus {
	switch s {
	case stripe.DisputeStatusUnderReview, stripe.DisputeStatusWarningUnderReview:
		return checkout.DisputeUnderReview
	case stripe.DisputeStatusWon, stripe.DisputeStatusWarningClosed, stripe.DisputeStatusPrevented, "charge_refunded":
		return checkout.DisputeWon
	case stripe.DisputeStatusLost:
		return checkout.DisputeLost
	}
	return checkout.DisputeNeedsResponse
}

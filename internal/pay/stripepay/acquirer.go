package stripepay

import (
	"context"
	"strings"
	"time"

	"github.com/stripe/stripe-go/v85"

	"github.com/checkoutd/checkoutd/internal/pay"
)

// Metadata keys of checkoutd's ids on a PaymentIntent (Stripe copies them
// to its charge) and on a refund. A webhook without them is not checkoutd's.
const (
	MetaPaymentID = "checkoutd_payment_id"
	MetaSessionID = "checkoutd_session_id"
	MetaStoreID   = "checkoutd_store_id"
	MetaRefundID  = "checkoutd_refund_id"
)

// Acquirer is one store's Stripe account, a pay.Acquirer.
type Acquirer struct {
	client        *stripe.Client
	webhookSecret string
	// account is the connected account acted for (Stripe Connect), ""
	// for the key's own.
	account   string
	tolerance time.Duration
}

var _ pay.Acquirer = (*Acquirer)(nil)

// String and GoString keep the store's keys out of logs.
func (*Acquirer) String() string   { return "stripepay.Acquirer" }
func (*Acquirer) GoString() string { return "stripepay.Acquirer{}" }

// Capabilities implements pay.Acquirer: refunds and disputes through
// Stripe; the merchant answers a dispute in Stripe's dashboard.
func (*Acquirer) Capabilities() pay.AcquirerCapabilities {
	return pay.AcquirerCapabilities{Refunds: true, Disputes: true}
}

// params sets what every request carries: the connected account, and the
// idempotency key of a request that creates or changes something.
func (a *Acquirer) params(p *stripe.Params, idempotencyKey string) {
	if a.account != "" {
		p.SetStripeAccount(a.account)
	}
	if idempotencyKey != "" {
		p.SetIdempotencyKey(idempotencyKey)
	}
}

// CreatePayment implements pay.Acquirer: a PaymentIntent for the card only
// (payment_method_types, so no automatic payment methods), which the
// page's Payment Element confirms.
func (a *Acquirer) CreatePayment(ctx context.Context, r pay.AcquirerPaymentRequest) (pay.AcquirerPayment, error) {
	p := &stripe.PaymentIntentCreateParams{
		Amount:             stripe.Int64(r.Amount),
		Currency:           stripe.String(strings.ToLower(r.Currency)),
		PaymentMethodTypes: []*string{stripe.String("card")},
		Metadata: map[string]string{
			MetaPaymentID: r.PaymentID,
			MetaSessionID: r.SessionID,
			MetaStoreID:   r.StoreID,
		},
	}
	if r.StatementDescriptor != "" {
		p.StatementDescriptorSuffix = stripe.String(r.StatementDescriptor)
	}
	a.params(&p.Params, r.IdempotencyKey)
	pi, err := a.client.V1PaymentIntents.Create(ctx, p)
	if err != nil {
		return pay.AcquirerPayment{}, callError("create the payment", err)
	}
	return payment(pi), nil
}

// LookupPayment implements pay.Acquirer, with the latest charge expanded
// for its card.
func (a *Acquirer) LookupPayment(ctx context.Context, id string) (pay.AcquirerPayment, error) {
	p := &stripe.PaymentIntentRetrieveParams{}
	p.AddExpand("latest_charge")
	a.params(&p.Params, "")
	pi, err := a.client.V1PaymentIntents.Retrieve(ctx, id, p)
	if err != nil {
		return pay.AcquirerPayment{}, callError("look the payment up", err)
	}
	return payment(pi), nil
}

// CancelPayment implements pay.Acquirer. Stripe refuses to cancel a
// PaymentIntent that succeeded or was canceled already
// (payment_intent_unexpected_state): then the PaymentIntent is looked up
// and returned as it is.
func (a *Acquirer) CancelPayment(ctx context.Context, id, idempotencyKey string) (pay.AcquirerPayment, error) {
	p := &stripe.PaymentIntentCancelParams{}
	p.AddExpand("latest_charge")
	a.params(&p.Params, idempotencyKey)
	pi, err := a.client.V1PaymentIntents.Cancel(ctx, id, p)
	if err == nil {
		return payment(pi), nil
	}
	if se, ok := err.(*stripe.Error); ok && se.Code == stripe.ErrorCodePaymentIntentUnexpectedState {
		return a.LookupPayment(ctx, id)
	}
	return pay.AcquirerPayment{}, callError("cancel the payment", err)
}

// Refund implements pay.Acquirer: a refund of the PaymentIntent's charge.
func (a *Acquirer) Refund(ctx context.Context, r pay.AcquirerRefundRequest) (pay.AcquirerRefund, error) {
	p := &stripe.RefundCreateParams{
		PaymentIntent: stripe.String(r.AcquirerPayment),
		Amount:        stripe.Int64(r.Amount),
		Metadata: map[string]string{
			MetaRefundID:  r.RefundID,
			MetaPaymentID: r.CheckoutPayment,
			MetaStoreID:   r.CheckoutStoreID,
		},
	}
	a.params(&p.Params, r.IdempotencyKey)
	re, err := a.client.V1Refunds.Create(ctx, p)
	if err != nil {
		return pay.AcquirerRefund{}, callError("refund the payment", err)
	}
	return refund(re), nil
}

// LookupRefund implements pay.Acquirer.
func (a *Acquirer) LookupRefund(ctx context.Context, id string) (pay.AcquirerRefund, error) {
	p := &stripe.RefundRetrieveParams{}
	a.params(&p.Params, "")
	re, err := a.client.V1Refunds.Retrieve(ctx, id, p)
	if err != nil {
		return pay.AcquirerRefund{}, callError("look the refund up", err)
	}
	return refund(re), nil
}

// LookupDispute implements pay.Acquirer, with the disputed PaymentIntent
// expanded for checkoutd's ids in its metadata: a dispute has none.
func (a *Acquirer) LookupDispute(ctx context.Context, id string) (pay.AcquirerDispute, error) {
	p := &stripe.DisputeRetrieveParams{}
	p.AddExpand("payment_intent")
	a.params(&p.Params, "")
	d, err := a.client.V1Disputes.Retrieve(ctx, id, p)
	if err != nil {
		return pay.AcquirerDispute{}, callError("look the dispute up", err)
	}
	return disputeOf(d), nil
}

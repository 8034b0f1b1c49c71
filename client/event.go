package client

import (
	"encoding/json"
	"fmt"
)

// The event types (docs/webhooks.md). checkoutd may add types: a receiver
// ignores the ones it does not know.
const (
	EventCheckoutCreated      = "checkout.created"
	EventCheckoutCompleted    = "checkout.completed"
	EventCheckoutExpired      = "checkout.expired"
	EventPaymentSucceeded     = "payment.succeeded"
	EventPaymentFailed        = "payment.failed"
	EventPaymentRefunded      = "payment.refunded"
	EventPaymentDisputed      = "payment.disputed"
	EventPaymentDisputeClosed = "payment.dispute_closed"
	EventWebhookTest          = "webhook.test"
)

// Event is the body of a webhook delivery. Data.Object is the object the
// event is about, as it was when the event happened: a session for
// checkout.*, a payment for payment.*, a WebhookTest for webhook.test. Read
// it with Session, Payment or WebhookTest.
type Event struct {
	ID         string    `json:"id"`     // evt_..., also the Service-Event-Id header
	Object     string    `json:"object"` // "event"
	Type       string    `json:"type"`
	Livemode   bool      `json:"livemode"`
	Created    int64     `json:"created"` // Unix seconds
	APIVersion string    `json:"api_version"`
	Data       EventData `json:"data"`
}

// EventData holds the event's object, undecoded.
type EventData struct {
	Object json.RawMessage `json:"object"`
}

// ObjectType is data.object's "object" field: checkout_session, payment or
// webhook_test.
func (e *Event) ObjectType() string {
	var o struct {
		Object string `json:"object"`
	}
	json.Unmarshal(e.Data.Object, &o)
	return o.Object
}

// Session decodes the session a checkout.* event carries.
func (e *Event) Session() (*Session, error) {
	var s Session
	return &s, e.decode("checkout_session", &s)
}

// Payment decodes the payment a payment.* event carries.
func (e *Event) Payment() (*Payment, error) {
	var p Payment
	return &p, e.decode("payment", &p)
}

// WebhookTest decodes the object of a webhook.test event.
func (e *Event) WebhookTest() (*WebhookTest, error) {
	var w WebhookTest
	return &w, e.decode("webhook_test", &w)
}

func (e *Event) decode(object string, v any) error {
	if got := e.ObjectType(); got != object {
		return fmt.Errorf("checkoutd: event %s (%s) carries %q, not %s", e.ID, e.Type, got, object)
	}
	if err := json.Unmarshal(e.Data.Object, v); err != nil {
		return fmt.Errorf("checkoutd: event %s: decode %s: %w", e.ID, object, err)
	}
	return nil
}

// Payment is a payment as payment.* events carry it. Amounts are in minor
// units; Net = Amount - Fee - AmountRefunded.
type Payment struct {
	ID             string  `json:"id"`     // pay_...
	Object         string  `json:"object"` // "payment"
	Livemode       bool    `json:"livemode"`
	Status         string  `json:"status"` // processing, succeeded, failed, partially_refunded, refunded, disputed, dispute_lost
	Amount         int64   `json:"amount"`
	AmountRefunded int64   `json:"amount_refunded"`
	Fee            int64   `json:"fee"`
	Net            int64   `json:"net"`
	Currency       string  `json:"currency"`
	Method         string  `json:"method"` // card, crypto or skins
	CardLast4      *string `json:"card_last4"`
	BuyerCountry   *string `json:"buyer_country"`
	CustomerName   *string `json:"customer_name"`
	CheckoutID     string  `json:"checkout_id"`
	FailureCode    *string `json:"failure_code"`
	FailureMessage *string `json:"failure_message"`
	CreatedAt      int64   `json:"created_at"`
}

// WebhookTest is the object of the event Send test event sends.
type WebhookTest struct {
	Object     string `json:"object"` // "webhook_test"
	EndpointID string `json:"endpoint_id"`
	Message    string `json:"message"`
}

package stripepay

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/stripe/stripe-go/v85/webhook"

	"github.com/checkoutd/checkoutd/internal/pay"
)

// eventKinds maps the Stripe events checkoutd acts on; every other is
// pay.AcquirerEventOther.
var eventKinds = map[string]pay.AcquirerEventKind{
	"payment_intent.succeeded":       pay.AcquirerEventPayment,
	"payment_intent.payment_failed":  pay.AcquirerEventPayment,
	"payment_intent.canceled":        pay.AcquirerEventPayment,
	"payment_intent.processing":      pay.AcquirerEventPayment,
	"payment_intent.requires_action": pay.AcquirerEventPayment,
	"charge.refunded":                pay.AcquirerEventRefund,
	"charge.refund.updated":          pay.AcquirerEventRefund,
	"refund.created":                 pay.AcquirerEventRefund,
	"refund.updated":                 pay.AcquirerEventRefund,
	"charge.dispute.created":         pay.AcquirerEventDisputeOpened,
	"charge.dispute.closed":          pay.AcquirerEventDisputeClosed,
}

// rawEvent is the part of a Stripe event checkoutd reads: its id, type and
// the object's ids and metadata. These fields are the same in every API
// version, which is why an event of another version than stripe-go's is
// accepted (webhook.ConstructEventOptions.IgnoreAPIVersionMismatch): the
// event is only a hint, and what it names is looked up with stripe-go's
// own version. Check warns about an endpoint of another version.
type rawEvent struct {
	ID     string `json:"id"`
	Object string `json:"object"`
	Type   string `json:"type"`
	Data   struct {
		Object struct {
			ID            string            `json:"id"`
			Object        string            `json:"object"`
			Metadata      map[string]string `json:"metadata"`
			PaymentIntent json.RawMessage   `json:"payment_intent"`
			Refunds       *struct {
				Data []struct {
					ID string `json:"id"`
				} `json:"data"`
			} `json:"refunds"`
		} `json:"object"`
	} `json:"data"`
}

// ParseWebhook implements pay.Acquirer. The signature is checked by
// stripe-go's webhook package with the store's signing secret; its age is
// checked here against now (the service's clock, which stripe-go's check
// would not use), with the connector's tolerance. An event whose signature
// or age fails is still returned, parsed from the raw JSON, with Verified
// false: a hint to look up.
func (a *Acquirer) ParseWebhook(body []byte, header http.Header, now time.Time) (pay.AcquirerEvent, error) {
	var raw rawEvent
	if err := json.Unmarshal(body, &raw); err != nil || raw.Object != "event" || raw.ID == "" || raw.Type == "" {
		return pay.AcquirerEvent{}, errors.New("it is not a Stripe event")
	}
	obj := raw.Data.Object
	ev := pay.AcquirerEvent{ID: raw.ID, Kind: pay.AcquirerEventOther}
	if k, ok := eventKinds[raw.Type]; ok {
		ev.Kind = k
	}
	ev.Verified = a.verified(body, header.Get("Stripe-Signature"), now)
	ev.CheckoutPaymentID = obj.Metadata[MetaPaymentID]
	switch obj.Object {
	case "payment_intent":
		ev.AcquirerPayment = obj.ID
	case "charge":
		ev.AcquirerPayment = idOf(obj.PaymentIntent)
		if obj.Refunds != nil {
			for _, r := range obj.Refunds.Data {
				ev.AcquirerRefunds = append(ev.AcquirerRefunds, r.ID)
			}
		}
	case "refund":
		ev.AcquirerPayment = idOf(obj.PaymentIntent)
		ev.AcquirerRefunds = []string{obj.ID}
	case "dispute":
		// A dispute carries no metadata of its own: CheckoutPaymentID is
		// "", and the service learns the payment from LookupDispute.
		ev.AcquirerPayment = idOf(obj.PaymentIntent)
		ev.AcquirerDispute = obj.ID
	}
	return ev, nil
}

// verified checks the Stripe-Signature header: signed with the store's
// secret, and no older than the tolerance at now.
func (a *Acquirer) verified(body []byte, sig string, now time.Time) bool {
	if a.webhookSecret == "" || sig == "" {
		return false
	}
	_, err := webhook.ConstructEventWithOptions(body, sig, a.webhookSecret, webhook.ConstructEventOptions{
		IgnoreTolerance:          true,
		IgnoreAPIVersionMismatch: true,
	})
	if err != nil {
		return false
	}
	t, ok := signedAt(sig)
	return ok && now.Sub(t) <= a.tolerance
}

// signedAt reads the timestamp of a Stripe-Signature header (t=...): the
// last one, which is the one stripe-go checked the signature with.
func signedAt(sig string) (time.Time, bool) {
	t, ok := time.Time{}, false
	for _, part := range strings.Split(sig, ",") {
		if v, found := strings.CutPrefix(part, "t="); found {
			n, err := strconv.ParseInt(v, 10, 64)
			t, ok = time.Unix(n, 0), err == nil
		}
	}
	return t, ok
}

// idOf reads an id that Stripe gives as a string, or as an object when
// expanded; "" for null.
func idOf(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	var id string
	if json.Unmarshal(raw, &id) == nil {
		return id
	}
	var obj struct {
		ID string `json:"id"`
	}
	json.Unmarshal(raw, &obj)
	return obj.ID
}

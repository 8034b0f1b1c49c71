package checkout

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// APIVersion is carried by every event.
const APIVersion = "v1"

// Event types (SPEC.md "Events").
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

// EventTypes lists every event type in the order of SPEC.md's table.
var EventTypes = []string{
	EventCheckoutCreated, EventCheckoutCompleted, EventCheckoutExpired,
	EventPaymentSucceeded, EventPaymentFailed, EventPaymentRefunded,
	EventPaymentDisputed, EventPaymentDisputeClosed, EventWebhookTest,
}

// EventDescriptions says in a sentence when each type is sent (SPEC.md's
// table), for the dashboard's event picker and lists.
var EventDescriptions = map[string]string{
	EventCheckoutCreated:      "A checkout session was created.",
	EventCheckoutCompleted:    "A buyer paid a checkout session: the signal to fulfil the order.",
	EventCheckoutExpired:      "A session ran out of time unpaid (sent when the service next looks at it).",
	EventPaymentSucceeded:     "A payment went through.",
	EventPaymentFailed:        "A payment attempt was declined or failed.",
	EventPaymentRefunded:      "Part or all of a payment was refunded; check amount_refunded.",
	EventPaymentDisputed:      "A buyer opened a dispute.",
	EventPaymentDisputeClosed: "A dispute was resolved.",
	EventWebhookTest:          "Send test event was pressed in the dashboard; only that endpoint receives it.",
}

// Event reports a state change. It is stored in the same transaction as the
// change (a transactional outbox) and delivered to webhook endpoints.
type Event struct {
	ID         string
	MerchantID string
	Mode       Mode
	Type       string
	CreatedAt  time.Time
	// Object is the JSON of data.object: the session or payment as it was
	// when the event happened.
	Object json.RawMessage
}

// NewEvent returns an event of type typ about object, which is marshalled
// now so the event keeps the state of the moment. An object marshalled
// already (json.RawMessage, which must not change after) is kept as it is:
// marshalling it again would only check it, and the service makes events
// inside the transaction that stores them.
func NewEvent(typ, merchantID string, mode Mode, object any, now time.Time) (*Event, error) {
	raw, ok := object.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(object); err != nil {
			return nil, err
		}
	}
	return &Event{
		ID:         NewEventID(),
		MerchantID: merchantID,
		Mode:       mode,
		Type:       typ,
		CreatedAt:  now.Truncate(time.Second),
		Object:     raw,
	}, nil
}

type eventJSON struct {
	ID         string    `json:"id"`
	Object     string    `json:"object"`
	Type       string    `json:"type"`
	Livemode   bool      `json:"livemode"`
	Created    int64     `json:"created"`
	APIVersion string    `json:"api_version"`
	Data       eventData `json:"data"`
}

type eventData struct {
	Object json.RawMessage `json:"object"`
}

// MarshalJSON renders the Event object of SPEC.md: its Payload.
func (e *Event) MarshalJSON() ([]byte, error) { return e.Payload() }

// Payload is the JSON body of e's webhook deliveries, byte for byte: the
// Event object of SPEC.md, whose data.object is Object as stored when the
// event happened, never re-encoded from a newer state.
//
// It is what encoding/json makes of the envelope with Object as a
// json.RawMessage (checked against it in the tests, fuzzed), written in
// one pass over Object: the envelope is encoded with an empty object in
// its place, and Object compacted and HTML-escaped, as encoding/json would,
// into that place. Through json.Marshal, Object was checked and compacted
// twice, once for the envelope and once more for the Marshaler's output:
// 8% of the webhook dispatcher's CPU while it drains a backlog.
func (e *Event) Payload() ([]byte, error) {
	head, err := json.Marshal(eventJSON{
		ID:         e.ID,
		Object:     "event",
		Type:       e.Type,
		Livemode:   e.Mode.Live(),
		Created:    e.CreatedAt.Unix(),
		APIVersion: APIVersion,
		Data:       eventData{Object: json.RawMessage(`{}`)},
	})
	if err != nil {
		return nil, err
	}
	const tail = `{}}}`
	if !bytes.HasSuffix(head, []byte(tail)) {
		return nil, fmt.Errorf("event %s: the envelope does not end with its data", e.ID)
	}
	obj := e.Object
	if obj == nil {
		obj = json.RawMessage("null") // as json.RawMessage encodes nil
	}
	var compact bytes.Buffer
	compact.Grow(len(obj))
	if err := json.Compact(&compact, obj); err != nil {
		return nil, fmt.Errorf("event %s: data.object: %w", e.ID, err)
	}
	out := bytes.NewBuffer(make([]byte, 0, len(head)+compact.Len()+16))
	out.Write(head[:len(head)-len(tail)])
	json.HTMLEscape(out, compact.Bytes())
	out.WriteString(`}}`)
	return out.Bytes(), nil
}

// ObjectID is the id of the object the event is about (data.object.id):
// a session's or payment's id; "" when the object has none.
func (e *Event) ObjectID() string {
	// Sessions and payments marshal their id first: the store reads it off
	// the front of every event it writes, without decoding the object.
	if rest, ok := bytes.CutPrefix(e.Object, []byte(`{"id":"`)); ok {
		if i := bytes.IndexByte(rest, '"'); i > 0 && bytes.IndexByte(rest[:i], '\\') < 0 {
			return string(rest[:i])
		}
	}
	var o struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(e.Object, &o) != nil {
		return ""
	}
	return o.ID
}

package checkout

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// MaxEndpointsPerStore is how many webhook endpoints one store may have.
const MaxEndpointsPerStore = 16

// AllEvents subscribes an endpoint to every event type, those added later
// included.
const AllEvents = "*"

// WebhookSecretPrefix starts every webhook signing secret.
const WebhookSecretPrefix = "whsec_"

// Endpoint is a merchant's HTTPS address that receives the events of one
// store and mode.
type Endpoint struct {
	ID         string
	MerchantID string
	Mode       Mode
	URL        string
	// Events lists the subscribed types, or is [AllEvents].
	Events    []string
	Enabled   bool
	Secret    string // whsec_...; signs every request; kept as issued, never logged
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Subscribes reports whether the endpoint receives events of typ.
// webhook.test reaches an endpoint only when sent to it (Send test event),
// never through a subscription.
func (e *Endpoint) Subscribes(typ string) bool {
	if typ == EventWebhookTest {
		return false
	}
	return slices.Contains(e.Events, AllEvents) || slices.Contains(e.Events, typ)
}

// SubscribesAll reports whether the endpoint subscribes to every type.
func (e *Endpoint) SubscribesAll() bool { return slices.Contains(e.Events, AllEvents) }

// EndpointParams are the inputs of NewEndpoint. The URL must have been
// checked by the webhook guard (it needs the network).
type EndpointParams struct {
	MerchantID string
	Mode       Mode
	URL        string
	Events     []string
}

// NewEndpoint validates p and returns an enabled endpoint with a fresh id
// and signing secret.
func NewEndpoint(p EndpointParams, now time.Time) (*Endpoint, error) {
	var v violations
	if _, ok := ParseMode(string(p.Mode)); !ok {
		v.add("invalid_value", "mode", "mode must be test or live.")
	}
	events, err := normalizeEvents(p.Events)
	if err != nil {
		v.add("invalid_value", "events", err.Error())
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	now = now.Truncate(time.Second)
	return &Endpoint{
		ID:         NewID(PrefixEndpoint, 16),
		MerchantID: p.MerchantID,
		Mode:       p.Mode,
		URL:        p.URL,
		Events:     events,
		Enabled:    true,
		Secret:     NewWebhookSecret(),
		CreatedAt:  now,
		UpdatedAt:  now,
	}, nil
}

// ParseEvents reads the events an endpoint subscribes to: "all", or a
// comma-separated list of types.
func ParseEvents(s string) []string {
	if strings.TrimSpace(strings.ToLower(s)) == "all" {
		return []string{AllEvents}
	}
	var out []string
	for _, t := range strings.Split(s, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

func normalizeEvents(events []string) ([]string, error) {
	if len(events) == 0 {
		return nil, fmt.Errorf("events must be all or a list of event types")
	}
	if slices.Contains(events, AllEvents) {
		return []string{AllEvents}, nil
	}
	var out []string
	for _, t := range events {
		if t == EventWebhookTest || !slices.Contains(EventTypes, t) {
			return nil, fmt.Errorf("unknown event type %q; known: %s", t, strings.Join(SubscribableEventTypes(), ", "))
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out, nil
}

// SubscribableEventTypes lists the types an endpoint can subscribe to:
// every type but webhook.test.
func SubscribableEventTypes() []string {
	var out []string
	for _, t := range EventTypes {
		if t != EventWebhookTest {
			out = append(out, t)
		}
	}
	return out
}

// NewWebhookSecret returns a new signing secret: whsec_ and 43 base62
// characters.
func NewWebhookSecret() string { return WebhookSecretPrefix + NewSecret() }

// SignWebhook returns the Service-Webhook-Signature header of body sent at
// t: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<body>">, keyed with the whole
// secret string, prefix included (DESIGN.md section 8).
func SignWebhook(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac.Sum(nil))
}

// DeliveryStatus is the state of one event's delivery to one endpoint.
type DeliveryStatus string

// Delivery statuses: pending until an attempt succeeds (succeeded), the
// attempts run out (failed) or the endpoint is disabled (canceled).
const (
	DeliveryPending   DeliveryStatus = "pending"
	DeliverySucceeded DeliveryStatus = "succeeded"
	DeliveryFailed    DeliveryStatus = "failed"
	DeliveryCanceled  DeliveryStatus = "canceled"
)

// RetrySchedule is the wait after each failed attempt (SPEC.md Delivery):
// with the first attempt, 8 attempts over about two days.
var RetrySchedule = []time.Duration{
	time.Minute, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 24 * time.Hour,
}

// MaxDeliveryAttempts is how many attempts a delivery gets.
const MaxDeliveryAttempts = 8

// Delivery is one event on its way to one endpoint. The deliveries table is
// the dispatcher's queue.
type Delivery struct {
	ID         string
	EventID    string
	EndpointID string
	MerchantID string
	Mode       Mode
	Status     DeliveryStatus
	// Attempts counts finished attempts.
	Attempts       int
	NextAttemptAt  time.Time
	LastStatusCode int // 0 when the last attempt got no response
	LastError      string
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// NewDelivery returns a delivery of event e to endpoint ep, due at now.
func NewDelivery(e *Event, ep *Endpoint, now time.Time) *Delivery {
	return &Delivery{
		ID:            NewID(PrefixDelivery, 16),
		EventID:       e.ID,
		EndpointID:    ep.ID,
		MerchantID:    ep.MerchantID,
		Mode:          ep.Mode,
		Status:        DeliveryPending,
		NextAttemptAt: now,
		CreatedAt:     now,
		UpdatedAt:     now,
	}
}

// Finished reports whether no attempt will follow.
func (d *Delivery) Finished() bool { return d.Status != DeliveryPending }

// Attempt is the record of one attempt to deliver.
type Attempt struct {
	DeliveryID string
	// Number is 1 for the first attempt (Service-Delivery-Attempt).
	Number     int
	StartedAt  time.Time
	Duration   time.Duration
	StatusCode int    // 0 when no response came
	Error      string // why it failed; "" on success
	// ResponseBody holds the first 4 KiB of the response.
	ResponseBody string
}

// MaxAttemptResponse is how much of a response body an attempt keeps.
const MaxAttemptResponse = 4 << 10

// Succeeded reports whether the receiver answered 2xx.
func (a *Attempt) Succeeded() bool { return a.Error == "" && a.StatusCode >= 200 && a.StatusCode < 300 }

// Record applies a finished attempt, ended at now: success finishes the
// delivery; a failure schedules the next attempt, or fails the delivery
// after the last. A delivery that is no longer pending (canceled while the
// attempt ran) keeps its status.
func (d *Delivery) Record(a *Attempt, now time.Time) {
	if d.Finished() {
		return
	}
	d.Attempts++
	d.LastStatusCode = a.StatusCode
	d.LastError = a.Error
	d.UpdatedAt = now
	switch {
	case a.Succeeded():
		d.Status = DeliverySucceeded
	case d.Attempts >= MaxDeliveryAttempts:
		d.Status = DeliveryFailed
	default:
		d.NextAttemptAt = now.Add(RetrySchedule[d.Attempts-1])
	}
}

// Cancel stops a pending delivery.
func (d *Delivery) Cancel(now time.Time) {
	if !d.Finished() {
		d.Status = DeliveryCanceled
		d.UpdatedAt = now
	}
}

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
	// Kind is EndpointHTTPS, or EndpointListener for `checkoutd listen`,
	// whose URL is "".
	Kind EndpointKind
	URL  string
	// ListenerName names a listener within its store; "" for an HTTPS
	// endpoint.
	ListenerName string
	// SeenAt is when a listener was last connected (now, while it is);
	// zero for an HTTPS endpoint.
	SeenAt time.Time
	// Events lists the subscribed types, or is [AllEvents].
	Events []string
	// Description is the merchant's note on what the endpoint is for; ""
	// when none.
	Description string
	Enabled     bool
	Secret      string // whsec_...; signs every request; kept as issued, never logged
	// PreviousSecret is the secret a roll with overlap replaced (Roll): it
	// signs every request beside Secret until PreviousSecretExpiresAt, and
	// none after. "" when there is none.
	PreviousSecret          string
	PreviousSecretExpiresAt time.Time
	CreatedAt               time.Time
	UpdatedAt               time.Time
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
	MerchantID  string
	Mode        Mode
	URL         string
	Events      []string
	Description string
}

// MaxEndpointDescriptionLen is how many characters an endpoint's
// description may have. SPEC.md sets no limit; this one is metadata
// values' (DESIGN.md 4.5): room for a sentence or two, not a document.
const MaxEndpointDescriptionLen = 500

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
	description := normalizeDescription(&v, p.Description)
	if err := v.err(); err != nil {
		return nil, err
	}
	now = now.Truncate(time.Second)
	return &Endpoint{
		ID:          NewID(PrefixEndpoint, 16),
		MerchantID:  p.MerchantID,
		Mode:        p.Mode,
		Kind:        EndpointHTTPS,
		URL:         p.URL,
		Events:      events,
		Description: description,
		Enabled:     true,
		Secret:      NewWebhookSecret(),
		CreatedAt:   now,
		UpdatedAt:   now,
	}, nil
}

// normalizeDescription trims an endpoint's description and checks it: at
// most MaxEndpointDescriptionLen characters, one line, no control
// characters. "" (no description) is allowed.
func normalizeDescription(v *violations, s string) string {
	s = strings.TrimSpace(s)
	v.checkText("description", s, 0, MaxEndpointDescriptionLen, false)
	return s
}

// EndpointUpdate is a change of an endpoint's URL, events or description;
// a nil field is left as it is. The URL must have been checked by the
// webhook guard, as for NewEndpoint.
type EndpointUpdate struct {
	URL         *string
	Events      []string // nil: unchanged; empty: refused, as at creation
	Description *string
}

// Update applies u to e at now, by the rules of NewEndpoint. On error e is
// unchanged.
func (e *Endpoint) Update(u EndpointUpdate, now time.Time) error {
	var v violations
	next := *e
	if u.URL != nil && e.IsListener() {
		v.add("invalid_value", "url", "A listener has no URL: checkoutd listen --forward-to says where its events go.")
	} else if u.URL != nil {
		next.URL = *u.URL
	}
	if u.Events != nil {
		events, err := normalizeEvents(u.Events)
		if err != nil {
			v.add("invalid_value", "events", err.Error())
		}
		next.Events = events
	}
	if u.Description != nil {
		next.Description = normalizeDescription(&v, *u.Description)
	}
	if err := v.err(); err != nil {
		return err
	}
	next.UpdatedAt = now
	*e = next
	return nil
}

// MaxSecretOverlap is the longest a rolled signing secret may stay valid
// beside the new one (DESIGN.md 9).
const MaxSecretOverlap = 24 * time.Hour

// RollSecret gives e a new signing secret at now. With keep zero the old
// secret stops signing at once (SPEC.md's Roll secret); with keep up to
// MaxSecretOverlap it keeps signing beside the new one until now+keep, so
// a receiver can switch without refusing a request. The secret kept is
// always the one just replaced: a roll during an overlap ends the older
// previous secret at once, so at most two secrets are ever valid.
func (e *Endpoint) RollSecret(keep time.Duration, now time.Time) error {
	if keep < 0 || keep > MaxSecretOverlap {
		return &Error{
			Code:    EValidationFailed,
			Message: fmt.Sprintf("The old secret can be kept valid for 0 to 24 hours, not %s.", keep),
			Param:   "keep",
			Details: []Violation{{Code: "out_of_range", Param: "keep", Message: "keep must be between 0 and 24 hours"}},
		}
	}
	e.PreviousSecret, e.PreviousSecretExpiresAt = "", time.Time{}
	if keep > 0 {
		e.PreviousSecret = e.Secret
		e.PreviousSecretExpiresAt = ceilSecond(now.Add(keep))
	}
	e.Secret = NewWebhookSecret()
	e.UpdatedAt = now
	return nil
}

// ceilSecond rounds t up to a whole second (the precision endpoints are
// stored with), so a secret is kept at least as long as asked.
func ceilSecond(t time.Time) time.Time {
	if s := t.Truncate(time.Second); !s.Equal(t) {
		return s.Add(time.Second)
	}
	return t
}

// SigningSecrets returns the secrets that sign a request sent at now: the
// current one first, then the previous one while its overlap lasts.
func (e *Endpoint) SigningSecrets(now time.Time) []string {
	if e.PreviousSecret != "" && now.Before(e.PreviousSecretExpiresAt) {
		return []string{e.Secret, e.PreviousSecret}
	}
	return []string{e.Secret}
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
	return SignWebhookSecrets([]string{secret}, t, body)
}

// SignWebhookSecrets returns the Service-Webhook-Signature header of body
// sent at t signed with each secret, as Stripe signs during a roll: one t
// and one v1= per secret, in the order given
// (t=<unix>,v1=<current>,v1=<previous>). A receiver accepts the request
// when any v1 matches the secret it holds.
func SignWebhookSecrets(secrets []string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	var b strings.Builder
	b.WriteString("t=" + ts)
	for _, secret := range secrets {
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(ts))
		mac.Write([]byte{'.'})
		mac.Write(body)
		b.WriteString(",v1=" + hex.EncodeToString(mac.Sum(nil)))
	}
	return b.String()
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
	ID      string
	EventID string
	// EventType is the event's type, kept on the delivery so that lists
	// filter by it without reading the events.
	EventType  string
	EndpointID string
	MerchantID string
	Mode       Mode
	Status     DeliveryStatus
	// Attempts counts finished attempts.
	Attempts       int
	NextAttemptAt  time.Time
	LastStatusCode int // 0 when the last attempt got no response
	LastError      string
	// ResentAs is the id of the newest delivery a resend (Resend or Retry
	// all failed) made of this one; "" when it was never resent. Retry all
	// failed resends only deliveries without one, so it never resends a
	// delivery twice.
	ResentAs  string
	CreatedAt time.Time
	// UpdatedAt is when the delivery last changed: for a finished one,
	// when it finished (a resend does not change it).
	UpdatedAt time.Time
}

// NewDelivery returns a delivery of event e to endpoint ep, due at now.
func NewDelivery(e *Event, ep *Endpoint, now time.Time) *Delivery {
	return newDelivery(e.ID, e.Type, ep, now)
}

// NewRedelivery returns a new delivery of old's event to ep (old's
// endpoint, as it is now), due at now: a resend, with attempts from 1.
func NewRedelivery(old *Delivery, ep *Endpoint, now time.Time) *Delivery {
	return newDelivery(old.EventID, old.EventType, ep, now)
}

func newDelivery(eventID, eventType string, ep *Endpoint, now time.Time) *Delivery {
	next := now
	if ep.IsListener() {
		next = ListenerHold
	}
	return &Delivery{
		ID:            NewDeliveryID(),
		EventID:       eventID,
		EventType:     eventType,
		EndpointID:    ep.ID,
		MerchantID:    ep.MerchantID,
		Mode:          ep.Mode,
		Status:        DeliveryPending,
		NextAttemptAt: next,
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
	if !d.count(a, now) {
		return
	}
	switch {
	case a.Succeeded():
		d.Status = DeliverySucceeded
	case d.Attempts >= MaxDeliveryAttempts:
		d.Status = DeliveryFailed
	default:
		d.NextAttemptAt = now.Add(RetrySchedule[d.Attempts-1])
	}
}

// count notes attempt a, ended at now, on a pending delivery; it reports
// false, noting nothing, when the delivery is finished.
func (d *Delivery) count(a *Attempt, now time.Time) bool {
	if d.Finished() {
		return false
	}
	d.Attempts++
	d.LastStatusCode = a.StatusCode
	d.LastError = a.Error
	d.UpdatedAt = now
	return true
}

// Cancel stops a pending delivery.
func (d *Delivery) Cancel(now time.Time) {
	if !d.Finished() {
		d.Status = DeliveryCanceled
		d.UpdatedAt = now
	}
}

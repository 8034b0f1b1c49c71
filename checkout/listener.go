package checkout

import (
	"fmt"
	"strings"
	"time"
)

// EndpointKind says how an endpoint is reached.
type EndpointKind string

// Endpoint kinds: an HTTPS URL the dispatcher posts to, or a listener, the
// stream a developer's `checkoutd listen` holds open, which forwards each
// delivery to a URL on the developer's own machine.
const (
	EndpointHTTPS    EndpointKind = "https"
	EndpointListener EndpointKind = "listener"
)

// Listener rules (docs/webhooks.md, Local development).
const (
	// ListenerIdleLimit is how long a listener keeps receiving events after
	// its last connection ends: events made while `checkoutd listen` is
	// away wait for it this long, and none after.
	ListenerIdleLimit = 24 * time.Hour
	// MaxListenersPerStore is how many listeners a store may have beside
	// its endpoints. At the limit, a new name replaces the listener idle
	// the longest, if one has been idle past ListenerIdleLimit.
	MaxListenersPerStore = 10
	// MaxListenerNameLen is how long a listener's name may be.
	MaxListenerNameLen = 100
)

// ListenerHold is the next attempt time of every delivery to a listener:
// it is never due for the dispatcher, which posts only to HTTPS endpoints.
// The listener's stream takes its deliveries in order instead.
var ListenerHold = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)

// IsListener reports whether the endpoint is a listener.
func (e *Endpoint) IsListener() bool { return e.Kind == EndpointListener }

// Receives reports whether an event made at now gets a delivery to the
// endpoint, subscriptions aside: an enabled HTTPS endpoint always does; a
// listener only while connected or within ListenerIdleLimit of its last
// connection.
func (e *Endpoint) Receives(now time.Time) bool {
	if !e.Enabled {
		return false
	}
	return !e.IsListener() || !now.After(e.SeenAt.Add(ListenerIdleLimit))
}

// ListenerParams are the inputs of NewListener.
type ListenerParams struct {
	MerchantID string
	// Name tells a developer's listeners apart: `checkoutd listen` sends
	// the machine's host name unless told another. Listening again under a
	// name resumes its listener, with its secret and waiting deliveries.
	Name   string
	Events []string
}

// NormalizeListener checks p and returns it with its name trimmed and its
// events in canonical form (every type when none is given).
func NormalizeListener(p ListenerParams) (ListenerParams, error) {
	var v violations
	p.Name = strings.TrimSpace(p.Name)
	v.checkText("name", p.Name, 1, MaxListenerNameLen, false)
	if len(p.Events) == 0 {
		p.Events = []string{AllEvents}
	}
	events, err := normalizeEvents(p.Events)
	if err != nil {
		v.add("invalid_value", "events", err.Error())
	}
	p.Events = events
	return p, v.err()
}

// NewListener returns an enabled test-mode listener for p (normalized by
// NormalizeListener), with a fresh id and signing secret, seen at now.
func NewListener(p ListenerParams, now time.Time) *Endpoint {
	now = now.Truncate(time.Second)
	return &Endpoint{
		ID:           NewID(PrefixEndpoint, 16),
		MerchantID:   p.MerchantID,
		Mode:         ModeTest,
		Kind:         EndpointListener,
		ListenerName: p.Name,
		Events:       p.Events,
		Description:  fmt.Sprintf("checkoutd listen on %s", p.Name),
		Enabled:      true,
		Secret:       NewWebhookSecret(),
		SeenAt:       now,
		CreatedAt:    now,
		UpdatedAt:    now,
	}
}

// ListenerResult is what `checkoutd listen` reports of one forward: the
// local receiver's answer, or why none came.
type ListenerResult struct {
	StatusCode   int
	Error        string
	Duration     time.Duration
	ResponseBody string
}

// Validate checks a result as a client sent it.
func (r *ListenerResult) Validate() error {
	var v violations
	if r.StatusCode != 0 && (r.StatusCode < 100 || r.StatusCode > 999) {
		v.add("out_of_range", "status_code", "status_code must be an HTTP status (100 to 999), or 0 when no answer came.")
	}
	if r.StatusCode == 0 && r.Error == "" {
		v.add("required", "error", "error must say why no answer came when status_code is 0.")
	}
	if r.Duration < 0 || r.Duration > time.Hour {
		v.add("out_of_range", "duration_ms", "duration_ms must be between 0 and 3600000.")
	}
	if len(r.Error) > 1000 {
		v.add("too_long", "error", "error must be at most 1000 bytes.")
	}
	if len(r.ResponseBody) > 4*MaxAttemptResponse {
		v.add("too_long", "response_body", fmt.Sprintf("response_body must be at most %d bytes.", 4*MaxAttemptResponse))
	}
	return v.err()
}

// RecordListened applies the result of a forward by a listener, as
// attempt a: a 2xx answer succeeds the delivery and anything else fails it
// at once. A listener does not retry: the developer saw the answer, and
// resends from the dashboard when they want the event again.
func (d *Delivery) RecordListened(a *Attempt, now time.Time) {
	if !d.count(a, now) {
		return
	}
	d.Status = DeliveryFailed
	if a.Succeeded() {
		d.Status = DeliverySucceeded
	}
}

// Listened is a delivery to a listener with its event: what the listener's
// stream sends next.
type Listened struct {
	Delivery *Delivery
	Event    *Event
}

// ParseListenRequest reads the body of POST /v1/stores/{storeId}/listeners:
// {"name": "...", "events": ["..."]}, events optional (every type).
func ParseListenRequest(body []byte) (ListenerParams, error) {
	var p ListenerParams
	obj, v, err := parseObject(body)
	if err != nil {
		return p, err
	}
	v.rejectUnknown("", obj, "name", "events")
	if val, ok := field(obj, "name"); !ok {
		v.add("required", "name", "name is required: the listener's name, such as the machine's host name.")
	} else if s, ok := v.wantString("name", val); ok {
		p.Name = s
	}
	if val, ok := field(obj, "events"); ok {
		list, ok := val.([]any)
		if !ok {
			v.add("invalid_type", "events", fmt.Sprintf("events must be a list of event types, not %s.", typeName(val)))
		}
		for i, e := range list {
			if s, ok := v.wantString(fmt.Sprintf("events[%d]", i), e); ok {
				p.Events = append(p.Events, s)
			}
		}
		if ok && len(list) == 0 {
			v.add("invalid_value", "events", `events must name at least one event type, or ["*"] for all.`)
		}
	}
	if err := v.err(); err != nil {
		return p, err
	}
	return NormalizeListener(p)
}

// ParseListenerResult reads the body of a listener's result: {"status_code":
// 200, "duration_ms": 12, "error": "", "response_body": "..."}; status_code
// and duration_ms are required, status_code 0 when no answer came (then
// error says why).
func ParseListenerResult(body []byte) (ListenerResult, error) {
	var r ListenerResult
	obj, v, err := parseObject(body)
	if err != nil {
		return r, err
	}
	v.rejectUnknown("", obj, "status_code", "duration_ms", "error", "response_body")
	if val, ok := field(obj, "status_code"); !ok {
		v.add("required", "status_code", "status_code is required: the local receiver's HTTP status, or 0 when none came.")
	} else if n, ok := v.wantInt("status_code", val, 0, 999); ok {
		r.StatusCode = int(n)
	}
	if val, ok := field(obj, "duration_ms"); !ok {
		v.add("required", "duration_ms", "duration_ms is required: how long the local receiver took, in milliseconds.")
	} else if n, ok := v.wantInt("duration_ms", val, 0, int64(time.Hour/time.Millisecond)); ok {
		r.Duration = time.Duration(n) * time.Millisecond
	}
	if val, ok := field(obj, "error"); ok {
		if s, ok := v.wantString("error", val); ok {
			r.Error = s
		}
	}
	if val, ok := field(obj, "response_body"); ok {
		if s, ok := v.wantString("response_body", val); ok {
			r.ResponseBody = s
		}
	}
	if err := v.err(); err != nil {
		return r, err
	}
	return r, r.Validate()
}

// ListenerView is a listener as the API shows it.
type ListenerView struct {
	Object string   `json:"object"` // "listener"
	ID     string   `json:"id"`
	Name   string   `json:"name"`
	Mode   Mode     `json:"mode"`
	Events []string `json:"events"`
	// Secret signs what the listener forwards, as an endpoint's does; the
	// local receiver verifies with it.
	Secret    string `json:"secret"`
	CreatedAt int64  `json:"created_at"`
}

// ViewListener returns the API's view of listener e.
func ViewListener(e *Endpoint) ListenerView {
	return ListenerView{Object: "listener", ID: e.ID, Name: e.ListenerName, Mode: e.Mode, Events: e.Events, Secret: e.Secret, CreatedAt: e.CreatedAt.Unix()}
}

// ListenerDeliveryView is a delivery's outcome as the API shows it to the
// listener that reported it.
type ListenerDeliveryView struct {
	Object     string         `json:"object"` // "delivery"
	ID         string         `json:"id"`
	EventID    string         `json:"event_id"`
	Status     DeliveryStatus `json:"status"`
	Attempts   int            `json:"attempts"`
	StatusCode int            `json:"last_status_code"`
}

// ViewListenerDelivery returns the API's view of d.
func ViewListenerDelivery(d *Delivery) ListenerDeliveryView {
	return ListenerDeliveryView{Object: "delivery", ID: d.ID, EventID: d.EventID, Status: d.Status, Attempts: d.Attempts, StatusCode: d.LastStatusCode}
}

// Label names the endpoint for people: its URL, or for a listener the
// machine it forwards to.
func (e *Endpoint) Label() string {
	if e.IsListener() {
		return "checkoutd listen on " + e.ListenerName
	}
	return e.URL
}

// Held reports whether the delivery waits for a listener's stream rather
// than for the dispatcher (ListenerHold).
func (d *Delivery) Held() bool { return d.NextAttemptAt.Equal(ListenerHold) }

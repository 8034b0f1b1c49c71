package checkout

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// EndpointNotFound is the answer for an endpoint id that does not exist,
// and, word for word, for one outside the caller's Scope.
func EndpointNotFound(id string) *Error {
	return Errorf(ENotFound, "No such webhook endpoint: %s.", id)
}

// DeliveryNotFound is the answer for a delivery id that does not exist,
// and, word for word, for one outside the caller's Scope.
func DeliveryNotFound(id string) *Error {
	return Errorf(ENotFound, "No such delivery: %s.", id)
}

// DeliveryStatuses lists every delivery status, for filters.
var DeliveryStatuses = []DeliveryStatus{DeliverySucceeded, DeliveryPending, DeliveryFailed, DeliveryCanceled}

// Page sizes of the delivery list.
const (
	DefaultDeliveryPageSize = 50
	MaxDeliveryPageSize     = 100
)

// DeliveryFilter selects a page of one store and mode's deliveries, newest
// first (by creation time, then id): the dashboard's delivery list, across
// the endpoints or for one. Every filter left empty selects all.
type DeliveryFilter struct {
	MerchantID string
	Mode       Mode
	EndpointID string
	Status     DeliveryStatus
	EventType  string
	EventID    string
	// From and To bound the creation time to [From, To); a zero bound is
	// open.
	From, To time.Time
	// After is the cursor of the page before; zero for the first page.
	After Cursor
	// Limit is the page size: DefaultDeliveryPageSize when 0, at most
	// MaxDeliveryPageSize.
	Limit int
}

// Validate checks the filter's values and fills in the page size. Every
// broken rule is reported, as for a request.
func (f *DeliveryFilter) Validate() error {
	var v violations
	if f.Status != "" && !slices.Contains(DeliveryStatuses, f.Status) {
		v.add("invalid_value", "status", fmt.Sprintf("status must be one of succeeded, pending, failed, canceled; not %q.", f.Status))
	}
	if f.EventType != "" && !slices.Contains(EventTypes, f.EventType) {
		v.add("invalid_value", "event_type", fmt.Sprintf("event_type must be one of %s; not %q.", strings.Join(EventTypes, ", "), f.EventType))
	}
	if !f.From.IsZero() && !f.To.IsZero() && !f.From.Before(f.To) {
		v.add("invalid_value", "to", "The end of the date range must be after its start.")
	}
	switch {
	case f.Limit == 0:
		f.Limit = DefaultDeliveryPageSize
	case f.Limit < 0 || f.Limit > MaxDeliveryPageSize:
		v.add("invalid_value", "limit", fmt.Sprintf("limit must be 1 to %d.", MaxDeliveryPageSize))
	}
	return v.err()
}

// DeliveryCursor is the position of d in the delivery list, for the page
// after it.
func DeliveryCursor(d *Delivery) Cursor { return Cursor{At: d.CreatedAt, ID: d.ID} }

// DeliveryCounts count the deliveries that finished in a window of time.
// A delivery finishes when an attempt succeeds or the last attempt fails;
// canceled deliveries (their endpoint disabled) were never given their
// chance and are not counted.
type DeliveryCounts struct {
	Succeeded, Failed int64
}

// Finished is how many deliveries finished.
func (c DeliveryCounts) Finished() int64 { return c.Succeeded + c.Failed }

// SuccessRate is the share of finished deliveries that succeeded, 0 to 1;
// ok is false when none finished.
func (c DeliveryCounts) SuccessRate() (rate float64, ok bool) {
	if c.Finished() == 0 {
		return 0, false
	}
	return float64(c.Succeeded) / float64(c.Finished()), true
}

// FailingPeriod is how long every attempt to an endpoint must have failed
// for it to be failing (EndpointHealth.FailingForADay).
const FailingPeriod = 24 * time.Hour

// EndpointHealth is an endpoint's health at a glance, as of At.
type EndpointHealth struct {
	EndpointID string
	At         time.Time
	// Day and Week count the deliveries that finished in the 24 hours and
	// the 7 days before At.
	Day, Week DeliveryCounts
	// Queued counts the pending deliveries: due now, waiting for a retry,
	// or being attempted.
	Queued int64
	// LastFailure is the newest failed attempt (its time, status code, and
	// error, which says why); nil when none is kept (30 days).
	LastFailure *Attempt
	// LastSuccessAt is when the newest successful attempt started; zero
	// when none is kept.
	LastSuccessAt time.Time
	// FailingSince is when the first failed attempt after the last
	// successful one started: the start of the current run of failures.
	// Zero when the newest attempt succeeded, or there was none.
	FailingSince time.Time
}

// FailingForADay reports whether the endpoint has failed every attempt for
// at least a day: its current run of failures began FailingPeriod or more
// before At (no attempt has succeeded since, whatever came before) and its
// newest failure is less than FailingPeriod old (attempts are still being
// made and failing; an endpoint that was failing and then got no traffic is
// not flagged forever).
func (h *EndpointHealth) FailingForADay() bool {
	if h.FailingSince.IsZero() || h.LastFailure == nil {
		return false
	}
	return h.At.Sub(h.FailingSince) >= FailingPeriod && h.At.Sub(h.LastFailure.StartedAt) < FailingPeriod
}

// MaxRetryFailed is how many failed deliveries one Retry all failed
// resends at most; the answer says whether more remain.
const MaxRetryFailed = 1000

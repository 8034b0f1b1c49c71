package service

import (
	"context"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

// The dashboard's lists (Developers: Logs, Events, API keys). Each takes the
// Scope of the page, and an object of another store or mode is not_found
// with the message of one that does not exist, so an id edited in a URL
// tells nothing. The lists page by checkout.Cursor, newest first; their
// speed at a million rows is measured by bench -lists (bench/README.md).

// Page sizes of the lists.
const (
	DefaultPageSize = 50
	MaxPageSize     = 100
)

// pageSize is limit within [1, MaxPageSize], DefaultPageSize when unset.
func pageSize(limit int) int {
	if limit <= 0 {
		return DefaultPageSize
	}
	return min(limit, MaxPageSize)
}

// RequestLogFilter narrows the request log list; every field set applies.
type RequestLogFilter struct {
	// StatusClass is "2xx", "4xx" or "5xx"; "" for every status.
	StatusClass string
	// Method is an HTTP method (any case); "" for every method.
	Method string
	// Route is an endpoint of LogRoutes; "" for every one. The dashboard
	// filters by endpoint, not by the path as sent: a path holds a
	// session's id, and an index of them would cost the request log writer
	// on SQLite nearly two thirds of its speed (internal/store/requestlog.go).
	// A session's retrieves are found by the retrieve route and a date
	// range; any one request by its Request-Id (RequestLogIn).
	Route string
	// APIKeyID is a key's id (key_...); "" for every key.
	APIKeyID string
	// From and To bound the time of the requests to [From, To); a zero
	// bound is open.
	From, To time.Time
}

// LogRoutes are the endpoints whose requests are logged, as
// checkout.RequestLog.Route names them (the merchant routes of
// internal/server/routes.go, whose tests check they match): what the
// dashboard's endpoint filter offers.
var LogRoutes = []string{"/v1/stores/{storeId}/checkouts", "/v1/stores/{storeId}/checkouts/{checkoutId}"}

// logMethods are the methods the log filter knows: those of HTTP that a
// request reaching the API can carry.
var logMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions}

// params validates f into the store's parameters: an unknown status class
// or method, a path that is not one, a key id of the wrong shape or a range
// that ends before it starts is validation_failed naming the filter.
func (f RequestLogFilter) params(scope checkout.Scope) (checkout.RequestLogListParams, error) {
	p := checkout.RequestLogListParams{MerchantID: scope.MerchantID, Mode: scope.Mode, Route: f.Route, APIKeyID: f.APIKeyID, From: f.From, To: f.To}
	var vs []checkout.Violation
	bad := func(param, msg string) {
		vs = append(vs, checkout.Violation{Code: "invalid_value", Param: param, Message: msg})
	}
	switch f.StatusClass {
	case "":
	case "2xx", "4xx", "5xx":
		p.StatusClass = int(f.StatusClass[0] - '0')
	default:
		bad("status", "status must be 2xx, 4xx or 5xx.")
	}
	if f.Method != "" {
		p.Method = strings.ToUpper(f.Method)
		if !slices.Contains(logMethods, p.Method) {
			bad("method", "method must be one of "+strings.Join(logMethods, ", ")+".")
		}
	}
	if f.Route != "" && !slices.Contains(LogRoutes, f.Route) {
		bad("route", "route must be one of the API's endpoints: "+strings.Join(LogRoutes, ", ")+".")
	}
	if f.APIKeyID != "" && !validID(checkout.PrefixAPIKey, f.APIKeyID) {
		bad("key", "key must be an API key id (key_...).")
	}
	if !f.From.IsZero() && !f.To.IsZero() && f.To.Before(f.From) {
		bad("to", "The end of the date range is before its start.")
	}
	return p, violationsError(vs)
}

// violationsError is nil for no violations, and otherwise a
// validation_failed naming the first one and listing them all.
func violationsError(vs []checkout.Violation) error {
	if len(vs) == 0 {
		return nil
	}
	msg := vs[0].Message
	if len(vs) > 1 {
		msg += fmt.Sprintf(" (%d problems in all; see details.)", len(vs))
	}
	return &checkout.Error{Code: checkout.EValidationFailed, Message: msg, Param: vs[0].Param, Details: vs}
}

// validID reports whether id is prefix and 32 lowercase hex digits, the
// shape of every id but sessions' and stores'.
func validID(prefix, id string) bool {
	rest, ok := strings.CutPrefix(id, prefix)
	if !ok || len(rest) != 32 || strings.ToLower(rest) != rest {
		return false
	}
	_, err := hex.DecodeString(rest)
	return err == nil
}

// ListRequestLogs returns a page of the scope's request logs, newest first,
// that match f, after cursor ("" for the first page).
func (s *Service) ListRequestLogs(ctx context.Context, scope checkout.Scope, f RequestLogFilter, cursor string, limit int) (checkout.Page[*checkout.RequestLog], error) {
	role, err := s.roleFor(ctx, scope.MerchantID, checkout.ActionViewLogs)
	if err != nil {
		return checkout.Page[*checkout.RequestLog]{}, err
	}
	var page checkout.Page[*checkout.RequestLog]
	p, err := f.params(scope)
	if err != nil {
		return page, err
	}
	if p.After, err = checkout.ParseCursor(cursor); err != nil {
		return page, err
	}
	n := pageSize(limit)
	p.Limit = n + 1 // one more tells whether a page follows
	logs, err := s.store.RequestLogList(ctx, p)
	if err != nil {
		return page, err
	}
	if !may(role, checkout.ActionSeeLogBodies) {
		for i, l := range logs {
			logs[i] = withoutBodies(l)
		}
	}
	return pageOf(logs, n, func(l *checkout.RequestLog) checkout.Cursor { return checkout.Cursor{At: l.CreatedAt, ID: l.RequestID} }), nil
}

// pageOf makes a page of n from items, a list read with a limit of n+1:
// the one more tells whether a page follows, and the cursor of the last
// shown where it starts.
func pageOf[T any](items []T, n int, cursor func(T) checkout.Cursor) checkout.Page[T] {
	page := checkout.Page[T]{Items: items}
	if len(items) > n {
		page.Items = items[:n]
		page.Next = cursor(items[n-1]).String()
	}
	return page
}

// RequestLogIn returns one request log of the scope by its Request-Id: the
// search box's exact match. An id of another shape, unknown, or of another
// store or mode is not_found, all with one message.
func (s *Service) RequestLogIn(ctx context.Context, scope checkout.Scope, requestID string) (*checkout.RequestLog, error) {
	role, err := s.roleFor(ctx, scope.MerchantID, checkout.ActionViewLogs)
	if err != nil {
		return nil, err
	}
	notFound := checkout.Errorf(checkout.ENotFound, "No request with Request-Id %s in this store's %s mode.", requestID, scope.Mode)
	if !validID(checkout.PrefixRequest, requestID) {
		return nil, notFound
	}
	l, err := s.store.RequestLogGet(ctx, requestID)
	if checkout.IsCode(err, checkout.ENotFound) || err == nil && !inScope(scope, l.MerchantID, l.Mode) {
		return nil, notFound
	}
	if err == nil && !may(role, checkout.ActionSeeLogBodies) {
		l = withoutBodies(l)
	}
	return l, err
}

// withoutBodies is a copy of a request log without its request and
// response bodies, for a member whose role may not see them.
func withoutBodies(l *checkout.RequestLog) *checkout.RequestLog {
	c := *l
	c.RequestBody, c.ResponseBody = "", ""
	return &c
}

// inScope reports whether an object of store merchantID and mode belongs
// to scope.
func inScope(scope checkout.Scope, merchantID string, mode checkout.Mode) bool {
	return merchantID == scope.MerchantID && mode == scope.Mode
}

// EventFilter narrows the event list; every field set applies.
type EventFilter struct {
	// Type is one of checkout.EventTypes; "" for every type.
	Type string
	// From and To bound the events' times to [From, To); a zero bound is
	// open. Event times are whole seconds.
	From, To time.Time
}

// EventItem is an event of a list with, for each endpoint it went to, its
// latest delivery (a resend's, after one): the outcome per endpoint.
type EventItem struct {
	Event *checkout.Event
	// Deliveries are ordered by endpoint id; none when no endpoint
	// subscribed to the event.
	Deliveries []*checkout.Delivery
}

// ListEvents returns a page of the scope's events, newest first, that match
// f, after cursor ("" for the first page), each with its latest delivery
// to each endpoint: two queries per page, whatever its size.
func (s *Service) ListEvents(ctx context.Context, scope checkout.Scope, f EventFilter, cursor string, limit int) (checkout.Page[*EventItem], error) {
	if err := s.authorize(ctx, scope.MerchantID, checkout.ActionViewEvents); err != nil {
		return checkout.Page[*EventItem]{}, err
	}
	var page checkout.Page[*EventItem]
	var vs []checkout.Violation
	if f.Type != "" && !slices.Contains(checkout.EventTypes, f.Type) {
		vs = append(vs, checkout.Violation{Code: "invalid_value", Param: "type",
			Message: "type must be an event type: " + strings.Join(checkout.EventTypes, ", ") + "."})
	}
	if !f.From.IsZero() && !f.To.IsZero() && f.To.Before(f.From) {
		vs = append(vs, checkout.Violation{Code: "invalid_value", Param: "to", Message: "The end of the date range is before its start."})
	}
	if err := violationsError(vs); err != nil {
		return page, err
	}
	after, err := checkout.ParseCursor(cursor)
	if err != nil {
		return page, err
	}
	n := pageSize(limit)
	events, err := s.store.EventList(ctx, checkout.EventListParams{MerchantID: scope.MerchantID, Mode: scope.Mode,
		Type: f.Type, From: f.From, To: f.To, After: after, Limit: n + 1})
	if err != nil {
		return page, err
	}
	if len(events) > n {
		events = events[:n]
		last := events[n-1]
		page.Next = checkout.Cursor{At: last.CreatedAt, ID: last.ID}.String()
	}
	ids := make([]string, len(events))
	byID := make(map[string]*EventItem, len(events))
	page.Items = make([]*EventItem, len(events))
	for i, e := range events {
		ids[i] = e.ID
		page.Items[i] = &EventItem{Event: e}
		byID[e.ID] = page.Items[i]
	}
	ds, err := s.store.DeliveryListLatest(ctx, ids)
	if err != nil {
		return checkout.Page[*EventItem]{}, err
	}
	for _, d := range ds {
		if it := byID[d.EventID]; it != nil {
			it.Deliveries = append(it.Deliveries, d)
		}
	}
	for _, it := range page.Items {
		slices.SortFunc(it.Deliveries, func(a, b *checkout.Delivery) int { return strings.Compare(a.EndpointID, b.EndpointID) })
	}
	return page, nil
}

// EventIn returns one event of the scope; its Payload is the body its
// deliveries carried, byte for byte. An id of another shape, unknown, or of
// another store or mode is not_found, all with one message.
func (s *Service) EventIn(ctx context.Context, scope checkout.Scope, id string) (*checkout.Event, error) {
	if err := s.authorize(ctx, scope.MerchantID, checkout.ActionViewEvents); err != nil {
		return nil, err
	}
	notFound := checkout.Errorf(checkout.ENotFound, "No event %s in this store's %s mode.", id, scope.Mode)
	if !validID(checkout.PrefixEvent, id) {
		return nil, notFound
	}
	e, err := s.store.EventGet(ctx, id)
	if checkout.IsCode(err, checkout.ENotFound) || err == nil && !inScope(scope, e.MerchantID, e.Mode) {
		return nil, notFound
	}
	return e, err
}

// ListAPIKeys returns the scope's API keys, revoked ones included, oldest
// first, each with its name, hint, permissions, type, creation, last use
// (to within checkout.APIKeyUseGranularity) and revocation.
func (s *Service) ListAPIKeys(ctx context.Context, scope checkout.Scope) ([]*checkout.APIKey, error) {
	role, err := s.roleFor(ctx, scope.MerchantID, checkout.ActionViewKeys)
	if err != nil {
		return nil, err
	}
	ks, err := s.store.APIKeyList(ctx, scope.MerchantID)
	if err != nil {
		return nil, err
	}
	ks = slices.DeleteFunc(ks, func(k *checkout.APIKey) bool { return k.Mode != scope.Mode })
	if !may(role, checkout.ActionSeeKeyHints) {
		for i, k := range ks {
			c := *k
			c.SecretHint, c.SecretHash, c.SealedSecret = "", "", ""
			ks[i] = &c
		}
	}
	return ks, nil
}

// RevokeAPIKeyIn revokes a key of the scope, as RevokeAPIKey does: every
// node refuses it within KeyCacheTTL (at most 5 s). A key of another store
// or mode is not_found, as an unknown one.
func (s *Service) RevokeAPIKeyIn(ctx context.Context, scope checkout.Scope, id string) (*checkout.APIKey, error) {
	if err := s.authorize(ctx, scope.MerchantID, checkout.ActionManageKeys); err != nil {
		return nil, err
	}
	notFound := checkout.Errorf(checkout.ENotFound, "No API key %s in this store's %s mode.", id, scope.Mode)
	if !validID(checkout.PrefixAPIKey, id) {
		return nil, notFound
	}
	// A key's store and mode never change, so checking them before the
	// revoking transaction is as good as inside it.
	k, err := s.store.APIKeyGet(ctx, id)
	if checkout.IsCode(err, checkout.ENotFound) || err == nil && !inScope(scope, k.MerchantID, k.Mode) {
		return nil, notFound
	}
	if err != nil {
		return nil, err
	}
	return s.RevokeAPIKey(ctx, id)
}

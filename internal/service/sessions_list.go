package service

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/checkoutd/checkoutd/checkout"
)

// The dashboard's Sessions: a store's checkout sessions of one mode, newest
// first, by status and date, or found by a session's id, a payment's id, a
// customer's email or a metadata key's value; and a session's page, with
// what the API returns for it, its payments and the events about it. Like
// the other lists, it takes the page's Scope: a session of another store or
// mode is checkout_not_found as an unknown one.

// SessionStatuses are the statuses the session list filters by.
var SessionStatuses = []checkout.Status{checkout.StatusOpen, checkout.StatusComplete, checkout.StatusExpired}

// SessionFilter narrows the session list; every field set applies.
type SessionFilter struct {
	// Status is one of SessionStatuses, "" for every one: the status the
	// API answers (an open session whose hour is over with no payment on
	// its way is expired).
	Status checkout.Status
	// From and To bound the sessions' creation to [From, To); a zero bound
	// is open. Session times are whole seconds.
	From, To time.Time
	// Search is a session id (cs_...), a payment id (pay_...: the session
	// it paid or tried to), a customer's email (the case of ASCII letters
	// aside), or key=value: the sessions whose metadata has key with that
	// value exactly (spaces around either dropped). "" for none.
	Search string
}

// sessionSearch is a SessionFilter.Search read.
type sessionSearch struct {
	sessionID, paymentID, email string
	key, value                  string
}

// searchHelp says what the search box takes.
const searchHelp = "Search by a session id (cs_...), a payment id (pay_...), a customer's email, or metadata as key=value."

// parseSessionSearch reads a search, or says why it cannot, as a violation
// of the parameter q (the dashboard's search box).
func parseSessionSearch(q string) (sessionSearch, *checkout.Violation) {
	var s sessionSearch
	bad := func(msg string) (sessionSearch, *checkout.Violation) {
		return s, &checkout.Violation{Code: "invalid_value", Param: "q", Message: msg}
	}
	q = strings.TrimSpace(q)
	key, value, isPair := strings.Cut(q, "=")
	switch {
	case q == "":
	case isPair && !strings.Contains(key, "@"):
		key = strings.TrimSpace(key) // "order_id = A-1" as "order_id=A-1"
		if n := utf8.RuneCountInString(key); n < 1 || n > checkout.MaxMetadataKeyLen {
			return bad(fmt.Sprintf("A metadata key is 1 to %d characters, before the =: key=value.", checkout.MaxMetadataKeyLen))
		}
		if n := utf8.RuneCountInString(value); n > checkout.MaxMetadataValLen {
			return bad(fmt.Sprintf("A metadata value is at most %d characters; this one has %d.", checkout.MaxMetadataValLen, n))
		}
		s.key, s.value = strings.TrimSpace(key), strings.TrimSpace(value)
	case strings.HasPrefix(q, checkout.PrefixSession):
		if !checkout.ValidSessionID(q) {
			return bad("A session id is cs_ and 64 lowercase hex digits (32 for the earliest sessions).")
		}
		s.sessionID = q
	case strings.HasPrefix(q, checkout.PrefixPayment) && !isPair:
		if !validID(checkout.PrefixPayment, q) {
			return bad("A payment id is pay_ and 32 lowercase hex digits.")
		}
		s.paymentID = q
	case strings.Contains(q, "@"):
		if msg := checkout.CheckEmail(q); msg != "" {
			return bad("An email to search by " + msg)
		}
		s.email = asciiLower(q)
	default:
		return bad(searchHelp)
	}
	return s, nil
}

// asciiLower lower-cases the ASCII letters of s alone, as the store's
// search by email does on either database.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// ListSessions returns a page of the scope's sessions, newest first, that
// match f, after cursor ("" for the first page). A search by a session's
// or a payment's id finds one session at most, read by its id. Each
// session's Status is the one the API answers now.
func (s *Service) ListSessions(ctx context.Context, scope checkout.Scope, f SessionFilter, cursor string, limit int) (checkout.Page[*checkout.Session], error) {
	if err := s.authorize(ctx, scope.MerchantID, checkout.ActionViewPayments); err != nil {
		return checkout.Page[*checkout.Session]{}, err
	}
	var page checkout.Page[*checkout.Session]
	var vs []checkout.Violation
	if f.Status != "" && !slices.Contains(SessionStatuses, f.Status) {
		vs = append(vs, checkout.Violation{Code: "invalid_value", Param: "status", Message: "status must be open, complete or expired."})
	}
	if !f.From.IsZero() && !f.To.IsZero() && !f.To.After(f.From) {
		// The dashboard's To is the end of its day: a range of no time is
		// one whose last day comes before its first.
		vs = append(vs, checkout.Violation{Code: "invalid_value", Param: "to", Message: "The end of the date range is before its start."})
	}
	search, v := parseSessionSearch(f.Search)
	if v != nil {
		vs = append(vs, *v)
	}
	if err := violationsError(vs); err != nil {
		return page, err
	}
	after, err := checkout.ParseCursor(cursor)
	if err != nil {
		return page, err
	}
	now := s.now()
	if search.sessionID != "" || search.paymentID != "" {
		sess, err := s.sessionBySearch(ctx, scope, search)
		if err != nil || sess == nil {
			return page, err
		}
		effective(sess, now)
		if (f.Status == "" || sess.Status == f.Status) && (f.From.IsZero() || !sess.CreatedAt.Before(f.From)) &&
			(f.To.IsZero() || sess.CreatedAt.Before(f.To)) && after.IsZero() {
			page.Items = []*checkout.Session{sess}
		}
		return page, nil
	}
	n := pageSize(limit)
	ss, err := s.store.SessionList(ctx, checkout.SessionListParams{MerchantID: scope.MerchantID, Mode: scope.Mode,
		Status: f.Status, Now: now, From: f.From, To: f.To, Email: search.email, MetadataKey: search.key, MetadataValue: search.value,
		After: after, Limit: n + 1})
	if err != nil {
		return page, err
	}
	page = pageOf(ss, n, func(s *checkout.Session) checkout.Cursor { return checkout.Cursor{At: s.CreatedAt, ID: s.ID} })
	for _, sess := range page.Items {
		effective(sess, now)
	}
	return page, nil
}

// effective sets a session's status to the one the API answers at now:
// expired when its hour is over with no payment on its way, as the expiry
// job records it within seconds.
func effective(sess *checkout.Session, now time.Time) {
	if sess.ExpiryDue(now) {
		sess.Status = checkout.StatusExpired
	}
}

// sessionBySearch returns the scope's session of a search by id, nil when
// there is none.
func (s *Service) sessionBySearch(ctx context.Context, scope checkout.Scope, q sessionSearch) (*checkout.Session, error) {
	id := q.sessionID
	if q.paymentID != "" {
		p, err := s.store.PaymentGet(ctx, q.paymentID)
		if checkout.IsCode(err, checkout.ENotFound) || err == nil && !inScope(scope, p.MerchantID, p.Mode) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		id = p.SessionID
	}
	sess, err := s.store.SessionGet(ctx, id)
	if checkout.IsCode(err, checkout.ECheckoutNotFound) || err == nil && !inScope(scope, sess.MerchantID, sess.Mode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	c := *sess // the store's cache may hold sess: effective changes the copy
	return &c, nil
}

// SessionDetail is a session as its dashboard page shows it.
type SessionDetail struct {
	// Session is the session as the API returns it now.
	Session *checkout.SessionJSON
	// Payments are its payment attempts, oldest first.
	Payments []*checkout.Payment
	// Events are the events about it and its payments, oldest first, each
	// with its latest delivery to each endpoint.
	Events []*EventItem
}

// SessionIn returns one session of the scope with its payments and events.
// As the API's retrieve does, a session whose hour is over turns expired
// here, emitting checkout.expired. An id of another shape, unknown, or of
// another store or mode is checkout_not_found, all with one message.
func (s *Service) SessionIn(ctx context.Context, scope checkout.Scope, id string) (*SessionDetail, error) {
	if err := s.authorize(ctx, scope.MerchantID, checkout.ActionViewPayments); err != nil {
		return nil, err
	}
	notFound := checkout.Errorf(checkout.ECheckoutNotFound, "No checkout session %s in this store's %s mode.", id, scope.Mode)
	if !checkout.ValidSessionID(id) {
		return nil, notFound
	}
	sess, err := s.store.SessionGet(ctx, id)
	if checkout.IsCode(err, checkout.ECheckoutNotFound) || err == nil && !inScope(scope, sess.MerchantID, sess.Mode) {
		return nil, notFound
	}
	if err != nil {
		return nil, err
	}
	m, err := s.Merchant(ctx, sess.MerchantID)
	if err != nil {
		return nil, err
	}
	if sess.ExpiryDue(s.now()) {
		if sess, _, err = s.expire(ctx, m, id); err != nil {
			return nil, err
		}
	}
	d := &SessionDetail{Session: sess.View(m, s.checkoutBaseURL)}
	if d.Payments, err = s.store.PaymentListBySession(ctx, id); err != nil {
		return nil, err
	}
	ids := []string{id}
	for _, p := range d.Payments {
		ids = append(ids, p.ID)
	}
	events, err := s.store.EventListByObject(ctx, ids)
	if err != nil {
		return nil, err
	}
	eventIDs := make([]string, len(events))
	byID := make(map[string]*EventItem, len(events))
	for i, e := range events {
		eventIDs[i] = e.ID
		d.Events = append(d.Events, &EventItem{Event: e})
		byID[e.ID] = d.Events[i]
	}
	ds, err := s.store.DeliveryListLatest(ctx, eventIDs)
	if err != nil {
		return nil, err
	}
	for _, dl := range ds {
		if it := byID[dl.EventID]; it != nil {
			it.Deliveries = append(it.Deliveries, dl)
		}
	}
	for _, it := range d.Events {
		slices.SortFunc(it.Deliveries, func(a, b *checkout.Delivery) int { return strings.Compare(a.EndpointID, b.EndpointID) })
	}
	return d, nil
}

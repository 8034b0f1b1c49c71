package dashboard

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
)

// The Sessions page: the store's checkout sessions in the page's mode,
// newest first, by status and creation date, or found by a session's id, a
// payment's id, a customer's email or key=value of metadata; and a
// session's page: what the API returns for it, its payment page's address,
// its payment attempts with their outcomes, and the events about it and its
// payments with their deliveries.

const sectionSessions = "sessions"

// sessionFilter is the Sessions form as sent, kept to show it again.
type sessionFilter struct{ Q, Status, From, To string }

type sessionsView struct {
	Layout
	Filter   sessionFilter
	Filtered bool
	Statuses []checkout.Status
	Errors   map[string]string
	Rows     []sessionRow
	Pager    pager
}

// sessionRow is a session as the list shows it.
type sessionRow struct {
	*checkout.Session
	Total string
}

// HandleSessions serves GET .../sessions.
func (d *Dashboard) HandleSessions() http.Handler {
	return d.storePage(checkout.ActionViewPayments, func(w http.ResponseWriter, r *http.Request, s *scope) {
		q := r.URL.Query()
		v := sessionsView{Layout: s.layout("Sessions", sectionSessions), Statuses: service.SessionStatuses, Errors: map[string]string{},
			Filter: sessionFilter{Q: q.Get("q"), Status: q.Get("status"), From: q.Get("from"), To: q.Get("to")}}
		v.Filtered = v.Filter != sessionFilter{}
		from, to := dateRange(q, v.Errors)
		status := http.StatusOK
		if len(v.Errors) == 0 {
			page, err := d.svc.ListSessions(r.Context(), s.checkoutScope(),
				service.SessionFilter{Status: checkout.Status(v.Filter.Status), From: from, To: to, Search: v.Filter.Q}, q.Get("cursor"), 0)
			if errs, ok := fieldErrors(err); ok {
				v.Errors = errs
			} else if err != nil {
				d.fail(w, r, err)
				return
			}
			for _, sess := range page.Items {
				v.Rows = append(v.Rows, sessionRow{Session: sess, Total: checkout.FormatAmount(sess.TotalAmount, sess.Currency)})
			}
			v.Pager = pagerFor(r, page.Next)
		}
		if len(v.Errors) > 0 {
			status = http.StatusBadRequest
		}
		d.render(w, r, status, "sessions", v)
	})
}

type checkoutSessionView struct {
	Layout
	S *checkout.SessionJSON
	// Amount, Discount, Tax and Total are the session's amounts in its
	// currency; Items its lines.
	Amount, Discount, Tax, Total string
	Items                        []itemRow
	Metadata                     []metadataRow
	Created, Expires, Completed  time.Time
	Payments                     []paymentRow
	Events                       []*service.EventItem
	Endpoints                    map[string]*checkout.Endpoint
	// JSON is the session as the API returns it, indented.
	JSON string
}

type itemRow struct {
	checkout.Item
	Unit, Line string
}

type metadataRow struct{ Key, Value string }

// HandleSession serves GET .../sessions/{id}.
func (d *Dashboard) HandleSession() http.Handler {
	return d.storePage(checkout.ActionViewPayments, func(w http.ResponseWriter, r *http.Request, s *scope) {
		det, err := d.svc.SessionIn(r.Context(), s.checkoutScope(), r.PathValue("id"))
		if err != nil {
			d.failOrNotFound(w, r, s, err)
			return
		}
		sj := det.Session
		money := func(n int64) string { return checkout.FormatAmount(n, sj.Currency) }
		v := checkoutSessionView{Layout: s.layout("Session "+sj.ID, sectionSessions), S: sj, Amount: money(sj.Amount),
			Discount: money(sj.DiscountAmount), Tax: money(sj.TaxAmount), Total: money(sj.TotalAmount),
			Created: time.Unix(sj.CreatedAt, 0), Expires: time.Unix(sj.ExpiresAt, 0), Events: det.Events}
		if sj.CompletedAt != nil {
			v.Completed = time.Unix(*sj.CompletedAt, 0)
		}
		for _, it := range sj.Items {
			v.Items = append(v.Items, itemRow{Item: it, Unit: money(it.Amount), Line: money(it.Amount * int64(it.Quantity))})
		}
		for _, k := range sortedKeys(sj.Metadata) {
			v.Metadata = append(v.Metadata, metadataRow{Key: k, Value: sj.Metadata[k]})
		}
		for _, p := range det.Payments {
			v.Payments = append(v.Payments, newPaymentRow(p))
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetIndent("", "  ")
		if err := enc.Encode(sj); err != nil {
			d.fail(w, r, err)
			return
		}
		v.JSON = b.String()
		if v.Endpoints, err = d.endpointsByID(r, s); err != nil {
			d.fail(w, r, err)
			return
		}
		d.render(w, r, http.StatusOK, "session", v)
	})
}

// sessionClass is the badge of a session's status.
func sessionClass(s checkout.Status) string {
	switch s {
	case checkout.StatusComplete:
		return "good"
	case checkout.StatusOpen:
		return "warn"
	}
	return ""
}

// sortedKeys are m's keys in order.
func sortedKeys(m map[string]string) []string {
	return slices.Sorted(maps.Keys(m))
}

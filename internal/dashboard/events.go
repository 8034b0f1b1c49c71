package dashboard

import (
	"net/http"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
)

// The Events page (Developers, Events): the store's events in the page's
// mode, newest first, with each endpoint's latest delivery, and an event's
// page with its payload exactly as sent.

const sectionEvents = "developers/events"

type eventFilter struct{ Type, From, To string }

type eventsView struct {
	Layout
	Filter    eventFilter
	Errors    map[string]string
	Types     []string
	Items     []*service.EventItem
	Endpoints map[string]*checkout.Endpoint
	Pager     pager
	Filtered  bool
}

type eventView struct {
	Layout
	Event      *checkout.Event
	Payload    string
	Deliveries []*checkout.Delivery
	Endpoints  map[string]*checkout.Endpoint
}

// HandleEvents serves GET .../developers/events.
func (d *Dashboard) HandleEvents() http.Handler {
	return d.storePage(checkout.ActionViewEvents, func(w http.ResponseWriter, r *http.Request, s *scope) {
		q := r.URL.Query()
		v := eventsView{Layout: s.layout("Events", sectionEvents), Types: checkout.EventTypes, Errors: map[string]string{},
			Filter: eventFilter{Type: q.Get("type"), From: q.Get("from"), To: q.Get("to")}}
		v.Filtered = v.Filter != eventFilter{}
		from, to := dateRange(q, v.Errors)
		status := http.StatusOK
		if len(v.Errors) == 0 {
			page, err := d.svc.ListEvents(r.Context(), s.checkoutScope(), service.EventFilter{Type: v.Filter.Type, From: from, To: to}, q.Get("cursor"), 0)
			if errs, ok := fieldErrors(err); ok {
				v.Errors = errs
			} else if err != nil {
				d.fail(w, r, err)
				return
			}
			v.Items, v.Pager = page.Items, pagerFor(r, page.Next)
		}
		if len(v.Errors) > 0 {
			status = http.StatusBadRequest
		}
		var err error
		if v.Endpoints, err = d.endpointsByID(r, s); err != nil {
			d.fail(w, r, err)
			return
		}
		d.render(w, r, status, "events", v)
	})
}

// HandleEvent serves GET .../developers/events/{id}.
func (d *Dashboard) HandleEvent() http.Handler {
	return d.storePage(checkout.ActionViewEvents, func(w http.ResponseWriter, r *http.Request, s *scope) {
		e, err := d.svc.EventIn(r.Context(), s.checkoutScope(), r.PathValue("id"))
		if err != nil {
			d.failOrNotFound(w, r, s, err)
			return
		}
		payload, err := e.Payload()
		if err != nil {
			d.fail(w, r, err)
			return
		}
		ds, err := d.svc.Store().DeliveryListLatest(r.Context(), []string{e.ID})
		if err != nil {
			d.fail(w, r, err)
			return
		}
		eps, err := d.endpointsByID(r, s)
		if err != nil {
			d.fail(w, r, err)
			return
		}
		d.render(w, r, http.StatusOK, "event", eventView{Layout: s.layout(e.Type, sectionEvents), Event: e,
			Payload: string(payload), Deliveries: ds, Endpoints: eps})
	})
}

// endpointsByID returns the store's endpoints by id: lists name a
// delivery's endpoint by its URL.
func (d *Dashboard) endpointsByID(r *http.Request, s *scope) (map[string]*checkout.Endpoint, error) {
	eps, err := d.svc.Store().EndpointList(r.Context(), s.store.ID)
	if err != nil {
		return nil, err
	}
	m := make(map[string]*checkout.Endpoint, len(eps))
	for _, ep := range eps {
		m[ep.ID] = ep
	}
	return m, nil
}

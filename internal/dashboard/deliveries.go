package dashboard

import (
	"net/http"

	"github.com/checkoutd/checkoutd/checkout"
)

// The deliveries list (across endpoints, or one endpoint's) and a
// delivery's page: its attempts with each response as received, and Resend.

type deliveryFilter struct{ Endpoint, Status, EventType, EventID, From, To string }

type deliveriesView struct {
	Layout
	Filter     deliveryFilter
	Errors     map[string]string
	Deliveries []*checkout.Delivery
	Endpoints  map[string]*checkout.Endpoint
	Choices    []*checkout.Endpoint
	Statuses   []checkout.DeliveryStatus
	Types      []string
	Pager      pager
	Filtered   bool
}

type deliveryView struct {
	Layout
	Delivery *checkout.Delivery
	Attempts []*checkout.Attempt
	Endpoint *checkout.Endpoint // nil once deleted
	Event    *checkout.Event
	Notice   string
	Error    string
}

// HandleDeliveries serves GET .../developers/deliveries.
func (d *Dashboard) HandleDeliveries() http.Handler {
	return d.storePage(checkout.ActionViewWebhooks, func(w http.ResponseWriter, r *http.Request, s *scope) {
		q := r.URL.Query()
		v := deliveriesView{Layout: s.layout("Deliveries", sectionWebhooks), Errors: map[string]string{},
			Statuses: checkout.DeliveryStatuses, Types: checkout.EventTypes,
			Filter: deliveryFilter{Endpoint: q.Get("endpoint"), Status: q.Get("status"), EventType: q.Get("event_type"),
				EventID: q.Get("event"), From: q.Get("from"), To: q.Get("to")}}
		v.Layout.Here = sectionDeliveries
		v.Filtered = v.Filter != deliveryFilter{}
		eps, err := d.svc.EndpointsIn(r.Context(), s.checkoutScope())
		if err != nil {
			d.fail(w, r, err)
			return
		}
		v.Choices = eps
		if v.Endpoints, err = d.endpointsByID(r, s); err != nil {
			d.fail(w, r, err)
			return
		}
		from, to := dateRange(q, v.Errors)
		if len(v.Errors) == 0 {
			cursor, err := checkout.ParseCursor(q.Get("cursor"))
			var page checkout.Page[*checkout.Delivery]
			if err == nil {
				page, err = d.svc.DeliveriesIn(r.Context(), s.checkoutScope(), checkout.DeliveryFilter{EndpointID: v.Filter.Endpoint,
					Status: checkout.DeliveryStatus(v.Filter.Status), EventType: v.Filter.EventType, EventID: v.Filter.EventID,
					From: from, To: to, After: cursor})
			}
			switch errs, ok := fieldErrors(err); {
			case ok:
				v.Errors = errs
			case checkout.IsCode(err, checkout.ENotFound):
				v.Errors["endpoint"] = "There is no such endpoint in this mode."
			case err != nil:
				d.fail(w, r, err)
				return
			}
			v.Deliveries, v.Pager = page.Items, pagerFor(r, page.Next)
		}
		status := http.StatusOK
		if len(v.Errors) > 0 {
			status = http.StatusBadRequest
		}
		d.render(w, r, status, "deliveries", v)
	})
}

// HandleDelivery serves GET .../developers/deliveries/{id}.
func (d *Dashboard) HandleDelivery() http.Handler {
	return d.storePage(checkout.ActionViewWebhooks, func(w http.ResponseWriter, r *http.Request, s *scope) {
		d.renderDelivery(w, r, s, http.StatusOK, r.PathValue("id"), noticeOf(r), "")
	})
}

func (d *Dashboard) renderDelivery(w http.ResponseWriter, r *http.Request, s *scope, status int, id, notice, problem string) {
	dl, attempts, err := d.svc.DeliveryIn(r.Context(), s.checkoutScope(), id)
	if err != nil {
		d.failOrNotFound(w, r, s, err)
		return
	}
	v := deliveryView{Layout: s.layout("Delivery", sectionWebhooks), Delivery: dl, Attempts: attempts, Notice: notice, Error: problem}
	v.Layout.Here = sectionDeliveries
	if ep, err := d.svc.EndpointIn(r.Context(), s.checkoutScope(), dl.EndpointID); err == nil {
		v.Endpoint = ep
	} else if !checkout.IsCode(err, checkout.ENotFound) {
		d.fail(w, r, err)
		return
	}
	if e, err := d.svc.EventIn(r.Context(), s.checkoutScope(), dl.EventID); err == nil {
		v.Event = e
	} else if !checkout.IsCode(err, checkout.ENotFound) {
		d.fail(w, r, err)
		return
	}
	d.render(w, r, status, "delivery", v)
}

// HandleResend serves POST .../developers/deliveries/{id}/resend: a new
// delivery of the same event to the same endpoint.
func (d *Dashboard) HandleResend() http.Handler {
	return d.storeAction(checkout.ActionManageWebhooks, func(w http.ResponseWriter, r *http.Request, s *scope) {
		nd, err := d.svc.ResendIn(r.Context(), s.checkoutScope(), r.PathValue("id"))
		if checkout.IsCode(err, checkout.EValidationFailed) {
			d.renderDelivery(w, r, s, http.StatusBadRequest, r.PathValue("id"), "", sentence(checkout.ErrorMessage(err)))
			return
		}
		if err != nil {
			d.failOrNotFound(w, r, s, err)
			return
		}
		http.Redirect(w, r, s.path(sectionDeliveries+"/"+nd.ID)+"?done=resent", http.StatusSeeOther)
	})
}

// deliveryRows is a table of deliveries: with their endpoints when the
// table spans several.
type deliveryRows struct {
	Deliveries []*checkout.Delivery
	Endpoints  map[string]*checkout.Endpoint
	Layout     Layout
}

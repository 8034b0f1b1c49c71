package dashboard

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

// The Webhooks pages (Developers, Webhooks): the mode's endpoints with their
// health, an endpoint's page (health, signing secret, test event, disable,
// enable, edit, delete, its deliveries, Retry all failed), and the
// deliveries across endpoints with a delivery's attempts. Every action is a
// service function scoped to the page's store and mode: the rules of the
// API and the CLI (URL guard, 16 endpoints, events catalogue) hold here.

const (
	sectionWebhooks   = "developers/webhooks"
	sectionDeliveries = "developers/deliveries"
)

// endpointForm is the add and edit form's values and errors.
type endpointForm struct {
	URL, Description string
	All              bool
	Events           []string
	Errors           map[string]string
}

// Has reports whether the form has the event type ticked.
func (f endpointForm) Has(typ string) bool { return slices.Contains(f.Events, typ) }

func readEndpointForm(r *http.Request) endpointForm {
	f := endpointForm{URL: r.PostFormValue("url"), Description: r.PostFormValue("description"), All: r.PostFormValue("all") == "1"}
	for _, t := range r.PostForm["events"] {
		if t != "" && !slices.Contains(f.Events, t) {
			f.Events = append(f.Events, t)
		}
	}
	return f
}

// explain words a refusal of the events for the form's choices.
func (f *endpointForm) explain(errs map[string]string) {
	if errs["events"] != "" && !f.All && len(f.Events) == 0 {
		errs["events"] = "Choose All events, or at least one event type."
	}
	f.Errors = errs
}

// events is what the form subscribes to, as the service takes it.
func (f endpointForm) events() []string {
	if f.All {
		return []string{checkout.AllEvents}
	}
	return f.Events
}

func formOf(ep *checkout.Endpoint) endpointForm {
	f := endpointForm{URL: ep.URL, Description: ep.Description, All: ep.SubscribesAll()}
	if !f.All {
		f.Events = ep.Events
	}
	return f
}

// eventChoice is an event type the form offers, with its sentence.
type eventChoice struct{ Type, Description string }

func eventChoices() []eventChoice {
	var out []eventChoice
	for _, t := range checkout.EventTypes {
		if t != checkout.EventWebhookTest {
			out = append(out, eventChoice{t, checkout.EventDescriptions[t]})
		}
	}
	return out
}

type endpointRow struct {
	Endpoint *checkout.Endpoint
	Health   *checkout.EndpointHealth
	// Receives is whether a new event would reach it now (a listener away
	// over 24 hours: not).
	Receives bool
}

type webhooksView struct {
	Layout
	Rows []endpointRow // the HTTPS endpoints
	// Listeners are the store's checkoutd listen listeners (test mode).
	Listeners []endpointRow
	StoreID   string
	Notice    string
	Max       int
}

type endpointFormView struct {
	Layout
	Endpoint *checkout.Endpoint // nil when adding
	Form     endpointForm
	Choices  []eventChoice
}

type endpointView struct {
	Layout
	Endpoint   *checkout.Endpoint
	Health     *checkout.EndpointHealth
	Deliveries []*checkout.Delivery
	More       string // the deliveries list of this endpoint, when it has more
	Secret     bool   // show the signing secret(s)
	Notice     string
	Error      string
	Since      string // Retry all failed's date
	Receives   bool   // a new event would reach it now
}

// HandleWebhooks serves GET .../developers/webhooks.
func (d *Dashboard) HandleWebhooks() http.Handler {
	return d.storePage(checkout.ActionViewWebhooks, func(w http.ResponseWriter, r *http.Request, s *scope) {
		eps, err := d.svc.EndpointsIn(r.Context(), s.checkoutScope())
		if err != nil {
			d.fail(w, r, err)
			return
		}
		v := webhooksView{Layout: s.layout("Webhooks", sectionWebhooks), Max: checkout.MaxEndpointsPerStore,
			StoreID: s.checkoutScope().MerchantID, Notice: noticeOf(r)}
		now := d.svc.Now()
		for _, ep := range eps {
			h, err := d.svc.EndpointHealth(r.Context(), s.checkoutScope(), ep.ID)
			if err != nil {
				d.fail(w, r, err)
				return
			}
			row := endpointRow{ep, h, ep.Receives(now)}
			if ep.IsListener() {
				v.Listeners = append(v.Listeners, row)
			} else {
				v.Rows = append(v.Rows, row)
			}
		}
		d.render(w, r, http.StatusOK, "webhooks", v)
	})
}

// HandleNewEndpointPage serves GET .../developers/webhooks/new.
func (d *Dashboard) HandleNewEndpointPage() http.Handler {
	return d.storePage(checkout.ActionManageWebhooks, func(w http.ResponseWriter, r *http.Request, s *scope) {
		d.render(w, r, http.StatusOK, "endpoint-form", endpointFormView{Layout: s.layout("Add an endpoint", sectionWebhooks),
			Form: endpointForm{All: true}, Choices: eventChoices()})
	})
}

// HandleNewEndpoint serves POST .../developers/webhooks/new.
func (d *Dashboard) HandleNewEndpoint() http.Handler {
	return d.storeAction(checkout.ActionManageWebhooks, func(w http.ResponseWriter, r *http.Request, s *scope) {
		f := readEndpointForm(r)
		ep, err := d.svc.CreateEndpoint(r.Context(), checkout.EndpointParams{MerchantID: s.store.ID, Mode: s.mode,
			URL: f.URL, Events: f.events(), Description: f.Description})
		if errs, ok := fieldErrors(err); ok {
			f.explain(errs)
			d.render(w, r, http.StatusBadRequest, "endpoint-form", endpointFormView{Layout: s.layout("Add an endpoint", sectionWebhooks),
				Form: f, Choices: eventChoices()})
			return
		}
		if err != nil {
			d.fail(w, r, err)
			return
		}
		http.Redirect(w, r, s.path(sectionWebhooks+"/"+ep.ID)+"?done=created", http.StatusSeeOther)
	})
}

// HandleEndpoint serves GET .../developers/webhooks/{id}.
func (d *Dashboard) HandleEndpoint() http.Handler {
	return d.storePage(checkout.ActionViewWebhooks, func(w http.ResponseWriter, r *http.Request, s *scope) {
		d.renderEndpoint(w, r, s, http.StatusOK, r.PathValue("id"), endpointView{Notice: noticeOf(r)})
	})
}

// renderEndpoint renders an endpoint's page with v's notice, error and
// whether its secret shows.
func (d *Dashboard) renderEndpoint(w http.ResponseWriter, r *http.Request, s *scope, status int, id string, v endpointView) {
	ep, err := d.svc.EndpointIn(r.Context(), s.checkoutScope(), id)
	if err != nil {
		d.failOrNotFound(w, r, s, err)
		return
	}
	h, err := d.svc.EndpointHealth(r.Context(), s.checkoutScope(), id)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	page, err := d.svc.DeliveriesIn(r.Context(), s.checkoutScope(), checkout.DeliveryFilter{EndpointID: id, Limit: 10})
	if err != nil {
		d.fail(w, r, err)
		return
	}
	v.Layout, v.Endpoint, v.Health, v.Deliveries = s.layout(endpointTitle(ep), sectionWebhooks), ep, h, page.Items
	v.Receives = ep.Receives(d.svc.Now())
	if page.Next != "" {
		v.More = s.path(sectionDeliveries) + "?endpoint=" + ep.ID
	}
	if v.Since == "" {
		v.Since = d.svc.Now().AddDate(0, 0, -7).UTC().Format(dateLayout)
	}
	v.Layout.Here = sectionWebhooks
	if v.Secret {
		w.Header().Set("Cache-Control", "no-store")
	}
	d.render(w, r, status, "endpoint", v)
}

func endpointTitle(ep *checkout.Endpoint) string {
	if ep.Description != "" {
		return ep.Description
	}
	return ep.URL
}

// HandleEditEndpointPage serves GET .../developers/webhooks/{id}/edit.
func (d *Dashboard) HandleEditEndpointPage() http.Handler {
	return d.storePage(checkout.ActionManageWebhooks, func(w http.ResponseWriter, r *http.Request, s *scope) {
		ep, err := d.svc.EndpointIn(r.Context(), s.checkoutScope(), r.PathValue("id"))
		if err != nil {
			d.failOrNotFound(w, r, s, err)
			return
		}
		if ep.IsListener() {
			// checkoutd listen sets a listener's events each time it runs.
			d.failOrNotFound(w, r, s, checkout.EndpointNotFound(ep.ID))
			return
		}
		v := endpointFormView{Layout: s.layout("Edit endpoint", sectionWebhooks), Endpoint: ep, Form: formOf(ep), Choices: eventChoices()}
		v.Layout.Here = sectionWebhooks
		d.render(w, r, http.StatusOK, "endpoint-form", v)
	})
}

// HandleEditEndpoint serves POST .../developers/webhooks/{id}/edit.
func (d *Dashboard) HandleEditEndpoint() http.Handler {
	return d.storeAction(checkout.ActionManageWebhooks, func(w http.ResponseWriter, r *http.Request, s *scope) {
		f := readEndpointForm(r)
		ep, err := d.svc.UpdateEndpoint(r.Context(), s.checkoutScope(), r.PathValue("id"),
			checkout.EndpointUpdate{URL: &f.URL, Events: nonNil(f.events()), Description: &f.Description})
		if errs, ok := fieldErrors(err); ok {
			cur, err := d.svc.EndpointIn(r.Context(), s.checkoutScope(), r.PathValue("id"))
			if err != nil {
				d.failOrNotFound(w, r, s, err)
				return
			}
			f.explain(errs)
			v := endpointFormView{Layout: s.layout("Edit endpoint", sectionWebhooks), Endpoint: cur, Form: f, Choices: eventChoices()}
			v.Layout.Here = sectionWebhooks
			d.render(w, r, http.StatusBadRequest, "endpoint-form", v)
			return
		}
		if err != nil {
			d.failOrNotFound(w, r, s, err)
			return
		}
		http.Redirect(w, r, s.path(sectionWebhooks+"/"+ep.ID)+"?done=saved", http.StatusSeeOther)
	})
}

// nonNil makes "no event ticked" an empty list, which the service refuses
// (nil would mean "unchanged").
func nonNil(events []string) []string {
	if events == nil {
		return []string{}
	}
	return events
}

// HandleEndpointAction serves POST .../developers/webhooks/{id}/{action}:
// test, disable, enable, secret (reveal), roll, retry-failed.
func (d *Dashboard) HandleEndpointAction() http.Handler {
	return d.storeAction(checkout.ActionManageWebhooks, func(w http.ResponseWriter, r *http.Request, s *scope) {
		id, sc := r.PathValue("id"), s.checkoutScope()
		back := func(done string, args ...any) {
			http.Redirect(w, r, s.path(sectionWebhooks+"/"+id)+"?done="+fmt.Sprintf(done, args...), http.StatusSeeOther)
		}
		// refused re-renders the endpoint's page with what went wrong.
		refused := func(err error, since string) {
			if checkout.IsCode(err, checkout.EValidationFailed) {
				d.renderEndpoint(w, r, s, http.StatusBadRequest, id, endpointView{Error: sentence(checkout.ErrorMessage(err)), Since: since})
				return
			}
			d.failOrNotFound(w, r, s, err)
		}
		switch r.PathValue("action") {
		case "test":
			_, dl, err := d.svc.SendTestEventIn(r.Context(), sc, id)
			if err != nil {
				refused(err, "")
				return
			}
			back("tested&delivery=%s", dl.ID)
		case "disable", "enable":
			_, canceled, err := d.svc.SetEndpointEnabledIn(r.Context(), sc, id, r.PathValue("action") == "enable")
			if err != nil {
				refused(err, "")
				return
			}
			if r.PathValue("action") == "enable" {
				back("enabled")
			} else {
				back("disabled&canceled=%d", canceled)
			}
		case "secret":
			if !d.authorize(w, r, s, checkout.ActionSeeWebhookSecrets) {
				return
			}
			if _, err := d.svc.RevealEndpointSecret(r.Context(), sc, id); err != nil {
				refused(err, "")
				return
			}
			d.renderEndpoint(w, r, s, http.StatusOK, id, endpointView{Secret: true})
		case "roll":
			keep := time.Duration(0)
			if r.PostFormValue("overlap") == "keep" {
				hours, err := strconv.Atoi(r.PostFormValue("hours"))
				if err != nil || hours < 1 || hours > 24 {
					d.renderEndpoint(w, r, s, http.StatusBadRequest, id, endpointView{Error: "Keep the old secret for 1 to 24 hours."})
					return
				}
				keep = time.Duration(hours) * time.Hour
			}
			if _, err := d.svc.RollEndpointSecretIn(r.Context(), sc, id, keep); err != nil {
				refused(err, "")
				return
			}
			d.renderEndpoint(w, r, s, http.StatusOK, id, endpointView{Secret: true, Notice: rolledNotice(keep)})
		case "retry-failed":
			since, err := time.Parse(dateLayout, r.PostFormValue("since"))
			if err != nil {
				d.renderEndpoint(w, r, s, http.StatusBadRequest, id, endpointView{Error: "Enter the date as YYYY-MM-DD.", Since: r.PostFormValue("since")})
				return
			}
			res, err := d.svc.RetryFailed(r.Context(), sc, id, since)
			if err != nil {
				refused(err, r.PostFormValue("since"))
				return
			}
			more := 0
			if res.More {
				more = 1
			}
			back("retried&queued=%d&more=%d", res.Queued, more)
		default:
			d.notFound(w, r, s.user)
		}
	})
}

func rolledNotice(keep time.Duration) string {
	if keep == 0 {
		return "The signing secret was rolled: requests are signed with the new secret only, from now on."
	}
	return fmt.Sprintf("The signing secret was rolled: for %d hours every request carries a signature with the new secret and one with the old, so your receiver can switch without missing an event.", int(keep.Hours()))
}

// HandleDeleteEndpointPage serves GET .../developers/webhooks/{id}/delete:
// the confirmation.
func (d *Dashboard) HandleDeleteEndpointPage() http.Handler {
	return d.storePage(checkout.ActionManageWebhooks, func(w http.ResponseWriter, r *http.Request, s *scope) {
		ep, err := d.svc.EndpointIn(r.Context(), s.checkoutScope(), r.PathValue("id"))
		if err != nil {
			d.failOrNotFound(w, r, s, err)
			return
		}
		v := endpointView{Layout: s.layout("Delete endpoint", sectionWebhooks), Endpoint: ep}
		v.Layout.Here = sectionWebhooks
		d.render(w, r, http.StatusOK, "endpoint-delete", v)
	})
}

// HandleDeleteEndpoint serves POST .../developers/webhooks/{id}/delete.
func (d *Dashboard) HandleDeleteEndpoint() http.Handler {
	return d.storeAction(checkout.ActionManageWebhooks, func(w http.ResponseWriter, r *http.Request, s *scope) {
		if err := d.svc.DeleteEndpointIn(r.Context(), s.checkoutScope(), r.PathValue("id")); err != nil {
			d.failOrNotFound(w, r, s, err)
			return
		}
		http.Redirect(w, r, s.path(sectionWebhooks)+"?done=deleted", http.StatusSeeOther)
	})
}

// noticeOf is the message of a finished action, from the fixed set the
// actions redirect with: nothing in the URL is shown as it came.
func noticeOf(r *http.Request) string {
	q := r.URL.Query()
	n := func(key string) int {
		v, _ := strconv.Atoi(q.Get(key))
		return max(v, 0)
	}
	switch q.Get("done") {
	case "created":
		return "The endpoint is added. Send a test event to check that it answers."
	case "saved":
		return "Saved."
	case "tested":
		return "A webhook.test event is on its way to this endpoint; its delivery shows below."
	case "enabled":
		return "The endpoint is enabled: new events are delivered to it."
	case "disabled":
		return fmt.Sprintf("The endpoint is disabled: %d queued deliveries were canceled, and no new event is delivered to it.", n("canceled"))
	case "deleted":
		return "The endpoint and its deliveries are deleted."
	case "retried":
		msg := fmt.Sprintf("%d failed deliveries were queued again.", n("queued"))
		if n("more") == 1 {
			msg += fmt.Sprintf(" More remain: each press resends up to %d.", checkout.MaxRetryFailed)
		}
		return msg
	case "resent":
		return "The delivery was resent as a new delivery; its attempts show on its page."
	}
	return ""
}

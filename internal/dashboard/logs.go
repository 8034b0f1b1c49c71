package dashboard

import (
	"net/http"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
)

// The Logs page (Developers, Logs): every authenticated API request of the
// mode, newest first, kept 30 days; a search by Request-Id that jumps to
// the request; a request's page with both bodies as stored (secrets
// redacted, headers never kept).

const sectionLogs = "developers/logs"

type logFilter struct{ RequestID, Status, Method, Route, Key, From, To string }

type logsView struct {
	Layout
	Filter   logFilter
	Errors   map[string]string
	Logs     []*checkout.RequestLog
	Keys     []*checkout.APIKey
	Routes   []string
	KeyNames map[string]string
	Pager    pager
	Filtered bool
	NotFound string // a Request-Id searched for and not found
}

type logView struct {
	Layout
	Log     *checkout.RequestLog
	KeyName string
}

// HandleLogs serves GET .../developers/logs.
func (d *Dashboard) HandleLogs() http.Handler {
	return d.storePage(checkout.ActionViewLogs, func(w http.ResponseWriter, r *http.Request, s *scope) {
		q := r.URL.Query()
		v := logsView{Layout: s.layout("Logs", sectionLogs), Errors: map[string]string{}, Filter: logFilter{
			RequestID: q.Get("request_id"), Status: q.Get("status"), Method: q.Get("method"), Route: q.Get("route"),
			Key: q.Get("key"), From: q.Get("from"), To: q.Get("to")}}
		v.Filtered = v.Filter != logFilter{}
		if id := v.Filter.RequestID; id != "" {
			// The search is exact and jumps to the request.
			_, err := d.svc.RequestLogIn(r.Context(), s.checkoutScope(), id)
			if err == nil {
				http.Redirect(w, r, s.path(sectionLogs+"/"+id), http.StatusSeeOther)
				return
			}
			if !checkout.IsCode(err, checkout.ENotFound) {
				d.fail(w, r, err)
				return
			}
			v.NotFound = id
		}
		keys, err := d.keysIn(r, s)
		if err != nil {
			d.fail(w, r, err)
			return
		}
		v.Keys, v.KeyNames, v.Routes = keys, keyNames(keys), service.LogRoutes
		from, to := dateRange(q, v.Errors)
		if len(v.Errors) == 0 && v.NotFound == "" {
			f := service.RequestLogFilter{StatusClass: v.Filter.Status, Method: v.Filter.Method, Route: v.Filter.Route,
				APIKeyID: v.Filter.Key, From: from, To: to}
			page, err := d.svc.ListRequestLogs(r.Context(), s.checkoutScope(), f, q.Get("cursor"), 0)
			if errs, ok := fieldErrors(err); ok {
				v.Errors = errs
			} else if err != nil {
				d.fail(w, r, err)
				return
			}
			v.Logs, v.Pager = page.Items, pagerFor(r, page.Next)
		}
		status := http.StatusOK
		if len(v.Errors) > 0 {
			status = http.StatusBadRequest
		} else if v.NotFound != "" {
			status = http.StatusNotFound
		}
		d.render(w, r, status, "logs", v)
	})
}

// HandleLog serves GET .../developers/logs/{id}.
func (d *Dashboard) HandleLog() http.Handler {
	return d.storePage(checkout.ActionViewLogs, func(w http.ResponseWriter, r *http.Request, s *scope) {
		l, err := d.svc.RequestLogIn(r.Context(), s.checkoutScope(), r.PathValue("id"))
		if err != nil {
			d.failOrNotFound(w, r, s, err)
			return
		}
		keys, err := d.keysIn(r, s)
		if err != nil {
			d.fail(w, r, err)
			return
		}
		d.render(w, r, http.StatusOK, "log", logView{Layout: s.layout(l.Method+" "+l.Path, sectionLogs), Log: l,
			KeyName: keyNames(keys)[l.APIKeyID]})
	})
}

// keyNames labels keys by id, for lists that name the key of a request.
func keyNames(keys []*checkout.APIKey) map[string]string {
	m := make(map[string]string, len(keys))
	for _, k := range keys {
		m[k.ID] = keyLabel(k)
	}
	return m
}

package dashboard

import (
	"net/http"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
)

// The Security page (Settings, Security; docs/dashboard.md): the store's
// audit trail, every change made to it through the dashboard, the CLI or
// the API, newest first, kept a year, with filters by actor, action and
// date. It is read-only: nothing deletes or edits an entry.

const sectionSecurity = "settings/security"

type auditFilter struct{ Actor, Action, From, To string }

type securityView struct {
	Layout
	Filter   auditFilter
	Errors   map[string]string
	Entries  []*checkout.AuditEntry
	Actions  []checkout.AuditAction
	Pager    pager
	Filtered bool
}

// HandleSecurity serves GET .../settings/security.
func (d *Dashboard) HandleSecurity() http.Handler {
	return d.storePage(checkout.ActionViewAudit, func(w http.ResponseWriter, r *http.Request, s *scope) {
		q := r.URL.Query()
		v := securityView{Layout: s.layout("Security", sectionSecurity), Errors: map[string]string{}, Actions: checkout.AuditActions,
			Filter: auditFilter{Actor: q.Get("actor"), Action: q.Get("action"), From: q.Get("from"), To: q.Get("to")}}
		v.Filtered = v.Filter != auditFilter{}
		from, to := dateRange(q, v.Errors)
		if len(v.Errors) == 0 {
			f := service.AuditFilter{Actor: v.Filter.Actor, Action: v.Filter.Action, Since: from, Until: to}
			page, err := d.svc.ListAudit(r.Context(), s.store.ID, f, q.Get("cursor"), 0)
			if errs, ok := fieldErrors(err); ok {
				if msg, ok := errs["until"]; ok {
					delete(errs, "until")
					errs["to"] = msg
				}
				v.Errors = errs
			} else if err != nil {
				d.fail(w, r, err)
				return
			}
			v.Entries, v.Pager = page.Items, pagerFor(r, page.Next)
		}
		status := http.StatusOK
		if len(v.Errors) > 0 {
			status = http.StatusBadRequest
		}
		d.render(w, r, status, "security", v)
	})
}

// actorLabel names an entry's actor for the page.
func actorLabel(a checkout.Actor) string {
	switch a.Kind {
	case checkout.ActorAccount:
		if a.Name != "" {
			return a.Name
		}
		return a.ID
	case checkout.ActorAPIKey:
		return "API key " + a.ID
	case checkout.ActorCLI:
		return "Command line (" + a.Name + ")"
	}
	return "Unknown"
}

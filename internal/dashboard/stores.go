package dashboard

import (
	"net/http"
	"strings"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
)

// storeForm is the store form's values and its errors by field.
type storeForm struct {
	Name, Currency, Website, StatementDescriptor string
	Errors                                       map[string]string
}

func readStoreForm(r *http.Request) storeForm {
	return storeForm{Name: r.PostFormValue("name"), Currency: r.PostFormValue("currency"),
		Website: r.PostFormValue("website"), StatementDescriptor: r.PostFormValue("statement_descriptor")}
}

func (f storeForm) params() checkout.MerchantParams {
	return checkout.MerchantParams{Name: f.Name, Currency: f.Currency, Website: f.Website, StatementDescriptor: f.StatementDescriptor}
}

type storeFormView struct {
	Layout
	Form  storeForm
	Saved bool
}

type storeHomeView struct {
	Layout
	BaseURL string
	// Disputes are the open disputes, the nearest deadline first, up to
	// service.MaxOpenDisputes; DisputesMore says there may be more.
	Disputes     []disputeRow
	DisputesMore bool
	// Range is the range form; Home the figures over it, nil when the form
	// is wrong.
	Range homeRangeForm
	Home  *homeFigures
	// Attention is the rest of what needs attention: failed deliveries,
	// crypto refunds to pay out.
	Attention *attentionView
}

// HandleNewStorePage serves GET /dashboard/stores/new.
func (d *Dashboard) HandleNewStorePage() http.Handler {
	return d.page(func(w http.ResponseWriter, r *http.Request, u *user) {
		d.render(w, r, http.StatusOK, "store-new", storeFormView{Layout: d.layout("Create a store", u), Form: storeForm{Currency: "USD"}})
	})
}

// HandleNewStore serves POST /dashboard/stores/new: the account creates a
// store and becomes its member, then lands on its home in test mode.
func (d *Dashboard) HandleNewStore() http.Handler {
	return d.action(func(w http.ResponseWriter, r *http.Request, u *user) {
		f := readStoreForm(r)
		m, err := d.svc.CreateStore(r.Context(), u.account.ID, f.params())
		if errs, ok := fieldErrors(err); ok {
			f.Errors = errs
			d.render(w, r, http.StatusBadRequest, "store-new", storeFormView{Layout: d.layout("Create a store", u), Form: f})
			return
		}
		if err != nil {
			d.fail(w, r, err)
			return
		}
		http.Redirect(w, r, storePath(m.ID, checkout.ModeTest, ""), http.StatusSeeOther)
	})
}

// HandleStoreRoot serves GET /dashboard/stores/{store}/: a store's pages
// start in test mode.
func (d *Dashboard) HandleStoreRoot() http.Handler {
	return d.page(func(w http.ResponseWriter, r *http.Request, u *user) {
		http.Redirect(w, r, storePath(r.PathValue("store"), checkout.ModeTest, ""), http.StatusSeeOther)
	})
}

// HandleStoreHome serves GET /dashboard/stores/{store}/{mode}/: the store,
// its figures over a range of days (?from=&to=, UTC dates), what needs
// attention (its open disputes, the nearest deadline first; its failed
// webhook deliveries of the last days; its crypto refunds waiting for the
// merchant's payout), and the first steps of an integration. A range that
// is wrong is answered 400 with the form and its errors, and the rest of
// the page.
func (d *Dashboard) HandleStoreHome() http.Handler {
	return d.storePage(checkout.ActionViewPayments, func(w http.ResponseWriter, r *http.Request, s *scope) {
		open, err := d.svc.OpenDisputes(r.Context(), s.checkoutScope())
		if err != nil {
			d.fail(w, r, err)
			return
		}
		attention, err := d.svc.HomeAttention(r.Context(), s.checkoutScope())
		if err != nil {
			d.fail(w, r, err)
			return
		}
		v := storeHomeView{Layout: s.layout(s.store.Name, ""), BaseURL: d.baseURL, DisputesMore: len(open) >= service.MaxOpenDisputes,
			Attention: newAttentionView(attention, s, d.svc.CheckoutBaseURL())}
		status := http.StatusOK
		form, rng := readHomeRange(r.URL.Query())
		if len(form.Errors) == 0 {
			h, err := d.svc.HomeFigures(r.Context(), s.checkoutScope(), rng)
			switch errs, invalid := fieldErrors(err); {
			case invalid:
				form.Errors = errs
			case err != nil:
				d.fail(w, r, err)
				return
			default:
				v.Home = newHomeFigures(h)
				form.From, form.To = h.From.Format(dateLayout), h.To.Format(dateLayout)
			}
		}
		if len(form.Errors) > 0 {
			status = http.StatusBadRequest
		}
		v.Range = form
		now := d.svc.Now()
		for _, dp := range open {
			v.Disputes = append(v.Disputes, newDisputeRow(dp, now))
		}
		d.render(w, r, status, "store-home", v)
	})
}

// HandleStoreSettingsPage serves GET /dashboard/stores/{store}/{mode}/settings.
func (d *Dashboard) HandleStoreSettingsPage() http.Handler {
	return d.storePage(checkout.ActionViewSettings, func(w http.ResponseWriter, r *http.Request, s *scope) {
		m := s.store
		d.render(w, r, http.StatusOK, "store-settings", storeFormView{Layout: s.layout("Store settings", "settings"),
			Form:  storeForm{Name: m.Name, Currency: m.Currency, Website: m.Website, StatementDescriptor: m.StatementDescriptor},
			Saved: r.URL.Query().Get("saved") == "1"})
	})
}

// HandleStoreSettings serves POST /dashboard/stores/{store}/{mode}/settings.
func (d *Dashboard) HandleStoreSettings() http.Handler {
	return d.storeAction(checkout.ActionManageSettings, func(w http.ResponseWriter, r *http.Request, s *scope) {
		f := readStoreForm(r)
		m, err := d.svc.UpdateStore(r.Context(), s.account.ID, s.store.ID, f.params())
		if errs, ok := fieldErrors(err); ok {
			f.Errors = errs
			d.render(w, r, http.StatusBadRequest, "store-settings", storeFormView{Layout: s.layout("Store settings", "settings"), Form: f})
			return
		}
		if err != nil {
			d.fail(w, r, err)
			return
		}
		http.Redirect(w, r, storePath(m.ID, s.mode, "settings")+"?saved=1", http.StatusSeeOther)
	})
}

// fieldErrors returns a validation error's messages by field, as
// sentences; false for any other error.
func fieldErrors(err error) (map[string]string, bool) {
	ce, ok := err.(*checkout.Error)
	if !ok || ce.Code != checkout.EValidationFailed {
		return nil, false
	}
	errs := map[string]string{}
	for _, v := range ce.Details {
		if _, dup := errs[v.Param]; !dup {
			errs[v.Param] = sentence(besideField(v.Param, v.Message))
		}
	}
	if len(ce.Details) == 0 {
		errs[ce.Param] = sentence(besideField(ce.Param, ce.Message))
	}
	return errs, true
}

// besideField drops the field's name from the start of a message shown
// beside the field: "url must use https" reads "Must use https" there.
func besideField(param, msg string) string {
	if param != "" {
		if rest, ok := strings.CutPrefix(msg, param+" "); ok {
			return rest
		}
	}
	return msg
}

package dashboard

import (
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
)

// The cards settings page (Settings, Cards; docs/dashboard.md): in live
// mode, the store's own account at each card acquirer this checkoutd
// connects to (Stripe): what is set up (the account, the publishable key,
// the secrets' hints, who set it and when, the check's warnings), the
// webhook URL the merchant gives the acquirer, and for an Administrator a
// form to set or replace the keys and a way to remove them. The secrets
// are never shown again, nor put back in a form. In test mode card
// payments are the simulator's, so the page says so and links to live
// mode.

const sectionCards = "settings/cards"

// cardsForm is one acquirer's form: the values it keeps (never a secret)
// and its errors by field ("" for the form's own).
type cardsForm struct {
	PublishableKey string
	Errors         map[string]string
}

// cardsAcquirer is one acquirer's part of the page.
type cardsAcquirer struct {
	Name  string // the connector's: stripe
	Title string // as shown: Stripe
	// Account is the store's account there, nil when it has none.
	Account *service.AcquirerAccountInfo
	// WebhookURL is where the merchant points the acquirer's webhook.
	WebhookURL string
	Form       cardsForm
}

type cardsView struct {
	Layout
	Acquirers []*cardsAcquirer
	// Set is the acquirer whose keys were just set; Removed the title of
	// the one whose account was just removed.
	Set     *cardsAcquirer
	Removed string
}

type cardsRemoveView struct {
	Layout
	Acquirer *cardsAcquirer
}

// HandleCards serves GET .../settings/cards.
func (d *Dashboard) HandleCards() http.Handler {
	return d.storePage(checkout.ActionViewSettings, func(w http.ResponseWriter, r *http.Request, s *scope) {
		if !s.mode.Live() {
			d.render(w, r, http.StatusOK, "cards-test", s.layout("Cards", sectionCards))
			return
		}
		acqs, err := d.cardsAcquirers(r, s)
		if err != nil {
			d.fail(w, r, err)
			return
		}
		v := cardsView{Layout: s.layout("Cards", sectionCards), Acquirers: acqs}
		q := r.URL.Query()
		for _, a := range acqs {
			if a.Name == q.Get("set") && a.Account != nil {
				v.Set = a
			}
			if a.Name == q.Get("removed") && a.Account == nil {
				v.Removed = a.Title
			}
		}
		w.Header().Set("Cache-Control", "no-store")
		d.render(w, r, http.StatusOK, "cards", v)
	})
}

// HandleSetCards serves POST .../settings/cards: checks the keys with the
// acquirer and keeps them, then shows the account; a refusal shows the
// form again with the error beside its field, the secrets' fields empty.
func (d *Dashboard) HandleSetCards() http.Handler {
	return d.storeAction(checkout.ActionManageAcquirer, func(w http.ResponseWriter, r *http.Request, s *scope) {
		if !s.mode.Live() {
			d.notFound(w, r, s.user)
			return
		}
		acqs, err := d.cardsAcquirers(r, s)
		if err != nil {
			d.fail(w, r, err)
			return
		}
		a := cardsAcquirerIn(acqs, r.PostFormValue("acquirer"))
		if a == nil {
			d.renderError(w, r, http.StatusBadRequest, "Choose an acquirer this checkoutd connects to.")
			return
		}
		f := cardsForm{PublishableKey: strings.TrimSpace(r.PostFormValue("publishable_key"))}
		_, err = d.svc.SetAcquirerAccount(r.Context(), service.AcquirerAccountParams{
			MerchantID: s.store.ID, Mode: s.mode, Acquirer: a.Name,
			SecretKey: r.PostFormValue("secret_key"), PublishableKey: f.PublishableKey, WebhookSecret: r.PostFormValue("webhook_secret"),
		})
		if err != nil {
			errs, ok := cardsFieldErrors(err)
			if !ok {
				d.fail(w, r, err)
				return
			}
			f.Errors = errs
			a.Form = f
			w.Header().Set("Cache-Control", "no-store")
			d.render(w, r, http.StatusBadRequest, "cards", cardsView{Layout: s.layout("Cards", sectionCards), Acquirers: acqs})
			return
		}
		http.Redirect(w, r, s.path(sectionCards)+"?set="+a.Name+"#acquirer-set", http.StatusSeeOther)
	})
}

// cardsFields are the form's fields, as the service names them.
var cardsFields = []string{"secret_key", "publishable_key", "webhook_secret"}

// cardsFieldErrors places a refusal of SetAcquirerAccount beside its
// fields, and what concerns no field (the acquirer out of reach, no
// secrets key...) above the form. False for an error the page cannot
// show: an internal one.
func cardsFieldErrors(err error) (map[string]string, bool) {
	var ce *checkout.Error
	if !errors.As(err, &ce) || ce.Code == checkout.EInternal || ce.Code == checkout.EPermissionDenied || ce.Code == checkout.EStoreNotFound {
		return nil, false
	}
	errs := map[string]string{}
	for _, v := range ce.Details {
		if slices.Contains(cardsFields, v.Param) && errs[v.Param] == "" {
			errs[v.Param] = sentence(v.Message)
		}
	}
	if len(errs) == 0 {
		errs[""] = sentence(ce.Message)
	}
	return errs, true
}

// HandleRemoveCardsPage serves GET .../settings/cards/{acquirer}/remove:
// the confirmation.
func (d *Dashboard) HandleRemoveCardsPage() http.Handler {
	return d.storePage(checkout.ActionManageAcquirer, func(w http.ResponseWriter, r *http.Request, s *scope) {
		a, ok := d.cardsAcquirerWithAccount(w, r, s)
		if !ok {
			return
		}
		d.render(w, r, http.StatusOK, "cards-remove", cardsRemoveView{Layout: s.layout("Remove the "+a.Title+" account", sectionCards), Acquirer: a})
	})
}

// HandleRemoveCards serves POST .../settings/cards/{acquirer}/remove.
func (d *Dashboard) HandleRemoveCards() http.Handler {
	return d.storeAction(checkout.ActionManageAcquirer, func(w http.ResponseWriter, r *http.Request, s *scope) {
		a, ok := d.cardsAcquirerWithAccount(w, r, s)
		if !ok {
			return
		}
		if err := d.svc.RemoveAcquirerAccount(r.Context(), s.store.ID, s.mode, a.Name); err != nil {
			d.failOrNotFound(w, r, s, err)
			return
		}
		http.Redirect(w, r, s.path(sectionCards)+"?removed="+a.Name, http.StatusSeeOther)
	})
}

// cardsAcquirerWithAccount returns the acquirer of the URL with the
// store's account there, in live mode; anything else is the 404 page.
func (d *Dashboard) cardsAcquirerWithAccount(w http.ResponseWriter, r *http.Request, s *scope) (*cardsAcquirer, bool) {
	if !s.mode.Live() {
		d.notFound(w, r, s.user)
		return nil, false
	}
	acqs, err := d.cardsAcquirers(r, s)
	if err != nil {
		d.fail(w, r, err)
		return nil, false
	}
	a := cardsAcquirerIn(acqs, r.PathValue("acquirer"))
	if a == nil || a.Account == nil {
		d.notFound(w, r, s.user)
		return nil, false
	}
	return a, true
}

// cardsAcquirers returns the acquirers of the page, each with the store's
// account there.
func (d *Dashboard) cardsAcquirers(r *http.Request, s *scope) ([]*cardsAcquirer, error) {
	var out []*cardsAcquirer
	for _, name := range d.svc.Acquirers() {
		a := &cardsAcquirer{Name: name, Title: service.AcquirerTitle(name), WebhookURL: d.svc.AcquirerWebhookURL(s.store.ID, name)}
		info, err := d.svc.AcquirerAccountOf(r.Context(), s.store.ID, s.mode, name)
		switch {
		case err == nil:
			a.Account = info
		case !checkout.IsCode(err, checkout.ENotFound):
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

func cardsAcquirerIn(acqs []*cardsAcquirer, name string) *cardsAcquirer {
	for _, a := range acqs {
		if strings.EqualFold(a.Name, name) {
			return a
		}
	}
	return nil
}

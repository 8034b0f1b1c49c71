package dashboard

import (
	"net/http"
	"slices"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/web"
)

// The API keys page (Developers, API keys): the store id, the mode's keys,
// a form to create one, and revocation after a confirmation. A new key's
// secret is shown once, on the page that answers the form, and never again:
// only its hash is kept.

type keyForm struct {
	Name        string
	Type        string
	Permissions []string
	Errors      map[string]string
}

// Has reports whether the form has permission p ticked.
func (f keyForm) Has(p string) bool { return slices.Contains(f.Permissions, p) }

type keysView struct {
	Layout
	Keys    []*checkout.APIKey
	Form    keyForm
	Revoked string // the name or id of a key just revoked
}

type keyCreatedView struct {
	Layout
	Key    *checkout.APIKey
	Secret string
}

type keyRevokeView struct {
	Layout
	Key *checkout.APIKey
}

const sectionKeys = "developers/keys"

// HandleKeys serves GET .../developers/keys.
func (d *Dashboard) HandleKeys() http.Handler {
	return d.storePage(checkout.ActionViewKeys, func(w http.ResponseWriter, r *http.Request, s *scope) {
		var revoked string
		if id := r.URL.Query().Get("revoked"); id != "" {
			if k, err := d.keyIn(r, s, id); err == nil {
				revoked = keyLabel(k)
			}
		}
		d.renderKeys(w, r, s, http.StatusOK, keyForm{Type: string(checkout.KeyBearer), Permissions: []string{string(checkout.PermCheckoutsWrite)}}, revoked)
	})
}

func (d *Dashboard) renderKeys(w http.ResponseWriter, r *http.Request, s *scope, status int, f keyForm, revoked string) {
	keys, err := d.keysIn(r, s)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	d.render(w, r, status, "keys", keysView{Layout: s.layout("API keys", sectionKeys), Keys: keys, Form: f, Revoked: revoked})
}

// HandleCreateKey serves POST .../developers/keys: the new key's secret,
// shown once.
func (d *Dashboard) HandleCreateKey() http.Handler {
	return d.storeAction(checkout.ActionManageKeys, func(w http.ResponseWriter, r *http.Request, s *scope) {
		f := keyForm{Name: r.PostFormValue("name"), Type: r.PostFormValue("type"), Permissions: r.PostForm["permissions"]}
		perms := make([]checkout.Permission, len(f.Permissions))
		for i, p := range f.Permissions {
			perms[i] = checkout.Permission(p)
		}
		k, secret, err := d.svc.CreateAPIKey(r.Context(), checkout.APIKeyParams{Name: f.Name, MerchantID: s.store.ID, Mode: s.mode,
			Type: checkout.KeyType(f.Type), Permissions: perms})
		if errs, ok := fieldErrors(err); ok {
			if errs["permissions"] != "" && len(perms) == 0 {
				errs["permissions"] = "Choose at least one permission."
			}
			f.Errors = errs
			d.renderKeys(w, r, s, http.StatusBadRequest, f, "")
			return
		}
		if err != nil {
			d.fail(w, r, err)
			return
		}
		// The secret is in this answer only: no cache may keep it.
		w.Header().Set("Cache-Control", "no-store")
		d.render(w, r, http.StatusCreated, "key-created", keyCreatedView{Layout: s.layout("API key created", sectionKeys), Key: k, Secret: secret})
	})
}

// HandleRevokeKeyPage serves GET .../developers/keys/{id}/revoke: the
// confirmation.
func (d *Dashboard) HandleRevokeKeyPage() http.Handler {
	return d.storePage(checkout.ActionManageKeys, func(w http.ResponseWriter, r *http.Request, s *scope) {
		k, err := d.keyIn(r, s, r.PathValue("id"))
		if err != nil {
			d.failOrNotFound(w, r, s, err)
			return
		}
		d.render(w, r, http.StatusOK, "key-revoke", keyRevokeView{Layout: s.layout("Revoke API key", sectionKeys), Key: k})
	})
}

// HandleRevokeKey serves POST .../developers/keys/{id}/revoke.
func (d *Dashboard) HandleRevokeKey() http.Handler {
	return d.storeAction(checkout.ActionManageKeys, func(w http.ResponseWriter, r *http.Request, s *scope) {
		k, err := d.svc.RevokeAPIKeyIn(r.Context(), s.checkoutScope(), r.PathValue("id"))
		if err != nil {
			d.failOrNotFound(w, r, s, err)
			return
		}
		http.Redirect(w, r, s.path(sectionKeys)+"?revoked="+k.ID, http.StatusSeeOther)
	})
}

// keysIn returns the keys of the scope's store and mode, newest first.
func (d *Dashboard) keysIn(r *http.Request, s *scope) ([]*checkout.APIKey, error) {
	keys, err := d.svc.ListAPIKeys(r.Context(), s.checkoutScope())
	slices.Reverse(keys)
	return keys, err
}

// keyIn returns a key of the scope's store and mode: not_found for any
// other, as for a key that does not exist.
func (d *Dashboard) keyIn(r *http.Request, s *scope, id string) (*checkout.APIKey, error) {
	k, err := d.svc.Store().APIKeyGet(r.Context(), id)
	if err == nil && (k.MerchantID != s.store.ID || k.Mode != s.mode) {
		err = checkout.Errorf(checkout.ENotFound, "No such API key: %s.", id)
	}
	return k, err
}

// failOrNotFound answers not_found with the 404 page, anything else as a
// failure.
func (d *Dashboard) failOrNotFound(w http.ResponseWriter, r *http.Request, s *scope, err error) {
	if web.StatusOf(checkout.ErrorCode(err)) == http.StatusNotFound {
		d.notFound(w, r, s.user)
		return
	}
	d.fail(w, r, err)
}

func keyLabel(k *checkout.APIKey) string {
	if k.Name != "" {
		return k.Name
	}
	return k.ID
}

package dashboard

import (
	"cmp"
	"net/http"
	"strings"

	"github.com/checkoutd/checkoutd/checkout"
)

// Store pages live under /dashboard/stores/{store}/{mode}/: every page of a
// store is scoped to one mode, named in its URL, so a link or a bookmark
// always shows the mode it was made in, and switching mode is switching the
// URL's segment while the rest of the path (the section) stays.

// scope is a store page's context: who is signed in, which of their stores,
// in which mode.
type scope struct {
	*user
	store  *checkout.Merchant
	role   checkout.Role // the account's in the store
	mode   checkout.Mode
	stores []*checkout.Merchant // the account's stores, for the switcher
}

// storePath is the path of a section of a store's pages in a mode; section
// "" is the store's home.
func storePath(storeID string, mode checkout.Mode, section string) string {
	return "/dashboard/stores/" + storeID + "/" + string(mode) + "/" + section
}

// path is the path of a section of the scope's store and mode.
func (s *scope) path(section string) string { return storePath(s.store.ID, s.mode, section) }

// checkoutScope is the scope as the service takes it.
func (s *scope) checkoutScope() checkout.Scope {
	return checkout.Scope{MerchantID: s.store.ID, Mode: s.mode}
}

// inStore wraps a store page: a signed-in account that is a member of the
// store in the URL, in a mode that exists, whose role allows the page's
// action. A store that does not exist and one the account is no member of
// are the same 404; an action the role does not allow, a 403 naming it.
// Every service function the page calls checks the role again: this
// refuses a page at once, before it shows a form its post would fail.
func (d *Dashboard) inStore(w http.ResponseWriter, r *http.Request, u *user, a checkout.Action) (*scope, bool) {
	mode := checkout.Mode(r.PathValue("mode"))
	if mode != checkout.ModeTest && mode != checkout.ModeLive {
		d.notFound(w, r, u)
		return nil, false
	}
	m, ms, err := d.svc.Member(r.Context(), u.account.ID, r.PathValue("store"))
	if checkout.IsCode(err, checkout.EStoreNotFound) {
		d.notFound(w, r, u)
		return nil, false
	}
	if err != nil {
		d.fail(w, r, err)
		return nil, false
	}
	stores, err := d.svc.AccountStores(r.Context(), u.account.ID)
	if err != nil {
		d.fail(w, r, err)
		return nil, false
	}
	if !ms.Role.May(a) {
		d.fail(w, r, checkout.Forbidden(ms.Role, a))
		return nil, false
	}
	return &scope{user: u, store: m, role: ms.Role, mode: mode, stores: stores}, true
}

// storePage wraps a GET page of a store, which a role may see when it may
// do a (checkout/role.go).
func (d *Dashboard) storePage(a checkout.Action, h func(w http.ResponseWriter, r *http.Request, s *scope)) http.Handler {
	return d.page(func(w http.ResponseWriter, r *http.Request, u *user) {
		if s, ok := d.inStore(w, r, u, a); ok {
			h(w, r, s)
		}
	})
}

// storeAction wraps a form post of a store: an action (cross-origin
// protection, form token) in a store the account is a member of, whose
// role may do a.
func (d *Dashboard) storeAction(a checkout.Action, h func(w http.ResponseWriter, r *http.Request, s *scope)) http.Handler {
	return d.storeActionUpTo(a, maxFormBytes, h)
}

// storeActionUpTo is storeAction for a form whose body may be up to limit
// bytes.
func (d *Dashboard) storeActionUpTo(a checkout.Action, limit int64, h func(w http.ResponseWriter, r *http.Request, s *scope)) http.Handler {
	return d.actionUpTo(limit, func(w http.ResponseWriter, r *http.Request, u *user) {
		if s, ok := d.inStore(w, r, u, a); ok {
			h(w, r, s)
		}
	})
}

// authorize refuses, with the service's answer, a page or an action the
// account's role does not allow: the page of a form whose post the service
// would refuse. It reports whether the role allows it.
func (d *Dashboard) authorize(w http.ResponseWriter, r *http.Request, s *scope, a checkout.Action) bool {
	if err := d.svc.Authorize(r.Context(), s.store.ID, a); err != nil {
		d.fail(w, r, err)
		return false
	}
	return true
}

func (d *Dashboard) notFound(w http.ResponseWriter, r *http.Request, u *user) {
	d.renderErrorFor(w, r, u, http.StatusNotFound, "There is no such page.")
}

// layout is the frame of a store page: section is the page's section
// (its path under the store and mode), which the navigation marks and the
// mode and store switches keep.
func (s *scope) layout(title, section string) Layout {
	return Layout{Title: title, Account: s.account, FormToken: s.formToken,
		Store: s.store, Stores: s.stores, Mode: s.mode, Section: section, Role: s.role}
}

// IsTest reports whether the page is in test mode.
func (l Layout) IsTest() bool { return l.Mode == checkout.ModeTest }

// Path is the path of a section of the page's store and mode.
func (l Layout) Path(section string) string { return storePath(l.Store.ID, l.Mode, section) }

// SwitchModePath is the page in the other mode: its Here, else its
// section.
func (l Layout) SwitchModePath() string {
	other := checkout.ModeLive
	if l.Mode == checkout.ModeLive {
		other = checkout.ModeTest
	}
	return storePath(l.Store.ID, other, cmp.Or(l.Here, l.Section))
}

// SwitchStorePath is the page, or its list, in another store.
func (l Layout) SwitchStorePath(storeID string) string {
	return storePath(storeID, l.Mode, cmp.Or(l.Here, l.Section))
}

// Current is "page" when section is the page's (for aria-current), else "".
func (l Layout) Current(section string) string {
	if l.Section == section || section != "" && strings.HasPrefix(l.Section, section+"/") {
		return "page"
	}
	return ""
}

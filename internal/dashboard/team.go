package dashboard

import (
	"net/http"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/web"
)

// The Team page (Settings, Team) lists a store's members with their roles
// and its pending invitations. An administrator invites by email with a
// role (the link shows once, on the page that answers the invite: the
// service sends no mail), changes a member's role, removes a member and
// revokes an invitation. The invitation page, public, is where the link
// leads: it joins a signed-in account of the email, or creates the
// account.

const sectionTeam = "team"

type teamView struct {
	Layout
	Members     []*checkout.Membership
	Invitations []*checkout.Invitation
	Roles       []checkout.Role
	Notice      string
	Error       string
	// Form is the invite form's values and errors.
	Form struct {
		Email, Role string
		Errors      map[string]string
	}
	// Link is an invitation's link, shown once, to the administrator who
	// made it.
	Link       string
	LinkInvite *checkout.Invitation
}

// HandleTeam serves GET .../team.
func (d *Dashboard) HandleTeam() http.Handler {
	return d.storePage(checkout.ActionViewMembers, func(w http.ResponseWriter, r *http.Request, s *scope) {
		v := teamView{Notice: teamNotice(r.URL.Query().Get("done"))}
		v.Form.Role = string(checkout.RoleViewer)
		d.renderTeam(w, r, s, http.StatusOK, v)
	})
}

func teamNotice(done string) string {
	switch done {
	case "role":
		return "The role is changed: it counts from the member's next page."
	case "removed":
		return "The member is removed: the store refuses them from their next page."
	case "revoked":
		return "The invitation is revoked: its link no longer works."
	}
	return ""
}

func (d *Dashboard) renderTeam(w http.ResponseWriter, r *http.Request, s *scope, status int, v teamView) {
	ms, err := d.svc.Members(r.Context(), s.store.ID)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	invs, err := d.svc.Invitations(r.Context(), s.store.ID)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	v.Layout, v.Members, v.Invitations, v.Roles = s.layout("Team", sectionTeam), ms, invs, checkout.Roles
	if v.Link != "" {
		w.Header().Set("Cache-Control", "no-store")
	}
	d.render(w, r, status, "team", v)
}

// HandleInvite serves POST .../team/invite: the invitation's link shows
// on the page that answers, this once.
func (d *Dashboard) HandleInvite() http.Handler {
	return d.storeAction(checkout.ActionManageMembers, func(w http.ResponseWriter, r *http.Request, s *scope) {
		var v teamView
		v.Form.Email, v.Form.Role = r.PostFormValue("email"), r.PostFormValue("role")
		inv, token, err := d.svc.InviteMember(r.Context(), s.store.ID, v.Form.Email, checkout.Role(v.Form.Role))
		if errs, ok := fieldErrors(err); ok {
			v.Form.Errors = errs
			d.renderTeam(w, r, s, http.StatusBadRequest, v)
			return
		}
		if checkout.IsCode(err, checkout.EMemberExists) {
			v.Form.Errors = map[string]string{"email": checkout.ErrorMessage(err)}
			d.renderTeam(w, r, s, http.StatusConflict, v)
			return
		}
		if err != nil {
			d.fail(w, r, err)
			return
		}
		v = teamView{Link: InvitationURL(d.baseURL, token), LinkInvite: inv}
		v.Form.Role = string(checkout.RoleViewer)
		d.renderTeam(w, r, s, http.StatusOK, v)
	})
}

// HandleMemberAction serves POST .../team/members/{account}/{action}:
// role (with the form's role) and remove.
func (d *Dashboard) HandleMemberAction() http.Handler {
	return d.storeAction(checkout.ActionManageMembers, func(w http.ResponseWriter, r *http.Request, s *scope) {
		account := r.PathValue("account")
		var err error
		done := ""
		switch r.PathValue("action") {
		case "role":
			_, err = d.svc.SetMemberRole(r.Context(), s.store.ID, account, checkout.Role(r.PostFormValue("role")))
			done = "role"
		case "remove":
			_, err = d.svc.RemoveMember(r.Context(), s.store.ID, account)
			done = "removed"
		default:
			d.notFound(w, r, s.user)
			return
		}
		switch checkout.ErrorCode(err) {
		case "":
		case checkout.ELastAdministrator, checkout.EValidationFailed:
			d.renderTeam(w, r, s, http.StatusConflict, teamView{Error: sentence(checkout.ErrorMessage(err))})
			return
		case checkout.EMemberNotFound:
			d.notFound(w, r, s.user)
			return
		default:
			d.fail(w, r, err)
			return
		}
		if account == s.account.ID {
			// An administrator who stepped down or left: the page may be
			// theirs no longer.
			http.Redirect(w, r, pathHome, http.StatusSeeOther)
			return
		}
		http.Redirect(w, r, s.path(sectionTeam)+"?done="+done, http.StatusSeeOther)
	})
}

// HandleRevokeInvitation serves POST .../team/invitations/{id}/revoke.
func (d *Dashboard) HandleRevokeInvitation() http.Handler {
	return d.storeAction(checkout.ActionManageMembers, func(w http.ResponseWriter, r *http.Request, s *scope) {
		if err := d.svc.RevokeInvitation(r.Context(), s.store.ID, r.PathValue("id")); err != nil {
			d.failOrNotFound(w, r, s, err)
			return
		}
		http.Redirect(w, r, s.path(sectionTeam)+"?done=revoked", http.StatusSeeOther)
	})
}

type invitationView struct {
	Layout
	Invitation *checkout.Invitation
	Store      *checkout.Merchant
	Token      string
	// SignedIn is the account of the browser, if any; Other when it is
	// not the invitation's email.
	SignedIn  *checkout.Account
	Other     bool
	PassError string
	Error     string
}

// HandleInvitationPage serves GET /dashboard/invitation?token=...: to the
// account of the invitation's email, signed in, a button that joins; to
// another account, how to switch; to a browser signed in to none, the form
// that creates the account.
func (d *Dashboard) HandleInvitationPage() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.renderInvitation(w, r, http.StatusOK, invitationView{Token: r.URL.Query().Get("token")})
	})
}

func (d *Dashboard) renderInvitation(w http.ResponseWriter, r *http.Request, status int, v invitationView) {
	inv, m, err := d.svc.Invitation(r.Context(), v.Token)
	if checkout.IsCode(err, checkout.EInvitationInvalid) {
		d.renderError(w, r, http.StatusNotFound, checkout.ErrorMessage(err))
		return
	}
	if err != nil {
		d.fail(w, r, err)
		return
	}
	v.Invitation, v.Store = inv, m
	v.Layout = Layout{Title: "Join " + m.Name}
	if u := d.optionalUser(r); u != nil {
		v.SignedIn, v.Other = u.account, u.account.Email != inv.Email
		v.Layout.Account, v.Layout.FormToken = u.account, u.formToken
	} else {
		v.Layout.FormToken = d.preauthToken(w, r)
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	d.render(w, r, status, "invitation", v)
}

// optionalUser is the signed-in user of the request, or nil: unlike
// signedIn it redirects nowhere.
func (d *Dashboard) optionalUser(r *http.Request) *user {
	c, err := r.Cookie(d.sessionCookie)
	if err != nil || c.Value == "" {
		return nil
	}
	ds, a, err := d.svc.DashboardSession(r.Context(), c.Value)
	if err != nil {
		return nil
	}
	return &user{session: ds, account: a, formToken: formToken(c.Value)}
}

// HandleAcceptInvitation serves POST /dashboard/invitation/accept: the
// signed-in account joins the store.
func (d *Dashboard) HandleAcceptInvitation() http.Handler {
	return d.action(func(w http.ResponseWriter, r *http.Request, u *user) {
		token := r.PostFormValue("token")
		m, err := d.svc.AcceptInvitation(r.Context(), token, u.account.ID)
		if checkout.IsCode(err, checkout.EInvitationInvalid) || checkout.IsCode(err, checkout.EMemberExists) {
			d.renderErrorFor(w, r, u, http.StatusConflict, checkout.ErrorMessage(err))
			return
		}
		if err != nil {
			d.fail(w, r, err)
			return
		}
		http.Redirect(w, r, storePath(m.MerchantID, checkout.ModeTest, ""), http.StatusSeeOther)
	})
}

// HandleJoin serves POST /dashboard/invitation: creates the account of the
// invitation's email with the password given, joins it to the store and
// signs it in.
func (d *Dashboard) HandleJoin() http.Handler {
	return d.preauth(func(w http.ResponseWriter, r *http.Request) {
		token, pw := r.PostFormValue("token"), r.PostFormValue("password")
		a, m, err := d.svc.AcceptInvitationNewAccount(service.WithOrigin(r.Context(), originOf(r, nil)), token, pw)
		switch checkout.ErrorCode(err) {
		case "":
		case checkout.EValidationFailed:
			v := invitationView{Token: token}
			if errs, _ := fieldErrors(err); errs != nil {
				v.PassError = errs["password"]
			}
			d.renderInvitation(w, r, http.StatusBadRequest, v)
			return
		case checkout.EAccountExists:
			d.renderInvitation(w, r, http.StatusConflict, invitationView{Token: token, Error: checkout.ErrorMessage(err)})
			return
		case checkout.EInvitationInvalid:
			d.renderError(w, r, http.StatusNotFound, checkout.ErrorMessage(err))
			return
		default:
			d.fail(w, r, err)
			return
		}
		session, err := d.svc.SignIn(r.Context(), a.Email, pw, web.ClientOf(r.RemoteAddr).String())
		if err != nil {
			http.Redirect(w, r, pathSignIn, http.StatusSeeOther)
			return
		}
		d.setCookie(w, d.sessionCookie, session, 0, http.SameSiteLaxMode)
		http.Redirect(w, r, storePath(m.MerchantID, checkout.ModeTest, ""), http.StatusSeeOther)
	})
}

package dashboard

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/web"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

// assets are the dashboard's style sheet and script.
var assets = web.LoadAssets(assetFS, "assets")

// maxFormBytes bounds a form post: the largest, setup, is an email and a
// password of at most 1,024 bytes. A form that needs more says so
// (actionUpTo): a dispute's evidence (maxEvidenceFormBytes).
const maxFormBytes = 16 << 10

// The form fields that carry the form token.
const formTokenField = "form_token"

// Paths of the dashboard.
const (
	pathHome   = "/dashboard/"
	pathSignIn = "/dashboard/signin"
	pathSetup  = "/dashboard/setup"
	// pathInvitation?token=T opens an invitation to a store's team.
	pathInvitation = "/dashboard/invitation"
)

// InvitationURL is the link of an invitation's token on the dashboard
// served at baseURL, as the Team page and checkoutd members invite show
// it.
func InvitationURL(baseURL, token string) string {
	return strings.TrimSuffix(baseURL, "/") + pathInvitation + "?token=" + url.QueryEscape(token)
}

// Dashboard serves the merchant dashboard.
type Dashboard struct {
	svc  *service.Service
	log  *slog.Logger
	tmpl *template.Template
	cop  *http.CrossOriginProtection
	// baseURL is where the service is reached, for the examples pages show.
	baseURL string
	// secure is whether the base URL is https: cookies are then Secure and
	// __Host- prefixed.
	secure bool
	// sessionCookie holds the session's token; preauthCookie the
	// double-submit token of the sign-in and setup forms.
	sessionCookie, preauthCookie string
}

// New returns the dashboard of svc, served at baseURL (its scheme decides
// the cookies' Secure attribute and prefix).
func New(svc *service.Service, baseURL string, log *slog.Logger) *Dashboard {
	if log == nil {
		log = slog.Default()
	}
	d := &Dashboard{svc: svc, log: log, cop: http.NewCrossOriginProtection(), baseURL: strings.TrimSuffix(baseURL, "/"),
		sessionCookie: "checkoutd_dashboard", preauthCookie: "checkoutd_dashboard_form"}
	if u, err := url.Parse(baseURL); err == nil && u.Scheme == "https" {
		d.secure = true
		d.sessionCookie = "__Host-" + d.sessionCookie
		d.preauthCookie = "__Host-" + d.preauthCookie
	}
	d.tmpl = template.Must(template.New("dashboard").Funcs(template.FuncMap{
		"asset":       func(name string) string { return assets.URL("/dashboard/assets/", name) },
		"copyable":    func(id, value string) copyable { return copyable{ID: id, Value: value} },
		"baseURL":     func() string { return d.baseURL },
		"list":        func(s ...string) []string { return s },
		"statusClass": statusClass,
		"millis": func(d time.Duration) string {
			return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 1, 64) + " ms"
		},
		"deliveryClass": deliveryClass,
		"paymentClass":  paymentClass,
		"sessionClass":  sessionClass,
		"refundClass":   refundClass,
		"disputeClass":  disputeClass,
		"maxEvidence":   func() string { return groupThousands(checkout.MaxEvidenceLen) },
		"unix":          func(sec int64) time.Time { return time.Unix(sec, 0) },
		"shortHash":     shortHash,
		"actorLabel":    actorLabel,
		"rate": func(c checkout.DeliveryCounts) string {
			r, ok := c.SuccessRate()
			if !ok {
				return "—"
			}
			return strconv.FormatFloat(r*100, 'f', 1, 64) + "%"
		},
		"maxRetry": func() int { return checkout.MaxRetryFailed },
		"deliveryRows": func(ds []*checkout.Delivery, eps map[string]*checkout.Endpoint, l Layout) deliveryRows {
			return deliveryRows{Deliveries: ds, Endpoints: eps, Layout: l}
		},
		"endpointLabel": func(eps map[string]*checkout.Endpoint, id string) string {
			if ep := eps[id]; ep != nil {
				return ep.URL
			}
			return id + " (deleted)"
		},
	}).ParseFS(templateFS, "templates/*.html"))
	d.cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.renderError(w, r, http.StatusForbidden, "This form was sent from another site, so it was not accepted.")
	}))
	return d
}

// user is who is signed in, for a page.
type user struct {
	session   *checkout.DashboardSession
	account   *checkout.Account
	formToken string
}

// page wraps a signed-in page: without a valid session, a redirect to
// sign-in.
func (d *Dashboard) page(h func(w http.ResponseWriter, r *http.Request, u *user)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, ok := d.signedIn(w, r)
		if !ok {
			return
		}
		h(w, asAccount(r, u), u)
	})
}

// asAccount is r with the signed-in account named in its context: every
// service function it calls then works within the account's role in the
// store (service.AsAccount).
func asAccount(r *http.Request, u *user) *http.Request {
	return r.WithContext(service.AsAccount(r.Context(), u.account.ID))
}

// action wraps a signed-in form post: cross-origin protection, a body of
// at most maxFormBytes, a valid session and its form token.
func (d *Dashboard) action(h func(w http.ResponseWriter, r *http.Request, u *user)) http.Handler {
	return d.actionUpTo(maxFormBytes, h)
}

// actionUpTo is action for a form whose body may be up to limit bytes.
func (d *Dashboard) actionUpTo(limit int64, h func(w http.ResponseWriter, r *http.Request, u *user)) http.Handler {
	return d.cop.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !d.parseForm(w, r, limit) {
			return
		}
		u, ok := d.signedIn(w, r)
		if !ok {
			return
		}
		if !sameToken(u.formToken, r.PostFormValue(formTokenField)) {
			d.renderError(w, r, http.StatusForbidden, "This form has expired. Go back, reload the page and try again.")
			return
		}
		h(w, asAccount(r.WithContext(service.WithOrigin(r.Context(), originOf(r, u.account))), u), u)
	}))
}

// preauth wraps the sign-in and setup form posts: cross-origin protection,
// a bounded body, and the double-submit token of preauthCookie.
func (d *Dashboard) preauth(h http.HandlerFunc) http.Handler {
	return d.cop.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !d.parseForm(w, r, maxFormBytes) {
			return
		}
		c, err := r.Cookie(d.preauthCookie)
		if err != nil || c.Value == "" || !sameToken(c.Value, r.PostFormValue(formTokenField)) {
			d.renderError(w, r, http.StatusForbidden, "This form has expired. Go back, reload the page and try again.")
			return
		}
		h(w, r.WithContext(service.WithOrigin(r.Context(), originOf(r, nil))))
	}))
}

func (d *Dashboard) parseForm(w http.ResponseWriter, r *http.Request, limit int64) bool {
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	if err := r.ParseForm(); err != nil {
		d.renderError(w, r, http.StatusBadRequest, "The form could not be read.")
		return false
	}
	return true
}

// originOf is who makes the changes of a form post, for the audit trail:
// the account signed in (none before sign-in), the TCP peer's address and
// the User-Agent header.
func originOf(r *http.Request, a *checkout.Account) service.Origin {
	o := service.Origin{ClientAddress: web.AddressOf(r.RemoteAddr), UserAgent: r.UserAgent()}
	if a != nil {
		o.Actor = checkout.Actor{Kind: checkout.ActorAccount, ID: a.ID, Name: a.Email}
	}
	return o
}

func sameToken(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// signedIn returns the request's signed-in user, or redirects to sign-in
// (clearing a cookie that names no valid session) and returns false.
func (d *Dashboard) signedIn(w http.ResponseWriter, r *http.Request) (*user, bool) {
	var token string
	if c, err := r.Cookie(d.sessionCookie); err == nil {
		token = c.Value
	}
	ds, a, err := d.svc.DashboardSession(r.Context(), token)
	if checkout.IsCode(err, checkout.EAuthenticationRequired) {
		if token != "" {
			d.clearCookie(w, d.sessionCookie)
		}
		http.Redirect(w, r, pathSignIn, http.StatusSeeOther)
		return nil, false
	}
	if err != nil {
		d.fail(w, r, err)
		return nil, false
	}
	return &user{session: ds, account: a, formToken: formToken(token)}, true
}

// formToken is a signed-in session's form token: derived from the
// session's secret token, so it needs no storage, differs per session, and
// cannot be known without the cookie that another site cannot read.
func formToken(sessionToken string) string {
	sum := sha256.Sum256([]byte("checkoutd dashboard form token\x00" + sessionToken))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// setCookie sets a cookie of the dashboard: HttpOnly, Path=/ (the __Host-
// prefix requires it), Secure under https, with sameSite.
func (d *Dashboard) setCookie(w http.ResponseWriter, name, value string, maxAge int, sameSite http.SameSite) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, Secure: d.secure, SameSite: sameSite})
}

func (d *Dashboard) clearCookie(w http.ResponseWriter, name string) {
	d.setCookie(w, name, "", -1, http.SameSiteLaxMode)
}

// preauthToken returns the double-submit token of the sign-in and setup
// forms, setting its cookie when the request has none.
func (d *Dashboard) preauthToken(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(d.preauthCookie); err == nil && len(c.Value) == 43 {
		return c.Value
	}
	b := make([]byte, 32)
	rand.Read(b)
	tok := base64.RawURLEncoding.EncodeToString(b)
	d.setCookie(w, d.preauthCookie, tok, 0, http.SameSiteStrictMode)
	return tok
}

// startSession signs the browser in with a new session token.
func (d *Dashboard) startSession(w http.ResponseWriter, r *http.Request, token string) {
	// Whatever session the browser had ends: one browser, one session.
	if c, err := r.Cookie(d.sessionCookie); err == nil && c.Value != "" && c.Value != token {
		if err := d.svc.SignOut(r.Context(), c.Value); err != nil {
			web.Logger(r.Context()).WarnContext(r.Context(), "end the previous dashboard session", "err", err)
		}
	}
	d.setCookie(w, d.sessionCookie, token, 0, http.SameSiteLaxMode)
	http.Redirect(w, r, pathHome, http.StatusSeeOther)
}

// views

// Layout is what the frame of every page needs.
type Layout struct {
	Title     string
	Account   *checkout.Account // nil on the sign-in and setup pages
	FormToken string
	// On a store's pages: the store, the account's stores (the switcher),
	// the mode, and the page's section (its path under the store and mode).
	Store   *checkout.Merchant
	Stores  []*checkout.Merchant
	Mode    checkout.Mode
	Section string
	// Here is where the mode and store switches go when not to Section: the
	// page's list, for a page of one object (which exists in one store and
	// mode only), or a page outside Section's path.
	Here string
	// Role is the account's role in Store: the page shows what it may do
	// (May), and hides the rest. Hiding is not the check: the service
	// refuses what the role does not allow, whatever is sent.
	Role checkout.Role
}

// May reports whether the page's role may do an action (a
// checkout.Action's name: "refunds.write").
func (l Layout) May(action string) bool { return l.Role.May(checkout.Action(action)) }

type signInView struct {
	Layout
	Email   string
	Error   string
	Limited bool
}

type setupView struct {
	Layout
	Token      string
	Email      string
	EmailError string
	PassError  string
	FormError  string
}

type homeView struct {
	Layout
	Stores []*checkout.Merchant
}

type errorView struct {
	Layout
	Status    int
	Message   string
	RequestID string
}

// HandleSignInPage serves GET /dashboard/signin.
func (d *Dashboard) HandleSignInPage() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.render(w, r, http.StatusOK, "signin", signInView{Layout: Layout{Title: "Sign in", FormToken: d.preauthToken(w, r)}})
	})
}

// HandleSignIn serves POST /dashboard/signin.
func (d *Dashboard) HandleSignIn() http.Handler {
	return d.preauth(func(w http.ResponseWriter, r *http.Request) {
		email := r.PostFormValue("email")
		token, err := d.svc.SignIn(r.Context(), email, r.PostFormValue("password"), web.ClientOf(r.RemoteAddr).String())
		if err == nil {
			d.startSession(w, r, token)
			return
		}
		v := signInView{Layout: Layout{Title: "Sign in", FormToken: d.preauthToken(w, r)}, Email: email}
		switch checkout.ErrorCode(err) {
		case checkout.EInvalidCredentials:
			v.Error = "Email or password is incorrect."
			d.render(w, r, http.StatusUnauthorized, "signin", v)
		case checkout.ERateLimited:
			v.Error, v.Limited = checkout.ErrorMessage(err), true
			if ce, ok := err.(*checkout.Error); ok && ce.RetryAfter > 0 {
				w.Header().Set("Retry-After", strconv.Itoa(int((ce.RetryAfter+time.Second-1)/time.Second)))
			}
			d.render(w, r, http.StatusTooManyRequests, "signin", v)
		default:
			d.fail(w, r, err)
		}
	})
}

// HandleSignOut serves POST /dashboard/signout.
func (d *Dashboard) HandleSignOut() http.Handler {
	return d.action(func(w http.ResponseWriter, r *http.Request, u *user) {
		c, _ := r.Cookie(d.sessionCookie)
		if err := d.svc.SignOut(r.Context(), c.Value); err != nil {
			d.fail(w, r, err)
			return
		}
		d.clearCookie(w, d.sessionCookie)
		http.Redirect(w, r, pathSignIn, http.StatusSeeOther)
	})
}

// HandleSetupPage serves GET /dashboard/setup?token=...: the first
// account's form, while the link is valid.
func (d *Dashboard) HandleSetupPage() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token := r.URL.Query().Get("token")
		if err := d.svc.CheckSetupToken(r.Context(), token); err != nil {
			d.setupFailed(w, r, err)
			return
		}
		d.render(w, r, http.StatusOK, "setup", setupView{
			Layout: Layout{Title: "Create the first account", FormToken: d.preauthToken(w, r)}, Token: token})
	})
}

// HandleSetup serves POST /dashboard/setup: creates the first account and
// signs it in.
func (d *Dashboard) HandleSetup() http.Handler {
	return d.preauth(func(w http.ResponseWriter, r *http.Request) {
		token, email, pw := r.PostFormValue("token"), r.PostFormValue("email"), r.PostFormValue("password")
		_, err := d.svc.CompleteSetup(r.Context(), token, email, pw)
		if checkout.IsCode(err, checkout.EValidationFailed) {
			v := setupView{Layout: Layout{Title: "Create the first account", FormToken: d.preauthToken(w, r)}, Token: token, Email: email}
			for _, vi := range err.(*checkout.Error).Details {
				switch vi.Param {
				case "email":
					v.EmailError = sentence(vi.Message)
				case "password":
					v.PassError = sentence(vi.Message)
				}
			}
			d.render(w, r, http.StatusBadRequest, "setup", v)
			return
		}
		if err != nil {
			d.setupFailed(w, r, err)
			return
		}
		session, err := d.svc.SignIn(r.Context(), email, pw, web.ClientOf(r.RemoteAddr).String())
		if err != nil {
			// The account exists; signing in by hand is what is left.
			http.Redirect(w, r, pathSignIn, http.StatusSeeOther)
			return
		}
		d.startSession(w, r, session)
	})
}

func (d *Dashboard) setupFailed(w http.ResponseWriter, r *http.Request, err error) {
	if checkout.IsCode(err, checkout.ESetupTokenInvalid) {
		d.renderError(w, r, http.StatusNotFound, checkout.ErrorMessage(err))
		return
	}
	d.fail(w, r, err)
}

// sentence capitalises a violation's message for the page.
func sentence(s string) string {
	if s == "" {
		return s
	}
	s = strings.ToUpper(s[:1]) + s[1:]
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

// HandleHome serves GET /dashboard/: the account's stores.
func (d *Dashboard) HandleHome() http.Handler {
	return d.page(func(w http.ResponseWriter, r *http.Request, u *user) {
		stores, err := d.svc.AccountStores(r.Context(), u.account.ID)
		if err != nil {
			d.fail(w, r, err)
			return
		}
		d.render(w, r, http.StatusOK, "home", homeView{Layout: d.layout("Home", u), Stores: stores})
	})
}

// HandleNotFound serves every other GET under /dashboard/: sign-in without
// a session (so nothing tells which pages exist), 404 with one.
func (d *Dashboard) HandleNotFound() http.Handler {
	return d.page(func(w http.ResponseWriter, r *http.Request, u *user) {
		d.notFound(w, r, u)
	})
}

// copyable is a value shown with a copy button.
type copyable struct{ ID, Value string }

// HandleAsset serves GET /dashboard/assets/{name}: the style sheet and the
// script, cached for good under their version.
func (d *Dashboard) HandleAsset() http.Handler { return assets.Handler() }

func (d *Dashboard) layout(title string, u *user) Layout {
	return Layout{Title: title, Account: u.account, FormToken: u.formToken}
}

// fail renders a generic error page; the detail goes to the log under the
// request id.
func (d *Dashboard) fail(w http.ResponseWriter, r *http.Request, err error) {
	if checkout.IsCode(err, checkout.EPermissionDenied) {
		d.renderError(w, r, http.StatusForbidden, checkout.ErrorMessage(err))
		return
	}
	if checkout.IsCode(err, checkout.EStoreNotFound) {
		// The account was removed from the store since the page began.
		d.renderError(w, r, http.StatusNotFound, "There is no such page.")
		return
	}
	if checkout.IsCode(err, checkout.EUnavailable) {
		w.Header().Set("Retry-After", "5")
		d.renderError(w, r, http.StatusServiceUnavailable, "The dashboard is unavailable for a moment. Try again shortly.")
		return
	}
	web.Logger(r.Context()).ErrorContext(r.Context(), "dashboard failed", "err", err)
	d.renderError(w, r, http.StatusInternalServerError, "Something went wrong on our side. Try again shortly.")
}

func (d *Dashboard) renderError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	d.renderErrorFor(w, r, nil, status, msg)
}

func (d *Dashboard) renderErrorFor(w http.ResponseWriter, r *http.Request, u *user, status int, msg string) {
	lv := Layout{Title: http.StatusText(status)}
	if u != nil {
		lv = d.layout(http.StatusText(status), u)
	}
	d.render(w, r, status, "error", errorView{Layout: lv, Status: status, Message: msg, RequestID: w.Header().Get("Request-Id")})
}

func (d *Dashboard) render(w http.ResponseWriter, r *http.Request, status int, name string, data any) {
	web.SetPageHeaders(w, "'self'")
	var buf bytes.Buffer
	if err := d.tmpl.ExecuteTemplate(&buf, name, data); err != nil {
		web.Logger(r.Context()).ErrorContext(r.Context(), "render dashboard page", "template", name, "err", err)
		http.Error(w, "Something went wrong on our side.", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

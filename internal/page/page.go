package page

import (
	"bytes"
	"embed"
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/web"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

// maxFormBytes bounds a form post: the largest, a skins trade, is a few
// hundred bytes.
const maxFormBytes = 16 << 10

// Page serves the hosted payment page.
type Page struct {
	svc    *service.Service
	log    *slog.Logger
	tmpl   *template.Template
	assets web.Assets
	cop    *http.CrossOriginProtection
}

// New returns the page of svc.
func New(svc *service.Service, log *slog.Logger) *Page {
	if log == nil {
		log = slog.Default()
	}
	p := &Page{svc: svc, log: log, assets: web.LoadAssets(assetFS, "assets"), cop: http.NewCrossOriginProtection()}
	p.tmpl = template.Must(template.New("page").Funcs(template.FuncMap{
		"asset": func(name string) string { return p.assets.URL("/assets/", name) },
	}).ParseFS(templateFS, "templates/*.html"))
	p.cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.renderError(w, r, http.StatusForbidden, "This form was sent from another site, so it was not accepted.")
	}))
	return p
}

// HandleInvoice serves GET /invoice/{id}: the page in the session's state.
func (p *Page) HandleInvoice() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ps, ok := p.pageSession(w, r)
		if !ok {
			return
		}
		v, err := p.view(r.Context(), w, r, ps, "")
		if err != nil {
			p.fail(w, r, err)
			return
		}
		p.render(w, r, http.StatusOK, ps, v)
	})
}

// HandleCard serves POST /invoice/{id}/card: a card payment.
func (p *Page) HandleCard() http.Handler {
	return p.form(func(w http.ResponseWriter, r *http.Request, id string) {
		form := pay.CardForm{
			Number: r.PostFormValue("number"), Expiry: r.PostFormValue("expiry"),
			CVC: r.PostFormValue("cvc"), Name: r.PostFormValue("name"), Email: r.PostFormValue("email"),
		}
		out, err := p.svc.PayByCard(r.Context(), id, form)
		var ce *checkout.Error
		if errors.As(err, &ce) && ce.Code == checkout.EValidationFailed {
			// Show the form again with what was typed, but for the card
			// number and CVC, which are never sent back.
			ps, ok := p.pageSession(w, r)
			if !ok {
				return
			}
			v, err := p.view(r.Context(), w, r, ps, checkout.MethodCard)
			if err != nil {
				p.fail(w, r, err)
				return
			}
			v.Form = cardFormView{Expiry: form.Expiry, Name: form.Name, Errors: map[string]string{}}
			v.Email = form.Email
			for _, d := range ce.Details {
				if _, seen := v.Form.Errors[d.Param]; !seen {
					v.Form.Errors[d.Param] = d.Message
				}
			}
			p.render(w, r, http.StatusBadRequest, ps, v)
			return
		}
		p.afterPayment(w, r, id, checkout.MethodCard, out, err)
	})
}

// HandleAcquirerStart serves POST /invoice/{id}/card/start: the script of
// a card acquirer's element starts (or resumes) the session's card payment
// there before it confirms it. It answers JSON in the envelope: the client
// secret the element confirms with; or, when the session declines a
// payment now (paid, expired, too many attempts), the page to go back to
// ("redirect"), which says why; or an error (503 when the acquirer did not
// answer: the buyer tries again).
func (p *Page) HandleAcquirerStart() http.Handler {
	return p.form(func(w http.ResponseWriter, r *http.Request, id string) {
		w.Header().Set("Cache-Control", "no-store")
		start, err := p.svc.StartAcquirerPayment(r.Context(), id)
		if err != nil {
			var d checkout.Decline
			if errors.As(err, &d) {
				u := invoicePath(id) + "?" + url.Values{"method": {string(checkout.MethodCard)}, "decline": {string(d)}}.Encode()
				web.WriteData(w, http.StatusOK, acquirerStartJSON{Error: d.Message(), Redirect: u})
				return
			}
			web.WriteError(w, r, err)
			return
		}
		web.WriteData(w, http.StatusOK, acquirerStartJSON{ClientSecret: start.ClientSecret, PaymentID: start.Payment.ID})
	})
}

// acquirerStartJSON is the answer of HandleAcquirerStart.
type acquirerStartJSON struct {
	ClientSecret string `json:"client_secret,omitempty"`
	PaymentID    string `json:"payment_id,omitempty"`
	Error        string `json:"error,omitempty"`
	Redirect     string `json:"redirect,omitempty"`
}

// HandleAcquirerReturn serves GET /invoice/{id}/card/return: the buyer's
// way back from the card acquirer's element (after 3-D Secure, or a
// decline the element reported). The payment is looked up at the
// acquirer; what the address says is not read. Then on as after any
// payment: the merchant's return_url when the session is paid, the page
// with the outcome otherwise.
func (p *Page) HandleAcquirerReturn() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		out, err := p.svc.ReturnFromAcquirer(r.Context(), id)
		if err != nil {
			p.fail(w, r, err)
			return
		}
		p.afterPayment(w, r, id, checkout.MethodCard, out, nil)
	})
}

// HandleAcquirerAdapter serves GET /assets/acquirer/{file}: checkoutd's
// script for a card acquirer's element ("stripe.js" for the acquirer named
// stripe).
func (p *Page) HandleAcquirerAdapter() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, ok := strings.CutSuffix(r.PathValue("file"), ".js")
		page, found := p.svc.AcquirerPage(name)
		if !ok || !found || len(page.Adapter) == 0 {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "no-cache")
		w.Write(page.Adapter)
	})
}

// HandleCryptoQuote serves POST /invoice/{id}/crypto: the buyer picked a
// coin; the page then shows its address, amount and QR code.
func (p *Page) HandleCryptoQuote() http.Handler {
	return p.form(func(w http.ResponseWriter, r *http.Request, id string) {
		coin := r.PostFormValue("coin")
		if _, err := p.svc.CryptoQuote(r.Context(), id, coin); err != nil {
			p.declined(w, r, id, checkout.MethodCrypto, err)
			return
		}
		c, _ := checkout.CoinByCode(coin)
		p.redirect(w, r, id, url.Values{"method": {"crypto"}, "coin": {c.Code}})
	})
}

// HandleCryptoSimulate serves POST /invoice/{id}/crypto/simulate: the
// test-mode control that broadcasts the simulated transaction.
func (p *Page) HandleCryptoSimulate() http.Handler {
	return p.form(func(w http.ResponseWriter, r *http.Request, id string) {
		coin := strings.ToUpper(r.PostFormValue("coin"))
		if _, err := p.svc.SimulateCryptoPayment(r.Context(), id, coin); err != nil {
			p.declined(w, r, id, checkout.MethodCrypto, err)
			return
		}
		p.redirect(w, r, id, url.Values{"method": {"crypto"}, "coin": {coin}})
	})
}

// HandleSkins serves POST /invoice/{id}/skins: a trade of the picked items.
func (p *Page) HandleSkins() http.Handler {
	return p.form(func(w http.ResponseWriter, r *http.Request, id string) {
		out, err := p.svc.PayBySkins(r.Context(), id, r.PostForm["item"])
		var ce *checkout.Error
		if errors.As(err, &ce) && ce.Code == checkout.EValidationFailed {
			ps, ok := p.pageSession(w, r)
			if !ok {
				return
			}
			v, err := p.view(r.Context(), w, r, ps, checkout.MethodSkins)
			if err != nil {
				p.fail(w, r, err)
				return
			}
			v.Message = ce.Message
			picked := map[string]bool{}
			for _, id := range r.PostForm["item"] {
				picked[id] = true
			}
			for i := range v.Skins {
				v.Skins[i].Checked = picked[v.Skins[i].ID]
			}
			p.render(w, r, http.StatusBadRequest, ps, v)
			return
		}
		p.afterPayment(w, r, id, checkout.MethodSkins, out, err)
	})
}

// statusJSON is what the page's script polls: only what the buyer's page
// needs to follow a payment, nothing of the session's contents.
type statusJSON struct {
	Status      checkout.Status `json:"status"`
	Payment     *paymentStatus  `json:"payment"`
	RedirectURL *string         `json:"redirect_url"`
}

type paymentStatus struct {
	Method                checkout.PaymentMethod `json:"method"`
	Status                checkout.PaymentStatus `json:"status"`
	Confirmations         *int                   `json:"confirmations,omitempty"`
	ConfirmationsRequired *int                   `json:"confirmations_required,omitempty"`
	HoldUntil             *int64                 `json:"hold_until,omitempty"`
	// RemainingBase is, while a live crypto payment is short of its
	// amount, what is still to come, in base units.
	RemainingBase *string `json:"remaining_base,omitempty"`
	// Dropped is set while a transaction of a live crypto payment has
	// left the mempool unmined.
	Dropped bool `json:"dropped,omitempty"`
}

// HandleStatus serves GET /invoice/{id}/status.
func (p *Page) HandleStatus() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ps, err := p.svc.PageSession(r.Context(), r.PathValue("id"))
		if err != nil {
			web.WriteError(w, r, err)
			return
		}
		st := statusJSON{Status: ps.Session.Status}
		if ps.Active != nil {
			st.Payment = &paymentStatus{Method: ps.Active.Method, Status: ps.Active.Status}
			if ps.Active.Crypto != nil {
				// The count is left out while the network does not answer
				// (the page keeps what it shows); the rest stands.
				if pr, err := p.svc.CryptoProgressOf(r.Context(), ps.Active); err == nil {
					st.Payment.Confirmations, st.Payment.ConfirmationsRequired = &pr.Confirmations, &pr.Needed
				} else {
					p.log.WarnContext(r.Context(), "crypto confirmations unknown: the network did not answer", "payment_id", ps.Active.ID, "err", err)
				}
				if rem := remaining(ps.Active.Crypto); rem != nil {
					s := rem.String()
					st.Payment.RemainingBase = &s
				}
				st.Payment.Dropped = ps.Active.Crypto.DroppedAt != 0
			}
			if ps.Active.Skins != nil {
				st.Payment.HoldUntil = &ps.Active.Skins.HoldUntil
			}
		}
		if ps.Session.Status == checkout.StatusComplete {
			u := ps.Session.ReturnURLWithID()
			if u == "" {
				u = invoicePath(ps.Session.ID)
			}
			st.RedirectURL = &u
		}
		w.Header().Set("Cache-Control", "no-store")
		web.WriteData(w, http.StatusOK, st)
	})
}

// HandleAsset serves GET /assets/{name}: the page's script and style sheet.
func (p *Page) HandleAsset() http.Handler { return p.assets.Handler() }

// HandleNotFound serves the page's 404 for any other path under /invoice/.
func (p *Page) HandleNotFound() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.renderError(w, r, http.StatusNotFound, "")
	})
}

// form wraps a form handler: bounded body, cross-origin protection, the
// double-submit token, and a known session id.
func (p *Page) form(h func(w http.ResponseWriter, r *http.Request, id string)) http.Handler {
	return p.checkedForm(invoiceCookiePath, func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		if !checkout.ValidSessionID(id) {
			p.renderError(w, r, http.StatusNotFound, "")
			return
		}
		h(w, r, id)
	})
}

// checkedForm wraps a form handler of the pages under cookiePath: bounded
// body, cross-origin protection and the double-submit token.
func (p *Page) checkedForm(cookiePath string, h http.HandlerFunc) http.Handler {
	return p.cop.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
		if err := r.ParseForm(); err != nil {
			p.renderError(w, r, http.StatusBadRequest, "The form could not be read.")
			return
		}
		if !csrfValid(r) {
			p.renderError(w, r, http.StatusForbidden, "This form has expired. Go back, reload the page and try again.")
			return
		}
		h(w, r)
	}))
}

// afterPayment answers a payment attempt: to the merchant's return_url (or
// the receipt) when the session is paid, and back to the page otherwise,
// where the outcome shows.
func (p *Page) afterPayment(w http.ResponseWriter, r *http.Request, id string, method checkout.PaymentMethod, out *service.PaymentOutcome, err error) {
	if err != nil {
		p.declined(w, r, id, method, err)
		return
	}
	q := url.Values{"method": {string(method)}}
	switch {
	case out.Payment != nil && out.Payment.Status == checkout.PaymentFailed:
		q.Set("failed", out.Payment.ID)
	case out.Session.Status == checkout.StatusComplete:
		if u := out.Session.ReturnURLWithID(); u != "" {
			http.Redirect(w, r, u, http.StatusSeeOther)
			return
		}
		q = nil // the page shows the receipt
	}
	p.redirect(w, r, id, q)
}

// declined answers err: a Decline goes back to the page, which explains it;
// anything else is an error page.
func (p *Page) declined(w http.ResponseWriter, r *http.Request, id string, method checkout.PaymentMethod, err error) {
	var d checkout.Decline
	if errors.As(err, &d) {
		p.redirect(w, r, id, url.Values{"method": {string(method)}, "decline": {string(d)}})
		return
	}
	p.fail(w, r, err)
}

// redirect sends the buyer back to the page with a query (303, so a reload
// does not post again).
func (p *Page) redirect(w http.ResponseWriter, r *http.Request, id string, q url.Values) {
	u := invoicePath(id)
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	http.Redirect(w, r, u, http.StatusSeeOther)
}

func invoicePath(id string) string { return "/invoice/" + id }

// pageSession loads the session of the path, answering 404 when there is
// none.
func (p *Page) pageSession(w http.ResponseWriter, r *http.Request) (*service.PageSession, bool) {
	ps, err := p.svc.PageSession(r.Context(), r.PathValue("id"))
	if err != nil {
		p.fail(w, r, err)
		return nil, false
	}
	return ps, true
}

// fail renders an error page: 404 for an unknown session, and for anything
// else a generic message, the detail going to the log under the request id.
func (p *Page) fail(w http.ResponseWriter, r *http.Request, err error) {
	switch checkout.ErrorCode(err) {
	case checkout.ECheckoutNotFound, checkout.ENotFound:
		p.renderError(w, r, http.StatusNotFound, "")
		return
	case checkout.EValidationFailed:
		p.renderError(w, r, http.StatusBadRequest, checkout.ErrorMessage(err))
		return
	case checkout.EUnavailable:
		w.Header().Set("Retry-After", "5")
		p.renderError(w, r, http.StatusServiceUnavailable, "The payment page is unavailable for a moment. Try again shortly.")
		return
	}
	web.Logger(r.Context()).ErrorContext(r.Context(), "payment page failed", "err", err)
	p.renderError(w, r, http.StatusInternalServerError, "Something went wrong on our side. Nothing was charged. Try again shortly.")
}

type errorView struct {
	Status    int
	Message   string
	NotFound  bool
	What      string // "refund" on the refund page; "" for a checkout
	RequestID string
}

func (p *Page) renderError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	setSecurityHeaders(w, "")
	v := errorView{Status: status, Message: msg, NotFound: status == http.StatusNotFound, RequestID: w.Header().Get("Request-Id")}
	p.execute(w, r, status, "error", v)
}

func (p *Page) render(w http.ResponseWriter, r *http.Request, status int, ps *service.PageSession, v *view) {
	var extra []web.Sources
	if v.Acquirer != nil {
		// The acquirer's element, on the session it takes the card of.
		o := ps.Acquirer.Page.Origins
		extra = append(extra, web.Sources{Script: o.Script, Frame: o.Frame, Connect: o.Connect})
	}
	setSecurityHeaders(w, ps.Session.ReturnURLWithID(), extra...)
	p.execute(w, r, status, "invoice", v)
}

func (p *Page) execute(w http.ResponseWriter, r *http.Request, status int, name string, data any) {
	var buf bytes.Buffer
	if err := p.tmpl.ExecuteTemplate(&buf, name, data); err != nil {
		web.Logger(r.Context()).ErrorContext(r.Context(), "render payment page", "template", name, "err", err)
		http.Error(w, "Something went wrong on our side.", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// setSecurityHeaders sets the page's Content-Security-Policy and friends.
// Scripts and styles come only from the page's own files; images from the
// page and from HTTPS (merchant item images); forms post only to the page,
// and to the origin of returnURL, where a successful payment redirects (the
// browser checks form-action along the redirect). No framing, no referrer
// (the page's address holds the session id and must not reach the hosts of
// item images).
func setSecurityHeaders(w http.ResponseWriter, returnURL string, extra ...web.Sources) {
	formAction := "'self'"
	if u, err := url.Parse(returnURL); err == nil && u.Scheme == "https" && u.Host != "" {
		formAction += " https://" + u.Host
	}
	web.SetPageHeaders(w, formAction, extra...)
}

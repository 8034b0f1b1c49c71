package page

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
)

// csrfCookie holds the double-submit token. SameSite=Strict keeps it off
// every request another site starts, and HttpOnly out of scripts; a form
// carries the same value in csrfField. A cross-site form post carries
// neither the cookie nor a way to learn it. This backs up Go's
// CrossOriginProtection (Sec-Fetch-Site and Origin), which lets requests
// through that have neither header.
const (
	csrfCookie = "checkoutd_csrf"
	csrfField  = "csrf_token"
)

// invoiceCookiePath is where the payment page's cookie goes; the refund
// page's goes to /refund/.
const invoiceCookiePath = "/invoice/"

// csrfToken returns the request's token, setting a new cookie for the
// pages under path when it has none.
func csrfToken(w http.ResponseWriter, r *http.Request, path string) string {
	if c, err := r.Cookie(csrfCookie); err == nil && len(c.Value) == 43 {
		return c.Value
	}
	b := make([]byte, 32)
	rand.Read(b)
	tok := base64.RawURLEncoding.EncodeToString(b)
	http.SetCookie(w, &http.Cookie{
		Name: csrfCookie, Value: tok, Path: path,
		HttpOnly: true, Secure: r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https",
		SameSite: http.SameSiteStrictMode,
	})
	return tok
}

// csrfValid reports whether a form post carries the token of its cookie.
func csrfValid(r *http.Request) bool {
	c, err := r.Cookie(csrfCookie)
	if err != nil || c.Value == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(c.Value), []byte(r.PostFormValue(csrfField))) == 1
}

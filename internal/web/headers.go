package web

import "net/http"

// SetPageHeaders sets the Content-Security-Policy and friends of the
// server-rendered HTML pages (the payment page, the dashboard). Scripts and
// styles come only from the pages' own files, never inline; images from the
// site, from HTTPS (merchant item images) and data: URLs; scripts connect
// only to the site; forms post only to formAction (a source list, "'self'"
// at least). No framing, no base URL, no referrer (page addresses hold
// session ids and setup tokens), nothing cached.
func SetPageHeaders(w http.ResponseWriter, formAction string) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' https: data:; "+
		"connect-src 'self'; form-action "+formAction+"; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

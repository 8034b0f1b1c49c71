package web

import (
	"net/http"
	"strings"
)

// SetPageHeaders sets the Content-Security-Policy and friends of the
// server-rendered HTML pages (the payment page, the dashboard). Scripts and
// styles come only from the pages' own files, never inline; images from the
// site, from HTTPS (merchant item images) and data: URLs; scripts connect
// only to the site; forms post only to formAction (a source list, "'self'"
// at least); nothing is framed. No framing of the page, no base URL, no
// referrer (page addresses hold session ids and setup tokens), nothing
// cached. extra admits more origins: a card acquirer's element on the
// payment page of a session it takes (its script, its frames, what they
// call), and nowhere else.
func SetPageHeaders(w http.ResponseWriter, formAction string, extra ...Sources) {
	script, connect := []string{"'self'"}, []string{"'self'"}
	var frame []string // default-src 'none' frames nothing
	for _, e := range extra {
		script, connect, frame = append(script, e.Script...), append(connect, e.Connect...), append(frame, e.Frame...)
	}
	frames := ""
	if len(frame) > 0 {
		frames = "frame-src " + strings.Join(frame, " ") + "; "
	}
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src "+strings.Join(script, " ")+"; style-src 'self'; img-src 'self' https: data:; "+
		"connect-src "+strings.Join(connect, " ")+"; "+frames+"form-action "+formAction+"; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

// Sources are origins a page's Content-Security-Policy admits beyond its
// own, by directive.
type Sources struct {
	Script, Frame, Connect []string
}

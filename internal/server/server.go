// Package server assembles checkoutd's HTTP surface: it lists every route in
// routes.go and wraps them in the middleware every request passes through.
package server

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/checkoutd/checkoutd/internal/api"
	"github.com/checkoutd/checkoutd/internal/clock"
	"github.com/checkoutd/checkoutd/internal/page"
	"github.com/checkoutd/checkoutd/internal/service"
)

// Deps are what the server needs.
type Deps struct {
	Service     *service.Service
	Logger      *slog.Logger
	Now         clock.Func
	RateLimiter *api.RateLimiter
	RequestLogs *api.RequestLogWriter
	// Page is the hosted payment page; one over Service when nil.
	Page *page.Page
}

// New returns the whole HTTP surface of checkoutd as one handler.
func New(d Deps) http.Handler {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.Page == nil {
		d.Page = page.New(d.Service, d.Logger)
	}
	r := newRouter()
	addRoutes(r, d)
	var h http.Handler = r
	h = recoverPanics(h)
	h = accessLog(h)
	h = api.WithRequestID(d.Logger, h)
	return h
}

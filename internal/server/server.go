// Package server assembles checkoutd's HTTP surface: it lists every route in
// routes.go and wraps them in the middleware every request passes through.
package server

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/checkoutd/checkoutd/internal/api"
	"github.com/checkoutd/checkoutd/internal/clock"
	"github.com/checkoutd/checkoutd/internal/dashboard"
	"github.com/checkoutd/checkoutd/internal/metrics"
	"github.com/checkoutd/checkoutd/internal/page"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/web"
)

// Deps are what the server needs.
type Deps struct {
	Service     *service.Service
	Logger      *slog.Logger
	Now         clock.Func
	RateLimiter *api.RateLimiter
	// AuthFailures limits failed authentications per client; no limit
	// when nil.
	AuthFailures *api.FailureLimiter
	RequestLogs  *service.RequestLogWriter
	// Metrics is the registry that /metrics serves; the server adds the
	// series of its requests to it. A registry of its own when nil.
	Metrics *metrics.Registry
	// HideMetrics leaves /metrics off this handler, for an operator who
	// serves it on a listener of its own (MetricsHandler) or not at all.
	HideMetrics bool
	// Streams tunes listeners' streams (checkoutd listen); its Done ends
	// them at shutdown.
	Streams api.StreamConfig
	// Page is the hosted payment page; one over Service when nil.
	Page *page.Page
	// Dashboard is the merchant dashboard; one over Service, with cookies
	// for an http base URL, when nil.
	Dashboard *dashboard.Dashboard
}

// New returns the whole HTTP surface of checkoutd as one handler.
func New(d Deps) http.Handler {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.Metrics == nil {
		d.Metrics = metrics.NewRegistry()
	}
	if d.Page == nil {
		d.Page = page.New(d.Service, d.Logger)
	}
	if d.Dashboard == nil {
		d.Dashboard = dashboard.New(d.Service, "", d.Logger)
	}
	r := newRouter()
	addRoutes(r, d)
	var h http.Handler = r
	h = recoverPanics(h)
	h = instrument(newHTTPMetrics(d.Metrics), h)
	h = accessLog(h)
	h = web.WithRequestID(d.Logger, h)
	return h
}

// MetricsHandler is the handler of a listener of its own for /metrics
// (serve --metrics-addr): that route alone, with request ids and panic
// recovery like the main one.
func MetricsHandler(reg *metrics.Registry, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.Default()
	}
	r := newRouter()
	addMetricsRoutes(r, reg, log)
	return web.WithRequestID(log, recoverPanics(r))
}

// Package app builds checkoutd: the service, the webhook dispatcher, the
// request log writer, the background jobs, the metrics registry and the
// HTTP handler, wired together once. `checkoutd serve`, the benchmark and the
// end-to-end tests all call New, so what they run is what ships.
package app

import (
	"context"
	"crypto/x509"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/api"
	"github.com/checkoutd/checkoutd/internal/clock"
	"github.com/checkoutd/checkoutd/internal/dashboard"
	"github.com/checkoutd/checkoutd/internal/jobs"
	"github.com/checkoutd/checkoutd/internal/metrics"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/seal"
	"github.com/checkoutd/checkoutd/internal/server"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/webhook"
)

// Config is what an application is built from. Zero values take serve's
// defaults.
type Config struct {
	// Store is the opened database. The caller closes it after Close.
	Store *store.DB
	// WrapStore, when set, stands between the service and the database: how tests make the store fail without a switch in
	// production code.
	WrapStore func(checkout.Store) checkout.Store
	Logger    *slog.Logger
	// Now is the clock of the service, the dispatcher's schedules and the
	// rate limiter; time.Now when nil. CacheNow is the clock of the key and
	// store caches (service.Config.CacheNow).
	Now, CacheNow clock.Func
	// CryptoScanInterval is how often the live crypto nodes are scanned
	// (DefaultCryptoScanInterval when zero); only with a live crypto
	// network.
	CryptoScanInterval time.Duration
	// StreamPing is how often an idle listener stream (checkoutd listen)
	// sends a comment; 15 s when zero.
	StreamPing time.Duration
	// CheckoutBaseURL is the public address of the hosted payment pages.
	CheckoutBaseURL string
	// BaseURL is the public address of the API and the dashboard: under
	// https, the dashboard's cookies are Secure and __Host- prefixed.
	BaseURL string
	// Processors are the payment processors of each mode.
	Processors pay.Registry
	// SecretsKey seals HMAC keys' secrets at rest
	// (service.Config.SecretsKey); without one, HMAC keys are refused.
	SecretsKey *seal.Key
	// Acquirers are the card acquirers stores can set up their own
	// accounts at (service.Config.Acquirers); their secrets are sealed
	// with SecretsKey.
	Acquirers []pay.AcquirerConnector

	// Guard checks webhook endpoint URLs and every address an attempt
	// connects to; the default guard (public addresses only) when nil.
	Guard *webhook.Guard
	// RootCAs are the roots webhook receivers' certificates are checked
	// against; the system's when nil.
	RootCAs *x509.CertPool
	// WebhookDial connects to webhook receivers (after the guard's
	// checks); the network's when nil. Tests deliver to receivers of a fake
	// internet with it.
	WebhookDial func(ctx context.Context, network, address string) (net.Conn, error)
	// WebhookWorkers, WebhookPerEndpoint and WebhookLease are the
	// dispatcher's (webhook.Config).
	WebhookWorkers     int
	WebhookPerEndpoint int
	WebhookLease       time.Duration

	// RateLimit is requests per second per API key (0: no limit), with
	// bursts of RateBurst.
	RateLimit float64
	RateBurst int
	// AuthFailureLimit is how many failed authentications a client (an
	// address) may make per minute before it is refused 429 (0: no limit).
	AuthFailureLimit int
	// HideMetrics leaves /metrics off Handler (server.Deps.HideMetrics).
	HideMetrics bool

	// The background jobs' intervals: serve's defaults when zero.
	ExpiryInterval, PaymentsInterval, PurgeInterval time.Duration
}

// The background jobs' default intervals (serve's flags).
const (
	DefaultExpiryInterval   = 2 * time.Second
	DefaultPaymentsInterval = 2 * time.Second
	DefaultPurgeInterval    = time.Hour
	// HomeInterval is how often the home job keeps the stores' ended hours
	// (service.KeepHome): an hour is kept within this of settling.
	HomeInterval = 10 * time.Minute
	// DefaultCryptoScanInterval is how often the live crypto nodes are
	// scanned for payments: a new block or mempool transaction shows within
	// that long.
	DefaultCryptoScanInterval = 5 * time.Second
)

// App is checkoutd built: its parts, for the callers that look into them
// (tests, metrics), and Handler, the whole HTTP surface.
type App struct {
	Service     *service.Service
	Dispatcher  *webhook.Dispatcher
	RequestLogs *service.RequestLogWriter
	Jobs        []jobs.Job
	// AuthFailures limits the API's failed authentications per client.
	AuthFailures *api.FailureLimiter
	Metrics      *metrics.Registry
	Handler      http.Handler

	log *slog.Logger
	// streamsDone ends listeners' streams (CloseStreams).
	streamsDone chan struct{}
	closeOnce   sync.Once
}

// New builds checkoutd on cfg.Store. Nothing runs in the background until
// Run; Close stops the request log writer.
func New(cfg Config) *App {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Store != nil {
		cfg.Store.SetLogger(cfg.Logger)
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	var st checkout.Store = cfg.Store
	if cfg.WrapStore != nil {
		st = cfg.WrapStore(st)
	}
	guard := cfg.Guard
	if guard == nil {
		guard = &webhook.Guard{}
	}
	a := &App{log: cfg.Logger, streamsDone: make(chan struct{})}
	a.Dispatcher = webhook.New(webhook.Config{
		Store:       cfg.Store,
		Client:      webhook.NewClient(webhook.ClientConfig{Guard: guard, RootCAs: cfg.RootCAs, Dial: cfg.WebhookDial}),
		Now:         cfg.Now,
		Logger:      cfg.Logger,
		Workers:     cfg.WebhookWorkers,
		PerEndpoint: cfg.WebhookPerEndpoint,
		Lease:       cfg.WebhookLease,
	})
	if cfg.Store != nil {
		// A transaction that creates deliveries claims for this process's
		// dispatcher (store.Claimer): a first attempt waits for no claim.
		cfg.Store.SetClaimer(a.Dispatcher)
	}
	sc := service.Config{
		Store: st, Now: cfg.Now, CacheNow: cfg.CacheNow, CheckoutBaseURL: cfg.CheckoutBaseURL, BaseURL: cfg.BaseURL, Logger: cfg.Logger,
		URLs: guard, Notify: a.Dispatcher.Wake, Processors: cfg.Processors, SecretsKey: cfg.SecretsKey,
		Acquirers: cfg.Acquirers,
	}
	a.Service = service.New(sc)
	a.RequestLogs = service.NewRequestLogWriter(cfg.Store, cfg.Logger)
	svc := a.Service
	a.Jobs = []jobs.Job{
		{Name: service.JobExpireSessions, Interval: or(cfg.ExpiryInterval, DefaultExpiryInterval), Counts: &jobs.Counts{},
			RunOnce: func(ctx context.Context) error { _, err := svc.ExpireAll(ctx); return err }},
		{Name: service.JobPayments, Interval: or(cfg.PaymentsInterval, DefaultPaymentsInterval), Counts: &jobs.Counts{},
			RunOnce: func(ctx context.Context) error { _, err := svc.ProcessAllDuePayments(ctx); return err }},
		{Name: "purge", Interval: or(cfg.PurgeInterval, DefaultPurgeInterval), Counts: &jobs.Counts{},
			RunOnce: func(ctx context.Context) error { _, err := svc.Purge(ctx); return err }},
		{Name: service.JobHome, Interval: HomeInterval, Counts: &jobs.Counts{},
			RunOnce: func(ctx context.Context) error { _, err := svc.KeepHome(ctx); return err }},
	}
	if _, ok := cfg.Processors.Live.Crypto.(pay.LiveCryptoNetwork); ok {
		a.Jobs = append(a.Jobs, jobs.Job{Name: service.JobCryptoScan, Interval: or(cfg.CryptoScanInterval, DefaultCryptoScanInterval), Counts: &jobs.Counts{},
			RunOnce: func(ctx context.Context) error { _, err := svc.ScanCrypto(ctx); return err }})
	}
	a.AuthFailures = api.NewFailureLimiter(cfg.AuthFailureLimit, time.Minute, cfg.Now)
	a.Metrics = newMetrics(observed{store: cfg.Store, service: svc, dispatcher: a.Dispatcher, logs: a.RequestLogs, jobs: a.Jobs,
		authFailures: a.AuthFailures})
	a.Handler = server.New(server.Deps{
		Service:      svc,
		Logger:       cfg.Logger,
		Now:          cfg.Now,
		RateLimiter:  api.NewRateLimiter(cfg.RateLimit, cfg.RateBurst, cfg.Now),
		AuthFailures: a.AuthFailures,
		RequestLogs:  a.RequestLogs,
		Metrics:      a.Metrics,
		HideMetrics:  cfg.HideMetrics,
		Dashboard:    dashboard.New(svc, cfg.BaseURL, cfg.Logger),
		Streams:      api.StreamConfig{Done: a.streamsDone, Ping: cfg.StreamPing},
	})
	return a
}

func or(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// Run runs the webhook dispatcher and the background jobs until ctx ends,
// then waits for the attempts and rounds in flight to finish.
func (a *App) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { a.Dispatcher.Run(ctx) })
	wg.Go(func() { jobs.Run(ctx, a.log, a.Jobs...) })
	wg.Wait()
}

// CloseStreams ends the listeners' streams (checkoutd listen), which would
// otherwise never end: serve calls it when shutdown begins
// (http.Server.RegisterOnShutdown), and the clients reconnect to another
// node or to this one restarted.
func (a *App) CloseStreams() { a.closeOnce.Do(func() { close(a.streamsDone) }) }

// Close ends the listeners' streams, writes the request logs still queued
// and stops their writer. Call it after Run has returned and the HTTP
// server has stopped.
func (a *App) Close() {
	a.CloseStreams()
	a.RequestLogs.Close()
}

package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/checkoutd/checkoutd/internal/app"
	"github.com/checkoutd/checkoutd/internal/gcfloor"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/seal"
	"github.com/checkoutd/checkoutd/internal/server"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/web"
	"github.com/checkoutd/checkoutd/internal/webhook"
)

// serveConfig is serve's configuration after parsing and defaults.
type serveConfig struct {
	db               dbFlags
	addr             string
	baseURL          string
	checkoutBaseURL  string
	rateLimit        float64
	rateBurst        int
	authFailureLimit int
	expiryInterval   time.Duration
	purgeInterval    time.Duration
	paymentsInterval time.Duration
	shutdownTimeout  time.Duration
	failoverBudget   time.Duration
	logFormat        string
	logLevel         string
	metricsAddr      string
	webhook          webhookFlags
	webhookWorkers   int
	webhookPerHost   int
	webhookLease     time.Duration
	secrets          secretsKeyFlag
	secretsKey       *seal.Key
	crypto           cryptoFlags
	acquirers        acquirerFlags
}

func parseServeConfig(e env, args []string) (*serveConfig, error) {
	c := &serveConfig{}
	fs := newFlagSet(e, "serve", "serve [flags]")
	c.db.register(fs, e)
	fs.StringVar(&c.addr, "addr", "127.0.0.1:8080", "address to listen on (use :8080 to listen on every interface)")
	fs.StringVar(&c.baseURL, "base-url", "", "public address of the API (default: http:// and --addr)")
	fs.StringVar(&c.checkoutBaseURL, "checkout-base-url", "", "public address of the hosted payment pages (default: --base-url)")
	fs.Float64Var(&c.rateLimit, "rate-limit", 100, "requests per second per API key, on each node (0 turns the limit off)")
	fs.IntVar(&c.rateBurst, "rate-burst", 200, "requests an API key may send in one burst")
	fs.IntVar(&c.authFailureLimit, "auth-failure-limit", 20, "failed authentications per minute per client address, on each node, before made-up keys are answered 429 (valid keys never are; 0 turns the limit off)")
	fs.DurationVar(&c.expiryInterval, "expiry-interval", app.DefaultExpiryInterval, "how often sessions past their hour are expired")
	fs.DurationVar(&c.purgeInterval, "purge-interval", app.DefaultPurgeInterval, "how often request logs and idempotency keys past retention are deleted")
	fs.DurationVar(&c.paymentsInterval, "payments-interval", app.DefaultPaymentsInterval, "how often payments with something due are looked at (crypto confirmations, skins trade holds, disputes, card charges without an outcome)")
	fs.DurationVar(&c.shutdownTimeout, "shutdown-timeout", 30*time.Second, "how long a shutdown waits for requests in flight")
	fs.DurationVar(&c.failoverBudget, "database-failover-budget", store.DefaultFailoverBudget, "PostgreSQL: how long a write keeps trying while the database fails over before it is answered 503 (at least 1s)")
	c.webhook.register(fs)
	fs.IntVar(&c.webhookWorkers, "webhook-workers", 32, "webhook attempts in flight at once in this process")
	fs.IntVar(&c.webhookPerHost, "webhook-per-endpoint", 4, "webhook attempts in flight at once to one endpoint")
	fs.DurationVar(&c.webhookLease, "webhook-lease", 60*time.Second, "how long a claimed delivery stays reserved; after a crash it is retried when this runs out (at least 15s)")
	fs.StringVar(&c.metricsAddr, "metrics-addr", "", "where to serve /metrics: empty for the main listener (--addr), an address such as 127.0.0.1:9090 for a listener of its own, or off")
	fs.StringVar(&c.logFormat, "log-format", "text", "text or json")
	fs.StringVar(&c.logLevel, "log-level", "info", "debug, info, warn or error")
	c.secrets.register(fs)
	c.crypto.register(fs)
	c.acquirers.register(fs)
	rest, err := parseFlags(fs, e, args)
	if err != nil {
		return nil, err
	}
	if len(rest) > 0 {
		return nil, usageError{fmt.Sprintf("serve takes no arguments; got %q", rest)}
	}
	if c.baseURL != "" {
		if c.baseURL, err = checkBaseURL("base-url", c.baseURL); err != nil {
			return nil, err
		}
	}
	if c.checkoutBaseURL != "" {
		if c.checkoutBaseURL, err = checkBaseURL("checkout-base-url", c.checkoutBaseURL); err != nil {
			return nil, err
		}
	}
	if c.rateLimit < 0 || c.rateBurst < 1 {
		return nil, usageError{"--rate-limit must be 0 or more and --rate-burst 1 or more"}
	}
	if c.authFailureLimit < 0 {
		return nil, usageError{"--auth-failure-limit must be 0 or more"}
	}
	for name, d := range map[string]time.Duration{"expiry-interval": c.expiryInterval, "purge-interval": c.purgeInterval, "payments-interval": c.paymentsInterval} {
		if d <= 0 {
			return nil, usageError{fmt.Sprintf("--%s must be positive", name)}
		}
	}
	if c.failoverBudget < time.Second {
		return nil, usageError{"--database-failover-budget must be at least 1s"}
	}
	if c.webhookWorkers < 1 || c.webhookPerHost < 1 {
		return nil, usageError{"--webhook-workers and --webhook-per-endpoint must be 1 or more"}
	}
	if c.webhookLease < webhook.Timeout+5*time.Second {
		return nil, usageError{"--webhook-lease must be at least 15s: longer than an attempt can take"}
	}
	if c.logFormat != "text" && c.logFormat != "json" {
		return nil, usageError{"--log-format must be text or json"}
	}
	if c.secretsKey, err = c.secrets.key(); err != nil {
		return nil, err
	}
	if err := c.crypto.check(); err != nil {
		return nil, err
	}
	return c, nil
}

// defaultURLs fills the base URLs not configured from the address the
// server listens on.
func (c *serveConfig) defaultURLs(addr net.Addr) {
	if c.baseURL == "" {
		host := c.addr
		if ta, ok := addr.(*net.TCPAddr); ok {
			host = ta.String()
			if ta.IP.IsUnspecified() {
				host = net.JoinHostPort("localhost", strconv.Itoa(ta.Port))
			}
		}
		c.baseURL = "http://" + host
	}
	if c.checkoutBaseURL == "" {
		c.checkoutBaseURL = c.baseURL
	}
}

func newLogger(w interface{ Write([]byte) (int, error) }, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, usageError{fmt.Sprintf("--log-level: %v", err)}
	}
	opts := &slog.HandlerOptions{Level: lv}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if format == "json" {
		h = slog.NewJSONHandler(w, opts)
	}
	return slog.New(web.LogHandler{Handler: h}), nil
}

func serveCmd(ctx context.Context, e env, args []string) error {
	cfg, err := parseServeConfig(e, args)
	if err != nil {
		return err
	}
	log, err := newLogger(e.stderr, cfg.logFormat, cfg.logLevel)
	if err != nil {
		return err
	}
	// The collector's heap floor (docs/operations.md), unless the
	// operator set GOGC or GOMEMLIMIT.
	defer gcfloor.Start(e.getenv, gcfloor.DefaultFloor)()
	fresh := cfg.db.newSQLite()
	st, desc, err := cfg.db.openToServe(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	st.SetFailoverBudget(cfg.failoverBudget)
	if fresh {
		dir, _ := filepath.Abs(filepath.Dir(cfg.db.sqlitePath()))
		log.Info("first start: created a new SQLite database; this directory holds checkoutd's data (--data-dir or CHECKOUTD_DATA_DIR to change it)",
			"data_dir", dir)
	}
	log.Info("database ready", "database", desc)
	var origin keyFileOrigin
	if cfg.secretsKey, origin, err = cfg.db.secretsKey(&cfg.secrets, true); err != nil {
		return err
	}
	logSecretsKey(log, cfg.secretsKey, origin, cfg.db.secretsKeyPath())

	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	cfg.defaultURLs(ln.Addr())

	guard, err := cfg.webhook.guard()
	if err != nil {
		return err
	}
	roots, err := webhook.LoadRootCAs(cfg.webhook.caFile)
	if err != nil {
		return err
	}
	// Test mode pays through the simulators. Live mode has no processor
	// until one is configured (docs/payments.md), and then offers only the
	// methods that have one: crypto, for the coins whose nodes are given.
	procs := pay.Registry{Test: pay.Simulators()}
	live, err := cfg.crypto.network(ctx, log, st)
	if err != nil {
		return err
	}
	if live != nil {
		procs.Live.Crypto = live
	}
	a := app.New(app.Config{
		Store: st, Logger: log, CheckoutBaseURL: cfg.checkoutBaseURL, BaseURL: cfg.baseURL,
		Processors:         procs,
		CryptoScanInterval: cfg.crypto.scanInterval,
		SecretsKey:         cfg.secretsKey,
		Acquirers:          cfg.acquirers.connectors(),
		Guard:              guard,
		RootCAs:            roots,
		WebhookWorkers:     cfg.webhookWorkers,
		WebhookPerEndpoint: cfg.webhookPerHost,
		WebhookLease:       cfg.webhookLease,
		RateLimit:          cfg.rateLimit,
		RateBurst:          cfg.rateBurst,
		AuthFailureLimit:   cfg.authFailureLimit,
		HideMetrics:        cfg.metricsAddr != "",
		ExpiryInterval:     cfg.expiryInterval,
		PaymentsInterval:   cfg.paymentsInterval,
		PurgeInterval:      cfg.purgeInterval,
	})
	defer a.Close()

	srv := &http.Server{
		Handler:           a.Handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		// A write may wait out a failover (--database-failover-budget)
		// before it answers.
		WriteTimeout:   max(60*time.Second, cfg.failoverBudget+30*time.Second),
		IdleTimeout:    120 * time.Second,
		MaxHeaderBytes: 64 << 10,
		ErrorLog:       slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	srv.RegisterOnShutdown(a.CloseStreams)

	// --metrics-addr: /metrics on a listener of its own, or nowhere.
	var metricsSrv *http.Server
	var metricsLn net.Listener
	if cfg.metricsAddr != "" && cfg.metricsAddr != "off" {
		if metricsLn, err = net.Listen("tcp", cfg.metricsAddr); err != nil {
			return fmt.Errorf("--metrics-addr: %w", err)
		}
		defer metricsLn.Close()
		metricsSrv = &http.Server{
			Handler:           server.MetricsHandler(a.Metrics, log),
			ReadHeaderTimeout: 10 * time.Second,
			WriteTimeout:      30 * time.Second,
			ErrorLog:          srv.ErrorLog,
		}
	}

	jobsCtx, stopJobs := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Go(func() { a.Run(jobsCtx) }) // on shutdown, finishes the attempts in flight

	serveErr := make(chan error, 2)
	go func() { serveErr <- srv.Serve(ln) }()
	if metricsSrv != nil {
		go func() { serveErr <- metricsSrv.Serve(metricsLn) }()
		log.Info("metrics listening", "addr", metricsLn.Addr().String())
	}
	// Before "listening", which tells scripts and tests that start-up is over.
	logSetupLink(ctx, log, a.Service, cfg.baseURL)
	log.Info("listening", "addr", ln.Addr().String(), "base_url", cfg.baseURL, "checkout_base_url", cfg.checkoutBaseURL, "pid", os.Getpid())

	select {
	case err = <-serveErr:
		srv.Close()
		if metricsSrv != nil {
			metricsSrv.Close()
		}
	case <-ctx.Done():
		log.Info("shutting down: finishing requests in flight", "timeout", cfg.shutdownTimeout)
		sctx, cancel := context.WithTimeout(context.Background(), cfg.shutdownTimeout)
		if metricsSrv != nil {
			metricsSrv.Shutdown(sctx)
		}
		err = srv.Shutdown(sctx)
		cancel()
	}
	stopJobs()
	wg.Wait()
	a.Close()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	log.Info("stopped")
	return err
}

// logSecretsKey says whether HMAC keys can be made and verified here, and
// with which key: its id (a fingerprint, never the key), so the operator of
// several nodes sees they share one, and its file when it has one; without
// a key, that HMAC keys are refused.
func logSecretsKey(log *slog.Logger, k *seal.Key, origin keyFileOrigin, path string) {
	switch origin {
	case keyNone:
		log.Info("no secrets key (--secrets-key or CHECKOUTD_SECRETS_KEY): HMAC keys can be neither created nor verified on PostgreSQL without one, nor stores' Stripe accounts set up or used; bearer keys work")
	case keyFileMade:
		log.Info("first start: made a secrets key, which seals HMAC keys' and Stripe accounts' secrets, in a file readable by this user only; back it up apart from the database: without it HMAC keys and Stripe accounts stop working (docs/operations.md)",
			"secrets_key_file", path, "secrets_key_id", k.ID())
	case keyFromFile:
		log.Info("secrets key from its file: HMAC keys' and Stripe accounts' secrets are sealed with it", "secrets_key_file", path, "secrets_key_id", k.ID())
	default:
		log.Info("secrets key set: HMAC keys' and Stripe accounts' secrets are sealed with it", "secrets_key_id", k.ID())
	}
}

// logSetupLink logs a one-time link to create the first dashboard account
// when there is no account yet; the token appears there and nowhere else.
func logSetupLink(ctx context.Context, log *slog.Logger, svc *service.Service, baseURL string) {
	token, expires, err := svc.SetupToken(ctx)
	if err != nil {
		log.Error("no dashboard setup link: cannot check for accounts", "err", err)
		return
	}
	if token == "" {
		return
	}
	log.Info("no dashboard account yet: open the setup link to create the first one",
		"setup_url", strings.TrimSuffix(baseURL, "/")+"/dashboard/setup?token="+token,
		"expires_at", expires.UTC().Format(time.RFC3339))
}

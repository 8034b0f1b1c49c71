package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver of the admin connection

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/app"
	"github.com/checkoutd/checkoutd/internal/jobs"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/postgres"
	"github.com/checkoutd/checkoutd/internal/store/sqlite"
	"github.com/checkoutd/checkoutd/internal/web"
	"github.com/checkoutd/checkoutd/internal/webhook"
)

// createBody is the body of every create request: a typical session with two
// items, a customer, metadata and both URLs.
const createBody = `{"title":"Order 1042","currency":"usd",` +
	`"items":[{"name":"AK-47 | Redline (Field-Tested)","amount":1500,"quantity":2,"image":"https://cdn.example.com/items/ak47-redline.png"},` +
	`{"name":"Gift wrap","amount":300,"quantity":1}],` +
	`"customer":{"email":"buyer@example.com","name":"Ada Buyer"},"metadata":{"order_id":"1042","cart":"c_9f2"},` +
	`"return_url":"https://shop.example.com/thanks","cancel_url":"https://shop.example.com/cart"}`

// storeParams is the store every target serves.
var storeParams = checkout.MerchantParams{Name: "Bench Games", Currency: "USD", Website: "https://shop.example.com"}

// checkoutBaseURL is where the sessions' payment pages would be.
const checkoutBaseURL = "https://pay.example.com"

// The rate limit checkoutd runs with. The limiter stays in the path, as in
// production, but so high that it never refuses: the production default
// (100 per second, burst 200) would cap the bench's one key at 100 requests
// per second.
const (
	rateLimit = 1e9
	rateBurst = 1e9
)

// target is one server under load: its address, a store of its and a bearer
// key that may create and read that store's sessions.
type target struct {
	name    string
	note    string // what the report says about how it runs
	url     string
	storeID string
	secret  string
	dropped func() int64 // request logs dropped; nil for bare
	// settle, checkoutd's, returns once what a row left to do is done
	// (its request logs written; on SQLite, the write-ahead logs folded
	// into the files), so that bare measured after the row does not pay
	// for it (beside.go); checkpoint is SQLite's part.
	settle     func(ctx context.Context) error
	checkpoint func(ctx context.Context) error
	stops      []func() error
	createURL  string // sessions are created here and retrieved below it
	// createOnly leaves out the retrieve row: the cluster's has only the
	// create row, which its replication slows.
	createOnly bool

	// The create request's body and Content-Type, the status of its
	// success, and how the session's id is read from its answer:
	// checkoutd's JSON envelope unless the target speaks another API.
	createBody, createType string
	created                int
	sessionID              func(body []byte) string

	// checkoutd's parts, for the webhook and scale rows; nil for bare.
	db   *store.DB
	svc  *service.Service
	key  *checkout.APIKey
	disp *dispatcherLoop
	// handed notes when each session's delivery was handed over.
	handed *handedClaimer
	// size reports the database's size on disk in bytes.
	size func(ctx context.Context) (int64, error)
	// rawOpen opens a pool of the bench's own on the database, for bulk
	// loads that the store's API has no call for.
	rawOpen rawOpener
	// raw opens a connection of the bench's own to the database, for the
	// lists rows' bulk load and their look at query plans.
	raw func() (*sql.DB, error)
	// logs is the schema of the request logs on raw's connection, with its
	// dot: "logs." on SQLite, whose logs have a file of their own that raw
	// attaches; "" on PostgreSQL.
	logs string
}

// skipError says a target cannot run here, which the report shows instead of
// failing.
type skipError struct{ reason string }

func (e skipError) Error() string { return e.reason }

// startTarget starts the named target.
func startTarget(ctx context.Context, name string, cfg *config, stderr io.Writer) (*target, error) {
	t := &target{name: name, createBody: createBody, createType: "application/json", created: http.StatusCreated, sessionID: envelopeID}
	var err error
	switch name {
	case "bare":
		err = t.startBare()
	case "stripe-mock":
		err = t.startStripeMock(ctx, cfg, stderr)
	case "sqlite":
		err = t.startSQLite(ctx, cfg, newLogger(stderr))
	case "postgres":
		err = t.startPostgres(ctx, cfg, cfg.postgresURL, newLogger(stderr))
	case "cluster":
		err = t.startCluster(ctx, cfg, newLogger(stderr), stderr)
	default:
		err = fmt.Errorf("unknown target %q", name)
	}
	if err != nil {
		return nil, errors.Join(err, t.close())
	}
	if t.createURL == "" {
		t.createURL = t.url + "/v1/stores/" + t.storeID + "/checkouts"
	}
	return t, nil
}

// envelopeID reads the session's id from checkoutd's answer to a create.
func envelopeID(body []byte) string {
	var env struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	json.Unmarshal(body, &env)
	return env.Data.ID
}

// isCheckoutd reports whether the named target is checkoutd, which has
// webhook, scale and list rows besides the API's. The cluster, checkoutd
// too, has only its create row (cluster.go).
func isCheckoutd(name string) bool { return name == "sqlite" || name == "postgres" }

// newLogger formats every line as serve's default logger does (text, info),
// so that the access log costs what it costs in production, but discards
// them; warnings and errors also go to stderr, where they are seen.
func newLogger(stderr io.Writer) *slog.Logger {
	return slog.New(web.LogHandler{Handler: slog.NewMultiHandler(
		slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}),
		slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}),
	)})
}

// onClose adds fn to what close undoes, last first.
func (t *target) onClose(fn func() error) { t.stops = append(t.stops, fn) }

// stats are the store's counts (group commit's and batched reads'), zero
// for a target that is not checkoutd.
func (t *target) stats() store.Stats {
	if t.db == nil {
		return store.Stats{}
	}
	return t.db.Stats()
}

// close stops the target and removes what it made.
func (t *target) close() error {
	var errs []error
	for i := len(t.stops) - 1; i >= 0; i-- {
		errs = append(errs, t.stops[i]())
	}
	t.stops = nil
	return errors.Join(errs...)
}

// serve serves h on a loopback port with serve's server settings.
func (t *target) serve(h http.Handler, log *slog.Logger) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	go srv.Serve(ln)
	t.url = "http://" + ln.Addr().String()
	t.onClose(func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return srv.Shutdown(ctx)
	})
	return nil
}

// startBare serves the ceiling: a net/http handler that reads the request
// and encodes a session of the same size as checkoutd's, with no
// authentication, validation, database or logs.
func (t *target) startBare() error {
	m, sess, err := sampleSession(time.Now())
	if err != nil {
		return err
	}
	reply := func(status int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if _, err := io.Copy(io.Discard, r.Body); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			b, err := json.Marshal(struct {
				OK   bool                  `json:"ok"`
				Data *checkout.SessionJSON `json:"data"`
			}{true, sess})
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			w.Write(append(b, '\n'))
		}
	}
	mux := http.NewServeMux()
	mux.Handle("POST /v1/stores/{storeId}/checkouts", reply(http.StatusCreated))
	mux.Handle("GET /v1/stores/{storeId}/checkouts/{checkoutId}", reply(http.StatusOK))
	t.note = "bare: net/http ServeMux, reads the body, encodes a session of the same size; no auth, database or logs"
	t.storeID, t.secret = m.ID, "none"
	return t.serve(mux, slog.New(slog.DiscardHandler))
}

// sampleSession returns the session of createBody, as checkoutd would make
// it at now, and its store: what the bare targets answer and send.
func sampleSession(now time.Time) (*checkout.Merchant, *checkout.SessionJSON, error) {
	m, err := checkout.NewMerchant(storeParams, now)
	if err != nil {
		return nil, nil, err
	}
	p, err := checkout.ParseCreateRequest([]byte(createBody))
	if err != nil {
		return nil, nil, err
	}
	return m, checkout.NewSession(p, m, checkout.ModeTest, now).View(m, checkoutBaseURL), nil
}

// startSQLite runs checkoutd on a new SQLite file in dir, opened as serve
// opens it.
func (t *target) startSQLite(ctx context.Context, cfg *config, log *slog.Logger) error {
	tmp, err := os.MkdirTemp(cfg.dir, "checkoutd-bench-")
	if err != nil {
		return err
	}
	t.onClose(func() error { return os.RemoveAll(tmp) })
	path := filepath.Join(tmp, "checkoutd.db")
	db, err := sqlite.OpenToServe(ctx, path)
	if err != nil {
		return err
	}
	t.onClose(db.Close)
	t.rawOpen = func() (*sql.DB, error) {
		// The loader waits for checkoutd's writer rather than failing, and
		// does not wait for the disk: a bench's fill need not survive a
		// power cut.
		return sql.Open("sqlite", path+"?_pragma=busy_timeout(30000)&_pragma=synchronous(OFF)")
	}
	t.note = "sqlite: " + path + ", opened by sqlite.OpenToServe as serve opens it (WAL, synchronous=FULL, sessions cached); removed afterwards"
	t.raw = func() (*sql.DB, error) {
		raw, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(30000)")
		if err != nil {
			return nil, err
		}
		raw.SetMaxOpenConns(1)
		raw.SetConnMaxIdleTime(0)
		if _, err := raw.ExecContext(ctx, `ATTACH DATABASE $1 AS logs`, sqlite.RequestLogsPath(path)); err != nil {
			raw.Close()
			return nil, fmt.Errorf("attach the request logs: %w", err)
		}
		return raw, nil
	}
	t.logs = "logs."
	t.checkpoint = func(ctx context.Context) error {
		raw, err := t.raw()
		if err != nil {
			return err
		}
		defer raw.Close()
		for _, schema := range []string{"main", "logs"} {
			if _, err := raw.ExecContext(ctx, "PRAGMA "+schema+".wal_checkpoint(PASSIVE)"); err != nil {
				return fmt.Errorf("checkpoint %s: %w", schema, err)
			}
		}
		return nil
	}
	t.size = func(ctx context.Context) (int64, error) {
		// Fold the write-ahead log into the file first: the log's size is
		// that of the largest burst of writes since the start, not data.
		raw, err := sql.Open("sqlite", path)
		if err != nil {
			return 0, err
		}
		defer raw.Close()
		if _, err := raw.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
			return 0, fmt.Errorf("checkpoint: %w", err)
		}
		var total int64
		for _, suffix := range []string{"", "-wal"} {
			fi, err := os.Stat(path + suffix)
			if err == nil {
				total += fi.Size()
			} else if !errors.Is(err, os.ErrNotExist) {
				return 0, err
			}
		}
		return total, nil
	}
	return t.startCheckoutd(ctx, cfg, db, log)
}

// startPostgres runs checkoutd on a throwaway schema of the server at
// rawURL (-postgres, or the cluster's multi-host URL), and drops the schema
// afterwards. When the server cannot be reached the target is skipped.
func (t *target) startPostgres(ctx context.Context, cfg *config, rawURL string, log *slog.Logger) error {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return fmt.Errorf("-postgres must be a postgres:// URL")
	}
	admin, err := sql.Open("pgx", rawURL)
	if err != nil {
		return fmt.Errorf("-postgres: %w", err)
	}
	t.onClose(admin.Close)
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	var version, fsync, syncCommit, syncStandbys string
	err = admin.QueryRowContext(pctx, `SELECT current_setting('server_version'), current_setting('fsync'), current_setting('synchronous_commit'),
		current_setting('synchronous_standby_names')`).Scan(&version, &fsync, &syncCommit, &syncStandbys)
	if err != nil {
		return skipError{fmt.Sprintf("PostgreSQL unreachable at %s (set -postgres or CHECKOUTD_TEST_DATABASE): %v", u.Redacted(), err)}
	}
	schema := "bench_" + checkout.NewID("", 6)
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		return fmt.Errorf("create schema: %w", err)
	}
	t.onClose(func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err := admin.ExecContext(ctx, "DROP SCHEMA "+schema+" CASCADE")
		return err
	})
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	db, err := postgres.Open(ctx, u.String())
	if err != nil {
		return err
	}
	t.onClose(db.Close)
	loadURL := u.String()
	t.rawOpen = func() (*sql.DB, error) { return sql.Open("pgx", loadURL) }
	t.raw = func() (*sql.DB, error) { return sql.Open("pgx", u.String()) }
	if syncStandbys != "" {
		syncCommit += ", synchronous_standby_names=" + syncStandbys
	}
	t.note = fmt.Sprintf("%s: PostgreSQL %s at %s, throwaway schema %s (fsync=%s, synchronous_commit=%s), opened by postgres.Open",
		t.name, strings.Fields(version)[0], redactQuery(u), schema, fsync, syncCommit)
	t.size = func(ctx context.Context) (int64, error) {
		// The schema's tables with their indexes and TOAST: what it takes
		// on disk.
		var n int64
		err := admin.QueryRowContext(ctx, `SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0)::bigint
			FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace WHERE s.nspname = $1 AND c.relkind = 'r'`, schema).Scan(&n)
		return n, err
	}
	return t.startCheckoutd(ctx, cfg, db, log)
}

// redactQuery is u without its password and query.
func redactQuery(u *url.URL) string {
	c := *u
	c.RawQuery = ""
	return c.Redacted()
}

// startCheckoutd serves checkoutd on db as serve does, built by app.New
// (its webhook guard allowing the bench's receiver on loopback, as
// --webhook-allow-cidr and --webhook-ca-file would), with the background
// jobs at serve's default intervals. It creates a store and a bearer key that may create
// and read its sessions.
func (t *target) startCheckoutd(ctx context.Context, cfg *config, db *store.DB, log *slog.Logger) error {
	a := app.New(app.Config{
		Store: db, Logger: log, CheckoutBaseURL: checkoutBaseURL,
		Guard:   &webhook.Guard{AllowCIDRs: loopbackOnly},
		RootCAs: cfg.receiver.roots(),
		// serve's defaults (--webhook-workers, --webhook-per-endpoint)
		WebhookWorkers:     hookWorkers,
		WebhookPerEndpoint: 4,
		RateLimit:          rateLimit,
		RateBurst:          rateBurst,
	})
	t.onClose(func() error { a.Close(); return nil })
	// The bench starts and stops the dispatcher itself, around the webhook
	// rows; the background jobs run as serve runs them.
	t.disp = &dispatcherLoop{d: a.Dispatcher}
	// The first-attempt rows measure from the commit; a delivery handed to
	// the dispatcher by its transaction (claim in create) may arrive
	// before the create returns, so its commit's time is taken here.
	t.handed = &handedClaimer{Claimer: a.Dispatcher}
	db.SetClaimer(t.handed)
	t.disp.start()
	t.onClose(func() error { t.disp.stop(); return nil })
	svc := a.Service
	t.db, t.svc = db, svc
	t.dropped = a.RequestLogs.Dropped
	t.settle = func(ctx context.Context) error {
		a.RequestLogs.Flush(ctx)
		if t.checkpoint != nil {
			return t.checkpoint(ctx)
		}
		return nil
	}
	handler := a.Handler

	jobsCtx, stopJobs := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		jobs.Run(jobsCtx, log, a.Jobs...)
	}()
	t.onClose(func() error { stopJobs(); <-done; return nil })

	m, err := svc.CreateMerchant(ctx, storeParams)
	if err != nil {
		return err
	}
	key, secret, err := svc.CreateAPIKey(ctx, checkout.APIKeyParams{
		MerchantID:  m.ID,
		Mode:        checkout.ModeTest,
		Type:        checkout.KeyBearer,
		Permissions: []checkout.Permission{checkout.PermCheckoutsWrite, checkout.PermCheckoutsRead},
	})
	if err != nil {
		return err
	}
	t.storeID, t.secret, t.key = m.ID, secret, key
	return t.serve(handler, log)
}

// createRequest returns a create request.
func (t *target) createRequest(ctx context.Context) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.createURL, strings.NewReader(t.createBody))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+t.secret)
	req.Header.Set("Content-Type", t.createType)
	return req, nil
}

// retrieveRequest returns a retrieve request for session id.
func (t *target) retrieveRequest(ctx context.Context, id string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.createURL+"/"+id, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+t.secret)
	return req, nil
}

// handedClaimer is the dispatcher as the store's Claimer, noting the time
// each session's delivery was handed to it: the time its transaction
// committed.
type handedClaimer struct {
	store.Claimer
	at sync.Map // session id: time.Time
}

func (h *handedClaimer) Take(p store.ClaimParams, claims []*store.Claim) {
	now := time.Now()
	for _, c := range claims {
		var s struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(c.Event.Object, &s) == nil {
			h.at.Store(s.ID, now)
		}
	}
	h.Claimer.Take(p, claims)
}

// committed returns the time the transaction of session id handed its
// delivery over, if it did.
func (h *handedClaimer) committed(id string) (time.Time, bool) {
	v, ok := h.at.LoadAndDelete(id)
	if !ok {
		return time.Time{}, false
	}
	return v.(time.Time), true
}

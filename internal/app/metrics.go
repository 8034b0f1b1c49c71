package app

import (
	"context"
	"runtime"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/api"
	"github.com/checkoutd/checkoutd/internal/jobs"
	"github.com/checkoutd/checkoutd/internal/metrics"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/webhook"
)

// observed are the parts of a serving process whose counts /metrics shows.
// The HTTP series are the server's own (internal/server).
type observed struct {
	store      *store.DB
	service    *service.Service
	dispatcher *webhook.Dispatcher
	logs       *service.RequestLogWriter
	jobs       []jobs.Job
	// authFailures is the API's limit of failed authentications.
	authFailures *api.FailureLimiter
}

// queueTimeout bounds the one query a scrape makes (the delivery queue's
// depth), so a slow database cannot hold a scrape.
const queueTimeout = 2 * time.Second

// newMetrics returns a registry that reads o's counts at every scrape,
// beside the Go runtime's and the process's series (metrics.NewRegistry).
func newMetrics(o observed) *metrics.Registry {
	r := metrics.NewRegistry()
	counter, gauge := metrics.CounterType, metrics.GaugeType

	byMode := func(name, help string, read func(service.Stats) map[checkout.Mode]int64) {
		r.Func(name, help, counter, []string{"mode"}, func(_ context.Context, emit metrics.Emit) {
			for mode, n := range read(o.service.Stats()) {
				emit(float64(n), string(mode))
			}
		})
	}
	byMode("checkoutd_sessions_created_total", "Checkout sessions created by this process (Idempotency-Key replays not counted), by mode.",
		func(s service.Stats) map[checkout.Mode]int64 { return s.SessionsCreated })
	byMode("checkoutd_sessions_expired_total", "Checkout sessions this process expired, by the background job or on read, by mode.",
		func(s service.Stats) map[checkout.Mode]int64 { return s.SessionsExpired })

	// Live crypto nodes (absent without live crypto).
	r.MustRegister(newCryptoCollector(o.service))

	r.Value("checkoutd_payments_captured_after_failure_total", "Payments whose processor took the money after the payment had failed (a charge approved, a trade accepted): each is flagged for refund and logged as an error.",
		counter, func() float64 { return float64(o.service.Stats().CapturedAfterFailure) })

	r.Func("checkoutd_webhook_attempts_total", "Webhook delivery attempts this process made, by result: succeeded (a 2xx answer) or failed.",
		counter, []string{"result"}, func(_ context.Context, emit metrics.Emit) {
			s := o.dispatcher.Stats()
			emit(float64(s.AttemptsSucceeded), "succeeded")
			emit(float64(s.AttemptsFailed), "failed")
		})
	r.Value("checkoutd_webhook_attempt_seconds_total", "Time the webhook attempts of this process took, in all.",
		counter, func() float64 { return o.dispatcher.Stats().AttemptSeconds })
	r.Value("checkoutd_webhook_deliveries_failed_total", "Webhook deliveries whose last attempt (the 8th) failed in this process: no attempt follows.",
		counter, func() float64 { return float64(o.dispatcher.Stats().DeliveriesFailed) })
	r.Value("checkoutd_webhook_deliveries_handed_over_total", "Webhook deliveries claimed for this process's dispatcher by the transaction that created them (claim in create): their first attempt waited for no claim.",
		counter, func() float64 { return float64(o.dispatcher.Stats().HandedOver) })
	r.Value("checkoutd_webhook_attempts_in_flight", "Webhook attempts under way in this process.",
		gauge, func() float64 { return float64(o.dispatcher.Stats().InFlight) })
	r.Func("checkoutd_webhook_deliveries_pending", "Pending webhook deliveries in the database, every node's: due (attempt due or under way) and waiting (for a retry). The same on every node: aggregate with max, not sum. Absent when the database does not answer.",
		gauge, []string{"state"}, func(ctx context.Context, emit metrics.Emit) {
			ctx, cancel := context.WithTimeout(ctx, queueTimeout)
			defer cancel()
			q, err := o.store.DeliveryCountPending(ctx, time.Now())
			if err != nil {
				return
			}
			emit(float64(q.Due), "due")
			emit(float64(q.Waiting), "waiting")
		})

	r.Func("checkoutd_api_auth_limited_total", "API requests from clients over their limit of failed authentications, by result: refused (429, a credential that cannot be valid, answered without a read of the key) or admitted (a valid key, which the limit never refuses).",
		counter, []string{"result"}, func(_ context.Context, emit metrics.Emit) {
			s := o.authFailures.Stats()
			emit(float64(s.Refused), "refused")
			emit(float64(s.Admitted), "admitted")
		})

	r.Value("checkoutd_request_logs_dropped_total", "Request logs dropped because the writer's queue was full.",
		counter, func() float64 { return float64(o.logs.Dropped()) })
	r.Value("checkoutd_request_logs_queued", "Request logs waiting to be written.",
		gauge, func() float64 { return float64(o.logs.Queued()) })

	r.Func("checkoutd_job_runs_total", "Rounds of each background job, failed ones included.",
		counter, []string{"job"}, func(_ context.Context, emit metrics.Emit) {
			for _, j := range o.jobs {
				emit(float64(j.Counts.Runs()), j.Name)
			}
		})
	r.Func("checkoutd_job_failures_total", "Failed rounds of each background job.",
		counter, []string{"job"}, func(_ context.Context, emit metrics.Emit) {
			for _, j := range o.jobs {
				emit(float64(j.Counts.Failures()), j.Name)
			}
		})
	r.Func("checkoutd_job_row_failures_total", "Rows (sessions, payments) a background job could not handle; each is logged with its id and the job carries on with the others.",
		counter, []string{"job"}, func(_ context.Context, emit metrics.Emit) {
			for job, n := range o.service.Stats().RowFailures {
				emit(float64(n), job)
			}
		})
	r.Func("checkoutd_job_last_success_timestamp_seconds", "When each background job last finished a round without error (Unix time); absent before the first.",
		gauge, []string{"job"}, func(_ context.Context, emit metrics.Emit) {
			for _, j := range o.jobs {
				if t := j.Counts.LastSuccess(); !t.IsZero() {
					emit(float64(t.UnixNano())/1e9, j.Name)
				}
			}
		})

	r.Func("checkoutd_db_errors_total", "Database errors, by kind: unavailable (unreachable or overloaded), canceled (a query given up: client gone, timeout), other.",
		counter, []string{"kind"}, func(_ context.Context, emit metrics.Emit) {
			s := o.store.Stats()
			emit(float64(s.Unavailable), "unavailable")
			emit(float64(s.Canceled), "canceled")
			emit(float64(s.Other), "other")
		})
	r.Value("checkoutd_store_rows_skipped_total", "Rows a background job's list skipped because they could not be read (each logged at error level with its id).",
		counter, func() float64 { return float64(o.store.Stats().RowsSkipped) })
	r.Value("checkoutd_db_write_batches_total", "Transactions of group commit that held more than one write.",
		counter, func() float64 { return float64(o.store.Stats().Batches) })
	r.Value("checkoutd_db_batched_writes_total", "Writes committed in a shared transaction (group commit); divided by checkoutd_db_write_batches_total, the mean batch.",
		counter, func() float64 { return float64(o.store.Stats().Batched) })
	r.Value("checkoutd_db_read_batches_total", "Statements that read more than one session by id (batched reads, PostgreSQL).",
		counter, func() float64 { return float64(o.store.Stats().ReadBatches) })
	r.Value("checkoutd_db_batched_reads_total", "Sessions read by id in a shared statement (batched reads); divided by checkoutd_db_read_batches_total, the mean batch.",
		counter, func() float64 { return float64(o.store.Stats().ReadBatched) })
	r.Value("checkoutd_db_reconnects_total", "Write transactions run again on a new connection after theirs was lost, or reached a node not taking writes (a failover, PostgreSQL).",
		counter, func() float64 { return float64(o.store.Stats().Failover.Retries) })
	r.Func("checkoutd_db_ambiguous_commits_total", "Writes whose connection was lost during COMMIT (a failover, PostgreSQL), by how they were resolved by their mark: committed, rolled_back (then run again), or unresolved (the failover budget ran out first; the caller heard service_unavailable).",
		counter, []string{"outcome"}, func(_ context.Context, emit metrics.Emit) {
			f := o.store.Stats().Failover
			emit(float64(f.Committed), "committed")
			emit(float64(f.RolledBack), "rolled_back")
			emit(float64(f.Unresolved), "unresolved")
		})
	r.Value("checkoutd_db_savepointed_batches_total", "Batches of group commit run with a savepoint per write, after a write failed in one run without.",
		counter, func() float64 { return float64(o.store.Stats().Savepointed) })
	r.Func("checkoutd_db_session_cache_lookups_total", "Sessions read by id (a retrieve, the payment page), by result: hit (from the session cache, SQLite served by this process) or miss (from the database). Absent without the cache (PostgreSQL).",
		counter, []string{"result"}, func(_ context.Context, emit metrics.Emit) {
			if c := o.store.Stats().SessionCache; c != nil {
				emit(float64(c.Hits), "hit")
				emit(float64(c.Misses), "miss")
			}
		})
	r.Func("checkoutd_db_session_cache_sessions", "Sessions the session cache holds. Absent without the cache (PostgreSQL).",
		gauge, nil, func(_ context.Context, emit metrics.Emit) {
			if c := o.store.Stats().SessionCache; c != nil {
				emit(float64(c.Sessions))
			}
		})
	r.Func("checkoutd_db_session_cache_bytes", "About the memory the session cache's sessions take (at most 16 MiB). Absent without the cache (PostgreSQL).",
		gauge, nil, func(_ context.Context, emit metrics.Emit) {
			if c := o.store.Stats().SessionCache; c != nil {
				emit(float64(c.Bytes))
			}
		})
	r.Func("checkoutd_db_connections", "Open database connections, by pool and state (in_use, idle).",
		gauge, []string{"pool", "state"}, func(_ context.Context, emit metrics.Emit) {
			for _, p := range o.store.Stats().Pools {
				emit(float64(p.InUse), p.Name, "in_use")
				emit(float64(p.Idle), p.Name, "idle")
			}
		})
	r.Func("checkoutd_db_connections_max", "The most connections each pool opens.",
		gauge, []string{"pool"}, func(_ context.Context, emit metrics.Emit) {
			for _, p := range o.store.Stats().Pools {
				emit(float64(p.MaxOpenConnections), p.Name)
			}
		})
	r.Func("checkoutd_db_connection_waits_total", "Times a query waited for a free connection, by pool.",
		counter, []string{"pool"}, func(_ context.Context, emit metrics.Emit) {
			for _, p := range o.store.Stats().Pools {
				emit(float64(p.WaitCount), p.Name)
			}
		})
	r.Func("checkoutd_db_connection_wait_seconds_total", "Time queries waited for a free connection, by pool.",
		counter, []string{"pool"}, func(_ context.Context, emit metrics.Emit) {
			for _, p := range o.store.Stats().Pools {
				emit(p.WaitDuration.Seconds(), p.Name)
			}
		})

	r.Func("checkoutd_build_info", "Always 1; the Go version checkoutd was built with.",
		gauge, []string{"go_version"}, func(_ context.Context, emit metrics.Emit) { emit(1, runtime.Version()) })
	return r
}

// cryptoCollector makes the live crypto nodes' four series of one
// CryptoStatus per scrape. The client collects families concurrently: as
// four Funcs, each would miss the status cache when it has expired and ask
// every node again.
type cryptoCollector struct {
	service                     *service.Service
	up, height, behind, scanLag *prometheus.Desc
}

func newCryptoCollector(svc *service.Service) *cryptoCollector {
	coin := []string{"coin"}
	return &cryptoCollector{
		service: svc,
		up:      prometheus.NewDesc("checkoutd_crypto_node_up", "Whether each live crypto coin's node answers (1) or not (0).", coin, nil),
		height:  prometheus.NewDesc("checkoutd_crypto_node_height", "Each live crypto coin's node's best block height.", coin, nil),
		behind: prometheus.NewDesc("checkoutd_crypto_node_behind_blocks",
			"Blocks each live crypto coin's node is behind its peers: while above 0, confirmations are counted late (never early).", coin, nil),
		scanLag: prometheus.NewDesc("checkoutd_crypto_scan_lag_blocks",
			"Blocks this process's last scan of each live crypto coin's node is behind the node's tip.", coin, nil),
	}
}

func (c *cryptoCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.up
	ch <- c.height
	ch <- c.behind
	ch <- c.scanLag
}

// Collect writes a node that does not answer as down, without the series
// it could not tell, and the scan lag once this process has scanned.
func (c *cryptoCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), metrics.CollectTimeout)
	defer cancel()
	gauge := func(d *prometheus.Desc, v int64, coin string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), coin)
	}
	for _, s := range c.service.CryptoStatus(ctx) {
		if s.Err != "" {
			gauge(c.up, 0, s.Coin)
			continue
		}
		gauge(c.up, 1, s.Coin)
		gauge(c.height, s.Tip, s.Coin)
		gauge(c.behind, max(s.Best-s.Tip, 0), s.Coin)
		if !s.ScannedAt.IsZero() {
			gauge(c.scanLag, max(s.Tip-s.Scanned, 0), s.Coin)
		}
	}
}

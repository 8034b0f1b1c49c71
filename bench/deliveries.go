package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

// The delivery-list scenario (-deliveries N): the dashboard's delivery list,
// an endpoint's health and a delivery's detail with N deliveries kept (30
// days of them), each page timed inside checkoutd: the service call that
// the dashboard's handler makes, without HTTP or templates around it.

// deliveryRow is one line of the delivery-list table: one page (or health, or
// detail) read many times in a row.
type deliveryRow struct {
	Target     string `json:"target"`
	Case       string `json:"case"`
	Skipped    string `json:"skipped,omitempty"`
	Deliveries int    `json:"deliveries"`
	// LoadSeconds is how long the bulk load took (the first row of a
	// target only).
	LoadSeconds float64 `json:"load_seconds,omitempty"`
	Rows        int     `json:"rows"`
	Calls       int     `json:"calls"`
	P50ms       float64 `json:"p50_ms"`
	P99ms       float64 `json:"p99_ms"`
	Error       string  `json:"error,omitempty"`
}

// deliveryCalls bounds how many times each case is read: enough for a p99, and
// at most deliveryCallTime of it.
const (
	deliveryCalls    = 200
	deliveryCallTime = 3 * time.Second
	loadChunk        = 100_000
	loadEndpoint     = 4 // each event fans out to that many endpoints
)

// deliveryTypes is how the loaded events' types are spread, per thousand:
// common types and rare ones, so that the filters by type are measured on
// both.
var deliveryTypes = []struct {
	typ      string
	perMille int
}{
	{checkout.EventCheckoutCreated, 400}, {checkout.EventCheckoutCompleted, 250}, {checkout.EventPaymentSucceeded, 250},
	{checkout.EventCheckoutExpired, 80}, {checkout.EventPaymentRefunded, 15}, {checkout.EventPaymentDisputed, 5},
}

// deliveryStatuses is how the loaded deliveries' statuses are spread, per
// thousand.
var deliveryStatuses = []struct {
	status   checkout.DeliveryStatus
	perMille int
}{
	{checkout.DeliverySucceeded, 900}, {checkout.DeliveryFailed, 50}, {checkout.DeliveryCanceled, 30}, {checkout.DeliveryPending, 20},
}

// caseExpr spreads i over values by their share per thousand, as a SQL CASE
// of (i*mult) % 1000.
func caseExpr(i string, mult int, values []string, perMille []int) string {
	var b strings.Builder
	b.WriteString("CASE")
	upTo := 0
	for k, v := range values[:len(values)-1] {
		upTo += perMille[k]
		fmt.Fprintf(&b, " WHEN (%s * %d) %% 1000 < %d THEN '%s'", i, mult, upTo, v)
	}
	fmt.Fprintf(&b, " ELSE '%s' END", values[len(values)-1])
	return b.String()
}

// bulkSQL is what differs between the databases in the bulk load: a
// series of integers $1 to $2, a random delivery id and an event id made
// of an integer.
type bulkSQL struct{ series, deliveryID, eventID string }

var bulkDialects = map[string]bulkSQL{
	"sqlite": {
		series:     `WITH RECURSIVE n(i) AS (SELECT CAST($1 AS INTEGER) UNION ALL SELECT i + 1 FROM n WHERE i < $2)`,
		deliveryID: `'whd_' || lower(hex(randomblob(16)))`,
		eventID:    `printf('evt_%032x', i / 4)`,
	},
	"postgres": {
		series:     `WITH n(i) AS (SELECT generate_series($1::bigint, $2::bigint))`,
		deliveryID: `'whd_' || md5(random()::text || i::text)`,
		eventID:    `'evt_' || lpad(to_hex(i / 4), 32, '0')`,
	},
}

// loadQueries returns the statements that load deliveries $1 to $2 (and
// their events): delivery i goes to endpoint i % 4 and belongs to event
// i / 4, created at $8 + (i / 4) * $9 ms.
func loadQueries(dialect string) (events, deliveries string) {
	d := bulkDialects[dialect]
	var types, typeShares, statuses, statusShares = []string{}, []int{}, []string{}, []int{}
	for _, t := range deliveryTypes {
		types, typeShares = append(types, t.typ), append(typeShares, t.perMille)
	}
	for _, s := range deliveryStatuses {
		statuses, statusShares = append(statuses, string(s.status)), append(statusShares, s.perMille)
	}
	typ := caseExpr("(i / 4)", 7919, types, typeShares)
	// Events: one per four deliveries, i here counting events.
	events = d.series + `
		INSERT INTO events (id, store_id, mode, type, created_at, data)
		SELECT ` + strings.ReplaceAll(d.eventID, "i / 4", "i") + `, $3, 'test', ` + strings.ReplaceAll(typ, "(i / 4)", "i") + `,
			($4 + i * $5) / 1000, '{}' FROM n`
	deliveries = d.series + `
		INSERT INTO deliveries (id, event_id, endpoint_id, store_id, mode, status, attempts, next_attempt_at_ms,
			last_status_code, last_error, created_at_ms, updated_at_ms, event_type, resent_as)
		SELECT id, evt, ep, $3, 'test', status,
			CASE status WHEN 'succeeded' THEN 1 WHEN 'failed' THEN 8 ELSE 2 END,
			CASE status WHEN 'pending' THEN $10 ELSE created END,
			CASE status WHEN 'succeeded' THEN 200 ELSE 503 END,
			CASE status WHEN 'succeeded' THEN '' ELSE 'receiver answered 503; only 2xx counts as delivered' END,
			created,
			CASE status WHEN 'failed' THEN created + 149760000 ELSE created + 1000 END,
			typ, ''
		FROM (SELECT ` + d.deliveryID + ` AS id, ` + d.eventID + ` AS evt,
				CASE i % 4 WHEN 0 THEN $4 WHEN 1 THEN $5 WHEN 2 THEN $6 ELSE $7 END AS ep,
				$8 + (i / 4) * $9 AS created,
				` + caseExpr("i", 104729, statuses, statusShares) + ` AS status,
				` + typ + ` AS typ
			FROM n) x`
	return events, deliveries
}

// loadDeliveries stores n deliveries of the target's store in test mode,
// spread over the 29 days before now, to four endpoints, with their
// events, in transactions of loadChunk rows; and an attempt for each
// finished delivery of the last two days (what health reads). It returns
// the endpoints.
func loadDeliveries(ctx context.Context, t *target, n int, now time.Time) ([]*checkout.Endpoint, error) {
	var eps []*checkout.Endpoint
	for i := range loadEndpoint {
		ep, err := checkout.NewEndpoint(checkout.EndpointParams{MerchantID: t.storeID, Mode: checkout.ModeTest,
			URL: fmt.Sprintf("https://hooks%d.example.com/checkoutd", i), Events: []string{checkout.AllEvents}}, now)
		if err != nil {
			return nil, err
		}
		if err := t.db.InTx(ctx, func(tx checkout.Tx) error { return tx.EndpointInsert(ctx, ep) }); err != nil {
			return nil, err
		}
		eps = append(eps, ep)
	}
	raw, err := t.rawOpen()
	if err != nil {
		return nil, err
	}
	defer raw.Close()
	events, deliveries := loadQueries(t.name)
	span := 29 * 24 * time.Hour
	nEvents := (n + loadEndpoint - 1) / loadEndpoint
	start := now.Add(-span).UnixMilli()
	step := max(span.Milliseconds()/int64(nEvents), 1)
	for lo := 0; lo < nEvents; lo += loadChunk {
		hi := min(lo+loadChunk, nEvents) - 1
		if _, err := raw.ExecContext(ctx, events, lo, hi, t.storeID, start, step); err != nil {
			return nil, fmt.Errorf("load events: %w", err)
		}
	}
	for lo := 0; lo < n; lo += loadChunk {
		hi := min(lo+loadChunk, n) - 1
		if _, err := raw.ExecContext(ctx, deliveries, lo, hi, t.storeID, eps[0].ID, eps[1].ID, eps[2].ID, eps[3].ID,
			start, step, now.Add(24*time.Hour).UnixMilli()); err != nil {
			return nil, fmt.Errorf("load deliveries: %w", err)
		}
	}
	_, err = raw.ExecContext(ctx, `INSERT INTO delivery_attempts (delivery_id, number, started_at_ms, duration_us, status_code, error, response_body, endpoint_id)
		SELECT id, attempts, updated_at_ms, 80000, last_status_code, last_error, '', endpoint_id FROM deliveries
		WHERE store_id = $1 AND created_at_ms >= $2 AND status IN ('succeeded', 'failed')`, t.storeID, now.Add(-48*time.Hour).UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("load attempts: %w", err)
	}
	if t.name == "postgres" {
		// What autovacuum does after a load this size, done now rather
		// than whenever it gets to it: statistics for the planner, and
		// the visibility map that lets counts read the index alone.
		for _, table := range []string{"deliveries", "delivery_attempts", "events"} {
			if _, err := raw.ExecContext(ctx, "VACUUM ANALYZE "+table); err != nil {
				return nil, err
			}
		}
	}
	return eps, nil
}

// deliveryCase is one page, or health, or detail, to time.
type deliveryCase struct {
	name string
	call func(ctx context.Context) (rows int, err error)
}

// measureDeliveries loads cfg.deliveries deliveries into a fresh checkoutd
// on the named database and times each case of the dashboard's webhook
// pages.
func measureDeliveries(ctx context.Context, cfg *config, name string, stderr io.Writer, rep *report) error {
	t, err := startTarget(ctx, name, cfg, stderr)
	var skip skipError
	if errors.As(err, &skip) {
		rep.addDelivery(deliveryRow{Target: name, Deliveries: cfg.deliveries, Skipped: skip.reason})
		return nil
	}
	if err != nil {
		return fmt.Errorf("start %s: %w", name, err)
	}
	defer t.close()
	t.disp.stop() // nothing is attempted: the endpoints are not reachable
	now := t.svc.Now()
	fmt.Fprintf(stderr, "bench: %s: loading %d deliveries\n", name, cfg.deliveries)
	began := time.Now()
	eps, err := loadDeliveries(ctx, t, cfg.deliveries, now)
	if err != nil {
		return err
	}
	loaded := time.Since(began)
	cases, err := deliveryCases(ctx, t, eps, now)
	if err != nil {
		return err
	}
	for i, c := range cases {
		rw := timeDeliveryCase(ctx, c)
		rw.Target, rw.Deliveries = name, cfg.deliveries
		if i == 0 {
			rw.LoadSeconds = loaded.Seconds()
		}
		rep.addDelivery(rw)
	}
	return nil
}

// deliveryCases are the pages a merchant opens, on the loaded store.
func deliveryCases(ctx context.Context, t *target, eps []*checkout.Endpoint, now time.Time) ([]deliveryCase, error) {
	scope := checkout.Scope{MerchantID: t.storeID, Mode: checkout.ModeTest}
	page := func(f checkout.DeliveryFilter) func(ctx context.Context) (int, error) {
		return func(ctx context.Context) (int, error) {
			p, err := t.svc.DeliveriesIn(ctx, scope, f)
			return len(p.Items), err
		}
	}
	// A cursor half way down the list (15 days back), as paging down
	// reaches it, and a delivery and an event from there.
	mid, err := t.svc.DeliveriesIn(ctx, scope, checkout.DeliveryFilter{To: now.Add(-15 * 24 * time.Hour), Limit: 1})
	if err != nil || len(mid.Items) == 0 {
		return nil, fmt.Errorf("find the middle of the list: %d rows, %v", len(mid.Items), err)
	}
	deep, sample := checkout.DeliveryCursor(mid.Items[0]), mid.Items[0]
	midFailed, err := t.svc.DeliveriesIn(ctx, scope, checkout.DeliveryFilter{EndpointID: eps[0].ID, Status: checkout.DeliveryFailed,
		To: now.Add(-15 * 24 * time.Hour), Limit: 1})
	if err != nil || len(midFailed.Items) == 0 {
		return nil, fmt.Errorf("find a failed delivery: %v", err)
	}
	day := now.Add(-10 * 24 * time.Hour).Truncate(24 * time.Hour)
	ep := eps[0].ID
	return []deliveryCase{
		{"first page", page(checkout.DeliveryFilter{})},
		{"deep page (cursor 15 days back)", page(checkout.DeliveryFilter{After: deep})},
		{"status failed", page(checkout.DeliveryFilter{Status: checkout.DeliveryFailed})},
		{"status pending", page(checkout.DeliveryFilter{Status: checkout.DeliveryPending})},
		{"status failed, deep", page(checkout.DeliveryFilter{Status: checkout.DeliveryFailed, After: deep})},
		{"type checkout.completed", page(checkout.DeliveryFilter{EventType: checkout.EventCheckoutCompleted})},
		{"type payment.disputed (0.5%)", page(checkout.DeliveryFilter{EventType: checkout.EventPaymentDisputed})},
		{"event id", page(checkout.DeliveryFilter{EventID: sample.EventID})},
		{"one day, 10 days back", page(checkout.DeliveryFilter{From: day, To: day.Add(24 * time.Hour)})},
		{"one day, deep in it", page(checkout.DeliveryFilter{From: day, To: day.Add(24 * time.Hour), After: checkout.Cursor{At: day.Add(2 * time.Hour), ID: "whd_"}})},
		{"failed, payment.disputed, 7 days", page(checkout.DeliveryFilter{Status: checkout.DeliveryFailed, EventType: checkout.EventPaymentDisputed,
			From: now.Add(-7 * 24 * time.Hour)})},
		{"endpoint", page(checkout.DeliveryFilter{EndpointID: ep})},
		{"endpoint, deep", page(checkout.DeliveryFilter{EndpointID: ep, After: deep})},
		{"endpoint, status failed", page(checkout.DeliveryFilter{EndpointID: ep, Status: checkout.DeliveryFailed})},
		{"endpoint, status failed, deep", page(checkout.DeliveryFilter{EndpointID: ep, Status: checkout.DeliveryFailed,
			After: checkout.DeliveryCursor(midFailed.Items[0])})},
		{"endpoint, type payment.disputed", page(checkout.DeliveryFilter{EndpointID: ep, EventType: checkout.EventPaymentDisputed})},
		{"endpoint health", func(ctx context.Context) (int, error) {
			h, err := t.svc.EndpointHealth(ctx, scope, ep)
			if err == nil && h.Week.Finished() == 0 {
				err = errors.New("health counted no delivery")
			}
			return 1, err
		}},
		{"delivery detail", func(ctx context.Context) (int, error) {
			_, as, err := t.svc.DeliveryIn(ctx, scope, midFailed.Items[0].ID)
			return 1 + len(as), err
		}},
	}, nil
}

// timeCase calls c a few times to warm up, then up to deliveryCalls times
// (at most deliveryCallTime) and returns the latencies' p50 and p99.
func timeDeliveryCase(ctx context.Context, c deliveryCase) deliveryRow {
	rw := deliveryRow{Case: c.name}
	for range 3 {
		if _, err := c.call(ctx); err != nil {
			rw.Error = err.Error()
			return rw
		}
	}
	res := &result{}
	until := time.Now().Add(deliveryCallTime)
	for len(res.latencies) < deliveryCalls && time.Now().Before(until) {
		began := time.Now()
		rows, err := c.call(ctx)
		took := time.Since(began)
		if err != nil {
			rw.Error = err.Error()
			return rw
		}
		res.latencies = append(res.latencies, took)
		rw.Rows = rows
	}
	slices.Sort(res.latencies)
	rw.Calls = len(res.latencies)
	rw.P50ms, rw.P99ms = ms(res.percentile(50)), ms(res.percentile(99))
	return rw
}

// rawOpener opens a connection pool of its own to a target's database, for
// the bulk load.
type rawOpener func() (*sql.DB, error)

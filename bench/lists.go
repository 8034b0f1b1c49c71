package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
)

// The lists rows (-lists N): the dashboard's lists at volume (issue 10,
// item 8: under 50 ms of server time per page with a million rows in the
// table, on both databases). A fresh checkoutd on each database gets N
// request logs, N events (each event with a delivery to one endpoint) and N
// payments (each of a session of its own), written by the bench straight
// into the tables in large multi-row statements, then each page the
// dashboard asks for is timed as the service call it makes, which is the
// server's whole time for the page but for rendering.

// listBudget is the most a page may take (issue 10, item 8).
const listBudget = 50 * time.Millisecond

// listRuns is how many times each case is timed, after listWarmup untimed
// runs.
const (
	listRuns   = 200
	listWarmup = 5
)

// listSpan is the time the generated rows spread over: less than the
// 30 days the purge keeps, so the background purge leaves them alone.
const listSpan = 29 * 24 * time.Hour

// listChunk is how many rows one statement (and transaction) of the load
// writes.
const listChunk = 50_000

// listRow is one line of the lists table.
type listRow struct {
	Target  string  `json:"target"`
	List    string  `json:"list"`
	Case    string  `json:"case"`
	Skipped string  `json:"skipped,omitempty"`
	Rows    int     `json:"rows"`     // rows in the table
	Items   int     `json:"items"`    // items on the page (the last run's)
	P50ms   float64 `json:"p50_ms"`   // server time per page
	P99ms   float64 `json:"p99_ms"`   // server time per page
	Within  bool    `json:"within"`   // p99 within listBudget
	LoadSec float64 `json:"load_sec"` // time the table's load took (once per target, on its first row)
}

// purgeRow is one line of the purge table: a day of rows purged with the
// lists' indexes, and the next day without them.
type purgeRow struct {
	Target      string  `json:"target"`
	Table       string  `json:"table"`
	Indexes     string  `json:"indexes"`
	Deleted     int64   `json:"deleted"`
	Seconds     float64 `json:"seconds"`
	RowsPerSec  float64 `json:"rows_per_sec"`
	Description string  `json:"-"`
}

// listCase is one page the dashboard may ask for: run fetches it once (the
// nth time) and returns how many items it held.
type listCase struct {
	list, name string
	run        func(ctx context.Context, n int) (int, error)
}

// gen says how the generated rows look: row i (from 1 to n) of each table
// is at start + i*step, so its time and id are known without reading it.
type gen struct {
	n           int
	start, step int64 // Unix milliseconds
	store       string
	key, rare   string // the key of most requests, and one of 1 in 1,000
	endpoint    string
}

func (g gen) at(i int) time.Time { return time.UnixMilli(g.start + int64(i)*g.step) }
func (g gen) requestID(i int) string {
	return fmt.Sprintf("%s%032x", checkout.PrefixRequest, i)
}
func (g gen) eventID(i int) string   { return fmt.Sprintf("%s%032x", checkout.PrefixEvent, i) }
func (g gen) sessionID(i int) string { return fmt.Sprintf("%s%064x", checkout.PrefixSession, i) }
func (g gen) paymentID(i int) string {
	return fmt.Sprintf("%s%032x", checkout.PrefixPayment, i)
}

// measureLists measures the lists rows of a fresh checkoutd on the named
// database.
func measureLists(ctx context.Context, cfg *config, name string, stderr io.Writer, rep *report) error {
	t, err := startTarget(ctx, name, cfg, stderr)
	var skip skipError
	if errors.As(err, &skip) {
		rep.addList(listRow{Target: name, Skipped: skip.reason})
		return nil
	}
	if err != nil {
		return fmt.Errorf("start %s: %w", name, err)
	}
	defer t.close()
	raw, err := t.raw()
	if err != nil {
		return err
	}
	defer raw.Close()

	g, err := newGen(ctx, t, cfg.lists)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "bench: %s: loading %d request logs, %d events with their deliveries, %d payments with their sessions and their metadata and %d audit entries\n", name, g.n, g.n, g.n, g.n)
	start := time.Now()
	if err := loadLists(ctx, t.name, t.logs, raw, g, stderr); err != nil {
		return fmt.Errorf("load: %w", err)
	}
	loaded := time.Since(start)
	if err := explainLists(ctx, t.name, t.logs, raw, g, stderr); err != nil {
		return err
	}
	first := true
	for _, c := range listCases(t.svc, g) {
		row, err := timeCase(ctx, c)
		if err != nil {
			return fmt.Errorf("%s %s: %w", c.list, c.name, err)
		}
		row.Target, row.Rows = name, g.n
		if first {
			row.LoadSec, first = loaded.Seconds(), false
		}
		rep.addList(row)
	}
	return measurePurges(ctx, t, raw, g, rep)
}

// newGen makes the store's second key and its endpoint, and places the
// rows over the last listSpan.
func newGen(ctx context.Context, t *target, n int) (gen, error) {
	g := gen{n: n, store: t.storeID, key: t.key.ID}
	rare, _, err := t.svc.CreateAPIKey(ctx, checkout.APIKeyParams{Name: "rarely used", MerchantID: t.storeID, Mode: checkout.ModeTest,
		Type: checkout.KeyBearer, Permissions: []checkout.Permission{checkout.PermCheckoutsRead}})
	if err != nil {
		return g, err
	}
	g.rare = rare.ID
	ep, err := checkout.NewEndpoint(checkout.EndpointParams{MerchantID: t.storeID, Mode: checkout.ModeTest,
		URL: "https://hooks.example.com/bench", Events: []string{checkout.AllEvents}}, time.Now())
	if err != nil {
		return g, err
	}
	// Disabled, so the dispatcher leaves it alone; the deliveries below
	// are finished ones.
	ep.Enabled = false
	if err := t.db.InTx(ctx, func(tx checkout.Tx) error { return tx.EndpointInsert(ctx, ep) }); err != nil {
		return g, err
	}
	g.endpoint = ep.ID
	now := time.Now().UnixMilli()
	g.step = max(1, listSpan.Milliseconds()/int64(n))
	g.start = now - g.step*int64(n) - 1
	return g, nil
}

// responseBody stands for a session as the API returns it (about 1 KB).
var responseBody = `{"ok":true,"data":{"id":"cs_0","object":"checkout_session","status":"open","title":"Order 1042","currency":"USD",` +
	`"amount":3300,"discount_amount":0,"tax_amount":0,"total_amount":3300,"items":[{"name":"AK-47 | Redline (Field-Tested)",` +
	`"amount":1500,"quantity":2,"image":"https://cdn.example.com/items/ak47-redline.png"},{"name":"Gift wrap","amount":300,"quantity":1}],` +
	`"customer":{"email":"buyer@example.com","name":"Ada Buyer"},"metadata":{"order_id":"1042","cart":"c_9f2"},` +
	`"return_url":"https://shop.example.com/thanks","cancel_url":"https://shop.example.com/cart","url":"https://pay.example.com/invoice/cs_0",` +
	`"merchant":{"id":"00000000-0000-4000-8000-000000000000","name":"Bench Games"},"livemode":false,"created":1790000000,"expires_at":1790003600}}`

// loadLists writes the rows in statements of listChunk, each its own
// transaction, generated by the database itself (a recursive CTE on
// SQLite, generate_series on PostgreSQL) from the row number i:
//
//   - request logs: half POST creates, half GET retrieves (each session's
//     path retrieved twice), 1 in 1,000 HEAD; statuses 2xx but 1 in 25
//     4xx and 1 in 1,000 5xx; 1 in 1,000 by the rare key.
//   - events: a quarter each checkout.created, checkout.completed and
//     payment.succeeded, about 1 in 20 checkout.expired, 1 in 1,000
//     payment.dispute_closed; each with a finished delivery to the
//     endpoint (1 in 100 failed).
//   - sessions: 1 in 20 expired, the rest complete; each with metadata
//     order_id=A-<i> (its row of session_metadata) and one of 1,000
//     customers' emails.
//   - payments, each of a session of its own: a quarter crypto, the rest
//     card; 1 in 10 failed (card_declined), 1 in 100 processing, 1 in
//     1,000 disputed, and 1 in 1,000 failed duplicate_payment, to refund;
//     1 in 10 partially refunded; the rest succeeded.
//   - refunds: one of each payment partially refunded, 1 in 10,000 a
//     crypto refund waiting for the merchant's payout.
//   - disputes: one of each disputed payment, half open.
func loadLists(ctx context.Context, dialect, logs string, raw *sql.DB, g gen, stderr io.Writer) error {
	series := func(sel string) string {
		if dialect == "sqlite" {
			return `WITH RECURSIVE s(i) AS (SELECT $1 UNION ALL SELECT i + 1 FROM s WHERE i < $2) ` + sel + ` FROM s`
		}
		return sel + ` FROM generate_series($1::bigint, $2::bigint) AS s(i)`
	}
	hex := func(width int, expr string) string {
		if dialect == "sqlite" {
			return fmt.Sprintf("printf('%%0%dx', %s)", width, expr)
		}
		return fmt.Sprintf("lpad(to_hex(%s), %d, '0')", expr, width)
	}
	// $3 start, $4 step, $5 store, then per table.
	at := `($3 + i * $4)`
	logRows := series(`INSERT INTO ` + logs + `request_logs (request_id, store_id, mode, api_key_id, method, path, route, status, duration_us,
			request_body, response_body, created_at_ms)
		SELECT 'req_' || ` + hex(32, "i") + `, $5, 'test',
			CASE WHEN i % 1000 = 13 THEN $7 ELSE $6 END,
			CASE WHEN i % 1000 = 11 THEN 'HEAD' WHEN i % 2 = 0 THEN 'POST' ELSE 'GET' END,
			CASE WHEN i % 2 = 0 AND i % 1000 <> 11 THEN '/v1/stores/' || $5 || '/checkouts'
				ELSE '/v1/stores/' || $5 || '/checkouts/cs_' || ` + hex(64, "i / 4") + ` END,
			CASE WHEN i % 2 = 0 AND i % 1000 <> 11 THEN $10 ELSE $11 END,
			CASE WHEN i % 1000 = 7 THEN 500 WHEN i % 25 = 3 THEN 400 WHEN i % 2 = 0 THEN 201 ELSE 200 END,
			800 + i % 5000,
			CASE WHEN i % 2 = 0 THEN $8 ELSE '' END, $9, ` + at)
	events := series(`INSERT INTO events (id, store_id, mode, type, created_at, data, object_id)
		SELECT 'evt_' || ` + hex(32, "i") + `, $5, 'test',
			CASE WHEN i % 1000 = 17 THEN 'payment.dispute_closed' WHEN i % 20 = 1 THEN 'checkout.expired'
				WHEN i % 4 = 2 THEN 'checkout.completed' WHEN i % 4 = 3 THEN 'payment.succeeded' ELSE 'checkout.created' END,
			` + at + ` / 1000, '{"id":"cs_' || ` + hex(64, "i / 4") + ` || '",' || $6, 'cs_' || ` + hex(64, "i / 4") + ``)
	deliveries := series(`INSERT INTO deliveries (id, event_id, endpoint_id, store_id, mode, status, attempts, next_attempt_at_ms,
			last_status_code, last_error, created_at_ms, updated_at_ms)
		SELECT 'whd_' || ` + hex(32, "i") + `, 'evt_' || ` + hex(32, "i") + `, $6, $5, 'test',
			CASE WHEN i % 100 = 5 THEN 'failed' ELSE 'succeeded' END, 1, ` + at + `,
			CASE WHEN i % 100 = 5 THEN 500 ELSE 200 END, '', ` + at + `, ` + at)
	sessions := series(`INSERT INTO sessions (id, store_id, mode, status, title, currency, amount, discount_amount, tax_amount,
			total_amount, items, customer_email, metadata, created_at, expires_at, completed_at)
		SELECT 'cs_' || ` + hex(64, "i") + `, $5, 'test', CASE WHEN i % 20 = 7 THEN 'expired' ELSE 'complete' END,
			'Order', 'USD', 1500, 0, 0, 1500, $6, 'buyer' || (i % 1000) || '@example.com', '{"order_id":"A-' || i || '"}',
			` + at + ` / 1000, ` + at + ` / 1000 + 3600, CASE WHEN i % 20 = 7 THEN NULL ELSE ` + at + ` / 1000 END`)
	// Each session's metadata, as SessionInsert writes it (migration 0026).
	sessionMetadata := series(`INSERT INTO session_metadata (store_id, mode, key, value, created_at, session_id)
		SELECT $5, 'test', 'order_id', 'A-' || i, ` + at + ` / 1000, 'cs_' || ` + hex(64, "i"))
	// The cases run in order: 1 in 1,000 to refund (13), 1 in 1,000
	// disputed (17), then 1 in 10 declined (3), 1 in 100 processing (1).
	payments := series(`INSERT INTO payments (id, session_id, store_id, mode, method, status, captured, amount, amount_refunded,
			fee, currency, failure_code, details, dispute_on_success, created_at_ms, updated_at_ms, refund_due, succeeded_at)
		SELECT 'pay_' || ` + hex(32, "i") + `, 'cs_' || ` + hex(64, "i") + `, $5, 'test',
			CASE WHEN i % 4 = 1 OR i % 1000 = 13 THEN 'crypto' ELSE 'card' END,
			CASE WHEN i % 1000 = 13 THEN 'failed' WHEN i % 1000 = 17 THEN 'disputed' WHEN i % 10 = 3 THEN 'failed'
				WHEN i % 100 = 1 THEN 'processing' WHEN i % 10 = 5 THEN 'partially_refunded' ELSE 'succeeded' END,
			CASE WHEN i % 1000 = 13 OR i % 1000 <> 17 AND (i % 10 = 3 OR i % 100 = 1) THEN 0 ELSE 1 END,
			1500, CASE WHEN i % 10 = 5 THEN 500 ELSE 0 END, 0, 'USD',
			CASE WHEN i % 1000 = 13 THEN 'duplicate_payment' WHEN i % 1000 <> 17 AND i % 10 = 3 THEN 'card_declined' END,
			'{}', 0, ` + at + `, ` + at + `,
			CASE WHEN i % 1000 = 13 THEN 1 ELSE 0 END,
			CASE WHEN i % 1000 = 13 OR i % 1000 <> 17 AND (i % 10 = 3 OR i % 100 = 1) THEN NULL ELSE ` + at + ` / 1000 END`)
	// A refund of 500 of each payment partially refunded (1 in 10); 1 in
	// 10,000 of them (crypto payments) still pending, waiting for the
	// merchant's payout to the address the buyer gave.
	refunds := series(`INSERT INTO refunds (id, payment_id, session_id, store_id, mode, amount, currency, reason, status, failure_code,
			requested_by_kind, requested_by_id, requested_by_name, due_at_ms, created_at_ms, updated_at_ms, details, link_token, payout_address)
		SELECT 're_' || `+hex(32, "i")+`, 'pay_' || `+hex(32, "i")+`, 'cs_' || `+hex(64, "i")+`, $5, 'test', 500, 'USD', 'requested_by_customer',
			CASE WHEN i % 10000 = 5 THEN 'pending' ELSE 'succeeded' END, NULL, 'cli', '', 'bench',
			NULL, `+at+`, `+at+`,
			CASE WHEN i % 10000 = 5 THEN $6 ELSE '' END, NULL,
			CASE WHEN i % 10000 = 5 THEN 'BTC:' || $7 END`) + ` WHERE i % 10 = 5`
	// A dispute of each disputed payment (1 in 1,000): half still needing
	// a response, their deadlines in the next week; the rest won.
	disputes := series(`INSERT INTO disputes (id, payment_id, session_id, store_id, mode, amount, currency, reason, status, fee, evidence_due_by,
			evidence, submitted_at_ms, submitted_by, closed_at_ms, due_at_ms, created_at_ms, updated_at_ms)
		SELECT 'dp_' || `+hex(32, "i")+`, 'pay_' || `+hex(32, "i")+`, 'cs_' || `+hex(64, "i")+`, $5, 'test', 1500, 'USD', 'fraudulent',
			CASE WHEN i % 2000 = 17 THEN 'needs_response' ELSE 'won' END, 1500, $6 + i % 604800, '{}', NULL, '',
			CASE WHEN i % 2000 = 17 THEN NULL ELSE `+at+` END, CASE WHEN i % 2000 = 17 THEN ($6 + i % 604800) * 1000 END, `+at+`, `+at+``) +
		` WHERE i % 1000 = 17`
	// The audit trail: most entries by one member (test sends), 1 in 100
	// by the CLI, 1 in 1,000 an API key revoked.
	audit := series(`INSERT INTO audit_entries (id, store_id, actor_kind, actor_id, actor_name, actor_key, action, object_id,
			client_address, user_agent, created_at_ms)
		SELECT 'au_' || ` + hex(32, "i") + `, $5,
			CASE WHEN i % 100 = 7 THEN 'cli' ELSE 'account' END,
			CASE WHEN i % 100 = 7 THEN '' ELSE $6 END,
			CASE WHEN i % 100 = 7 THEN 'root' ELSE 'jo@bench.example' END,
			CASE WHEN i % 100 = 7 THEN 'cli:root' ELSE $6 END,
			CASE WHEN i % 1000 = 19 THEN 'api_key.revoke' ELSE 'webhook_endpoint.test' END,
			'we_' || ` + hex(32, "i % 16") + `, '192.0.2.7', 'Mozilla/5.0 (bench)', ` + at + ``)
	payout := `{"coin":"BTC","network":"test","rate":"payment","link_expires_at":1,"address":"` + benchPayoutAddress +
		`","amount_base":"2100","addressed_at":1}`
	// An event's object: the session of responseBody after its id.
	eventData := responseBody[len(`{"ok":true,"data":{"id":"cs_0",`) : len(responseBody)-1]
	tables := []struct {
		name  string
		query string
		args  []any
	}{
		{"request_logs", logRows, []any{g.key, g.rare, createBody, responseBody, service.LogRoutes[0], service.LogRoutes[1]}},
		{"events", events, []any{eventData}},
		{"deliveries", deliveries, []any{g.endpoint}},
		{"sessions", sessions, []any{`[{"name":"Sword","amount":1500,"quantity":1}]`}},
		{"session_metadata", sessionMetadata, nil},
		{"payments", payments, nil},
		{"refunds", refunds, []any{payout, benchPayoutAddress}},
		{"disputes", disputes, []any{time.Now().Unix()}},
		{"audit_entries", audit, []any{benchAccountID}},
	}
	for _, tb := range tables {
		began := time.Now()
		for lo := 1; lo <= g.n; lo += listChunk {
			hi := min(lo+listChunk-1, g.n)
			args := append([]any{lo, hi, g.start, g.step, g.store}, tb.args...)
			if _, err := raw.ExecContext(ctx, tb.query, args...); err != nil {
				return fmt.Errorf("%s %d to %d: %w", tb.name, lo, hi, err)
			}
		}
		fmt.Fprintf(stderr, "bench: %s: %d rows of %s in %.1f s\n", dialect, g.n, tb.name, time.Since(began).Seconds())
	}
	// The load writes the past, which the service never does: the home's
	// kept days and hours (the home job keeps the ended ones from the
	// start, zeros before the load) no longer hold, so they go, as after
	// any import of past payments (docs/dashboard.md, Home).
	for _, table := range []string{"home_hours", "home_days"} {
		if _, err := raw.ExecContext(ctx, "DELETE FROM "+table); err != nil {
			return err
		}
	}
	if dialect == "postgres" {
		// What autovacuum does after a load this size, done now rather
		// than while the pages are timed: statistics for the planner, and
		// the visibility map that lets the lists read their indexes
		// alone. (With ANALYZE alone, the first cases timed after the
		// load, request logs by status, ran at 86 and 106 ms p99 on a
		// loaded machine, while autovacuum's own VACUUM of the new rows
		// was due; with VACUUM ANALYZE, 40 ms at most on the same
		// machine.) SQLite is left without statistics, as serve leaves
		// it.
		for _, table := range []string{"request_logs", "events", "deliveries", "sessions", "session_metadata", "payments", "refunds", "disputes", "audit_entries"} {
			if _, err := raw.ExecContext(ctx, "VACUUM ANALYZE "+table); err != nil {
				return err
			}
		}
	}
	return nil
}

// listCases are the pages the dashboard asks for: each list's first page,
// pages deep in it by cursor (a random place each time), each filter
// alone (common and rare values), dates, and filters together.
func listCases(svc *service.Service, g gen) []listCase {
	scope := checkout.Scope{MerchantID: g.store, Mode: checkout.ModeTest}
	day := 24 * time.Hour
	from := g.at(0).Add(10 * day)
	deep := func(n int) int { return g.n/10 + rand.IntN(g.n-g.n/10) } // anywhere past the first tenth
	logs := func(name string, f service.RequestLogFilter, cursor func(n int) string) listCase {
		return listCase{"request logs", name, func(ctx context.Context, n int) (int, error) {
			c := ""
			if cursor != nil {
				c = cursor(n)
			}
			p, err := svc.ListRequestLogs(ctx, scope, f, c, service.DefaultPageSize)
			return len(p.Items), err
		}}
	}
	logCursor := func(n int) string {
		i := deep(n)
		return checkout.Cursor{At: g.at(i), ID: g.requestID(i)}.String()
	}
	events := func(name string, f service.EventFilter, cursor func(n int) string) listCase {
		return listCase{"events", name, func(ctx context.Context, n int) (int, error) {
			c := ""
			if cursor != nil {
				c = cursor(n)
			}
			p, err := svc.ListEvents(ctx, scope, f, c, service.DefaultPageSize)
			return len(p.Items), err
		}}
	}
	eventCursor := func(n int) string {
		i := deep(n)
		return checkout.Cursor{At: g.at(i).Truncate(time.Second), ID: g.eventID(i)}.String()
	}
	payments := func(name string, f service.PaymentFilter, cursor func(n int) string) listCase {
		return listCase{"payments", name, func(ctx context.Context, n int) (int, error) {
			c := ""
			if cursor != nil {
				c = cursor(n)
			}
			p, err := svc.ListPayments(ctx, scope, f, c, service.DefaultPageSize)
			return len(p.Items), err
		}}
	}
	paymentCursor := func(n int) string {
		i := deep(n)
		return checkout.Cursor{At: g.at(i), ID: g.paymentID(i)}.String()
	}
	audit := func(name string, f service.AuditFilter, cursor func(n int) string) listCase {
		return listCase{"audit", name, func(ctx context.Context, n int) (int, error) {
			c := ""
			if cursor != nil {
				c = cursor(n)
			}
			p, err := svc.ListAudit(ctx, g.store, f, c, service.DefaultPageSize)
			return len(p.Items), err
		}}
	}
	auditCursor := func(n int) string {
		i := deep(n)
		return checkout.Cursor{At: g.at(i), ID: fmt.Sprintf("%s%032x", checkout.PrefixAudit, i)}.String()
	}
	sessions := func(name string, f func(n int) service.SessionFilter, cursor func(n int) string) listCase {
		return listCase{"sessions", name, func(ctx context.Context, n int) (int, error) {
			c := ""
			if cursor != nil {
				c = cursor(n)
			}
			p, err := svc.ListSessions(ctx, scope, f(n), c, service.DefaultPageSize)
			return len(p.Items), err
		}}
	}
	sessionFilter := func(f service.SessionFilter) func(int) service.SessionFilter {
		return func(int) service.SessionFilter { return f }
	}
	sessionCursor := func(n int) string {
		i := deep(n)
		return checkout.Cursor{At: g.at(i).Truncate(time.Second), ID: g.sessionID(i)}.String()
	}
	oneDay := service.RequestLogFilter{From: from, To: from.Add(day)}
	return []listCase{
		logs("first page", service.RequestLogFilter{}, nil),
		logs("deep page (cursor)", service.RequestLogFilter{}, logCursor),
		logs("status 2xx", service.RequestLogFilter{StatusClass: "2xx"}, nil),
		logs("status 4xx (4%)", service.RequestLogFilter{StatusClass: "4xx"}, nil),
		logs("status 5xx (0.1%)", service.RequestLogFilter{StatusClass: "5xx"}, nil),
		logs("status 5xx, deep page", service.RequestLogFilter{StatusClass: "5xx"}, logCursor),
		logs("method GET", service.RequestLogFilter{Method: "GET"}, nil),
		logs("method HEAD (0.1%)", service.RequestLogFilter{Method: "HEAD"}, nil),
		logs("method DELETE (none)", service.RequestLogFilter{Method: "DELETE"}, nil),
		logs("route: create", service.RequestLogFilter{Route: service.LogRoutes[0]}, nil),
		logs("route: retrieve, deep page", service.RequestLogFilter{Route: service.LogRoutes[1]}, logCursor),
		logs("key (0.1%)", service.RequestLogFilter{APIKeyID: g.rare}, nil),
		logs("one day", oneDay, nil),
		logs("one day, 5xx", service.RequestLogFilter{StatusClass: "5xx", From: oneDay.From, To: oneDay.To}, nil),
		logs("5xx POST of the rare key", service.RequestLogFilter{StatusClass: "5xx", Method: "POST", APIKeyID: g.rare}, nil),
		{"request logs", "by Request-Id", func(ctx context.Context, n int) (int, error) {
			_, err := svc.RequestLogIn(ctx, scope, g.requestID(deep(n)))
			return 1, err
		}},
		events("first page", service.EventFilter{}, nil),
		events("deep page (cursor)", service.EventFilter{}, eventCursor),
		events("type checkout.created", service.EventFilter{Type: checkout.EventCheckoutCreated}, nil),
		events("type payment.dispute_closed (0.1%)", service.EventFilter{Type: checkout.EventPaymentDisputeClosed}, nil),
		events("type webhook.test (none)", service.EventFilter{Type: checkout.EventWebhookTest}, nil),
		events("one day", service.EventFilter{From: from, To: from.Add(day)}, nil),
		events("one day, dispute_closed", service.EventFilter{Type: checkout.EventPaymentDisputeClosed, From: from, To: from.Add(day)}, nil),
		{"events", "by id", func(ctx context.Context, n int) (int, error) {
			_, err := svc.EventIn(ctx, scope, g.eventID(deep(n)))
			return 1, err
		}},
		payments("first page", service.PaymentFilter{}, nil),
		payments("deep page (cursor)", service.PaymentFilter{}, paymentCursor),
		payments("status failed (10%)", service.PaymentFilter{Status: checkout.PaymentFailed}, nil),
		payments("status disputed (0.1%), deep page", service.PaymentFilter{Status: checkout.PaymentDisputed}, paymentCursor),
		payments("status refunded (none)", service.PaymentFilter{Status: checkout.PaymentRefunded}, nil),
		payments("to refund (0.1%)", service.PaymentFilter{ToRefund: true}, nil),
		payments("to refund, deep page", service.PaymentFilter{ToRefund: true}, paymentCursor),
		{"payments", "count to refund", func(ctx context.Context, n int) (int, error) {
			return svc.RefundDueCount(ctx, scope)
		}},
		{"payments", "by id", func(ctx context.Context, n int) (int, error) {
			_, err := svc.PaymentIn(ctx, scope, g.paymentID(deep(n)))
			return 1, err
		}},
		payments("status partially_refunded (10%)", service.PaymentFilter{Status: checkout.PaymentPartiallyRefunded}, nil),
		{"payments", "page of a refunded payment", func(ctx context.Context, n int) (int, error) {
			return paymentPage(ctx, svc, scope, g.paymentID(deep(n)/10*10+5))
		}},
		{"payments", "page of a disputed payment", func(ctx context.Context, n int) (int, error) {
			return paymentPage(ctx, svc, scope, g.paymentID(deep(n)/1000*1000+17))
		}},
		{"refunds", "by id", func(ctx context.Context, n int) (int, error) {
			_, err := svc.RefundIn(ctx, scope, fmt.Sprintf("%s%032x", checkout.PrefixRefund, deep(n)/10*10+5))
			return 1, err
		}},
		{"refunds", "awaiting payout (a node's start)", func(ctx context.Context, n int) (int, error) {
			rs, err := svc.Store().RefundListAwaitingPayout(ctx)
			return len(rs), err
		}},
		{"disputes", "open (the home's attention)", func(ctx context.Context, n int) (int, error) {
			ds, err := svc.OpenDisputes(ctx, scope)
			return len(ds), err
		}},
		// The home (docs/dashboard.md, Home): its figures of the last 30
		// days, the ended days and today's ended hours kept (home_days,
		// home_hours) after the first run, the hours not settled yet
		// counted each time, as a merchant's view finds them with the home
		// job running; one ended day counted off the indexes, hour by hour
		// without keeping it, which a view pays for each day neither the
		// job nor an earlier view kept (the job not running, or a range
		// older than what it keeps); the home job's round for the store,
		// which finds everything kept but the hour that settled last; what
		// needs attention.
		{"home", "figures, last 30 days", func(ctx context.Context, n int) (int, error) {
			h, err := svc.HomeFigures(ctx, scope, service.HomeRange{})
			return int(h.Total.Payments), err
		}},
		{"home", "figures, one day counted", func(ctx context.Context, n int) (int, error) {
			d := checkout.DayOf(g.at(g.n / 2))
			days, err := svc.Store().HomeDays(ctx, checkout.HomeDaysParams{MerchantID: g.store, Mode: checkout.ModeTest, Currency: "USD",
				From: d, To: d.Add(checkout.Day)})
			if err != nil {
				return 0, err
			}
			return int(days[0].Payments), nil
		}},
		{"home", "the home job's round", func(ctx context.Context, n int) (int, error) {
			return svc.KeepHome(ctx)
		}},
		{"home", "attention", func(ctx context.Context, n int) (int, error) {
			a, err := svc.HomeAttention(ctx, scope)
			return a.FailedDeliveries + len(a.Payouts), err
		}},
		{"export", "a page of payments, deep in 30 days", func(ctx context.Context, n int) (int, error) {
			i := deep(n)
			ps, err := svc.Store().PaymentExportPage(ctx, checkout.ExportParams{MerchantID: g.store, Mode: checkout.ModeTest,
				From: g.at(0), To: g.at(g.n).Add(time.Second), After: checkout.Cursor{At: g.at(i), ID: g.paymentID(i)}, Limit: service.ExportPageSize})
			return len(ps), err
		}},
		audit("first page", service.AuditFilter{}, nil),
		audit("deep page (cursor)", service.AuditFilter{}, auditCursor),
		audit("action api_key.revoke (0.1%)", service.AuditFilter{Action: string(checkout.AuditAPIKeyRevoke)}, nil),
		audit("actor cli:root (1%), deep page", service.AuditFilter{Actor: "cli:root"}, auditCursor),
		audit("actor and action (none)", service.AuditFilter{Actor: "cli:root", Action: string(checkout.AuditAPIKeyRevoke)}, nil),
		audit("one day", service.AuditFilter{Since: from, Until: from.Add(day)}, nil),
		audit("one day, api_key.revoke", service.AuditFilter{Action: string(checkout.AuditAPIKeyRevoke), Since: from, Until: from.Add(day)}, nil),
		sessions("first page", sessionFilter(service.SessionFilter{}), nil),
		sessions("deep page (cursor)", sessionFilter(service.SessionFilter{}), sessionCursor),
		sessions("status expired (5%)", sessionFilter(service.SessionFilter{Status: checkout.StatusExpired}), nil),
		sessions("status open (none)", sessionFilter(service.SessionFilter{Status: checkout.StatusOpen}), nil),
		sessions("one day", sessionFilter(service.SessionFilter{From: from, To: from.Add(day)}), nil),
		sessions("metadata order_id=A-<i> (one)", func(n int) service.SessionFilter {
			return service.SessionFilter{Search: fmt.Sprintf("order_id=A-%d", deep(n))}
		}, nil),
		sessions("metadata (none)", sessionFilter(service.SessionFilter{Search: "order_id=none"}), nil),
		sessions("email (0.1%)", func(n int) service.SessionFilter {
			return service.SessionFilter{Search: fmt.Sprintf("buyer%d@example.com", n%1000)}
		}, nil),
		sessions("email (0.1%), deep page", sessionFilter(service.SessionFilter{Search: "buyer7@example.com"}), sessionCursor),
		sessions("by session id", func(n int) service.SessionFilter { return service.SessionFilter{Search: g.sessionID(deep(n))} }, nil),
		sessions("by payment id", func(n int) service.SessionFilter { return service.SessionFilter{Search: g.paymentID(deep(n))} }, nil),
		{"sessions", "a session's page", func(ctx context.Context, n int) (int, error) {
			d, err := svc.SessionIn(ctx, scope, g.sessionID(deep(n)))
			if err != nil {
				return 0, err
			}
			return len(d.Payments) + len(d.Events), nil
		}},
		{"api keys", "list", func(ctx context.Context, n int) (int, error) {
			ks, err := svc.ListAPIKeys(ctx, scope)
			return len(ks), err
		}},
	}
}

// benchAccountID is the member who made most of the audit entries.
const benchAccountID = "acct_00000000000000000000000000000b1c"

// benchPayoutAddress is the buyer's address of the crypto refunds waiting
// for their payout.
const benchPayoutAddress = "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx"

// paymentPage fetches what a payment's dashboard page shows: the payment,
// its refunds and its dispute; it returns how many refunds and disputes.
func paymentPage(ctx context.Context, svc *service.Service, scope checkout.Scope, id string) (int, error) {
	p, err := svc.PaymentIn(ctx, scope, id)
	if err != nil {
		return 0, err
	}
	rs, err := svc.Refunds(ctx, p.ID)
	if err != nil {
		return 0, err
	}
	d, err := svc.DisputeOfPayment(ctx, p.ID)
	if err != nil {
		return 0, err
	}
	if d != nil {
		return len(rs) + 1, nil
	}
	return len(rs), nil
}

// timeCase runs c listWarmup times untimed, then listRuns times timed.
func timeCase(ctx context.Context, c listCase) (listRow, error) {
	row := listRow{List: c.list, Case: c.name}
	var took []time.Duration
	for n := range listWarmup + listRuns {
		began := time.Now()
		items, err := c.run(ctx, n)
		d := time.Since(began)
		if err != nil {
			return row, err
		}
		row.Items = items
		if n >= listWarmup {
			took = append(took, d)
		}
	}
	slices.Sort(took)
	pct := func(p float64) time.Duration {
		return took[min(len(took), max(1, int(math.Ceil(p/100*float64(len(took))))))-1]
	}
	row.P50ms, row.P99ms = ms(pct(50)), ms(pct(99))
	row.Within = pct(99) <= listBudget
	return row, nil
}

// measurePurges purges the oldest day of request logs and of events (with
// their deliveries) as the hourly purge does, with the lists' indexes; then
// puts the indexes back as they were before migration 0011 and purges the
// next day: what the new indexes cost the purge.
func measurePurges(ctx context.Context, t *target, raw *sql.DB, g gen, rep *report) error {
	day := 24 * time.Hour
	purge := func(table, indexes string, before time.Time) error {
		began := time.Now()
		var n int64
		var err error
		if table == "request_logs" {
			n, err = t.db.RequestLogPurge(ctx, before)
		} else {
			n, err = t.db.EventPurge(ctx, before)
		}
		if err != nil {
			return err
		}
		s := time.Since(began).Seconds()
		rep.addPurge(purgeRow{Target: t.name, Table: table, Indexes: indexes, Deleted: n, Seconds: s, RowsPerSec: float64(n) / s})
		return nil
	}
	first, second := g.at(0).Add(day), g.at(0).Add(2*day)
	if err := purge("request_logs", "0019", first); err != nil {
		return err
	}
	if err := purge("events", "0011", first); err != nil {
		return err
	}
	for _, q := range []string{
		`DROP INDEX ` + t.logs + `request_logs_list`, `DROP INDEX ` + t.logs + `request_logs_facet`, `DROP INDEX ` + t.logs + `request_logs_key`,
		`CREATE INDEX ` + t.logs + `request_logs_store ON request_logs (store_id, mode, created_at_ms)`,
		`DROP INDEX events_list`, `DROP INDEX events_type`, `CREATE INDEX events_store ON events (store_id, mode, seq)`,
	} {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	if err := purge("request_logs", "before 0011", second); err != nil {
		return err
	}
	return purge("events", "before 0011", second)
}

// explainLists prints, to stderr, the plan of each list's query with its
// filters as the store writes them (EXPLAIN QUERY PLAN on SQLite, EXPLAIN
// on PostgreSQL): the index each one uses, and that none sorts.
func explainLists(ctx context.Context, dialect, logs string, raw *sql.DB, g gen, stderr io.Writer) error {
	explain := "EXPLAIN QUERY PLAN "
	if dialect == "postgres" {
		explain = "EXPLAIN "
	}
	at, id := g.at(g.n/2).UnixMilli(), g.requestID(g.n/2)
	base := `SELECT request_id FROM ` + logs + `request_logs WHERE store_id = $1 AND mode = 'test' AND `
	order := ` ORDER BY created_at_ms DESC, request_id DESC LIMIT 51`
	evBase := `SELECT id FROM events WHERE store_id = $1 AND mode = 'test' AND `
	evOrder := ` ORDER BY created_at DESC, seq DESC LIMIT 51`
	payBase := `SELECT id FROM payments WHERE store_id = $1 AND mode = 'test' AND `
	payOrder := ` ORDER BY created_at_ms DESC, id DESC LIMIT 51`
	queries := []struct {
		name, q string
		args    []any
	}{
		{"logs", base + `1 = 1` + order, nil},
		{"logs after cursor", base + `created_at_ms <= $2 AND (created_at_ms < $2 OR request_id < $3)` + order, []any{at, id}},
		{"logs facets (one seek)", `SELECT ` + store.RequestLogFacet + ` FROM ` + logs + `request_logs WHERE store_id = $1 AND mode = 'test' AND ` +
			store.RequestLogFacet + ` > $2 ORDER BY ` + store.RequestLogFacet + ` LIMIT 1`, []any{"GET 2"}},
		{"logs facet (5xx of POST create)", base + store.RequestLogFacet + ` = $2` + order, []any{"POST 5 " + service.LogRoutes[0]}},
		{"logs facet (HEAD)", base + store.RequestLogFacet + ` = $2` + order, []any{"HEAD 2 " + service.LogRoutes[1]}},
		{"logs key", base + `api_key_id = $2` + order, []any{g.rare}},
		{"logs dates", base + `created_at_ms >= $2 AND created_at_ms < $3` + order, []any{at, at + 86_400_000}},
		{"logs facet dates", base + store.RequestLogFacet + ` = $2 AND created_at_ms >= $3 AND created_at_ms < $4` + order,
			[]any{"POST 5 " + service.LogRoutes[0], at, at + 86_400_000}},
		{"events", evBase + `1 = 1` + evOrder, nil},
		{"events after cursor", evBase + `created_at <= $2 AND (created_at < $2 OR seq < COALESCE((SELECT e.seq FROM events e WHERE e.id = $3), 0))` + evOrder,
			[]any{at / 1000, g.eventID(g.n / 2)}},
		{"events type", evBase + `type = $2` + evOrder, []any{checkout.EventPaymentDisputeClosed}},
		{"events dates", evBase + `created_at >= $2 AND created_at < $3` + evOrder, []any{at / 1000, at/1000 + 86_400}},
		{"payments after cursor", payBase + `created_at_ms <= $2 AND (created_at_ms < $2 OR id < $3)` + payOrder, []any{at, g.paymentID(g.n / 2)}},
		{"payments status", payBase + `status = $2` + payOrder, []any{"disputed"}},
		{"payments to refund", payBase + `refund_due = 1` + payOrder, nil},
		{"sessions after cursor", `SELECT id FROM sessions WHERE store_id = $1 AND mode = 'test' AND created_at <= $2 AND (created_at < $2 OR id < $3)` +
			` ORDER BY created_at DESC, id DESC LIMIT 51`, []any{at / 1000, g.sessionID(g.n / 2)}},
		{"sessions metadata", `SELECT m.session_id FROM session_metadata m JOIN sessions ON sessions.id = m.session_id WHERE m.store_id = $1 AND m.mode = 'test'` +
			` AND m.key = 'order_id' AND m.value = $2 ORDER BY m.created_at DESC, m.session_id DESC LIMIT 51`, []any{fmt.Sprintf("A-%d", g.n/2)}},
	}
	for _, q := range queries {
		rows, err := raw.QueryContext(ctx, explain+q.q, append([]any{g.store}, q.args...)...)
		if err != nil {
			return fmt.Errorf("explain %s: %w", q.name, err)
		}
		cols, _ := rows.Columns()
		var lines []string
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				rows.Close()
				return err
			}
			lines = append(lines, fmt.Sprint(vals[len(vals)-1]))
		}
		rows.Close()
		fmt.Fprintf(stderr, "bench: %s plan of %s:\n    %s\n", dialect, q.name, strings.Join(lines, "\n    "))
	}
	return nil
}

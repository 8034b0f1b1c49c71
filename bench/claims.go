package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
)

// The claim rows (-claim-history N): the time of the dispatcher's claim
// (store.DB.DeliveryClaim, as the dispatcher calls it: 32 workers, 4 per
// endpoint) on a deliveries table that holds only the deliveries due, then
// with N finished deliveries of the same endpoints kept (30 days of
// history), in the same run; the second over the first is the ratio the
// claim must keep near 1.

const (
	// claimEndpoints each have claimCap deliveries due: every claim takes
	// all of them, as the drain's claims do.
	claimEndpoints = 8
	claimCap       = 4
	// claimCalls bounds how many claims each row times, and claimCallTime
	// how long they take.
	claimCalls    = 1000
	claimCallTime = 3 * time.Second
)

// measureClaims times the claim on the named target without history and
// with cfg.claimHistory finished deliveries loaded, and adds both rows.
func measureClaims(ctx context.Context, cfg *config, name string, stderr io.Writer, rep *report) error {
	t, err := startTarget(ctx, name, cfg, stderr)
	var skip skipError
	if errors.As(err, &skip) {
		rep.addHook(hookRow{Target: name, Op: "claim", Skipped: skip.reason})
		return nil
	}
	if err != nil {
		return fmt.Errorf("start %s: %w", name, err)
	}
	defer t.close()
	t.disp.stop() // the bench claims; nothing is attempted
	now := t.svc.Now()
	eps, err := queueClaimable(ctx, t, now)
	if err != nil {
		return err
	}
	empty, calls, err := timeClaims(ctx, t.db, now)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "bench: %s: loading %d finished deliveries\n", name, cfg.claimHistory)
	began := time.Now()
	if err := loadFinished(ctx, t, eps, cfg.claimHistory, now, stderr); err != nil {
		return err
	}
	loaded := time.Since(began)
	// An hour on, past the first row's leases (each of a millisecond).
	kept, _, err := timeClaims(ctx, t.db, now.Add(time.Hour))
	if err != nil {
		return err
	}
	empty.Target, kept.Target = name, name
	empty.Op, kept.Op = "claim", "claim-history"
	empty.Note = fmt.Sprintf("a claim of %d due (%d endpoints × %d) with no other delivery in the table, timed %d times back to back",
		empty.Deliveries, claimEndpoints, claimCap, calls)
	kept.Note = fmt.Sprintf("the same with %d finished deliveries of those endpoints kept (loaded in %.0fs): p50 %.2f× and p99 %.2f× the empty table's",
		cfg.claimHistory, loaded.Seconds(), kept.P50ms/empty.P50ms, kept.P99ms/empty.P99ms)
	rep.addHook(empty)
	rep.addHook(kept)
	return nil
}

// queueClaimable stores claimEndpoints endpoints of the target's store,
// each with claimCap deliveries due at now, and returns the endpoints.
func queueClaimable(ctx context.Context, t *target, now time.Time) ([]*checkout.Endpoint, error) {
	var eps []*checkout.Endpoint
	err := t.db.InTx(ctx, func(tx checkout.Tx) error {
		for i := range claimEndpoints {
			ep, err := checkout.NewEndpoint(checkout.EndpointParams{MerchantID: t.storeID, Mode: checkout.ModeTest,
				URL: fmt.Sprintf("https://claim%d.example.com/hook", i), Events: []string{checkout.AllEvents}}, now)
			if err != nil {
				return err
			}
			if err := tx.EndpointInsert(ctx, ep); err != nil {
				return err
			}
			eps = append(eps, ep)
		}
		for range claimCap {
			ev, err := checkout.NewEvent(checkout.EventCheckoutCreated, t.storeID, checkout.ModeTest, map[string]string{"object": "checkout_session"}, now)
			if err != nil {
				return err
			}
			if err := tx.EventInsert(ctx, ev); err != nil {
				return err
			}
			for _, ep := range eps {
				if err := tx.DeliveryInsert(ctx, checkout.NewDelivery(ev, ep, now)); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return eps, err
}

// timeClaims claims the due deliveries again and again from from, each claim
// at a clock 2 ms after the one before with a lease of 1 ms, so that every claim
// finds the same deliveries due and takes them all. It returns the claim's
// latency in P50ms and P99ms, the deliveries of a claim in Deliveries and
// claims a second in PerSecond, and the number of claims timed.
func timeClaims(ctx context.Context, db *store.DB, from time.Time) (hookRow, int, error) {
	var lat []time.Duration
	began := time.Now()
	for i := 0; i < claimCalls && time.Since(began) < claimCallTime; i++ {
		at := from.Add(time.Duration(i) * 2 * time.Millisecond)
		start := time.Now()
		cs, err := db.DeliveryClaim(ctx, store.ClaimParams{Owner: fmt.Sprintf("bench-%d", i), Now: at, LeaseUntil: at.Add(time.Millisecond),
			Limit: hookWorkers, PerEndpoint: claimCap})
		lat = append(lat, time.Since(start))
		if err != nil {
			return hookRow{}, 0, err
		}
		if len(cs) != claimEndpoints*claimCap {
			return hookRow{}, 0, fmt.Errorf("a claim took %d deliveries; want the %d due", len(cs), claimEndpoints*claimCap)
		}
	}
	slices.Sort(lat)
	res := &result{latencies: lat, window: time.Since(began)}
	return hookRow{Deliveries: claimEndpoints * claimCap, PerSecond: float64(len(lat)) / time.Since(began).Seconds(),
		P50ms: ms(res.percentile(50)), P99ms: ms(res.percentile(99))}, len(lat), nil
}

// loadFinished stores n succeeded deliveries of the target's store to eps,
// created evenly over the 29 days before now, in chunks of loadChunk rows
// (bulkDialects, as the delivery-list rows load theirs). The claim never
// reads their events, so none is stored.
func loadFinished(ctx context.Context, t *target, eps []*checkout.Endpoint, n int, now time.Time, stderr io.Writer) error {
	raw, err := t.rawOpen()
	if err != nil {
		return err
	}
	defer raw.Close()
	d := bulkDialects[t.name]
	var endpoint strings.Builder
	fmt.Fprintf(&endpoint, "CASE i %% %d", len(eps))
	for k, ep := range eps {
		fmt.Fprintf(&endpoint, " WHEN %d THEN '%s'", k, ep.ID)
	}
	endpoint.WriteString(" END")
	query := d.series + `
		INSERT INTO deliveries (id, event_id, endpoint_id, store_id, mode, status, attempts, next_attempt_at_ms,
			last_status_code, last_error, created_at_ms, updated_at_ms, event_type, resent_as)
		SELECT id, evt, ep, $3, 'test', 'succeeded', 1, created, 200, '', created, created + 1000, 'checkout.created', ''
		FROM (SELECT ` + d.deliveryID + ` AS id, ` + d.eventID + ` AS evt, ` + endpoint.String() + ` AS ep,
				$4 + i * $5 AS created
			FROM n) x`
	span := 29 * 24 * time.Hour
	start := now.Add(-span).UnixMilli()
	step := max(span.Milliseconds()/int64(n), 1)
	for lo := 0; lo < n; lo += loadChunk {
		hi := min(lo+loadChunk, n) - 1
		if _, err := raw.ExecContext(ctx, query, lo, hi, t.storeID, start, step); err != nil {
			return fmt.Errorf("load finished deliveries: %w", err)
		}
	}
	return settleLoad(ctx, t, stderr)
}

// settleLoad does now what the database would do after a bulk load rather
// than during the timed rows that follow it: PostgreSQL's autovacuum and
// its checkpoint, which writes the load's pages out (without it, the claims
// timed right after met that checkpoint: p99s of 1.4 to 6.7 times the
// empty table's in three runs of five, against 0.6 to 0.9 in three runs
// with it); SQLite's checkpoint of the write-ahead log the load filled,
// then a flush of the file. The loader's connections do not flush
// (rawOpen), so without it the load's pages were written out by
// checkoutd's first flush of the file: one claim waited 165 ms for it, and
// the ten after it 6 to 10 ms each. PostgreSQL lets only a superuser or a
// member of pg_checkpoint ask for a checkpoint: for another user the bench
// says so and goes on.
func settleLoad(ctx context.Context, t *target, stderr io.Writer) error {
	raw, err := t.raw()
	if err != nil {
		return err
	}
	defer raw.Close()
	if t.name == "postgres" {
		if _, err := raw.ExecContext(ctx, "VACUUM ANALYZE deliveries"); err != nil {
			return fmt.Errorf("after the load, vacuum: %w", err)
		}
		if _, err := raw.ExecContext(ctx, "CHECKPOINT"); err != nil {
			fmt.Fprintf(stderr, "bench: postgres: no checkpoint after the load (%v): the claims timed next may meet it\n", err)
		}
		return nil
	}
	if _, err := raw.ExecContext(ctx, "PRAGMA main.wal_checkpoint(TRUNCATE)"); err != nil {
		return fmt.Errorf("after the load, checkpoint: %w", err)
	}
	var path string
	if err := raw.QueryRowContext(ctx, `SELECT file FROM pragma_database_list WHERE name = 'main'`).Scan(&path); err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

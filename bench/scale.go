package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

// scaleRow is one line of the scale table: retrieves of random sessions
// among n stored ones, and the database's size.
type scaleRow struct {
	Target   string `json:"target"`
	Sessions int    `json:"sessions"`
	Skipped  string `json:"skipped,omitempty"`
	// FillSeconds is how long storing the sessions took (not a budget: the
	// bench writes them in large transactions, not through the API).
	FillSeconds float64  `json:"fill_seconds"`
	DBBytes     int64    `json:"db_bytes"`
	Requests    int      `json:"requests"`
	Errors      int      `json:"errors"`
	RPS         float64  `json:"rps"`
	P50ms       float64  `json:"p50_ms"`
	P99ms       float64  `json:"p99_ms"`
	VsBare      *float64 `json:"vs_bare,omitempty"`
	FirstError  string   `json:"first_error,omitempty"`
}

// bulkBatch is how many sessions one transaction of the fill writes.
const bulkBatch = 1000

// measureScale measures, for each size of -scale, a fresh checkoutd on the
// named database filled with that many sessions: retrieves of sessions
// picked at random among all of them, and the database's size once filled
// (each size on a database of its own, so that the request logs of one
// row's retrieves do not count in the next row's size).
func measureScale(ctx context.Context, cfg *config, name string, stderr io.Writer, rep *report) error {
	for _, n := range cfg.scale {
		if err := measureScaleAt(ctx, cfg, name, n, stderr, rep); err != nil {
			return err
		}
	}
	return nil
}

func measureScaleAt(ctx context.Context, cfg *config, name string, n int, stderr io.Writer, rep *report) error {
	t, err := startTarget(ctx, name, cfg, stderr)
	var skip skipError
	if errors.As(err, &skip) {
		rep.addScale(scaleRow{Target: name, Sessions: n, Skipped: skip.reason})
		return nil
	}
	if err != nil {
		return fmt.Errorf("start %s: %w", name, err)
	}
	defer t.close()
	m, err := t.svc.Merchant(ctx, t.storeID)
	if err != nil {
		return err
	}
	params, err := checkout.ParseCreateRequest([]byte(createBody))
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "bench: %s: storing %d sessions\n", name, n)
	start := time.Now()
	ids, err := fill(ctx, t, m, params, n)
	if err != nil {
		return fmt.Errorf("store %d sessions: %w", n, err)
	}
	took := time.Since(start)
	size, err := t.size(ctx)
	if err != nil {
		return err
	}
	client := newClient(cfg.concurrency)
	defer client.CloseIdleConnections()
	res, err := runLoad(ctx, client, loadConfig{concurrency: cfg.concurrency, warmup: cfg.warmup, duration: cfg.duration},
		func(int, int) (*http.Request, error) { return t.retrieveRequest(ctx, ids[rand.IntN(len(ids))]) })
	if err != nil {
		return err
	}
	rep.addScale(scaleRow{Target: name, Sessions: len(ids), FillSeconds: took.Seconds(), DBBytes: size,
		Requests: res.requests, Errors: res.failures, RPS: res.rps(), P50ms: ms(res.percentile(50)), P99ms: ms(res.percentile(99)),
		FirstError: res.firstErr})
	return nil
}

// fill stores n sessions of m, each with its checkout.created event as a
// create writes them, and returns their ids. The sessions are created now,
// so none expires during the run.
func fill(ctx context.Context, t *target, m *checkout.Merchant, params *checkout.CreateParams, n int) ([]string, error) {
	ids := make([]string, 0, n)
	// SQLite takes one writer at a time; PostgreSQL gains from a few.
	writers := 1
	if t.name == "postgres" {
		writers = 3
	}
	var mu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	remaining := n
	batches := make(chan int)
	go func() {
		defer close(batches)
		for remaining > 0 {
			b := min(bulkBatch, remaining)
			remaining -= b
			select {
			case batches <- b:
			case <-ctx.Done():
				return
			}
		}
	}()
	for range writers {
		wg.Go(func() {
			for size := range batches {
				batch := make([]string, 0, size)
				err := t.db.InTx(ctx, func(tx checkout.Tx) error {
					batch = batch[:0]
					now := time.Now()
					for range size {
						s := checkout.NewSession(params, m, checkout.ModeTest, now)
						ev, err := checkout.NewEvent(checkout.EventCheckoutCreated, m.ID, s.Mode, s.View(m, checkoutBaseURL), now)
						if err != nil {
							return err
						}
						if err := tx.SessionInsert(ctx, s); err != nil {
							return err
						}
						if err := tx.EventInsert(ctx, ev); err != nil {
							return err
						}
						batch = append(batch, s.ID)
					}
					return nil
				})
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				if err == nil {
					ids = append(ids, batch...)
				}
				mu.Unlock()
				if err != nil {
					for range batches { // drain, so the feeder ends
					}
					return
				}
			}
		})
	}
	wg.Wait()
	return ids, firstErr
}

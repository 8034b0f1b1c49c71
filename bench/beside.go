package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
)

// Bare beside each row: on a shared machine the speed moves during a run
// (bare's rate moved by 20% and more between the start and the end of
// many runs), so a row compared with bare measured minutes before it
// carries that move in its ratio. With -bare-beside (the default) bare is
// measured again right after each API row of another target, the same
// operation for the same time, and the row's vs bare is its rate over the
// mean of bare's measurements just before it and just after it
// (report.ratios). Between the row and bare, checkoutd settles (its
// request logs written, SQLite's write-ahead logs checkpointed): work the
// row left behind would otherwise slow bare and flatter the row.

// beside is the bare handler kept running for the whole run, with its
// own client and pool, to be measured beside the other targets' rows.
type beside struct {
	cfg    *config
	t      *target
	client *http.Client
	ids    []string
}

// startBeside starts the bare handler to measure beside the rows.
func startBeside(ctx context.Context, cfg *config, stderr io.Writer) (*beside, error) {
	t, err := startTarget(ctx, "bare", cfg, stderr)
	if err != nil {
		return nil, fmt.Errorf("start bare to measure beside the rows: %w", err)
	}
	b := &beside{cfg: cfg, t: t, client: newClient(cfg.concurrency)}
	if b.ids, err = createPool(ctx, b.client, t, cfg.pool, cfg.concurrency); err != nil {
		b.close()
		return nil, fmt.Errorf("bare's pool of sessions to retrieve: %w", err)
	}
	return b, nil
}

// measure runs bare's row for op (create or retrieve) as measure runs a
// target's, unprofiled. A failed request fails it: a rate with failures
// would lower every ratio over it.
func (b *beside) measure(ctx context.Context, op string) (*result, error) {
	lc := loadConfig{concurrency: b.cfg.concurrency, warmup: b.cfg.warmup, duration: b.cfg.duration}
	var res *result
	var err error
	if op == "create" {
		res, err = createRow(ctx, b.client, lc, b.t)
	} else {
		res, err = retrieveRow(ctx, b.client, lc, b.t, b.ids)
	}
	if err == nil && res.failures > 0 {
		err = fmt.Errorf("%d of %d requests failed; the first: %s", res.failures, res.requests, res.firstErr)
	}
	return res, err
}

// close stops the bare handler.
func (b *beside) close() error {
	b.client.CloseIdleConnections()
	return b.t.close()
}

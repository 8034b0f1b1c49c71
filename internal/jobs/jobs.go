// Package jobs runs checkoutd's background work: each job is a loop around a
// RunOnce that tests call directly, with the clock injected, instead of
// waiting for the loop.
package jobs

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Job is one kind of background work.
type Job struct {
	Name     string
	Interval time.Duration
	// RunOnce does one round of the work. Several nodes may run it at once:
	// each job is written so that is safe (rows are locked and re-checked).
	RunOnce func(ctx context.Context) error
}

// Run runs every job on its interval until ctx ends, and returns when all
// have stopped. A failed round is logged and retried at the next tick.
func Run(ctx context.Context, log *slog.Logger, jobs ...Job) {
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			loop(ctx, log, j)
		}()
	}
	wg.Wait()
}

func loop(ctx context.Context, log *slog.Logger, j Job) {
	t := time.NewTicker(j.Interval)
	defer t.Stop()
	for {
		if err := j.RunOnce(ctx); err != nil && ctx.Err() == nil {
			log.Error("background job failed", "job", j.Name, "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Package jobs runs checkoutd's background work: each job is a loop around a
// RunOnce that tests call directly, with the clock injected, instead of
// waiting for the loop.
package jobs

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

// Job is one kind of background work.
type Job struct {
	Name     string
	Interval time.Duration
	// RunOnce does one round of the work. Several nodes may run it at once:
	// each job is written so that is safe (rows are locked and re-checked).
	RunOnce func(ctx context.Context) error
	// Counts, when set, counts the job's rounds for metrics.
	Counts *Counts
}

// Counts are a job's rounds since the process started. A round cut short by
// shutdown is not counted.
type Counts struct {
	runs, failures atomic.Int64
	lastSuccess    atomic.Int64 // Unix nanoseconds; 0 before the first
}

func (c *Counts) record(err error, at time.Time) {
	if c == nil {
		return
	}
	c.runs.Add(1)
	if err != nil {
		c.failures.Add(1)
		return
	}
	c.lastSuccess.Store(at.UnixNano())
}

// Runs returns how many rounds ran, failed ones included.
func (c *Counts) Runs() int64 { return c.runs.Load() }

// Failures returns how many rounds failed.
func (c *Counts) Failures() int64 { return c.failures.Load() }

// LastSuccess returns when the last successful round ended; the zero time
// before the first.
func (c *Counts) LastSuccess() time.Time {
	if n := c.lastSuccess.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
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
		err := j.RunOnce(ctx)
		if err != nil && ctx.Err() != nil {
			return // cut short by shutdown: not a failure worth logging
		}
		j.Counts.record(err, time.Now())
		switch {
		case checkout.IsCode(err, checkout.EUnavailable):
			// The database does not answer for now (a failover, a restart):
			// expected, and over by itself; the round runs again next tick.
			log.Warn("background job failed: the database is unavailable; trying again next round", "job", j.Name, "err", err)
		case err != nil:
			log.Error("background job failed", "job", j.Name, "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

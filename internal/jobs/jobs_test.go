package jobs_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/jobs"
	"github.com/checkoutd/checkoutd/internal/logtest"
)

// guard bounds how long a test waits for something that should happen at
// once; it is never what a test waits for.
const guard = 30 * time.Second

// start runs jobs.Run in a goroutine; the returned channel closes when Run
// returns.
func start(ctx context.Context, log *slog.Logger, js ...jobs.Job) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		jobs.Run(ctx, log, js...)
	}()
	return done
}

func wait(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(guard):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// A job runs once at start, without waiting for its first tick, and Run
// returns when the context ends.
func TestRunStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{}, 10)
	done := start(ctx, logtest.Logger(t), jobs.Job{Name: "hourly", Interval: time.Hour, RunOnce: func(context.Context) error {
		ran <- struct{}{}
		return nil
	}})
	select {
	case <-ran:
	case <-time.After(guard):
		t.Fatal("the job did not run at start")
	}
	cancel()
	wait(t, done, "Run to return after cancel")
	if len(ran) != 0 {
		t.Errorf("an hourly job ran %d more times", len(ran))
	}
}

// A job in the middle of a round gets the cancelled context, and Run waits
// for it to return.
func TestRunWaitsForRunningJobs(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	inside := make(chan struct{})
	var finished bool
	done := start(ctx, logtest.Logger(t), jobs.Job{Name: "slow", Interval: time.Hour, RunOnce: func(ctx context.Context) error {
		close(inside)
		<-ctx.Done()
		finished = true
		return ctx.Err()
	}})
	wait(t, inside, "the job to start")
	cancel()
	wait(t, done, "Run to return")
	if !finished {
		t.Errorf("Run returned before its job")
	}
}

// failedRound runs a job named name whose first round fails with err and
// whose second succeeds, and returns what was logged.
func failedRound(t *testing.T, name string, err error) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log, buf := logtest.Capture()
	var calls atomic.Int64
	retried := make(chan struct{})
	done := start(ctx, log, jobs.Job{Name: name, Interval: time.Millisecond, RunOnce: func(context.Context) error {
		switch calls.Add(1) {
		case 1:
			return err
		case 2:
			close(retried)
		}
		return nil
	}})
	wait(t, retried, "the job to run again after failing")
	cancel()
	wait(t, done, "Run to return")
	return buf.String()
}

// A failing round is logged with the job's name and error, and the job runs
// again at its next tick.
func TestRunRetriesFailure(t *testing.T) {
	logged := failedRound(t, "flaky", errors.New("database on fire"))
	for _, want := range []string{"level=ERROR", `msg="background job failed"`, "job=flaky", `err="database on fire"`} {
		if !strings.Contains(logged, want) {
			t.Errorf("log %q lacks %s", logged, want)
		}
	}
	if n := strings.Count(logged, "background job failed"); n != 1 {
		t.Errorf("%d failures logged; want 1", n)
	}
}

// A round that failed because the database does not answer (a failover)
// is logged as a warning: it is over by itself.
func TestRunWarnsDatabaseUnavailable(t *testing.T) {
	logged := failedRound(t, "expire", &checkout.Error{Code: checkout.EUnavailable, Message: "The database is unavailable; try again shortly."})
	if !strings.Contains(logged, "level=WARN") || !strings.Contains(logged, "job=expire") || strings.Contains(logged, "level=ERROR") {
		t.Errorf("log %q; want one warning, no error", logged)
	}
}

// The error of a round cut short by shutdown is not a failure worth
// logging.
func TestRunQuietOnShutdown(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	log, buf := logtest.Capture()
	done := start(ctx, log, jobs.Job{Name: "j", Interval: time.Hour, RunOnce: func(ctx context.Context) error {
		cancel()
		return ctx.Err()
	}})
	wait(t, done, "Run to return")
	if buf.String() != "" {
		t.Errorf("logged %q on shutdown; want nothing", buf)
	}
}

// Jobs run independently: one stuck in a round does not hold up another.
func TestRunJobsIndependently(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	second := make(chan struct{}, 100)
	done := start(ctx, logtest.Logger(t),
		jobs.Job{Name: "stuck", Interval: time.Millisecond, RunOnce: func(ctx context.Context) error {
			<-ctx.Done()
			return nil
		}},
		jobs.Job{Name: "busy", Interval: time.Millisecond, RunOnce: func(context.Context) error {
			select {
			case second <- struct{}{}:
			default:
			}
			return nil
		}},
	)
	for range 3 {
		select {
		case <-second:
		case <-time.After(guard):
			t.Fatal("the second job did not run while the first was stuck")
		}
	}
	cancel()
	wait(t, done, "Run to return")
}

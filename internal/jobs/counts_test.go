package jobs_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/internal/jobs"
	"github.com/checkoutd/checkoutd/internal/logtest"
)

// Counts count rounds and failures and note the last success; a round cut
// short by shutdown counts as neither.
func TestCounts(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	counts := &jobs.Counts{}
	var mu sync.Mutex
	calls := 0
	third := make(chan struct{})
	before := time.Now()
	done := start(ctx, logtest.Logger(t), jobs.Job{Name: "j", Interval: time.Millisecond, Counts: counts, RunOnce: func(ctx context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		calls++
		switch calls {
		case 1:
			return errors.New("first round fails")
		case 3:
			close(third)
			// Shutdown begins during this round, which then fails for it.
			cancel()
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	}})
	wait(t, third, "the third round")
	wait(t, done, "Run to return")
	if counts.Runs() != 2 || counts.Failures() != 1 {
		t.Errorf("Runs, Failures = %d, %d; want 2, 1", counts.Runs(), counts.Failures())
	}
	if last := counts.LastSuccess(); last.Before(before) || last.After(time.Now()) {
		t.Errorf("LastSuccess = %v; want the second round's end", last)
	}
	if (&jobs.Counts{}).LastSuccess() != (time.Time{}) {
		t.Errorf("LastSuccess before any round is not the zero time")
	}
}

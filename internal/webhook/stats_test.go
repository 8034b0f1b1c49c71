package webhook_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
	"github.com/checkoutd/checkoutd/internal/webhook"
)

// Stats counts attempts by outcome, and deliveries that gave up after
// their last attempt.
func TestDispatcherStats(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		ok := e.net.Receiver(t, "hooks.example.com")
		down := e.net.Receiver(t, "down.example.com")
		down.SetHandler(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(503) })
		e.endpoint(ok, checkout.ModeTest)
		e.endpoint(down, checkout.ModeTest)
		if got := e.disp.Stats(); got != (webhook.Stats{Idle: 32}) {
			t.Errorf("Stats before any attempt = %+v; want zero, every worker idle", got)
		}
		e.createSession(checkout.ModeTest)
		if n := e.runOnce(); n != 2 {
			t.Fatalf("RunOnce = %d; want 2", n)
		}
		got := e.disp.Stats()
		if got.AttemptsSucceeded != 1 || got.AttemptsFailed != 1 || got.DeliveriesFailed != 0 || got.InFlight != 0 || got.AttemptSeconds <= 0 {
			t.Errorf("Stats after the first attempts = %+v; want 1 succeeded, 1 failed, none given up", got)
		}
		for _, wait := range checkout.RetrySchedule {
			e.clock.Advance(wait)
			if n := e.runOnce(); n != 1 {
				t.Fatalf("retry: RunOnce = %d; want 1", n)
			}
		}
		got = e.disp.Stats()
		if want := int64(checkout.MaxDeliveryAttempts); got.AttemptsSucceeded != 1 || got.AttemptsFailed != want || got.DeliveriesFailed != 1 {
			t.Errorf("Stats after the last retry = %+v; want 1 succeeded, %d failed, 1 delivery given up", got, want)
		}
		e.clock.Advance(48 * time.Hour)
		if n := e.runOnce(); n != 0 || e.disp.Stats().DeliveriesFailed != 1 {
			t.Errorf("after the end: RunOnce = %d, Stats = %+v", n, e.disp.Stats())
		}
	})
}

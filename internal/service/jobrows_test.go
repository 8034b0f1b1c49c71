package service_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// rowFaults is a store whose transactions fail on chosen rows: locking a
// chosen session or payment fails, as a corrupt row or a lock time-out
// would. How the tests reach the background jobs' handling of one bad row
// with no switch in production code.
type rowFaults struct {
	checkout.Store
	mu  sync.Mutex
	bad map[string]bool // session and payment ids
}

func (s *rowFaults) fail(id string, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bad == nil {
		s.bad = map[string]bool{}
	}
	s.bad[id] = on
}

func (s *rowFaults) isBad(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bad[id]
}

func (s *rowFaults) InTx(ctx context.Context, fn func(checkout.Tx) error) error {
	return s.Store.InTx(ctx, func(tx checkout.Tx) error { return fn(&rowFaultsTx{Tx: tx, s: s}) })
}

type rowFaultsTx struct {
	checkout.Tx
	s *rowFaults
}

var errBadRow = errors.New("row unreadable")

func (tx *rowFaultsTx) SessionGetForUpdate(ctx context.Context, id string) (*checkout.Session, error) {
	if tx.s.isBad(id) {
		return nil, errBadRow
	}
	return tx.Tx.SessionGetForUpdate(ctx, id)
}

// TestJobsCarryOnPastABadRow: one session or payment that cannot be
// handled is logged with its id and counted, and the job handles every
// other row of the round; the round still reports the failure.
func TestJobsCarryOnPastABadRow(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPayFixture(t, db)
		faults := &rowFaults{Store: db}
		svc := service.New(service.Config{
			Store: faults, Now: f.clock.Now, CheckoutBaseURL: "https://pay.example", Logger: f.log,
			Processors: pay.Registry{Test: pay.Processors{Card: f.cards, Crypto: pay.TestNetwork{}, Skins: f.skins}},
		})

		// Expiry: three due sessions, the oldest bad.
		var ids []string
		for range 3 {
			ids = append(ids, f.session(t).ID)
			f.clock.Advance(time.Second)
		}
		faults.fail(ids[0], true)
		f.clock.Advance(time.Hour)
		n, err := svc.ExpireAll(ctx)
		if n != 2 || !errors.Is(err, errBadRow) {
			t.Errorf("ExpireAll with a bad row = %d, %v; want the 2 others expired and the bad row's error", n, err)
		}
		for i, id := range ids {
			want := checkout.StatusExpired
			if i == 0 {
				want = checkout.StatusOpen
			}
			if got := f.reload(t, id).Status; got != want {
				t.Errorf("session %d: %s; want %s", i, got, want)
			}
		}
		f.wantRowFailureLogged(t, "expire-sessions", "session_id", ids[0])
		if got := svc.Stats().RowFailures["expire-sessions"]; got != 1 {
			t.Errorf("row failures of expire-sessions = %d; want 1", got)
		}
		faults.fail(ids[0], false)
		if n, err := svc.ExpireAll(ctx); n != 1 || err != nil {
			t.Errorf("ExpireAll once the row is readable = %d, %v; want it expired", n, err)
		}

		// Payments: two crypto payments due, the first one's session bad.
		var pays []string
		for range 2 {
			s := f.session(t)
			f.quote(t, s.ID, "SOL")
			if _, err := f.svc.SimulateCryptoPayment(ctx, s.ID, "SOL"); err != nil {
				t.Fatal(err)
			}
			pays = append(pays, s.ID)
			f.clock.Advance(time.Second)
		}
		faults.fail(pays[0], true)
		f.clock.Advance(time.Minute)
		n, err = svc.ProcessAllDuePayments(ctx)
		if n != 1 || !errors.Is(err, errBadRow) {
			t.Errorf("ProcessAllDuePayments with a bad row = %d, %v; want the other one and the bad row's error", n, err)
		}
		f.paidOnce(t, pays[1])
		p := f.payments(t, pays[0])[checkout.PaymentProcessing]
		if len(p) != 1 {
			t.Fatalf("the bad row's payment: %v; want processing", f.payments(t, pays[0]))
		}
		f.wantRowFailureLogged(t, "payments", "payment_id", p[0].ID)
		if got := svc.Stats().RowFailures["payments"]; got != 1 {
			t.Errorf("row failures of payments = %d; want 1", got)
		}
		faults.fail(pays[0], false)
		if n, err := svc.ProcessAllDuePayments(ctx); n != 1 || err != nil {
			t.Errorf("ProcessAllDuePayments once the row is readable = %d, %v; want it done", n, err)
		}
		f.paidOnce(t, pays[0])
	})
}

// wantRowFailureLogged checks for an error log of job naming a row.
func (f *payFixture) wantRowFailureLogged(t *testing.T, job, key, id string) {
	t.Helper()
	for l := range strings.Lines(f.logBuf.String()) {
		if strings.Contains(l, "level=ERROR") && strings.Contains(l, "job="+job) && strings.Contains(l, key+"="+id) && strings.Contains(l, errBadRow.Error()) {
			return
		}
	}
	t.Errorf("no error log of %s naming %s=%s; log:\n%s", job, key, id, f.logBuf)
}

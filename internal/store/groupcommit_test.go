package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// batched holds every committer of db in a write of its own, then queues
// writes, waits until they all wait for a committer, and frees one
// committer, which takes them all into one batch. It returns each write's
// error, and whether it panicked.
func batched(t *testing.T, db *store.DB, writes []func(checkout.Tx) error, ctxs []context.Context) (errs []error, panicked []bool) {
	t.Helper()
	n := store.Committers(db)
	if n == 0 {
		t.Fatal("group commit is off")
	}
	release := make([]chan struct{}, n)
	var held sync.WaitGroup
	for i := range n {
		release[i] = make(chan struct{})
		started := make(chan struct{})
		held.Go(func() {
			db.InTx(context.Background(), func(checkout.Tx) error {
				close(started)
				<-release[i]
				return nil
			})
		})
		<-started // one at a time: each committer takes one
	}
	errs, panicked = make([]error, len(writes)), make([]bool, len(writes))
	var wg sync.WaitGroup
	for i, w := range writes {
		ctx := context.Background()
		if ctxs != nil && ctxs[i] != nil {
			ctx = ctxs[i]
		}
		wg.Go(func() {
			defer func() { panicked[i] = recover() != nil }()
			errs[i] = db.InTx(ctx, w)
		})
	}
	deadline := time.Now().Add(10 * time.Second)
	for store.QueuedWrites(db) < len(writes) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d writes queued after 10 s", store.QueuedWrites(db), len(writes))
		}
		time.Sleep(time.Millisecond) // waiting for a condition, not for time
	}
	close(release[0])
	wg.Wait()
	for _, r := range release[1:] {
		close(r)
	}
	held.Wait()
	return errs, panicked
}

// A batch with one failing write and one panicking write commits the
// others in one transaction and fails only those two; each caller hears
// its own outcome, the panic raised again in its own goroutine.
func TestGroupCommitOneFailureFailsOnlyItself(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		boom := errors.New("boom")
		accounts := make([]*checkout.Account, 8)
		writes := make([]func(checkout.Tx) error, len(accounts))
		for i := range accounts {
			accounts[i] = &checkout.Account{ID: checkout.NewAccountID(), Email: fmt.Sprintf("a%d@example.com", i), PasswordHash: "x", CreatedAt: time.Unix(1700000000, 0)}
			writes[i] = func(tx checkout.Tx) error {
				if err := tx.AccountInsert(ctx, accounts[i]); err != nil {
					return err
				}
				switch i {
				case 3:
					return boom // after its insert: rolled back to its savepoint
				case 5:
					panic("write 5 panics")
				}
				return nil
			}
		}
		// A write breaking a unique key: the database's own error.
		first := &checkout.Account{ID: checkout.NewAccountID(), Email: "taken@example.com", PasswordHash: "x", CreatedAt: time.Unix(1700000000, 0)}
		if err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.AccountInsert(ctx, first) }); err != nil {
			t.Fatal(err)
		}
		taken := &checkout.Account{ID: checkout.NewAccountID(), Email: first.Email, PasswordHash: "x", CreatedAt: time.Unix(1700000000, 0)}
		writes = append(writes, func(tx checkout.Tx) error { return tx.AccountInsert(ctx, taken) })

		before := db.Stats()
		errs, panicked := batched(t, db, writes, nil)
		after := db.Stats()
		if after.Batches-before.Batches != 1 || after.Batched-before.Batched != int64(len(writes)) {
			t.Errorf("batches %d, writes batched %d; want 1 batch of %d", after.Batches-before.Batches, after.Batched-before.Batched, len(writes))
		}
		for i, a := range accounts {
			_, err := db.AccountGet(ctx, a.ID)
			switch i {
			case 3:
				if !errors.Is(errs[i], boom) || err == nil {
					t.Errorf("write 3: %v, account read %v; want boom and no account", errs[i], err)
				}
			case 5:
				if !panicked[i] || err == nil {
					t.Errorf("write 5: panicked %v, account read %v; want a panic and no account", panicked[i], err)
				}
			default:
				if errs[i] != nil || panicked[i] || err != nil {
					t.Errorf("write %d: %v (panicked %v), account read %v; want it committed", i, errs[i], panicked[i], err)
				}
			}
		}
		if err := errs[len(errs)-1]; !checkout.IsCode(err, checkout.EConflict) {
			t.Errorf("write of a taken email = %v; want a conflict", err)
		}
	})
}

// A batch runs without savepoints, each write once; one with a failing write
// runs again with them (the failing write and those before it in the batch
// twice, those after it once) and commits the others; the next batch starts with savepoints, and after
// a batch without failure they are off again.
func TestGroupCommitSavepointsOnlyAfterAFailure(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		boom := errors.New("boom")
		n := 0
		batch := func(fail int) (runs []int, committed []bool, errs []error, savepointed int64) {
			t.Helper()
			runs = make([]int, 6)
			accounts := make([]*checkout.Account, 6)
			writes := make([]func(checkout.Tx) error, 6)
			for i := range writes {
				n++
				accounts[i] = &checkout.Account{ID: checkout.NewAccountID(), Email: fmt.Sprintf("s%d@example.com", n), PasswordHash: "x", CreatedAt: time.Unix(1700000000, 0)}
				writes[i] = func(tx checkout.Tx) error {
					runs[i]++ // one committer runs a batch's writes one at a time
					if err := tx.AccountInsert(ctx, accounts[i]); err != nil {
						return err
					}
					if i == fail {
						return boom
					}
					return nil
				}
			}
			before := db.Stats().Savepointed
			errs, _ = batched(t, db, writes, nil)
			for _, a := range accounts {
				_, err := db.AccountGet(ctx, a.ID)
				committed = append(committed, err == nil)
			}
			return runs, committed, errs, db.Stats().Savepointed - before
		}
		check := func(name string, fail int, wantSavepointed int64) {
			t.Helper()
			runs, committed, errs, savepointed := batch(fail)
			for i, r := range runs {
				// The batch's order is the queue's, which the test does not
				// choose: a write before the failing one ran twice.
				if fail < 0 && r != 1 || i == fail && r != 2 || r < 1 || r > 2 {
					t.Errorf("%s: runs %v; want each write once, or the failing one (%d) twice and the others once or twice", name, runs, fail)
					break
				}
			}
			if savepointed != wantSavepointed {
				t.Errorf("%s: %d batches with savepoints; want %d", name, savepointed, wantSavepointed)
			}
			for i := range committed {
				if want := i != fail; committed[i] != want || (errs[i] == nil) != want {
					t.Errorf("%s: write %d committed %v, answered %v; want committed %v", name, i, committed[i], errs[i], want)
				}
			}
		}
		check("a batch without failure", -1, 0)
		check("a batch with write 2 failing", 2, 1)
		check("the batch after it", -1, 1)
		check("the next", -1, 0)
	})
}

// A write rolled back to its savepoint frees the locks it took, those of
// the endpoints it listed among them: the next write of the batch lists
// them again (and locks them) rather than use the list the transaction
// kept.
func TestGroupCommitRollbackDropsTheEndpointsKept(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		m, err := checkout.NewMerchant(checkout.MerchantParams{Name: "Acme", Currency: "USD"}, time.Unix(1700000000, 0))
		if err != nil {
			t.Fatal(err)
		}
		if err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.MerchantInsert(ctx, m) }); err != nil {
			t.Fatal(err)
		}
		boom := errors.New("boom")
		failer := -1 // the write that runs first lists the endpoints and fails
		var kept []bool
		writes := make([]func(checkout.Tx) error, 2)
		for i := range writes {
			writes[i] = func(tx checkout.Tx) error {
				if failer < 0 {
					failer = i
				}
				if i != failer {
					kept = append(kept, store.EndpointsKept(tx))
				}
				if _, err := tx.EndpointListEnabled(ctx, m.ID, checkout.ModeTest); err != nil {
					return err
				}
				if i == failer {
					return boom
				}
				return nil
			}
		}
		errs, _ := batched(t, db, writes, nil)
		if !errors.Is(errs[failer], boom) || errs[1-failer] != nil {
			t.Fatalf("writes answered %v; want boom for write %d alone", errs, failer)
		}
		if !slices.Equal(kept, []bool{false}) {
			t.Errorf("the endpoints kept when the other write began (its one run, after the failing one's rollback): %v; want [false]", kept)
		}
	})
}

// A write whose context ended while it waited for a committer is answered
// with that, and writes nothing; a write that lost a race with another
// transaction (a PostgreSQL serialization failure, injected) runs again
// alone after its batch and succeeds.
func TestGroupCommitCanceledAndRetried(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		newAccount := func(i int) *checkout.Account {
			return &checkout.Account{ID: checkout.NewAccountID(), Email: fmt.Sprintf("r%d@example.com", i), PasswordHash: "x", CreatedAt: time.Unix(1700000000, 0)}
		}
		canceled, retried, plain := newAccount(0), newAccount(1), newAccount(2)
		cctx, cancel := context.WithCancel(ctx)
		runs := 0
		writes := []func(checkout.Tx) error{
			func(tx checkout.Tx) error { return tx.AccountInsert(ctx, canceled) },
			func(tx checkout.Tx) error {
				runs++
				if err := tx.AccountInsert(ctx, retried); err != nil {
					return err
				}
				if runs == 1 && db.Dialect() == "postgres" {
					return fmt.Errorf("insert: %w", &pgconn.PgError{Code: "40001", Message: "could not serialize access"})
				}
				return nil
			},
			func(tx checkout.Tx) error { return tx.AccountInsert(ctx, plain) },
		}
		cancel() // before a committer takes it: InTx refuses at once
		errs, _ := batched(t, db, writes[1:], nil)
		if err := db.InTx(cctx, writes[0]); !errors.Is(err, context.Canceled) {
			t.Errorf("write with an ended context = %v; want context.Canceled", err)
		}
		if _, err := db.AccountGet(ctx, canceled.ID); !checkout.IsCode(err, checkout.ENotFound) {
			t.Errorf("the canceled write's account: %v; want not found", err)
		}
		for i, a := range []*checkout.Account{retried, plain} {
			if _, err := db.AccountGet(ctx, a.ID); errs[i] != nil || err != nil {
				t.Errorf("write %d: %v, account read %v; want it committed", i, errs[i], err)
			}
		}
		if want := map[string]int{"sqlite": 1, "postgres": 2}[db.Dialect()]; runs != want {
			t.Errorf("the racing write ran %d times; want %d", runs, want)
		}
	})
}

// An urgent write (the dispatcher's claim) queued behind ordinary writes
// runs first, in a batch of its own, when a committer comes free.
func TestGroupCommitUrgentGoesFirst(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		n := store.Committers(db)
		release := make([]chan struct{}, n)
		var held sync.WaitGroup
		for i := range n {
			release[i] = make(chan struct{})
			started := make(chan struct{})
			held.Go(func() {
				db.InTx(ctx, func(checkout.Tx) error {
					close(started)
					<-release[i]
					return nil
				})
			})
			<-started
		}
		var mu sync.Mutex
		var order []string
		ran := func(name string) func(checkout.Tx) error {
			return func(checkout.Tx) error {
				mu.Lock()
				defer mu.Unlock()
				order = append(order, name)
				return nil
			}
		}
		var wg sync.WaitGroup
		const ordinary = 5
		for i := range ordinary {
			wg.Go(func() { db.InTx(ctx, ran(fmt.Sprint("write ", i))) })
		}
		waitQueued := func(cond func() bool) {
			deadline := time.Now().Add(10 * time.Second)
			for !cond() {
				if time.Now().After(deadline) {
					t.Fatal("writes not queued after 10 s")
				}
				time.Sleep(time.Millisecond) // waiting for a condition
			}
		}
		waitQueued(func() bool { return store.QueuedWrites(db) == ordinary })
		before := db.Stats()
		wg.Go(func() { store.InTxUrgent(db, ctx, ran("urgent")) })
		waitQueued(func() bool { return store.QueuedUrgent(db) == 1 })
		close(release[0])
		wg.Wait()
		for _, r := range release[1:] {
			close(r)
		}
		held.Wait()
		if len(order) != ordinary+1 || order[0] != "urgent" {
			t.Errorf("order = %v; want the urgent write first", order)
		}
		// The urgent write alone, then the five together: one batch.
		if after := db.Stats(); after.Batches-before.Batches != 1 || after.Batched-before.Batched != ordinary {
			t.Errorf("batches %d of %d writes; want the urgent write alone and one batch of %d", after.Batches-before.Batches, after.Batched-before.Batched, ordinary)
		}
	})
}

// combinedFixture is a store with an endpoint, and a write per session that
// inserts it, its event and the event's delivery, as a create does.
type combinedFixture struct {
	m        *checkout.Merchant
	ep       *checkout.Endpoint
	sessions []*checkout.Session
	events   []*checkout.Event
}

func newCombinedFixture(t *testing.T, db *store.DB, n int) *combinedFixture {
	t.Helper()
	ctx := context.Background()
	m, ep := newMerchantEndpoint(t, time.Unix(1700000000, 0))
	err := db.InTx(ctx, func(tx checkout.Tx) error {
		if err := tx.MerchantInsert(ctx, m); err != nil {
			return err
		}
		return tx.EndpointInsert(ctx, ep)
	})
	if err != nil {
		t.Fatal(err)
	}
	f := &combinedFixture{m: m, ep: ep}
	for range n {
		f.add(t)
	}
	return f
}

// newMerchantEndpoint returns a store and an endpoint of its test mode that
// takes every event, made at, not stored.
func newMerchantEndpoint(t *testing.T, at time.Time) (*checkout.Merchant, *checkout.Endpoint) {
	t.Helper()
	m, err := checkout.NewMerchant(checkout.MerchantParams{Name: "Acme", Currency: "USD"}, at)
	if err != nil {
		t.Fatal(err)
	}
	ep, err := checkout.NewEndpoint(checkout.EndpointParams{MerchantID: m.ID, Mode: checkout.ModeTest,
		URL: "https://hooks.example.com/", Events: []string{checkout.AllEvents}}, at)
	if err != nil {
		t.Fatal(err)
	}
	return m, ep
}

// add makes one more session and its event.
func (f *combinedFixture) add(t *testing.T) int {
	t.Helper()
	now := time.Unix(1700000000, 0)
	s := &checkout.Session{ID: checkout.NewSessionID(), MerchantID: f.m.ID, Mode: checkout.ModeTest, Status: checkout.StatusOpen,
		Title: "Order", Currency: "USD", Amount: 1500, TotalAmount: 1500, Items: []checkout.Item{{Name: "Sword", Amount: 1500, Quantity: 1}},
		Metadata: map[string]string{}, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	e, err := checkout.NewEvent(checkout.EventCheckoutCreated, f.m.ID, checkout.ModeTest, map[string]string{"id": s.ID}, now)
	if err != nil {
		t.Fatal(err)
	}
	f.sessions, f.events = append(f.sessions, s), append(f.events, e)
	return len(f.sessions) - 1
}

// create is write i's work: the session, its event and its delivery.
func (f *combinedFixture) create(ctx context.Context, tx checkout.Tx, i int) error {
	if err := tx.SessionInsert(ctx, f.sessions[i]); err != nil {
		return err
	}
	if err := tx.EventInsert(ctx, f.events[i]); err != nil {
		return err
	}
	eps, err := tx.EndpointListEnabled(ctx, f.m.ID, checkout.ModeTest)
	if err != nil {
		return err
	}
	for _, ep := range eps {
		if err := tx.DeliveryInsert(ctx, checkout.NewDelivery(f.events[i], ep, f.events[i].CreatedAt)); err != nil {
			return err
		}
	}
	return nil
}

// committed tells whether session i, its event and its delivery are stored.
func (f *combinedFixture) committed(t *testing.T, db *store.DB, i int) bool {
	t.Helper()
	ctx := context.Background()
	_, serr := db.SessionGet(ctx, f.sessions[i].ID)
	evs, err := db.EventList(ctx, checkout.EventListParams{MerchantID: f.m.ID, Mode: checkout.ModeTest, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := db.DeliveryList(ctx, checkout.DeliveryListParams{EndpointID: f.ep.ID, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	event := slices.ContainsFunc(evs, func(e *checkout.Event) bool { return e.ID == f.events[i].ID })
	delivery := slices.ContainsFunc(ds, func(d *checkout.Delivery) bool { return d.EventID == f.events[i].ID })
	if (serr == nil) != event || event != delivery {
		t.Errorf("write %d half stored: session %v, event %v, delivery %v", i, serr, event, delivery)
	}
	return serr == nil
}

// A batch of creates writes its sessions, events and deliveries in a
// statement per table, not one per row; a write that reads a table after
// inserting into it reads its own row; the events keep the writes' order.
func TestGroupCommitCombinesInserts(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		const n = 12
		f := newCombinedFixture(t, db, n)
		var order []string // the events in the order their writes ran
		writes := make([]func(checkout.Tx) error, n)
		for i := range writes {
			writes[i] = func(tx checkout.Tx) error {
				order = append(order, f.events[i].ID)
				if err := f.create(ctx, tx, i); err != nil {
					return err
				}
				if i == 0 { // reads its own session back, inside the batch
					s, err := tx.SessionGetForUpdate(ctx, f.sessions[i].ID)
					if err != nil {
						return fmt.Errorf("read back: %w", err)
					}
					if s.ID != f.sessions[i].ID {
						return fmt.Errorf("read back %s", s.ID)
					}
				}
				return nil
			}
		}
		before := store.CombinedStatements(db)
		errs, _ := batched(t, db, writes, nil)
		for i, err := range errs {
			if err != nil {
				t.Errorf("write %d: %v", i, err)
			}
			if !f.committed(t, db, i) {
				t.Errorf("write %d not committed", i)
			}
		}
		// Three tables, written at most twice each (before write 0's read,
		// and at the commit): far fewer statements than the 36 rows.
		if got := store.CombinedStatements(db) - before; got < 3 || got > 6 {
			t.Errorf("%d combined statements for %d writes; want 3 to 6", got, n)
		}
		evs, err := db.EventList(ctx, checkout.EventListParams{MerchantID: f.m.ID, Mode: checkout.ModeTest, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		var stored []string
		for _, e := range slices.Backward(evs) { // newest first: the last write's event first
			stored = append(stored, e.ID)
		}
		if !slices.Equal(stored, order) {
			t.Errorf("events stored in the order\n%v\nwant the writes' order\n%v", stored, order)
		}

		// A batch that inserts into one of the tables only.
		writes = writes[:0]
		for range 3 {
			i := f.add(t)
			writes = append(writes, func(tx checkout.Tx) error { return tx.SessionInsert(ctx, f.sessions[i]) })
		}
		before = store.CombinedStatements(db)
		errs, _ = batched(t, db, writes, nil)
		if slices.ContainsFunc(errs, func(err error) bool { return err != nil }) {
			t.Errorf("sessions alone: %v", errs)
		}
		if got := store.CombinedStatements(db) - before; got != 1 {
			t.Errorf("%d combined statements for 3 sessions; want 1", got)
		}

		// A write alone combines its own: three tables, three statements.
		i := f.add(t)
		before = store.CombinedStatements(db)
		if err := db.InTx(ctx, func(tx checkout.Tx) error { return f.create(ctx, tx, i) }); err != nil {
			t.Fatal(err)
		}
		if got := store.CombinedStatements(db) - before; got != 3 || !f.committed(t, db, i) {
			t.Errorf("a write alone: %d combined statements, committed %v; want 3, committed", got, f.committed(t, db, i))
		}
	})
}

// A combined insert that breaks a constraint fails the write whose row
// broke it, and only that write, whichever write's statement ran it: the
// batch runs again with savepoints. A write that reads after it and drops
// the read's error does not commit the batch without the other writes'
// rows (on SQLite a failed statement rolls back alone and the transaction
// goes on).
func TestGroupCommitCombinedInsertFailsOnlyItsWrite(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		const n = 8
		f := newCombinedFixture(t, db, n)
		// Session 0 is stored first: write dup inserts it again.
		if err := db.InTx(ctx, func(tx checkout.Tx) error { return f.create(ctx, tx, 0) }); err != nil {
			t.Fatal(err)
		}
		dup := f.add(t)
		f.sessions[dup] = f.sessions[0]
		writes := make([]func(checkout.Tx) error, 0, n)
		for i := 1; i < n; i++ {
			writes = append(writes, func(tx checkout.Tx) error {
				if err := f.create(ctx, tx, i); err != nil {
					return err
				}
				if i%2 == 0 {
					tx.SessionGetForUpdate(ctx, f.sessions[i].ID) // its error dropped
				}
				return nil
			})
		}
		writes = append(writes, func(tx checkout.Tx) error { return f.create(ctx, tx, dup) })
		before := db.Stats().Savepointed
		errs, _ := batched(t, db, writes, nil)
		for w, err := range errs[:len(errs)-1] {
			i := w + 1
			if err != nil {
				t.Errorf("write %d: %v", i, err)
			}
			if !f.committed(t, db, i) {
				t.Errorf("write %d answered %v but not committed", i, err)
			}
		}
		if err := errs[len(errs)-1]; !checkout.IsCode(err, checkout.EConflict) {
			t.Errorf("the write of a stored session = %v; want a conflict", err)
		}
		if evs, err := db.EventList(ctx, checkout.EventListParams{MerchantID: f.m.ID, Mode: checkout.ModeTest, Limit: 1000}); err != nil ||
			slices.ContainsFunc(evs, func(e *checkout.Event) bool { return e.ID == f.events[dup].ID }) {
			t.Errorf("the failing write's event stored (%v)", err)
		}
		if got := db.Stats().Savepointed - before; got != 1 {
			t.Errorf("%d batches with savepoints; want 1", got)
		}
		// The next batch starts with savepoints, then combining returns.
		writes = writes[:0]
		for range 2 {
			for range 3 {
				i := f.add(t)
				writes = append(writes, func(tx checkout.Tx) error { return f.create(ctx, tx, i) })
			}
			if errs, _ := batched(t, db, writes, nil); slices.ContainsFunc(errs, func(err error) bool { return err != nil }) {
				t.Fatalf("later batch: %v", errs)
			}
			writes = writes[:0]
		}
		before = store.CombinedStatements(db)
		for range 3 {
			i := f.add(t)
			writes = append(writes, func(tx checkout.Tx) error { return f.create(ctx, tx, i) })
		}
		batched(t, db, writes, nil)
		if store.CombinedStatements(db) == before {
			t.Error("no combined insert after a batch without failure")
		}
	})
}

// A write alone that breaks a constraint fails with the database's error,
// even when it read after the insert and dropped the read's error, and
// nothing of it is written.
func TestCombinedInsertAloneFails(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newCombinedFixture(t, db, 1)
		if err := db.InTx(ctx, func(tx checkout.Tx) error { return f.create(ctx, tx, 0) }); err != nil {
			t.Fatal(err)
		}
		for _, read := range []bool{false, true} {
			dup := f.add(t)
			f.sessions[dup] = f.sessions[0]
			err := db.InTx(ctx, func(tx checkout.Tx) error {
				if err := f.create(ctx, tx, dup); err != nil {
					return err
				}
				if read {
					tx.SessionGetForUpdate(ctx, f.sessions[0].ID) // its error dropped
				}
				return nil
			})
			if !checkout.IsCode(err, checkout.EConflict) {
				t.Errorf("write of a stored session (read after: %v) = %v; want a conflict", read, err)
			}
			evs, err := db.EventList(ctx, checkout.EventListParams{MerchantID: f.m.ID, Mode: checkout.ModeTest, Limit: 1000})
			if err != nil {
				t.Fatal(err)
			}
			if slices.ContainsFunc(evs, func(e *checkout.Event) bool { return e.ID == f.events[dup].ID }) {
				t.Errorf("the failing write's event was stored (read after: %v)", read)
			}
		}
	})
}

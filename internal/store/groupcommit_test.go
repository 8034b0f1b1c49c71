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

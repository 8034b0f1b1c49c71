package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// readFixture opens a store whose reads of sessions are batched (as
// PostgreSQL's are; on SQLite, a file not served, so not cached) with n
// sessions of one store, and a pool to change rows behind its back.
func readFixture(t *testing.T, name string, n int) (*store.DB, *sql.DB, []*checkout.Session) {
	t.Helper()
	ctx := context.Background()
	db, raw := openRaw(t, name)
	store.StartReaders(db, 2)
	m, _ := newMerchantEndpoint(t, time.Now())
	sessions := make([]*checkout.Session, n)
	now := time.Now().Truncate(time.Second)
	for i := range sessions {
		sessions[i] = &checkout.Session{
			ID: checkout.NewSessionID(), MerchantID: m.ID, Mode: checkout.ModeTest, Status: checkout.StatusOpen,
			Title: "Order " + string(rune('A'+i)), Currency: "USD", Amount: int64(100 * (i + 1)), TotalAmount: int64(100 * (i + 1)),
			Items:     []checkout.Item{{Name: "Sword", Amount: int64(100 * (i + 1)), Quantity: 1}},
			Metadata:  map[string]string{"order": string(rune('A' + i))},
			CreatedAt: now, ExpiresAt: now.Add(time.Hour),
		}
	}
	err := db.InTx(ctx, func(tx checkout.Tx) error {
		if err := tx.MerchantInsert(ctx, m); err != nil {
			return err
		}
		for _, s := range sessions {
			if err := tx.SessionInsert(ctx, s); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return db, raw, sessions
}

// readsHeld is a store's readers, each held in a read of its own until
// release.
type readsHeld struct {
	release func()
	wg      sync.WaitGroup
	mu      sync.Mutex
	sizes   []int // the reads of each batch run after the held ones
}

// holdReaders holds every reader of db in a read of held, so that the
// reads after queue.
func holdReaders(t *testing.T, db *store.DB, held string) *readsHeld {
	t.Helper()
	n := store.StartReaders(db, 2)
	h := &readsHeld{}
	release := make(chan struct{})
	h.release = sync.OnceFunc(func() { close(release) })
	t.Cleanup(h.release)
	var calls atomic.Int32
	waiting := make(chan struct{}, n)
	store.SetReadHook(db, func(reads int) {
		if calls.Add(1) <= int32(n) {
			waiting <- struct{}{}
			<-release
			return
		}
		h.mu.Lock()
		h.sizes = append(h.sizes, reads)
		h.mu.Unlock()
	})
	for range n {
		h.wg.Go(func() { db.SessionGet(context.Background(), held) })
		<-waiting // one at a time: each reader takes one
	}
	return h
}

// queued waits until n reads wait for a reader.
func queued(t *testing.T, db *store.DB, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for store.QueuedReads(db) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d reads queued after 10 s", store.QueuedReads(db), n)
		}
		time.Sleep(time.Millisecond) // waiting for a condition, not for time
	}
}

type readOutcome struct {
	s   *checkout.Session
	err error
}

// readTogether queues a read of each id while the readers are held, then
// releases them, and returns each read's outcome.
func readTogether(t *testing.T, db *store.DB, h *readsHeld, ids []string) []readOutcome {
	t.Helper()
	out := make([]readOutcome, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() {
			s, err := db.SessionGet(context.Background(), id)
			out[i] = readOutcome{s, err}
		})
	}
	queued(t, db, len(ids))
	h.release()
	wg.Wait()
	h.wg.Wait()
	return out
}

// Reads queued together are answered by shared statements, each with its
// own session: an unknown id is checkout_not_found alone, and two reads of
// one id get copies that share nothing.
func TestBatchedReads(t *testing.T) {
	for _, name := range storetest.Databases {
		t.Run(name, func(t *testing.T) {
			db, _, ss := readFixture(t, name, 6)
			h := holdReaders(t, db, ss[5].ID)
			before := db.Stats()
			unknown := checkout.NewSessionID()
			ids := []string{ss[0].ID, ss[1].ID, ss[2].ID, unknown, ss[3].ID, ss[0].ID, ss[4].ID}
			out := readTogether(t, db, h, ids)
			for i, o := range out {
				if ids[i] == unknown {
					if !checkout.IsCode(o.err, checkout.ECheckoutNotFound) {
						t.Errorf("read of an unknown id = %v, %v; want checkout_not_found", o.s, o.err)
					}
					continue
				}
				if o.err != nil {
					t.Fatalf("read %d (%s) = %v", i, ids[i], o.err)
				}
				var want *checkout.Session
				for _, s := range ss {
					if s.ID == ids[i] {
						want = s
					}
				}
				if o.s.ID != want.ID || o.s.Title != want.Title || o.s.TotalAmount != want.TotalAmount ||
					o.s.Items[0].Amount != want.Items[0].Amount || o.s.Metadata["order"] != want.Metadata["order"] {
					t.Errorf("read %d = %+v; want %+v", i, o.s, want)
				}
			}
			a, b := out[0].s, out[5].s
			if a == b {
				t.Fatal("two reads of one id got the same session; want a copy each")
			}
			a.Items[0].Name, a.Metadata["order"], a.Title = "changed", "changed", "changed"
			if b.Items[0].Name != "Sword" || b.Metadata["order"] != "A" || b.Title != ss[0].Title {
				t.Errorf("changing one read's session changed the other's: %+v", b)
			}
			after := db.Stats()
			batched := 0
			for _, n := range h.sizes {
				batched += n
			}
			if after.ReadBatches-before.ReadBatches < 1 || batched != len(ids) {
				t.Errorf("batches %v, stats %d batches of %d reads; want the %d reads in shared statements",
					h.sizes, after.ReadBatches-before.ReadBatches, after.ReadBatched-before.ReadBatched, len(ids))
			}
		})
	}
}

// A row that cannot be read fails only the read that asked for it; the
// others of its batch are answered.
func TestBatchedReadUnreadableRowFailsAlone(t *testing.T) {
	for _, name := range storetest.Databases {
		t.Run(name, func(t *testing.T) {
			db, raw, ss := readFixture(t, name, 5)
			if _, err := raw.Exec(`UPDATE sessions SET items = 'not json' WHERE id = $1`, ss[2].ID); err != nil {
				t.Fatal(err)
			}
			h := holdReaders(t, db, ss[4].ID)
			ids := []string{ss[0].ID, ss[1].ID, ss[2].ID, ss[3].ID}
			out := readTogether(t, db, h, ids)
			for i, o := range out {
				switch {
				case i == 2 && (o.err == nil || checkout.IsCode(o.err, checkout.ECheckoutNotFound)):
					t.Errorf("read of the unreadable row = %v, %v; want an error", o.s, o.err)
				case i != 2 && (o.err != nil || o.s.ID != ids[i]):
					t.Errorf("read %d = %v, %v; want its session", i, o.s, o.err)
				}
			}
		})
	}
}

// A read waits for its batch no longer than its caller's context: the
// caller is answered at once, and the readers carry on.
func TestBatchedReadCallerLeaves(t *testing.T) {
	for _, name := range storetest.Databases {
		t.Run(name, func(t *testing.T) {
			db, _, ss := readFixture(t, name, 2)
			h := holdReaders(t, db, ss[1].ID)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				_, err := db.SessionGet(ctx, ss[0].ID)
				done <- err
			}()
			queued(t, db, 1)
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("read whose caller left = %v; want its context's error", err)
			}
			h.release()
			h.wg.Wait()
			if s, err := db.SessionGet(context.Background(), ss[0].ID); err != nil || s.ID != ss[0].ID {
				t.Errorf("read after = %v, %v; want the session", s, err)
			}
		})
	}
}

// A session committed before a read began is in its answer, however the
// reads are batched: writers and readers side by side, each read after a
// write returned sees that write or a later one.
func TestBatchedReadSeesWhatCommittedBefore(t *testing.T) {
	for _, name := range storetest.Databases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			db, _, ss := readFixture(t, name, 4)
			var wg sync.WaitGroup
			stop := make(chan struct{})
			for i := range 4 { // background readers keep the readers busy, so reads queue
				wg.Go(func() {
					for {
						select {
						case <-stop:
							return
						default:
						}
						db.SessionGet(ctx, ss[i].ID)
					}
				})
			}
			for i := range 100 {
				s := ss[i%len(ss)]
				active := fmt.Sprintf("pay_%d", i)
				err := db.InTx(ctx, func(tx checkout.Tx) error {
					cur, err := tx.SessionGetForUpdate(ctx, s.ID)
					if err != nil {
						return err
					}
					cur.ActivePaymentID = &active
					return tx.SessionUpdate(ctx, cur)
				})
				if err != nil {
					t.Fatal(err)
				}
				got, err := db.SessionGet(ctx, s.ID)
				if err != nil || got.ActivePaymentID == nil || *got.ActivePaymentID != active {
					t.Fatalf("read after write %d = %v, %v; want active payment %s", i, got, err, active)
				}
			}
			close(stop)
			wg.Wait()
			if db.Stats().ReadBatches == 0 {
				t.Log("no read was batched in this run") // correctness is what is checked; batching is TestBatchedReads'
			}
		})
	}
}

// Closing the store answers every read queued: with its session, or with
// service_unavailable when no reader took it.
func TestBatchedReadClose(t *testing.T) {
	for _, name := range storetest.Databases {
		t.Run(name, func(t *testing.T) {
			db, _, ss := readFixture(t, name, 3)
			h := holdReaders(t, db, ss[2].ID)
			out := make([]readOutcome, 2)
			var wg sync.WaitGroup
			for i := range out {
				wg.Go(func() {
					s, err := db.SessionGet(context.Background(), ss[i].ID)
					out[i] = readOutcome{s, err}
				})
			}
			queued(t, db, len(out))
			closed := make(chan error, 1)
			go func() { closed <- db.Close() }()
			h.release()
			wg.Wait()
			h.wg.Wait()
			if err := <-closed; err != nil {
				t.Errorf("Close = %v", err)
			}
			for i, o := range out {
				if o.err != nil && !checkout.IsCode(o.err, checkout.EUnavailable) {
					t.Errorf("read %d while closing = %v; want its session or service_unavailable", i, o.err)
				}
				if o.err == nil && o.s.ID != ss[i].ID {
					t.Errorf("read %d while closing = %s; want %s", i, o.s.ID, ss[i].ID)
				}
			}
		})
	}
}

// A read whose caller left before a reader took it is not run, and a
// statement whose callers have all left is canceled: a read stuck behind a
// lock (or a broken connection) holds its reader no longer than its callers
// wait. PostgreSQL only: a lock there blocks a read, as none does on SQLite.
func TestBatchedReadStopsWhenItsCallersLeave(t *testing.T) {
	ctx := context.Background()
	db, raw, ss := readFixture(t, "postgres", 3)

	// Left before a reader took them: not run.
	h := holdReaders(t, db, ss[2].ID)
	before := db.Stats()
	gone, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() {
			if _, err := db.SessionGet(gone, ss[i].ID); !errors.Is(err, context.Canceled) {
				t.Errorf("read whose caller left = %v; want its context's error", err)
			}
		})
	}
	queued(t, db, 2)
	cancel()
	wg.Wait()
	h.release()
	h.wg.Wait()
	// Each caller's leaving counts once; a statement run for them would
	// count a batch, and its cancellation once more.
	if s := db.Stats(); s.ReadBatches != before.ReadBatches || s.Canceled != before.Canceled+2 {
		t.Errorf("%d batches, %d canceled after two reads whose callers left; want 0 and 2 (no statement run for them)",
			s.ReadBatches-before.ReadBatches, s.Canceled-before.Canceled)
	}

	// Stuck behind a lock when its caller leaves: canceled, not left to
	// ReadBatchTimeout (30 s).
	tx, err := raw.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `LOCK TABLE sessions IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	leaving, leave := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := db.SessionGet(leaving, ss[0].ID)
		done <- err
	}()
	blocked := func() int {
		var n int
		err := raw.QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_stat_activity
			WHERE wait_event_type = 'Lock' AND query LIKE '%FROM sessions WHERE id%' AND pid <> pg_backend_pid()`).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	waitFor(t, "the read to wait for the lock", func() bool { return blocked() > 0 })
	leave()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("read whose caller left = %v; want its context's error", err)
	}
	waitFor(t, "the statement to be canceled", func() bool { return blocked() == 0 })
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if s, err := db.SessionGet(ctx, ss[1].ID); err != nil || s.ID != ss[1].ID {
		t.Errorf("read after = %v, %v; want the session", s, err)
	}
}

// waitFor waits until cond holds, for at most 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10 s for %s", what)
		}
		time.Sleep(time.Millisecond) // waiting for a condition, not for time
	}
}

package store_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/sqlite"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// cacheFixture is a SQLite store opened as serve opens it (sessions
// cached), with a store of its own.
func cacheFixture(t *testing.T) (*store.DB, *checkout.Merchant) {
	t.Helper()
	db := storetest.Open(t, "sqlite")
	if db.Stats().SessionCache == nil {
		t.Fatal("storetest's SQLite store has no session cache; want it opened as serve opens it")
	}
	m, _ := newMerchantEndpoint(t, time.Now())
	ctx := context.Background()
	if err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.MerchantInsert(ctx, m) }); err != nil {
		t.Fatal(err)
	}
	return db, m
}

func ptr[T any](v T) *T { return &v }

func cachedSession(t *testing.T, db *store.DB, m *checkout.Merchant) *checkout.Session {
	t.Helper()
	now := time.Now().Truncate(time.Second)
	desc, email := "A sword", "buyer@example.com"
	s := &checkout.Session{
		ID: checkout.NewSessionID(), MerchantID: m.ID, Mode: checkout.ModeTest, Status: checkout.StatusOpen, Title: "Order",
		Description: &desc, Currency: "USD", Amount: 1500, TotalAmount: 1500,
		Items:     []checkout.Item{{Name: "Sword", Amount: 1500, Quantity: 1}},
		Customer:  checkout.Customer{Email: &email},
		Metadata:  map[string]string{"order": "1"},
		CreatedAt: now, ExpiresAt: now.Add(time.Hour),
	}
	ctx := context.Background()
	if err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.SessionInsert(ctx, s) }); err != nil {
		t.Fatal(err)
	}
	return s
}

func cacheCounts(db *store.DB) (hits, misses int64) {
	c := db.Stats().SessionCache
	return c.Hits, c.Misses
}

func mustGet(t *testing.T, db *store.DB, id string) *checkout.Session {
	t.Helper()
	s, err := db.SessionGet(context.Background(), id)
	if err != nil {
		t.Fatalf("SessionGet(%s) = %v", id, err)
	}
	return s
}

func TestSessionCache(t *testing.T) {
	ctx := context.Background()
	db, m := cacheFixture(t)
	s := cachedSession(t, db, m)

	first := mustGet(t, db, s.ID)
	second := mustGet(t, db, s.ID)
	if hits, misses := cacheCounts(db); hits != 1 || misses != 1 {
		t.Errorf("two reads: %d hits, %d misses; want 1 and 1", hits, misses)
	}
	if !reflect.DeepEqual(first, s) || !reflect.DeepEqual(second, s) {
		t.Errorf("SessionGet = %+v, then %+v; want %+v", first, second, s)
	}

	// What a caller does with its copy is not the cache's.
	second.Items[0].Name, second.Metadata["order"], *second.Description, *second.Customer.Email = "x", "x", "x", "x"
	second.Items = append(second.Items, checkout.Item{Name: "Shield"})
	if got := mustGet(t, db, s.ID); !reflect.DeepEqual(got, s) {
		t.Errorf("after changing what SessionGet returned, SessionGet = %+v; want %+v", got, s)
	}

	// A write committed is read at once.
	held := *s
	held.ActivePaymentID = ptr("pay_1")
	if err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.SessionUpdate(ctx, &held) }); err != nil {
		t.Fatal(err)
	}
	hits, _ := cacheCounts(db)
	for range 2 {
		if got := mustGet(t, db, s.ID); !reflect.DeepEqual(got, &held) {
			t.Errorf("after an update, SessionGet = %+v; want %+v", got, &held)
		}
	}
	if after, _ := cacheCounts(db); after != hits+1 {
		t.Errorf("two reads after an update: %d hits; want 1 (cached again once the write ended)", after-hits)
	}

	// A write rolled back leaves what was, cached again after.
	failed := errors.New("fails after its update")
	err := db.InTx(ctx, func(tx checkout.Tx) error {
		done := held
		done.Status, done.ActivePaymentID = checkout.StatusComplete, nil
		if err := tx.SessionUpdate(ctx, &done); err != nil {
			return err
		}
		return failed
	})
	if !errors.Is(err, failed) && !strings.Contains(fmt.Sprint(err), failed.Error()) {
		t.Fatalf("InTx = %v; want %v", err, failed)
	}
	for range 2 {
		if got := mustGet(t, db, s.ID); !reflect.DeepEqual(got, &held) {
			t.Errorf("after an update rolled back, SessionGet = %+v; want %+v", got, &held)
		}
	}

	// An unknown session is not cached: once it exists, it is found.
	later := &checkout.Session{}
	*later = *s
	later.ID = checkout.NewSessionID()
	if _, err := db.SessionGet(ctx, later.ID); !checkout.IsCode(err, checkout.ECheckoutNotFound) {
		t.Fatalf("SessionGet(unknown) = %v; want checkout_not_found", err)
	}
	if err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.SessionInsert(ctx, later) }); err != nil {
		t.Fatal(err)
	}
	mustGet(t, db, later.ID)
}

// A full cache drops sessions to take another: it never holds more than
// its bytes; a session larger than them all is not cached.
func TestSessionCacheSize(t *testing.T) {
	db, m := cacheFixture(t)
	var ids []string
	for range 5 {
		ids = append(ids, cachedSession(t, db, m).ID)
	}
	size := store.SessionSize(mustGet(t, db, ids[0]))
	store.SetSessionCacheBytes(db, 2*size)
	for _, id := range ids {
		mustGet(t, db, id)
		if c := db.Stats().SessionCache; c.Bytes > int64(2*size) || c.Sessions > 2 || c.Sessions == 0 {
			t.Fatalf("the cache holds %d sessions, %d bytes; want 1 or 2, at most %d bytes", c.Sessions, c.Bytes, 2*size)
		}
	}
	hits, _ := cacheCounts(db)
	mustGet(t, db, ids[4])
	if after, _ := cacheCounts(db); after != hits+1 {
		t.Errorf("the last session read again: %d hits; want 1", after-hits)
	}

	store.SetSessionCacheBytes(db, size-1)
	big := cachedSession(t, db, m)
	mustGet(t, db, big.ID)
	mustGet(t, db, big.ID)
	if after, _ := cacheCounts(db); after != hits+1 {
		t.Errorf("a session larger than the cache, read twice: %d hits; want none", after-hits-1)
	}
	if c := db.Stats().SessionCache; c.Bytes > int64(2*size) {
		t.Errorf("the cache holds %d bytes; want at most %d", c.Bytes, 2*size)
	}
}

// A read that began before a write must not leave what it read in the
// cache after the write: each interleaving of a read that missed with a
// write of the same session, the read's caching held at the point the
// write reaches.
func TestSessionCacheReadRacingWrite(t *testing.T) {
	ctx := context.Background()
	update := func(db *store.DB, s *checkout.Session, payment string, between func()) {
		t.Helper()
		u := *s
		u.ActivePaymentID = ptr(payment)
		if err := db.InTx(ctx, func(tx checkout.Tx) error {
			if err := tx.SessionUpdate(ctx, &u); err != nil {
				return err
			}
			if between != nil {
				between() // the update made, not committed
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	payment := func(s *checkout.Session) string {
		if s.ActivePaymentID == nil {
			return ""
		}
		return *s.ActivePaymentID
	}

	t.Run("read before the write, cached after its commit", func(t *testing.T) {
		db, m := cacheFixture(t)
		s := cachedSession(t, db, m)
		store.SetSessionReadHook(db, func(read *checkout.Session) {
			store.SetSessionReadHook(db, nil)
			update(db, s, "pay_1", nil) // commits between the read and its caching
		})
		if got := mustGet(t, db, s.ID); payment(got) != "" {
			t.Fatalf("the read that began first = %q; want the session before the write", payment(got))
		}
		if got := mustGet(t, db, s.ID); payment(got) != "pay_1" {
			t.Errorf("SessionGet after the write = %q; want pay_1 (the read before it cached what it read)", payment(got))
		}
	})

	t.Run("read during the write's transaction", func(t *testing.T) {
		db, m := cacheFixture(t)
		s := cachedSession(t, db, m)
		mustGet(t, db, s.ID) // cached
		update(db, s, "pay_1", func() {
			// Another goroutine: the transaction holds SQLite's one write
			// connection, not the reads'.
			done := make(chan *checkout.Session)
			go func() {
				got, _ := db.SessionGet(ctx, s.ID)
				done <- got
			}()
			if got := <-done; got == nil || payment(got) != "" {
				t.Errorf("a read during the write = %v; want the session as committed before it", got)
			}
		})
		if got := mustGet(t, db, s.ID); payment(got) != "pay_1" {
			t.Errorf("SessionGet after the write = %q; want pay_1", payment(got))
		}
	})

	// A read during the write (it misses: the write dropped the session)
	// reads the session as committed before it, and its caching is held
	// until the write has ended: refused, the write having ended since
	// the read began.
	t.Run("read during the write, cached after it ended", func(t *testing.T) {
		db, m := cacheFixture(t)
		s := cachedSession(t, db, m)
		release, cached := make(chan struct{}), make(chan struct{})
		update(db, s, "pay_1", func() { heldRead(db, s.ID, release, cached) })
		close(release) // the write has ended
		<-cached
		if got := mustGet(t, db, s.ID); payment(got) != "pay_1" {
			t.Errorf("SessionGet after the write = %q; want pay_1 (the read during it cached what it read)", payment(got))
		}
	})

	// The same read cached between the write's commit and its end: a read
	// after the commit must not find it.
	t.Run("read during the write, cached between its commit and its end", func(t *testing.T) {
		db, m := cacheFixture(t)
		s := cachedSession(t, db, m)
		release, cached := make(chan struct{}), make(chan struct{})
		var afterCommit *checkout.Session
		store.SetCommitHook(db, func() {
			store.SetCommitHook(db, nil)
			close(release)
			<-cached
			afterCommit, _ = db.SessionGet(ctx, s.ID)
		})
		update(db, s, "pay_1", func() { heldRead(db, s.ID, release, cached) })
		if afterCommit == nil || payment(afterCommit) != "pay_1" {
			t.Errorf("SessionGet after the commit = %v; want pay_1 (the read during the write cached what it read)", afterCommit)
		}
	})
}

// heldRead starts a SessionGet of id that misses the cache, and returns
// once it has read the session from the database: its caching waits for
// release to be closed; cached is closed when the SessionGet returns.
func heldRead(db *store.DB, id string, release, cached chan struct{}) {
	read := make(chan struct{})
	store.SetSessionReadHook(db, func(*checkout.Session) {
		store.SetSessionReadHook(db, nil)
		close(read)
		<-release
	})
	go func() {
		defer close(cached)
		db.SessionGet(context.Background(), id)
	}()
	<-read
}

// Readers never go back in time: a read that begins after a write was
// acknowledged sees it, or a later one, however reads and writes of the
// session interleave.
func TestSessionCacheNeverGoesBack(t *testing.T) {
	ctx := context.Background()
	db, m := cacheFixture(t)
	s := cachedSession(t, db, m)
	const writes = 200
	var acked atomic.Int64 // the last write acknowledged to the writer
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				want := acked.Load()
				got, err := db.SessionGet(ctx, s.ID)
				if err != nil {
					t.Error(err)
					return
				}
				n := int64(0)
				if got.ActivePaymentID != nil {
					n, _ = strconv.ParseInt(strings.TrimPrefix(*got.ActivePaymentID, "pay_"), 10, 64)
				}
				if n < want {
					t.Errorf("SessionGet = write %d, after write %d was acknowledged", n, want)
					return
				}
			}
		})
	}
	for i := int64(1); i <= writes; i++ {
		u := *s
		u.ActivePaymentID = ptr("pay_" + strconv.FormatInt(i, 10))
		if err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.SessionUpdate(ctx, &u) }); err != nil {
			t.Fatal(err)
		}
		acked.Store(i)
	}
	close(stop)
	wg.Wait()
	if hits, _ := cacheCounts(db); hits == 0 {
		t.Log("no read hit the cache; the interleavings were all misses")
	}
}

// Only a store opened to serve caches: the commands' (sqlite.Open) and
// PostgreSQL's do not, other processes or nodes writing the same sessions.
func TestSessionCacheOnlyWhenServed(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, storetest.SQLitePath(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if db.Stats().SessionCache != nil {
		t.Error("sqlite.Open's store has a session cache; want none")
	}
	if pg := storetest.Open(t, "postgres"); pg.Stats().SessionCache != nil {
		t.Error("PostgreSQL's store has a session cache; want none")
	}
}

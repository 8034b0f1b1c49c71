package store_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// fakeClaimer is a dispatcher with free workers: it records what the
// transactions hand it and checks that each reservation is taken once.
type fakeClaimer struct {
	t           *testing.T
	mu          sync.Mutex
	free        int
	perEndpoint int
	at          time.Time
	n           int
	reserved    map[string]int // owner: workers set aside, until Take
	reserves    int
	taken       [][]*store.Claim // by Take, nil for a transaction that did not commit
}

func (c *fakeClaimer) Reserve(max int) store.ClaimParams {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := min(max, c.free)
	if n == 0 {
		return store.ClaimParams{}
	}
	c.free -= n
	c.n++
	owner := "handover-" + string(rune('a'+c.n))
	c.reserved[owner] = n
	c.reserves++
	return store.ClaimParams{Owner: owner, Now: c.at, LeaseUntil: c.at.Add(time.Minute), Limit: n, PerEndpoint: c.perEndpoint}
}

func (c *fakeClaimer) Take(p store.ClaimParams, claims []*store.Claim) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, ok := c.reserved[p.Owner]
	if !ok || n != p.Limit || len(claims) > n {
		c.t.Errorf("Take(%s, limit %d, %d claims): reserved %d (%v)", p.Owner, p.Limit, len(claims), n, ok)
	}
	delete(c.reserved, p.Owner)
	c.free += n // the fake attempts them at once
	c.taken = append(c.taken, claims)
}

// takes returns how many Takes c has had.
func (c *fakeClaimer) takes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.taken)
}

// waitTakes waits until c has had n Takes: a batch hands its claims over
// once its callers have their answers, so the Take may come after InTx
// returned.
func (c *fakeClaimer) waitTakes(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for c.takes() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d Takes after 10 s; want %d", c.takes(), n)
		}
		time.Sleep(time.Millisecond) // waiting for a condition, not for time
	}
}

// lastNil tells whether the last Take was of a transaction that handed
// nothing over (nil).
func (c *fakeClaimer) lastNil() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.taken) > 0 && c.taken[len(c.taken)-1] == nil
}

// last returns the delivery ids of the last Take.
func (c *fakeClaimer) last() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.taken) == 0 {
		return nil
	}
	var ids []string
	for _, cl := range c.taken[len(c.taken)-1] {
		ids = append(ids, cl.Delivery.ID)
	}
	return ids
}

// A transaction that inserts deliveries leases the due ones to the
// dispatcher of this process, within the endpoint's cap, and hands them over
// once it has committed; a transaction that fails, or whose claim fails,
// hands nothing over and frees the workers it set aside, and its writes
// are what they would have been.
func TestClaimInCreate(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newCombinedFixture(t, db, 0)
		now := time.Unix(1700000000, 0) // the fixture's events' time
		c := &fakeClaimer{t: t, free: 8, perEndpoint: 1, at: now.Add(time.Second), reserved: map[string]int{}}
		db.SetClaimer(c)
		defer db.SetClaimer(nil)
		deliveryOf := func(i int) string {
			t.Helper()
			ds, err := db.DeliveryList(ctx, checkout.DeliveryListParams{EndpointID: f.ep.ID, Limit: 1000})
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range ds {
				if d.EventID == f.events[i].ID {
					return d.ID
				}
			}
			t.Fatalf("no delivery of event %d", i)
			return ""
		}
		// Nothing due but leased: another owner's claim finds nothing.
		leftForOthers := func(what string) {
			t.Helper()
			cs, err := db.DeliveryClaim(ctx, store.ClaimParams{Owner: "other", Now: c.at, LeaseUntil: c.at.Add(time.Minute), Limit: 100, PerEndpoint: 100})
			if err != nil {
				t.Fatal(err)
			}
			if len(cs) != 0 {
				t.Errorf("%s: another claim found %d due and unleased", what, len(cs))
			}
		}

		// A write alone.
		i := f.add(t)
		if err := db.InTx(ctx, func(tx checkout.Tx) error { return f.create(ctx, tx, i) }); err != nil {
			t.Fatal(err)
		}
		c.waitTakes(t, 1)
		if got, want := c.last(), []string{deliveryOf(i)}; !slices.Equal(got, want) {
			t.Fatalf("handed over %v; want the new delivery %v", got, want)
		}
		leftForOthers("after a write alone")

		// A batch, with the endpoint at its cap (1, the lease above runs):
		// nothing handed over, the workers freed, the deliveries left due.
		var writes []func(checkout.Tx) error
		for range 3 {
			i := f.add(t)
			writes = append(writes, func(tx checkout.Tx) error { return f.create(ctx, tx, i) })
		}
		before := c.takes()
		if errs, _ := batched(t, db, writes, nil); slices.ContainsFunc(errs, func(err error) bool { return err != nil }) {
			t.Fatal(errs)
		}
		c.waitTakes(t, before+1)
		if c.takes() != before+1 || len(c.last()) != 0 {
			t.Errorf("at the cap: %d Takes, last %v; want one, empty", c.takes()-before, c.last())
		}
		// Under a cap of 4, the next batch leases three: the earliest due
		// (the batch above), within the cap with the lease running.
		c.perEndpoint = 4
		writes = writes[:0]
		for range 3 {
			i := f.add(t)
			writes = append(writes, func(tx checkout.Tx) error { return f.create(ctx, tx, i) })
		}
		before = c.takes()
		if errs, _ := batched(t, db, writes, nil); slices.ContainsFunc(errs, func(err error) bool { return err != nil }) {
			t.Fatal(errs)
		}
		c.waitTakes(t, before+1)
		want := []string{deliveryOf(2), deliveryOf(3), deliveryOf(1)}
		if got := c.last(); len(got) != 3 || !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
			t.Errorf("handed over %v; want the earliest due, %v", got, want)
		}

		// A write that fails: nothing reserved, nothing leased.
		reserves := c.reserves
		i = f.add(t)
		boom := errors.New("boom")
		if err := db.InTx(ctx, func(tx checkout.Tx) error {
			if err := f.create(ctx, tx, i); err != nil {
				return err
			}
			return boom
		}); !errors.Is(err, boom) {
			t.Fatalf("failing write = %v", err)
		}
		if c.reserves != reserves {
			t.Errorf("a failing write reserved workers")
		}

		// A claim that fails: the write commits all the same, without it,
		// the workers are freed, and the delivery is left due for the
		// dispatcher's own claim.
		c.perEndpoint = 100
		store.SetHandoverHook(db, func() error { return errors.New("claim broken") })
		i = f.add(t)
		taken := c.takes()
		if err := db.InTx(ctx, func(tx checkout.Tx) error { return f.create(ctx, tx, i) }); err != nil {
			t.Fatalf("write whose claim failed = %v; want it committed", err)
		}
		store.SetHandoverHook(db, nil)
		if !f.committed(t, db, i) {
			t.Error("write whose claim failed not committed")
		}
		if c.takes() != taken+1 || !c.lastNil() {
			t.Errorf("claim failed: Takes %d, last %v; want one, nil", c.takes()-taken, c.last())
		}
		cs, err := db.DeliveryClaim(ctx, store.ClaimParams{Owner: "other", Now: c.at, LeaseUntil: c.at.Add(time.Minute), Limit: 100, PerEndpoint: 100})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(cs, func(cl *store.Claim) bool { return cl.Delivery.ID == deliveryOf(i) }) {
			t.Errorf("the delivery whose claim in create failed was not left due")
		}

		// No free worker: no claim.
		c.mu.Lock()
		c.free = 0
		c.mu.Unlock()
		taken = c.takes()
		i = f.add(t)
		if err := db.InTx(ctx, func(tx checkout.Tx) error { return f.create(ctx, tx, i) }); err != nil {
			t.Fatal(err)
		}
		if c.takes() != taken {
			t.Errorf("a Take without a free worker")
		}
		if len(c.reserved) != 0 {
			t.Errorf("reservations never taken: %v", c.reserved)
		}
	})
}

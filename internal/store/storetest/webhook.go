package storetest

import (
	"context"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
)

// webhookTests are the conformance tests of endpoints and deliveries.
var webhookTests = []struct {
	name string
	fn   func(t *testing.T, db *store.DB)
}{
	{"Endpoint/RoundTrip", testEndpointRoundTrip},
	{"Endpoint/NotFound", testEndpointNotFound},
	{"Delivery/Claim", testDeliveryClaim},
	{"Delivery/ClaimBacklog", testDeliveryClaimBacklog},
	{"Delivery/Record", testDeliveryRecord},
	{"Delivery/RecordStaleLease", testDeliveryRecordStaleLease},
	{"Delivery/RecordAll", testDeliveryRecordAll},
	{"Delivery/RecordAllClaims", testDeliveryRecordAllClaims},
	{"Delivery/CancelPending", testDeliveryCancelPending},
	{"Endpoint/ListEnabledInATransaction", testEndpointListEnabledInATransaction},
	{"Event/Purge", testEventPurge},
}

func newEndpoint(t *testing.T, db *store.DB, m *checkout.Merchant, mode checkout.Mode, events ...string) *checkout.Endpoint {
	t.Helper()
	ep := &checkout.Endpoint{ID: checkout.NewID(checkout.PrefixEndpoint, 16), MerchantID: m.ID, Mode: mode,
		URL: "https://hooks.example.com/" + checkout.NewID("", 4), Events: events, Enabled: true,
		Secret: checkout.NewWebhookSecret(), CreatedAt: base, UpdatedAt: base}
	inTx(t, db, func(tx checkout.Tx) error { return tx.EndpointInsert(context.Background(), ep) })
	return ep
}

// newDelivery stores an event of m at created and its delivery to ep, due
// at created.
func newDelivery(t *testing.T, db *store.DB, m *checkout.Merchant, ep *checkout.Endpoint, created time.Time) *checkout.Delivery {
	t.Helper()
	e := newEvent(m, ep.Mode, checkout.EventCheckoutCreated, created)
	d := checkout.NewDelivery(e, ep, created)
	inTx(t, db, func(tx checkout.Tx) error {
		if err := tx.EventInsert(context.Background(), e); err != nil {
			return err
		}
		return tx.DeliveryInsert(context.Background(), d)
	})
	return d
}

// Endpoints read back as written: All as itself, not expanded; only
// enabled endpoints of the store and mode are listed for a fan-out.
func testEndpointRoundTrip(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	other := newMerchant(t, db, "Other", base)
	all := newEndpoint(t, db, m, checkout.ModeTest, checkout.AllEvents)
	some := newEndpoint(t, db, m, checkout.ModeTest, checkout.EventCheckoutCompleted, checkout.EventPaymentRefunded)
	live := newEndpoint(t, db, m, checkout.ModeLive, checkout.AllEvents)
	newEndpoint(t, db, other, checkout.ModeTest, checkout.AllEvents)
	for _, want := range []*checkout.Endpoint{all, some, live} {
		got, err := db.EndpointGet(ctx, want.ID)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("EndpointGet(%s) = %+v, %v; want %+v", want.ID, got, err, want)
		}
	}
	list, err := db.EndpointList(ctx, m.ID)
	if err != nil || len(list) != 3 {
		t.Errorf("EndpointList = %d, %v; want the store's 3", len(list), err)
	}

	some.Enabled, some.Secret, some.UpdatedAt = false, checkout.NewWebhookSecret(), base.Add(time.Hour)
	inTx(t, db, func(tx checkout.Tx) error { return tx.EndpointUpdate(ctx, some) })
	if got, _ := db.EndpointGet(ctx, some.ID); !reflect.DeepEqual(got, some) {
		t.Errorf("after EndpointUpdate: %+v; want %+v", got, some)
	}
	inTx(t, db, func(tx checkout.Tx) error {
		eps, err := tx.EndpointListEnabled(ctx, m.ID, checkout.ModeTest)
		if err != nil {
			return err
		}
		if len(eps) != 1 || eps[0].ID != all.ID {
			t.Errorf("EndpointListEnabled(test) = %d endpoints; want only the enabled test one", len(eps))
		}
		n, err := tx.EndpointCount(ctx, m.ID)
		if n != 3 {
			t.Errorf("EndpointCount = %d; want 3, both modes, disabled included", n)
		}
		return err
	})
}

// EndpointListEnabled, read again in one transaction (a batch of group
// commit), sees what the transaction wrote to the endpoints in between: an
// endpoint added, disabled, a listener connected, or one deleted.
func testEndpointListEnabledInATransaction(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	first := newEndpoint(t, db, m, checkout.ModeTest, checkout.AllEvents)
	ids := func(tx checkout.Tx) []string {
		t.Helper()
		eps, err := tx.EndpointListEnabled(ctx, m.ID, checkout.ModeTest)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range eps {
			seen := "-"
			if !e.SeenAt.IsZero() {
				seen = strconv.FormatInt(e.SeenAt.UnixMilli(), 10)
			}
			out = append(out, e.ID+" "+seen)
		}
		slices.Sort(out)
		return out
	}
	second := &checkout.Endpoint{ID: checkout.NewID(checkout.PrefixEndpoint, 16), MerchantID: m.ID, Mode: checkout.ModeTest,
		URL: "https://hooks.example.com/b", Events: []string{checkout.AllEvents}, Enabled: true,
		Secret: checkout.NewWebhookSecret(), CreatedAt: base, UpdatedAt: base}
	listener := &checkout.Endpoint{ID: checkout.NewID(checkout.PrefixEndpoint, 16), MerchantID: m.ID, Mode: checkout.ModeTest,
		Kind: checkout.EndpointListener, ListenerName: "laptop", Events: []string{checkout.AllEvents}, Enabled: true,
		Secret: checkout.NewWebhookSecret(), CreatedAt: base, UpdatedAt: base}
	inTx(t, db, func(tx checkout.Tx) error {
		want := func(step string, eps ...string) {
			t.Helper()
			slices.Sort(eps)
			if got := ids(tx); !slices.Equal(got, eps) {
				t.Errorf("%s: EndpointListEnabled = %q; want %q", step, got, eps)
			}
			if got := ids(tx); !slices.Equal(got, eps) {
				t.Errorf("%s, read again: EndpointListEnabled = %q; want %q", step, got, eps)
			}
		}
		want("at first", first.ID+" -")
		if err := tx.EndpointInsert(ctx, second); err != nil {
			return err
		}
		if err := tx.EndpointInsert(ctx, listener); err != nil {
			return err
		}
		want("after two inserts", first.ID+" -", second.ID+" -", listener.ID+" -")
		seen := base.Add(5 * time.Second)
		if err := tx.ListenerConnect(ctx, listener.ID, "conn-1", seen); err != nil {
			return err
		}
		want("after a listener connects", first.ID+" -", second.ID+" -", listener.ID+" "+strconv.FormatInt(seen.UnixMilli(), 10))
		first.Enabled, first.UpdatedAt = false, base.Add(time.Second)
		if err := tx.EndpointUpdate(ctx, first); err != nil {
			return err
		}
		want("after disabling one", second.ID+" -", listener.ID+" "+strconv.FormatInt(seen.UnixMilli(), 10))
		if err := tx.EndpointDelete(ctx, second.ID); err != nil {
			return err
		}
		want("after deleting one", listener.ID+" "+strconv.FormatInt(seen.UnixMilli(), 10))
		return nil
	})
}

func testEndpointNotFound(t *testing.T, db *store.DB) {
	ctx := context.Background()
	id := checkout.NewID(checkout.PrefixEndpoint, 16)
	_, err := db.EndpointGet(ctx, id)
	wantCode(t, "EndpointGet(unknown)", err, checkout.ENotFound)
	err = db.InTx(ctx, func(tx checkout.Tx) error { return tx.EndpointDelete(ctx, id) })
	wantCode(t, "EndpointDelete(unknown)", err, checkout.ENotFound)
	err = db.InTx(ctx, func(tx checkout.Tx) error {
		return tx.EndpointUpdate(ctx, &checkout.Endpoint{ID: id, Secret: "whsec_x"})
	})
	wantCode(t, "EndpointUpdate(unknown)", err, checkout.ENotFound)
	_, err = db.DeliveryGet(ctx, checkout.NewID(checkout.PrefixDelivery, 16))
	wantCode(t, "DeliveryGet(unknown)", err, checkout.ENotFound)
}

// A claim takes due, unleased, pending deliveries, oldest first, at most
// Limit, and at most PerEndpoint leased at once per endpoint; a lease
// keeps others off until it runs out.
func testDeliveryClaim(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	slow := newEndpoint(t, db, m, checkout.ModeTest, checkout.AllEvents)
	fast := newEndpoint(t, db, m, checkout.ModeTest, checkout.AllEvents)
	var slowDs []*checkout.Delivery
	for i := range 5 {
		slowDs = append(slowDs, newDelivery(t, db, m, slow, base.Add(time.Duration(i)*time.Second)))
	}
	fastD := newDelivery(t, db, m, fast, base.Add(10*time.Second))
	later := newDelivery(t, db, m, fast, base.Add(time.Hour)) // not due yet

	// Each claim is asked first whether it would find anything
	// (DeliveryClaimable, the dispatcher's read before it claims): the
	// answer must be the claim's.
	claim := func(owner string, now time.Time, limit int) []string {
		t.Helper()
		claimable, err := db.DeliveryClaimable(ctx, now, 2)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := db.DeliveryClaim(ctx, store.ClaimParams{Owner: owner, Now: now, LeaseUntil: now.Add(time.Minute), Limit: limit, PerEndpoint: 2})
		if err != nil {
			t.Fatal(err)
		}
		if claimable != (len(cs) > 0) {
			t.Errorf("at %v: DeliveryClaimable = %v, and the claim took %d", now.Sub(base), claimable, len(cs))
		}
		var ids []string
		for _, c := range cs {
			if c.Endpoint.ID != c.Delivery.EndpointID || c.Event.ID != c.Delivery.EventID || c.Endpoint.Secret == "" {
				t.Errorf("claim %s comes with endpoint %s, event %s", c.Delivery.ID, c.Endpoint.ID, c.Event.ID)
			}
			ids = append(ids, c.Delivery.ID)
		}
		return ids
	}
	if got := claim("early", base.Add(-time.Second), 10); len(got) != 0 {
		t.Errorf("claim before anything is due = %v; want none", got)
	}
	now := base.Add(time.Minute)
	if got, want := claim("a", now, 1), []string{slowDs[0].ID}; !slices.Equal(got, want) {
		t.Errorf("claim limit 1 = %v; want the oldest %v", got, want)
	}
	// slow has one lease: one more of it (the cap is 2), then fast's.
	if got, want := claim("b", now, 10), []string{slowDs[1].ID, fastD.ID}; !slices.Equal(got, want) {
		t.Errorf("claim = %v; want %v (slow up to its cap, then fast; not the one due later)", got, want)
	}
	if got := claim("c", now, 10); len(got) != 0 {
		t.Errorf("claim with slow at its cap = %v; want none", got)
	}
	// The leases run out: the three are due again, slow's two first (its
	// cap), oldest first.
	if got, want := claim("d", now.Add(time.Minute), 10), []string{slowDs[0].ID, slowDs[1].ID, fastD.ID}; !slices.Equal(got, want) {
		t.Errorf("claim after the leases = %v; want %v", got, want)
	}
	if got := claim("e", base.Add(2*time.Hour), 10); !slices.Contains(got, later.ID) {
		t.Errorf("claim once due = %v; want it to hold %s", got, later.ID)
	}
}

// An endpoint's backlog, due before everything else, holds back no other
// endpoint: a claim takes each endpoint's earliest due up to the cap, less
// the leases it already has (whoever holds them), then the earliest of
// those up to the limit. Deliveries not due yet, or finished, are never
// taken.
func testDeliveryClaimBacklog(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	busy := newEndpoint(t, db, m, checkout.ModeTest, checkout.AllEvents)
	quiet := newEndpoint(t, db, m, checkout.ModeTest, checkout.AllEvents)
	waiting := newEndpoint(t, db, m, checkout.ModeTest, checkout.AllEvents)
	var backlog []*checkout.Delivery
	for i := range 30 {
		backlog = append(backlog, newDelivery(t, db, m, busy, base.Add(time.Duration(i)*time.Millisecond)))
	}
	done := newDelivery(t, db, m, quiet, base)
	inTx(t, db, func(tx checkout.Tx) error {
		_, err := tx.DeliveryCancelPending(ctx, quiet.ID, base)
		return err
	})
	quietD := newDelivery(t, db, m, quiet, base.Add(time.Second))
	newDelivery(t, db, m, waiting, base.Add(time.Hour)) // not due yet
	now := base.Add(time.Minute)
	claim := func(owner string, limit int) []string {
		t.Helper()
		cs, err := db.DeliveryClaim(ctx, store.ClaimParams{Owner: owner, Now: now, LeaseUntil: now.Add(time.Minute), Limit: limit, PerEndpoint: 4})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, c := range cs {
			ids = append(ids, c.Delivery.ID)
		}
		return ids
	}
	if got, want := claim("a", 2), []string{backlog[0].ID, backlog[1].ID}; !slices.Equal(got, want) {
		t.Errorf("claim of 2 = %v; want the backlog's oldest %v", got, want)
	}
	// busy has 2 leases (a's): 2 more of it, then quiet's, none of
	// waiting's nor the canceled one.
	want := []string{backlog[2].ID, backlog[3].ID, quietD.ID}
	if got := claim("b", 10); !slices.Equal(got, want) {
		t.Errorf("claim = %v; want %v", got, want)
	}
	if got := claim("c", 10); len(got) != 0 {
		t.Errorf("claim with every endpoint at its cap or idle = %v; want none", got)
	}
	if got, _ := db.DeliveryGet(ctx, done.ID); got.Status != checkout.DeliveryCanceled {
		t.Errorf("canceled delivery = %+v", got)
	}
}

// A lease that ran out while its attempt went on (a node cut off by a
// database failover) is taken over by a later claim; the old claim's
// record, arriving late, keeps its attempt but changes neither the
// delivery nor the new lease, and the new claim's record goes in.
func testDeliveryRecordStaleLease(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	ep := newEndpoint(t, db, m, checkout.ModeTest, checkout.AllEvents)
	d := newDelivery(t, db, m, ep, base)
	claim := func(owner string, at time.Time) *store.Claim {
		t.Helper()
		cs, err := db.DeliveryClaim(ctx, store.ClaimParams{Owner: owner, Now: at, LeaseUntil: at.Add(time.Minute), Limit: 1, PerEndpoint: 1})
		if err != nil || len(cs) != 1 {
			t.Fatalf("DeliveryClaim by %s = %d, %v; want the delivery", owner, len(cs), err)
		}
		return cs[0]
	}
	attempt := func(c *store.Claim, at time.Time, status int) (*checkout.Attempt, *checkout.Delivery) {
		a := &checkout.Attempt{DeliveryID: d.ID, Number: c.Delivery.Attempts + 1, StartedAt: at, StatusCode: status}
		next := *c.Delivery
		next.Record(a, at)
		return a, &next
	}
	t1 := base.Add(time.Second)
	old := claim("node-a-1", t1)
	t2 := t1.Add(2 * time.Minute) // the lease ran out
	fresh := claim("node-b-7", t2)
	staleA, staleD := attempt(old, t1, 500)
	if ok, err := db.DeliveryRecord(ctx, "node-a-1", staleA, staleD); ok || err != nil {
		t.Errorf("the stale claim's record = %t, %v; want the delivery untouched", ok, err)
	}
	if got, _ := db.DeliveryGet(ctx, d.ID); got.Attempts != 0 || got.Status != checkout.DeliveryPending {
		t.Errorf("delivery after the stale record = %+v; want untouched", got)
	}
	freshA, freshD := attempt(fresh, t2, 200)
	if ok, err := db.DeliveryRecord(ctx, "node-b-7", freshA, freshD); !ok || err != nil {
		t.Fatalf("the new claim's record = %t, %v; want it stored", ok, err)
	}
	if got, _ := db.DeliveryGet(ctx, d.ID); got.Status != checkout.DeliverySucceeded || got.LastStatusCode != 200 {
		t.Errorf("delivery after the new claim's record = %+v; want succeeded with 200", got)
	}
}

// Record stores the attempt and, only for the lease's owner, the
// delivery's new state, which ends the lease.
func testDeliveryRecord(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	ep := newEndpoint(t, db, m, checkout.ModeTest, checkout.AllEvents)
	d := newDelivery(t, db, m, ep, base)
	now := base.Add(time.Second)
	cs, err := db.DeliveryClaim(ctx, store.ClaimParams{Owner: "a", Now: now, LeaseUntil: now.Add(time.Minute), Limit: 1, PerEndpoint: 1})
	if err != nil || len(cs) != 1 {
		t.Fatalf("DeliveryClaim = %d, %v", len(cs), err)
	}
	a := &checkout.Attempt{DeliveryID: d.ID, Number: 1, StartedAt: now, Duration: 1500 * time.Microsecond, StatusCode: 500,
		Error: "receiver answered 500", ResponseBody: "down"}
	next := *cs[0].Delivery
	next.Record(a, now)
	if ok, err := db.DeliveryRecord(ctx, "someone-else", a, &next); ok || err != nil {
		t.Errorf("DeliveryRecord by another owner = %t, %v; want the attempt kept, the delivery untouched", ok, err)
	}
	if got, _ := db.DeliveryGet(ctx, d.ID); got.Attempts != 0 {
		t.Errorf("delivery after another owner's record = %+v", got)
	}
	if ok, err := db.DeliveryRecord(ctx, "a", a, &next); !ok || err != nil {
		t.Fatalf("DeliveryRecord by the owner = %t, %v; want true", ok, err)
	}
	got, err := db.DeliveryGet(ctx, d.ID)
	if err != nil || got.Status != checkout.DeliveryPending || got.Attempts != 1 || !got.NextAttemptAt.Equal(now.Add(time.Minute)) ||
		got.LastStatusCode != 500 || got.LastError != a.Error {
		t.Errorf("delivery after the record = %+v, %v; want pending, 1 attempt, next in 1 m", got, err)
	}
	as, err := db.AttemptList(ctx, d.ID)
	if err != nil || len(as) != 2 || !reflect.DeepEqual(as[1], a) {
		t.Errorf("AttemptList = %+v, %v; want both records, the last %+v", as, err, a)
	}
	// The record ended the lease: due again at its next attempt time.
	if cs, _ := db.DeliveryClaim(ctx, store.ClaimParams{Owner: "b", Now: now.Add(time.Minute), LeaseUntil: now.Add(2 * time.Minute), Limit: 1, PerEndpoint: 1}); len(cs) != 1 {
		t.Errorf("claim at the next attempt time = %d; want 1", len(cs))
	}
}

// newDeliveries stores n deliveries to one endpoint of a new store, due a
// millisecond apart from base.
func newDeliveries(t *testing.T, db *store.DB, n int) []*checkout.Delivery {
	t.Helper()
	m := newMerchant(t, db, "Acme", base)
	ep := newEndpoint(t, db, m, checkout.ModeTest, checkout.AllEvents)
	var ds []*checkout.Delivery
	for i := range n {
		ds = append(ds, newDelivery(t, db, m, ep, base.Add(time.Duration(i)*time.Millisecond)))
	}
	return ds
}

// RecordAll stores many attempts in one transaction, each as Record would,
// and reports each delivery's update: the owner's succeed, another owner's
// and a deleted delivery's do not.
func testDeliveryRecordAll(t *testing.T, db *store.DB) {
	ctx := context.Background()
	newDeliveries(t, db, 4)
	now := base.Add(time.Second)
	cs, err := db.DeliveryClaim(ctx, store.ClaimParams{Owner: "a", Now: now, LeaseUntil: now.Add(time.Minute), Limit: 4, PerEndpoint: 4})
	if err != nil || len(cs) != 4 {
		t.Fatalf("DeliveryClaim = %d, %v", len(cs), err)
	}
	record := func(c *store.Claim, owner string, status int) store.AttemptRecord {
		a := &checkout.Attempt{DeliveryID: c.Delivery.ID, Number: 1, StartedAt: now, Duration: time.Millisecond, StatusCode: status}
		d := *c.Delivery
		d.Record(a, now)
		return store.AttemptRecord{Owner: owner, Attempt: a, Delivery: &d}
	}
	gone := &store.Claim{Delivery: &checkout.Delivery{ID: checkout.NewID(checkout.PrefixDelivery, 16), Attempts: 0}}
	rs := []store.AttemptRecord{record(cs[3], "a", 200), record(cs[0], "a", 200), record(cs[1], "other", 200), record(gone, "a", 200), record(cs[2], "a", 503)}
	got, _, err := db.DeliveryRecordAll(ctx, rs, store.ClaimParams{})
	if want := []bool{true, true, false, false, true}; err != nil || !slices.Equal(got, want) {
		t.Fatalf("DeliveryRecordAll = %v, %v; want %v", got, err, want)
	}
	for i, want := range []checkout.DeliveryStatus{checkout.DeliverySucceeded, checkout.DeliveryPending, checkout.DeliveryPending, checkout.DeliverySucceeded} {
		d, err := db.DeliveryGet(ctx, cs[i].Delivery.ID)
		if err != nil || d.Status != want {
			t.Errorf("delivery %d after the batch = %v, %v; want %s", i, d, err, want)
		}
		if as, _ := db.AttemptList(ctx, cs[i].Delivery.ID); len(as) != 1 {
			t.Errorf("delivery %d has %d attempts recorded; want 1", i, len(as))
		}
	}
	if as, _ := db.AttemptList(ctx, gone.Delivery.ID); len(as) != 0 {
		t.Errorf("a delivery that does not exist got %d attempts", len(as))
	}
	if got, _, err := db.DeliveryRecordAll(ctx, nil, store.ClaimParams{}); err != nil || len(got) != 0 {
		t.Errorf("DeliveryRecordAll of nothing = %v, %v", got, err)
	}
}

// RecordAll with a claim records first, then claims in the same
// transaction: the leases its records end no longer count against the
// endpoint's cap, so it takes the next deliveries of a capped endpoint. A
// batch that fails leases nothing; the leases it takes run out and are
// claimed again as any other.
func testDeliveryRecordAllClaims(t *testing.T, db *store.DB) {
	ctx := context.Background()
	ds := newDeliveries(t, db, 4)
	now := base.Add(time.Second)
	params := func(owner string, at time.Time, perEndpoint int) store.ClaimParams {
		return store.ClaimParams{Owner: owner, Now: at, LeaseUntil: at.Add(time.Minute), Limit: 2, PerEndpoint: perEndpoint}
	}
	ids := func(cs []*store.Claim) []string {
		var ids []string
		for _, c := range cs {
			ids = append(ids, c.Delivery.ID)
		}
		return ids
	}
	cs, err := db.DeliveryClaim(ctx, params("a", now, 2))
	if err != nil || len(cs) != 2 {
		t.Fatalf("DeliveryClaim = %d, %v", len(cs), err)
	}
	record := func(c *store.Claim, owner string) store.AttemptRecord {
		a := &checkout.Attempt{DeliveryID: c.Delivery.ID, Number: c.Delivery.Attempts + 1, StartedAt: now, Duration: time.Millisecond, StatusCode: 200}
		d := *c.Delivery
		d.Record(a, now)
		return store.AttemptRecord{Owner: owner, Attempt: a, Delivery: &d}
	}

	// A batch that fails (a status the table refuses) stores nothing and
	// leases nothing.
	bad := record(cs[1], "a")
	bad.Delivery.Status = "bogus"
	if _, got, err := db.DeliveryRecordAll(ctx, []store.AttemptRecord{record(cs[0], "a"), bad}, params("b", now, 2)); err == nil || len(got) != 0 {
		t.Fatalf("DeliveryRecordAll of a bad record = %v, %v; want an error and no claim", ids(got), err)
	}
	for _, c := range cs {
		if as, _ := db.AttemptList(ctx, c.Delivery.ID); len(as) != 0 {
			t.Errorf("delivery %s has %d attempts after a failed batch; want none", c.Delivery.ID, len(as))
		}
	}
	if got, err := db.DeliveryClaim(ctx, params("probe", now, 2)); err != nil || len(got) != 0 {
		t.Errorf("claim with a's two leases running = %v, %v; want none: the failed batch ended no lease", ids(got), err)
	}

	// The endpoint is at its cap (a's two): the records end a's leases, and
	// the claim takes the next two.
	updated, got, err := db.DeliveryRecordAll(ctx, []store.AttemptRecord{record(cs[0], "a"), record(cs[1], "a")}, params("b", now, 2))
	if want := []string{ds[2].ID, ds[3].ID}; err != nil || !slices.Equal(updated, []bool{true, true}) || !slices.Equal(ids(got), want) {
		t.Fatalf("DeliveryRecordAll with a claim = %v, %v, %v; want both updated, then %v claimed", updated, ids(got), err, want)
	}
	for _, c := range got {
		if c.Endpoint.ID != ds[0].EndpointID || c.Event.ID != c.Delivery.EventID {
			t.Errorf("claim %s comes with endpoint %s, event %s", c.Delivery.ID, c.Endpoint.ID, c.Event.ID)
		}
	}
	if again, err := db.DeliveryClaim(ctx, params("c", now, 2)); err != nil || len(again) != 0 {
		t.Errorf("claim with b's two leases running = %v, %v; want none", ids(again), err)
	}
	// b's leases run out: claimed again, and b's late record is not b's
	// any more.
	later := now.Add(time.Minute)
	again, err := db.DeliveryClaim(ctx, params("d", later, 2))
	if want := []string{ds[2].ID, ds[3].ID}; err != nil || !slices.Equal(ids(again), want) {
		t.Fatalf("claim once b's leases ran out = %v, %v; want %v", ids(again), err, want)
	}
	if updated, _, err := db.DeliveryRecordAll(ctx, []store.AttemptRecord{record(got[0], "b")}, store.ClaimParams{}); err != nil || updated[0] {
		t.Errorf("record by b after d took the lease over = %v, %v; want the delivery left to d", updated, err)
	}
	if updated, _, err := db.DeliveryRecordAll(ctx, []store.AttemptRecord{record(again[0], "d"), record(again[1], "d")}, store.ClaimParams{}); err != nil || !slices.Equal(updated, []bool{true, true}) {
		t.Errorf("record by d = %v, %v; want both updated", updated, err)
	}
	for _, d := range ds {
		if got, err := db.DeliveryGet(ctx, d.ID); err != nil || got.Status != checkout.DeliverySucceeded {
			t.Errorf("delivery %s = %+v, %v; want succeeded", d.ID, got, err)
		}
	}
}

func testDeliveryCancelPending(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	ep := newEndpoint(t, db, m, checkout.ModeTest, checkout.AllEvents)
	other := newEndpoint(t, db, m, checkout.ModeTest, checkout.AllEvents)
	d1 := newDelivery(t, db, m, ep, base)
	d2 := newDelivery(t, db, m, ep, base)
	keep := newDelivery(t, db, m, other, base)
	var n int64
	inTx(t, db, func(tx checkout.Tx) error {
		var err error
		n, err = tx.DeliveryCancelPending(ctx, ep.ID, base.Add(time.Second))
		return err
	})
	if n != 2 {
		t.Errorf("DeliveryCancelPending = %d; want 2", n)
	}
	for id, want := range map[string]checkout.DeliveryStatus{d1.ID: checkout.DeliveryCanceled, d2.ID: checkout.DeliveryCanceled, keep.ID: checkout.DeliveryPending} {
		if got, _ := db.DeliveryGet(ctx, id); got.Status != want {
			t.Errorf("delivery %s = %s; want %s", id, got.Status, want)
		}
	}
}

// EventPurge deletes events created before the cut, with their finished
// deliveries and attempts; an event with a pending delivery stays.
func testEventPurge(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	ep := newEndpoint(t, db, m, checkout.ModeTest, checkout.AllEvents)
	cut := base.Add(time.Hour)
	lone := newEvent(m, checkout.ModeTest, checkout.EventCheckoutCreated, base)
	insertEvents(t, db, lone)
	done := newDelivery(t, db, m, ep, base)
	inTx(t, db, func(tx checkout.Tx) error { _, err := tx.DeliveryCancelPending(ctx, ep.ID, base); return err })
	pending := newDelivery(t, db, m, ep, base)
	recent := newDelivery(t, db, m, ep, cut)
	n, err := db.EventPurge(ctx, cut)
	if err != nil || n != 2 {
		t.Errorf("EventPurge = %d, %v; want 2 (the lone event, the finished delivery's)", n, err)
	}
	if _, err := db.EventGet(ctx, lone.ID); !checkout.IsCode(err, checkout.ENotFound) {
		t.Errorf("lone event: %v; want purged", err)
	}
	if _, err := db.DeliveryGet(ctx, done.ID); !checkout.IsCode(err, checkout.ENotFound) {
		t.Errorf("finished delivery: %v; want purged", err)
	}
	for _, d := range []*checkout.Delivery{pending, recent} {
		if _, err := db.DeliveryGet(ctx, d.ID); err != nil {
			t.Errorf("delivery %s: %v; want kept", d.ID, err)
		}
		if _, err := db.EventGet(ctx, d.EventID); err != nil {
			t.Errorf("event %s: %v; want kept", d.EventID, err)
		}
	}
}

package storetest

import (
	"context"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
)

// disputeTests are the conformance tests of disputes.
var disputeTests = []struct {
	name string
	fn   func(t *testing.T, db *store.DB)
}{
	{"Dispute/RoundTrip", testDisputeRoundTrip},
	{"Dispute/NotFound", testDisputeNotFound},
	{"Dispute/OnePerPayment", testDisputeOnePerPayment},
	{"Dispute/Lists", testDisputeLists},
}

// disputed stores a captured payment of s at created, disputed with plan,
// and its dispute.
func disputed(t *testing.T, db *store.DB, s *checkout.Session, plan checkout.DisputePlan, created time.Time) (*checkout.Payment, *checkout.Dispute) {
	t.Helper()
	p := capturedPayment(t, db, s, created)
	d, err := p.OpenDispute(plan, 1500, created)
	if err != nil {
		t.Fatal(err)
	}
	inTx(t, db, func(tx checkout.Tx) error {
		if err := tx.PaymentUpdate(context.Background(), p); err != nil {
			return err
		}
		return tx.DisputeInsert(context.Background(), d)
	})
	return p, d
}

// A dispute is stored and read back as it was made, by id and by payment;
// its evidence, who submitted it, its closing are written; the payment
// keeps what the dispute holds.
func testDisputeRoundTrip(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	s := insertSession(t, db, newSession(m, nil))
	p, d := disputed(t, db, s, checkout.DisputePlan{Reason: checkout.DisputeProductNotReceived, Status: checkout.DisputeNeedsResponse}, base)
	for _, get := range []func() (*checkout.Dispute, error){
		func() (*checkout.Dispute, error) { return db.DisputeGet(ctx, d.ID) },
		func() (*checkout.Dispute, error) { return db.DisputeGetByPayment(ctx, p.ID) },
	} {
		if got, err := get(); err != nil || !reflect.DeepEqual(got, d) {
			t.Errorf("the dispute read back =\n%+v, %v\nwant\n%+v", got, err, d)
		}
	}
	if got, err := db.PaymentGet(ctx, p.ID); err != nil || got.AmountDisputed != p.Amount || got.DisputeFee != 1500 || got.Status != checkout.PaymentDisputed {
		t.Errorf("the disputed payment = %+v, %v", got, err)
	}

	inTx(t, db, func(tx checkout.Tx) error {
		cur, err := tx.DisputeGetForUpdate(ctx, d.ID)
		if err != nil {
			return err
		}
		e := checkout.DisputeEvidence{ProductDescription: "Ünïcode \"quoted\" <b>", UncategorizedText: "line\nline", Note: "ours"}
		if err := cur.SubmitEvidence(e, checkout.Actor{Kind: checkout.ActorAccount, ID: "acct_1", Name: "jo@acme.example"}, base.Add(time.Hour)); err != nil {
			return err
		}
		d = cur
		return tx.DisputeUpdate(ctx, cur)
	})
	if got, err := db.DisputeGet(ctx, d.ID); err != nil || !reflect.DeepEqual(got, d) {
		t.Errorf("after evidence, DisputeGet =\n%+v, %v\nwant\n%+v", got, err, d)
	}
	inTx(t, db, func(tx checkout.Tx) error {
		pay, err := tx.PaymentGetForUpdate(ctx, p.ID)
		if err != nil {
			return err
		}
		cur, err := tx.DisputeGetForUpdate(ctx, d.ID)
		if err != nil {
			return err
		}
		if err := cur.Close(pay, checkout.DisputeLost, base.Add(2*time.Hour)); err != nil {
			return err
		}
		d, p = cur, pay
		if err := tx.DisputeUpdate(ctx, cur); err != nil {
			return err
		}
		return tx.PaymentUpdate(ctx, pay)
	})
	if got, err := db.DisputeGet(ctx, d.ID); err != nil || !reflect.DeepEqual(got, d) || got.Status != checkout.DisputeLost || got.ClosedAt == nil {
		t.Errorf("after closing, DisputeGet =\n%+v, %v\nwant\n%+v", got, err, d)
	}
	if got, _ := db.PaymentGet(ctx, p.ID); got.Status != checkout.PaymentDisputeLost || got.Net() != p.Net() {
		t.Errorf("the payment of the lost dispute = %s, net %d; want dispute_lost, net %d", got.Status, got.Net(), p.Net())
	}
}

func testDisputeNotFound(t *testing.T, db *store.DB) {
	ctx := context.Background()
	if _, err := db.DisputeGet(ctx, "dp_nope"); !checkout.IsCode(err, checkout.ENotFound) {
		t.Errorf("DisputeGet of an unknown id = %v; want not_found", err)
	}
	if _, err := db.DisputeGetByPayment(ctx, "pay_nope"); !checkout.IsCode(err, checkout.ENotFound) {
		t.Errorf("DisputeGetByPayment of an undisputed payment = %v; want not_found", err)
	}
	err := db.InTx(ctx, func(tx checkout.Tx) error {
		if _, err := tx.DisputeGetForUpdate(ctx, "dp_nope"); !checkout.IsCode(err, checkout.ENotFound) {
			t.Errorf("DisputeGetForUpdate of an unknown id = %v; want not_found", err)
		}
		if err := tx.DisputeUpdate(ctx, &checkout.Dispute{ID: "dp_nope"}); !checkout.IsCode(err, checkout.ENotFound) {
			t.Errorf("DisputeUpdate of an unknown dispute = %v; want not_found", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A payment is disputed once: a second dispute of it is a conflict.
func testDisputeOnePerPayment(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	s := insertSession(t, db, newSession(m, nil))
	_, d := disputed(t, db, s, checkout.DefaultDisputePlan, base)
	again := *d
	again.ID = checkout.NewDisputeID()
	err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.DisputeInsert(ctx, &again) })
	wantCode(t, "DisputeInsert(a second of one payment)", err, checkout.EConflict)
}

// DisputeListDue lists what is due, the longest due first, not closed
// disputes; DisputeListOpen a store's open disputes of one mode, the
// nearest deadline first.
func testDisputeLists(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	other := newMerchant(t, db, "Other", base)
	ids := func(ds []*checkout.Dispute) []string {
		var out []string
		for _, d := range ds {
			out = append(out, d.ID)
		}
		return out
	}
	_, later := disputed(t, db, insertSession(t, db, newSession(m, nil)), checkout.DefaultDisputePlan, base.Add(time.Hour))
	_, sooner := disputed(t, db, insertSession(t, db, newSession(m, nil)), checkout.DefaultDisputePlan, base)
	p, closed := disputed(t, db, insertSession(t, db, newSession(m, nil)), checkout.DefaultDisputePlan, base)
	disputed(t, db, insertSession(t, db, newSession(other, nil)), checkout.DefaultDisputePlan, base)
	live := newSession(m, func(s *checkout.Session) { s.Mode = checkout.ModeLive })
	disputed(t, db, insertSession(t, db, live), checkout.DefaultDisputePlan, base)
	inTx(t, db, func(tx checkout.Tx) error {
		closed.Close(p, checkout.DisputeWon, base)
		if err := tx.PaymentUpdate(ctx, p); err != nil {
			return err
		}
		return tx.DisputeUpdate(ctx, closed)
	})

	got, err := db.DisputeListOpen(ctx, m.ID, checkout.ModeTest, 10)
	if want := []string{sooner.ID, later.ID}; err != nil || !reflect.DeepEqual(ids(got), want) {
		t.Errorf("DisputeListOpen = %v, %v; want the store's open test ones, nearest deadline first: %v", ids(got), err, want)
	}
	if got, _ := db.DisputeListOpen(ctx, m.ID, checkout.ModeTest, 1); len(got) != 1 || got[0].ID != sooner.ID {
		t.Errorf("DisputeListOpen with limit 1 = %v", ids(got))
	}
	due, err := db.DisputeListDue(ctx, base.Add(checkout.DisputeEvidenceWindow), 10)
	if err != nil || len(due) != 3 || slices.Contains(ids(due), closed.ID) || slices.Contains(ids(due), later.ID) {
		t.Errorf("DisputeListDue at the first deadlines = %v, %v; want the 3 open ones due then: not the closed one, nor the one due an hour later", ids(due), err)
	}
	if due, _ := db.DisputeListDue(ctx, base.Add(checkout.DisputeEvidenceWindow-time.Millisecond), 10); len(due) != 0 {
		t.Errorf("DisputeListDue before any deadline = %v; want none", ids(due))
	}
}

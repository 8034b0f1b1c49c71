package service_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

var member = checkout.Actor{Kind: checkout.ActorAccount, ID: "acct_1", Name: "jo@acme.example"}

// disputedByCard pays a session with a dispute test card and runs the
// payments job once the dispute is due; it returns the payment and its
// dispute.
func (f *payFixture) disputedByCard(t *testing.T, number string) (*checkout.Payment, *checkout.Dispute) {
	t.Helper()
	p := f.paidByCard(t, number)
	f.clock.Advance(checkout.DisputeDelay)
	f.processDue(t)
	got, err := f.db.PaymentGet(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	d, err := f.svc.DisputeOfPayment(ctx, p.ID)
	if err != nil || d == nil {
		t.Fatalf("the dispute of %s = %v, %v", p.ID, d, err)
	}
	return got, d
}

// paymentEvents returns the payments carried by the events of type typ
// about payment id, oldest first.
func (f *payFixture) paymentEvents(t *testing.T, typ, id string) []checkout.PaymentJSON {
	t.Helper()
	var out []checkout.PaymentJSON
	es := f.events(t, typ)
	for i := len(es) - 1; i >= 0; i-- {
		var p checkout.PaymentJSON
		if err := json.Unmarshal(es[i].Object, &p); err != nil {
			t.Fatal(err)
		}
		if p.ID == id {
			out = append(out, p)
		}
	}
	return out
}

// A dispute answered with winning evidence: opened with the payment's
// amount and the store's fee held from its net (payment.disputed), under
// review once answered, won a moment later: the payment succeeded again,
// its net whole, and payment.dispute_closed sent, once.
func TestDisputeWon(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPayFixture(t, db)
		p, d := f.disputedByCard(t, "4000000000000259")
		net := int64(1500 - 74)
		if p.Status != checkout.PaymentDisputed || p.Net() != net-1500-1500 || d.Status != checkout.DisputeNeedsResponse || d.Reason != checkout.DisputeFraudulent ||
			d.Fee != 1500 || d.Amount != 1500 {
			t.Fatalf("opened: payment %s, net %d; dispute %+v", p.Status, p.Net(), d)
		}
		if ev := f.paymentEvents(t, checkout.EventPaymentDisputed, p.ID); len(ev) != 1 || ev[0].Status != checkout.PaymentDisputed || ev[0].Net != p.Net() {
			t.Errorf("payment.disputed events = %+v; want one, disputed", ev)
		}
		scope := checkout.Scope{MerchantID: f.m.ID, Mode: checkout.ModeTest}
		got, err := f.svc.SubmitDisputeEvidence(ctx, service.DisputeEvidenceRequest{Scope: scope, DisputeID: d.ID, By: member,
			Evidence: checkout.DisputeEvidence{ProductDescription: "A sword.", UncategorizedText: "Signed for on delivery: winning_evidence"}})
		if err != nil || got.Status != checkout.DisputeUnderReview || *got.SubmittedBy != member {
			t.Fatalf("SubmitDisputeEvidence = %+v, %v", got, err)
		}
		f.clock.Advance(checkout.DisputeDecisionDelay - time.Second)
		if n := f.processDue(t); n != 0 {
			t.Errorf("the job closed %d before the decision's time", n)
		}
		f.clock.Advance(time.Second)
		f.processDue(t)
		f.processDue(t)
		d, _ = f.svc.DisputeOfPayment(ctx, p.ID)
		p, _ = db.PaymentGet(ctx, p.ID)
		if d.Status != checkout.DisputeWon || d.ClosedAt == nil || p.Status != checkout.PaymentSucceeded || p.Net() != net {
			t.Errorf("decided: dispute %s; payment %s, net %d; want won, succeeded, %d", d.Status, p.Status, p.Net(), net)
		}
		if ev := f.paymentEvents(t, checkout.EventPaymentDisputeClosed, p.ID); len(ev) != 1 || ev[0].Status != checkout.PaymentSucceeded || ev[0].Net != net {
			t.Errorf("payment.dispute_closed events = %+v; want one, the payment succeeded again", ev)
		}
	})
}

// A dispute left unanswered is lost at its deadline, not a second before:
// the payment is dispute_lost, its net less the amount and the fee, and
// payment.dispute_closed is sent; evidence after the deadline is refused.
func TestDisputeLostUnanswered(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPayFixture(t, db)
		p, d := f.disputedByCard(t, "4000000000002685")
		if d.Reason != checkout.DisputeProductNotReceived || d.Status != checkout.DisputeNeedsResponse {
			t.Errorf("the card 2685 opened %s, %s; want product_not_received, needs_response", d.Reason, d.Status)
		}
		f.clock.Set(d.EvidenceDueBy.Add(-time.Second))
		if n := f.processDue(t); n != 0 {
			t.Errorf("the job closed %d a second before the deadline", n)
		}
		f.clock.Set(d.EvidenceDueBy)
		f.processDue(t)
		d, _ = f.svc.DisputeOfPayment(ctx, p.ID)
		p, _ = db.PaymentGet(ctx, p.ID)
		if d.Status != checkout.DisputeLost || p.Status != checkout.PaymentDisputeLost || p.Net() != 1500-74-1500-1500 {
			t.Errorf("at the deadline: dispute %s; payment %s, net %d", d.Status, p.Status, p.Net())
		}
		if ev := f.paymentEvents(t, checkout.EventPaymentDisputeClosed, p.ID); len(ev) != 1 || ev[0].Status != checkout.PaymentDisputeLost {
			t.Errorf("payment.dispute_closed events = %+v; want one, dispute_lost", ev)
		}
		_, err := f.svc.SubmitDisputeEvidence(ctx, service.DisputeEvidenceRequest{DisputeID: d.ID, By: member,
			Evidence: checkout.DisputeEvidence{UncategorizedText: "winning_evidence"}})
		if !checkout.IsCode(err, checkout.EDisputeClosed) {
			t.Errorf("evidence after the deadline = %v; want dispute_not_open", err)
		}
	})
}

// Evidence that does not win loses a moment after it is in; the card
// 4000 0000 0000 1976 opens its dispute under review. Evidence for a
// dispute of another store or mode, or an unknown one, is
// dispute_not_found; a second answer dispute_not_open.
func TestDisputeEvidence(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPayFixture(t, db)
		p, d := f.disputedByCard(t, "4000000000001976")
		if d.Reason != checkout.DisputeGeneral || d.Status != checkout.DisputeUnderReview {
			t.Errorf("the card 1976 opened %s, %s; want general, under_review", d.Reason, d.Status)
		}
		req := service.DisputeEvidenceRequest{Scope: checkout.Scope{MerchantID: f.m.ID, Mode: checkout.ModeTest}, DisputeID: d.ID, By: member,
			Evidence: checkout.DisputeEvidence{UncategorizedText: "losing_evidence"}}
		for _, scope := range []checkout.Scope{{MerchantID: f.m.ID, Mode: checkout.ModeLive}, {MerchantID: checkout.NewStoreID(), Mode: checkout.ModeTest}} {
			other := req
			other.Scope = scope
			if _, err := f.svc.SubmitDisputeEvidence(ctx, other); !checkout.IsCode(err, checkout.EDisputeNotFound) {
				t.Errorf("evidence from the scope %+v = %v; want dispute_not_found", scope, err)
			}
		}
		unknown := req
		last := "0" // another dispute's id: the last digit changed
		if strings.HasSuffix(d.ID, last) {
			last = "1"
		}
		unknown.DisputeID = d.ID[:len(d.ID)-1] + last
		if _, err := f.svc.SubmitDisputeEvidence(ctx, unknown); !checkout.IsCode(err, checkout.EDisputeNotFound) {
			t.Errorf("evidence for an unknown dispute = %v; want dispute_not_found", err)
		}
		if _, err := f.svc.SubmitDisputeEvidence(ctx, req); err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.SubmitDisputeEvidence(ctx, req); !checkout.IsCode(err, checkout.EDisputeClosed) {
			t.Errorf("a second answer = %v; want dispute_not_open", err)
		}
		f.clock.Advance(checkout.DisputeDecisionDelay)
		f.processDue(t)
		if d, _ := f.svc.DisputeOfPayment(ctx, p.ID); d.Status != checkout.DisputeLost {
			t.Errorf("losing evidence: %s; want lost", d.Status)
		}
		if open, err := f.svc.OpenDisputes(ctx, req.Scope); err != nil || len(open) != 0 {
			t.Errorf("open disputes after it closed = %v, %v; want none", open, err)
		}
	})
}

// The store's dispute fee, when set, is charged instead of the default.
func TestDisputeStoreFee(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPayFixture(t, db)
		pricing := checkout.DefaultPricing
		pricing.DisputeFee = 2500
		m := *f.m
		m.Pricing = pricing
		if err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.MerchantUpdate(ctx, &m) }); err != nil {
			t.Fatal(err)
		}
		f.cache.Advance(time.Minute) // the service's cached store is stale
		p, d := f.disputedByCard(t, "4000000000000259")
		if d.Fee != 2500 || p.DisputeFee != 2500 {
			t.Errorf("dispute fee = %d, held %d; want the store's 2500", d.Fee, p.DisputeFee)
		}
		if open, _ := f.svc.OpenDisputes(ctx, checkout.Scope{MerchantID: f.m.ID, Mode: checkout.ModeTest}); len(open) != 1 || open[0].ID != d.ID {
			t.Errorf("open disputes = %v; want %s", open, d.ID)
		}
	})
}

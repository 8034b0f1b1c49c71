package checkout_test

import (
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

var support = checkout.Actor{Kind: checkout.ActorAccount, ID: "acct_2", Name: "support@acme.example"}

// openDispute returns a payment of 5000 that succeeded, had 1000 refunded,
// and is disputed with a fee of 1500, with its dispute.
func openDispute(t *testing.T, plan checkout.DisputePlan) (*checkout.Payment, *checkout.Dispute) {
	t.Helper()
	p := succeededPayment(t, checkout.MethodCard)
	r, err := checkout.NewRefund(p, checkout.RefundParams{Amount: ptr[int64](1000)}, merchantActor, t0)
	if err != nil {
		t.Fatal(err)
	}
	r.Succeed(p, t0)
	d, err := p.OpenDispute(plan, 1500, t0)
	if err != nil {
		t.Fatal(err)
	}
	return p, d
}

// A dispute takes back what is left of the payment, and its fee, out of
// the payment's net while it is open; its evidence is due in 7 days.
func TestOpenDispute(t *testing.T) {
	p, d := openDispute(t, checkout.DefaultDisputePlan)
	fee := p.Fee
	if p.Status != checkout.PaymentDisputed || p.AmountDisputed != 4000 || p.DisputeFee != 1500 || p.Net() != 5000-fee-1000-4000-1500 {
		t.Errorf("disputed payment: %s, disputed %d, fee %d, net %d", p.Status, p.AmountDisputed, p.DisputeFee, p.Net())
	}
	if !strings.HasPrefix(d.ID, "dp_") || len(d.ID) != 35 || d.Amount != 4000 || d.Fee != 1500 || d.Status != checkout.DisputeNeedsResponse ||
		d.Reason != checkout.DisputeFraudulent || !d.EvidenceDueBy.Equal(t0.Add(7*24*time.Hour).Truncate(time.Second)) || d.DueAt == nil {
		t.Errorf("dispute = %+v", d)
	}
	if _, err := p.OpenDispute(checkout.DefaultDisputePlan, 1500, t0); !checkout.IsCode(err, checkout.EConflict) {
		t.Errorf("disputing a disputed payment = %v; want a conflict", err)
	}
	_, d = openDispute(t, checkout.DisputePlan{Reason: checkout.DisputeGeneral, Status: checkout.DisputeUnderReview})
	if d.Status != checkout.DisputeUnderReview || d.Reason != checkout.DisputeGeneral {
		t.Errorf("a dispute opened under review = %s, %s", d.Status, d.Reason)
	}
}

// Evidence: at least one text for the card network, each at most
// MaxEvidenceLen characters, no control characters but line breaks and
// tabs; before the deadline, once. It puts the dispute under review, to be
// decided a moment later.
func TestSubmitEvidence(t *testing.T) {
	for _, tt := range []struct {
		name  string
		e     checkout.DisputeEvidence
		param string
	}{
		{"nothing", checkout.DisputeEvidence{}, "uncategorized_text"},
		{"only a note", checkout.DisputeEvidence{Note: "call them"}, "uncategorized_text"},
		{"blank", checkout.DisputeEvidence{ProductDescription: "  \n "}, "uncategorized_text"},
		{"too long", checkout.DisputeEvidence{CustomerCommunication: strings.Repeat("é", checkout.MaxEvidenceLen+1)}, "customer_communication"},
		{"a control character", checkout.DisputeEvidence{RefundPolicy: "no\x00refunds"}, "refund_policy"},
	} {
		_, d := openDispute(t, checkout.DefaultDisputePlan)
		err := d.SubmitEvidence(tt.e, support, t0.Add(time.Hour))
		if !checkout.IsCode(err, checkout.EValidationFailed) || paramOf(err) != tt.param || d.SubmittedAt != nil || d.Status != checkout.DisputeNeedsResponse {
			t.Errorf("%s: SubmitEvidence = %v (param %q), dispute %s; want validation_failed on %s, nothing changed", tt.name, err, paramOf(err), d.Status, tt.param)
		}
	}
	_, d := openDispute(t, checkout.DefaultDisputePlan)
	at := t0.Add(time.Hour)
	e := checkout.DisputeEvidence{ShippingDocumentation: strings.Repeat("x", checkout.MaxEvidenceLen), UncategorizedText: "line one\n\tline two", Note: " ours "}
	if err := d.SubmitEvidence(e, support, at); err != nil {
		t.Fatal(err)
	}
	if d.Status != checkout.DisputeUnderReview || !d.SubmittedAt.Equal(at) || *d.SubmittedBy != support || !d.DueAt.Equal(at.Add(checkout.DisputeDecisionDelay)) || d.Evidence.Note != "ours" {
		t.Errorf("after evidence: %+v", d)
	}
	if err := d.SubmitEvidence(e, support, at); !checkout.IsCode(err, checkout.EDisputeClosed) {
		t.Errorf("evidence twice = %v; want dispute_not_open", err)
	}
	_, late := openDispute(t, checkout.DefaultDisputePlan)
	if err := late.SubmitEvidence(e, support, late.EvidenceDueBy); !checkout.IsCode(err, checkout.EDisputeClosed) {
		t.Errorf("evidence at the deadline = %v; want dispute_not_open", err)
	}
	if err := late.SubmitEvidence(e, support, late.EvidenceDueBy.Add(-time.Second)); err != nil {
		t.Errorf("evidence a second before the deadline = %v", err)
	}
}

// Test mode's card network decides by the evidence, a moment after it is
// in: winning_evidence wins, anything else loses; unanswered, the dispute
// is lost at its deadline, not a second before.
func TestDisputeDecision(t *testing.T) {
	for _, tt := range []struct {
		text string
		want checkout.DisputeStatus
	}{
		{"Delivered, signed for: winning_evidence", checkout.DisputeWon},
		{"losing_evidence", checkout.DisputeLost},
		{"winning_evidence and losing_evidence", checkout.DisputeLost},
		{"We shipped it.", checkout.DisputeLost},
	} {
		_, d := openDispute(t, checkout.DefaultDisputePlan)
		if err := d.SubmitEvidence(checkout.DisputeEvidence{UncategorizedText: tt.text}, support, t0); err != nil {
			t.Fatal(err)
		}
		if got := d.Decision(t0.Add(checkout.DisputeDecisionDelay - time.Millisecond)); got != "" {
			t.Errorf("%q: decided %s before the delay", tt.text, got)
		}
		if got := d.Decision(t0.Add(checkout.DisputeDecisionDelay)); got != tt.want {
			t.Errorf("%q: decided %q; want %s", tt.text, got, tt.want)
		}
	}
	// The note is not evidence.
	_, d := openDispute(t, checkout.DefaultDisputePlan)
	d.SubmitEvidence(checkout.DisputeEvidence{UncategorizedText: "see note", Note: checkout.WinningEvidence}, support, t0)
	if got := d.Decision(t0.Add(time.Hour)); got != checkout.DisputeLost {
		t.Errorf("winning_evidence in the note alone = %s; want lost", got)
	}
	_, d = openDispute(t, checkout.DefaultDisputePlan)
	if got := d.Decision(d.EvidenceDueBy.Add(-time.Second)); got != "" {
		t.Errorf("unanswered, a second before the deadline: %s", got)
	}
	if got := d.Decision(d.EvidenceDueBy); got != checkout.DisputeLost {
		t.Errorf("unanswered at the deadline: %q; want lost", got)
	}
}

// Won, the payment is as it was (partially refunded here) and its net
// whole again; lost, it is dispute_lost and its net less the dispute's
// amount and fee. A closed dispute closes no more.
func TestCloseDispute(t *testing.T) {
	p, d := openDispute(t, checkout.DefaultDisputePlan)
	before := 5000 - p.Fee - 1000
	if err := d.Close(p, checkout.DisputeWon, t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if p.Status != checkout.PaymentPartiallyRefunded || p.Net() != before || d.Status != checkout.DisputeWon || d.ClosedAt == nil || d.DueAt != nil {
		t.Errorf("won: payment %s, net %d (want %d); dispute %+v", p.Status, p.Net(), before, d)
	}
	if err := d.Close(p, checkout.DisputeLost, t0.Add(time.Hour)); !checkout.IsCode(err, checkout.EConflict) {
		t.Errorf("closing a closed dispute = %v; want a conflict", err)
	}

	p, d = openDispute(t, checkout.DefaultDisputePlan)
	if err := d.Close(p, checkout.DisputeLost, t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if p.Status != checkout.PaymentDisputeLost || p.Net() != before-4000-1500 || !p.Status.Captured() {
		t.Errorf("lost: payment %s, net %d; want dispute_lost, net %d", p.Status, p.Net(), before-4000-1500)
	}
	if _, err := checkout.NewRefund(p, checkout.RefundParams{}, merchantActor, t0); !checkout.IsCode(err, checkout.EPaymentNotRefundable) {
		t.Errorf("refunding a payment whose dispute was lost = %v; want payment_not_refundable", err)
	}

	// Won without refunds: succeeded again.
	p = succeededPayment(t, checkout.MethodCard)
	d, _ = p.OpenDispute(checkout.DefaultDisputePlan, 1500, t0)
	d.Close(p, checkout.DisputeWon, t0)
	if p.Status != checkout.PaymentSucceeded || p.AmountDisputed != 0 || p.DisputeFee != 0 {
		t.Errorf("won, nothing refunded: %s, disputed %d, fee %d; want succeeded, 0, 0", p.Status, p.AmountDisputed, p.DisputeFee)
	}
}

// The dispute fee is 15 whole units of the payment's currency by default,
// or the store's own; 0 to 100000 minor units may be set.
func TestDisputeFee(t *testing.T) {
	for _, tt := range []struct {
		fee      int64
		currency string
		want     int64
	}{
		{-1, "USD", 1500}, {-1, "JPY", 15}, {-1, "KWD", 15000}, {0, "USD", 0}, {2500, "EUR", 2500}, {2500, "JPY", 2500},
	} {
		p := checkout.DefaultPricing
		p.DisputeFee = tt.fee
		if got := p.DisputeFeeFor(tt.currency); got != tt.want {
			t.Errorf("DisputeFeeFor(%s) with %d = %d; want %d", tt.currency, tt.fee, got, tt.want)
		}
	}
	for fee, ok := range map[int64]bool{-2: false, -1: true, 0: true, 100000: true, 100001: false} {
		p := checkout.DefaultPricing
		p.DisputeFee = fee
		if err := p.Validate(); (err == nil) != ok {
			t.Errorf("Validate with a dispute fee of %d = %v; want ok %v", fee, err, ok)
		}
	}
}

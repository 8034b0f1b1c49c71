package checkout

import (
	"fmt"
	"strings"
	"time"
)

// DisputeStatus is the state of a dispute.
//
//	needs_response ──(evidence)──► under_review ──► won | lost
//	      │                                              ▲
//	      └────────────(no evidence by the deadline)─────┘ lost
type DisputeStatus string

// Dispute statuses.
const (
	DisputeNeedsResponse DisputeStatus = "needs_response"
	DisputeUnderReview   DisputeStatus = "under_review"
	DisputeWon           DisputeStatus = "won"
	DisputeLost          DisputeStatus = "lost"
)

// DisputeStatuses lists every status, in the order of a dispute's life.
var DisputeStatuses = []DisputeStatus{DisputeNeedsResponse, DisputeUnderReview, DisputeWon, DisputeLost}

// Closed reports whether the dispute is decided.
func (s DisputeStatus) Closed() bool { return s == DisputeWon || s == DisputeLost }

// DisputeReason is why the buyer's bank disputes the payment, as card
// networks name the reasons.
type DisputeReason string

// Dispute reasons.
const (
	DisputeFraudulent         DisputeReason = "fraudulent"
	DisputeProductNotReceived DisputeReason = "product_not_received"
	DisputeDuplicate          DisputeReason = "duplicate"
	DisputeGeneral            DisputeReason = "general"
)

// DisputeReasons lists every reason.
var DisputeReasons = []DisputeReason{DisputeFraudulent, DisputeProductNotReceived, DisputeDuplicate, DisputeGeneral}

// DisputePlan is a dispute a test card opens a moment after its payment
// succeeds (DisputeDelay): why, and in which status.
type DisputePlan struct {
	Reason DisputeReason `json:"reason"`
	Status DisputeStatus `json:"status"`
}

// DefaultDisputePlan is the plan of the first dispute test card, 4000 0000
// 0000 0259, and of payments disputed before plans were kept.
var DefaultDisputePlan = DisputePlan{Reason: DisputeFraudulent, Status: DisputeNeedsResponse}

// Test mode's dispute timing: the deadline for evidence after a dispute
// opens, and how long the card network takes to decide once evidence is in.
const (
	DisputeEvidenceWindow = 7 * 24 * time.Hour
	DisputeDecisionDelay  = time.Minute
)

// The words test mode's card network decides by (as Stripe's test mode):
// evidence containing WinningEvidence wins; any other loses.
const (
	WinningEvidence = "winning_evidence"
	LosingEvidence  = "losing_evidence"
)

// MaxEvidenceLen bounds each evidence text, in characters.
const MaxEvidenceLen = 20000

// DisputeEvidence is what the merchant answers a dispute with: texts the
// card network reads, and a note of the merchant's own, which it does not.
type DisputeEvidence struct {
	ProductDescription    string `json:"product_description,omitempty"`
	CustomerCommunication string `json:"customer_communication,omitempty"`
	ShippingDocumentation string `json:"shipping_documentation,omitempty"`
	RefundPolicy          string `json:"refund_policy,omitempty"`
	UncategorizedText     string `json:"uncategorized_text,omitempty"`
	// Note is the merchant's own, kept with the dispute, never sent.
	Note string `json:"note,omitempty"`
}

// texts returns the evidence's fields with their names, the note last.
func (e *DisputeEvidence) texts() []struct {
	name string
	text *string
} {
	return []struct {
		name string
		text *string
	}{
		{"product_description", &e.ProductDescription},
		{"customer_communication", &e.CustomerCommunication},
		{"shipping_documentation", &e.ShippingDocumentation},
		{"refund_policy", &e.RefundPolicy},
		{"uncategorized_text", &e.UncategorizedText},
		{"note", &e.Note},
	}
}

// Submitted reports whether any text for the card network is given (the
// note does not count).
func (e *DisputeEvidence) Submitted() bool {
	for _, t := range e.texts()[:5] {
		if *t.text != "" {
			return true
		}
	}
	return false
}

// contains reports whether a text for the card network contains word.
func (e *DisputeEvidence) contains(word string) bool {
	for _, t := range e.texts()[:5] {
		if strings.Contains(*t.text, word) {
			return true
		}
	}
	return false
}

// Dispute is a buyer's bank's challenge of a payment: while it is open the
// payment's amount (less what was refunded) and the dispute fee are held
// from the merchant; won, both come back; lost, both are gone.
type Dispute struct {
	ID         string
	PaymentID  string
	SessionID  string
	MerchantID string
	Mode       Mode
	// Amount is what the buyer's bank takes back, in the payment's
	// currency's minor units: what was left of the payment.
	Amount   int64
	Currency string
	Reason   DisputeReason
	Status   DisputeStatus
	// Fee is what the card network charges for the dispute, from the
	// store's pricing; returned when the dispute is won.
	Fee           int64
	EvidenceDueBy time.Time
	Evidence      DisputeEvidence
	SubmittedAt   *time.Time
	// SubmittedBy is who sent the evidence.
	SubmittedBy *Actor
	ClosedAt    *time.Time
	// DueAt is when the payments job next looks at the dispute: its
	// deadline, or the decision once evidence is in; nil once closed.
	DueAt     *time.Time
	CreatedAt time.Time
	UpdatedAt time.Time
}

// OpenDispute moves a captured payment that is not yet disputed to
// disputed, holding from its net what the dispute takes back (what is left
// of it) and the fee, and returns the dispute, opened by plan at now.
func (p *Payment) OpenDispute(plan DisputePlan, fee int64, now time.Time) (*Dispute, error) {
	if p.Status != PaymentSucceeded && p.Status != PaymentPartiallyRefunded {
		return nil, Errorf(EConflict, "payment %s cannot be disputed: it is %s", p.ID, p.Status)
	}
	if plan.Status != DisputeNeedsResponse && plan.Status != DisputeUnderReview {
		return nil, fmt.Errorf("a dispute cannot open %s", plan.Status)
	}
	now = now.Truncate(time.Millisecond)
	amount := p.Amount - p.AmountRefunded
	p.Status = PaymentDisputed
	p.AmountDisputed = amount
	p.DisputeFee = fee
	p.DueAt = nil
	p.UpdatedAt = now
	due := now.Add(DisputeEvidenceWindow)
	return &Dispute{
		ID:            NewDisputeID(),
		PaymentID:     p.ID,
		SessionID:     p.SessionID,
		MerchantID:    p.MerchantID,
		Mode:          p.Mode,
		Amount:        amount,
		Currency:      p.Currency,
		Reason:        plan.Reason,
		Status:        plan.Status,
		Fee:           fee,
		EvidenceDueBy: due.Truncate(time.Second),
		DueAt:         &due,
		CreatedAt:     now,
		UpdatedAt:     now,
	}, nil
}

// SubmitEvidence answers an open dispute, before its deadline: it goes
// under review, decided DisputeDecisionDelay later. Each text is at most
// MaxEvidenceLen characters, without control characters but line breaks
// and tabs; at least one for the card network is needed.
func (d *Dispute) SubmitEvidence(e DisputeEvidence, by Actor, now time.Time) error {
	if d.Status.Closed() {
		return Errorf(EDisputeClosed, "Dispute %s is %s: it takes no more evidence.", d.ID, d.Status)
	}
	if d.SubmittedAt != nil {
		return Errorf(EDisputeClosed, "Dispute %s has its evidence already: the card network is reviewing it.", d.ID)
	}
	if !now.Before(d.EvidenceDueBy) {
		return Errorf(EDisputeClosed, "Dispute %s's deadline for evidence has passed.", d.ID)
	}
	var v violations
	for _, t := range e.texts() {
		*t.text = strings.TrimSpace(*t.text)
		if *t.text != "" {
			v.checkText(t.name, *t.text, 1, MaxEvidenceLen, true)
		}
	}
	if !e.Submitted() && len(v) == 0 {
		v.add("required", "uncategorized_text", "Give the card network some evidence: at least one of the texts, the note aside.")
	}
	if err := v.err(); err != nil {
		return err
	}
	now = now.Truncate(time.Millisecond)
	d.Evidence = e
	d.SubmittedAt = &now
	d.SubmittedBy = &by
	d.Status = DisputeUnderReview
	due := now.Add(DisputeDecisionDelay)
	d.DueAt = &due
	d.UpdatedAt = now
	return nil
}

// Decision is test mode's card network deciding d at now: won when its
// evidence contains WinningEvidence, lost with any other evidence, or with
// none once the deadline for evidence has passed; "" when it is not time
// yet.
func (d *Dispute) Decision(now time.Time) DisputeStatus {
	switch {
	case d.Status.Closed():
		return ""
	case d.SubmittedAt != nil && !now.Before(d.SubmittedAt.Add(DisputeDecisionDelay)):
		if d.Evidence.contains(WinningEvidence) && !d.Evidence.contains(LosingEvidence) {
			return DisputeWon
		}
		return DisputeLost
	case d.SubmittedAt == nil && !now.Before(d.EvidenceDueBy):
		return DisputeLost
	}
	return ""
}

// Close decides d won or lost at now, and its payment p follows: won, the
// payment is as it was before (succeeded, or partially refunded) and what
// the dispute held comes back; lost, it is dispute_lost and what the
// dispute held is gone from its net.
func (d *Dispute) Close(p *Payment, outcome DisputeStatus, now time.Time) error {
	if d.Status.Closed() {
		return Errorf(EConflict, "dispute %s is %s already", d.ID, d.Status)
	}
	if p.ID != d.PaymentID || p.Status != PaymentDisputed {
		return fmt.Errorf("dispute %s: payment %s is %s, not disputed", d.ID, p.ID, p.Status)
	}
	now = now.Truncate(time.Millisecond)
	switch outcome {
	case DisputeWon:
		p.Status = PaymentSucceeded
		if p.AmountRefunded > 0 {
			p.Status = PaymentPartiallyRefunded
		}
		p.AmountDisputed, p.DisputeFee = 0, 0
	case DisputeLost:
		p.Status = PaymentDisputeLost
	default:
		return fmt.Errorf("a dispute closes won or lost, not %q", outcome)
	}
	p.UpdatedAt = now
	d.Status = outcome
	d.ClosedAt = &now
	d.DueAt = nil
	d.UpdatedAt = now
	return nil
}

// DisputeJSON is a dispute as the API and the CLI show it.
type DisputeJSON struct {
	ID            string           `json:"id"`
	Object        string           `json:"object"`
	Livemode      bool             `json:"livemode"`
	PaymentID     string           `json:"payment_id"`
	CheckoutID    string           `json:"checkout_id"`
	Amount        int64            `json:"amount"`
	Currency      string           `json:"currency"`
	Reason        DisputeReason    `json:"reason"`
	Status        DisputeStatus    `json:"status"`
	Fee           int64            `json:"fee"`
	EvidenceDueBy int64            `json:"evidence_due_by"`
	Evidence      *DisputeEvidence `json:"evidence"`
	SubmittedAt   *int64           `json:"submitted_at"`
	SubmittedBy   *ActorJSON       `json:"submitted_by"`
	ClosedAt      *int64           `json:"closed_at"`
	CreatedAt     int64            `json:"created_at"`
}

// View returns d as the API shows it.
func (d *Dispute) View() *DisputeJSON {
	v := &DisputeJSON{
		ID: d.ID, Object: "dispute", Livemode: d.Mode.Live(), PaymentID: d.PaymentID, CheckoutID: d.SessionID,
		Amount: d.Amount, Currency: d.Currency, Reason: d.Reason, Status: d.Status, Fee: d.Fee,
		EvidenceDueBy: d.EvidenceDueBy.Unix(), SubmittedAt: unixPtr(d.SubmittedAt), ClosedAt: unixPtr(d.ClosedAt), CreatedAt: d.CreatedAt.Unix(),
	}
	if d.SubmittedAt != nil {
		e := d.Evidence
		v.Evidence = &e
	}
	if d.SubmittedBy != nil {
		a := d.SubmittedBy.view()
		v.SubmittedBy = &a
	}
	return v
}

func unixPtr(t *time.Time) *int64 {
	if t == nil {
		return nil
	}
	u := t.Unix()
	return &u
}

// DisputeFeeFor returns the dispute fee of pricing in currency: the set
// amount of minor units, or, by default (a negative DisputeFee), 15 whole
// units of the currency (15.00 USD, 15 JPY).
func (p Pricing) DisputeFeeFor(currency string) int64 {
	if p.DisputeFee >= 0 {
		return p.DisputeFee
	}
	fee := int64(15)
	for range CurrencyExponent(currency) {
		fee *= 10
	}
	return fee
}

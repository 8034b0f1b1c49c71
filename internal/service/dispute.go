package service

import (
	"context"
	"errors"
	"fmt"

	"github.com/checkoutd/checkoutd/checkout"
)

// Disputes. A buyer's bank disputes a captured payment (in test mode, the
// dispute test cards, a moment after the payment succeeds): the payment
// turns disputed, holding from its net what the dispute takes back and the
// fee, and payment.disputed is recorded with the dispute, in one
// transaction. The merchant answers with evidence (SubmitDisputeEvidence)
// before the deadline; test mode's card network decides a moment later,
// by the evidence (checkout.Dispute.Decision), or, unanswered, at the
// deadline. Closing moves the payment back (won) or to dispute_lost (lost)
// and records payment.dispute_closed, in one transaction. The payments job
// does what is due (ProcessDueDisputes).

// openDispute opens the dispute a test card planned on payment p of store
// m, in the caller's transaction, and records payment.disputed.
func (s *Service) openDispute(ctx context.Context, tx *txn, m *checkout.Merchant, p *checkout.Payment) error {
	plan := checkout.DefaultDisputePlan
	if p.DisputePlan != nil {
		plan = *p.DisputePlan
	}
	d, err := p.OpenDispute(plan, m.Pricing.DisputeFeeFor(p.Currency), s.now())
	if err != nil {
		return err
	}
	p.DisputeOnSuccess = false
	if err := tx.PaymentUpdate(ctx, p); err != nil {
		return err
	}
	if err := tx.DisputeInsert(ctx, d); err != nil {
		return err
	}
	return s.emitPayment(ctx, tx, checkout.EventPaymentDisputed, p)
}

// DisputeEvidenceRequest is evidence for a dispute, through any door (the
// dashboard, the CLI).
type DisputeEvidenceRequest struct {
	// Scope, when set, is the store and mode the dispute must belong to
	// (a dashboard page's); the CLI's is zero: any dispute.
	Scope     checkout.Scope
	DisputeID string
	Evidence  checkout.DisputeEvidence
	By        checkout.Actor
}

// SubmitDisputeEvidence answers an open dispute with evidence: it goes
// under review, decided a moment later (checkout.DisputeDecisionDelay). A
// dispute that takes no evidence now (closed, under review, past its
// deadline) is refused with dispute_not_open; bad evidence with
// validation_failed, naming the field.
func (s *Service) SubmitDisputeEvidence(ctx context.Context, req DisputeEvidenceRequest) (*checkout.Dispute, error) {
	if err := s.authorize(ctx, req.Scope.MerchantID, checkout.ActionAnswerDispute); err != nil {
		return nil, err
	}
	d, err := s.disputeIn(ctx, req.Scope, req.DisputeID)
	if err != nil {
		return nil, err
	}
	if p, err := s.store.PaymentGet(ctx, d.PaymentID); err != nil {
		return nil, err
	} else if p.Acquirer != nil {
		// The acquirer decides it, on the evidence the merchant gives there.
		return nil, checkout.Errorf(checkout.EDisputeClosed,
			"Dispute %s is answered at the card acquirer that took the payment (%s), not here: send your evidence there.", d.ID, p.Acquirer.Name)
	}
	var out *checkout.Dispute
	err = s.inTx(ctx, func(tx *txn) error {
		d, err := tx.DisputeGetForUpdate(ctx, req.DisputeID)
		if err != nil {
			return err
		}
		if err := d.SubmitEvidence(req.Evidence, req.By, s.now()); err != nil {
			return err
		}
		out = d
		if err := tx.DisputeUpdate(ctx, d); err != nil {
			return err
		}
		return s.recordAs(ctx, tx, req.By, d.MerchantID, checkout.AuditDisputeAnswer, d.ID)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DisputeIn returns one dispute of the scope. An id of another shape,
// unknown, or of another store or mode is dispute_not_found, all with one
// message.
func (s *Service) DisputeIn(ctx context.Context, scope checkout.Scope, id string) (*checkout.Dispute, error) {
	if err := s.authorize(ctx, scope.MerchantID, checkout.ActionViewPayments); err != nil {
		return nil, err
	}
	return s.disputeIn(ctx, scope, id)
}

func (s *Service) disputeIn(ctx context.Context, scope checkout.Scope, id string) (*checkout.Dispute, error) {
	notFound := checkout.Errorf(checkout.EDisputeNotFound, "No such dispute: %s.", id)
	if !validID(checkout.PrefixDispute, id) {
		return nil, notFound
	}
	d, err := s.store.DisputeGet(ctx, id)
	if checkout.IsCode(err, checkout.ENotFound) || err == nil && scope != (checkout.Scope{}) && !inScope(scope, d.MerchantID, d.Mode) {
		return nil, notFound
	}
	return d, err
}

// DisputeOfPayment returns a payment's dispute, nil when it has none.
func (s *Service) DisputeOfPayment(ctx context.Context, paymentID string) (*checkout.Dispute, error) {
	d, err := s.store.DisputeGetByPayment(ctx, paymentID)
	if checkout.IsCode(err, checkout.ENotFound) {
		return nil, nil
	}
	return d, err
}

// MaxOpenDisputes bounds the open disputes a store's home lists.
const MaxOpenDisputes = 20

// OpenDisputes returns the scope's open disputes, the nearest deadline
// first, at most MaxOpenDisputes.
func (s *Service) OpenDisputes(ctx context.Context, scope checkout.Scope) ([]*checkout.Dispute, error) {
	if err := s.authorize(ctx, scope.MerchantID, checkout.ActionViewPayments); err != nil {
		return nil, err
	}
	return s.store.DisputeListOpen(ctx, scope.MerchantID, scope.Mode, MaxOpenDisputes)
}

// ProcessDueDisputes decides up to limit disputes whose time has come
// (their deadline passed unanswered, or their evidence reviewed) and
// returns how many it closed.
func (s *Service) ProcessDueDisputes(ctx context.Context, limit int) (int, error) {
	due, err := s.store.DisputeListDue(ctx, s.now(), limit)
	if err != nil {
		return 0, err
	}
	return eachDue(ctx, s, JobPayments, "dispute_id", due, func(d *checkout.Dispute) string { return d.ID },
		func(d *checkout.Dispute) (bool, error) { return s.decideDispute(ctx, d.ID) })
}

// decideDispute closes a dispute when its decision is due, under the locks
// of its payment and itself, and records payment.dispute_closed; a dispute
// not yet due is given its next due time.
func (s *Service) decideDispute(ctx context.Context, id string) (bool, error) {
	d, err := s.store.DisputeGet(ctx, id)
	if err != nil {
		return false, err
	}
	closed := false
	err = s.inTx(ctx, func(tx *txn) error {
		p, err := tx.PaymentGetForUpdate(ctx, d.PaymentID)
		if err != nil {
			return err
		}
		d, err := tx.DisputeGetForUpdate(ctx, id)
		if err != nil {
			return err
		}
		now := s.now()
		outcome := d.Decision(now)
		if outcome == "" {
			if d.DueAt == nil || d.DueAt.After(now) {
				return nil // handled meanwhile
			}
			next := d.EvidenceDueBy
			if d.SubmittedAt != nil {
				next = d.SubmittedAt.Add(checkout.DisputeDecisionDelay)
			}
			d.DueAt = &next
			return tx.DisputeUpdate(ctx, d)
		}
		if p.Status != checkout.PaymentDisputed {
			return fmt.Errorf("dispute %s is open but its payment %s is %s", d.ID, p.ID, p.Status)
		}
		if err := d.Close(p, outcome, now); err != nil {
			return err
		}
		if err := tx.DisputeUpdate(ctx, d); err != nil {
			return err
		}
		if err := tx.PaymentUpdate(ctx, p); err != nil {
			return err
		}
		closed = true
		s.log.InfoContext(ctx, "dispute closed", "dispute_id", d.ID, "payment_id", p.ID, "outcome", outcome)
		return s.emitPayment(ctx, tx, checkout.EventPaymentDisputeClosed, p)
	})
	if errors.Is(err, context.Canceled) {
		return false, err
	}
	return closed, err
}

// SetDisputeFee sets a store's dispute fee, in minor units of the disputed
// payment's currency; a negative fee sets the default (15 whole units of
// the currency, checkout.Pricing.DisputeFeeFor). Like the rest of the
// store's pricing it is the operator's: the CLI sets it. Disputes already
// open keep the fee they opened with.
func (s *Service) SetDisputeFee(ctx context.Context, storeID string, fee int64) (*checkout.Merchant, error) {
	if fee < 0 {
		fee = -1
	}
	var out *checkout.Merchant
	err := s.store.InTx(ctx, func(tx checkout.Tx) error {
		m, err := s.store.MerchantGet(ctx, storeID)
		if err != nil {
			return err
		}
		m.Pricing.DisputeFee = fee
		if err := m.Pricing.Validate(); err != nil {
			return err
		}
		out = m
		if err := tx.MerchantUpdate(ctx, m); err != nil {
			return err
		}
		return s.Record(ctx, tx, m.ID, checkout.AuditStoreDisputeFee, m.ID)
	})
	return out, err
}

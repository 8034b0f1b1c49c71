package service

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/pay"
)

// A refund goes through the service in three steps, as a payment does
// (payment.go), so that a buyer is never refunded more than they paid,
// whatever asks at once:
//
//  1. in one transaction, the payment is locked, the refund checked
//     against what is left of it (checkout.NewRefund) and held on it
//     (amount_refunding), and stored pending, due for a look-up;
//  2. the processor is asked, outside any transaction, with the refund's
//     id (a processor treats the same id as the same refund);
//  3. in one transaction, the outcome is written: succeeded, with the
//     payment's amount_refunded and status and payment.refunded; or
//     failed, what it held free again.
//
// A crash between 1 and 3, or a processor that does not answer, leaves the
// refund pending with its due time; the payments job then asks the
// processor again with the same id (ProcessDueRefunds), every
// ProcessorRetry until it answers.

// RefundOutcome is a refund with its payment as the refund left it.
type RefundOutcome struct {
	Refund  *checkout.Refund
	Payment *checkout.Payment
}

// RefundPaymentIn refunds a payment of the scope (RefundPayment); a payment
// of another store or mode is not_found, as an unknown one.
func (s *Service) RefundPaymentIn(ctx context.Context, scope checkout.Scope, paymentID string, params checkout.RefundParams, by checkout.Actor) (*RefundOutcome, error) {
	if _, err := s.PaymentIn(ctx, scope, paymentID); err != nil {
		return nil, err
	}
	return s.RefundPayment(ctx, paymentID, params, by)
}

// RefundPayment refunds part or all of a payment (params.Amount, all that
// is left when nil) through its method's processor, as by asks. The
// outcome's refund is succeeded or failed when the processor answered,
// and pending when it did not (the payments job asks it again). A payment
// that cannot be refunded now (disputed, not collected, refunded in full)
// is refused with payment_not_refundable, an amount beyond what is left
// with refund_amount_too_large; nothing is held then.
func (s *Service) RefundPayment(ctx context.Context, paymentID string, params checkout.RefundParams, by checkout.Actor) (*RefundOutcome, error) {
	if !validID(checkout.PrefixPayment, paymentID) {
		return nil, checkout.Errorf(checkout.ENotFound, "No such payment: %s.", paymentID)
	}
	p, err := s.store.PaymentGet(ctx, paymentID)
	if err != nil {
		return nil, err
	}
	refunder, err := s.refunder(p)
	if err != nil {
		return nil, err
	}
	out := &RefundOutcome{}
	err = s.inTx(ctx, func(tx *txn) error {
		p, err := tx.PaymentGetForUpdate(ctx, paymentID)
		if err != nil {
			return err
		}
		now := s.now()
		r, err := checkout.NewRefund(p, params, by, now)
		if err != nil {
			return err
		}
		due := now.Add(checkout.RefundTimeout)
		r.DueAt = &due
		if err := tx.RefundInsert(ctx, r); err != nil {
			return err
		}
		out.Refund, out.Payment = r, p
		return tx.PaymentUpdate(ctx, p)
	})
	if err != nil {
		return nil, err
	}
	// The processor call and the settlement outlive the request: a
	// merchant who closes the page mid-refund must not leave the outcome
	// unwritten.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), chargeTimeout)
	defer cancel()
	res, err := refunder.Refund(ctx, pay.RefundRequest{RefundID: out.Refund.ID, Payment: out.Payment, Amount: out.Refund.Amount})
	if err != nil {
		s.log.WarnContext(ctx, "refund without an outcome; the payments job will ask again",
			"refund_id", out.Refund.ID, "payment_id", paymentID, "error", err)
		return out, nil
	}
	return s.settleRefund(ctx, out.Refund.ID, res)
}

// refunder is the processor that refunds p: its method's in its mode.
func (s *Service) refunder(p *checkout.Payment) (pay.Refunder, error) {
	procs := s.procs.For(p.Mode)
	var r pay.Refunder
	switch p.Method {
	case checkout.MethodCard:
		if procs.Card != nil {
			r = procs.Card
		}
	case checkout.MethodSkins:
		if procs.Skins != nil {
			r = procs.Skins
		}
	}
	if r == nil {
		return nil, checkout.Errorf(checkout.EPaymentNotRefundable,
			"Payment %s cannot be refunded here: no %s processor of %s mode refunds it. Return the money to the buyer yourself.", p.ID, p.Method, p.Mode)
	}
	return r, nil
}

// settleRefund writes a processor's answer on a pending refund, with its
// payment: a refund settled already (by the payments job, another node)
// is left as it is.
func (s *Service) settleRefund(ctx context.Context, refundID string, res pay.RefundResult) (*RefundOutcome, error) {
	r, err := s.store.RefundGet(ctx, refundID)
	if err != nil {
		return nil, err
	}
	out := &RefundOutcome{}
	err = s.inTx(ctx, func(tx *txn) error {
		p, err := tx.PaymentGetForUpdate(ctx, r.PaymentID)
		if err != nil {
			return err
		}
		cur, err := tx.RefundGetForUpdate(ctx, refundID)
		if err != nil {
			return err
		}
		out.Refund, out.Payment = cur, p
		if cur.Status != checkout.RefundPending {
			return nil
		}
		now := s.now()
		if !res.Succeeded {
			code := res.FailureCode
			if code == "" {
				code = checkout.RefundFailDeclined
			}
			if err := cur.Fail(p, code, now); err != nil {
				return err
			}
			s.log.WarnContext(ctx, "refund failed", "refund_id", cur.ID, "payment_id", p.ID, "failure_code", code)
			return s.writeRefund(ctx, tx, cur, p)
		}
		if err := cur.Succeed(p, now); err != nil {
			return err
		}
		if err := s.writeRefund(ctx, tx, cur, p); err != nil {
			return err
		}
		return s.emitPayment(ctx, tx, checkout.EventPaymentRefunded, p)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (s *Service) writeRefund(ctx context.Context, tx *txn, r *checkout.Refund, p *checkout.Payment) error {
	if err := tx.RefundUpdate(ctx, r); err != nil {
		return err
	}
	return tx.PaymentUpdate(ctx, p)
}

// ProcessDueRefunds asks the processors again about up to limit refunds
// whose outcome was never written (their processor did not answer, or the
// node died before it wrote the answer), with the same refund ids, and
// writes what they answer. A processor that does not answer is asked again
// in ProcessorRetry; the refund is logged and counted as a row failure of
// the payments job each time.
func (s *Service) ProcessDueRefunds(ctx context.Context, limit int) (int, error) {
	due, err := s.store.RefundListDue(ctx, s.now(), limit)
	if err != nil {
		return 0, err
	}
	return eachDue(ctx, s, JobPayments, "refund_id", due, func(r *checkout.Refund) string { return r.ID },
		func(r *checkout.Refund) (bool, error) { return s.processDueRefund(ctx, r) })
}

func (s *Service) processDueRefund(ctx context.Context, r *checkout.Refund) (bool, error) {
	p, err := s.store.PaymentGet(ctx, r.PaymentID)
	if err != nil {
		return false, err
	}
	later := s.now().Add(ProcessorRetry)
	refunder, askErr := s.refunder(p)
	if askErr == nil {
		var res pay.RefundResult
		if res, askErr = refunder.Refund(ctx, pay.RefundRequest{RefundID: r.ID, Payment: p, Amount: r.Amount}); askErr == nil {
			out, err := s.settleRefund(ctx, r.ID, res)
			return err == nil && out.Refund.Status != checkout.RefundPending, err
		}
	} else {
		later = s.now().Add(time.Hour) // a processor removed from the configuration
	}
	err = s.inTx(ctx, func(tx *txn) error {
		cur, err := tx.RefundGetForUpdate(ctx, r.ID)
		if err != nil || cur.Status != checkout.RefundPending || cur.DueAt == nil || !cur.DueAt.Equal(*r.DueAt) {
			return err // handled meanwhile
		}
		cur.DueAt = &later
		return tx.RefundUpdate(ctx, cur)
	})
	return false, errors.Join(fmt.Errorf("the processor did not answer; asking again at %s: %w", later.UTC().Format(time.RFC3339), askErr), err)
}

// Refunds returns a payment's refunds, oldest first.
func (s *Service) Refunds(ctx context.Context, paymentID string) ([]*checkout.Refund, error) {
	return s.store.RefundListByPayment(ctx, paymentID)
}

// RefundIn returns one refund of the scope. An id of another shape,
// unknown, or of another store or mode is not_found, all with one message.
func (s *Service) RefundIn(ctx context.Context, scope checkout.Scope, id string) (*checkout.Refund, error) {
	notFound := checkout.Errorf(checkout.ENotFound, "No refund %s in this store's %s mode.", id, scope.Mode)
	if !validID(checkout.PrefixRefund, id) {
		return nil, notFound
	}
	r, err := s.store.RefundGet(ctx, id)
	if checkout.IsCode(err, checkout.ENotFound) || err == nil && !inScope(scope, r.MerchantID, r.Mode) {
		return nil, notFound
	}
	return r, err
}

package service

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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

// RefundRequest is a refund asked of the service, through any of its doors
// (the dashboard, the CLI, the API).
type RefundRequest struct {
	// Scope, when set, is the store and mode the payment must belong to
	// (a dashboard page's, an API key's): a payment of another is
	// payment_not_found, as an unknown one. The CLI's is zero: any payment.
	Scope     checkout.Scope
	PaymentID string
	Params    checkout.RefundParams
	By        checkout.Actor
	// IdempotencyKey, when not empty, makes the request safe to retry:
	// the same request with the same key within checkout.IdempotencyWindow
	// answers with the refund the first made (as it is now), and another
	// request with the key fails with idempotency_conflict.
	IdempotencyKey string
}

// RefundOutcome is a refund with its payment as the refund left it.
// Replayed is set when an Idempotency-Key's first request made it.
type RefundOutcome struct {
	Refund   *checkout.Refund
	Payment  *checkout.Payment
	Replayed bool
}

// RefundPayment refunds part or all of a payment (Params.Amount, all that
// is left when nil) through its method's processor, as By asks. The
// outcome's refund is succeeded or failed when the processor answered,
// and pending when it did not (the payments job asks it again). A payment
// that cannot be refunded now (disputed, not collected, refunded in full)
// is refused with payment_not_refundable, an amount beyond what is left
// with refund_amount_too_large; nothing is held then.
func (s *Service) RefundPayment(ctx context.Context, req RefundRequest) (*RefundOutcome, error) {
	if err := s.authorize(ctx, req.Scope.MerchantID, checkout.ActionRefund); err != nil {
		return nil, err
	}
	notFound := checkout.Errorf(checkout.EPaymentNotFound, "No such payment: %s.", req.PaymentID)
	if !validID(checkout.PrefixPayment, req.PaymentID) {
		return nil, notFound
	}
	p, err := s.store.PaymentGet(ctx, req.PaymentID)
	if checkout.IsCode(err, checkout.ENotFound) || err == nil && req.Scope != (checkout.Scope{}) && !inScope(req.Scope, p.MerchantID, p.Mode) {
		return nil, notFound
	}
	if err != nil {
		return nil, err
	}
	var hash string
	if req.IdempotencyKey != "" {
		hash = refundRequestHash(req)
		if out, err := s.replayRefund(ctx, p, req.IdempotencyKey, hash); out != nil || err != nil {
			return out, err
		}
	}
	// A crypto refund is paid by the merchant, to an address the buyer
	// gives through its link (refund_crypto.go): no processor is asked.
	var refunder pay.Refunder
	var network string
	switch {
	case p.Method == checkout.MethodCrypto:
		network, err = s.refundNetwork(p)
	case p.Acquirer != nil:
		refunder, err = s.acquirerRefunder(ctx, p)
	default:
		refunder, err = s.refunder(p)
	}
	if err != nil {
		return nil, err
	}
	out := &RefundOutcome{}
	err = s.inTx(ctx, func(tx *txn) error {
		p, err := tx.PaymentGetForUpdate(ctx, req.PaymentID)
		if err != nil {
			return err
		}
		now := s.now()
		var r *checkout.Refund
		if refunder == nil {
			r, err = checkout.NewCryptoRefund(p, req.Params, network, req.By, now)
		} else {
			r, err = checkout.NewRefund(p, req.Params, req.By, now)
		}
		if err != nil {
			return err
		}
		if r.Crypto == nil {
			due := now.Add(checkout.RefundTimeout)
			r.DueAt = &due
		}
		if req.IdempotencyKey != "" {
			err := tx.IdempotencyInsert(ctx, &checkout.IdempotencyRecord{
				MerchantID: p.MerchantID, Mode: p.Mode, Key: req.IdempotencyKey,
				RequestHash: hash, Body: []byte(r.ID), CreatedAt: now,
			})
			if err != nil {
				return err
			}
		}
		if err := tx.RefundInsert(ctx, r); err != nil {
			return err
		}
		out.Refund, out.Payment = r, p
		if err := tx.PaymentUpdate(ctx, p); err != nil {
			return err
		}
		return s.recordAs(ctx, tx, req.By, p.MerchantID, checkout.AuditRefundCreate, r.ID)
	})
	if checkout.IsCode(err, checkout.EConflict) && req.IdempotencyKey != "" {
		// Another request with the same key committed first: answer with
		// its refund.
		if out, err := s.replayRefund(ctx, p, req.IdempotencyKey, hash); out != nil || err != nil {
			return out, err
		}
	}
	if err != nil {
		return nil, err
	}
	if refunder == nil {
		return out, nil // the buyer's address, then the merchant's payout
	}
	// The processor call and the settlement outlive the request: a
	// merchant who closes the page mid-refund must not leave the outcome
	// unwritten.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), chargeTimeout)
	defer cancel()
	res, err := refunder.Refund(ctx, pay.RefundRequest{RefundID: out.Refund.ID, Payment: out.Payment, Amount: out.Refund.Amount})
	if err != nil {
		s.log.WarnContext(ctx, "refund without an outcome; the payments job will ask again",
			"refund_id", out.Refund.ID, "payment_id", req.PaymentID, "error", err)
		return out, nil
	}
	return s.settleRefund(ctx, out.Refund.ID, res)
}

// refundRequestHash is the fingerprint of a refund request that an
// Idempotency-Key is bound to.
func refundRequestHash(req RefundRequest) string {
	rate := req.Params.Rate
	if rate == checkout.RateOfPayment {
		rate = "" // the default, asked or not
	}
	canon, _ := json.Marshal(struct {
		Refund  string
		Payment string
		Amount  *int64
		Reason  checkout.RefundReason
		Rate    checkout.RefundRate `json:",omitempty"` // absent for keys stored before rates
	}{"refund", req.PaymentID, req.Params.Amount, req.Params.Reason, rate})
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:])
}

// replayRefund returns the refund an idempotency key's first request made,
// as it is now; nil when the key has no live record; idempotency_conflict
// when the key was used for another request.
func (s *Service) replayRefund(ctx context.Context, p *checkout.Payment, key, hash string) (*RefundOutcome, error) {
	rec, err := s.store.IdempotencyGet(ctx, p.MerchantID, p.Mode, key)
	if checkout.IsCode(err, checkout.ENotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if s.now().Sub(rec.CreatedAt) >= checkout.IdempotencyWindow {
		return nil, nil
	}
	if rec.RequestHash != hash {
		return nil, &checkout.Error{
			Code:    checkout.EIdempotencyConflict,
			Message: "This Idempotency-Key was used with a different request in the last 24 hours. Use a new key for a new request.",
			Param:   "Idempotency-Key",
		}
	}
	r, err := s.store.RefundGet(ctx, string(rec.Body))
	if err != nil {
		return nil, err
	}
	cur, err := s.store.PaymentGet(ctx, r.PaymentID)
	if err != nil {
		return nil, err
	}
	return &RefundOutcome{Refund: r, Payment: cur, Replayed: true}, nil
}

// RefundBlock says why p cannot be refunded now, or nil when a refund may
// be asked of RefundPayment: the payment's own reasons
// (checkout.Payment.RefundBlock), or no processor of its method in its mode
// that refunds (crypto for now; cards and skins in live mode until a live
// processor is configured). A door shows it instead of a form that could
// only be refused.
func (s *Service) RefundBlock(p *checkout.Payment) error {
	if err := p.RefundBlock(); err != nil {
		return err
	}
	if p.Method == checkout.MethodCrypto {
		_, err := s.refundNetwork(p)
		return err
	}
	if p.Acquirer != nil {
		return nil // the store's acquirer refunds it (acquirerRefunder says if it no longer can)
	}
	_, err := s.refunder(p)
	return err
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
	if r.Crypto != nil {
		return s.processDueCryptoRefund(ctx, r)
	}
	p, err := s.store.PaymentGet(ctx, r.PaymentID)
	if err != nil {
		return false, err
	}
	later := s.now().Add(ProcessorRetry)
	var refunder pay.Refunder
	var askErr error
	if p.Acquirer != nil {
		refunder, askErr = s.acquirerRefunder(ctx, p)
	} else {
		refunder, askErr = s.refunder(p)
	}
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
// unknown, or of another store or mode is refund_not_found, all with one
// message.
func (s *Service) RefundIn(ctx context.Context, scope checkout.Scope, id string) (*checkout.Refund, error) {
	if err := s.authorize(ctx, scope.MerchantID, checkout.ActionViewPayments); err != nil {
		return nil, err
	}
	notFound := checkout.Errorf(checkout.ERefundNotFound, "No refund %s in this store's %s mode.", id, scope.Mode)
	if !validID(checkout.PrefixRefund, id) {
		return nil, notFound
	}
	r, err := s.store.RefundGet(ctx, id)
	if checkout.IsCode(err, checkout.ENotFound) || err == nil && !inScope(scope, r.MerchantID, r.Mode) {
		return nil, notFound
	}
	return r, err
}

package service

import (
	"context"
	"encoding/json"

	"github.com/checkoutd/checkoutd/checkout"
)

// A settleFunc writes what became of payment p, locked with its session
// sess (of store m), in transaction tx.
type settleFunc func(tx *txn, m *checkout.Merchant, sess *checkout.Session, p *checkout.Payment) error

// An answer is a processor's answer to a payment attempt: whether the
// processor took the money (a charge approved, a trade accepted) and how
// it settles the payment while it is processing.
type answer struct {
	captured bool
	apply    settleFunc
}

// settleAnswer writes a processor's answer on a payment. A payment settled
// already (by the payments job, another node) is left as it is, unless it
// failed and the processor took the money after all: then it is flagged
// for refund, logged and counted, so that an operator sees it.
func (s *Service) settleAnswer(ctx context.Context, paymentID string, a answer) (*PaymentOutcome, error) {
	var flagged bool
	out, err := s.settle(ctx, paymentID, func(tx *txn, m *checkout.Merchant, sess *checkout.Session, p *checkout.Payment) error {
		if p.Status == checkout.PaymentProcessing {
			return a.apply(tx, m, sess, p)
		}
		if !a.captured {
			return nil
		}
		var err error
		flagged, err = s.flagCapturedAfterFailure(ctx, tx, p)
		return err
	})
	if err == nil && flagged {
		s.capturedAfterFailure(ctx, out.Payment)
	}
	return out, err
}

// settle runs fn on a payment and its session, both locked (the session
// first, as beginPayment locks them), in one transaction.
func (s *Service) settle(ctx context.Context, paymentID string, fn settleFunc) (*PaymentOutcome, error) {
	p, err := s.store.PaymentGet(ctx, paymentID)
	if err != nil {
		return nil, err
	}
	m, err := s.Merchant(ctx, p.MerchantID)
	if err != nil {
		return nil, err
	}
	out := &PaymentOutcome{}
	err = s.inTx(ctx, func(tx *txn) error {
		sess, err := tx.SessionGetForUpdate(ctx, p.SessionID)
		if err != nil {
			return err
		}
		p, err := tx.PaymentGetForUpdate(ctx, paymentID)
		if err != nil {
			return err
		}
		out.Session, out.Payment = sess, p
		return fn(tx, m, sess, p)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// succeedPayment completes the session with payment p and records
// payment.succeeded and checkout.completed. When the session cannot
// complete with p (another payment took it), p fails with session_completed
// instead: its money is to be returned to the buyer.
func (s *Service) succeedPayment(ctx context.Context, tx *txn, m *checkout.Merchant, sess *checkout.Session, p *checkout.Payment) error {
	now := s.now()
	if err := sess.Complete(p.ID, now); err != nil {
		code := checkout.FailSessionCompleted
		if sess.Status == checkout.StatusExpired {
			code = checkout.FailSessionExpired
		}
		return s.failPayment(ctx, tx, m, sess, p, code)
	}
	if err := p.Succeed(m.Pricing, now); err != nil {
		return err
	}
	if p.DisputeOnSuccess {
		due := now.Add(checkout.DisputeDelay)
		p.DueAt = &due
	}
	if err := tx.PaymentUpdate(ctx, p); err != nil {
		return err
	}
	if err := tx.SessionUpdate(ctx, sess); err != nil {
		return err
	}
	if err := s.emitPayment(ctx, tx, checkout.EventPaymentSucceeded, p); err != nil {
		return err
	}
	return s.emitSession(ctx, tx, m, checkout.EventCheckoutCompleted, sess)
}

// failPayment fails p with code, releases the session for another try, and
// records payment.failed.
func (s *Service) failPayment(ctx context.Context, tx *txn, m *checkout.Merchant, sess *checkout.Session, p *checkout.Payment, code string) error {
	if err := p.Fail(code, s.now()); err != nil {
		return err
	}
	if err := tx.PaymentUpdate(ctx, p); err != nil {
		return err
	}
	held := sess.ActivePaymentID != nil && *sess.ActivePaymentID == p.ID
	sess.ReleasePayment(p.ID)
	if held {
		if err := tx.SessionUpdate(ctx, sess); err != nil {
			return err
		}
	}
	return s.emitPayment(ctx, tx, checkout.EventPaymentFailed, p)
}

func (s *Service) emitPayment(ctx context.Context, tx *txn, typ string, p *checkout.Payment) error {
	data, err := json.Marshal(p.View())
	if err != nil {
		return err
	}
	return s.emit(ctx, tx, p.MerchantID, p.Mode, typ, data)
}

func (s *Service) emitSession(ctx context.Context, tx *txn, m *checkout.Merchant, typ string, sess *checkout.Session) error {
	data, err := json.Marshal(sess.View(m, s.checkoutBaseURL))
	if err != nil {
		return err
	}
	return s.emit(ctx, tx, sess.MerchantID, sess.Mode, typ, data)
}

// flagCapturedAfterFailure flags a failed payment whose money its
// processor took after all for a refund, unless it is flagged already, and
// reports whether it did.
func (s *Service) flagCapturedAfterFailure(ctx context.Context, tx *txn, p *checkout.Payment) (bool, error) {
	if p.Status != checkout.PaymentFailed || p.RefundDue() {
		return false, nil
	}
	if err := p.FlagCapturedAfterFailure(s.now()); err != nil {
		return false, err
	}
	return true, tx.PaymentUpdate(ctx, p)
}

// capturedAfterFailure tells an operator, once it is written, that p's money
// was taken after it failed: an error in the log and a count in Stats.
func (s *Service) capturedAfterFailure(ctx context.Context, p *checkout.Payment) {
	s.counts.capturedAfterFailure.Add(1)
	s.log.ErrorContext(ctx, "payment collected after it had failed; flagged for refund",
		"payment_id", p.ID, "session_id", p.SessionID, "method", p.Method, "mode", p.Mode, "amount", p.Amount, "currency", p.Currency)
}

// succeedWith settles a payment as succeeded.
func (s *Service) succeedWith(ctx context.Context) settleFunc {
	return func(tx *txn, m *checkout.Merchant, sess *checkout.Session, p *checkout.Payment) error {
		return s.succeedPayment(ctx, tx, m, sess, p)
	}
}

// failWith settles a payment as failed with code.
func (s *Service) failWith(ctx context.Context, code string) settleFunc {
	return func(tx *txn, m *checkout.Merchant, sess *checkout.Session, p *checkout.Payment) error {
		return s.failPayment(ctx, tx, m, sess, p, code)
	}
}

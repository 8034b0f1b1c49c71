package service

import (
	"context"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

// A payment goes through the service in three steps, so that a buyer is
// never charged for a session that cannot take the money, and a session is
// never paid twice:
//
//  1. begin: in one transaction, the session is locked, checked (open,
//     within its hour, held by no other payment) and held by a new
//     processing payment. A second payment attempt (another tab, a double
//     click, a crypto transaction racing a card) is declined here, before
//     any processor is asked for money.
//  2. the processor is asked, outside any transaction.
//  3. settle: in one transaction, the session and payment are locked again
//     and the outcome written with its events: payment.succeeded and
//     checkout.completed, or payment.failed and the session released for
//     another try.
//
// A crash between 1 and 3, or a processor whose answer is lost, leaves the
// payment processing with a due time; the payments job then asks the
// processor what became of it. The database's unique index on captured
// payments per session backs all of this up: a second capture of one
// session cannot be written.
//
// The flows live beside this file: pay_card.go, pay_crypto.go (a network
// reports the money, so it begins and settles without asking), pay_skins.go;
// settle.go writes outcomes; payments_job.go does what is due later;
// payment_view.go is the page's read model.

// PaymentOutcome is the result of a payment attempt on the page.
type PaymentOutcome struct {
	Payment *checkout.Payment
	Session *checkout.Session
}

// chargeTimeout bounds a processor call and the settlement after it.
const chargeTimeout = 60 * time.Second

// An attempt is a payment through a processor that answers at once (a card
// charge, a skins trade): how runAttempt begins, asks and settles it.
type attempt struct {
	method checkout.PaymentMethod
	// prepare fills in what the method adds to the new payment.
	prepare func(p *checkout.Payment)
	// ask asks the processor, outside any transaction, and returns its
	// answer. An error means the outcome is unknown (a time-out, the
	// network, a crash): the processor may have taken the money.
	ask func(ctx context.Context, p *checkout.Payment, sess *checkout.Session, m *checkout.Merchant) (answer, error)
}

// runAttempt runs the three steps of a payment through a processor: begin
// (or decline), ask, settle. When the outcome is unknown the payment stays
// processing and keeps the session until the payments job learns the
// outcome from the processor (Lookup), due when the charge would have
// timed out.
func (s *Service) runAttempt(ctx context.Context, sessionID string, a attempt) (*PaymentOutcome, error) {
	p, sess, m, err := s.beginPayment(ctx, sessionID, a.method, func(p *checkout.Payment) {
		if a.prepare != nil {
			a.prepare(p)
		}
		due := s.now().Add(checkout.CardChargeTimeout)
		p.DueAt = &due
	})
	if err != nil {
		return nil, err
	}
	// From here the processor call and the settlement outlive the request:
	// a buyer who closes the tab mid-charge must not leave the outcome
	// unwritten.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), chargeTimeout)
	defer cancel()
	ans, err := a.ask(ctx, p, sess, m)
	if err != nil {
		s.log.WarnContext(ctx, "payment without an outcome; the payments job will look it up",
			"payment_id", p.ID, "session_id", sessionID, "method", a.method, "error", err)
		return &PaymentOutcome{Payment: p, Session: sess}, nil
	}
	out, err := s.settleAnswer(ctx, p.ID, ans)
	if checkout.IsCode(err, checkout.EUnavailable) {
		// The processor answered, and the database did not take it (a
		// failover longer than its budget): the charge stands, so it is
		// not an error that would have the buyer pay again. The payment
		// holds the session, processing, until the payments job asks the
		// processor again at its due time and settles it.
		s.log.WarnContext(ctx, "payment outcome not written; the payments job will look it up",
			"payment_id", p.ID, "session_id", sessionID, "method", a.method, "error", err)
		return &PaymentOutcome{Payment: p, Session: sess}, nil
	}
	return out, err
}

// beginPayment holds session sessionID with a new processing payment of
// method, after prepare has filled in what the method adds. It returns the
// payment, the session as held, and the session's store; or a
// checkout.Decline when the session cannot take a payment now.
func (s *Service) beginPayment(ctx context.Context, sessionID string, method checkout.PaymentMethod, prepare func(*checkout.Payment)) (*checkout.Payment, *checkout.Session, *checkout.Merchant, error) {
	m, err := s.sessionMerchant(ctx, sessionID)
	if err != nil {
		return nil, nil, nil, err
	}
	var p *checkout.Payment
	var sess *checkout.Session
	var decline checkout.Decline
	err = s.inTx(ctx, func(tx *txn) error {
		var err error
		if sess, err = tx.SessionGetForUpdate(ctx, sessionID); err != nil {
			return err
		}
		now := s.now()
		if sess.ExpiryDue(now) {
			if err := s.expireLocked(ctx, tx, m, sess, now); err != nil {
				return err
			}
		}
		p = checkout.NewPayment(sess, method, now)
		prepare(p)
		// A card payment at the store's acquirer is offered when the store
		// has one (StartAcquirerPayment checked), whatever the mode's
		// processors.
		if !s.procs.For(sess.Mode).Offers(method) && p.Acquirer == nil {
			p, decline = nil, checkout.DeclineMethod
			return nil
		}
		if decline = sess.PaymentDecline(now); decline != checkout.DeclineNone {
			p = nil
			return nil
		}
		if method == checkout.MethodCard {
			n, err := tx.PaymentCountFailed(ctx, sessionID, method)
			if err != nil {
				return err
			}
			if n >= checkout.MaxFailedCardAttempts {
				p, decline = nil, checkout.DeclineTooManyRetries
				return nil
			}
		}
		return hold(ctx, tx, sess, p, now)
	})
	if err != nil {
		return nil, nil, nil, err
	}
	if decline != checkout.DeclineNone {
		return nil, sess, m, decline
	}
	return p, sess, m, nil
}

// sessionMerchant returns the store of a session, read before a
// transaction so that the transaction needs no second connection.
func (s *Service) sessionMerchant(ctx context.Context, sessionID string) (*checkout.Merchant, error) {
	if !checkout.ValidSessionID(sessionID) {
		return nil, checkout.Errorf(checkout.ECheckoutNotFound, "No such checkout session.")
	}
	sess, err := s.store.SessionGet(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	return s.Merchant(ctx, sess.MerchantID)
}

// hold makes the new payment p hold sess from now (Session.BeginPayment)
// and stores both, in the caller's transaction.
func hold(ctx context.Context, tx *txn, sess *checkout.Session, p *checkout.Payment, now time.Time) error {
	if err := sess.BeginPayment(p.ID, now); err != nil {
		return err
	}
	if err := tx.PaymentInsert(ctx, p); err != nil {
		return err
	}
	return tx.SessionUpdate(ctx, sess)
}

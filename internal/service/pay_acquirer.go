package service

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/pay"
)

// Live card payments through the store's card acquirer (pay.Acquirer;
// docs/payments.md, Card acquirers). The page's element, the acquirer's
// own, takes the card and runs 3-D Secure; checkoutd never sees a card
// number. The steps are those of every payment (payment.go), with the
// acquirer's answer learned by looking the payment up:
//
//  1. StartAcquirerPayment begins a card payment that holds the session
//     (or resumes the one that does: another tab, a double click, a create
//     whose answer was lost) and creates its payment at the acquirer with
//     an idempotency key derived from the payment's id; the page confirms
//     it there with the client secret.
//  2. The buyer's return (ReturnFromAcquirer), the acquirer's webhook
//     (AcquirerWebhook) and the payments job (reconcileAcquirer) all look
//     the payment up at the acquirer, the source of truth, and write what
//     they learn. None trusts what the redirect or the webhook says: a
//     webhook is a hint to look up, verified or not.
//
// A declined attempt is canceled at the acquirer before the payment fails
// (so that nothing can confirm it later) and the session is free for
// another try; a payment the buyer leaves unconfirmed is canceled once
// AcquirerHold is over. Should the acquirer capture a payment that failed
// here after all (a confirmation racing the cancel), settleAnswer flags it
// for refund, as for any processor.

const (
	// AcquirerLook is how soon the payments job looks up a card payment
	// waiting at the acquirer for its buyer (the element, 3-D Secure).
	AcquirerLook = time.Minute
	// AcquirerHold is how long a card payment at the acquirer may hold its
	// session unconfirmed: enough for 3-D Secure, short enough that a
	// buyer who gave up can pay another way. Then it is canceled there.
	AcquirerHold = 15 * time.Minute
)

// acquirerKey is the idempotency key of call on checkoutd's object id:
// the same call on the same object is the same request to the acquirer.
func acquirerKey(id, call string) string { return "checkoutd_" + id + "_" + call }

// AcquirerStart is what the page needs to confirm a card payment in the
// acquirer's element. ClientSecret is the buyer's alone: it goes to the
// page and nowhere else (never a log).
type AcquirerStart struct {
	Payment        *checkout.Payment
	Acquirer       string
	ClientSecret   string
	PublishableKey string
}

// StartAcquirerPayment begins a card payment of a session at its store's
// card acquirer, or resumes the one holding the session, and returns what
// the page confirms it with. A session that cannot take a payment declines
// with a checkout.Decline (method_unavailable when the store has no
// acquirer in the session's mode). An acquirer that does not answer leaves
// the payment processing (asked again on the next try, looked up by the
// payments job) and is processor_unavailable.
func (s *Service) StartAcquirerPayment(ctx context.Context, sessionID string) (*AcquirerStart, error) {
	m, err := s.sessionMerchant(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	sess, err := s.store.SessionGet(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	sa, err := s.storeAcquirer(ctx, m.ID, sess.Mode)
	if err != nil {
		return nil, err
	}
	if sa == nil {
		return nil, checkout.DeclineMethod
	}
	if sess.ActivePaymentID != nil {
		p, err := s.store.PaymentGet(ctx, *sess.ActivePaymentID)
		if err != nil {
			return nil, err
		}
		if p.Status == checkout.PaymentProcessing && p.Acquirer != nil && p.Acquirer.Name == sa.name {
			return s.createAtAcquirer(ctx, sa, p, m)
		}
	}
	p, _, m, err := s.beginPayment(ctx, sessionID, checkout.MethodCard, func(p *checkout.Payment) {
		p.Acquirer = &checkout.AcquirerRef{Name: sa.name}
		due := s.now().Add(AcquirerLook)
		p.DueAt = &due
	})
	if err != nil {
		return nil, err
	}
	// The create outlives the request, as a charge does: a buyer who
	// closes the tab must not leave a payment made at the acquirer unknown
	// here.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), chargeTimeout)
	defer cancel()
	return s.createAtAcquirer(ctx, sa, p, m)
}

// createAtAcquirer creates payment p at the acquirer, or gets it again
// (the same idempotency key returns the same payment), and notes its id.
func (s *Service) createAtAcquirer(ctx context.Context, sa *storeAcquirer, p *checkout.Payment, m *checkout.Merchant) (*AcquirerStart, error) {
	ap, err := sa.acq.CreatePayment(ctx, pay.AcquirerPaymentRequest{
		PaymentID: p.ID, SessionID: p.SessionID, StoreID: p.MerchantID, Amount: p.Amount, Currency: p.Currency,
		StatementDescriptor: m.StatementDescriptor, IdempotencyKey: acquirerKey(p.ID, "create"),
	})
	if err != nil {
		if pay.Unavailable(err) {
			s.log.WarnContext(ctx, "card acquirer did not answer a create; the payment waits for the buyer's next try",
				"payment_id", p.ID, "session_id", p.SessionID, "acquirer", sa.name, "error", err)
			return nil, checkout.Errorf(checkout.EUnavailable, "The card processor did not answer. Try again in a moment.")
		}
		// A definite refusal: nothing was made there. The payment fails
		// and the session is free.
		s.log.ErrorContext(ctx, "card acquirer refused a create", "payment_id", p.ID, "acquirer", sa.name, "error", err)
		if _, ferr := s.settleAnswer(ctx, p.ID, answer{apply: s.failWith(ctx, checkout.FailProcessingError)}); ferr != nil {
			return nil, errors.Join(err, ferr)
		}
		return nil, err
	}
	if ap.Amount != p.Amount || !strings.EqualFold(ap.Currency, p.Currency) || ap.CheckoutPaymentID != p.ID {
		return nil, fmt.Errorf("card acquirer's payment %s is not payment %s's: %d %s for %q", ap.ID, p.ID, ap.Amount, ap.Currency, ap.CheckoutPaymentID)
	}
	out, err := s.settle(ctx, p.ID, func(tx *txn, m *checkout.Merchant, sess *checkout.Session, cur *checkout.Payment) error {
		if cur.Acquirer == nil || cur.Acquirer.ID != "" {
			return nil
		}
		cur.Acquirer.ID, cur.Acquirer.Status = ap.ID, string(ap.Status)
		return tx.PaymentUpdate(ctx, cur)
	})
	if err != nil {
		return nil, err
	}
	return &AcquirerStart{Payment: out.Payment, Acquirer: sa.name, ClientSecret: ap.ClientSecret, PublishableKey: sa.publishableKey}, nil
}

// ReturnFromAcquirer looks up, at the acquirer, the card payment holding a
// session when the buyer comes back to the page (the redirect after 3-D
// Secure, or the page's own report of a decline), writes what it learns,
// and returns the session and that payment as they are then (the payment
// nil when none was holding the session). What the redirect says is not
// read: only the acquirer's answer to the lookup counts.
func (s *Service) ReturnFromAcquirer(ctx context.Context, sessionID string) (*PaymentOutcome, error) {
	if !checkout.ValidSessionID(sessionID) {
		return nil, checkout.Errorf(checkout.ECheckoutNotFound, "No such checkout session.")
	}
	sess, err := s.store.SessionGet(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	if sess.ActivePaymentID == nil {
		// Settled already (by the webhook, the job, another tab): the
		// latest card payment at the acquirer is the one the buyer comes
		// back from.
		ps, err := s.store.PaymentListBySession(ctx, sessionID)
		if err != nil {
			return nil, err
		}
		out := &PaymentOutcome{Session: sess}
		for _, p := range ps {
			if p.Acquirer != nil && (out.Payment == nil || p.CreatedAt.After(out.Payment.CreatedAt)) {
				out.Payment = p
			}
		}
		return out, nil
	}
	p, err := s.store.PaymentGet(ctx, *sess.ActivePaymentID)
	if err != nil {
		return nil, err
	}
	if p.Acquirer == nil || p.Status != checkout.PaymentProcessing {
		return &PaymentOutcome{Session: sess, Payment: p}, nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), chargeTimeout)
	defer cancel()
	out, err := s.reconcileAcquirer(ctx, p)
	if err != nil && !pay.Unavailable(err) {
		return nil, err
	}
	if err != nil {
		// The payments job looks it up; the page shows it processing.
		s.log.WarnContext(ctx, "card acquirer did not answer a lookup on the buyer's return", "payment_id", p.ID, "error", err)
	}
	if out == nil {
		return &PaymentOutcome{Session: sess, Payment: p}, nil
	}
	return out, nil
}

// reconcileAcquirer looks payment p up at its acquirer and writes what
// the acquirer says: succeeded, it succeeds; declined or canceled, it is
// canceled there and fails; still waiting for the buyer, it keeps the
// session until AcquirerHold is over, then is canceled. It returns nil
// when nothing was settled (still waiting), and an error wrapping
// pay.ErrAcquirerUnavailable when the acquirer did not answer.
func (s *Service) reconcileAcquirer(ctx context.Context, p *checkout.Payment) (*PaymentOutcome, error) {
	sa, err := s.storeAcquirer(ctx, p.MerchantID, p.Mode)
	if err != nil {
		return nil, err
	}
	if sa == nil || sa.name != p.Acquirer.Name {
		return nil, fmt.Errorf("payment %s is at card acquirer %q, which store %s no longer has", p.ID, p.Acquirer.Name, p.MerchantID)
	}
	now := s.now()
	over := !now.Before(p.CreatedAt.Add(AcquirerHold))
	if p.Acquirer.ID == "" {
		// The create was never answered, so no buyer holds its client
		// secret: nothing can be confirmed. Once the hold is over the
		// payment fails; until then the buyer's next try asks again.
		if over {
			return s.settleAnswer(ctx, p.ID, answer{apply: s.failWith(ctx, checkout.FailAbandoned)})
		}
		return nil, nil
	}
	ap, err := sa.acq.LookupPayment(ctx, p.Acquirer.ID)
	if err != nil {
		return nil, err
	}
	switch ap.Status {
	case pay.AcquirerSucceeded, pay.AcquirerCanceled:
		return s.settleAnswer(ctx, p.ID, s.acquirerAnswer(ctx, p, ap))
	case pay.AcquirerFailed:
		return s.cancelAtAcquirer(ctx, sa, p, ap.FailureCode)
	case pay.AcquirerPending, pay.AcquirerRequiresAction:
		if over {
			code := checkout.FailAbandoned
			if ap.Status == pay.AcquirerRequiresAction {
				code = checkout.FailAuthenticationFailed
			}
			return s.cancelAtAcquirer(ctx, sa, p, code)
		}
	}
	return nil, nil
}

// cancelAtAcquirer cancels p at its acquirer, then fails it with code; a
// payment the acquirer captured meanwhile succeeds instead.
func (s *Service) cancelAtAcquirer(ctx context.Context, sa *storeAcquirer, p *checkout.Payment, code string) (*PaymentOutcome, error) {
	ap, err := sa.acq.CancelPayment(ctx, p.Acquirer.ID, acquirerKey(p.ID, "cancel"))
	if err != nil {
		return nil, err
	}
	if ap.Status != pay.AcquirerSucceeded && ap.Status != pay.AcquirerCanceled {
		return nil, fmt.Errorf("card acquirer's payment %s is %s after it was canceled", ap.ID, ap.Status)
	}
	if ap.Status == pay.AcquirerCanceled && code != "" {
		ap.FailureCode = code
	}
	return s.settleAnswer(ctx, p.ID, s.acquirerAnswer(ctx, p, ap))
}

// acquirerAnswer is how an acquirer's final answer settles a payment: a
// capture succeeds it with its card's details; a cancel fails it with the
// decline's code (card_declined when the acquirer gave none).
func (s *Service) acquirerAnswer(ctx context.Context, p *checkout.Payment, ap pay.AcquirerPayment) answer {
	captured := ap.Status == pay.AcquirerSucceeded
	return answer{captured: captured, apply: func(tx *txn, m *checkout.Merchant, sess *checkout.Session, cur *checkout.Payment) error {
		if cur.Acquirer != nil {
			cur.Acquirer.Status, cur.Acquirer.ChargeID = string(ap.Status), ap.ChargeID
		}
		for _, f := range []struct {
			to **string
			v  string
		}{{&cur.CardBrand, ap.Brand}, {&cur.CardLast4, ap.Last4}, {&cur.BuyerCountry, ap.Country}} {
			if f.v != "" {
				v := f.v
				*f.to = &v
			}
		}
		if !captured {
			code := ap.FailureCode
			if code == "" {
				code = checkout.FailCardDeclined
			}
			return s.failPayment(ctx, tx, m, sess, cur, code)
		}
		return s.succeedPayment(ctx, tx, m, sess, cur)
	}}
}

// AcquirerWebhook takes a webhook of a store's card acquirer: the raw body
// and headers as they came. It is a hint: checkoutd looks up at the
// acquirer the payment, refund or dispute it names, when that is one of
// the store's, and writes what the acquirer says, so an event that is
// late, repeated, out of order or forged changes nothing the lookup does
// not confirm. It reports whether the signature checked out (the door
// answers 401 when it did not, so that the acquirer shows the merchant a
// misconfigured secret); a body that cannot be parsed is
// validation_failed; a store without that acquirer is not found.
func (s *Service) AcquirerWebhook(ctx context.Context, name, storeID string, body []byte, header http.Header) (bool, error) {
	if !checkout.ValidStoreID(storeID) {
		return false, checkout.Errorf(checkout.ENotFound, "No such store.")
	}
	sa, err := s.storeAcquirer(ctx, storeID, checkout.ModeLive)
	if checkout.IsCode(err, checkout.ENotFound) || err == nil && (sa == nil || sa.name != name) {
		return false, checkout.Errorf(checkout.ENotFound, "No card acquirer %q is set up for this store.", name)
	}
	if err != nil {
		return false, err
	}
	ev, err := sa.acq.ParseWebhook(body, header, s.now())
	if err != nil {
		return false, checkout.Errorf(checkout.EValidationFailed, "The webhook's body could not be read: %v", err)
	}
	if !ev.Verified {
		s.log.WarnContext(ctx, "card acquirer webhook whose signature did not check out: looked up as a hint only; check the store's webhook signing secret",
			"store_id", storeID, "acquirer", name, "event_id", ev.ID)
	}
	if ev.CheckoutPaymentID == "" && ev.AcquirerDispute != "" && ev.Kind != pay.AcquirerEventOther && ev.Verified {
		// A dispute carries no metadata of its own: its lookup names the
		// disputed payment's.
		ad, err := sa.acq.LookupDispute(ctx, ev.AcquirerDispute)
		if err != nil {
			return ev.Verified, err
		}
		ev.CheckoutPaymentID = ad.CheckoutPaymentID
	}
	if ev.CheckoutPaymentID == "" || ev.Kind == pay.AcquirerEventOther {
		return ev.Verified, nil // not checkoutd's, or nothing to act on
	}
	p, err := s.store.PaymentGet(ctx, ev.CheckoutPaymentID)
	if checkout.IsCode(err, checkout.ENotFound) {
		return ev.Verified, nil
	}
	if err != nil {
		return ev.Verified, err
	}
	if p.MerchantID != storeID || !p.Mode.Live() || p.Acquirer == nil || p.Acquirer.Name != name ||
		(p.Acquirer.ID != "" && ev.AcquirerPayment != "" && ev.AcquirerPayment != p.Acquirer.ID) {
		s.log.WarnContext(ctx, "card acquirer webhook names a payment that is not this store's at this acquirer; ignored",
			"store_id", storeID, "payment_id", p.ID, "event_id", ev.ID)
		return ev.Verified, nil
	}
	if !ev.Verified && p.Status != checkout.PaymentProcessing {
		// Anyone may post an unsigned event naming a payment: it leads to
		// a lookup only while the payment waits for its outcome (a secret
		// misconfigured must not keep a buyer's payment from completing),
		// so that it cannot be used to make checkoutd call the acquirer at
		// will. The payments job and the next signed event see the rest.
		return false, nil
	}
	switch ev.Kind {
	case pay.AcquirerEventPayment:
		if p.Status == checkout.PaymentProcessing {
			_, err = s.reconcileAcquirer(ctx, p)
		} else if p.Status == checkout.PaymentFailed && p.Acquirer.ID != "" {
			// Captured after it failed here? The lookup says; settleAnswer
			// flags it for refund if so.
			var ap pay.AcquirerPayment
			if ap, err = sa.acq.LookupPayment(ctx, p.Acquirer.ID); err == nil && ap.Status == pay.AcquirerSucceeded {
				_, err = s.settleAnswer(ctx, p.ID, s.acquirerAnswer(ctx, p, ap))
			}
		}
	case pay.AcquirerEventRefund:
		err = s.refreshAcquirerRefunds(ctx, sa, p)
	case pay.AcquirerEventDisputeOpened, pay.AcquirerEventDisputeClosed:
		err = s.syncAcquirerDispute(ctx, sa, p, ev.AcquirerDispute)
	}
	return ev.Verified, err
}

// refreshAcquirerRefunds asks again about each of p's refunds at its
// acquirer: a pending one as the payments job would; a succeeded one in
// case it failed after all (the buyer's bank could not take the money),
// which gives the merchant the amount back and records payment.refunded
// with amount_refunded down by it.
func (s *Service) refreshAcquirerRefunds(ctx context.Context, sa *storeAcquirer, p *checkout.Payment) error {
	refunds, err := s.store.RefundListByPayment(ctx, p.ID)
	if err != nil {
		return err
	}
	var errs []error
	for _, r := range refunds {
		err = nil
		switch {
		case r.Status == checkout.RefundPending:
			_, err = s.processDueRefund(ctx, r)
		case r.Status == checkout.RefundSucceeded && r.Acquirer != nil && r.Acquirer.ID != "":
			err = s.reverseIfFailed(ctx, sa, r)
		}
		if err != nil && !errors.Is(err, errRefundPending) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// reverseIfFailed looks up a refund that succeeded and, when the acquirer
// now says it failed, reverses it (checkout.Refund.Reverse).
func (s *Service) reverseIfFailed(ctx context.Context, sa *storeAcquirer, r *checkout.Refund) error {
	ar, err := sa.acq.LookupRefund(ctx, r.Acquirer.ID)
	if err != nil || ar.Status != pay.AcquirerFailed {
		return err
	}
	code := ar.FailureCode
	if code == "" {
		code = checkout.RefundFailDeclined
	}
	return s.inTx(ctx, func(tx *txn) error {
		p, err := tx.PaymentGetForUpdate(ctx, r.PaymentID)
		if err != nil {
			return err
		}
		cur, err := tx.RefundGetForUpdate(ctx, r.ID)
		if err != nil || cur.Status != checkout.RefundSucceeded {
			return err // reversed meanwhile
		}
		if err := cur.Reverse(p, code, s.now()); err != nil {
			return err
		}
		cur.Acquirer.Status = string(ar.Status)
		if err := s.writeRefund(ctx, tx, cur, p); err != nil {
			return err
		}
		s.log.WarnContext(ctx, "refund failed at the card acquirer after it had succeeded: the amount is the merchant's again",
			"refund_id", cur.ID, "payment_id", p.ID, "failure_code", code)
		return s.emitPayment(ctx, tx, checkout.EventPaymentRefunded, p)
	})
}

// syncAcquirerDispute looks up a dispute the acquirer opened on payment p
// and writes it: opened here (payment.disputed) when it is new, closed
// (payment.dispute_closed) once the acquirer decided it. A dispute of
// another payment is ignored. The merchant answers it at the acquirer.
func (s *Service) syncAcquirerDispute(ctx context.Context, sa *storeAcquirer, p *checkout.Payment, id string) error {
	if id == "" || !sa.acq.Capabilities().Disputes {
		return nil
	}
	ad, err := sa.acq.LookupDispute(ctx, id)
	if err != nil {
		return err
	}
	if ad.AcquirerPayment != p.Acquirer.ID {
		s.log.WarnContext(ctx, "card acquirer's dispute is not of the payment its webhook named; ignored", "payment_id", p.ID, "dispute", id)
		return nil
	}
	m, err := s.Merchant(ctx, p.MerchantID)
	if err != nil {
		return err
	}
	return s.inTx(ctx, func(tx *txn) error {
		cur, err := tx.PaymentGetForUpdate(ctx, p.ID)
		if err != nil {
			return err
		}
		d, err := tx.DisputeGetByPaymentForUpdate(ctx, p.ID)
		if checkout.IsCode(err, checkout.ENotFound) {
			d = nil
		} else if err != nil {
			return err
		}
		now := s.now()
		if d == nil {
			reason := checkout.DisputeReason(ad.Reason)
			if !slices.Contains(checkout.DisputeReasons, reason) {
				reason = checkout.DisputeGeneral
			}
			status := checkout.DisputeStatus(ad.Status)
			if status.Closed() {
				status = checkout.DisputeUnderReview // opened and decided before checkoutd heard: open it, then close it
			}
			fee := ad.Fee
			if fee == 0 {
				fee = m.Pricing.DisputeFeeFor(cur.Currency)
			}
			if d, err = cur.OpenDispute(checkout.DisputePlan{Reason: reason, Status: status}, fee, now); err != nil {
				return err
			}
			// The acquirer decides it; its deadline is the acquirer's.
			d.DueAt = nil
			if !ad.EvidenceDueBy.IsZero() {
				d.EvidenceDueBy = ad.EvidenceDueBy.Truncate(time.Second)
			}
			if err := tx.PaymentUpdate(ctx, cur); err != nil {
				return err
			}
			if err := tx.DisputeInsert(ctx, d); err != nil {
				return err
			}
			if err := s.emitPayment(ctx, tx, checkout.EventPaymentDisputed, cur); err != nil {
				return err
			}
		}
		outcome := checkout.DisputeStatus(ad.Status)
		if d.Status.Closed() || !outcome.Closed() {
			return nil
		}
		if err := d.Close(cur, outcome, now); err != nil {
			return err
		}
		if err := tx.DisputeUpdate(ctx, d); err != nil {
			return err
		}
		if err := tx.PaymentUpdate(ctx, cur); err != nil {
			return err
		}
		s.log.InfoContext(ctx, "dispute closed by the card acquirer", "dispute_id", d.ID, "payment_id", cur.ID, "outcome", outcome)
		return s.emitPayment(ctx, tx, checkout.EventPaymentDisputeClosed, cur)
	})
}

// acquirerRefunder returns the refunder of a payment at a card acquirer:
// its store's acquirer, while the store has it.
func (s *Service) acquirerRefunder(ctx context.Context, p *checkout.Payment) (pay.Refunder, error) {
	sa, err := s.storeAcquirer(ctx, p.MerchantID, p.Mode)
	if err != nil {
		return nil, err
	}
	if sa == nil || sa.name != p.Acquirer.Name || p.Acquirer.ID == "" || !sa.acq.Capabilities().Refunds {
		return nil, checkout.Errorf(checkout.EPaymentNotRefundable,
			"Payment %s cannot be refunded here: the store's card acquirer that took it is no longer set up. Refund it at the acquirer.", p.ID)
	}
	return acquirerRefunds{s: s, sa: sa}, nil
}

// acquirerRefunds refunds a live card payment at its store's acquirer,
// as a pay.Refunder: the first ask creates the refund there (its
// idempotency key derived from the refund's id) and notes the acquirer's
// id on the refund; later asks look that id up. A refund still pending
// there is an unknown outcome to the caller: the payments job asks again.
type acquirerRefunds struct {
	s  *Service
	sa *storeAcquirer
}

// errRefundPending says an acquirer has not finished a refund yet.
var errRefundPending = fmt.Errorf("the refund is pending at the card acquirer: %w", pay.ErrAcquirerUnavailable)

func (a acquirerRefunds) Refund(ctx context.Context, req pay.RefundRequest) (pay.RefundResult, error) {
	r, err := a.s.store.RefundGet(ctx, req.RefundID)
	if err != nil {
		return pay.RefundResult{}, err
	}
	var ar pay.AcquirerRefund
	if r.Acquirer != nil && r.Acquirer.ID != "" {
		ar, err = a.sa.acq.LookupRefund(ctx, r.Acquirer.ID)
	} else {
		ar, err = a.sa.acq.Refund(ctx, pay.AcquirerRefundRequest{
			RefundID: r.ID, AcquirerPayment: req.Payment.Acquirer.ID, Amount: req.Amount, IdempotencyKey: acquirerKey(r.ID, "refund"),
			CheckoutPayment: req.Payment.ID, CheckoutStoreID: req.Payment.MerchantID,
		})
		if err == nil {
			err = a.s.inTx(ctx, func(tx *txn) error {
				cur, err := tx.RefundGetForUpdate(ctx, r.ID)
				if err != nil || cur.Status != checkout.RefundPending {
					return err
				}
				cur.Acquirer = &checkout.AcquirerRef{Name: a.sa.name, ID: ar.ID, Status: string(ar.Status)}
				return tx.RefundUpdate(ctx, cur)
			})
		}
	}
	if err != nil {
		return pay.RefundResult{}, err
	}
	switch ar.Status {
	case pay.AcquirerSucceeded:
		return pay.RefundResult{Succeeded: true}, nil
	case pay.AcquirerFailed, pay.AcquirerCanceled:
		code := ar.FailureCode
		if code == "" {
			code = checkout.RefundFailDeclined
		}
		return pay.RefundResult{FailureCode: code}, nil
	}
	return pay.RefundResult{}, errRefundPending
}

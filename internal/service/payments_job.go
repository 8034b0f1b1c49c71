package service

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/pay"
)

// ProcessDuePayments does what is due on up to limit payments and returns
// how many it changed: crypto payments whose confirmations are in, skins
// trades whose hold ended, test disputes to open, card charges whose
// outcome was never written. The payments job runs it every few seconds; a
// payment that is not ready yet is looked at again later. A payment that
// fails (its processor does not answer, its row cannot be written) is
// logged and counted (Stats.RowFailures), the others are handled all the
// same, and the errors are returned together.
func (s *Service) ProcessDuePayments(ctx context.Context, limit int) (int, error) {
	due, err := s.store.PaymentListDue(ctx, s.now(), limit)
	if err != nil {
		return 0, err
	}
	return eachDue(ctx, s, JobPayments, "payment_id", due, func(p *checkout.Payment) string { return p.ID },
		func(p *checkout.Payment) (bool, error) { return s.processDue(ctx, p) })
}

// processDue handles one due payment. What it asks processors it asks
// before the transaction, which re-checks under lock that the payment is
// still due (another node may have handled it).
func (s *Service) processDue(ctx context.Context, p *checkout.Payment) (bool, error) {
	procs := s.procs.For(p.Mode)
	now := s.now()
	var act settleFunc
	var later time.Time                    // when nothing can be done yet: look again then
	var askErr error                       // the processor did not answer: ask again at later
	var mark func(*checkout.CryptoDetails) // what to note on a payment left as it is
	var droppedAt time.Time                // when its transaction left the mempool, if it has
	unanswered := func(err error) {
		askErr, later = err, now.Add(ProcessorRetry)
	}
	switch {
	case p.Status.Captured() && p.DisputeOnSuccess:
		act = func(tx *txn, m *checkout.Merchant, sess *checkout.Session, p *checkout.Payment) error {
			return s.openDispute(ctx, tx, m, p)
		}
	case p.Status != checkout.PaymentProcessing:
		act = func(tx *txn, m *checkout.Merchant, sess *checkout.Session, p *checkout.Payment) error {
			p.DueAt = nil // nothing left to do
			return tx.PaymentUpdate(ctx, p)
		}
	case p.Method == checkout.MethodCrypto && p.Crypto != nil && p.Crypto.Short():
		// Less than required arrived: the rest may come until ShortUntil
		// (recordCrypto adds it up); then the payment fails, what arrived
		// to be refunded, and the session is free.
		if until := time.UnixMilli(p.Crypto.ShortUntil); now.Before(until) {
			later = until
			break
		}
		s.log.WarnContext(ctx, "crypto payment short of the amount when its time ran out; it fails, to be refunded",
			"payment_id", p.ID, "session_id", p.SessionID, "coin", p.Crypto.Coin, "received_base", p.Crypto.ReceivedBase, "required_base", p.Crypto.RequiredBase)
		act = s.failWith(ctx, checkout.FailUnderpaid)
	case p.Method == checkout.MethodCrypto && procs.Crypto != nil && p.Crypto != nil:
		confs, err := procs.Crypto.Confirmations(ctx, p, now)
		if err != nil {
			unanswered(err)
			break
		}
		if confs >= p.Crypto.Confirmations {
			act = s.succeedWith(ctx)
			break
		}
		if n := s.live(); n != nil && p.Crypto.ReceivedBase != "" {
			// A transaction whose coins the chain spent elsewhere can
			// never confirm: fail now and free the session, rather than
			// hold it until the deadline. One that left the mempool
			// unmined may come back (its wallet broadcasts it again, or
			// bumps its fee): the page says so, and the payment waits
			// DroppedWindow for it.
			conflicted, dropped, err := goneTxs(ctx, n, p)
			if err != nil {
				unanswered(err)
				break
			}
			if conflicted {
				s.log.WarnContext(ctx, "crypto payment double spent: its coins were spent elsewhere; it fails",
					"payment_id", p.ID, "session_id", p.SessionID, "coin", p.Crypto.Coin)
				act = s.failWith(ctx, checkout.FailDoubleSpent)
				break
			}
			if dropped && p.Crypto.DroppedAt != 0 && !now.Before(time.UnixMilli(p.Crypto.DroppedAt).Add(DroppedWindow)) {
				s.log.WarnContext(ctx, "crypto payment dropped: its transaction left the mempool unmined and did not come back; it fails",
					"payment_id", p.ID, "session_id", p.SessionID, "coin", p.Crypto.Coin, "dropped_at", time.UnixMilli(p.Crypto.DroppedAt).UTC())
				act = s.failWith(ctx, checkout.FailDropped)
				break
			}
			if dropped && p.Crypto.DroppedAt != 0 {
				droppedAt = time.UnixMilli(p.Crypto.DroppedAt)
			}
			switch {
			case dropped && p.Crypto.DroppedAt == 0:
				droppedAt = now
				s.log.WarnContext(ctx, "crypto payment dropped: its transaction left the mempool unmined; waiting for it to come back",
					"payment_id", p.ID, "session_id", p.SessionID, "coin", p.Crypto.Coin, "window", DroppedWindow)
				mark = func(d *checkout.CryptoDetails) { d.DroppedAt = now.UnixMilli() }
			case !dropped && p.Crypto.DroppedAt != 0:
				s.log.InfoContext(ctx, "crypto payment's dropped transaction is back", "payment_id", p.ID, "session_id", p.SessionID)
				mark = func(d *checkout.CryptoDetails) { d.DroppedAt = 0 }
			}
		}
		coin, ok := checkout.CoinByCode(p.Crypto.Coin)
		if !ok {
			s.log.ErrorContext(ctx, "due crypto payment in an unknown coin", "payment_id", p.ID, "coin", p.Crypto.Coin)
			later = now.Add(time.Hour)
			break
		}
		broadcast := time.UnixMilli(p.Crypto.BroadcastAt)
		if !now.Before(coin.Deadline(broadcast)) {
			// Not confirmed by the deadline: the session is freed, and
			// expires at its own expires_at if nothing else pays it.
			s.log.WarnContext(ctx, "crypto payment not confirmed by its deadline; it fails",
				"payment_id", p.ID, "session_id", p.SessionID, "coin", coin.Code, "confirmations", confs, "deadline", coin.ConfirmationDeadline)
			act = s.failWith(ctx, checkout.FailConfirmationTimeout)
			break
		}
		later = coin.NextLook(confs, broadcast, now)
		if p.Crypto.ReceivedBase != "" && s.live() != nil {
			// A live node counts the confirmations, and a block may come
			// early: look again soon, cheaply (one call to the node).
			later = now.Add(LiveConfirmationLook)
		}
		if dropped := droppedAt; !dropped.IsZero() && dropped.Add(DroppedWindow).Before(later) {
			later = dropped.Add(DroppedWindow) // fail it on time
		}
	case p.Method == checkout.MethodSkins && procs.Skins != nil:
		if p.Skins == nil {
			// The trade's outcome was never written (the platform did not
			// answer, or the node stopped): ask the platform. Until it
			// answers, the payment stays processing.
			trade, found, err := procs.Skins.Lookup(ctx, p.ID)
			if err != nil {
				unanswered(err)
				break
			}
			if !found {
				act = s.failWith(ctx, checkout.FailProcessingError)
				break
			}
			act = s.tradeAnswer(ctx, trade).apply
			break
		}
		if now.Before(time.Unix(p.Skins.HoldUntil, 0)) {
			later = time.Unix(p.Skins.HoldUntil, 0)
			break
		}
		stands, err := procs.Skins.Settled(ctx, p)
		if err != nil {
			unanswered(err)
			break
		}
		if !stands {
			act = s.failWith(ctx, checkout.FailTradeReversed)
			break
		}
		act = s.succeedWith(ctx)
	case p.Method == checkout.MethodCard && p.Acquirer != nil:
		// A card payment at the store's acquirer: look it up there
		// (pay_acquirer.go); while its buyer has not confirmed it, look
		// again soon, and cancel it when its hold is over.
		out, err := s.reconcileAcquirer(ctx, p)
		if err != nil {
			unanswered(err)
			if !pay.Unavailable(err) {
				later = now.Add(time.Hour) // the store's acquirer is gone
			}
			break
		}
		if out != nil {
			return out.Payment.Status != checkout.PaymentProcessing, nil
		}
		later = now.Add(AcquirerLook)
		if end := p.CreatedAt.Add(AcquirerHold); end.Before(later) {
			later = end
		}
	case p.Method == checkout.MethodCard && procs.Card != nil:
		res, found, err := procs.Card.Lookup(ctx, p.ID)
		if err != nil {
			unanswered(err)
			break
		}
		if !found {
			act = s.failWith(ctx, checkout.FailProcessingError)
			break
		}
		out, err := s.settleCard(ctx, p.ID, res)
		return err == nil && out.Payment.Status != checkout.PaymentProcessing, err
	default:
		// No processor for the payment's method in its mode (a live
		// processor removed from the configuration): look again in an hour.
		s.log.ErrorContext(ctx, "due payment has no processor", "payment_id", p.ID, "method", p.Method, "mode", p.Mode)
		later = now.Add(time.Hour)
	}
	changed := false
	_, err := s.settle(ctx, p.ID, func(tx *txn, m *checkout.Merchant, sess *checkout.Session, cur *checkout.Payment) error {
		if cur.DueAt == nil || !cur.DueAt.Equal(*p.DueAt) {
			return nil // handled meanwhile
		}
		if act == nil {
			cur.DueAt = &later
			if mark != nil && cur.Crypto != nil {
				mark(cur.Crypto)
				cur.UpdatedAt = s.now()
			}
			return tx.PaymentUpdate(ctx, cur)
		}
		changed = true
		return act(tx, m, sess, cur)
	})
	if askErr != nil {
		// Still a failure of the row (logged and counted), but one that
		// is asked again in ProcessorRetry, not at every round.
		return false, errors.Join(fmt.Errorf("the processor did not answer; asking again at %s: %w", later.UTC().Format(time.RFC3339), askErr), err)
	}
	return changed, err
}

// DroppedWindow is how long a live crypto payment whose transaction left
// the mempool unmined (evicted for its low fee, or expired) waits for it to
// come back, as its wallet broadcasts it again or bumps its fee; then it
// fails, dropped, and the session is free to be paid again. Should the
// transaction confirm after all, the scan flags the failed payment
// captured_after_failure, to be refunded.
const DroppedWindow = time.Hour

// ProcessorRetry is how long the payments job waits before asking a
// processor again about a payment it did not answer for (a lookup, a
// confirmation count, a trade's standing): an outage costs one question and
// one error log per payment a minute, and the payment stays processing,
// holding its session, until the processor answers.
const ProcessorRetry = time.Minute

// ProcessAllDuePayments runs ProcessDuePayments, ProcessDueRefunds and
// ProcessDueDisputes, each until nothing due is left (or a round of it fails: a payment that
// fails does not hold the refunds back).
func (s *Service) ProcessAllDuePayments(ctx context.Context) (int, error) {
	total := 0
	var errs []error
	for _, process := range []func(context.Context, int) (int, error){s.ProcessDuePayments, s.ProcessDueRefunds, s.ProcessDueDisputes} {
		for {
			n, err := process(ctx, expireBatch)
			total += n
			if err != nil || n < expireBatch {
				errs = append(errs, err)
				break
			}
		}
	}
	return total, errors.Join(errs...)
}

package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/pay"
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
// A crash between 1 and 3 leaves the payment processing with a due time;
// the payments job then asks the processor what became of it. The
// database's unique index on captured payments per session backs all of
// this up: a second capture of one session cannot be written.

// PageSession is what the hosted payment page shows of a session.
type PageSession struct {
	Session  *checkout.Session
	Merchant *checkout.Merchant
	// Methods are the payment methods the session's mode offers.
	Methods []checkout.PaymentMethod
	// Active is the payment on its way, nil when none is.
	Active *checkout.Payment
	// Paid is the payment that completed the session, nil until one did.
	Paid *checkout.Payment
	// Failed are the session's failed payments. Their order is not that of
	// the attempts: payments made within one tick of the clock tie.
	Failed []*checkout.Payment
	// FailedCardAttempts counts the session's failed card payments.
	FailedCardAttempts int
}

// PageSession returns a session for its payment page. Anyone holding the
// session's id may see this: the page is public. A session whose hour is
// over turns expired here, as on any read.
func (s *Service) PageSession(ctx context.Context, id string) (*PageSession, error) {
	if !checkout.ValidSessionID(id) {
		return nil, checkout.Errorf(checkout.ECheckoutNotFound, "No such checkout session.")
	}
	sess, err := s.store.SessionGet(ctx, id)
	if err != nil {
		return nil, err
	}
	m, err := s.Merchant(ctx, sess.MerchantID)
	if err != nil {
		return nil, err
	}
	if sess.ExpiryDue(s.now()) {
		if sess, _, err = s.expire(ctx, m, id); err != nil {
			return nil, err
		}
	}
	ps := &PageSession{Session: sess, Merchant: m, Methods: s.procs.For(sess.Mode).Methods()}
	payments, err := s.store.PaymentListBySession(ctx, id)
	if err != nil {
		return nil, err
	}
	for _, p := range payments {
		switch {
		case sess.ActivePaymentID != nil && p.ID == *sess.ActivePaymentID:
			ps.Active = p
		case sess.PaymentID != nil && p.ID == *sess.PaymentID:
			ps.Paid = p
		case p.Status == checkout.PaymentFailed:
			ps.Failed = append(ps.Failed, p)
			if p.Method == checkout.MethodCard {
				ps.FailedCardAttempts++
			}
		}
	}
	return ps, nil
}

// Processors returns the processors of a mode.
func (s *Service) Processors(mode checkout.Mode) pay.Processors { return s.procs.For(mode) }

// PaymentOutcome is the result of a payment attempt on the page.
type PaymentOutcome struct {
	Payment *checkout.Payment
	Session *checkout.Session
}

// PayByCard pays a session with a card. The form is validated first
// (validation_failed with a violation per field); a session that cannot take
// a payment declines with a checkout.Decline, and the card is not charged.
// Otherwise the outcome's payment tells: succeeded, failed with its code,
// or, when the processor did not answer, processing.
func (s *Service) PayByCard(ctx context.Context, sessionID string, form pay.CardForm) (*PaymentOutcome, error) {
	card, vs := pay.ParseCard(form, s.now())
	email := strings.TrimSpace(form.Email)
	if email != "" {
		if msg := checkout.CheckEmail(email); msg != "" {
			vs = append(vs, checkout.Violation{Code: "invalid_email", Param: "email", Message: "Your email " + msg})
		}
	}
	if vs != nil {
		return nil, &checkout.Error{Code: checkout.EValidationFailed, Message: vs[0].Message, Param: vs[0].Param, Details: vs}
	}
	p, sess, m, err := s.beginPayment(ctx, sessionID, checkout.MethodCard, func(p *checkout.Payment) {
		last4, brand := card.Last4(), pay.CardBrand(card.Number)
		p.CardLast4, p.CardBrand, p.CustomerName = &last4, &brand, &card.Name
		if email != "" {
			p.ReceiptEmail = &email
		}
		due := s.now().Add(checkout.CardChargeTimeout)
		p.DueAt = &due
	})
	if err != nil {
		return nil, err
	}
	// From here the charge and its settlement outlive the request: a buyer
	// who closes the tab mid-charge must not leave the outcome unwritten.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), chargeTimeout)
	defer cancel()
	res, chargeErr := s.procs.For(sess.Mode).Card.Charge(ctx, pay.CardCharge{
		PaymentID: p.ID, Amount: p.Amount, Currency: p.Currency,
		StatementDescriptor: m.StatementDescriptor, Card: card,
	})
	if chargeErr != nil {
		// The outcome is unknown: the payment keeps the session until the
		// payments job learns it from the processor.
		s.log.WarnContext(ctx, "card charge without an outcome; the payments job will look it up",
			"payment_id", p.ID, "error", chargeErr)
		return &PaymentOutcome{Payment: p, Session: sess}, nil
	}
	return s.settleCard(ctx, p.ID, res)
}

// chargeTimeout bounds a processor call and the settlement after it.
const chargeTimeout = 60 * time.Second

// settleCard writes a card processor's answer.
func (s *Service) settleCard(ctx context.Context, paymentID string, res pay.CardResult) (*PaymentOutcome, error) {
	var flagged bool
	out, err := s.settle(ctx, paymentID, func(tx *txn, m *checkout.Merchant, sess *checkout.Session, p *checkout.Payment) error {
		if p.Status != checkout.PaymentProcessing {
			// Settled already (the payments job, another node). An
			// approval after the payment failed took the money for nothing.
			if !res.Approved {
				return nil
			}
			var err error
			flagged, err = s.flagCapturedAfterFailure(ctx, tx, p)
			return err
		}
		if res.Brand != "" {
			p.CardBrand = &res.Brand
		}
		if res.Country != "" {
			p.BuyerCountry = &res.Country
		}
		if !res.Approved {
			code := res.FailureCode
			if code == "" {
				code = checkout.FailCardDeclined
			}
			return s.failPayment(ctx, tx, m, sess, p, code)
		}
		p.DisputeOnSuccess = res.Dispute
		return s.succeedPayment(ctx, tx, m, sess, p)
	})
	if err == nil && flagged {
		s.capturedAfterFailure(ctx, out.Payment)
	}
	return out, err
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
		if !s.procs.For(sess.Mode).Offers(method) {
			decline = checkout.DeclineMethod
			return nil
		}
		if decline = sess.PaymentDecline(now); decline != checkout.DeclineNone {
			return nil
		}
		if method == checkout.MethodCard {
			n, err := tx.PaymentCountFailed(ctx, sessionID, method)
			if err != nil {
				return err
			}
			if n >= checkout.MaxFailedCardAttempts {
				decline = checkout.DeclineTooManyRetries
				return nil
			}
		}
		p = checkout.NewPayment(sess, method, now)
		prepare(p)
		if err := sess.BeginPayment(p.ID, now); err != nil {
			return err
		}
		if err := tx.PaymentInsert(ctx, p); err != nil {
			return err
		}
		return tx.SessionUpdate(ctx, sess)
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

// settle runs fn on a payment and its session, both locked (the session
// first, as beginPayment locks them), in one transaction.
func (s *Service) settle(ctx context.Context, paymentID string, fn func(tx *txn, m *checkout.Merchant, sess *checkout.Session, p *checkout.Payment) error) (*PaymentOutcome, error) {
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

// CryptoQuote returns the address and amount at which a session takes coin,
// the same on every view and node: the first quote stands.
func (s *Service) CryptoQuote(ctx context.Context, sessionID, coinCode string) (*checkout.CryptoQuote, error) {
	coin, ok := checkout.CoinByCode(coinCode)
	if !ok {
		return nil, checkout.Errorf(checkout.EValidationFailed, "Pick one of the coins offered.")
	}
	ps, err := s.PageSession(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	network := s.procs.For(ps.Session.Mode).Crypto
	if network == nil {
		return nil, checkout.DeclineMethod
	}
	if q, err := s.store.CryptoQuoteGet(ctx, sessionID, coin.Code); err == nil || !checkout.IsCode(err, checkout.ENotFound) {
		return q, err
	}
	if d := ps.Session.PaymentDecline(s.now()); d == checkout.DeclineComplete || d == checkout.DeclineExpired {
		return nil, d
	}
	sess := ps.Session
	quote, err := network.Quote(ctx, pay.QuoteRequest{SessionID: sessionID, Mode: sess.Mode, Coin: coin, Amount: sess.TotalAmount, Currency: sess.Currency})
	if err != nil {
		return nil, checkout.Internal(fmt.Errorf("quote %s: %w", coin.Code, err))
	}
	q := &checkout.CryptoQuote{SessionID: sessionID, Coin: coin.Code, Address: quote.Address, AmountBase: quote.Amount.String(), CreatedAt: s.now()}
	if err := s.store.InTx(ctx, func(tx checkout.Tx) error { return tx.CryptoQuoteInsert(ctx, q) }); err != nil {
		return nil, err
	}
	return s.store.CryptoQuoteGet(ctx, sessionID, coin.Code)
}

// CryptoReceived records a transaction paying a session's quote for a coin,
// as a crypto network reports it, once per transaction. When the session
// is open and free, the payment holds it until its confirmations are in.
// Money that arrives for a session that cannot take it is recorded as a
// failed payment, to be refunded: session_expired (late crypto, DESIGN.md
// 4.10), session_completed, or duplicate_payment when another payment holds
// the session.
func (s *Service) CryptoReceived(ctx context.Context, sessionID, coin, txHash string) (*checkout.Payment, error) {
	return s.cryptoReceived(ctx, sessionID, coin, txHash, false)
}

// SimulateCryptoPayment is the test-mode control of the page: the simulated
// wallet sends the quoted amount. Unlike a real wallet it checks first, in
// the transaction that records the payment, and sends nothing (declining)
// when the session is paid or another payment holds it: a test buyer is
// never charged twice. A session whose hour is over still receives it, as
// late crypto does.
func (s *Service) SimulateCryptoPayment(ctx context.Context, sessionID, coin string) (*checkout.Payment, error) {
	sess, err := s.store.SessionGet(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	if sess.Mode.Live() {
		return nil, checkout.Errorf(checkout.EValidationFailed, "Simulated payments exist in test mode only.")
	}
	q, err := s.store.CryptoQuoteGet(ctx, sessionID, coin)
	if err != nil {
		return nil, err
	}
	return s.cryptoReceived(ctx, sessionID, coin, pay.TestTxHash(q), true)
}

func (s *Service) cryptoReceived(ctx context.Context, sessionID, coinCode, txHash string, refuseTaken bool) (*checkout.Payment, error) {
	coin, ok := checkout.CoinByCode(coinCode)
	if !ok {
		return nil, checkout.Errorf(checkout.EValidationFailed, "Unknown coin %s.", coinCode)
	}
	q, err := s.store.CryptoQuoteGet(ctx, sessionID, coin.Code)
	if err != nil {
		return nil, err
	}
	payments, err := s.store.PaymentListBySession(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	if i := slices.IndexFunc(payments, func(p *checkout.Payment) bool { return p.Crypto != nil && p.Crypto.TxHash == txHash }); i >= 0 {
		return payments[i], nil // reported again
	}
	m, err := s.sessionMerchant(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	var p *checkout.Payment
	var decline checkout.Decline
	err = s.inTx(ctx, func(tx *txn) error {
		sess, err := tx.SessionGetForUpdate(ctx, sessionID)
		if err != nil {
			return err
		}
		// Again under the session's lock, which every payment of the
		// session takes: a report racing this one (the network repeating
		// itself, another node) may have recorded the transaction since.
		if p, err = tx.PaymentGetByTxHash(ctx, sessionID, txHash); err == nil || !checkout.IsCode(err, checkout.ENotFound) {
			return err
		}
		p = nil
		now := s.now()
		if sess.ExpiryDue(now) {
			if err := s.expireLocked(ctx, tx, m, sess, now); err != nil {
				return err
			}
		}
		d := sess.PaymentDecline(now)
		if refuseTaken && (d == checkout.DeclineComplete || d == checkout.DeclineInProgress) {
			decline = d
			return nil
		}
		p = checkout.NewPayment(sess, checkout.MethodCrypto, now)
		p.Crypto = &checkout.CryptoDetails{
			Coin: coin.Code, Address: q.Address, AmountBase: q.AmountBase, TxHash: txHash,
			Confirmations: coin.Confirmations, BroadcastAt: now.UnixMilli(),
		}
		if d != checkout.DeclineNone {
			code := map[checkout.Decline]string{
				checkout.DeclineExpired:    checkout.FailSessionExpired,
				checkout.DeclineComplete:   checkout.FailSessionCompleted,
				checkout.DeclineInProgress: checkout.FailDuplicatePayment,
			}[d]
			if err := tx.PaymentInsert(ctx, p); err != nil {
				return err
			}
			return s.failPayment(ctx, tx, m, sess, p, code)
		}
		due := now.Add(coin.ConfirmationTime())
		p.DueAt = &due
		if err := sess.BeginPayment(p.ID, now); err != nil {
			return err
		}
		if err := tx.PaymentInsert(ctx, p); err != nil {
			return err
		}
		return tx.SessionUpdate(ctx, sess)
	})
	if err != nil {
		return nil, err
	}
	if decline != checkout.DeclineNone {
		return nil, decline
	}
	return p, nil
}

// expireLocked expires a locked, due session in tx and records
// checkout.expired.
func (s *Service) expireLocked(ctx context.Context, tx *txn, m *checkout.Merchant, sess *checkout.Session, now time.Time) error {
	if err := sess.Expire(now); err != nil {
		return err
	}
	if err := tx.SessionUpdate(ctx, sess); err != nil {
		return err
	}
	return s.emitSession(ctx, tx, m, checkout.EventCheckoutExpired, sess)
}

// SkinsInventory returns the buyer's items for a session.
func (s *Service) SkinsInventory(ctx context.Context, sessionID string) ([]checkout.SkinItem, error) {
	sess, err := s.store.SessionGet(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	platform := s.procs.For(sess.Mode).Skins
	if platform == nil {
		return nil, checkout.DeclineMethod
	}
	return platform.Inventory(ctx, sessionID, sess.TotalAmount, sess.Currency)
}

// PayBySkins trades the buyer's items for a session: the payment holds the
// session through the platform's trade hold, then the payments job
// completes it. Items worth less than the total are refused
// (validation_failed) before anything is traded.
func (s *Service) PayBySkins(ctx context.Context, sessionID string, itemIDs []string) (*PaymentOutcome, error) {
	inv, err := s.SkinsInventory(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	sess, err := s.store.SessionGet(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	if err := checkTrade(inv, itemIDs, sess.TotalAmount, sess.Currency); err != nil {
		return nil, err
	}
	p, sess, _, err := s.beginPayment(ctx, sessionID, checkout.MethodSkins, func(p *checkout.Payment) {
		// Until the trade is recorded, a crash leaves it for the job.
		due := s.now().Add(checkout.CardChargeTimeout)
		p.DueAt = &due
	})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), chargeTimeout)
	defer cancel()
	trade, tradeErr := s.procs.For(sess.Mode).Skins.Trade(ctx, pay.TradeRequest{
		PaymentID: p.ID, SessionID: sessionID, ItemIDs: itemIDs, Total: sess.TotalAmount, Currency: sess.Currency, Now: s.now(),
	})
	if tradeErr != nil && !pay.Refused(tradeErr) {
		// The outcome is unknown: the platform may have accepted the trade,
		// so the payment keeps the session until the payments job learns
		// it from the platform (Lookup).
		s.log.WarnContext(ctx, "skins trade without an outcome; the payments job will look it up",
			"payment_id", p.ID, "session_id", sessionID, "error", tradeErr)
		return &PaymentOutcome{Payment: p, Session: sess}, nil
	}
	var flagged bool
	out, err := s.settle(ctx, p.ID, func(tx *txn, m *checkout.Merchant, sess *checkout.Session, p *checkout.Payment) error {
		if p.Status != checkout.PaymentProcessing {
			// Settled already: items traded after the payment failed are
			// to be returned.
			if tradeErr != nil {
				return nil
			}
			var err error
			flagged, err = s.flagCapturedAfterFailure(ctx, tx, p)
			return err
		}
		if tradeErr != nil {
			s.log.WarnContext(ctx, "skins trade refused", "payment_id", p.ID, "error", tradeErr)
			return s.failPayment(ctx, tx, m, sess, p, checkout.FailProcessingError)
		}
		return s.recordTrade(ctx, tx, p, trade)
	})
	if err == nil && flagged {
		s.capturedAfterFailure(ctx, out.Payment)
	}
	return out, err
}

// recordTrade records an accepted trade on its processing payment, which
// holds the session until the platform's hold ends.
func (s *Service) recordTrade(ctx context.Context, tx *txn, p *checkout.Payment, trade pay.Trade) error {
	p.Skins = &checkout.SkinsDetails{TradeID: trade.ID, Items: trade.Items, Value: trade.Value, HoldUntil: trade.HoldUntil.Unix()}
	p.DueAt = &trade.HoldUntil
	p.UpdatedAt = s.now()
	return tx.PaymentUpdate(ctx, p)
}

// checkTrade checks that the items are in the inventory, once each, and
// worth at least total.
func checkTrade(inv []checkout.SkinItem, ids []string, total int64, currency string) error {
	if len(ids) == 0 {
		return &checkout.Error{Code: checkout.EValidationFailed, Param: "items", Message: "Pick the items to trade."}
	}
	var value int64
	seen := map[string]bool{}
	for _, id := range ids {
		i := slices.IndexFunc(inv, func(it checkout.SkinItem) bool { return it.ID == id })
		if i < 0 || seen[id] {
			return &checkout.Error{Code: checkout.EValidationFailed, Param: "items", Message: "The items picked are not in your inventory."}
		}
		seen[id] = true
		value += inv[i].Value
	}
	if value < total {
		return &checkout.Error{Code: checkout.EValidationFailed, Param: "items", Message: fmt.Sprintf(
			"The items picked are worth %s; pick items worth at least %s.", checkout.FormatAmount(value, currency), checkout.FormatAmount(total, currency))}
	}
	return nil
}

// ProcessDuePayments does what is due on up to limit payments and returns
// how many it changed: crypto payments whose confirmations are in, skins
// trades whose hold ended, test disputes to open, card charges whose
// outcome was never written. The payments job runs it every few seconds; a
// payment that is not ready yet is looked at again later.
func (s *Service) ProcessDuePayments(ctx context.Context, limit int) (int, error) {
	due, err := s.store.PaymentListDue(ctx, s.now(), limit)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, p := range due {
		changed, err := s.processDue(ctx, p)
		if err != nil {
			errs = append(errs, fmt.Errorf("payment %s: %w", p.ID, err))
			continue
		}
		if changed {
			n++
		}
	}
	return n, errors.Join(errs...)
}

// processDue handles one due payment. What it asks processors it asks
// before the transaction, which re-checks under lock that the payment is
// still due (another node may have handled it).
func (s *Service) processDue(ctx context.Context, p *checkout.Payment) (bool, error) {
	procs := s.procs.For(p.Mode)
	now := s.now()
	var act func(tx *txn, m *checkout.Merchant, sess *checkout.Session, p *checkout.Payment) error
	var later time.Time // when nothing can be done yet: look again then
	switch {
	case p.Status.Captured() && p.DisputeOnSuccess:
		act = func(tx *txn, m *checkout.Merchant, sess *checkout.Session, p *checkout.Payment) error {
			if err := p.OpenDispute(s.now()); err != nil {
				return err
			}
			p.DisputeOnSuccess = false
			if err := tx.PaymentUpdate(ctx, p); err != nil {
				return err
			}
			return s.emitPayment(ctx, tx, checkout.EventPaymentDisputed, p)
		}
	case p.Status != checkout.PaymentProcessing:
		act = func(tx *txn, m *checkout.Merchant, sess *checkout.Session, p *checkout.Payment) error {
			p.DueAt = nil // nothing left to do
			return tx.PaymentUpdate(ctx, p)
		}
	case p.Method == checkout.MethodCrypto && procs.Crypto != nil && p.Crypto != nil:
		confs, err := procs.Crypto.Confirmations(ctx, p, now)
		if err != nil {
			return false, err
		}
		if confs >= p.Crypto.Confirmations {
			act = s.succeedWith(ctx)
			break
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
	case p.Method == checkout.MethodSkins && procs.Skins != nil:
		if p.Skins == nil {
			// The trade's outcome was never written (the platform did not
			// answer, or the node stopped): ask the platform. Until it
			// answers, the payment stays processing.
			trade, found, err := procs.Skins.Lookup(ctx, p.ID)
			if err != nil {
				return false, err
			}
			if !found {
				act = s.failWith(ctx, checkout.FailProcessingError)
				break
			}
			act = func(tx *txn, m *checkout.Merchant, sess *checkout.Session, p *checkout.Payment) error {
				return s.recordTrade(ctx, tx, p, trade)
			}
			break
		}
		if now.Before(time.Unix(p.Skins.HoldUntil, 0)) {
			later = time.Unix(p.Skins.HoldUntil, 0)
			break
		}
		stands, err := procs.Skins.Settled(ctx, p)
		if err != nil {
			return false, err
		}
		if !stands {
			act = s.failWith(ctx, checkout.FailTradeReversed)
			break
		}
		act = s.succeedWith(ctx)
	case p.Method == checkout.MethodCard && procs.Card != nil:
		res, found, err := procs.Card.Lookup(ctx, p.ID)
		if err != nil {
			return false, err
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
			return tx.PaymentUpdate(ctx, cur)
		}
		changed = true
		return act(tx, m, sess, cur)
	})
	return changed, err
}

func (s *Service) succeedWith(ctx context.Context) func(tx *txn, m *checkout.Merchant, sess *checkout.Session, p *checkout.Payment) error {
	return func(tx *txn, m *checkout.Merchant, sess *checkout.Session, p *checkout.Payment) error {
		return s.succeedPayment(ctx, tx, m, sess, p)
	}
}

func (s *Service) failWith(ctx context.Context, code string) func(tx *txn, m *checkout.Merchant, sess *checkout.Session, p *checkout.Payment) error {
	return func(tx *txn, m *checkout.Merchant, sess *checkout.Session, p *checkout.Payment) error {
		return s.failPayment(ctx, tx, m, sess, p, code)
	}
}

// ProcessAllDuePayments runs ProcessDuePayments until nothing due is left.
func (s *Service) ProcessAllDuePayments(ctx context.Context) (int, error) {
	total := 0
	for {
		n, err := s.ProcessDuePayments(ctx, expireBatch)
		total += n
		if err != nil || n < expireBatch {
			return total, err
		}
	}
}

// CryptoProgress is how far a crypto payment is: confirmations so far and
// needed.
type CryptoProgress struct {
	Confirmations int
	Needed        int
}

// CryptoProgressOf returns the progress of a crypto payment now.
func (s *Service) CryptoProgressOf(ctx context.Context, p *checkout.Payment) (CryptoProgress, error) {
	if p.Crypto == nil {
		return CryptoProgress{}, fmt.Errorf("payment %s is not a crypto payment", p.ID)
	}
	pr := CryptoProgress{Needed: p.Crypto.Confirmations}
	if p.Status.Captured() {
		pr.Confirmations = pr.Needed
		return pr, nil
	}
	network := s.procs.For(p.Mode).Crypto
	if network == nil {
		return pr, nil
	}
	n, err := network.Confirmations(ctx, p, s.now())
	pr.Confirmations = min(n, pr.Needed)
	return pr, err
}

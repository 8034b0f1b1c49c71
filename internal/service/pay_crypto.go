package service

import (
	"context"
	"fmt"
	"math/big"
	"slices"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/pay"
)

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
		if live, ok := network.(pay.LiveCryptoNetwork); ok && err == nil && !q.ExpiresAt.IsZero() && !s.now().Before(q.ExpiresAt) {
			return s.requote(ctx, live, ps, q)
		}
		return q, err
	}
	if d := ps.Session.PaymentDecline(s.now()); d == checkout.DeclineComplete || d == checkout.DeclineExpired {
		return nil, d
	}
	if live, ok := network.(pay.LiveCryptoNetwork); ok && ps.Session.Mode.Live() {
		return s.liveQuote(ctx, live, ps.Session, coin)
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
	return s.recordCrypto(ctx, cryptoReport{sessionID: sessionID, coin: coinCode, txHash: txHash, refuseTaken: refuseTaken})
}

// cryptoReport is a transaction paying a quote, as reported.
type cryptoReport struct {
	sessionID, coin, txHash string
	// refuseTaken is the simulator's: send nothing to a session that is
	// paid or held.
	refuseTaken bool
	// received is what a live node saw the transaction pay (nil: the
	// quote exactly), required what it must pay (nil: the quote's amount;
	// a fresh quote's when the quote had expired), and depth the
	// confirmations it needs (0: the coin's default).
	received, required *big.Int
	depth              int
	// replaces is the payment the transaction replaces (replaceGone),
	// if any.
	replaces *replacing
}

func (s *Service) recordCrypto(ctx context.Context, r cryptoReport) (*checkout.Payment, error) {
	sessionID, coinCode, txHash, refuseTaken := r.sessionID, r.coin, r.txHash, r.refuseTaken
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
	if i := slices.IndexFunc(payments, func(p *checkout.Payment) bool { return paidBy(p, txHash) }); i >= 0 {
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
		carried, err := s.failReplaced(ctx, tx, m, sess, r.replaces)
		if err != nil {
			return err
		}
		if r.received != nil && sess.ActivePaymentID != nil {
			// The rest of an underpayment, to the same address: it adds up.
			active, err := tx.PaymentGetForUpdate(ctx, *sess.ActivePaymentID)
			if err != nil {
				return err
			}
			if active.Crypto != nil && active.Crypto.Short() && active.Crypto.Coin == coin.Code && active.Crypto.Address == q.Address &&
				active.Status == checkout.PaymentProcessing {
				if slices.Contains(active.Crypto.TxHashes(), txHash) {
					p = active
					return nil // reported again
				}
				p = active
				return topUp(ctx, tx, active, txHash, r.received, now)
			}
		}
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
		if r.depth > 0 {
			p.Crypto.Confirmations = r.depth
		}
		if r.received != nil {
			received := new(big.Int).Set(r.received)
			required := r.required
			if carried != nil {
				// What still stands of the payment this transaction
				// replaced is part of this one, against the same amount.
				received.Add(received, carried.received)
				p.Crypto.TopUps = carried.txs
				required = carried.required
			}
			p.Crypto.ReceivedBase = received.String()
			if required == nil {
				var ok bool
				if required, ok = new(big.Int).SetString(q.AmountBase, 10); !ok {
					return fmt.Errorf("quote amount %q is not an integer", q.AmountBase)
				}
			}
			p.Crypto.RequiredBase = required.String()
			if received.Cmp(required) < 0 && d == checkout.DeclineNone {
				// Short: the payment holds the session while the rest may
				// come, to the same address, for UnderpaidWindow (from
				// the replaced payment's first: a fee bump buys no time).
				until := now.Add(UnderpaidWindow)
				if carried != nil && carried.shortUntil != 0 {
					until = time.UnixMilli(carried.shortUntil)
				}
				p.Crypto.ShortUntil = until.UnixMilli()
				p.DueAt = &until
				return hold(ctx, tx, sess, p, now)
			}
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
		due := now.Add(time.Duration(p.Crypto.Confirmations) * coin.BlockTime)
		if r.received != nil {
			due = now // a live node counts: look at once, then every LiveConfirmationLook
		}
		p.DueAt = &due
		return hold(ctx, tx, sess, p, now)
	})
	if err != nil {
		return nil, err
	}
	if decline != checkout.DeclineNone {
		return nil, decline
	}
	return p, nil
}

// carriedTxs are the transactions of a replaced payment that still stand,
// which the replacing one takes over.
type carriedTxs struct {
	txs        []checkout.CryptoTopUp
	received   *big.Int // their sum
	required   *big.Int // what the replaced payment had to reach
	shortUntil int64    // the replaced payment's ShortUntil
}

// failReplaced fails, replaced, the payment r names (replaceGone found some
// of its transactions gone) if it is still the one holding sess, and
// returns its transactions that still stand, for the replacing payment to
// take over; nil when there is nothing to replace.
func (s *Service) failReplaced(ctx context.Context, tx *txn, m *checkout.Merchant, sess *checkout.Session, r *replacing) (*carriedTxs, error) {
	if r == nil || sess.ActivePaymentID == nil || *sess.ActivePaymentID != r.paymentID {
		return nil, nil
	}
	old, err := tx.PaymentGetForUpdate(ctx, r.paymentID)
	if err != nil {
		return nil, err
	}
	if old.Status != checkout.PaymentProcessing || old.Crypto == nil {
		return nil, nil
	}
	c := &carriedTxs{received: new(big.Int), shortUntil: old.Crypto.ShortUntil}
	var ok bool
	if c.required, ok = new(big.Int).SetString(old.Crypto.RequiredBase, 10); !ok {
		return nil, fmt.Errorf("payment %s: required amount %q is not an integer", old.ID, old.Crypto.RequiredBase)
	}
	for _, t := range old.Crypto.Amounts() {
		a, ok := new(big.Int).SetString(t.AmountBase, 10)
		if !ok {
			return nil, fmt.Errorf("payment %s: amount %q is not an integer", old.ID, t.AmountBase)
		}
		if !slices.Contains(r.gone, t.TxHash) {
			c.txs = append(c.txs, t)
			c.received.Add(c.received, a)
		}
	}
	s.log.InfoContext(ctx, "crypto payment replaced: a transaction of it is gone, another pays the address",
		"payment_id", old.ID, "session_id", sess.ID, "coin", old.Crypto.Coin, "gone", r.gone, "carried", len(c.txs))
	return c, s.failPayment(ctx, tx, m, sess, old, checkout.FailReplaced)
}

// UnderpaidWindow is how long a live crypto payment that received less than
// it must waits for the rest (further transactions to the same address add
// up); then it fails underpaid, what arrived to be refunded.
const UnderpaidWindow = 30 * time.Minute

// paidBy reports whether p records transaction txHash, as its first or as a
// top-up.
func paidBy(p *checkout.Payment, txHash string) bool {
	return p.Crypto != nil && slices.Contains(p.Crypto.TxHashes(), txHash)
}

// topUp adds transaction txHash, of amount base units, to an underpaid
// payment p (locked in tx): once what arrived reaches what is required, p
// is whole and its confirmations are looked at.
func topUp(ctx context.Context, tx *txn, p *checkout.Payment, txHash string, amount *big.Int, now time.Time) error {
	received, ok1 := new(big.Int).SetString(p.Crypto.ReceivedBase, 10)
	required, ok2 := new(big.Int).SetString(p.Crypto.RequiredBase, 10)
	if !ok1 || !ok2 {
		return fmt.Errorf("payment %s: amounts %q and %q are not integers", p.ID, p.Crypto.ReceivedBase, p.Crypto.RequiredBase)
	}
	received.Add(received, amount)
	p.Crypto.ReceivedBase = received.String()
	p.Crypto.TopUps = append(p.Crypto.TopUps, checkout.CryptoTopUp{TxHash: txHash, AmountBase: amount.String()})
	if received.Cmp(required) >= 0 {
		p.Crypto.ShortUntil = 0
		p.DueAt = &now
	}
	p.UpdatedAt = now
	return tx.PaymentUpdate(ctx, p)
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

package service

import (
	"context"
	"fmt"
	"math/big"
	"slices"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/rates"
)

// Live crypto (issue 12; docs/payments.md, Live crypto): each quote pays to
// a fresh address derived from the store's key, which the coin's node
// watches; the scan job records what the nodes see, and the payments job
// completes a payment when its node counts enough confirmations.

// LiveQuoteValidity is how long a live quote's amount holds: its rate is
// stale after (rates.QuoteValidity).
const LiveQuoteValidity = rates.QuoteValidity

// LiveConfirmationLook is how often the payments job asks a live node how
// deep a payment's transaction is.
const LiveConfirmationLook = 5 * time.Second

// JobCryptoScan names the job that scans the nodes.
const JobCryptoScan = "crypto_scan"

// live returns the live crypto network, or nil when none is configured.
func (s *Service) live() pay.LiveCryptoNetwork {
	n, _ := s.procs.Live.Crypto.(pay.LiveCryptoNetwork)
	return n
}

// CryptoStatus says how each live coin's node stands; nil without a live
// crypto network.
func (s *Service) CryptoStatus(ctx context.Context) []pay.CoinStatus {
	n := s.live()
	if n == nil {
		return nil
	}
	return n.Status(ctx)
}

// coinsOffered returns the coins sess's page offers.
func (s *Service) coinsOffered(ctx context.Context, sess *checkout.Session) ([]checkout.Coin, error) {
	if !sess.Mode.Live() {
		if s.procs.Test.Crypto == nil {
			return nil, nil
		}
		return checkout.Coins, nil
	}
	n := s.live()
	if n == nil {
		return nil, nil
	}
	keys, err := s.store.CryptoKeyList(ctx, sess.MerchantID)
	if err != nil {
		return nil, err
	}
	var out []checkout.Coin
	for _, c := range checkout.Coins {
		for _, k := range keys {
			if k.Coin == c.Code && n.Offers(c.Code) && k.Network == n.Network(c.Code) {
				out = append(out, c)
			}
		}
	}
	return out, nil
}

// liveQuote quotes sess in coin on the live network: in one transaction,
// under the session's lock, it takes the next address of the store's key,
// has the node watch it and prices it; a quote made meanwhile (another view,
// another node) stands instead.
func (s *Service) liveQuote(ctx context.Context, n pay.LiveCryptoNetwork, sess *checkout.Session, coin checkout.Coin) (*checkout.CryptoQuote, error) {
	offered, err := s.coinsOffered(ctx, sess)
	if err != nil {
		return nil, err
	}
	ok := false
	for _, c := range offered {
		ok = ok || c.Code == coin.Code
	}
	if !ok {
		return nil, checkout.Errorf(checkout.EValidationFailed, "Pick one of the coins offered.")
	}
	if err := n.Prepare(ctx, coin.Code); err != nil {
		return nil, checkout.Internal(fmt.Errorf("prepare %s: %w", coin.Code, err))
	}
	amount, err := n.Price(ctx, coin, sess.TotalAmount, sess.Currency)
	if err != nil {
		return nil, checkout.Internal(err)
	}
	err = s.inTx(ctx, func(tx *txn) error {
		if _, err := tx.SessionGetForUpdate(ctx, sess.ID); err != nil {
			return err
		}
		if _, err := tx.CryptoQuoteGet(ctx, sess.ID, coin.Code); err == nil || !checkout.IsCode(err, checkout.ENotFound) {
			return err
		}
		k, addr, err := takeAddress(ctx, tx, sess.MerchantID, coin.Code)
		if err != nil {
			return err
		}
		// Watched before anyone is shown it; a node that does not answer
		// rolls the transaction back, and the address stays untaken.
		if err := n.Watch(ctx, coin.Code, addr.Address); err != nil {
			return checkout.Internal(fmt.Errorf("watch %s address: %w", coin.Code, err))
		}
		now := s.now()
		return tx.CryptoQuoteInsert(ctx, &checkout.CryptoQuote{SessionID: sess.ID, Coin: coin.Code, Address: addr.Address,
			AmountBase: amount.String(), CreatedAt: now, KeyID: k.ID, KeyIndex: k.NextIndex, ExpiresAt: now.Add(LiveQuoteValidity)})
	})
	if err != nil {
		return nil, err
	}
	return s.store.CryptoQuoteGet(ctx, sess.ID, coin.Code)
}

// ShownQuote returns the quote a session's page shows for coin: nil when
// the buyer has not picked the coin yet; a live quote past its time is
// priced again first (requote).
func (s *Service) ShownQuote(ctx context.Context, ps *PageSession, coin string) (*checkout.CryptoQuote, error) {
	q, err := s.store.CryptoQuoteGet(ctx, ps.Session.ID, coin)
	if checkout.IsCode(err, checkout.ENotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if n := s.live(); n != nil && ps.Session.Mode.Live() && !q.ExpiresAt.IsZero() && !s.now().Before(q.ExpiresAt) {
		return s.requote(ctx, n, ps, q)
	}
	return q, nil
}

// requote prices an expired live quote again at the rate now, for a buyer
// about to be shown it: a quote is never honoured at a stale rate. The
// address stays (it is the session's); a session that is paid, held or over
// keeps its quote as it was.
func (s *Service) requote(ctx context.Context, n pay.LiveCryptoNetwork, ps *PageSession, q *checkout.CryptoQuote) (*checkout.CryptoQuote, error) {
	if ps.Session.PaymentDecline(s.now()) != checkout.DeclineNone {
		return q, nil
	}
	coin, _ := checkout.CoinByCode(q.Coin)
	amount, err := n.Price(ctx, coin, ps.Session.TotalAmount, ps.Session.Currency)
	if err != nil {
		return nil, checkout.Internal(err)
	}
	err = s.inTx(ctx, func(tx *txn) error {
		if _, err := tx.SessionGetForUpdate(ctx, q.SessionID); err != nil {
			return err
		}
		cur, err := tx.CryptoQuoteGet(ctx, q.SessionID, q.Coin)
		if err != nil || s.now().Before(cur.ExpiresAt) {
			return err // priced again meanwhile
		}
		return tx.CryptoQuoteRequote(ctx, q.SessionID, q.Coin, amount.String(), s.now().Add(LiveQuoteValidity))
	})
	if err != nil {
		return nil, err
	}
	return s.store.CryptoQuoteGet(ctx, q.SessionID, q.Coin)
}

// ScanCrypto records what the live nodes saw since the last scan: each
// transaction paying a quote's address becomes that session's payment, once
// (CryptoReceived's rules: late money is recorded failed, to be refunded),
// unless it pays less than the quote (then it is recorded failed,
// underpaid, to be refunded). It returns how many outputs it looked at.
func (s *Service) ScanCrypto(ctx context.Context) (int, error) {
	n := s.live()
	if n == nil {
		return 0, nil
	}
	if !s.liveWatched.Load() {
		if err := s.watchOpenQuotes(ctx, n); err != nil {
			return 0, err
		}
		s.liveWatched.Store(true)
	}
	rs, commit, err := n.Scan(ctx)
	if err != nil {
		return 0, err
	}
	for _, r := range rs {
		// A refund's payout, to the buyer's address (refund_crypto.go).
		if refund, err := s.recordRefundPayout(ctx, r); refund || err != nil {
			if err != nil {
				return 0, err
			}
			continue
		}
		q, err := s.store.CryptoQuoteByAddress(ctx, r.Coin, r.Address)
		if checkout.IsCode(err, checkout.ENotFound) {
			// An address of the wallet no quote has (an index skipped, a
			// quote never stored): nothing to record against.
			s.log.WarnContext(ctx, "crypto received at an address no quote has", "coin", r.Coin, "txid", r.TxID)
			continue
		}
		if err != nil {
			return 0, err
		}
		// A node reports a transaction again at every scan while it is in
		// the mempool: one already recorded costs one read, no more.
		payments, err := s.store.PaymentListBySession(ctx, q.SessionID)
		if err != nil {
			return 0, err
		}
		if i := slices.IndexFunc(payments, func(p *checkout.Payment) bool { return paidBy(p, r.TxID) }); i >= 0 {
			if err := s.confirmedAfterFailure(ctx, n, payments[i]); err != nil {
				return 0, err
			}
			continue
		}
		replaces, err := s.replaceGone(ctx, n, q, r.TxID)
		if err != nil {
			return 0, err
		}
		report := cryptoReport{sessionID: q.SessionID, coin: r.Coin, txHash: r.TxID, received: r.Amount, depth: n.Depth(r.Coin), replaces: replaces}
		if !q.ExpiresAt.IsZero() && s.now().After(q.ExpiresAt) {
			// The quote's rate is stale: the payment must cover the amount
			// at the rate now.
			if report.required, err = s.freshAmount(ctx, n, q); err != nil {
				return 0, err
			}
		}
		if _, err := s.recordCrypto(ctx, report); err != nil {
			return 0, fmt.Errorf("record %s transaction %s: %w", r.Coin, r.TxID, err)
		}
	}
	if err := commit(ctx); err != nil {
		return 0, err
	}
	return len(rs), nil
}

// confirmedAfterFailure flags p for refund when it failed because its
// transaction did not confirm (dropped, confirmation_timeout), and the
// chain has mined it after all: the money arrived for a payment that had
// failed, and the session was freed meanwhile.
func (s *Service) confirmedAfterFailure(ctx context.Context, n pay.LiveCryptoNetwork, p *checkout.Payment) error {
	if p.Status != checkout.PaymentFailed || p.FailureCode == nil || p.Crypto == nil ||
		(*p.FailureCode != checkout.FailDropped && *p.FailureCode != checkout.FailConfirmationTimeout) {
		return nil
	}
	confs, err := n.Confirmations(ctx, p, s.now())
	if err != nil || confs < 1 {
		return err
	}
	_, err = s.settleAnswer(ctx, p.ID, answer{captured: true})
	return err
}

// replaceGone tells whether transaction txid paying q's address replaces
// another: when the session is held by a processing payment to the same
// address some of whose transactions the node no longer has (replaced by a
// fee bump, dropped, or in conflict with the chain), recordCrypto fails
// that payment, replaced, and makes txid the payment, with the
// transactions of the old one that still stand (the rest of an
// underpayment). Without it a fee bump would leave the session held by a
// transaction that will never confirm, and record its replacement, the
// money, as a duplicate. It asks the node, so it runs before the
// transaction that records txid, which checks again under lock that the
// payment is still the one held.
func (s *Service) replaceGone(ctx context.Context, n pay.LiveCryptoNetwork, q *checkout.CryptoQuote, txid string) (*replacing, error) {
	sess, err := s.store.SessionGet(ctx, q.SessionID)
	if err != nil || sess.ActivePaymentID == nil {
		return nil, err
	}
	active, err := s.store.PaymentGet(ctx, *sess.ActivePaymentID)
	if err != nil {
		return nil, err
	}
	if active.Crypto == nil || active.Crypto.Coin != q.Coin || active.Crypto.Address != q.Address || slices.Contains(active.Crypto.TxHashes(), txid) ||
		active.Status != checkout.PaymentProcessing {
		return nil, nil
	}
	r := &replacing{paymentID: active.ID}
	for _, h := range active.Crypto.TxHashes() {
		gone, err := n.Gone(ctx, q.Coin, h)
		if err != nil {
			return nil, err
		}
		if gone != "" {
			r.gone = append(r.gone, h)
		}
	}
	if len(r.gone) == 0 {
		return nil, nil
	}
	return r, nil
}

// replacing is a processing crypto payment that a new transaction
// replaces, and its transactions that are gone.
type replacing struct {
	paymentID string
	gone      []string
}

// goneTxs asks the node about each of a live payment's transactions: does
// the chain spend one's coins elsewhere (it can never confirm), or has one
// left the mempool unmined (dropped: its wallet may broadcast it again)?
func goneTxs(ctx context.Context, n pay.LiveCryptoNetwork, p *checkout.Payment) (conflicted, dropped bool, err error) {
	for _, txid := range p.Crypto.TxHashes() {
		gone, err := n.Gone(ctx, p.Crypto.Coin, txid)
		if err != nil {
			return false, false, err
		}
		conflicted = conflicted || gone == pay.GoneConflicted
		dropped = dropped || gone == pay.GoneDropped
	}
	return conflicted, dropped, nil
}

// freshAmount prices q's session at the rate now, for a payment first
// seen after q expired: it is judged against the amount at the rate now,
// never the stale one, unless the stale one asks more.
func (s *Service) freshAmount(ctx context.Context, n pay.LiveCryptoNetwork, q *checkout.CryptoQuote) (*big.Int, error) {
	sess, err := s.store.SessionGet(ctx, q.SessionID)
	if err != nil {
		return nil, err
	}
	coin, _ := checkout.CoinByCode(q.Coin)
	fresh, err := n.Price(ctx, coin, sess.TotalAmount, sess.Currency)
	if err != nil {
		return nil, fmt.Errorf("price %s again: %w", q.Coin, err)
	}
	if old, ok := new(big.Int).SetString(q.AmountBase, 10); ok && old.Cmp(fresh) > 0 {
		return old, nil
	}
	return fresh, nil
}

// watchOpenQuotes has the nodes watch the addresses of the quotes still
// open, once per process before its first scan: a node that keeps its watch
// list in memory (ethereum) starts with none.
func (s *Service) watchOpenQuotes(ctx context.Context, n pay.LiveCryptoNetwork) error {
	for _, c := range checkout.Coins {
		if !n.Offers(c.Code) {
			continue
		}
		addrs, err := s.store.CryptoQuoteAddressesOpen(ctx, c.Code)
		if err != nil {
			return err
		}
		for _, a := range addrs {
			if err := n.Watch(ctx, c.Code, a); err != nil {
				return fmt.Errorf("watch %s address again: %w", c.Code, err)
			}
		}
	}
	// And the buyers' addresses of the refunds awaiting their payout.
	rs, err := s.store.RefundListAwaitingPayout(ctx)
	if err != nil {
		return err
	}
	for _, r := range rs {
		if r.Mode.Live() && n.Offers(r.Crypto.Coin) {
			if err := n.Watch(ctx, r.Crypto.Coin, r.Crypto.Address); err != nil {
				return fmt.Errorf("watch a refund's %s address again: %w", r.Crypto.Coin, err)
			}
		}
	}
	return nil
}

// LiveCoin is a coin of live crypto as this process is configured: whether
// it has a node for the coin, and the node's chain, which a store's key for
// the coin must be made for.
type LiveCoin struct {
	Code    string // BTC, LTC or ETH
	Offered bool   // a node is configured: live sessions offer the coin to stores with a key
	Network string // the node's chain (main, test or regtest); "" without a node
}

// LiveCoins returns the coins a store can set a key for, in the page's
// order.
func (s *Service) LiveCoins() []LiveCoin {
	n := s.live()
	var out []LiveCoin
	for _, c := range checkout.Coins {
		if c.Code == "SOL" {
			continue
		}
		lc := LiveCoin{Code: c.Code}
		if n != nil && n.Offers(c.Code) {
			lc.Offered, lc.Network = true, n.Network(c.Code)
		}
		out = append(out, lc)
	}
	return out
}

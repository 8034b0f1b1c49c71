package service

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/hdwallet"
	"github.com/checkoutd/checkoutd/internal/pay"
)

// Crypto refunds (checkout/refund_crypto.go): RefundPayment makes one with
// a link for the buyer; the buyer gives an address through it
// (GiveRefundAddress), which prices the refund in the coin; the merchant
// pays it from their wallet; the transaction is seen (test mode:
// SimulateRefundPayout; live: the scan, as the node watches the address)
// and, at the coin's depth, the refund succeeds with payment.refunded. A
// link unanswered for checkout.RefundLinkTTL cancels the refund.

// testRefundNetwork is the network of test mode's crypto refunds: its
// simulated network takes test-network addresses.
const testRefundNetwork = "test"

// refundNetwork is the network a crypto payment p is refunded on, or why
// it cannot be refunded here.
func (s *Service) refundNetwork(p *checkout.Payment) (string, error) {
	if p.Crypto == nil {
		return "", fmt.Errorf("payment %s is not a crypto payment", p.ID)
	}
	if !p.Mode.Live() {
		if s.procs.Test.Crypto == nil {
			return "", checkout.Errorf(checkout.EPaymentNotRefundable, "Payment %s cannot be refunded here: test mode has no crypto network.", p.ID)
		}
		return testRefundNetwork, nil
	}
	n := s.live()
	if n == nil || !n.Offers(p.Crypto.Coin) {
		return "", checkout.Errorf(checkout.EPaymentNotRefundable,
			"Payment %s cannot be refunded here: this server has no %s node to watch the refund's payout. Send the coins to the buyer from your wallet yourself.", p.ID, p.Crypto.Coin)
	}
	return n.Network(p.Crypto.Coin), nil
}

// RefundLink is a crypto refund as its link's page shows it to the buyer.
type RefundLink struct {
	Refund   *checkout.Refund
	Payment  *checkout.Payment
	Merchant *checkout.Merchant
	Coin     checkout.Coin
}

// RefundByLink returns the refund of a link token; not_found for a token
// of no refund.
func (s *Service) RefundByLink(ctx context.Context, token string) (*RefundLink, error) {
	notFound := checkout.Errorf(checkout.ENotFound, "No such refund link.")
	if len(token) != 64 {
		return nil, notFound
	}
	if _, err := hex.DecodeString(token); err != nil {
		return nil, notFound
	}
	r, err := s.store.RefundGetByLink(ctx, token)
	if checkout.IsCode(err, checkout.ENotFound) || err == nil && r.Crypto == nil {
		return nil, notFound
	}
	if err != nil {
		return nil, err
	}
	p, err := s.store.PaymentGet(ctx, r.PaymentID)
	if err != nil {
		return nil, err
	}
	m, err := s.Merchant(ctx, r.MerchantID)
	if err != nil {
		return nil, err
	}
	coin, ok := checkout.CoinByCode(r.Crypto.Coin)
	if !ok {
		return nil, fmt.Errorf("refund %s: unknown coin %s", r.ID, r.Crypto.Coin)
	}
	return &RefundLink{Refund: r, Payment: p, Merchant: m, Coin: coin}, nil
}

// GiveRefundAddress takes the buyer's address for a crypto refund through
// its link: checked for the coin and network (validation_failed on
// address, saying what is wrong), priced in the coin (the payment's rate,
// or the rate now), and recorded, once; a live node then watches it. A
// link that takes no address now is refund_link_closed.
func (s *Service) GiveRefundAddress(ctx context.Context, token, address string) (*RefundLink, error) {
	link, err := s.RefundByLink(ctx, token)
	if err != nil {
		return nil, err
	}
	r := link.Refund
	address = strings.TrimSpace(address)
	if err := r.RefundLinkBlock(s.now()); err != nil {
		return nil, err
	}
	if err := checkRefundAddress(r.Crypto, address); err != nil {
		return nil, &checkout.Error{Code: checkout.EValidationFailed, Param: "address", Message: upperFirst(err.Error()) + "."}
	}
	amount, err := s.priceRefund(ctx, link)
	if err != nil {
		return nil, err
	}
	if n := s.live(); r.Mode.Live() && n != nil {
		// Watched before it is recorded: a payout seen by the next scan
		// finds the refund.
		if err := n.Watch(ctx, r.Crypto.Coin, address); err != nil {
			return nil, &checkout.Error{Code: checkout.EUnavailable, Message: "The crypto node does not answer: try again in a moment.", Err: err, RetryAfter: 5 * time.Second}
		}
	}
	err = s.inTx(ctx, func(tx *txn) error {
		cur, err := tx.RefundGetForUpdate(ctx, r.ID)
		if err != nil {
			return err
		}
		if err := cur.SetAddress(address, amount, s.now()); err != nil {
			return err
		}
		link.Refund = cur
		return tx.RefundUpdate(ctx, cur)
	})
	if err != nil {
		return nil, err
	}
	return link, nil
}

// checkRefundAddress checks a buyer's address for crypto refund c: of its
// coin and network (test mode's network takes the coins' test networks'
// addresses).
func checkRefundAddress(c *checkout.CryptoRefund, address string) error {
	network := hdwallet.Network(c.Network)
	if c.Network == testRefundNetwork {
		network = hdwallet.Testnet
	}
	return hdwallet.CheckAddress(c.Coin, network, address)
}

// priceRefund prices a crypto refund in base units of its coin, at the
// payment's rate or at the rate now.
func (s *Service) priceRefund(ctx context.Context, link *RefundLink) (*big.Int, error) {
	r, p := link.Refund, link.Payment
	if r.Crypto.Rate == checkout.RateOfPayment {
		return checkout.PriceAtPayment(p, r.Amount)
	}
	if r.Mode.Live() {
		n := s.live()
		if n == nil {
			return nil, &checkout.Error{Code: checkout.EUnavailable, Message: "This refund cannot be priced now: try again in a moment.", Err: errors.New("no live crypto network"), RetryAfter: 5 * time.Second}
		}
		return n.Price(ctx, link.Coin, r.Amount, r.Currency)
	}
	q, err := s.procs.Test.Crypto.Quote(ctx, pay.QuoteRequest{SessionID: r.SessionID, Mode: r.Mode, Coin: link.Coin, Amount: r.Amount, Currency: r.Currency})
	if err != nil {
		return nil, err
	}
	return q.Amount, nil
}

// SimulateRefundPayout pays a test-mode crypto refund of the scope as the
// merchant's wallet would: a simulated transaction to the buyer's address,
// which the simulated network confirms on the coin's timescale (the
// payments job then completes the refund).
func (s *Service) SimulateRefundPayout(ctx context.Context, scope checkout.Scope, refundID string) (*checkout.Refund, error) {
	if err := s.authorize(ctx, scope.MerchantID, checkout.ActionRefund); err != nil {
		return nil, err
	}
	r, err := s.RefundIn(ctx, scope, refundID)
	if err != nil {
		return nil, err
	}
	if r.Mode.Live() || r.Crypto == nil {
		return nil, checkout.Errorf(checkout.EPaymentNotRefundable, "Only a test-mode crypto refund's payout is simulated: pay a live one from your wallet.")
	}
	var out *checkout.Refund
	err = s.inTx(ctx, func(tx *txn) error {
		cur, err := tx.RefundGetForUpdate(ctx, refundID)
		if err != nil {
			return err
		}
		if cur.Crypto.Stage() != checkout.StageAwaitingPayout || cur.Status != checkout.RefundPending {
			return checkout.Errorf(checkout.ERefundLinkClosed, "Refund %s awaits no payout: it is %s.", cur.ID, refundStage(cur))
		}
		coin, _ := checkout.CoinByCode(cur.Crypto.Coin)
		now := s.now()
		sum := sha256.Sum256([]byte("checkoutd simulated refund payout\x00" + cur.ID + "\x00" + cur.Crypto.Address))
		tx0 := hex.EncodeToString(sum[:])
		if coin.Code == "ETH" {
			tx0 = "0x" + tx0
		}
		if err := cur.PayoutSeen(tx0, coin.Confirmations, now.Add(time.Duration(coin.Confirmations)*coin.BlockTime), now); err != nil {
			return err
		}
		out = cur
		if err := tx.RefundUpdate(ctx, cur); err != nil {
			return err
		}
		return s.Record(ctx, tx, cur.MerchantID, checkout.AuditRefundSimulatePayout, cur.ID)
	})
	return out, err
}

// CancelRefund cancels a crypto refund of the scope whose payout has not
// been seen: nothing was returned, and what it held is free again. A
// crypto refund canceled already is returned as it is (a retry after a
// lost answer); any other refund is refund_not_cancelable.
func (s *Service) CancelRefund(ctx context.Context, scope checkout.Scope, refundID string) (*RefundOutcome, error) {
	if err := s.authorize(ctx, scope.MerchantID, checkout.ActionRefund); err != nil {
		return nil, err
	}
	r, err := s.RefundIn(ctx, scope, refundID)
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
		if cur.Crypto != nil && cur.Status == checkout.RefundCanceled {
			out.Refund, out.Payment = cur, p
			return nil
		}
		if cur.Crypto == nil || cur.Status != checkout.RefundPending || cur.Crypto.TxHash != "" {
			return checkout.Errorf(checkout.ERefundNotCancelable, "Refund %s cannot be canceled: it is %s.", cur.ID, refundStage(cur))
		}
		if err := cur.Cancel(p, s.now()); err != nil {
			return err
		}
		out.Refund, out.Payment = cur, p
		if err := s.writeRefund(ctx, tx, cur, p); err != nil {
			return err
		}
		return s.Record(ctx, tx, cur.MerchantID, checkout.AuditRefundCancel, cur.ID)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// refundStage names where a refund stands, for messages.
func refundStage(r *checkout.Refund) string {
	if r.Status == checkout.RefundPending && r.Crypto != nil {
		return string(r.Status) + ", " + r.Crypto.Stage()
	}
	return string(r.Status)
}

// processDueCryptoRefund does what is due on a crypto refund: cancels it
// when its link expired unanswered; completes it when its payout has the
// coin's depth, else looks again later.
func (s *Service) processDueCryptoRefund(ctx context.Context, r *checkout.Refund) (bool, error) {
	now := s.now()
	var confs int
	if r.Crypto.Stage() == checkout.StageConfirming {
		coin, ok := checkout.CoinByCode(r.Crypto.Coin)
		if !ok {
			return false, fmt.Errorf("refund %s: unknown coin %s", r.ID, r.Crypto.Coin)
		}
		if r.Mode.Live() {
			n := s.live()
			if n == nil {
				return false, fmt.Errorf("refund %s: no live crypto network to count its payout's confirmations", r.ID)
			}
			probe := &checkout.Payment{ID: r.ID, Method: checkout.MethodCrypto, Crypto: &checkout.CryptoDetails{Coin: r.Crypto.Coin, Address: r.Crypto.Address, TxHash: r.Crypto.TxHash}}
			var err error
			if confs, err = n.Confirmations(ctx, probe, now); err != nil {
				return false, err
			}
		} else {
			confs = coin.ConfirmationsAt(time.UnixMilli(r.Crypto.SeenAt), now)
		}
	}
	done := false
	err := s.inTx(ctx, func(tx *txn) error {
		p, err := tx.PaymentGetForUpdate(ctx, r.PaymentID)
		if err != nil {
			return err
		}
		cur, err := tx.RefundGetForUpdate(ctx, r.ID)
		if err != nil {
			return err
		}
		if cur.Status != checkout.RefundPending || cur.DueAt == nil || cur.DueAt.After(now) {
			return nil // handled meanwhile
		}
		switch cur.Crypto.Stage() {
		case checkout.StageAwaitingAddress:
			if now.Before(time.UnixMilli(cur.Crypto.LinkExpiresAt)) {
				return nil
			}
			s.log.InfoContext(ctx, "crypto refund canceled: its link expired without an address", "refund_id", cur.ID, "payment_id", p.ID)
			if err := cur.Cancel(p, now); err != nil {
				return err
			}
			done = true
			return s.writeRefund(ctx, tx, cur, p)
		case checkout.StageConfirming:
			if confs < cur.Crypto.Confirmations {
				coin, _ := checkout.CoinByCode(cur.Crypto.Coin)
				next := now.Add(coin.BlockTime)
				if !cur.Mode.Live() {
					next = time.UnixMilli(cur.Crypto.SeenAt).Add(time.Duration(cur.Crypto.Confirmations) * coin.BlockTime)
				}
				cur.DueAt = &next
				return tx.RefundUpdate(ctx, cur)
			}
			if err := cur.Succeed(p, now); err != nil {
				return err
			}
			done = true
			if err := s.writeRefund(ctx, tx, cur, p); err != nil {
				return err
			}
			return s.emitPayment(ctx, tx, checkout.EventPaymentRefunded, p)
		}
		cur.DueAt = nil // awaiting the payout: the scan (or the simulation) says when
		return tx.RefundUpdate(ctx, cur)
	})
	return done, err
}

// recordRefundPayouts records, for a transaction a live node saw paying
// address, the payout of the first pending refund to it that the amount
// covers, and reports whether the address is a refund's.
func (s *Service) recordRefundPayout(ctx context.Context, rec pay.Received) (bool, error) {
	rs, err := s.store.RefundListByPayout(ctx, rec.Coin, rec.Address)
	if err != nil || len(rs) == 0 {
		return false, err
	}
	coin, ok := checkout.CoinByCode(rec.Coin)
	if !ok {
		return true, fmt.Errorf("unknown coin %s", rec.Coin)
	}
	n := s.live()
	for _, r := range rs {
		if r.Crypto.TxHash == rec.TxID {
			return true, nil // reported again
		}
	}
	for _, r := range rs {
		due, ok := new(big.Int).SetString(r.Crypto.AmountBase, 10)
		if r.Crypto.TxHash != "" || !ok || rec.Amount == nil || rec.Amount.Cmp(due) < 0 {
			continue
		}
		err := s.inTx(ctx, func(tx *txn) error {
			cur, err := tx.RefundGetForUpdate(ctx, r.ID)
			if err != nil {
				return err
			}
			if cur.Status != checkout.RefundPending || cur.Crypto.TxHash != "" {
				return nil
			}
			now := s.now()
			if err := cur.PayoutSeen(rec.TxID, n.Depth(rec.Coin), now.Add(coin.BlockTime), now); err != nil {
				return err
			}
			return tx.RefundUpdate(ctx, cur)
		})
		if err == nil {
			s.log.InfoContext(ctx, "crypto refund's payout seen", "refund_id", r.ID, "coin", rec.Coin, "txid", rec.TxID)
		}
		return true, err
	}
	s.log.WarnContext(ctx, "a transaction to a refund's address pays less than the refund, or its refunds are paid already", "coin", rec.Coin, "txid", rec.TxID)
	return true, nil
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

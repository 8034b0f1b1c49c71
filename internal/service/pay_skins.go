package service

import (
	"context"
	"fmt"
	"slices"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/pay"
)

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
// (validation_failed) before anything is traded. The payment id is the
// trade's idempotency key: when the platform's answer is lost, the payment
// stays processing until the payments job looks the trade up.
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
	return s.runAttempt(ctx, sessionID, attempt{
		method: checkout.MethodSkins,
		ask: func(ctx context.Context, p *checkout.Payment, sess *checkout.Session, m *checkout.Merchant) (answer, error) {
			trade, err := s.procs.For(sess.Mode).Skins.Trade(ctx, pay.TradeRequest{
				PaymentID: p.ID, SessionID: sessionID, ItemIDs: itemIDs, Total: sess.TotalAmount, Currency: sess.Currency, Now: s.now(),
			})
			if pay.Refused(err) {
				s.log.WarnContext(ctx, "skins trade refused", "payment_id", p.ID, "error", err)
				return answer{apply: s.failWith(ctx, checkout.FailProcessingError)}, nil
			}
			if err != nil {
				return answer{}, err
			}
			return s.tradeAnswer(ctx, trade), nil
		},
	})
}

// tradeAnswer records an accepted trade on its processing payment, which
// holds the session until the platform's hold ends.
func (s *Service) tradeAnswer(ctx context.Context, trade pay.Trade) answer {
	return answer{captured: true, apply: func(tx *txn, m *checkout.Merchant, sess *checkout.Session, p *checkout.Payment) error {
		p.Skins = &checkout.SkinsDetails{TradeID: trade.ID, Items: trade.Items, Value: trade.Value, HoldUntil: trade.HoldUntil.Unix()}
		p.DueAt = &trade.HoldUntil
		p.UpdatedAt = s.now()
		return tx.PaymentUpdate(ctx, p)
	}}
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

package service

import (
	"context"
	"encoding/json"

	"github.com/checkoutd/checkoutd/checkout"
)

// txn is a write transaction that remembers whether it created webhook
// deliveries, so the dispatcher can be woken once it commits.
type txn struct {
	checkout.Tx
	deliveries int
}

// inTx runs fn in one transaction and, when it created deliveries and
// committed, wakes the dispatcher.
func (s *Service) inTx(ctx context.Context, fn func(tx *txn) error) error {
	var t *txn
	err := s.store.InTx(ctx, func(tx checkout.Tx) error {
		t = &txn{Tx: tx}
		return fn(t)
	})
	if err == nil && t.deliveries > 0 {
		if s.notify != nil {
			s.notify()
		}
		s.broadcast()
	}
	return err
}

// emit records an event in tx, the transaction of the change it reports,
// and a delivery of it to every enabled endpoint of the store and mode that
// subscribes to its type (a listener only if connected in the last 24
// hours: checkout.Endpoint.Receives).
func (s *Service) emit(ctx context.Context, tx *txn, merchantID string, mode checkout.Mode, typ string, object json.RawMessage) error {
	now := s.now()
	e, err := checkout.NewEvent(typ, merchantID, mode, object, now)
	if err != nil {
		return err
	}
	if err := tx.EventInsert(ctx, e); err != nil {
		return err
	}
	endpoints, err := tx.EndpointListEnabled(ctx, merchantID, mode)
	if err != nil {
		return err
	}
	for _, ep := range endpoints {
		if !ep.Subscribes(typ) || !ep.Receives(now) {
			continue
		}
		if err := tx.DeliveryInsert(ctx, checkout.NewDelivery(e, ep, now)); err != nil {
			return err
		}
		tx.deliveries++
	}
	return nil
}

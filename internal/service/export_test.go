package service

import (
	"context"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/pay"
)

// TakeCryptoAddress takes the next address of a store's key for a coin in
// a transaction of its own, for tests of the allocation.
func (s *Service) TakeCryptoAddress(ctx context.Context, merchantID, coin string) (*checkout.CryptoKey, string, error) {
	var k *checkout.CryptoKey
	var addr string
	err := s.inTx(ctx, func(tx *txn) error {
		var err error
		key, a, err := takeAddress(ctx, tx, merchantID, coin)
		k, addr = key, a.Address
		return err
	})
	return k, addr, err
}

// UseAcquirer connects a store's mode to a card acquirer with credentials
// c, for the tests of the payment flows.
//
// TODO(acquirer-settings): tests set the store's credentials instead.
func (s *Service) UseAcquirer(storeID string, mode checkout.Mode, conn pay.AcquirerConnector, c pay.AcquirerCredentials) {
	s.acquirersMu.Lock()
	defer s.acquirersMu.Unlock()
	if s.acquirers == nil {
		s.acquirers = map[string]*storeAcquirer{}
	}
	s.acquirers[storeID+"/"+string(mode)] = &storeAcquirer{name: conn.Name(), acq: conn.Connect(c), publishableKey: c.PublishableKey, page: conn.Page()}
}

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

// AcquirerFor is acquirerFor, for tests of what the payment flows get.
func (s *Service) AcquirerFor(ctx context.Context, storeID string, mode checkout.Mode) (pay.Acquirer, pay.AcquirerConnector, bool, error) {
	return s.acquirerFor(ctx, storeID, mode)
}

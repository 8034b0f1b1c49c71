package service

import (
	"context"

	"github.com/checkoutd/checkoutd/checkout"
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

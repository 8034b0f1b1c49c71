package service

import (
	"context"
	"fmt"
	"slices"

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

// AcquirerFor returns what the payment flows get of a store's account in
// a mode (storeAcquirer): its Acquirer and connector, false when it has
// none.
func (s *Service) AcquirerFor(ctx context.Context, storeID string, mode checkout.Mode) (pay.Acquirer, pay.AcquirerConnector, bool, error) {
	sa, err := s.storeAcquirer(ctx, storeID, mode)
	if err != nil || sa == nil {
		return nil, nil, false, err
	}
	return sa.acq, sa.conn, true, nil
}

// UseAcquirer gives a store's mode an account at a card acquirer with
// credentials c, for the tests of the payment flows: conn joins the
// service's acquirers (another node needs it in its Config.Acquirers), and
// the credentials are kept sealed as SetAcquirerAccount keeps them, in any
// mode, without a check. It panics when they cannot be kept (no secrets
// key): a test's mistake.
func (s *Service) UseAcquirer(storeID string, mode checkout.Mode, conn pay.AcquirerConnector, c pay.AcquirerCredentials) {
	s.connectorsMu.Lock()
	if !slices.Contains(s.connectors, conn) {
		s.connectors = append(s.connectors, conn)
	}
	s.connectorsMu.Unlock()
	if s.secrets == nil {
		panic("UseAcquirer: the service has no secrets key to seal the credentials with")
	}
	a := &checkout.AcquirerAccount{MerchantID: storeID, Mode: mode, Acquirer: conn.Name(), AccountID: "acct_test", PublishableKey: c.PublishableKey,
		SecretKeyHint: checkout.SecretHint(c.SecretKey), WebhookSecretHint: checkout.SecretHint(c.WebhookSecret), SetBy: s.actor, SetAt: s.now()}
	sealAcquirer(s.secrets, a, c)
	if err := s.store.InTx(context.Background(), func(tx checkout.Tx) error { return tx.AcquirerAccountPut(context.Background(), a) }); err != nil {
		panic(fmt.Sprintf("UseAcquirer: %v", err))
	}
}

// AcquirerCredentials opens a store's sealed acquirer credentials, for
// tests that they open to the very keys entered.
func (s *Service) AcquirerCredentials(ctx context.Context, storeID string, mode checkout.Mode, acquirer string) (pay.AcquirerCredentials, error) {
	a, err := s.store.AcquirerAccountGet(ctx, storeID, mode, acquirer)
	if err != nil {
		return pay.AcquirerCredentials{}, err
	}
	return s.openAcquirer(a)
}

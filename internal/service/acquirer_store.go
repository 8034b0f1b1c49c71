package service

import (
	"context"
	"fmt"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/pay"
)

// storeAcquirer is a store's card acquirer in one mode, connected with its
// credentials.
type storeAcquirer struct {
	name           string
	conn           pay.AcquirerConnector
	acq            pay.Acquirer
	publishableKey string
	page           pay.AcquirerPage
}

// storeAcquirer returns the card acquirer of a store's mode, nil when it
// has none: its account at the first of the service's acquirers it has one
// at (SetAcquirerAccount), its secrets opened with the secrets key. A
// sealed secret that does not open is an internal error whose cause (for
// the log, never a secret) says what the operator must fix.
func (s *Service) storeAcquirer(ctx context.Context, storeID string, mode checkout.Mode) (*storeAcquirer, error) {
	for _, conn := range s.acquirerConnectors() {
		a, err := s.store.AcquirerAccountGet(ctx, storeID, mode, conn.Name())
		if checkout.IsCode(err, checkout.ENotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		c, err := s.openAcquirer(a)
		if err != nil {
			return nil, checkout.Internal(fmt.Errorf("the %s account of store %s in %s mode: %w", conn.Name(), storeID, mode, err))
		}
		return &storeAcquirer{name: conn.Name(), conn: conn, acq: conn.Connect(c), publishableKey: c.PublishableKey, page: conn.Page()}, nil
	}
	return nil, nil
}

// acquirerConnectors returns the acquirers stores can set up accounts at,
// in the configuration's order.
func (s *Service) acquirerConnectors() []pay.AcquirerConnector {
	s.connectorsMu.Lock()
	defer s.connectorsMu.Unlock()
	return append([]pay.AcquirerConnector(nil), s.connectors...)
}

// AcquirerPage returns how the payment page takes a card through the card
// acquirer named name (its adapter script), false for an acquirer this
// service does not connect to.
func (s *Service) AcquirerPage(name string) (pay.AcquirerPage, bool) {
	for _, conn := range s.acquirerConnectors() {
		if conn.Name() == name {
			return conn.Page(), true
		}
	}
	return pay.AcquirerPage{}, false
}

package service

import (
	"context"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/pay"
)

// storeAcquirer is a store's card acquirer in one mode, connected with its
// credentials.
type storeAcquirer struct {
	name           string
	acq            pay.Acquirer
	publishableKey string
	page           pay.AcquirerPage
}

// storeAcquirer returns the card acquirer of a store's mode, nil when it
// has none.
//
// TODO(acquirer-settings): the stores' credentials (migration 0030) replace
// this table of connected acquirers, which only tests fill.
func (s *Service) storeAcquirer(ctx context.Context, storeID string, mode checkout.Mode) (*storeAcquirer, error) {
	s.acquirersMu.Lock()
	defer s.acquirersMu.Unlock()
	return s.acquirers[storeID+"/"+string(mode)], nil
}

// AcquirerPage returns how the payment page takes a card through the card
// acquirer named name (its adapter script), false for an acquirer this
// service does not connect to.
//
// TODO(acquirer-settings): from the configured connectors.
func (s *Service) AcquirerPage(name string) (pay.AcquirerPage, bool) {
	s.acquirersMu.Lock()
	defer s.acquirersMu.Unlock()
	for _, sa := range s.acquirers {
		if sa.name == name {
			return sa.page, true
		}
	}
	return pay.AcquirerPage{}, false
}

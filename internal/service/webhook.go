package service

import (
	"context"
	"fmt"

	"github.com/checkoutd/checkoutd/checkout"
)

// CreateEndpoint registers a webhook endpoint for a store and mode, after
// checking its URL (https, public host, every address public). A store has
// at most 16 endpoints.
func (s *Service) CreateEndpoint(ctx context.Context, p checkout.EndpointParams) (*checkout.Endpoint, error) {
	if _, err := s.store.MerchantGet(ctx, p.MerchantID); err != nil {
		return nil, err
	}
	if s.urls == nil {
		return nil, checkout.Internal(fmt.Errorf("service has no webhook URL checker"))
	}
	// The rules that need no network first, then the URL's.
	ep, err := checkout.NewEndpoint(p, s.now())
	if err != nil {
		return nil, err
	}
	if ep.URL, err = s.urls.CheckURL(ctx, p.URL); err != nil {
		return nil, err
	}
	err = s.inTx(ctx, func(tx *txn) error {
		if err := tx.MerchantLock(ctx, p.MerchantID); err != nil {
			return err
		}
		n, err := tx.EndpointCount(ctx, p.MerchantID)
		if err != nil {
			return err
		}
		if n >= checkout.MaxEndpointsPerStore {
			return &checkout.Error{
				Code:    checkout.EValidationFailed,
				Message: fmt.Sprintf("A store can have at most %d webhook endpoints; delete one first.", checkout.MaxEndpointsPerStore),
				Details: []checkout.Violation{{Code: "too_many", Message: "at most 16 endpoints per store"}},
			}
		}
		return tx.EndpointInsert(ctx, ep)
	})
	if err != nil {
		return nil, err
	}
	return ep, nil
}

// SetEndpointEnabled enables or disables an endpoint. Disabling cancels its
// queued deliveries (an attempt in flight finishes but is not retried); it
// returns how many were canceled.
func (s *Service) SetEndpointEnabled(ctx context.Context, id string, enabled bool) (*checkout.Endpoint, int64, error) {
	var ep *checkout.Endpoint
	var canceled int64
	err := s.inTx(ctx, func(tx *txn) error {
		var err error
		if ep, err = tx.EndpointGetForUpdate(ctx, id); err != nil {
			return err
		}
		ep.Enabled = enabled
		ep.UpdatedAt = s.now()
		if err := tx.EndpointUpdate(ctx, ep); err != nil {
			return err
		}
		if !enabled {
			canceled, err = tx.DeliveryCancelPending(ctx, id, s.now())
		}
		return err
	})
	return ep, canceled, err
}

// DeleteEndpoint deletes an endpoint with its deliveries.
func (s *Service) DeleteEndpoint(ctx context.Context, id string) error {
	return s.inTx(ctx, func(tx *txn) error { return tx.EndpointDelete(ctx, id) })
}

// RollEndpointSecret replaces an endpoint's signing secret. It takes effect
// at once: every attempt from now on, retries included, is signed with the
// new secret.
func (s *Service) RollEndpointSecret(ctx context.Context, id string) (*checkout.Endpoint, error) {
	var ep *checkout.Endpoint
	err := s.inTx(ctx, func(tx *txn) error {
		var err error
		if ep, err = tx.EndpointGetForUpdate(ctx, id); err != nil {
			return err
		}
		ep.Secret = checkout.NewWebhookSecret()
		ep.UpdatedAt = s.now()
		return tx.EndpointUpdate(ctx, ep)
	})
	return ep, err
}

// WebhookTest is the data.object of a webhook.test event.
type WebhookTest struct {
	Object     string `json:"object"`
	EndpointID string `json:"endpoint_id"`
	Message    string `json:"message"`
}

// SendTestEvent sends a webhook.test event to one enabled endpoint, and
// to no other.
func (s *Service) SendTestEvent(ctx context.Context, id string) (*checkout.Event, *checkout.Delivery, error) {
	var e *checkout.Event
	var d *checkout.Delivery
	err := s.inTx(ctx, func(tx *txn) error {
		ep, err := tx.EndpointGetForUpdate(ctx, id)
		if err != nil {
			return err
		}
		if !ep.Enabled {
			return checkout.Errorf(checkout.EValidationFailed, "Endpoint %s is disabled; enable it to send it events.", id)
		}
		now := s.now()
		e, err = checkout.NewEvent(checkout.EventWebhookTest, ep.MerchantID, ep.Mode, WebhookTest{
			Object:     "webhook_test",
			EndpointID: ep.ID,
			Message:    "A test event sent from checkoutd. If you can read this, your endpoint works.",
		}, now)
		if err != nil {
			return err
		}
		if err := tx.EventInsert(ctx, e); err != nil {
			return err
		}
		d = checkout.NewDelivery(e, ep, now)
		tx.deliveries++
		return tx.DeliveryInsert(ctx, d)
	})
	if err != nil {
		return nil, nil, err
	}
	return e, d, nil
}

// Resend makes a new delivery of a finished delivery's event to the same
// endpoint, which must be enabled.
func (s *Service) Resend(ctx context.Context, deliveryID string) (*checkout.Delivery, error) {
	old, err := s.store.DeliveryGet(ctx, deliveryID)
	if err != nil {
		return nil, err
	}
	if !old.Finished() {
		return nil, checkout.Errorf(checkout.EValidationFailed, "Delivery %s is still pending; only a finished delivery can be resent.", deliveryID)
	}
	e, err := s.store.EventGet(ctx, old.EventID)
	if err != nil {
		return nil, err
	}
	var d *checkout.Delivery
	err = s.inTx(ctx, func(tx *txn) error {
		ep, err := tx.EndpointGetForUpdate(ctx, old.EndpointID)
		if err != nil {
			return err
		}
		if !ep.Enabled {
			return checkout.Errorf(checkout.EValidationFailed, "Endpoint %s is disabled; enable it to resend.", ep.ID)
		}
		d = checkout.NewDelivery(e, ep, s.now())
		tx.deliveries++
		return tx.DeliveryInsert(ctx, d)
	})
	return d, err
}

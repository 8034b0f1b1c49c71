package service

import (
	"context"
	"fmt"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

// CreateEndpoint registers a webhook endpoint for a store and mode, after
// checking its URL (https, public host, every address public). A store has
// at most 16 endpoints.
func (s *Service) CreateEndpoint(ctx context.Context, p checkout.EndpointParams) (*checkout.Endpoint, error) {
	if err := s.authorize(ctx, p.MerchantID, checkout.ActionManageWebhooks); err != nil {
		return nil, err
	}
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
		if err := tx.EndpointInsert(ctx, ep); err != nil {
			return err
		}
		return s.Record(ctx, tx, ep.MerchantID, checkout.AuditEndpointCreate, ep.ID)
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
	return s.setEndpointEnabled(ctx, nil, id, enabled)
}

// SetEndpointEnabledIn is SetEndpointEnabled for an endpoint of scope;
// another store's or mode's is not_found.
func (s *Service) SetEndpointEnabledIn(ctx context.Context, scope checkout.Scope, id string, enabled bool) (*checkout.Endpoint, int64, error) {
	if err := s.authorize(ctx, scope.MerchantID, checkout.ActionManageWebhooks); err != nil {
		return nil, 0, err
	}
	return s.setEndpointEnabled(ctx, &scope, id, enabled)
}

func (s *Service) setEndpointEnabled(ctx context.Context, scope *checkout.Scope, id string, enabled bool) (*checkout.Endpoint, int64, error) {
	var ep *checkout.Endpoint
	var canceled int64
	err := s.inTx(ctx, func(tx *txn) error {
		var err error
		if ep, err = lockEndpoint(ctx, tx, scope, id); err != nil {
			return err
		}
		ep.Enabled = enabled
		ep.UpdatedAt = s.now()
		if err := tx.EndpointUpdate(ctx, ep); err != nil {
			return err
		}
		if !enabled {
			if canceled, err = tx.DeliveryCancelPending(ctx, id, s.now()); err != nil {
				return err
			}
		}
		action := checkout.AuditEndpointDisable
		if enabled {
			action = checkout.AuditEndpointEnable
		}
		return s.Record(ctx, tx, ep.MerchantID, action, ep.ID)
	})
	return ep, canceled, err
}

// DeleteEndpoint deletes an endpoint with its deliveries.
func (s *Service) DeleteEndpoint(ctx context.Context, id string) error {
	return s.deleteEndpoint(ctx, nil, id)
}

// DeleteEndpointIn is DeleteEndpoint for an endpoint of scope; another
// store's or mode's is not_found, and stays.
func (s *Service) DeleteEndpointIn(ctx context.Context, scope checkout.Scope, id string) error {
	if err := s.authorize(ctx, scope.MerchantID, checkout.ActionManageWebhooks); err != nil {
		return err
	}
	return s.deleteEndpoint(ctx, &scope, id)
}

func (s *Service) deleteEndpoint(ctx context.Context, scope *checkout.Scope, id string) error {
	return s.inTx(ctx, func(tx *txn) error {
		ep, err := lockEndpoint(ctx, tx, scope, id)
		if err != nil {
			return err
		}
		if err := tx.EndpointDelete(ctx, id); err != nil {
			return err
		}
		return s.Record(ctx, tx, ep.MerchantID, checkout.AuditEndpointDelete, ep.ID)
	})
}

// RollEndpointSecret replaces an endpoint's signing secret. It takes effect
// at once: every attempt from now on, retries included, is signed with the
// new secret.
func (s *Service) RollEndpointSecret(ctx context.Context, id string) (*checkout.Endpoint, error) {
	return s.rollEndpointSecret(ctx, nil, id, 0)
}

// RollEndpointSecretIn replaces the signing secret of an endpoint of scope
// (another store's or mode's is not_found). With keep zero the old secret
// stops signing at once, as RollEndpointSecret; with keep up to 24 hours
// every attempt until then carries a signature with each secret, so the
// receiver can switch without refusing one. A roll during an overlap keeps
// only the secret it replaces (checkout.Endpoint.RollSecret). More than 24
// hours is validation_failed.
func (s *Service) RollEndpointSecretIn(ctx context.Context, scope checkout.Scope, id string, keep time.Duration) (*checkout.Endpoint, error) {
	if err := s.authorize(ctx, scope.MerchantID, checkout.ActionManageWebhooks); err != nil {
		return nil, err
	}
	return s.rollEndpointSecret(ctx, &scope, id, keep)
}

func (s *Service) rollEndpointSecret(ctx context.Context, scope *checkout.Scope, id string, keep time.Duration) (*checkout.Endpoint, error) {
	var ep *checkout.Endpoint
	err := s.inTx(ctx, func(tx *txn) error {
		var err error
		if ep, err = lockEndpoint(ctx, tx, scope, id); err != nil {
			return err
		}
		if err := ep.RollSecret(keep, s.now()); err != nil {
			return err
		}
		if err := tx.EndpointUpdate(ctx, ep); err != nil {
			return err
		}
		return s.Record(ctx, tx, ep.MerchantID, checkout.AuditEndpointSecretRoll, ep.ID)
	})
	if err != nil {
		return nil, err
	}
	return ep, nil
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
	return s.sendTestEvent(ctx, nil, id)
}

// SendTestEventIn is SendTestEvent for an endpoint of scope; another
// store's or mode's is not_found.
func (s *Service) SendTestEventIn(ctx context.Context, scope checkout.Scope, id string) (*checkout.Event, *checkout.Delivery, error) {
	if err := s.authorize(ctx, scope.MerchantID, checkout.ActionManageWebhooks); err != nil {
		return nil, nil, err
	}
	return s.sendTestEvent(ctx, &scope, id)
}

func (s *Service) sendTestEvent(ctx context.Context, scope *checkout.Scope, id string) (*checkout.Event, *checkout.Delivery, error) {
	var e *checkout.Event
	var d *checkout.Delivery
	err := s.inTx(ctx, func(tx *txn) error {
		ep, err := lockEndpoint(ctx, tx, scope, id)
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
		if err := tx.DeliveryInsert(ctx, d); err != nil {
			return err
		}
		return s.Record(ctx, tx, ep.MerchantID, checkout.AuditEndpointTest, ep.ID)
	})
	if err != nil {
		return nil, nil, err
	}
	return e, d, nil
}

// Resend makes a new delivery of a finished delivery's event to the same
// endpoint, which must be enabled, and records it on the delivery resent
// (ResentAs), so that Retry all failed does not resend it again. A
// delivery may be resent by hand any number of times.
func (s *Service) Resend(ctx context.Context, deliveryID string) (*checkout.Delivery, error) {
	return s.resend(ctx, nil, deliveryID)
}

// ResendIn is Resend for a delivery of scope; another store's or mode's is
// not_found.
func (s *Service) ResendIn(ctx context.Context, scope checkout.Scope, deliveryID string) (*checkout.Delivery, error) {
	if err := s.authorize(ctx, scope.MerchantID, checkout.ActionManageWebhooks); err != nil {
		return nil, err
	}
	return s.resend(ctx, &scope, deliveryID)
}

func (s *Service) resend(ctx context.Context, scope *checkout.Scope, deliveryID string) (*checkout.Delivery, error) {
	old, err := s.deliveryIn(ctx, scope, deliveryID)
	if err != nil {
		return nil, err
	}
	if !old.Finished() {
		return nil, checkout.Errorf(checkout.EValidationFailed, "Delivery %s is still pending; only a finished delivery can be resent.", deliveryID)
	}
	// The event must still be there: a delivery of none would never be
	// claimed.
	if _, err := s.store.EventGet(ctx, old.EventID); err != nil {
		return nil, err
	}
	var d *checkout.Delivery
	err = s.inTx(ctx, func(tx *txn) error {
		ep, err := tx.EndpointGetForUpdate(ctx, old.EndpointID)
		if err != nil {
			return err
		}
		if !ep.Enabled {
			return endpointDisabled(ep.ID)
		}
		d = checkout.NewRedelivery(old, ep, s.now())
		if err := tx.DeliveryInsert(ctx, d); err != nil {
			return err
		}
		tx.deliveries++
		if err := tx.DeliveryMarkResent(ctx, old.ID, d.ID); err != nil {
			return err
		}
		return s.Record(ctx, tx, ep.MerchantID, checkout.AuditDeliveryResend, old.ID)
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

func endpointDisabled(id string) error {
	return checkout.Errorf(checkout.EValidationFailed, "Endpoint %s is disabled; enable it to resend.", id)
}

// scopeHolds reports whether an object of a store and mode is in scope; a
// nil scope (the CLI's, by bare id) holds every object.
func scopeHolds(scope *checkout.Scope, merchantID string, mode checkout.Mode) bool {
	return scope == nil || inScope(*scope, merchantID, mode)
}

// lockEndpoint reads and locks an endpoint for a change. One outside scope
// is not_found, word for word as a missing one, so an id edited in a URL
// tells nothing of other stores.
func lockEndpoint(ctx context.Context, tx *txn, scope *checkout.Scope, id string) (*checkout.Endpoint, error) {
	ep, err := tx.EndpointGetForUpdate(ctx, id)
	if err != nil {
		return nil, err
	}
	if !scopeHolds(scope, ep.MerchantID, ep.Mode) {
		return nil, checkout.EndpointNotFound(id)
	}
	return ep, nil
}

// endpointIn reads an endpoint of scope; one outside it is not_found.
func (s *Service) endpointIn(ctx context.Context, scope *checkout.Scope, id string) (*checkout.Endpoint, error) {
	ep, err := s.store.EndpointGet(ctx, id)
	if err != nil {
		return nil, err
	}
	if !scopeHolds(scope, ep.MerchantID, ep.Mode) {
		return nil, checkout.EndpointNotFound(id)
	}
	return ep, nil
}

// deliveryIn reads a delivery of scope; one outside it is not_found.
func (s *Service) deliveryIn(ctx context.Context, scope *checkout.Scope, id string) (*checkout.Delivery, error) {
	d, err := s.store.DeliveryGet(ctx, id)
	if err != nil {
		return nil, err
	}
	if !scopeHolds(scope, d.MerchantID, d.Mode) {
		return nil, checkout.DeliveryNotFound(id)
	}
	return d, nil
}

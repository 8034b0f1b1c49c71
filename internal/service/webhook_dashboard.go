package service

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

// The operations of the dashboard's Webhooks section. Each takes the scope
// (store and mode) of the page it serves and answers not_found, word for
// word as for an id that does not exist, for an endpoint or delivery of
// another store or mode: an id edited in a URL reaches nothing outside the
// scope and tells nothing about it.

// EndpointIn returns an endpoint of scope, its signing secrets included
// (the dashboard reveals them on demand).
func (s *Service) EndpointIn(ctx context.Context, scope checkout.Scope, id string) (*checkout.Endpoint, error) {
	role, err := s.roleFor(ctx, scope.MerchantID, checkout.ActionViewWebhooks)
	if err != nil {
		return nil, err
	}
	ep, err := s.endpointIn(ctx, &scope, id)
	if err != nil || may(role, checkout.ActionSeeWebhookSecrets) {
		return ep, err
	}
	return withoutSecrets(ep), nil
}

// withoutSecrets is a copy of an endpoint without its signing secrets, for
// a member whose role may not see them.
func withoutSecrets(ep *checkout.Endpoint) *checkout.Endpoint {
	c := *ep
	c.Secret, c.PreviousSecret = "", ""
	return &c
}

// RevealEndpointSecret returns an endpoint of scope, as EndpointIn, to
// show its signing secrets, and records that they were shown
// (webhook_endpoint.secret_reveal): a secret seen is a secret that may have
// left, and the Security page says who saw it.
func (s *Service) RevealEndpointSecret(ctx context.Context, scope checkout.Scope, id string) (*checkout.Endpoint, error) {
	if err := s.authorize(ctx, scope.MerchantID, checkout.ActionSeeWebhookSecrets); err != nil {
		return nil, err
	}
	var ep *checkout.Endpoint
	err := s.inTx(ctx, func(tx *txn) error {
		var err error
		if ep, err = lockEndpoint(ctx, tx, &scope, id); err != nil {
			return err
		}
		return s.Record(ctx, tx, ep.MerchantID, checkout.AuditEndpointSecretReveal, ep.ID)
	})
	if err != nil {
		return nil, err
	}
	return ep, nil
}

// EndpointsIn returns the endpoints of scope's store and mode, oldest
// first.
func (s *Service) EndpointsIn(ctx context.Context, scope checkout.Scope) ([]*checkout.Endpoint, error) {
	role, err := s.roleFor(ctx, scope.MerchantID, checkout.ActionViewWebhooks)
	if err != nil {
		return nil, err
	}
	eps, err := s.store.EndpointList(ctx, scope.MerchantID)
	if err != nil {
		return nil, err
	}
	eps = slices.DeleteFunc(eps, func(ep *checkout.Endpoint) bool { return ep.Mode != scope.Mode })
	if !may(role, checkout.ActionSeeWebhookSecrets) {
		for i, ep := range eps {
			eps[i] = withoutSecrets(ep)
		}
	}
	return eps, nil
}

// UpdateEndpoint changes the URL, events or description of an endpoint of
// scope (a nil field of u stays), by the rules of CreateEndpoint: events
// from the catalogue, a description of at most 500 characters on one line,
// and a URL that is https on the default port with a public hostname whose
// every address is public (the same guard, resolver included). The rules
// that need no network are checked first, all at once. Deliveries still
// pending go to the new URL from their next attempt on.
func (s *Service) UpdateEndpoint(ctx context.Context, scope checkout.Scope, id string, u checkout.EndpointUpdate) (*checkout.Endpoint, error) {
	if err := s.authorize(ctx, scope.MerchantID, checkout.ActionManageWebhooks); err != nil {
		return nil, err
	}
	current, err := s.endpointIn(ctx, &scope, id)
	if err != nil {
		return nil, err
	}
	if err := current.Update(u, s.now()); err != nil {
		return nil, err
	}
	if u.URL != nil {
		if s.urls == nil {
			return nil, checkout.Internal(fmt.Errorf("service has no webhook URL checker"))
		}
		checked, err := s.urls.CheckURL(ctx, *u.URL)
		if err != nil {
			return nil, err
		}
		u.URL = &checked
	}
	var ep *checkout.Endpoint
	err = s.inTx(ctx, func(tx *txn) error {
		var err error
		if ep, err = lockEndpoint(ctx, tx, &scope, id); err != nil {
			return err
		}
		if err := ep.Update(u, s.now()); err != nil {
			return err
		}
		if err := tx.EndpointUpdate(ctx, ep); err != nil {
			return err
		}
		return s.Record(ctx, tx, ep.MerchantID, checkout.AuditEndpointUpdate, ep.ID)
	})
	if err != nil {
		return nil, err
	}
	return ep, nil
}

// EndpointHealth returns the health of an endpoint of scope now: the
// deliveries that finished in the last 24 hours and 7 days by outcome, the
// queue, the last failure and whether it has failed every attempt for a
// day (checkout.EndpointHealth.FailingForADay).
func (s *Service) EndpointHealth(ctx context.Context, scope checkout.Scope, id string) (*checkout.EndpointHealth, error) {
	if err := s.authorize(ctx, scope.MerchantID, checkout.ActionViewWebhooks); err != nil {
		return nil, err
	}
	if _, err := s.endpointIn(ctx, &scope, id); err != nil {
		return nil, err
	}
	return s.store.EndpointHealthGet(ctx, id, s.now())
}

// DeliveriesIn returns a page of scope's deliveries, newest first, by f
// (its store and mode are scope's, whatever f says). A filter by an
// endpoint of another store or mode is not_found; an invalid filter is
// validation_failed.
func (s *Service) DeliveriesIn(ctx context.Context, scope checkout.Scope, f checkout.DeliveryFilter) (checkout.Page[*checkout.Delivery], error) {
	if err := s.authorize(ctx, scope.MerchantID, checkout.ActionViewWebhooks); err != nil {
		return checkout.Page[*checkout.Delivery]{}, err
	}
	f.MerchantID, f.Mode = scope.MerchantID, scope.Mode
	if err := f.Validate(); err != nil {
		return checkout.Page[*checkout.Delivery]{}, err
	}
	if f.EndpointID != "" {
		if _, err := s.endpointIn(ctx, &scope, f.EndpointID); err != nil {
			return checkout.Page[*checkout.Delivery]{}, err
		}
	}
	return s.store.DeliveryListPage(ctx, f)
}

// DeliveryIn returns a delivery of scope with its attempts in order: each
// attempt's time, status code, latency, error and response body (the
// first 4 KiB, as received). The next attempt's time is the delivery's
// NextAttemptAt while it is pending.
func (s *Service) DeliveryIn(ctx context.Context, scope checkout.Scope, id string) (*checkout.Delivery, []*checkout.Attempt, error) {
	if err := s.authorize(ctx, scope.MerchantID, checkout.ActionViewWebhooks); err != nil {
		return nil, nil, err
	}
	d, err := s.deliveryIn(ctx, &scope, id)
	if err != nil {
		return nil, nil, err
	}
	as, err := s.store.AttemptList(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	return d, as, nil
}

// RetryFailedResult is what one Retry all failed did.
type RetryFailedResult struct {
	// Queued is how many failed deliveries were resent (new deliveries,
	// attempted from 1 at once).
	Queued int
	// More reports that failed deliveries of the range remain, past the
	// bound of one call (checkout.MaxRetryFailed): calling again resends
	// the next ones.
	More bool
}

// RetryFailed resends the failed deliveries of an endpoint of scope
// created at or after since, oldest first, at most
// checkout.MaxRetryFailed a call. It is idempotent: each delivery resent
// (by it or by Resend) records its resend and is never resent by it again,
// so a second call, or a call racing another, resends only what no call
// has. A resend that fails in turn is a failed delivery of its own, which
// a later call resends. The endpoint must be enabled, as for Resend.
func (s *Service) RetryFailed(ctx context.Context, scope checkout.Scope, endpointID string, since time.Time) (*RetryFailedResult, error) {
	if err := s.authorize(ctx, scope.MerchantID, checkout.ActionManageWebhooks); err != nil {
		return nil, err
	}
	res := &RetryFailedResult{}
	err := s.inTx(ctx, func(tx *txn) error {
		ep, err := lockEndpoint(ctx, tx, &scope, endpointID)
		if err != nil {
			return err
		}
		if !ep.Enabled {
			return endpointDisabled(ep.ID)
		}
		ds, err := tx.DeliveryListRetryable(ctx, ep.ID, since, checkout.MaxRetryFailed+1)
		if err != nil {
			return err
		}
		if len(ds) > checkout.MaxRetryFailed {
			ds, res.More = ds[:checkout.MaxRetryFailed], true
		}
		now := s.now()
		for _, old := range ds {
			d := checkout.NewRedelivery(old, ep, now)
			if err := tx.DeliveryInsert(ctx, d); err != nil {
				return err
			}
			if err := tx.DeliveryMarkResent(ctx, old.ID, d.ID); err != nil {
				return err
			}
		}
		res.Queued = len(ds)
		tx.deliveries += len(ds)
		if len(ds) == 0 {
			return nil // nothing changed, nothing to record
		}
		return s.Record(ctx, tx, ep.MerchantID, checkout.AuditEndpointRetryFailed, ep.ID)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

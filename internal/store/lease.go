package store

import (
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

// The webhook queue's lease mechanics: a dispatcher claims due deliveries
// under a lease (DB.DeliveryClaim) and records its attempts
// (DB.DeliveryRecord, DB.DeliveryRecordAll). They are the store's and the
// dispatcher's business, not the checkout domain's.

// ClaimParams describe one claim of due deliveries. A delivery is due when
// it is pending, its next attempt time has come and no lease on it is
// running. A claim leases at most Limit of them to Owner until LeaseUntil,
// oldest due first, and takes no delivery of an endpoint that already has
// PerEndpoint leased deliveries, so one slow endpoint cannot hold every
// worker.
type ClaimParams struct {
	Owner       string
	Now         time.Time
	LeaseUntil  time.Time
	Limit       int
	PerEndpoint int
}

// AttemptRecord is a finished attempt to store: the attempt, the delivery
// after it (checkout.Delivery.Record), and the owner of the lease it was made under.
type AttemptRecord struct {
	Owner    string
	Attempt  *checkout.Attempt
	Delivery *checkout.Delivery
}

// Claim is a leased delivery with what its attempt needs: the endpoint as it
// is now (its current secret signs) and the event.
type Claim struct {
	Delivery *checkout.Delivery
	Endpoint *checkout.Endpoint
	Event    *checkout.Event
}

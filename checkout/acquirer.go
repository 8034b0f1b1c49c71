package checkout

// AcquirerRef is where a live card payment or its refund lives at the
// store's card acquirer (docs/payments.md, Card acquirers): the acquirer's
// name as its connector gives it ("stripe") and its id there. The service
// looks the object up by this id, never by an id a buyer's redirect or an
// unverified webhook names.
type AcquirerRef struct {
	Name string `json:"name"`
	// ID is the acquirer's id of the payment (pi_...) or refund (re_...);
	// "" while the acquirer has not answered the create (the create is
	// asked again with the same idempotency key).
	ID string `json:"id,omitempty"`
	// ChargeID is the acquirer's id of a payment's capture (ch_...), once
	// known.
	ChargeID string `json:"charge_id,omitempty"`
	// Status is the acquirer's status when last looked up
	// (pay.AcquirerStatus), for the dashboard and the payments job.
	Status string `json:"status,omitempty"`
}

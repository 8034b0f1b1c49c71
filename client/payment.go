package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
)

// PaymentDetail is a payment as GetPayment returns it: the Payment that
// payment.* events carry, with what refunds under way hold, its refunds,
// oldest first, and its dispute (nil when it was never disputed).
type PaymentDetail struct {
	Payment
	AmountRefunding int64    `json:"amount_refunding"`
	Refunds         []Refund `json:"refunds"`
	Dispute         *Dispute `json:"dispute"`
}

// Refund gives back part or all of a payment (docs/api.md, Payments and
// refunds).
type Refund struct {
	ID         string  `json:"id"`     // re_...
	Object     string  `json:"object"` // "refund"
	Livemode   bool    `json:"livemode"`
	PaymentID  string  `json:"payment_id"`
	CheckoutID string  `json:"checkout_id"`
	Amount     int64   `json:"amount"`
	Currency   string  `json:"currency"`
	Reason     *string `json:"reason"` // requested_by_customer, duplicate, fraudulent; nil when none
	// Status is pending (the processor has not answered yet), succeeded,
	// failed (FailureCode says why; nothing was returned) or canceled.
	Status         string  `json:"status"`
	FailureCode    *string `json:"failure_code"`
	FailureMessage *string `json:"failure_message"`
	RequestedBy    Actor   `json:"requested_by"`
	// Crypto is how a refund of a crypto payment is paid; nil for others.
	Crypto    *CryptoRefund `json:"crypto"`
	CreatedAt int64         `json:"created_at"`
	UpdatedAt int64         `json:"updated_at"`
}

// CryptoRefund is a crypto refund's payout. checkoutd sends no coins: the
// buyer gives an address at LinkURL, which prices the refund; the
// merchant pays AmountCoin to Address from their wallet; checkoutd sees
// the payout, and at ConfirmationsNeeded the refund succeeds.
type CryptoRefund struct {
	Coin    string `json:"coin"`    // BTC, LTC, ETH
	Network string `json:"network"` // main, test, regtest
	Rate    string `json:"rate"`    // payment, current
	// Stage is awaiting_address, awaiting_payout, confirming or done.
	Stage         string  `json:"stage"`
	LinkURL       string  `json:"link_url"` // send it to the buyer
	LinkExpiresAt int64   `json:"link_expires_at"`
	Address       *string `json:"address"`     // nil until given
	AmountBase    *string `json:"amount_base"` // base units, decimal
	AmountCoin    *string `json:"amount_coin"` // "0.0123"
	TxHash        *string `json:"tx_hash"`     // nil until seen
	// ConfirmationsNeeded is the payout's depth at which the refund
	// succeeds.
	ConfirmationsNeeded int `json:"confirmations_needed"`
}

// Actor is who did something: a member of the store in the dashboard
// (Type "account", ID and Email), an API key (Type "api_key", its ID) or the
// operator at checkoutd's command line (Type "cli", the system user's Name).
type Actor struct {
	Type  string  `json:"type"`
	ID    *string `json:"id"`
	Email string  `json:"email,omitempty"`
	Name  string  `json:"name,omitempty"`
}

// RefundParams are what Refund asks.
type RefundParams struct {
	// Amount is what to refund, in minor units; nil refunds all that is
	// left of the payment.
	Amount *int64 `json:"amount,omitempty"`
	// Reason is requested_by_customer, duplicate or fraudulent, or "".
	Reason string `json:"reason,omitempty"`
	// Rate, for a crypto payment only, prices the refund in the coin:
	// "payment" (the default: at the payment's rate) or "current".
	Rate string `json:"rate,omitempty"`
	// IdempotencyKey makes the refund safe to retry across calls (a
	// retry after a crash, say): the same key answers with the refund its
	// first request made. Empty, Refund makes one for the call, which its
	// own retries reuse.
	IdempotencyKey string `json:"-"`
}

// Dispute is a buyer's bank's challenge of a payment (docs/payments.md,
// Disputes).
type Dispute struct {
	ID         string `json:"id"`     // dp_...
	Object     string `json:"object"` // "dispute"
	Livemode   bool   `json:"livemode"`
	PaymentID  string `json:"payment_id"`
	CheckoutID string `json:"checkout_id"`
	Amount     int64  `json:"amount"`
	Currency   string `json:"currency"`
	Reason     string `json:"reason"` // fraudulent, product_not_received, duplicate, general
	// Status is needs_response, under_review, won or lost.
	Status        string           `json:"status"`
	Fee           int64            `json:"fee"`
	EvidenceDueBy int64            `json:"evidence_due_by"`
	Evidence      *DisputeEvidence `json:"evidence"` // nil until sent
	SubmittedAt   *int64           `json:"submitted_at"`
	SubmittedBy   *Actor           `json:"submitted_by"`
	ClosedAt      *int64           `json:"closed_at"`
	CreatedAt     int64            `json:"created_at"`
}

// DisputeEvidence answers a dispute: texts the card network reads (at
// least one), and a note of the merchant's own, never sent.
type DisputeEvidence struct {
	ProductDescription    string `json:"product_description,omitempty"`
	CustomerCommunication string `json:"customer_communication,omitempty"`
	ShippingDocumentation string `json:"shipping_documentation,omitempty"`
	RefundPolicy          string `json:"refund_policy,omitempty"`
	UncategorizedText     string `json:"uncategorized_text,omitempty"`
	Note                  string `json:"note,omitempty"`
}

// GetPayment retrieves a payment (pay_...) with its refunds and dispute: a
// key with checkouts:read (or checkouts:write), refunds:write or
// disputes:write.
func (c *Client) GetPayment(ctx context.Context, id string) (*PaymentDetail, error) {
	var p PaymentDetail
	if err := c.do(ctx, http.MethodGet, c.storePath("payments", id), nil, "", &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// Refund gives back part or all of a payment (a key with refunds:write).
// Retries reuse one Idempotency-Key, so at most one refund is made per
// call. The refund comes back succeeded, failed, or pending while the
// processor has not answered; GetRefund tells how it went.
func (c *Client) Refund(ctx context.Context, paymentID string, p RefundParams) (*Refund, error) {
	body, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("checkoutd: encode refund: %w", err)
	}
	key := p.IdempotencyKey
	if key == "" {
		key = NewIdempotencyKey()
	}
	var r Refund
	if err := c.do(ctx, http.MethodPost, c.storePath("payments", paymentID)+"/refunds", body, key, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// GetRefund retrieves a refund (re_...).
func (c *Client) GetRefund(ctx context.Context, id string) (*Refund, error) {
	var r Refund
	if err := c.do(ctx, http.MethodGet, c.storePath("refunds", id), nil, "", &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// CancelRefund cancels a crypto refund whose payout has not been seen (a
// key with refunds:write); one canceled already comes back as it is.
func (c *Client) CancelRefund(ctx context.Context, id string) (*Refund, error) {
	var r Refund
	if err := c.do(ctx, http.MethodPost, c.storePath("refunds", id)+"/cancel", nil, "", &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// GetDispute retrieves a dispute (dp_...).
func (c *Client) GetDispute(ctx context.Context, id string) (*Dispute, error) {
	var d Dispute
	if err := c.do(ctx, http.MethodGet, c.storePath("disputes", id), nil, "", &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// SubmitDisputeEvidence answers a dispute (a key with disputes:write):
// once, before its deadline. The dispute comes back under review.
func (c *Client) SubmitDisputeEvidence(ctx context.Context, id string, e DisputeEvidence) (*Dispute, error) {
	body, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("checkoutd: encode evidence: %w", err)
	}
	var d Dispute
	// Evidence is sent once: a retry of a lost answer would be refused
	// (dispute_not_open), so only what cannot have reached the server is
	// retried.
	if err := c.doOnce(ctx, http.MethodPost, c.storePath("disputes", id)+"/evidence", body, &d); err != nil {
		return nil, err
	}
	return &d, nil
}

func (c *Client) storePath(collection, id string) string {
	return "/v1/stores/" + url.PathEscape(c.storeID) + "/" + collection + "/" + url.PathEscape(id)
}

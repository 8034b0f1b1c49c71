package checkout

import (
	"bytes"
	"fmt"
	"time"
)

// RefundStatus is the state of a refund.
//
//	pending ──► succeeded
//	   │
//	   ├──────► failed     (the processor could not return the money)
//	   └──────► canceled   (a crypto refund whose buyer never gave an address)
type RefundStatus string

// Refund statuses.
const (
	RefundPending   RefundStatus = "pending"
	RefundSucceeded RefundStatus = "succeeded"
	RefundFailed    RefundStatus = "failed"
	RefundCanceled  RefundStatus = "canceled"
)

// RefundStatuses lists every status, in the order of a refund's life.
var RefundStatuses = []RefundStatus{RefundPending, RefundSucceeded, RefundFailed, RefundCanceled}

// RefundReason is why the merchant refunds, as Stripe names the reasons;
// "" when none is given.
type RefundReason string

// Refund reasons.
const (
	ReasonRequestedByCustomer RefundReason = "requested_by_customer"
	ReasonDuplicate           RefundReason = "duplicate"
	ReasonFraudulent          RefundReason = "fraudulent"
)

// RefundReasons lists every reason a refund may give.
var RefundReasons = []RefundReason{ReasonRequestedByCustomer, ReasonDuplicate, ReasonFraudulent}

// Why a refund failed, as its processor says.
const (
	// RefundFailExpiredOrCanceledCard: the card charged is closed, so the
	// money cannot go back to it (the test card 4000 0000 0000 5126).
	RefundFailExpiredOrCanceledCard = "expired_or_canceled_card"
	// RefundFailDeclined: the processor refused the refund.
	RefundFailDeclined = "declined"
)

// refundFailureMessages say in a sentence what each failure means to the
// merchant.
var refundFailureMessages = map[string]string{
	RefundFailExpiredOrCanceledCard: "The card charged is expired or canceled: the money cannot go back to it. Return it to the buyer another way.",
	RefundFailDeclined:              "The processor declined the refund.",
}

// RefundFailureMessage returns what a refund failure code means.
func RefundFailureMessage(code string) string {
	if m, ok := refundFailureMessages[code]; ok {
		return m
	}
	return "The refund failed."
}

// ActorKind says what kind of party an Actor is.
type ActorKind string

// The kinds of actors.
const (
	// ActorAccount is a member of the store, in the dashboard: ID is the
	// account's id, Name its email.
	ActorAccount ActorKind = "account"
	// ActorAPIKey is a merchant's server, through the API: ID is the key's
	// id.
	ActorAPIKey ActorKind = "api_key"
	// ActorCLI is the operator, at checkoutd's command line: Name is the
	// operating system's user.
	ActorCLI ActorKind = "cli"
)

// Actor is who asked for a change: a member of the store, an API key, or
// the operator at the command line.
type Actor struct {
	Kind ActorKind
	ID   string
	Name string
}

// String names the actor for logs and lists.
func (a Actor) String() string {
	switch {
	case a.ID != "" && a.Name != "":
		return fmt.Sprintf("%s %s (%s)", a.Kind, a.Name, a.ID)
	case a.ID != "":
		return string(a.Kind) + " " + a.ID
	}
	return string(a.Kind) + " " + a.Name
}

// Refund gives back part or all of a payment's money.
type Refund struct {
	ID         string
	PaymentID  string
	SessionID  string
	MerchantID string
	Mode       Mode
	// Amount is what goes back to the buyer, in the payment's currency's
	// minor units.
	Amount   int64
	Currency string
	Reason   RefundReason
	Status   RefundStatus
	// FailureCode says why a failed refund failed (RefundFail*).
	FailureCode *string
	RequestedBy Actor
	// DueAt is when the payments job next looks at the refund: a refund
	// whose processor did not answer is asked again then; a crypto
	// refund's link expires, or its payout is counted. Nil when nothing is
	// scheduled.
	DueAt *time.Time
	// Crypto is how a refund of a crypto payment is paid (by the
	// merchant, to the buyer's address); LinkToken its link's token. Nil
	// and "" for other refunds.
	Crypto    *CryptoRefund
	LinkToken string
	// Acquirer is where a refund of a live card payment is at the store's
	// card acquirer; nil for other refunds.
	Acquirer  *AcquirerRef
	CreatedAt time.Time
	UpdatedAt time.Time
}

// RefundParams are what a refund is asked with.
type RefundParams struct {
	// Amount is what to refund, in minor units; nil refunds all that is
	// left of the payment.
	Amount *int64
	Reason RefundReason
	// Rate is at which rate a crypto refund is priced in its coin;
	// RateOfPayment when "". Other refunds take none.
	Rate RefundRate
}

// RefundTimeout is how long a refund's processor has to answer before the
// payments job looks the refund up.
const RefundTimeout = CardChargeTimeout

// Refundable returns how much of p may still be refunded: what it
// collected, less what was refunded and what refunds under way hold.
func (p *Payment) Refundable() int64 {
	return p.Amount - p.AmountRefunded - p.AmountRefunding
}

// RefundBlock says why p cannot be refunded now, or nil when it can: a
// captured payment that is not disputed, or a failed one whose money was
// collected (RefundDue), with something left to refund.
func (p *Payment) RefundBlock() error {
	switch {
	case p.Status == PaymentDisputed || p.Status == PaymentDisputeLost:
		return Errorf(EPaymentNotRefundable, "Payment %s is disputed: the money is the card network's to decide until the dispute closes, and a refund would return it twice. Answer the dispute instead.", p.ID)
	case p.Status == PaymentProcessing:
		return Errorf(EPaymentNotRefundable, "Payment %s has not collected its money yet: there is nothing to refund.", p.ID)
	case p.Status == PaymentFailed && !p.RefundDue():
		return Errorf(EPaymentNotRefundable, "Payment %s failed without collecting money: there is nothing to refund.", p.ID)
	case p.Refundable() <= 0 && p.AmountRefunding > 0:
		return Errorf(EPaymentNotRefundable, "Payment %s has refunds under way for all that is left of it.", p.ID)
	case p.Refundable() <= 0:
		return Errorf(EPaymentNotRefundable, "Payment %s is refunded in full already.", p.ID)
	}
	return nil
}

// NewRefund checks a refund of p and returns it, pending, with its amount
// held on p (AmountRefunding) until it settles: two refunds at once can
// never together return more than p collected. A skins payment is refunded
// whole: its items go back to the buyer.
func NewRefund(p *Payment, params RefundParams, by Actor, now time.Time) (*Refund, error) {
	if params.Rate != "" {
		return nil, &Error{Code: EValidationFailed, Param: "rate", Message: "rate applies to refunds of crypto payments only."}
	}
	if params.Reason != "" && !validReason(params.Reason) {
		return nil, &Error{Code: EValidationFailed, Param: "reason",
			Message: "reason must be requested_by_customer, duplicate or fraudulent, or left out."}
	}
	if err := p.RefundBlock(); err != nil {
		return nil, err
	}
	left := p.Refundable()
	amount := left
	if params.Amount != nil {
		amount = *params.Amount
	}
	switch {
	case amount < 1:
		return nil, &Error{Code: EValidationFailed, Param: "amount", Message: "amount must be at least 1 (minor units)."}
	case amount > left:
		return nil, &Error{Code: ERefundTooLarge, Param: "amount",
			Message: fmt.Sprintf("amount %d is more than the %d left to refund of payment %s.", amount, left, p.ID)}
	case p.Method == MethodSkins && amount != p.Amount:
		return nil, &Error{Code: EValidationFailed, Param: "amount",
			Message: fmt.Sprintf("A skins payment is refunded whole, its items going back to the buyer: amount must be %d or left out.", p.Amount)}
	}
	now = now.Truncate(time.Millisecond)
	p.AmountRefunding += amount
	p.UpdatedAt = now
	return &Refund{
		ID:          NewRefundID(),
		PaymentID:   p.ID,
		SessionID:   p.SessionID,
		MerchantID:  p.MerchantID,
		Mode:        p.Mode,
		Amount:      amount,
		Currency:    p.Currency,
		Reason:      params.Reason,
		Status:      RefundPending,
		RequestedBy: by,
		CreatedAt:   now,
		UpdatedAt:   now,
	}, nil
}

// ParseRefundRequest reads the body of a refund request: an optional
// amount (an integer of minor units, 1 to MaxTotal; all that is left when
// not sent) and an optional reason, nothing else. An empty body asks for
// all that is left, with no reason. Every violation is reported, as for a
// create.
func ParseRefundRequest(body []byte) (RefundParams, error) {
	var p RefundParams
	if len(bytes.TrimSpace(body)) == 0 {
		return p, nil
	}
	obj, dups, err := parseObject(body)
	if err != nil {
		return p, err
	}
	v := dups
	v.rejectUnknown("", obj, "amount", "reason", "rate")
	if val, ok := field(obj, "amount"); ok {
		if n, ok := v.wantInt("amount", val, 1, MaxTotal); ok {
			p.Amount = &n
		}
	}
	if val, ok := field(obj, "reason"); ok {
		if s, ok := v.wantString("reason", val); ok {
			if validReason(RefundReason(s)) {
				p.Reason = RefundReason(s)
			} else {
				v.add("invalid_value", "reason", fmt.Sprintf("reason must be requested_by_customer, duplicate or fraudulent; got %s.", quote(s)))
			}
		}
	}
	if val, ok := field(obj, "rate"); ok {
		if s, ok := v.wantString("rate", val); ok {
			switch RefundRate(s) {
			case RateOfPayment, RateCurrent:
				p.Rate = RefundRate(s)
			default:
				v.add("invalid_value", "rate", fmt.Sprintf("rate must be payment or current; got %s.", quote(s)))
			}
		}
	}
	return p, v.err()
}

func validReason(r RefundReason) bool {
	for _, v := range RefundReasons {
		if r == v {
			return true
		}
	}
	return false
}

// Succeed settles a pending refund of p as done: its amount moves from
// what refunds hold to what was refunded, and p follows (partially_refunded
// or refunded; a failed payment whose money was due back stays failed and
// is no longer due once refunded in full).
func (r *Refund) Succeed(p *Payment, now time.Time) error {
	if err := r.settle(p, now); err != nil {
		return err
	}
	r.Status = RefundSucceeded
	p.AmountRefunded += r.Amount
	if p.Status == PaymentSucceeded || p.Status == PaymentPartiallyRefunded {
		p.Status = PaymentPartiallyRefunded
		if p.AmountRefunded >= p.Amount {
			p.Status = PaymentRefunded
		}
	}
	return nil
}

// Fail settles a pending refund of p as failed with code: what it held
// is free to be refunded again.
func (r *Refund) Fail(p *Payment, code string, now time.Time) error {
	if err := r.settle(p, now); err != nil {
		return err
	}
	r.Status = RefundFailed
	r.FailureCode = &code
	return nil
}

// Reverse moves a refund of p that had succeeded to failed with code: a
// card acquirer reports that the buyer's bank could not take the money
// after all (Stripe's refunds may fail days after they succeeded). What it
// refunded is the merchant's again, and p follows back (refunded to
// partially_refunded or succeeded; a disputed payment keeps its status).
func (r *Refund) Reverse(p *Payment, code string, now time.Time) error {
	if r.Status != RefundSucceeded {
		return Errorf(EConflict, "refund %s is %s, not succeeded", r.ID, r.Status)
	}
	if p.ID != r.PaymentID || p.AmountRefunded < r.Amount {
		return fmt.Errorf("refund %s of %d does not belong to payment %s, which has %d refunded", r.ID, r.Amount, p.ID, p.AmountRefunded)
	}
	now = now.Truncate(time.Millisecond)
	p.AmountRefunded -= r.Amount
	if p.Status == PaymentRefunded || p.Status == PaymentPartiallyRefunded {
		p.Status = PaymentPartiallyRefunded
		if p.AmountRefunded == 0 {
			p.Status = PaymentSucceeded
		}
	}
	p.UpdatedAt = now
	r.Status, r.FailureCode, r.UpdatedAt, r.DueAt = RefundFailed, &code, now, nil
	return nil
}

// Cancel settles a pending refund of p as canceled: nothing was returned,
// and what it held is free again.
func (r *Refund) Cancel(p *Payment, now time.Time) error {
	if err := r.settle(p, now); err != nil {
		return err
	}
	r.Status = RefundCanceled
	return nil
}

// settle releases what a pending refund holds on its payment.
func (r *Refund) settle(p *Payment, now time.Time) error {
	if r.Status != RefundPending {
		return Errorf(EConflict, "refund %s is %s already", r.ID, r.Status)
	}
	if p.ID != r.PaymentID || p.AmountRefunding < r.Amount {
		return fmt.Errorf("refund %s of %d does not belong to payment %s, which holds %d for refunds", r.ID, r.Amount, p.ID, p.AmountRefunding)
	}
	now = now.Truncate(time.Millisecond)
	p.AmountRefunding -= r.Amount
	p.UpdatedAt = now
	r.UpdatedAt = now
	r.DueAt = nil
	return nil
}

// RefundJSON is a refund as the API returns it.
type RefundJSON struct {
	ID             string        `json:"id"`
	Object         string        `json:"object"`
	Livemode       bool          `json:"livemode"`
	PaymentID      string        `json:"payment_id"`
	CheckoutID     string        `json:"checkout_id"`
	Amount         int64         `json:"amount"`
	Currency       string        `json:"currency"`
	Reason         *RefundReason `json:"reason"`
	Status         RefundStatus  `json:"status"`
	FailureCode    *string       `json:"failure_code"`
	FailureMessage *string       `json:"failure_message"`
	RequestedBy    ActorJSON     `json:"requested_by"`
	// Crypto is how a refund of a crypto payment is paid; null for
	// others.
	Crypto    *CryptoRefundJSON `json:"crypto"`
	CreatedAt int64             `json:"created_at"`
	UpdatedAt int64             `json:"updated_at"`
}

// CryptoRefundJSON is a crypto refund's payout as the API shows it.
type CryptoRefundJSON struct {
	Coin    string     `json:"coin"`
	Network string     `json:"network"`
	Rate    RefundRate `json:"rate"`
	// Stage is where a pending refund stands: awaiting_address (the
	// buyer's, through LinkURL), awaiting_payout (the merchant's: pay
	// AmountBase to Address), confirming (the payout seen).
	Stage         string  `json:"stage"`
	LinkURL       string  `json:"link_url"`
	LinkExpiresAt int64   `json:"link_expires_at"`
	Address       *string `json:"address"`
	AmountBase    *string `json:"amount_base"`
	// AmountCoin is AmountBase in coins ("0.0123"), as a wallet takes it.
	AmountCoin    *string `json:"amount_coin"`
	TxHash        *string `json:"tx_hash"`
	Confirmations int     `json:"confirmations_needed"`
}

// ActorJSON is an Actor as the API shows it.
type ActorJSON struct {
	Type  ActorKind `json:"type"`
	ID    *string   `json:"id"`
	Email *string   `json:"email,omitempty"`
	Name  *string   `json:"name,omitempty"`
}

// View returns r as the API shows it; a crypto refund's link is under
// checkoutBaseURL, the payment pages' address.
func (r *Refund) View(checkoutBaseURL string) *RefundJSON {
	v := &RefundJSON{
		ID:          r.ID,
		Object:      "refund",
		Livemode:    r.Mode.Live(),
		PaymentID:   r.PaymentID,
		CheckoutID:  r.SessionID,
		Amount:      r.Amount,
		Currency:    r.Currency,
		Status:      r.Status,
		FailureCode: r.FailureCode,
		RequestedBy: r.RequestedBy.view(),
		CreatedAt:   r.CreatedAt.Unix(),
		UpdatedAt:   r.UpdatedAt.Unix(),
	}
	if r.Reason != "" {
		reason := r.Reason
		v.Reason = &reason
	}
	if r.FailureCode != nil {
		msg := RefundFailureMessage(*r.FailureCode)
		v.FailureMessage = &msg
	}
	if c := r.Crypto; c != nil {
		stage := c.Stage()
		if r.Status != RefundPending {
			stage = StageDone
		}
		v.Crypto = &CryptoRefundJSON{Coin: c.Coin, Network: c.Network, Rate: c.Rate, Stage: stage,
			LinkURL: checkoutBaseURL + "/refund/" + r.LinkToken, LinkExpiresAt: c.LinkExpiresAt / 1000, Confirmations: c.Confirmations}
		coin, known := CoinByCode(c.Coin)
		if v.Crypto.Confirmations == 0 && known { // until the payout is seen
			v.Crypto.Confirmations = coin.Confirmations
		}
		if c.Address != "" {
			v.Crypto.Address, v.Crypto.AmountBase = &c.Address, &c.AmountBase
			if known {
				amount := FormatCoin(c.AmountBase, coin)
				v.Crypto.AmountCoin = &amount
			}
		}
		if c.TxHash != "" {
			v.Crypto.TxHash = &c.TxHash
		}
	}
	return v
}

func (a Actor) view() ActorJSON {
	v := ActorJSON{Type: a.Kind}
	if a.ID != "" {
		id := a.ID
		v.ID = &id
	}
	if a.Name != "" {
		name := a.Name
		switch a.Kind {
		case ActorAccount:
			v.Email = &name
		default:
			v.Name = &name
		}
	}
	return v
}

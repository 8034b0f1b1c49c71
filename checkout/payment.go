package checkout

import (
	"fmt"
	"maps"
	"math/big"
	"slices"
	"time"
)

// PaymentMethod is how a buyer pays.
type PaymentMethod string

// Payment methods (DESIGN.md section 7).
const (
	MethodCard   PaymentMethod = "card"
	MethodCrypto PaymentMethod = "crypto"
	MethodSkins  PaymentMethod = "skins"
)

// PaymentMethods lists every method in the order the page offers them.
var PaymentMethods = []PaymentMethod{MethodCard, MethodCrypto, MethodSkins}

// PaymentStatus is the state of a payment.
//
//	processing ──► succeeded ──► partially_refunded ──► refunded
//	    │              │  ▲              │
//	    ▼              ▼  │ (won)        ▼
//	  failed         disputed ──► dispute_lost (lost)
type PaymentStatus string

// Payment statuses.
const (
	PaymentProcessing        PaymentStatus = "processing"
	PaymentSucceeded         PaymentStatus = "succeeded"
	PaymentFailed            PaymentStatus = "failed"
	PaymentPartiallyRefunded PaymentStatus = "partially_refunded"
	PaymentRefunded          PaymentStatus = "refunded"
	PaymentDisputed          PaymentStatus = "disputed"
	PaymentDisputeLost       PaymentStatus = "dispute_lost"
)

// PaymentStatuses lists every status, in the order of a payment's life.
var PaymentStatuses = []PaymentStatus{PaymentProcessing, PaymentSucceeded, PaymentFailed, PaymentPartiallyRefunded,
	PaymentRefunded, PaymentDisputed, PaymentDisputeLost}

// Captured reports whether the payment's money was collected: it succeeded,
// whatever happened after (refunds, disputes).
func (s PaymentStatus) Captured() bool {
	switch s {
	case PaymentSucceeded, PaymentPartiallyRefunded, PaymentRefunded, PaymentDisputed, PaymentDisputeLost:
		return true
	}
	return false
}

// Failure codes of a failed payment. The card declines are those of the
// test cards (DESIGN.md section 7); the rest say why a payment that was not
// declined by its processor still could not pay the session.
const (
	FailCardDeclined      = "card_declined"
	FailInsufficientFunds = "insufficient_funds"
	FailExpiredCard       = "expired_card"
	FailIncorrectCVC      = "incorrect_cvc"
	FailProcessingError   = "processing_error"
	FailTestModeLiveCard  = "test_mode_live_card"
	// FailSessionExpired: the money arrived after the session expired (late
	// crypto). Its money is to be returned to the buyer.
	FailSessionExpired = "session_expired"
	// FailSessionCompleted: the money arrived for a session another payment
	// had already paid. Also to be refunded.
	FailSessionCompleted = "session_completed"
	// FailDuplicatePayment: the money arrived while another payment held
	// the session. To be refunded.
	FailDuplicatePayment = "duplicate_payment"
	// FailTradeReversed: a skins trade was reversed during its hold.
	FailTradeReversed = "trade_reversed"
	// FailCapturedAfterFailure: the processor took the money (approved the
	// charge, accepted the trade) after the payment had failed, as when
	// the payments job found nothing at the processor while the charge was
	// still in flight. To be refunded.
	FailCapturedAfterFailure = "captured_after_failure"
	// FailConfirmationTimeout: a crypto transaction was not confirmed by
	// its coin's deadline (Coin.ConfirmationDeadline). Should it confirm
	// later, its money is to be refunded.
	FailConfirmationTimeout = "confirmation_timeout"
	// FailUnderpaid: a live crypto payment received less than the quote,
	// and the rest did not come within the time allowed
	// (UnderpaidWindow). Its money is to be refunded; the session is free
	// for another payment.
	FailUnderpaid = "underpaid"
	// FailReplaced: a crypto transaction was replaced by another spending
	// the same coins (a fee bump): the replacement is the payment; this
	// one moved no money.
	FailReplaced = "replaced"
	// FailDoubleSpent: the chain spent a crypto transaction's coins
	// elsewhere (a conflicting transaction was mined): it can never
	// confirm, and nothing arrived.
	FailDoubleSpent = "double_spent"
	// FailDropped: a crypto transaction left the network (evicted from
	// the mempool, nothing replacing it) and was not back within the time
	// allowed (DroppedWindow): the session is free to be paid again.
	// Should it confirm later after all, the scan flags the payment
	// captured_after_failure, to be refunded.
	FailDropped = "dropped"
	// FailAuthenticationFailed: the buyer's bank asked the buyer to
	// confirm the payment (3-D Secure) and it was not confirmed: refused,
	// or not done before the card acquirer's payment was canceled.
	FailAuthenticationFailed = "authentication_failed"
	// FailAbandoned: a card payment at the acquirer was left unconfirmed
	// until the session could no longer wait (it expires, or the payment's
	// hold ran out), and was canceled there; nothing was collected.
	FailAbandoned = "abandoned"
)

// refundCodes are the failure codes of a failed payment whose money was, or
// may yet be, collected: the dashboard lists them to be refunded.
var refundCodes = map[string]bool{
	FailSessionExpired: true, FailSessionCompleted: true, FailDuplicatePayment: true, FailCapturedAfterFailure: true,
	FailUnderpaid: true,
}

// RefundDue reports whether p failed while its money was collected (late
// crypto, a second payment of a session, a charge approved after the
// payment failed) and is not yet refunded in full: it is flagged for a
// refund from the dashboard.
func (p *Payment) RefundDue() bool {
	return p.Status == PaymentFailed && p.FailureCode != nil && refundCodes[*p.FailureCode] && p.AmountRefunded < p.Amount
}

// FlagCapturedAfterFailure records on a failed payment that its processor
// took the money after all: it fails with FailCapturedAfterFailure
// instead, to be refunded.
func (p *Payment) FlagCapturedAfterFailure(now time.Time) error {
	if p.Status != PaymentFailed {
		return Errorf(EConflict, "payment %s cannot be flagged for refund: it is %s", p.ID, p.Status)
	}
	code, msg := FailCapturedAfterFailure, FailureMessage(FailCapturedAfterFailure)
	p.FailureCode, p.FailureMessage = &code, &msg
	p.UpdatedAt = now
	return nil
}

// failureMessages are the buyer-facing explanations of failure codes.
var failureMessages = map[string]string{
	FailCardDeclined:         "Your card was declined.",
	FailInsufficientFunds:    "Your card has insufficient funds.",
	FailExpiredCard:          "Your card has expired.",
	FailIncorrectCVC:         "Your card's security code (CVC) is incorrect.",
	FailProcessingError:      "An error occurred while processing your card. Try again in a little while.",
	FailTestModeLiveCard:     "Your card was declined: this checkout is in test mode, where only test cards work.",
	FailSessionExpired:       "The payment arrived after the checkout had expired.",
	FailSessionCompleted:     "The payment arrived after the checkout had already been paid.",
	FailDuplicatePayment:     "The payment arrived while another payment for the checkout was on its way.",
	FailTradeReversed:        "The trade was reversed during the platform's trade hold.",
	FailCapturedAfterFailure: "The payment was collected after it had failed; it is to be refunded.",
	FailConfirmationTimeout:  "The transaction was not confirmed in time. Should it confirm later, it is to be refunded.",
	FailUnderpaid:            "Less than the amount quoted arrived, and the rest did not in time; what arrived is to be refunded.",
	FailReplaced:             "The transaction was replaced by another (a fee bump); the replacement pays instead.",
	FailDoubleSpent:          "The transaction's coins were spent elsewhere before it confirmed; nothing arrived. Pay again to complete the checkout.",
	FailDropped:              "The transaction left the network before it confirmed; nothing arrived. Pay again to complete the checkout.",
	FailAuthenticationFailed: "Your bank could not confirm that the payment is yours.",
	FailAbandoned:            "The payment was not completed in time; nothing was charged. Pay again to complete the checkout.",
}

// FailureMessage returns the buyer-facing explanation of a failure code.
func FailureMessage(code string) string {
	if m, ok := failureMessages[code]; ok {
		return m
	}
	return "The payment failed."
}

// FailureCodes returns every failure code a payment may have, sorted.
func FailureCodes() []string {
	return slices.Sorted(maps.Keys(failureMessages))
}

// Payment is one attempt to pay a session, successful or not.
type Payment struct {
	ID         string
	SessionID  string
	MerchantID string
	Mode       Mode
	Method     PaymentMethod
	Status     PaymentStatus
	// Amount is what the payment collects, in the session's currency: the
	// session's total.
	Amount         int64
	AmountRefunded int64
	// AmountRefunding is what refunds under way hold of the payment: it
	// may not be refunded again unless they fail.
	AmountRefunding int64
	// AmountDisputed and DisputeFee are what a dispute holds from the
	// merchant while it is open, and takes when it is lost: what was
	// left of the payment, and the card network's fee. Both come back
	// when it is won.
	AmountDisputed int64
	DisputeFee     int64
	// Fee is what the service keeps, from the store's pricing; set when the
	// payment succeeds, 0 before and for failed payments.
	Fee      int64
	Currency string

	CardBrand    *string
	CardLast4    *string
	BuyerCountry *string
	CustomerName *string
	// ReceiptEmail is where the buyer asked for the receipt: the session's
	// customer email unless the buyer changed it on the page.
	ReceiptEmail *string

	FailureCode    *string
	FailureMessage *string

	Crypto *CryptoDetails
	Skins  *SkinsDetails
	// Acquirer is where a live card payment is at the store's card
	// acquirer; nil for other payments.
	Acquirer *AcquirerRef

	// DueAt is when a background job next has to look at the payment: a
	// crypto payment's confirmation, the end of a skins trade hold, a test
	// dispute opening, a card charge whose outcome is unknown. Nil when
	// nothing is scheduled.
	DueAt *time.Time
	// DisputeOnSuccess opens a dispute a moment after the payment succeeds
	// (the dispute test cards), as DisputePlan says (DefaultDisputePlan
	// when nil).
	DisputeOnSuccess bool
	DisputePlan      *DisputePlan

	CreatedAt   time.Time
	UpdatedAt   time.Time
	SucceededAt *time.Time
}

// CryptoDetails are what a crypto payment was sent with.
type CryptoDetails struct {
	Coin    string `json:"coin"`
	Address string `json:"address"`
	// AmountBase is the amount in the coin's base units (satoshi, litoshi,
	// wei, lamports) as a decimal integer string: wei overflow int64 for
	// large totals, and no float may hold money.
	AmountBase string `json:"amount_base"`
	TxHash     string `json:"tx_hash"`
	// ReceivedBase is what the transaction paid to the address, in base
	// units, when a live node reported it ("" in test mode, which pays the
	// quote exactly). More than AmountBase is an overpayment: the session
	// completes and the excess shows.
	ReceivedBase string `json:"received_base,omitempty"`
	// RequiredBase is what the payment must reach, in base units, when a
	// live node reported it: the quote's amount, or the amount at the rate
	// when it was seen if the quote had expired.
	RequiredBase string `json:"required_base,omitempty"`
	// ShortUntil is, while what was received is short of RequiredBase,
	// when the payment fails underpaid unless the rest arrives (Unix
	// milliseconds); 0 once it is whole.
	ShortUntil int64 `json:"short_until,omitempty"`
	// TopUps are the further transactions to the same address that added
	// to an underpayment, beside TxHash, the first.
	TopUps        []CryptoTopUp `json:"top_ups,omitempty"`
	Confirmations int           `json:"confirmations_needed"`
	// BroadcastAt is when the transaction was seen on the network.
	BroadcastAt int64 `json:"broadcast_at"`
	// DroppedAt is, while a transaction of a live payment has left the
	// mempool unmined, when the payments job first saw it gone (Unix
	// milliseconds); 0 otherwise.
	DroppedAt int64 `json:"dropped_at,omitempty"`
}

// Excess returns what a live crypto payment received beyond what it had
// to, in base units; nil when it received no more (or is no live payment:
// a test payment pays the quote exactly).
func (d *CryptoDetails) Excess() *big.Int {
	received, required, ok := d.receivedRequired()
	if !ok || received.Cmp(required) <= 0 {
		return nil
	}
	return received.Sub(received, required)
}

// Shortfall returns what a live crypto payment still lacks, in base units;
// nil when it lacks nothing (or is no live payment).
func (d *CryptoDetails) Shortfall() *big.Int {
	received, required, ok := d.receivedRequired()
	if !ok || received.Cmp(required) >= 0 {
		return nil
	}
	return required.Sub(required, received)
}

// receivedRequired parses ReceivedBase and RequiredBase; ok is false unless
// a live node reported both.
func (d *CryptoDetails) receivedRequired() (received, required *big.Int, ok bool) {
	received, ok1 := new(big.Int).SetString(d.ReceivedBase, 10)
	required, ok2 := new(big.Int).SetString(d.RequiredBase, 10)
	return received, required, ok1 && ok2
}

// CryptoTopUp is a transaction that added to an underpaid crypto payment.
type CryptoTopUp struct {
	TxHash     string `json:"tx_hash"`
	AmountBase string `json:"amount_base"`
}

// Short reports whether a live crypto payment has received less than it
// must, and waits for the rest.
func (d *CryptoDetails) Short() bool { return d.ShortUntil != 0 }

// TxHashes returns the payment's transactions: the first, then its
// top-ups.
func (d *CryptoDetails) TxHashes() []string {
	out := []string{d.TxHash}
	for _, t := range d.TopUps {
		out = append(out, t.TxHash)
	}
	return out
}

// Amounts returns the payment's transactions with what each paid, in base
// units: the first (what was received less the top-ups), then its
// top-ups. Only a live payment knows what it received; a test one's first
// paid the quote.
func (d *CryptoDetails) Amounts() []CryptoTopUp {
	first := d.ReceivedBase
	if first == "" {
		first = d.AmountBase
	} else if len(d.TopUps) > 0 {
		r, ok := new(big.Int).SetString(d.ReceivedBase, 10)
		for _, t := range d.TopUps {
			a, ok2 := new(big.Int).SetString(t.AmountBase, 10)
			if ok && ok2 {
				r.Sub(r, a)
			}
			ok = ok && ok2
		}
		if ok {
			first = r.String()
		}
	}
	return append([]CryptoTopUp{{TxHash: d.TxHash, AmountBase: first}}, d.TopUps...)
}

// SkinsDetails are the game items of a skins trade.
type SkinsDetails struct {
	TradeID string     `json:"trade_id"`
	Items   []SkinItem `json:"items"`
	// Value is what the items are worth in the session's currency's minor
	// units; at least the session's total.
	Value int64 `json:"value"`
	// HoldUntil is when the game platform's trade hold ends (Unix seconds).
	HoldUntil int64 `json:"hold_until"`
}

// SkinItem is one game item of a buyer's inventory.
type SkinItem struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Value int64  `json:"value"`
}

// Net is what the merchant receives: amount less fee, refunds and what a
// dispute holds or took (its amount and fee), for a captured payment; 0
// for one that collected nothing (yet).
func (p *Payment) Net() int64 {
	if !p.Status.Captured() {
		return 0
	}
	return p.Amount - p.Fee - p.AmountRefunded - p.AmountDisputed - p.DisputeFee
}

// NewPayment returns a processing payment of session s by method, created
// at now.
func NewPayment(s *Session, method PaymentMethod, now time.Time) *Payment {
	now = now.Truncate(time.Millisecond)
	return &Payment{
		ID:           NewPaymentID(),
		SessionID:    s.ID,
		MerchantID:   s.MerchantID,
		Mode:         s.Mode,
		Method:       method,
		Status:       PaymentProcessing,
		Amount:       s.TotalAmount,
		Currency:     s.Currency,
		CustomerName: s.Customer.Name,
		ReceiptEmail: s.Customer.Email,
		CreatedAt:    now,
		UpdatedAt:    now,
	}
}

// Succeed moves a processing payment to succeeded at now and charges the
// fee of pricing.
func (p *Payment) Succeed(pricing Pricing, now time.Time) error {
	if p.Status != PaymentProcessing {
		return Errorf(EConflict, "payment %s cannot succeed: it is %s", p.ID, p.Status)
	}
	t := now.Truncate(time.Second)
	p.Status = PaymentSucceeded
	p.Fee = pricing.Fee(p.Method, p.Amount)
	p.SucceededAt = &t
	p.DueAt = nil
	p.UpdatedAt = now
	return nil
}

// Fail moves a processing payment to failed at now with a failure code.
func (p *Payment) Fail(code string, now time.Time) error {
	if p.Status != PaymentProcessing {
		return Errorf(EConflict, "payment %s cannot fail: it is %s", p.ID, p.Status)
	}
	msg := FailureMessage(code)
	p.Status = PaymentFailed
	p.FailureCode = &code
	p.FailureMessage = &msg
	p.Fee = 0
	p.DueAt = nil
	p.UpdatedAt = now
	return nil
}

// Pricing is what the service charges a store per payment method: a
// percentage in basis points (1/100 of a percent) plus a fixed amount in
// minor units.
type Pricing struct {
	CardBasisPoints   int64 `json:"card_bps"`
	CardFixed         int64 `json:"card_fixed"`
	CryptoBasisPoints int64 `json:"crypto_bps"`
	CryptoFixed       int64 `json:"crypto_fixed"`
	SkinsBasisPoints  int64 `json:"skins_bps"`
	SkinsFixed        int64 `json:"skins_fixed"`
	// DisputeFee is what a dispute costs, in minor units of the disputed
	// payment's currency, returned when the dispute is won; negative for
	// the default, 15 whole units of the currency (DisputeFeeFor).
	DisputeFee int64 `json:"dispute_fee"`
}

// DefaultPricing is DESIGN.md's: card 2.9% + 30, crypto 1%, skins 5%.
var DefaultPricing = Pricing{
	CardBasisPoints: 290, CardFixed: 30,
	CryptoBasisPoints: 100,
	SkinsBasisPoints:  500,
	DisputeFee:        -1,
}

// Fee returns the fee of a payment of amount by method: the percentage
// rounded half up to a whole minor unit, plus the fixed part, never more
// than the amount.
func (p Pricing) Fee(method PaymentMethod, amount int64) int64 {
	var bps, fixed int64
	switch method {
	case MethodCard:
		bps, fixed = p.CardBasisPoints, p.CardFixed
	case MethodCrypto:
		bps, fixed = p.CryptoBasisPoints, p.CryptoFixed
	case MethodSkins:
		bps, fixed = p.SkinsBasisPoints, p.SkinsFixed
	}
	// amount ≤ 10^8 and bps ≤ 10^4 keep the product far from overflow.
	fee := (amount*bps+5000)/10000 + fixed
	return min(max(fee, 0), amount)
}

// Validate checks that every part of the pricing is within sense: 0 to 100%
// and a fixed part of 0 to 100000 minor units.
func (p Pricing) Validate() error {
	for _, f := range []struct {
		name       string
		bps, fixed int64
	}{
		{"card", p.CardBasisPoints, p.CardFixed},
		{"crypto", p.CryptoBasisPoints, p.CryptoFixed},
		{"skins", p.SkinsBasisPoints, p.SkinsFixed},
	} {
		if f.bps < 0 || f.bps > 10000 {
			return Errorf(EValidationFailed, "The %s fee must be 0%% to 100%%.", f.name)
		}
		if f.fixed < 0 || f.fixed > 100000 {
			return Errorf(EValidationFailed, "The %s fixed fee must be 0 to 100000 minor units.", f.name)
		}
	}
	if p.DisputeFee < -1 || p.DisputeFee > 100000 {
		return Errorf(EValidationFailed, "The dispute fee must be 0 to 100000 minor units (or the default).")
	}
	return nil
}

// PaymentJSON is a payment as webhook events carry it: SPEC.md's fields,
// with object and livemode as every object has them, and why it failed.
type PaymentJSON struct {
	ID             string        `json:"id"`
	Object         string        `json:"object"`
	Livemode       bool          `json:"livemode"`
	Status         PaymentStatus `json:"status"`
	Amount         int64         `json:"amount"`
	AmountRefunded int64         `json:"amount_refunded"`
	Fee            int64         `json:"fee"`
	Net            int64         `json:"net"`
	Currency       string        `json:"currency"`
	Method         PaymentMethod `json:"method"`
	CardLast4      *string       `json:"card_last4"`
	BuyerCountry   *string       `json:"buyer_country"`
	CustomerName   *string       `json:"customer_name"`
	CheckoutID     string        `json:"checkout_id"`
	FailureCode    *string       `json:"failure_code"`
	FailureMessage *string       `json:"failure_message"`
	CreatedAt      int64         `json:"created_at"`
}

// View returns p as events carry it.
func (p *Payment) View() *PaymentJSON {
	return &PaymentJSON{
		ID:             p.ID,
		Object:         "payment",
		Livemode:       p.Mode.Live(),
		Status:         p.Status,
		Amount:         p.Amount,
		AmountRefunded: p.AmountRefunded,
		Fee:            p.Fee,
		Net:            p.Net(),
		Currency:       p.Currency,
		Method:         p.Method,
		CardLast4:      p.CardLast4,
		BuyerCountry:   p.BuyerCountry,
		CustomerName:   p.CustomerName,
		CheckoutID:     p.SessionID,
		FailureCode:    p.FailureCode,
		FailureMessage: p.FailureMessage,
		CreatedAt:      p.CreatedAt.Unix(),
	}
}

// MaxFailedCardAttempts is how many declined or failed card payments a
// session takes before it refuses more: card testing (trying stolen numbers
// one after another) is stopped on the session, whatever node serves it.
const MaxFailedCardAttempts = 10

// Decline is why a session refuses to begin a payment. The buyer is not
// charged.
type Decline string

// Declines.
const (
	DeclineNone           Decline = ""
	DeclineComplete       Decline = "session_complete"
	DeclineExpired        Decline = "session_expired"
	DeclineInProgress     Decline = "payment_in_progress"
	DeclineTooManyRetries Decline = "too_many_attempts"
	DeclineMethod         Decline = "method_unavailable"
)

// Message is the buyer-facing explanation of a decline.
func (d Decline) Message() string {
	switch d {
	case DeclineComplete:
		return "This checkout has already been paid."
	case DeclineExpired:
		return "This checkout has expired. Return to the store to start again."
	case DeclineInProgress:
		return "Another payment for this checkout is in progress. Wait for it to finish."
	case DeclineTooManyRetries:
		return fmt.Sprintf("This checkout refuses further card payments after %d failed attempts. Return to the store to start again.", MaxFailedCardAttempts)
	case DeclineMethod:
		return "This payment method is not available for this checkout."
	}
	return ""
}

// Error returns the decline as an error with code conflict.
func (d Decline) Error() string { return d.Message() }

// SkinsTradeHold is how long a game platform holds a traded item before it
// can move again, and so how long a skins payment stays processing.
const SkinsTradeHold = 7 * 24 * time.Hour

// CardChargeTimeout bounds how long a card payment may stay processing
// without an outcome (the processor did not answer, or the node stopped
// mid-charge) before a background job asks the processor what became of it.
const CardChargeTimeout = 2 * time.Minute

// DisputeDelay is how long after it succeeds the test card 4000 0000 0000
// 0259's payment is disputed.
const DisputeDelay = 30 * time.Second

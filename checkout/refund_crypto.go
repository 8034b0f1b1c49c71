package checkout

import (
	"fmt"
	"math/big"
	"time"
)

// A crypto refund is paid by the merchant: checkoutd holds no private key,
// so it cannot send coins. The refund gives the buyer a link
// ({checkout_base_url}/refund/<token>) to say where the coins go: an
// address of the payment's coin and network, given once, before the link
// expires. Then the refund is priced in the coin, at the payment's rate or
// at the rate of that moment (the merchant's choice), and shown to the
// merchant: that many base units to that address. When a transaction
// paying it is seen (test mode: simulated; live: the node watches the
// address) and confirmed at the coin's depth, the refund succeeds.
//
//	awaiting_address ──(the buyer's address)──► awaiting_payout ──(a transaction)──► confirming ──► succeeded
//	        │                                          │
//	        └──(the link expires, or the merchant cancels)─► canceled

// RefundRate says at which rate a crypto refund is priced in its coin.
type RefundRate string

// Refund rates.
const (
	// RateOfPayment prices the refund as the payment was priced: its
	// share of what the buyer sent.
	RateOfPayment RefundRate = "payment"
	// RateCurrent prices it at the coin's rate when the buyer gives the
	// address.
	RateCurrent RefundRate = "current"
)

// RefundLinkTTL is how long a crypto refund's link takes the buyer's
// address; unanswered, the refund is canceled then, and what it held is
// free again.
const RefundLinkTTL = 7 * 24 * time.Hour

// Crypto refund stages: where a pending one stands, then done.
const (
	StageAwaitingAddress = "awaiting_address"
	StageAwaitingPayout  = "awaiting_payout"
	StageConfirming      = "confirming"
	// StageDone: the refund succeeded or was canceled (its Status says).
	StageDone = "done"
)

// CryptoRefund is how a crypto refund is paid.
type CryptoRefund struct {
	Coin string `json:"coin"`
	// Network is the chain the payment was made on: "test" for test
	// mode's simulated network, else the live node's (main, test,
	// regtest). The buyer's address must be of it.
	Network string     `json:"network"`
	Rate    RefundRate `json:"rate"`
	// LinkExpiresAt is until when the link takes an address (Unix ms).
	LinkExpiresAt int64 `json:"link_expires_at"`
	// Address is the buyer's, AmountBase what to pay there in base units
	// (a decimal integer string), and AddressedAt when the buyer gave it
	// (Unix ms); all empty before.
	Address     string `json:"address,omitempty"`
	AmountBase  string `json:"amount_base,omitempty"`
	AddressedAt int64  `json:"addressed_at,omitempty"`
	// TxHash is the transaction that pays it, SeenAt when it was seen
	// (Unix ms), Confirmations how many it needs.
	TxHash        string `json:"tx_hash,omitempty"`
	SeenAt        int64  `json:"seen_at,omitempty"`
	Confirmations int    `json:"confirmations_needed,omitempty"`
}

// Stage says where a pending crypto refund stands.
func (c *CryptoRefund) Stage() string {
	switch {
	case c.Address == "":
		return StageAwaitingAddress
	case c.TxHash == "":
		return StageAwaitingPayout
	}
	return StageConfirming
}

// NewCryptoRefund checks a refund of a crypto payment p (NewRefund) and
// makes it crypto: on network, priced at rate, its link (token) taking the
// buyer's address until RefundLinkTTL from now, when the refund is due to
// be canceled if unanswered.
func NewCryptoRefund(p *Payment, params RefundParams, network string, by Actor, now time.Time) (*Refund, error) {
	if p.Method != MethodCrypto || p.Crypto == nil {
		return nil, fmt.Errorf("payment %s is not a crypto payment", p.ID)
	}
	rate := params.Rate
	if rate == "" {
		rate = RateOfPayment
	}
	if rate != RateOfPayment && rate != RateCurrent {
		return nil, &Error{Code: EValidationFailed, Param: "rate", Message: "rate must be payment or current, or left out."}
	}
	params.Rate = ""
	r, err := NewRefund(p, params, by, now)
	if err != nil {
		return nil, err
	}
	expires := r.CreatedAt.Add(RefundLinkTTL)
	r.Crypto = &CryptoRefund{Coin: p.Crypto.Coin, Network: network, Rate: rate, LinkExpiresAt: expires.UnixMilli()}
	r.LinkToken = NewRefundLinkToken()
	r.DueAt = &expires
	return r, nil
}

// NewRefundLinkToken returns a new refund link token: 32 random bytes in
// hex. Whoever holds the link says where the refund goes, so it is as hard
// to guess as a session id.
func NewRefundLinkToken() string { return NewID("", 32) }

// RefundLinkBlock says why a crypto refund's link takes no address now, or
// nil when it does.
func (r *Refund) RefundLinkBlock(now time.Time) error {
	switch {
	case r.Crypto == nil:
		return Errorf(ERefundLinkClosed, "This link refunds nothing.")
	case r.Status == RefundCanceled:
		return Errorf(ERefundLinkClosed, "This refund was canceled: ask the merchant for another link.")
	case r.Status != RefundPending:
		return Errorf(ERefundLinkClosed, "This refund is %s.", r.Status)
	case r.Crypto.Address != "":
		return Errorf(ERefundLinkClosed, "This link has been used: the refund goes to the address given then.")
	case !now.Before(time.UnixMilli(r.Crypto.LinkExpiresAt)):
		return Errorf(ERefundLinkClosed, "This link has expired: ask the merchant for another.")
	}
	return nil
}

// Address records the buyer's address for a crypto refund and prices it:
// amountBase base units of the coin to pay there. The address is checked
// by the caller (the coin's and network's format); the link then takes no
// other. Nothing is due until the payout is seen.
func (r *Refund) SetAddress(address string, amountBase *big.Int, now time.Time) error {
	if err := r.RefundLinkBlock(now); err != nil {
		return err
	}
	if amountBase == nil || amountBase.Sign() <= 0 {
		return fmt.Errorf("refund %s: a payout of %v base units", r.ID, amountBase)
	}
	now = now.Truncate(time.Millisecond)
	r.Crypto.Address = address
	r.Crypto.AmountBase = amountBase.String()
	r.Crypto.AddressedAt = now.UnixMilli()
	r.DueAt = nil
	r.UpdatedAt = now
	return nil
}

// PayoutSeen records the transaction paying a crypto refund, seen at now,
// which needs confirmations; the refund is due to be looked at then.
func (r *Refund) PayoutSeen(txHash string, confirmations int, due, now time.Time) error {
	if r.Crypto == nil || r.Status != RefundPending || r.Crypto.Address == "" {
		return Errorf(EConflict, "refund %s awaits no payout", r.ID)
	}
	if r.Crypto.TxHash != "" {
		return Errorf(EConflict, "refund %s's payout is %s already", r.ID, r.Crypto.TxHash)
	}
	now = now.Truncate(time.Millisecond)
	r.Crypto.TxHash = txHash
	r.Crypto.SeenAt = now.UnixMilli()
	r.Crypto.Confirmations = confirmations
	r.DueAt = &due
	r.UpdatedAt = now
	return nil
}

// PriceAtPayment is what a refund of amount (minor units) of crypto payment
// p is in base units of its coin at the payment's rate: its share of what
// the buyer sent (what was received, when a live node reported it, else
// the quote), rounded down, so that the merchant never refunds more than
// came in.
func PriceAtPayment(p *Payment, amount int64) (*big.Int, error) {
	if p.Crypto == nil || p.Amount <= 0 {
		return nil, fmt.Errorf("payment %s is not a crypto payment", p.ID)
	}
	base := p.Crypto.ReceivedBase
	if base == "" {
		base = p.Crypto.AmountBase
	}
	paid, ok := new(big.Int).SetString(base, 10)
	if !ok {
		return nil, fmt.Errorf("payment %s: amount %q is not a number of base units", p.ID, base)
	}
	out := new(big.Int).Mul(paid, big.NewInt(amount))
	return out.Quo(out, big.NewInt(p.Amount)), nil
}
